/* cow-trace-clock.c — the trace clock: CLOCK_MONOTONIC, read through the
 * TSC where that is safe.
 *
 * Why: clock_gettime() costs 20–30 ns even through the vDSO on a VM, as
 * much as the rest of a recorded trace point.  Tracy reads the TSC and
 * calibrates it once; we do the same, but keep the result on
 * CLOCK_MONOTONIC so that the engine's events, CUPTI's records (whose
 * timestamp callback is this clock) and the recorder's own clock_gettime()
 * readings stay one timeline.
 *
 * When: on x86 only, when /proc/cpuinfo lists `constant_tsc` and
 * `nonstop_tsc` (the TSC ticks at one rate through frequency changes and
 * idle states) and the kernel's current clocksource is `tsc` (the kernel
 * checked that the CPUs' TSCs agree, and CLOCK_MONOTONIC is the TSC
 * scaled, so the two cannot drift apart in steps).  COW_TRACE_CLOCK=
 * monotonic turns it off.  Otherwise every reading is clock_gettime().
 *
 * How: the first reading takes a reference pair (TSC, CLOCK_MONOTONIC);
 * readings in the next CALIBRATION_NS are clock_gettime() itself.  Then
 * an anchor is published: ns = anchor.ns + (tsc - anchor.tsc) * mult.
 * Each anchor covers ANCHOR_INTERVAL_NS; the first reading past it moves
 * the anchor (one thread does, the others extrapolate meanwhile).  A new
 * anchor continues the old conversion at its tick (no jump, so a thread's
 * timestamps never go back) and takes a rate that lands on CLOCK_MONOTONIC
 * at the end of its interval: the long-run rate since the reference pair,
 * plus the error just measured spread over the interval, the way adjtime()
 * slews.  The distance to CLOCK_MONOTONIC is thus about the rate's error
 * over one interval (well under a microsecond once calibrated).  Only an
 * error over MAX_SLEW_NS (a suspended machine, a migrated VM) is
 * corrected by a jump.
 */
#include "cow-private.h"
#include "cow-trace-clock-private.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Readings that use clock_gettime() before the TSC's rate is trusted:
 * 20 ms of pairs at most a few µs wide give the rate to a few parts per
 * million, which the slewing then corrects every interval. */
#define CALIBRATION_NS (20 * 1000 * 1000)
/* How long one anchor serves (one re-anchoring, about 1 µs of work, per
 * interval per process). */
#define ANCHOR_INTERVAL_NS (100 * 1000 * 1000)
/* A calibration pair is kept only when its clock_gettime() readings are
 * this close: the pair's uncertainty is half of it. */
#define MAX_PAIR_WIDTH_NS (10 * 1000)

typedef enum {
  MODE_UNDECIDED = 0,
  MODE_MONOTONIC,   /* clock_gettime() only */
  MODE_CALIBRATING, /* TSC usable; reference pair taken, rate not yet */
  MODE_TSC,         /* anchors published */
} ClockMode;

CowClockShared cow_clock_shared;

static _Atomic int clock_mode;
static pthread_once_t decide_once = PTHREAD_ONCE_INIT;
/* Held by the one thread that takes a pair and moves the anchor.  The
 * reference pair and the last anchor written are read and written only
 * by its holder (test-and-set acquires, clear releases). */
static atomic_flag anchoring = ATOMIC_FLAG_INIT;
static uint64_t reference_tsc;
static int64_t reference_ns;
/* When calibration may end (0: no reference pair yet). */
static _Atomic int64_t calibrated_after_ns;
static CowClockAnchor last_anchor;

static int64_t
monotonic_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- The machine ----------------------------------------------------- */

/* True when the first "flags" line of /proc/cpuinfo has every one of
 * @wanted (NULL-terminated). */
static bool
cpu_has_flags (const char *const *wanted)
{
  FILE *f = fopen ("/proc/cpuinfo", "re");
  if (f == NULL)
    return false;
  char line[8192];
  bool found = false, all = false;
  while (!found && fgets (line, sizeof line, f) != NULL)
    {
      if (strncmp (line, "flags", 5) != 0)
        continue;
      found = true;
      all = true;
      for (int i = 0; wanted[i] != NULL && all; i++)
        {
          size_t n = strlen (wanted[i]);
          const char *p = line;
          bool hit = false;
          while (!hit && (p = strstr (p, wanted[i])) != NULL)
            {
              hit = (p[-1] == ' ' || p[-1] == '\t' || p[-1] == ':')
                    && (p[n] == ' ' || p[n] == '\n' || p[n] == '\0');
              p += n;
            }
          all = hit;
        }
    }
  fclose (f);
  return found && all;
}

