/* bench-engine.c — libcowtensor's quality bars, each measured beside a
 * baseline taken in the same run:
 *
 *   1. a lazy clone (+ unref) versus its floor: one malloc + free of the
 *      engine's object size plus one atomic increment — target ≤ 1.5×
 *      the floor (2× at the very most), in time and in instructions;
 *   2. materialization by copy (64 MiB, 1 GiB) versus the best of a
 *      single-threaded and a parallel memcpy into a fresh buffer allocated
 *      as the engine allocates (2 MiB aligned, advised for huge pages),
 *      page faults included; a warm, pre-faulted memcpy is the physical
 *      reference, a fresh plain-malloc destination is shown too;
 *   3. materialization by steal (the last sharer takes the bytes) — target
 *      < 200 ns;
 *   4. cow_mark() with a sink installed, versus the same sink called with
 *      a timestamped event (the trace point without the name lookup), on
 *      one thread and on two at once;
 *   5. instructions per operation under callgrind (valgrind), for 1 and 4
 *      and their floors: independent of the machine's load.
 *
 * The process keeps a second thread alive (parked) from the start: glibc
 * skips the atomic instructions of its locks in a single-threaded process,
 * so an engine measured without one would look better than it is in any
 * real program.  Times are medians of repetitions after a warm-up,
 * CLOCK_MONOTONIC, with the cases of one section interleaved (rotating
 * order for the copies) so that drift and other processes hit them alike.
 * The project's machine is shared with other builds: compare a figure with
 * its own baseline, and trust the instruction counts where times are noisy.
 *
 * Misses are reported, not failed: the exit status is non-zero only when
 * the engine returns an error or does not do what is measured (a copy
 * that did not copy, a steal that copied).  COWTENSOR_BENCH_QUICK=1 skips
 * the 1 GiB size.  COWTENSOR_BENCH_VALGRIND names the valgrind program
 * (default: "valgrind" from PATH); without it section 5 says why it is
 * skipped.  `bench-engine --instructions CASE ITERS` is the mode section 5
 * runs under callgrind.
 */
#include "cowtensor.h"
/* Only for the sizes of the engine's objects, which the floor allocates. */
#include "cow-tensor-private.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MiB ((size_t) 1 << 20)
#define GiB ((size_t) 1 << 30)
#define HUGE_PAGE ((size_t) 2 << 20)

extern char **environ;

static bool internal_error;

static void
fail (const char *what, const CowError *error)
{
  internal_error = true;
  fprintf (stderr, "bench-engine: %s: %s: %s\n", what,
           error ? cow_status_to_string (error->code) : "error",
           error ? error->message : "");
}

static int64_t
now_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Keeps the compiler from dropping an allocation it can see is unused. */
static inline void
escape (void *p)
{
  __asm__ volatile ("" : : "g" (p) : "memory");
}

