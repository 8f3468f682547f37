/* cow-ops.c — elementwise ops, reductions, matmul and copies.
 *
 * Order inside every writing op: validate everything first (no side
 * effects on failure), then take the destination's mutable data (which
 * materializes a lazy copy and may move the bytes), and only then the
 * inputs' const data, so an input that shares the destination's storage
 * is read from where the bytes are now.  Inputs that overlap the
 * destination with another layout are cloned first.
 *
 * Operands on a device go to cow-device-ops.c after the same checks;
 * every operand of one op must be on one device.
 */
#include "cow-device-private.h"
#include "cow-ops.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#define CHECK_STATUS(what, t)                                                  \
  do {                                                                         \
    if ((t) == NULL)                                                           \
      return cow_set_error (error, COW_ERROR_INVALID_ARGUMENT,                 \
                            "%s: tensor is NULL", what);                       \
  } while (0)

/* ---- copies and reads ------------------------------------------------- */

static bool
same_layout (const CowTensor *a, const CowTensor *b)
{
  if (a->storage_offset != b->storage_offset || a->ndim != b->ndim || a->dtype != b->dtype)
    return false;
  for (int d = 0; d < a->ndim; d++)
    if (a->sizes[d] != b->sizes[d] || (a->sizes[d] > 1 && a->strides[d] != b->strides[d]))
      return false;
  return true;
}

static void
copy_same_dtype_loop (char **data, const int64_t *strides, int64_t n, void *user_data)
{
  size_t itemsize = *(const size_t *) user_data;
  if (strides[0] == (int64_t) itemsize && strides[1] == (int64_t) itemsize)
    {
      memcpy (data[0], data[1], (size_t) n * itemsize);
      return;
    }
  for (int64_t i = 0; i < n; i++)
    memcpy (data[0] + i * strides[0], data[1] + i * strides[1], itemsize);
}

typedef struct {
  CowDType dst, src;
} ConvertArgs;

static void
copy_convert_loop (char **data, const int64_t *strides, int64_t n, void *user_data)
{
  const ConvertArgs *args = user_data;
  bool via_float = cow_dtype_is_floating (args->src);
  for (int64_t i = 0; i < n; i++)
    {
      char *out = data[0] + i * strides[0];
      const char *in = data[1] + i * strides[1];
      if (via_float)
        cow_store_f64 (out, args->dst, cow_load_f64 (in, args->src));
      else
        cow_store_i64 (out, args->dst, cow_load_i64 (in, args->src));
    }
}

/* Copies @src's elements, broadcast to @ndim/@sizes, into @dst_data laid
 * out with @dst_strides.  Both pointers are already resolved. */
static void
copy_elements (void *dst_data, CowDType dst_dtype, int ndim, const int64_t *sizes,
               const int64_t *dst_strides, const CowTensor *src, const void *src_data)
{
  int64_t src_strides[COW_MAX_DIMS];
  cow_broadcast_strides (src, ndim, sizes, src_strides);
  CowIter iter;
  cow_iter_init (&iter, ndim, sizes);
  cow_iter_add (&iter, dst_data, dst_strides, cow_dtype_size (dst_dtype));
  cow_iter_add (&iter, src_data, src_strides, cow_tensor_itemsize (src));
  if (dst_dtype == src->dtype)
    {
      size_t itemsize = cow_dtype_size (dst_dtype);
      cow_iter_run (&iter, copy_same_dtype_loop, &itemsize);
    }
  else
    {
      ConvertArgs args = { dst_dtype, src->dtype };
      cow_iter_run (&iter, copy_convert_loop, &args);
    }
}

CowStatus
cow_tensor_read_elements (const CowTensor *tensor, void *out, size_t nbytes,
                          CowError *error)
{
  CHECK_STATUS ("read_elements", tensor);
  if (nbytes != cow_tensor_nbytes (tensor) || (out == NULL && nbytes > 0))
    return cow_set_error (error, COW_ERROR_SHAPE,
                          "read_elements: buffer of %zu bytes for a tensor of %zu",
                          nbytes, cow_tensor_nbytes (tensor));
  if (COW_UNLIKELY (cow_tensor_on_device (tensor)))
    return cow_device_read_elements (tensor, out, error);
  int64_t strides[COW_MAX_DIMS];
  cow_contiguous_strides (tensor->ndim, tensor->sizes, strides);
  copy_elements (out, tensor->dtype, tensor->ndim, tensor->sizes, strides, tensor,
                 cow_tensor_const_data_for (tensor, COW_OP_NONE));
  return COW_OK;
}

