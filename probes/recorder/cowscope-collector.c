/* cowscope-collector.c — the recorder's drain-and-write threads. */
#include "cowscope-collector.h"

#include <string.h>
#include <time.h>

#include "cowscope-protocol.h"
#include "cowscope-stack-events.h"
#include "cowscope-recorder-error.h"
#include "cowscope-thread-priority.h"

/* Records taken from one ring before moving to the next, so one busy
 * thread cannot starve the others (their rings would fill and drop, or in
 * BLOCK mode wait past their timeout): at most this many, and at most
 * about half a ring's worth of events, so that small rings are visited
 * often. */
#define DRAIN_BUDGET 4096
#define MIN_DRAIN_BUDGET 16
/* How long the thread sleeps when every ring was empty. */
#define IDLE_WAIT_US 500

/* Final-drain passes before the rings are detached: a producer that
 * keeps writing after the target ended cannot hold the recording open. */
#define FINAL_DRAIN_PASSES 64

typedef enum {
  CMD_PROCESS,
  CMD_RING,
  CMD_MAPS,
  CMD_GPU,
  CMD_END,
  CMD_FAULT,
  CMD_STOP,
} CommandKind;

typedef struct _RingSlot RingSlot;

typedef struct {
  CommandKind kind;
  uint32_t pid, ppid, tid, generation;
  int64_t ns;
  int64_t uid;            /* CMD_FAULT */
  int exit_status, exit_signal;
  char *s1, *s2, *s3, *s4;
  CowscopeProcessIdentity identity; /* CMD_PROCESS; its strings are s1..s4 */
  CowscopeRing *ring;
} Command;

struct _RingSlot {
  CowscopeRing *ring;     /* NULL once released (under rings_lock) */
  uint32_t pid, tid;
  char *name;             /* as the RING message said */
  uint64_t capacity;
  gboolean process_counters; /* carries its process's orphan counters */
  /* Drain thread only. */
  gboolean dead;          /* the ring returned ERROR: unusable */
  /* Under rings_lock: a released ring's final counters. */
  gboolean released;
  CowscopeRingStats final;
  /* Writer thread only. */
  gboolean have_pending;  /* an event that may still get a STACK blob */
  CowTraceEvent pending;
  uint64_t malformed;
};

/* What the drain thread hands the writer: copied records and commands,
 * in ring order per thread and in the order the commands were given. */
typedef struct {
  RingSlot *slot;   /* a record of this ring, or NULL for a command */
  Command *cmd;
  uint32_t kind;
  uint32_t size;
  gsize offset;     /* of the payload in the batch's data */
} BatchItem;

typedef struct {
  GByteArray *data;
  GArray *items;    /* BatchItem */
  gboolean stop;    /* the last batch: finish after it */
} Batch;

struct _CowscopeCollector {
  CowscopeSessionWriter *writer; /* the writer thread's */
  gboolean stacks;
  GAsyncQueue *queue;            /* Command*, to the drain thread */
  GAsyncQueue *batches;          /* Batch*, to the writer thread */
  GThread *drain_thread;
  GThread *writer_thread;
  GMutex rings_lock;
  GPtrArray *rings;              /* RingSlot*, appended under rings_lock */
  gint queued_bytes;             /* atomic: batch bytes not yet written */
  gint failed;                   /* atomic */
  GError *error;                 /* the first write error; read after join */
  gboolean finished;
  int64_t last_thread_update_ns;
  gint peer_faults;              /* atomic: faults reported so far */
  CowscopeCollectorTotals final_totals; /* written by the writer's last step */
};

/* The drain thread stops copying while this much is waiting for the
 * writer (the rings then fill: producers wait or drop, and count). */
#define MAX_QUEUED_BYTES (64 << 20)

static int64_t
now_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void
command_free (Command *cmd)
{
  g_free (cmd->s1);
  g_free (cmd->s2);
  g_free (cmd->s3);
  g_free (cmd->s4);
  cowscope_ring_free (cmd->ring);
  g_free (cmd);
}

