#!/usr/bin/env bash
# run-demo.sh — sets up and runs Cowscope's main job: installs the
# dependencies, configures a release build in build/, builds it, records
# the bundled demo target under the profiler into build/demo.cowscope,
# prints the session's report and, when there is a display, opens the
# session in the application.
#
# Usage: build-aux/run-demo.sh [DEMO-ARGUMENT...]
#
# With no arguments it records `cowscope-demo all`.  Other arguments are
# passed to cowscope-demo instead of `all`; when they are only options
# (start with '-'), `all` is kept in front of them.
set -euo pipefail

srcdir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$srcdir"
builddir=build

step () {
  printf '\n==> %s\n' "$*"
}

step "Checking dependencies"
"$srcdir/build-aux/install-deps.sh"

setup_args=(--buildtype=release -Dapp=auto -Dcuda=auto)
if [[ -f "$builddir/meson-private/coredata.dat" ]]; then
  step "Reconfiguring the release build in $builddir/"
  if ! meson setup --reconfigure "${setup_args[@]}" "$builddir"; then
    step "Reconfiguring failed; configuring $builddir/ from scratch"
    meson setup --wipe "${setup_args[@]}" "$builddir"
  fi
else
  step "Configuring a release build in $builddir/"
  meson setup "${setup_args[@]}" "$builddir"
fi

step "Building"
meson compile -C "$builddir"

demo="$builddir/engine/demo/cowscope-demo"
if [[ ! -x "$demo" ]]; then
  echo "run-demo.sh: $demo was not built" >&2
  exit 1
fi

if [[ $# -eq 0 ]]; then
  demo_args=(all)
elif [[ "$1" == -* ]]; then
  demo_args=(all "$@")
else
  demo_args=("$@")
fi

cli="$builddir/app/cowscope-cli"
session="$builddir/demo.cowscope"
if [[ ! -x "$cli" ]]; then
  echo "run-demo.sh: $cli was not built (it needs GLib, SQLite, json-glib and libdw)" >&2
  exit 1
fi

step "Recording $demo ${demo_args[*]} into $session"
"$cli" record --force -o "$session" -- "$demo" "${demo_args[@]}"

step "Report of $session"
"$cli" report "$session"
echo
echo "Query it with: sqlite3 $session   or export it: $cli export $session --format chrome -o demo.json"

app="$builddir/app/gtk/cowscope"
if [[ ! -x "$app" ]]; then
  echo "The GTK application was not built (it needs GTK 4.8 and libadwaita 1.2): the report above is the result."
elif [[ -z "${DISPLAY:-}" && -z "${WAYLAND_DISPLAY:-}" ]]; then
  echo "No display (neither DISPLAY nor WAYLAND_DISPLAY is set): not opening the application; the report above is the result."
else
  step "Opening $session in the application"
  exec "$app" "$session"
fi
