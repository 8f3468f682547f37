/* cow-storage-private.h — storage internals. */
#pragma once

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
  /* The bytes.  Changed only by materialization, a write, which the
   * user's contract keeps apart from every other access to this storage. */
  void *data;
  uint64_t allocation_id;
  CowDataPtr owner; /* who frees `data`; meaningful while `cow` is NULL */
  /* Non-NULL while the bytes are shared lazily.  Published with a CAS so
   * that concurrent lazy clones of one storage agree on one context. */
  _Atomic (CowContext *) cow;
  /* Device storages: the stream all writes to the bytes are enqueued on
   * and the bytes are freed on (cow-cuda.h); referenced.  NULL on the
   * CPU. */
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
COW_INTERNAL CowStatus cow_storage_init_lazy_clone (CowStorage *result, void *block,
                                                    CowStorage *source,
                                                    CowError *error);

/* Materializes a copy-on-write storage for a write by @op through tensor
 * @tensor_id.  Copies the bytes when other storages still share them,
 * steals them when this is the last reference.  On failure the storage
 * is unchanged (still a lazy copy). */
COW_INTERNAL CowStatus cow_storage_materialize (CowStorage *storage, CowOp op,
                                                uint64_t tensor_id,
                                                CowError *error);

/* Why @storage's data pointer cannot be wrapped in a context, or 0. */
COW_INTERNAL CowEagerReason cow_storage_wrap_refusal (const CowStorage *storage);

static inline bool
cow_storage_is_device (const CowStorage *storage)
{
  return storage->allocator != NULL && storage->allocator->device_type != COW_DEVICE_CPU;
}

static inline bool
cow_storage_needs_materialize (const CowStorage *storage)
{
  /* Relaxed: `cow` only turns non-NULL through a lazy clone, which
   * happens-before any write the user orders after it. */
  return atomic_load_explicit (&storage->cow, memory_order_relaxed) != NULL;
}
