/* cowscope-graph-builder.c — rebuilding the sharing graph at event seq S
 * from the nearest checkpoint at or before S plus the events after it,
 * with the session format's rules (cowscope-graph-state.h).
 *
 * The checkpoint is one packed state (checkpoint_states) and the events
 * after it one packed replay (checkpoint_replays), free times and names
 * included (records: cowscope-packed-records.h).  Each document keeps a
 * small cache so that moving the cursor does not start from the file
 * again:
 *   - the last few decoded checkpoint states (copied, never changed);
 *   - the state the last build ended with, and where it stopped in its
 *     replay: a later instant in the same checkpoint interval applies
 *     only the events in between;
 *   - when the cursor moved back within an interval, a copy of the state
 *     a little before the new instant (an anchor): the next steps back
 *     start there rather than at the checkpoint.
 *   - the copies and steals of the storages that ever stole, read once:
 *     a checkpoint state does not say how a storage left its context, so
 *     each decoded state is told which of its storages stole their bytes.
 * A build whose checkpoint is not decoded yet decodes it straight into
 * its own state (no copy on the way), and a worker thread decodes it
 * again for the cache at the lowest priority (for the steps back, and a
 * later return).  When the cursor moves about one place (the build
 * before was less than two intervals away) the worker also decodes the
 * checkpoint's two neighbours, for the cursor crossing into the next or
 * the previous interval.  The first build (opening a session) leaves the
 * cache alone.  Builds of one document may
 * run in several threads at once; the cache hands its state to one of
 * them at a time.
 */
#include "cowscope-sharing-graph-private.h"

#include <glib/gi18n-lib.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef __linux__
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "cowscope-format-open.h"
#include "cowscope-graph-state.h"
#include "cowscope-packed-records.h"
#include "cowscope-session-document-private.h"

/* Decoded checkpoint states kept per document (at least one). */
#define CACHE_BYTES ((gsize) 96 << 20)
#define N_ITEMSIZES 256

/* ---- the per-document cache ---------------------------------------------- */

typedef struct {
  gint refs; /* atomic */
  gint64 cp_id;
  CowscopeGraphState *st; /* never changed once cached */
  GBytes *replay;         /* the packed events after the checkpoint */
  gsize extra;            /* objects the replay may add (a hint) */
  gint64 n_events;        /* events in the replay */
} Decoded;

/* A state on its way through one checkpoint interval's replay. */
typedef struct {
  CowscopeGraphState *st;
  gsize extra;            /* objects the rest of the replay may add (a hint) */
  gint64 n_events;        /* events in the interval's replay */
  gint64 cp_id, cp_seq;   /* the checkpoint it started from (-1: the start) */
  gint64 seq;             /* every event up to seq is applied */
  guint64 n_replayed;     /* events applied since the checkpoint */
  GBytes *replay;         /* the interval's packed replay */
  gsize offset;           /* where the next event starts in it */
  CowscopeReplayEvent last; /* the decoder's running values there */
} Cursor;

/* A copy or steal of a storage that stole at least once: the document's
 * steals, sorted by (pid, id, seq), read once (load_steals()). */
typedef struct {
  guint32 pid;
  gboolean steal;
  guint64 id;
  gint64 seq;
} StealRecord;

typedef struct {
  GMutex lock;              /* protects everything below */
  gboolean have_itemsizes;
  guint itemsizes[N_ITEMSIZES];
  GArray *steals;           /* StealRecord, never changed once read; NULL: not yet */
  GQueue decoded;           /* Decoded*, most recently used first */
  gsize decoded_bytes, max_bytes;
  CowscopeGraphState *spare; /* an evicted state's memory, to decode into */
  Cursor *cursor;           /* NULL while a build has it */
  Cursor *anchor;           /* see the file comment; NULL: none */
  guint generation;         /* bumped by each request to decode ahead */
  gint64 last_seq;          /* the instant of the last build; -1: none yet */
} Cache;

static void
decoded_unref (Decoded *d)
{
  if (d != NULL && g_atomic_int_dec_and_test (&d->refs))
    {
      cowscope_graph_state_free (d->st);
      g_bytes_unref (d->replay);
      g_free (d);
    }
}

static void
cursor_free (Cursor *c)
{
  if (c == NULL)
    return;
  cowscope_graph_state_free (c->st);
  g_clear_pointer (&c->replay, g_bytes_unref);
  g_free (c);
}

static void
cache_clear (Cache *cache)
{
  g_mutex_lock (&cache->lock);
  cache->generation++; /* requests to decode ahead made before are void */
  Decoded *d;
  while ((d = g_queue_pop_head (&cache->decoded)) != NULL)
    decoded_unref (d);
  cache->decoded_bytes = 0;
  g_clear_pointer (&cache->cursor, cursor_free);
  g_clear_pointer (&cache->anchor, cursor_free);
  g_clear_pointer (&cache->spare, cowscope_graph_state_free);
  g_clear_pointer (&cache->steals, g_array_unref);
  g_mutex_unlock (&cache->lock);
}

