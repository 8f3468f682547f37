/* burst-target.c — emits N trace events in a tight loop, as fast as the
 * tracer lets it, and times them from inside: the target of the
 * side-by-side benchmarks against LTTng-UST.
 *
 * Built twice from this one file so that both tracers run the same loop:
 *   burst-target-cowscope  one cow_mark() per event (run it under
 *                          cowscope-cli record: the probe's sink records it);
 *   burst-target-lttng     one cowscope_peer:event tracepoint per event
 *                          (BURST_TARGET_LTTNG), whose payload carries a
 *                          mark's CowTraceEvent fields.
 *
 *   burst-target-* EVENTS
 *
 * Prints one line (parsed by lttng-peer.c's lttng_peer_parse_target_line()):
 *   events=N enabled=0|1 first_ns=… mean_ns=… warm_ns=… loop_end_ns=… cpu_ns=…
 * first_ns: the first event alone (lazy set-up of the tracer's per-thread
 * state lands here); mean_ns: the other N-1 events, loop time over count;
 * warm_ns: the median over chunks of CHUNK_EVENTS of ns per event, which
 * a preemption on a loaded machine does not move; loop_end_ns: the
 * CLOCK_MONOTONIC instant the loop ended, so that the caller can time
 * from there to the data being complete; cpu_ns: this process's CPU time.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "cow-trace.h"

#ifdef BURST_TARGET_LTTNG
#include "peer-event-tp.h"
#else
#include "cowtensor.h"
#endif

#define CHUNK_EVENTS 16384
#define MAX_EVENTS ((uint64_t) 1 << 34)

static int64_t
now_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int
compare_doubles (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

#ifdef BURST_TARGET_LTTNG
/* What the engine fills for a mark: the payload LTTng is asked to record. */
static CowTraceEvent mark_template;

static void
burst_setup (void)
{
  mark_template.type = COW_EVENT_MARK;
  mark_template.op = COW_OP_NONE;
  mark_template.pid = (uint32_t) getpid ();
  mark_template.tid = (uint32_t) gettid ();
  mark_template.range.string_id = 1;
}

static int
burst_enabled (void)
{
  return lttng_ust_tracepoint_enabled (cowscope_peer, event) ? 1 : 0;
}

static inline void
burst_emit (uint64_t i)
{
  /* The loop index as the parent range keeps the payload from being a
   * compile-time constant; field values do not change a record's size. */
  mark_template.range.parent_range_id = i;
  lttng_ust_tracepoint (cowscope_peer, event, &mark_template);
}
#else
static void
burst_setup (void)
{
}

static int
burst_enabled (void)
{
  return cow_trace_get_sink () != NULL;
}

static inline void
burst_emit (uint64_t i)
{
  (void) i;
  cow_mark ("burst");
}
#endif

int
main (int argc, char **argv)
{
  char *end = NULL;
  unsigned long long requested = argc == 2 ? strtoull (argv[1], &end, 10) : 0;
  if (argc != 2 || end == argv[1] || *end != '\0' || requested < 2 ||
      requested > MAX_EVENTS)
    {
      fprintf (stderr, "usage: %s EVENTS   (2 to %llu events)\n", argv[0],
               (unsigned long long) MAX_EVENTS);
      return 2;
    }
  uint64_t events = requested;
  uint64_t n_chunks = (events - 1 + CHUNK_EVENTS - 1) / CHUNK_EVENTS;
  double *chunk_ns = malloc (n_chunks * sizeof *chunk_ns);
  if (chunk_ns == NULL)
    {
      fprintf (stderr, "%s: out of memory\n", argv[0]);
      return 1;
    }
  burst_setup ();
  int enabled = burst_enabled ();

  int64_t t0 = now_ns ();
  burst_emit (0);
  int64_t t1 = now_ns ();
  uint64_t i = 1;
  for (uint64_t c = 0; c < n_chunks; c++)
    {
      uint64_t stop = i + CHUNK_EVENTS < events ? i + CHUNK_EVENTS : events;
      uint64_t count = stop - i;
      int64_t c0 = now_ns ();
      for (; i < stop; i++)
        burst_emit (i);
      chunk_ns[c] = (double) (now_ns () - c0) / (double) count;
    }
  int64_t loop_end = now_ns ();

  struct rusage ru;
  getrusage (RUSAGE_SELF, &ru);
  int64_t cpu_ns =
    ((int64_t) ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000 +
    ((int64_t) ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000;
  qsort (chunk_ns, n_chunks, sizeof *chunk_ns, compare_doubles);
  printf ("events=%llu enabled=%d first_ns=%lld mean_ns=%.3f warm_ns=%.3f "
          "loop_end_ns=%lld"
          " cpu_ns=%lld\n",
          (unsigned long long) events, enabled, (long long) (t1 - t0),
          (double) (loop_end - t1) / (double) (events - 1),
          chunk_ns[n_chunks / 2], (long long) loop_end, (long long) cpu_ns);
  free (chunk_ns);
  return fflush (stdout) == 0 ? 0 : 1;
}
