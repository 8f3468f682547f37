/* cow-ipc-transport-cpu.c — the CPU transport: a block is a memfd; the
 * consumer maps the descriptor it received with SCM_RIGHTS. */
#include "cow-ipc-private.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* The mapping length rounded to whole pages (≥ 1 page). */
static size_t
map_length (size_t nbytes)
{
  long page = sysconf (_SC_PAGESIZE);
  size_t pg = page > 0 ? (size_t) page : 4096;
  size_t len = (nbytes + pg - 1) / pg * pg;
  return len == 0 ? pg : len;
}

/* Succeeds only for blocks of the shareable allocator. */
static CowStatus
cpu_export (const CowIpcTransport *self, const CowDataPtr *owner, void *data,
            size_t nbytes, CowIpcHandle *handle, int *fd_out, CowError *error)
{
  (void) self;
  CowIpcShmBlock *block = cow_ipc_shm_block_of (owner);
  if (block == NULL || (char *) data < (char *) block->data
      || (size_t) ((char *) data - (char *) block->data) + nbytes > block->map_len)
    return cow_set_error (error, COW_ERROR_NOT_SUPPORTED,
                          "ipc_send: the bytes are not in a shareable (memfd) block");
  handle->offset = (uint64_t) ((char *) data - (char *) block->data);
  *fd_out = block->fd;
  return COW_OK;
}

/* Maps @fd shared; checks it is large enough first. */
static CowStatus
cpu_open (const CowIpcTransport *self, const CowIpcHandle *handle, int fd,
          void **data_out, void **mapping_out, CowError *error)
{
  (void) self;
  if (fd < 0)
    return cow_set_error (error, COW_ERROR_INVALID_ARGUMENT,
                          "ipc_receive: the CPU transport needs the block's descriptor");
  struct stat st;
  if (fstat (fd, &st) != 0)
    return cow_set_error (error, COW_ERROR_INVALID_ARGUMENT,
                          "ipc_receive: bad block descriptor: %s", strerror (errno));
  size_t len = map_length ((size_t) handle->nbytes);
  if (handle->offset % (uint64_t) map_length (1) != 0
      || (uint64_t) st.st_size < handle->offset + handle->nbytes)
    return cow_set_error (error, COW_ERROR_INVALID_ARGUMENT,
                          "ipc_receive: the descriptor holds %lld bytes, the handle"
                          " names %llu at offset %llu",
                          (long long) st.st_size, (unsigned long long) handle->nbytes,
                          (unsigned long long) handle->offset);
  void *map = mmap (NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
                    (off_t) handle->offset);
  if (map == MAP_FAILED)
    return cow_set_error (error, COW_ERROR_NO_MEMORY,
                          "ipc_receive: cannot map %llu bytes: %s",
                          (unsigned long long) handle->nbytes, strerror (errno));
  *data_out = map;
  *mapping_out = NULL;
  return COW_OK;
}

static void
cpu_close (const CowIpcTransport *self, void *data, size_t nbytes, void *mapping)
{
  (void) self;
  (void) mapping;
  munmap (data, map_length (nbytes));
}

/* CPU stores are visible to the consumer once the handle crosses the
 * socket: no event needed. */
static CowStatus
cpu_no_event (const CowIpcTransport *self, CowIpcHandle *handle, CowError *error)
{
  (void) self;
  (void) handle;
  (void) error;
  return COW_OK;
}

static CowStatus
cpu_no_wait (const CowIpcTransport *self, const CowIpcHandle *handle, CowError *error)
{
  (void) self;
  (void) handle;
  (void) error;
  return COW_OK;
}

const CowIpcTransport cow_ipc_cpu_transport = {
  .name = "cpu-memfd",
  .kind = COW_IPC_TRANSPORT_CPU,
  .export_block = cpu_export,
  .open = cpu_open,
  .close = cpu_close,
  .record_event = cpu_no_event,
  .wait_event = cpu_no_wait,
};
