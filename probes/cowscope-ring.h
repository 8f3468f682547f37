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
 * dropped), `dropped` those that found no room (DROP mode, or BLOCK mode
 * once the consumer is gone), were larger than the ring or had an
 * invalid kind.  `other_produced` and `other_dropped` count the same
 * for the records that are not EVENTs (strings, stacks, CUDA records),
 * and the consumer counts the other records it consumed, so a reader can
 * tell the events from the records around them (events = records -
 * others: the hot path, an event write, pays no extra store).  produced = stored + dropped holds at every
 * quiescent point, for records and for events; see
 * cowscope_ring_get_stats() for the one window a crash can leave and how
 * the reader closes it.
 *
 * Consumer liveness: the consumer marks the ring ATTACHED when it maps
 * it and DETACHED when it will read no more (it finished, or gave the
 * ring up as damaged).  A BLOCK-mode writer waits for room for as long
 * as the consumer may still read: it stops only when the consumer
 * detached or the producer's liveness check (cowscope_ring_set_liveness_check(),
 * in the probe: the recorder's socket hung up) says the consumer is gone,
 * records which of the two happened in the header, and from then on
 * drops and counts instead of waiting.
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
/* Bumped whenever the header or record layout changes.  2: event
 * counters, consumer state, why a BLOCK writer stopped waiting, the
 * producer's set-up time and name, the process-wide counters. */
#define COWSCOPE_RING_VERSION 2u

/* Default data-area size, and the largest allowed (the mirror mapping
 * reserves twice this much address space). */
#define COWSCOPE_RING_DEFAULT_CAPACITY ((uint64_t) 1 << 20)
#define COWSCOPE_RING_MAX_CAPACITY ((uint64_t) 1 << 30)

/* Records start and their payloads are padded to this alignment. */
#define COWSCOPE_RING_ALIGN 8u

/* What a writer does when the ring is full. */
typedef enum {
  COWSCOPE_RING_DROP = 0,  /* drop the record at once and count it */
  COWSCOPE_RING_BLOCK = 1, /* wait for the consumer for as long as it is
                            * there; once it is gone, drop and count */
} CowscopeRingPolicy;

/* The consumer's word in the header (written by the consumer only). */
typedef enum {
  COWSCOPE_RING_CONSUMER_UNATTACHED = 0, /* not mapped by a consumer yet */
  COWSCOPE_RING_CONSUMER_ATTACHED = 1,   /* a consumer reads this ring */
  COWSCOPE_RING_CONSUMER_DETACHED = 2,   /* the consumer will read no more */
} CowscopeRingConsumerState;

/* Why a BLOCK-mode writer stopped waiting for room (the header's
 * `gone_reason`, written by the producer once). */
typedef enum {
  COWSCOPE_RING_GONE_NONE = 0,      /* it never had to give up */
  COWSCOPE_RING_GONE_HUNG_UP = 1,   /* the liveness check said the consumer
                                     * is gone (the recorder's socket hung up) */
  COWSCOPE_RING_GONE_DETACHED = 2,  /* the consumer marked the ring detached */
} CowscopeRingGoneReason;

/* The producer's liveness check for BLOCK mode: true while the consumer
 * may still read the ring.  Called from the waiting writer between
 * sleeps (about once a millisecond), never on the fast path. */
typedef bool (*CowscopeRingLivenessFunc) (void *user_data);

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
/* This ring carries its process's `orphan_*` counters (see the header);
 * the consumer keeps it until the process is gone. */
#define COWSCOPE_RING_FLAG_PROCESS_COUNTERS 0x2u

/* Bytes of the producer's thread name in the header (as prctl gives it). */
#define COWSCOPE_RING_NAME_BYTES 16

/* The first bytes of every record in the data area. */
typedef struct {
  uint32_t size; /* payload bytes, not counting this header or padding */
  uint32_t kind; /* CowscopeRingKind */
} CowscopeRingRecordHeader;

#define COWSCOPE_RING_CACHE_LINE 64

