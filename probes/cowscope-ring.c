/* cowscope-ring.c — the single-producer single-consumer event ring.
 *
 * Why a mirror mapping rather than padding records at the wrap: with the
 * data area mapped twice back to back, every record (up to the whole
 * capacity) is contiguous in virtual memory wherever it starts.  The
 * writer reserves and copies with one memcpy, the reader hands out a
 * pointer to the payload (zero copy for the recorder), CUPTI buffers and
 * stacks of any size up to the capacity fit, and no byte is wasted on
 * padding records.  The cost is one extra mmap at creation and twice the
 * data area's size in address space (not in memory).
 *
 * Ordering protocol (each side writes only its own cache lines):
 *   producer: write record bytes; head = new (release);
 *             produced += 1 (relaxed)
 *   consumer: head (acquire); read record bytes; tail = new (release)
 *   producer before reusing bytes: tail (acquire)
 * so a record is visible only after all its bytes are, and the producer
 * never overwrites bytes the consumer may still be reading.
 *
 * Why BLOCK mode has no time limit: a writer that gives up after a
 * fixed wait loses events whenever the consumer is merely slow (a busy
 * machine, a stopped recorder), which is exactly when a user asked for
 * nothing to be lost.  It waits instead until the consumer says it is
 * gone (DETACHED) or the producer's liveness check says so, sleeping
 * with backoff so that a long wait costs about one wake-up a
 * millisecond.
 */
#include "cowscope-ring.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define RING_LIKELY(x) __builtin_expect (!!(x), 1)
#define RING_UNLIKELY(x) __builtin_expect (!!(x), 0)
#define RING_COLD __attribute__ ((cold, noinline))
#define RING_MIN(a, b) ((a) < (b) ? (a) : (b))
#define RING_PRINTF(f, a) __attribute__ ((format (printf, f, a)))

/* Positions and counters live in memory shared between processes: their
 * atomics must be lock-free (address-free), not emulated with a lock in
 * one process's memory. */
_Static_assert (ATOMIC_LLONG_LOCK_FREE == 2, "64-bit atomics must be lock-free");
_Static_assert (ATOMIC_INT_LOCK_FREE == 2, "32-bit atomics must be lock-free");
_Static_assert (sizeof (CowscopeRingRecordHeader) == COWSCOPE_RING_ALIGN,
                "record headers keep payloads 8-byte aligned");
_Static_assert (sizeof (CowscopeRingHeader) <= 4096,
                "the header fits in the smallest page");
_Static_assert (offsetof (CowscopeRingHeader, head) == 64
                  && offsetof (CowscopeRingHeader, tail) == 128
                  && offsetof (CowscopeRingHeader, produced) == 192
                  && offsetof (CowscopeRingHeader, producer_pid) == 256
                  && offsetof (CowscopeRingHeader, orphan_produced) == 320,
                "one cache line per writer");

struct _CowscopeRing {
  CowscopeRingHeader *header;
  uint8_t *data;      /* 2 * capacity bytes of address space (mirror) */
  void *map;          /* header_size + 2 * capacity bytes */
  size_t map_size;
  uint64_t capacity;
  uint64_t mask;      /* capacity - 1 */
  int fd;
  CowscopeRingPolicy policy;

  /* Producer-local state (touched only by the producing thread). */
  alignas (COWSCOPE_RING_CACHE_LINE) uint64_t prod_head; /* == header->head */
  uint64_t prod_tail;     /* last tail seen; the real one is never smaller */
  uint64_t prod_reserved; /* bytes of the reserved, uncommitted record */
  bool prod_reserved_event; /* the reserved record is an EVENT */
  uint64_t prod_produced; /* == header->produced */
  uint64_t prod_dropped;  /* == header->dropped */
  uint64_t prod_other_produced; /* == header->other_produced */
  uint64_t prod_other_dropped;  /* == header->other_dropped */
  CowscopeRingLivenessFunc liveness;
  void *liveness_data;
  CowscopeRingGoneReason gone; /* == header->gone_reason */

  /* Consumer-local state (touched only by the consuming thread). */
  alignas (COWSCOPE_RING_CACHE_LINE) uint64_t cons_tail; /* == header->tail */
  uint64_t cons_head;     /* last head seen (acquired) */
  uint64_t cons_consumed; /* == header->consumed */
  uint64_t cons_other;    /* == header->other_consumed */
  bool corrupt;
  char corrupt_message[COW_ERROR_MESSAGE_MAX];
};

/* Fills @error (if not NULL) with @code and a formatted message; returns
 * NULL so failing constructors can `return ring_error (...)`. */
static void *RING_PRINTF (3, 4)
ring_error (CowError *error, CowStatus code, const char *format, ...)
{
  if (error != NULL)
    {
      va_list args;
      error->code = code;
      va_start (args, format);
      vsnprintf (error->message, sizeof error->message, format, args);
      va_end (args);
    }
  return NULL;
}

/* The system page size (the header's size and the data area's unit). */
static size_t
ring_page_size (void)
{
  long page = sysconf (_SC_PAGESIZE);
  return page > 0 ? (size_t) page : 4096;
}

