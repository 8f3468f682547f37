#!/usr/bin/env python3
"""PyTorch's copy-on-write on a CUDA tensor, measured like bench-cuda.

For 64 MiB and 1 GiB uint8 tensors on cuda:0:
  - materialization by copy: torch._lazy_clone(x), then an in-place write
    (add_) to the clone while x lives, which copies; versus a plain
    torch.empty_like + copy_ of the same size (the baseline) — the same
    ratio bench-cuda prints for the engine (target >= 90%);
  - the lazy clone alone, in ns, and a steal (the write after the source
    is dropped), in ns.
The add_ itself is part of the materializing write; the table also shows
add_ on an unshared tensor so the copy's share can be read off.

Prints "skipped: <reason>" and exits 77 without torch, CUDA or
torch._lazy_clone.  COWTENSOR_BENCH_QUICK=1 skips 1 GiB.
"""
import os
import statistics
import sys
import time

MiB = 1 << 20
GiB = 1 << 30


def skip(reason: str) -> int:
    print("skipped: %s" % reason)
    return 77


def timed(fn, sync) -> float:
    sync()
    start = time.perf_counter_ns()
    fn()
    sync()
    return (time.perf_counter_ns() - start) / 1e9


def main() -> int:
    try:
        import torch
    except ImportError as e:
        return skip("PyTorch is not installed (%s)" % e)
    if not torch.cuda.is_available():
        return skip("no CUDA device: torch.cuda.is_available() is False")
    if not hasattr(torch, "_lazy_clone"):
        return skip("this PyTorch (%s) has no torch._lazy_clone" % torch.__version__)
    device = torch.device("cuda:0")
    sync = torch.cuda.synchronize
    print("bench-torch-lazy-clone: torch %s, %s" % (torch.__version__, torch.cuda.get_device_name(0)))

    quick = os.environ.get("COWTENSOR_BENCH_QUICK") == "1"
    print("\n1. Materialization by copy on cuda:0, GB/s (median; lazy clone write and baseline interleave)")
    print("   lazy:  torch._lazy_clone(x) then clone.add_(1) while x lives (copy + add)")
    print("   plain: torch.empty_like(x).copy_(x) (the baseline)")
    print("   add_:  add_(1) on an unshared tensor (the add's own share)\n")
    print("   %-8s %10s %10s %10s %8s  %-15s %s" % ("size", "lazy", "plain", "add_", "ratio", "target", "result"))
    for nbytes, reps in ((64 * MiB, 20), (GiB, 8)):
        label = "1 GiB" if nbytes == GiB else "64 MiB"
        if quick and nbytes == GiB:
            print("   %-8s skipped (COWTENSOR_BENCH_QUICK=1)" % label)
            continue
        x = torch.full((nbytes,), 7, dtype=torch.uint8, device=device)
        lazy, plain, add = [], [], []

        def lazy_write():
            c = torch._lazy_clone(x)
            c.add_(1)
            return c

        for r in range(reps + 1):
            t_lazy = timed(lazy_write, sync)
            t_plain = timed(lambda: torch.empty_like(x).copy_(x), sync)
            y = torch.empty_like(x).copy_(x)
            t_add = timed(lambda: y.add_(1), sync)
            del y
            if r > 0:  # r = 0: warm-up
                lazy.append(t_lazy)
                plain.append(t_plain)
                add.append(t_add)
        # The copy alone: the lazy write minus the add it also did.
        copy_s = max(statistics.median(lazy) - statistics.median(add), 1e-12)
        gb = lambda s: nbytes / s / 1e9
        ratio = gb(copy_s) / gb(statistics.median(plain))
        print("   %-8s %10.1f %10.1f %10.1f %7.0f%%  %-15s %s" % (
            label, gb(statistics.median(lazy)), gb(statistics.median(plain)),
            gb(statistics.median(add)), 100 * ratio, ">= 90% of plain",
            "PASS" if ratio >= 0.9 else "MISS"))
        del x

    x = torch.empty(1024, dtype=torch.float32, device=device)
    batch, clone_ns, steal_ns = 2000, [], []
    for r in range(10):
        start = time.perf_counter_ns()
        clones = [torch._lazy_clone(x) for _ in range(batch)]
        if r > 0:
            clone_ns.append((time.perf_counter_ns() - start) / batch)
        del clones
        pairs = []
        for _ in range(batch):
            s = torch.empty(1024, dtype=torch.float32, device=device)
            pairs.append(torch._lazy_clone(s))
            del s
        sync()
        start = time.perf_counter_ns()
        for c in pairs:
            c.data_ptr()  # the mutable pointer materializes: the last sharer steals
        if r > 0:
            steal_ns.append((time.perf_counter_ns() - start) / batch)
        del pairs
    print("\n2. torch._lazy_clone of a CUDA tensor:    %8.1f ns (median of 9 × %d)" % (statistics.median(clone_ns), batch))
    print("3. Materialization by steal (data_ptr()): %8.1f ns" % statistics.median(steal_ns))
    return 0


if __name__ == "__main__":
    sys.exit(main())
