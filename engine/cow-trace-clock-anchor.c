/* cow-trace-clock-anchor.c — the trace clock's arithmetic: the TSC's
 * rate, an anchor's time at a tick, and the anchor that follows another
 * (cow-trace-clock.c says when each is used and why).  Pure functions, so
 * that tests/engine/test-trace-clock.c checks them with the expected
 * values written out.
 */
#include "cow-trace-clock-private.h"

/* An error beyond this is corrected by a jump rather than slewed: a
 * suspended machine or a migrated VM, not a rate's error. */
#define MAX_SLEW_NS (1000 * 1000)

/* ns per tick in 32.32 fixed point from two pairs; 0 when the ticks did
 * not advance. */
uint64_t
cow_clock_rate (uint64_t tsc0, int64_t ns0, uint64_t tsc1, int64_t ns1)
{
  if (tsc1 <= tsc0 || ns1 <= ns0)
    return 0;
  return (uint64_t) (((unsigned __int128) (uint64_t) (ns1 - ns0) << 32) / (tsc1 - tsc0));
}

/* @anchor's time at @tsc, also for a tick somewhat before it. */
int64_t
cow_clock_anchor_time (const CowClockAnchor *anchor, uint64_t tsc)
{
  if (tsc >= anchor->tsc)
    return cow_clock_convert (tsc - anchor->tsc, anchor->mult, anchor->ns);
  return anchor->ns - (int64_t) (((unsigned __int128) (anchor->tsc - tsc) * anchor->mult) >> 32);
}

/* The anchor after @old at the pair (@tsc, @ns), given the long-run
 * @rate and an interval of @interval_ns: continuous with @old at @tsc,
 * and on the clock again at the end of its span (see the file comment).
 * @old with span 0 (none yet), or an error beyond MAX_SLEW_NS, starts
 * afresh at the pair. */
CowClockAnchor
cow_clock_next_anchor (const CowClockAnchor *old, uint64_t tsc, int64_t ns,
                       uint64_t rate, int64_t interval_ns)
{
  uint64_t span = (uint64_t) (((unsigned __int128) (uint64_t) interval_ns << 32) / rate);
  CowClockAnchor fresh = { .tsc = tsc, .ns = ns, .mult = rate, .span = span };
  if (old->span == 0 || span == 0)
    return fresh;
  int64_t continued = cow_clock_anchor_time (old, tsc);
  int64_t error = ns - continued; /* > 0: the conversion runs late */
  if (error > MAX_SLEW_NS || error < -MAX_SLEW_NS)
    return fresh;
  /* mult = rate + error / span, in 32.32: error * 2^32 fits 64 bits
   * (|error| <= 2^20), and the correction is under 1% of the rate for
   * any interval of at least 100 ms. */
  int64_t correction = (int64_t) (((__int128) error * ((__int128) 1 << 32)) / (__int128) span);
  CowClockAnchor next = {
    .tsc = tsc,
    .ns = continued,
    .mult = (uint64_t) ((int64_t) rate + correction),
    .span = span,
  };
  return next;
}
