/* test-concurrency.c — stress tests for the thread-safety promises of
 * README.md ("Thread safety"): lazy copies
 * handed to different threads that write, clone and free them at the
 * same time.  Run under ThreadSanitizer and AddressSanitizer too.
 *
 * Threads start each round together at a barrier.  Every test counts the
 * allocator's live blocks (TestAllocator), so a leaked or doubly freed
 * allocation fails here even without a sanitizer.
 *
 * COWTENSOR_STRESS_ROUNDS=N runs N rounds of each test instead of the
 * defaults, which keep each test to a few seconds under TSan on 2 cores. */
#include "test-support.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define N_THREADS 8
/* Elements per tensor: big enough that copies overlap in time. */
#define N_ELEMS 4096

static guint
stress_rounds (guint fallback)
{
  const char *env = g_getenv ("COWTENSOR_STRESS_ROUNDS");
  if (env != NULL)
    {
      guint64 n = g_ascii_strtoull (env, NULL, 10);
      if (n > 0 && n < G_MAXUINT)
        return (guint) n;
    }
  return fallback;
}

/* The value the pattern @seed gives element @k: exact in f32. */
static inline float
pattern (guint seed, gsize k)
{
  return (float) ((seed % 1000) * 8192 + k);
}

/* A tensor of N_ELEMS f32 from @alloc holding pattern (@seed). */
static CowTensor *
make_source (TestAllocator *alloc, guint seed)
{
  CowError error = { 0 };
  CowTensor *t = cow_tensor_empty_with_allocator (1, (int64_t[]) { N_ELEMS },
                                                  COW_DTYPE_F32,
                                                  test_allocator_get (alloc),
                                                  &error);
  test_assert_cow_ok (&error);
  float *data = cow_tensor_mutable_data (t, &error);
  test_assert_cow_ok (&error);
  for (gsize k = 0; k < N_ELEMS; k++)
    data[k] = pattern (seed, k);
  return t;
}

static CowTensor *
lazy_clone (CowTensor *tensor)
{
  CowError error = { 0 };
  CowTensor *clone = cow_tensor_lazy_clone (tensor, &error);
  test_assert_cow_ok (&error);
  g_assert_nonnull (clone);
  return clone;
}

/* Mismatches between @t's elements and pattern (@seed), read without
 * materializing.  Safe from worker threads (no assertions). */
static guint
count_mismatches (const CowTensor *t, guint seed)
{
  const float *data = cow_tensor_const_data (t);
  guint bad = 0;
  for (gsize k = 0; k < N_ELEMS; k++)
    bad += data[k] != pattern (seed, k);
  return bad;
}

/* The same through cow_tensor_read_elements(). */
static guint
count_mismatches_read (const CowTensor *t, guint seed)
{
  float *out = malloc (N_ELEMS * sizeof (float));
  guint bad = 0;
  if (cow_tensor_read_elements (t, out, N_ELEMS * sizeof (float), NULL) != COW_OK)
    bad = N_ELEMS;
  else
    for (gsize k = 0; k < N_ELEMS; k++)
      bad += out[k] != pattern (seed, k);
  free (out);
  return bad;
}

/* Writes pattern (@seed) into @t (materializing it); the number of
 * failures (N_ELEMS when mutable_data failed). */
static guint
write_pattern (CowTensor *t, guint seed)
{
  float *data = cow_tensor_mutable_data (t, NULL);
  if (data == NULL)
    return N_ELEMS;
  for (gsize k = 0; k < N_ELEMS; k++)
    data[k] = pattern (seed, k);
  return 0;
}

/* Materializes @t, checks that the bytes it got still hold pattern
 * (@old) (a copy made while another sharer stole and wrote would not),
 * then writes pattern (@seed).  The number of failures. */
static guint
materialize_and_write (CowTensor *t, guint old, guint seed)
{
  float *data = cow_tensor_mutable_data (t, NULL);
  if (data == NULL)
    return N_ELEMS;
  guint bad = 0;
  for (gsize k = 0; k < N_ELEMS; k++)
    bad += data[k] != pattern (old, k);
  for (gsize k = 0; k < N_ELEMS; k++)
    data[k] = pattern (seed, k);
  return bad;
}

/* ------------------------------------------------------------------ */
/* 1. Every sharer materializes at once                                */
/* ------------------------------------------------------------------ */

typedef struct {
  pthread_barrier_t start, done;
  guint rounds;
  guint seed;                     /* set by main before each round */
  CowTensor *slots[N_THREADS];    /* one sharer per thread */
  uintptr_t addresses[N_THREADS]; /* where each ended up */
  guint bad_before[N_THREADS];    /* original data not seen */
  guint bad_after[N_THREADS];     /* own data not kept */
} AllWrite;

typedef struct {
  AllWrite *shared;
  guint index;
} Worker;

static gpointer
all_write_worker (gpointer data)
{
  Worker *w = data;
  AllWrite *s = w->shared;
  for (guint r = 0; r < s->rounds; r++)
    {
      pthread_barrier_wait (&s->start);
      CowTensor *t = s->slots[w->index];
      guint own = s->seed + 1 + w->index;
      s->bad_before[w->index] += count_mismatches (t, s->seed);
      s->bad_after[w->index] += materialize_and_write (t, s->seed, own);
      s->bad_after[w->index] += count_mismatches (t, own);
      s->addresses[w->index] = cow_tensor_data_address (t);
      pthread_barrier_wait (&s->done);
    }
  return NULL;
}

/* N_THREADS sharers of one allocation (the source and its lazy clones)
 * are written at the same moment: each sees the original data first and
 * keeps its own writes after; exactly one of them steals the original
 * bytes, the rest copy; every block is freed. */
