/* tracepoint-target.c — times the engine's trace points from inside a
 * target, so the same program measures them with the probes off (run
 * plainly) and on (run under cowscope-cli record).
 *
 * Prints one line: "empty_ns=… mark_ns=… view_ns=… clone_ns=… sink=on|off
 * clock=tsc|clock_gettime …", each the median ns per iteration of: an
 * empty out-of-line call; cow_mark() (one trace point, plus interning its
 * name when a sink listens); a view + unref (two trace points: TENSOR_NEW
 * and TENSOR_FREE, no interning); and a lazy clone + unref (clone_ns: a
 * few events, of which LAZY_CLONE takes the call stack).
 *
 * What a recorded event costs is measured with the recorder keeping up:
 * each repeat is a batch that fits a quarter of the default ring, and the
 * program pauses between repeats so that the recorder drains it (a
 * dropped event costs less than a stored one, and a dropped LAZY_CLONE
 * takes no stack at all; the caller checks the recording kept every
 * event).  The times are the thread's CPU time (CLOCK_THREAD_CPUTIME_ID),
 * which leaves out the time other processes of a busy machine take from
 * it; the same figures in wall time follow as empty_wall_ns=… and so on.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cowtensor.h"

/* Per repeat: 2,048 marks, 2,048 view events and 256 clones (about 6
 * events and a stack each): about 0.4 MiB of ring, a quarter of the
 * default's 1 MiB (or less) each time. */
#define MARKS 2048
#define VIEWS 1024
#define CLONES 256
#define REPEATS 61
/* Long enough for the recorder to drain a batch on a busy machine. */
#define PAUSE_NS (15 * 1000 * 1000)

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

/* The figures of one loop: CPU and wall ns per iteration, per repeat. */
typedef struct {
  double cpu[REPEATS], wall[REPEATS];
} Loop;

static void
note (Loop *loop, int repeat, Stamp start, Stamp end, int iterations)
{
  loop->cpu[repeat] = (end.cpu - start.cpu) / iterations;
  loop->wall[repeat] = (end.wall - start.wall) / iterations;
}

static int
fail (const CowError *error)
{
  fprintf (stderr, "tracepoint-target: %s\n", error->message);
  return 1;
}

int
main (void)
{
  CowError error;
  int64_t sizes[] = { 16, 16 }, flat[] = { 256 };
  CowTensor *base = cow_tensor_zeros (2, sizes, COW_DTYPE_F32, &error);
  if (base == NULL)
    return fail (&error);

  static Loop empty, mark, view, clone;
  for (int r = 0; r < REPEATS; r++)
    {
      Stamp t0 = now ();
      for (int i = 0; i < MARKS; i++)
        empty_call ();
      Stamp t1 = now ();
      for (int i = 0; i < MARKS; i++)
        cow_mark ("bench");
      Stamp t2 = now ();
      for (int i = 0; i < VIEWS; i++)
        {
          CowTensor *v = cow_tensor_view (base, 1, flat, &error);
          if (v == NULL)
            return fail (&error);
          cow_tensor_unref (v);
        }
      Stamp t3 = now ();
      for (int i = 0; i < CLONES; i++)
        {
          CowTensor *c = cow_tensor_lazy_clone (base, &error);
          if (c == NULL)
            return fail (&error);
          cow_tensor_unref (c);
        }
      Stamp t4 = now ();
      note (&empty, r, t0, t1, MARKS);
      note (&mark, r, t1, t2, MARKS);
      note (&view, r, t2, t3, VIEWS);
      note (&clone, r, t3, t4, CLONES);
      struct timespec pause = { 0, PAUSE_NS };
      nanosleep (&pause, NULL);
    }
  printf ("empty_ns=%.3f mark_ns=%.3f view_ns=%.3f clone_ns=%.3f sink=%s clock=%s "
          "empty_wall_ns=%.3f mark_wall_ns=%.3f view_wall_ns=%.3f clone_wall_ns=%.3f\n",
          median (empty.cpu), median (mark.cpu), median (view.cpu), median (clone.cpu),
          cow_trace_get_sink () ? "on" : "off", cow_trace_clock_name (), median (empty.wall),
          median (mark.wall), median (view.wall), median (clone.wall));
  cow_tensor_unref (base);
  return 0;
}
