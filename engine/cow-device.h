/* cow-device.h — where a tensor's bytes live: the host or a CUDA device.
 *
 * A device is a type and an index ("cuda:1").  Device tensors are made
 * with cow_tensor_empty_on() or cow_tensor_to() (cow-tensor.h) and live in
 * memory from cow_cuda_allocator() (cow-cuda.h).  On a machine without a
 * CUDA driver or device, every device operation fails with
 * COW_ERROR_DEVICE "no CUDA device: <reason>"; everything on the CPU
 * works as before.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  COW_DEVICE_CPU = 0,
  COW_DEVICE_CUDA = 1,
} CowDeviceType;

typedef struct {
  CowDeviceType type;
  int index; /* 0 for the CPU */
} CowDevice;

static inline CowDevice
cow_device_cpu (void)
{
  return (CowDevice) { COW_DEVICE_CPU, 0 };
}

static inline CowDevice
cow_device_cuda (int index)
{
  return (CowDevice) { COW_DEVICE_CUDA, index };
}

static inline bool
cow_device_equal (CowDevice a, CowDevice b)
{
  return a.type == b.type && a.index == b.index;
}

/* Longest text cow_device_format() writes, with its NUL. */
#define COW_DEVICE_NAME_MAX 24

/* Writes "cpu", "cuda:N" or "invalid device (type T)" into @buffer of
 * @size bytes and returns @buffer. */
const char *cow_device_format (CowDevice device, char *buffer, size_t size);

#ifdef __cplusplus
}
#endif