static void
run_all_write (gboolean traced, guint rounds)
{
  AllWrite s = { .rounds = rounds };
  Worker workers[N_THREADS];
  GThread *threads[N_THREADS];
  TestAllocator *alloc = test_allocator_new ();
  TestRecorder *rec = test_recorder_new ();
  pthread_barrier_init (&s.start, NULL, N_THREADS + 1);
  pthread_barrier_init (&s.done, NULL, N_THREADS + 1);
  for (guint i = 0; i < N_THREADS; i++)
    {
      workers[i] = (Worker) { &s, i };
      threads[i] = g_thread_new ("all-write", all_write_worker, &workers[i]);
    }

  for (guint r = 0; r < rounds; r++)
    {
      s.seed = r * 16;
      CowTensor *source = make_source (alloc, s.seed);
      uintptr_t original = cow_tensor_data_address (source);
      s.slots[0] = source;
      for (guint i = 1; i < N_THREADS; i++)
        s.slots[i] = lazy_clone (i % 2 ? source : s.slots[i - 1]);
      uint64_t ctx = cow_storage_context_id (cow_tensor_storage (source));
      g_assert_cmpint (cow_storage_context_refcount (cow_tensor_storage (source)), ==, N_THREADS);
      g_assert_cmpint (test_allocator_n_live (alloc), ==, 1);
      if (traced)
        {
          test_recorder_clear (rec);
          test_recorder_start (rec);
        }

      pthread_barrier_wait (&s.start);
      pthread_barrier_wait (&s.done);
      test_recorder_stop (rec);

      guint stolen = 0;
      for (guint i = 0; i < N_THREADS; i++)
        {
          g_assert_cmpuint (s.bad_before[i], ==, 0);
          g_assert_cmpuint (s.bad_after[i], ==, 0);
          g_assert_false (cow_tensor_is_cow (s.slots[i]));
          stolen += s.addresses[i] == original;
          for (guint j = 0; j < i; j++)
            g_assert_cmpuint (s.addresses[i], !=, s.addresses[j]);
        }
      g_assert_cmpuint (stolen, ==, 1);
      /* One block per sharer: the stealer's original and N-1 copies
       * (discarded copies were freed). */
      g_assert_cmpint (test_allocator_n_live (alloc), ==, N_THREADS);
      if (traced)
        {
          g_assert_cmpuint (test_recorder_count_materialize_in (rec, COW_MATERIALIZE_STEAL, ctx), ==, 1);
          g_assert_cmpuint (test_recorder_count_materialize_in (rec, COW_MATERIALIZE_COPY, ctx), ==,
                            N_THREADS - 1);
          g_assert_cmpuint (test_recorder_count_materialize (rec, COW_MATERIALIZE_FAILED), ==, 0);
          g_assert_cmpuint (test_recorder_count (rec, COW_EVENT_MATERIALIZE_BEGIN), ==, N_THREADS);
          g_assert_cmpuint (test_recorder_count_id (rec, COW_EVENT_CONTEXT_FREE, ctx), ==, 1);
        }
      for (guint i = 0; i < N_THREADS; i++)
        {
          /* Each thread's own data is still there, read from here. */
          g_assert_cmpuint (count_mismatches_read (s.slots[i], s.seed + 1 + i), ==, 0);
          cow_tensor_unref (s.slots[i]);
        }
      g_assert_cmpint (test_allocator_n_live (alloc), ==, 0);
    }

  for (guint i = 0; i < N_THREADS; i++)
    g_thread_join (threads[i]);
  pthread_barrier_destroy (&s.start);
  pthread_barrier_destroy (&s.done);
  test_recorder_free (rec);
  test_allocator_free (alloc);
}

static void
test_all_write (void)
{
  run_all_write (FALSE, stress_rounds (800));
}

static void
test_all_write_traced (void)
{
  run_all_write (TRUE, stress_rounds (400));
}

/* ------------------------------------------------------------------ */
/* 2. Lazy clones racing with sibling materializations                 */
/* ------------------------------------------------------------------ */

#define N_WRITERS 4
#define N_CLONERS 4
#define CLONES_PER_CLONER 16

typedef struct {
  pthread_barrier_t start, done;
  guint rounds;
  guint seed;
  CowTensor *source;                 /* read (cloned) by the cloners */
  CowTensor *siblings[N_WRITERS];    /* written by the writers */
  CowTensor *clones[N_CLONERS][CLONES_PER_CLONER];
  guint bad[N_WRITERS + N_CLONERS];
} CloneWrite;

typedef struct {
  CloneWrite *shared;
  guint index;
} CloneWorker;

static gpointer
writer_worker (gpointer data)
{
  CloneWorker *w = data;
  CloneWrite *s = w->shared;
  for (guint r = 0; r < s->rounds; r++)
    {
      pthread_barrier_wait (&s->start);
      CowTensor *t = s->siblings[w->index];
      guint own = s->seed + 1 + w->index;
      s->bad[w->index] += count_mismatches (t, s->seed);
      s->bad[w->index] += materialize_and_write (t, s->seed, own);
      s->bad[w->index] += count_mismatches (t, own);
      pthread_barrier_wait (&s->done);
    }
  return NULL;
}

