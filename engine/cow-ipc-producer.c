/* cow-ipc-producer.c — the producer side: sent-data records, counter
 * slots, the limbo and collect().
 *
 * A send wraps the storage's data pointer in a sent-data record (the
 * original owner lives inside it, so the bytes stay alive while the
 * record does) and takes the next slot of the current counter file, set
 * to 1.  When the storage goes, the record's deleter runs: a slot still
 * counted (and whose consumer is not dead) sends the record to the limbo;
 * otherwise the bytes are freed.  Every such free, an explicit collect
 * and an allocation miss scan the limbo: under the lock it is split into
 * blocks to keep and blocks to free, and those are freed after the lock
 * is dropped (PyTorch #39541: a deleter may re-enter the IPC layer).
 */
#include "cow-ipc-private.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef struct _SentData SentData;
struct _SentData {
  CowDataPtr inner; /* the original owner: freed when the record is */
  void *data;
  size_t nbytes;
  uint64_t allocation_id;
  CowIpcCounterFile *file;
  uint64_t slot;
  SentData *next; /* limbo link */
};

/* Protects every field of `producer` and the producer-side fields of the
 * counter files in it (next_offset, used_slots, unlinked, next). */
static pthread_mutex_t producer_lock = PTHREAD_MUTEX_INITIALIZER;

static struct {
  CowIpcCounterFile *files;   /* every file not yet unlinked and closed */
  CowIpcCounterFile *current; /* the file slots come from; NULL if none */
  uint64_t nslots;            /* slots of files created from now on */
  SentData *limbo;
  size_t limbo_size;
  pid_t pid;                  /* the process this state belongs to */
  uint64_t nonce;
  bool atexit_installed;
  bool stale_checked;         /* stale files of dead producers removed */
} producer = { .nslots = COW_IPC_COUNTER_FILE_SLOTS };

/* A forked child starts with no producer state of its own: the parent's
 * files and limbo stay the parent's (the child never unlinks or frees
 * them; their records are leaked in the child). */
static void
producer_atfork_child (void)
{
  pthread_mutex_init (&producer_lock, NULL);
  producer.files = NULL;
  producer.current = NULL;
  producer.limbo = NULL;
  producer.limbo_size = 0;
  producer.pid = 0;
  producer.nonce = 0;
  producer.stale_checked = false;
}

static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void
install_atfork (void)
{
  pthread_atfork (NULL, NULL, producer_atfork_child);
}

/* Under producer_lock. */
static uint64_t
nonce_locked (void)
{
  if (producer.pid != getpid () || producer.nonce == 0)
    {
      struct timespec ts;
      clock_gettime (CLOCK_REALTIME, &ts);
      uint64_t x = (uint64_t) ts.tv_nsec ^ ((uint64_t) ts.tv_sec << 30)
                   ^ ((uint64_t) getpid () << 17) ^ (uint64_t) (uintptr_t) &ts;
      /* splitmix64 finaliser */
      x ^= x >> 30; x *= 0xbf58476d1ce4e5b9ull;
      x ^= x >> 27; x *= 0x94d049bb133111ebull;
      x ^= x >> 31;
      producer.nonce = x | 1;
      producer.pid = getpid ();
    }
  return producer.nonce;
}

/* Random per process, never 0. */
uint64_t
cow_ipc_process_nonce (void)
{
  pthread_once (&atfork_once, install_atfork);
  pthread_mutex_lock (&producer_lock);
  uint64_t nonce = nonce_locked ();
  pthread_mutex_unlock (&producer_lock);
  return nonce;
}

/* True while a slot keeps its block: counted and not held by a dead
 * consumer.  Acquire pairs with the consumer's decrement (acq_rel), so
 * its last reads of the bytes happen before we free them. */
static bool
slot_live (const CowIpcCounterFile *file, uint64_t slot)
{
  if (atomic_load_explicit (&file->counts[slot], memory_order_acquire) <= 0)
    return false;
  return !cow_ipc_consumer_dead (file, slot);
}

static int64_t
slot_count (const CowIpcCounterFile *file, uint64_t slot)
{
  return atomic_load_explicit (&file->counts[slot], memory_order_acquire);
}

static uint64_t
slot_consumer (const CowIpcCounterFile *file, uint64_t slot)
{
  int32_t pid = atomic_load_explicit (&file->consumers[slot].pid, memory_order_acquire);
  return pid > 0 ? (uint64_t) pid : 0;
}

