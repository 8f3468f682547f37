/* cow-tensor.h — tensors and their views.
 *
 * A tensor is sizes, strides (in elements), a storage offset and a dtype
 * over one storage.  Views share the storage in O(1).  Every function
 * that returns a tensor returns a new reference (release it with
 * cow_tensor_unref()) or NULL with @error filled.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cow-allocator.h"
#include "cow-dtype.h"
#include "cow-error.h"
#include "cow-storage.h"

#ifdef __cplusplus
extern "C" {
#endif

#define COW_MAX_DIMS 8

typedef struct _CowTensor CowTensor;

/* Construction.  @sizes has @ndim entries (0 ≤ ndim ≤ COW_MAX_DIMS; 0 is a
 * scalar); each size ≥ 0. */
CowTensor *cow_tensor_empty (int ndim, const int64_t *sizes, CowDType dtype,
                             CowError *error);
CowTensor *cow_tensor_empty_with_allocator (int ndim, const int64_t *sizes,
                                            CowDType dtype,
                                            CowAllocator *allocator,
                                            CowError *error);
CowTensor *cow_tensor_zeros (int ndim, const int64_t *sizes, CowDType dtype,
                             CowError *error);
/* An uninitialised contiguous tensor on @device (the CPU, or a CUDA
 * device: its storage takes the thread's current stream, cow-cuda.h). */
CowTensor *cow_tensor_empty_on (int ndim, const int64_t *sizes, CowDType dtype,
                                CowDevice device, CowError *error);
/* Copies @nbytes from @data, which must be exactly numel × dtype size. */
CowTensor *cow_tensor_from_data (int ndim, const int64_t *sizes, CowDType dtype,
                                 const void *data, size_t nbytes,
                                 CowError *error);
/* Wraps foreign memory, contiguous, without copying (see
 * cow_storage_new_foreign()). */
CowTensor *cow_tensor_from_foreign (int ndim, const int64_t *sizes,
                                    CowDType dtype, void *data, void *context,
                                    CowDeleterFn deleter, CowError *error);
/* A contiguous tensor over all of @storage's bytes. */
CowTensor *cow_tensor_new_on_storage (CowStorage *storage, int ndim,
                                      const int64_t *sizes, CowDType dtype,
                                      CowError *error);

CowTensor *cow_tensor_ref (CowTensor *tensor);
void cow_tensor_unref (CowTensor *tensor);

/* Shape and layout. */
int cow_tensor_ndim (const CowTensor *tensor);
const int64_t *cow_tensor_sizes (const CowTensor *tensor);
const int64_t *cow_tensor_strides (const CowTensor *tensor);
int64_t cow_tensor_size (const CowTensor *tensor, int dim);
int64_t cow_tensor_storage_offset (const CowTensor *tensor);
CowDType cow_tensor_dtype (const CowTensor *tensor);
int64_t cow_tensor_numel (const CowTensor *tensor);
size_t cow_tensor_nbytes (const CowTensor *tensor);
bool cow_tensor_is_contiguous (const CowTensor *tensor);
/* Borrowed; valid while the tensor lives. */
CowStorage *cow_tensor_storage (const CowTensor *tensor);

/* Element data.  const_data never materializes (in simulate mode it
 * counts as a read); mutable_data materializes the whole storage (and
 * counts as a write).  Both point at element 0 (storage offset applied);
 * for a device tensor that is a device address, and a materializing copy
 * is enqueued on the storage's stream. */
const void *cow_tensor_const_data (const CowTensor *tensor);
void *cow_tensor_mutable_data (CowTensor *tensor, CowError *error);

/* Copies the elements in logical (row-major) order into @out, which holds
 * @nbytes = numel × dtype size.  A read; never materializes. */
CowStatus cow_tensor_read_elements (const CowTensor *tensor, void *out,
                                    size_t nbytes, CowError *error);
/* Element at @index (ndim entries) converted to double. */
CowStatus cow_tensor_get_f64 (const CowTensor *tensor, const int64_t *index,
                              double *out, CowError *error);

/* Names, as a profile shows them ("weights.fc1").  The name is interned
 * and announced to the trace sink; NULL clears it. */
void cow_tensor_set_name (CowTensor *tensor, const char *name);
const char *cow_tensor_get_name (const CowTensor *tensor);

/* Views: share the storage, O(1).  Negative dims count from the end. */
/* @sizes may hold one -1, inferred.  Fails if not expressible as a view. */
CowTensor *cow_tensor_view (CowTensor *tensor, int ndim, const int64_t *sizes,
                            CowError *error);
/* Elements start ≤ i < end stepping by step (step > 0); negative start
 * and end count from the end of the dimension; out-of-range bounds fail. */
CowTensor *cow_tensor_slice (CowTensor *tensor, int dim, int64_t start,
                             int64_t end, int64_t step, CowError *error);
/* Drops @dim, keeping index @index (negative counts from the end). */
CowTensor *cow_tensor_select (CowTensor *tensor, int dim, int64_t index,
                              CowError *error);
CowTensor *cow_tensor_narrow (CowTensor *tensor, int dim, int64_t start,
                              int64_t length, CowError *error);
CowTensor *cow_tensor_transpose (CowTensor *tensor, int dim0, int dim1,
                                 CowError *error);
/* @dims is a permutation of 0..ndim-1. */
CowTensor *cow_tensor_permute (CowTensor *tensor, int ndim, const int *dims,
                               CowError *error);
/* Broadcasts size-1 dimensions (stride 0) and prepends new ones; -1 keeps
 * a size. */
CowTensor *cow_tensor_expand (CowTensor *tensor, int ndim, const int64_t *sizes,
                              CowError *error);
/* Any layout that stays inside the storage. */
CowTensor *cow_tensor_as_strided (CowTensor *tensor, int ndim,
                                  const int64_t *sizes, const int64_t *strides,
                                  int64_t storage_offset, CowError *error);

/* Copies. */
/* @tensor itself (a new reference) if contiguous, else a contiguous copy. */
CowTensor *cow_tensor_contiguous (CowTensor *tensor, CowError *error);
/* An eager, contiguous copy in a new storage. */
CowTensor *cow_tensor_clone (CowTensor *tensor, CowError *error);

/* Devices. */
/* Where @tensor's bytes live (from its storage's allocator; foreign
 * memory counts as CPU). */
CowDevice cow_tensor_device (const CowTensor *tensor);
/* @tensor on @device: a new reference to @tensor itself when it is
 * already there, else a contiguous copy (host to device, device to host
 * or device to device).  A read of @tensor: never materializes it.  A
 * copy to the CPU has completed when this returns; a copy to a device
 * is enqueued on the new storage's stream. */
CowTensor *cow_tensor_to (CowTensor *tensor, CowDevice device, CowError *error);

/* Introspection. */
uint64_t cow_tensor_id (const CowTensor *tensor);
bool cow_tensor_is_cow (const CowTensor *tensor);
/* True when both tensors share a storage, i.e. alias. */
bool cow_tensor_is_alias_of (const CowTensor *a, const CowTensor *b);
/* Address of element 0 without materializing and without counting as a
 * read in simulate mode. */
uintptr_t cow_tensor_data_address (const CowTensor *tensor);

#ifdef __cplusplus
}
#endif
