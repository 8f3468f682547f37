/* cow-context-private.h — the copy-on-write context.
 *
 * One context per shared allocation: the refcount of the storages whose
 * bytes it owns, and a reader–writer lock.  Storages that copy the bytes
 * hold it shared; the last reference takes it exclusive before stealing
 * or freeing the bytes, which waits for every copy in flight (cow-lazy.h
 * says why).  Invariant: refcount = number of storages
 * pointing at the context; views share one storage and count once.
 * (A lazy clone that lost a race with cow_ipc_send() may hold one more
 * for a moment: see cow-storage-private.h.)
 *
 * Contexts live in type-stable memory (cow-pool-private.h): once freed,
 * a context's first word stays a reference count of 0 until the memory
 * is a context again, so a lazy clone may try to take a reference on a
 * context that is gone and see that it is gone.
 */
#pragma once

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cow-allocator.h"
#include "cow-cuda-private.h"
#include "cow-private.h"

typedef struct _CowContext {
  /* First word, for ever (cow-pool-private.h).  0 once the context is
   * freed or stolen: a reference can then no longer be taken. */
  _Atomic int64_t refcount;
  uint64_t id;
  /* Shared: a storage copying `data`.  Exclusive: the last reference
   * taking over or freeing `data`. */
  pthread_rwlock_t lock;
  /* The original owner of the bytes, moved here from the first storage. */
  void *data;
  CowDataPtr owner;
  size_t nbytes;
  uint64_t allocation_id;
  CowAllocator *allocator;
  /* Device bytes only (NULL for host memory): the stream order that the
   * lock gives on the host (cow-cuda-private.h). */
  CowDeviceSync *device_sync;
} CowContext;

/* What ALLOCATION_NEW/FREE events say about who provided the bytes. */
static inline uint32_t
cow_allocation_kind (const CowAllocator *allocator)
{
  if (allocator == NULL)
    return COW_ALLOCATION_FOREIGN;
  return allocator->device_type == COW_DEVICE_CUDA ? COW_ALLOCATION_CUDA
                                                   : COW_ALLOCATION_CPU;
}

static inline uint64_t
cow_allocation_device (const CowAllocator *allocator)
{
  return allocator != NULL ? (uint64_t) allocator->device_index : 0;
}

/* The device field of trace events' aux (COW_TRACE_AUX_DEVICE_SHIFT):
 * 0 for host memory, 1 + index for cuda:index. */
static inline uint32_t
cow_trace_device (CowDevice device)
{
  if (device.type != COW_DEVICE_CUDA)
    return 0;
  return ((uint32_t) device.index + 1) << COW_TRACE_AUX_DEVICE_SHIFT;
}

/* A context owning @owner's bytes with refcount 1 (for @storage_id), or
 * NULL when memory runs out.  @device_sync (NULL for host bytes) is
 * taken over, also on failure. */
COW_INTERNAL CowContext *cow_context_new (void *data, CowDataPtr owner,
                                          size_t nbytes, uint64_t allocation_id,
                                          CowAllocator *allocator,
                                          CowDeviceSync *device_sync);

/* Takes a reference for a new sharer unless the context is gone
 * (refcount 0: freed, or its bytes stolen); the new count into
 * *@refcount.  Acquire: pairs with the release that stored the count of
 * a recycled context (see cow_storage_try_share()).  Inline: with the
 * object's allocation it is most of a lazy clone's cost. */
static inline bool
cow_context_try_ref (CowContext *context, int64_t *refcount)
{
  int64_t count = atomic_load_explicit (&context->refcount, memory_order_relaxed);
  do
    {
      if (COW_UNLIKELY (count <= 0))
        return false;
    }
  while (!atomic_compare_exchange_weak_explicit (&context->refcount, &count, count + 1,
                                                 memory_order_acquire, memory_order_relaxed));
  *refcount = count + 1;
  return true;
}

/* Takes the last reference's bytes if @context has no other sharer:
 * its count goes from 1 to 0 in one step, so a lazy clone's reference is
 * either counted before (and this fails) or cannot be taken after.
 * Acquire: the other sharers' uses of the bytes (their release
 * decrements) happen before the caller takes them over. */
static inline bool
cow_context_take_unique (CowContext *context)
{
  int64_t one = 1;
  return atomic_compare_exchange_strong_explicit (&context->refcount, &one, 0,
                                                  memory_order_acquire, memory_order_relaxed);
}

/* The last reference is gone: waits for copies in flight (exclusive
 * lock; for device bytes, also their streams), frees the bytes with the
 * original deleter and the context.  @storage_id: the storage that held
 * it (0: none, a lazy clone's reference taken in vain), for the events. */
COW_INTERNAL void cow_context_free_last (CowContext *context, uint64_t storage_id,
                                         CowCudaStream *stream) COW_COLD;

/* Drops a storage that is being freed, not materialized: the last one
 * frees the bytes and the context (cow_context_free_last()).  @stream:
 * the storage's stream (device bytes), or NULL; @sink: cow_trace_sink(). */
static inline void
cow_context_unref (CowContext *context, uint64_t storage_id, CowCudaStream *stream,
                   const CowTraceSink *sink)
{
  /* Before the decrement: the last holder must see this release. */
  if (COW_UNLIKELY (context->device_sync != NULL))
    cow_device_sync_release (context->device_sync, stream);
  /* Read before the decrement: once it leaves the count above zero the
   * context belongs to the other sharers, who may free it at once. */
  uint64_t context_id = context->id, allocation_id = context->allocation_id;
  /* Release: our reads of the bytes happen before whoever frees them;
   * acquire: the last one sees the others' reads before it frees. */
  int64_t refcount = atomic_fetch_sub_explicit (&context->refcount, 1,
                                                memory_order_acq_rel) - 1;
  COW_TRACE_TO (sink, COW_EVENT_CONTEXT_UNREF, COW_OP_NONE, 0, context_id, storage_id,
                (uint64_t) refcount, allocation_id, 0);
  if (COW_UNLIKELY (refcount == 0))
    cow_context_free_last (context, storage_id, stream);
}

/* Gives back a reference that a lazy clone took but could not use (see
 * cow_storage_try_share()); no events, since no storage joined.
 * @stream: the clone source's stream (NULL on the CPU), in case this was
 * the last reference to device bytes. */
COW_INTERNAL void cow_context_unref_unused (CowContext *context, CowCudaStream *stream) COW_COLD;

/* Ends the context after its last reference took the bytes (its count
 * is 0): waits for copies in flight — for device bytes, makes @stream
 * (the stealer's) wait for every other sharer's work on them and frees
 * them on it from now on — and frees the context, not the bytes.
 * Returns the ns spent waiting for the exclusive lock. */
COW_INTERNAL int64_t cow_context_finish_steal (CowContext *context,
                                               uint64_t storage_id,
                                               CowCudaStream *stream);
