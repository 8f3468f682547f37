#!/usr/bin/env bash
# check-self-contained.sh — the repository explains itself: no source,
# build file or script points the reader at a document outside it (the
# design notes the project started from are not part of the tree).
# Usage: check-self-contained.sh SOURCE-ROOT
set -u
root=$1
pattern='DESIGN\.md|STYLE\.md|\.\./shared/|cow-design\.md|cow-thread-safety\.md|arc-shared-views\.md|cuda-ipc-refcounting\.md'
hits=$(cd "$root" && git ls-files -- '*.c' '*.h' '*.cu' '*.build' '*.py' '*.sh' '*.in' '*.ui' '*.sql' '*.md' 2>/dev/null \
         | grep -v '^tests/layering/check-self-contained.sh$' \
         | xargs -r grep -nE "$pattern" --)
if [[ -n $hits ]]; then
  echo "check-self-contained: these lines cite documents outside the repository:"
  echo "$hits"
  exit 1
fi
echo "check-self-contained: no reference outside the repository"