/* Under producer_lock: removes @file from the list, unlinks and unmaps it. */
static void
drop_file_locked (CowIpcCounterFile *file)
{
  for (CowIpcCounterFile **p = &producer.files; *p != NULL; p = &(*p)->next)
    if (*p == file)
      {
        *p = file->next;
        break;
      }
  if (producer.current == file)
    producer.current = NULL;
  cow_ipc_counter_file_unlink (file);
  cow_ipc_counter_file_close (file);
}

/* Under producer_lock: a file with no free offsets and none in use goes. */
static void
release_slot_locked (CowIpcCounterFile *file)
{
  file->used_slots--;
  if (file->used_slots == 0 && file->next_offset == file->nslots)
    drop_file_locked (file);
}

static size_t shutdown_for_pid (void);

/* At exit: warn about blocks consumers still hold, then unlink the files
 * with no live slot.  The rest stay for consumers still counting;
 * cow_ipc_remove_stale_files() removes them once this process is gone. */
static void
producer_atexit (void)
{
  shutdown_for_pid ();
  pthread_mutex_lock (&producer_lock);
  if (producer.pid == getpid ())
    for (CowIpcCounterFile *file = producer.files; file != NULL; file = file->next)
      {
        bool live = false;
        for (uint64_t s = 0; s < file->next_offset && !live; s++)
          live = slot_live (file, s);
        if (!live)
          cow_ipc_counter_file_unlink (file);
      }
  pthread_mutex_unlock (&producer_lock);
}

/* Under producer_lock: the next slot, set to 1, from the current file or
 * a new one. */
static CowStatus
take_slot_locked (CowIpcCounterFile **file_out, uint64_t *slot_out, CowError *error)
{
  CowIpcCounterFile *file = producer.current;
  if (file == NULL && !producer.stale_checked)
    {
      /* The first counter file of this process: files that crashed
       * producers left behind go first (only those whose owner is dead). */
      producer.stale_checked = true;
      cow_ipc_remove_stale_files ();
    }
  if (file == NULL)
    {
      file = cow_ipc_counter_file_create (producer.nslots, error);
      if (file == NULL)
        return error->code;
      file->next = producer.files;
      producer.files = file;
      producer.current = file;
      if (!producer.atexit_installed)
        {
          atexit (producer_atexit);
          producer.atexit_installed = true;
        }
    }
  uint64_t slot = file->next_offset++;
  file->used_slots++;
  if (file->next_offset == file->nslots)
    producer.current = NULL; /* full: the next send starts a new file */
  /* Relaxed: the handle reaches the consumer through a socket, a
   * synchronising channel. */
  atomic_store_explicit (&file->counts[slot], 1, memory_order_relaxed);
  *file_out = file;
  *slot_out = slot;
  return COW_OK;
}

const CowDataPtr *
cow_ipc_sent_inner (void *context)
{
  return &((SentData *) context)->inner;
}

/* Frees the record's bytes (outside any lock) and gives its slot back. */
static void
sent_data_destroy (SentData *sent)
{
  if (sent->inner.deleter != NULL)
    sent->inner.deleter (sent->inner.context);
  pthread_mutex_lock (&producer_lock);
  release_slot_locked (sent->file);
  pthread_mutex_unlock (&producer_lock);
  free (sent);
}

/* The storage's last reference went: the bytes go now or wait in the
 * limbo; then the limbo is scanned. */
void
cow_ipc_sent_free (void *context)
{
  SentData *sent = context;
  pthread_mutex_lock (&producer_lock);
  bool keep = slot_live (sent->file, sent->slot);
  if (keep)
    {
      sent->next = producer.limbo;
      producer.limbo = sent;
      producer.limbo_size++;
    }
  /* Saved under the lock: once it drops, a concurrent collect may free
   * a record that entered the limbo. */
  int64_t count = slot_count (sent->file, sent->slot);
  uint64_t peer = slot_consumer (sent->file, sent->slot);
  uint64_t file_id = sent->file->id, slot = sent->slot;
  uint64_t allocation_id = sent->allocation_id;
  pthread_mutex_unlock (&producer_lock);
  if (keep)
    COW_TRACE (COW_EVENT_IPC_LIMBO_ENTER, COW_OP_IPC, 0, allocation_id, file_id,
               slot, (uint64_t) count, peer);
  else
    sent_data_destroy (sent);
  cow_ipc_collect_for (COW_IPC_COLLECT_PRODUCER_FREE);
}

