#!/bin/sh
# run-gpu-checks.sh — the checks that need a CUDA GPU, for a GPU machine.
#
# Expects the CUDA 13 toolkit (nvcc), meson, ninja, python3 (PyTorch is
# optional) and GLib/SQLite from a prefix: source it first, e.g.
#   . .devprefix/env.sh && ./build-aux/run-gpu-checks.sh
# Configures build-gpu/ (-Dapp=disabled -Dcuda=enabled) and build-gpu-asan/
# (the same with AddressSanitizer + UBSan), builds them, runs the engine
# and gpu test suites in both, the demo's gpu scenario, the cuda benchmark
# and the PyTorch lazy-clone script.  Logs go to gpu-checks/ (or
# $COWSCOPE_GPU_LOGS); the last line says "N passed, N failed".
set -u

cd "$(dirname "$0")/.." || exit 1
logs=${COWSCOPE_GPU_LOGS:-gpu-checks}
mkdir -p "$logs" || exit 1
passed=0
failed=0

step () {
  name=$1
  shift
  printf '%-28s ' "$name"
  if "$@" >"$logs/$name.log" 2>&1; then
    passed=$((passed + 1))
    echo ok
  else
    status=$?
    failed=$((failed + 1))
    echo "FAILED (status $status, see $logs/$name.log)"
  fi
}

# A skip (77) is not a failure of the run, but the log says it.
step_allow_skip () {
  name=$1
  shift
  printf '%-28s ' "$name"
  "$@" >"$logs/$name.log" 2>&1
  status=$?
  case $status in
    0) passed=$((passed + 1)); echo ok ;;
    77) passed=$((passed + 1)); echo "skipped ($(tail -n 1 "$logs/$name.log"))" ;;
    *) failed=$((failed + 1)); echo "FAILED (status $status, see $logs/$name.log)" ;;
  esac
}

{
  date
  uname -a
  nvidia-smi 2>&1 || echo "nvidia-smi: not available"
  nvcc --version 2>&1 || /usr/local/cuda/bin/nvcc --version 2>&1
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.is_available())' 2>&1
} >"$logs/machine.log"

step setup meson setup build-gpu --wipe -Dapp=disabled -Dcuda=enabled -Dwerror=true \
  -Dbuildtype=release
step build meson compile -C build-gpu
# The gpu suite is test-cuda; the engine suite includes it and every
# CPU test.  On this machine a skipped /cuda/gpu/ test is a failure (the
# /cuda/no-device/ ones skip here, as they should).
step test-engine meson test -C build-gpu --suite engine --print-errorlogs
step test-gpu sh -c 'meson test -C build-gpu --suite gpu --verbose >gpu-suite.out 2>&1; status=$?;
  cat gpu-suite.out; if grep -Eq "/cuda/gpu/[^ ]* +SKIP" gpu-suite.out; then
  echo "a GPU test was skipped"; status=1; fi; rm -f gpu-suite.out; exit $status'
step demo-gpu build-gpu/engine/demo/cowscope-demo gpu
step demo-all build-gpu/engine/demo/cowscope-demo --quiet --steps 4 all
step_allow_skip bench-cuda build-gpu/tests/bench/bench-cuda
step_allow_skip bench-torch python3 tests/bench/bench-torch-lazy-clone.py

# AddressSanitizer + UBSan: the CUDA runtime maps memory in ASan's shadow
# gap, so test-cuda runs with protect_shadow_gap=0 (tests/engine/meson.build
# sets it for that test); leak checking stays on.
step setup-asan meson setup build-gpu-asan --wipe -Dapp=disabled -Dcuda=enabled \
  -Dwerror=true -Db_sanitize=address,undefined -Db_lundef=false
step build-asan meson compile -C build-gpu-asan
step test-engine-asan meson test -C build-gpu-asan --suite engine --print-errorlogs

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
