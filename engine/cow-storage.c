/* cow-storage.c — storages, lazy sharing of their bytes and
 * materialization.
 *
 * Materialization follows cow-thread-safety.md with PyTorch's 2026 order:
 * every step that can fail (allocating, copying) runs before the
 * context's refcount drops, so a failure leaves a valid lazy copy.  The
 * copy runs under the context's shared lock and the decrement happens
 * while it is still held; whoever drops the count to zero takes the
 * exclusive lock, which waits for every copy in flight, and steals the
 * bytes.  So when every sharer writes, exactly one of them steals.
 *
 * Each storage's own lock serialises what changes that storage's owner
 * or context: its lazy clones, its materialization and cow_ipc_send() of
 * it.  Lazy clone and materialization are a read and a write, which the
 * user keeps apart anyway (cow-thread-safety.md), but a send is a read to
 * the user that materializes and rewraps the owner behind their back.
 * Sharers on other storages never wait for each other's storage locks.
 */
#include "cow-storage-private.h"
#include "cow-simulate-private.h"

#include <inttypes.h>
#include <stdlib.h>

static void
storage_init (CowStorage *storage, void *block, size_t nbytes, CowAllocator *allocator,
              CowDevice device)
{
  atomic_init (&storage->refcount, 1);
  pthread_mutex_init (&storage->lock, NULL); /* cannot fail without attributes */
  storage->id = cow_next_id ();
  storage->nbytes = nbytes;
  storage->allocator = allocator;
  storage->device = device;
  storage->data = NULL;
  storage->allocation_id = 0;
  storage->owner = (CowDataPtr) { 0 };
  atomic_init (&storage->cow, NULL);
  atomic_init (&storage->sim, NULL);
  storage->block = block;
  storage->stream = device.type == COW_DEVICE_CUDA
                      ? cow_cuda_stream_for_device (device.index)
                      : NULL;
}

static CowDevice
allocator_device (const CowAllocator *allocator)
{
  if (allocator == NULL || allocator->device_type == COW_DEVICE_CPU)
    return cow_device_cpu ();
  return (CowDevice) { allocator->device_type, allocator->device_index };
}

/* Runs @storage's allocator on the storage's stream: a device allocator
 * orders its allocation on the current stream. */
static CowStatus
storage_allocate (CowStorage *storage, CowDataPtr *out, CowError *error)
{
  CowAllocator *allocator = storage->allocator;
  if (storage->stream == NULL)
    return allocator->allocate (allocator, storage->nbytes, out, error);
  CowCudaStream *previous = cow_cuda_exchange_current_stream (storage->stream);
  CowStatus status = allocator->allocate (allocator, storage->nbytes, out, error);
  cow_cuda_exchange_current_stream (previous);
  return status;
}

static CowStorage *
storage_alloc (size_t nbytes, CowDevice device, CowError *error)
{
  CowStorage *storage = malloc (sizeof *storage);
  if (storage == NULL)
    {
      cow_set_error (error, COW_ERROR_NO_MEMORY, "cannot allocate a storage object");
      return NULL;
    }
  storage_init (storage, storage, nbytes, NULL, device);
  return storage;
}

CowStatus
cow_storage_init_new (CowStorage *storage, void *block, size_t nbytes,
                      CowAllocator *allocator, CowOp op, CowError *error)
{
  if (allocator == NULL)
    allocator = cow_cpu_allocator ();
  storage_init (storage, block, nbytes, allocator, allocator_device (allocator));
  CowStatus status = storage_allocate (storage, &storage->owner, error);
  if (status != COW_OK)
    {
      cow_cuda_stream_unref (storage->stream);
      pthread_mutex_destroy (&storage->lock);
      return status;
    }
  storage->data = storage->owner.data;
  storage->allocation_id = cow_next_id ();
  COW_TRACE (COW_EVENT_ALLOCATION_NEW, op, cow_allocation_kind (allocator),
             storage->allocation_id, nbytes, (uint64_t) (uintptr_t) storage->data,
             cow_allocation_device (allocator), 0);
  COW_TRACE (COW_EVENT_STORAGE_NEW, op, cow_trace_device (storage->device), storage->id,
             storage->allocation_id, nbytes, 0, 0);
  return COW_OK;
}

