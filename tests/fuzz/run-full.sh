#!/bin/sh
# run-full.sh [CASES] [SEED] — the full hostile-files run (issue 11): at
# least 1,000 mutants of every demo scenario, recorded fresh, through
# every command (tests/fuzz/fuzz-sessions.c); prints the outcomes by
# category and command, and exits 1 on any failure.  CI runs 100 cases
# (meson test --suite fuzz).  Uses the build in $COWSCOPE_BUILD (default
# build/; an ASan build, e.g. build-asan/, also catches memory errors);
# failing mutants are kept in $COWSCOPE_BUILD/fuzz-failures/.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
cases=${1:-1200}
seed=${2:-1}
build=${COWSCOPE_BUILD:-$root/build}
[ -f "$build/build.ninja" ] || { echo "run-full.sh: no build in $build (meson setup $build)" >&2; exit 2; }
meson compile -C "$build" tests/fuzz/fuzz-sessions app/cli/cowscope-cli engine/demo/cowscope-demo \
  probes/probe/cowscope-probe > /dev/null \
  || { echo "run-full.sh: building in $build failed" >&2; exit 2; }
probe=$(ls "$build"/probes/probe/libcowscope-probe.so)
export COWSCOPE_CLI="$build/app/cli/cowscope-cli"
export COWSCOPE_DEMO="$build/engine/demo/cowscope-demo"
export COWSCOPE_PROBE_PATH="$probe"
export ASAN_OPTIONS="verify_asan_link_order=0:detect_leaks=1:abort_on_error=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
start=$(date +%s)
status=0
"$build/tests/fuzz/fuzz-sessions" --full --cases "$cases" --seed "$seed" \
  --keep "$build/fuzz-failures" || status=$?
echo "# $(( $(date +%s) - start )) s"
exit $status
