#!/bin/sh
# check-potfiles.sh SOURCE-ROOT — fails when po/POTFILES.in misses a file
# with translatable strings (C files using _(), N_(), C_() or NC_(); .ui
# files with translatable="yes"; the desktop, metainfo, MIME and schema
# sources in data/), or lists a file that does not exist.  Like
# Nautilus' build-aux/check-potfiles.sh.
set -eu

root=${1:?usage: check-potfiles.sh SOURCE-ROOT}
cd "$root"

potfiles=po/POTFILES.in
listed=$(mktemp)
wanted=$(mktemp)
trap 'rm -f "$listed" "$wanted"' EXIT

grep -v -e '^#' -e '^[[:space:]]*$' "$potfiles" | sort -u > "$listed"

{
  grep -rlE '(^|[^A-Za-z0-9_])(N?C?_|g_dngettext|ngettext)[[:space:]]*\(' --include='*.c' app data probes || true
  grep -rl 'translatable="yes"' --include='*.ui' app data || true
  ls data/*.desktop.in* data/*.metainfo.xml.in* data/*.gschema.xml data/*.mime.xml.in 2> /dev/null || true
} | sort -u > "$wanted"

status=0
missing=$(comm -13 "$listed" "$wanted")
if [ -n "$missing" ]; then
  echo "Files with translatable strings missing from $potfiles:"
  echo "$missing" | sed 's/^/  /'
  status=1
fi

while read -r f; do
  if [ ! -f "$f" ]; then
    echo "$potfiles lists $f, which does not exist"
    status=1
  fi
done < "$listed"

if [ "$status" -eq 0 ]; then
  echo "$potfiles lists all $(wc -l < "$wanted") files with translatable strings"
fi
exit "$status"
