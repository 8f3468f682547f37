/* cow-ipc-counters.c — shared-memory counter files and the dead-consumer
 * rule.
 *
 * A counter file holds nslots int64 counters (one per send, handed out by
 * increasing offset, never reused) and, per slot, the consumer that
 * received it: pid, start time (field 22 of /proc/<pid>/stat) and pid
 * namespace.  A slot's consumer is dead when it recorded itself, lives in
 * our pid namespace, and its pid no longer names it: kill(pid, 0) fails
 * with ESRCH, /proc/<pid>/stat shows a zombie, or the start time differs
 * (the pid was reused).
 */
#include "cow-ipc-private.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Files created by this process, numbered from 0.  Relaxed: only
 * uniqueness matters; O_EXCL catches any clash. */
static _Atomic uint64_t file_serial;

size_t
cow_ipc_counter_file_size (uint64_t nslots)
{
  return sizeof (CowIpcCounterHeader) + nslots * sizeof (int64_t)
         + nslots * sizeof (CowIpcConsumerRecord);
}

/* Points the record's arrays into its mapping. */
static void
counter_file_bind (CowIpcCounterFile *file, void *map, uint64_t nslots)
{
  file->header = map;
  file->nslots = nslots;
  file->counts = (_Atomic int64_t *) (void *) ((char *) map + sizeof (CowIpcCounterHeader));
  file->consumers = (CowIpcConsumerRecord *) (void *) ((char *) map
                      + sizeof (CowIpcCounterHeader) + nslots * sizeof (int64_t));
}

