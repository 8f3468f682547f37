/* cow-ipc-allocator.c — the shareable CPU allocator: memfd-backed blocks
 * another process can map. */
#include "cow-cpu-allocator-private.h"
#include "cow-ipc-private.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Bytes of live blocks.  Relaxed: a statistic and a soft cap; no other
 * memory is published through it. */
static _Atomic size_t live_bytes;
/* 0: no cap.  Relaxed: a test knob read once per allocation. */
static _Atomic size_t limit_bytes;

/* Frees a shareable block: unmaps it here and closes the memfd.  Other
 * processes' mappings keep the pages alive until they unmap. */
void
cow_ipc_shm_free (void *context)
{
  CowIpcShmBlock *block = context;
  if (block == NULL)
    return;
  munmap (block->data, block->map_len);
  close (block->fd);
  atomic_fetch_sub_explicit (&live_bytes, block->nbytes, memory_order_relaxed);
  free (block);
}

/* One attempt: fills @out, or fails with @error set and nothing left. */
static CowStatus
shm_try_allocate (size_t nbytes, CowDataPtr *out, CowError *error)
{
  size_t limit = atomic_load_explicit (&limit_bytes, memory_order_relaxed);
  size_t live = atomic_load_explicit (&live_bytes, memory_order_relaxed);
  if (limit != 0 && (nbytes > limit || live > limit - nbytes))
    return cow_set_error (error, COW_ERROR_NO_MEMORY,
                          "cannot allocate %zu shareable bytes: %zu of the %zu-byte limit in use",
                          nbytes, live, limit);
  long page = sysconf (_SC_PAGESIZE);
  size_t pg = page > 0 ? (size_t) page : 4096;
  size_t map_len = (nbytes + pg - 1) / pg * pg;
  if (map_len < nbytes)
    return cow_set_error (error, COW_ERROR_OVERFLOW,
                          "cannot allocate %zu shareable bytes: size overflows", nbytes);
  if (map_len == 0)
    map_len = pg;
  CowIpcShmBlock *block = malloc (sizeof *block);
  if (block == NULL)
    return cow_set_error (error, COW_ERROR_NO_MEMORY, "cannot allocate a shareable block record");
  int fd = memfd_create ("cowtensor-block", MFD_CLOEXEC);
  if (fd < 0)
    {
      int saved = errno;
      free (block);
      return cow_set_error (error, COW_ERROR_NO_MEMORY, "memfd_create failed: %s",
                            strerror (saved));
    }
  if (ftruncate (fd, (off_t) map_len) != 0)
    {
      int saved = errno;
      close (fd);
      free (block);
      return cow_set_error (error, COW_ERROR_NO_MEMORY,
                            "cannot size a %zu-byte shareable block: %s", nbytes,
                            strerror (saved));
    }
  void *data = mmap (NULL, map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (data == MAP_FAILED)
    {
      int saved = errno;
      close (fd);
      free (block);
      return cow_set_error (error, COW_ERROR_NO_MEMORY,
                            "cannot map a %zu-byte shareable block: %s", nbytes,
                            strerror (saved));
    }
  *block = (CowIpcShmBlock) { .fd = fd, .data = data, .map_len = map_len,
                              .nbytes = nbytes, .block_id = cow_next_id () };
  atomic_fetch_add_explicit (&live_bytes, nbytes, memory_order_relaxed);
  *out = (CowDataPtr) { .data = data, .context = block, .deleter = cow_ipc_shm_free };
  return COW_OK;
}

/* Allocates, and on a miss scans the limbo (the free-memory callback)
 * and retries once, as PyTorch's caching allocator does. */
static CowStatus
shm_allocate (CowAllocator *self, size_t nbytes, CowDataPtr *out, CowError *error)
{
  (void) self;
  if (shm_try_allocate (nbytes, out, NULL) == COW_OK)
    return COW_OK;
  cow_ipc_collect_for (COW_IPC_COLLECT_ALLOCATION_MISS);
  return shm_try_allocate (nbytes, out, error);
}

/* Only fresh blocks are simple: a sent block's wrapper must never be
 * stolen by a lazy clone, which would then write shared bytes. */
static bool
shm_is_simple_data_ptr (CowAllocator *self, const CowDataPtr *ptr)
{
  (void) self;
  return ptr->deleter == cow_ipc_shm_free;
}

static CowAllocator shareable_allocator = {
  .name = "cpu-shareable",
  .device_type = COW_DEVICE_CPU,
  .device_index = 0,
  .allocate = shm_allocate,
  .copy_data = cow_host_copy_data,
  .is_simple_data_ptr = shm_is_simple_data_ptr,
};

/* Immortal singleton. */
CowAllocator *
cow_ipc_shareable_cpu_allocator (void)
{
  return &shareable_allocator;
}

/* Takes effect for the next allocation. */
void
cow_ipc_shareable_set_limit (size_t nbytes)
{
  atomic_store_explicit (&limit_bytes, nbytes, memory_order_relaxed);
}

/* A snapshot; may be stale under concurrent allocation. */
size_t
cow_ipc_shareable_live_bytes (void)
{
  return atomic_load_explicit (&live_bytes, memory_order_relaxed);
}

/* Walks sent-data wrappers down to the shareable block. */
CowIpcShmBlock *
cow_ipc_shm_block_of (const CowDataPtr *owner)
{
  while (owner != NULL && owner->deleter == cow_ipc_sent_free)
    owner = cow_ipc_sent_inner (owner->context);
  if (owner != NULL && owner->deleter == cow_ipc_shm_free)
    return owner->context;
  return NULL;
}
