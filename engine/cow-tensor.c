/* cow-tensor.c — tensors: construction, layout and element access. */
#include "cow-tensor-private.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

CowStatus
cow_check_sizes (const char *what, int ndim, const int64_t *sizes,
                 int64_t *numel, CowError *error)
{
  if (ndim < 0 || ndim > COW_MAX_DIMS)
    return cow_set_error (error, COW_ERROR_INVALID_ARGUMENT,
                          "%s: %d dimensions; tensors have 0 to %d", what, ndim,
                          COW_MAX_DIMS);
  if (ndim > 0 && sizes == NULL)
    return cow_set_error (error, COW_ERROR_INVALID_ARGUMENT, "%s: sizes is NULL", what);
  int64_t n = 1;
  for (int d = 0; d < ndim; d++)
    {
      if (sizes[d] < 0)
        return cow_set_error (error, COW_ERROR_INVALID_ARGUMENT,
                              "%s: size %" PRId64 " of dimension %d is negative",
                              what, sizes[d], d);
      if (cow_mul_overflows (n, sizes[d], &n))
        return cow_set_error (error, COW_ERROR_OVERFLOW,
                              "%s: the element count overflows 64 bits", what);
    }
  *numel = n;
  return COW_OK;
}

void
cow_contiguous_strides (int ndim, const int64_t *sizes, int64_t *strides)
{
  int64_t stride = 1;
  for (int d = ndim - 1; d >= 0; d--)
    {
      strides[d] = stride;
      /* A zero size must not zero the outer strides (PyTorch keeps max(1, size)). */
      stride *= sizes[d] > 1 ? sizes[d] : 1;
    }
}

CowStatus
cow_wrap_dim (const char *what, int dim, int ndim, int *out, CowError *error)
{
  int lo = ndim > 0 ? -ndim : -1, hi = ndim > 0 ? ndim - 1 : 0;
  if (dim < lo || dim > hi)
    return cow_set_error (error, COW_ERROR_OUT_OF_RANGE,
                          "%s: dimension %d is out of range for a %d-dimensional tensor",
                          what, dim, ndim);
  *out = dim < 0 ? dim + (ndim > 0 ? ndim : 1) : dim;
  return COW_OK;
}

CowTensor *
cow_tensor_make (CowStorage *storage, int ndim, const int64_t *sizes,
                 const int64_t *strides, int64_t storage_offset, CowDType dtype,
                 CowOp op, const CowTensor *base, CowShadow *shadow,
                 CowError *error)
{
  CowTensor *tensor = cow_pool_alloc (COW_POOL_TENSOR);
  if (tensor == NULL)
    {
      cow_set_error (error, COW_ERROR_NO_MEMORY, "cannot allocate a tensor object");
      return NULL;
    }
  cow_tensor_init (tensor, cow_storage_ref (storage), ndim, sizes, strides,
                   storage_offset, dtype, op, base, shadow, cow_trace_sink ());
  return tensor;
}

/* The largest element offset a layout reaches, and whether it is empty. */
static bool
layout_extent (int ndim, const int64_t *sizes, const int64_t *strides,
               int64_t offset, int64_t *max_offset, bool *empty)
{
  int64_t hi = offset;
  *empty = false;
  for (int d = 0; d < ndim; d++)
    {
      if (sizes[d] == 0)
        *empty = true;
      int64_t step;
      if (sizes[d] > 0 && (cow_mul_overflows (sizes[d] - 1, strides[d], &step)
                           || __builtin_add_overflow (hi, step, &hi)))
        return false;
    }
  *max_offset = hi;
  return true;
}

