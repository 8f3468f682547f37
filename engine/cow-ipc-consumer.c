/* cow-ipc-consumer.c — the consumer side: received-data records, the
 * receive cache and release.
 *
 * A received block is mapped once per process: the cache maps (producer
 * nonce, block id) to a received-data record counting the storages over
 * the mapping.  A second receive of a cached block makes a new storage
 * over the same mapping and decrements its own slot at once, since the
 * first slot already keeps the block.  Only records this process
 * received count: a forked child that receives a block its parent had
 * mapped takes a mapping and a slot of its own (the inherited record's
 * slot is the parent's, given back whenever the parent pleases).  When
 * the last storage goes the mapping is closed and the slot decremented
 * (IPC_RELEASE); a producer that is gone (counter file unlinked) is no
 * error.
 */
#include "cow-ipc-private.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct _ReceivedData ReceivedData;
struct _ReceivedData {
  uint64_t producer_nonce, block_id;
  uint64_t allocation_id;
  uint32_t producer_pid;
  const CowIpcTransport *transport;
  CowDevice device; /* where the mapping lives: cuda:N for the CUDA transport */
  void *data;
  size_t nbytes;
  void *mapping;
  CowIpcCounterFile *file; /* NULL when the producer was gone at receive */
  uint64_t slot;
  int64_t storages; /* storages over the mapping, under consumer_lock */
  pid_t owner;      /* the process whose slot it is: a forked child's copy
                     * unmaps but never decrements */
  ReceivedData *next;
};

/* Protects `received` (the cache list), each record's `storages`, and
 * `counter_files` with their consumer_refs. */
static pthread_mutex_t consumer_lock = PTHREAD_MUTEX_INITIALIZER;
static ReceivedData *received;
static CowIpcCounterFile *counter_files;

/* A forked child may have been forked while another thread held the
 * lock: it starts with a fresh one (the records it inherits stay listed,
 * owned by the parent). */
static void
consumer_atfork_child (void)
{
  pthread_mutex_init (&consumer_lock, NULL);
}

static pthread_once_t consumer_atfork_once = PTHREAD_ONCE_INIT;

static void
install_consumer_atfork (void)
{
  pthread_atfork (NULL, NULL, consumer_atfork_child);
}

/* Under consumer_lock: the mapped counter file @name, mapped on first use. */
static CowIpcCounterFile *
counter_file_ref_locked (const char *name, uint64_t id)
{
  for (CowIpcCounterFile *file = counter_files; file != NULL; file = file->next)
    if (strcmp (file->name, name) == 0 && file->id == id)
      {
        file->consumer_refs++;
        return file;
      }
  CowIpcCounterFile *file = cow_ipc_counter_file_open (name, id, NULL);
  if (file == NULL)
    return NULL;
  file->consumer_refs = 1;
  file->next = counter_files;
  counter_files = file;
  return file;
}

/* Under consumer_lock. */
static void
counter_file_unref_locked (CowIpcCounterFile *file)
{
  if (--file->consumer_refs > 0)
    return;
  for (CowIpcCounterFile **p = &counter_files; *p != NULL; p = &(*p)->next)
    if (*p == file)
      {
        *p = file->next;
        break;
      }
  cow_ipc_counter_file_close (file);
}

/* Decrements a slot; acq_rel: our reads of the bytes happen before the
 * producer's acquire load that lets it free them.  Returns the count
 * after, or 0 without a file. */
static int64_t
slot_decrement (CowIpcCounterFile *file, uint64_t slot)
{
  if (file == NULL || slot >= file->nslots)
    return 0;
  return atomic_fetch_sub_explicit (&file->counts[slot], 1, memory_order_acq_rel) - 1;
}

