/* test-ring.c — the shared-memory event ring: round trips across wraps,
 * exact drop accounting, BLOCK mode, crash safety under SIGKILL and
 * refusal of bad or damaged ring files. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <glib.h>

#include "cowscope-ring.h"

#define PAGE ((size_t) sysconf (_SC_PAGESIZE))

/* ------------------------------------------------------------------ */
/* Self-checking payloads: a sequence number, a length and a checksum  */
/* over pseudo-random bytes derived from the sequence number.          */
/* ------------------------------------------------------------------ */

typedef struct {
  uint64_t seq;
  uint64_t length;
  uint64_t checksum;
} PayloadHeader;

#define PAYLOAD_MIN sizeof (PayloadHeader)

/* FNV-1a over @n bytes, continuing from @hash. */
static uint64_t
fnv1a (uint64_t hash, const uint8_t *bytes, size_t n)
{
  for (size_t i = 0; i < n; i++)
    hash = (hash ^ bytes[i]) * 0x100000001b3ull;
  return hash;
}

/* The checksum stored in a payload: over its seq, length and body. */
static uint64_t
payload_checksum (uint64_t seq, uint64_t length, const uint8_t *body, size_t n)
{
  uint64_t h = 0xcbf29ce484222325ull;
  h = fnv1a (h, (const uint8_t *) &seq, sizeof seq);
  h = fnv1a (h, (const uint8_t *) &length, sizeof length);
  return fnv1a (h, body, n);
}

/* Fills @buf (@length >= PAYLOAD_MIN bytes) for record @seq. */
static void
payload_fill (uint8_t *buf, uint64_t seq, size_t length)
{
  uint64_t x = seq * 0x9e3779b97f4a7c15ull + 1;
  uint8_t *body = buf + PAYLOAD_MIN;
  size_t n = length - PAYLOAD_MIN;
  /* The checksum is computed as the bytes are made (same as
   * payload_checksum() over them). */
  uint64_t hash = payload_checksum (seq, length, NULL, 0);
  for (size_t i = 0; i < n; i++)
    {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      body[i] = (uint8_t) x;
      hash = (hash ^ body[i]) * 0x100000001b3ull;
    }
  PayloadHeader h = { seq, length, hash };
  memcpy (buf, &h, sizeof h);
}

/* True when @buf of @size bytes is an intact payload; sets *seq. */
static gboolean
payload_check (const void *buf, size_t size, uint64_t *seq)
{
  PayloadHeader h;
  if (size < PAYLOAD_MIN)
    return FALSE;
  memcpy (&h, buf, sizeof h);
  if (h.length != size)
    return FALSE;
  *seq = h.seq;
  return h.checksum == payload_checksum (h.seq, h.length,
                                         (const uint8_t *) buf + PAYLOAD_MIN,
                                         size - PAYLOAD_MIN);
}

/* Payload size for record @seq: 64-byte events and variable blobs. */
static size_t
payload_size (uint64_t seq, size_t max)
{
  if (seq % 4 == 0)
    return sizeof (CowTraceEvent);
  size_t size = PAYLOAD_MIN + (size_t) ((seq * 2654435761u) % (max - PAYLOAD_MIN + 1));
  return size;
}

/* The record kind a payload of @size bytes is written as. */
static CowscopeRingKind
payload_kind (size_t size)
{
  return size == sizeof (CowTraceEvent) ? COWSCOPE_RING_KIND_EVENT
                                        : COWSCOPE_RING_KIND_BLOB;
}

/* Writes record @seq; returns what the ring's write returned. */
static gboolean
write_seq (CowscopeRing *ring, uint64_t seq, size_t max)
{
  uint8_t buf[4096];
  size_t size = payload_size (seq, max);
  g_assert_cmpuint (size, <=, sizeof buf);
  payload_fill (buf, seq, size);
  if (size == sizeof (CowTraceEvent))
    {
      CowTraceEvent event;
      memcpy (&event, buf, sizeof event);
      return cowscope_ring_write_event (ring, &event);
    }
  return cowscope_ring_write (ring, payload_kind (size), buf, size);
}

/* A new ring, or the test aborts with the ring's message. */
static CowscopeRing *
ring_new_or_fail (uint64_t capacity, CowscopeRingPolicy policy)
{
  CowError error = { 0 };
  CowscopeRing *ring = cowscope_ring_new (capacity, policy, &error);
  if (ring == NULL)
    g_error ("cowscope_ring_new: %s", error.message);
  return ring;
}

/* A second mapping of @ring through its fd, or the test aborts. */
static CowscopeRing *
ring_map_or_fail (CowscopeRing *ring)
{
  CowError error = { 0 };
  CowscopeRing *other = cowscope_ring_map_fd (cowscope_ring_get_fd (ring),
                                              &error);
  if (other == NULL)
    g_error ("cowscope_ring_map_fd: %s", error.message);
  return other;
}

/* Reads every published record, checking each payload and that sequence
 * numbers increase; returns how many were read.  *next_seq is the lowest
 * sequence number the next record may have (updated); *gaps counts
 * skipped numbers. */
static uint64_t
drain_checked (CowscopeRing *ring, uint64_t *next_seq, uint64_t *gaps)
{
  uint64_t n = 0;
  for (;;)
    {
      CowscopeRingRecord record;
      CowError error = { 0 };
      CowscopeRingReadResult r = cowscope_ring_peek (ring, &record, &error);
      if (r == COWSCOPE_RING_READ_EMPTY)
        return n;
      if (r != COWSCOPE_RING_READ_RECORD)
        g_error ("peek: %s", error.message);
      uint64_t seq = 0;
      if (!payload_check (record.payload, record.size, &seq))
        g_error ("torn or corrupted record at position %" G_GUINT64_FORMAT,
                 record.position);
      g_assert_cmpuint (record.kind, ==, payload_kind (record.size));
      g_assert_cmpuint (seq, >=, *next_seq);
      if (gaps != NULL)
        *gaps += seq - *next_seq;
      else
        g_assert_cmpuint (seq, ==, *next_seq);
      *next_seq = seq + 1;
      cowscope_ring_advance (ring, &record);
      n++;
    }
}

/* ------------------------------------------------------------------ */

/* Creation: defaults, a sealed close-on-exec memfd, the producer's ids,
 * flags, and clear errors for bad capacities and policies. */
