/* cow-cuda-allocator.c — device memory from the CUDA runtime's
 * stream-ordered allocator (cow_cuda_allocator()), and the IPC-shareable
 * device allocator (cow_ipc_shareable_cuda_allocator()).
 *
 * A block is allocated on the stream of the storage it is made for
 * (the thread's current stream while the engine allocates) and freed on
 * the stream of the storage that owns it last, with cudaFreeAsync: no
 * device-wide synchronization, and the memory is reused in stream order.
 * Devices without memory pools fall back to cudaMalloc / cudaFree (whose
 * free synchronizes).
 *
 * cudaIpcGetMemHandle() cannot export memory from cudaMallocAsync's
 * default pool, so blocks that will be sent to another process come from
 * the shareable allocator: plain cudaMalloc, like the segments of
 * PyTorch's caching allocator that its CUDA IPC shares.
 */
#include "cow-cuda-runtime-private.h"
#include "cow-ipc.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
  void *ptr;
  size_t nbytes;
  bool pooled;           /* from cudaMallocAsync */
  CowCudaStream *stream; /* freed on it; referenced.  Only the owner changes it. */
} CudaBlock;

static void
cuda_block_free (void *context)
{
  CudaBlock *block = context;
  int previous;
  if (block->ptr != NULL && cow_cuda_enter_stream (block->stream, &previous, NULL) == COW_OK)
    {
      if (block->pooled)
        cudaFreeAsync (block->ptr, cow_cuda_stream_handle (block->stream));
      else
        cudaFree (block->ptr);
      cow_cuda_restore_device (previous);
    }
  cow_cuda_stream_unref (block->stream);
  free (block);
}

/* @pooled: from the stream-ordered pool when the device has one. */
static CowStatus
allocate_block (CowAllocator *self, size_t nbytes, bool pooled, CowDataPtr *out,
                CowError *error)
{
  int previous;
  CowStatus status = cow_cuda_enter_device (self->device_index, &previous, error);
  if (status != COW_OK)
    return status;
  CudaBlock *block = malloc (sizeof *block);
  if (block == NULL)
    {
      cow_cuda_restore_device (previous);
      return cow_set_error (error, COW_ERROR_NO_MEMORY, "cannot allocate a CUDA block record");
    }
  *block = (CudaBlock) { .nbytes = nbytes, .pooled = pooled,
                         .stream = cow_cuda_stream_for_device (self->device_index) };
  cudaError_t result = cudaSuccess;
  if (nbytes > 0)
    {
      result = pooled ? cudaMallocAsync (&block->ptr, nbytes,
                                         cow_cuda_stream_handle (block->stream))
                      : cudaErrorNotSupported;
      if (result == cudaErrorNotSupported)
        {
          block->pooled = false;
          result = cudaMalloc (&block->ptr, nbytes);
        }
    }
  cow_cuda_restore_device (previous);
  if (result != cudaSuccess)
    {
      cow_cuda_stream_unref (block->stream);
      free (block);
      char what[96];
      snprintf (what, sizeof what, "cannot allocate %zu bytes on cuda:%d", nbytes,
                self->device_index);
      return cow_cuda_fail (error, what, result);
    }
  *out = (CowDataPtr) { .data = block->ptr, .context = block, .deleter = cuda_block_free };
  return COW_OK;
}

static CowStatus
cuda_allocate (CowAllocator *self, size_t nbytes, CowDataPtr *out, CowError *error)
{
  return allocate_block (self, nbytes, true, out, error);
}

static CowStatus
cuda_allocate_shareable (CowAllocator *self, size_t nbytes, CowDataPtr *out, CowError *error)
{
  return allocate_block (self, nbytes, false, out, error);
}

/* Enqueued on the current stream (the engine makes the storage's stream
 * current while it materializes). */
static CowStatus
cuda_copy_data (CowAllocator *self, void *dst, const void *src, size_t nbytes,
                CowError *error)
{
  CowCudaStream *stream = cow_cuda_stream_for_device (self->device_index);
  CowStatus status = cow_cuda_copy (dst, src, nbytes, COW_COPY_DEVICE_TO_DEVICE, stream, error);
  cow_cuda_stream_unref (stream);
  return status;
}

static bool
cuda_is_simple_data_ptr (CowAllocator *self, const CowDataPtr *ptr)
{
  (void) self;
  /* Deleter first: only then is the context known to be a CudaBlock. */
  return ptr->deleter == cuda_block_free && ((const CudaBlock *) ptr->context)->ptr == ptr->data;
}

CowCudaStream *
cow_cuda_block_stream (const CowDataPtr *owner)
{
  if (owner->deleter != cuda_block_free)
    return NULL;
  return ((const CudaBlock *) owner->context)->stream;
}

bool
cow_cuda_block_is_pooled (const CowDataPtr *owner)
{
  return owner->deleter == cuda_block_free && ((const CudaBlock *) owner->context)->pooled;
}

void
cow_cuda_block_adopt (const CowDataPtr *owner, CowCudaStream *stream)
{
  if (owner->deleter != cuda_block_free || stream == NULL)
    return;
  CudaBlock *block = owner->context;
  CowCudaStream *old = block->stream;
  block->stream = cow_cuda_stream_ref (stream);
  cow_cuda_stream_unref (old);
}

static CowAllocator allocators[COW_CUDA_MAX_DEVICES];
static CowAllocator shareable[COW_CUDA_MAX_DEVICES];
static char names[COW_CUDA_MAX_DEVICES][COW_DEVICE_NAME_MAX];
static char shareable_names[COW_CUDA_MAX_DEVICES][COW_DEVICE_NAME_MAX + 16];
static pthread_once_t allocators_once = PTHREAD_ONCE_INIT;

static void
init_allocators (void)
{
  for (int i = 0; i < COW_CUDA_MAX_DEVICES; i++)
    {
      snprintf (names[i], sizeof names[i], "cuda:%d", i);
      allocators[i] = (CowAllocator) {
        .name = names[i],
        .device_type = COW_DEVICE_CUDA,
        .device_index = i,
        .allocate = cuda_allocate,
        .copy_data = cuda_copy_data,
        .is_simple_data_ptr = cuda_is_simple_data_ptr,
      };
      snprintf (shareable_names[i], sizeof shareable_names[i], "cuda:%d ipc-shareable", i);
      shareable[i] = allocators[i];
      shareable[i].name = shareable_names[i];
      shareable[i].allocate = cuda_allocate_shareable;
    }
}

CowAllocator *
cow_cuda_allocator (int index, CowError *error)
{
  if (cow_cuda_check_device (index, error) != COW_OK)
    return NULL;
  pthread_once (&allocators_once, init_allocators);
  return &allocators[index];
}

CowAllocator *
cow_ipc_shareable_cuda_allocator (int index, CowError *error)
{
  if (cow_cuda_check_device (index, error) != COW_OK)
    return NULL;
  pthread_once (&allocators_once, init_allocators);
  return &shareable[index];
}