CowStorage *
cow_storage_new (size_t nbytes, CowAllocator *allocator, CowError *error)
{
  CowStorage *storage = malloc (sizeof *storage);
  if (storage == NULL)
    {
      cow_set_error (error, COW_ERROR_NO_MEMORY, "cannot allocate a storage object");
      return NULL;
    }
  if (cow_storage_init_new (storage, storage, nbytes, allocator, COW_OP_EMPTY,
                            error) != COW_OK)
    {
      free (storage);
      return NULL;
    }
  return storage;
}

CowStorage *
cow_storage_new_foreign_on (void *data, size_t nbytes, CowDevice device, void *context,
                            CowDeleterFn deleter, CowError *error)
{
  if (data == NULL && nbytes > 0)
    {
      cow_set_error (error, COW_ERROR_INVALID_ARGUMENT,
                     "foreign memory of %zu bytes has a NULL data pointer", nbytes);
      return NULL;
    }
  bool valid = device.type == COW_DEVICE_CPU
                 ? device.index == 0
                 : device.type == COW_DEVICE_CUDA && device.index >= 0
                     && device.index < COW_CUDA_MAX_DEVICES;
  if (!valid)
    {
      char name[COW_DEVICE_NAME_MAX];
      cow_set_error (error, COW_ERROR_INVALID_ARGUMENT,
                     "foreign memory on %s: no such device (cpu, or cuda:0 to cuda:%d)",
                     cow_device_format (device, name, sizeof name), COW_CUDA_MAX_DEVICES - 1);
      return NULL;
    }
  CowStorage *storage = storage_alloc (nbytes, device, error);
  if (storage == NULL)
    return NULL;
  storage->data = data;
  storage->owner = (CowDataPtr) { .data = data, .context = context, .deleter = deleter };
  storage->allocation_id = cow_next_id ();
  COW_TRACE (COW_EVENT_ALLOCATION_NEW, COW_OP_FROM_FOREIGN, COW_ALLOCATION_FOREIGN,
             storage->allocation_id, nbytes, (uint64_t) (uintptr_t) data,
             (uint64_t) device.index, 0);
  COW_TRACE (COW_EVENT_STORAGE_NEW, COW_OP_FROM_FOREIGN, cow_trace_device (device),
             storage->id, storage->allocation_id, nbytes, 0, 0);
  return storage;
}

CowStorage *
cow_storage_new_foreign (void *data, size_t nbytes, void *context,
                         CowDeleterFn deleter, CowError *error)
{
  return cow_storage_new_foreign_on (data, nbytes, cow_device_cpu (), context, deleter,
                                     error);
}

CowAllocator *
cow_storage_result_allocator (const CowStorage *storage, CowError *error)
{
  if (storage->allocator != NULL)
    return storage->allocator;
  if (storage->device.type == COW_DEVICE_CUDA)
    return cow_cuda_allocator (storage->device.index, error);
  return cow_cpu_allocator ();
}

CowStorage *
cow_storage_ref (CowStorage *storage)
{
  if (storage != NULL)
    /* Relaxed: the caller already holds a reference. */
    atomic_fetch_add_explicit (&storage->refcount, 1, memory_order_relaxed);
  return storage;
}

static void
release_owner (CowStorage *storage)
{
  if (storage->owner.deleter != NULL)
    storage->owner.deleter (storage->owner.context);
  COW_TRACE (COW_EVENT_ALLOCATION_FREE, COW_OP_NONE,
             cow_allocation_kind (storage->allocator), storage->allocation_id,
             storage->nbytes, (uint64_t) (uintptr_t) storage->data,
             (uint64_t) storage->device.index, 0);
}

void
cow_storage_unref (CowStorage *storage)
{
  if (storage == NULL)
    return;
  if (!cow_release_ref (&storage->refcount))
    return;

  CowContext *context = atomic_load_explicit (&storage->cow, memory_order_relaxed);
  uint64_t context_id = context != NULL ? context->id : 0;
  if (context != NULL)
    cow_context_unref (context, storage->id, storage->stream);
  else
    release_owner (storage);
  cow_cuda_stream_unref (storage->stream);
  CowSimState *sim = atomic_load_explicit (&storage->sim, memory_order_relaxed);
  if (COW_UNLIKELY (sim != NULL))
    cow_sim_state_free (sim);
  COW_TRACE (COW_EVENT_STORAGE_FREE, COW_OP_NONE, 0, storage->id,
             storage->allocation_id, storage->nbytes, context_id, 0);
  pthread_mutex_destroy (&storage->lock);
  free (storage->block);
}

