/* cow-iter.c — strided iteration and element conversions. */
#include "cow-iter-private.h"

#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

void
cow_iter_init (CowIter *iter, int ndim, const int64_t *sizes)
{
  memset (iter, 0, sizeof *iter);
  iter->ndim = ndim;
  for (int d = 0; d < ndim; d++)
    iter->sizes[d] = sizes[d];
}

void
cow_iter_add (CowIter *iter, const void *data, const int64_t *element_strides,
              size_t itemsize)
{
  int i = iter->n_operands++;
  iter->data[i] = (char *) data;
  for (int d = 0; d < iter->ndim; d++)
    iter->strides[i][d] = element_strides[d] * (int64_t) itemsize;
}

/* Merges neighbouring dimensions that every operand walks contiguously,
 * so the inner loop runs as long as possible. */
static void
coalesce (CowIter *iter)
{
  if (iter->ndim <= 1)
    return;
  int out = 0;
  for (int d = 1; d < iter->ndim; d++)
    {
      bool mergeable = true;
      for (int i = 0; i < iter->n_operands; i++)
        if (iter->strides[i][out] != iter->strides[i][d] * iter->sizes[d])
          mergeable = false;
      if (mergeable)
        {
          iter->sizes[out] *= iter->sizes[d];
          for (int i = 0; i < iter->n_operands; i++)
            iter->strides[i][out] = iter->strides[i][d];
        }
      else
        {
          out++;
          iter->sizes[out] = iter->sizes[d];
          for (int i = 0; i < iter->n_operands; i++)
            iter->strides[i][out] = iter->strides[i][d];
        }
    }
  iter->ndim = out + 1;
}

void
cow_iter_run (CowIter *iter, CowIterLoop loop, void *user_data)
{
  for (int d = 0; d < iter->ndim; d++)
    if (iter->sizes[d] == 0)
      return;
  coalesce (iter);

  int n_ops = iter->n_operands;
  int inner = iter->ndim - 1;
  int64_t inner_size = iter->ndim > 0 ? iter->sizes[inner] : 1;
  int64_t inner_strides[COW_ITER_MAX_OPERANDS] = { 0 };
  for (int i = 0; i < n_ops; i++)
    inner_strides[i] = iter->ndim > 0 ? iter->strides[i][inner] : 0;

  int64_t counter[COW_MAX_DIMS] = { 0 };
  char *ptrs[COW_ITER_MAX_OPERANDS];
  for (;;)
    {
      for (int i = 0; i < n_ops; i++)
        {
          ptrs[i] = iter->data[i];
          for (int d = 0; d < inner; d++)
            ptrs[i] += counter[d] * iter->strides[i][d];
        }
      loop (ptrs, inner_strides, inner_size, user_data);

      int d = inner - 1;
      for (; d >= 0; d--)
        {
          if (++counter[d] < iter->sizes[d])
            break;
          counter[d] = 0;
        }
      if (d < 0)
        return;
    }
}

CowStatus
cow_broadcast_shape (const char *what, const CowTensor *a, const CowTensor *b,
                     int *ndim, int64_t *sizes, CowError *error)
{
  int n = a->ndim > b->ndim ? a->ndim : b->ndim;
  for (int d = 0; d < n; d++)
    {
      int da = d - (n - a->ndim), db = d - (n - b->ndim);
      int64_t sa = da >= 0 ? a->sizes[da] : 1, sb = db >= 0 ? b->sizes[db] : 1;
      if (sa != sb && sa != 1 && sb != 1)
        return cow_set_error (error, COW_ERROR_SHAPE,
                              "%s: sizes %" PRId64 " and %" PRId64
                              " do not broadcast (dimension %d of the result)",
                              what, sa, sb, d);
      sizes[d] = sa == 1 ? sb : sa;
    }
  *ndim = n;
  return COW_OK;
}

void
cow_broadcast_strides (const CowTensor *tensor, int ndim, const int64_t *sizes,
                       int64_t *strides)
{
  for (int d = 0; d < ndim; d++)
    {
      int td = d - (ndim - tensor->ndim);
      if (td < 0 || (tensor->sizes[td] == 1 && sizes[d] != 1))
        strides[d] = 0;
      else
        strides[d] = tensor->strides[td];
    }
}

double
cow_load_f64 (const void *p, CowDType dtype)
{
  switch (dtype)
    {
    case COW_DTYPE_F32: return *(const float *) p;
    case COW_DTYPE_F64: return *(const double *) p;
    case COW_DTYPE_I32: return *(const int32_t *) p;
    case COW_DTYPE_I64: return (double) *(const int64_t *) p;
    case COW_DTYPE_U8: return *(const uint8_t *) p;
    case COW_DTYPE_BOOL: return *(const bool *) p;
    case COW_N_DTYPES: break;
    }
  return 0;
}

static int64_t
saturate_i64 (double value, int64_t lo, int64_t hi)
{
  if (isnan (value))
    return 0;
  if (value <= (double) lo)
    return lo;
  /* (double) INT64_MAX rounds up to 2^63: compare with >= to stay in range. */
  if (value >= (double) hi)
    return hi;
  return (int64_t) value;
}

int64_t
cow_load_i64 (const void *p, CowDType dtype)
{
  switch (dtype)
    {
    case COW_DTYPE_F32: return saturate_i64 (*(const float *) p, INT64_MIN, INT64_MAX);
    case COW_DTYPE_F64: return saturate_i64 (*(const double *) p, INT64_MIN, INT64_MAX);
    case COW_DTYPE_I32: return *(const int32_t *) p;
    case COW_DTYPE_I64: return *(const int64_t *) p;
    case COW_DTYPE_U8: return *(const uint8_t *) p;
    case COW_DTYPE_BOOL: return *(const bool *) p;
    case COW_N_DTYPES: break;
    }
  return 0;
}

void
cow_store_f64 (void *p, CowDType dtype, double value)
{
  switch (dtype)
    {
    case COW_DTYPE_F32: *(float *) p = (float) value; break;
    case COW_DTYPE_F64: *(double *) p = value; break;
    case COW_DTYPE_I32: *(int32_t *) p = (int32_t) saturate_i64 (value, INT32_MIN, INT32_MAX); break;
    case COW_DTYPE_I64: *(int64_t *) p = saturate_i64 (value, INT64_MIN, INT64_MAX); break;
    case COW_DTYPE_U8: *(uint8_t *) p = (uint8_t) saturate_i64 (value, 0, UINT8_MAX); break;
    case COW_DTYPE_BOOL: *(bool *) p = value != 0; break;
    case COW_N_DTYPES: break;
    }
}

void
cow_store_i64 (void *p, CowDType dtype, int64_t value)
{
  switch (dtype)
    {
    case COW_DTYPE_F32: *(float *) p = (float) value; break;
    case COW_DTYPE_F64: *(double *) p = (double) value; break;
    /* Narrowing wraps modulo 2^n (GCC and Clang define it), as in PyTorch. */
    case COW_DTYPE_I32: *(int32_t *) p = (int32_t) value; break;
    case COW_DTYPE_I64: *(int64_t *) p = value; break;
    case COW_DTYPE_U8: *(uint8_t *) p = (uint8_t) value; break;
    case COW_DTYPE_BOOL: *(bool *) p = value != 0; break;
    case COW_N_DTYPES: break;
    }
}
