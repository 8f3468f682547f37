/* cow-cpu-allocator.c — the CPU allocator: aligned host memory. */
#include "cow-cpu-allocator-private.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* Blocks this large are aligned to a huge page and advised for THP: a
 * materializing copy then faults 2 MiB at a time instead of 4 KiB. */
#define HUGE_PAGE_BYTES ((size_t) 2 << 20)

static void
cpu_free (void *context)
{
  free (context);
}

static CowStatus
cpu_allocate (CowAllocator *self, size_t nbytes, CowDataPtr *out,
              CowError *error)
{
  (void) self;
  size_t alignment = nbytes >= HUGE_PAGE_BYTES ? HUGE_PAGE_BYTES : COW_CPU_ALIGNMENT;
  /* aligned_alloc wants a multiple of the alignment; never ask for 0. */
  size_t rounded = (nbytes + alignment - 1) & ~(alignment - 1);
  if (rounded < nbytes)
    return cow_set_error (error, COW_ERROR_OVERFLOW,
                          "cannot allocate %zu bytes: size overflows", nbytes);
  if (rounded == 0)
    rounded = alignment;

  void *data = aligned_alloc (alignment, rounded);
  if (data == NULL)
    return cow_set_error (error, COW_ERROR_NO_MEMORY,
                          "cannot allocate %zu bytes of CPU memory: %s", nbytes,
                          strerror (errno ? errno : ENOMEM));
#ifdef MADV_HUGEPAGE
  if (alignment == HUGE_PAGE_BYTES)
    madvise (data, rounded, MADV_HUGEPAGE); /* advice only: failure is fine */
#endif
  *out = (CowDataPtr) { .data = data, .context = data, .deleter = cpu_free };
  return COW_OK;
}

static bool
cpu_is_simple_data_ptr (CowAllocator *self, const CowDataPtr *ptr)
{
  (void) self;
  /* Context first: a wrapped pointer never has context == data (#126129). */
  return ptr->context == ptr->data && ptr->deleter == cpu_free;
}

static CowAllocator cpu_allocator = {
  .name = "cpu",
  .device_type = COW_DEVICE_CPU,
  .device_index = 0,
  .allocate = cpu_allocate,
  .copy_data = cow_host_copy_data,
  .is_simple_data_ptr = cpu_is_simple_data_ptr,
};

CowAllocator *
cow_cpu_allocator (void)
{
  return &cpu_allocator;
}