static void
batch_free (Batch *b)
{
  for (guint i = 0; i < b->items->len; i++)
    {
      BatchItem *it = &g_array_index (b->items, BatchItem, i);
      if (it->cmd)
        command_free (it->cmd);
    }
  g_byte_array_unref (b->data);
  g_array_unref (b->items);
  g_free (b);
}

static Batch *
batch_new (void)
{
  Batch *b = g_new0 (Batch, 1);
  b->data = g_byte_array_new ();
  b->items = g_array_new (FALSE, FALSE, sizeof (BatchItem));
  return b;
}

static void
slot_free (RingSlot *slot)
{
  cowscope_ring_free (slot->ring);
  g_free (slot->name);
  g_free (slot);
}

static Command *
command_new (CommandKind kind, uint32_t pid)
{
  Command *cmd = g_new0 (Command, 1);
  cmd->kind = kind;
  cmd->pid = pid;
  return cmd;
}

static Command *
fault_command_new (uint32_t pid, int64_t uid, const char *fault, const char *detail)
{
  Command *cmd = command_new (CMD_FAULT, pid);
  cmd->uid = uid;
  cmd->s1 = g_strdup (fault);
  cmd->s2 = g_strdup (detail);
  return cmd;
}

static gboolean
flush_pending (CowscopeCollector *c, RingSlot *slot, int64_t stack_id, GError **error)
{
  if (!slot->have_pending)
    return TRUE;
  slot->have_pending = FALSE;
  return cowscope_session_writer_event (c->writer, slot->pid, slot->tid,
                                        &slot->pending, stack_id, error);
}

/* Writes one record of @slot (a copy the drain thread made). */
static gboolean
handle_record (CowscopeCollector *c, RingSlot *slot, const CowscopeRingRecord *rec,
               GError **error)
{
  switch (rec->kind)
    {
    case COWSCOPE_RING_KIND_EVENT:
      {
        if (rec->size < sizeof (CowTraceEvent))
          {
            slot->malformed++;
            return flush_pending (c, slot, 0, error);
          }
        if (!flush_pending (c, slot, 0, error))
          return FALSE;
        memcpy (&slot->pending, rec->payload, sizeof (CowTraceEvent));
        if (c->stacks && cowscope_event_takes_stack (slot->pending.type))
          {
            slot->have_pending = TRUE;
            return TRUE;
          }
        return cowscope_session_writer_event (c->writer, slot->pid, slot->tid,
                                              &slot->pending, 0, error);
      }
    case COWSCOPE_RING_KIND_STRING:
      {
        if (!flush_pending (c, slot, 0, error))
          return FALSE;
        if (rec->size < sizeof (uint64_t))
          {
            slot->malformed++;
            return TRUE;
          }
        uint64_t id;
        memcpy (&id, rec->payload, sizeof id);
        /* An empty string is a string (g_memdup2 would give NULL). */
        g_autofree char *text = g_malloc (rec->size - 8 + 1);
        memcpy (text, (const char *) rec->payload + 8, rec->size - 8);
        text[rec->size - 8] = '\0';
        return cowscope_session_writer_string (c->writer, slot->pid, id, text,
                                               rec->size - 8, error);
      }
    case COWSCOPE_RING_KIND_BLOB:
      {
        CowscopeRingBlobHeader bh;
        if (rec->size < sizeof bh)
          {
            slot->malformed++;
            return flush_pending (c, slot, 0, error);
          }
        memcpy (&bh, rec->payload, sizeof bh);
        const char *body = (const char *) rec->payload + sizeof bh;
        size_t body_size = rec->size - sizeof bh;
        if (bh.type == COWSCOPE_RING_BLOB_STACK)
          {
            CowscopeStackBlob sb;
            uint64_t frames[COWSCOPE_MAX_STACK_DEPTH];
            if (body_size < sizeof sb)
              {
                slot->malformed++;
                return flush_pending (c, slot, 0, error);
              }
            memcpy (&sb, body, sizeof sb);
            if (sb.n_frames > COWSCOPE_MAX_STACK_DEPTH
                || body_size < sizeof sb + sb.n_frames * sizeof (uint64_t)
                || !slot->have_pending || slot->pending.time_ns != sb.event_time_ns
                || slot->pending.type != sb.event_type)
              {
                slot->malformed++;
                return flush_pending (c, slot, 0, error);
              }
            memcpy (frames, body + sizeof sb, sb.n_frames * sizeof (uint64_t));
            int64_t stack_id = cowscope_session_writer_intern_stack (c->writer, slot->pid, frames,
                                                                     sb.n_frames, error);
            if (stack_id == 0)
              return FALSE;
            return flush_pending (c, slot, stack_id, error);
          }
        if (!flush_pending (c, slot, 0, error))
          return FALSE;
        if (bh.type == COWSCOPE_RING_BLOB_CUPTI)
          {
            size_t n = body_size / sizeof (CowscopeCudaRecord);
            if (n == 0 || body_size % sizeof (CowscopeCudaRecord) != 0)
              slot->malformed++;
            for (size_t i = 0; i < n; i++)
              {
                CowscopeCudaRecord r;
                memcpy (&r, body + i * sizeof r, sizeof r);
                if (!cowscope_session_writer_cuda (c->writer, slot->pid, &r, error))
                  return FALSE;
              }
            return TRUE;
          }
        slot->malformed++;
        return TRUE;
      }
    default:
      slot->malformed++;
      return flush_pending (c, slot, 0, error);
    }
}

