/* bench-engine.c — libcowtensor's quality bars, measured against
 * baselines taken in the same run:
 *
 *   1. a lazy clone (+ unref) versus the floor: one malloc + free of the
 *      engine's object size plus one atomic increment  — target ≤ 2× floor;
 *   2. materialization by copy (64 MiB, 1 GiB) versus memcpy into a fresh
 *      buffer allocated as the engine allocates (2 MiB aligned, advised for
 *      huge pages), with plain-malloc and pre-faulted destinations shown
 *      too — target ≥ 90 % of that memcpy;
 *   3. materialization by steal (the last sharer takes the bytes) — target
 *      < 200 ns.
 *
 * Medians of several repetitions after a warm-up, CLOCK_MONOTONIC,
 * engine and baseline repetitions interleaved so drift hits both.  No
 * trace sink is installed: every trace point is one branch.
 *
 * Misses are reported, not failed: the exit status is non-zero only when
 * the engine returns an error or does not do what is measured (a copy
 * that did not copy, a steal that copied).  COWTENSOR_BENCH_QUICK=1 skips
 * the 1 GiB size.
 */
#include "cowtensor.h"
/* Only for the sizes of the engine's objects, which the floor allocates. */
#include "cow-tensor-private.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#define MiB ((size_t) 1 << 20)
#define GiB ((size_t) 1 << 30)
#define HUGE_PAGE ((size_t) 2 << 20)

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

/* ------------------------------------------------------------------ */
/* 1. lazy clone versus the malloc floor                                */

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

