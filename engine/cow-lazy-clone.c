/* cow-lazy-clone.c — lazy clones of tensors (cow-design.md, "Implementation
 * plan"): a new storage sharing the source's bytes through a copy-on-write
 * context, or an eager copy with a stated reason when the bytes cannot be
 * shared. */
#include "cow-lazy-private.h"
#include "cow-lazy.h"

#include <stdlib.h>

CowTensor *
cow_tensor_lazy_clone_as (CowTensor *tensor, int ndim, const int64_t *sizes,
                          const int64_t *strides, CowOp op, CowError *error)
{
  CowStorage *source = tensor->storage;

  /* One allocation for the new tensor and its storage keeps a lazy clone
   * within a small factor of a bare malloc. */
  CowTensorBlock *block = malloc (sizeof *block);
  if (block == NULL)
    {
      cow_set_error (error, COW_ERROR_NO_MEMORY, "lazy_clone: cannot allocate a tensor object");
      return NULL;
    }
  /* Whether the bytes can be shared is decided under the source's lock,
   * since a concurrent cow_ipc_send() changes the answer. */
  CowEagerReason refusal = 0;
  if (cow_storage_init_lazy_clone (&block->storage, block, source, &refusal, error) != COW_OK)
    {
      free (block);
      if (refusal == 0)
        return NULL;
      cow_error_clear (error);
      CowTensor *copy = cow_tensor_clone_as (tensor, ndim, sizes, op, error);
      if (copy != NULL)
        COW_TRACE (COW_EVENT_LAZY_CLONE_EAGER, op, refusal, tensor->id, copy->id,
                   source->id, copy->storage->id, (uint64_t) cow_tensor_nbytes (copy));
      return copy;
    }
  cow_tensor_init (&block->tensor, &block->storage, ndim, sizes, strides,
                   tensor->storage_offset, tensor->dtype, op, tensor, NULL);
  COW_TRACE (COW_EVENT_LAZY_CLONE, op, cow_trace_device (source->device), tensor->id,
             block->tensor.id, source->id,
             block->storage.id, cow_storage_context_id (&block->storage));
  return &block->tensor;
}

CowTensor *
cow_tensor_lazy_clone (CowTensor *tensor, CowError *error)
{
  if (tensor == NULL)
    {
      cow_set_error (error, COW_ERROR_INVALID_ARGUMENT, "lazy_clone: tensor is NULL");
      return NULL;
    }
  return cow_tensor_lazy_clone_as (tensor, tensor->ndim, tensor->sizes,
                                   tensor->strides, COW_OP_LAZY_CLONE, error);
}