size_t
cow_ipc_collect_for (CowIpcCollectTrigger trigger)
{
  SentData *to_free = NULL;
  size_t freed = 0, left;
  pthread_mutex_lock (&producer_lock);
  for (SentData **p = &producer.limbo; *p != NULL;)
    {
      SentData *sent = *p;
      if (slot_live (sent->file, sent->slot))
        {
          p = &sent->next;
          continue;
        }
      *p = sent->next;
      sent->next = to_free;
      to_free = sent;
      producer.limbo_size--;
      freed++;
    }
  left = producer.limbo_size;
  pthread_mutex_unlock (&producer_lock);

  /* Outside the lock: deleters may re-enter (a nested sent record). */
  while (to_free != NULL)
    {
      SentData *sent = to_free;
      to_free = sent->next;
      int64_t count = slot_count (sent->file, sent->slot);
      uint32_t dead = count > 0 ? 1u : 0u;
      COW_TRACE (COW_EVENT_IPC_LIMBO_FREE, COW_OP_IPC, dead, sent->allocation_id,
                 sent->file->id, sent->slot, (uint64_t) count,
                 slot_consumer (sent->file, sent->slot));
      sent_data_destroy (sent);
    }
  COW_TRACE (COW_EVENT_IPC_COLLECT, COW_OP_IPC, (uint32_t) trigger, 0, 0,
             (uint64_t) freed, (uint64_t) left, 0);
  return freed;
}

/* Collects, then reports what consumers still hold (see header). */
static size_t
shutdown_for_pid (void)
{
  if (producer.pid != getpid ())
    return 0; /* nothing sent from this process */
  cow_ipc_collect_for (COW_IPC_COLLECT_SHUTDOWN);
  char pids[160] = "";
  size_t held = 0, used = 0;
  pthread_mutex_lock (&producer_lock);
  for (SentData *sent = producer.limbo; sent != NULL; sent = sent->next)
    {
      held++;
      uint64_t peer = slot_consumer (sent->file, sent->slot);
      char one[24];
      int n = peer != 0 ? snprintf (one, sizeof one, "%s%" PRIu64, used ? ", " : "", peer)
                        : snprintf (one, sizeof one, "%s(not received)", used ? ", " : "");
      if (n > 0 && used + (size_t) n + 4 < sizeof pids && strstr (pids, one + (used ? 2 : 0)) == NULL)
        {
          memcpy (pids + used, one, (size_t) n + 1);
          used += (size_t) n;
        }
    }
  pthread_mutex_unlock (&producer_lock);
  if (held > 0)
    {
      COW_TRACE (COW_EVENT_IPC_COLLECT, COW_OP_IPC, COW_IPC_COLLECT_SHUTDOWN, 0, 0, 0,
                 (uint64_t) held, 0);
      fprintf (stderr,
               "cowtensor: producer process %ld is shutting down while %zu shared block%s"
               " %s still held by consumer process%s %s; the memory stays until they"
               " release it\n",
               (long) getpid (), held, held == 1 ? "" : "s", held == 1 ? "is" : "are",
               strchr (pids, ',') != NULL ? "es" : "", pids);
    }
  return held;
}

size_t
cow_ipc_shutdown (void)
{
  return shutdown_for_pid ();
}

/* Explicit trigger. */
size_t
cow_ipc_collect (void)
{
  return cow_ipc_collect_for (COW_IPC_COLLECT_EXPLICIT);
}

/* A snapshot. */
size_t
cow_ipc_limbo_size (void)
{
  pthread_mutex_lock (&producer_lock);
  size_t n = producer.limbo_size;
  pthread_mutex_unlock (&producer_lock);
  return n;
}

/* Files created after the call use @nslots; the current file is closed
 * to new slots so the next send starts one. */
CowStatus
cow_ipc_set_counter_file_slots (int nslots, CowError *error)
{
  if (nslots < 1 || nslots > COW_IPC_COUNTER_FILE_SLOTS)
    return cow_set_error (error, COW_ERROR_INVALID_ARGUMENT,
                          "counter files hold 1 to %d slots, not %d",
                          COW_IPC_COUNTER_FILE_SLOTS, nslots);
  pthread_mutex_lock (&producer_lock);
  producer.nslots = (uint64_t) nslots;
  producer.current = NULL;
  pthread_mutex_unlock (&producer_lock);
  return COW_OK;
}