static void
test_create (void)
{
  CowError error = { 0 };
  CowscopeRing *ring = cowscope_ring_new (0, COWSCOPE_RING_DROP, &error);
  g_assert_nonnull (ring);
  g_assert_cmpuint (cowscope_ring_get_capacity (ring), ==,
                    COWSCOPE_RING_DEFAULT_CAPACITY);
  g_assert_cmpint (cowscope_ring_get_policy (ring), ==, COWSCOPE_RING_DROP);
  g_assert_cmpuint (cowscope_ring_get_max_payload (ring), ==,
                    COWSCOPE_RING_DEFAULT_CAPACITY - 8);

  int fd = cowscope_ring_get_fd (ring);
  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (fcntl (fd, F_GETFD) & FD_CLOEXEC, !=, 0);
  int seals = fcntl (fd, F_GET_SEALS);
  g_assert_cmpint (seals & F_SEAL_SHRINK, !=, 0);
  g_assert_cmpint (ftruncate (fd, 4096), ==, -1);

  CowscopeRingStats stats;
  cowscope_ring_get_stats (ring, &stats);
  g_assert_cmpuint (stats.producer_pid, ==, (guint) getpid ());
  g_assert_cmpuint (stats.producer_tid, ==, (guint) gettid ());
  g_assert_cmpuint (stats.produced, ==, 0);
  g_assert_cmpuint (stats.flags, ==, 0);
  /* A mapping keeps no fd; a producer may close its own once sent. */
  CowscopeRing *reader = ring_map_or_fail (ring);
  g_assert_cmpint (cowscope_ring_get_fd (reader), ==, -1);
  cowscope_ring_free (reader);
  cowscope_ring_close_fd (ring);
  g_assert_cmpint (cowscope_ring_get_fd (ring), ==, -1);
  g_assert_cmpint (fcntl (fd, F_GETFD), ==, -1);
  cowscope_ring_set_producer (ring, 11, 12);
  cowscope_ring_finish (ring);
  cowscope_ring_get_stats (ring, &stats);
  g_assert_cmpuint (stats.producer_pid, ==, 11);
  g_assert_cmpuint (stats.producer_tid, ==, 12);
  g_assert_cmpuint (stats.flags, ==, COWSCOPE_RING_FLAG_FINISHED);
  cowscope_ring_free (ring);
  cowscope_ring_free (NULL);

  static const uint64_t bad[] = { 3000, 12288, 2048, (uint64_t) 1 << 40 };
  for (size_t i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      error = (CowError) { 0 };
      g_assert_null (cowscope_ring_new (bad[i], COWSCOPE_RING_BLOCK, &error));
      g_assert_cmpint (error.code, ==, COW_ERROR_INVALID_ARGUMENT);
      g_assert_nonnull (strstr (error.message, "power of two"));
    }
  g_assert_null (cowscope_ring_new (PAGE, (CowscopeRingPolicy) 7, &error));
  g_assert_nonnull (strstr (error.message, "policy"));
  /* NULL error is allowed. */
  g_assert_null (cowscope_ring_new (3, COWSCOPE_RING_DROP, NULL));
}

/* Records of every kind and many sizes come back in order, intact,
 * through a second mapping, across hundreds of wraps of a one-page ring;
 * both consumer APIs. */
static void
test_round_trip_wraps (void)
{
  CowscopeRing *ring = ring_new_or_fail (PAGE, COWSCOPE_RING_DROP);
  CowscopeRing *reader = ring_map_or_fail (ring);
  GRand *rand = g_rand_new_with_seed (42);
  size_t max = 500;
  uint64_t seq = 0, next = 0, bytes = 0, strings = 0, read_strings = 0;
  size_t buf_size = cowscope_ring_get_max_payload (reader);
  uint8_t *buf = g_malloc (buf_size);

  while (bytes < 300 * (uint64_t) PAGE)
    {
      /* At most 7 records of <= 8 + 504 bytes: always fits in a page. */
      int batch = g_rand_int_range (rand, 1, 8);
      for (int i = 0; i < batch; i++)
        {
          if (i == 0 && batch % 3 == 0)
            {
              char text[64];
              int len = g_snprintf (text, sizeof text, "tensor-%" G_GUINT64_FORMAT,
                                    strings);
              g_assert_true (cowscope_ring_write_string (ring, strings, text,
                                                         (size_t) len));
              strings++;
              bytes += 8 + ((8 + len + 7) & ~7);
              continue;
            }
          g_assert_true (write_seq (ring, seq, max));
          bytes += 8 + ((payload_size (seq, max) + 7) & ~(size_t) 7);
          seq++;
        }

      gboolean use_read = g_rand_boolean (rand);
      for (;;)
        {
          CowscopeRingRecord record;
          CowError error = { 0 };
          CowscopeRingReadResult r;
          if (use_read)
            r = cowscope_ring_read (reader, &record, buf, buf_size, &error);
          else
            r = cowscope_ring_peek (reader, &record, &error);
          if (r == COWSCOPE_RING_READ_EMPTY)
            break;
          g_assert_cmpint (r, ==, COWSCOPE_RING_READ_RECORD);
          g_assert_cmpuint ((uintptr_t) record.payload % 8, ==, 0);
          if (record.kind == COWSCOPE_RING_KIND_STRING)
            {
              uint64_t id;
              char expect[64];
              memcpy (&id, record.payload, sizeof id);
              g_assert_cmpuint (id, ==, read_strings);
              int len = g_snprintf (expect, sizeof expect,
                                    "tensor-%" G_GUINT64_FORMAT, id);
              g_assert_cmpuint (record.size, ==, 8 + (size_t) len);
              g_assert_cmpmem ((const char *) record.payload + 8, len, expect, len);
              read_strings++;
            }
          else
            {
              uint64_t got;
              g_assert_true (payload_check (record.payload, record.size, &got));
              g_assert_cmpuint (got, ==, next);
              g_assert_cmpuint (record.kind, ==, payload_kind (record.size));
              next++;
            }
          if (!use_read)
            cowscope_ring_advance (reader, &record);
        }
      g_assert_cmpuint (next, ==, seq);
      g_assert_cmpuint (read_strings, ==, strings);
    }

  CowscopeRingStats stats;
  cowscope_ring_get_stats (reader, &stats);
  g_assert_cmpuint (stats.produced, ==, seq + strings);
  g_assert_cmpuint (stats.consumed, ==, seq + strings);
  g_assert_cmpuint (stats.dropped, ==, 0);
  g_assert_cmpuint (stats.pending_bytes, ==, 0);

  g_free (buf);
  g_rand_free (rand);
  cowscope_ring_free (reader);
  cowscope_ring_free (ring);
}

