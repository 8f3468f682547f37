/* cow-cuda-private.h — what the engine's core needs from the CUDA layer.
 *
 * Implemented by cow-cuda-*.c when the toolkit is found, and by
 * cow-cuda-none.c otherwise (every call then reports "no CUDA device:
 * libcowtensor was built without the CUDA toolkit").  The core calls
 * these only for storages whose allocator is a CUDA one, so CPU paths
 * never touch the runtime.
 */
#pragma once

#include <stdatomic.h>

#include "cow-cuda-kernel-args.h"
#include "cow-cuda.h"
#include "cow-private.h"

struct _CowCudaStream {
  _Atomic int64_t refcount;
  int device_index;
  bool is_default; /* a device's legacy default stream: immortal */
  void *handle;    /* cudaStream_t; NULL for a default stream */
};

/* The stream a storage made now on cuda:@device_index takes: the calling
 * thread's current stream when it is on that device, else the device's
 * default stream.  Never NULL; a new reference. */
COW_INTERNAL CowCudaStream *cow_cuda_stream_for_device (int device_index);

/* Makes @stream current and returns the one it replaces, to be put back
 * afterwards: how the engine runs an allocator on a storage's stream. */
COW_INTERNAL CowCudaStream *cow_cuda_exchange_current_stream (CowCudaStream *stream);

/* Makes @stream wait for the work enqueued so far on @producer (both
 * non-NULL, possibly on different devices).  Nothing when both are the
 * same stream.  If an
 * event cannot be used it waits on the host for @producer instead, so
 * the order holds either way. */
COW_INTERNAL void cow_cuda_stream_wait_stream (CowCudaStream *stream, CowCudaStream *producer);

/* ---- copy-on-write contexts over device bytes ------------------------- */

/* The device side of a copy-on-write context (cow-context-private.h):
 * a "ready" event on the stream of the storage first cloned (every write
 * to the bytes before the clone is enqueued before it), and one "release"
 * event per sharer that stopped using the bytes (its copy from them, or
 * its last read, is enqueued before it).  Copiers wait for "ready"; the
 * last holder — stealer or freer — waits for all of them. */
typedef struct _CowDeviceSync CowDeviceSync;

/* Records the ready event on @stream.  NULL with COW_ERROR_DEVICE when
 * the event cannot be made (no device). */
COW_INTERNAL CowDeviceSync *cow_device_sync_new (CowCudaStream *stream, CowError *error);
COW_INTERNAL void cow_device_sync_free (CowDeviceSync *sync);
/* Makes @stream wait for the writes before the first lazy clone. */
COW_INTERNAL CowStatus cow_device_sync_wait_ready (CowDeviceSync *sync, CowCudaStream *stream,
                                                   CowError *error);
/* A sharer on @stream is done with the bytes once @stream's work so far
 * has run.  Thread-safe; call before dropping the context reference. */
COW_INTERNAL void cow_device_sync_release (CowDeviceSync *sync, CowCudaStream *stream);
/* Makes @stream wait for the ready event and every release so far, and
 * forgets them.  Only for the last holder (no releases can race it). */
COW_INTERNAL void cow_device_sync_wait_all (CowDeviceSync *sync, CowCudaStream *stream);

/* ---- blocks from cow_cuda_allocator() --------------------------------- */

/* The stream a block from cow_cuda_allocator() will be freed on, or NULL
 * when @owner is not such a block. */
COW_INTERNAL CowCudaStream *cow_cuda_block_stream (const CowDataPtr *owner);
/* True when @owner is a block of cow_cuda_allocator() that came from the
 * stream-ordered pool (cudaMallocAsync): cudaIpcGetMemHandle() cannot
 * export it. */
COW_INTERNAL bool cow_cuda_block_is_pooled (const CowDataPtr *owner);
/* From now on @owner's block is freed on @stream (its new owner's).
 * Nothing for other blocks. */
COW_INTERNAL void cow_cuda_block_adopt (const CowDataPtr *owner, CowCudaStream *stream);

/* ---- copies and kernels ----------------------------------------------- */

typedef enum {
  COW_COPY_HOST_TO_DEVICE,
  COW_COPY_DEVICE_TO_HOST,
  COW_COPY_DEVICE_TO_DEVICE,
} CowCopyDirection;

/* Copies @nbytes on @stream (non-NULL; its device is the device side).
 * Device to host waits for the copy; the others are enqueued (host to
 * device from pageable memory returns once the source has been staged,
 * as cudaMemcpyAsync does). */
COW_INTERNAL CowStatus cow_cuda_copy (void *dst, const void *src, size_t nbytes,
                                      CowCopyDirection direction, CowCudaStream *stream,
                                      CowError *error);
/* Copies @nbytes from cuda:@src_device to @stream's device, on @stream. */
COW_INTERNAL CowStatus cow_cuda_copy_peer (void *dst, const void *src, int src_device,
                                           size_t nbytes, CowCudaStream *stream,
                                           CowError *error);

/* Launches the elementwise kernel for @dtype (a CowDType) on @stream
 * (non-NULL).  @args is complete (numel > 0). */
COW_INTERNAL CowStatus cow_cuda_launch_elementwise (int dtype, const CowKernelArgs *args,
                                                    CowCudaStream *stream, CowError *error);