static void
cache_free (gpointer data)
{
  Cache *cache = data;
  cache_clear (cache);
  g_mutex_clear (&cache->lock);
  g_free (cache);
}

static gsize
decoded_size (const Decoded *d)
{
  return cowscope_graph_state_get_size (d->st) + g_bytes_get_size (d->replay);
}

/* The cache of @document, created on first use. */
static Cache *
cache_get (CowscopeSessionDocument *document)
{
  static GMutex create_lock; /* protects the object data key below */
  g_mutex_lock (&create_lock);
  Cache *cache = g_object_get_data (G_OBJECT (document), "cowscope-graph-cache");
  if (cache == NULL)
    {
      cache = g_new0 (Cache, 1);
      g_mutex_init (&cache->lock);
      g_queue_init (&cache->decoded);
      cache->max_bytes = CACHE_BYTES;
      cache->last_seq = -1;
      g_object_set_data_full (G_OBJECT (document), "cowscope-graph-cache", cache, cache_free);
    }
  g_mutex_unlock (&create_lock);
  return cache;
}

/* The decoded state of checkpoint @cp_id (a new reference), or NULL. */
static Decoded *
cache_find_decoded (Cache *cache, gint64 cp_id)
{
  for (GList *l = cache->decoded.head; l != NULL; l = l->next)
    {
      Decoded *d = l->data;
      if (d->cp_id == cp_id)
        {
          g_queue_unlink (&cache->decoded, l);
          g_queue_push_head_link (&cache->decoded, l);
          g_atomic_int_inc (&d->refs);
          return d;
        }
    }
  return NULL;
}

/* Keeps @d (a reference is added), dropping the least recently used
 * others beyond the cache's size. */
static void
cache_add_decoded (Cache *cache, Decoded *d)
{
  g_mutex_lock (&cache->lock);
  g_atomic_int_inc (&d->refs);
  g_queue_push_head (&cache->decoded, d);
  cache->decoded_bytes += decoded_size (d);
  while (cache->decoded.length > 1 && cache->decoded_bytes > cache->max_bytes)
    {
      Decoded *old = g_queue_pop_tail (&cache->decoded);
      cache->decoded_bytes -= decoded_size (old);
      /* Unused elsewhere: keep its memory for the next decode. */
      if (cache->spare == NULL && g_atomic_int_get (&old->refs) == 1)
        cache->spare = g_steal_pointer (&old->st);
      decoded_unref (old);
    }
  g_mutex_unlock (&cache->lock);
}

/* ---- building ------------------------------------------------------------ */

/* This thread's CPU time in microseconds (the trace's clock: on a loaded
 * machine wall time mostly measures the other processes). */
static gint64
thread_cpu_us (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &ts);
  return (gint64) ts.tv_sec * G_USEC_PER_SEC + ts.tv_nsec / 1000;
}

typedef struct {
  CowscopeSessionDocument *document;
  sqlite3 *db;
  const char *path;
  guint itemsizes[N_ITEMSIZES];
  GArray *steals;           /* StealRecord (a reference; the cache's when it has them) */
} Builder;

/* Steps to the end; FALSE with @error on a failure. */
static gboolean
check_done (Builder *b, int rc, const char *what, GError **error)
{
  if (rc == SQLITE_DONE)
    return TRUE;
  cowscope_format_set_error (error, b->db, rc, b->path, what);
  return FALSE;
}

#define INT(stmt, col) cowscope_format_column_int ((stmt), (col), 0)

/* ---- packed checkpoint states and replays -------------------------------- */

static void
set_damaged (Builder *b, GError **error, const char *what)
{
  g_set_error (error, COWSCOPE_SESSION_ERROR, COWSCOPE_SESSION_ERROR_DAMAGED,
               _("The session “%s” is damaged (%s)"), b->path, what);
}

/* Reads one BLOB column of the row @key of @sql (and an integer column
 * into @extra); NULL with @error on a read failure, or with *@found FALSE
 * when there is no such row. */
static GBytes *
read_blob (Builder *b, const char *sql, gint64 key, gint64 *extra, gboolean *found,
           GError **error)
{
  g_autoptr (sqlite3_stmt) q = cowscope_format_statement (b->db, b->path, sql, error);
  *found = FALSE;
  if (q == NULL)
    return NULL;
  sqlite3_bind_int64 (q, 1, key);
  int rc = sqlite3_step (q);
  if (rc == SQLITE_DONE)
    return g_bytes_new (NULL, 0);
  if (rc != SQLITE_ROW)
    {
      check_done (b, rc, "checkpoint", error);
      return NULL;
    }
  *found = TRUE;
  if (extra != NULL)
    *extra = INT (q, 1);
  const void *data = sqlite3_column_blob (q, 0);
  return g_bytes_new (data, (gsize) sqlite3_column_bytes (q, 0));
}

