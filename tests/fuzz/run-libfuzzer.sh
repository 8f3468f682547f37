#!/bin/sh
# run-libfuzzer.sh [SECONDS] [TARGET...] — builds the libFuzzer targets
# with clang-14 (ASan + UBSan, coverage on the whole tree:
# -fsanitize=fuzzer-no-link, as HarfBuzz builds its fuzzers) in
# build-fuzz/ and runs each TARGET (default: session packed) for SECONDS
# (default 600), one after another.  Each works on a copy of its seed
# corpus in build-fuzz/corpus/TARGET, so what it finds stays out of the
# repository; a crash leaves crash-* (the input) in build-fuzz/ and stops
# that target.  Prints how long each ran and how many runs it made.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
seconds=${1:-600}
[ $# -gt 0 ] && shift
targets=${*:-session packed}
build=${COWSCOPE_FUZZ_BUILD:-$root/build-fuzz}

if ! command -v clang-14 > /dev/null; then
  echo "run-libfuzzer.sh: clang-14 is not installed (apt-get install clang-14)" >&2
  exit 1
fi
if [ ! -f "$build/build.ninja" ]; then
  CC=clang-14 meson setup "$build" "$root" -Dtests=true -Dapp=disabled -Dcuda=disabled \
    -Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debugoptimized \
    -Dc_args="-fsanitize=fuzzer-no-link -fno-sanitize-recover=undefined"
fi
for t in $targets; do
  meson compile -C "$build" "tests/fuzz/fuzz-$t"
done

status=0
for t in $targets; do
  mkdir -p "$build/corpus/$t"
  cp -n "$root/tests/fuzz/corpus/$t/"* "$build/corpus/$t/" 2> /dev/null || true
  case $t in
    session) max_len=262144 ;;
    *) max_len=16384 ;;
  esac
  echo "== fuzz-$t for $seconds s"
  start=$(date +%s)
  if (cd "$build" && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
      UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 G_DEBUG=fatal-criticals \
      "./tests/fuzz/fuzz-$t" "corpus/$t" -max_total_time="$seconds" -max_len="$max_len" \
      -timeout=60 -rss_limit_mb=2048 -print_final_stats=1) > "$build/fuzz-$t.log" 2>&1; then
    result=clean
  else
    result="stopped (see $build/fuzz-$t.log)"
    status=1
  fi
  end=$(date +%s)
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$build/fuzz-$t.log" | grep -o '[0-9]*$' || echo '?')
  echo "fuzz-$t: $((end - start)) s, $runs runs, $result"
done
exit $status
