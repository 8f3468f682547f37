/* cow-context.c — the copy-on-write context (see cow-context-private.h). */
#include "cow-context-private.h"

#include "cow-pool-private.h"

CowContext *
cow_context_new (void *data, CowDataPtr owner, size_t nbytes,
                 uint64_t allocation_id, CowAllocator *allocator,
                 CowDeviceSync *device_sync)
{
  CowContext *context = cow_pool_alloc (COW_POOL_CONTEXT);
  if (context == NULL)
    {
      cow_device_sync_free (device_sync);
      return NULL;
    }
  if (pthread_rwlock_init (&context->lock, NULL) != 0)
    {
      cow_device_sync_free (device_sync);
      cow_pool_free (COW_POOL_CONTEXT, context);
      return NULL;
    }
  context->id = cow_next_id ();
  context->data = data;
  context->owner = owner;
  context->nbytes = nbytes;
  context->allocation_id = allocation_id;
  context->allocator = allocator;
  context->device_sync = device_sync;
  /* An atomic store, never a plain one: a lazy clone holding a stale
   * pointer may be reading this word (cow-pool-private.h).  Release: such
   * a clone that takes a reference here then sees that its source let go
   * of the old context (cow-storage-private.h).  The context itself is
   * published by the release that ends its storage's lock. */
  atomic_store_explicit (&context->refcount, 1, memory_order_release);
  return context;
}

static int64_t
lock_exclusive_timed (CowContext *context)
{
  /* Uncontended in the common case: try first, time only when waiting. */
  if (pthread_rwlock_trywrlock (&context->lock) == 0)
    return 0;
  int64_t start = cow_trace_now_ns ();
  pthread_rwlock_wrlock (&context->lock);
  return cow_trace_now_ns () - start;
}

/* Frees the context itself; its count is 0 and stays 0 in the pool. */
static void
destroy (CowContext *context, uint64_t storage_id)
{
  COW_TRACE (COW_EVENT_CONTEXT_FREE, COW_OP_NONE, 0, context->id, storage_id,
             0, context->allocation_id, 0);
  cow_device_sync_free (context->device_sync);
  pthread_rwlock_destroy (&context->lock);
  cow_pool_free (COW_POOL_CONTEXT, context);
}

void
cow_context_free_last (CowContext *context, uint64_t storage_id, CowCudaStream *stream)
{
  lock_exclusive_timed (context);
  pthread_rwlock_unlock (&context->lock);
  if (context->device_sync != NULL)
    {
      /* The bytes are freed on their block's stream: after every
       * sharer's work on them, this one's included. */
      CowCudaStream *free_stream = cow_cuda_block_stream (&context->owner);
      CowCudaStream *borrowed = NULL;
      if (free_stream == NULL && stream == NULL)
        /* An unused reference (no storage, so no stream) was the last:
         * the device's stream of the calling thread will do. */
        stream = borrowed = cow_cuda_stream_for_device (context->allocator->device_index);
      cow_device_sync_wait_all (context->device_sync, free_stream != NULL ? free_stream : stream);
      cow_cuda_stream_unref (borrowed);
    }
  if (context->owner.deleter != NULL)
    context->owner.deleter (context->owner.context);
  COW_TRACE (COW_EVENT_ALLOCATION_FREE, COW_OP_NONE,
             cow_allocation_kind (context->allocator), context->allocation_id,
             context->nbytes, (uint64_t) (uintptr_t) context->data,
             cow_allocation_device (context->allocator), 0);
  destroy (context, storage_id);
}

void
cow_context_unref_unused (CowContext *context, CowCudaStream *stream)
{
  /* Acq_rel as in cow_context_unref(): whoever frees sees every use. */
  if (atomic_fetch_sub_explicit (&context->refcount, 1, memory_order_acq_rel) == 1)
    cow_context_free_last (context, 0, stream);
}

int64_t
cow_context_finish_steal (CowContext *context, uint64_t storage_id, CowCudaStream *stream)
{
  int64_t waited = lock_exclusive_timed (context);
  pthread_rwlock_unlock (&context->lock);
  if (context->device_sync != NULL)
    {
      /* Every copier has enqueued its copy (the lock); now the stealer's
       * stream waits until they have run, and frees the bytes from now
       * on, after its own writes. */
      cow_device_sync_wait_all (context->device_sync, stream);
      cow_cuda_block_adopt (&context->owner, stream);
    }
  destroy (context, storage_id);
  return waited;
}