CowTensor *
cow_tensor_make_view (CowTensor *base, int ndim, const int64_t *sizes,
                      const int64_t *strides, int64_t storage_offset, CowOp op,
                      CowError *error)
{
  int64_t numel, max_offset;
  bool empty;
  if (cow_check_sizes (cow_op_name (op), ndim, sizes, &numel, error) != COW_OK)
    return NULL;
  for (int d = 0; d < ndim; d++)
    if (strides[d] < 0)
      {
        cow_set_error (error, COW_ERROR_INVALID_ARGUMENT,
                       "%s: stride %" PRId64 " of dimension %d is negative",
                       cow_op_name (op), strides[d], d);
        return NULL;
      }
  if (storage_offset < 0)
    {
      cow_set_error (error, COW_ERROR_OUT_OF_RANGE, "%s: storage offset %" PRId64 " is negative",
                     cow_op_name (op), storage_offset);
      return NULL;
    }
  if (!layout_extent (ndim, sizes, strides, storage_offset, &max_offset, &empty))
    {
      cow_set_error (error, COW_ERROR_OVERFLOW, "%s: the view's extent overflows 64 bits",
                     cow_op_name (op));
      return NULL;
    }
  int64_t capacity = (int64_t) (base->storage->nbytes / cow_tensor_itemsize (base));
  if (!empty && max_offset >= capacity)
    {
      cow_set_error (error, COW_ERROR_OUT_OF_RANGE,
                     "%s: the view reaches element %" PRId64
                     " but the storage holds %" PRId64 " elements",
                     cow_op_name (op), max_offset, capacity);
      return NULL;
    }
  return cow_tensor_make (base->storage, ndim, sizes, strides, storage_offset,
                          base->dtype, op, base, base->shadow, error);
}

/* A contiguous tensor over @storage, whose reference it takes over. */
static CowTensor *
tensor_new_contiguous (CowStorage *storage, int ndim, const int64_t *sizes,
                       CowDType dtype, CowOp op, CowError *error)
{
  int64_t strides[COW_MAX_DIMS];
  cow_contiguous_strides (ndim, sizes, strides);
  CowTensor *tensor = cow_tensor_make (storage, ndim, sizes, strides, 0, dtype,
                                       op, NULL, NULL, error);
  cow_storage_unref (storage);
  return tensor;
}

static CowStatus
check_dtype (const char *what, CowDType dtype, CowError *error)
{
  if ((unsigned) dtype >= COW_N_DTYPES)
    return cow_set_error (error, COW_ERROR_DTYPE, "%s: %d is not a dtype", what, (int) dtype);
  return COW_OK;
}

static CowStatus
byte_count (const char *what, int ndim, const int64_t *sizes, CowDType dtype,
            size_t *nbytes, CowError *error)
{
  int64_t numel = 0, bytes;
  CowStatus status = check_dtype (what, dtype, error);
  if (status == COW_OK)
    status = cow_check_sizes (what, ndim, sizes, &numel, error);
  if (status != COW_OK)
    return status;
  if (cow_mul_overflows (numel, (int64_t) cow_dtype_size (dtype), &bytes))
    return cow_set_error (error, COW_ERROR_OVERFLOW,
                          "%s: %" PRId64 " elements of %s overflow the byte count",
                          what, numel, cow_dtype_name (dtype));
  *nbytes = (size_t) bytes;
  return COW_OK;
}

CowTensor *
cow_tensor_new_fresh (int ndim, const int64_t *sizes, CowDType dtype,
                      CowAllocator *allocator, CowOp op, const CowTensor *base,
                      CowError *error)
{
  size_t nbytes;
  if (byte_count (cow_op_name (op), ndim, sizes, dtype, &nbytes, error) != COW_OK)
    return NULL;
  CowTensorBlock *block = cow_pool_alloc (COW_POOL_TENSOR_BLOCK);
  if (block == NULL)
    {
      cow_set_error (error, COW_ERROR_NO_MEMORY, "cannot allocate a tensor object");
      return NULL;
    }
  if (cow_storage_init_new (&block->storage, block, nbytes, allocator, op, error) != COW_OK)
    {
      cow_pool_free (COW_POOL_TENSOR_BLOCK, block);
      return NULL;
    }
  int64_t strides[COW_MAX_DIMS];
  cow_contiguous_strides (ndim, sizes, strides);
  cow_tensor_init (&block->tensor, &block->storage, ndim, sizes, strides, 0, dtype,
                   op, base, NULL, cow_trace_sink ());
  return &block->tensor;
}