/* Files of this process still named in /dev/shm. */
size_t
cow_ipc_counter_files_open (void)
{
  size_t n = 0;
  pthread_mutex_lock (&producer_lock);
  for (CowIpcCounterFile *file = producer.files; file != NULL; file = file->next)
    n += !file->unlinked;
  pthread_mutex_unlock (&producer_lock);
  return n;
}

/* Under the storage's lock (see cow_ipc_send()). */
static CowStatus
send_locked (CowTensor *tensor, CowIpcHandle *handle, int *fd_out, CowError *error)
{
  CowStorage *storage = tensor->storage;
  bool shared = cow_storage_context_locked (storage) != NULL;
  if (!shared && storage->owner.deleter == cow_ipc_received_free)
    return cow_set_error (error, COW_ERROR_NOT_SUPPORTED,
                          "ipc_send: tensor %" PRIu64 " was received from another process;"
                          " only the producer of a block can share it (copy it into a"
                          " tensor from cow_ipc_shareable_cpu_allocator() first)",
                          tensor->id);
  /* A lazy copy gets its own bytes first, as PyTorch materializes COW
   * storages before sharing them. */
  if (shared
      && cow_storage_materialize_locked (storage, COW_OP_IPC, tensor->id, error) != COW_OK)
    return error != NULL ? error->code : COW_ERROR_NO_MEMORY;
  CowIpcShmBlock *block = cow_ipc_shm_block_of (&storage->owner);
  const CowIpcTransport *transport = NULL;
  if (block != NULL)
    transport = &cow_ipc_cpu_transport;
  else if (storage->allocator != NULL && storage->allocator->device_type == COW_DEVICE_CUDA)
    {
      const CowDataPtr *owner = &storage->owner;
      while (owner->deleter == cow_ipc_sent_free)
        owner = cow_ipc_sent_inner (owner->context);
      if (cow_cuda_block_is_pooled (owner))
        return cow_set_error (error, COW_ERROR_NOT_SUPPORTED,
                              "ipc_send: tensor %" PRIu64 " lives in cuda:%d memory from the"
                              " stream-ordered pool (cudaMallocAsync), which"
                              " cudaIpcGetMemHandle cannot share; allocate it with"
                              " cow_ipc_shareable_cuda_allocator (%d) or copy it into such"
                              " a tensor",
                              tensor->id, storage->allocator->device_index,
                              storage->allocator->device_index);
      transport = &cow_ipc_cuda_transport;
    }
  else
    return cow_set_error (error, COW_ERROR_NOT_SUPPORTED,
                          "ipc_send: tensor %" PRIu64 " lives in memory another process"
                          " cannot map (allocator '%s'); allocate it with"
                          " cow_ipc_shareable_cpu_allocator() or copy it into such a tensor",
                          tensor->id,
                          storage->allocator != NULL ? storage->allocator->name : "foreign");

  CowError local;
  if (error == NULL)
    error = &local;
  *handle = (CowIpcHandle) {
    .magic = COW_IPC_HANDLE_MAGIC,
    .version = COW_IPC_HANDLE_VERSION,
    .transport = (uint16_t) transport->kind,
    .producer_pid = (uint32_t) getpid (),
    .device_index = storage->allocator != NULL ? storage->allocator->device_index : 0,
    .producer_nonce = cow_ipc_process_nonce (),
    .block_id = block != NULL ? block->block_id : storage->allocation_id,
    .allocation_id = storage->allocation_id,
    .nbytes = storage->nbytes,
    .offset = 0,
    .dtype = (int32_t) tensor->dtype,
    .ndim = tensor->ndim,
    .storage_offset = tensor->storage_offset,
  };
  for (int d = 0; d < tensor->ndim; d++)
    {
      handle->sizes[d] = tensor->sizes[d];
      handle->strides[d] = tensor->strides[d];
    }
  int fd = -1;
  CowStatus status = transport->export_block (transport, &storage->owner, storage->data,
                                              storage->nbytes, handle, &fd, error);
  if (status == COW_OK)
    {
      /* Device bytes: the consumer's wait must follow every write the
       * engine enqueued on the storage's stream, so record there. */
      CowCudaStream *previous = NULL;
      if (storage->stream != NULL)
        previous = cow_cuda_exchange_current_stream (storage->stream);
      status = transport->record_event (transport, handle, error);
      if (storage->stream != NULL)
        cow_cuda_exchange_current_stream (previous);
    }
  if (status != COW_OK)
    return status;

  SentData *sent = malloc (sizeof *sent);
  if (sent == NULL)
    return cow_set_error (error, COW_ERROR_NO_MEMORY, "ipc_send: cannot allocate a sent-data record");
  pthread_once (&atfork_once, install_atfork);
  pthread_mutex_lock (&producer_lock);
  status = take_slot_locked (&sent->file, &sent->slot, error);
  pthread_mutex_unlock (&producer_lock);
  if (status != COW_OK)
    {
      free (sent);
      return status;
    }
  sent->inner = storage->owner;
  sent->data = storage->data;
  sent->nbytes = storage->nbytes;
  sent->allocation_id = storage->allocation_id;
  sent->next = NULL;
  /* The storage now frees through the record.  The storage's lock keeps
   * a concurrent lazy clone from moving the old owner into a context. */
  storage->owner = (CowDataPtr) { .data = storage->data, .context = sent,
                                  .deleter = cow_ipc_sent_free };
  handle->counter_file_id = sent->file->id;
  handle->counter_offset = sent->slot;
  handle->generation = cow_next_id ();
  snprintf (handle->counter_file, sizeof handle->counter_file, "%s", sent->file->name);
  *fd_out = fd;
  COW_TRACE (COW_EVENT_IPC_SEND, COW_OP_IPC, 0, sent->allocation_id, sent->file->id,
             sent->slot, 1, 0);
  return COW_OK;
}

