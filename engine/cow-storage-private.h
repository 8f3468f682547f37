/* cow-storage-private.h — storage internals. */
#pragma once

#include <pthread.h>
#include <stdatomic.h>

#include "cow-context-private.h"
#include "cow-storage.h"
#include "cow-trace.h"

typedef struct _CowSimState CowSimState;

struct _CowStorage {
  _Atomic int64_t refcount;
  uint64_t id;
  size_t nbytes;
  CowAllocator *allocator; /* NULL for foreign memory */
  /* Where the bytes live: the allocator's device, or for foreign memory
   * the device its creator named (cow_storage_new_foreign_on()).  Ops
   * dispatch on it, so device bytes are never read on the host. */
  CowDevice device;
  /* Protects the changes of `data`, `allocation_id`, `owner` and `cow`:
   * held by a lazy clone of this storage (it reads them and may move the
   * owner into a new context), by its materialization (it replaces them)
   * and by cow_ipc_send() (it materializes and wraps the owner), so that
   * a send racing a lazy clone or a write of the same storage sees one
   * consistent state.  Never held while taking another storage's lock;
   * taken before a context's lock and the IPC producer lock. */
  pthread_mutex_t lock;
  /* The bytes.  Changed only by materialization (under `lock`), a write,
   * which the user's contract keeps apart from reads of this storage. */
  void *data;
  uint64_t allocation_id;
  CowDataPtr owner; /* who frees `data`; meaningful while `cow` is NULL */
  /* Non-NULL while the bytes are shared lazily.  Set and cleared under
   * `lock`; atomic so that introspection and the write fast path can
   * read it without the lock. */
  _Atomic (CowContext *) cow;
  /* Device storages (foreign ones included): the stream all writes to
   * the bytes are enqueued on and the bytes are freed on (cow-cuda.h);
   * referenced.  NULL on the CPU. */
  CowCudaStream *stream;
  /* Simulate-mode tracking; NULL until a simulated lazy copy exists. */
  _Atomic (CowSimState *) sim;
  /* The memory freed with this storage: itself, or the block it shares
   * with the tensor it was made for (see cow_tensor_unref()). */
  void *block;
};

/* Initialise storage objects in memory the caller provides (@block is
 * freed when the storage goes).  On failure nothing is left to undo but
 * the caller's own memory. */
COW_INTERNAL CowStatus cow_storage_init_new (CowStorage *storage, void *block,
                                             size_t nbytes, CowAllocator *allocator,
                                             CowOp op, CowError *error);
/* Makes @result a lazy clone of @source.  When @source's bytes cannot be
 * shared it fails with COW_ERROR_NOT_SUPPORTED and sets *@refusal (may be
 * NULL) to the reason, decided under @source's lock; else *@refusal is 0. */
COW_INTERNAL CowStatus cow_storage_init_lazy_clone (CowStorage *result, void *block,
                                                    CowStorage *source,
                                                    CowEagerReason *refusal,
                                                    CowError *error);

/* Materializes a copy-on-write storage for a write by @op through tensor
 * @tensor_id.  Copies the bytes when other storages still share them,
 * steals them when this is the last reference.  On failure the storage
 * is unchanged (still a lazy copy). */
COW_INTERNAL CowStatus cow_storage_materialize (CowStorage *storage, CowOp op,
                                                uint64_t tensor_id,
                                                CowError *error);
/* The same with @storage's lock already held by the caller. */
COW_INTERNAL CowStatus cow_storage_materialize_locked (CowStorage *storage, CowOp op,
                                                       uint64_t tensor_id,
                                                       CowError *error);

/* Why @storage's data pointer cannot be wrapped in a context, or 0. */
COW_INTERNAL CowEagerReason cow_storage_wrap_refusal (const CowStorage *storage);

static inline bool
cow_storage_is_device (const CowStorage *storage)
{
  return storage->device.type != COW_DEVICE_CPU;
}

/* The allocator for a new result on @storage's device: its own, or for
 * foreign memory the default allocator of its device (the CPU's, or
 * cow_cuda_allocator(), which fails with COW_ERROR_DEVICE "no CUDA
 * device: …" without one).  NULL with @error set on failure. */
COW_INTERNAL CowAllocator *cow_storage_result_allocator (const CowStorage *storage,
                                                         CowError *error);

static inline bool
cow_storage_needs_materialize (const CowStorage *storage)
{
  /* Acquire pairs with the release store that clears `cow` at the end of
   * a materialization (possibly cow_ipc_send()'s, on another thread), so
   * a caller that sees NULL also sees the new `data`.  `cow` only turns
   * non-NULL through a lazy clone, which happens-before any write the
   * user orders after it.  A plain load on x86-64. */
  return atomic_load_explicit (&storage->cow, memory_order_acquire) != NULL;
}