/* Bytes a record with @size payload bytes occupies in the data area. */
static inline uint64_t
ring_record_bytes (uint64_t size)
{
  return sizeof (CowscopeRingRecordHeader)
         + ((size + COWSCOPE_RING_ALIGN - 1) & ~(uint64_t) (COWSCOPE_RING_ALIGN - 1));
}

/* Calling thread's kernel id. */
static uint32_t
ring_gettid (void)
{
  return (uint32_t) gettid ();
}

/* Maps [header | data | data] from @fd at one address: reserves the whole
 * range first so both data views are guaranteed adjacent, then maps the
 * file over it twice.  Returns the base or NULL with @error filled. */
static void *
ring_map_mirrored (int fd, size_t header_size, uint64_t capacity,
                   CowError *error)
{
  size_t total = header_size + 2 * (size_t) capacity;
  uint8_t *base = mmap (NULL, total, PROT_NONE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED)
    return ring_error (error, COW_ERROR_NO_MEMORY,
                       "cannot reserve %zu bytes of address space for the ring: %s",
                       total, strerror (errno));

  void *first = mmap (base, header_size + capacity, PROT_READ | PROT_WRITE,
                      MAP_SHARED | MAP_FIXED, fd, 0);
  if (first == MAP_FAILED)
    {
      int saved = errno;
      munmap (base, total);
      return ring_error (error, COW_ERROR_NO_MEMORY,
                         "cannot map the ring: %s", strerror (saved));
    }

  void *mirror = mmap (base + header_size + capacity, capacity,
                       PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd,
                       (off_t) header_size);
  if (mirror == MAP_FAILED)
    {
      int saved = errno;
      munmap (base, total);
      return ring_error (error, COW_ERROR_NO_MEMORY,
                         "cannot map the ring's mirror: %s", strerror (saved));
    }
  return base;
}

/* Allocates a handle over a mapped ring and loads both sides' local
 * state from the header.  Takes ownership of @fd and @map on success;
 * on failure returns NULL and owns neither. */
static CowscopeRing *
ring_handle_new (int fd, void *map, size_t header_size, uint64_t capacity,
                 CowscopeRingPolicy policy, CowError *error)
{
  CowscopeRing *ring = aligned_alloc (COWSCOPE_RING_CACHE_LINE,
                                      sizeof (CowscopeRing));
  if (ring == NULL)
    return ring_error (error, COW_ERROR_NO_MEMORY,
                       "cannot allocate the ring handle");
  memset (ring, 0, sizeof *ring);
  ring->header = map;
  ring->map = map;
  ring->map_size = header_size + 2 * (size_t) capacity;
  ring->data = (uint8_t *) map + header_size;
  ring->capacity = capacity;
  ring->mask = capacity - 1;
  ring->fd = fd;
  ring->policy = policy;

  CowscopeRingHeader *h = ring->header;
  /* Relaxed loads: the handle is being set up before either side runs on
   * it; whoever hands it to another thread provides the ordering. */
  ring->prod_head = atomic_load_explicit (&h->head, memory_order_relaxed);
  ring->prod_tail = atomic_load_explicit (&h->tail, memory_order_relaxed);
  ring->prod_produced = atomic_load_explicit (&h->produced, memory_order_relaxed);
  ring->prod_dropped = atomic_load_explicit (&h->dropped, memory_order_relaxed);
  ring->prod_other_produced = atomic_load_explicit (&h->other_produced,
                                                    memory_order_relaxed);
  ring->prod_other_dropped = atomic_load_explicit (&h->other_dropped,
                                                   memory_order_relaxed);
  ring->gone = (CowscopeRingGoneReason) atomic_load_explicit (&h->gone_reason,
                                                              memory_order_relaxed);
  ring->cons_tail = ring->prod_tail;
  ring->cons_head = ring->cons_tail;
  ring->cons_consumed = atomic_load_explicit (&h->consumed, memory_order_relaxed);
  ring->cons_other = atomic_load_explicit (&h->other_consumed, memory_order_relaxed);
  return ring;
}

/* A sealed memfd ring mapped with its mirror, header filled, the caller
 * recorded as producer; NULL with @error on any failure, nothing leaked. */
