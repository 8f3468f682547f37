/* demo-concurrent.c — the concurrent scenario: threads write lazy clones
 * of one tensor at the same moment; while the source lives every writer
 * copies, and once it is dropped exactly one writer, the last sharer,
 * steals the bytes instead. */
#include "demo-scenarios.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CONCURRENT_BYTES ((int64_t) 16 << 20)

static float
pattern_at (int64_t i, int round)
{
  return (float) ((i * 7 + round) & 0xffff);
}

/* Opens when the main thread has started every worker (or gave up). */
typedef struct {
  pthread_mutex_t lock; /* protects state */
  pthread_cond_t cond;
  int state;            /* 0 waiting, 1 go, -1 abort */
} Gate;

typedef struct {
  Gate *gate;
  pthread_barrier_t *barrier;
  CowTensor *clone;
  int64_t numel;
  int round;
  float value;
  uintptr_t shared_address;
  /* Results, read after join. */
  bool ok;
  bool stole;
  int64_t write_ns;
  char message[COW_ERROR_MESSAGE_MAX + 160];
} Worker;

static void *
worker_main (void *data)
{
  Worker *w = data;
  CowError err;

  pthread_mutex_lock (&w->gate->lock);
  while (w->gate->state == 0)
    pthread_cond_wait (&w->gate->cond, &w->gate->lock);
  int state = w->gate->state;
  pthread_mutex_unlock (&w->gate->lock);
  if (state < 0)
    return NULL;

  /* Every worker writes its own lazy clone at the same moment. */
  pthread_barrier_wait (w->barrier);
  int64_t start = cow_trace_now_ns ();
  cow_error_clear (&err);
  float *bytes = cow_tensor_mutable_data (w->clone, &err);
  w->write_ns = cow_trace_now_ns () - start;
  if (bytes == NULL)
    {
      snprintf (w->message, sizeof w->message, "mutable_data of a lazy clone failed: %s: %s",
                cow_status_to_string (err.code), err.message);
      return NULL;
    }
  w->stole = (uintptr_t) bytes == w->shared_address;
  for (int64_t i = 0; i < w->numel; i++)
    if (bytes[i] != pattern_at (i, w->round))
      {
        snprintf (w->message, sizeof w->message,
                  "after materializing (%s), element %" PRId64 " is %g, expected %g",
                  w->stole ? "steal" : "copy", i, bytes[i], pattern_at (i, w->round));
        return NULL;
      }
  cow_error_clear (&err);
  if (cow_tensor_fill_ (w->clone, w->value, &err) != COW_OK)
    {
      snprintf (w->message, sizeof w->message, "fill_ of a materialized clone failed: %s: %s",
                cow_status_to_string (err.code), err.message);
      return NULL;
    }
  const float *after = cow_tensor_const_data (w->clone);
  for (int64_t i = 0; i < w->numel; i++)
    if (after[i] != w->value)
      {
        snprintf (w->message, sizeof w->message,
                  "after fill_(%g), element %" PRId64 " is %g", w->value, i, after[i]);
        return NULL;
      }
  w->ok = true;
  return NULL;
}

static void
gate_open (Gate *gate, int state)
{
  pthread_mutex_lock (&gate->lock);
  gate->state = state;
  pthread_cond_broadcast (&gate->cond);
  pthread_mutex_unlock (&gate->lock);
}


/* The scenario's writer threads and what its rounds add up to. */
typedef struct {
  int n;                /* threads */
  int64_t numel;        /* elements of the shared tensor */
  Worker *workers;
  pthread_t *threads;
  uint64_t copies, steals;
  int64_t slowest_ns;   /* the slowest materializing write */
} Crew;

/* The shared tensor of @round, filled with its pattern, and a lazy clone
 * of it for every worker.  Returns the source, or NULL after reporting
 * an error. */
static CowTensor *
concurrent_share (Run *run, Crew *crew, int round)
{
  CowError err;
  CowTensor *source = NULL;
  const int64_t numel = crew->numel;

  TRY_TENSOR (source, cow_tensor_empty (1, &numel, COW_DTYPE_F32, &err), "empty source");
  cow_tensor_set_name (source, "shared.weights");
  float *bytes;
  TRY_TENSOR (bytes, cow_tensor_mutable_data (source, &err), "mutable_data of the source");
  for (int64_t i = 0; i < numel; i++)
    bytes[i] = pattern_at (i, round);
  const uintptr_t shared_address = cow_tensor_data_address (source);

  for (int i = 0; i < crew->n; i++)
    {
      crew->workers[i] = (Worker) {
        .numel = numel, .round = round, .value = (float) (1000 + 10 * round + i),
        .shared_address = shared_address,
      };
      TRY_TENSOR (crew->workers[i].clone, cow_tensor_lazy_clone (source, &err),
                  "lazy_clone shared.weights → replica");
      cow_tensor_set_name (crew->workers[i].clone, "replica");
    }
  return source;

out:
  drop (&source);
  return NULL;
}

/* Starts every worker, lets them write at once, and joins them; the
 * round's wall time into *@round_ns.  False when a thread could not
 * start (no worker wrote then). */
static bool
concurrent_write (Run *run, Crew *crew, int64_t *round_ns)
{
  const int n = crew->n;
  Gate gate = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };
  pthread_barrier_t barrier;
  int rc = pthread_barrier_init (&barrier, NULL, (unsigned) n);
  if (rc != 0)
    {
      check_failed (run, "pthread_barrier_init: %s", strerror (rc));
      return false;
    }
  int started = 0;
  int64_t round_start = cow_trace_now_ns ();
  for (; started < n; started++)
    {
      crew->workers[started].gate = &gate;
      crew->workers[started].barrier = &barrier;
      rc = pthread_create (&crew->threads[started], NULL, worker_main, &crew->workers[started]);
      if (rc != 0)
        {
          check_failed (run, "pthread_create: %s", strerror (rc));
          break;
        }
    }
  gate_open (&gate, started == n ? 1 : -1);
  for (int i = 0; i < started; i++)
    pthread_join (crew->threads[i], NULL);
  *round_ns = cow_trace_now_ns () - round_start;
  pthread_barrier_destroy (&barrier);
  return started == n;
}

