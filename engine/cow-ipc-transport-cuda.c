/* cow-ipc-transport-cuda.c — the CUDA transport: cudaIpcGetMemHandle /
 * cudaIpcOpenMemHandle for the block and an interprocess event the
 * consumer waits on.  Built against the CUDA runtime only when the meson
 * `cuda` feature finds the toolkit (COW_HAVE_CUDA); otherwise every call
 * says so.  Without a device or driver every call fails with
 * COW_ERROR_DEVICE "no CUDA device: <reason>". */
#include "cow-ipc-private.h"

#include <string.h>

#ifdef COW_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "cow-cuda-runtime-private.h"

_Static_assert (sizeof (cudaIpcMemHandle_t) + sizeof (cudaIpcEventHandle_t)
                  <= sizeof (((CowIpcHandle *) 0)->transport_data),
                "CUDA IPC handles fit in the transport data");

/* COW_OK when a device is usable. */
CowStatus
cow_ipc_cuda_available (CowError *error)
{
  int count = 0;
  cudaError_t status = cudaGetDeviceCount (&count);
  if (status != cudaSuccess)
    return cow_set_error (error, COW_ERROR_DEVICE, "no CUDA device: %s",
                          cudaGetErrorString (status));
  if (count == 0)
    return cow_set_error (error, COW_ERROR_DEVICE, "no CUDA device: %s",
                          cudaGetErrorString (cudaErrorNoDevice));
  return COW_OK;
}

static CowStatus
cuda_fail (CowError *error, const char *what, cudaError_t status)
{
  return cow_set_error (error, COW_ERROR_DEVICE, "%s: %s", what, cudaGetErrorString (status));
}

/* The block's memory handle, and its offset from the allocation base. */
static CowStatus
cuda_export (const CowIpcTransport *self, const CowDataPtr *owner, void *data,
             size_t nbytes, CowIpcHandle *handle, int *fd_out, CowError *error)
{
  (void) self;
  (void) owner;
  (void) nbytes;
  *fd_out = -1;
  if (cow_ipc_cuda_available (error) != COW_OK)
    return COW_ERROR_DEVICE;
  cudaIpcMemHandle_t mem;
  cudaError_t status = cudaIpcGetMemHandle (&mem, data);
  if (status != cudaSuccess)
    return cuda_fail (error, "cudaIpcGetMemHandle", status);
  memcpy (handle->transport_data, &mem, sizeof mem);
  handle->offset = 0;
  return COW_OK;
}

static CowStatus
cuda_open (const CowIpcTransport *self, const CowIpcHandle *handle, int fd,
           void **data_out, void **mapping_out, CowError *error)
{
  (void) self;
  (void) fd;
  if (cow_ipc_cuda_available (error) != COW_OK)
    return COW_ERROR_DEVICE;
  cudaIpcMemHandle_t mem;
  memcpy (&mem, handle->transport_data, sizeof mem);
  void *base = NULL;
  cudaError_t status = cudaSetDevice (handle->device_index);
  if (status == cudaSuccess)
    status = cudaIpcOpenMemHandle (&base, mem, cudaIpcMemLazyEnablePeerAccess);
  if (status != cudaSuccess)
    return cuda_fail (error, "cudaIpcOpenMemHandle", status);
  *data_out = (char *) base + handle->offset;
  *mapping_out = base;
  return COW_OK;
}

static void
cuda_close (const CowIpcTransport *self, void *data, size_t nbytes, void *mapping)
{
  (void) self;
  (void) data;
  (void) nbytes;
  cudaDeviceSynchronize ();
  cudaIpcCloseMemHandle (mapping);
}

/* Records an interprocess event on the calling thread's current stream
 * on the handle's device (cow_ipc_send() makes the sent storage's stream,
 * where the engine enqueues every write to its bytes, current around
 * this call); the consumer waits on it before touching the bytes.
 * (PyTorch syncs the stream instead past 1,000 live events; we create
 * one per send and let the handle carry it.) */