size_t cow_storage_nbytes (const CowStorage *storage) { return storage->nbytes; }
uint64_t cow_storage_id (const CowStorage *storage) { return storage->id; }
uint64_t cow_storage_allocation_id (const CowStorage *storage) { return storage->allocation_id; }
const void *cow_storage_const_data (const CowStorage *storage) { return storage->data; }

int64_t
cow_storage_refcount (const CowStorage *storage)
{
  return atomic_load_explicit (&storage->refcount, memory_order_relaxed);
}

bool
cow_storage_is_cow (const CowStorage *storage)
{
  return cow_storage_needs_materialize (storage);
}

int64_t
cow_storage_context_refcount (const CowStorage *storage)
{
  CowContext *context = atomic_load_explicit (&storage->cow, memory_order_acquire);
  return context ? atomic_load_explicit (&context->refcount, memory_order_relaxed) : 0;
}

uint64_t
cow_storage_context_id (const CowStorage *storage)
{
  CowContext *context = atomic_load_explicit (&storage->cow, memory_order_acquire);
  return context ? context->id : 0;
}

CowEagerReason
cow_storage_wrap_refusal (const CowStorage *storage)
{
  if (storage->allocator == NULL)
    return COW_EAGER_FOREIGN_DATA_PTR;
  if (!storage->allocator->is_simple_data_ptr (storage->allocator, &storage->owner))
    return COW_EAGER_NOT_SIMPLE;
  return 0;
}

/* Under @storage's lock. */
static CowStatus
init_lazy_clone_locked (CowStorage *result, void *block, CowStorage *storage,
                        CowEagerReason *refusal_out, CowError *error)
{
  CowContext *context = atomic_load_explicit (&storage->cow, memory_order_relaxed);
  if (context == NULL)
    {
      CowEagerReason refusal = cow_storage_wrap_refusal (storage);
      if (refusal != 0)
        {
          if (refusal_out != NULL)
            *refusal_out = refusal;
          return cow_set_error (error, COW_ERROR_NOT_SUPPORTED,
                                "lazy_clone: storage %" PRIu64 " %s", storage->id,
                                refusal == COW_EAGER_FOREIGN_DATA_PTR
                                  ? "wraps foreign memory with its own deleter"
                                  : "has a data pointer its allocator cannot share");
        }

      /* Device bytes: later copies on other streams must wait for the
       * writes enqueued so far on the source's stream. */
      CowDeviceSync *device_sync = NULL;
      if (cow_storage_is_device (storage))
        {
          COW_ENSURE_ERROR (error);
          device_sync = cow_device_sync_new (storage->stream, error);
          if (device_sync == NULL)
            return error->code;
        }
      /* Turn the source copy-on-write in place: its bytes move into a new
       * context.  Concurrent first clones of this storage are serialised
       * by its lock, so they agree on one context.  Release: readers of
       * `cow` without the lock (introspection) see the context's fields. */
      context = cow_context_new (storage->data, storage->owner, storage->nbytes,
                                 storage->allocation_id, storage->allocator,
                                 device_sync);
      if (context == NULL)
        return cow_set_error (error, COW_ERROR_NO_MEMORY,
                              "lazy_clone: cannot allocate a context");
      atomic_store_explicit (&storage->cow, context, memory_order_release);
      COW_TRACE (COW_EVENT_CONTEXT_NEW, COW_OP_LAZY_CLONE, 0, context->id,
                 storage->id, 1, context->allocation_id, 0);
    }

  storage_init (result, block, storage->nbytes, storage->allocator, storage->device);
  cow_context_ref (context, result->id);
  result->data = storage->data;
  result->allocation_id = context->allocation_id;
  atomic_init (&result->cow, context);
  COW_TRACE (COW_EVENT_STORAGE_NEW, COW_OP_LAZY_CLONE, cow_trace_device (result->device),
             result->id, result->allocation_id, result->nbytes, context->id, storage->id);
  return COW_OK;
}

/* The source's lock keeps a concurrent cow_ipc_send() or materialization
 * of it from changing its owner or context while they are read here.  A
 * context with refcount ≥ 1 cannot vanish while it is held. */