static gpointer
cloner_worker (gpointer data)
{
  CloneWorker *w = data;
  CloneWrite *s = w->shared;
  guint slot = N_WRITERS + w->index;
  for (guint r = 0; r < s->rounds; r++)
    {
      pthread_barrier_wait (&s->start);
      CowTensor **mine = s->clones[w->index];
      for (guint k = 0; k < CLONES_PER_CLONER; k++)
        {
          /* Clone the shared source, or this thread's previous clone. */
          CowTensor *from = (k % 2 == 1) ? mine[k - 1] : s->source;
          mine[k] = cow_tensor_lazy_clone (from, NULL);
          if (mine[k] == NULL)
            {
              s->bad[slot] += N_ELEMS;
              mine[k] = cow_tensor_ref (s->source);
              continue;
            }
          s->bad[slot] += count_mismatches (mine[k], s->seed);
        }
      pthread_barrier_wait (&s->done);
    }
  return NULL;
}

/* Threads lazily clone a tensor while others write lazy clones sharing
 * its context: the writers get their own data, every new clone sees the
 * original, and the context counts exactly the storages left. */
static void
test_clone_while_siblings_write (void)
{
  CloneWrite s = { .rounds = stress_rounds (500) };
  CloneWorker workers[N_WRITERS + N_CLONERS];
  GThread *threads[N_WRITERS + N_CLONERS];
  TestAllocator *alloc = test_allocator_new ();
  pthread_barrier_init (&s.start, NULL, N_WRITERS + N_CLONERS + 1);
  pthread_barrier_init (&s.done, NULL, N_WRITERS + N_CLONERS + 1);
  for (guint i = 0; i < N_WRITERS; i++)
    {
      workers[i] = (CloneWorker) { &s, i };
      threads[i] = g_thread_new ("writer", writer_worker, &workers[i]);
    }
  for (guint i = 0; i < N_CLONERS; i++)
    {
      workers[N_WRITERS + i] = (CloneWorker) { &s, i };
      threads[N_WRITERS + i] = g_thread_new ("cloner", cloner_worker,
                                             &workers[N_WRITERS + i]);
    }

  for (guint r = 0; r < s.rounds; r++)
    {
      s.seed = r * 16;
      s.source = make_source (alloc, s.seed);
      uintptr_t original = cow_tensor_data_address (s.source);
      for (guint i = 0; i < N_WRITERS; i++)
        s.siblings[i] = lazy_clone (s.source);
      CowStorage *storage = cow_tensor_storage (s.source);
      uint64_t ctx = cow_storage_context_id (storage);

      pthread_barrier_wait (&s.start);
      pthread_barrier_wait (&s.done);

      for (guint i = 0; i < N_WRITERS + N_CLONERS; i++)
        g_assert_cmpuint (s.bad[i], ==, 0);
      for (guint i = 0; i < N_WRITERS; i++)
        {
          g_assert_false (cow_tensor_is_cow (s.siblings[i]));
          g_assert_cmpuint (cow_tensor_data_address (s.siblings[i]), !=, original);
        }
      g_assert_cmpint (cow_storage_context_refcount (storage), ==,
                       1 + N_CLONERS * CLONES_PER_CLONER);
      for (guint c = 0; c < N_CLONERS; c++)
        for (guint k = 0; k < CLONES_PER_CLONER; k++)
          {
            CowTensor *t = s.clones[c][k];
            g_assert_cmpuint (cow_storage_context_id (cow_tensor_storage (t)), ==, ctx);
            g_assert_cmpuint (cow_tensor_data_address (t), ==, original);
          }
      /* The original plus one copy per writer. */
      g_assert_cmpint (test_allocator_n_live (alloc), ==, 1 + N_WRITERS);

      for (guint c = 0; c < N_CLONERS; c++)
        for (guint k = 0; k < CLONES_PER_CLONER; k++)
          cow_tensor_unref (s.clones[c][k]);
      g_assert_cmpint (cow_storage_context_refcount (storage), ==, 1);
      /* The source is the last sharer: it steals. */
      g_assert_cmpuint (write_pattern (s.source, 7), ==, 0);
      g_assert_cmpuint (cow_tensor_data_address (s.source), ==, original);
      g_assert_false (cow_tensor_is_cow (s.source));
      g_assert_cmpint (test_allocator_n_live (alloc), ==, 1 + N_WRITERS);
      for (guint i = 0; i < N_WRITERS; i++)
        {
          g_assert_cmpuint (count_mismatches_read (s.siblings[i], s.seed + 1 + i), ==, 0);
          cow_tensor_unref (s.siblings[i]);
        }
      cow_tensor_unref (s.source);
      g_assert_cmpint (test_allocator_n_live (alloc), ==, 0);
    }

  for (guint i = 0; i < N_WRITERS + N_CLONERS; i++)
    g_thread_join (threads[i]);
  pthread_barrier_destroy (&s.start);
  pthread_barrier_destroy (&s.done);
  test_allocator_free (alloc);
}

/* ------------------------------------------------------------------ */
/* 3. Concurrent first lazy clones of a plain storage                  */
/* ------------------------------------------------------------------ */

typedef struct {
  pthread_barrier_t start, done;
  guint rounds;
  CowTensor *source;
  CowTensor *results[N_THREADS];
} FirstClone;

typedef struct {
  FirstClone *shared;
  guint index;
} FirstWorker;

static gpointer
first_clone_worker (gpointer data)
{
  FirstWorker *w = data;
  FirstClone *s = w->shared;
  for (guint r = 0; r < s->rounds; r++)
    {
      pthread_barrier_wait (&s->start);
      s->results[w->index] = cow_tensor_lazy_clone (s->source, NULL);
      pthread_barrier_wait (&s->done);
    }
  return NULL;
}

/* Several threads lazily clone one storage that is not copy-on-write yet:
 * they must agree on one context, with every clone counted. */
