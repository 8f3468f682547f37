#!/usr/bin/env bash
# test-completion.sh — cowscope-cli's bash completion completes commands,
# options, export formats, --fail-if metrics, session files and the
# program to record (TAP).  It loads bash-completion as an interactive
# shell would, then the completion file, and calls the completion
# function as readline does.
#
# Usage: test-completion.sh BASH_COMPLETION COMPLETION_FILE CLI_DIR
#   BASH_COMPLETION  bash-completion's main script (bash_completion)
#   COMPLETION_FILE  completion/cowscope-cli
#   CLI_DIR          the folder holding the cowscope-cli to complete for
set -u

if [[ $# -ne 3 ]]; then
  echo "usage: $0 BASH_COMPLETION COMPLETION_FILE CLI_DIR" >&2
  exit 2
fi
bash_completion=$1
completion_file=$(realpath "$2")
cli_dir=$(realpath "$3")

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin" "$work/runs"
touch "$work/a.cowscope" "$work/b.cowscope" "$work/notes.txt"
printf '#!/bin/sh\n' > "$work/bin/my-target"
chmod +x "$work/bin/my-target"
cd "$work" || exit 1
export PATH="$cli_dir:$work/bin:$PATH"

# shellcheck disable=SC1090
source "$bash_completion"
# shellcheck disable=SC1090
source "$completion_file"

# Prints the completions of command line @1 (the cursor at its end), one
# a line, sorted.
complete_line () {
  local line=$1
  COMP_LINE=$line
  COMP_POINT=${#line}
  read -r -a COMP_WORDS <<< "$line"
  [[ $line == *' ' ]] && COMP_WORDS+=('')
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  COMPREPLY=()
  _cowscope_cli cowscope-cli "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}" \
    2> /dev/null # compopt only works under readline
  printf '%s\n' "${COMPREPLY[@]}" | sort
}

n=0
failed=0
# expect NAME LINE EXPECTED...: the completions of LINE are exactly EXPECTED.
expect () {
  local name=$1 line=$2 got want
  shift 2
  n=$((n + 1))
  got=$(complete_line "$line")
  want=$(printf '%s\n' "$@" | sort)
  if [[ $got == "$want" ]]; then
    echo "ok $n - $name"
  else
    echo "not ok $n - $name"
    echo "# '$line': expected [${want//$'\n'/ }], got [${got//$'\n'/ }]"
    failed=$((failed + 1))
  fi
}
# expect_some NAME LINE EXPECTED...: the completions include EXPECTED.
expect_some () {
  local name=$1 line=$2 got word missing=()
  shift 2
  n=$((n + 1))
  got=$(complete_line "$line")
  for word in "$@"; do
    grep -qxF -- "$word" <<< "$got" || missing+=("$word")
  done
  if [[ ${#missing[@]} -eq 0 ]]; then
    echo "ok $n - $name"
  else
    echo "not ok $n - $name"
    echo "# '$line': missing [${missing[*]}] in [${got//$'\n'/ }]"
    failed=$((failed + 1))
  fi
}

echo "1..12"
expect "the commands" "cowscope-cli " record finalize report diff merge export
expect "a command from its start" "cowscope-cli rep" report
expect "top-level options" "cowscope-cli --" --help --version
expect "record's options" "cowscope-cli record --no-" --no-cuda --no-stacks
expect_some "record's options and the '--' before the program" "cowscope-cli record --" \
  --output= --force --env= --cuda-only --drop --block --ring-size= --help --
expect "the program after '--'" "cowscope-cli record -o run.cowscope -- my-ta" my-target
expect_some "report's options" "cowscope-cli report a.cowscope --" --json --fail-if= --top= --help
expect "--fail-if metrics" "cowscope-cli report a.cowscope --fail-if copied_" copied_bytes
expect "diff's --fail-if metrics" "cowscope-cli diff a.cowscope b.cowscope --fail-if copied_bytes.in" \
  copied_bytes.increase
expect_some "merge's options" "cowscope-cli merge a.cowscope b.cowscope --" --output= --label= --force
expect "export formats" "cowscope-cli export a.cowscope --format " chrome csv sqlite
expect "session files (and folders) only" "cowscope-cli finalize " a.cowscope b.cowscope bin runs

[[ $failed -eq 0 ]]
