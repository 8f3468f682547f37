#!/usr/bin/env bash
# run-tests.sh — sets up and runs Cowscope's whole test suite.
#
# Usage: build-aux/run-tests.sh
#
# Installs the dependencies, then runs three stages, each in its own build
# directory (ignored by git):
#
#   werror  build-ci/    -Werror build, every test suite
#   asan    build-asan/  AddressSanitizer + UndefinedBehaviorSanitizer
#                        (leak detection on, any report is fatal), every suite
#   tsan    build-tsan/  ThreadSanitizer, the "concurrency" suite
#
# COWSCOPE_TEST_STAGES selects a subset, e.g. COWSCOPE_TEST_STAGES="werror".
# Exits non-zero if any stage fails (2 for a bad COWSCOPE_TEST_STAGES).
# Otherwise the last line of output is always
# "N passed, N failed[, N skipped]", summed over the meson test runs; a
# stage that could not configure, build or run its tests counts as one
# failure.
set -uo pipefail

srcdir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$srcdir" || exit 1

all_stages=(werror asan tsan)
read -r -a stages <<< "${COWSCOPE_TEST_STAGES:-werror asan tsan}"

total_passed=0
total_failed=0
total_skipped=0
results=()

summary () {
  local line
  printf '\n==> Summary\n'
  for line in "${results[@]}"; do
    printf '  %s\n' "$line"
  done
  if [[ $total_skipped -gt 0 ]]; then
    printf '%d passed, %d failed, %d skipped\n' \
      "$total_passed" "$total_failed" "$total_skipped"
  else
    printf '%d passed, %d failed\n' "$total_passed" "$total_failed"
  fi
}

for stage in "${stages[@]}"; do
  case " ${all_stages[*]} " in
    *" $stage "*) ;;
    *)
      echo "run-tests.sh: unknown stage '$stage' in COWSCOPE_TEST_STAGES" \
           "(known: ${all_stages[*]})" >&2
      exit 2
      ;;
  esac
