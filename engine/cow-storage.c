/* cow-storage.c — storages, lazy sharing of their bytes and
 * materialization.
 *
 * Materialization follows PyTorch's 2026 order (cow-lazy.h, README.md
 * "Thread safety"):
 * every step that can fail (allocating, copying) runs before the
 * context's refcount drops, so a failure leaves a valid lazy copy.  The
 * copy runs under the context's shared lock and the decrement happens
 * while it is still held; whoever drops the count to zero takes the
 * exclusive lock, which waits for every copy in flight, and steals the
 * bytes.  So when every sharer writes, exactly one of them steals.
 *
 * Each storage's own lock (a bit of its state word, see
 * cow-storage-private.h) serialises what changes that storage's owner or
 * context: its first lazy clone, its materialization and cow_ipc_send()
 * of it.  Later lazy clones take no lock.  Lazy clone and
 * materialization are a read and a write, which the user keeps apart
 * anyway (README.md, "Thread safety"), but a send is a read to the user that
 * materializes and rewraps the owner behind their back.  Sharers on
 * other storages never wait for each other's storage locks.
 */
#include "cow-storage-private.h"
#include "cow-simulate-private.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>

/* ---- the storage's lock ------------------------------------------------ */

/* Where threads that wait for a storage's lock sleep: one place for all
 * storages, since the lock is taken only by first clones,
 * materializations and sends, and is held briefly but for a copy. */
static pthread_mutex_t waiting_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t waiting_cond = PTHREAD_COND_INITIALIZER;

/* Sleeps until @storage's lock is free (or may be). */
static void
wait_unlocked (CowStorage *storage)
{
  /* A short spin first: a first clone holds the lock for a malloc. */
  for (int i = 0; i < 64; i++)
    {
      if (!(atomic_load_explicit (&storage->cow_state, memory_order_relaxed) & COW_STATE_LOCKED))
        return;
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause ();
#endif
    }
  pthread_mutex_lock (&waiting_lock);
  uintptr_t state = atomic_load_explicit (&storage->cow_state, memory_order_relaxed);
  while (state & COW_STATE_LOCKED)
    {
      /* Relaxed: the flag only asks the owner to wake us; waiting_lock
       * orders the wake-up after our wait begins. */
      if (!(state & COW_STATE_WAITERS)
          && !atomic_compare_exchange_weak_explicit (&storage->cow_state, &state,
                                                     state | COW_STATE_WAITERS,
                                                     memory_order_relaxed, memory_order_relaxed))
        continue;
      pthread_cond_wait (&waiting_cond, &waiting_lock);
      state = atomic_load_explicit (&storage->cow_state, memory_order_relaxed);
    }
  pthread_mutex_unlock (&waiting_lock);
}

void
cow_storage_lock (CowStorage *storage)
{
  uintptr_t state = atomic_load_explicit (&storage->cow_state, memory_order_relaxed);
  for (;;)
    {
      if (state & COW_STATE_LOCKED)
        {
          wait_unlocked (storage);
          state = atomic_load_explicit (&storage->cow_state, memory_order_relaxed);
          continue;
        }
      /* Acquire: pairs with the release of the previous unlock. */
      if (atomic_compare_exchange_weak_explicit (&storage->cow_state, &state,
                                                 state | COW_STATE_LOCKED,
                                                 memory_order_acquire, memory_order_relaxed))
        return;
    }
}

void
cow_storage_unlock (CowStorage *storage)
{
  /* Release: what the owner changed (data, owner, context) is visible to
   * whoever next reads the word with acquire. */
  uintptr_t old = atomic_fetch_and_explicit (&storage->cow_state, ~COW_STATE_FLAGS,
                                             memory_order_release);
  if (old & COW_STATE_WAITERS)
    {
      pthread_mutex_lock (&waiting_lock);
      pthread_cond_broadcast (&waiting_cond);
      pthread_mutex_unlock (&waiting_lock);
    }
}

void
cow_storage_set_context_locked (CowStorage *storage, CowContext *context)
{
  /* A CAS keeps the flags: a waiter may add COW_STATE_WAITERS meanwhile.
   * Relaxed: the unlock publishes it. */
  uintptr_t state = atomic_load_explicit (&storage->cow_state, memory_order_relaxed);
  while (!atomic_compare_exchange_weak_explicit (&storage->cow_state, &state,
                                                 (uintptr_t) context | (state & COW_STATE_FLAGS),
                                                 memory_order_relaxed, memory_order_relaxed))
    ;
}

/* ---- storages ------------------------------------------------------------ */

