/* cow-device-private.h — device tensors inside the engine: where the ops
 * and copies of cow-ops.c hand over when an operand lives on a device
 * (cow-device.c, cow-device-ops.c). */
#pragma once

#include "cow-iter-private.h"

static inline bool
cow_tensor_on_device (const CowTensor *tensor)
{
  return cow_storage_is_device (tensor->storage);
}

/* COW_OK when @a and @b are on one device; else COW_ERROR_INVALID_ARGUMENT
 * naming both ("add: operands on different devices (cpu and cuda:0)"). */
COW_INTERNAL CowStatus cow_check_same_device (const char *what, const CowTensor *a,
                                              const CowTensor *b, CowError *error);

/* The device halves of cow-ops.c's entry points.  Arguments are already
 * checked (shapes, dtypes, scalars) unless said otherwise. */

/* Sets every element of @tensor to @value (one element's bytes). */
COW_INTERNAL CowStatus cow_device_fill_ (CowTensor *tensor, const CowScalar *value,
                                         CowError *error);

/* out = a + alpha × b (COW_KERNEL_ADD) or a × b (COW_KERNEL_MUL),
 * broadcast to @ndim/@sizes; @alpha_u is alpha for integer dtypes. */
COW_INTERNAL CowTensor *cow_device_binary (CowOp op, CowKernelOp kind, CowTensor *a,
                                           CowTensor *b, double alpha, uint64_t alpha_u,
                                           int ndim, const int64_t *sizes, CowError *error);
/* a = a + alpha × b or a × b, in place; @b already broadcasts to @a and
 * does not overlap it with another layout. */
COW_INTERNAL CowStatus cow_device_binary_ (CowOp op, CowKernelOp kind, CowTensor *a,
                                           CowTensor *b, double alpha, uint64_t alpha_u,
                                           CowError *error);
/* dst = src (src broadcast to dst's shape).  Either may be on the host;
 * dtypes must match.  Checks the devices and dtypes itself. */
COW_INTERNAL CowStatus cow_device_copy_ (CowTensor *dst, CowTensor *src, CowError *error);

/* A contiguous copy of @tensor's elements in row-major order, on its
 * device, viewed with @sizes (same element count), made by @op. */
COW_INTERNAL CowTensor *cow_device_clone_as (CowTensor *tensor, int ndim,
                                             const int64_t *sizes, CowOp op,
                                             CowError *error);

/* cow_tensor_read_elements() and cow_tensor_get_f64() for device tensors:
 * they wait for the storage's stream. */
COW_INTERNAL CowStatus cow_device_read_elements (const CowTensor *tensor, void *out,
                                                 CowError *error);
COW_INTERNAL CowStatus cow_device_read_element (const CowTensor *tensor, int64_t offset,
                                                void *out, CowError *error);