/* A send rewrites the storage's owner (and materializes a lazy copy
 * first, as PyTorch's share paths take mutable_data()), so it holds the
 * storage's lock: a lazy clone or a write of the same storage on another
 * thread happens wholly before it (the send then materializes the new
 * lazy copy, or sends the written bytes) or wholly after it (the clone
 * then copies eagerly, since sent bytes cannot be shared lazily). */
CowStatus
cow_ipc_send (CowTensor *tensor, CowIpcHandle *handle, int *fd_out, CowError *error)
{
  if (tensor == NULL || handle == NULL || fd_out == NULL)
    return cow_set_error (error, COW_ERROR_INVALID_ARGUMENT,
                          "ipc_send: tensor, handle and fd_out must not be NULL");
  *fd_out = -1;
  CowStorage *storage = tensor->storage;
  cow_storage_lock (storage);
  CowStatus status = send_locked (tensor, handle, fd_out, error);
  cow_storage_unlock (storage);
  return status;
}

/* Parses "cowtensor-ipc-<pid>-<n>"; 0 if the name is not ours. */
static pid_t
stale_file_pid (const char *name)
{
  static const char prefix[] = "cowtensor-ipc-";
  if (strncmp (name, prefix, sizeof prefix - 1) != 0)
    return 0;
  char *end;
  long pid = strtol (name + sizeof prefix - 1, &end, 10);
  return (pid > 0 && *end == '-') ? (pid_t) pid : 0;
}

size_t
cow_ipc_remove_stale_files (void)
{
  DIR *dir = opendir ("/dev/shm");
  if (dir == NULL)
    return 0;
  size_t removed = 0;
  struct dirent *entry;
  while ((entry = readdir (dir)) != NULL)
    {
      pid_t pid = stale_file_pid (entry->d_name);
      if (pid == 0 || pid == getpid ())
        continue;
      if (kill (pid, 0) == 0 || errno != ESRCH)
        continue; /* still running, or not ours to judge */
      char name[COW_IPC_NAME_MAX];
      size_t len = strlen (entry->d_name);
      if (len + 2 > sizeof name)
        continue;
      name[0] = '/';
      memcpy (name + 1, entry->d_name, len + 1);
      /* Only our own files: another user's are theirs to judge. */
      struct stat st;
      if (fstatat (dirfd (dir), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0
          || !S_ISREG (st.st_mode) || st.st_uid != geteuid ())
        continue;
      removed += shm_unlink (name) == 0;
    }
  closedir (dir);
  return removed;
}

/* Reads under the lock, so the file cannot be unmapped meanwhile. */
int64_t
cow_ipc_handle_count (const CowIpcHandle *handle)
{
  int64_t count = -1;
  if (handle == NULL)
    return -1;
  pthread_mutex_lock (&producer_lock);
  for (CowIpcCounterFile *file = producer.files; file != NULL; file = file->next)
    if (file->id == handle->counter_file_id && handle->counter_offset < file->nslots)
      count = slot_count (file, handle->counter_offset);
  pthread_mutex_unlock (&producer_lock);
  return count;
}