/* The last storage over a received mapping went. */
void
cow_ipc_received_free (void *context)
{
  ReceivedData *rec = context;
  pthread_mutex_lock (&consumer_lock);
  bool last = --rec->storages == 0;
  if (last)
    for (ReceivedData **p = &received; *p != NULL; p = &(*p)->next)
      if (*p == rec)
        {
          *p = rec->next;
          break;
        }
  pthread_mutex_unlock (&consumer_lock);
  if (!last)
    return;
  rec->transport->close (rec->transport, rec->data, rec->nbytes, rec->mapping);
  if (rec->owner != getpid ())
    {
      /* Inherited through fork: the parent's slot, not ours to give back. */
      if (rec->file != NULL)
        {
          pthread_mutex_lock (&consumer_lock);
          counter_file_unref_locked (rec->file);
          pthread_mutex_unlock (&consumer_lock);
        }
      free (rec);
      return;
    }
  int64_t count = slot_decrement (rec->file, rec->slot);
  COW_TRACE (COW_EVENT_IPC_RELEASE, COW_OP_IPC, 0, rec->allocation_id,
             rec->file != NULL ? rec->file->id : 0, rec->slot, (uint64_t) count,
             rec->producer_pid);
  if (rec->file != NULL)
    {
      pthread_mutex_lock (&consumer_lock);
      counter_file_unref_locked (rec->file);
      pthread_mutex_unlock (&consumer_lock);
    }
  free (rec);
}

/* Rejects handles that are not ours or whose layout leaves the block. */
static CowStatus
check_handle (const CowIpcHandle *h, CowError *error)
{
  if (h->magic != COW_IPC_HANDLE_MAGIC || h->version != COW_IPC_HANDLE_VERSION)
    return cow_set_error (error, COW_ERROR_INVALID_ARGUMENT,
                          "ipc_receive: not a cowtensor IPC handle (magic %#x, version %u)",
                          h->magic, h->version);
  if (cow_ipc_transport ((CowIpcTransportKind) h->transport) == NULL)
    return cow_set_error (error, COW_ERROR_INVALID_ARGUMENT,
                          "ipc_receive: unknown transport %u", h->transport);
  if (h->transport == COW_IPC_TRANSPORT_CUDA
      && (h->device_index < 0 || h->device_index >= COW_CUDA_MAX_DEVICES))
    return cow_set_error (error, COW_ERROR_INVALID_ARGUMENT,
                          "ipc_receive: CUDA handle names device %d", h->device_index);
  if (memchr (h->counter_file, '\0', sizeof h->counter_file) == NULL)
    return cow_set_error (error, COW_ERROR_INVALID_ARGUMENT,
                          "ipc_receive: counter file name is not terminated");
  if (h->dtype < 0 || h->dtype >= COW_N_DTYPES || h->ndim < 0 || h->ndim > COW_MAX_DIMS
      || h->storage_offset < 0)
    return cow_set_error (error, COW_ERROR_INVALID_ARGUMENT,
                          "ipc_receive: bad tensor layout (dtype %d, %d dims)",
                          h->dtype, h->ndim);
  int64_t hi = h->storage_offset;
  bool empty = false;
  for (int d = 0; d < h->ndim; d++)
    {
      int64_t step;
      if (h->sizes[d] < 0 || h->strides[d] < 0)
        return cow_set_error (error, COW_ERROR_INVALID_ARGUMENT,
                              "ipc_receive: negative size or stride");
      if (h->sizes[d] == 0)
        empty = true;
      else if (cow_mul_overflows (h->sizes[d] - 1, h->strides[d], &step)
               || __builtin_add_overflow (hi, step, &hi))
        return cow_set_error (error, COW_ERROR_OVERFLOW, "ipc_receive: layout overflows");
    }
  int64_t itemsize = (int64_t) cow_dtype_size ((CowDType) h->dtype);
  if (!empty && (uint64_t) (hi + 1) > h->nbytes / (uint64_t) itemsize)
    return cow_set_error (error, COW_ERROR_OUT_OF_RANGE,
                          "ipc_receive: the tensor reaches element %" PRId64
                          " of a %" PRIu64 "-byte block", hi, h->nbytes);
  return COW_OK;
}

/* A tensor over @rec's mapping with @h's layout; takes a storage count on
 * @rec (already counted by the caller). */
static CowTensor *
tensor_over (ReceivedData *rec, const CowIpcHandle *h, CowError *error)
{
  /* A device mapping makes a device storage: CPU ops must never read it. */
  CowStorage *storage = cow_storage_new_foreign_on (rec->data, rec->nbytes, rec->device, rec,
                                                    cow_ipc_received_free, error);
  if (storage == NULL)
    {
      cow_ipc_received_free (rec);
      return NULL;
    }
  CowTensor *tensor = cow_tensor_make (storage, h->ndim, h->sizes, h->strides,
                                       h->storage_offset, (CowDType) h->dtype,
                                       COW_OP_IPC, NULL, NULL, error);
  cow_storage_unref (storage);
  return tensor;
}

