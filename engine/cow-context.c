/* cow-context.c — the copy-on-write context (see cow-context-private.h). */
#include "cow-context-private.h"

#include <stdlib.h>

CowContext *
cow_context_new (void *data, CowDataPtr owner, size_t nbytes,
                 uint64_t allocation_id, CowAllocator *allocator,
                 CowDeviceSync *device_sync)
{
  CowContext *context = malloc (sizeof *context);
  if (context == NULL)
    {
      cow_device_sync_free (device_sync);
      return NULL;
    }
  if (pthread_rwlock_init (&context->lock, NULL) != 0)
    {
      cow_device_sync_free (device_sync);
      free (context);
      return NULL;
    }
  atomic_init (&context->refcount, 1);
  context->id = cow_next_id ();
  context->data = data;
  context->owner = owner;
  context->nbytes = nbytes;
  context->allocation_id = allocation_id;
  context->allocator = allocator;
  context->device_sync = device_sync;
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

static void
destroy (CowContext *context, uint64_t storage_id)
{
  COW_TRACE (COW_EVENT_CONTEXT_FREE, COW_OP_NONE, 0, context->id, storage_id,
             0, context->allocation_id, 0);
  cow_device_sync_free (context->device_sync);
  pthread_rwlock_destroy (&context->lock);
  free (context);
}

void
cow_context_unref (CowContext *context, uint64_t storage_id, CowCudaStream *stream)
{
  /* Read before the decrement: once it leaves the count above zero the
   * context belongs to the other sharers, who may free it at once. */
  uint64_t context_id = context->id, allocation_id = context->allocation_id;
  /* Before the decrement too: the last holder must see this release. */
  if (context->device_sync != NULL)
    cow_device_sync_release (context->device_sync, stream);
  /* Release: our reads of the bytes happen before whoever frees them;
   * acquire: the last one sees the others' reads before it frees. */
  int64_t refcount = atomic_fetch_sub_explicit (&context->refcount, 1,
                                                memory_order_acq_rel) - 1;
  COW_TRACE (COW_EVENT_CONTEXT_UNREF, COW_OP_NONE, 0, context_id, storage_id,
             (uint64_t) refcount, allocation_id, 0);
  if (refcount > 0)
    return;
  lock_exclusive_timed (context);
  pthread_rwlock_unlock (&context->lock);
  if (context->device_sync != NULL)
    {
      /* The bytes are freed on their block's stream: after every
       * sharer's work on them, this one's included. */
      CowCudaStream *free_stream = cow_cuda_block_stream (&context->owner);
      cow_device_sync_wait_all (context->device_sync, free_stream != NULL ? free_stream : stream);
    }
  if (context->owner.deleter != NULL)
    context->owner.deleter (context->owner.context);
  COW_TRACE (COW_EVENT_ALLOCATION_FREE, COW_OP_NONE,
             cow_allocation_kind (context->allocator), context->allocation_id,
             context->nbytes, (uint64_t) (uintptr_t) context->data,
             cow_allocation_device (context->allocator), 0);
  destroy (context, storage_id);
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
