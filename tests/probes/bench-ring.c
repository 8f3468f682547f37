/* bench-ring.c — the event ring's costs, beside baselines taken in the
 * same run:
 *
 *   1. one 64-byte event write into the ring (single thread, ring never
 *      full while timed) versus a plain 64-byte memcpy into a local
 *      buffer; also the generic write and the drop path of a full ring;
 *   2. the consumer's drain rate (peek + advance, payload touched) in
 *      events/s, single thread over a ring full of events;
 *   3. a producer and a consumer on two threads (BLOCK mode, separate
 *      mappings as in the recorder): events/s end to end, drops.
 *
 * Medians of several repetitions after a warm-up, CLOCK_MONOTONIC.
 * Exits non-zero only on an internal error (a ring that cannot be made,
 * records lost in BLOCK mode, a corrupt record).
 */
#include "cowscope-ring.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CAPACITY ((uint64_t) 4 << 20)
#define EVENT_RECORD 72 /* 8-byte record header + 64-byte event */
#define REPS 9

static int failures;

/* CLOCK_MONOTONIC in ns. */
static int64_t
now_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* qsort order for doubles. */
static int
compare_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

/* The median of @values (sorts them). */
static double
median (double *values, int n)
{
  qsort (values, (size_t) n, sizeof *values, compare_double);
  return values[n / 2];
}

/* Keeps the compiler from eliding stores to @p. */
static inline void
escape (void *p)
{
  __asm__ __volatile__ ("" : : "g"(p) : "memory");
}

/* ns per 64-byte memcpy into a local 4 KiB buffer (cache-resident). */
static double
bench_memcpy (uint64_t n)
{
  static CowTraceEvent local[64];
  CowTraceEvent event = { .type = COW_EVENT_MARK };
  int64_t t0 = now_ns ();
  for (uint64_t i = 0; i < n; i++)
    {
      event.v[0] = i;
      memcpy (&local[i & 63], &event, sizeof event);
      escape (local);
    }
  return (double) (now_ns () - t0) / (double) n;
}

/* Drains @ring, touching each payload; returns records and checks that
 * events carry consecutive v[0] values from *next. */
static uint64_t
drain (CowscopeRing *ring, uint64_t *next)
{
  uint64_t n = 0, sum = 0;
  CowscopeRingRecord record;
  CowError error = { 0 };
  CowscopeRingReadResult r;
  while ((r = cowscope_ring_peek (ring, &record, &error)) == COWSCOPE_RING_READ_RECORD)
    {
      const CowTraceEvent *event = record.payload;
      if (record.kind == COWSCOPE_RING_KIND_EVENT && next != NULL)
        {
          if (event->v[0] != *next)
            {
              fprintf (stderr, "bench-ring: record %" PRIu64 " where %" PRIu64
                       " was expected\n", event->v[0], *next);
              failures++;
            }
          *next = event->v[0] + 1;
        }
      sum += event->v[0];
      cowscope_ring_advance (ring, &record);
      n++;
    }
  if (r == COWSCOPE_RING_READ_ERROR)
    {
      fprintf (stderr, "bench-ring: %s\n", error.message);
      failures++;
    }
  escape (&sum);
  return n;
}

typedef struct {
  double write_event_ns;
  double write_generic_ns;
  double drain_eps;
} SingleResult;

/* One repetition: fill the ring with events (timed writes), drain it
 * (timed), then the same with the generic write. */
static SingleResult
bench_single (CowscopeRing *ring)
{
  uint64_t per_fill = CAPACITY / EVENT_RECORD;
  CowTraceEvent event = { .type = COW_EVENT_MARK };
  SingleResult result;
  uint64_t next = 0, seq = 0;

  int64_t t0 = now_ns ();
  for (uint64_t i = 0; i < per_fill; i++)
    {
      event.v[0] = seq++;
      if (!cowscope_ring_write_event (ring, &event))
        failures++;
    }
  int64_t t1 = now_ns ();
  uint64_t drained = drain (ring, &next);
  int64_t t2 = now_ns ();
  if (drained != per_fill)
    failures++;
  result.write_event_ns = (double) (t1 - t0) / (double) per_fill;
  result.drain_eps = (double) drained * 1e9 / (double) (t2 - t1);

  t0 = now_ns ();
  for (uint64_t i = 0; i < per_fill; i++)
    {
      event.v[0] = seq++;
      if (!cowscope_ring_write (ring, COWSCOPE_RING_KIND_EVENT, &event,
                                sizeof event))
        failures++;
    }
  t1 = now_ns ();
  if (drain (ring, &next) != per_fill)
    failures++;
  result.write_generic_ns = (double) (t1 - t0) / (double) per_fill;
  return result;
}

/* ns per write that finds the ring full (DROP mode). */
static double
bench_drop_path (uint64_t n)
{
  CowError error = { 0 };
  CowscopeRing *ring = cowscope_ring_new (4096, COWSCOPE_RING_DROP, &error);
  if (ring == NULL)
    {
      fprintf (stderr, "bench-ring: %s\n", error.message);
      failures++;
      return 0;
    }
  CowTraceEvent event = { .type = COW_EVENT_MARK };
  while (cowscope_ring_write_event (ring, &event))
    ;
  int64_t t0 = now_ns ();
  for (uint64_t i = 0; i < n; i++)
    {
      event.v[0] = i;
      cowscope_ring_write_event (ring, &event);
    }
  double ns = (double) (now_ns () - t0) / (double) n;
  cowscope_ring_free (ring);
  return ns;
}