CowTensor *
cow_ipc_receive (const CowIpcHandle *handle, int fd, CowError *error)
{
  COW_ENSURE_ERROR (error);
  if (handle == NULL)
    {
      if (fd >= 0)
        close (fd);
      cow_set_error (error, COW_ERROR_INVALID_ARGUMENT, "ipc_receive: handle is NULL");
      return NULL;
    }
  if (check_handle (handle, error) != COW_OK)
    {
      if (fd >= 0)
        close (fd);
      return NULL;
    }

  pthread_once (&consumer_atfork_once, install_consumer_atfork);
  pthread_mutex_lock (&consumer_lock);
  pid_t self = getpid ();
  for (ReceivedData *rec = received; rec != NULL; rec = rec->next)
    if (rec->producer_nonce == handle->producer_nonce && rec->block_id == handle->block_id
        && rec->owner == self)
      {
        /* Hit: the cached mapping's slot already keeps the block. */
        rec->storages++;
        CowIpcCounterFile *file = counter_file_ref_locked (handle->counter_file,
                                                          handle->counter_file_id);
        pthread_mutex_unlock (&consumer_lock);
        if (fd >= 0)
          close (fd);
        int64_t count = slot_decrement (file, handle->counter_offset);
        COW_TRACE (COW_EVENT_IPC_RECEIVE, COW_OP_IPC, 1, handle->allocation_id,
                   handle->counter_file_id, handle->counter_offset, (uint64_t) count,
                   handle->producer_pid);
        if (file != NULL)
          {
            pthread_mutex_lock (&consumer_lock);
            counter_file_unref_locked (file);
            pthread_mutex_unlock (&consumer_lock);
          }
        return tensor_over (rec, handle, error);
      }
  pthread_mutex_unlock (&consumer_lock);

  const CowIpcTransport *transport = cow_ipc_transport ((CowIpcTransportKind) handle->transport);
  ReceivedData *rec = calloc (1, sizeof *rec);
  if (rec == NULL)
    {
      if (fd >= 0)
        close (fd);
      cow_set_error (error, COW_ERROR_NO_MEMORY, "ipc_receive: cannot allocate a record");
      return NULL;
    }
  if (transport->wait_event (transport, handle, error) != COW_OK
      || transport->open (transport, handle, fd, &rec->data, &rec->mapping, error) != COW_OK)
    {
      if (fd >= 0)
        close (fd);
      free (rec);
      return NULL;
    }
  if (fd >= 0)
    close (fd); /* the mapping keeps the memory */
  rec->producer_nonce = handle->producer_nonce;
  rec->block_id = handle->block_id;
  rec->allocation_id = handle->allocation_id;
  rec->producer_pid = handle->producer_pid;
  rec->transport = transport;
  rec->device = transport->kind == COW_IPC_TRANSPORT_CUDA ? cow_device_cuda (handle->device_index)
                                                          : cow_device_cpu ();
  rec->nbytes = (size_t) handle->nbytes;
  rec->slot = handle->counter_offset;
  rec->storages = 1;
  rec->owner = getpid ();

  pthread_mutex_lock (&consumer_lock);
  /* A producer that already exited has unlinked the file: nothing to count. */
  rec->file = counter_file_ref_locked (handle->counter_file, handle->counter_file_id);
  if (rec->file != NULL && rec->slot >= rec->file->nslots)
    {
      counter_file_unref_locked (rec->file);
      rec->file = NULL;
    }
  rec->next = received;
  received = rec;
  pthread_mutex_unlock (&consumer_lock);
  int64_t count = 0;
  if (rec->file != NULL)
    {
      cow_ipc_consumer_record (rec->file, rec->slot);
      count = atomic_load_explicit (&rec->file->counts[rec->slot], memory_order_relaxed);
    }
  COW_TRACE (COW_EVENT_IPC_RECEIVE, COW_OP_IPC, 0, rec->allocation_id,
             handle->counter_file_id, rec->slot, (uint64_t) count, rec->producer_pid);
  return tensor_over (rec, handle, error);
}

/* Received storages are foreign (no allocator), and a foreign storage's
 * owner never changes; checking the allocator first keeps this from
 * reading the owner of a storage that cow_ipc_send() may be rewrapping. */
bool
cow_ipc_is_received (const CowTensor *tensor)
{
  return tensor != NULL && tensor->storage->allocator == NULL
         && tensor->storage->owner.deleter == cow_ipc_received_free;
}
