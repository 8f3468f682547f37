/* cow-context-private.h — the copy-on-write context.
 *
 * One context per shared allocation: the refcount of the storages whose
 * bytes it owns, and a reader–writer lock.  Storages that copy the bytes
 * hold it shared; the last reference takes it exclusive before stealing
 * or freeing the bytes, which waits for every copy in flight (cow-lazy.h
 * says why).  Invariant: refcount = number of storages
 * pointing at the context; views share one storage and count once.
 */
#pragma once

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "cow-allocator.h"
#include "cow-cuda-private.h"
#include "cow-private.h"

typedef struct _CowContext {
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

/* Adds a storage; the context is shared (refcount ≥ 1) by the caller's
 * source storage, so it cannot vanish: a relaxed increment suffices, as
 * for shared_ptr copies.  Inline: it is most of a lazy clone's cost. */
static inline void
cow_context_ref (CowContext *context, uint64_t storage_id)
{
  int64_t refcount = atomic_fetch_add_explicit (&context->refcount, 1,
                                                memory_order_relaxed) + 1;
  COW_TRACE (COW_EVENT_CONTEXT_REF, COW_OP_LAZY_CLONE, 0, context->id,
             storage_id, (uint64_t) refcount, context->allocation_id, 0);
}

/* Drops a storage that is being freed, not materialized: the last one
 * waits for copies in flight (exclusive lock; for device bytes, also
 * their streams), frees the bytes with the original deleter and the
 * context.  @stream: the storage's stream (device bytes), or NULL. */
COW_INTERNAL void cow_context_unref (CowContext *context, uint64_t storage_id,
                                     CowCudaStream *stream);

/* Ends the context after its last reference took the bytes: waits for
 * copies in flight — for device bytes, makes @stream (the stealer's)
 * wait for every other sharer's work on them and frees them on it from
 * now on — and frees the context, not the bytes.  Returns the ns spent
 * waiting for the exclusive lock. */
COW_INTERNAL int64_t cow_context_finish_steal (CowContext *context,
                                               uint64_t storage_id,
                                               CowCudaStream *stream);