typedef struct {
  CowscopeRing *ring;
  uint64_t n;
  uint64_t dropped;
} ProducerArgs;

/* Writes args->n events, counting drops. */
static void *
producer_main (void *data)
{
  ProducerArgs *args = data;
  CowTraceEvent event = { .type = COW_EVENT_MARK };
  for (uint64_t i = 0; i < args->n; i++)
    {
      event.v[0] = i;
      if (!cowscope_ring_write_event (args->ring, &event))
        args->dropped++;
    }
  return NULL;
}

/* Two threads, BLOCK mode: events/s from first write to last read. */
static double
bench_two_threads (uint64_t n, uint64_t *dropped)
{
  CowError error = { 0 };
  CowscopeRing *ring = cowscope_ring_new (CAPACITY, COWSCOPE_RING_BLOCK, &error);
  CowscopeRing *reader = ring ? cowscope_ring_map_fd (cowscope_ring_get_fd (ring),
                                                      &error)
                              : NULL;
  if (reader == NULL)
    {
      fprintf (stderr, "bench-ring: %s\n", error.message);
      failures++;
      cowscope_ring_free (ring);
      return 0;
    }
  ProducerArgs args = { ring, n, 0 };
  pthread_t thread;
  uint64_t next = 0, got = 0;
  int64_t t0 = now_ns ();
  pthread_create (&thread, NULL, producer_main, &args);
  while (got < n)
    {
      uint64_t k = drain (reader, &next);
      got += k;
      if (k == 0)
        {
          if (args.dropped != 0)
            {
              /* Lost events (should not happen): stop waiting for them. */
              pthread_join (thread, NULL);
              got += drain (reader, &next);
              break;
            }
          __asm__ __volatile__ ("" ::: "memory");
        }
    }
  int64_t t1 = now_ns ();
  if (got == n)
    pthread_join (thread, NULL);
  *dropped = args.dropped;
  if (args.dropped != 0)
    failures++;
  cowscope_ring_free (reader);
  cowscope_ring_free (ring);
  return (double) got * 1e9 / (double) (t1 - t0);
}

/* Prints the three tables; non-zero only on an internal failure. */
int
main (void)
{
  CowError error = { 0 };
  CowscopeRing *ring = cowscope_ring_new (CAPACITY, COWSCOPE_RING_DROP, &error);
  if (ring == NULL)
    {
      fprintf (stderr, "bench-ring: %s\n", error.message);
      return 1;
    }

  /* Warm-up: fault in both mappings of the data area. */
  bench_single (ring);
  bench_memcpy (1000000);

  double memcpy_ns[REPS], event_ns[REPS], generic_ns[REPS], drain_eps[REPS];
  for (int r = 0; r < REPS; r++)
    {
      SingleResult s = bench_single (ring);
      event_ns[r] = s.write_event_ns;
      generic_ns[r] = s.write_generic_ns;
      drain_eps[r] = s.drain_eps;
      memcpy_ns[r] = bench_memcpy (CAPACITY / EVENT_RECORD);
    }
  double drop_ns[REPS];
  for (int r = 0; r < REPS; r++)
    drop_ns[r] = bench_drop_path (1000000);

  double base = median (memcpy_ns, REPS);
  double ev = median (event_ns, REPS);
  double gen = median (generic_ns, REPS);
  double drop = median (drop_ns, REPS);
  uint64_t per_fill = CAPACITY / EVENT_RECORD;

  printf ("\n1. Producer, single thread, ns per 64-byte event (median of %d x %" PRIu64
          " writes into a %" PRIu64 " MiB ring)\n\n", REPS, per_fill, CAPACITY >> 20);
  printf ("   %-46s %8s %10s\n", "operation", "ns/event", "vs memcpy");
  printf ("   %-46s %8.2f %9.2fx\n", "memcpy 64 B into a local buffer (baseline)", base, 1.0);
  printf ("   %-46s %8.2f %9.2fx\n", "cowscope_ring_write_event", ev, ev / base);
  printf ("   %-46s %8.2f %9.2fx\n", "cowscope_ring_write (generic, 64 B)", gen, gen / base);
  printf ("   %-46s %8.2f %9.2fx\n", "write into a full ring (DROP: counted drop)", drop, drop / base);

  double dr = median (drain_eps, REPS);
  printf ("\n2. Consumer, single thread: peek + advance over a full ring\n\n");
  printf ("   %-46s %8.1f M events/s (%.2f ns/event)\n", "drain rate", dr / 1e6, 1e9 / dr);

  double two[3];
  uint64_t dropped = 0, n = 20 * 1000 * 1000;
  for (int r = 0; r < 3; r++)
    two[r] = bench_two_threads (n, &dropped);
  double tt = median (two, 3);
  printf ("\n3. Producer and consumer threads, BLOCK mode, %" PRIu64 " M events (median of 3)\n\n",
          n / 1000000);
  printf ("   %-46s %8.1f M events/s, %" PRIu64 " dropped\n", "end to end", tt / 1e6, dropped);
  printf ("\n");

  cowscope_ring_free (ring);
  if (failures != 0)
    fprintf (stderr, "bench-ring: %d internal failures\n", failures);
  return failures != 0;
}