static void
test_concurrent_first_clone (void)
{
  FirstClone s = { .rounds = stress_rounds (3000) };
  FirstWorker workers[N_THREADS];
  GThread *threads[N_THREADS];
  TestAllocator *alloc = test_allocator_new ();
  TestRecorder *rec = test_recorder_new ();
  pthread_barrier_init (&s.start, NULL, N_THREADS + 1);
  pthread_barrier_init (&s.done, NULL, N_THREADS + 1);
  for (guint i = 0; i < N_THREADS; i++)
    {
      workers[i] = (FirstWorker) { &s, i };
      threads[i] = g_thread_new ("first-clone", first_clone_worker, &workers[i]);
    }

  for (guint r = 0; r < s.rounds; r++)
    {
      s.source = make_source (alloc, r);
      CowStorage *storage = cow_tensor_storage (s.source);
      uintptr_t original = cow_tensor_data_address (s.source);
      g_assert_false (cow_storage_is_cow (storage));
      gint allocs = test_allocator_n_allocs (alloc);
      gboolean traced = r % 4 == 0;
      if (traced)
        {
          test_recorder_clear (rec);
          test_recorder_start (rec);
        }

      pthread_barrier_wait (&s.start);
      pthread_barrier_wait (&s.done);
      test_recorder_stop (rec);

      uint64_t ctx = cow_storage_context_id (storage);
      g_assert_cmpuint (ctx, !=, 0);
      g_assert_cmpint (cow_storage_context_refcount (storage), ==, N_THREADS + 1);
      for (guint i = 0; i < N_THREADS; i++)
        {
          CowTensor *t = s.results[i];
          g_assert_nonnull (t);
          g_assert_cmpuint (cow_storage_context_id (cow_tensor_storage (t)), ==, ctx);
          g_assert_cmpuint (cow_tensor_data_address (t), ==, original);
          g_assert_false (cow_tensor_is_alias_of (t, s.source));
        }
      /* No copies. */
      g_assert_cmpint (test_allocator_n_allocs (alloc), ==, allocs);
      if (traced)
        {
          g_assert_cmpuint (test_recorder_count (rec, COW_EVENT_CONTEXT_NEW), ==, 1);
          g_assert_cmpuint (test_recorder_count (rec, COW_EVENT_CONTEXT_REF), ==, N_THREADS);
          g_assert_cmpuint (test_recorder_count (rec, COW_EVENT_LAZY_CLONE), ==, N_THREADS);
        }

      /* Every sharer writes, one after another: N copies, one steal. */
      for (guint i = 0; i < N_THREADS; i++)
        {
          g_assert_cmpuint (write_pattern (s.results[i], i + 1), ==, 0);
          g_assert_cmpint (cow_storage_context_refcount (storage), ==, N_THREADS - i);
        }
      g_assert_cmpuint (count_mismatches (s.source, r), ==, 0);
      g_assert_cmpuint (write_pattern (s.source, 0), ==, 0);
      g_assert_cmpuint (cow_tensor_data_address (s.source), ==, original);
      for (guint i = 0; i < N_THREADS; i++)
        cow_tensor_unref (s.results[i]);
      cow_tensor_unref (s.source);
      g_assert_cmpint (test_allocator_n_live (alloc), ==, 0);
    }

  for (guint i = 0; i < N_THREADS; i++)
    g_thread_join (threads[i]);
  pthread_barrier_destroy (&s.start);
  pthread_barrier_destroy (&s.done);
  test_recorder_free (rec);
  test_allocator_free (alloc);
}

/* ------------------------------------------------------------------ */
/* 4. Sharers freed, or freed and written, at the same time            */
/* ------------------------------------------------------------------ */

typedef struct {
  pthread_barrier_t start, done;
  guint rounds;
  guint seed;
  guint n_writers; /* threads below this index write; the rest unref */
  CowTensor *slots[N_THREADS];
  uintptr_t addresses[N_THREADS];
  guint bad[N_THREADS];
} FreeRace;

typedef struct {
  FreeRace *shared;
  guint index;
} FreeWorker;

static gpointer
free_race_worker (gpointer data)
{
  FreeWorker *w = data;
  FreeRace *s = w->shared;
  for (guint r = 0; r < s->rounds; r++)
    {
      pthread_barrier_wait (&s->start);
      CowTensor *t = s->slots[w->index];
      if (w->index < s->n_writers)
        {
          guint own = s->seed + 1 + w->index;
          s->bad[w->index] += count_mismatches (t, s->seed);
          s->bad[w->index] += materialize_and_write (t, s->seed, own);
          s->bad[w->index] += count_mismatches (t, own);
          s->addresses[w->index] = cow_tensor_data_address (t);
        }
      else
        {
          s->bad[w->index] += count_mismatches (t, s->seed);
          cow_tensor_unref (t);
          s->slots[w->index] = NULL;
        }
      pthread_barrier_wait (&s->done);
    }
  return NULL;
}

/* @n_writers sharers write while the others drop their references, all
 * at once.  Whoever is last keeps (steal) or frees the original bytes,
 * exactly once. */