CowStatus
cow_tensor_get_f64 (const CowTensor *tensor, const int64_t *index, double *out,
                    CowError *error)
{
  CHECK_STATUS ("get_f64", tensor);
  int64_t offset = 0;
  for (int d = 0; d < tensor->ndim; d++)
    {
      if (index == NULL || index[d] < 0 || index[d] >= tensor->sizes[d])
        return cow_set_error (error, COW_ERROR_OUT_OF_RANGE,
                              "get_f64: index %" PRId64 " is out of range for "
                              "dimension %d of size %" PRId64,
                              index ? index[d] : -1, d, tensor->sizes[d]);
      offset += index[d] * tensor->strides[d];
    }
  if (COW_UNLIKELY (cow_tensor_on_device (tensor)))
    {
      CowScalar element;
      CowStatus status = cow_device_read_element (tensor, offset, &element, error);
      if (status == COW_OK)
        *out = cow_load_f64 (&element, tensor->dtype);
      return status;
    }
  const char *base = cow_tensor_const_data_for (tensor, COW_OP_NONE);
  *out = cow_load_f64 (base + offset * (int64_t) cow_tensor_itemsize (tensor), tensor->dtype);
  return COW_OK;
}

CowStatus
cow_tensor_item (CowTensor *tensor, double *out, CowError *error)
{
  CHECK_STATUS ("item", tensor);
  if (cow_tensor_numel (tensor) != 1)
    return cow_set_error (error, COW_ERROR_SHAPE,
                          "item: the tensor has %" PRId64 " elements, not 1",
                          cow_tensor_numel (tensor));
  int64_t index[COW_MAX_DIMS] = { 0 };
  return cow_tensor_get_f64 (tensor, index, out, error);
}

CowTensor *
cow_tensor_new_like (int ndim, const int64_t *sizes, CowDType dtype, CowOp op,
                     const CowTensor *base, CowError *error)
{
  CowAllocator *allocator = NULL;
  if (base != NULL)
    {
      allocator = cow_storage_result_allocator (base->storage, error);
      if (allocator == NULL)
        return NULL;
    }
  return cow_tensor_new_fresh (ndim, sizes, dtype, allocator, op, base, error);
}

CowTensor *
cow_tensor_clone_as (CowTensor *tensor, int ndim, const int64_t *sizes, CowOp op,
                     CowError *error)
{
  if (COW_UNLIKELY (cow_tensor_on_device (tensor)))
    return cow_device_clone_as (tensor, ndim, sizes, op, error);
  CowTensor *result = cow_tensor_new_like (ndim, sizes, tensor->dtype, op, tensor, error);
  if (result == NULL)
    return NULL;
  /* A fresh storage: the mutable path only records the write. */
  void *out = cow_tensor_mutable_data_for (result, op, error);
  int64_t strides[COW_MAX_DIMS];
  cow_contiguous_strides (tensor->ndim, tensor->sizes, strides);
  copy_elements (out, tensor->dtype, tensor->ndim, tensor->sizes, strides, tensor,
                 cow_tensor_const_data_for (tensor, op));
  return result;
}

CowTensor *
cow_tensor_clone (CowTensor *tensor, CowError *error)
{
  if (tensor == NULL)
    {
      cow_set_error (error, COW_ERROR_INVALID_ARGUMENT, "clone: tensor is NULL");
      return NULL;
    }
  return cow_tensor_clone_as (tensor, tensor->ndim, tensor->sizes, COW_OP_CLONE, error);
}

CowTensor *
cow_tensor_contiguous (CowTensor *tensor, CowError *error)
{
  if (tensor == NULL)
    {
      cow_set_error (error, COW_ERROR_INVALID_ARGUMENT, "contiguous: tensor is NULL");
      return NULL;
    }
  if (cow_tensor_is_contiguous (tensor))
    return cow_tensor_ref (tensor);
  return cow_tensor_clone_as (tensor, tensor->ndim, tensor->sizes, COW_OP_CONTIGUOUS, error);
}

