/* cow-storage-private.h — storage internals: the storage's state word,
 * the lock-free lazy clone and the storage's lock.
 *
 * A storage's `cow_state` word holds its copy-on-write context (NULL
 * while the storage owns its bytes) and two flag bits in the pointer's
 * low bits.  COW_STATE_LOCKED is the storage's lock: it is held by what
 * changes the storage's owner or context — its materialization, the
 * first lazy clone of it (which moves its bytes into a new context) and
 * cow_ipc_send() of it (which materializes it and wraps its owner) — so
 * that a send racing a lazy clone or a write of the same storage sees one
 * consistent state.  Waiters sleep (COW_STATE_WAITERS); the lock is never
 * held while taking another storage's lock, and is taken before a
 * context's lock and the IPC producer lock.
 *
 * A lazy clone of a storage that is already copy-on-write takes no lock
 * (cow_storage_try_share()): it reads the context from the word, takes a
 * reference on it unless its count is 0, and reads the word again; if
 * the word changed (the lock was taken, or the context replaced), it
 * gives the reference back and goes through the lock.  Why that is safe
 * against a send (or a write) that materializes the source meanwhile:
 *   - the lock's owner decides between stealing and copying with a CAS
 *     of the count from 1 to 0 (cow_context_take_unique()), so a clone's
 *     reference taken before it is counted (the owner then copies) and
 *     none can be taken after it;
 *   - a clone keeps its reference only if the source still named the
 *     context after the reference was taken: it then shares the bytes
 *     the source had at that point, as if it ran before the send;
 *   - a clone that read the word before a send dropped the source's
 *     reference may touch a context that is already freed: contexts are
 *     type-stable (cow-pool-private.h), so it finds a count of 0, or, if
 *     the memory has become another context meanwhile, a reference on
 *     that one, which it gives back when the re-check fails (freeing that
 *     context if its other sharers left meanwhile).  A recycled context's
 *     count is stored with release and the clone's CAS acquires, so the
 *     re-check sees the source's word as it was when its old context was
 *     let go, never the stale pointer.
 */
#pragma once

#include <stdatomic.h>

#include "cow-context-private.h"
#include "cow-pool-private.h"
#include "cow-storage.h"
#include "cow-trace.h"

typedef struct _CowSimState CowSimState;

#define COW_STATE_LOCKED ((uintptr_t) 1)
#define COW_STATE_WAITERS ((uintptr_t) 2)
#define COW_STATE_FLAGS (COW_STATE_LOCKED | COW_STATE_WAITERS)

struct _CowStorage {
  _Atomic int64_t refcount;
  uint64_t id;
  size_t nbytes;
  CowAllocator *allocator; /* NULL for foreign memory */
  /* Where the bytes live: the allocator's device, or for foreign memory
   * the device its creator named (cow_storage_new_foreign_on()).  Ops
   * dispatch on it, so device bytes are never read on the host. */
  CowDevice device;
  /* The context sharing the bytes lazily (NULL while the storage owns
   * them) | COW_STATE_* flags; see the top of this file.  The context
   * changes only under the lock. */
  _Atomic uintptr_t cow_state;
  /* The bytes.  Changed only by materialization (under the lock), a
   * write, which the user's contract keeps apart from reads of this
   * storage. */
  void *data;
  uint64_t allocation_id;
  CowDataPtr owner; /* who frees `data`; meaningful while the context is NULL */
  /* Device storages (foreign ones included): the stream all writes to
   * the bytes are enqueued on and the bytes are freed on (cow-cuda.h);
   * referenced.  NULL on the CPU. */
  CowCudaStream *stream;
  /* Simulate-mode tracking; NULL until a simulated lazy copy exists. */
  _Atomic (CowSimState *) sim;
  /* The memory freed with this storage: itself (COW_POOL_STORAGE), or the
   * block it shares with the tensor it was made for
   * (COW_POOL_TENSOR_BLOCK; see cow_tensor_unref()). */
  void *block;
};

static inline CowContext *
cow_state_context (uintptr_t state)
{
  return (CowContext *) (state & ~COW_STATE_FLAGS);
}

/* Takes @storage's lock (COW_STATE_LOCKED), sleeping while another
 * thread holds it. */
COW_INTERNAL void cow_storage_lock (CowStorage *storage);
/* Releases it, publishing what changed meanwhile (release), and wakes
 * the threads waiting for it. */
COW_INTERNAL void cow_storage_unlock (CowStorage *storage);

/* The context of @storage, whose lock the caller holds (or which nobody
 * else can reach any more). */
