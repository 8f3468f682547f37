/* cow-trace-clock-private.h — the trace clock's fast path, inlined into
 * every trace point.  Not installed.
 *
 * The clock is CLOCK_MONOTONIC in ns.  Where the TSC is invariant and the
 * kernel itself keeps time with it, it is read through the TSC (one
 * rdtsc, a multiply and a few loads instead of a vDSO call),
 * converted with an anchor that cow-trace-clock.c calibrates against
 * clock_gettime() and moves about ten times a second, slewing so that it
 * never jumps and stays within a few microseconds of CLOCK_MONOTONIC.
 * Everywhere else, and until the first calibration is done, it is
 * clock_gettime() itself.  The rules are in cow-trace-clock.c.
 */
#pragma once

#include <stdatomic.h>
#include <stdint.h>

#define COW_CLOCK_LIKELY(x) __builtin_expect (!!(x), 1)

/* A conversion from TSC ticks to ns, valid for ticks in
 * [tsc, tsc + span): ns + (ticks - tsc) * mult / 2^32. */
typedef struct {
  uint64_t tsc;
  int64_t ns;
  uint64_t mult; /* ns per tick, 32.32 fixed point */
  uint64_t span; /* ticks; 0: no anchor (read clock_gettime) */
} CowClockAnchor;

/* The published anchor, under a sequence lock: odd while it is being
 * rewritten.  Fields are atomics so that a reader racing with the writer
 * is well defined (and then retries); they are stored with release and
 * loaded with acquire instead of fences (see cow_clock_now_ns()). */
typedef struct {
  _Atomic uint64_t seq;
  _Atomic uint64_t tsc;
  _Atomic int64_t ns;
  _Atomic uint64_t mult;
  _Atomic uint64_t span;
} CowClockShared;

__attribute__ ((visibility ("hidden"))) extern CowClockShared cow_clock_shared;

/* The rules (cow-trace-clock-anchor.c), pure functions:
 * ns per tick (32.32) between two pairs; an anchor's time at a tick
 * (also one before it); the anchor that follows @old at a pair. */
__attribute__ ((visibility ("hidden"))) uint64_t cow_clock_rate (uint64_t tsc0, int64_t ns0,
                                                                  uint64_t tsc1, int64_t ns1);
__attribute__ ((visibility ("hidden"))) int64_t cow_clock_anchor_time (const CowClockAnchor *anchor,
                                                                        uint64_t tsc);
__attribute__ ((visibility ("hidden"))) CowClockAnchor
cow_clock_next_anchor (const CowClockAnchor *old, uint64_t tsc, int64_t ns, uint64_t rate,
                       int64_t interval_ns);

/* Everything but the fast path: calibration, moving the anchor, the
 * clock_gettime() fallback. */
__attribute__ ((visibility ("hidden"), noinline)) int64_t cow_clock_now_slow (void);

/* The TSC.  Not ordered (no lfence, no rdtscp), as perf's sched_clock
 * and Tracy read it: the fence would drain the pipeline at every event,
 * 11 ns of a 26 ns trace point on the project's VM.  The read may thus
 * run a few dozen ns ahead of the instructions before it; within a thread
 * events keep their order (the ring's), and only two events of different
 * threads closer than that can come out in either order, which is also
 * what two truly concurrent events do. */
static inline uint64_t
cow_clock_ticks (void)
{
#if defined(__x86_64__) || defined(__i386__)
  uint32_t lo, hi;
  __asm__ __volatile__ ("rdtsc" : "=a"(lo), "=d"(hi));
  return ((uint64_t) hi << 32) | lo;
#else
  return 0;
#endif
}

/* ns = anchor.ns + (ticks - anchor.tsc) * mult / 2^32, without overflow
 * for any delta below 2^64. */
static inline int64_t
cow_clock_convert (uint64_t delta, uint64_t mult, int64_t ns)
{
  return ns + (int64_t) (((unsigned __int128) delta * mult) >> 32);
}

/* CLOCK_MONOTONIC now, in ns. */
static inline int64_t
cow_clock_now_ns (void)
{
#if defined(__x86_64__) || defined(__i386__)
  CowClockShared *s = &cow_clock_shared;
  /* The sequence-lock reader, with acquire loads of the fields rather
   * than an acquire fence (which ThreadSanitizer does not model): the
   * second read of the sequence cannot move before them, and a field
   * written by a publisher brings its odd sequence with it.  On x86-64
   * every one of these is a plain load. */
  uint64_t seq = atomic_load_explicit (&s->seq, memory_order_acquire);
  uint64_t tsc = atomic_load_explicit (&s->tsc, memory_order_acquire);
  int64_t ns = atomic_load_explicit (&s->ns, memory_order_acquire);
  uint64_t mult = atomic_load_explicit (&s->mult, memory_order_acquire);
  uint64_t span = atomic_load_explicit (&s->span, memory_order_acquire);
  /* span is 0 while there is no anchor (calibrating, or a machine whose
   * TSC is not to be trusted, where a hypervisor may even trap rdtsc):
   * then the TSC is not read at all. */
  if (COW_CLOCK_LIKELY (span != 0))
    {
      /* One unsigned compare: ticks before the anchor wrap to a huge
       * delta. */
      uint64_t delta = cow_clock_ticks () - tsc;
      if (COW_CLOCK_LIKELY (delta < span
                            && atomic_load_explicit (&s->seq, memory_order_relaxed) == seq
                            && (seq & 1) == 0))
        return cow_clock_convert (delta, mult, ns);
    }
#endif
  return cow_clock_now_slow ();
}
