/* cow-view.c — views: new sizes, strides and offset over the same storage,
 * O(1), no copy. */
#include "cow-tensor-private.h"

#include <inttypes.h>
#include <string.h>

#define CHECK_TENSOR(what, t)                                                  \
  do {                                                                         \
    if ((t) == NULL)                                                           \
      {                                                                        \
        cow_set_error (error, COW_ERROR_INVALID_ARGUMENT, "%s: tensor is NULL", \
                       what);                                                  \
        return NULL;                                                           \
      }                                                                        \
  } while (0)

CowStatus
cow_infer_sizes (const char *what, int ndim, const int64_t *sizes,
                 int64_t numel, int64_t *out, CowError *error)
{
  if (ndim < 0 || ndim > COW_MAX_DIMS)
    return cow_set_error (error, COW_ERROR_INVALID_ARGUMENT,
                          "%s: %d dimensions; tensors have 0 to %d", what, ndim,
                          COW_MAX_DIMS);
  if (ndim > 0 && sizes == NULL)
    return cow_set_error (error, COW_ERROR_INVALID_ARGUMENT, "%s: sizes is NULL", what);
  int infer = -1;
  int64_t known = 1;
  for (int d = 0; d < ndim; d++)
    {
      out[d] = sizes[d];
      if (sizes[d] == -1)
        {
          if (infer >= 0)
            return cow_set_error (error, COW_ERROR_INVALID_ARGUMENT,
                                  "%s: only one size may be -1", what);
          infer = d;
        }
      else if (sizes[d] < 0)
        return cow_set_error (error, COW_ERROR_INVALID_ARGUMENT,
                              "%s: size %" PRId64 " of dimension %d is negative",
                              what, sizes[d], d);
      else if (cow_mul_overflows (known, sizes[d], &known))
        return cow_set_error (error, COW_ERROR_OVERFLOW,
                              "%s: the element count overflows 64 bits", what);
    }
  if (infer >= 0)
    {
      if (known == 0 || numel % known != 0)
        return cow_set_error (error, COW_ERROR_SHAPE,
                              "%s: cannot infer the size of dimension %d: %" PRId64
                              " elements are not a multiple of %" PRId64,
                              what, infer, numel, known);
      out[infer] = numel / known;
      known = numel;
    }
  if (known != numel)
    return cow_set_error (error, COW_ERROR_SHAPE,
                          "%s: a shape of %" PRId64 " elements cannot hold %" PRId64,
                          what, known, numel);
  return COW_OK;
}

bool
cow_compute_view_strides (const CowTensor *tensor, int ndim,
                          const int64_t *sizes, int64_t *strides)
{
  /* PyTorch's computeStride (aten/src/ATen/TensorUtils.cpp): walk the old
   * dimensions in contiguous chunks and map each onto new dimensions. */
  if (tensor->ndim == 0)
    {
      for (int d = 0; d < ndim; d++)
        strides[d] = 1;
      return true;
    }
  int64_t numel = cow_tensor_numel (tensor);
  if (numel == 0)
    {
      bool same = ndim == tensor->ndim
                  && memcmp (sizes, tensor->sizes, (size_t) ndim * sizeof *sizes) == 0;
      if (same)
        memcpy (strides, tensor->strides, (size_t) ndim * sizeof *strides);
      else
        cow_contiguous_strides (ndim, sizes, strides);
      return true;
    }

  int view_d = ndim - 1;
  int64_t chunk_base_stride = tensor->strides[tensor->ndim - 1];
  int64_t tensor_numel = 1, view_numel = 1;
  for (int tensor_d = tensor->ndim - 1; tensor_d >= 0; tensor_d--)
    {
      tensor_numel *= tensor->sizes[tensor_d];
      if (tensor_d == 0
          || (tensor->sizes[tensor_d - 1] != 1
              && tensor->strides[tensor_d - 1] != tensor_numel * chunk_base_stride))
        {
          while (view_d >= 0 && (view_numel < tensor_numel || sizes[view_d] == 1))
            {
              strides[view_d] = view_numel * chunk_base_stride;
              view_numel *= sizes[view_d];
              view_d--;
            }
          if (view_numel != tensor_numel)
            return false;
          if (tensor_d > 0)
            {
              chunk_base_stride = tensor->strides[tensor_d - 1];
              tensor_numel = 1;
              view_numel = 1;
            }
        }
    }
  return view_d == -1;
}

CowTensor *
cow_tensor_view (CowTensor *tensor, int ndim, const int64_t *sizes, CowError *error)
{
  CHECK_TENSOR ("view", tensor);
  int64_t resolved[COW_MAX_DIMS], strides[COW_MAX_DIMS];
  if (cow_infer_sizes ("view", ndim, sizes, cow_tensor_numel (tensor), resolved,
                       error) != COW_OK)
    return NULL;
  if (!cow_compute_view_strides (tensor, ndim, resolved, strides))
    {
      cow_set_error (error, COW_ERROR_SHAPE,
                     "view: the new shape is incompatible with the tensor's "
                     "strides (it spans non-contiguous dimensions); use reshape()");
      return NULL;
    }
  return cow_tensor_make_view (tensor, ndim, resolved, strides,
                               tensor->storage_offset, COW_OP_VIEW, error);
}