/* True when the kernel keeps CLOCK_MONOTONIC with the TSC. */
static bool
kernel_clocksource_is_tsc (void)
{
  FILE *f = fopen ("/sys/devices/system/clocksource/clocksource0/current_clocksource", "re");
  if (f == NULL)
    return false;
  char name[64] = "";
  bool tsc = fgets (name, sizeof name, f) != NULL && strcmp (name, "tsc\n") == 0;
  fclose (f);
  return tsc;
}

/* A (TSC, CLOCK_MONOTONIC) pair: the narrowest of a few brackets
 * clock_gettime(); rdtsc; clock_gettime(), its tick against their
 * midpoint.  Returns the bracket's width in ns. */
static int64_t
take_pair (uint64_t *tsc, int64_t *ns)
{
  int64_t best = INT64_MAX;
  *tsc = 0;
  *ns = 0;
  for (int i = 0; i < 4; i++)
    {
      int64_t before = monotonic_ns ();
      uint64_t t = cow_clock_ticks ();
      int64_t after = monotonic_ns ();
      if (after - before < best)
        {
          best = after - before;
          *tsc = t;
          *ns = before + (after - before) / 2;
        }
    }
  return best;
}

/* Fork child: a thread that was moving the anchor does not exist here. */
static void
clock_after_fork (void)
{
  atomic_flag_clear_explicit (&anchoring, memory_order_relaxed);
  uint64_t seq = atomic_load_explicit (&cow_clock_shared.seq, memory_order_relaxed);
  if (seq & 1)
    {
      /* Half-written: no anchor until the next reading makes one. */
      atomic_store_explicit (&cow_clock_shared.span, 0, memory_order_relaxed);
      last_anchor.span = 0;
      atomic_store_explicit (&cow_clock_shared.seq, seq + 1, memory_order_relaxed);
    }
}

static void
decide (void)
{
  static const char *const invariant[] = { "constant_tsc", "nonstop_tsc", NULL };
  ClockMode mode = MODE_MONOTONIC;
#if defined(__x86_64__) || defined(__i386__)
  const char *forced = getenv ("COW_TRACE_CLOCK");
  if ((forced == NULL || strcmp (forced, "monotonic") != 0) && cpu_has_flags (invariant)
      && kernel_clocksource_is_tsc ())
    mode = MODE_CALIBRATING;
#endif
  if (mode == MODE_CALIBRATING)
    pthread_atfork (NULL, NULL, clock_after_fork);
  /* Release: pairs with the acquire in clock_mode_now(). */
  atomic_store_explicit (&clock_mode, mode, memory_order_release);
}

static ClockMode
clock_mode_now (void)
{
  int mode = atomic_load_explicit (&clock_mode, memory_order_acquire);
  if (COW_UNLIKELY (mode == MODE_UNDECIDED))
    {
      pthread_once (&decide_once, decide);
      mode = atomic_load_explicit (&clock_mode, memory_order_acquire);
    }
  return (ClockMode) mode;
}

/* Publishes @a (the holder of `anchoring` only). */
static void
publish (const CowClockAnchor *a)
{
  CowClockShared *s = &cow_clock_shared;
  uint64_t seq = atomic_load_explicit (&s->seq, memory_order_relaxed);
  /* Odd first; each field's release store orders it after the odd
   * sequence, so a reader that acquires a new field also sees the odd
   * sequence (or a later one) on its second read.  Release stores rather
   * than a fence, which ThreadSanitizer does not model; on x86-64 they
   * are plain stores. */
  atomic_store_explicit (&s->seq, seq + 1, memory_order_relaxed);
  atomic_store_explicit (&s->tsc, a->tsc, memory_order_release);
  atomic_store_explicit (&s->ns, a->ns, memory_order_release);
  atomic_store_explicit (&s->mult, a->mult, memory_order_release);
  atomic_store_explicit (&s->span, a->span, memory_order_release);
  /* Release: a reader that acquires the even sequence sees the fields. */
  atomic_store_explicit (&s->seq, seq + 2, memory_order_release);
  last_anchor = *a;
}

/* The published anchor read consistently, or false after a few tries
 * (a writer in the middle of publishing). */