/* Median ns/op of @n cases, their repetitions interleaved. */
static void
measure_interleaved (int n, const BatchFn *fns, void *const *contexts,
                     int64_t iters, int reps, double *medians)
{
  double samples[4][64];
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

static void
bench_lazy_clone (void)
{
  enum { REPS = 11 };
  const int64_t iters = 200000;
  const int64_t sizes[1] = { 1 << 18 }; /* 1 MiB of f32: size does not matter */
  CowError error;

  CowTensor *source = cow_tensor_zeros (1, sizes, COW_DTYPE_F32, &error);
  if (source == NULL)
    {
      fail ("cow_tensor_zeros", &error);
      return;
    }
  /* The first clone makes the context; measured clones only share it. */
  CowTensor *keep = cow_tensor_lazy_clone (source, &error);
  if (keep == NULL)
    {
      fail ("cow_tensor_lazy_clone", &error);
      cow_tensor_unref (source);
      return;
    }
  CowStorage *storage = cow_tensor_storage (source);

  FloorCase tensor_floor = { sizeof (CowTensorBlock) };
  FloorCase storage_floor = { sizeof (CowStorage) };
  const BatchFn fns[4] = { batch_floor, batch_tensor_lazy_clone,
                           batch_floor, batch_storage_lazy_clone };
  void *const contexts[4] = { &tensor_floor, source, &storage_floor, storage };
  double ns[4];
  measure_interleaved (4, fns, contexts, iters, REPS, ns);

  if (cow_storage_context_refcount (storage) != 2)
    {
      internal_error = true;
      fprintf (stderr, "bench-engine: after the lazy-clone loops the context counts %"
               PRId64 " storages, expected 2\n", cow_storage_context_refcount (storage));
    }
  cow_tensor_unref (keep);
  cow_tensor_unref (source);

  printf ("\n1. Lazy clone + unref, ns/op (median of %d × %" PRId64
          " ops, interleaved with the floor)\n", REPS, iters);
  printf ("   floor = malloc + free of the engine's object size + one atomic increment\n\n");
  printf ("   %-44s %8s %12s %8s %8s  %-13s %s\n", "operation", "ns/op", "floor", "floor B",
          "ratio", "target", "result");
  printf ("   %-44s %8.1f %12.1f %8zu %7.2fx  %-13s %s\n",
          "cow_tensor_lazy_clone + cow_tensor_unref", ns[1], ns[0], tensor_floor.object_size,
          ns[1] / ns[0], "<= 2x floor", verdict (ns[1] <= 2.0 * ns[0]));
  printf ("   %-44s %8.1f %12.1f %8zu %7.2fx  %-13s %s\n",
          "cow_storage_lazy_clone + cow_storage_unref", ns[3], ns[2], storage_floor.object_size,
          ns[3] / ns[2], "<= 2x floor", verdict (ns[3] <= 2.0 * ns[2]));
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

static bool
same_bytes_sampled (const unsigned char *a, const unsigned char *b, size_t nbytes)
{
  for (size_t i = 0; i < nbytes; i += 4093)
    if (a[i] != b[i])
      return false;
  return a[nbytes - 1] == b[nbytes - 1];
}

enum { COPY_ENGINE, COPY_FRESH_LIKE_ENGINE, COPY_FRESH_MALLOC, COPY_WARM, N_COPY_CASES };

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
    case COPY_FRESH_LIKE_ENGINE:
    case COPY_FRESH_MALLOC:
      start = now_ns ();
      fresh = which == COPY_FRESH_MALLOC ? malloc (nbytes) : alloc_like_engine (nbytes);
      if (fresh != NULL)
        memcpy (fresh, src, nbytes);
      *seconds = (double) (now_ns () - start) / 1e9;
      escape (fresh);
      free (fresh);
      if (fresh == NULL)
        {
          internal_error = true;
          fprintf (stderr, "bench-engine: cannot allocate %zu bytes for a baseline\n", nbytes);
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
static const int interleaved[] = { COPY_ENGINE, COPY_FRESH_LIKE_ENGINE, COPY_WARM };
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
  double gbps[N_COPY_CASES];
  bool measured;
} CopyResult;

static void
bench_copy_size (CopyResult *result)
{
  const size_t nbytes = result->nbytes;
  const int64_t numel = (int64_t) nbytes;
  double samples[N_COPY_CASES][16];
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
    result->gbps[c] = (double) nbytes / median (samples[c], result->reps) / 1e9;
  result->measured = true;

out:
  free (warm);
  cow_tensor_unref (source);
}

static void
bench_copy (bool quick)
{
  CopyResult results[2] = { { .nbytes = 64 * MiB, .reps = 12 },
                            { .nbytes = GiB, .reps = 6 } };
  const int n = quick ? 1 : 2;

  for (int i = 0; i < n; i++)
    bench_copy_size (&results[i]);

  printf ("\n2. Materialization by copy, GB/s (10^9 B/s; median of 12 runs at 64 MiB, 6 at\n"
          "   1 GiB; engine, A and C interleave in an order that rotates from run to run,\n"
          "   B runs afterwards on its own, as its 4 KiB pages would slow the next\n"
          "   huge-page allocation)\n");
  printf ("   engine: write one of two tensors sharing a context (allocate + copy)\n");
  printf ("   A: memcpy into a fresh buffer allocated as the engine does (aligned_alloc 2 MiB +\n"
          "      MADV_HUGEPAGE), allocation and page faults timed  <- the target's baseline\n");
  printf ("   B: memcpy into a fresh malloc() buffer, allocation and page faults timed\n");
  printf ("   C: memcpy into a warm, pre-faulted buffer (copy bandwidth alone)\n\n");
  printf ("   %-8s %8s %8s %8s %8s %8s %8s %8s  %-14s %s\n", "size", "engine", "A", "B", "C",
          "eng/A", "eng/B", "eng/C", "target", "result");
  for (int i = 0; i < 2; i++)
    {
      const CopyResult *r = &results[i];
      const char *label = r->nbytes == GiB ? "1 GiB" : "64 MiB";
      if (i >= n)
        {
          printf ("   %-8s skipped (COWTENSOR_BENCH_QUICK=1)\n", label);
          continue;
        }
      if (!r->measured)
        {
          printf ("   %-8s not measured (error above)\n", label);
          continue;
        }
      const double *g = r->gbps;
      double ratio = g[COPY_ENGINE] / g[COPY_FRESH_LIKE_ENGINE];
      printf ("   %-8s %8.2f %8.2f %8.2f %8.2f %7.0f%% %7.0f%% %7.0f%%  %-14s %s\n", label,
              g[COPY_ENGINE], g[COPY_FRESH_LIKE_ENGINE], g[COPY_FRESH_MALLOC], g[COPY_WARM],
              100.0 * ratio, 100.0 * g[COPY_ENGINE] / g[COPY_FRESH_MALLOC],
              100.0 * g[COPY_ENGINE] / g[COPY_WARM], ">= 90% of A", verdict (ratio >= 0.90));
    }
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

  printf ("\n3. Materialization by steal, ns/op (median of %d × %d ops)\n",
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
  if (uname (&u) == 0)
    printf ("machine: %s %s %s, %s, %ld CPUs online\n", u.sysname, u.release, u.machine,
            model, sysconf (_SC_NPROCESSORS_ONLN));
  printf ("transparent huge pages: %s\n", thp);
#ifdef __OPTIMIZE__
  printf ("build: optimized, compiler %s\n", __VERSION__);
#else
  printf ("build: NOT optimized (numbers are meaningless; use -Dbuildtype=release),"
          " compiler %s\n", __VERSION__);
#endif
}

int
main (void)
{
  const char *quick_env = getenv ("COWTENSOR_BENCH_QUICK");
  const bool quick = quick_env != NULL && strcmp (quick_env, "1") == 0;
  int64_t start = now_ns ();

  printf ("libcowtensor engine benchmark\n");
  print_machine ();
  if (cow_trace_get_sink () != NULL)
    printf ("trace sink: INSTALLED by someone else: numbers include event recording\n");
  else
    printf ("trace sink: none (each trace point costs one branch)\n");
  printf ("mode: %s\n", quick ? "quick (COWTENSOR_BENCH_QUICK=1: no 1 GiB copy)" : "full");
  fflush (stdout);

  bench_lazy_clone ();
  fflush (stdout);
  bench_copy (quick);
  fflush (stdout);
  bench_steals ();

  printf ("\ntotal time %.1f s%s\n", (double) (now_ns () - start) / 1e9,
          internal_error ? "; INTERNAL ERRORS above: results are not valid" : "");
  return internal_error ? 1 : 0;
}
