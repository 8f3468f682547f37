/* cow-pool.c — per-thread free lists: the slow paths (see
 * cow-pool-private.h). */
#include "cow-pool-private.h"

#include "cow-context-private.h"
#include "cow-tensor-private.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#ifdef COW_POOL_POISON
#include <sanitizer/asan_interface.h>
#endif

COW_TLS CowPoolCache cow_pool_cache;

static const size_t class_size[COW_POOL_N_CLASSES] = {
  [COW_POOL_TENSOR] = sizeof (CowTensor),
  [COW_POOL_STORAGE] = sizeof (CowStorage),
  [COW_POOL_TENSOR_BLOCK] = sizeof (CowTensorBlock),
  [COW_POOL_CONTEXT] = sizeof (CowContext),
};

_Static_assert (sizeof (CowTensor) >= COW_POOL_HEADER_BYTES
                  && sizeof (CowStorage) >= COW_POOL_HEADER_BYTES
                  && sizeof (CowContext) >= COW_POOL_HEADER_BYTES,
                "a pooled object holds the list links");
_Static_assert (offsetof (CowContext, refcount) == 0,
                "a context's reference count is the word the lists never touch");

/* Where a thread stands: its lists are used only while REGISTERED, when
 * its exit handler will empty them. */
enum { THREAD_NEW, THREAD_REGISTERED, THREAD_EXITED };
static _Thread_local int thread_state;

static pthread_key_t exit_key;
static pthread_once_t setup_once = PTHREAD_ONCE_INIT;
static bool exit_key_ok;

/* Spare contexts of the process: a stack of batches, each a list linked
 * through COW_POOL_LINK, batches through COW_POOL_BATCH_LINK of their
 * first context.  Protected by spare_lock. */
static pthread_mutex_t spare_lock = PTHREAD_MUTEX_INITIALIZER;
static void *spare_batches;

#ifdef COW_POOL_POISON
/* Everything but the words the lists use: the link, and for contexts
 * also the reference count and the batch link. */
void
cow_pool_poison (CowPoolClass pool_class, void *object)
{
  char *bytes = object;
  if (pool_class == COW_POOL_CONTEXT)
    {
      ASAN_POISON_MEMORY_REGION (bytes + COW_POOL_HEADER_BYTES,
                                 class_size[pool_class] - COW_POOL_HEADER_BYTES);
      return;
    }
  ASAN_POISON_MEMORY_REGION (bytes, sizeof (void *));
  ASAN_POISON_MEMORY_REGION (bytes + 2 * sizeof (void *),
                             class_size[pool_class] - 2 * sizeof (void *));
}

void
cow_pool_unpoison (CowPoolClass pool_class, void *object)
{
  ASAN_UNPOISON_MEMORY_REGION (object, class_size[pool_class]);
}
#endif

static void
push_spare_batch (void *batch)
{
  pthread_mutex_lock (&spare_lock);
  COW_POOL_BATCH_LINK (batch) = spare_batches;
  spare_batches = batch;
  pthread_mutex_unlock (&spare_lock);
}

static void *
pop_spare_batch (void)
{
  pthread_mutex_lock (&spare_lock);
  void *batch = spare_batches;
  if (batch != NULL)
    spare_batches = COW_POOL_BATCH_LINK (batch);
  pthread_mutex_unlock (&spare_lock);
  return batch;
}

/* Empties the calling thread's lists: contexts to the spare stack, the
 * rest to free(). */
static void
empty_lists (void)
{
  for (int c = 0; c < COW_POOL_N_CLASSES; c++)
    {
      void *head = cow_pool_cache.head[c];
      cow_pool_cache.head[c] = NULL;
      cow_pool_cache.room[c] = 0;
      if (head == NULL)
        continue;
      if (c == COW_POOL_CONTEXT)
        {
          push_spare_batch (head);
          continue;
        }
      while (head != NULL)
        {
          void *next = COW_POOL_LINK (head);
          cow_pool_unpoison ((CowPoolClass) c, head);
          free (head);
          head = next;
        }
    }
}

/* The key's destructor: runs as a thread exits (not for the main thread
 * at exit(), whose lists stay reachable until the process ends). */
static void
thread_exiting (void *unused)
{
  (void) unused;
  empty_lists ();
  thread_state = THREAD_EXITED;
}

static void
lock_spares_for_fork (void)
{
  pthread_mutex_lock (&spare_lock);
}

static void
unlock_spares_after_fork (void)
{
  pthread_mutex_unlock (&spare_lock);
}

static void
reset_spares_in_child (void)
{
  /* The child's only thread is the forking one, which holds the lock. */
  pthread_mutex_init (&spare_lock, NULL);
}

static void
setup (void)
{
  exit_key_ok = pthread_key_create (&exit_key, thread_exiting) == 0;
  pthread_atfork (lock_spares_for_fork, unlock_spares_after_fork, reset_spares_in_child);
}

/* A thread's first use: its lists open once its exit handler is set. */
static void
register_thread (void)
{
  pthread_once (&setup_once, setup);
  /* Any non-NULL value makes the destructor run at the thread's exit. */
  if (!exit_key_ok || pthread_setspecific (exit_key, &cow_pool_cache) != 0)
    {
      thread_state = THREAD_EXITED; /* no handler: never keep objects */
      return;
    }
  thread_state = THREAD_REGISTERED;
  for (int c = 0; c < COW_POOL_N_CLASSES; c++)
    cow_pool_cache.room[c] = COW_POOL_THREAD_CAP;
}

void *
cow_pool_alloc_slow (CowPoolClass pool_class)
{
  if (thread_state == THREAD_NEW)
    register_thread ();
  if (pool_class == COW_POOL_CONTEXT)
    {
      void *batch = pop_spare_batch ();
      if (batch != NULL)
        {
          void *rest = COW_POOL_LINK (batch);
          if (thread_state == THREAD_REGISTERED && cow_pool_cache.head[pool_class] == NULL)
            {
              uint32_t n = 0;
              for (void *p = rest; p != NULL; p = COW_POOL_LINK (p))
                n++;
              cow_pool_cache.head[pool_class] = rest;
              cow_pool_cache.room[pool_class] = COW_POOL_THREAD_CAP - n;
            }
          else if (rest != NULL)
            push_spare_batch (rest);
          cow_pool_unpoison (pool_class, batch);
          return batch;
        }
    }
  return malloc (class_size[pool_class]);
}

void
cow_pool_free_slow (CowPoolClass pool_class, void *object)
{
  if (thread_state == THREAD_NEW)
    register_thread ();
  if (thread_state == THREAD_REGISTERED)
    {
      if (cow_pool_cache.room[pool_class] == 0 && pool_class == COW_POOL_CONTEXT)
        {
          /* A full list of contexts moves to the spare stack at once. */
          push_spare_batch (cow_pool_cache.head[pool_class]);
          cow_pool_cache.head[pool_class] = NULL;
          cow_pool_cache.room[pool_class] = COW_POOL_THREAD_CAP;
        }
      if (cow_pool_cache.room[pool_class] != 0)
        {
          cow_pool_free (pool_class, object);
          return;
        }
    }
  if (pool_class == COW_POOL_CONTEXT)
    {
      /* Never back to malloc: a batch of one. */
      COW_POOL_LINK (object) = NULL;
      cow_pool_poison (pool_class, object);
      push_spare_batch (object);
      return;
    }
  free (object);
}
