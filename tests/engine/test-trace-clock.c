/* test-trace-clock.c — the trace clock: its conversion and anchoring
 * rules with the expected values written out (built with
 * engine/cow-trace-clock.c, whose rules are pure functions), and the
 * library's cow_trace_now_ns() against clock_gettime() on several
 * threads. */
#include <glib.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "cow-trace-clock-private.h"
#include "cowtensor.h"

/* 2^32: one ns per tick in 32.32 fixed point. */
#define ONE ((uint64_t) 1 << 32)
/* The largest distance from CLOCK_MONOTONIC the design allows before it
 * corrects by a jump (cow-trace-clock.c, MAX_SLEW_NS). */
#define MAX_DISTANCE_NS (1000 * 1000)

static int64_t
monotonic_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- The rules ---------------------------------------------------------- */

static void
test_rate (void)
{
  /* 3 ticks a ns: a third of a ns per tick, rounded down in 32.32. */
  g_assert_cmpuint (cow_clock_rate (1000, 50, 1000 + 3000000000ull, 50 + 1000000000),
                    ==, 1431655765u);
  /* 1 tick a ns, far from zero (no overflow of (ns1 - ns0) << 32). */
  g_assert_cmpuint (cow_clock_rate (1ull << 62, 0, (1ull << 62) + 86400000000000ull,
                                    86400000000000),
                    ==, ONE);
  /* Ticks or time that did not advance: no rate. */
  g_assert_cmpuint (cow_clock_rate (500, 10, 500, 20), ==, 0);
  g_assert_cmpuint (cow_clock_rate (500, 10, 600, 10), ==, 0);
}

static void
test_anchor_time (void)
{
  CowClockAnchor a = { .tsc = 1000, .ns = 5000, .mult = ONE / 2, .span = 100000 };
  g_assert_cmpint (cow_clock_anchor_time (&a, 1000), ==, 5000);
  g_assert_cmpint (cow_clock_anchor_time (&a, 1600), ==, 5300);
  /* A tick before the anchor (another CPU read it a little earlier). */
  g_assert_cmpint (cow_clock_anchor_time (&a, 800), ==, 4900);
  /* The fast path's conversion agrees. */
  g_assert_cmpint (cow_clock_convert (600, a.mult, a.ns), ==, 5300);
}

/* The first anchor, and any after an error too large to slew, starts at
 * the pair with the long-run rate. */
static void
test_next_anchor_fresh (void)
{
  CowClockAnchor none = { 0 };
  CowClockAnchor a = cow_clock_next_anchor (&none, 7000, 123456789, ONE, 100000000);
  g_assert_cmpuint (a.tsc, ==, 7000);
  g_assert_cmpint (a.ns, ==, 123456789);
  g_assert_cmpuint (a.mult, ==, ONE);
  g_assert_cmpuint (a.span, ==, 100000000);

  /* The old anchor says 2 ms later than the clock: jump to the clock. */
  CowClockAnchor old = { .tsc = 0, .ns = 0, .mult = ONE, .span = 100000000 };
  CowClockAnchor b = cow_clock_next_anchor (&old, 50000000, 50000000 - 2000000, ONE, 100000000);
  g_assert_cmpint (b.ns, ==, 48000000);
  g_assert_cmpuint (b.mult, ==, ONE);
}

/* Within the slew limit the next anchor continues the old conversion at
 * its tick, and reaches the clock at the end of its span. */
