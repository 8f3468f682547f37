/* cow-cuda-runtime-private.h — helpers shared by the sources that call
 * the CUDA runtime (cow-cuda-*.c, built only with the toolkit). */
#pragma once

#include <cuda_runtime_api.h>

#include "cow-cuda-private.h"

/* Fills @error from a failed runtime call @what: COW_ERROR_NO_MEMORY for
 * cudaErrorMemoryAllocation, else COW_ERROR_DEVICE; the message names
 * the call and gives the runtime's words and error name. */
COW_INTERNAL CowStatus cow_cuda_fail (CowError *error, const char *what, cudaError_t status);

/* Makes cuda:@index current for the calling thread after checking it
 * (cow_cuda_check_device()); *@previous receives the device to restore
 * with cow_cuda_restore_device(). */
COW_INTERNAL CowStatus cow_cuda_enter_device (int index, int *previous, CowError *error);
COW_INTERNAL void cow_cuda_restore_device (int previous);

/* Makes @stream's device current (see cow_cuda_enter_device()). */
static inline CowStatus
cow_cuda_enter_stream (const CowCudaStream *stream, int *previous, CowError *error)
{
  return cow_cuda_enter_device (stream->device_index, previous, error);
}

static inline cudaStream_t
cow_cuda_stream_handle (const CowCudaStream *stream)
{
  /* A default stream is the legacy stream of the device that is current
   * at the call: callers enter the stream's device first. */
  return (cudaStream_t) stream->handle;
}
