/* cow-ops.h — arithmetic, enough to write realistic workloads.
 *
 * Every op that writes goes through the mutable data path, so writing to a
 * lazy copy materializes it and inputs are never written.  Binary ops need
 * equal dtypes and broadcastable shapes (NumPy rules).
 */
#pragma once

#include "cow-error.h"
#include "cow-tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Sets every element to @value (converted to the dtype). */
CowStatus cow_tensor_fill_ (CowTensor *tensor, double value, CowError *error);

/* a + alpha × b, broadcast; add_ writes into @a, b broadcast to a's shape. */
CowTensor *cow_tensor_add (CowTensor *a, CowTensor *b, double alpha,
                           CowError *error);
CowStatus cow_tensor_add_ (CowTensor *a, CowTensor *b, double alpha,
                           CowError *error);
/* a × b, elementwise, broadcast. */
CowTensor *cow_tensor_mul (CowTensor *a, CowTensor *b, CowError *error);
CowStatus cow_tensor_mul_ (CowTensor *a, CowTensor *b, CowError *error);
/* a × value, in place. */
CowStatus cow_tensor_scale_ (CowTensor *a, double value, CowError *error);

/* Matrix product of 1-D or 2-D tensors (as torch.matmul for those ranks). */
CowTensor *cow_tensor_matmul (CowTensor *a, CowTensor *b, CowError *error);

/* Sum of all elements as a 0-dim tensor: f32/f64 keep their dtype, the
 * integer types and bool sum to i64. */
CowTensor *cow_tensor_sum (CowTensor *tensor, CowError *error);

/* Copies @src into @dst (src broadcast to dst's shape, converted to dst's
 * dtype).  Overlapping source and destination are handled. */
CowStatus cow_tensor_copy_ (CowTensor *dst, CowTensor *src, CowError *error);

/* The only element of a one-element tensor, as double. */
CowStatus cow_tensor_item (CowTensor *tensor, double *out, CowError *error);

#ifdef __cplusplus
}
#endif
