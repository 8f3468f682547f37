/* cow-storage.h — storages, the unit of aliasing.
 *
 * Tensors alias if and only if they share a storage.  A storage owns a
 * data pointer, or (after a lazy clone) shares one through a copy-on-write
 * context with the other storages cloned from the same bytes.  Storages
 * are reference counted; every tensor holds one reference.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cow-allocator.h"
#include "cow-device.h"
#include "cow-error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct _CowStorage CowStorage;

/* A new storage of @nbytes from @allocator (cow_cpu_allocator() if NULL),
 * uninitialised, with one reference. */
CowStorage *cow_storage_new (size_t nbytes, CowAllocator *allocator,
                             CowError *error);

/* Wraps memory the engine did not allocate.  @deleter(@context) runs when
 * the last storage using the bytes goes (it may be NULL for borrowed
 * memory that outlives the storage).  The data pointer is not simple:
 * lazy clones of it copy eagerly, with COW_EAGER_FOREIGN_DATA_PTR. */
CowStorage *cow_storage_new_foreign (void *data, size_t nbytes, void *context,
                                     CowDeleterFn deleter, CowError *error);

/* The same for memory on @device (cow_device_cuda (i) for device memory,
 * such as a CUDA IPC mapping).  The storage is a device storage: ops run
 * on the device (failing with COW_ERROR_DEVICE "no CUDA device: …" where
 * there is none), never on the host; its results come from
 * cow_cuda_allocator().  The device need not be present to wrap the
 * memory; an index outside cuda:0 … cuda:(COW_CUDA_MAX_DEVICES-1) fails
 * with COW_ERROR_INVALID_ARGUMENT. */
CowStorage *cow_storage_new_foreign_on (void *data, size_t nbytes, CowDevice device,
                                        void *context, CowDeleterFn deleter,
                                        CowError *error);

CowStorage *cow_storage_ref (CowStorage *storage);
void cow_storage_unref (CowStorage *storage);

size_t cow_storage_nbytes (const CowStorage *storage);
uint64_t cow_storage_id (const CowStorage *storage);

/* The bytes for reading.  Never materializes. */
const void *cow_storage_const_data (const CowStorage *storage);

/* The bytes for writing: a copy-on-write storage is materialized first
 * (copied if other storages still share its bytes, stolen if it is the
 * last).  NULL with @error filled if the copy cannot be made; the storage
 * is then still a valid lazy copy. */
void *cow_storage_mutable_data (CowStorage *storage, CowError *error);

/* A new storage sharing @storage's bytes through a copy-on-write context,
 * O(1) and without copying; @storage becomes copy-on-write too.  NULL
 * with COW_ERROR_NOT_SUPPORTED when the data pointer cannot be wrapped
 * (see cow_tensor_lazy_clone() for the eager fallback). */
CowStorage *cow_storage_lazy_clone (CowStorage *storage, CowError *error);

/* Introspection, for debuggers and tests.  None of these materializes. */
bool cow_storage_is_cow (const CowStorage *storage);
/* Storages sharing the context (0 when not copy-on-write). */
int64_t cow_storage_context_refcount (const CowStorage *storage);
/* Id of the copy-on-write context (0 when not copy-on-write). */
uint64_t cow_storage_context_id (const CowStorage *storage);
/* Id of the allocation the bytes come from. */
uint64_t cow_storage_allocation_id (const CowStorage *storage);
/* Current storage references (tensors and other holders). */
int64_t cow_storage_refcount (const CowStorage *storage);

#ifdef __cplusplus
}
#endif
