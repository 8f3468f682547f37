/* cow-host-copy.c — copying host memory for the host allocators: memcpy,
 * spread over the free cores for large copies.
 *
 * A materialization by copy of 64 MiB or more runs on the calling thread
 * and on helper threads created for it (as PyTorch's copy_ goes parallel
 * above its grain size), one per free core: the cores this process may
 * run on, less the threads that are running right now (the kernel's
 * count in /proc/loadavg) and less the helpers of other copies in
 * flight.  On a busy machine that is none, and the copy is a plain
 * memcpy, which there is as fast as it gets.  The environment variable
 * COW_COPY_THREADS=N (read once) fixes the number of threads of a large
 * copy instead, the calling one included (1: no helpers).  The copy is cut
 * into chunks that the threads take in turn from a shared counter, so a
 * helper that the scheduler does not run soon takes little or nothing
 * and the calling thread does the rest: the copy is never much slower
 * than a single memcpy.  If a thread cannot be created, the others do
 * its share.
 *
 * Page faults: the destination is fresh memory (from the allocator), so
 * the copy's first write to each page faults it in, and the kernel zeroes
 * it.  That cost is handled, not hidden:
 *   - the CPU allocator aligns blocks of 2 MiB and more to 2 MiB and
 *     advises them for transparent huge pages, so one fault maps 2 MiB
 *     instead of 4 KiB;
 *   - a chunk is one huge page of the destination, so each page is
 *     faulted by exactly one thread, in parallel with the others (faults
 *     in one mapping do not serialise: per-VMA locks since Linux 6.4, the
 *     mmap lock taken shared before);
 *   - each chunk is one memcpy of 2 MiB, which writes the page right
 *     after the fault zeroed it, while it is still in the cache, with
 *     cache-allocating stores.  One memcpy of the whole buffer would go
 *     through memcpy's non-temporal path instead (glibc takes it above ¾
 *     of the shared cache, 240 MiB on the project's machine), which for a
 *     just-zeroed page writes every line to memory twice: at 1 GiB that
 *     measured 4.3 GB/s against 7.8 GB/s for the same copy in 2 MiB
 *     pieces there;
 *   - no separate pre-fault pass (MADV_POPULATE_WRITE): it is one more
 *     pass over memory, and was slower there.
 */
#include "cow-cpu-allocator-private.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Smaller copies stay on the calling thread: creating threads costs tens
 * of microseconds, a 64 MiB copy several milliseconds. */
#define PARALLEL_MIN_BYTES ((size_t) 64 << 20)
/* A chunk: one huge page, a fraction of a millisecond of copying, so a
 * helper preempted in the middle of one holds little back. */
#define HUGE_PAGE_BYTES ((size_t) 2 << 20)
#define CHUNK_BYTES HUGE_PAGE_BYTES
/* Beyond this many threads one copy does not get faster. */
#define MAX_THREADS 16

/* Helper threads of all copies in flight, against the cores. */
static _Atomic int helpers_running;

typedef struct {
  char *dst;
  const char *src;
  size_t nbytes;
  /* Chunk k covers destination addresses [base + k·CHUNK, base + (k+1)·CHUNK)
   * within [dst, dst + nbytes): chunks start on huge-page boundaries. */
  uintptr_t base;
  size_t n_chunks;
  _Atomic size_t next_chunk; /* relaxed: it only hands out distinct indexes */
} CopyJob;

static void
copy_chunks (CopyJob *job)
{
  const uintptr_t begin = (uintptr_t) job->dst, end = begin + job->nbytes;
  for (;;)
    {
      size_t k = atomic_fetch_add_explicit (&job->next_chunk, 1, memory_order_relaxed);
      if (k >= job->n_chunks)
        return;
      uintptr_t lo = job->base + k * CHUNK_BYTES, hi = lo + CHUNK_BYTES;
      if (lo < begin)
        lo = begin;
      if (hi > end)
        hi = end;
      memcpy ((char *) lo, job->src + (lo - begin), hi - lo);
    }
}

static void *
helper_main (void *data)
{
  copy_chunks (data);
  return NULL;
}

/* The cores this process may run on. */
static int
usable_cores (void)
{
  cpu_set_t set;
  if (sched_getaffinity (0, sizeof set, &set) == 0 && CPU_COUNT (&set) > 0)
    return CPU_COUNT (&set);
  long n = sysconf (_SC_NPROCESSORS_ONLN);
  return n > 0 ? (int) n : 1;
}