/* Appends command @cmd to @batch (the drain thread's own commands: they
 * take their place among the records). */
static void
batch_add_command (Batch *batch, Command *cmd)
{
  BatchItem it = { NULL, cmd, 0, 0, 0 };
  g_array_append_val (batch->items, it);
}

/* Releases @slot's ring once its thread finished and every record of it
 * was copied: its final counters are kept and its memory unmapped.  The
 * process's counter ring stays (other threads may still count into it). */
static void
maybe_release (CowscopeCollector *c, RingSlot *slot)
{
  if (slot->dead || slot->process_counters || !cowscope_ring_drained (slot->ring))
    return;
  g_mutex_lock (&c->rings_lock);
  cowscope_ring_get_stats (slot->ring, &slot->final);
  slot->released = TRUE;
  g_clear_pointer (&slot->ring, cowscope_ring_free);
  g_mutex_unlock (&c->rings_lock);
}

/* Copies up to @budget records of @slot into @batch; returns how many. */
static long
drain_slot (CowscopeCollector *c, RingSlot *slot, long budget, Batch *batch)
{
  long n = 0;
  if (slot->dead || slot->released)
    return 0;
  long ring_budget = (long) (cowscope_ring_get_capacity (slot->ring)
                             / (2 * (sizeof (CowTraceEvent) + sizeof (CowscopeRingRecordHeader))));
  budget = MIN (budget, MAX (ring_budget, MIN_DRAIN_BUDGET));
  while (n < budget)
    {
      CowscopeRingRecord rec;
      CowError err = { 0 };
      CowscopeRingReadResult r = cowscope_ring_peek (slot->ring, &rec, &err);
      if (r == COWSCOPE_RING_READ_EMPTY)
        break;
      if (r == COWSCOPE_RING_READ_ERROR)
        {
          /* The peer's fault: its other rings and every other peer's go
           * on.  Detached, so a BLOCK writer on it stops waiting. */
          slot->dead = TRUE;
          cowscope_ring_detach (slot->ring);
          g_atomic_int_inc (&c->peer_faults);
          g_autofree char *detail = g_strdup_printf ("thread %u: %s", slot->tid, err.message);
          batch_add_command (batch, fault_command_new (slot->pid, -1, "damaged ring", detail));
          break;
        }
      BatchItem it = { slot, NULL, rec.kind, rec.size, batch->data->len };
      g_byte_array_append (batch->data, rec.payload, rec.size);
      /* Keep every payload 8-byte aligned for the writer. */
      static const guint8 zeros[8] = { 0 };
      if (batch->data->len % 8)
        g_byte_array_append (batch->data, zeros, 8 - batch->data->len % 8);
      g_array_append_val (batch->items, it);
      cowscope_ring_advance (slot->ring, &rec);
      n++;
    }
  if (n < budget)
    maybe_release (c, slot);
  return n;
}