static int
steal_record_cmp (const StealRecord *a, const StealRecord *b)
{
  if (a->pid != b->pid)
    return a->pid < b->pid ? -1 : 1;
  if (a->id != b->id)
    return a->id < b->id ? -1 : 1;
  return (a->seq > b->seq) - (a->seq < b->seq);
}

/* Every copy and steal of the storages that stole at least once, sorted:
 * what mark_steals() needs, in one indexed pass over materializations. */
static GArray *
load_steals (Builder *b, GError **error)
{
  g_autoptr (GArray) steals = g_array_new (FALSE, FALSE, sizeof (StealRecord));
  g_autoptr (sqlite3_stmt) q = cowscope_format_statement (
    b->db, b->path,
    "SELECT pid, storage_id, seq, (kind & :materialize_kind_mask) = :materialize_steal"
    " FROM materializations"
    " WHERE (kind & :materialize_kind_mask) IN (:materialize_copy, :materialize_steal)"
    " AND storage_id IN (SELECT storage_id FROM materializations"
    "                    WHERE (kind & :materialize_kind_mask) = :materialize_steal)"
    " ORDER BY pid, storage_id, seq",
    error);
  int rc;

  if (q == NULL)
    return NULL;
  while ((rc = sqlite3_step (q)) == SQLITE_ROW)
    {
      StealRecord r = { .pid = (guint32) INT (q, 0), .id = (guint64) INT (q, 1),
                        .seq = INT (q, 2), .steal = INT (q, 3) != 0 };
      g_array_append_val (steals, r);
    }
  if (!check_done (b, rc, "steals", error))
    return NULL;
  /* SQLite orders ids as signed integers; the search compares them unsigned. */
  g_array_sort (steals, (GCompareFunc) steal_record_cmp);
  return g_steal_pointer (&steals);
}

/* The item size of each dtype (0: unknown). */
static gboolean
load_itemsizes (Builder *b, GError **error)
{
  g_autoptr (sqlite3_stmt) q =
    cowscope_format_statement (b->db, b->path, "SELECT id, itemsize FROM dtypes", error);
  if (q == NULL)
    return FALSE;
  int rc;
  while ((rc = sqlite3_step (q)) == SQLITE_ROW)
    {
      gint64 id = INT (q, 0);
      if (id >= 0 && id < N_ITEMSIZES)
        b->itemsizes[id] = (guint) CLAMP (INT (q, 1), 1, G_MAXINT32);
    }
  return check_done (b, rc, "dtypes", error);
}

/* Checkpoint states do not say how a storage left its context: marks the
 * materialized storages of @st (at event @cp_seq) whose last
 * materialization stole the shared bytes, from the document's steals
 * (load_steals()). */
static void
mark_steals (Builder *b, CowscopeGraphState *st, gint64 cp_seq)
{
  const StealRecord *r = (const StealRecord *) (gconstpointer) b->steals->data;
  guint n_records = b->steals->len;
  guint n = cowscope_graph_state_get_n_slots (st);

  if (n_records == 0)
    return;
  for (guint i = 0; i < n; i++)
    {
      const CowscopeLiveObject *o = cowscope_graph_state_get_slot (st, i);
      StealRecord key;
      guint lo = 0, hi = n_records;

      if (o == NULL || o->kind != COWSCOPE_OBJECT_STORAGE || o->left_context_id == 0)
        continue;
      /* The first record after (pid, id, cp_seq); the one before it is
       * the storage's last materialization by then, if it is its own. */
      key = (StealRecord) { .pid = o->pid, .id = o->id, .seq = cp_seq };
      while (lo < hi)
        {
          guint mid = lo + (hi - lo) / 2;
          if (steal_record_cmp (&r[mid], &key) <= 0)
            lo = mid + 1;
          else
            hi = mid;
        }
      if (lo > 0 && r[lo - 1].pid == o->pid && r[lo - 1].id == o->id && r[lo - 1].steal)
        cowscope_graph_state_lookup (st, o->kind, o->pid, o->id)->stolen = TRUE;
    }
}

/* Decodes checkpoint @cp_id's whole state from checkpoint_states into a
 * new state with room for @extra more objects. */