/* Wraps a negative index; bounds are checked by the caller. */
static int64_t
wrap_index (int64_t index, int64_t size)
{
  return index < 0 ? index + size : index;
}

CowTensor *
cow_tensor_slice (CowTensor *tensor, int dim, int64_t start, int64_t end,
                  int64_t step, CowError *error)
{
  CHECK_TENSOR ("slice", tensor);
  int d;
  if (tensor->ndim == 0)
    {
      cow_set_error (error, COW_ERROR_OUT_OF_RANGE, "slice: cannot slice a 0-dimensional tensor");
      return NULL;
    }
  if (cow_wrap_dim ("slice", dim, tensor->ndim, &d, error) != COW_OK)
    return NULL;
  if (step <= 0)
    {
      cow_set_error (error, COW_ERROR_INVALID_ARGUMENT,
                     "slice: step %" PRId64 " must be positive", step);
      return NULL;
    }
  int64_t size = tensor->sizes[d];
  int64_t lo = wrap_index (start, size), hi = wrap_index (end, size);
  if (lo < 0 || hi > size || lo > hi)
    {
      cow_set_error (error, COW_ERROR_OUT_OF_RANGE,
                     "slice: [%" PRId64 ", %" PRId64 ") is out of range for "
                     "dimension %d of size %" PRId64, start, end, d, size);
      return NULL;
    }
  int64_t sizes[COW_MAX_DIMS], strides[COW_MAX_DIMS];
  memcpy (sizes, tensor->sizes, sizeof sizes);
  memcpy (strides, tensor->strides, sizeof strides);
  /* Written so that no step, however large, overflows. */
  sizes[d] = hi > lo ? (hi - lo - 1) / step + 1 : 0;
  if (sizes[d] > 1)
    strides[d] = tensor->strides[d] * step; /* ≤ the extent: no overflow */
  return cow_tensor_make_view (tensor, tensor->ndim, sizes, strides,
                               tensor->storage_offset + lo * tensor->strides[d],
                               COW_OP_SLICE, error);
}

CowTensor *
cow_tensor_select (CowTensor *tensor, int dim, int64_t index, CowError *error)
{
  CHECK_TENSOR ("select", tensor);
  int d;
  if (tensor->ndim == 0)
    {
      cow_set_error (error, COW_ERROR_OUT_OF_RANGE, "select: cannot index a 0-dimensional tensor");
      return NULL;
    }
  if (cow_wrap_dim ("select", dim, tensor->ndim, &d, error) != COW_OK)
    return NULL;
  int64_t i = wrap_index (index, tensor->sizes[d]);
  if (i < 0 || i >= tensor->sizes[d])
    {
      cow_set_error (error, COW_ERROR_OUT_OF_RANGE,
                     "select: index %" PRId64 " is out of range for dimension %d "
                     "of size %" PRId64, index, d, tensor->sizes[d]);
      return NULL;
    }
  int64_t sizes[COW_MAX_DIMS], strides[COW_MAX_DIMS];
  for (int k = 0, o = 0; k < tensor->ndim; k++)
    if (k != d)
      {
        sizes[o] = tensor->sizes[k];
        strides[o++] = tensor->strides[k];
      }
  return cow_tensor_make_view (tensor, tensor->ndim - 1, sizes, strides,
                               tensor->storage_offset + i * tensor->strides[d],
                               COW_OP_SELECT, error);
}

CowTensor *
cow_tensor_narrow (CowTensor *tensor, int dim, int64_t start, int64_t length,
                   CowError *error)
{
  CHECK_TENSOR ("narrow", tensor);
  int d;
  if (tensor->ndim == 0)
    {
      cow_set_error (error, COW_ERROR_OUT_OF_RANGE, "narrow: cannot narrow a 0-dimensional tensor");
      return NULL;
    }
  if (cow_wrap_dim ("narrow", dim, tensor->ndim, &d, error) != COW_OK)
    return NULL;
  int64_t size = tensor->sizes[d];
  int64_t lo = wrap_index (start, size);
  if (lo < 0 || lo > size || length < 0 || length > size - lo)
    {
      cow_set_error (error, COW_ERROR_OUT_OF_RANGE,
                     "narrow: start %" PRId64 " and length %" PRId64 " are out of "
                     "range for dimension %d of size %" PRId64, start, length, d, size);
      return NULL;
    }
  int64_t sizes[COW_MAX_DIMS];
  memcpy (sizes, tensor->sizes, sizeof sizes);
  sizes[d] = length;
  return cow_tensor_make_view (tensor, tensor->ndim, sizes, tensor->strides,
                               tensor->storage_offset + lo * tensor->strides[d],
                               COW_OP_NARROW, error);
}