/* An input that shares @dst's storage with another layout is cloned so
 * the write cannot clobber elements still to be read.  Returns a new
 * reference to the tensor to read, or NULL on error. */
static CowTensor *
unaliased_input (CowTensor *dst, CowTensor *src, CowOp op, CowError *error)
{
  if (src->storage == dst->storage && !same_layout (dst, src))
    return cow_tensor_clone_as (src, src->ndim, src->sizes, op, error);
  return cow_tensor_ref (src);
}

static CowStatus
check_broadcasts_to (const char *what, const CowTensor *dst, const CowTensor *src,
                     CowError *error)
{
  int ndim;
  int64_t sizes[COW_MAX_DIMS];
  CowStatus status = cow_broadcast_shape (what, dst, src, &ndim, sizes, error);
  if (status != COW_OK)
    return status;
  if (ndim != dst->ndim || memcmp (sizes, dst->sizes, (size_t) ndim * sizeof *sizes) != 0)
    return cow_set_error (error, COW_ERROR_SHAPE,
                          "%s: the source's shape does not broadcast to the "
                          "destination's (%d dimensions)", what, dst->ndim);
  return COW_OK;
}

CowStatus
cow_tensor_copy_ (CowTensor *dst, CowTensor *src, CowError *error)
{
  COW_ENSURE_ERROR (error);
  CHECK_STATUS ("copy_", dst);
  CHECK_STATUS ("copy_", src);
  CowStatus status = check_broadcasts_to ("copy_", dst, src, error);
  if (status != COW_OK)
    return status;
  /* Between devices, or on one: copy_ is how data moves, so devices may
   * differ here. */
  if (COW_UNLIKELY (cow_tensor_on_device (dst) || cow_tensor_on_device (src)))
    return cow_device_copy_ (dst, src, error);
  CowTensor *input = unaliased_input (dst, src, COW_OP_COPY_, error);
  if (input == NULL)
    return error->code;
  void *out = cow_tensor_mutable_data_for (dst, COW_OP_COPY_, error);
  if (out == NULL)
    status = error->code;
  else
    copy_elements (out, dst->dtype, dst->ndim, dst->sizes, dst->strides, input,
                   cow_tensor_const_data_for (input, COW_OP_COPY_));
  cow_tensor_unref (input);
  return status;
}

/* ---- fill and scalars --------------------------------------------------- */

static CowStatus
check_scalar_fits (const char *what, const char *role, double value,
                   CowDType dtype, CowError *error)
{
  double lo, hi;
  switch (dtype)
    {
    case COW_DTYPE_I32: lo = INT32_MIN; hi = INT32_MAX; break;
    case COW_DTYPE_I64: lo = -9223372036854775808.0; hi = 9223372036854775807.0; break;
    case COW_DTYPE_U8: lo = 0; hi = UINT8_MAX; break;
    default: return COW_OK; /* floats take anything; bool is value != 0 */
    }
  if (!isfinite (value) || value < lo || value >= hi + 1)
    return cow_set_error (error, COW_ERROR_OUT_OF_RANGE,
                          "%s: %s %g does not fit in %s", what, role, value,
                          cow_dtype_name (dtype));
  return COW_OK;
}

typedef struct {
  CowDType dtype;
  CowScalar value; /* one element, already converted */
} FillArgs;

static void
fill_loop (char **data, const int64_t *strides, int64_t n, void *user_data)
{
  const FillArgs *args = user_data;
  size_t itemsize = cow_dtype_size (args->dtype);
  if (strides[0] == (int64_t) itemsize && itemsize == 1)
    {
      memset (data[0], args->value.bytes[0], (size_t) n);
      return;
    }
  for (int64_t i = 0; i < n; i++)
    memcpy (data[0] + i * strides[0], args->value.bytes, itemsize);
}

