/* cowscope-ring.h — the shared-memory event ring between a target and the
 * recorder.
 *
 * One ring per target thread: a single producer (the thread, inside the
 * target) and a single consumer (the recorder's drain thread, in another
 * process).  The ring lives in a memfd that the target creates and hands
 * to the recorder, so whatever the target wrote before it crashed or was
 * killed stays readable: a record becomes visible when the producer's
 * release store moves `head` past it, never before, so a half-written
 * record is never seen and a fully published one is never lost.
 *
 * File layout (all integers native-endian; the ring never leaves the
 * machine):
 *
 *   [ header page: CowscopeRingHeader, padded to one page ]
 *   [ data area: `capacity` bytes, a power of two ]
 *
 * In memory the data area is mapped twice back to back, so a record that
 * starts near the end of the area continues, contiguous in virtual
 * memory, into the mirror of its beginning.  Records therefore never
 * split and never need padding records at the wrap; readers and writers
 * get one pointer and use plain memcpy.
 *
 * Positions (`head`, `tail`) count bytes since creation and never wrap in
 * practice (2^64 bytes); the offset in the data area is `pos & (capacity
 * - 1)`.  Used bytes are `head - tail`, free bytes `capacity - (head -
 * tail)`.
 *
 * A record is an 8-byte CowscopeRingRecordHeader { size, kind } followed
 * by `size` payload bytes, padded to a multiple of 8 so the next record
 * header and every payload are 8-byte aligned.
 *
 * Counters: `produced` counts write calls that finished (stored or
 * dropped), `dropped` those that found no room (or timed out in BLOCK
 * mode, or were larger than the ring).  produced = stored + dropped holds
 * at every quiescent point; see cowscope_ring_get_stats() for the one
 * window a crash can leave and how the reader closes it.
 *
 * This is in-target code: libc only, no GLib (HACKING.md, "Layering").
 * Errors are CowError values from the engine's cow-error.h.
 */
#pragma once

#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cow-error.h"
#include "cow-trace.h"

