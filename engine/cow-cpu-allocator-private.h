/* cow-cpu-allocator-private.h — what allocators of host memory share. */
#pragma once

#include "cow-allocator.h"
#include "cow-private.h"

/* CowAllocator.copy_data for host memory: memcpy, on several cores from
 * 64 MiB on (cow-host-copy.c); never fails. */
COW_INTERNAL CowStatus cow_host_copy_data (CowAllocator *self, void *dst, const void *src,
                                           size_t nbytes, CowError *error);