CowTensor *
cow_tensor_empty_with_allocator (int ndim, const int64_t *sizes, CowDType dtype,
                                 CowAllocator *allocator, CowError *error)
{
  return cow_tensor_new_fresh (ndim, sizes, dtype, allocator, COW_OP_EMPTY, NULL, error);
}

CowTensor *
cow_tensor_empty (int ndim, const int64_t *sizes, CowDType dtype, CowError *error)
{
  return cow_tensor_new_fresh (ndim, sizes, dtype, NULL, COW_OP_EMPTY, NULL, error);
}

CowTensor *
cow_tensor_zeros (int ndim, const int64_t *sizes, CowDType dtype, CowError *error)
{
  CowTensor *tensor = cow_tensor_new_fresh (ndim, sizes, dtype, NULL, COW_OP_EMPTY, NULL, error);
  if (tensor != NULL)
    memset (tensor->storage->data, 0, tensor->storage->nbytes);
  return tensor;
}

CowTensor *
cow_tensor_from_data (int ndim, const int64_t *sizes, CowDType dtype,
                      const void *data, size_t nbytes, CowError *error)
{
  size_t expected;
  if (byte_count ("from_data", ndim, sizes, dtype, &expected, error) != COW_OK)
    return NULL;
  if (nbytes != expected || (data == NULL && nbytes > 0))
    {
      cow_set_error (error, COW_ERROR_SHAPE,
                     "from_data: %zu bytes given, the shape needs %zu", nbytes, expected);
      return NULL;
    }
  CowTensor *tensor = cow_tensor_new_fresh (ndim, sizes, dtype, NULL, COW_OP_FROM_DATA, NULL, error);
  if (tensor != NULL && nbytes > 0)
    memcpy (tensor->storage->data, data, nbytes);
  return tensor;
}

CowTensor *
cow_tensor_from_foreign (int ndim, const int64_t *sizes, CowDType dtype,
                         void *data, void *context, CowDeleterFn deleter,
                         CowError *error)
{
  size_t nbytes;
  if (byte_count ("from_foreign", ndim, sizes, dtype, &nbytes, error) != COW_OK)
    return NULL;
  CowStorage *storage = cow_storage_new_foreign (data, nbytes, context, deleter, error);
  if (storage == NULL)
    return NULL;
  return tensor_new_contiguous (storage, ndim, sizes, dtype, COW_OP_FROM_FOREIGN, error);
}

CowTensor *
cow_tensor_new_on_storage (CowStorage *storage, int ndim, const int64_t *sizes,
                           CowDType dtype, CowError *error)
{
  size_t nbytes;
  if (storage == NULL)
    {
      cow_set_error (error, COW_ERROR_INVALID_ARGUMENT, "new_on_storage: storage is NULL");
      return NULL;
    }
  if (byte_count ("new_on_storage", ndim, sizes, dtype, &nbytes, error) != COW_OK)
    return NULL;
  if (nbytes > storage->nbytes)
    {
      cow_set_error (error, COW_ERROR_OUT_OF_RANGE,
                     "new_on_storage: the shape needs %zu bytes, the storage has %zu",
                     nbytes, storage->nbytes);
      return NULL;
    }
  return tensor_new_contiguous (cow_storage_ref (storage), ndim, sizes, dtype,
                                COW_OP_VIEW, error);
}

CowTensor *
cow_tensor_ref (CowTensor *tensor)
{
  if (tensor != NULL)
    /* Relaxed: the caller already holds a reference. */
    atomic_fetch_add_explicit (&tensor->refcount, 1, memory_order_relaxed);
  return tensor;
}

void
cow_tensor_unref (CowTensor *tensor)
{
  if (tensor == NULL || !cow_release_ref (&tensor->refcount))
    return;
  CowStorage *storage = tensor->storage;
  COW_TRACE (COW_EVENT_TENSOR_FREE, COW_OP_NONE, 0, tensor->id, storage->id, 0, 0, 0);
  if (COW_UNLIKELY (tensor->shadow != NULL))
    cow_shadow_unref (tensor->shadow);
  /* A tensor allocated with its storage is freed with the storage; any
   * other goes first, so that the storage's release is a tail call. */
  if (storage->block != (void *) tensor)
    cow_pool_free (COW_POOL_TENSOR, tensor);
  cow_storage_release (storage);
}