static CowscopeGraphState *
load_packed_state (Builder *b, gint64 cp_id, gsize extra, CowscopeGraphState *into,
                   GError **error)
{
  g_autoptr (CowscopeGraphState) st = into;
  gint64 cp_ts = 0, cp_seq = -1;
  gboolean found;
  {
    g_autoptr (sqlite3_stmt) q = cowscope_format_statement (
      b->db, b->path, "SELECT ts, seq FROM checkpoints WHERE id = ?1", error);
    if (q == NULL)
      return NULL;
    sqlite3_bind_int64 (q, 1, cp_id);
    if (sqlite3_step (q) == SQLITE_ROW)
      {
        cp_ts = INT (q, 0);
        cp_seq = INT (q, 1);
      }
  }
  gint64 n_objects = 0;
  g_autoptr (GBytes) blob = read_blob (
    b, "SELECT objects, n_objects FROM checkpoint_states WHERE checkpoint_id = ?1", cp_id,
    &n_objects, &found, error);
  if (blob == NULL)
    return NULL;
  if (!found)
    {
      set_damaged (b, error, "a checkpoint state is missing");
      return NULL;
    }
  gsize len;
  const guint8 *data = g_bytes_get_data (blob, &len);
  if (st != NULL)
    cowscope_graph_state_reset (st);
  else
    st = cowscope_graph_state_new ();
  cowscope_graph_state_reserve (st, (gsize) CLAMP (n_objects, 0, (gint64) len) + extra);
  CowscopePackedReader r;
  cowscope_packed_reader_init (&r, data, len);
  CowscopeObjectKey key = { 0 };
  /* Objects come sorted by (kind, pid, id): while they do, each is new,
   * and they are appended, indexed all at once at the end. */
  gboolean sorted = TRUE, first = TRUE;
  while (!cowscope_packed_reader_done (&r))
    {
      CowscopeObjectKey prev = key;
      if (!cowscope_object_read_key (&r, &key))
        break;
      if (sorted && !first && !(key.kind > prev.kind || (key.kind == prev.kind && key.pid > prev.pid)
                                || (key.kind == prev.kind && key.pid == prev.pid && key.id > prev.id)))
        {
          sorted = FALSE;
          cowscope_graph_state_end_append (st);
        }
      first = FALSE;
      CowscopeLiveObject *o = sorted ? cowscope_graph_state_append (st, key.kind, key.pid, key.id)
                                     : cowscope_graph_state_add (st, key.kind, key.pid, key.id);
      gsize name_len;
      const char *name = cowscope_object_read_body (&r, o, cp_ts, &name_len);
      if (name != NULL)
        cowscope_graph_state_set_name (st, o, name, (gssize) name_len);
    }
  cowscope_graph_state_end_append (st);
  if (!cowscope_packed_reader_ok (&r))
    {
      set_damaged (b, error, "a checkpoint state cannot be read");
      return NULL;
    }
  mark_steals (b, st, cp_seq);
  return g_steal_pointer (&st);
}

/* Checkpoint @cp_id's state (-1: the start, an empty state) and the
 * replay that follows it, from the file. */
static Decoded *
decode (Builder *b, gint64 cp_id, CowscopeGraphState *into, GError **error)
{
  g_autoptr (CowscopeGraphState) spare = into;
  gboolean found;
  gint64 n_events = 0;
  g_autoptr (GBytes) replay = read_blob (
    b, "SELECT events, n_events FROM checkpoint_replays WHERE checkpoint_id = ?1", MAX (cp_id, 0),
    &n_events, &found, error);
  if (replay == NULL)
    return NULL;
  if (!found)
    {
      set_damaged (b, error, "a checkpoint replay is missing");
      return NULL;
    }
  /* About one object is born every other event. */
  gsize extra = (gsize) CLAMP (n_events, 0, (gint64) g_bytes_get_size (replay)) / 2;
  CowscopeGraphState *st;
  if (cp_id < 0)
    {
      st = cowscope_graph_state_new ();
      cowscope_graph_state_reserve (st, extra);
    }
  else if ((st = load_packed_state (b, cp_id, extra, g_steal_pointer (&spare), error)) == NULL)
    return NULL;
  Decoded *d = g_new0 (Decoded, 1);
  d->refs = 1;
  d->cp_id = cp_id;
  d->st = st;
  d->replay = g_steal_pointer (&replay);
  d->extra = extra;
  d->n_events = n_events;
  return d;
}

/* A cursor at checkpoint @cp_id (-1: the start): a copy of @cache's
 * decoded state, or else decoded from the file straight into the
 * cursor's state (*@decoded set TRUE); the state reuses the memory of
 * @recycled (taken; NULL: none) when it can. */
static Cursor *
cursor_new (Builder *b, Cache *cache, gint64 cp_id, gint64 cp_seq,
            CowscopeGraphState *recycled, gboolean *decoded, GError **error)
{
  g_autoptr (CowscopeGraphState) old = recycled;
  Decoded *d = NULL;
  if (cache != NULL)
    {
      g_mutex_lock (&cache->lock);
      d = cache_find_decoded (cache, cp_id);
      if (d == NULL && old == NULL)
        old = g_steal_pointer (&cache->spare);
      g_mutex_unlock (&cache->lock);
    }
  *decoded = d == NULL;
  if (d == NULL && (d = decode (b, cp_id, g_steal_pointer (&old), error)) == NULL)
    return NULL;
  Cursor *c = g_new0 (Cursor, 1);
  c->cp_id = cp_id;
  c->cp_seq = cp_seq;
  c->seq = cp_seq;
  c->replay = g_bytes_ref (d->replay);
  c->extra = d->extra;
  c->n_events = d->n_events;
  if (*decoded)
    c->st = g_steal_pointer (&d->st); /* d is not shared */
  else
    c->st = cowscope_graph_state_copy (d->st, d->extra, g_steal_pointer (&old));
  decoded_unref (d);
  return c;
}