static void
storage_init (CowStorage *storage, void *block, size_t nbytes, CowAllocator *allocator,
              CowDevice device)
{
  atomic_init (&storage->refcount, 1);
  storage->id = cow_next_id ();
  storage->nbytes = nbytes;
  storage->allocator = allocator;
  storage->device = device;
  storage->data = NULL;
  storage->allocation_id = 0;
  storage->owner = (CowDataPtr) { 0 };
  atomic_init (&storage->cow_state, 0);
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
  CowStorage *storage = cow_pool_alloc (COW_POOL_STORAGE);
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
  CowStorage *storage = cow_pool_alloc (COW_POOL_STORAGE);
  if (storage == NULL)
    {
      cow_set_error (error, COW_ERROR_NO_MEMORY, "cannot allocate a storage object");
      return NULL;
    }
  if (cow_storage_init_new (storage, storage, nbytes, allocator, COW_OP_EMPTY,
                            error) != COW_OK)
    {
      cow_pool_free (COW_POOL_STORAGE, storage);
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

/* Gives back the memory of a freed storage (and of its tensor, when they
 * were made together). */
static void
free_block (CowStorage *storage)
{
  if (storage->block == (void *) storage)
    cow_pool_free (COW_POOL_STORAGE, storage);
  else
    cow_pool_free (COW_POOL_TENSOR_BLOCK, storage->block);
}

/* Frees a storage, in every case.  Not inlined, so that the common case
 * in cow_storage_free() needs no stack frame. */
static void __attribute__ ((noinline))
storage_free_general (CowStorage *storage)
{
  /* Relaxed: the last reference's acquire ordered every other holder's
   * use, unlocks included, before this. */
  CowContext *context = cow_storage_context_locked (storage);
  uint64_t context_id = context != NULL ? context->id : 0;
  const CowTraceSink *sink = cow_trace_sink ();
  if (context != NULL)
    cow_context_unref (context, storage->id, storage->stream, sink);
  else
    release_owner (storage);
  cow_cuda_stream_unref (storage->stream);
  CowSimState *sim = atomic_load_explicit (&storage->sim, memory_order_relaxed);
  if (COW_UNLIKELY (sim != NULL))
    cow_sim_state_free (sim);
  COW_TRACE_TO (sink, COW_EVENT_STORAGE_FREE, COW_OP_NONE, 0, storage->id,
                storage->allocation_id, storage->nbytes, context_id, 0);
  free_block (storage);
}

/* The fast path's last reference to the bytes: free them, then the
 * storage. */
static void COW_COLD
free_last_sharer (CowStorage *storage, CowContext *context)
{
  cow_context_free_last (context, storage->id, NULL);
  free_block (storage);
}

void
cow_storage_free (CowStorage *storage)
{
  /* The common case — a lazy copy of host bytes, no sink, no simulate
   * state — is storage_free_general() without its events and its device
   * and simulate steps: a leaf whose calls are all tail calls.  (No
   * stream means host bytes, whose context has no device sync.) */
  CowContext *context = cow_storage_context_locked (storage);
  if (COW_LIKELY (context != NULL && storage->stream == NULL
                  && atomic_load_explicit (&storage->sim, memory_order_relaxed) == NULL
                  && cow_trace_sink () == NULL))
    {
      /* As in cow_context_unref(). */
      if (COW_UNLIKELY (atomic_fetch_sub_explicit (&context->refcount, 1, memory_order_acq_rel)
                        == 1))
        free_last_sharer (storage, context);
      else
        free_block (storage);
      return;
    }
  storage_free_general (storage);
}

void
cow_storage_unref (CowStorage *storage)
{
  if (storage != NULL)
    cow_storage_release (storage);
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

/* Introspection reads the word with acquire: the context's fields were
 * published with it. */
static CowContext *
current_context (const CowStorage *storage)
{
  return cow_state_context (atomic_load_explicit (&storage->cow_state, memory_order_acquire));
}

bool
cow_storage_is_cow (const CowStorage *storage)
{
  return current_context (storage) != NULL;
}

int64_t
cow_storage_context_refcount (const CowStorage *storage)
{
  CowContext *context = current_context (storage);
  return context ? atomic_load_explicit (&context->refcount, memory_order_relaxed) : 0;
}

uint64_t
cow_storage_context_id (const CowStorage *storage)
{
  CowContext *context = current_context (storage);
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

/* Under @source's lock: the first lazy clone of a storage that owns its
 * bytes moves them into a new context; a storage that is shared already
 * (a lock-free clone lost a race with a send, a materialization or
 * another first clone) just gets one more sharer. */
static CowStatus
init_lazy_clone_locked (CowStorage *result, void *block, CowStorage *source,
                        CowEagerReason *refusal_out, CowError *error)
{
  CowContext *context = cow_storage_context_locked (source);
  if (context == NULL)
    {
      CowEagerReason refusal = cow_storage_wrap_refusal (source);
      if (refusal != 0)
        {
          if (refusal_out != NULL)
            *refusal_out = refusal;
          return cow_set_error (error, COW_ERROR_NOT_SUPPORTED,
                                "lazy_clone: storage %" PRIu64 " %s", source->id,
                                refusal == COW_EAGER_FOREIGN_DATA_PTR
                                  ? "wraps foreign memory with its own deleter"
                                  : "has a data pointer its allocator cannot share");
        }

      /* Device bytes: later copies on other streams must wait for the
       * writes enqueued so far on the source's stream. */
      CowDeviceSync *device_sync = NULL;
      if (cow_storage_is_device (source))
        {
          COW_ENSURE_ERROR (error);
          device_sync = cow_device_sync_new (source->stream, error);
          if (device_sync == NULL)
            return error->code;
        }
      /* Turn the source copy-on-write in place: its bytes move into a new
       * context.  Concurrent first clones of this storage are serialised
       * by its lock, so they agree on one context; the unlock publishes
       * it. */
      context = cow_context_new (source->data, source->owner, source->nbytes,
                                 source->allocation_id, source->allocator,
                                 device_sync);
      if (context == NULL)
        return cow_set_error (error, COW_ERROR_NO_MEMORY,
                              "lazy_clone: cannot allocate a context");
      cow_storage_set_context_locked (source, context);
      COW_TRACE (COW_EVENT_CONTEXT_NEW, COW_OP_LAZY_CLONE, 0, context->id,
                 source->id, 1, context->allocation_id, 0);
    }

  /* The source's reference keeps the count above 0, and only its lock's
   * owner (us) could drop it: this cannot fail. */
  int64_t refcount = 0;
  cow_context_try_ref (context, &refcount);
  cow_storage_init_shared (result, block, source, context, refcount, cow_trace_sink ());
  return COW_OK;
}

CowStatus
cow_storage_init_lazy_clone (CowStorage *result, void *block, CowStorage *source,
                             CowEagerReason *refusal, CowError *error)
{
  if (refusal != NULL)
    *refusal = 0;
  if (cow_storage_try_share (result, block, source, cow_trace_sink ()))
    return COW_OK;
  cow_storage_lock (source);
  CowStatus status = init_lazy_clone_locked (result, block, source, refusal, error);
  cow_storage_unlock (source);
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
  CowStorage *result = cow_pool_alloc (COW_POOL_STORAGE);
  if (result == NULL)
    {
      cow_set_error (error, COW_ERROR_NO_MEMORY, "cannot allocate a storage object");
      return NULL;
    }
  if (cow_storage_init_lazy_clone (result, result, storage, NULL, error) != COW_OK)
    {
      cow_pool_free (COW_POOL_STORAGE, result);
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
  cow_storage_set_context_locked (storage, NULL);
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

/* Materializes a storage that was the context's only sharer: it takes
 * the bytes over.  cow_context_take_unique() dropped the count from 1 to
 * 0, so no lazy clone can add a sharer any more. */
static void
steal_unique (CowStorage *storage, CowContext *context, CowOp op, int64_t waited)
{
  uint64_t context_id = context->id;
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

/* Under the storage's lock, which keeps a first lazy clone of this
 * storage (or cow_ipc_send() of it) on another thread from reading the
 * owner meanwhile; a lock-free clone of it is either counted before the
 * steal-or-copy CAS below or retries behind the lock
 * (cow-storage-private.h).  Other storages sharing the context are not
 * held up. */
CowStatus
cow_storage_materialize_locked (CowStorage *storage, CowOp op, uint64_t tensor_id,
                                CowError *error)
{
  CowContext *context = cow_storage_context_locked (storage);
  if (context == NULL)
    return COW_OK; /* another thread materialized it first */
  /* Saved for the end event: the context may be gone by then. */
  uint64_t context_id = context->id;

  /* BEGIN … END bracket the device copy on this thread: a CUDA tracer
   * correlating by thread and time (CUPTI external correlation pushed on
   * BEGIN) sees the cudaMemcpyAsync inside. */
  COW_TRACE (COW_EVENT_MATERIALIZE_BEGIN, op, cow_trace_device (storage->device),
             storage->id, context->id, tensor_id, storage->nbytes, 0);

  if (cow_context_take_unique (context))
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
  if (cow_context_take_unique (context))
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
  cow_storage_set_context_locked (storage, NULL);
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
  cow_storage_lock (storage);
  CowStatus status = cow_storage_materialize_locked (storage, op, tensor_id, error);
  cow_storage_unlock (storage);
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
