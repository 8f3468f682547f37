/* cow-cuda-sync.c — stream order for copy-on-write contexts over device
 * bytes (the host's rules of README.md "Thread safety", for streams).
 *
 * On the host the context's reader–writer lock makes the last holder
 * wait until every copier has *enqueued* its copy.  On the device that is
 * not enough: the copies may still be running on other streams when the
 * last holder starts writing the bytes or frees them.  So every sharer
 * that stops using the bytes records a "release" event on its stream
 * before it drops its reference, and the last holder makes its stream
 * wait for all of them — no host blocking.  Copiers first wait for the
 * "ready" event, recorded on the source's stream at the first lazy clone,
 * so a copy on another stream cannot overtake the writes before it.
 * Whenever an event cannot be made or recorded, the host waits for the
 * stream instead: slower, and the order holds just the same.
 */
#include "cow-cuda-runtime-private.h"

#include <pthread.h>
#include <stdlib.h>

struct _CowDeviceSync {
  int device_index; /* every sharer's bytes are on this device */
  cudaEvent_t ready;
  pthread_mutex_t lock; /* protects the release events */
  cudaEvent_t *releases;
  size_t n_releases, capacity;
};

CowDeviceSync *
cow_device_sync_new (CowCudaStream *stream, CowError *error)
{
  int previous;
  if (cow_cuda_enter_stream (stream, &previous, error) != COW_OK)
    return NULL;
  CowDeviceSync *sync = calloc (1, sizeof *sync);
  if (sync == NULL || pthread_mutex_init (&sync->lock, NULL) != 0)
    {
      free (sync);
      cow_cuda_restore_device (previous);
      cow_set_error (error, COW_ERROR_NO_MEMORY, "lazy_clone: cannot allocate a device context");
      return NULL;
    }
  sync->device_index = stream->device_index;
  cudaError_t result = cudaEventCreateWithFlags (&sync->ready, cudaEventDisableTiming);
  if (result == cudaSuccess)
    {
      result = cudaEventRecord (sync->ready, cow_cuda_stream_handle (stream));
      if (result != cudaSuccess)
        cudaEventDestroy (sync->ready);
    }
  cow_cuda_restore_device (previous);
  if (result != cudaSuccess)
    {
      pthread_mutex_destroy (&sync->lock);
      free (sync);
      cow_cuda_fail (error, "lazy_clone: cudaEventRecord", result);
      return NULL;
    }
  return sync;
}

void
cow_device_sync_free (CowDeviceSync *sync)
{
  if (sync == NULL)
    return;
  int previous;
  if (cow_cuda_enter_device (sync->device_index, &previous, NULL) == COW_OK)
    {
      /* Destroying a pending event is safe: it is released once fired. */
      cudaEventDestroy (sync->ready);
      for (size_t i = 0; i < sync->n_releases; i++)
        cudaEventDestroy (sync->releases[i]);
      cow_cuda_restore_device (previous);
    }
  free (sync->releases);
  pthread_mutex_destroy (&sync->lock);
  free (sync);
}

CowStatus
cow_device_sync_wait_ready (CowDeviceSync *sync, CowCudaStream *stream, CowError *error)
{
  int previous;
  CowStatus status = cow_cuda_enter_stream (stream, &previous, error);
  if (status != COW_OK)
    return status;
  cudaError_t result = cudaStreamWaitEvent (cow_cuda_stream_handle (stream), sync->ready, 0);
  cow_cuda_restore_device (previous);
  return result == cudaSuccess ? COW_OK : cow_cuda_fail (error, "cudaStreamWaitEvent", result);
}

void
cow_device_sync_release (CowDeviceSync *sync, CowCudaStream *stream)
{
  int previous;
  if (cow_cuda_enter_stream (stream, &previous, NULL) != COW_OK)
    return;
  cudaStream_t handle = cow_cuda_stream_handle (stream);
  cudaEvent_t event;
  bool kept = false;
  if (cudaEventCreateWithFlags (&event, cudaEventDisableTiming) == cudaSuccess)
    {
      if (cudaEventRecord (event, handle) == cudaSuccess)
        {
          pthread_mutex_lock (&sync->lock);
          if (sync->n_releases == sync->capacity)
            {
              size_t capacity = sync->capacity ? 2 * sync->capacity : 4;
              cudaEvent_t *grown = realloc (sync->releases, capacity * sizeof *grown);
              if (grown != NULL)
                {
                  sync->releases = grown;
                  sync->capacity = capacity;
                }
            }
          if (sync->n_releases < sync->capacity)
            {
              sync->releases[sync->n_releases++] = event;
              kept = true;
            }
          pthread_mutex_unlock (&sync->lock);
        }
      if (!kept)
        cudaEventDestroy (event);
    }
  if (!kept)
    cudaStreamSynchronize (handle);
  cow_cuda_restore_device (previous);
}

void
cow_device_sync_wait_all (CowDeviceSync *sync, CowCudaStream *stream)
{
  int previous;
  if (cow_cuda_enter_stream (stream, &previous, NULL) != COW_OK)
    return;
  cudaStream_t handle = cow_cuda_stream_handle (stream);
  /* The lock only orders us after the releases' appends; the caller is
   * the last holder, so nothing is appended meanwhile. */
  pthread_mutex_lock (&sync->lock);
  bool ordered = cudaStreamWaitEvent (handle, sync->ready, 0) == cudaSuccess;
  for (size_t i = 0; i < sync->n_releases; i++)
    {
      ordered = ordered && cudaStreamWaitEvent (handle, sync->releases[i], 0) == cudaSuccess;
      cudaEventDestroy (sync->releases[i]);
    }
  sync->n_releases = 0;
  pthread_mutex_unlock (&sync->lock);
  if (!ordered)
    /* The events were recorded on this device's streams: waiting for the
     * whole device covers them. */
    cudaDeviceSynchronize ();
  cow_cuda_restore_device (previous);
}