/* A ring fills to its last byte; one byte more is dropped and counted;
 * consuming one record makes exactly its room. */
static void
test_fill_exact (void)
{
  CowscopeRing *ring = ring_new_or_fail (PAGE, COWSCOPE_RING_DROP);
  uint64_t n_events = PAGE / 72;
  uint64_t rest = PAGE - n_events * 72;
  CowTraceEvent event = { .type = COW_EVENT_MARK };
  uint8_t zeros[128] = { 0 };

  for (uint64_t i = 0; i < n_events; i++)
    {
      event.v[0] = i;
      g_assert_true (cowscope_ring_write_event (ring, &event));
    }
  g_assert_cmpuint (rest, >=, 8);
  g_assert_true (cowscope_ring_write (ring, COWSCOPE_RING_KIND_BLOB, zeros,
                                      rest - 8));
  g_assert_false (cowscope_ring_write (ring, COWSCOPE_RING_KIND_BLOB, zeros, 0));
  g_assert_false (cowscope_ring_write_event (ring, &event));

  CowscopeRingStats stats;
  cowscope_ring_get_stats (ring, &stats);
  g_assert_cmpuint (stats.dropped, ==, 2);
  g_assert_cmpuint (stats.produced, ==, n_events + 1 + 2);
  g_assert_cmpuint (stats.pending_bytes, ==, PAGE);

  CowscopeRingRecord record;
  g_assert_cmpint (cowscope_ring_peek (ring, &record, NULL), ==,
                   COWSCOPE_RING_READ_RECORD);
  g_assert_cmpuint (record.kind, ==, COWSCOPE_RING_KIND_EVENT);
  g_assert_cmpuint (((const CowTraceEvent *) record.payload)->v[0], ==, 0);
  cowscope_ring_advance (ring, &record);
  /* Advancing a stale record again is a no-op. */
  cowscope_ring_advance (ring, &record);
  event.v[0] = 999;
  g_assert_true (cowscope_ring_write_event (ring, &event));
  g_assert_false (cowscope_ring_write (ring, COWSCOPE_RING_KIND_BLOB, zeros, 0));

  /* Drain: n_events - 1 events, the blob, then the wrapped event. */
  uint64_t seen = 0;
  while (cowscope_ring_peek (ring, &record, NULL) == COWSCOPE_RING_READ_RECORD)
    {
      if (seen < n_events - 1)
        g_assert_cmpuint (((const CowTraceEvent *) record.payload)->v[0], ==,
                          seen + 1);
      else if (seen == n_events - 1)
        g_assert_cmpuint (record.size, ==, rest - 8);
      else
        g_assert_cmpuint (((const CowTraceEvent *) record.payload)->v[0], ==, 999);
      cowscope_ring_advance (ring, &record);
      seen++;
    }
  g_assert_cmpuint (seen, ==, n_events + 1);
  cowscope_ring_get_stats (ring, &stats);
  g_assert_cmpuint (stats.produced, ==, stats.consumed + stats.dropped);
  cowscope_ring_free (ring);
}

/* Oversized payloads and invalid kinds are dropped and counted; a payload
 * of exactly the maximum fits an empty ring. */
static void
test_oversized (void)
{
  CowscopeRing *ring = ring_new_or_fail (PAGE, COWSCOPE_RING_BLOCK);
  size_t max = cowscope_ring_get_max_payload (ring);
  uint8_t *buf = g_malloc0 (max + 8);
  g_assert_false (cowscope_ring_write (ring, COWSCOPE_RING_KIND_BLOB, buf, max + 1));
  g_assert_false (cowscope_ring_write (ring, COWSCOPE_RING_KIND_INVALID, buf, 8));
  g_assert_false (cowscope_ring_write (ring, (CowscopeRingKind) 99, buf, 8));
  g_assert_true (cowscope_ring_write (ring, COWSCOPE_RING_KIND_BLOB, buf, max));

  CowscopeRingStats stats;
  cowscope_ring_get_stats (ring, &stats);
  g_assert_cmpuint (stats.dropped, ==, 3);
  g_assert_cmpuint (stats.produced, ==, 4);

  CowscopeRingRecord record;
  CowError error = { 0 };
  g_assert_cmpint (cowscope_ring_read (ring, &record, buf, max - 1, &error), ==,
                   COWSCOPE_RING_READ_ERROR);
  g_assert_nonnull (strstr (error.message, "smaller than"));
  g_assert_cmpint (cowscope_ring_read (ring, &record, buf, max, &error), ==,
                   COWSCOPE_RING_READ_RECORD);
  g_assert_cmpuint (record.size, ==, max);
  g_free (buf);
  cowscope_ring_free (ring);
}

/* A reserved but uncommitted record is invisible; committing publishes
 * it. */
static void
test_reserve_commit (void)
{
  CowscopeRing *ring = ring_new_or_fail (PAGE, COWSCOPE_RING_DROP);
  CowscopeRing *reader = ring_map_or_fail (ring);
  CowscopeRingRecord record;

  uint8_t *dst = cowscope_ring_reserve (ring, COWSCOPE_RING_KIND_BLOB, 100);
  g_assert_nonnull (dst);
  g_assert_cmpuint ((uintptr_t) dst % 8, ==, 0);
  memset (dst, 0xab, 50);
  g_assert_cmpint (cowscope_ring_peek (reader, &record, NULL), ==,
                   COWSCOPE_RING_READ_EMPTY);
  memset (dst + 50, 0xcd, 50);
  cowscope_ring_commit (ring);
  g_assert_cmpint (cowscope_ring_peek (reader, &record, NULL), ==,
                   COWSCOPE_RING_READ_RECORD);
  g_assert_cmpuint (record.size, ==, 100);
  g_assert_cmpuint (((const uint8_t *) record.payload)[99], ==, 0xcd);
  cowscope_ring_advance (reader, &record);

  g_assert_nonnull (cowscope_ring_reserve (ring, COWSCOPE_RING_KIND_BLOB, 0));
  cowscope_ring_commit (ring);
  g_assert_cmpint (cowscope_ring_peek (reader, &record, NULL), ==,
                   COWSCOPE_RING_READ_RECORD);
  g_assert_cmpuint (record.size, ==, 0);
  cowscope_ring_advance (reader, &record);
  g_assert_cmpint (cowscope_ring_peek (reader, &record, NULL), ==,
                   COWSCOPE_RING_READ_EMPTY);

  /* A commit with nothing reserved publishes and counts nothing. */
  cowscope_ring_commit (ring);
  g_assert_null (cowscope_ring_reserve (ring, COWSCOPE_RING_KIND_BLOB, PAGE));
  cowscope_ring_commit (ring);
  g_assert_cmpint (cowscope_ring_peek (reader, &record, NULL), ==,
                   COWSCOPE_RING_READ_EMPTY);
  CowscopeRingStats stats;
  cowscope_ring_get_stats (reader, &stats);
  g_assert_cmpuint (stats.produced, ==, 3);
  g_assert_cmpuint (stats.dropped, ==, 1);
  cowscope_ring_free (reader);
  cowscope_ring_free (ring);
}