done
if [[ ${#stages[@]} -eq 0 ]]; then
  echo "run-tests.sh: COWSCOPE_TEST_STAGES is empty (known: ${all_stages[*]})" >&2
  exit 2
fi

printf '==> Checking dependencies\n'
if ! "$srcdir/build-aux/install-deps.sh"; then
  results+=("dependencies: FAILED")
  total_failed=$((total_failed + 1))
  summary
  exit 1
fi

# Configures @1 with the remaining arguments as options, reconfiguring an
# existing build directory (or wiping it when that fails).
setup_builddir () {
  local dir=$1
  shift
  if [[ -f "$dir/meson-private/coredata.dat" ]]; then
    meson setup --reconfigure "$@" "$dir" && return 0
    echo "run-tests.sh: reconfiguring $dir failed; configuring it from scratch"
    meson setup --wipe "$@" "$dir"
  else
    meson setup "$@" "$dir"
  fi
}

# Reads the value of meson test's summary line "@2: N" from log @1.
count_in_log () {
  local n
  n=$(sed -e 's/\x1b\[[0-9;]*m//g' "$1" \
        | sed -n -e "s/^$2:[[:space:]]*\([0-9][0-9]*\)[[:space:]]*$/\1/p" \
        | tail -n 1)
  echo "${n:-0}"
}

# Compiles and runs a tiny threaded program with sanitizer flags @1, so
# that a toolchain or kernel problem is reported as such, not as a test
# failure.  Sets `wrapper` to a command prefix the tests need (setarch -R
# when ThreadSanitizer cannot cope with the kernel's address-space
# randomization, as gcc 12's cannot with vm.mmap_rnd_bits > 28).
preflight () {
  local flags=$1 tmp out rc
  wrapper=()
  tmp=$(mktemp -d)
  cat > "$tmp/t.c" << 'EOF'
#include <pthread.h>
#include <stdlib.h>
static void *run (void *arg) { return arg; }
int main (void)
{
  pthread_t t;
  void *p = malloc (16);
  if (pthread_create (&t, NULL, run, p) != 0 || pthread_join (t, NULL) != 0)
    return 1;
  free (p);
  return 0;
}
EOF
  # shellcheck disable=SC2086 # $flags is a list of compiler flags
  if ! out=$(${CC:-cc} $flags -pthread -o "$tmp/t" "$tmp/t.c" 2>&1); then
    echo "run-tests.sh: the compiler cannot build with '$flags':"
    echo "$out"
    echo "run-tests.sh: (on Debian the runtimes come with libgcc-<version>-dev)"
    rm -rf "$tmp"
    return 1
  fi
  out=$("$tmp/t" 2>&1)
  rc=$?
  if [[ $rc -ne 0 ]] && setarch "$(uname -m)" -R "$tmp/t" > /dev/null 2>&1; then
    echo "run-tests.sh: $flags programs need ASLR off here; running tests under setarch -R"
    wrapper=(setarch "$(uname -m)" -R)
    rc=0
  elif [[ $rc -ne 0 ]]; then
    echo "run-tests.sh: a program built with '$flags' does not run here:"
    echo "$out"
  fi
  rm -rf "$tmp"
  return "$rc"
}

# run_stage NAME BUILDDIR DESCRIPTION SANITIZE-FLAGS -- SETUP-OPTION... -- ENV... -- TEST-ARG...
run_stage () {
  local name=$1 dir=$2 desc=$3 sanflags=$4
  shift 4
  local setup_opts=() envs=() test_args=()
  [[ ${1:-} == -- ]] && shift
  while [[ $# -gt 0 && $1 != -- ]]; do setup_opts+=("$1"); shift; done
  [[ ${1:-} == -- ]] && shift
  while [[ $# -gt 0 && $1 != -- ]]; do envs+=("$1"); shift; done
  [[ ${1:-} == -- ]] && shift
  test_args=("$@")

  stage_index=$((stage_index + 1))
  printf '\n'
  printf '=%.0s' {1..72}
  printf '\n==> Stage %d/%d: %s — %s (%s/)\n' \
    "$stage_index" "${#stages[@]}" "$name" "$desc" "$dir"
  printf '=%.0s' {1..72}
  printf '\n'

  wrapper=()
  if [[ -n $sanflags ]] && ! preflight "$sanflags"; then
    results+=("$name: FAILED (the $sanflags toolchain does not work here)")
    total_failed=$((total_failed + 1))
    return 1
  fi

  printf '\n--> %s: meson setup %s\n' "$name" "${setup_opts[*]}"
  if ! setup_builddir "$dir" "${setup_opts[@]}"; then
    results+=("$name: FAILED (meson setup failed)")
    total_failed=$((total_failed + 1))
    return 1
  fi

  printf '\n--> %s: meson compile -C %s\n' "$name" "$dir"
  if ! meson compile -C "$dir"; then
    results+=("$name: FAILED (build failed)")
    total_failed=$((total_failed + 1))
    return 1
  fi

  local log="$dir/meson-logs/run-tests-$name.txt"
  printf '\n--> %s: %smeson test -C %s --print-errorlogs %s\n' \
    "$name" "${envs[*]:+${envs[*]} }" "$dir" "${test_args[*]}"
  env "${envs[@]}" "${wrapper[@]}" \
    meson test -C "$dir" --print-errorlogs "${test_args[@]}" < /dev/null 2>&1 \
    | tee "$log"
  local rc=${PIPESTATUS[0]}

  local ok xfail fail xpass timeout skipped passed failed
  ok=$(count_in_log "$log" 'Ok')
  xfail=$(count_in_log "$log" 'Expected Fail')
  fail=$(count_in_log "$log" 'Fail')
  xpass=$(count_in_log "$log" 'Unexpected Pass')
  timeout=$(count_in_log "$log" 'Timeout')
  skipped=$(count_in_log "$log" 'Skipped')
  passed=$((ok + xfail))
  failed=$((fail + xpass + timeout))
  local note=""
  if [[ $rc -ne 0 && $failed -eq 0 ]]; then
    # meson test itself failed (a rebuild failed, a bad option, ...).
    failed=1
    note="; meson test failed"
  elif [[ $((passed + failed + skipped)) -eq 0 ]]; then
    # A stage that runs nothing must not pass silently (a suite renamed).
    failed=1
    rc=1
    note="; no tests ran"
  fi
  total_passed=$((total_passed + passed))
  total_failed=$((total_failed + failed))
  total_skipped=$((total_skipped + skipped))

  local counts="$passed passed, $failed failed, $skipped skipped$note"
  if [[ $rc -ne 0 || $failed -ne 0 ]]; then
    results+=("$name: FAILED ($counts; log: $log)")
    return 1
  fi
  results+=("$name: ok ($counts)")
  return 0
}

stage_index=0
status=0
for stage in "${stages[@]}"; do
  case "$stage" in
    werror)
      run_stage werror build-ci "-Werror build, all test suites" "" \
        -- -Dtests=true -Dwerror=true \
        || status=1
      ;;
    asan)
      run_stage asan build-asan "AddressSanitizer + UBSan, all test suites" \
        "-fsanitize=address,undefined -fno-sanitize-recover=all" \
        -- -Dtests=true -Db_sanitize=address,undefined -Db_lundef=false \
           -Dbuildtype=debugoptimized -Dwerror=true \
           -Dc_args=-fno-sanitize-recover=all \
        -- ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
           UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
           G_SLICE=always-malloc \
        || status=1
      ;;
    tsan)
      run_stage tsan build-tsan "ThreadSanitizer, suite concurrency" \
        "-fsanitize=thread" \
        -- -Dtests=true -Db_sanitize=thread -Dwerror=true \
        -- TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
        -- --suite concurrency \
        || status=1
      ;;
  esac
done

summary
exit "$status"