CowStatus
cow_tensor_fill_ (CowTensor *tensor, double value, CowError *error)
{
  COW_ENSURE_ERROR (error);
  CHECK_STATUS ("fill_", tensor);
  CowStatus status = check_scalar_fits ("fill_", "value", value, tensor->dtype, error);
  if (status != COW_OK)
    return status;
  FillArgs args = { .dtype = tensor->dtype };
  cow_store_f64 (&args.value, tensor->dtype, value);
  if (COW_UNLIKELY (cow_tensor_on_device (tensor)))
    return cow_device_fill_ (tensor, &args.value, error);
  void *out = cow_tensor_mutable_data_for (tensor, COW_OP_FILL_, error);
  if (out == NULL)
    return error->code;
  CowIter iter;
  cow_iter_init (&iter, tensor->ndim, tensor->sizes);
  cow_iter_add (&iter, out, tensor->strides, cow_tensor_itemsize (tensor));
  cow_iter_run (&iter, fill_loop, &args);
  return COW_OK;
}

/* ---- binary elementwise -------------------------------------------------- */

typedef enum { BINARY_ADD, BINARY_MUL } BinaryKind;

typedef struct {
  BinaryKind kind;
  CowDType dtype;
  double alpha;    /* floats */
  uint64_t alpha_u; /* integers: wraps modulo 2^64, like the arithmetic */
} BinaryArgs;

/* Integer arithmetic in uint64_t wraps instead of overflowing (no UB);
 * the narrowing back to T keeps the low bits. */
#define BINARY_LOOP(T, EXPR)                                                   \
  for (int64_t i = 0; i < n; i++)                                              \
    {                                                                          \
      T a = *(const T *) (data[1] + i * strides[1]);                           \
      T b = *(const T *) (data[2] + i * strides[2]);                           \
      *(T *) (data[0] + i * strides[0]) = (T) (EXPR);                          \
    }

#define BINARY_FLOAT(T)                                                        \
  do {                                                                         \
    T alpha = (T) args->alpha;                                                 \
    if (args->kind == BINARY_ADD) { BINARY_LOOP (T, a + alpha * b) }           \
    else { BINARY_LOOP (T, a * b) }                                            \
  } while (0)

#define BINARY_INT(T)                                                          \
  do {                                                                         \
    uint64_t alpha = args->alpha_u;                                            \
    if (args->kind == BINARY_ADD) { BINARY_LOOP (T, (uint64_t) a + alpha * (uint64_t) b) } \
    else { BINARY_LOOP (T, (uint64_t) a * (uint64_t) b) }                      \
  } while (0)

static void
binary_loop (char **data, const int64_t *strides, int64_t n, void *user_data)
{
  const BinaryArgs *args = user_data;
  switch (args->dtype)
    {
    case COW_DTYPE_F32: BINARY_FLOAT (float); break;
    case COW_DTYPE_F64: BINARY_FLOAT (double); break;
    case COW_DTYPE_I32: BINARY_INT (int32_t); break;
    case COW_DTYPE_I64: BINARY_INT (int64_t); break;
    case COW_DTYPE_U8: BINARY_INT (uint8_t); break;
    case COW_DTYPE_BOOL:
      if (args->kind == BINARY_ADD)
        { BINARY_LOOP (bool, a || (args->alpha_u != 0 && b)) }
      else
        { BINARY_LOOP (bool, a && b) }
      break;
    case COW_N_DTYPES: break;
    }
}

static CowStatus
check_binary (const char *what, const CowTensor *a, const CowTensor *b,
              double alpha, BinaryArgs *args, CowError *error)
{
  if (a == NULL || b == NULL)
    return cow_set_error (error, COW_ERROR_INVALID_ARGUMENT, "%s: tensor is NULL", what);
  if (a->dtype != b->dtype)
    return cow_set_error (error, COW_ERROR_DTYPE, "%s: dtypes %s and %s differ", what,
                          cow_dtype_name (a->dtype), cow_dtype_name (b->dtype));
  CowStatus status = cow_check_same_device (what, a, b, error);
  if (status != COW_OK)
    return status;
  args->dtype = a->dtype;
  args->alpha = alpha;
  args->alpha_u = 0;
  if (!cow_dtype_is_floating (a->dtype))
    {
      if (alpha != floor (alpha)
          || check_scalar_fits (what, "alpha", alpha, COW_DTYPE_I64, NULL) != COW_OK)
        return cow_set_error (error, COW_ERROR_DTYPE,
                              "%s: alpha %g must be an integer for %s tensors", what,
                              alpha, cow_dtype_name (a->dtype));
      args->alpha_u = (uint64_t) (int64_t) alpha;
    }
  return COW_OK;
}

