/* cow-lazy-clone.c — lazy clones of tensors (cow-design.md, "Implementation
 * plan"): a new storage sharing the source's bytes through a copy-on-write
 * context, or an eager copy with a stated reason when the bytes cannot be
 * shared. */
#include "cow-lazy-private.h"
#include "cow-lazy.h"

CowTensor *
cow_tensor_lazy_clone_as (CowTensor *tensor, int ndim, const int64_t *sizes,
                          const int64_t *strides, CowOp op, CowError *error)
{
  CowStorage *source = tensor->storage;
  CowEagerReason refusal = cow_storage_is_cow (source) ? 0 : cow_storage_wrap_refusal (source);
  if (refusal != 0)
    {
      CowTensor *copy = cow_tensor_clone_as (tensor, ndim, sizes, op, error);
      if (copy != NULL)
        COW_TRACE (COW_EVENT_LAZY_CLONE_EAGER, op, refusal, tensor->id, copy->id,
                   source->id, copy->storage->id, (uint64_t) cow_tensor_nbytes (copy));
      return copy;
    }

  CowStorage *shared = cow_storage_lazy_clone (source, error);
  if (shared == NULL)
    return NULL;
  CowTensor *result = cow_tensor_make (shared, ndim, sizes, strides,
                                       tensor->storage_offset, tensor->dtype, op,
                                       tensor, NULL, error);
  cow_storage_unref (shared); /* the tensor holds its own reference */
  if (result != NULL)
    COW_TRACE (COW_EVENT_LAZY_CLONE, op, 0, tensor->id, result->id, source->id,
               shared->id, cow_storage_context_id (shared));
  return result;
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