static void
run_free_race (guint n_writers, guint rounds)
{
  FreeRace s = { .rounds = rounds, .n_writers = n_writers };
  FreeWorker workers[N_THREADS];
  GThread *threads[N_THREADS];
  TestAllocator *alloc = test_allocator_new ();
  TestRecorder *rec = test_recorder_new ();
  pthread_barrier_init (&s.start, NULL, N_THREADS + 1);
  pthread_barrier_init (&s.done, NULL, N_THREADS + 1);
  for (guint i = 0; i < N_THREADS; i++)
    {
      workers[i] = (FreeWorker) { &s, i };
      threads[i] = g_thread_new ("free-race", free_race_worker, &workers[i]);
    }

  for (guint r = 0; r < rounds; r++)
    {
      s.seed = r * 16;
      CowTensor *source = make_source (alloc, s.seed);
      uintptr_t original = cow_tensor_data_address (source);
      uint64_t original_allocation = cow_storage_allocation_id (cow_tensor_storage (source));
      /* The source goes to the last thread, so writers hold clones. */
      s.slots[N_THREADS - 1] = source;
      for (guint i = 0; i < N_THREADS - 1; i++)
        s.slots[i] = lazy_clone (source);
      uint64_t ctx = cow_storage_context_id (cow_tensor_storage (source));
      gboolean traced = r % 2 == 0;
      if (traced)
        {
          test_recorder_clear (rec);
          test_recorder_start (rec);
        }

      pthread_barrier_wait (&s.start);
      pthread_barrier_wait (&s.done);
      test_recorder_stop (rec);

      guint stolen = 0;
      for (guint i = 0; i < N_THREADS; i++)
        g_assert_cmpuint (s.bad[i], ==, 0);
      for (guint i = 0; i < n_writers; i++)
        {
          g_assert_false (cow_tensor_is_cow (s.slots[i]));
          stolen += s.addresses[i] == original;
        }
      g_assert_cmpuint (stolen, <=, 1);
      /* Each writer owns one block; every other block is gone. */
      g_assert_cmpint (test_allocator_n_live (alloc), ==, (gint) n_writers);
      if (traced)
        {
          guint steals = test_recorder_count_materialize_in (rec, COW_MATERIALIZE_STEAL, ctx);
          guint copies = test_recorder_count_materialize_in (rec, COW_MATERIALIZE_COPY, ctx);
          guint freed = test_recorder_count_id (rec, COW_EVENT_ALLOCATION_FREE, original_allocation);
          g_assert_cmpuint (steals, ==, stolen);
          g_assert_cmpuint (steals + copies, ==, n_writers);
          /* The original bytes were either stolen or freed, once. */
          g_assert_cmpuint (steals + freed, ==, 1);
          g_assert_cmpuint (test_recorder_count_id (rec, COW_EVENT_CONTEXT_FREE, ctx), ==, 1);
        }
      for (guint i = 0; i < n_writers; i++)
        {
          g_assert_cmpuint (count_mismatches_read (s.slots[i], s.seed + 1 + i), ==, 0);
          cow_tensor_unref (s.slots[i]);
        }
      g_assert_cmpint (test_allocator_n_live (alloc), ==, 0);
    }

  for (guint i = 0; i < N_THREADS; i++)
    g_thread_join (threads[i]);
  pthread_barrier_destroy (&s.start);
  pthread_barrier_destroy (&s.done);
  test_recorder_free (rec);
  test_allocator_free (alloc);
}

/* Every sharer drops its reference at once: the bytes are freed once. */
static void
test_free_all_at_once (void)
{
  run_free_race (0, stress_rounds (1500));
}

/* Half the sharers write while the other half drop their references. */
static void
test_free_while_writing (void)
{
  run_free_race (N_THREADS / 2, stress_rounds (1000));
}

/* ------------------------------------------------------------------ */
/* 5. cow_ipc_send racing lazy clones and a write of the same storage  */
/* ------------------------------------------------------------------ */

typedef enum { ROLE_IDLE, ROLE_SEND, ROLE_CLONE, ROLE_WRITE } SendRole;

typedef struct {
  pthread_barrier_t start, done;
  guint rounds;
  guint seed, written_seed;      /* set by main before each round */
  CowTensor *source;             /* from the shareable allocator */
  SendRole roles[N_THREADS];
  CowStatus send_status;
  CowIpcHandle handle;
  int fd;
  CowTensor *clones[N_THREADS];  /* ROLE_CLONE results */
  guint write_failures;
} SendRace;

typedef struct {
  SendRace *shared;
  guint index;
} SendWorker;

static gpointer
send_race_worker (gpointer data)
{
  SendWorker *w = data;
  SendRace *s = w->shared;
  for (guint r = 0; r < s->rounds; r++)
    {
      pthread_barrier_wait (&s->start);
      switch (s->roles[w->index])
        {
        case ROLE_SEND:
          s->send_status = cow_ipc_send (s->source, &s->handle, &s->fd, NULL);
          break;
        case ROLE_CLONE:
          s->clones[w->index] = cow_tensor_lazy_clone (s->source, NULL);
          break;
        case ROLE_WRITE:
          s->write_failures += write_pattern (s->source, s->written_seed);
          break;
        case ROLE_IDLE:
          break;
        }
      pthread_barrier_wait (&s->done);
    }
  return NULL;
}

/* A tensor of N_ELEMS f32 in shareable memory holding pattern (@seed). */
static CowTensor *
make_shareable_source (guint seed)
{
  CowError error = { 0 };
  CowTensor *t = cow_tensor_empty_with_allocator (1, (int64_t[]) { N_ELEMS }, COW_DTYPE_F32,
                                                  cow_ipc_shareable_cpu_allocator (),
                                                  &error);
  test_assert_cow_ok (&error);
  g_assert_cmpuint (write_pattern (t, seed), ==, 0);
  return t;
}

/* What the sent tensor is when the threads start. */
typedef enum {
  /* Odd rounds: a lazy copy sharing its bytes with another tensor, so
   * the send copies; even rounds: a plain tensor. */
  SOURCE_ALTERNATE,
  /* Every round: copy-on-write with no other sharer left, so the send
   * steals the bytes, racing lazy clones that take a reference on the
   * same context without a lock. */
  SOURCE_COW_ALONE,
} SendSource;