/* A copy of @c, its state in the memory of @into (taken; NULL: new). */
static Cursor *
cursor_copy (const Cursor *c, CowscopeGraphState *into)
{
  Cursor *copy = g_new (Cursor, 1);
  *copy = *c;
  copy->replay = g_bytes_ref (c->replay);
  copy->st = cowscope_graph_state_copy (c->st, c->extra, into);
  return copy;
}

/* One replayed event, read ahead of its application. */
typedef struct {
  CowscopeReplayEvent ev; /* the decoder's running values after it */
  const guint8 *end;      /* where its record ends */
  gint64 free_ts;         /* of the object it creates */
  const char *name;       /* of the tensor it creates (name_len bytes), or NULL */
  gsize name_len;
} Ahead;

/* Events read ahead of the one applied (a power of two): the state's
 * entries for each are requested when it is read (PREFETCH_FAR) and its
 * object a few events before it is applied (PREFETCH_NEAR), so that the
 * cache misses of successive events overlap. */
#define N_AHEAD 16
#define PREFETCH_NEAR 4

/* Applies the packed events of @c's interval after c->seq up to @seq,
 * with the free times and names of the objects they create. */
static gboolean
replay_packed (Builder *b, Cursor *c, gint64 seq, guint64 *n_applied, GCancellable *cancellable,
               GError **error)
{
  gsize len;
  const guint8 *data = g_bytes_get_data (c->replay, &len);
  CowscopePackedReader r;
  cowscope_packed_reader_init (&r, data + c->offset, len - c->offset);
  CowscopeReplayEvent ev = c->last;
  Ahead ring[N_AHEAD];
  guint head = 0, n = 0; /* ring[head] is applied next; n are read */
  gboolean more = TRUE;  /* events after the ring's up to @seq may remain */
  for (;;)
    {
      /* Read ahead until the ring is full, past @seq or at the end. */
      while (more && n < N_AHEAD)
        {
          if (cowscope_packed_reader_done (&r))
            {
              more = FALSE;
              break;
            }
          CowscopeReplayEvent next = ev;
          cowscope_replay_read_head (&r, &next);
          if (!cowscope_packed_reader_ok (&r) || next.seq > seq)
            {
              more = FALSE;
              break;
            }
          Ahead *a = &ring[(head + n) & (N_AHEAD - 1)];
          a->name = cowscope_replay_read_tail (&r, &next, &a->free_ts, &a->name_len);
          if (!cowscope_packed_reader_ok (&r))
            {
              more = FALSE;
              break;
            }
          a->ev = ev = next;
          a->end = r.p;
          cowscope_graph_state_prefetch (c->st, ev.type, (guint32) ev.pid, ev.v, FALSE);
          n++;
        }
      if (n == 0)
        break;
      if (n > PREFETCH_NEAR)
        {
          const Ahead *near = &ring[(head + PREFETCH_NEAR) & (N_AHEAD - 1)];
          cowscope_graph_state_prefetch (c->st, near->ev.type, (guint32) near->ev.pid, near->ev.v,
                                         TRUE);
        }
      const Ahead *a = &ring[head];
      CowscopeLiveObject *born =
        cowscope_graph_state_apply (c->st, a->ev.type, a->ev.aux, (guint32) a->ev.pid, a->ev.v);
      if (born != NULL)
        {
          born->free_ts = a->free_ts;
          if (a->name != NULL)
            cowscope_graph_state_set_name (c->st, born, a->name, (gssize) a->name_len);
        }
      head = (head + 1) & (N_AHEAD - 1);
      n--;
      c->n_replayed++;
      if ((++*n_applied & 0x3fff) == 0
          && g_cancellable_set_error_if_cancelled (cancellable, error))
        return FALSE;
      /* Keep where the last applied event ends: the next build goes on
       * from there. */
      c->offset = (gsize) (a->end - data);
      c->last = a->ev;
    }
  if (!cowscope_packed_reader_ok (&r))
    {
      set_damaged (b, error, "a checkpoint replay cannot be read");
      return FALSE;
    }
  c->seq = seq;
  return TRUE;
}

/* The time of the last event at or before @seq (@fallback: none). */
static gboolean
time_of (Builder *b, gint64 seq, gint64 *time, GError **error)
{
  g_autoptr (sqlite3_stmt) q = cowscope_format_statement (
    b->db, b->path, "SELECT ts FROM events WHERE seq <= ?1 ORDER BY seq DESC LIMIT 1", error);
  if (q == NULL)
    return FALSE;
  sqlite3_bind_int64 (q, 1, seq);
  if (sqlite3_step (q) == SQLITE_ROW)
    *time = INT (q, 0);
  return TRUE;
}

/* ---- decoding ahead ---------------------------------------------------------- */

/* Decoded checkpoints the worker keeps ready: the cursor's and its two
 * neighbours. */
#define N_AHEAD_CHECKPOINTS 3