static CowStatus
cuda_record (const CowIpcTransport *self, CowIpcHandle *handle, CowError *error)
{
  (void) self;
  int previous;
  CowStatus entered = cow_cuda_enter_device (handle->device_index, &previous, error);
  if (entered != COW_OK)
    return entered;
  cudaEvent_t event;
  cudaError_t status = cudaEventCreateWithFlags (&event, cudaEventDisableTiming
                                                           | cudaEventInterprocess);
  if (status != cudaSuccess)
    {
      cow_cuda_restore_device (previous);
      return cuda_fail (error, "cudaEventCreateWithFlags", status);
    }
  CowCudaStream *stream = cow_cuda_stream_for_device (handle->device_index);
  cudaIpcEventHandle_t eh;
  status = cudaEventRecord (event, cow_cuda_stream_handle (stream));
  if (status == cudaSuccess)
    status = cudaIpcGetEventHandle (&eh, event);
  cudaEventDestroy (event); /* the handle keeps it valid for the consumer */
  cow_cuda_stream_unref (stream);
  cow_cuda_restore_device (previous);
  if (status != cudaSuccess)
    return cuda_fail (error, "cudaIpcGetEventHandle", status);
  memcpy (handle->transport_data + sizeof (cudaIpcMemHandle_t), &eh, sizeof eh);
  return COW_OK;
}

/* Makes the stream the received storage will take — the calling
 * thread's current stream on the handle's device, else that device's
 * default stream (cow_cuda_stream_for_device(), as the storage made right
 * after on this thread gets) — wait for the producer's event.  Waiting on
 * the legacy default stream would not order the engine's non-blocking
 * streams after it.  PyTorch waits on the current stream likewise. */
static CowStatus
cuda_wait (const CowIpcTransport *self, const CowIpcHandle *handle, CowError *error)
{
  (void) self;
  if (cow_ipc_cuda_available (error) != COW_OK)
    return COW_ERROR_DEVICE;
  int previous;
  CowStatus entered = cow_cuda_enter_device (handle->device_index, &previous, error);
  if (entered != COW_OK)
    return entered;
  cudaIpcEventHandle_t eh;
  memcpy (&eh, handle->transport_data + sizeof (cudaIpcMemHandle_t), sizeof eh);
  CowCudaStream *stream = cow_cuda_stream_for_device (handle->device_index);
  cudaEvent_t event;
  cudaError_t status = cudaIpcOpenEventHandle (&event, eh);
  if (status == cudaSuccess)
    {
      status = cudaStreamWaitEvent (cow_cuda_stream_handle (stream), event, 0);
      cudaEventDestroy (event);
    }
  cow_cuda_stream_unref (stream);
  cow_cuda_restore_device (previous);
  if (status != cudaSuccess)
    return cuda_fail (error, "cudaIpcOpenEventHandle", status);
  return COW_OK;
}

#else /* !COW_HAVE_CUDA */

CowStatus
cow_ipc_cuda_available (CowError *error)
{
  return cow_set_error (error, COW_ERROR_NOT_SUPPORTED,
                        "CUDA IPC: libcowtensor was built without the CUDA toolkit");
}

static CowStatus
cuda_export (const CowIpcTransport *self, const CowDataPtr *owner, void *data,
             size_t nbytes, CowIpcHandle *handle, int *fd_out, CowError *error)
{
  (void) self; (void) owner; (void) data; (void) nbytes; (void) handle;
  *fd_out = -1;
  return cow_ipc_cuda_available (error);
}

static CowStatus
cuda_open (const CowIpcTransport *self, const CowIpcHandle *handle, int fd,
           void **data_out, void **mapping_out, CowError *error)
{
  (void) self; (void) handle; (void) fd; (void) data_out; (void) mapping_out;
  return cow_ipc_cuda_available (error);
}

static void
cuda_close (const CowIpcTransport *self, void *data, size_t nbytes, void *mapping)
{
  (void) self; (void) data; (void) nbytes; (void) mapping;
}

static CowStatus
cuda_record (const CowIpcTransport *self, CowIpcHandle *handle, CowError *error)
{
  (void) self; (void) handle;
  return cow_ipc_cuda_available (error);
}

static CowStatus
cuda_wait (const CowIpcTransport *self, const CowIpcHandle *handle, CowError *error)
{
  (void) self; (void) handle;
  return cow_ipc_cuda_available (error);
}

#endif

const CowIpcTransport cow_ipc_cuda_transport = {
  .name = "cuda-ipc",
  .kind = COW_IPC_TRANSPORT_CUDA,
  .export_block = cuda_export,
  .open = cuda_open,
  .close = cuda_close,
  .record_event = cuda_record,
  .wait_event = cuda_wait,
};
