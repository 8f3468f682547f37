#!/usr/bin/env bash
# run-demo.sh — sets up and runs Cowscope's main job: installs the
# dependencies, configures an optimized build with debug information in
# build/, builds it, and opens the application recording the bundled
# demo target into
# build/demo.cowscope (`cowscope --record`: the copy timeline and the
# sharing graph grow while it runs, then the finalized session opens).
# Without a display (or without the GTK application) it says so and
# records with `cowscope-cli record` instead, then prints the report.
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

# Optimized, with debug information: the call stacks in the session then
# name file:line, not only functions.
setup_args=(--buildtype=debugoptimized -Dapp=auto -Dcuda=auto)
if [[ -f "$builddir/meson-private/coredata.dat" ]]; then
  step "Reconfiguring the optimized build in $builddir/"
  if ! meson setup --reconfigure "${setup_args[@]}" "$builddir"; then
    step "Reconfiguring failed; configuring $builddir/ from scratch"
    meson setup --wipe "${setup_args[@]}" "$builddir"
  fi
else
  step "Configuring an optimized build (with debug information) in $builddir/"
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

cli="$builddir/app/cli/cowscope-cli"
app="$builddir/app/gtk/cowscope"
session="$builddir/demo.cowscope"

if [[ ! -x "$app" ]]; then
  echo "The GTK application was not built (it needs GTK 4.8 and libadwaita 1.2): recording with cowscope-cli instead."
elif [[ -z "${DISPLAY:-}" && -z "${WAYLAND_DISPLAY:-}" ]]; then
  echo "No display (neither DISPLAY nor WAYLAND_DISPLAY is set): not opening the application; recording with cowscope-cli instead."
else
  step "Opening the application recording $demo ${demo_args[*]} into $session"
  # Uninstalled, the application finds its settings schema and the probe
  # in the build tree.
  exec "$app" --record --force --output "$session" -- "$demo" "${demo_args[@]}"
fi

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
