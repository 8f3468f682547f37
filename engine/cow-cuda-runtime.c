/* cow-cuda-runtime.c — CUDA devices, streams and copies through the CUDA
 * runtime (cow-cuda.h).  Built only when meson finds the toolkit. */
#include "cow-cuda-runtime-private.h"

#include <pthread.h>
#include <stdlib.h>

/* ---- devices ------------------------------------------------------------ */

/* Asked once: cudaGetDeviceCount is what loads the driver, and its answer
 * does not change while the process runs. */
static pthread_once_t probe_once = PTHREAD_ONCE_INIT;
static int probed_count;
static cudaError_t probed_status;

static void
probe_devices (void)
{
  probed_status = cudaGetDeviceCount (&probed_count);
  if (probed_status == cudaSuccess && probed_count <= 0)
    probed_status = cudaErrorNoDevice;
  if (probed_status != cudaSuccess)
    probed_count = 0;
  else if (probed_count > COW_CUDA_MAX_DEVICES)
    probed_count = COW_CUDA_MAX_DEVICES;
}

CowStatus
cow_cuda_available (CowError *error)
{
  pthread_once (&probe_once, probe_devices);
  if (probed_status != cudaSuccess)
    return cow_set_error (error, COW_ERROR_DEVICE, "no CUDA device: %s (%s)",
                          cudaGetErrorString (probed_status),
                          cudaGetErrorName (probed_status));
  return COW_OK;
}

int
cow_cuda_device_count (void)
{
  pthread_once (&probe_once, probe_devices);
  return probed_count;
}

CowStatus
cow_cuda_check_device (int index, CowError *error)
{
  CowStatus status = cow_cuda_available (error);
  if (status != COW_OK)
    return status;
  if (index < 0 || index >= probed_count)
    return cow_set_error (error, COW_ERROR_OUT_OF_RANGE,
                          "cuda:%d does not exist: this machine has %d CUDA device%s",
                          index, probed_count, probed_count == 1 ? "" : "s");
  return COW_OK;
}

CowStatus
cow_cuda_fail (CowError *error, const char *what, cudaError_t status)
{
  return cow_set_error (error,
                        status == cudaErrorMemoryAllocation ? COW_ERROR_NO_MEMORY
                                                            : COW_ERROR_DEVICE,
                        "%s: %s (%s)", what, cudaGetErrorString (status),
                        cudaGetErrorName (status));
}

CowStatus
cow_cuda_enter_device (int index, int *previous, CowError *error)
{
  CowStatus status = cow_cuda_check_device (index, error);
  if (status != COW_OK)
    return status;
  cudaError_t result = cudaGetDevice (previous);
  if (result == cudaSuccess && *previous != index)
    result = cudaSetDevice (index);
  if (result != cudaSuccess)
    return cow_cuda_fail (error, "cudaSetDevice", result);
  return COW_OK;
}

void
cow_cuda_restore_device (int previous)
{
  int current = -1;
  if (cudaGetDevice (&current) == cudaSuccess && current != previous)
    cudaSetDevice (previous);
}

CowStatus
cow_cuda_synchronize (int index, CowError *error)
{
  int previous;
  CowStatus status = cow_cuda_enter_device (index, &previous, error);
  if (status != COW_OK)
    return status;
  cudaError_t result = cudaDeviceSynchronize ();
  cow_cuda_restore_device (previous);
  return result == cudaSuccess ? COW_OK
                               : cow_cuda_fail (error, "cudaDeviceSynchronize", result);
}

/* ---- streams -------------------------------------------------------------- */

static COW_TLS CowCudaStream *current_stream;

/* Each device's legacy default stream, as a stream object that knows its
 * device.  Immortal: ref and unref leave them alone. */
static CowCudaStream default_streams[COW_CUDA_MAX_DEVICES];
static pthread_once_t default_streams_once = PTHREAD_ONCE_INIT;

static void
init_default_streams (void)
{
  for (int i = 0; i < COW_CUDA_MAX_DEVICES; i++)
    {
      atomic_init (&default_streams[i].refcount, 1);
      default_streams[i].device_index = i;
      default_streams[i].is_default = true;
      default_streams[i].handle = NULL;
    }
}

CowCudaStream *
cow_cuda_stream_for_device (int device_index)
{
  CowCudaStream *stream = current_stream;
  if (stream != NULL && stream->device_index == device_index)
    return cow_cuda_stream_ref (stream);
  pthread_once (&default_streams_once, init_default_streams);
  if (device_index < 0 || device_index >= COW_CUDA_MAX_DEVICES)
    device_index = 0; /* callers checked the index; never out of bounds */
  return &default_streams[device_index];
}

CowCudaStream *
cow_cuda_stream_new (int device_index, CowError *error)
{
  int previous;
  if (cow_cuda_enter_device (device_index, &previous, error) != COW_OK)
    return NULL;
  CowCudaStream *stream = malloc (sizeof *stream);
  cudaStream_t handle = NULL;
  cudaError_t result = cudaErrorMemoryAllocation;
  if (stream != NULL)
    /* Non-blocking: the engine orders streams with events itself, and a
     * stream that waited on the legacy default stream would serialize the
     * concurrency it exists for. */
    result = cudaStreamCreateWithFlags (&handle, cudaStreamNonBlocking);
  cow_cuda_restore_device (previous);
  if (result != cudaSuccess)
    {
      free (stream);
      cow_cuda_fail (error, "cudaStreamCreateWithFlags", result);
      return NULL;
    }
  atomic_init (&stream->refcount, 1);
  stream->device_index = device_index;
  stream->is_default = false;
  stream->handle = handle;
  return stream;
}