typedef struct {
  CowscopeSessionDocument *document; /* a reference */
  guint generation;                  /* void once the cache's has moved on */
  gint64 cp_id, cp_seq;              /* the checkpoint the cursor is in */
  gboolean neighbours;               /* its neighbours too */
} AheadJob;

static void
ahead_job_free (AheadJob *job)
{
  g_object_unref (job->document);
  g_free (job);
}

/* The checkpoints next to @cp_seq (-1: before the first), ids into
 * @ids[0] (the one after) and @ids[1] (the one before; -1: the start);
 * G_MININT64 where there is none. */
static void
neighbours (Builder *b, gint64 cp_seq, gint64 ids[2])
{
  ids[0] = ids[1] = G_MININT64;
  g_autoptr (sqlite3_stmt) next = cowscope_format_statement (
    b->db, b->path, "SELECT id FROM checkpoints WHERE seq > ?1 ORDER BY seq, id LIMIT 1", NULL);
  if (next != NULL)
    {
      sqlite3_bind_int64 (next, 1, cp_seq);
      if (sqlite3_step (next) == SQLITE_ROW)
        ids[0] = INT (next, 0);
    }
  if (cp_seq < 0)
    return;
  g_autoptr (sqlite3_stmt) prev = cowscope_format_statement (
    b->db, b->path,
    "SELECT id FROM checkpoints WHERE seq < ?1 ORDER BY seq DESC, id DESC LIMIT 1", NULL);
  if (prev != NULL)
    {
      sqlite3_bind_int64 (prev, 1, cp_seq);
      ids[1] = sqlite3_step (prev) == SQLITE_ROW ? INT (prev, 0) : -1;
    }
}

/* Claims @cp_id for the worker: FALSE when the request is void, the
 * checkpoint is decoded already, or the cache has no room for the
 * checkpoints the worker keeps (it would evict what it just decoded). */
static gboolean
ahead_claim (Cache *cache, const AheadJob *job, gint64 cp_id)
{
  g_mutex_lock (&cache->lock);
  gboolean claim = job->generation == cache->generation;
  for (GList *l = cache->decoded.head; claim && l != NULL; l = l->next)
    claim = ((Decoded *) l->data)->cp_id != cp_id;
  if (claim && cache->decoded.head != NULL)
    claim = cache->max_bytes
            >= (N_AHEAD_CHECKPOINTS + 1) * decoded_size (cache->decoded.head->data);
  g_mutex_unlock (&cache->lock);
  return claim;
}

/* The worker: decodes the job's checkpoint and its neighbours into the
 * cache, skipping those decoded already, stopping once a newer request
 * came in. */
static void
ahead_run (gpointer data, gpointer pool_data)
{
  AheadJob *job = data;
  (void) pool_data;
#ifdef __linux__
  /* This thread only (Linux nice values are per thread): the work is for
   * later and must never slow down what the user waits for. */
  static GPrivate niced;
  if (g_private_get (&niced) == NULL)
    {
      setpriority (PRIO_PROCESS, (id_t) syscall (SYS_gettid), 19);
      g_private_set (&niced, GINT_TO_POINTER (1));
    }
#endif
  Cache *cache = cache_get (job->document);
  Builder b = { .document = job->document,
                .path = cowscope_session_document_get_path (job->document) };
  b.db = cowscope_session_document_acquire_db (job->document, NULL);
  /* A build read the steals before it asked for this work. */
  g_mutex_lock (&cache->lock);
  if (cache->steals != NULL)
    b.steals = g_array_ref (cache->steals);
  g_mutex_unlock (&cache->lock);
  if (b.db != NULL && b.steals != NULL)
    {
      gint64 ids[N_AHEAD_CHECKPOINTS] = { job->cp_id, G_MININT64, G_MININT64 };
      if (job->neighbours)
        neighbours (&b, job->cp_seq, ids + 1);
      for (guint k = 0; k < N_AHEAD_CHECKPOINTS; k++)
        {
          if (ids[k] == G_MININT64 || !ahead_claim (cache, job, ids[k]))
            continue;
          g_mutex_lock (&cache->lock);
          CowscopeGraphState *spare = g_steal_pointer (&cache->spare);
          g_mutex_unlock (&cache->lock);
          Decoded *d = decode (&b, ids[k], spare, NULL);
          if (d != NULL)
            {
              cache_add_decoded (cache, d);
              decoded_unref (d);
            }
        }
    }
  if (b.db != NULL)
    cowscope_session_document_release_db (job->document, b.db);
  g_clear_pointer (&b.steals, g_array_unref);
  ahead_job_free (job);
}

/* Asks the worker to decode checkpoint @cp_id (at @cp_seq) and, when
 * @with_neighbours, the ones next to it; earlier requests for @document
 * become void. */
