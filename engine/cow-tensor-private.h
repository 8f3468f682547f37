/* cow-tensor-private.h — tensor internals shared by views, ops, lazy
 * clones and simulate mode. */
#pragma once

#include "cow-simulate-private.h"
#include "cow-storage-private.h"
#include "cow-tensor.h"

struct _CowTensor {
  _Atomic int64_t refcount;
  uint64_t id;
  CowStorage *storage;
  CowShadow *shadow; /* simulate mode; NULL: the storage's default shadow */
  int64_t storage_offset; /* in elements */
  int ndim;
  CowDType dtype;
  const char *name; /* interned, immortal; NULL if unnamed */
  uint64_t name_id;
  int64_t sizes[COW_MAX_DIMS];
  int64_t strides[COW_MAX_DIMS]; /* in elements */
};

/* A tensor and the storage made for it, allocated together: one malloc
 * per new tensor.  The block is freed with the storage, which outlives
 * the tensor while views of it remain. */
typedef struct {
  CowTensor tensor;
  CowStorage storage;
} CowTensorBlock;

/* The number of elements of @sizes (checked by the caller). */
static inline int64_t
cow_numel_of (int ndim, const int64_t *sizes)
{
  int64_t numel = 1;
  for (int d = 0; d < ndim; d++)
    numel *= sizes[d];
  return numel;
}

/* Fills @tensor (refcount 1) over @storage, whose reference it takes over,
 * and emits TENSOR_NEW to @sink (cow_trace_sink()).  The layout must
 * already be checked.  Inline: it is part of every lazy clone. */
static inline void
cow_tensor_init (CowTensor *tensor, CowStorage *storage, int ndim, const int64_t *sizes,
                 const int64_t *strides, int64_t storage_offset, CowDType dtype, CowOp op,
                 const CowTensor *base, CowShadow *shadow, const CowTraceSink *sink)
{
  atomic_init (&tensor->refcount, 1);
  tensor->id = cow_next_id ();
  tensor->storage = storage;
  tensor->shadow = COW_UNLIKELY (shadow != NULL) ? cow_shadow_ref (shadow) : NULL;
  tensor->storage_offset = storage_offset;
  tensor->ndim = ndim;
  tensor->dtype = dtype;
  tensor->name = NULL;
  tensor->name_id = 0;
  for (int d = 0; d < ndim; d++)
    {
      tensor->sizes[d] = sizes[d];
      tensor->strides[d] = strides[d];
    }
  COW_TRACE_TO (sink, COW_EVENT_TENSOR_NEW, op,
                (uint32_t) dtype | (uint32_t) ndim << 8 | cow_trace_device (storage->device),
                tensor->id, storage->id, base ? base->id : 0,
                (uint64_t) cow_numel_of (ndim, sizes), (uint64_t) storage_offset);
}

/* Checks @ndim and @sizes; on success stores the element count. */
COW_INTERNAL CowStatus cow_check_sizes (const char *what, int ndim,
                                        const int64_t *sizes, int64_t *numel,
                                        CowError *error);

/* Row-major strides for @sizes. */
COW_INTERNAL void cow_contiguous_strides (int ndim, const int64_t *sizes,
                                          int64_t *strides);

/* A tensor over @storage (the new tensor takes a reference of its own)
 * with the given layout, made by @op from @base (may be NULL).  The
 * layout must already be checked.  A view of @base shares its shadow. */
COW_INTERNAL CowTensor *cow_tensor_make (CowStorage *storage, int ndim,
                                         const int64_t *sizes,
                                         const int64_t *strides,
                                         int64_t storage_offset, CowDType dtype,
                                         CowOp op, const CowTensor *base,
                                         CowShadow *shadow, CowError *error);

/* A view of @base with the given layout (checked against the storage). */
COW_INTERNAL CowTensor *cow_tensor_make_view (CowTensor *base, int ndim,
                                              const int64_t *sizes,
                                              const int64_t *strides,
                                              int64_t storage_offset, CowOp op,
                                              CowError *error);

/* Element 0 for writing by @op: materializes and records the write. */
COW_INTERNAL void *cow_tensor_mutable_data_for (CowTensor *tensor, CowOp op,
                                                CowError *error);
/* Element 0 for reading by @op: records the read in simulate mode. */
COW_INTERNAL const void *cow_tensor_const_data_for (const CowTensor *tensor, CowOp op);

/* Computes the strides that let @sizes view @tensor's elements without
 * copying (PyTorch's computeStride); false when no such view exists. */
COW_INTERNAL bool cow_compute_view_strides (const CowTensor *tensor, int ndim,
                                            const int64_t *sizes,
                                            int64_t *strides);

/* Resolves one -1 in @sizes against @numel into @out. */
COW_INTERNAL CowStatus cow_infer_sizes (const char *what, int ndim,
                                        const int64_t *sizes, int64_t numel,
                                        int64_t *out, CowError *error);

/* Wraps a negative dimension index; fails outside [-ndim, ndim). */
COW_INTERNAL CowStatus cow_wrap_dim (const char *what, int dim, int ndim,
                                     int *out, CowError *error);

static inline size_t
cow_tensor_itemsize (const CowTensor *tensor)
{
  return cow_dtype_size (tensor->dtype);
}

/* A new contiguous tensor in a fresh storage from @allocator (the CPU
 * allocator if NULL), allocated with it in one block, made by @op from
 * @base (may be NULL). */
COW_INTERNAL CowTensor *cow_tensor_new_fresh (int ndim, const int64_t *sizes,
                                              CowDType dtype, CowAllocator *allocator,
                                              CowOp op, const CowTensor *base,
                                              CowError *error);

/* As cow_tensor_new_fresh(), from @base's allocator when given. */
COW_INTERNAL CowTensor *cow_tensor_new_like (int ndim, const int64_t *sizes,
                                             CowDType dtype, CowOp op,
                                             const CowTensor *base,
                                             CowError *error);

/* An eager copy of @tensor's elements, in row-major order, into a new
 * contiguous tensor of shape @sizes (same element count), made by @op. */
COW_INTERNAL CowTensor *cow_tensor_clone_as (CowTensor *tensor, int ndim,
                                             const int64_t *sizes, CowOp op,
                                             CowError *error);