CowCudaStream *
cow_cuda_stream_ref (CowCudaStream *stream)
{
  if (stream != NULL && !stream->is_default)
    /* Relaxed: the caller already holds a reference. */
    atomic_fetch_add_explicit (&stream->refcount, 1, memory_order_relaxed);
  return stream;
}

void
cow_cuda_stream_unref (CowCudaStream *stream)
{
  if (stream == NULL || stream->is_default || !cow_release_ref (&stream->refcount))
    return;
  /* Work still queued runs to completion; the runtime frees the stream
   * afterwards. */
  cudaStreamDestroy ((cudaStream_t) stream->handle);
  free (stream);
}

int
cow_cuda_stream_device (const CowCudaStream *stream)
{
  return stream != NULL ? stream->device_index : 0;
}

CowStatus
cow_cuda_stream_synchronize (CowCudaStream *stream, CowError *error)
{
  int previous;
  CowStatus status = stream != NULL ? cow_cuda_enter_stream (stream, &previous, error)
                                    : cow_cuda_available (error);
  if (status != COW_OK)
    return status;
  cudaError_t result = cudaStreamSynchronize (stream != NULL ? cow_cuda_stream_handle (stream)
                                                             : (cudaStream_t) 0);
  if (stream != NULL)
    cow_cuda_restore_device (previous);
  return result == cudaSuccess ? COW_OK
                               : cow_cuda_fail (error, "cudaStreamSynchronize", result);
}

void
cow_cuda_set_current_stream (CowCudaStream *stream)
{
  current_stream = stream;
}

CowCudaStream *
cow_cuda_get_current_stream (void)
{
  return current_stream;
}

CowCudaStream *
cow_cuda_exchange_current_stream (CowCudaStream *stream)
{
  CowCudaStream *previous = current_stream;
  current_stream = stream;
  return previous;
}

void
cow_cuda_stream_wait_stream (CowCudaStream *stream, CowCudaStream *producer)
{
  if (stream == producer)
    return;
  int previous;
  if (cow_cuda_enter_stream (producer, &previous, NULL) != COW_OK)
    return;
  /* The event belongs to the producer's device; a stream of any device
   * may wait on it. */
  cudaEvent_t event;
  cudaError_t result = cudaEventCreateWithFlags (&event, cudaEventDisableTiming);
  if (result == cudaSuccess)
    {
      result = cudaEventRecord (event, cow_cuda_stream_handle (producer));
      if (result == cudaSuccess)
        {
          if (stream->device_index != producer->device_index)
            cudaSetDevice (stream->device_index);
          result = cudaStreamWaitEvent (cow_cuda_stream_handle (stream), event, 0);
        }
      /* Safe while pending: the runtime releases it once it has fired. */
      cudaEventDestroy (event);
    }
  if (result != cudaSuccess)
    {
      /* No event: wait on the host, which orders the streams all the same. */
      cudaSetDevice (producer->device_index);
      cudaStreamSynchronize (cow_cuda_stream_handle (producer));
    }
  cow_cuda_restore_device (previous);
}

/* ---- copies --------------------------------------------------------------- */

CowStatus
cow_cuda_copy (void *dst, const void *src, size_t nbytes, CowCopyDirection direction,
               CowCudaStream *stream, CowError *error)
{
  int previous;
  CowStatus status = cow_cuda_enter_stream (stream, &previous, error);
  if (status != COW_OK)
    return status;
  static const enum cudaMemcpyKind kinds[] = {
    [COW_COPY_HOST_TO_DEVICE] = cudaMemcpyHostToDevice,
    [COW_COPY_DEVICE_TO_HOST] = cudaMemcpyDeviceToHost,
    [COW_COPY_DEVICE_TO_DEVICE] = cudaMemcpyDeviceToDevice,
  };
  cudaStream_t handle = cow_cuda_stream_handle (stream);
  cudaError_t result = cudaSuccess;
  if (nbytes > 0)
    result = cudaMemcpyAsync (dst, src, nbytes, kinds[direction], handle);
  if (result == cudaSuccess && direction == COW_COPY_DEVICE_TO_HOST)
    result = cudaStreamSynchronize (handle);
  cow_cuda_restore_device (previous);
  return result == cudaSuccess ? COW_OK : cow_cuda_fail (error, "cudaMemcpyAsync", result);
}

CowStatus
cow_cuda_copy_peer (void *dst, const void *src, int src_device, size_t nbytes,
                    CowCudaStream *stream, CowError *error)
{
  int previous;
  CowStatus status = cow_cuda_check_device (src_device, error);
  if (status == COW_OK)
    status = cow_cuda_enter_stream (stream, &previous, error);
  if (status != COW_OK)
    return status;
  cudaError_t result = cudaSuccess;
  if (nbytes > 0)
    result = cudaMemcpyPeerAsync (dst, stream->device_index, src, src_device, nbytes,
                                  cow_cuda_stream_handle (stream));
  cow_cuda_restore_device (previous);
  return result == cudaSuccess ? COW_OK
                               : cow_cuda_fail (error, "cudaMemcpyPeerAsync", result);
}