static CowTensor *
binary_out_of_place (const char *what, CowOp op, BinaryKind kind, CowTensor *a,
                     CowTensor *b, double alpha, CowError *error)
{
  BinaryArgs args = { .kind = kind };
  int ndim;
  int64_t sizes[COW_MAX_DIMS], strides[3][COW_MAX_DIMS];
  if (check_binary (what, a, b, alpha, &args, error) != COW_OK
      || cow_broadcast_shape (what, a, b, &ndim, sizes, error) != COW_OK)
    return NULL;
  if (COW_UNLIKELY (cow_tensor_on_device (a)))
    return cow_device_binary (op, kind == BINARY_ADD ? COW_KERNEL_ADD : COW_KERNEL_MUL, a, b,
                              args.alpha, args.alpha_u, ndim, sizes, error);
  CowTensor *out = cow_tensor_new_like (ndim, sizes, a->dtype, op, NULL, error);
  if (out == NULL)
    return NULL;
  void *out_data = cow_tensor_mutable_data_for (out, op, error);
  cow_broadcast_strides (a, ndim, sizes, strides[1]);
  cow_broadcast_strides (b, ndim, sizes, strides[2]);
  CowIter iter;
  cow_iter_init (&iter, ndim, sizes);
  cow_iter_add (&iter, out_data, out->strides, cow_tensor_itemsize (out));
  cow_iter_add (&iter, cow_tensor_const_data_for (a, op), strides[1], cow_tensor_itemsize (a));
  cow_iter_add (&iter, cow_tensor_const_data_for (b, op), strides[2], cow_tensor_itemsize (b));
  cow_iter_run (&iter, binary_loop, &args);
  return out;
}

static CowStatus
binary_in_place (const char *what, CowOp op, BinaryKind kind, CowTensor *a,
                 CowTensor *b, double alpha, CowError *error)
{
  COW_ENSURE_ERROR (error);
  BinaryArgs args = { .kind = kind };
  CowStatus status = check_binary (what, a, b, alpha, &args, error);
  if (status == COW_OK)
    status = check_broadcasts_to (what, a, b, error);
  if (status != COW_OK)
    return status;
  CowTensor *input = unaliased_input (a, b, op, error);
  if (input == NULL)
    return error->code;
  if (COW_UNLIKELY (cow_tensor_on_device (a)))
    {
      status = cow_device_binary_ (op, kind == BINARY_ADD ? COW_KERNEL_ADD : COW_KERNEL_MUL, a,
                                   input, args.alpha, args.alpha_u, error);
      cow_tensor_unref (input);
      return status;
    }
  void *out = cow_tensor_mutable_data_for (a, op, error);
  if (out == NULL)
    {
      cow_tensor_unref (input);
      return error->code;
    }
  int64_t b_strides[COW_MAX_DIMS];
  cow_broadcast_strides (input, a->ndim, a->sizes, b_strides);
  CowIter iter;
  cow_iter_init (&iter, a->ndim, a->sizes);
  cow_iter_add (&iter, out, a->strides, cow_tensor_itemsize (a));
  cow_iter_add (&iter, out, a->strides, cow_tensor_itemsize (a));
  cow_iter_add (&iter, cow_tensor_const_data_for (input, op), b_strides,
                cow_tensor_itemsize (input));
  cow_iter_run (&iter, binary_loop, &args);
  cow_tensor_unref (input);
  return COW_OK;
}

CowTensor *
cow_tensor_add (CowTensor *a, CowTensor *b, double alpha, CowError *error)
{
  return binary_out_of_place ("add", COW_OP_ADD, BINARY_ADD, a, b, alpha, error);
}

CowStatus
cow_tensor_add_ (CowTensor *a, CowTensor *b, double alpha, CowError *error)
{
  return binary_in_place ("add_", COW_OP_ADD_, BINARY_ADD, a, b, alpha, error);
}

CowTensor *
cow_tensor_mul (CowTensor *a, CowTensor *b, CowError *error)
{
  return binary_out_of_place ("mul", COW_OP_MUL, BINARY_MUL, a, b, 1.0, error);
}