#ifdef __cplusplus
extern "C" {
#endif

/* "CSRG" in a little-endian dump of the header's first bytes. */
#define COWSCOPE_RING_MAGIC 0x47525343u
/* Bumped whenever the header or record layout changes. */
#define COWSCOPE_RING_VERSION 1u

/* Default data-area size, and the largest allowed (the mirror mapping
 * reserves twice this much address space). */
#define COWSCOPE_RING_DEFAULT_CAPACITY ((uint64_t) 1 << 20)
#define COWSCOPE_RING_MAX_CAPACITY ((uint64_t) 1 << 30)

/* Records start and their payloads are padded to this alignment. */
#define COWSCOPE_RING_ALIGN 8u

/* BLOCK mode: how long a writer waits for room before it drops. */
#define COWSCOPE_RING_DEFAULT_BLOCK_TIMEOUT_NS ((int64_t) 10 * 1000 * 1000)

/* What a writer does when the ring is full. */
typedef enum {
  COWSCOPE_RING_DROP = 0,  /* drop the record at once and count it */
  COWSCOPE_RING_BLOCK = 1, /* wait for the consumer, up to a timeout, then
                            * drop and count */
} CowscopeRingPolicy;

/* What a record's payload holds. */
typedef enum {
  COWSCOPE_RING_KIND_INVALID = 0,
  COWSCOPE_RING_KIND_EVENT = 1,  /* one CowTraceEvent (64 bytes) */
  COWSCOPE_RING_KIND_STRING = 2, /* uint64_t string id, then the bytes
                                  * (no terminating NUL) */
  COWSCOPE_RING_KIND_BLOB = 3,   /* CowscopeRingBlobHeader, then bytes whose
                                  * meaning its type gives (CUPTI activity
                                  * records, call stacks) */
  COWSCOPE_RING_N_KINDS
} CowscopeRingKind;

/* COWSCOPE_RING_KIND_BLOB: the first 8 payload bytes. */
typedef struct {
  uint32_t type;  /* COWSCOPE_RING_BLOB_* */
  uint32_t flags; /* per type; 0 unless the type says otherwise */
} CowscopeRingBlobHeader;

/* Blob types (reserved; their layouts are defined by the probes that
 * write them). */
#define COWSCOPE_RING_BLOB_CUPTI 1u /* CUPTI activity records, as delivered */
#define COWSCOPE_RING_BLOB_STACK 2u /* a user call stack: frame addresses */

/* Header flags. */
#define COWSCOPE_RING_FLAG_FINISHED 0x1u /* the producer will write no more */

/* The first bytes of every record in the data area. */
typedef struct {
  uint32_t size; /* payload bytes, not counting this header or padding */
  uint32_t kind; /* CowscopeRingKind */
} CowscopeRingRecordHeader;

#define COWSCOPE_RING_CACHE_LINE 64

/* The header page.  Fields on one cache line are written by one side
 * only, so the producer and the consumer never write the same line. */
typedef struct {
  /* Written once by the creator, read-only afterwards. */
  uint32_t magic;       /* COWSCOPE_RING_MAGIC */
  uint32_t version;     /* COWSCOPE_RING_VERSION */
  uint64_t capacity;    /* data-area bytes: a power of two, >= a page */
  uint32_t header_size; /* bytes before the data area: one page */
  uint32_t policy;      /* CowscopeRingPolicy */
  _Atomic uint32_t flags; /* COWSCOPE_RING_FLAG_*; set by the producer */
  uint32_t reserved0;

  /* Producer: position after the last published record. */
  alignas (COWSCOPE_RING_CACHE_LINE) _Atomic uint64_t head;

  /* Consumer: position of the first record not yet consumed, and how many
   * records it has consumed since creation. */
  alignas (COWSCOPE_RING_CACHE_LINE) _Atomic uint64_t tail;
  _Atomic uint64_t consumed;

  /* Producer: finished write calls, and those that were dropped. */
  alignas (COWSCOPE_RING_CACHE_LINE) _Atomic uint64_t produced;
  _Atomic uint64_t dropped;

  /* Producer identity (kernel ids), for the recorder's thread table. */
  alignas (COWSCOPE_RING_CACHE_LINE) _Atomic uint32_t producer_pid;
  _Atomic uint32_t producer_tid;
} CowscopeRingHeader;

typedef struct _CowscopeRing CowscopeRing;

/* A record handed out by the consumer API. */
typedef struct {
  uint32_t kind;       /* CowscopeRingKind (validated) */
  uint32_t size;       /* payload bytes */
  const void *payload; /* 8-byte aligned, contiguous */
  uint64_t position;   /* the record's ring position */
} CowscopeRingRecord;

typedef enum {
  COWSCOPE_RING_READ_ERROR = -1, /* corrupt ring or bad argument: see error */
  COWSCOPE_RING_READ_EMPTY = 0,  /* nothing published yet */
  COWSCOPE_RING_READ_RECORD = 1, /* @record filled */
} CowscopeRingReadResult;

typedef struct {
  uint64_t produced;     /* write calls that finished (see below) */
  uint64_t dropped;      /* of which dropped */
  uint64_t consumed;     /* records the consumer has advanced past */
  uint64_t pending_bytes; /* published but not yet consumed */
  uint32_t producer_pid;
  uint32_t producer_tid;
  uint32_t flags;        /* COWSCOPE_RING_FLAG_* */
} CowscopeRingStats;

/* ---- Creation and mapping ------------------------------------------ */

/* Creates a ring in a new memfd (close-on-exec, sealed against shrinking,
 * growing and further seals) with @capacity data bytes (0 means
 * COWSCOPE_RING_DEFAULT_CAPACITY; otherwise a power of two from the page
 * size to COWSCOPE_RING_MAX_CAPACITY) and maps it.  The caller becomes the
 * producer (its pid and tid are recorded).  Returns NULL and fills @error
 * on bad arguments or when the system refuses the memfd or the mapping. */
CowscopeRing *cowscope_ring_new (uint64_t capacity, CowscopeRingPolicy policy,
                                 CowError *error);

/* Maps an existing ring from @fd (the recorder's side, once it received
 * the fd).  @fd is duplicated; the caller keeps and closes its own.  The
 * file must be a memfd sealed against shrinking (so the target cannot
 * truncate it under the reader) whose header has the right magic,
 * version and page size, a power-of-two capacity, and whose size is
 * exactly header plus capacity.  Anything else returns NULL with a message
 * that says which check failed; a bad fd never crashes the caller. */
CowscopeRing *cowscope_ring_map_fd (int fd, CowError *error);

/* Unmaps the ring and closes this handle's fd.  Records already published
 * stay in the memfd for any other mapping.  NULL is ignored. */
void cowscope_ring_free (CowscopeRing *ring);

/* The handle's memfd, valid until cowscope_ring_free().  Send it to the
 * recorder (SCM_RIGHTS); it is close-on-exec. */
int cowscope_ring_get_fd (const CowscopeRing *ring);

/* The data area's size in bytes. */
uint64_t cowscope_ring_get_capacity (const CowscopeRing *ring);

/* The policy fixed at creation. */
CowscopeRingPolicy cowscope_ring_get_policy (const CowscopeRing *ring);

/* The largest payload a write can store (capacity minus a record header).
 * Larger writes are dropped and counted. */
size_t cowscope_ring_get_max_payload (const CowscopeRing *ring);

/* ---- Producer (one thread at a time per ring) ---------------------- */

/* Copies @size bytes of @payload into the ring as one record of @kind and
 * publishes it.  Lock-free, allocation-free, no system call unless BLOCK
 * mode has to wait.  Returns true when stored; false when dropped (ring
 * full in DROP mode, still full after the timeout in BLOCK mode, payload
 * larger than the ring, or an invalid kind), in which case `dropped` was
 * counted.  Either way `produced` is counted once. */
bool cowscope_ring_write (CowscopeRing *ring, CowscopeRingKind kind,
                          const void *payload, size_t size);

/* cowscope_ring_write() of one engine event, with a fixed-size copy. */
bool cowscope_ring_write_event (CowscopeRing *ring, const CowTraceEvent *event);

/* Writes a COWSCOPE_RING_KIND_STRING record: @string_id then @length bytes
 * of @text, without an intermediate buffer.  Same guarantees as
 * cowscope_ring_write(). */
bool cowscope_ring_write_string (CowscopeRing *ring, uint64_t string_id,
                                 const char *text, size_t length);

/* Two-step write for payloads built in place (a call stack, a batch of
 * CUPTI records): reserves room for a record of @kind with @size payload
 * bytes and returns where to write them, or NULL when the write is dropped
 * (counted as by cowscope_ring_write()).  Nothing is visible to the
 * consumer until cowscope_ring_commit(); a producer killed in between
 * leaves no trace of the record.  No other write may come between the two
 * calls. */
void *cowscope_ring_reserve (CowscopeRing *ring, CowscopeRingKind kind,
                             size_t size);

/* Publishes the record reserved by the last successful
 * cowscope_ring_reserve() (release store of head) and counts it as
 * produced. */
void cowscope_ring_commit (CowscopeRing *ring);

/* BLOCK mode: the longest a write waits for room (default
 * COWSCOPE_RING_DEFAULT_BLOCK_TIMEOUT_NS).  Producer-local. */
void cowscope_ring_set_block_timeout (CowscopeRing *ring, int64_t timeout_ns);

/* Records the producing thread's kernel ids in the header (the creator's
 * are set by cowscope_ring_new()). */
void cowscope_ring_set_producer (CowscopeRing *ring, uint32_t pid,
                                 uint32_t tid);

/* Marks the ring finished: the producer will write no more (its thread
 * ended cleanly).  A ring of a crashed target is never marked. */
void cowscope_ring_finish (CowscopeRing *ring);

/* ---- Consumer (one thread at a time per ring) ---------------------- */

/* Looks at the oldest published record without consuming it.  Returns
 * RECORD and fills @record, EMPTY when nothing is published, or ERROR
 * with @error filled when the shared memory does not hold a valid record
 * (a damaged or hostile target): the ring is then unusable and keeps
 * returning ERROR.  The payload points into the shared mapping and stays
 * valid until cowscope_ring_advance(); a misbehaving target could still
 * change it, so copy before trusting it.  Only the record header is
 * validated. */
CowscopeRingReadResult cowscope_ring_peek (CowscopeRing *ring,
                                           CowscopeRingRecord *record,
                                           CowError *error);

/* Consumes @record (the one the last peek returned): its bytes may be
 * reused by the producer afterwards. */
void cowscope_ring_advance (CowscopeRing *ring,
                            const CowscopeRingRecord *record);

/* Peek, copy the payload into @buffer (@buffer_size must be at least
 * cowscope_ring_get_max_payload(), so any record fits) and advance.
 * @record->payload then points into @buffer. */
CowscopeRingReadResult cowscope_ring_read (CowscopeRing *ring,
                                           CowscopeRingRecord *record,
                                           void *buffer, size_t buffer_size,
                                           CowError *error);

/* The ring's counters.  While the producer runs they are a snapshot.
 * Once the consumer has drained the ring, produced = consumed + dropped
 * exactly: a producer killed between publishing a record (or counting a
 * drop) and counting it as produced leaves the header's `produced` one
 * short, and this function reports max(header produced, consumed +
 * dropped) to close that window. */
void cowscope_ring_get_stats (CowscopeRing *ring, CowscopeRingStats *stats);

#ifdef __cplusplus
}
#endif