/* A writer thread for the BLOCK-mode tests: one EVENT write into a full
 * ring, its result, and whether it has returned. */
typedef struct {
  CowscopeRing *ring;
  gint returned;
  gboolean stored;
} BlockedWriter;

static gpointer
blocked_writer_thread (gpointer data)
{
  BlockedWriter *w = data;
  CowTraceEvent event = { .type = COW_EVENT_MARK, .time_ns = 42 };
  w->stored = cowscope_ring_write_event (w->ring, &event);
  g_atomic_int_set (&w->returned, 1);
  return NULL;
}

/* Fills @ring with EVENT records until the next one would not fit;
 * returns how many were written. */
static uint64_t
fill_with_events (CowscopeRing *ring)
{
  CowTraceEvent event = { .type = COW_EVENT_MARK };
  uint64_t n = cowscope_ring_get_capacity (ring) / 72;
  for (uint64_t i = 0; i < n; i++)
    g_assert_true (cowscope_ring_write_event (ring, &event));
  return n;
}

/* Starts a writer on the full @ring and checks, after a while, that it
 * is still waiting.  The wait is deliberately long compared with any
 * give-up timeout a writer could have; a writer that returns early is a
 * failure whatever the machine's load, and a slow machine only makes the
 * check weaker, never wrong. */
static GThread *
start_blocked_writer (BlockedWriter *w, CowscopeRing *ring)
{
  *w = (BlockedWriter) { .ring = ring };
  GThread *thread = g_thread_new ("blocked-writer", blocked_writer_thread, w);
  g_usleep (200 * 1000);
  g_assert_cmpint (g_atomic_int_get (&w->returned), ==, 0);
  return thread;
}

/* BLOCK mode never gives up while the consumer is there: a writer on a
 * full ring waits (no time limit) until the consumer makes room, and then
 * stores its record; nothing is dropped. */
static void
test_block_waits_for_consumer (void)
{
  CowscopeRing *ring = ring_new_or_fail (PAGE, COWSCOPE_RING_BLOCK);
  CowscopeRing *reader = ring_map_or_fail (ring);
  cowscope_ring_attach (reader);
  uint64_t stored = fill_with_events (ring);

  BlockedWriter w;
  GThread *thread = start_blocked_writer (&w, ring);
  CowscopeRingRecord record;
  g_assert_cmpint (cowscope_ring_peek (reader, &record, NULL), ==,
                   COWSCOPE_RING_READ_RECORD);
  cowscope_ring_advance (reader, &record);
  g_thread_join (thread);
  g_assert_true (w.stored);

  CowscopeRingStats stats;
  cowscope_ring_get_stats (reader, &stats);
  g_assert_cmpuint (stats.dropped, ==, 0);
  g_assert_cmpuint (stats.produced, ==, stored + 1);
  g_assert_cmpuint (stats.events_produced, ==, stored + 1);
  g_assert_cmpuint (stats.consumer_state, ==, COWSCOPE_RING_CONSUMER_ATTACHED);
  g_assert_cmpuint (stats.gone_reason, ==, COWSCOPE_RING_GONE_NONE);
  cowscope_ring_free (reader);
  cowscope_ring_free (ring);
}

/* BLOCK mode stops waiting once the consumer detaches: the waiting write
 * is dropped and counted, the header says why, and later writes to the
 * full ring drop at once instead of waiting again. */
static void
test_block_consumer_detached (void)
{
  CowscopeRing *ring = ring_new_or_fail (PAGE, COWSCOPE_RING_BLOCK);
  CowscopeRing *reader = ring_map_or_fail (ring);
  cowscope_ring_attach (reader);
  uint64_t stored = fill_with_events (ring);

  BlockedWriter w;
  GThread *thread = start_blocked_writer (&w, ring);
  cowscope_ring_detach (reader);
  g_thread_join (thread);
  g_assert_false (w.stored);
  g_assert_cmpint (cowscope_ring_get_gone_reason (ring), ==,
                   COWSCOPE_RING_GONE_DETACHED);

  CowTraceEvent event = { .type = COW_EVENT_MARK };
  g_assert_false (cowscope_ring_write_event (ring, &event));

  CowscopeRingStats stats;
  cowscope_ring_get_stats (reader, &stats);
  g_assert_cmpuint (stats.dropped, ==, 2);
  g_assert_cmpuint (stats.events_dropped, ==, 2);
  g_assert_cmpuint (stats.produced, ==, stored + 2);
  g_assert_cmpuint (stats.gone_reason, ==, COWSCOPE_RING_GONE_DETACHED);
  g_assert_cmpuint (stats.consumer_state, ==, COWSCOPE_RING_CONSUMER_DETACHED);
  cowscope_ring_free (reader);
  cowscope_ring_free (ring);
}

static bool
flag_says_alive (void *data)
{
  return g_atomic_int_get ((gint *) data) == 0;
}

/* BLOCK mode stops waiting when the producer's liveness check says the
 * consumer is gone (in the probe: the recorder's socket hung up), and
 * says so in the header. */
static void
test_block_liveness_check (void)
{
  CowscopeRing *ring = ring_new_or_fail (PAGE, COWSCOPE_RING_BLOCK);
  gint gone = 0;
  cowscope_ring_set_liveness_check (ring, flag_says_alive, &gone);
  uint64_t stored = fill_with_events (ring);

  BlockedWriter w;
  GThread *thread = start_blocked_writer (&w, ring);
  g_atomic_int_set (&gone, 1);
  g_thread_join (thread);
  g_assert_false (w.stored);
  g_assert_cmpint (cowscope_ring_get_gone_reason (ring), ==,
                   COWSCOPE_RING_GONE_HUNG_UP);

  CowscopeRingStats stats;
  cowscope_ring_get_stats (ring, &stats);
  g_assert_cmpuint (stats.dropped, ==, 1);
  g_assert_cmpuint (stats.produced, ==, stored + 1);
  g_assert_cmpuint (stats.gone_reason, ==, COWSCOPE_RING_GONE_HUNG_UP);
  cowscope_ring_free (ring);
}