CowStatus
cow_storage_init_lazy_clone (CowStorage *result, void *block, CowStorage *storage,
                             CowEagerReason *refusal, CowError *error)
{
  if (refusal != NULL)
    *refusal = 0;
  pthread_mutex_lock (&storage->lock);
  CowStatus status = init_lazy_clone_locked (result, block, storage, refusal, error);
  pthread_mutex_unlock (&storage->lock);
  return status;
}

CowStorage *
cow_storage_lazy_clone (CowStorage *storage, CowError *error)
{
  if (storage == NULL)
    {
      cow_set_error (error, COW_ERROR_INVALID_ARGUMENT, "lazy_clone: storage is NULL");
      return NULL;
    }
  CowStorage *result = malloc (sizeof *result);
  if (result == NULL)
    {
      cow_set_error (error, COW_ERROR_NO_MEMORY, "cannot allocate a storage object");
      return NULL;
    }
  if (cow_storage_init_lazy_clone (result, result, storage, NULL, error) != COW_OK)
    {
      free (result);
      return NULL;
    }
  return result;
}

/* The last reference keeps the original bytes.  @context's refcount is
 * already zero. */
static int64_t
steal (CowStorage *storage, CowContext *context)
{
  storage->data = context->data;
  storage->owner = context->owner;
  storage->allocation_id = context->allocation_id;
  /* Release: pairs with cow_storage_needs_materialize()'s acquire. */
  atomic_store_explicit (&storage->cow, NULL, memory_order_release);
  return cow_context_finish_steal (context, storage->id, storage->stream);
}

static void
finish (CowStorage *storage, uint64_t context_id, CowOp op, uint32_t kind,
        int64_t waited)
{
  COW_TRACE (COW_EVENT_MATERIALIZE_END, op, kind | cow_trace_device (storage->device),
             storage->id, context_id, storage->allocation_id, storage->nbytes,
             (uint64_t) waited);
}

/* Materializes a storage that is the context's only sharer: it takes
 * the bytes over.  Nothing can add a sharer meanwhile: a lazy clone of
 * this storage waits for its lock, which the caller holds. */
static void
steal_unique (CowStorage *storage, CowContext *context, CowOp op, int64_t waited)
{
  uint64_t context_id = context->id;
  atomic_store_explicit (&context->refcount, 0, memory_order_relaxed);
  COW_TRACE (COW_EVENT_CONTEXT_UNREF, op, 0, context_id, storage->id, 0,
             context->allocation_id, 0);
  waited += steal (storage, context);
  finish (storage, context_id, op, COW_MATERIALIZE_STEAL, waited);
}

/* Copies the context's bytes into @dst with the storage's allocator.
 * Device bytes: the copy is enqueued on the storage's stream, after the
 * writes that preceded the first lazy clone. */
static CowStatus
copy_shared_bytes (CowStorage *storage, CowContext *context, void *dst, CowError *error)
{
  CowAllocator *allocator = storage->allocator;
  if (storage->stream == NULL)
    return allocator->copy_data (allocator, dst, context->data, storage->nbytes, error);
  if (context->device_sync != NULL)
    {
      CowStatus status = cow_device_sync_wait_ready (context->device_sync, storage->stream, error);
      if (status != COW_OK)
        return status;
    }
  CowCudaStream *previous = cow_cuda_exchange_current_stream (storage->stream);
  CowStatus status = allocator->copy_data (allocator, dst, context->data, storage->nbytes, error);
  cow_cuda_exchange_current_stream (previous);
  return status;
}

/* Under the storage's lock, which keeps a lazy clone of this storage (or
 * cow_ipc_send() of it) on another thread from adding a sharer or
 * reading the owner meanwhile; other storages sharing the context are
 * not held up. */