CowTensor *
cow_tensor_transpose (CowTensor *tensor, int dim0, int dim1, CowError *error)
{
  CHECK_TENSOR ("transpose", tensor);
  int a, b;
  if (cow_wrap_dim ("transpose", dim0, tensor->ndim, &a, error) != COW_OK
      || cow_wrap_dim ("transpose", dim1, tensor->ndim, &b, error) != COW_OK)
    return NULL;
  int64_t sizes[COW_MAX_DIMS], strides[COW_MAX_DIMS];
  memcpy (sizes, tensor->sizes, sizeof sizes);
  memcpy (strides, tensor->strides, sizeof strides);
  if (tensor->ndim > 0)
    {
      sizes[a] = tensor->sizes[b], sizes[b] = tensor->sizes[a];
      strides[a] = tensor->strides[b], strides[b] = tensor->strides[a];
    }
  return cow_tensor_make_view (tensor, tensor->ndim, sizes, strides,
                               tensor->storage_offset, COW_OP_TRANSPOSE, error);
}

CowTensor *
cow_tensor_permute (CowTensor *tensor, int ndim, const int *dims, CowError *error)
{
  CHECK_TENSOR ("permute", tensor);
  if (ndim != tensor->ndim || (ndim > 0 && dims == NULL))
    {
      cow_set_error (error, COW_ERROR_INVALID_ARGUMENT,
                     "permute: %d dimensions given for a %d-dimensional tensor",
                     ndim, tensor->ndim);
      return NULL;
    }
  bool seen[COW_MAX_DIMS] = { false };
  int64_t sizes[COW_MAX_DIMS], strides[COW_MAX_DIMS];
  for (int k = 0; k < ndim; k++)
    {
      int d;
      if (cow_wrap_dim ("permute", dims[k], ndim, &d, error) != COW_OK)
        return NULL;
      if (seen[d])
        {
          cow_set_error (error, COW_ERROR_INVALID_ARGUMENT,
                         "permute: dimension %d appears twice", d);
          return NULL;
        }
      seen[d] = true;
      sizes[k] = tensor->sizes[d];
      strides[k] = tensor->strides[d];
    }
  return cow_tensor_make_view (tensor, ndim, sizes, strides,
                               tensor->storage_offset, COW_OP_PERMUTE, error);
}

CowTensor *
cow_tensor_expand (CowTensor *tensor, int ndim, const int64_t *sizes, CowError *error)
{
  CHECK_TENSOR ("expand", tensor);
  if (ndim < tensor->ndim || ndim > COW_MAX_DIMS || (ndim > 0 && sizes == NULL))
    {
      cow_set_error (error, COW_ERROR_INVALID_ARGUMENT,
                     "expand: %d dimensions given for a %d-dimensional tensor "
                     "(need at least as many, at most %d)", ndim, tensor->ndim,
                     COW_MAX_DIMS);
      return NULL;
    }
  int64_t out_sizes[COW_MAX_DIMS], out_strides[COW_MAX_DIMS];
  int lead = ndim - tensor->ndim;
  for (int d = 0; d < ndim; d++)
    {
      int td = d - lead;
      int64_t want = sizes[d];
      if (td < 0)
        {
          if (want < 0)
            {
              cow_set_error (error, COW_ERROR_INVALID_ARGUMENT,
                             "expand: new leading dimension %d needs a size, not %" PRId64,
                             d, want);
              return NULL;
            }
          out_sizes[d] = want;
          out_strides[d] = 0;
          continue;
        }
      int64_t have = tensor->sizes[td];
      if (want == -1 || want == have)
        {
          out_sizes[d] = have;
          out_strides[d] = tensor->strides[td];
        }
      else if (have == 1 && want >= 0)
        {
          out_sizes[d] = want;
          out_strides[d] = 0;
        }
      else
        {
          cow_set_error (error, COW_ERROR_SHAPE,
                         "expand: dimension %d has size %" PRId64
                         " and can only expand from size 1, not to %" PRId64,
                         td, have, want);
          return NULL;
        }
    }
  return cow_tensor_make_view (tensor, ndim, out_sizes, out_strides,
                               tensor->storage_offset, COW_OP_EXPAND, error);
}

CowTensor *
cow_tensor_as_strided (CowTensor *tensor, int ndim, const int64_t *sizes,
                       const int64_t *strides, int64_t storage_offset,
                       CowError *error)
{
  CHECK_TENSOR ("as_strided", tensor);
  if (ndim < 0 || ndim > COW_MAX_DIMS || (ndim > 0 && (sizes == NULL || strides == NULL)))
    {
      cow_set_error (error, COW_ERROR_INVALID_ARGUMENT,
                     "as_strided: %d dimensions; tensors have 0 to %d with sizes and strides",
                     ndim, COW_MAX_DIMS);
      return NULL;
    }
  return cow_tensor_make_view (tensor, ndim, sizes, strides, storage_offset,
                               COW_OP_AS_STRIDED, error);
}