static long
drain_all (CowscopeCollector *c, long budget, Batch *batch)
{
  long total = 0;
  /* Only this thread appends to rings; reading without the lock is safe
   * here, the lock orders appends against the writer's reads. */
  for (guint i = 0; i < c->rings->len; i++)
    total += drain_slot (c, g_ptr_array_index (c->rings, i), budget, batch);
  return total;
}

/* Hands @batch to the writer (if it holds anything) and returns a new one. */
static Batch *
push_batch (CowscopeCollector *c, Batch *batch)
{
  if (batch->items->len == 0 && !batch->stop)
    return batch;
  g_atomic_int_add (&c->queued_bytes, (gint) MIN (batch->data->len, G_MAXINT / 2));
  g_async_queue_push (c->batches, batch);
  return batch_new ();
}

/* The drain thread: copies records out of the rings as fast as they are
 * published, never touching the disk, so a slow write (a checkpoint's
 * fsync, a busy disk) never keeps BLOCK-mode producers waiting. */
static gpointer
drain_thread (gpointer data)
{
  CowscopeCollector *c = data;
  Batch *batch = batch_new ();
  gboolean stop = FALSE;

  while (!stop)
    {
      Command *cmd;
      gboolean busy = FALSE;
      while (!stop && (cmd = g_async_queue_try_pop (c->queue)))
        {
          busy = TRUE;
          if (cmd->kind == CMD_STOP)
            {
              command_free (cmd);
              stop = TRUE;
              break;
            }
          if (cmd->kind == CMD_RING)
            {
              RingSlot *slot = g_new0 (RingSlot, 1);
              slot->ring = g_steal_pointer (&cmd->ring);
              slot->pid = cmd->pid;
              slot->tid = cmd->tid;
              slot->name = g_strdup (cmd->s1);
              slot->capacity = cowscope_ring_get_capacity (slot->ring);
              CowscopeRingStats st;
              cowscope_ring_get_stats (slot->ring, &st);
              slot->process_counters = (st.flags & COWSCOPE_RING_FLAG_PROCESS_COUNTERS) != 0;
              cowscope_ring_attach (slot->ring);
              g_mutex_lock (&c->rings_lock);
              g_ptr_array_add (c->rings, slot);
              g_mutex_unlock (&c->rings_lock);
              /* Its threads row is written once it produced something. */
              command_free (cmd);
              continue;
            }
          batch_add_command (batch, cmd);
        }
      if (stop)
        break;
      if (g_atomic_int_get (&c->queued_bytes) > MAX_QUEUED_BYTES)
        {
          batch = push_batch (c, batch);
          g_usleep (200);
          continue;
        }
      long n = drain_all (c, DRAIN_BUDGET, batch);
      batch = push_batch (c, batch);
      if (n == 0 && !busy)
        {
          cmd = g_async_queue_timeout_pop (c->queue, IDLE_WAIT_US);
          if (cmd)
            g_async_queue_push_front (c->queue, cmd);
        }
    }

  /* The final drain: until every ring is empty (or a few passes, should
   * a surviving process keep writing), then every ring is detached, so
   * that BLOCK writers stop waiting, and drained once more for what came
   * in meanwhile.  Whatever is published later is counted as dropped. */
  for (int pass = 0; pass < FINAL_DRAIN_PASSES && drain_all (c, G_MAXLONG, batch) > 0; pass++)
    batch = push_batch (c, batch);
  for (guint i = 0; i < c->rings->len; i++)
    {
      RingSlot *slot = g_ptr_array_index (c->rings, i);
      if (slot->ring != NULL)
        cowscope_ring_detach (slot->ring);
    }
  drain_all (c, G_MAXLONG, batch);
  batch->stop = TRUE;
  g_atomic_int_add (&c->queued_bytes, (gint) MIN (batch->data->len, G_MAXINT / 2));
  g_async_queue_push (c->batches, batch);
  return NULL;
}

/* One threads row being summed (rings of one (pid, tid), should a tid
 * have been reused). */
typedef struct {
  CowscopeThreadRow row;
  char name[COWSCOPE_RING_NAME_BYTES + 1];
  uint32_t gone;            /* CowscopeRingGoneReason, the latest seen */
} ThreadSums;