CowStatus
cow_tensor_mul_ (CowTensor *a, CowTensor *b, CowError *error)
{
  return binary_in_place ("mul_", COW_OP_MUL_, BINARY_MUL, a, b, 1.0, error);
}

CowStatus
cow_tensor_scale_ (CowTensor *a, double value, CowError *error)
{
  COW_ENSURE_ERROR (error);
  CHECK_STATUS ("scale_", a);
  if (!cow_dtype_is_floating (a->dtype)
      && (value != floor (value)
          || check_scalar_fits ("scale_", "factor", value, COW_DTYPE_I64, NULL) != COW_OK))
    return cow_set_error (error, COW_ERROR_DTYPE,
                          "scale_: factor %g must be an integer for %s tensors",
                          value, cow_dtype_name (a->dtype));
  /* A 0-dim tensor of the factor broadcasts over @a.  Integer factors
   * wrap to the dtype's width, as add()'s alpha and the arithmetic do. */
  CowScalar scalar;
  if (cow_dtype_is_floating (a->dtype))
    cow_store_f64 (&scalar, a->dtype, value);
  else
    cow_store_i64 (&scalar, a->dtype, (int64_t) value);
  CowTensor *factor = cow_tensor_from_data (0, NULL, a->dtype, &scalar,
                                            cow_dtype_size (a->dtype), error);
  if (factor != NULL && COW_UNLIKELY (cow_tensor_on_device (a)))
    {
      CowTensor *on_device = cow_tensor_to (factor, cow_tensor_device (a), error);
      cow_tensor_unref (factor);
      factor = on_device;
    }
  if (factor == NULL)
    return error->code;
  CowStatus status = binary_in_place ("scale_", COW_OP_SCALE_, BINARY_MUL, a, factor, 1.0, error);
  cow_tensor_unref (factor);
  return status;
}

/* ---- reductions and matmul ---------------------------------------------- */

typedef struct {
  CowDType dtype;
  double sum_f;
  uint64_t sum_u; /* wraps, like int64 accumulation in PyTorch */
} SumArgs;

static void
sum_loop (char **data, const int64_t *strides, int64_t n, void *user_data)
{
  SumArgs *args = user_data;
  if (cow_dtype_is_floating (args->dtype))
    for (int64_t i = 0; i < n; i++)
      args->sum_f += cow_load_f64 (data[0] + i * strides[0], args->dtype);
  else
    for (int64_t i = 0; i < n; i++)
      args->sum_u += (uint64_t) cow_load_i64 (data[0] + i * strides[0], args->dtype);
}

CowTensor *
cow_tensor_sum (CowTensor *tensor, CowError *error)
{
  if (tensor == NULL)
    {
      cow_set_error (error, COW_ERROR_INVALID_ARGUMENT, "sum: tensor is NULL");
      return NULL;
    }
  if (cow_tensor_on_device (tensor))
    {
      cow_set_error (error, COW_ERROR_NOT_SUPPORTED,
                     "sum: not supported for device tensors (copy to the CPU with cow_tensor_to())");
      return NULL;
    }
  SumArgs args = { .dtype = tensor->dtype };
  CowIter iter;
  cow_iter_init (&iter, tensor->ndim, tensor->sizes);
  cow_iter_add (&iter, cow_tensor_const_data_for (tensor, COW_OP_SUM), tensor->strides,
                cow_tensor_itemsize (tensor));
  cow_iter_run (&iter, sum_loop, &args);

  bool floating = cow_dtype_is_floating (tensor->dtype);
  CowTensor *out = cow_tensor_new_like (0, NULL, floating ? tensor->dtype : COW_DTYPE_I64,
                                        COW_OP_SUM, NULL, error);
  if (out == NULL)
    return NULL;
  void *p = cow_tensor_mutable_data_for (out, COW_OP_SUM, error);
  if (floating)
    cow_store_f64 (p, out->dtype, args.sum_f);
  else
    cow_store_i64 (p, COW_DTYPE_I64, (int64_t) args.sum_u);
  return out;
}