/* A new, zeroed file of @nslots slots owned by this process, or NULL. */
CowIpcCounterFile *
cow_ipc_counter_file_create (uint64_t nslots, CowError *error)
{
  CowIpcCounterFile *file = calloc (1, sizeof *file);
  if (file == NULL)
    {
      cow_set_error (error, COW_ERROR_NO_MEMORY, "cannot allocate a counter file record");
      return NULL;
    }
  int fd = -1;
  for (int attempt = 0; attempt < 16 && fd < 0; attempt++)
    {
      uint64_t n = atomic_fetch_add_explicit (&file_serial, 1, memory_order_relaxed);
      snprintf (file->name, sizeof file->name, "/cowtensor-ipc-%ld-%" PRIu64,
                (long) getpid (), n);
      fd = shm_open (file->name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
      if (fd < 0 && errno != EEXIST)
        break;
    }
  if (fd < 0)
    {
      cow_set_error (error, COW_ERROR_NO_MEMORY, "cannot create counter file %s: %s",
                     file->name, strerror (errno));
      free (file);
      return NULL;
    }
  size_t len = cow_ipc_counter_file_size (nslots);
  void *map = MAP_FAILED;
  if (ftruncate (fd, (off_t) len) == 0)
    map = mmap (NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  int saved = errno;
  close (fd);
  if (map == MAP_FAILED)
    {
      shm_unlink (file->name);
      cow_set_error (error, COW_ERROR_NO_MEMORY, "cannot size or map counter file %s: %s",
                     file->name, strerror (saved));
      free (file);
      return NULL;
    }
  counter_file_bind (file, map, nslots);
  file->header->magic = COW_IPC_COUNTER_MAGIC;
  file->header->nslots = nslots;
  file->map_len = len;
  file->creator = getpid ();
  file->id = cow_next_id ();
  return file;
}

/* Maps @name if it exists and looks like a counter file, or NULL. */
CowIpcCounterFile *
cow_ipc_counter_file_open (const char *name, uint64_t id, CowError *error)
{
  int fd = shm_open (name, O_RDWR | O_CLOEXEC, 0);
  if (fd < 0)
    {
      cow_set_error (error, COW_ERROR_INVALID_ARGUMENT, "cannot open counter file %s: %s",
                     name, strerror (errno));
      return NULL;
    }
  struct stat st;
  void *map = MAP_FAILED;
  if (fstat (fd, &st) == 0 && (size_t) st.st_size >= sizeof (CowIpcCounterHeader))
    map = mmap (NULL, (size_t) st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close (fd);
  if (map == MAP_FAILED)
    {
      cow_set_error (error, COW_ERROR_INVALID_ARGUMENT, "cannot map counter file %s", name);
      return NULL;
    }
  CowIpcCounterHeader *header = map;
  if (header->magic != COW_IPC_COUNTER_MAGIC || header->nslots == 0
      || header->nslots > COW_IPC_COUNTER_FILE_SLOTS
      || cow_ipc_counter_file_size (header->nslots) > (size_t) st.st_size)
    {
      munmap (map, (size_t) st.st_size);
      cow_set_error (error, COW_ERROR_INVALID_ARGUMENT, "%s is not a counter file", name);
      return NULL;
    }
  CowIpcCounterFile *file = calloc (1, sizeof *file);
  if (file == NULL)
    {
      munmap (map, (size_t) st.st_size);
      cow_set_error (error, COW_ERROR_NO_MEMORY, "cannot allocate a counter file record");
      return NULL;
    }
  snprintf (file->name, sizeof file->name, "%s", name);
  counter_file_bind (file, map, header->nslots);
  file->map_len = (size_t) st.st_size;
  file->id = id;
  file->creator = 0;
  return file;
}

/* The mapping goes; the name stays unless unlinked before. */
void
cow_ipc_counter_file_close (CowIpcCounterFile *file)
{
  if (file == NULL)
    return;
  munmap (file->header, file->map_len);
  free (file);
}

/* Idempotent; a forked child never unlinks its parent's files. */
void
cow_ipc_counter_file_unlink (CowIpcCounterFile *file)
{
  if (file->unlinked || file->creator != getpid ())
    return;
  shm_unlink (file->name);
  file->unlinked = true;
}

/* Field 22 (start time) and the state of /proc/<pid>/stat; false if
 * unreadable. */
static bool
proc_stat (pid_t pid, char *state, uint64_t *starttime)
{
  char path[64], buf[1024];
  snprintf (path, sizeof path, "/proc/%ld/stat", (long) pid);
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  ssize_t n = read (fd, buf, sizeof buf - 1);
  close (fd);
  if (n <= 0)
    return false;
  buf[n] = '\0';
  /* The command name may hold spaces and ')': fields resume after the last ')'. */
  char *p = strrchr (buf, ')');
  if (p == NULL || p[1] != ' ')
    return false;
  p += 2;
  *state = *p;
  /* p is at field 3; skip to field 22. */
  for (int field = 3; field < 22; field++)
    {
      p = strchr (p, ' ');
      if (p == NULL)
        return false;
      p++;
    }
  *starttime = strtoull (p, NULL, 10);
  return true;
}

/* Inode of our pid namespace (0 if unknown). */
static uint64_t
pid_namespace (void)
{
  struct stat st;
  return stat ("/proc/self/ns/pid", &st) == 0 ? (uint64_t) st.st_ino : 0;
}

/* Cached per process: the start time never changes; a fork re-reads. */
static pid_t self_pid;
static uint64_t self_starttime, self_pid_ns;
/* Protects self_* above. */
static pthread_mutex_t self_lock = PTHREAD_MUTEX_INITIALIZER;

static void
self_identity (uint64_t *starttime, uint64_t *pid_ns)
{
  pthread_mutex_lock (&self_lock);
  if (self_pid != getpid ())
    {
      char state;
      self_pid = getpid ();
      if (!proc_stat (self_pid, &state, &self_starttime))
        self_starttime = 0;
      self_pid_ns = pid_namespace ();
    }
  *starttime = self_starttime;
  *pid_ns = self_pid_ns;
  pthread_mutex_unlock (&self_lock);
}

/* The pid goes last with release, so a producer that sees it (acquire)
 * also sees the start time and namespace. */
void
cow_ipc_consumer_record (CowIpcCounterFile *file, uint64_t slot)
{
  uint64_t starttime, pid_ns;
  self_identity (&starttime, &pid_ns);
  CowIpcConsumerRecord *rec = &file->consumers[slot];
  atomic_store_explicit (&rec->starttime, starttime, memory_order_relaxed);
  atomic_store_explicit (&rec->pid_ns, pid_ns, memory_order_relaxed);
  atomic_store_explicit (&rec->pid, (int32_t) getpid (), memory_order_release);
}

/* Conservative: true only when the recorded consumer is provably gone. */
bool
cow_ipc_consumer_dead (const CowIpcCounterFile *file, uint64_t slot)
{
  CowIpcConsumerRecord *rec = &file->consumers[slot];
  int32_t pid = atomic_load_explicit (&rec->pid, memory_order_acquire);
  if (pid <= 0)
    return false; /* not received yet: the handle may still be in flight */
  uint64_t starttime, pid_ns;
  self_identity (&starttime, &pid_ns);
  uint64_t their_ns = atomic_load_explicit (&rec->pid_ns, memory_order_relaxed);
  if (their_ns == 0 || pid_ns == 0 || their_ns != pid_ns)
    return false; /* another pid namespace: its pid means nothing here */
  if (kill ((pid_t) pid, 0) != 0 && errno == ESRCH)
    return true;
  char state;
  uint64_t now_start;
  if (!proc_stat ((pid_t) pid, &state, &now_start))
    return false;
  if (state == 'Z' || state == 'X')
    return true; /* exited; its mappings are gone */
  uint64_t recorded = atomic_load_explicit (&rec->starttime, memory_order_relaxed);
  return recorded != 0 && now_start != recorded; /* pid reused */
}
