/* cow-device-ops.c — fill_, add, mul and copies of device tensors, as
 * kernels (cow-cuda-kernels.cu) enqueued on the output storage's stream.
 *
 * The order is cow-ops.c's: everything is checked before the output's
 * mutable data is taken (which may materialize a lazy copy, enqueuing its
 * copy on the same stream first), and only then are the inputs read.
 * Inputs on other streams are ordered both ways around the kernel
 * (cow-cuda.h): the kernel after their earlier writes, their later work
 * and their free after the kernel.
 */
#include "cow-device-private.h"
#include "cow-ops.h"

#include <string.h>

/* Operand @k of @args: @data (element 0) with @tensor's strides broadcast
 * to the iteration shape. */
static void
set_operand (CowKernelArgs *args, int k, const void *data, const CowTensor *tensor)
{
  args->data[k] = (void *) data;
  cow_broadcast_strides (tensor, args->ndim, args->sizes, args->strides[k]);
}

static void
init_args (CowKernelArgs *args, CowKernelOp op, int ndim, const int64_t *sizes)
{
  memset (args, 0, sizeof *args);
  args->op = op;
  args->ndim = ndim;
  args->numel = 1;
  for (int d = 0; d < ndim; d++)
    {
      args->sizes[d] = sizes[d];
      args->numel *= sizes[d];
    }
}

/* One dimension when every operand is contiguous or a broadcast scalar:
 * the kernel then spends no divisions on indices. */
static void
flatten (CowKernelArgs *args, int n_operands)
{
  int64_t contiguous[COW_MAX_DIMS];
  cow_contiguous_strides (args->ndim, args->sizes, contiguous);
  int64_t flat[COW_KERNEL_MAX_OPERANDS];
  for (int k = 0; k < n_operands; k++)
    {
      bool dense = true, scalar = true;
      for (int d = 0; d < args->ndim; d++)
        if (args->sizes[d] > 1)
          {
            dense = dense && args->strides[k][d] == contiguous[d];
            scalar = scalar && args->strides[k][d] == 0;
          }
      if (!dense && !scalar)
        return;
      flat[k] = dense ? 1 : 0;
    }
  args->ndim = 1;
  args->sizes[0] = args->numel;
  for (int k = 0; k < n_operands; k++)
    args->strides[k][0] = flat[k];
}

/* Runs @args (operand 0 writes @out's storage) on that storage's stream,
 * ordered against the inputs' streams. */
static CowStatus
launch (CowKernelArgs *args, int n_operands, CowDType dtype, const CowTensor *out,
        const CowTensor *in0, const CowTensor *in1, CowError *error)
{
  if (args->numel == 0)
    return COW_OK;
  if (args->ndim == 0)
    {
      args->ndim = 1;
      args->sizes[0] = 1;
    }
  else
    flatten (args, n_operands);
  CowCudaStream *stream = out->storage->stream;
  const CowTensor *inputs[] = { in0, in1 };
  for (int i = 0; i < 2; i++)
    if (inputs[i] != NULL)
      cow_cuda_stream_wait_stream (stream, inputs[i]->storage->stream);
  CowStatus status = cow_cuda_launch_elementwise (dtype, args, stream, error);
  for (int i = 0; i < 2; i++)
    if (inputs[i] != NULL && status == COW_OK)
      cow_cuda_stream_wait_stream (inputs[i]->storage->stream, stream);
  return status;
}

CowStatus
cow_device_fill_ (CowTensor *tensor, const CowScalar *value, CowError *error)
{
  COW_ENSURE_ERROR (error);
  void *out = cow_tensor_mutable_data_for (tensor, COW_OP_FILL_, error);
  if (out == NULL)
    return error->code;
  CowKernelArgs args;
  init_args (&args, COW_KERNEL_FILL, tensor->ndim, tensor->sizes);
  memcpy (&args.value, value->bytes, sizeof value->bytes);
  set_operand (&args, 0, out, tensor);
  return launch (&args, 1, tensor->dtype, tensor, NULL, NULL, error);
}

CowTensor *
cow_device_binary (CowOp op, CowKernelOp kind, CowTensor *a, CowTensor *b, double alpha,
                   uint64_t alpha_u, int ndim, const int64_t *sizes, CowError *error)
{
  CowAllocator *allocator = cow_storage_result_allocator (a->storage, error);
  if (allocator == NULL)
    return NULL;
  CowTensor *out = cow_tensor_new_fresh (ndim, sizes, a->dtype, allocator, op, NULL, error);
  if (out == NULL)
    return NULL;
  CowKernelArgs args;
  init_args (&args, kind, ndim, sizes);
  args.alpha = alpha;
  args.alpha_u = alpha_u;
  set_operand (&args, 0, cow_tensor_mutable_data_for (out, op, error), out);
  set_operand (&args, 1, cow_tensor_const_data_for (a, op), a);
  set_operand (&args, 2, cow_tensor_const_data_for (b, op), b);
  if (launch (&args, 3, a->dtype, out, a, b, error) != COW_OK)
    {
      cow_tensor_unref (out);
      return NULL;
    }
  return out;
}