/* One thread sends a tensor while the others lazily clone it or (with
 * @with_writer) one other writes it: a writer racing clones of the same
 * storage would break the user's contract on the bytes themselves.  When
 * the tensor is copy-on-write (@kind), the send materializes it while
 * they run.  Whatever the order, the send succeeds and the consumer (a
 * loopback receive) maps exactly the bytes the producer's tensor now
 * has; the clones keep the data they were cloned from and never see
 * writes through the shared bytes; every block is freed once. */
static void
run_send_race (gboolean with_writer, SendSource kind, guint rounds)
{
  SendRace s = { .rounds = rounds };
  SendWorker workers[N_THREADS];
  GThread *threads[N_THREADS];
  for (guint i = 0; i < N_THREADS; i++)
    s.roles[i] = i == 0 ? ROLE_SEND
                 : !with_writer ? ROLE_CLONE
                 : i == 1 ? ROLE_WRITE : ROLE_IDLE;
  pthread_barrier_init (&s.start, NULL, N_THREADS + 1);
  pthread_barrier_init (&s.done, NULL, N_THREADS + 1);
  for (guint i = 0; i < N_THREADS; i++)
    {
      workers[i] = (SendWorker) { &s, i };
      threads[i] = g_thread_new ("send-race", send_race_worker, &workers[i]);
    }

  for (guint r = 0; r < rounds; r++)
    {
      s.seed = r % 500;
      s.written_seed = 500 + r % 500;
      s.source = make_shareable_source (s.seed);
      /* A lazy copy, whose send has to materialize it: sharing with
       * `earlier`, or alone once its clone is gone. */
      CowTensor *earlier = NULL;
      if (kind == SOURCE_ALTERNATE && r % 2)
        earlier = lazy_clone (s.source);
      if (kind == SOURCE_COW_ALONE)
        {
          cow_tensor_unref (lazy_clone (s.source));
          g_assert_true (cow_tensor_is_cow (s.source));
          g_assert_cmpint (cow_storage_context_refcount (cow_tensor_storage (s.source)), ==, 1);
        }
      s.fd = -1;
      memset (s.clones, 0, sizeof s.clones);

      pthread_barrier_wait (&s.start);
      pthread_barrier_wait (&s.done);

      g_assert_cmpint (s.send_status, ==, COW_OK);
      g_assert_cmpint (s.fd, >=, 0);
      g_assert_cmpuint (s.write_failures, ==, 0);
      g_assert_false (cow_tensor_is_cow (s.source));
      guint now = with_writer ? s.written_seed : s.seed;
      g_assert_cmpuint (count_mismatches (s.source, now), ==, 0);

      CowError error = { 0 };
      CowTensor *received = cow_ipc_receive (&s.handle, dup (s.fd), &error);
      test_assert_cow_ok (&error);
      g_assert_cmpuint (count_mismatches (received, now), ==, 0);
      /* The consumer's write reaches the producer's tensor, and nothing
       * else: the bytes a clone shares were never the sent ones. */
      float *shared = cow_tensor_mutable_data (received, &error);
      test_assert_cow_ok (&error);
      shared[0] = -1.0f;
      g_assert_cmpfloat (((const float *) cow_tensor_const_data (s.source))[0], ==, -1.0f);
      for (guint i = 0; i < N_THREADS; i++)
        {
          CowTensor *clone = s.clones[i];
          if (s.roles[i] != ROLE_CLONE)
            continue;
          g_assert_nonnull (clone);
          g_assert_false (cow_tensor_is_alias_of (clone, s.source));
          g_assert_cmpuint (count_mismatches (clone, s.seed), ==, 0);
          cow_tensor_unref (clone);
        }
      if (earlier != NULL)
        {
          g_assert_cmpuint (count_mismatches (earlier, s.seed), ==, 0);
          cow_tensor_unref (earlier);
        }
      cow_tensor_unref (received);
      g_assert_cmpint (cow_ipc_handle_count (&s.handle), ==, 0);
      cow_tensor_unref (s.source);
      g_assert_cmpuint (cow_ipc_limbo_size (), ==, 0);
      g_assert_cmpuint (cow_ipc_shareable_live_bytes (), ==, 0);
    }

  for (guint i = 0; i < N_THREADS; i++)
    g_thread_join (threads[i]);
  pthread_barrier_destroy (&s.start);
  pthread_barrier_destroy (&s.done);
}

/* PyTorch materializes a lazy copy before sharing it (its share paths
 * take mutable_data()); here the send holds the storage's lock, so lazy
 * clones of the same storage on other threads land wholly before it
 * (then share the old bytes) or wholly after it (then copy eagerly). */
static void
test_send_while_lazy_cloned (void)
{
  run_send_race (FALSE, SOURCE_ALTERNATE, stress_rounds (300));
}

/* The same with a writer: the send and the write's materialization do
 * not interleave, and the consumer maps the bytes the writer wrote. */
static void
test_send_while_written (void)
{
  run_send_race (TRUE, SOURCE_ALTERNATE, stress_rounds (300));
}

/* A lazy clone of a copy-on-write storage takes no lock: it reads the
 * context, takes a reference and checks the storage again.  Here the
 * send finds the context with no other sharer and steals the bytes,
 * ending the context, while clones are taking their references: each
 * clone either counted in time (the send then copies instead, and the
 * clone keeps the old bytes) or sees the send and copies eagerly after
 * it, never a context that is gone. */
static void
test_send_steals_while_lazy_cloned (void)
{
  run_send_race (FALSE, SOURCE_COW_ALONE, stress_rounds (300));
}

/* ------------------------------------------------------------------ */
/* 6. Objects made on one thread and freed on another, threads exiting */
/* ------------------------------------------------------------------ */