/* Events are counted apart from the other records, on both sides, and
 * the books balance for each: produced = consumed + dropped. */
static void
test_event_counters (void)
{
  CowscopeRing *ring = ring_new_or_fail (PAGE, COWSCOPE_RING_DROP);
  CowscopeRing *reader = ring_map_or_fail (ring);
  CowTraceEvent event = { .type = COW_EVENT_MARK };
  uint8_t blob[200] = { 0 };

  g_assert_true (cowscope_ring_write_event (ring, &event));
  g_assert_true (cowscope_ring_write_string (ring, 7, "seven", 5));
  g_assert_true (cowscope_ring_write (ring, COWSCOPE_RING_KIND_BLOB, blob, sizeof blob));
  g_assert_true (cowscope_ring_write (ring, COWSCOPE_RING_KIND_EVENT, &event, sizeof event));
  /* Fill the ring with events until they drop, then a string larger
   * than what is left drops too. */
  uint64_t events = 2, event_drops = 0;
  while (cowscope_ring_write_event (ring, &event))
    events++;
  event_drops++;
  g_assert_false (cowscope_ring_write_string (ring, 8, (const char *) blob, sizeof blob));

  CowscopeRingRecord record;
  uint64_t read_events = 0, read_records = 0;
  while (cowscope_ring_peek (reader, &record, NULL) == COWSCOPE_RING_READ_RECORD)
    {
      read_events += record.kind == COWSCOPE_RING_KIND_EVENT;
      read_records++;
      cowscope_ring_advance (reader, &record);
    }

  CowscopeRingStats stats;
  cowscope_ring_get_stats (reader, &stats);
  g_assert_cmpuint (read_events, ==, events);
  g_assert_cmpuint (stats.events_consumed, ==, events);
  g_assert_cmpuint (stats.events_dropped, ==, event_drops);
  g_assert_cmpuint (stats.events_produced, ==, events + event_drops);
  g_assert_cmpuint (stats.consumed, ==, read_records);
  g_assert_cmpuint (stats.dropped, ==, event_drops + 1);
  g_assert_cmpuint (stats.produced, ==, read_records + event_drops + 1);
  cowscope_ring_free (reader);
  cowscope_ring_free (ring);
}

/* A ring is drained once its producer finished it and every record it
 * published was consumed, never before. */
static void
test_drained (void)
{
  CowscopeRing *ring = ring_new_or_fail (PAGE, COWSCOPE_RING_DROP);
  CowscopeRing *reader = ring_map_or_fail (ring);
  CowTraceEvent event = { .type = COW_EVENT_MARK };
  CowscopeRingRecord record;

  g_assert_false (cowscope_ring_drained (reader)); /* not finished */
  g_assert_true (cowscope_ring_write_event (ring, &event));
  cowscope_ring_finish (ring);
  g_assert_false (cowscope_ring_drained (reader)); /* a record left */
  g_assert_cmpint (cowscope_ring_peek (reader, &record, NULL), ==, COWSCOPE_RING_READ_RECORD);
  g_assert_false (cowscope_ring_drained (reader)); /* peeked, not consumed */
  cowscope_ring_advance (reader, &record);
  g_assert_true (cowscope_ring_drained (reader));
  cowscope_ring_free (reader);
  cowscope_ring_free (ring);
}

/* What a producer tells the consumer about itself: its name, when its
 * set-up finished, and for a process's counter ring the records of
 * threads that had no ring. */
static void
test_producer_identity (void)
{
  CowscopeRing *ring = ring_new_or_fail (PAGE, COWSCOPE_RING_DROP);
  CowscopeRing *reader = ring_map_or_fail (ring);
  CowscopeRingStats stats;

  cowscope_ring_get_stats (reader, &stats);
  g_assert_cmpint (stats.ready_ns, ==, 0);
  g_assert_cmpstr (stats.name, ==, "");
  g_assert_cmpuint (stats.orphan_produced, ==, 0);

  cowscope_ring_set_name (ring, "worker-with-a-very-long-name");
  int64_t before = g_get_monotonic_time () * 1000;
  cowscope_ring_mark_ready (ring);
  cowscope_ring_get_stats (reader, &stats);
  g_assert_cmpstr (stats.name, ==, "worker-with-a-v");
  g_assert_cmpint (stats.ready_ns, >=, before);
  g_assert_cmpuint (stats.orphan_produced, ==, 0);

  cowscope_ring_set_name (ring, "w2");
  cowscope_ring_set_process_counters (ring);
  cowscope_ring_count_orphan (ring, TRUE);
  cowscope_ring_count_orphan (ring, FALSE);
  cowscope_ring_get_stats (reader, &stats);
  g_assert_cmpstr (stats.name, ==, "w2");
  g_assert_cmpuint (stats.flags & COWSCOPE_RING_FLAG_PROCESS_COUNTERS, !=, 0);
  g_assert_cmpuint (stats.orphan_produced, ==, 2);
  g_assert_cmpuint (stats.orphan_events_produced, ==, 1);
  cowscope_ring_free (reader);
  cowscope_ring_free (ring);
}

/* ------------------------------------------------------------------ */
/* Concurrency (also run under ThreadSanitizer)                        */
/* ------------------------------------------------------------------ */

typedef struct {
  CowscopeRing *ring;
  uint64_t n;
  size_t max;
  uint64_t stored;
  uint64_t dropped;
  gint done;
} Producer;

/* Writes p->n self-checking records, counting stored and dropped, then
 * sets p->done. */
static gpointer
producer_thread (gpointer data)
{
  Producer *p = data;
  for (uint64_t seq = 0; seq < p->n; seq++)
    {
      if (write_seq (p->ring, seq, p->max))
        p->stored++;
      else
        p->dropped++;
    }
  g_atomic_int_set (&p->done, 1);
  return NULL;
}

/* Consumes until the producer is done and the ring is empty; sleeps a
 * little every @slow records (0: never). */
static uint64_t
consume_all (CowscopeRing *reader, Producer *p, guint slow, uint64_t *gaps)
{
  uint64_t next = 0, n_read = 0;
  for (;;)
    {
      gboolean done = g_atomic_int_get (&p->done);
      uint64_t n = 0;
      /* Read in slices so the slow consumer really sleeps between them. */
      do
        {
          uint64_t got = drain_checked (reader, &next, gaps);
          n += got;
          if (got == 0)
            break;
        }
      while (slow == 0);
      n_read += n;
      if (done && n == 0)
        return n_read;
      if (slow != 0)
        g_usleep (200);
      else if (n == 0)
        g_thread_yield ();
    }
}