/* @slot's counters: a released ring's final ones, else the live ones.
 * Caller holds rings_lock. */
static void
slot_stats_locked (RingSlot *slot, CowscopeRingStats *st)
{
  if (slot->released)
    *st = slot->final;
  else
    cowscope_ring_get_stats (slot->ring, st);
}

/* The sums of (@pid, @tid) in @sums, created empty when new. */
static ThreadSums *
thread_sums (GHashTable *sums, uint32_t pid, uint32_t tid)
{
  gint64 key = ((gint64) pid << 32) | tid;
  ThreadSums *t = g_hash_table_lookup (sums, &key);
  if (t == NULL)
    {
      t = g_new0 (ThreadSums, 1);
      t->row.pid = pid;
      t->row.tid = tid;
      g_hash_table_insert (sums, g_memdup2 (&key, sizeof key), t);
    }
  return t;
}

/* Adds @slot's counters to its thread's sums.  stored is what the drain
 * thread consumed; once recording ended (@final), or for a ring given up
 * as damaged, whatever was produced and not consumed is lost and counted
 * as dropped, so produced = stored + dropped holds for every row. */
static void
add_slot (GHashTable *sums, RingSlot *slot, const CowscopeRingStats *st, gboolean final)
{
  ThreadSums *t = thread_sums (sums, slot->pid, slot->tid);
  gboolean lost_rest = final || slot->dead;
  t->row.ring_capacity = slot->capacity;
  t->row.produced += st->produced;
  t->row.stored += st->consumed;
  t->row.dropped += lost_rest ? st->produced - st->consumed : st->dropped;
  t->row.events_produced += st->events_produced;
  t->row.events_stored += st->events_consumed;
  t->row.events_dropped += lost_rest ? st->events_produced - st->events_consumed
                                     : st->events_dropped;
  const char *name = st->name[0] != '\0' ? st->name : slot->name;
  g_strlcpy (t->name, name != NULL ? name : "", sizeof t->name);
  if (st->gone_reason != COWSCOPE_RING_GONE_NONE)
    t->gone = st->gone_reason;

  /* Records of the process's threads that had no ring: tid 0. */
  if (st->orphan_produced > 0)
    {
      ThreadSums *o = thread_sums (sums, slot->pid, 0);
      o->row.produced += st->orphan_produced;
      o->row.dropped += st->orphan_produced;
      o->row.events_produced += st->orphan_events_produced;
      o->row.events_dropped += st->orphan_events_produced;
      g_strlcpy (o->name, "(no ring)", sizeof o->name);
    }
}

static const char *
gone_reason_text (uint32_t gone)
{
  switch (gone)
    {
    case COWSCOPE_RING_GONE_HUNG_UP:
      return "recorder hung up";
    case COWSCOPE_RING_GONE_DETACHED:
      return "recorder detached";
    default:
      return NULL;
    }
}

/* Writes the threads table from the rings' counters: one row per thread
 * that produced anything.  @final: recording has ended (see add_slot);
 * then the totals are kept for cowscope_collector_finish(). */
static gboolean
write_threads (CowscopeCollector *c, gboolean final, GError **error)
{
  g_autoptr (GHashTable) sums = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
  g_mutex_lock (&c->rings_lock);
  for (guint i = 0; i < c->rings->len; i++)
    {
      RingSlot *slot = g_ptr_array_index (c->rings, i);
      CowscopeRingStats st;
      slot_stats_locked (slot, &st);
      add_slot (sums, slot, &st, final);
    }
  g_mutex_unlock (&c->rings_lock);

  CowscopeCollectorTotals totals = { .rings = c->rings->len };
  GHashTableIter it;
  gpointer value;
  g_hash_table_iter_init (&it, sums);
  while (g_hash_table_iter_next (&it, NULL, &value))
    {
      ThreadSums *t = value;
      if (t->row.produced == 0)
        continue; /* a thread that never wrote: no row */
      t->row.name = t->name[0] != '\0' ? t->name : NULL;
      t->row.stopped_waiting = gone_reason_text (t->gone);
      totals.produced += t->row.produced;
      totals.stored += t->row.stored;
      totals.dropped += t->row.dropped;
      totals.events_produced += t->row.events_produced;
      totals.events_stored += t->row.events_stored;
      totals.events_dropped += t->row.events_dropped;
      totals.stopped_hung_up += t->gone == COWSCOPE_RING_GONE_HUNG_UP;
      totals.stopped_detached += t->gone == COWSCOPE_RING_GONE_DETACHED;
      if (!cowscope_session_writer_thread (c->writer, &t->row, error))
        return FALSE;
    }
  if (final)
    c->final_totals = totals;
  return TRUE;
}

