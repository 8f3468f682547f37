/* cow-lazy-private.h — lazy clones with a new layout, for reshape(). */
#pragma once

#include "cow-tensor-private.h"

/* A lazy copy of @tensor viewed with @sizes/@strides (which must address
 * the same elements, as cow_compute_view_strides() gives), made by @op.
 * Falls back to an eager contiguous copy, with a trace event giving the
 * reason, when the bytes cannot be shared. */
COW_INTERNAL CowTensor *cow_tensor_lazy_clone_as (CowTensor *tensor, int ndim,
                                                  const int64_t *sizes,
                                                  const int64_t *strides,
                                                  CowOp op, CowError *error);