/* A producer far faster than the consumer in DROP mode: every stored
 * record intact and in order, produced == stored + dropped exactly, and
 * the dropped records are exactly the missing sequence numbers. */
static void
test_concurrency_drop (void)
{
  CowscopeRing *ring = ring_new_or_fail (16 * PAGE, COWSCOPE_RING_DROP);
  /* One handle shared by both threads (one producing, one consuming), so
   * ThreadSanitizer sees both sides at the same addresses. */
  Producer p = { .ring = ring, .n = 400000, .max = 300 };
  GThread *thread = g_thread_new ("producer", producer_thread, &p);
  uint64_t gaps = 0;
  uint64_t n_read = consume_all (ring, &p, 1, &gaps);
  g_thread_join (thread);

  CowscopeRingStats stats;
  cowscope_ring_get_stats (ring, &stats);
  g_test_message ("stored %" G_GUINT64_FORMAT " dropped %" G_GUINT64_FORMAT,
                  p.stored, p.dropped);
  g_assert_cmpuint (p.stored + p.dropped, ==, p.n);
  g_assert_cmpuint (n_read, ==, p.stored);
  g_assert_cmpuint (stats.consumed, ==, p.stored);
  g_assert_cmpuint (stats.dropped, ==, p.dropped);
  g_assert_cmpuint (stats.produced, ==, p.n);
  g_assert_cmpuint (stats.produced, ==, stats.consumed + stats.dropped);
  /* Missing sequence numbers are the drops (the tail's too). */
  g_assert_cmpuint (gaps, <=, p.dropped);
  g_assert_cmpuint (p.dropped, >, 0);
  cowscope_ring_free (ring);
}

/* BLOCK mode with a consumer that keeps up: nothing is lost, every
 * sequence number arrives once, in order.  Once with the consumer on its
 * own mapping (as the recorder is), once on the producer's handle (so
 * ThreadSanitizer sees both sides at the same addresses). */
static void
test_concurrency_block (void)
{
  for (int shared_handle = 0; shared_handle < 2; shared_handle++)
    {
      CowscopeRing *ring = ring_new_or_fail (4 * PAGE, COWSCOPE_RING_BLOCK);
      CowscopeRing *reader = shared_handle ? ring : ring_map_or_fail (ring);
      Producer p = { .ring = ring, .n = 200000, .max = 700 };
      GThread *thread = g_thread_new ("producer", producer_thread, &p);
      uint64_t n_read = consume_all (reader, &p, 0, NULL);
      g_thread_join (thread);

      CowscopeRingStats stats;
      cowscope_ring_get_stats (reader, &stats);
      g_assert_cmpuint (p.dropped, ==, 0);
      g_assert_cmpuint (n_read, ==, p.n);
      g_assert_cmpuint (stats.dropped, ==, 0);
      g_assert_cmpuint (stats.produced, ==, p.n);
      g_assert_cmpuint (stats.consumed, ==, p.n);
      if (reader != ring)
        cowscope_ring_free (reader);
      cowscope_ring_free (ring);
    }
}

/* ------------------------------------------------------------------ */
/* Crash safety                                                        */
/* ------------------------------------------------------------------ */

/* Shared with the forked child: what it knows it completed. */
typedef struct {
  _Atomic uint64_t stored;  /* writes that returned true */
  _Atomic uint64_t dropped; /* writes that returned false */
  _Atomic int stage;
} ChildReport;