static gboolean
apply_command (CowscopeCollector *c, Command *cmd, GError **error)
{
  switch (cmd->kind)
    {
    case CMD_PROCESS:
      return cowscope_session_writer_process (c->writer, &cmd->identity, cmd->ns, error);
    case CMD_MAPS:
      return cowscope_session_writer_process_maps (c->writer, cmd->pid, cmd->generation,
                                                   cmd->s1, error);
    case CMD_GPU:
      return cowscope_session_writer_process_gpu (c->writer, cmd->pid, cmd->s1, error);
    case CMD_END:
      return cowscope_session_writer_process_end (c->writer, cmd->pid, cmd->ns, cmd->s1,
                                                  cmd->exit_status, cmd->exit_signal, error);
    case CMD_FAULT:
      return cowscope_session_writer_peer_fault (c->writer, cmd->pid, cmd->uid, cmd->s1, 1,
                                                 cmd->s2, error);
    case CMD_RING:
    case CMD_STOP:
    default:
      return TRUE;
    }
}

/* Whether @error is one record's fault (it is then cleared: the caller
 * counts the record and goes on) rather than the session's. */
static gboolean
record_refused (GError **error)
{
  if (!g_error_matches (*error, COWSCOPE_RECORDER_ERROR, COWSCOPE_RECORDER_ERROR_BAD_RECORD))
    return FALSE;
  g_clear_error (error);
  return TRUE;
}

static gboolean
write_batch (CowscopeCollector *c, Batch *b, GError **error)
{
  for (guint i = 0; i < b->items->len; i++)
    {
      BatchItem *it = &g_array_index (b->items, BatchItem, i);
      if (it->cmd)
        {
          if (!apply_command (c, it->cmd, error))
            {
              if (!record_refused (error))
                return FALSE;
              g_atomic_int_inc (&c->peer_faults);
            }
          continue;
        }
      CowscopeRingRecord rec = { it->kind, it->size, b->data->data + it->offset, 0 };
      if (!handle_record (c, it->slot, &rec, error))
        {
          /* A record the database refused costs that record only. */
          if (!record_refused (error))
            return FALSE;
          it->slot->malformed++;
        }
    }
  return TRUE;
}

/* The writer's last step: pending events, malformed records as their
 * peers' faults, the final threads table, a commit. */
static gboolean
write_final (CowscopeCollector *c, GError **error)
{
  for (guint i = 0; i < c->rings->len; i++)
    {
      RingSlot *slot = g_ptr_array_index (c->rings, i);
      if (!flush_pending (c, slot, 0, error) && !record_refused (error))
        return FALSE;
    }
  g_autoptr (GHashTable) malformed = g_hash_table_new (NULL, NULL);
  for (guint i = 0; i < c->rings->len; i++)
    {
      RingSlot *slot = g_ptr_array_index (c->rings, i);
      gpointer key = GUINT_TO_POINTER (slot->pid);
      uint64_t n = GPOINTER_TO_SIZE (g_hash_table_lookup (malformed, key)) + slot->malformed;
      g_hash_table_insert (malformed, key, GSIZE_TO_POINTER (n));
    }
  GHashTableIter it;
  gpointer pid, n;
  g_hash_table_iter_init (&it, malformed);
  while (g_hash_table_iter_next (&it, &pid, &n))
    if (GPOINTER_TO_SIZE (n) > 0)
      {
        g_atomic_int_inc (&c->peer_faults);
        if (!cowscope_session_writer_peer_fault (c->writer, GPOINTER_TO_UINT (pid), -1,
                                                 "malformed records", GPOINTER_TO_SIZE (n),
                                                 "records the recorder could not use",
                                                 error))
          return FALSE;
      }
  return write_threads (c, TRUE, error) && cowscope_session_writer_commit (c->writer, error);
}

