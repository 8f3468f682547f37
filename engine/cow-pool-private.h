/* cow-pool-private.h — per-thread free lists for the engine's small
 * objects, so that making and dropping a tensor (a lazy clone above all)
 * costs a few loads and stores instead of a malloc and a free.
 *
 * Each thread keeps up to COW_POOL_THREAD_CAP objects of each class.  An
 * object freed on another thread than the one that allocated it goes to
 * the freeing thread's list (as glibc's tcache does); a full list hands
 * the object back to free().  When a thread exits, its lists are emptied
 * (a pthread key destructor) and the thread frees straight to malloc from
 * then on.
 *
 * Contexts are the exception: their memory is type-stable.  A context is
 * never given back to malloc; a full list, or an exiting thread's, moves
 * its contexts to a process-wide list that refills threads.  A lazy clone
 * may read the reference count of a context that a concurrent
 * cow_ipc_send() has just freed (cow-storage-private.h says why that is
 * harmless), so that word must stay a context's reference count for
 * ever: it is the first word of every context, and the lists link
 * objects through their second and third words.  The memory kept is the
 * peak number of live contexts times their size.
 *
 * Under AddressSanitizer a pooled object is poisoned but for its list
 * link (and a context's first word), so a use after free is still
 * reported, a second unref included.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "cow-private.h"

typedef enum {
  COW_POOL_TENSOR,       /* CowTensor: views */
  COW_POOL_STORAGE,      /* CowStorage alone */
  COW_POOL_TENSOR_BLOCK, /* CowTensorBlock: a tensor with its own storage */
  COW_POOL_CONTEXT,      /* CowContext: type-stable, never freed */
  COW_POOL_N_CLASSES
} CowPoolClass;

/* Objects a thread keeps per class: enough for bursts of clones and
 * drops, little enough (about 50 KiB in all) not to matter per thread. */
#define COW_POOL_THREAD_CAP 64

/* The words of a pooled object that the lists use: the first is left
 * alone (a context's reference count), the second links a list, the
 * third links batches of contexts in the process-wide list. */
#define COW_POOL_LINK(object) (((void **) (object))[1])
#define COW_POOL_BATCH_LINK(object) (((void **) (object))[2])
#define COW_POOL_HEADER_BYTES (3 * sizeof (void *))

typedef struct {
  void *head[COW_POOL_N_CLASSES];
  /* How many more objects the list may take.  0 also before the thread
   * has registered its exit handler and after it ran, so that both go
   * through the slow paths. */
  uint32_t room[COW_POOL_N_CLASSES];
} CowPoolCache;

COW_INTERNAL extern COW_TLS CowPoolCache cow_pool_cache;

/* The slow paths: a thread's first use, an empty or a full list, an
 * exited thread.  cow_pool_alloc_slow() returns NULL when memory runs out. */
COW_INTERNAL void *cow_pool_alloc_slow (CowPoolClass pool_class) COW_COLD;
COW_INTERNAL void cow_pool_free_slow (CowPoolClass pool_class, void *object) COW_COLD;

#if defined(__SANITIZE_ADDRESS__)
#define COW_POOL_POISON 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define COW_POOL_POISON 1
#endif
#endif

#ifdef COW_POOL_POISON
COW_INTERNAL void cow_pool_poison (CowPoolClass pool_class, void *object);
COW_INTERNAL void cow_pool_unpoison (CowPoolClass pool_class, void *object);
#else
#define cow_pool_poison(pool_class, object) ((void) 0)
#define cow_pool_unpoison(pool_class, object) ((void) 0)
#endif

/* An object of @pool_class, uninitialised (the size the class names), or
 * NULL when memory runs out. */
static inline void *
cow_pool_alloc (CowPoolClass pool_class)
{
  void *object = cow_pool_cache.head[pool_class];
  if (COW_LIKELY (object != NULL))
    {
      cow_pool_cache.head[pool_class] = COW_POOL_LINK (object);
      cow_pool_cache.room[pool_class]++;
      cow_pool_unpoison (pool_class, object);
      return object;
    }
  return cow_pool_alloc_slow (pool_class);
}

/* Gives back @object (from cow_pool_alloc() with the same class). */
static inline void
cow_pool_free (CowPoolClass pool_class, void *object)
{
  if (COW_LIKELY (cow_pool_cache.room[pool_class] != 0))
    {
      cow_pool_cache.room[pool_class]--;
      COW_POOL_LINK (object) = cow_pool_cache.head[pool_class];
      cow_pool_cache.head[pool_class] = object;
      cow_pool_poison (pool_class, object);
      return;
    }
  cow_pool_free_slow (pool_class, object);
}