static void
test_next_anchor_slews (void)
{
  /* The old rate ran 2^-17 (7.6 ppm) fast: at tick 131,072,000 it says
   * 1000 ns too late. */
  CowClockAnchor old = { .tsc = 0, .ns = 0, .mult = ONE + (ONE >> 17), .span = 200000000 };
  uint64_t t = 131072000;
  int64_t clock = 131072000; /* the true clock: one ns per tick */
  g_assert_cmpint (cow_clock_anchor_time (&old, t), ==, 131073000);

  CowClockAnchor next = cow_clock_next_anchor (&old, t, clock, ONE, 100000000);
  /* No jump at the anchor. */
  g_assert_cmpint (next.tsc, ==, t);
  g_assert_cmpint (next.ns, ==, 131073000);
  g_assert_cmpuint (next.span, ==, 100000000);
  /* Slower than the true rate by 1000 ns over the span ... */
  g_assert_cmpuint (next.mult, <, ONE);
  /* ... so at its end it reads the clock again, to within a ns. */
  int64_t at_end = cow_clock_anchor_time (&next, t + next.span);
  g_assert_cmpint (at_end, >=, clock + 100000000 - 1);
  g_assert_cmpint (at_end, <=, clock + 100000000 + 1);

  /* The other way round: a conversion that runs late speeds up. */
  CowClockAnchor slow = { .tsc = 0, .ns = 0, .mult = ONE - (ONE >> 17), .span = 200000000 };
  CowClockAnchor faster = cow_clock_next_anchor (&slow, t, clock, ONE, 100000000);
  g_assert_cmpint (faster.ns, ==, 131071000);
  g_assert_cmpuint (faster.mult, >, ONE);
  at_end = cow_clock_anchor_time (&faster, t + faster.span);
  g_assert_cmpint (at_end, >=, clock + 100000000 - 1);
  g_assert_cmpint (at_end, <=, clock + 100000000 + 1);
}

/* ---- The library's clock -------------------------------------------------- */

/* Reads cow_trace_now_ns() between two clock_gettime() calls for @ms of
 * CLOCK_MONOTONIC (past the calibration and a few anchors), checking it
 * never goes back on this thread and stays within MAX_DISTANCE_NS of the
 * bracket.  Returns the number of readings. */
static void *
follow_monotonic (void *data)
{
  int64_t ms = GPOINTER_TO_INT (data);
  int64_t last = INT64_MIN;
  int64_t end = monotonic_ns () + ms * 1000000;
  guint64 readings = 0;
  while (monotonic_ns () < end)
    {
      for (int i = 0; i < 1000; i++)
        {
          int64_t before = monotonic_ns ();
          int64_t now = cow_trace_now_ns ();
          int64_t after = monotonic_ns ();
          g_assert_cmpint (now, >=, last);
          g_assert_cmpint (now, >=, before - MAX_DISTANCE_NS);
          g_assert_cmpint (now, <=, after + MAX_DISTANCE_NS);
          last = now;
          readings++;
        }
      /* Idle stretches too: the first reading after one moves the anchor. */
      struct timespec pause = { 0, 3 * 1000 * 1000 };
      nanosleep (&pause, NULL);
    }
  return GSIZE_TO_POINTER (readings);
}

static void
test_follows_monotonic (void)
{
  enum { THREADS = 4 };
  pthread_t threads[THREADS];
  for (int i = 0; i < THREADS; i++)
    g_assert_cmpint (pthread_create (&threads[i], NULL, follow_monotonic, GINT_TO_POINTER (350)),
                     ==, 0);
  for (int i = 0; i < THREADS; i++)
    {
      void *readings = NULL;
      g_assert_cmpint (pthread_join (threads[i], &readings), ==, 0);
      g_assert_cmpuint (GPOINTER_TO_SIZE (readings), >, 0);
    }
  const char *name = cow_trace_clock_name ();
  g_assert_true (g_str_equal (name, "tsc") || g_str_equal (name, "clock_gettime"));
  g_test_message ("the trace clock reads %s", name);
}

/* COW_TRACE_CLOCK=monotonic: clock_gettime() itself. */
static void
test_forced_monotonic (void)
{
  if (g_test_subprocess ())
    {
      g_assert_cmpstr (cow_trace_clock_name (), ==, "clock_gettime");
      follow_monotonic (GINT_TO_POINTER (30));
      return;
    }
  g_setenv ("COW_TRACE_CLOCK", "monotonic", TRUE);
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_INHERIT_STDERR);
  g_unsetenv ("COW_TRACE_CLOCK");
  g_test_trap_assert_passed ();
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/trace-clock/rate", test_rate);
  g_test_add_func ("/trace-clock/anchor-time", test_anchor_time);
  g_test_add_func ("/trace-clock/next-anchor-fresh", test_next_anchor_fresh);
  g_test_add_func ("/trace-clock/next-anchor-slews", test_next_anchor_slews);
  g_test_add_func ("/trace-clock/follows-monotonic", test_follows_monotonic);
  g_test_add_func ("/trace-clock/forced-monotonic", test_forced_monotonic);
  return g_test_run ();
}
