/* cow-iter-private.h — strided iteration over up to three operands that
 * share one (broadcast) shape, and element conversions.  Used by the ops,
 * clones and reads. */
#pragma once

#include <stdint.h>

#include "cow-tensor-private.h"

#define COW_ITER_MAX_OPERANDS 3

typedef struct {
  int ndim;
  int64_t sizes[COW_MAX_DIMS];
  int n_operands;
  char *data[COW_ITER_MAX_OPERANDS];
  int64_t strides[COW_ITER_MAX_OPERANDS][COW_MAX_DIMS]; /* in bytes */
} CowIter;

/* Runs over one innermost row: @n elements, operand i at data[i] stepping
 * strides[i] bytes. */
typedef void (*CowIterLoop) (char **data, const int64_t *strides, int64_t n,
                             void *user_data);

COW_INTERNAL void cow_iter_init (CowIter *iter, int ndim, const int64_t *sizes);
/* Adds an operand whose element strides are already broadcast to the
 * iteration shape. */
COW_INTERNAL void cow_iter_add (CowIter *iter, const void *data,
                                const int64_t *element_strides, size_t itemsize);
/* Visits every element in row-major order of the iteration shape. */
COW_INTERNAL void cow_iter_run (CowIter *iter, CowIterLoop loop, void *user_data);

/* The shape @a and @b broadcast to (NumPy rules). */
COW_INTERNAL CowStatus cow_broadcast_shape (const char *what, const CowTensor *a,
                                            const CowTensor *b, int *ndim,
                                            int64_t *sizes, CowError *error);
/* @tensor's element strides when broadcast to @sizes (0 where expanded);
 * the shape must be compatible. */
COW_INTERNAL void cow_broadcast_strides (const CowTensor *tensor, int ndim,
                                         const int64_t *sizes, int64_t *strides);

/* One element of any dtype, suitably aligned for each. */
typedef union {
  float f32;
  double f64;
  int32_t i32;
  int64_t i64;
  uint8_t u8;
  _Bool b;
  char bytes[8];
} CowScalar;

/* Element conversions.  Float to integer saturates (NaN gives 0), so no
 * conversion is undefined behaviour. */
COW_INTERNAL double cow_load_f64 (const void *p, CowDType dtype);
COW_INTERNAL int64_t cow_load_i64 (const void *p, CowDType dtype);
COW_INTERNAL void cow_store_f64 (void *p, CowDType dtype, double value);
COW_INTERNAL void cow_store_i64 (void *p, CowDType dtype, int64_t value);
