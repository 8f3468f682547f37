/* tracepoint-target.c — times the engine's trace points from inside a
 * target, so the same program measures them with the probes off (run
 * plainly) and on (run under cowscope-cli record).
 *
 * Prints one line: "empty_ns=… mark_ns=… view_ns=… sink=on|off", each the
 * median ns per iteration of: an empty out-of-line call; cow_mark() (one
 * trace point, plus interning its name when a sink listens); and a view +
 * unref (two trace points: TENSOR_NEW and TENSOR_FREE, no interning).
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cowtensor.h"

#define ITERATIONS 200000
#define REPEATS 9

__attribute__ ((noinline)) static void
empty_call (void)
{
  __asm__ volatile ("" ::: "memory");
}

static double
now_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (double) ts.tv_sec * 1e9 + (double) ts.tv_nsec;
}

static int
compare (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

static double
median (double *values)
{
  qsort (values, REPEATS, sizeof *values, compare);
  return values[REPEATS / 2];
}

int
main (void)
{
  CowError error;
  int64_t sizes[] = { 16, 16 }, flat[] = { 256 };
  CowTensor *base = cow_tensor_zeros (2, sizes, COW_DTYPE_F32, &error);
  if (base == NULL)
    {
      fprintf (stderr, "tracepoint-target: %s\n", error.message);
      return 1;
    }

  double empty[REPEATS], mark[REPEATS], view[REPEATS];
  for (int r = 0; r < REPEATS; r++)
    {
      double t0 = now_ns ();
      for (int i = 0; i < ITERATIONS; i++)
        empty_call ();
      double t1 = now_ns ();
      for (int i = 0; i < ITERATIONS; i++)
        cow_mark ("bench");
      double t2 = now_ns ();
      for (int i = 0; i < ITERATIONS; i++)
        {
          CowTensor *v = cow_tensor_view (base, 1, flat, &error);
          if (v == NULL)
            {
              fprintf (stderr, "tracepoint-target: %s\n", error.message);
              return 1;
            }
          cow_tensor_unref (v);
        }
      double t3 = now_ns ();
      empty[r] = (t1 - t0) / ITERATIONS;
      mark[r] = (t2 - t1) / ITERATIONS;
      view[r] = (t3 - t2) / ITERATIONS;
    }
  printf ("empty_ns=%.3f mark_ns=%.3f view_ns=%.3f sink=%s\n", median (empty),
          median (mark), median (view), cow_trace_get_sink () ? "on" : "off");
  cow_tensor_unref (base);
  return 0;
}
