/* cow-cuda-kernel-args.h — the one argument of the engine's elementwise
 * CUDA kernels, shared by the kernels (C++, nvcc) and the C code that
 * launches them.  Plain data, the same layout in both languages. */
#pragma once

#include <stdint.h>

#define COW_KERNEL_MAX_DIMS 8
#define COW_KERNEL_MAX_OPERANDS 3

typedef enum {
  COW_KERNEL_FILL = 0, /* out = value */
  COW_KERNEL_COPY = 1, /* out = in0 */
  COW_KERNEL_ADD = 2,  /* out = in0 + alpha × in1 */
  COW_KERNEL_MUL = 3,  /* out = in0 × in1 */
} CowKernelOp;

typedef struct {
  /* Operand 0 is the output; 1 and 2 the inputs the op reads. */
  void *data[COW_KERNEL_MAX_OPERANDS];
  int64_t numel;
  int32_t ndim;
  int32_t op; /* CowKernelOp */
  int64_t sizes[COW_KERNEL_MAX_DIMS];
  /* In elements; 0 along broadcast dimensions. */
  int64_t strides[COW_KERNEL_MAX_OPERANDS][COW_KERNEL_MAX_DIMS];
  double alpha;     /* ADD on floating dtypes */
  uint64_t alpha_u; /* ADD on integer dtypes: wraps like the arithmetic */
  uint64_t value;   /* FILL: one element's bytes, already converted */
} CowKernelArgs;
