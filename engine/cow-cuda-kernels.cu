/* cow-cuda-kernels.cu — the elementwise kernels behind fill_, add, mul
 * and device copies of device tensors.
 *
 * Why a fatbin loaded at run time rather than nvcc-compiled host code:
 * nvcc compiles only this file, to a fatbin that meson embeds in the
 * library as bytes; the host side (cow-cuda-ops.c) stays plain C11 that
 * loads it with cudaLibraryLoadData and launches through cudaLaunchKernel.
 * So the sanitizer builds (ASan/UBSan/TSan) never pass host code through
 * nvcc, no C++ runtime is linked, and the library needs libcudart only.
 * Built with -fmad=false so a + alpha × b rounds as on the CPU.
 *
 * One kernel per dtype; the op is a field of the argument (one switch
 * per element costs nothing next to the memory traffic).  Index
 * arithmetic is 64-bit: tensors may exceed 2^31 elements.
 */
#include <stdint.h>

#include "cow-cuda-kernel-args.h"

template <typename T>
__device__ __forceinline__ T
from_bits (uint64_t bits)
{
  T value;
  memcpy (&value, &bits, sizeof value);
  return value;
}

/* Element offset of operand @k for the row-major @linear index. */
__device__ __forceinline__ int64_t
offset_of (const CowKernelArgs &a, int k, int64_t linear)
{
  if (a.ndim == 1)
    return linear * a.strides[k][0];
  int64_t offset = 0;
  for (int d = a.ndim - 1; d >= 0; d--)
    {
      int64_t size = a.sizes[d];
      offset += (linear % size) * a.strides[k][d];
      linear /= size;
    }
  return offset;
}

template <typename T>
__device__ __forceinline__ T
combine (const CowKernelArgs &a, T x, T y)
{
  if (a.op == COW_KERNEL_ADD)
    return x + (T) a.alpha * y;
  return x * y;
}

/* Integers wrap modulo 2^64 and keep the low bits, as on the CPU. */
#define INTEGER_COMBINE(T)                                                     \
  template <>                                                                  \
  __device__ __forceinline__ T combine<T> (const CowKernelArgs &a, T x, T y)   \
  {                                                                            \
    if (a.op == COW_KERNEL_ADD)                                                \
      return (T) ((uint64_t) x + a.alpha_u * (uint64_t) y);                    \
    return (T) ((uint64_t) x * (uint64_t) y);                                  \
  }
INTEGER_COMBINE (int32_t)
INTEGER_COMBINE (int64_t)
INTEGER_COMBINE (uint8_t)

template <>
__device__ __forceinline__ bool
combine<bool> (const CowKernelArgs &a, bool x, bool y)
{
  if (a.op == COW_KERNEL_ADD)
    return x || (a.alpha_u != 0 && y);
  return x && y;
}

template <typename T>
__device__ void
elementwise (const CowKernelArgs &a)
{
  const int64_t step = (int64_t) gridDim.x * blockDim.x;
  for (int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; i < a.numel; i += step)
    {
      T *out = (T *) a.data[0] + offset_of (a, 0, i);
      switch (a.op)
        {
        case COW_KERNEL_FILL:
          *out = from_bits<T> (a.value);
          break;
        case COW_KERNEL_COPY:
          *out = *((const T *) a.data[1] + offset_of (a, 1, i));
          break;
        default:
          *out = combine<T> (a, *((const T *) a.data[1] + offset_of (a, 1, i)),
                             *((const T *) a.data[2] + offset_of (a, 2, i)));
          break;
        }
    }
}

/* Names looked up by cow-cuda-ops.c; the suffix is cow_dtype_name(). */
extern "C" {
__global__ void cow_elementwise_f32 (CowKernelArgs a) { elementwise<float> (a); }
__global__ void cow_elementwise_f64 (CowKernelArgs a) { elementwise<double> (a); }
__global__ void cow_elementwise_i32 (CowKernelArgs a) { elementwise<int32_t> (a); }
__global__ void cow_elementwise_i64 (CowKernelArgs a) { elementwise<int64_t> (a); }
__global__ void cow_elementwise_u8 (CowKernelArgs a) { elementwise<uint8_t> (a); }
__global__ void cow_elementwise_bool (CowKernelArgs a) { elementwise<bool> (a); }
}
