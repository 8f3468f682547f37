/* cow-device.c — devices of tensors and copies between them
 * (cow_tensor_to(), cow_tensor_empty_on()). */
#include "cow-device-private.h"

#include <stdio.h>
#include <string.h>

const char *
cow_device_format (CowDevice device, char *buffer, size_t size)
{
  switch (device.type)
    {
    case COW_DEVICE_CPU: snprintf (buffer, size, "cpu"); break;
    case COW_DEVICE_CUDA: snprintf (buffer, size, "cuda:%d", device.index); break;
    default: snprintf (buffer, size, "invalid device (type %d)", (int) device.type); break;
    }
  return buffer;
}

CowDevice
cow_tensor_device (const CowTensor *tensor)
{
  return tensor != NULL ? tensor->storage->device : cow_device_cpu ();
}

CowStatus
cow_check_same_device (const char *what, const CowTensor *a, const CowTensor *b,
                       CowError *error)
{
  CowDevice da = cow_tensor_device (a), db = cow_tensor_device (b);
  if (cow_device_equal (da, db))
    return COW_OK;
  char na[COW_DEVICE_NAME_MAX], nb[COW_DEVICE_NAME_MAX];
  return cow_set_error (error, COW_ERROR_INVALID_ARGUMENT,
                        "%s: operands on different devices (%s and %s)", what,
                        cow_device_format (da, na, sizeof na),
                        cow_device_format (db, nb, sizeof nb));
}

/* The allocator of @device, or NULL with @error set. */
static CowAllocator *
allocator_of (const char *what, CowDevice device, CowError *error)
{
  switch (device.type)
    {
    case COW_DEVICE_CPU:
      if (device.index != 0)
        {
          cow_set_error (error, COW_ERROR_OUT_OF_RANGE, "%s: cpu:%d does not exist (use cpu:0)",
                         what, device.index);
          return NULL;
        }
      return cow_cpu_allocator ();
    case COW_DEVICE_CUDA:
      return cow_cuda_allocator (device.index, error);
    }
  cow_set_error (error, COW_ERROR_INVALID_ARGUMENT, "%s: %d is not a device type", what,
                 (int) device.type);
  return NULL;
}

CowTensor *
cow_tensor_empty_on (int ndim, const int64_t *sizes, CowDType dtype, CowDevice device,
                     CowError *error)
{
  CowAllocator *allocator = allocator_of ("empty_on", device, error);
  if (allocator == NULL)
    return NULL;
  return cow_tensor_new_fresh (ndim, sizes, dtype, allocator, COW_OP_EMPTY, NULL, error);
}

/* Copies contiguous @src into fresh contiguous @dst of the same shape on
 * another device; both streams are ordered around the copy. */
static CowStatus
copy_across (CowTensor *dst, const CowTensor *src, CowError *error)
{
  size_t nbytes = cow_tensor_nbytes (src);
  void *out = cow_tensor_mutable_data_for (dst, COW_OP_TO_DEVICE, error);
  const void *in = cow_tensor_const_data_for (src, COW_OP_TO_DEVICE);
  if (out == NULL)
    return error->code;
  CowCudaStream *from = src->storage->stream, *to = dst->storage->stream;
  if (!cow_tensor_on_device (src))
    return cow_cuda_copy (out, in, nbytes, COW_COPY_HOST_TO_DEVICE, to, error);
  if (!cow_tensor_on_device (dst))
    return cow_cuda_copy (out, in, nbytes, COW_COPY_DEVICE_TO_HOST, from, error);
  /* Device to device: the copy runs on the destination's stream after
   * the source's writes, and the source's later work waits for it. */
  cow_cuda_stream_wait_stream (to, from);
  CowStatus status = cow_cuda_copy_peer (out, in, from->device_index, nbytes, to, error);
  cow_cuda_stream_wait_stream (from, to);
  return status;
}

CowTensor *
cow_tensor_to (CowTensor *tensor, CowDevice device, CowError *error)
{
  COW_ENSURE_ERROR (error);
  if (tensor == NULL)
    {
      cow_set_error (error, COW_ERROR_INVALID_ARGUMENT, "to: tensor is NULL");
      return NULL;
    }
  CowAllocator *allocator = allocator_of ("to", device, error);
  if (allocator == NULL)
    return NULL;
  if (cow_device_equal (cow_tensor_device (tensor), device))
    return cow_tensor_ref (tensor);

  /* Copies move contiguous bytes: make the source contiguous where it is. */
  CowTensor *source = cow_tensor_contiguous (tensor, error);
  if (source == NULL)
    return NULL;
  CowTensor *result = cow_tensor_new_fresh (tensor->ndim, tensor->sizes, tensor->dtype,
                                            allocator, COW_OP_TO_DEVICE, tensor, error);
  if (result != NULL && copy_across (result, source, error) != COW_OK)
    {
      cow_tensor_unref (result);
      result = NULL;
    }
  cow_tensor_unref (source);
  return result;
}