static void
ahead_request (CowscopeSessionDocument *document, Cache *cache, gint64 cp_id, gint64 cp_seq,
               gboolean with_neighbours)
{
  static GThreadPool *pool; /* one thread for every document: work for later */
  static gsize pool_ready;
  if (g_once_init_enter (&pool_ready))
    {
      pool = g_thread_pool_new (ahead_run, NULL, 1, TRUE, NULL);
      g_once_init_leave (&pool_ready, 1);
    }
  AheadJob *job = g_new0 (AheadJob, 1);
  job->document = g_object_ref (document);
  job->cp_id = cp_id;
  job->cp_seq = cp_seq;
  job->neighbours = with_neighbours;
  g_mutex_lock (&cache->lock);
  job->generation = ++cache->generation;
  g_mutex_unlock (&cache->lock);
  g_thread_pool_push (pool, job, NULL);
}

/* The graph after @seq from checkpoint @cp_id (-1: the start),
 * through @cache when not NULL. */
static CowscopeSharingGraph *
build_packed (Builder *b, Cache *cache, gint64 seq, gint64 cp_id, gint64 cp_seq,
              gint64 freed_soon_ns, GCancellable *cancellable, GError **error)
{
  gint64 t0 = thread_cpu_us (), w0 = g_get_monotonic_time ();
  const char *from = "a decoded checkpoint";
  Cursor *c = NULL, *anchor = NULL;
  CowscopeGraphState *recycled = NULL, *old_anchor = NULL;
  gboolean back = FALSE, decoded = FALSE;
  gint64 last_seq = -1;
  if (cache != NULL)
    {
      g_mutex_lock (&cache->lock);
      last_seq = cache->last_seq;
      cache->last_seq = seq;
      Cursor *last = cache->cursor, *a = cache->anchor;
      if (last != NULL && last->cp_id == cp_id && last->seq <= seq)
        {
          c = g_steal_pointer (&cache->cursor);
          from = "the last build";
        }
      else
        {
          back = last != NULL && last->cp_id == cp_id;
          if (last != NULL)
            {
              /* It would be replaced by this build's: reuse its memory. */
              recycled = g_steal_pointer (&last->st);
              g_clear_pointer (&cache->cursor, cursor_free);
            }
          if (a != NULL && a->cp_id == cp_id && a->seq <= seq)
            anchor = g_steal_pointer (&cache->anchor);
        }
      g_mutex_unlock (&cache->lock);
    }
  if (anchor != NULL)
    {
      c = cursor_copy (anchor, recycled);
      from = "an anchor";
      g_mutex_lock (&cache->lock);
      if (cache->anchor == NULL)
        cache->anchor = g_steal_pointer (&anchor);
      g_mutex_unlock (&cache->lock);
      cursor_free (anchor);
    }
  else if (c == NULL)
    {
      if ((c = cursor_new (b, cache, cp_id, cp_seq, recycled, &decoded, error)) == NULL)
        return NULL;
      /* From its checkpoint: have it decoded for the next moves (and its
       * neighbours, when the cursor moves about one place). */
      gboolean near = last_seq >= 0 && ABS (seq - last_seq) <= 2 * MAX (c->n_events, 1);
      if (cache != NULL && last_seq >= 0 && (decoded || near))
        ahead_request (b->document, cache, cp_id, cp_seq, near);
    }
  gint64 t1 = thread_cpu_us ();
  guint64 n_applied = 0;
  /* Moving back a long way from the checkpoint: keep an anchor a little
   * before this instant for the next steps back. */
  gint64 spacing = CLAMP (c->n_events / 8, 16, 8192);
  if (cache != NULL && back && c->seq == cp_seq && seq - c->seq > 2 * spacing)
    {
      if (!replay_packed (b, c, seq - spacing, &n_applied, cancellable, error))
        {
          cursor_free (c);
          return NULL;
        }
      g_mutex_lock (&cache->lock);
      if (cache->anchor != NULL)
        old_anchor = g_steal_pointer (&cache->anchor->st);
      g_clear_pointer (&cache->anchor, cursor_free);
      g_mutex_unlock (&cache->lock);
      anchor = cursor_copy (c, old_anchor);
      g_mutex_lock (&cache->lock);
      cursor_free (cache->anchor);
      cache->anchor = g_steal_pointer (&anchor);
      g_mutex_unlock (&cache->lock);
    }
  gint64 time = cowscope_session_document_get_start_ns (b->document);
  if (!replay_packed (b, c, seq, &n_applied, cancellable, error) || !time_of (b, seq, &time, error))
    {
      cursor_free (c);
      return NULL;
    }
  gint64 t2 = thread_cpu_us ();
  CowscopeGraphAssembleOptions options = {
    .seq = seq,
    .time = time,
    .checkpoint_seq = cp_seq,
    .n_replayed = c->n_replayed,
    .freed_soon_ns = freed_soon_ns,
    .itemsizes = b->itemsizes,
    .n_itemsizes = N_ITEMSIZES,
  };
  CowscopeSharingGraph *graph = cowscope_sharing_graph_new_from_state (c->st, &options);
  if (g_getenv ("COWSCOPE_GRAPH_TRACE"))
    g_printerr ("graph: from %s%s %.1f ms, replay %" G_GUINT64_FORMAT " events %.1f ms,"
                " assemble %.1f ms (CPU; %.1f ms wall)\n",
                decoded ? "the file: " : "", from, (t1 - t0) / 1e3, n_applied, (t2 - t1) / 1e3,
                (thread_cpu_us () - t2) / 1e3, (g_get_monotonic_time () - w0) / 1e3);
  if (cache != NULL)
    {
      g_mutex_lock (&cache->lock);
      cursor_free (cache->cursor);
      cache->cursor = c;
      g_mutex_unlock (&cache->lock);
    }
  else
    cursor_free (c);
  return graph;
}