static inline CowContext *
cow_storage_context_locked (const CowStorage *storage)
{
  return cow_state_context (atomic_load_explicit (&storage->cow_state, memory_order_relaxed));
}

/* Under the lock: makes @context (may be NULL) the storage's context.
 * Published when the lock is released. */
COW_INTERNAL void cow_storage_set_context_locked (CowStorage *storage, CowContext *context);

/* Fills @result (made for @block) as a new storage sharing @context, on
 * which the caller took a reference for it (the new count: @refcount);
 * the events go to @sink (cow_trace_sink()). */
static inline void
cow_storage_init_shared (CowStorage *result, void *block, const CowStorage *source,
                         CowContext *context, int64_t refcount, const CowTraceSink *sink)
{
  atomic_init (&result->refcount, 1);
  result->id = cow_next_id ();
  result->nbytes = source->nbytes;
  result->allocator = source->allocator;
  result->device = source->device;
  atomic_init (&result->cow_state, (uintptr_t) context);
  result->data = context->data;
  result->allocation_id = context->allocation_id;
  result->owner = (CowDataPtr) { 0 };
  result->stream = COW_UNLIKELY (source->device.type == COW_DEVICE_CUDA)
                     ? cow_cuda_stream_for_device (source->device.index)
                     : NULL;
  atomic_init (&result->sim, NULL);
  result->block = block;
  COW_TRACE_TO (sink, COW_EVENT_CONTEXT_REF, COW_OP_LAZY_CLONE, 0, context->id, result->id,
                (uint64_t) refcount, context->allocation_id, 0);
  COW_TRACE_TO (sink, COW_EVENT_STORAGE_NEW, COW_OP_LAZY_CLONE, cow_trace_device (result->device),
                result->id, result->allocation_id, result->nbytes, context->id, source->id);
}

/* The lazy clone without a lock: makes @result a new storage sharing
 * @source's context when @source is copy-on-write already and not
 * locked; false (nothing done) otherwise.  See the top of this file for
 * why it is safe against cow_ipc_send() of @source. */
static inline bool
cow_storage_try_share (CowStorage *result, void *block, CowStorage *source,
                       const CowTraceSink *sink)
{
  /* Acquire: the context's first word was written before it was
   * published (a plain load on x86-64); the re-check below is what
   * makes the pointer trustworthy. */
  uintptr_t state = atomic_load_explicit (&source->cow_state, memory_order_acquire);
  if (COW_UNLIKELY (state == 0 || (state & COW_STATE_FLAGS) != 0))
    return false;
  CowContext *context = (CowContext *) state;
  int64_t refcount;
  if (COW_UNLIKELY (!cow_context_try_ref (context, &refcount)))
    return false;
  /* Acquire: pairs with the release that published the context, so its
   * fields are visible below. */
  if (COW_UNLIKELY (atomic_load_explicit (&source->cow_state, memory_order_acquire) != state))
    {
      cow_context_unref_unused (context, source->stream);
      return false;
    }
  cow_storage_init_shared (result, block, source, context, refcount, sink);
  return true;
}

/* Initialise storage objects in memory the caller provides (@block is
 * freed when the storage goes).  On failure nothing is left to undo but
 * the caller's own memory. */
COW_INTERNAL CowStatus cow_storage_init_new (CowStorage *storage, void *block,
                                             size_t nbytes, CowAllocator *allocator,
                                             CowOp op, CowError *error);
/* Makes @result a lazy clone of @source (the fast path first, else under
 * @source's lock).  When @source's bytes cannot be shared it fails with
 * COW_ERROR_NOT_SUPPORTED and sets *@refusal (may be NULL) to the
 * reason, decided under @source's lock; else *@refusal is 0. */
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
  /* Anything but 0 (a context, or the lock held by a send or a first
   * clone) goes the slow way, which takes the lock.  Acquire pairs with
   * the release that ends a materialization (possibly cow_ipc_send()'s,
   * on another thread), so a caller that sees 0 also sees the new
   * `data`.  The word only turns non-zero through a lazy clone or a
   * send, which happen-before any write the user orders after them.  A
   * plain load on x86-64. */
  return atomic_load_explicit (&storage->cow_state, memory_order_acquire) != 0;
}

/* Frees a storage whose last reference is gone. */
COW_INTERNAL void cow_storage_free (CowStorage *storage);

/* cow_storage_unref() for the engine's own callers, inlined. */
static inline void
cow_storage_release (CowStorage *storage)
{
  if (cow_release_ref (&storage->refcount))
    cow_storage_free (storage);
}
