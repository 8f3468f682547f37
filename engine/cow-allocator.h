/* cow-allocator.h — where the bytes of a storage come from.
 *
 * A data pointer is PyTorch's DataPtr: the address of the bytes plus an
 * owner context and the deleter that releases it.  A data pointer is
 * "simple" when its context is its data address and its allocator
 * recognises its deleter: only simple data pointers can be wrapped in a
 * copy-on-write context.  Memory that the engine did not allocate
 * (foreign memory, with its own deleter) is never simple, so a lazy clone
 * of it falls back to an eager copy and says why.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cow-device.h"
#include "cow-error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef void (*CowDeleterFn) (void *context);

typedef struct {
  void *data;           /* first byte; may be NULL for zero bytes */
  void *context;        /* what @deleter releases */
  CowDeleterFn deleter; /* NULL: nothing to release */
} CowDataPtr;

typedef struct _CowAllocator CowAllocator;

/* The allocator interface.  Allocators are immortal singletons (or
 * outlive every storage that uses them); the engine never frees one. */
struct _CowAllocator {
  const char *name;
  CowDeviceType device_type;
  int device_index;

  /* Fills @out with @nbytes of fresh memory.  Returns COW_OK, or
   * COW_ERROR_NO_MEMORY (or COW_ERROR_DEVICE) with @error filled. */
  CowStatus (*allocate) (CowAllocator *self, size_t nbytes, CowDataPtr *out,
                         CowError *error);

  /* Copies @nbytes from @src to @dst, both from this allocator's device.
   * Must not use plain memcpy for device memory.  A device allocator
   * enqueues the copy on the calling thread's current stream (see
   * cow-cuda.h) and may return before it has run, as PyTorch's does; a
   * device allocator's allocate() is ordered on that stream too. */
  CowStatus (*copy_data) (CowAllocator *self, void *dst, const void *src,
                          size_t nbytes, CowError *error);

  /* True when @ptr was made by allocate() and not wrapped since. */
  bool (*is_simple_data_ptr) (CowAllocator *self, const CowDataPtr *ptr);
};

/* The process-wide CPU allocator: 64-byte aligned blocks; blocks of 2 MiB
 * and more are 2 MiB aligned and advised for transparent huge pages, as
 * PyTorch's CPU allocator does, which halves page-fault cost on big
 * copies. */
CowAllocator *cow_cpu_allocator (void);

/* Alignment of every block from cow_cpu_allocator(). */
#define COW_CPU_ALIGNMENT 64

#ifdef __cplusplus
}
#endif