/* Records the writer's first error; the recorder sees it through
 * cowscope_collector_has_failed() and stops the target. */
static void
mark_failed (CowscopeCollector *c, GError *error)
{
  if (!c->error)
    c->error = error;
  else
    g_clear_error (&error);
  g_atomic_int_set (&c->failed, 1);
}

/* The writer thread: applies batches in order, commits every ~50 ms.
 * After a write error it keeps taking batches (so the drain thread never
 * blocks) and drops them, until the last one. */
static gpointer
writer_thread (gpointer data)
{
  CowscopeCollector *c = data;
  GError *error = NULL;
  gboolean failed = FALSE;

  cowscope_recorder_lower_thread_priority ();

  for (;;)
    {
      Batch *b = g_async_queue_timeout_pop (c->batches, 10 * 1000);
      if (b)
        {
          gboolean stop = b->stop;
          g_atomic_int_add (&c->queued_bytes, -(gint) MIN (b->data->len, G_MAXINT / 2));
          if (!failed && !write_batch (c, b, &error))
            {
              failed = TRUE;
              mark_failed (c, g_steal_pointer (&error));
            }
          batch_free (b);
          if (stop)
            break;
        }
      if (failed)
        continue;
      int64_t now = now_ns ();
      if (now - c->last_thread_update_ns >= COWSCOPE_WRITER_BATCH_NS)
        {
          if (!write_threads (c, FALSE, &error))
            {
              failed = TRUE;
              mark_failed (c, g_steal_pointer (&error));
              continue;
            }
          c->last_thread_update_ns = now;
        }
      if (!cowscope_session_writer_maybe_commit (c->writer, now, &error))
        {
          failed = TRUE;
          mark_failed (c, g_steal_pointer (&error));
        }
    }

  if (failed)
    return NULL;
  if (!write_final (c, &error))
    mark_failed (c, g_steal_pointer (&error));
  return NULL;
}

CowscopeCollector *
cowscope_collector_new (CowscopeSessionWriter *writer, gboolean stacks)
{
  CowscopeCollector *c = g_new0 (CowscopeCollector, 1);
  c->writer = writer;
  c->stacks = stacks;
  c->queue = g_async_queue_new_full ((GDestroyNotify) command_free);
  c->batches = g_async_queue_new_full ((GDestroyNotify) batch_free);
  g_mutex_init (&c->rings_lock);
  c->rings = g_ptr_array_new_with_free_func ((GDestroyNotify) slot_free);
  c->writer_thread = g_thread_new ("cowscope-writer", writer_thread, c);
  c->drain_thread = g_thread_new ("cowscope-drain", drain_thread, c);
  return c;
}

void
cowscope_collector_add_process (CowscopeCollector *c, const CowscopeProcessIdentity *identity,
                                int64_t start_ns)
{
  Command *cmd = command_new (CMD_PROCESS, identity->pid);
  cmd->identity = *identity;
  cmd->identity.exe = cmd->s1 = g_strdup (identity->exe);
  cmd->identity.cmdline = cmd->s2 = g_strdup (identity->cmdline);
  cmd->identity.claimed_exe = cmd->s3 = g_strdup (identity->claimed_exe);
  cmd->identity.claimed_cmdline = cmd->s4 = g_strdup (identity->claimed_cmdline);
  cmd->identity.identity = identity->identity; /* a static string */
  cmd->ns = start_ns;
  g_async_queue_push (c->queue, cmd);
}

void
cowscope_collector_peer_fault (CowscopeCollector *c, uint32_t pid, int64_t uid,
                               const char *fault, const char *detail)
{
  g_atomic_int_inc (&c->peer_faults);
  g_async_queue_push (c->queue, fault_command_new (pid, uid, fault, detail));
}

void
cowscope_collector_add_ring (CowscopeCollector *c, uint32_t pid, uint32_t tid,
                             const char *name, CowscopeRing *ring)
{
  Command *cmd = command_new (CMD_RING, pid);
  cmd->tid = tid;
  cmd->s1 = g_strdup (name);
  cmd->ring = ring;
  g_async_queue_push (c->queue, cmd);
}