/* The header page.  Fields on one cache line are written by one side
 * only, so the producer and the consumer never write the same line
 * (except the last line, which any thread of the producing process may
 * add to). */
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

  /* Consumer: position of the first record not yet consumed, how many
   * records (and of them records other than EVENTs) it has consumed since
   * creation, and whether it is there (CowscopeRingConsumerState). */
  alignas (COWSCOPE_RING_CACHE_LINE) _Atomic uint64_t tail;
  _Atomic uint64_t consumed;
  _Atomic uint64_t other_consumed;
  _Atomic uint32_t consumer_state;

  /* Producer: finished write calls and those that were dropped, the
   * same for records other than EVENTs, and why a BLOCK writer stopped
   * waiting (CowscopeRingGoneReason). */
  alignas (COWSCOPE_RING_CACHE_LINE) _Atomic uint64_t produced;
  _Atomic uint64_t dropped;
  _Atomic uint64_t other_produced;
  _Atomic uint64_t other_dropped;
  _Atomic uint32_t gone_reason;

  /* Producer identity (kernel ids), when its set-up finished
   * (CLOCK_MONOTONIC ns; every record of the ring comes later) and its
   * thread name (NUL-padded; refreshed when the thread ends), for the
   * recorder's thread table.  What the producer claims, not checked. */
  alignas (COWSCOPE_RING_CACHE_LINE) _Atomic uint32_t producer_pid;
  _Atomic uint32_t producer_tid;
  _Atomic int64_t ready_ns;
  _Atomic uint64_t name_words[COWSCOPE_RING_NAME_BYTES / 8];

  /* COWSCOPE_RING_FLAG_PROCESS_COUNTERS only: records (and events) that
   * threads of the producing process could not write into a ring of
   * their own (it could not be created or handed over), all counted as
   * produced and dropped.  Any thread adds to them (atomic RMW). */
  alignas (COWSCOPE_RING_CACHE_LINE) _Atomic uint64_t orphan_produced;
  _Atomic uint64_t orphan_events_produced;
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
  uint64_t events_produced; /* the same, for EVENT records only */
  uint64_t events_dropped;
  uint64_t events_consumed;
  uint64_t orphan_produced; /* PROCESS_COUNTERS rings: records of threads
                             * without a ring (all dropped) */
  uint64_t orphan_events_produced;
  uint64_t pending_bytes; /* published but not yet consumed */
  int64_t ready_ns;      /* when the producer's set-up finished */
  uint32_t producer_pid;
  uint32_t producer_tid;
  uint32_t flags;        /* COWSCOPE_RING_FLAG_* */
  uint32_t consumer_state; /* CowscopeRingConsumerState */
  uint32_t gone_reason;  /* CowscopeRingGoneReason */
  char name[COWSCOPE_RING_NAME_BYTES + 1]; /* NUL-terminated */
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
 * the fd).  The handle keeps no fd (the mapping holds the memory): the
 * caller closes @fd when it likes, so a consumer of many rings needs no
 * file descriptor per ring, and cowscope_ring_get_fd() returns -1.  The
 * file must be a memfd sealed against shrinking (so the target cannot
 * truncate it under the reader) whose header has the right magic,
 * version and page size, a power-of-two capacity, and whose size is
 * exactly header plus capacity.  Anything else returns NULL with a message
 * that says which check failed; a bad fd never crashes the caller. */
CowscopeRing *cowscope_ring_map_fd (int fd, CowError *error);

/* Unmaps the ring and closes this handle's fd.  Records already published
 * stay in the memfd for any other mapping.  NULL is ignored. */
void cowscope_ring_free (CowscopeRing *ring);

/* The handle's memfd, valid until cowscope_ring_free() or
 * cowscope_ring_close_fd(); -1 for a mapped ring or after
 * cowscope_ring_close_fd().  Send it to the recorder (SCM_RIGHTS); it is
 * close-on-exec. */
int cowscope_ring_get_fd (const CowscopeRing *ring);