CowStatus
cow_storage_materialize_locked (CowStorage *storage, CowOp op, uint64_t tensor_id,
                                CowError *error)
{
  CowContext *context = atomic_load_explicit (&storage->cow, memory_order_relaxed);
  if (context == NULL)
    return COW_OK; /* another thread materialized it first */
  /* Saved for the end event: the context may be gone by then. */
  uint64_t context_id = context->id;

  /* BEGIN … END bracket the device copy on this thread: a CUDA tracer
   * correlating by thread and time (CUPTI external correlation pushed on
   * BEGIN) sees the cudaMemcpyAsync inside. */
  COW_TRACE (COW_EVENT_MATERIALIZE_BEGIN, op, cow_trace_device (storage->device),
             storage->id, context->id, tensor_id, storage->nbytes, 0);

  /* Acquire pairs with the other storages' release decrements. */
  if (atomic_load_explicit (&context->refcount, memory_order_acquire) == 1)
    {
      steal_unique (storage, context, op, 0);
      return COW_OK;
    }

  /* Fallible steps first: on failure the storage is still a lazy copy. */
  CowAllocator *allocator = storage->allocator;
  CowDataPtr fresh;
  CowStatus status = storage_allocate (storage, &fresh, error);
  if (status != COW_OK)
    {
      finish (storage, context_id, op, COW_MATERIALIZE_FAILED, 0);
      return status;
    }
  uint64_t fresh_id = cow_next_id ();

  int64_t waited = 0;
  if (pthread_rwlock_tryrdlock (&context->lock) != 0)
    {
      int64_t start = cow_trace_now_ns ();
      pthread_rwlock_rdlock (&context->lock);
      waited = cow_trace_now_ns () - start;
    }
  if (atomic_load_explicit (&context->refcount, memory_order_acquire) == 1)
    {
      /* The other sharers left while we allocated: steal, don't copy. */
      pthread_rwlock_unlock (&context->lock);
      if (fresh.deleter != NULL)
        fresh.deleter (fresh.context);
      steal_unique (storage, context, op, waited);
      return COW_OK;
    }
  status = copy_shared_bytes (storage, context, fresh.data, error);
  if (status != COW_OK)
    {
      pthread_rwlock_unlock (&context->lock);
      if (fresh.deleter != NULL)
        fresh.deleter (fresh.context);
      finish (storage, context_id, op, COW_MATERIALIZE_FAILED, waited);
      return status;
    }
  /* Still under the shared lock, so a sharer that drops the count to
   * zero waits for this copy before it steals or frees the bytes (on the
   * device: for the release event after the enqueued copy). */
  if (context->device_sync != NULL)
    cow_device_sync_release (context->device_sync, storage->stream);
  int64_t refcount = atomic_fetch_sub_explicit (&context->refcount, 1,
                                                memory_order_acq_rel) - 1;
  COW_TRACE (COW_EVENT_CONTEXT_UNREF, op, 0, context->id, storage->id,
             (uint64_t) refcount, context->allocation_id, 0);
  pthread_rwlock_unlock (&context->lock);

  if (refcount == 0)
    {
      /* Every other sharer left while we copied: we are the last, so the
       * copy was unneeded.  Keep the original bytes, as a steal would. */
      if (fresh.deleter != NULL)
        fresh.deleter (fresh.context);
      waited += steal (storage, context);
      finish (storage, context_id, op,
              COW_MATERIALIZE_STEAL | COW_MATERIALIZE_FLAG_COPY_DISCARDED, waited);
      return COW_OK;
    }

  storage->data = fresh.data;
  storage->owner = fresh;
  storage->allocation_id = fresh_id;
  /* Release: pairs with cow_storage_needs_materialize()'s acquire. */
  atomic_store_explicit (&storage->cow, NULL, memory_order_release);
  COW_TRACE (COW_EVENT_ALLOCATION_NEW, op, cow_allocation_kind (allocator), fresh_id,
             storage->nbytes, (uint64_t) (uintptr_t) fresh.data,
             cow_allocation_device (allocator), 0);
  finish (storage, context_id, op, COW_MATERIALIZE_COPY, waited);
  return COW_OK;
}

CowStatus
cow_storage_materialize (CowStorage *storage, CowOp op, uint64_t tensor_id,
                         CowError *error)
{
  pthread_mutex_lock (&storage->lock);
  CowStatus status = cow_storage_materialize_locked (storage, op, tensor_id, error);
  pthread_mutex_unlock (&storage->lock);
  return status;
}

void *
cow_storage_mutable_data (CowStorage *storage, CowError *error)
{
  if (COW_UNLIKELY (cow_storage_needs_materialize (storage))
      && cow_storage_materialize (storage, COW_OP_MUTABLE_DATA, 0, error) != COW_OK)
    return NULL;
  return storage->data;
}
