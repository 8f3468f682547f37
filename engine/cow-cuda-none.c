/* cow-cuda-none.c — the CUDA layer of a library built without the CUDA
 * toolkit: no device exists, every device operation says why. */
#include "cow-cuda-private.h"
#include "cow-ipc.h"

static CowStatus
no_device (CowError *error)
{
  return cow_set_error (error, COW_ERROR_DEVICE,
                        "no CUDA device: libcowtensor was built without the CUDA toolkit");
}

CowStatus cow_cuda_available (CowError *error) { return no_device (error); }
int cow_cuda_device_count (void) { return 0; }
CowStatus cow_cuda_check_device (int index, CowError *error) { (void) index; return no_device (error); }
CowStatus cow_cuda_synchronize (int index, CowError *error) { (void) index; return no_device (error); }

CowAllocator *
cow_cuda_allocator (int index, CowError *error)
{
  (void) index;
  no_device (error);
  return NULL;
}

CowCudaStream *
cow_cuda_stream_new (int device_index, CowError *error)
{
  (void) device_index;
  no_device (error);
  return NULL;
}

/* No stream can exist, so these see only NULL. */
CowCudaStream *cow_cuda_stream_ref (CowCudaStream *stream) { return stream; }
void cow_cuda_stream_unref (CowCudaStream *stream) { (void) stream; }
int cow_cuda_stream_device (const CowCudaStream *stream) { (void) stream; return 0; }
CowStatus cow_cuda_stream_synchronize (CowCudaStream *stream, CowError *error) { (void) stream; return no_device (error); }
void cow_cuda_set_current_stream (CowCudaStream *stream) { (void) stream; }
CowCudaStream *cow_cuda_get_current_stream (void) { return NULL; }

/* A storage of a user allocator that claims a CUDA device can still be
 * made (its allocator provides the bytes); it gets no stream. */
CowCudaStream *cow_cuda_stream_for_device (int device_index) { (void) device_index; return NULL; }
CowCudaStream *cow_cuda_exchange_current_stream (CowCudaStream *stream) { (void) stream; return NULL; }
void cow_cuda_stream_wait_stream (CowCudaStream *stream, CowCudaStream *producer) { (void) stream; (void) producer; }

CowDeviceSync *
cow_device_sync_new (CowCudaStream *stream, CowError *error)
{
  (void) stream;
  no_device (error);
  return NULL;
}

void cow_device_sync_free (CowDeviceSync *sync) { (void) sync; }
CowStatus cow_device_sync_wait_ready (CowDeviceSync *sync, CowCudaStream *stream, CowError *error) { (void) sync; (void) stream; return no_device (error); }
void cow_device_sync_release (CowDeviceSync *sync, CowCudaStream *stream) { (void) sync; (void) stream; }
void cow_device_sync_wait_all (CowDeviceSync *sync, CowCudaStream *stream) { (void) sync; (void) stream; }

CowCudaStream *cow_cuda_block_stream (const CowDataPtr *owner) { (void) owner; return NULL; }
bool cow_cuda_block_is_pooled (const CowDataPtr *owner) { (void) owner; return false; }

CowAllocator *
cow_ipc_shareable_cuda_allocator (int index, CowError *error)
{
  (void) index;
  no_device (error);
  return NULL;
}
void cow_cuda_block_adopt (const CowDataPtr *owner, CowCudaStream *stream) { (void) owner; (void) stream; }

CowStatus
cow_cuda_copy (void *dst, const void *src, size_t nbytes, CowCopyDirection direction,
               CowCudaStream *stream, CowError *error)
{
  (void) dst; (void) src; (void) nbytes; (void) direction; (void) stream;
  return no_device (error);
}

CowStatus
cow_cuda_copy_peer (void *dst, const void *src, int src_device, size_t nbytes,
                    CowCudaStream *stream, CowError *error)
{
  (void) dst; (void) src; (void) src_device; (void) nbytes; (void) stream;
  return no_device (error);
}

CowStatus
cow_cuda_launch_elementwise (int dtype, const CowKernelArgs *args, CowCudaStream *stream,
                             CowError *error)
{
  (void) dtype; (void) args; (void) stream;
  return no_device (error);
}
