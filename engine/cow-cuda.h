/* cow-cuda.h — CUDA devices, their allocator and streams.
 *
 * Device memory comes from the CUDA runtime's stream-ordered allocator
 * (cudaMallocAsync / cudaFreeAsync).  Every device storage has a stream:
 * the calling thread's current stream when the storage was made (by an
 * allocation, cow_tensor_to() or a lazy clone).  Everything that writes
 * the storage's bytes (kernels, the copy that materializes a lazy copy,
 * the copy into it by cow_tensor_to()) is enqueued on that stream, and
 * the bytes are freed on it, so one storage's work stays in order
 * whichever thread issues it.  When an op reads a storage whose stream
 * differs from its output's, the engine orders the two streams with
 * events, both ways (the read after earlier writes, later writes and the
 * free after the read).
 *
 * Device calls return as soon as the work is enqueued.  Reading device
 * bytes back (cow_tensor_to() to the CPU, cow_tensor_read_elements(),
 * cow_tensor_get_f64()) waits for the storage's stream.
 *
 * Without a CUDA driver or device — or in a library built without the
 * CUDA toolkit — every function here that can fail returns
 * COW_ERROR_DEVICE with "no CUDA device: <reason>" (the runtime's own
 * words), and never aborts.
 */
#pragma once

#include "cow-allocator.h"
#include "cow-error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Devices the engine can address: cuda:0 … cuda:(COW_CUDA_MAX_DEVICES-1). */
#define COW_CUDA_MAX_DEVICES 64

/* COW_OK when the engine was built with CUDA and the runtime reports at
 * least one device; otherwise COW_ERROR_DEVICE "no CUDA device: …".  The
 * answer is computed once per process. */
CowStatus cow_cuda_available (CowError *error);

/* Number of CUDA devices, 0 when none can be used. */
int cow_cuda_device_count (void);

/* COW_OK when cuda:@index can be used: COW_ERROR_DEVICE when there is no
 * CUDA device at all, COW_ERROR_OUT_OF_RANGE when @index is not one of
 * the devices present. */
CowStatus cow_cuda_check_device (int index, CowError *error);

/* The allocator of cuda:@index (an immortal singleton), or NULL with
 * @error set as cow_cuda_check_device() does. */
CowAllocator *cow_cuda_allocator (int index, CowError *error);

/* Streams.  A stream is a non-blocking CUDA stream on one device,
 * reference counted: storages made on it keep it alive. */
typedef struct _CowCudaStream CowCudaStream;

CowCudaStream *cow_cuda_stream_new (int device_index, CowError *error);
CowCudaStream *cow_cuda_stream_ref (CowCudaStream *stream);
void cow_cuda_stream_unref (CowCudaStream *stream);
int cow_cuda_stream_device (const CowCudaStream *stream);
/* Waits until everything enqueued on @stream so far has run; NULL waits
 * for the legacy default stream of the current device. */
CowStatus cow_cuda_stream_synchronize (CowCudaStream *stream, CowError *error);

/* The calling thread's current stream: device storages made by this
 * thread take it (NULL: the legacy default stream).  Not referenced: the
 * caller keeps @stream alive while it is current. */
void cow_cuda_set_current_stream (CowCudaStream *stream);
CowCudaStream *cow_cuda_get_current_stream (void);

/* Waits until every stream of cuda:@index is idle. */
CowStatus cow_cuda_synchronize (int index, CowError *error);

#ifdef __cplusplus
}
#endif