/* Closes the handle's fd; the mapping (and the ring) stays.  A producer
 * calls it once the recorder has its own copy of the fd, so that a
 * thread's ring costs the target no file descriptor. */
void cowscope_ring_close_fd (CowscopeRing *ring);

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
 * full in DROP mode, full in BLOCK mode once the consumer is gone,
 * payload larger than the ring, or an invalid kind), in which case
 * `dropped` was counted.  Either way `produced` is counted once (and
 * the event counters too for an EVENT record).  In BLOCK mode a full
 * ring makes the writer wait, without a time limit, for as long as the
 * consumer is there (see the file comment). */
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

/* BLOCK mode: @check (with @user_data) tells a waiting writer whether
 * the consumer is still there; NULL (the default) relies on the
 * consumer's DETACHED mark alone.  Producer-local. */
void cowscope_ring_set_liveness_check (CowscopeRing *ring,
                                       CowscopeRingLivenessFunc check,
                                       void *user_data);

/* Records the producing thread's kernel ids in the header (the creator's
 * are set by cowscope_ring_new()). */
void cowscope_ring_set_producer (CowscopeRing *ring, uint32_t pid,
                                 uint32_t tid);

/* Stores the producer's thread name in the header (the first
 * COWSCOPE_RING_NAME_BYTES - 1 bytes of @name, as a kernel thread name). */
void cowscope_ring_set_name (CowscopeRing *ring, const char *name);

/* Faults in the first @bytes of the data area after the producer's head
 * (a memfd page is allocated and zeroed on first touch, which would
 * otherwise land on the thread's first records: microseconds, inside
 * whatever span they open).  Call before the first write; nothing is
 * published. */
void cowscope_ring_prefault (CowscopeRing *ring, size_t bytes);

/* Stamps the header's ready_ns with CLOCK_MONOTONIC now: the producer's
 * set-up is complete and every record it writes comes later. */
void cowscope_ring_mark_ready (CowscopeRing *ring);

/* Why the producer stopped waiting for the consumer
 * (CowscopeRingGoneReason; NONE while it never had to). */
CowscopeRingGoneReason cowscope_ring_get_gone_reason (const CowscopeRing *ring);

/* Marks this ring as the carrier of its process's orphan counters
 * (COWSCOPE_RING_FLAG_PROCESS_COUNTERS).  Call before handing it over. */
void cowscope_ring_set_process_counters (CowscopeRing *ring);

/* PROCESS_COUNTERS rings, from any thread of the producing process:
 * counts one record (an event when @is_event) that a thread without a
 * ring of its own could not write, as produced and dropped. */
void cowscope_ring_count_orphan (CowscopeRing *ring, bool is_event);

/* Marks the ring finished: the producer will write no more (its thread
 * ended cleanly).  A ring of a crashed target is never marked. */
void cowscope_ring_finish (CowscopeRing *ring);

/* ---- Consumer (one thread at a time per ring) ---------------------- */

/* Tells the producer a consumer now reads the ring (ATTACHED). */
void cowscope_ring_attach (CowscopeRing *ring);

/* Tells the producer no consumer will read the ring again (DETACHED): a
 * BLOCK-mode writer stops waiting for room and drops and counts.  Call
 * when recording ends or when the ring is given up as damaged. */
void cowscope_ring_detach (CowscopeRing *ring);

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

/* True once the producer finished the ring (COWSCOPE_RING_FLAG_FINISHED)
 * and this consumer has consumed every record it published: nothing
 * more will ever arrive, so the consumer may take its final counters and
 * unmap the ring. */
bool cowscope_ring_drained (CowscopeRing *ring);

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
 * exactly, for records and for events: a producer killed between
 * publishing a record (or counting a drop) and counting it as produced
 * leaves the header's `produced` one short, and this function reports
 * max(header produced, consumed + dropped) to close that window (the
 * same for the event counters).  The name is NUL-terminated. */
void cowscope_ring_get_stats (CowscopeRing *ring, CowscopeRingStats *stats);

#ifdef __cplusplus
}
#endif
