/* cow-ipc.h — sharing tensors between processes with cross-process
 * reference counting (PyTorch's CudaIPCTypes design).
 *
 * The producer sends a tensor: its storage's data pointer is wrapped in a
 * sent-data record that keeps the bytes alive, and one int64 counter slot
 * in a shared-memory counter file ("/cowtensor-ipc-<pid>-<n>", 0600) is set
 * to 1, the consumer's reference.  The consumer receives the handle (plus,
 * for the CPU transport, the block's memfd over a Unix socket), maps the
 * bytes and wraps them in a received-data record; when its last storage
 * over them goes, it unmaps them and decrements the slot.  A producer
 * whose last reference goes while the slot is still counted moves the
 * block to the limbo; cow_ipc_collect() (also run on every producer-side
 * free of a sent block and when the shareable allocator finds no room)
 * frees the limbo blocks whose counter reached zero or whose consumer
 * died (see README, "Cross-process sharing").
 *
 * Transports: CPU (memfd-backed blocks from
 * cow_ipc_shareable_cpu_allocator(), fd passed with SCM_RIGHTS) and CUDA
 * (cudaIpc{Get,Open}MemHandle and event handles; compiled when the CUDA
 * toolkit is found, COW_ERROR_DEVICE "no CUDA device: …" without one).
 *
 * Semantics a user should know:
 *   - Only tensors whose storage comes from a shareable allocator can be
 *     sent; others fail with COW_ERROR_NOT_SUPPORTED (copy them into a
 *     tensor from cow_ipc_shareable_cpu_allocator() or
 *     cow_ipc_shareable_cuda_allocator() first).  A lazy copy
 *     is materialized before it is sent (as PyTorch does).
 *   - Sent and received bytes are shared memory: a write through the
 *     producer's or a consumer's tensor is visible in every process (as
 *     with PyTorch's CUDA IPC).  A lazy clone of a sent or received
 *     tensor copies eagerly (COW_EAGER_NOT_SIMPLE / _FOREIGN_DATA_PTR):
 *     a steal would otherwise let a private clone write shared bytes.
 *   - A received tensor cannot be sent on (COW_ERROR_NOT_SUPPORTED).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cow-allocator.h"
#include "cow-error.h"
#include "cow-tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

#define COW_IPC_HANDLE_MAGIC 0x43574950u /* "CWIP" */
#define COW_IPC_HANDLE_VERSION 1
#define COW_IPC_COUNTER_FILE_SLOTS 10000
#define COW_IPC_NAME_MAX 64

typedef enum {
  COW_IPC_TRANSPORT_CPU = 1,  /* memfd + mmap, fd passed with SCM_RIGHTS */
  COW_IPC_TRANSPORT_CUDA = 2, /* cudaIpcMemHandle_t + cudaIpcEventHandle_t */
} CowIpcTransportKind;

/* COW_EVENT_IPC_COLLECT.aux: what started the scan. */
typedef enum {
  COW_IPC_COLLECT_EXPLICIT = 1,       /* cow_ipc_collect() */
  COW_IPC_COLLECT_PRODUCER_FREE = 2,  /* a sent block's last producer reference went */
  COW_IPC_COLLECT_ALLOCATION_MISS = 3, /* the shareable allocator found no room */
  COW_IPC_COLLECT_SHUTDOWN = 4         /* cow_ipc_shutdown() or the producer's exit */
} CowIpcCollectTrigger;

/* Trace payload (the `ipc` member) of each event, op COW_OP_IPC:
 *   SEND, RECEIVE, RELEASE, LIMBO_ENTER, LIMBO_FREE: allocation_id (the
 *     producer's allocation id of the block), counter_file_id, counter_offset
 *     (slot), count (the slot's value after the step), peer_pid (SEND: 0;
 *     consumer side: the producer; LIMBO_*: the consumer that received the
 *     slot, 0 if none yet).  LIMBO_FREE.aux = 1 when the slot was released
 *     because its consumer died (count is then what it still held).
 *   COLLECT (aux = CowIpcCollectTrigger): counter_offset = blocks freed by
 *     this scan, count = blocks left in the limbo, others 0. */

/* What crosses the process boundary, as plain bytes: write it to a pipe
 * or socket as is.  The CPU transport's memfd travels beside it. */