CowStatus
cow_device_binary_ (CowOp op, CowKernelOp kind, CowTensor *a, CowTensor *b, double alpha,
                    uint64_t alpha_u, CowError *error)
{
  COW_ENSURE_ERROR (error);
  void *out = cow_tensor_mutable_data_for (a, op, error);
  if (out == NULL)
    return error->code;
  CowKernelArgs args;
  init_args (&args, kind, a->ndim, a->sizes);
  args.alpha = alpha;
  args.alpha_u = alpha_u;
  set_operand (&args, 0, out, a);
  set_operand (&args, 1, out, a);
  set_operand (&args, 2, cow_tensor_const_data_for (b, op), b);
  return launch (&args, 3, a->dtype, a, b->storage == a->storage ? NULL : b, NULL, error);
}

CowStatus
cow_device_copy_ (CowTensor *dst, CowTensor *src, CowError *error)
{
  COW_ENSURE_ERROR (error);
  if (dst->dtype != src->dtype)
    return cow_set_error (error, COW_ERROR_NOT_SUPPORTED,
                          "copy_: converting %s to %s is not supported for device tensors",
                          cow_dtype_name (src->dtype), cow_dtype_name (dst->dtype));
  /* The source on the destination's device first (a new reference). */
  CowTensor *input = cow_tensor_to (src, cow_tensor_device (dst), error);
  if (input != NULL && input->storage == dst->storage)
    {
      /* Overlapping source: read from a copy, as cow-ops.c does. */
      CowTensor *copy = cow_tensor_clone_as (input, input->ndim, input->sizes, COW_OP_COPY_, error);
      cow_tensor_unref (input);
      input = copy;
    }
  if (input == NULL)
    return error->code;
  CowStatus status;
  if (!cow_tensor_on_device (dst))
    status = cow_tensor_copy_ (dst, input, error); /* both on the host now */
  else
    {
      void *out = cow_tensor_mutable_data_for (dst, COW_OP_COPY_, error);
      if (out == NULL)
        status = error->code;
      else
        {
          CowKernelArgs args;
          init_args (&args, COW_KERNEL_COPY, dst->ndim, dst->sizes);
          set_operand (&args, 0, out, dst);
          set_operand (&args, 1, cow_tensor_const_data_for (input, COW_OP_COPY_), input);
          status = launch (&args, 2, dst->dtype, dst, input, NULL, error);
        }
    }
  cow_tensor_unref (input);
  return status;
}

CowTensor *
cow_device_clone_as (CowTensor *tensor, int ndim, const int64_t *sizes, CowOp op,
                     CowError *error)
{
  CowAllocator *allocator = cow_storage_result_allocator (tensor->storage, error);
  if (allocator == NULL)
    return NULL;
  CowTensor *result = cow_tensor_new_fresh (ndim, sizes, tensor->dtype, allocator, op,
                                            tensor, error);
  if (result == NULL)
    return NULL;
  /* Iterate in the source's shape; the result holds the same elements in
   * row-major order. */
  CowKernelArgs args;
  init_args (&args, COW_KERNEL_COPY, tensor->ndim, tensor->sizes);
  cow_contiguous_strides (tensor->ndim, tensor->sizes, args.strides[0]);
  args.data[0] = cow_tensor_mutable_data_for (result, op, error);
  set_operand (&args, 1, cow_tensor_const_data_for (tensor, op), tensor);
  CowStatus status;
  if (cow_tensor_is_contiguous (tensor))
    {
      /* A plain device copy: the copy engine, no kernel. */
      cow_cuda_stream_wait_stream (result->storage->stream, tensor->storage->stream);
      status = cow_cuda_copy (args.data[0], args.data[1], cow_tensor_nbytes (tensor),
                              COW_COPY_DEVICE_TO_DEVICE, result->storage->stream, error);
      if (status == COW_OK)
        cow_cuda_stream_wait_stream (tensor->storage->stream, result->storage->stream);
    }
  else
    status = launch (&args, 2, tensor->dtype, result, tensor, NULL, error);
  if (status != COW_OK)
    {
      cow_tensor_unref (result);
      return NULL;
    }
  return result;
}

CowStatus
cow_device_read_elements (const CowTensor *tensor, void *out, CowError *error)
{
  COW_ENSURE_ERROR (error);
  CowTensor *host = cow_tensor_to ((CowTensor *) tensor, cow_device_cpu (), error);
  if (host == NULL)
    return error->code;
  size_t nbytes = cow_tensor_nbytes (host);
  if (nbytes > 0)
    memcpy (out, cow_tensor_const_data_for (host, COW_OP_NONE), nbytes);
  cow_tensor_unref (host);
  return COW_OK;
}

CowStatus
cow_device_read_element (const CowTensor *tensor, int64_t offset, void *out,
                         CowError *error)
{
  const char *base = cow_tensor_const_data_for (tensor, COW_OP_NONE);
  size_t itemsize = cow_tensor_itemsize (tensor);
  return cow_cuda_copy (out, base + offset * (int64_t) itemsize, itemsize,
                        COW_COPY_DEVICE_TO_HOST, tensor->storage->stream, error);
}