/* A zeroed report in memory shared with forked children. */
static ChildReport *
child_report_new (void)
{
  ChildReport *report = mmap (NULL, sizeof *report, PROT_READ | PROT_WRITE,
                              MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  g_assert_true (report != MAP_FAILED);
  memset (report, 0, sizeof *report);
  return report;
}

/* A forked writer never outlives a test that failed before killing it. */
static void
child_dies_with_parent (void)
{
  prctl (PR_SET_PDEATHSIG, SIGKILL);
}

/* Child: writes self-checking records forever, reporting each finished
 * write (after the call returns, so a kill can land between the ring's
 * publication and the report). */
static G_NORETURN void
child_write_forever (CowscopeRing *ring, ChildReport *report)
{
  child_dies_with_parent ();
  for (uint64_t seq = 0;; seq++)
    {
      gboolean ok;
      if (seq % 2 == 0)
        ok = write_seq (ring, seq, 2000);
      else
        {
          /* Built in place: a kill during the fill lands inside a
           * reserved, unpublished record. */
          size_t size = payload_size (seq, 2000);
          uint8_t *dst = cowscope_ring_reserve (ring, payload_kind (size), size);
          if ((ok = dst != NULL))
            {
              payload_fill (dst, seq, size);
              cowscope_ring_commit (ring);
            }
        }
      /* Release: the parent reads the counts only after waitpid(), which
       * already orders; release keeps the report after the write. */
      if (ok)
        atomic_fetch_add_explicit (&report->stored, 1, memory_order_release);
      else
        atomic_fetch_add_explicit (&report->dropped, 1, memory_order_release);
    }
}

/* A child writing records is SIGKILLed at several points of its progress
 * (some while the parent drains concurrently, so the ring wraps many
 * times; some with the ring filling up and dropping).  The parent reads
 * back every record the child completed, at most one more (published,
 * not yet reported), none torn, and produced = stored + dropped. */
static void
test_crash_sigkill (void)
{
  /* Kill once the child has finished this many writes (0: at once),
   * plus a few microseconds so the kill lands anywhere in a write. */
  static const struct {
    uint64_t after;
    gboolean drain;
  } points[] = {
    { 0, FALSE }, { 1, FALSE }, { 7, FALSE }, { 60, FALSE }, { 300, FALSE },
    { 1500, FALSE }, { 3000, FALSE }, { 6000, FALSE }, { 20000, FALSE },
    { 0, TRUE }, { 5, TRUE }, { 100, TRUE }, { 2000, TRUE }, { 10000, TRUE },
    { 40000, TRUE }, { 100000, TRUE },
  };
  GRand *rand = g_rand_new_with_seed (7);
  for (guint round = 0; round < G_N_ELEMENTS (points); round++)
    {
      uint64_t after = points[round].after;
      gboolean drain_while_running = points[round].drain;
      guint delay = (guint) g_rand_int_range (rand, 0, 30);
      CowscopeRing *ring = ring_new_or_fail (1024 * PAGE, COWSCOPE_RING_DROP);
      CowscopeRing *reader = ring_map_or_fail (ring);
      ChildReport *report = child_report_new ();

      pid_t pid = fork ();
      g_assert_cmpint (pid, >=, 0);
      if (pid == 0)
        child_write_forever (ring, report);

      uint64_t next = 0, gaps = 0, n_read = 0;
      gint64 give_up = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;
      while (after > 0
             && atomic_load_explicit (&report->stored, memory_order_relaxed)
                    + atomic_load_explicit (&report->dropped, memory_order_relaxed)
                  < after
             && g_get_monotonic_time () < give_up)
        {
          if (drain_while_running)
            n_read += drain_checked (reader, &next, &gaps);
          else
            g_thread_yield ();
        }
      if (after > 0 && delay > 0)
        g_usleep (delay);
      kill (pid, SIGKILL);
      int status = 0;
      g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
      g_assert_true (WIFSIGNALED (status));
      g_assert_cmpint (WTERMSIG (status), ==, SIGKILL);

      n_read += drain_checked (reader, &next, &gaps);
      uint64_t stored = atomic_load_explicit (&report->stored, memory_order_acquire);
      uint64_t dropped = atomic_load_explicit (&report->dropped, memory_order_acquire);
      CowscopeRingStats stats;
      cowscope_ring_get_stats (reader, &stats);
      g_test_message ("kill after %" G_GUINT64_FORMAT " writes + %u us%s: "
                      "child stored %" G_GUINT64_FORMAT " dropped %"
                      G_GUINT64_FORMAT ", read %" G_GUINT64_FORMAT,
                      after, delay, drain_while_running ? " (draining)" : "",
                      stored, dropped, n_read);

      g_assert_cmpuint (n_read, >=, stored);
      g_assert_cmpuint (n_read, <=, stored + 1);
      g_assert_cmpuint (stats.dropped, >=, dropped);
      g_assert_cmpuint (stats.dropped, <=, dropped + 1);
      g_assert_cmpuint (stats.consumed, ==, n_read);
      g_assert_cmpuint (stats.produced, ==, n_read + stats.dropped);
      /* Every attempt up to the last read record is accounted for. */
      g_assert_cmpuint (gaps, <=, stats.dropped);

      munmap (report, sizeof *report);
      cowscope_ring_free (reader);
      cowscope_ring_free (ring);
    }
  g_rand_free (rand);
}

/* A child killed in the middle of writing a record (reserved, half
 * copied): the records before it are all there, the torn one never
 * appears. */
static void
test_crash_torn_record (void)
{
  CowscopeRing *ring = ring_new_or_fail (PAGE, COWSCOPE_RING_DROP);
  ChildReport *report = child_report_new ();
  pid_t pid = fork ();
  g_assert_cmpint (pid, >=, 0);
  if (pid == 0)
    {
      child_dies_with_parent ();
      for (uint64_t seq = 0; seq < 10; seq++)
        write_seq (ring, seq, 200);
      uint8_t *dst = cowscope_ring_reserve (ring, COWSCOPE_RING_KIND_BLOB, 1000);
      if (dst != NULL)
        memset (dst, 0x5a, 500);
      atomic_store_explicit (&report->stage, 1, memory_order_release);
      raise (SIGKILL);
      _exit (1);
    }
  int status = 0;
  g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
  g_assert_true (WIFSIGNALED (status));
  g_assert_cmpint (atomic_load_explicit (&report->stage, memory_order_acquire),
                   ==, 1);

  uint64_t next = 0;
  g_assert_cmpuint (drain_checked (ring, &next, NULL), ==, 10);
  CowscopeRingStats stats;
  cowscope_ring_get_stats (ring, &stats);
  g_assert_cmpuint (stats.produced, ==, 10);
  g_assert_cmpuint (stats.dropped, ==, 0);
  g_assert_cmpuint (stats.flags & COWSCOPE_RING_FLAG_FINISHED, ==, 0);
  munmap (report, sizeof *report);
  cowscope_ring_free (ring);
}

/* ------------------------------------------------------------------ */
/* Bad and damaged ring files                                          */
/* ------------------------------------------------------------------ */

/* A memfd holding @len bytes of @bytes in a file of @size bytes, sealed
 * against shrinking when @seal. */
static int
make_fd (const void *bytes, size_t len, size_t size, gboolean seal)
{
  int fd = memfd_create ("bad-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (ftruncate (fd, (off_t) size), ==, 0);
  if (len > size)
    len = size;
  if (len > 0)
    g_assert_cmpint (pwrite (fd, bytes, len, 0), ==, (ssize_t) len);
  if (seal)
    g_assert_cmpint (fcntl (fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW), ==, 0);
  return fd;
}

/* Maps @fd expecting failure with @needle in the message. */
static void
assert_map_fails (int fd, const char *needle)
{
  CowError error = { 0 };
  CowscopeRing *ring = cowscope_ring_map_fd (fd, &error);
  if (ring != NULL)
    g_error ("mapping should fail with \"%s\"", needle);
  g_assert_cmpint (error.code, !=, COW_OK);
  if (strstr (error.message, needle) == NULL)
    g_error ("message \"%s\" lacks \"%s\"", error.message, needle);
  g_test_message ("refused: %s", error.message);
}

/* Every kind of bad fd is refused with a message naming the problem; a
 * faithful copy of a ring maps. */
static void
test_map_bad_fd (void)
{
  CowscopeRing *ring = ring_new_or_fail (PAGE, COWSCOPE_RING_DROP);
  size_t page = PAGE;
  guint8 *header = g_malloc0 (page);
  g_assert_cmpint (pread (cowscope_ring_get_fd (ring), header, page, 0), ==,
                   (ssize_t) page);
  CowscopeRingHeader *h = (CowscopeRingHeader *) header;
  int fd;

  /* A faithful copy maps. */
  fd = make_fd (header, page, 2 * page, TRUE);
  CowError error = { 0 };
  CowscopeRing *copy = cowscope_ring_map_fd (fd, &error);
  g_assert_nonnull (copy);
  g_assert_cmpuint (cowscope_ring_get_capacity (copy), ==, page);
  cowscope_ring_free (copy);
  close (fd);

  assert_map_fails (-1, "invalid ring fd");

  int pipe_fds[2];
  g_assert_cmpint (pipe (pipe_fds), ==, 0);
  assert_map_fails (pipe_fds[0], "not a memfd or regular file");
  close (pipe_fds[0]);
  close (pipe_fds[1]);

  fd = make_fd (header, page, 2 * page, FALSE);
  assert_map_fails (fd, "not a memfd sealed against shrinking");
  close (fd);

  fd = make_fd (NULL, 0, 0, TRUE);
  assert_map_fails (fd, "truncated");
  close (fd);

  fd = make_fd (header, 100, 100, TRUE);
  assert_map_fails (fd, "truncated");
  close (fd);

  /* Header intact, data area cut in half. */
  fd = make_fd (header, page, page + page / 2, TRUE);
  assert_map_fails (fd, "truncated or damaged");
  close (fd);

  guint8 *bad = g_memdup2 (header, page);
  CowscopeRingHeader *b = (CowscopeRingHeader *) bad;

  b->magic = 0x12345678;
  fd = make_fd (bad, page, 2 * page, TRUE);
  assert_map_fails (fd, "not a Cowscope ring");
  close (fd);

  memcpy (bad, header, page);
  b->version = 99;
  fd = make_fd (bad, page, 2 * page, TRUE);
  assert_map_fails (fd, "version 99 is not supported");
  close (fd);

  memcpy (bad, header, page);
  b->capacity = 3 * page;
  fd = make_fd (bad, page, 4 * page, TRUE);
  assert_map_fails (fd, "not a power of two");
  close (fd);

  memcpy (bad, header, page);
  b->capacity = 0;
  fd = make_fd (bad, page, page, TRUE);
  assert_map_fails (fd, "not a power of two");
  close (fd);

  memcpy (bad, header, page);
  b->capacity = (uint64_t) 1 << 40;
  fd = make_fd (bad, page, 2 * page, TRUE);
  assert_map_fails (fd, "not a power of two from");
  close (fd);

  memcpy (bad, header, page);
  b->header_size = 512;
  fd = make_fd (bad, page, 2 * page, TRUE);
  assert_map_fails (fd, "page size");
  close (fd);

  memcpy (bad, header, page);
  b->policy = 5;
  fd = make_fd (bad, page, 2 * page, TRUE);
  assert_map_fails (fd, "unknown policy");
  close (fd);

  (void) h;
  g_free (bad);
  g_free (header);
  cowscope_ring_free (ring);
}

/* A target that scribbles over its ring (head, or a record header) makes
 * the reader report an error, not crash or read out of bounds. */
static void
test_map_corrupt_contents (void)
{
  size_t page = PAGE;
  for (int variant = 0; variant < 4; variant++)
    {
      CowscopeRing *ring = ring_new_or_fail (page, COWSCOPE_RING_DROP);
      CowscopeRing *reader = ring_map_or_fail (ring);
      int fd = cowscope_ring_get_fd (ring);
      CowscopeRingHeader *h = mmap (NULL, page, PROT_READ | PROT_WRITE,
                                    MAP_SHARED, fd, 0);
      g_assert_true (h != MAP_FAILED);
      g_assert_true (write_seq (ring, 1, 100));

      const char *needle = NULL;
      CowscopeRingRecordHeader rec;
      g_assert_cmpint (pread (fd, &rec, sizeof rec, (off_t) page), ==, sizeof rec);
      switch (variant)
        {
        case 0:
          atomic_store (&h->head, 4 * page);
          needle = "inconsistent";
          break;
        case 1:
          atomic_store (&h->head, 3);
          needle = "inconsistent";
          break;
        case 2:
          rec.size = 100000;
          needle = "damaged ring record";
          break;
        case 3:
          rec.kind = 77;
          needle = "damaged ring record";
          break;
        }
      g_assert_cmpint (pwrite (fd, &rec, sizeof rec, (off_t) page), ==, sizeof rec);

      for (int again = 0; again < 2; again++)
        {
          CowscopeRingRecord record;
          CowError error = { 0 };
          g_assert_cmpint (cowscope_ring_peek (reader, &record, &error), ==,
                           COWSCOPE_RING_READ_ERROR);
          g_assert_nonnull (strstr (error.message, needle));
        }
      munmap (h, page);
      cowscope_ring_free (reader);
      cowscope_ring_free (ring);
    }
}

/* A consumer that moved tail beyond head (damaged header) makes the
 * producer drop rather than overwrite unread records. */
static void
test_producer_bad_tail (void)
{
  size_t page = PAGE;
  CowscopeRing *ring = ring_new_or_fail (page, COWSCOPE_RING_DROP);
  CowscopeRingHeader *h = mmap (NULL, page, PROT_READ | PROT_WRITE,
                                MAP_SHARED, cowscope_ring_get_fd (ring), 0);
  g_assert_true (h != MAP_FAILED);
  CowTraceEvent event = { 0 };
  uint64_t n = 0;
  while (cowscope_ring_write_event (ring, &event))
    n++;
  g_assert_cmpuint (n, ==, page / 72);
  atomic_store (&h->tail, (uint64_t) 1 << 50);
  g_assert_false (cowscope_ring_write_event (ring, &event));
  g_assert_cmpuint (atomic_load (&h->head), ==, n * 72);
  munmap (h, page);
  cowscope_ring_free (ring);
}

/* Runs the ring tests (GLib test framework; /ring/concurrency/ is also
 * run alone under ThreadSanitizer). */
int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/ring/create", test_create);
  g_test_add_func ("/ring/round-trip-wraps", test_round_trip_wraps);
  g_test_add_func ("/ring/fill-exact", test_fill_exact);
  g_test_add_func ("/ring/oversized", test_oversized);
  g_test_add_func ("/ring/reserve-commit", test_reserve_commit);
  g_test_add_func ("/ring/block/waits-for-consumer", test_block_waits_for_consumer);
  g_test_add_func ("/ring/block/consumer-detached", test_block_consumer_detached);
  g_test_add_func ("/ring/block/liveness-check", test_block_liveness_check);
  g_test_add_func ("/ring/event-counters", test_event_counters);
  g_test_add_func ("/ring/producer-identity", test_producer_identity);
  g_test_add_func ("/ring/drained", test_drained);
  g_test_add_func ("/ring/concurrency/drop", test_concurrency_drop);
  g_test_add_func ("/ring/concurrency/block", test_concurrency_block);
  g_test_add_func ("/ring/crash/sigkill", test_crash_sigkill);
  g_test_add_func ("/ring/crash/torn-record", test_crash_torn_record);
  g_test_add_func ("/ring/map/bad-fd", test_map_bad_fd);
  g_test_add_func ("/ring/map/corrupt-contents", test_map_corrupt_contents);
  g_test_add_func ("/ring/producer-bad-tail", test_producer_bad_tail);

  return g_test_run ();
}