/* ---- entry points ----------------------------------------------------------- */

/* The graph after @seq, from the nearest checkpoint (@cp_id < -1) or from
 * checkpoint @cp_id (-1: the start), through the document's cache when
 * @use_cache. */
static CowscopeSharingGraph *
build (CowscopeSessionDocument *document, gint64 seq, gint64 cp_id, gboolean use_cache,
       gint64 freed_soon_ns, GCancellable *cancellable, GError **error)
{
  Builder b = { .document = document, .path = cowscope_session_document_get_path (document) };
  Cache *cache = use_cache ? cache_get (document) : NULL;
  CowscopeSharingGraph *graph = NULL;
  gint64 cp_seq = -1;
  int rc;

  b.db = cowscope_session_document_acquire_db (document, error);
  if (b.db == NULL)
    return NULL;
  gboolean have_itemsizes = FALSE;
  if (cache != NULL)
    {
      g_mutex_lock (&cache->lock);
      if ((have_itemsizes = cache->have_itemsizes))
        memcpy (b.itemsizes, cache->itemsizes, sizeof b.itemsizes);
      if (cache->steals != NULL)
        b.steals = g_array_ref (cache->steals);
      g_mutex_unlock (&cache->lock);
    }
  if (b.steals == NULL)
    {
      if ((b.steals = load_steals (&b, error)) == NULL)
        goto out;
      if (cache != NULL)
        {
          g_mutex_lock (&cache->lock);
          if (cache->steals == NULL)
            cache->steals = g_array_ref (b.steals);
          g_mutex_unlock (&cache->lock);
        }
    }
  if (!have_itemsizes)
    {
      if (!load_itemsizes (&b, error))
        goto out;
      if (cache != NULL)
        {
          g_mutex_lock (&cache->lock);
          memcpy (cache->itemsizes, b.itemsizes, sizeof b.itemsizes);
          cache->have_itemsizes = TRUE;
          g_mutex_unlock (&cache->lock);
        }
    }
  {
    g_autoptr (sqlite3_stmt) q = cowscope_format_statement (
      b.db, b.path,
      cp_id < -1
        ? "SELECT id, seq FROM checkpoints WHERE seq <= ?1 ORDER BY seq DESC, id DESC LIMIT 1"
        : "SELECT id, seq FROM checkpoints WHERE id = ?2 AND seq <= ?1",
      error);
    if (q == NULL)
      goto out;
    sqlite3_bind_int64 (q, 1, seq);
    if (cp_id >= -1)
      sqlite3_bind_int64 (q, 2, cp_id);
    rc = sqlite3_step (q);
    if (rc == SQLITE_ROW)
      {
        cp_id = INT (q, 0);
        cp_seq = INT (q, 1);
      }
    else if (!check_done (&b, rc, "checkpoints", error))
      goto out;
    else
      cp_id = -1;
  }

  graph = build_packed (&b, cache, seq, cp_id, cp_seq, freed_soon_ns, cancellable, error);

out:
  g_clear_pointer (&b.steals, g_array_unref);
  cowscope_session_document_release_db (document, b.db);
  return graph;
}

/* The reconstruction (see the file comment). */
CowscopeSharingGraph *
cowscope_graph_builder_run (CowscopeSessionDocument *document, gint64 seq,
                            gint64 freed_soon_ns, GCancellable *cancellable, GError **error)
{
  return build (document, seq, -2, TRUE, freed_soon_ns, cancellable, error);
}

/* The same from checkpoint @cp_id, without the cache (tests). */
CowscopeSharingGraph *
cowscope_graph_builder_run_from (CowscopeSessionDocument *document, gint64 seq, gint64 cp_id,
                                 gint64 freed_soon_ns, GError **error)
{
  return build (document, seq, MAX (cp_id, -1), FALSE, freed_soon_ns, NULL, error);
}

/* Forgets the document's decoded checkpoints and last state. */
void
cowscope_graph_builder_clear_cache (CowscopeSessionDocument *document)
{
  Cache *cache = g_object_get_data (G_OBJECT (document), "cowscope-graph-cache");
  if (cache != NULL)
    cache_clear (cache);
}

/* Keeps decoded checkpoints of @document up to @bytes (at least one). */
void
cowscope_graph_builder_set_cache_size (CowscopeSessionDocument *document, gsize bytes)
{
  Cache *cache = cache_get (document);
  g_mutex_lock (&cache->lock);
  cache->max_bytes = bytes;
  g_mutex_unlock (&cache->lock);
}