#define HANDOFF_THREADS 4
#define HANDOFF_PER_THREAD 24

typedef struct {
  CowTensor *source;
  guint seed;
  CowTensor *to_drop[HANDOFF_PER_THREAD]; /* made by main, dropped here */
  CowTensor *made[HANDOFF_PER_THREAD];    /* made here, dropped by main */
  guint bad;
} Handoff;

static gpointer
handoff_worker (gpointer data)
{
  Handoff *h = data;
  for (guint k = 0; k < HANDOFF_PER_THREAD; k++)
    {
      h->bad += count_mismatches (h->to_drop[k], h->seed);
      cow_tensor_unref (h->to_drop[k]);
      /* Made here: a lazy clone (tensor and storage in one object), a
       * view of it (a tensor alone) and a storage-level clone. */
      CowTensor *clone = cow_tensor_lazy_clone (h->source, NULL);
      if (clone == NULL)
        {
          h->bad += N_ELEMS;
          h->made[k] = NULL;
          continue;
        }
      CowTensor *view = cow_tensor_view (clone, 1, (int64_t[]) { N_ELEMS }, NULL);
      CowStorage *storage = cow_storage_lazy_clone (cow_tensor_storage (clone), NULL);
      h->bad += view == NULL || storage == NULL;
      cow_storage_unref (storage);
      cow_tensor_unref (clone);
      h->made[k] = view;
    }
  return NULL; /* the thread exits with whatever it keeps for reuse */
}

/* Tensors, storages and contexts are kept for reuse per thread.  Threads
 * that drop what another made, make what another drops, and exit each
 * round: every tensor keeps its data, the context counts exactly the
 * storages alive, each block is freed once and none is leaked (the
 * AddressSanitizer run checks leaks at exit), and what main makes after
 * the threads are gone works as well. */
static void
test_objects_across_threads (void)
{
  guint rounds = stress_rounds (150);
  TestAllocator *alloc = test_allocator_new ();
  for (guint r = 0; r < rounds; r++)
    {
      Handoff handoffs[HANDOFF_THREADS];
      GThread *threads[HANDOFF_THREADS];
      CowTensor *source = make_source (alloc, r);
      CowStorage *storage = cow_tensor_storage (source);
      for (guint t = 0; t < HANDOFF_THREADS; t++)
        {
          handoffs[t] = (Handoff) { .source = source, .seed = r };
          for (guint k = 0; k < HANDOFF_PER_THREAD; k++)
            handoffs[t].to_drop[k] = k % 2 ? lazy_clone (source)
                                           : cow_tensor_view (source, 1,
                                                              (int64_t[]) { N_ELEMS }, NULL);
        }
      for (guint t = 0; t < HANDOFF_THREADS; t++)
        threads[t] = g_thread_new ("handoff", handoff_worker, &handoffs[t]);
      for (guint t = 0; t < HANDOFF_THREADS; t++)
        g_thread_join (threads[t]);

      /* The source plus one storage per view kept (a view shares its
       * lazy clone's storage). */
      g_assert_cmpint (cow_storage_context_refcount (storage), ==,
                       1 + HANDOFF_THREADS * HANDOFF_PER_THREAD);
      for (guint t = 0; t < HANDOFF_THREADS; t++)
        {
          g_assert_cmpuint (handoffs[t].bad, ==, 0);
          for (guint k = 0; k < HANDOFF_PER_THREAD; k++)
            {
              CowTensor *view = handoffs[t].made[k];
              g_assert_cmpuint (count_mismatches (view, r), ==, 0);
              g_assert_cmpuint (cow_tensor_data_address (view), ==,
                                cow_tensor_data_address (source));
              cow_tensor_unref (view);
            }
        }
      g_assert_cmpint (cow_storage_context_refcount (storage), ==, 1);
      /* Main's own objects after the threads are gone, some of them
       * reusing memory the threads freed. */
      CowTensor *again = lazy_clone (source);
      g_assert_cmpuint (write_pattern (again, r + 1), ==, 0);
      g_assert_cmpuint (count_mismatches (source, r), ==, 0);
      cow_tensor_unref (again);
      g_assert_cmpint (test_allocator_n_live (alloc), ==, 1);
      cow_tensor_unref (source);
      g_assert_cmpint (test_allocator_n_live (alloc), ==, 0);
    }
  test_allocator_free (alloc);
}

/* ------------------------------------------------------------------ */
/* 7. Interning names on many threads                                  */
/* ------------------------------------------------------------------ */

#define MARK_THREADS 4
/* More names than the interner's first table holds at half load. */
#define MARK_NAMES 300

typedef struct {
  pthread_barrier_t *start;
  char names[MARK_NAMES][32];
  uint32_t tid;
} MarkWorker;

static gpointer
mark_worker (gpointer data)
{
  MarkWorker *w = data;
  w->tid = (uint32_t) gettid ();
  pthread_barrier_wait (w->start);
  for (guint k = 0; k < MARK_NAMES; k++)
    cow_mark (w->names[k]);
  return NULL;
}

/* Threads mark the same new names at once (each from its own buffer),
 * while the interner adds them and grows its table: each name gets one
 * id, announced once, before the first event that names it, and every
 * mark names the string it was given. */