/* Threads running or ready to run on the whole machine now, this one
 * included (the fourth field of /proc/loadavg, "running/total"), or -1. */
static int
threads_running_now (void)
{
  int fd = open ("/proc/loadavg", O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  char text[128];
  ssize_t n = read (fd, text, sizeof text - 1);
  close (fd);
  if (n <= 0)
    return -1;
  text[n] = '\0';
  double load1, load5, load15;
  int running, total;
  if (sscanf (text, "%lf %lf %lf %d/%d", &load1, &load5, &load15, &running, &total) != 5)
    return -1;
  return running;
}

/* COW_COPY_THREADS: 0 when unset or invalid (decide from the load). */
static int fixed_threads;
static pthread_once_t fixed_threads_once = PTHREAD_ONCE_INIT;

static void
read_fixed_threads (void)
{
  const char *text = getenv ("COW_COPY_THREADS");
  if (text == NULL || text[0] == '\0')
    return;
  char *end;
  long n = strtol (text, &end, 10);
  if (*end != '\0' || n < 1 || n > MAX_THREADS)
    {
      fprintf (stderr, "cowtensor: COW_COPY_THREADS=%s is not a number from 1 to %d;"
               " choosing by the free cores\n", text, MAX_THREADS);
      return;
    }
  fixed_threads = (int) n;
}

/* Reserves up to @wanted helpers among the free cores; returns how many
 * (maybe 0). */
static int
reserve_helpers (int wanted)
{
  pthread_once (&fixed_threads_once, read_fixed_threads);
  if (fixed_threads > 0)
    {
      int n = fixed_threads - 1 < wanted ? fixed_threads - 1 : wanted;
      atomic_fetch_add_explicit (&helpers_running, n, memory_order_relaxed);
      return n;
    }
  int cores = usable_cores ();
  int free_cores = cores - 1; /* the calling thread has one */
  int running_now = threads_running_now ();
  if (running_now > 0 && cores - running_now < free_cores)
    free_cores = cores - running_now;
  int running = atomic_load_explicit (&helpers_running, memory_order_relaxed);
  for (;;)
    {
      int n = free_cores - running;
      if (n > wanted)
        n = wanted;
      if (n <= 0)
        return 0;
      /* Relaxed: a count, not a publication. */
      if (atomic_compare_exchange_weak_explicit (&helpers_running, &running, running + n,
                                                 memory_order_relaxed, memory_order_relaxed))
        return n;
    }
}

static void
parallel_copy (void *dst, const void *src, size_t nbytes)
{
  CopyJob job = {
    .dst = dst,
    .src = src,
    .nbytes = nbytes,
    .base = (uintptr_t) dst & ~(HUGE_PAGE_BYTES - 1),
  };
  job.n_chunks = ((uintptr_t) dst + nbytes - job.base + CHUNK_BYTES - 1) / CHUNK_BYTES;
  atomic_init (&job.next_chunk, 0);

  int wanted = (int) (job.n_chunks - 1 < MAX_THREADS - 1 ? job.n_chunks - 1 : MAX_THREADS - 1);
  int reserved = reserve_helpers (wanted);
  pthread_t helpers[MAX_THREADS];
  int started = 0;
  pthread_attr_t attr;
  bool have_attr = reserved > 0 && pthread_attr_init (&attr) == 0;
  /* memcpy needs little stack; small stacks are cheap to map. */
  if (have_attr)
    pthread_attr_setstacksize (&attr, 64 << 10);
  for (int i = 0; i < reserved; i++)
    {
      if (pthread_create (&helpers[started], have_attr ? &attr : NULL, helper_main, &job) != 0)
        break; /* the others do its share */
      started++;
    }
  if (have_attr)
    pthread_attr_destroy (&attr);

  copy_chunks (&job);
  /* The join orders the helpers' writes before our caller's use. */
  for (int i = 0; i < started; i++)
    pthread_join (helpers[i], NULL);
  atomic_fetch_sub_explicit (&helpers_running, reserved, memory_order_relaxed);
}

CowStatus
cow_host_copy_data (CowAllocator *self, void *dst, const void *src, size_t nbytes,
                    CowError *error)
{
  (void) self;
  (void) error;
  if (nbytes >= PARALLEL_MIN_BYTES)
    parallel_copy (dst, src, nbytes); /* in chunks even without helpers */
  else if (nbytes > 0)
    memcpy (dst, src, nbytes);
  return COW_OK;
}