#define MATMUL_LOOP(T, ACC)                                                    \
  do {                                                                         \
    const T *x = pa, *y = pb;                                                  \
    T *z = pc;                                                                 \
    for (int64_t i = 0; i < m; i++)                                            \
      for (int64_t p = 0; p < k; p++)                                          \
        {                                                                      \
          T xv = x[i * k + p];                                                 \
          for (int64_t j = 0; j < n; j++)                                      \
            z[i * n + j] = (T) ACC;                                            \
        }                                                                      \
  } while (0)

CowTensor *
cow_tensor_matmul (CowTensor *a, CowTensor *b, CowError *error)
{
  if (a == NULL || b == NULL)
    {
      cow_set_error (error, COW_ERROR_INVALID_ARGUMENT, "matmul: tensor is NULL");
      return NULL;
    }
  if (cow_tensor_on_device (a) || cow_tensor_on_device (b))
    {
      cow_set_error (error, COW_ERROR_NOT_SUPPORTED,
                     "matmul: not supported for device tensors (copy to the CPU with cow_tensor_to())");
      return NULL;
    }
  if (a->ndim < 1 || a->ndim > 2 || b->ndim < 1 || b->ndim > 2)
    {
      cow_set_error (error, COW_ERROR_NOT_SUPPORTED,
                     "matmul: supports 1-D and 2-D tensors, got %d-D and %d-D",
                     a->ndim, b->ndim);
      return NULL;
    }
  if (a->dtype != b->dtype || a->dtype == COW_DTYPE_BOOL)
    {
      cow_set_error (error, COW_ERROR_DTYPE, "matmul: dtypes %s and %s (equal, not bool)",
                     cow_dtype_name (a->dtype), cow_dtype_name (b->dtype));
      return NULL;
    }
  /* As matrices: a 1-D left operand is a row, a 1-D right one a column. */
  int64_t m = a->ndim == 2 ? a->sizes[0] : 1, k = a->sizes[a->ndim - 1];
  int64_t kb = b->sizes[0], n = b->ndim == 2 ? b->sizes[1] : 1;
  if (k != kb)
    {
      cow_set_error (error, COW_ERROR_SHAPE,
                     "matmul: inner sizes %" PRId64 " and %" PRId64 " differ", k, kb);
      return NULL;
    }
  int64_t out_sizes[2];
  int out_ndim = 0;
  if (a->ndim == 2)
    out_sizes[out_ndim++] = m;
  if (b->ndim == 2)
    out_sizes[out_ndim++] = n;

  CowTensor *ca = cow_tensor_contiguous (a, error);
  CowTensor *cb = ca ? cow_tensor_contiguous (b, error) : NULL;
  CowTensor *out = cb ? cow_tensor_new_like (out_ndim, out_sizes, a->dtype, COW_OP_MATMUL,
                                             NULL, error)
                      : NULL;
  if (out != NULL)
    {
      void *pc = cow_tensor_mutable_data_for (out, COW_OP_MATMUL, error);
      memset (pc, 0, cow_tensor_nbytes (out));
      const void *pa = cow_tensor_const_data_for (ca, COW_OP_MATMUL);
      const void *pb = cow_tensor_const_data_for (cb, COW_OP_MATMUL);
      switch (a->dtype)
        {
        case COW_DTYPE_F32: MATMUL_LOOP (float, z[i * n + j] + xv * y[p * n + j]); break;
        case COW_DTYPE_F64: MATMUL_LOOP (double, z[i * n + j] + xv * y[p * n + j]); break;
        case COW_DTYPE_I32:
          MATMUL_LOOP (int32_t, (uint64_t) z[i * n + j] + (uint64_t) xv * (uint64_t) y[p * n + j]);
          break;
        case COW_DTYPE_I64:
          MATMUL_LOOP (int64_t, (uint64_t) z[i * n + j] + (uint64_t) xv * (uint64_t) y[p * n + j]);
          break;
        case COW_DTYPE_U8:
          MATMUL_LOOP (uint8_t, (uint64_t) z[i * n + j] + (uint64_t) xv * (uint64_t) y[p * n + j]);
          break;
        case COW_DTYPE_BOOL:
        case COW_N_DTYPES:
          break;
        }
    }
  cow_tensor_unref (ca);
  cow_tensor_unref (cb);
  return out;
}
