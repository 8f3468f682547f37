/* cow-lazy-clone.c — lazy clones of tensors (cow-lazy.h says what they
 * promise): a new storage sharing the source's bytes through a copy-on-write
 * context, or an eager copy with a stated reason when the bytes cannot be
 * shared. */
#include "cow-lazy-private.h"
#include "cow-lazy.h"

/* The eager fallback when @tensor's bytes cannot be shared (@refusal). */
static CowTensor * COW_COLD
clone_eagerly (CowTensor *tensor, int ndim, const int64_t *sizes, CowOp op,
               CowEagerReason refusal, CowError *error)
{
  cow_error_clear (error);
  CowTensor *copy = cow_tensor_clone_as (tensor, ndim, sizes, op, error);
  if (copy != NULL)
    COW_TRACE (COW_EVENT_LAZY_CLONE_EAGER, op, refusal, tensor->id, copy->id,
               tensor->storage->id, copy->storage->id, (uint64_t) cow_tensor_nbytes (copy));
  return copy;
}

/* The lazy clone itself, inlined into both entry points. */
static inline __attribute__ ((always_inline)) CowTensor *
lazy_clone_as (CowTensor *tensor, int ndim, const int64_t *sizes, const int64_t *strides,
               CowOp op, CowError *error)
{
  CowStorage *source = tensor->storage;
  /* One load for all the operation's trace points. */
  const CowTraceSink *sink = cow_trace_sink ();

  /* One object for the new tensor and its storage, from the thread's
   * free list: a lazy clone costs less than a bare malloc + free. */
  CowTensorBlock *block = cow_pool_alloc (COW_POOL_TENSOR_BLOCK);
  if (COW_UNLIKELY (block == NULL))
    {
      cow_set_error (error, COW_ERROR_NO_MEMORY, "lazy_clone: cannot allocate a tensor object");
      return NULL;
    }
  /* The lock-free path when the source is copy-on-write already; else
   * whether the bytes can be shared is decided under the source's lock,
   * since a concurrent cow_ipc_send() changes the answer. */
  if (COW_UNLIKELY (!cow_storage_try_share (&block->storage, block, source, sink)))
    {
      CowEagerReason refusal = 0;
      if (cow_storage_init_lazy_clone (&block->storage, block, source, &refusal, error)
          != COW_OK)
        {
          cow_pool_free (COW_POOL_TENSOR_BLOCK, block);
          return refusal != 0 ? clone_eagerly (tensor, ndim, sizes, op, refusal, error) : NULL;
        }
    }
  cow_tensor_init (&block->tensor, &block->storage, ndim, sizes, strides,
                   tensor->storage_offset, tensor->dtype, op, tensor, NULL, sink);
  COW_TRACE_TO (sink, COW_EVENT_LAZY_CLONE, op, cow_trace_device (source->device), tensor->id,
                block->tensor.id, source->id, block->storage.id,
                cow_storage_context_id (&block->storage));
  return &block->tensor;
}

CowTensor *
cow_tensor_lazy_clone_as (CowTensor *tensor, int ndim, const int64_t *sizes,
                          const int64_t *strides, CowOp op, CowError *error)
{
  return lazy_clone_as (tensor, ndim, sizes, strides, op, error);
}

CowTensor *
cow_tensor_lazy_clone (CowTensor *tensor, CowError *error)
{
  if (COW_UNLIKELY (tensor == NULL))
    {
      cow_set_error (error, COW_ERROR_INVALID_ARGUMENT, "lazy_clone: tensor is NULL");
      return NULL;
    }
  return lazy_clone_as (tensor, tensor->ndim, tensor->sizes, tensor->strides,
                        COW_OP_LAZY_CLONE, error);
}