static int
compare_doubles (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

static double
median (double *values, int n)
{
  qsort (values, (size_t) n, sizeof *values, compare_doubles);
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2.0;
}

static const char *
verdict (bool pass)
{
  return pass ? "PASS" : "MISS";
}

/* "PASS" within the target, "MISS" within the hard limit, else "FAIL". */
static const char *
verdict2 (double ratio, double target, double limit)
{
  return ratio <= target ? "PASS" : ratio <= limit ? "MISS (<= limit)" : "FAIL (> limit)";
}

/* ------------------------------------------------------------------ */
/* The parked second thread                                             */

static pthread_mutex_t park_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t park_cond = PTHREAD_COND_INITIALIZER;
static bool park_done;
static pthread_t parked;

static void *
parked_main (void *data)
{
  (void) data;
  pthread_mutex_lock (&park_lock);
  while (!park_done)
    pthread_cond_wait (&park_cond, &park_lock);
  pthread_mutex_unlock (&park_lock);
  return NULL;
}

static bool
start_parked_thread (void)
{
  return pthread_create (&parked, NULL, parked_main, NULL) == 0;
}

static void
stop_parked_thread (void)
{
  pthread_mutex_lock (&park_lock);
  park_done = true;
  pthread_cond_signal (&park_cond);
  pthread_mutex_unlock (&park_lock);
  pthread_join (parked, NULL);
}

/* ------------------------------------------------------------------ */
/* Batches: the loops that are timed, and counted under callgrind       */

/* A batch of @iters operations, the same loop shape for every case. */
typedef void (*BatchFn) (void *context, int64_t iters);

static _Atomic uint64_t floor_counter;

typedef struct {
  size_t object_size;
} FloorCase;

static void
batch_floor (void *context, int64_t iters)
{
  const size_t size = ((FloorCase *) context)->object_size;
  for (int64_t i = 0; i < iters; i++)
    {
      void *p = malloc (size);
      escape (p);
      /* The engine's one unavoidable atomic: the context refcount. */
      atomic_fetch_add_explicit (&floor_counter, 1, memory_order_relaxed);
      free (p);
    }
}

static void
batch_tensor_lazy_clone (void *context, int64_t iters)
{
  CowTensor *source = context;
  CowError error;
  for (int64_t i = 0; i < iters; i++)
    {
      CowTensor *clone = cow_tensor_lazy_clone (source, &error);
      if (clone == NULL)
        {
          fail ("cow_tensor_lazy_clone", &error);
          return;
        }
      cow_tensor_unref (clone);
    }
}

static void
batch_storage_lazy_clone (void *context, int64_t iters)
{
  CowStorage *source = context;
  CowError error;
  for (int64_t i = 0; i < iters; i++)
    {
      CowStorage *clone = cow_storage_lazy_clone (source, &error);
      if (clone == NULL)
        {
          fail ("cow_storage_lazy_clone", &error);
          return;
        }
      cow_storage_unref (clone);
    }
}

/* The sink of section 4: counts events and strings, per thread. */
static _Thread_local uint64_t sink_events;
static _Atomic uint64_t sink_strings;

static void
count_event (const CowTraceEvent *event, void *user_data)
{
  (void) user_data;
  escape ((void *) event);
  sink_events++;
}

static void
count_string (uint64_t id, const char *text, size_t length, void *user_data)
{
  (void) id, (void) text, (void) length, (void) user_data;
  atomic_fetch_add_explicit (&sink_strings, 1, memory_order_relaxed);
}

static const CowTraceSink counting_sink = {
  .event = count_event,
  .string = count_string,
};

static void
batch_mark (void *context, int64_t iters)
{
  (void) context;
  for (int64_t i = 0; i < iters; i++)
    cow_mark ("bench.step");
}

/* What a recorded trace point costs without the name: a timestamped
 * event handed to the same sink. */
static void
batch_mark_floor (void *context, int64_t iters)
{
  (void) context;
  for (int64_t i = 0; i < iters; i++)
    {
      CowTraceEvent event = { .type = COW_EVENT_MARK };
      event.time_ns = (uint64_t) now_ns ();
      event.range.string_id = 1;
      counting_sink.event (&event, NULL);
    }
}

/* Median ns/op of @n cases, their repetitions interleaved. */
static void
measure_interleaved (int n, const BatchFn *fns, void *const *contexts,
                     int64_t iters, int reps, double *medians)
{
  double samples[8][128];
  for (int c = 0; c < n; c++)
    fns[c] (contexts[c], iters); /* warm-up: caches, tcache, branch predictors */
  for (int r = 0; r < reps; r++)
    for (int c = 0; c < n; c++)
      {
        int64_t start = now_ns ();
        fns[c] (contexts[c], iters);
        samples[c][r] = (double) (now_ns () - start) / (double) iters;
      }
  for (int c = 0; c < n; c++)
    medians[c] = median (samples[c], reps);
}

/* ------------------------------------------------------------------ */
/* 1. lazy clone versus the malloc floor                                */

/* A source tensor with one lazy clone kept, so the measured clones only
 * share the existing context. */
typedef struct {
  CowTensor *source;
  CowTensor *keep;
} CloneSetup;

static bool
clone_setup (CloneSetup *setup)
{
  const int64_t sizes[1] = { 1 << 18 }; /* 1 MiB of f32: size does not matter */
  CowError error;
  setup->source = cow_tensor_zeros (1, sizes, COW_DTYPE_F32, &error);
  if (setup->source == NULL)
    {
      fail ("cow_tensor_zeros", &error);
      return false;
    }
  setup->keep = cow_tensor_lazy_clone (setup->source, &error);
  if (setup->keep == NULL)
    {
      fail ("cow_tensor_lazy_clone", &error);
      cow_tensor_unref (setup->source);
      return false;
    }
  return true;
}

static void
clone_teardown (CloneSetup *setup)
{
  CowStorage *storage = cow_tensor_storage (setup->source);
  if (cow_storage_context_refcount (storage) != 2)
    {
      internal_error = true;
      fprintf (stderr, "bench-engine: after the lazy-clone loops the context counts %"
               PRId64 " storages, expected 2\n", cow_storage_context_refcount (storage));
    }
  cow_tensor_unref (setup->keep);
  cow_tensor_unref (setup->source);
}

static FloorCase tensor_floor = { sizeof (CowTensorBlock) };
static FloorCase storage_floor = { sizeof (CowStorage) };

static void
bench_lazy_clone (void)
{
  /* Many short batches: on a loaded machine most of them run without
   * being preempted, and the median is one of those. */
  enum { REPS = 101 };
  const int64_t iters = 20000;
  CloneSetup setup;
  if (!clone_setup (&setup))
    return;

  const BatchFn fns[4] = { batch_floor, batch_tensor_lazy_clone,
                           batch_floor, batch_storage_lazy_clone };
  void *const contexts[4] = { &tensor_floor, setup.source, &storage_floor,
                              cow_tensor_storage (setup.source) };
  double ns[4];
  measure_interleaved (4, fns, contexts, iters, REPS, ns);
  clone_teardown (&setup);

  printf ("\n1. Lazy clone + unref, ns/op (median of %d x %" PRId64
          " ops, interleaved with the floor;\n   two threads in the process)\n", REPS, iters);
  printf ("   floor = malloc + free of the engine's object size + one atomic increment\n\n");
  printf ("   %-44s %8s %8s %8s %8s  %-18s %s\n", "operation", "ns/op", "floor", "floor B",
          "ratio", "target", "result");
  printf ("   %-44s %8.1f %8.1f %8zu %7.2fx  %-18s %s\n",
          "cow_tensor_lazy_clone + cow_tensor_unref", ns[1], ns[0], tensor_floor.object_size,
          ns[1] / ns[0], "<= 1.5x (2x max)", verdict2 (ns[1] / ns[0], 1.5, 2.0));
  printf ("   %-44s %8.1f %8.1f %8zu %7.2fx  %-18s %s\n",
          "cow_storage_lazy_clone + cow_storage_unref", ns[3], ns[2], storage_floor.object_size,
          ns[3] / ns[2], "<= 2x", verdict (ns[3] <= 2.0 * ns[2]));
}

/* ------------------------------------------------------------------ */
/* 2. materialization by copy versus memcpy                             */

/* Memory as the engine's CPU allocator hands it out for big blocks. */
static void *
alloc_like_engine (size_t nbytes)
{
  void *p = aligned_alloc (HUGE_PAGE, (nbytes + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1));
#ifdef MADV_HUGEPAGE
  if (p != NULL)
    madvise (p, nbytes, MADV_HUGEPAGE);
#endif
  return p;
}

/* The CPUs this process may run on. */
static int
usable_cpus (void)
{
  cpu_set_t set;
  if (sched_getaffinity (0, sizeof set, &set) == 0 && CPU_COUNT (&set) > 0)
    return CPU_COUNT (&set);
  long n = sysconf (_SC_NPROCESSORS_ONLN);
  return n > 0 ? (int) n : 1;
}

/* The parallel baseline: one thread a usable CPU (the caller one of
 * them), created for the copy, each copying one contiguous share that
 * starts on a huge-page boundary. */
typedef struct {
  unsigned char *dst;
  const unsigned char *src;
  size_t nbytes;
} CopyShare;

static void *
copy_share (void *data)
{
  CopyShare *share = data;
  if (share->nbytes > 0)
    memcpy (share->dst, share->src, share->nbytes);
  return NULL;
}

static void
parallel_memcpy (unsigned char *dst, const unsigned char *src, size_t nbytes, int threads)
{
  enum { MAX_THREADS = 64 };
  CopyShare shares[MAX_THREADS];
  pthread_t ids[MAX_THREADS];
  bool started[MAX_THREADS] = { false };
  if (threads > MAX_THREADS)
    threads = MAX_THREADS;
  size_t per = (nbytes / (size_t) threads + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
  for (int i = 0; i < threads; i++)
    {
      size_t start = per * (size_t) i;
      size_t len = start >= nbytes ? 0 : nbytes - start < per ? nbytes - start : per;
      shares[i] = (CopyShare) { dst + (start < nbytes ? start : 0),
                                src + (start < nbytes ? start : 0), len };
    }
  for (int i = 1; i < threads; i++)
    started[i] = pthread_create (&ids[i], NULL, copy_share, &shares[i]) == 0;
  copy_share (&shares[0]);
  for (int i = 1; i < threads; i++)
    {
      if (started[i])
        pthread_join (ids[i], NULL);
      else
        copy_share (&shares[i]);
    }
}

static bool
same_bytes_sampled (const unsigned char *a, const unsigned char *b, size_t nbytes)
{
  for (size_t i = 0; i < nbytes; i += 4093)
    if (a[i] != b[i])
      return false;
  return a[nbytes - 1] == b[nbytes - 1];
}

enum {
  COPY_ENGINE,
  COPY_FRESH_SINGLE,
  COPY_FRESH_PARALLEL,
  COPY_FRESH_PIECES,
  COPY_WARM,
  COPY_FRESH_MALLOC,
  N_COPY_CASES
};

/* memcpy of @nbytes in pieces of one huge page, one thread. */
static void
memcpy_in_pieces (unsigned char *dst, const unsigned char *src, size_t nbytes)
{
  for (size_t offset = 0; offset < nbytes; offset += HUGE_PAGE)
    memcpy (dst + offset, src + offset, nbytes - offset < HUGE_PAGE ? nbytes - offset : HUGE_PAGE);
}

/* One run of case @which; its seconds into *@seconds.  False on error. */
static bool
copy_case (int which, CowTensor *source, const unsigned char *src,
           unsigned char *warm, size_t nbytes, double *seconds)
{
  CowError error;
  int64_t start;
  unsigned char *fresh;

  switch (which)
    {
    case COPY_ENGINE:
      {
        /* Two tensors share a context; writing one copies. */
        CowTensor *clone = cow_tensor_lazy_clone (source, &error);
        if (clone == NULL)
          {
            fail ("cow_tensor_lazy_clone", &error);
            return false;
          }
        start = now_ns ();
        unsigned char *copy = cow_tensor_mutable_data (clone, &error);
        *seconds = (double) (now_ns () - start) / 1e9;
        if (copy == NULL)
          {
            fail ("cow_tensor_mutable_data (materialize by copy)", &error);
            cow_tensor_unref (clone);
            return false;
          }
        bool copied = copy != src && same_bytes_sampled (copy, src, nbytes);
        if (!copied)
          {
            internal_error = true;
            fprintf (stderr, "bench-engine: writing a lazy clone whose source lives did"
                     " not copy the bytes (%s)\n",
                     copy == src ? "it kept the shared bytes" : "contents differ");
          }
        cow_tensor_unref (clone);
        return copied;
      }
    case COPY_FRESH_SINGLE:
    case COPY_FRESH_PARALLEL:
    case COPY_FRESH_PIECES:
    case COPY_FRESH_MALLOC:
      start = now_ns ();
      fresh = which == COPY_FRESH_MALLOC ? malloc (nbytes) : alloc_like_engine (nbytes);
      if (fresh != NULL)
        {
          if (which == COPY_FRESH_PARALLEL)
            parallel_memcpy (fresh, src, nbytes, usable_cpus ());
          else if (which == COPY_FRESH_PIECES)
            memcpy_in_pieces (fresh, src, nbytes);
          else
            memcpy (fresh, src, nbytes);
        }
      *seconds = (double) (now_ns () - start) / 1e9;
      escape (fresh);
      bool ok = fresh != NULL && same_bytes_sampled (fresh, src, nbytes);
      free (fresh);
      if (!ok)
        {
          internal_error = true;
          fprintf (stderr, "bench-engine: a baseline copy of %zu bytes failed\n", nbytes);
          return false;
        }
      return true;
    case COPY_WARM:
    default:
      start = now_ns ();
      memcpy (warm, src, nbytes);
      *seconds = (double) (now_ns () - start) / 1e9;
      escape (warm);
      return true;
    }
}

/* The cases that interleave, rotating their order from one repetition to
 * the next.  COPY_FRESH_MALLOC runs in a pass of its own afterwards:
 * freeing a big buffer of 4 KiB pages leaves the kernel compacting memory
 * for the next huge-page allocation (THP defrag), which would slow down
 * whichever case ran after it. */
static const int interleaved[] = { COPY_ENGINE, COPY_FRESH_SINGLE, COPY_FRESH_PARALLEL,
                                   COPY_FRESH_PIECES, COPY_WARM };
#define N_INTERLEAVED ((int) (sizeof interleaved / sizeof interleaved[0]))

/* One repetition of the interleaved cases, starting with the @first-th. */
static bool
copy_round (int first, CowTensor *source, const unsigned char *src,
            unsigned char *warm, size_t nbytes, double *seconds)
{
  for (int k = 0; k < N_INTERLEAVED; k++)
    {
      int which = interleaved[(first + k) % N_INTERLEAVED];
      if (!copy_case (which, source, src, warm, nbytes, &seconds[which]))
        return false;
    }
  return true;
}

typedef struct {
  size_t nbytes;
  int reps;
  double gbps[N_COPY_CASES];      /* medians */
  double best_gbps[N_COPY_CASES]; /* the fastest run: the least disturbed */
  bool measured;
} CopyResult;

static void
bench_copy_size (CopyResult *result)
{
  const size_t nbytes = result->nbytes;
  const int64_t numel = (int64_t) nbytes;
  double samples[N_COPY_CASES][32];
  double seconds[N_COPY_CASES];
  CowError error;

  CowTensor *source = cow_tensor_empty (1, &numel, COW_DTYPE_U8, &error);
  if (source == NULL)
    {
      fail ("cow_tensor_empty", &error);
      return;
    }
  unsigned char *src = cow_tensor_mutable_data (source, &error);
  if (src == NULL)
    {
      fail ("cow_tensor_mutable_data", &error);
      cow_tensor_unref (source);
      return;
    }
  for (size_t i = 0; i < nbytes; i++) /* touches every page of the source */
    src[i] = (unsigned char) (i * 131 + (i >> 12));
  unsigned char *warm = alloc_like_engine (nbytes);
  if (warm == NULL)
    {
      internal_error = true;
      fprintf (stderr, "bench-engine: cannot allocate %zu bytes\n", nbytes);
      cow_tensor_unref (source);
      return;
    }
  memset (warm, 1, nbytes); /* pre-faulted destination */

  /* Warm-up round, not counted. */
  if (!copy_round (0, source, src, warm, nbytes, seconds))
    goto out;
  for (int r = 0; r < result->reps; r++)
    {
      if (!copy_round (r, source, src, warm, nbytes, seconds))
        goto out;
      for (int k = 0; k < N_INTERLEAVED; k++)
        samples[interleaved[k]][r] = seconds[interleaved[k]];
    }
  for (int r = -1; r < result->reps; r++) /* r = -1: warm-up */
    {
      if (!copy_case (COPY_FRESH_MALLOC, source, src, warm, nbytes,
                      &seconds[COPY_FRESH_MALLOC]))
        goto out;
      if (r >= 0)
        samples[COPY_FRESH_MALLOC][r] = seconds[COPY_FRESH_MALLOC];
    }
  for (int c = 0; c < N_COPY_CASES; c++)
    {
      result->gbps[c] = (double) nbytes / median (samples[c], result->reps) / 1e9;
      result->best_gbps[c] = (double) nbytes / samples[c][0] / 1e9; /* sorted */
    }
  result->measured = true;

out:
  free (warm);
  cow_tensor_unref (source);
}

static void
bench_copy (bool quick)
{
  CopyResult results[2] = { { .nbytes = 64 * MiB, .reps = 21 },
                            { .nbytes = GiB, .reps = 9 } };
  const int n = quick ? 1 : 2;

  for (int i = 0; i < n; i++)
    bench_copy_size (&results[i]);

  printf ("\n2. Materialization by copy, GB/s (10^9 B/s; median and fastest of %d runs at\n"
          "   64 MiB, %d at 1 GiB; engine, A, P and C interleave in an order that rotates\n"
          "   from run to run; B runs afterwards on its own, as its 4 KiB pages would slow\n"
          "   the next huge-page allocation)\n", results[0].reps, results[1].reps);
  printf ("   engine: write one of two tensors sharing a context (allocate + copy)\n");
  printf ("   A: memcpy into a fresh buffer allocated as the engine does (aligned_alloc 2 MiB +\n"
          "      MADV_HUGEPAGE), allocation and page faults timed\n");
  printf ("   P: the same with %d threads (created for the copy), one contiguous share each\n",
          usable_cpus ());
  printf ("   best = max(A, P), the target's baseline\n");
  printf ("   A2: A done 2 MiB at a time (the engine's chunks, without helpers)\n");
  printf ("   C: memcpy into a warm, pre-faulted buffer (the physical reference)\n");
  printf ("   B: memcpy into a fresh malloc() buffer, allocation and page faults timed\n\n");
  printf ("   %-14s %6s %6s %6s %6s %6s %6s %9s %6s %6s  %-14s %s\n", "size", "engine", "A",
          "P", "A2", "C", "B", "eng/best", "eng/A", "eng/C", "target", "result");
  for (int i = 0; i < 2; i++)
    {
      const CopyResult *r = &results[i];
      const char *label = r->nbytes == GiB ? "1 GiB" : "64 MiB";
      if (i >= n)
        {
          printf ("   %-7s skipped (COWTENSOR_BENCH_QUICK=1)\n", label);
          continue;
        }
      if (!r->measured)
        {
          printf ("   %-7s not measured (error above)\n", label);
          continue;
        }
      for (int row = 0; row < 2; row++)
        {
          const double *g = row == 0 ? r->gbps : r->best_gbps;
          double best = g[COPY_FRESH_SINGLE] > g[COPY_FRESH_PARALLEL] ? g[COPY_FRESH_SINGLE]
                                                                     : g[COPY_FRESH_PARALLEL];
          double ratio = g[COPY_ENGINE] / best;
          char name[32];
          snprintf (name, sizeof name, "%s %s", label, row == 0 ? "median" : "fastest");
          printf ("   %-14s %6.2f %6.2f %6.2f %6.2f %6.2f %6.2f %8.0f%% %5.0f%% %5.0f%%  %-14s %s\n",
                  name, g[COPY_ENGINE], g[COPY_FRESH_SINGLE], g[COPY_FRESH_PARALLEL],
                  g[COPY_FRESH_PIECES], g[COPY_WARM], g[COPY_FRESH_MALLOC], 100.0 * ratio,
                  100.0 * g[COPY_ENGINE] / g[COPY_FRESH_SINGLE],
                  100.0 * g[COPY_ENGINE] / g[COPY_WARM], row == 0 ? ">= best (-5%)" : "",
                  row == 0 ? verdict (ratio >= 0.95) : "(info)");
        }
    }
  double load[3];
  if (getloadavg (load, 3) == 3)
    printf ("   (load average after the copies: %.2f; the engine uses helper threads only\n"
            "   on cores that are free when it starts a copy)\n", load[0]);
}

/* ------------------------------------------------------------------ */
/* 3. materialization by steal                                          */

enum { STEAL_BATCH = 20000, STEAL_REPS = 11 };

/* Sources, clones and the shared addresses of one repetition. */
typedef struct {
  CowTensor *sources[STEAL_BATCH];
  CowTensor *clones[STEAL_BATCH];
  uintptr_t shared[STEAL_BATCH];
} StealBatch;

static void
steal_batch_release (StealBatch *b)
{
  for (int i = 0; i < STEAL_BATCH; i++)
    {
      cow_tensor_unref (b->sources[i]);
      cow_tensor_unref (b->clones[i]);
      b->sources[i] = b->clones[i] = NULL;
    }
}

static bool
steal_batch_sources (StealBatch *b, int64_t numel)
{
  CowError error;
  for (int i = 0; i < STEAL_BATCH; i++)
    {
      b->sources[i] = cow_tensor_empty (1, &numel, COW_DTYPE_F32, &error);
      if (b->sources[i] == NULL)
        {
          fail ("cow_tensor_empty", &error);
          return false;
        }
      b->shared[i] = cow_tensor_data_address (b->sources[i]);
    }
  return true;
}

/* Checks that each write kept the shared bytes: a steal, not a copy. */
static bool
steal_batch_check (const StealBatch *b, void *const *written)
{
  for (int i = 0; i < STEAL_BATCH; i++)
    if ((uintptr_t) written[i] != b->shared[i] || cow_tensor_is_cow (b->clones[i]))
      {
        internal_error = true;
        fprintf (stderr, "bench-engine: writing the last sharer of its bytes copied them"
                 " instead of stealing (clone %d)\n", i);
        return false;
      }
  return true;
}

/* Median ns per write of a lazy clone whose source was dropped (the
 * steal alone), and per lazy clone + drop of the source + write. */
static void
bench_steal (double *steal_ns, double *sequence_ns)
{
  const int64_t numel = 64; /* 256 B: a steal moves no bytes, size is irrelevant */
  double write_samples[STEAL_REPS], sequence_samples[STEAL_REPS];
  StealBatch *b = calloc (1, sizeof *b);
  void **written = calloc (STEAL_BATCH, sizeof *written);
  CowError error;
  *steal_ns = *sequence_ns = -1;
  if (b == NULL || written == NULL)
    {
      internal_error = true;
      fprintf (stderr, "bench-engine: out of memory\n");
      goto out;
    }

  for (int r = -1; r < STEAL_REPS; r++) /* r = -1: warm-up */
    {
      /* (a) the steal alone: clone and drop the source untimed. */
      if (!steal_batch_sources (b, numel))
        goto out;
      for (int i = 0; i < STEAL_BATCH; i++)
        {
          b->clones[i] = cow_tensor_lazy_clone (b->sources[i], &error);
          if (b->clones[i] == NULL)
            {
              fail ("cow_tensor_lazy_clone", &error);
              goto out;
            }
          cow_tensor_unref (b->sources[i]);
          b->sources[i] = NULL;
        }
      int64_t start = now_ns ();
      for (int i = 0; i < STEAL_BATCH; i++)
        {
          written[i] = cow_tensor_mutable_data (b->clones[i], &error);
          if (written[i] == NULL)
            {
              fail ("cow_tensor_mutable_data (materialize by steal)", &error);
              goto out;
            }
        }
      double ns = (double) (now_ns () - start) / STEAL_BATCH;
      if (!steal_batch_check (b, written))
        goto out;
      steal_batch_release (b);
      if (r >= 0)
        write_samples[r] = ns;

      /* (b) the whole sequence: lazy clone, drop the source, write. */
      if (!steal_batch_sources (b, numel))
        goto out;
      start = now_ns ();
      for (int i = 0; i < STEAL_BATCH; i++)
        {
          b->clones[i] = cow_tensor_lazy_clone (b->sources[i], &error);
          if (b->clones[i] == NULL)
            {
              fail ("cow_tensor_lazy_clone", &error);
              goto out;
            }
          cow_tensor_unref (b->sources[i]);
          b->sources[i] = NULL;
          written[i] = cow_tensor_mutable_data (b->clones[i], &error);
          if (written[i] == NULL)
            {
              fail ("cow_tensor_mutable_data (materialize by steal)", &error);
              goto out;
            }
        }
      ns = (double) (now_ns () - start) / STEAL_BATCH;
      if (!steal_batch_check (b, written))
        goto out;
      steal_batch_release (b);
      if (r >= 0)
        sequence_samples[r] = ns;
    }
  *steal_ns = median (write_samples, STEAL_REPS);
  *sequence_ns = median (sequence_samples, STEAL_REPS);

out:
  if (b != NULL)
    steal_batch_release (b);
  free (b);
  free (written);
}

/* One steal of a 64 MiB storage, timed alone: no bytes move, so it costs
 * what a small one does (plus the timer's own overhead). */
static double
bench_steal_large (void)
{
  enum { REPS = 9 };
  const int64_t numel = (int64_t) (64 * MiB / sizeof (float));
  double samples[REPS];
  CowError error;
  for (int r = 0; r < REPS; r++)
    {
      CowTensor *source = cow_tensor_empty (1, &numel, COW_DTYPE_F32, &error);
      if (source == NULL)
        {
          fail ("cow_tensor_empty", &error);
          return -1;
        }
      uintptr_t shared = cow_tensor_data_address (source);
      CowTensor *clone = cow_tensor_lazy_clone (source, &error);
      cow_tensor_unref (source);
      if (clone == NULL)
        {
          fail ("cow_tensor_lazy_clone", &error);
          return -1;
        }
      int64_t start = now_ns ();
      void *bytes = cow_tensor_mutable_data (clone, &error);
      samples[r] = (double) (now_ns () - start);
      if (bytes == NULL)
        fail ("cow_tensor_mutable_data (materialize by steal)", &error);
      else if ((uintptr_t) bytes != shared)
        {
          internal_error = true;
          fprintf (stderr, "bench-engine: a 64 MiB steal copied the bytes\n");
        }
      cow_tensor_unref (clone);
      if (bytes == NULL)
        return -1;
    }
  return median (samples, REPS);
}

static double
timer_overhead_ns (void)
{
  enum { N = 100001 };
  int64_t start = now_ns ();
  for (int i = 0; i < N - 1; i++)
    escape ((void *) (intptr_t) now_ns ());
  return (double) (now_ns () - start) / N;
}

static void
bench_steals (void)
{
  double steal_ns, sequence_ns;
  bench_steal (&steal_ns, &sequence_ns);
  double large_ns = bench_steal_large ();
  if (steal_ns < 0 || large_ns < 0)
    return;

  printf ("\n3. Materialization by steal, ns/op (median of %d x %d ops)\n",
          STEAL_REPS, STEAL_BATCH);
  printf ("   a lazy clone whose source was dropped is written: it takes the bytes over;\n"
          "   the write-only row runs over clones made beforehand (%d of them, so partly\n"
          "   cache-cold), the whole-sequence row touches each one while it is hot\n\n",
          STEAL_BATCH);
  printf ("   %-52s %8s  %-9s %s\n", "operation", "ns/op", "target", "result");
  printf ("   %-52s %8.1f  %-9s %s\n", "steal: write the last sharer (cow_tensor_mutable_data)",
          steal_ns, "< 200 ns", verdict (steal_ns < 200.0));
  printf ("   %-52s %8.1f  %-9s %s\n", "lazy clone + drop source + write (whole sequence)",
          sequence_ns, "-", "(info)");
  printf ("   %-52s %8.1f  %-9s %s\n", "steal of a 64 MiB storage, one op timed alone",
          large_ns, "-", "(info)");
  printf ("   (one clock_gettime costs %.1f ns here; the single-op row includes it)\n",
          timer_overhead_ns ());
}

/* ------------------------------------------------------------------ */
/* 4. cow_mark with a sink                                              */

typedef struct {
  BatchFn fn;
  int64_t iters;
  pthread_barrier_t *go;
  double ns;
} MarkWorker;

static void *
mark_worker (void *data)
{
  MarkWorker *w = data;
  pthread_barrier_wait (w->go);
  int64_t start = now_ns ();
  w->fn (NULL, w->iters);
  w->ns = (double) (now_ns () - start) / (double) w->iters;
  return NULL;
}

/* ns/op of @fn on two threads started together: the slower one. */
static double
run_pair (BatchFn fn, int64_t iters)
{
  pthread_barrier_t go;
  pthread_barrier_init (&go, NULL, 2);
  MarkWorker workers[2] = { { fn, iters, &go, 0 }, { fn, iters, &go, 0 } };
  pthread_t other;
  if (pthread_create (&other, NULL, mark_worker, &workers[1]) != 0)
    {
      pthread_barrier_destroy (&go);
      return -1;
    }
  mark_worker (&workers[0]);
  pthread_join (other, NULL);
  pthread_barrier_destroy (&go);
  return workers[0].ns > workers[1].ns ? workers[0].ns : workers[1].ns;
}

static void
bench_mark (void)
{
  enum { REPS = 51 };
  const int64_t iters = 20000;
  cow_trace_set_sink (&counting_sink);
  const BatchFn fns[2] = { batch_mark_floor, batch_mark };
  void *const contexts[2] = { NULL, NULL };
  double ns[2];
  measure_interleaved (2, fns, contexts, iters, REPS, ns);

  double pair_samples[2][REPS];
  for (int r = -1; r < REPS; r++)
    for (int c = 0; c < 2; c++)
      {
        double v = run_pair (fns[c], iters / 2);
        if (r >= 0)
          pair_samples[c][r] = v;
      }
  double pair[2] = { median (pair_samples[0], REPS), median (pair_samples[1], REPS) };
  cow_trace_set_sink (NULL);

  printf ("\n4. cow_mark with a sink installed, ns/op (median of %d, interleaved)\n", REPS);
  printf ("   floor = the same sink called with a timestamped event (no name lookup)\n\n");
  printf ("   %-44s %8s %8s %8s\n", "operation", "ns/op", "floor", "ratio");
  printf ("   %-44s %8.1f %8.1f %7.2fx\n", "cow_mark (\"bench.step\"), one thread", ns[1], ns[0],
          ns[1] / ns[0]);
  if (pair[0] > 0 && pair[1] > 0)
    printf ("   %-44s %8.1f %8.1f %7.2fx\n", "the same on two threads at once (slower one)",
            pair[1], pair[0], pair[1] / pair[0]);
  else
    printf ("   two threads: not measured (cannot start a thread)\n");
}

/* ------------------------------------------------------------------ */
/* 5. instructions per operation under callgrind                        */

typedef struct {
  const char *name;
  const char *label;
} InstructionCase;

static const InstructionCase instruction_cases[] = {
  { "floor-tensor", "floor (malloc+free of a tensor block + atomic inc)" },
  { "tensor-lazy-clone", "cow_tensor_lazy_clone + cow_tensor_unref" },
  { "floor-storage", "floor (malloc+free of a storage + atomic inc)" },
  { "storage-lazy-clone", "cow_storage_lazy_clone + cow_storage_unref" },
  { "mark-floor", "sink called with a timestamped event" },
  { "mark", "cow_mark with the sink installed" },
};
#define N_INSTRUCTION_CASES ((int) (sizeof instruction_cases / sizeof instruction_cases[0]))

/* The loop callgrind counts (--toggle-collect names it): everything it
 * calls, nothing else. */
__attribute__ ((noinline)) void bench_counted_batch (BatchFn fn, void *context, int64_t iters);

__attribute__ ((noinline)) void
bench_counted_batch (BatchFn fn, void *context, int64_t iters)
{
  fn (context, iters);
  __asm__ volatile ("" ::: "memory");
}

/* Runs case @name @iters times after as many warm-up iterations. */
static int
run_instruction_case (const char *name, int64_t iters)
{
  CloneSetup setup = { 0 };
  BatchFn fn = NULL;
  void *context = NULL;
  bool clones = strstr (name, "lazy-clone") != NULL;
  if (clones && !clone_setup (&setup))
    return 1;
  if (strcmp (name, "floor-tensor") == 0)
    fn = batch_floor, context = &tensor_floor;
  else if (strcmp (name, "floor-storage") == 0)
    fn = batch_floor, context = &storage_floor;
  else if (strcmp (name, "tensor-lazy-clone") == 0)
    fn = batch_tensor_lazy_clone, context = setup.source;
  else if (strcmp (name, "storage-lazy-clone") == 0)
    fn = batch_storage_lazy_clone, context = cow_tensor_storage (setup.source);
  else if (strcmp (name, "mark") == 0)
    fn = batch_mark;
  else if (strcmp (name, "mark-floor") == 0)
    fn = batch_mark_floor;
  if (fn == NULL)
    {
      fprintf (stderr, "bench-engine: unknown instruction case '%s'\n", name);
      return 2;
    }
  if (strncmp (name, "mark", 4) == 0)
    cow_trace_set_sink (&counting_sink);
  fn (context, iters); /* warm-up, not counted */
  bench_counted_batch (fn, context, iters);
  cow_trace_set_sink (NULL);
  if (clones)
    clone_teardown (&setup);
  return internal_error ? 1 : 0;
}

/* Instructions callgrind counted in its output file @path, or -1. */
static double
read_callgrind_total (const char *path)
{
  FILE *f = fopen (path, "r");
  if (f == NULL)
    return -1;
  char line[512];
  double total = -1;
  while (fgets (line, sizeof line, f) != NULL)
    if (strncmp (line, "totals:", 7) == 0 || (total < 0 && strncmp (line, "summary:", 8) == 0))
      total = strtod (strchr (line, ':') + 1, NULL);
  fclose (f);
  return total;
}

/* Runs this program's case @name under callgrind; instructions per op
 * into *@per_op.  NULL on success, else why not. */
static const char *
count_instructions (const char *valgrind, const char *name, int64_t iters,
                    double *per_op)
{
  static char why[256];
  char out_file[64], out_arg[96], iters_arg[32], self[4096];
  ssize_t len = readlink ("/proc/self/exe", self, sizeof self - 1);
  if (len <= 0)
    return "cannot find this program (/proc/self/exe)";
  self[len] = '\0';
  snprintf (out_file, sizeof out_file, "/tmp/bench-engine-cg.%ld.%s", (long) getpid (), name);
  snprintf (out_arg, sizeof out_arg, "--callgrind-out-file=%s", out_file);
  snprintf (iters_arg, sizeof iters_arg, "%" PRId64, iters);
  char *argv[] = { (char *) valgrind, "--tool=callgrind", "-q", "--collect-atstart=no",
                   "--toggle-collect=bench_counted_batch", out_arg, self,
                   "--instructions", (char *) name, iters_arg, NULL };
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init (&actions);
  posix_spawn_file_actions_addopen (&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  pid_t pid;
  int rc = posix_spawnp (&pid, valgrind, &actions, NULL, argv, environ);
  posix_spawn_file_actions_destroy (&actions);
  if (rc != 0)
    {
      snprintf (why, sizeof why, "cannot run %s: %s", valgrind, strerror (rc));
      return why;
    }
  int status;
  while (waitpid (pid, &status, 0) < 0 && errno == EINTR)
    ;
  double total = read_callgrind_total (out_file);
  unlink (out_file);
  if (!WIFEXITED (status) || WEXITSTATUS (status) != 0)
    {
      snprintf (why, sizeof why, "%s exited with status %d", valgrind,
                WIFEXITED (status) ? WEXITSTATUS (status) : -1);
      return why;
    }
  if (total <= 0)
    return "callgrind counted nothing";
  *per_op = total / (double) iters;
  return NULL;
}

static void
bench_instructions (void)
{
  const int64_t iters = 20000;
  const char *valgrind = getenv ("COWTENSOR_BENCH_VALGRIND");
  if (valgrind == NULL || valgrind[0] == '\0')
    valgrind = "valgrind";
  double per_op[N_INSTRUCTION_CASES];
  printf ("\n5. Instructions per operation under callgrind (%" PRId64 " ops after as many\n"
          "   warm-up ops, two threads in the process; independent of the machine's load)\n\n",
          iters);
  for (int c = 0; c < N_INSTRUCTION_CASES; c++)
    {
      const char *why = count_instructions (valgrind, instruction_cases[c].name, iters,
                                            &per_op[c]);
      if (why != NULL)
        {
          printf ("   skipped: %s\n", why);
          return;
        }
    }
  printf ("   %-52s %9s %9s %8s  %-18s %s\n", "operation", "instr/op", "floor", "ratio",
          "target", "result");
  for (int c = 1; c < N_INSTRUCTION_CASES; c += 2)
    {
      double ratio = per_op[c] / per_op[c - 1];
      const char *target = c == 1 ? "<= 1.5x (2x max)" : c == 3 ? "<= 2x" : "-";
      const char *result = c == 1   ? verdict2 (ratio, 1.5, 2.0)
                           : c == 3 ? verdict (ratio <= 2.0)
                                    : "(info)";
      printf ("   %-52s %9.1f %9.1f %7.2fx  %-18s %s\n", instruction_cases[c].label, per_op[c],
              per_op[c - 1], ratio, target, result);
    }
}

/* ------------------------------------------------------------------ */

static void
print_machine (void)
{
  struct utsname u;
  char model[256] = "unknown CPU";
  char thp[128] = "unknown";
  FILE *f = fopen ("/proc/cpuinfo", "r");
  if (f != NULL)
    {
      char line[512];
      while (fgets (line, sizeof line, f) != NULL)
        if (strncmp (line, "model name", 10) == 0)
          {
            const char *colon = strchr (line, ':');
            if (colon != NULL)
              {
                snprintf (model, sizeof model, "%s", colon + 2);
                model[strcspn (model, "\n")] = '\0';
              }
            break;
          }
      fclose (f);
    }
  f = fopen ("/sys/kernel/mm/transparent_hugepage/enabled", "r");
  if (f != NULL)
    {
      if (fgets (thp, sizeof thp, f) != NULL)
        thp[strcspn (thp, "\n")] = '\0';
      fclose (f);
    }
  double load[3] = { -1, -1, -1 };
  if (uname (&u) == 0)
    printf ("machine: %s %s %s, %s, %ld CPUs online, %d usable\n", u.sysname, u.release,
            u.machine, model, sysconf (_SC_NPROCESSORS_ONLN), usable_cpus ());
  if (getloadavg (load, 3) == 3)
    printf ("load average at start: %.2f %.2f %.2f (other processes share the machine)\n",
            load[0], load[1], load[2]);
  printf ("transparent huge pages: %s\n", thp);
#ifdef __OPTIMIZE__
  printf ("build: optimized, compiler %s\n", __VERSION__);
#else
  printf ("build: NOT optimized (numbers are meaningless; use -Dbuildtype=release),"
          " compiler %s\n", __VERSION__);
#endif
}

int
main (int argc, char **argv)
{
  if (!start_parked_thread ())
    {
      fprintf (stderr, "bench-engine: cannot start the second thread\n");
      return 1;
    }
  if (argc == 4 && strcmp (argv[1], "--instructions") == 0)
    {
      int rc = run_instruction_case (argv[2], strtoll (argv[3], NULL, 10));
      stop_parked_thread ();
      return rc;
    }
  if (argc != 1)
    {
      fprintf (stderr, "usage: bench-engine [--instructions CASE ITERS]\n");
      stop_parked_thread ();
      return 2;
    }

  const char *quick_env = getenv ("COWTENSOR_BENCH_QUICK");
  const bool quick = quick_env != NULL && strcmp (quick_env, "1") == 0;
  int64_t start = now_ns ();

  printf ("libcowtensor engine benchmark\n");
  print_machine ();
  printf ("threads: 2 (a parked second thread, so glibc takes its multi-threaded paths)\n");
  if (cow_trace_get_sink () != NULL)
    printf ("trace sink: INSTALLED by someone else: numbers include event recording\n");
  else
    printf ("trace sink: none, except in section 4 (each trace point costs one branch)\n");
  printf ("mode: %s\n", quick ? "quick (COWTENSOR_BENCH_QUICK=1: no 1 GiB copy)" : "full");
  fflush (stdout);

  bench_lazy_clone ();
  fflush (stdout);
  bench_copy (quick);
  fflush (stdout);
  bench_steals ();
  fflush (stdout);
  bench_mark ();
  fflush (stdout);
  bench_instructions ();

  stop_parked_thread ();
  printf ("\ntotal time %.1f s%s\n", (double) (now_ns () - start) / 1e9,
          internal_error ? "; INTERNAL ERRORS above: results are not valid" : "");
  return internal_error ? 1 : 0;
}
