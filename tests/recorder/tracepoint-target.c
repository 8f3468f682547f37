/* tracepoint-target.c — times the engine's trace points from inside a
 * target, so the same program measures them with the probes off (run
 * plainly) and on (run under cowscope-cli record).
 *
 * Prints one line: "empty_ns=… mark_ns=… view_ns=… sink=on|off
 * clock=tsc|clock_gettime", each the median ns per iteration of: an empty
 * out-of-line call; cow_mark() (one trace point, plus interning its name
 * when a sink listens); and a view + unref (two trace points: TENSOR_NEW
 * and TENSOR_FREE, no interning).  The times are the thread's CPU time
 * (CLOCK_THREAD_CPUTIME_ID), which leaves out the time other processes
 * of a busy machine take from it; the same figures in wall time follow as
 * empty_wall_ns=… and so on.
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

typedef struct {
  double cpu, wall;
} Stamp;

static Stamp
now (void)
{
  struct timespec cpu, wall;
  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &cpu);
  clock_gettime (CLOCK_MONOTONIC, &wall);
  return (Stamp) { (double) cpu.tv_sec * 1e9 + (double) cpu.tv_nsec,
                   (double) wall.tv_sec * 1e9 + (double) wall.tv_nsec };
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
  double empty_wall[REPEATS], mark_wall[REPEATS], view_wall[REPEATS];
  for (int r = 0; r < REPEATS; r++)
    {
      Stamp t0 = now ();
      for (int i = 0; i < ITERATIONS; i++)
        empty_call ();
      Stamp t1 = now ();
      for (int i = 0; i < ITERATIONS; i++)
        cow_mark ("bench");
      Stamp t2 = now ();
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
      Stamp t3 = now ();
      empty[r] = (t1.cpu - t0.cpu) / ITERATIONS;
      mark[r] = (t2.cpu - t1.cpu) / ITERATIONS;
      view[r] = (t3.cpu - t2.cpu) / ITERATIONS;
      empty_wall[r] = (t1.wall - t0.wall) / ITERATIONS;
      mark_wall[r] = (t2.wall - t1.wall) / ITERATIONS;
      view_wall[r] = (t3.wall - t2.wall) / ITERATIONS;
    }
  printf ("empty_ns=%.3f mark_ns=%.3f view_ns=%.3f sink=%s clock=%s "
          "empty_wall_ns=%.3f mark_wall_ns=%.3f view_wall_ns=%.3f\n",
          median (empty), median (mark), median (view),
          cow_trace_get_sink () ? "on" : "off", cow_trace_clock_name (),
          median (empty_wall), median (mark_wall), median (view_wall));
  cow_tensor_unref (base);
  return 0;
}