int cow_tensor_ndim (const CowTensor *t) { return t->ndim; }
const int64_t *cow_tensor_sizes (const CowTensor *t) { return t->sizes; }
const int64_t *cow_tensor_strides (const CowTensor *t) { return t->strides; }
int64_t cow_tensor_storage_offset (const CowTensor *t) { return t->storage_offset; }
CowDType cow_tensor_dtype (const CowTensor *t) { return t->dtype; }
CowStorage *cow_tensor_storage (const CowTensor *t) { return t->storage; }
uint64_t cow_tensor_id (const CowTensor *t) { return t->id; }
const char *cow_tensor_get_name (const CowTensor *t) { return t->name; }

int64_t
cow_tensor_size (const CowTensor *tensor, int dim)
{
  int d = 0;
  if (tensor->ndim == 0 || cow_wrap_dim ("size", dim, tensor->ndim, &d, NULL) != COW_OK)
    return -1;
  return tensor->sizes[d];
}

int64_t
cow_tensor_numel (const CowTensor *tensor)
{
  int64_t n = 1;
  for (int d = 0; d < tensor->ndim; d++)
    n *= tensor->sizes[d];
  return n;
}

size_t
cow_tensor_nbytes (const CowTensor *tensor)
{
  return (size_t) cow_tensor_numel (tensor) * cow_tensor_itemsize (tensor);
}

bool
cow_tensor_is_contiguous (const CowTensor *tensor)
{
  int64_t expected = 1;
  for (int d = tensor->ndim - 1; d >= 0; d--)
    {
      if (tensor->sizes[d] == 0)
        return true;
      if (tensor->sizes[d] != 1 && tensor->strides[d] != expected)
        return false;
      expected *= tensor->sizes[d];
    }
  return true;
}

bool
cow_tensor_is_cow (const CowTensor *tensor)
{
  return cow_storage_is_cow (tensor->storage);
}

bool
cow_tensor_is_alias_of (const CowTensor *a, const CowTensor *b)
{
  return a->storage == b->storage;
}

uintptr_t
cow_tensor_data_address (const CowTensor *tensor)
{
  return (uintptr_t) tensor->storage->data
         + (uintptr_t) tensor->storage_offset * cow_tensor_itemsize (tensor);
}

void *
cow_tensor_mutable_data_for (CowTensor *tensor, CowOp op, CowError *error)
{
  CowStorage *storage = tensor->storage;
  if (COW_UNLIKELY (cow_storage_needs_materialize (storage))
      && cow_storage_materialize (storage, op, tensor->id, error) != COW_OK)
    return NULL;
  CowSimState *sim = atomic_load_explicit (&storage->sim, memory_order_acquire);
  if (COW_UNLIKELY (sim != NULL))
    cow_sim_on_write (tensor, sim, op);
  return (char *) storage->data + tensor->storage_offset * (int64_t) cow_tensor_itemsize (tensor);
}

const void *
cow_tensor_const_data_for (const CowTensor *tensor, CowOp op)
{
  CowStorage *storage = tensor->storage;
  CowSimState *sim = atomic_load_explicit (&storage->sim, memory_order_acquire);
  if (COW_UNLIKELY (sim != NULL))
    cow_sim_on_read (tensor, sim, op);
  return (const char *) storage->data
         + tensor->storage_offset * (int64_t) cow_tensor_itemsize (tensor);
}

void *
cow_tensor_mutable_data (CowTensor *tensor, CowError *error)
{
  return cow_tensor_mutable_data_for (tensor, COW_OP_MUTABLE_DATA, error);
}

const void *
cow_tensor_const_data (const CowTensor *tensor)
{
  return cow_tensor_const_data_for (tensor, COW_OP_NONE);
}

void
cow_tensor_set_name (CowTensor *tensor, const char *name)
{
  const char *stable = NULL;
  uint64_t id = cow_intern_string (name, &stable);
  tensor->name = stable;
  tensor->name_id = id;
  COW_TRACE (COW_EVENT_TENSOR_NAME, COW_OP_NONE, 0, tensor->id, id, 0, 0, 0);
}