typedef struct {
  uint32_t magic;     /* COW_IPC_HANDLE_MAGIC */
  uint16_t version;   /* COW_IPC_HANDLE_VERSION */
  uint16_t transport; /* CowIpcTransportKind */
  uint32_t producer_pid;
  int32_t device_index;
  uint64_t producer_nonce; /* random per producer process */
  uint64_t block_id;       /* the block's identity in the producer */
  uint64_t allocation_id;  /* the producer's allocation id (trace) */
  uint64_t nbytes;         /* bytes of the block */
  uint64_t offset;         /* of the storage's first byte in the block */
  uint64_t generation;     /* per-send nonce */
  uint64_t counter_file_id;
  uint64_t counter_offset; /* slot in the counter file */
  char counter_file[COW_IPC_NAME_MAX]; /* shm name, NUL-terminated */
  /* The tensor's layout over the storage. */
  int32_t dtype;
  int32_t ndim;
  int64_t storage_offset;
  int64_t sizes[COW_MAX_DIMS];
  int64_t strides[COW_MAX_DIMS];
  uint8_t transport_data[128]; /* CUDA: memory handle then event handle */
} CowIpcHandle;

/* A transport: how a block's bytes reach another process. */
typedef struct _CowIpcTransport CowIpcTransport;
struct _CowIpcTransport {
  const char *name;
  CowIpcTransportKind kind;
  /* Producer: describes the block at @data (@nbytes, from @owner) in
   * @handle's transport fields; *@fd_out receives a descriptor to pass
   * beside the handle (borrowed: valid while the block lives) or -1. */
  CowStatus (*export_block) (const CowIpcTransport *self, const CowDataPtr *owner,
                             void *data, size_t nbytes, CowIpcHandle *handle,
                             int *fd_out, CowError *error);
  /* Consumer: maps the block @handle names (@fd from the producer or -1)
   * into *@data_out; *@mapping_out is what close() needs. */
  CowStatus (*open) (const CowIpcTransport *self, const CowIpcHandle *handle,
                     int fd, void **data_out, void **mapping_out, CowError *error);
  /* Consumer: undoes open(). */
  void (*close) (const CowIpcTransport *self, void *data, size_t nbytes,
                 void *mapping);
  /* Producer: makes the consumer's later wait see the work queued on
   * the block so far (CUDA: an interprocess event; CPU: nothing). */
  CowStatus (*record_event) (const CowIpcTransport *self, CowIpcHandle *handle,
                             CowError *error);
  /* Consumer: waits for the producer's recorded work (CPU: nothing). */
  CowStatus (*wait_event) (const CowIpcTransport *self, const CowIpcHandle *handle,
                           CowError *error);
};

/* The transport for @kind; NULL for an unknown kind.  The CUDA transport
 * exists even when built without CUDA: its calls then fail with
 * COW_ERROR_NOT_SUPPORTED. */
const CowIpcTransport *cow_ipc_transport (CowIpcTransportKind kind);

/* COW_OK when the CUDA transport can run; COW_ERROR_DEVICE "no CUDA
 * device: <reason>" without a device or driver; COW_ERROR_NOT_SUPPORTED
 * when built without the CUDA toolkit. */
CowStatus cow_ipc_cuda_available (CowError *error);

/* The shareable CPU allocator: every block is its own memfd, mapped
 * shared, so a sent block can be mapped by another process.  When it
 * finds no room (memfd or mmap fail, or the byte limit below is reached)
 * it runs cow_ipc_collect() and retries once. */
CowAllocator *cow_ipc_shareable_cpu_allocator (void);
/* The IPC-shareable allocator of cuda:@index (an immortal singleton), or
 * NULL with @error set as cow_cuda_check_device() does.  Its blocks come
 * from plain cudaMalloc, which cudaIpcGetMemHandle() can export;
 * cow_cuda_allocator()'s blocks come from the stream-ordered pool
 * (cudaMallocAsync), which it cannot, so cow_ipc_send() refuses them.
 * Allocate device tensors to send with it (cow_tensor_empty_with_allocator(),
 * then cow_tensor_copy_() into them); their lazy copies materialize into
 * it too.  Freeing a block synchronizes the device (cudaFree). */