CowscopeRing *
cowscope_ring_new (uint64_t capacity, CowscopeRingPolicy policy,
                   CowError *error)
{
  size_t page = ring_page_size ();

  if (capacity == 0)
    capacity = COWSCOPE_RING_DEFAULT_CAPACITY;
  if ((capacity & (capacity - 1)) != 0 || capacity < page
      || capacity > COWSCOPE_RING_MAX_CAPACITY)
    return ring_error (error, COW_ERROR_INVALID_ARGUMENT,
                       "ring capacity %llu must be a power of two from %zu to %llu bytes",
                       (unsigned long long) capacity, page,
                       (unsigned long long) COWSCOPE_RING_MAX_CAPACITY);
  if (policy != COWSCOPE_RING_DROP && policy != COWSCOPE_RING_BLOCK)
    return ring_error (error, COW_ERROR_INVALID_ARGUMENT,
                       "unknown ring policy %d", (int) policy);

  int fd = memfd_create ("cowscope-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0)
    return ring_error (error, COW_ERROR_NOT_SUPPORTED,
                       "cannot create the ring's memfd: %s", strerror (errno));

  if (ftruncate (fd, (off_t) (page + capacity)) != 0)
    {
      int saved = errno;
      close (fd);
      return ring_error (error, COW_ERROR_NO_MEMORY,
                         "cannot size the ring's memfd to %llu bytes: %s",
                         (unsigned long long) (page + capacity),
                         strerror (saved));
    }

  /* The size is final: sealing it lets the recorder map the fd without
   * fearing SIGBUS from a later truncation. */
  if (fcntl (fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0)
    {
      int saved = errno;
      close (fd);
      return ring_error (error, COW_ERROR_NOT_SUPPORTED,
                         "cannot seal the ring's memfd: %s", strerror (saved));
    }

  void *map = ring_map_mirrored (fd, page, capacity, error);
  if (map == NULL)
    {
      close (fd);
      return NULL;
    }

  /* Fresh memfd pages are zero: head, tail and counters start at 0. */
  CowscopeRingHeader *h = map;
  h->magic = COWSCOPE_RING_MAGIC;
  h->version = COWSCOPE_RING_VERSION;
  h->capacity = capacity;
  h->header_size = (uint32_t) page;
  h->policy = (uint32_t) policy;
  /* Relaxed: nobody else can see the ring before its fd is sent, which
   * is itself a synchronizing system call. */
  atomic_store_explicit (&h->producer_pid, (uint32_t) getpid (),
                         memory_order_relaxed);
  atomic_store_explicit (&h->producer_tid, ring_gettid (), memory_order_relaxed);

  CowscopeRing *ring = ring_handle_new (fd, map, page, capacity, policy, error);
  if (ring == NULL)
    {
      munmap (map, page + 2 * (size_t) capacity);
      close (fd);
    }
  return ring;
}

/* A mapping of a validated ring from @fd (not kept); NULL with a message
 * naming the failed check otherwise.  Never touches unchecked bytes
 * through a mapping. */
CowscopeRing *
cowscope_ring_map_fd (int fd, CowError *error)
{
  size_t page = ring_page_size ();
  struct stat st;

  if (fd < 0)
    return ring_error (error, COW_ERROR_INVALID_ARGUMENT,
                       "invalid ring fd %d", fd);
  if (fstat (fd, &st) != 0)
    return ring_error (error, COW_ERROR_INVALID_ARGUMENT,
                       "cannot inspect ring fd %d: %s", fd, strerror (errno));
  if (!S_ISREG (st.st_mode))
    return ring_error (error, COW_ERROR_INVALID_ARGUMENT,
                       "ring fd %d is not a memfd or regular file", fd);

  /* Seals first, so the size checked below cannot change afterwards. */
  int seals = fcntl (fd, F_GET_SEALS);
  if (seals < 0 || (seals & F_SEAL_SHRINK) == 0)
    return ring_error (error, COW_ERROR_INVALID_ARGUMENT,
                       "ring fd %d is not a memfd sealed against shrinking "
                       "(F_SEAL_SHRINK); a truncation could crash the reader",
                       fd);

  if (fstat (fd, &st) != 0)
    return ring_error (error, COW_ERROR_INVALID_ARGUMENT,
                       "cannot inspect ring fd %d: %s", fd, strerror (errno));
  uint64_t file_size = (uint64_t) st.st_size;
  if (file_size < sizeof (CowscopeRingHeader))
    return ring_error (error, COW_ERROR_INVALID_ARGUMENT,
                       "ring file is truncated: %llu bytes, smaller than the "
                       "ring header", (unsigned long long) file_size);

  /* Read the fixed fields with pread, not through a mapping: nothing in
   * the file is trusted until checked. */
  CowscopeRingHeader h;
  ssize_t n = pread (fd, &h, offsetof (CowscopeRingHeader, head), 0);
  if (n != (ssize_t) offsetof (CowscopeRingHeader, head))
    return ring_error (error, COW_ERROR_INVALID_ARGUMENT,
                       "cannot read the ring header: %s",
                       n < 0 ? strerror (errno) : "short read");

  if (h.magic != COWSCOPE_RING_MAGIC)
    return ring_error (error, COW_ERROR_INVALID_ARGUMENT,
                       "not a Cowscope ring (magic 0x%08x, expected 0x%08x)",
                       h.magic, COWSCOPE_RING_MAGIC);
  if (h.version != COWSCOPE_RING_VERSION)
    return ring_error (error, COW_ERROR_NOT_SUPPORTED,
                       "ring format version %u is not supported (this build "
                       "reads version %u)", h.version, COWSCOPE_RING_VERSION);
  if (h.header_size != page)
    return ring_error (error, COW_ERROR_INVALID_ARGUMENT,
                       "ring header size %u does not match the page size %zu",
                       h.header_size, page);
  if (h.capacity == 0 || (h.capacity & (h.capacity - 1)) != 0
      || h.capacity < page || h.capacity > COWSCOPE_RING_MAX_CAPACITY)
    return ring_error (error, COW_ERROR_INVALID_ARGUMENT,
                       "ring capacity %llu is not a power of two from %zu to %llu",
                       (unsigned long long) h.capacity, page,
                       (unsigned long long) COWSCOPE_RING_MAX_CAPACITY);
  if (file_size != page + h.capacity)
    return ring_error (error, COW_ERROR_INVALID_ARGUMENT,
                       "ring file is %llu bytes but its header describes %llu "
                       "(truncated or damaged)",
                       (unsigned long long) file_size,
                       (unsigned long long) (page + h.capacity));
  if (h.policy != COWSCOPE_RING_DROP && h.policy != COWSCOPE_RING_BLOCK)
    return ring_error (error, COW_ERROR_INVALID_ARGUMENT,
                       "ring header names unknown policy %u", h.policy);

  /* No fd is kept: the mappings hold the memfd's memory, so a consumer
   * of thousands of rings holds no descriptor for any of them. */
  void *map = ring_map_mirrored (fd, page, h.capacity, error);
  if (map == NULL)
    return NULL;

  CowscopeRing *ring = ring_handle_new (-1, map, page, h.capacity,
                                        (CowscopeRingPolicy) h.policy, error);
  if (ring == NULL)
    munmap (map, page + 2 * (size_t) h.capacity);
  return ring;
}

/* Releases this handle's mapping and fd only; the memfd lives on in
 * other handles and processes. */
void
cowscope_ring_free (CowscopeRing *ring)
{
  if (ring == NULL)
    return;
  munmap (ring->map, ring->map_size);
  if (ring->fd >= 0)
    close (ring->fd);
  free (ring);
}

/* The handle's own (close-on-exec) fd, or -1. */
int
cowscope_ring_get_fd (const CowscopeRing *ring)
{
  return ring->fd;
}

/* Drops the handle's fd; the mapping keeps the ring alive. */
void
cowscope_ring_close_fd (CowscopeRing *ring)
{
  if (ring->fd >= 0)
    close (ring->fd);
  ring->fd = -1;
}

/* The validated data-area size, cached at creation or mapping. */
uint64_t
cowscope_ring_get_capacity (const CowscopeRing *ring)
{
  return ring->capacity;
}

/* The validated policy, cached at creation or mapping. */
CowscopeRingPolicy
cowscope_ring_get_policy (const CowscopeRing *ring)
{
  return ring->policy;
}

/* Capacity minus a record header: any payload up to this fits an empty
 * ring. */
size_t
cowscope_ring_get_max_payload (const CowscopeRing *ring)
{
  uint64_t max = ring->capacity - sizeof (CowscopeRingRecordHeader);
  return max > UINT32_MAX ? UINT32_MAX : (size_t) max;
}

/* ---- Producer ------------------------------------------------------- */

/* A hint to the CPU that this thread is spinning. */
static inline void
ring_cpu_relax (void)
{
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause ();
#elif defined(__aarch64__)
  __asm__ __volatile__ ("yield" ::: "memory");
#endif
}

/* CLOCK_MONOTONIC in ns (slow path only). */
static int64_t
ring_now_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Re-reads the consumer's tail and reports whether @need bytes fit after
 * the producer's head. */
static inline bool
ring_refresh_fits (CowscopeRing *ring, uint64_t need)
{
  /* Acquire pairs with the consumer's release of tail: its reads of the
   * bytes we are about to overwrite happened before. */
  uint64_t tail = atomic_load_explicit (&ring->header->tail,
                                        memory_order_acquire);
  uint64_t used = ring->prod_head - tail;
  /* A tail beyond head or too far behind it (a damaged header) is not
   * cached and reads as full, so nothing unread is ever overwritten. */
  if (used > ring->capacity)
    return false;
  ring->prod_tail = tail;
  return need <= ring->capacity - used;
}

/* Whether the consumer is gone, and why (NONE while it may still read). */
static CowscopeRingGoneReason
ring_consumer_gone (CowscopeRing *ring)
{
  /* Relaxed: a state word; the tail re-read after it orders the bytes. */
  if (atomic_load_explicit (&ring->header->consumer_state, memory_order_relaxed)
      == COWSCOPE_RING_CONSUMER_DETACHED)
    return COWSCOPE_RING_GONE_DETACHED;
  if (ring->liveness != NULL && !ring->liveness (ring->liveness_data))
    return COWSCOPE_RING_GONE_HUNG_UP;
  return COWSCOPE_RING_GONE_NONE;
}

/* Notes once, in the header, why this producer stopped waiting. */
static RING_COLD void
ring_give_up (CowscopeRing *ring, CowscopeRingGoneReason reason)
{
  ring->gone = reason;
  /* Relaxed: read by the consumer as a statistic with the counters. */
  atomic_store_explicit (&ring->header->gone_reason, (uint32_t) reason,
                         memory_order_relaxed);
}

/* BLOCK mode, ring full: waits for @need bytes, spinning briefly and then
 * sleeping with exponential backoff (1 us doubling to 1 ms), for as long
 * as the consumer is there.  Returns true when the room appeared, false
 * once the consumer is gone (then every later full-ring write drops at
 * once, so a dead recorder costs no further waiting). */
static RING_COLD bool
ring_wait_for_room (CowscopeRing *ring, uint64_t need)
{
  if (ring->gone != COWSCOPE_RING_GONE_NONE)
    return false;

  for (int i = 0; i < 256; i++)
    {
      ring_cpu_relax ();
      if (ring_refresh_fits (ring, need))
        return true;
    }

  long sleep_ns = 1000;
  for (;;)
    {
      CowscopeRingGoneReason gone = ring_consumer_gone (ring);
      if (gone != COWSCOPE_RING_GONE_NONE)
        {
          /* Room freed just before the consumer left still counts. */
          if (ring_refresh_fits (ring, need))
            return true;
          ring_give_up (ring, gone);
          return false;
        }
      struct timespec ts = { 0, sleep_ns };
      nanosleep (&ts, NULL);
      if (ring_refresh_fits (ring, need))
        return true;
      if (sleep_ns < 1000000)
        sleep_ns *= 2;
    }
}

/* Counts one dropped write (dropped, then produced; the other-record
 * counters in between for a record that is not an EVENT) and returns
 * NULL. */
static RING_COLD void *
ring_drop (CowscopeRing *ring, bool is_event)
{
  /* Relaxed: the producer is the only writer of these counters and no
   * other memory is published through them; readers want totals. */
  atomic_store_explicit (&ring->header->dropped, ++ring->prod_dropped,
                         memory_order_relaxed);
  if (!is_event)
    {
      atomic_store_explicit (&ring->header->other_dropped,
                             ++ring->prod_other_dropped, memory_order_relaxed);
      atomic_store_explicit (&ring->header->other_produced,
                             ++ring->prod_other_produced, memory_order_relaxed);
    }
  atomic_store_explicit (&ring->header->produced, ++ring->prod_produced,
                         memory_order_relaxed);
  return NULL;
}

/* Full ring (after the cached tail said so): refreshes tail, waits in
 * BLOCK mode, and returns true when @need bytes now fit. */
static RING_COLD bool
ring_make_room (CowscopeRing *ring, uint64_t need)
{
  if (ring_refresh_fits (ring, need))
    return true;
  if (ring->policy == COWSCOPE_RING_BLOCK)
    return ring_wait_for_room (ring, need);
  return false;
}

/* The reservation step shared by every writer: room for a record of
 * @kind with @size payload bytes, its header written, or NULL after
 * counting a drop. */
static inline void *
ring_reserve (CowscopeRing *ring, CowscopeRingKind kind, size_t size)
{
  bool is_event = kind == COWSCOPE_RING_KIND_EVENT;
  if (RING_UNLIKELY (size > ring->capacity - sizeof (CowscopeRingRecordHeader)
                     || kind <= COWSCOPE_RING_KIND_INVALID
                     || kind >= COWSCOPE_RING_N_KINDS))
    return ring_drop (ring, is_event);

  uint64_t need = ring_record_bytes (size);
  /* The cached tail is never ahead of the real one, so if the record fits
   * by it, it fits. */
  if (RING_UNLIKELY (ring->prod_head + need - ring->prod_tail > ring->capacity)
      && !ring_make_room (ring, need))
    return ring_drop (ring, is_event);

  CowscopeRingRecordHeader *rec = (CowscopeRingRecordHeader *)
    (ring->data + (ring->prod_head & ring->mask));
  rec->size = (uint32_t) size;
  rec->kind = (uint32_t) kind;
  ring->prod_reserved = need;
  ring->prod_reserved_event = is_event;
  return rec + 1;
}

/* Publishes the reserved record: its bytes, then head, then the counts
 * (@is_event: a constant in the event writer, so it pays nothing). */
static inline void
ring_commit (CowscopeRing *ring, bool is_event)
{
  ring->prod_head += ring->prod_reserved;
  ring->prod_reserved = 0;
  /* Release: the record's header and payload, written above with plain
   * stores, are visible to whoever acquires this head value. */
  atomic_store_explicit (&ring->header->head, ring->prod_head,
                         memory_order_release);
  /* Relaxed: counters only; they publish no memory.  A crash right
   * before these stores is what cowscope_ring_get_stats() compensates. */
  if (!is_event)
    atomic_store_explicit (&ring->header->other_produced,
                           ++ring->prod_other_produced, memory_order_relaxed);
  atomic_store_explicit (&ring->header->produced, ++ring->prod_produced,
                         memory_order_relaxed);
}

/* Out-of-line ring_reserve() for in-place writers. */
void *
cowscope_ring_reserve (CowscopeRing *ring, CowscopeRingKind kind, size_t size)
{
  return ring_reserve (ring, kind, size);
}

/* Publishes the pending reservation, if any, exactly once. */
void
cowscope_ring_commit (CowscopeRing *ring)
{
  /* No reservation (the reserve returned NULL, or a second commit):
   * nothing to publish, and the drop was already counted. */
  if (RING_UNLIKELY (ring->prod_reserved == 0))
    return;
  ring_commit (ring, ring->prod_reserved_event);
}

/* Reserve, copy, publish: the record is visible whole or not at all. */
bool
cowscope_ring_write (CowscopeRing *ring, CowscopeRingKind kind,
                     const void *payload, size_t size)
{
  void *dst = ring_reserve (ring, kind, size);
  if (RING_UNLIKELY (dst == NULL))
    return false;
  if (size > 0)
    memcpy (dst, payload, size);
  ring_commit (ring, kind == COWSCOPE_RING_KIND_EVENT);
  return true;
}

/* cowscope_ring_write() with a constant 64-byte copy the compiler
 * inlines. */
bool
cowscope_ring_write_event (CowscopeRing *ring, const CowTraceEvent *event)
{
  void *dst = ring_reserve (ring, COWSCOPE_RING_KIND_EVENT, sizeof *event);
  if (RING_UNLIKELY (dst == NULL))
    return false;
  memcpy (dst, event, sizeof *event);
  ring_commit (ring, true);
  return true;
}

/* A STRING record (id, then bytes) gathered straight into the ring. */
bool
cowscope_ring_write_string (CowscopeRing *ring, uint64_t string_id,
                            const char *text, size_t length)
{
  if (length > SIZE_MAX - sizeof string_id)
    {
      ring_drop (ring, false);
      return false;
    }
  uint8_t *dst = ring_reserve (ring, COWSCOPE_RING_KIND_STRING,
                               sizeof string_id + length);
  if (RING_UNLIKELY (dst == NULL))
    return false;
  memcpy (dst, &string_id, sizeof string_id);
  if (length > 0)
    memcpy (dst + sizeof string_id, text, length);
  ring_commit (ring, false);
  return true;
}

/* Installs the producer-local liveness check. */
void
cowscope_ring_set_liveness_check (CowscopeRing *ring,
                                  CowscopeRingLivenessFunc check,
                                  void *user_data)
{
  ring->liveness = check;
  ring->liveness_data = user_data;
}

/* The reason this producer gave up waiting, or NONE. */
CowscopeRingGoneReason
cowscope_ring_get_gone_reason (const CowscopeRing *ring)
{
  return ring->gone;
}

/* Sets the PROCESS_COUNTERS flag. */
void
cowscope_ring_set_process_counters (CowscopeRing *ring)
{
  /* Relaxed: set before the ring is handed over (a synchronizing send). */
  atomic_fetch_or_explicit (&ring->header->flags,
                            COWSCOPE_RING_FLAG_PROCESS_COUNTERS,
                            memory_order_relaxed);
}

/* One orphan record, from any thread: atomic additions, events first so
 * that a reader never sees more orphan events than orphan records for
 * long. */
void
cowscope_ring_count_orphan (CowscopeRing *ring, bool is_event)
{
  /* Relaxed: counters only, added to by several threads. */
  if (is_event)
    atomic_fetch_add_explicit (&ring->header->orphan_events_produced, 1,
                               memory_order_relaxed);
  atomic_fetch_add_explicit (&ring->header->orphan_produced, 1,
                             memory_order_relaxed);
}

/* Copies up to COWSCOPE_RING_NAME_BYTES - 1 bytes of @name (as much as a
 * kernel thread name holds) into the header's name words, NUL-padded. */
void
cowscope_ring_set_name (CowscopeRing *ring, const char *name)
{
  uint64_t words[COWSCOPE_RING_NAME_BYTES / 8] = { 0 };
  size_t length = name != NULL ? strnlen (name, COWSCOPE_RING_NAME_BYTES - 1) : 0;
  memcpy (words, name, length);
  /* Relaxed: informational; a reader may see a mix of two names for an
   * instant, never bytes outside the words. */
  for (size_t i = 0; i < COWSCOPE_RING_NAME_BYTES / 8; i++)
    atomic_store_explicit (&ring->header->name_words[i], words[i],
                           memory_order_relaxed);
}

/* MADV_POPULATE_WRITE where the kernel has it (5.14), else one store per
 * page of a byte nobody reads (the area after head is unpublished). */
void
cowscope_ring_prefault (CowscopeRing *ring, size_t bytes)
{
  size_t page = ring_page_size ();
  if (bytes > ring->capacity)
    bytes = (size_t) ring->capacity;
  uint8_t *start = ring->data + (ring->prod_head & ring->mask);
  uint8_t *aligned = (uint8_t *) ((uintptr_t) start & ~(uintptr_t) (page - 1));
  size_t length = (size_t) (start - aligned) + bytes;
#ifdef MADV_POPULATE_WRITE
  if (madvise (aligned, length, MADV_POPULATE_WRITE) == 0)
    return;
#endif
  for (size_t off = (size_t) (start - aligned); off < length; off += page)
    ((volatile uint8_t *) aligned)[off] = 0;
}

/* Stamps ready_ns. */
void
cowscope_ring_mark_ready (CowscopeRing *ring)
{
  /* Relaxed: every record is published later with a release store of
   * head, which orders this store before it for the consumer. */
  atomic_store_explicit (&ring->header->ready_ns, ring_now_ns (),
                         memory_order_relaxed);
}

/* Stores the producer's kernel ids in the header. */
void
cowscope_ring_set_producer (CowscopeRing *ring, uint32_t pid, uint32_t tid)
{
  /* Relaxed: informational ids; the recorder reads them with the ring's
   * records, not to find other memory. */
  atomic_store_explicit (&ring->header->producer_pid, pid, memory_order_relaxed);
  atomic_store_explicit (&ring->header->producer_tid, tid, memory_order_relaxed);
}

/* Sets FINISHED after every record already published. */
void
cowscope_ring_finish (CowscopeRing *ring)
{
  /* Release: a consumer that acquires the flag also sees every record
   * published before it (head was stored before this). */
  atomic_fetch_or_explicit (&ring->header->flags, COWSCOPE_RING_FLAG_FINISHED,
                            memory_order_release);
}

/* ---- Consumer ------------------------------------------------------- */

/* Publishes the consumer's state word. */
static void
ring_set_consumer_state (CowscopeRing *ring, CowscopeRingConsumerState state)
{
  /* Release: orders the consumer's earlier tail stores before the state
   * for anyone who acquires it; cheap on this cold path. */
  atomic_store_explicit (&ring->header->consumer_state, (uint32_t) state,
                         memory_order_release);
}

void
cowscope_ring_attach (CowscopeRing *ring)
{
  ring_set_consumer_state (ring, COWSCOPE_RING_CONSUMER_ATTACHED);
}

void
cowscope_ring_detach (CowscopeRing *ring)
{
  ring_set_consumer_state (ring, COWSCOPE_RING_CONSUMER_DETACHED);
}

/* Marks the ring corrupt with a message (kept for later calls), copies it
 * into @error and returns READ_ERROR. */
static RING_COLD CowscopeRingReadResult RING_PRINTF (3, 4)
ring_corrupt (CowscopeRing *ring, CowError *error, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  vsnprintf (ring->corrupt_message, sizeof ring->corrupt_message, format, args);
  va_end (args);
  ring->corrupt = true;
  ring_error (error, COW_ERROR_INVALID_ARGUMENT, "%s", ring->corrupt_message);
  return COWSCOPE_RING_READ_ERROR;
}

/* The record at tail, bounds-checked against head and capacity from a
 * private copy of its header; never reads outside the mapping. */
CowscopeRingReadResult
cowscope_ring_peek (CowscopeRing *ring, CowscopeRingRecord *record,
                    CowError *error)
{
  if (RING_UNLIKELY (ring->corrupt))
    {
      ring_error (error, COW_ERROR_INVALID_ARGUMENT, "%s", ring->corrupt_message);
      return COWSCOPE_RING_READ_ERROR;
    }

  uint64_t tail = ring->cons_tail;
  if (ring->cons_head == tail)
    {
      /* Acquire pairs with the producer's release of head: every byte of
       * the records before it is visible from here on. */
      ring->cons_head = atomic_load_explicit (&ring->header->head,
                                              memory_order_acquire);
      if (ring->cons_head == tail)
        return COWSCOPE_RING_READ_EMPTY;
    }

  uint64_t avail = ring->cons_head - tail;
  if (RING_UNLIKELY (avail > ring->capacity || ((avail | tail) & 7) != 0
                     || avail < sizeof (CowscopeRingRecordHeader)))
    return ring_corrupt (ring, error,
                         "ring head %llu is inconsistent with tail %llu "
                         "(capacity %llu)",
                         (unsigned long long) ring->cons_head,
                         (unsigned long long) tail,
                         (unsigned long long) ring->capacity);

  /* Copy the header once: the target could change the shared bytes
   * between a check and a use. */
  CowscopeRingRecordHeader rec;
  const uint8_t *at = ring->data + (tail & ring->mask);
  memcpy (&rec, at, sizeof rec);
  if (RING_UNLIKELY (rec.kind <= COWSCOPE_RING_KIND_INVALID
                     || rec.kind >= COWSCOPE_RING_N_KINDS
                     || ring_record_bytes (rec.size) > avail))
    return ring_corrupt (ring, error,
                         "damaged ring record at position %llu "
                         "(kind %u, size %u, %llu bytes published)",
                         (unsigned long long) tail, rec.kind, rec.size,
                         (unsigned long long) avail);

  record->kind = rec.kind;
  record->size = rec.size;
  record->payload = at + sizeof rec;
  record->position = tail;
  return COWSCOPE_RING_READ_RECORD;
}

/* FINISHED (acquire), then head: the producer stored its last head
 * before it set the flag (release), so this head is final. */
bool
cowscope_ring_drained (CowscopeRing *ring)
{
  uint32_t flags = atomic_load_explicit (&ring->header->flags, memory_order_acquire);
  if ((flags & COWSCOPE_RING_FLAG_FINISHED) == 0)
    return false;
  uint64_t head = atomic_load_explicit (&ring->header->head, memory_order_acquire);
  return head == ring->cons_tail;
}

/* Moves tail past @record if it is the record at tail; otherwise does
 * nothing (a stale or foreign record cannot skip data). */
void
cowscope_ring_advance (CowscopeRing *ring, const CowscopeRingRecord *record)
{
  if (RING_UNLIKELY (record->position != ring->cons_tail))
    return; /* not the record at the tail: nothing to consume */
  ring->cons_tail += ring_record_bytes (record->size);
  /* Release: our reads of the record happen before the producer, which
   * acquires tail, reuses its bytes. */
  atomic_store_explicit (&ring->header->tail, ring->cons_tail,
                         memory_order_release);
  /* Relaxed: counters read for statistics only. */
  if (record->kind != COWSCOPE_RING_KIND_EVENT)
    atomic_store_explicit (&ring->header->other_consumed, ++ring->cons_other,
                           memory_order_relaxed);
  atomic_store_explicit (&ring->header->consumed, ++ring->cons_consumed,
                         memory_order_relaxed);
}

/* Peek + copy + advance; refuses buffers that could not hold every
 * record, so it never truncates. */
CowscopeRingReadResult
cowscope_ring_read (CowscopeRing *ring, CowscopeRingRecord *record,
                    void *buffer, size_t buffer_size, CowError *error)
{
  if (buffer == NULL || buffer_size < cowscope_ring_get_max_payload (ring))
    {
      ring_error (error, COW_ERROR_INVALID_ARGUMENT,
                  "read buffer of %zu bytes is smaller than the ring's "
                  "largest record (%zu bytes)",
                  buffer_size, cowscope_ring_get_max_payload (ring));
      return COWSCOPE_RING_READ_ERROR;
    }
  CowscopeRingReadResult result = cowscope_ring_peek (ring, record, error);
  if (result != COWSCOPE_RING_READ_RECORD)
    return result;
  memcpy (buffer, record->payload, record->size);
  cowscope_ring_advance (ring, record);
  record->payload = buffer;
  return result;
}

/* Counters with produced reconciled to max(produced, consumed + dropped),
 * for records and for events. */
void
cowscope_ring_get_stats (CowscopeRing *ring, CowscopeRingStats *stats)
{
  CowscopeRingHeader *h = ring->header;
  /* Relaxed: counters publish no memory; while either side runs this is
   * a snapshot, exact once both are quiet (a join, a waitpid or the
   * consumer itself calling this after draining orders the loads). */
  uint64_t produced = atomic_load_explicit (&h->produced, memory_order_relaxed);
  uint64_t dropped = atomic_load_explicit (&h->dropped, memory_order_relaxed);
  uint64_t consumed = atomic_load_explicit (&h->consumed, memory_order_relaxed);
  uint64_t other_produced = atomic_load_explicit (&h->other_produced,
                                                  memory_order_relaxed);
  uint64_t other_dropped = atomic_load_explicit (&h->other_dropped, memory_order_relaxed);
  uint64_t other_consumed = atomic_load_explicit (&h->other_consumed, memory_order_relaxed);
  uint64_t head = atomic_load_explicit (&h->head, memory_order_relaxed);
  uint64_t tail = atomic_load_explicit (&h->tail, memory_order_relaxed);

  memset (stats, 0, sizeof *stats);
  stats->produced = produced > consumed + dropped ? produced : consumed + dropped;
  stats->dropped = dropped;
  stats->consumed = consumed;
  /* Events are the records that are not others; a damaged header cannot
   * make them negative. */
  if (other_produced < other_consumed + other_dropped)
    other_produced = other_consumed + other_dropped;
  stats->events_produced = stats->produced - RING_MIN (other_produced, stats->produced);
  stats->events_dropped = dropped - RING_MIN (other_dropped, dropped);
  stats->events_consumed = consumed - RING_MIN (other_consumed, consumed);
  stats->pending_bytes = head - tail <= ring->capacity ? head - tail : 0;
  stats->producer_pid = atomic_load_explicit (&h->producer_pid, memory_order_relaxed);
  stats->producer_tid = atomic_load_explicit (&h->producer_tid, memory_order_relaxed);
  stats->ready_ns = atomic_load_explicit (&h->ready_ns, memory_order_relaxed);
  stats->flags = atomic_load_explicit (&h->flags, memory_order_relaxed);
  stats->consumer_state = atomic_load_explicit (&h->consumer_state,
                                                memory_order_relaxed);
  stats->gone_reason = atomic_load_explicit (&h->gone_reason, memory_order_relaxed);
  if (stats->flags & COWSCOPE_RING_FLAG_PROCESS_COUNTERS)
    {
      stats->orphan_produced = atomic_load_explicit (&h->orphan_produced,
                                                     memory_order_relaxed);
      stats->orphan_events_produced
        = atomic_load_explicit (&h->orphan_events_produced, memory_order_relaxed);
      /* Events are a subset of records, whatever a damaged header says. */
      if (stats->orphan_events_produced > stats->orphan_produced)
        stats->orphan_events_produced = stats->orphan_produced;
    }
  uint64_t words[COWSCOPE_RING_NAME_BYTES / 8];
  for (size_t i = 0; i < COWSCOPE_RING_NAME_BYTES / 8; i++)
    words[i] = atomic_load_explicit (&h->name_words[i], memory_order_relaxed);
  memcpy (stats->name, words, COWSCOPE_RING_NAME_BYTES);
  stats->name[COWSCOPE_RING_NAME_BYTES] = '\0';
}