void
cowscope_collector_add_maps (CowscopeCollector *c, uint32_t pid, uint32_t generation,
                             const char *maps)
{
  Command *cmd = command_new (CMD_MAPS, pid);
  cmd->generation = generation;
  cmd->s1 = g_strdup (maps);
  g_async_queue_push (c->queue, cmd);
}

void
cowscope_collector_gpu_status (CowscopeCollector *c, uint32_t pid, const char *status)
{
  Command *cmd = command_new (CMD_GPU, pid);
  cmd->s1 = g_strdup (status);
  g_async_queue_push (c->queue, cmd);
}

void
cowscope_collector_process_end (CowscopeCollector *c, uint32_t pid, int64_t end_ns,
                                const char *reason, int exit_status, int exit_signal)
{
  Command *cmd = command_new (CMD_END, pid);
  cmd->ns = end_ns;
  cmd->s1 = g_strdup (reason);
  cmd->exit_status = exit_status;
  cmd->exit_signal = exit_signal;
  g_async_queue_push (c->queue, cmd);
}

gboolean
cowscope_collector_has_failed (CowscopeCollector *c)
{
  return g_atomic_int_get (&c->failed) != 0;
}

void
cowscope_collector_get_live_totals (CowscopeCollector *c, CowscopeCollectorTotals *totals)
{
  memset (totals, 0, sizeof *totals);
  g_mutex_lock (&c->rings_lock);
  for (guint i = 0; i < c->rings->len; i++)
    {
      RingSlot *slot = g_ptr_array_index (c->rings, i);
      CowscopeRingStats st;
      slot_stats_locked (slot, &st);
      totals->produced += st.produced + st.orphan_produced;
      totals->stored += st.consumed;
      totals->dropped += st.dropped + st.orphan_produced;
      totals->events_produced += st.events_produced + st.orphan_events_produced;
      totals->events_stored += st.events_consumed;
      totals->events_dropped += st.events_dropped + st.orphan_events_produced;
      totals->rings++;
    }
  g_mutex_unlock (&c->rings_lock);
  totals->peer_faults = (uint64_t) g_atomic_int_get (&c->peer_faults);
}

gboolean
cowscope_collector_finish (CowscopeCollector *c, CowscopeCollectorTotals *totals,
                           GError **error)
{
  if (!c->finished)
    {
      g_async_queue_push (c->queue, command_new (CMD_STOP, 0));
      g_thread_join (c->drain_thread);
      g_thread_join (c->writer_thread);
      c->drain_thread = c->writer_thread = NULL;
      c->finished = TRUE;
      cowscope_session_writer_end_recording (c->writer);
    }
  if (totals)
    {
      /* What the writer's last step wrote (nothing is written here). */
      *totals = c->final_totals;
      totals->rings = c->rings->len;
      for (guint i = 0; i < c->rings->len; i++)
        totals->malformed += ((RingSlot *) g_ptr_array_index (c->rings, i))->malformed;
      totals->peer_faults = (uint64_t) g_atomic_int_get (&c->peer_faults);
    }
  if (c->error)
    {
      if (error)
        *error = g_error_copy (c->error);
      return FALSE;
    }
  return TRUE;
}

CowscopeSessionWriter *
cowscope_collector_get_writer (CowscopeCollector *c)
{
  return c->finished ? c->writer : NULL;
}

CowscopeSessionWriter *
cowscope_collector_steal_writer (CowscopeCollector *c)
{
  return c->finished ? g_steal_pointer (&c->writer) : NULL;
}

void
cowscope_collector_free (CowscopeCollector *c)
{
  if (!c)
    return;
  if (!c->finished)
    cowscope_collector_finish (c, NULL, NULL);
  cowscope_session_writer_close (c->writer);
  g_ptr_array_unref (c->rings);
  g_async_queue_unref (c->queue);
  g_async_queue_unref (c->batches);
  g_mutex_clear (&c->rings_lock);
  g_clear_error (&c->error);
  g_free (c);
}