/* Each worker's outcome: copy or steal (by data address), its own bytes
 * in its clone; counted into *@copies and *@steals. */
static void
concurrent_tally (Run *run, Crew *crew, int round, int *copies, int *steals)
{
  for (int i = 0; i < crew->n; i++)
    {
      const Worker *worker = &crew->workers[i];
      if (!worker->ok)
        {
          check_failed (run, "round %d, thread %d: %s", round, i, worker->message);
          continue;
        }
      if (worker->stole)
        (*steals)++;
      else
        (*copies)++;
      if (worker->write_ns > crew->slowest_ns)
        crew->slowest_ns = worker->write_ns;
      /* Each thread's bytes are its own: nobody else's fill_ shows. */
      const float *mine = cow_tensor_const_data (worker->clone);
      if (mine[0] != worker->value || mine[crew->numel - 1] != worker->value)
        check_failed (run, "round %d: thread %d's clone holds %g, expected %g",
                      round, i, mine[0], worker->value);
    }
}

/* The source, when it was kept alive, must still hold its pattern. */
static void
concurrent_check_source (Run *run, const Crew *crew, int round, const CowTensor *source)
{
  const float *original = cow_tensor_const_data (source);
  for (int64_t i = 0; i < crew->numel; i++)
    if (original[i] != pattern_at (i, round))
      {
        check_failed (run, "round %d: the source changed at element %" PRId64
                      " (%g) after its lazy clones were written",
                      round, i, original[i]);
        break;
      }
}

/* One round, as range "round N": share, write, check, and its progress
 * line.  False when the scenario must stop. */
static bool
concurrent_round (Run *run, Crew *crew, int round)
{
  const bool drop_source = round % 2 == 1;
  char label[32], text[32];
  int64_t round_ns;

  snprintf (label, sizeof label, "round %d", round);
  range_push (run, label);

  CowTensor *source = concurrent_share (run, crew, round);
  if (source == NULL)
    return false;
  if (drop_source)
    drop (&source);
  bool ok = concurrent_write (run, crew, &round_ns);
  if (!ok)
    goto out;

  int copies = 0, steals = 0;
  concurrent_tally (run, crew, round, &copies, &steals);
  if (run->check_failed)
    {
      ok = false;
      goto out;
    }
  int expected_steals = drop_source ? 1 : 0;
  if (steals != expected_steals)
    check_failed (run, "round %d: %d of %d writers stole the shared bytes,"
                  " expected %d (source %s)", round, steals, crew->n, expected_steals,
                  drop_source ? "dropped first" : "alive");
  if (source != NULL)
    concurrent_check_source (run, crew, round, source);
  crew->copies += (uint64_t) copies;
  crew->steals += (uint64_t) steals;

  say (run, "  round %d: source %-14s %d cop%s + %d steal%s, %s copied, %.1f ms\n",
       round, drop_source ? "dropped first," : "alive,", copies,
       copies == 1 ? "y  " : "ies", steals, steals == 1 ? " " : "s",
       format_bytes ((uint64_t) copies * (uint64_t) CONCURRENT_BYTES, text, sizeof text),
       (double) round_ns / 1e6);

  for (int i = 0; i < crew->n; i++)
    drop (&crew->workers[i].clone);
  drop (&source);
  range_pop (run);
  ok = !run->check_failed;

out:
  drop (&source);
  return ok;
}

/* N threads each get a lazy clone of one 16 MiB tensor and write it at
 * once.  In even rounds the source stays alive: every writer copies.  In
 * odd rounds the source is dropped first: the writers race, and exactly
 * one of them (the last sharer) must steal the bytes instead of copying. */
void
scenario_concurrent (Run *run)
{
  const int rounds = run->options->steps > 0 ? run->options->steps : DEFAULT_CONCURRENT_ROUNDS;
  const int n = run->options->threads;
  char text[32];
  Crew crew = {
    .n = n,
    .numel = CONCURRENT_BYTES / (int64_t) sizeof (float),
    .workers = calloc ((size_t) n, sizeof *crew.workers),
    .threads = calloc ((size_t) n, sizeof *crew.threads),
  };
  if (crew.workers == NULL || crew.threads == NULL)
    {
      check_failed (run, "cannot allocate %d workers", n);
      goto out;
    }

  say (run, "concurrent: %d thread%s write%s lazy clones of one %s tensor, %d round%s\n",
       n, plural ((uint64_t) n), n == 1 ? "s" : "",
       format_bytes ((uint64_t) CONCURRENT_BYTES, text, sizeof text), rounds,
       plural ((uint64_t) rounds));

  for (int round = 0; round < rounds; round++)
    if (!concurrent_round (run, &crew, round))
      goto out;

  snprintf (run->headline, sizeof run->headline,
            "%d round%s × %d thread%s: %" PRIu64 " cop%s, %" PRIu64
            " steal%s (seen by data address), slowest write %.1f ms",
            rounds, plural ((uint64_t) rounds), n, plural ((uint64_t) n), crew.copies,
            crew.copies == 1 ? "y" : "ies", crew.steals, plural (crew.steals),
            (double) crew.slowest_ns / 1e6);

out:
  range_close_all (run);
  if (crew.workers != NULL)
    for (int i = 0; i < n; i++)
      drop (&crew.workers[i].clone);
  free (crew.workers);
  free (crew.threads);
}