static void
test_intern_concurrent_marks (void)
{
  static guint run;
  run++;
  pthread_barrier_t start;
  pthread_barrier_init (&start, NULL, MARK_THREADS);
  MarkWorker *workers = g_new0 (MarkWorker, MARK_THREADS);
  GThread *threads[MARK_THREADS];
  for (guint t = 0; t < MARK_THREADS; t++)
    {
      workers[t].start = &start;
      for (guint k = 0; k < MARK_NAMES; k++)
        g_snprintf (workers[t].names[k], sizeof workers[t].names[k], "concurrent-%u-%03u", run, k);
    }
  TestRecorder *rec = test_recorder_new ();
  test_recorder_start (rec);
  for (guint t = 0; t < MARK_THREADS; t++)
    threads[t] = g_thread_new ("marker", mark_worker, &workers[t]);
  for (guint t = 0; t < MARK_THREADS; t++)
    g_thread_join (threads[t]);
  test_recorder_stop (rec);

  guint64 ids[MARK_NAMES] = { 0 };
  guint seen[MARK_THREADS] = { 0 };
  guint n_events = test_recorder_n_events (rec);
  for (guint p = 0; p < n_events; p++)
    {
      const CowTraceEvent *e = test_recorder_event (rec, p);
      if (e->type != COW_EVENT_MARK)
        continue;
      guint t = 0;
      while (t < MARK_THREADS && workers[t].tid != e->tid)
        t++;
      g_assert_cmpuint (t, <, MARK_THREADS);
      guint k = seen[t]++;
      guint64 id = e->range.string_id;
      g_assert_cmpuint (id, !=, 0);
      g_assert_cmpstr (test_recorder_string (rec, id), ==, workers[t].names[k]);
      g_assert_cmpuint (test_recorder_string_count (rec, id), ==, 1);
      g_assert_cmpint (test_recorder_string_position (rec, id), <=, (gint) p);
      if (ids[k] == 0)
        ids[k] = id;
      g_assert_cmpuint (ids[k], ==, id);
    }
  for (guint t = 0; t < MARK_THREADS; t++)
    g_assert_cmpuint (seen[t], ==, MARK_NAMES);
  g_assert_cmpuint (test_recorder_n_strings (rec), ==, MARK_NAMES);
  test_recorder_free (rec);
  g_free (workers);
  pthread_barrier_destroy (&start);
}

/* ------------------------------------------------------------------ */
/* 8. Large copies on several threads at once                          */
/* ------------------------------------------------------------------ */

#define BIG_COPIES 2
#define BIG_BYTES ((gsize) 64 << 20)

typedef struct {
  CowTensor *clone;
  const guint8 *original;
  gboolean exact;
} BigCopy;

static gpointer
big_copy_worker (gpointer data)
{
  BigCopy *c = data;
  const guint8 *copy = cow_tensor_mutable_data (c->clone, NULL);
  c->exact = copy != NULL && copy != c->original && memcmp (copy, c->original, BIG_BYTES) == 0;
  return NULL;
}

/* Two writers materialize 64 MiB lazy copies of one tensor at once, each
 * copy spread over helper threads (COW_COPY_THREADS=3): both get exact
 * copies and the source keeps its bytes. */
static void
test_large_copies_at_once (void)
{
  CowError error = { 0 };
  int64_t numel = (int64_t) BIG_BYTES;
  CowTensor *source = cow_tensor_empty (1, &numel, COW_DTYPE_U8, &error);
  test_assert_cow_ok (&error);
  guint8 *bytes = cow_tensor_mutable_data (source, &error);
  test_assert_cow_ok (&error);
  for (gsize i = 0; i < BIG_BYTES; i++)
    bytes[i] = (guint8) (i * 131u + (i >> 21));
  BigCopy copies[BIG_COPIES];
  GThread *threads[BIG_COPIES];
  for (guint i = 0; i < BIG_COPIES; i++)
    copies[i] = (BigCopy) { lazy_clone (source), bytes, FALSE };
  for (guint i = 0; i < BIG_COPIES; i++)
    threads[i] = g_thread_new ("big-copy", big_copy_worker, &copies[i]);
  for (guint i = 0; i < BIG_COPIES; i++)
    {
      g_thread_join (threads[i]);
      g_assert_true (copies[i].exact);
      g_assert_false (cow_tensor_is_cow (copies[i].clone));
      cow_tensor_unref (copies[i].clone);
    }
  for (gsize i = 0; i < BIG_BYTES; i += 4093)
    g_assert_cmpuint (bytes[i], ==, (guint8) (i * 131u + (i >> 21)));
  cow_tensor_unref (source);
}

int
main (int argc, char **argv)
{
  /* Read once, at the first large copy: helpers even on a busy machine. */
  g_setenv ("COW_COPY_THREADS", "3", TRUE);
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/concurrency/materialize/all-sharers", test_all_write);
  g_test_add_func ("/concurrency/materialize/all-sharers-traced", test_all_write_traced);
  g_test_add_func ("/concurrency/lazy-clone/while-siblings-write",
                   test_clone_while_siblings_write);
  g_test_add_func ("/concurrency/lazy-clone/first-clone-one-context",
                   test_concurrent_first_clone);
  g_test_add_func ("/concurrency/free/all-at-once", test_free_all_at_once);
  g_test_add_func ("/concurrency/free/while-writing", test_free_while_writing);
  g_test_add_func ("/concurrency/ipc/send-while-lazy-cloned", test_send_while_lazy_cloned);
  g_test_add_func ("/concurrency/ipc/send-while-written", test_send_while_written);
  g_test_add_func ("/concurrency/ipc/send-steals-while-lazy-cloned",
                   test_send_steals_while_lazy_cloned);
  g_test_add_func ("/concurrency/objects/across-threads", test_objects_across_threads);
  g_test_add_func ("/concurrency/intern/marks-at-once", test_intern_concurrent_marks);
  g_test_add_func ("/concurrency/copy/large-copies-at-once", test_large_copies_at_once);

  return g_test_run ();
}