CowAllocator *cow_ipc_shareable_cuda_allocator (int index, CowError *error);

/* Caps the bytes of live shareable blocks (0: no cap), for tests. */
void cow_ipc_shareable_set_limit (size_t nbytes);
/* Bytes of shareable blocks alive in this process (limbo included). */
size_t cow_ipc_shareable_live_bytes (void);

/* Producer: shares @tensor.  Fills @handle and *@fd_out (CPU: the block's
 * memfd, borrowed, to pass with cow_ipc_send_fds() before the block can
 * go; CUDA: -1).  Each call takes a new counter slot set to 1: the
 * handle must be received exactly once.  Refuses tensors received from
 * another process and tensors in non-shareable memory, including
 * device memory from cow_cuda_allocator()'s stream-ordered pool
 * (COW_ERROR_NOT_SUPPORTED, naming the shareable allocator to use).  A lazy copy is materialized first (a write,
 * which can fail like any: COW_ERROR_NO_MEMORY).  Safe while other
 * threads lazily clone or write the same tensor's storage: each of those
 * happens wholly before the send (the send then materializes the new
 * lazy copy, or sends the written bytes) or wholly after it (a lazy
 * clone then copies eagerly). */
CowStatus cow_ipc_send (CowTensor *tensor, CowIpcHandle *handle, int *fd_out,
                        CowError *error);

/* Consumer: a tensor over the bytes @handle names.  @fd (CPU: the memfd
 * received beside the handle; CUDA: -1) is consumed: closed in every
 * case.  Receiving the same block again while a tensor over it lives
 * shares the mapping and releases the new slot at once — in the process
 * that received it: a forked child receiving a block its parent mapped
 * maps it itself and keeps its new slot counted until it releases. */
CowTensor *cow_ipc_receive (const CowIpcHandle *handle, int fd, CowError *error);

/* True when @tensor's bytes were received from another process. */
bool cow_ipc_is_received (const CowTensor *tensor);

/* Producer: frees the limbo blocks no consumer counts any more (counter
 * zero, or the consumer died).  Returns how many were freed. */
size_t cow_ipc_collect (void);
/* Blocks waiting in this process's limbo. */
size_t cow_ipc_limbo_size (void);

/* Producer: the process is about to stop sharing (also run at exit).
 * Collects the limbo once more; when blocks are still held by
 * consumers, emits IPC_COLLECT with aux COW_IPC_COLLECT_SHUTDOWN (count =
 * blocks left) and writes one warning to stderr naming the consumers,
 * as PyTorch's "Producer process has been terminated before all shared
 * CUDA tensors released".  CPU blocks stay valid for those consumers
 * (the memfd lives while they map it).  Returns the blocks still held. */
size_t cow_ipc_shutdown (void);

/* Producer: the current value of the slot @handle names (this process's
 * own counter files only), or -1 when the file is unknown or gone. */
int64_t cow_ipc_handle_count (const CowIpcHandle *handle);

/* Slots of counter files created from now on (default and maximum
 * COW_IPC_COUNTER_FILE_SLOTS; at least 1), for tests of file rollover. */
CowStatus cow_ipc_set_counter_file_slots (int nslots, CowError *error);
/* Counter files this process has created and not yet unlinked. */
size_t cow_ipc_counter_files_open (void);

/* Removes /dev/shm/cowtensor-ipc-<pid>-* files left by producers that no
 * longer run (a crashed producer cannot unlink its own).  Returns how
 * many were removed. */
size_t cow_ipc_remove_stale_files (void);

/* Sends @len bytes and @n_fds descriptors (at most 16) over the Unix
 * socket @sock in one message; the descriptors stay open here. */
CowStatus cow_ipc_send_fds (int sock, const void *data, size_t len,
                            const int *fds, int n_fds, CowError *error);
/* Receives exactly @len bytes and up to @max_fds descriptors (*@n_fds_out
 * says how many; extra ones are closed).  COW_ERROR_INVALID_ARGUMENT
 * when the peer closed the socket or sent a short message. */
CowStatus cow_ipc_recv_fds (int sock, void *data, size_t len, int *fds,
                            int max_fds, int *n_fds_out, CowError *error);

#ifdef __cplusplus
}
#endif