static bool
read_anchor (CowClockAnchor *a)
{
  CowClockShared *s = &cow_clock_shared;
  for (int i = 0; i < 64; i++)
    {
      uint64_t seq = atomic_load_explicit (&s->seq, memory_order_acquire);
      /* Acquire: as cow_clock_now_ns() reads them. */
      a->tsc = atomic_load_explicit (&s->tsc, memory_order_acquire);
      a->ns = atomic_load_explicit (&s->ns, memory_order_acquire);
      a->mult = atomic_load_explicit (&s->mult, memory_order_acquire);
      a->span = atomic_load_explicit (&s->span, memory_order_acquire);
      if ((seq & 1) == 0 && atomic_load_explicit (&s->seq, memory_order_relaxed) == seq)
        return a->span != 0;
    }
  return false;
}

/* The holder of `anchoring`, calibrating: takes the reference pair, or,
 * CALIBRATION_NS after it, the rate and the first anchor.  Returns the
 * reading for this call. */
static int64_t
calibrate_locked (void)
{
  uint64_t tsc;
  int64_t ns;
  if (take_pair (&tsc, &ns) > MAX_PAIR_WIDTH_NS)
    return ns; /* a bad moment (preempted): try again on a later reading */
  if (reference_ns == 0)
    {
      reference_tsc = tsc;
      reference_ns = ns;
      /* Relaxed: a hint that spares the readings before it the lock. */
      atomic_store_explicit (&calibrated_after_ns, ns + CALIBRATION_NS, memory_order_relaxed);
      return ns;
    }
  if (ns - reference_ns < CALIBRATION_NS)
    return ns;
  uint64_t rate = cow_clock_rate (reference_tsc, reference_ns, tsc, ns);
  if (rate == 0)
    {
      /* The TSC did not advance with the clock: not a TSC to trust. */
      atomic_store_explicit (&clock_mode, MODE_MONOTONIC, memory_order_release);
      return ns;
    }
  CowClockAnchor first = cow_clock_next_anchor (&last_anchor, tsc, ns, rate, ANCHOR_INTERVAL_NS);
  publish (&first);
  atomic_store_explicit (&clock_mode, MODE_TSC, memory_order_release);
  return first.ns;
}

/* The holder of `anchoring`, the anchor's span over: the next anchor
 * (continuous with the last, slewed towards the clock).  Returns the
 * reading for this call. */
static int64_t
move_anchor_locked (void)
{
  uint64_t tsc;
  int64_t ns;
  take_pair (&tsc, &ns);
  uint64_t rate = cow_clock_rate (reference_tsc, reference_ns, tsc, ns);
  if (rate == 0)
    return cow_clock_anchor_time (&last_anchor, tsc);
  CowClockAnchor next = cow_clock_next_anchor (&last_anchor, tsc, ns, rate, ANCHOR_INTERVAL_NS);
  publish (&next);
  return next.ns;
}

int64_t
cow_clock_now_slow (void)
{
  ClockMode mode = clock_mode_now ();
  if (mode == MODE_MONOTONIC)
    return monotonic_ns ();

  if (mode == MODE_CALIBRATING)
    {
      int64_t now = monotonic_ns ();
      int64_t after = atomic_load_explicit (&calibrated_after_ns, memory_order_relaxed);
      if ((after == 0 || now >= after)
          && !atomic_flag_test_and_set_explicit (&anchoring, memory_order_acquire))
        {
          /* Another thread may have finished meanwhile. */
          if (atomic_load_explicit (&clock_mode, memory_order_relaxed) == MODE_CALIBRATING)
            now = calibrate_locked ();
          atomic_flag_clear_explicit (&anchoring, memory_order_release);
        }
      return now;
    }

  /* The fast path failed: a tick just before the anchor (another thread
   * published it after this one read the TSC), a writer in the middle of
   * publishing, or the span is over. */
  CowClockAnchor a;
  if (read_anchor (&a))
    {
      uint64_t tsc = cow_clock_ticks ();
      if (tsc - a.tsc < a.span || a.tsc - tsc < a.span)
        return cow_clock_anchor_time (&a, tsc);
    }
  if (!atomic_flag_test_and_set_explicit (&anchoring, memory_order_acquire))
    {
      int64_t reading = move_anchor_locked ();
      atomic_flag_clear_explicit (&anchoring, memory_order_release);
      return reading;
    }
  /* Another thread is moving it: extrapolate the current anchor, which
   * the next one continues. */
  if (read_anchor (&a))
    return cow_clock_anchor_time (&a, cow_clock_ticks ());
  return monotonic_ns ();
}

const char *
cow_trace_clock_name (void)
{
  switch (clock_mode_now ())
    {
    case MODE_CALIBRATING:
    case MODE_TSC:
      return "tsc";
    default:
      return "clock_gettime";
    }
}
