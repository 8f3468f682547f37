/* cowscope-graph-builder.c — rebuilding the sharing graph at event seq S
 * from the nearest checkpoint at or before S plus the events after it,
 * with the rules of cowscope-graph-state.c.
 *
 * Schema 2: the checkpoint is one packed state (checkpoint_states) and
 * the events after it one packed replay (checkpoint_replays), free times
 * and names included.  Each document keeps a small cache so that moving
 * the cursor does not start from the file again:
 *   - the last few decoded checkpoint states (copied, never changed);
 *   - the state the last build ended with, and where it stopped in its
 *     replay: a later instant in the same checkpoint interval applies
 *     only the events in between;
 *   - when the cursor moved back within an interval, a copy of the state
 *     a little before the new instant (an anchor): the next steps back
 *     start there rather than at the checkpoint.
 * Builds of one document may run in several threads at once; the cache
 * hands its state to one of them at a time.
 *
 * Schema 1: the checkpoint lists the ids of live objects; their static
 * attributes come from the derived tables (one join per kind and
 * process), and a storage's changing state (the context it shares, the
 * allocation it owns, whether it materialized) from its materializations
 * up to the checkpoint and the live contexts' first storages.  The events
 * after the checkpoint are then applied in seq order.  Objects created by
 * those events get their free time and name from one id-range scan per
 * table (ids grow with time, so they are contiguous).  No cache.
 */
#include "cowscope-sharing-graph-private.h"

#include <glib/gi18n-lib.h>
#include <stdlib.h>
#include <string.h>

#include "cowscope-graph-state.h"
#include "cowscope-packed-reader.h"
#include "cowscope-session-db.h"
#include "cowscope-session-document-private.h"
#include "cowscope-session-model-error.h"

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
  gint64 at, ts, pid;     /* the decoder's running values there */
} Cursor;

typedef struct {
  GMutex lock;              /* protects everything below */
  gboolean have_itemsizes;
  guint itemsizes[N_ITEMSIZES];
  GQueue decoded;           /* Decoded*, most recently used first */
  gsize decoded_bytes, max_bytes;
  CowscopeGraphState *spare; /* an evicted state's memory, to decode into */
  Cursor *cursor;           /* NULL while a build has it */
  Cursor *anchor;           /* see the file comment; NULL: none */
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
  Decoded *d;
  while ((d = g_queue_pop_head (&cache->decoded)) != NULL)
    decoded_unref (d);
  cache->decoded_bytes = 0;
  g_clear_pointer (&cache->cursor, cursor_free);
  g_clear_pointer (&cache->anchor, cursor_free);
  g_clear_pointer (&cache->spare, cowscope_graph_state_free);
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

typedef struct {
  CowscopeSessionDocument *document;
  sqlite3 *db;
  const char *path;
  CowscopeGraphState *st;
  guint itemsizes[N_ITEMSIZES];
} Builder;

/* Prepares and binds (checkpoint id, pid[, seq]). */
static sqlite3_stmt *
prepare3 (Builder *b, const char *sql, gint64 a, gint64 c, gint64 d, GError **error)
{
  sqlite3_stmt *stmt = cowscope_session_db_prepare (b->db, b->path, sql, error);
  if (stmt == NULL)
    return NULL;
  sqlite3_bind_int64 (stmt, 1, a);
  sqlite3_bind_int64 (stmt, 2, c);
  if (sqlite3_bind_parameter_count (stmt) >= 3)
    sqlite3_bind_int64 (stmt, 3, d);
  return stmt;
}

/* Steps to the end; FALSE with @error on a failure. */
static gboolean
check_done (Builder *b, int rc, const char *what, GError **error)
{
  if (rc == SQLITE_DONE)
    return TRUE;
  cowscope_session_db_set_error (error, b->db, rc, b->path, what);
  return FALSE;
}

#define INT(stmt, col) cowscope_session_db_column_int ((stmt), (col), 0)

/* Loads the live objects of checkpoint @cp_id (state after @cp_seq) of
 * process @pid, with their state. */
static gboolean
load_checkpoint_pid (Builder *b, gint64 cp_id, gint64 cp_seq, guint32 pid, GError **error)
{
  CowscopeGraphState *st = b->st;
  g_autoptr (GArray) contexts = g_array_new (FALSE, FALSE, sizeof (guint64));
  g_autoptr (GArray) storages = g_array_new (FALSE, FALSE, sizeof (guint64));
  CowscopeGraphNode *s;
  int rc;
  {
    g_autoptr (sqlite3_stmt) q = prepare3 (
      b,
      "SELECT co.id, a.kind, a.device, a.nbytes, a.free_ts FROM checkpoint_objects co"
      " LEFT JOIN allocations a ON a.pid = co.pid AND a.id = co.id"
      " WHERE co.checkpoint_id = ?1 AND co.pid = ?2 AND co.kind = 'allocation'",
      cp_id, pid, 0, error);
    if (q == NULL)
      return FALSE;
    while ((rc = sqlite3_step (q)) == SQLITE_ROW)
      {
        s = cowscope_graph_state_add (st, COWSCOPE_NODE_ALLOCATION, pid, (guint64) INT (q, 0));
        s->alloc_kind = (guint8) INT (q, 1);
        s->device = INT (q, 2);
        s->nbytes = (guint64) INT (q, 3);
        s->free_ts = cowscope_session_db_column_int (q, 4, -1);
      }
    if (!check_done (b, rc, "checkpoint allocations", error))
      return FALSE;
  }
  {
    g_autoptr (sqlite3_stmt) q = prepare3 (
      b,
      "SELECT co.id, c.allocation_id, c.first_storage_id, c.free_ts FROM checkpoint_objects co"
      " LEFT JOIN contexts c ON c.pid = co.pid AND c.id = co.id"
      " WHERE co.checkpoint_id = ?1 AND co.pid = ?2 AND co.kind = 'context'",
      cp_id, pid, 0, error);
    if (q == NULL)
      return FALSE;
    while ((rc = sqlite3_step (q)) == SQLITE_ROW)
      {
        guint64 id = (guint64) INT (q, 0);
        s = cowscope_graph_state_add (st, COWSCOPE_NODE_CONTEXT, pid, id);
        s->allocation_id = (guint64) INT (q, 1);
        s->storage_id = (guint64) INT (q, 2);
        s->free_ts = cowscope_session_db_column_int (q, 3, -1);
        g_array_append_val (contexts, id);
      }
    if (!check_done (b, rc, "checkpoint contexts", error))
      return FALSE;
  }
  {
    g_autoptr (sqlite3_stmt) q = prepare3 (
      b,
      "SELECT co.id, s.allocation_id, s.nbytes, s.context_id, s.source_storage_id, s.free_ts"
      " FROM checkpoint_objects co LEFT JOIN storages s ON s.pid = co.pid AND s.id = co.id"
      " WHERE co.checkpoint_id = ?1 AND co.pid = ?2 AND co.kind = 'storage'",
      cp_id, pid, 0, error);
    if (q == NULL)
      return FALSE;
    while ((rc = sqlite3_step (q)) == SQLITE_ROW)
      {
        guint64 id = (guint64) INT (q, 0);
        s = cowscope_graph_state_add (st, COWSCOPE_NODE_STORAGE, pid, id);
        s->allocation_id = (guint64) INT (q, 1);
        s->nbytes = (guint64) INT (q, 2);
        s->context_id = (guint64) INT (q, 3); /* birth context, checked below */
        s->source_id = (guint64) INT (q, 4);
        s->free_ts = cowscope_session_db_column_int (q, 5, -1);
        g_array_append_val (storages, id);
      }
    if (!check_done (b, rc, "checkpoint storages", error))
      return FALSE;
  }
  {
    g_autoptr (sqlite3_stmt) q = prepare3 (
      b,
      "SELECT co.id, t.storage_id, t.base_tensor_id, t.dtype, t.ndim, t.numel, t.name,"
      " t.free_ts FROM checkpoint_objects co LEFT JOIN tensors t ON t.pid = co.pid"
      " AND t.id = co.id WHERE co.checkpoint_id = ?1 AND co.pid = ?2 AND co.kind = 'tensor'",
      cp_id, pid, 0, error);
    if (q == NULL)
      return FALSE;
    while ((rc = sqlite3_step (q)) == SQLITE_ROW)
      {
        s = cowscope_graph_state_add (st, COWSCOPE_NODE_TENSOR, pid, (guint64) INT (q, 0));
        s->storage_id = (guint64) INT (q, 1);
        s->source_id = (guint64) INT (q, 2);
        s->dtype = (guint32) INT (q, 3);
        s->ndim = (guint32) INT (q, 4);
        s->numel = INT (q, 5);
        s->free_ts = cowscope_session_db_column_int (q, 7, -1);
        if (sqlite3_column_type (q, 6) == SQLITE_TEXT)
          {
            g_autofree char *name = cowscope_session_db_column_text (q, 6);
            cowscope_graph_state_set_name (st, s, name, -1);
          }
      }
    if (!check_done (b, rc, "checkpoint tensors", error))
      return FALSE;
  }

  /* Storage state at the checkpoint.  A storage shares context C when it
   * was born in C or C's first storage, C is live, and it has not
   * materialized out of C; otherwise it owns the allocation of its last
   * materialization (or its birth allocation). */
  g_autoptr (GHashTable) left = g_hash_table_new (g_direct_hash, g_direct_equal);
  {
    g_autoptr (sqlite3_stmt) q = prepare3 (
      b,
      "SELECT m.storage_id, m.context_id, m.allocation_id FROM checkpoint_objects co"
      " JOIN materializations m ON m.pid = co.pid AND m.storage_id = co.id"
      " WHERE co.checkpoint_id = ?1 AND co.pid = ?2 AND co.kind = 'storage'"
      " AND m.seq <= ?3 AND (m.kind & 255) IN (1, 2) ORDER BY m.seq",
      cp_id, pid, cp_seq, error);
    if (q == NULL)
      return FALSE;
    while ((rc = sqlite3_step (q)) == SQLITE_ROW)
      {
        s = cowscope_graph_state_lookup (st, COWSCOPE_NODE_STORAGE, pid, (guint64) INT (q, 0));
        if (s == NULL)
          continue;
        guint64 ctx = (guint64) INT (q, 1);
        s->left_context_id = ctx;
        s->allocation_id = (guint64) INT (q, 2);
        /* Remember (storage, context) pairs that ended. */
        g_hash_table_add (left, GSIZE_TO_POINTER ((s->id * 0x9E3779B97F4A7C15ull) ^ ctx));
      }
    if (!check_done (b, rc, "checkpoint materializations", error))
      return FALSE;
  }
#define LEFT(sid, ctx) \
  g_hash_table_contains (left, GSIZE_TO_POINTER (((sid) * 0x9E3779B97F4A7C15ull) ^ (ctx)))

  for (guint i = 0; i < storages->len; i++)
    {
      s = cowscope_graph_state_lookup (st, COWSCOPE_NODE_STORAGE, pid,
                                       g_array_index (storages, guint64, i));
      if (s == NULL)
        continue;
      guint64 birth = s->context_id;
      s->context_id = 0;
      if (birth != 0 && cowscope_graph_state_lookup (st, COWSCOPE_NODE_CONTEXT, pid, birth) != NULL
          && !LEFT (s->id, birth))
        s->context_id = birth;
    }
  for (guint i = 0; i < contexts->len; i++)
    {
      CowscopeGraphNode *c = cowscope_graph_state_lookup (st, COWSCOPE_NODE_CONTEXT, pid,
                                                          g_array_index (contexts, guint64, i));
      if (c == NULL)
        continue;
      guint64 first = c->storage_id;
      s = cowscope_graph_state_lookup (st, COWSCOPE_NODE_STORAGE, pid, first);
      if (s != NULL && !LEFT (first, c->id) && (s->context_id == 0 || s->context_id < c->id))
        s->context_id = c->id;
    }
  for (guint i = 0; i < storages->len; i++)
    {
      s = cowscope_graph_state_lookup (st, COWSCOPE_NODE_STORAGE, pid,
                                       g_array_index (storages, guint64, i));
      if (s == NULL || s->context_id == 0)
        continue;
      CowscopeGraphNode *c = cowscope_graph_state_lookup (st, COWSCOPE_NODE_CONTEXT, pid,
                                                          s->context_id);
      s->left_context_id = 0;
      if (c != NULL && c->allocation_id != 0)
        s->allocation_id = c->allocation_id;
    }
#undef LEFT
  return TRUE;
}

/* Tracks the id range created per (kind, pid) for the attribute scan. */
static void
note_created (GHashTable *created, const CowscopeGraphNode *n)
{
  gpointer key = GSIZE_TO_POINTER (((gsize) n->pid << 8) | n->kind);
  gint64 *range = g_hash_table_lookup (created, key);
  if (range == NULL)
    {
      range = g_new (gint64, 2);
      range[0] = range[1] = (gint64) n->id;
      g_hash_table_insert (created, key, range);
    }
  range[0] = MIN (range[0], (gint64) n->id);
  range[1] = MAX (range[1], (gint64) n->id);
}

/* Fetches free times (and tensor names) of objects created during the
 * replay: one id-range scan per (kind, pid). */
static gboolean
fetch_created (Builder *b, GHashTable *created, GError **error)
{
  static const char *const sql[COWSCOPE_N_NODE_KINDS] = {
    "SELECT id, free_ts, NULL FROM allocations WHERE pid = ?1 AND id BETWEEN ?2 AND ?3",
    "SELECT id, free_ts, NULL FROM contexts WHERE pid = ?1 AND id BETWEEN ?2 AND ?3",
    "SELECT id, free_ts, NULL FROM storages WHERE pid = ?1 AND id BETWEEN ?2 AND ?3",
    "SELECT id, free_ts, name FROM tensors WHERE pid = ?1 AND id BETWEEN ?2 AND ?3",
  };
  GHashTableIter iter;
  gpointer key, value;
  g_hash_table_iter_init (&iter, created);
  while (g_hash_table_iter_next (&iter, &key, &value))
    {
      guint32 pid = (guint32) (GPOINTER_TO_SIZE (key) >> 8);
      guint8 kind = (guint8) (GPOINTER_TO_SIZE (key) & 0xff);
      const gint64 *range = value;
      g_autoptr (sqlite3_stmt) q =
        cowscope_session_db_prepare (b->db, b->path, sql[kind], error);
      if (q == NULL)
        return FALSE;
      sqlite3_bind_int64 (q, 1, pid);
      sqlite3_bind_int64 (q, 2, range[0]);
      sqlite3_bind_int64 (q, 3, range[1]);
      int rc;
      while ((rc = sqlite3_step (q)) == SQLITE_ROW)
        {
          CowscopeGraphNode *s = cowscope_graph_state_lookup (b->st, kind, pid, (guint64) INT (q, 0));
          if (s == NULL)
            continue;
          s->free_ts = cowscope_session_db_column_int (q, 1, -1);
          if (sqlite3_column_type (q, 2) == SQLITE_TEXT)
            {
              g_autofree char *name = cowscope_session_db_column_text (q, 2);
              cowscope_graph_state_set_name (b->st, s, name, -1);
            }
        }
      if (!check_done (b, rc, "objects", error))
        return FALSE;
    }
  return TRUE;
}

/* ---- schema 2: packed checkpoint states and replays ------------------ */

static void
set_damaged (Builder *b, GError **error, const char *what)
{
  g_set_error (error, COWSCOPE_SESSION_MODEL_ERROR, COWSCOPE_SESSION_MODEL_ERROR_DAMAGED,
               _("The session “%s” is damaged (%s)"), b->path, what);
}

/* Reads one BLOB column of the row @key of @sql (and an integer column
 * into @extra); NULL with @error on a read failure, or with *@found FALSE
 * when there is no such row. */
static GBytes *
read_blob (Builder *b, const char *sql, gint64 key, gint64 *extra, gboolean *found,
           GError **error)
{
  g_autoptr (sqlite3_stmt) q = cowscope_session_db_prepare (b->db, b->path, sql, error);
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

/* The item size of each dtype (0: unknown). */
static gboolean
load_itemsizes (Builder *b, GError **error)
{
  g_autoptr (sqlite3_stmt) q =
    cowscope_session_db_prepare (b->db, b->path, "SELECT id, itemsize FROM dtypes", error);
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

/* Decodes checkpoint @cp_id's whole state from checkpoint_states into a
 * new state with room for @extra more objects. */
static CowscopeGraphState *
load_packed_state (Builder *b, gint64 cp_id, gsize extra, CowscopeGraphState *into,
                   GError **error)
{
  g_autoptr (CowscopeGraphState) st = into;
  gint64 cp_ts = 0;
  gboolean found;
  {
    g_autoptr (sqlite3_stmt) q = cowscope_session_db_prepare (
      b->db, b->path, "SELECT ts FROM checkpoints WHERE id = ?1", error);
    if (q == NULL)
      return NULL;
    sqlite3_bind_int64 (q, 1, cp_id);
    if (sqlite3_step (q) == SQLITE_ROW)
      cp_ts = INT (q, 0);
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
  guint32 pid = 0;
  guint8 kind = 0;
  guint64 id = 0;
  /* Objects come sorted by (kind, pid, id): while they do, each is new. */
  gboolean sorted = TRUE, first = TRUE;
  while (!cowscope_packed_reader_done (&r))
    {
      gint64 dpid = cowscope_packed_s (&r);
      guint8 k = cowscope_packed_byte (&r);
      guint32 prev_pid = pid;
      guint8 prev_kind = kind;
      guint64 prev_id = id;
      if (dpid != 0 || k != kind)
        id = 0;
      pid = (guint32) ((gint64) pid + dpid);
      kind = k;
      id += (guint64) cowscope_packed_s (&r);
      if (kind >= COWSCOPE_N_OBJECT_KINDS || !cowscope_packed_reader_ok (&r))
        break;
      sorted = sorted
               && (first || kind > prev_kind || (kind == prev_kind && pid > prev_pid)
                   || (kind == prev_kind && pid == prev_pid && id > prev_id));
      first = FALSE;
      CowscopeGraphNode *s = sorted ? cowscope_graph_state_add_new (st, kind, pid, id)
                                    : cowscope_graph_state_add (st, kind, pid, id);
      switch (kind)
        {
        case COWSCOPE_NODE_ALLOCATION:
          s->alloc_kind = (guint8) cowscope_packed_u (&r);
          s->device = cowscope_packed_s (&r);
          s->nbytes = cowscope_packed_u (&r);
          break;
        case COWSCOPE_NODE_CONTEXT:
          s->allocation_id = cowscope_packed_u (&r);
          s->storage_id = cowscope_packed_u (&r);
          break;
        case COWSCOPE_NODE_STORAGE:
          s->allocation_id = cowscope_packed_u (&r);
          s->nbytes = cowscope_packed_u (&r);
          s->context_id = cowscope_packed_u (&r);
          s->left_context_id = cowscope_packed_u (&r);
          s->source_id = cowscope_packed_u (&r);
          break;
        default:
          s->storage_id = cowscope_packed_u (&r);
          s->source_id = cowscope_packed_u (&r);
          s->dtype = (guint32) cowscope_packed_u (&r);
          s->ndim = (guint32) cowscope_packed_u (&r);
          s->numel = cowscope_packed_s (&r);
          break;
        }
      s->free_ts = cowscope_packed_free (&r, cp_ts);
      if (kind == COWSCOPE_NODE_TENSOR)
        {
          gsize name_len;
          const char *name = cowscope_packed_name (&r, &name_len);
          if (name != NULL)
            cowscope_graph_state_set_name (st, s, name, (gssize) name_len);
        }
    }
  if (!cowscope_packed_reader_ok (&r) || kind >= COWSCOPE_N_OBJECT_KINDS)
    {
      set_damaged (b, error, "a checkpoint state cannot be read");
      return NULL;
    }
  return g_steal_pointer (&st);
}

/* The object kind an event creates, or -1. */
static int
born_kind (gint64 type)
{
  switch (type)
    {
    case COWSCOPE_EV_ALLOCATION_NEW: return COWSCOPE_NODE_ALLOCATION;
    case COWSCOPE_EV_CONTEXT_NEW: return COWSCOPE_NODE_CONTEXT;
    case COWSCOPE_EV_STORAGE_NEW: return COWSCOPE_NODE_STORAGE;
    case COWSCOPE_EV_TENSOR_NEW: return COWSCOPE_NODE_TENSOR;
    default: return -1;
    }
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

/* A cursor at checkpoint @cp_id (-1: the start), from @cache's decoded
 * states (NULL: no cache) or the file; its state reuses the memory of
 * @recycled (taken; NULL: none) when it can. */
static Cursor *
cursor_new (Builder *b, Cache *cache, gint64 cp_id, gint64 cp_seq,
            CowscopeGraphState *recycled, GError **error)
{
  g_autoptr (CowscopeGraphState) old = recycled;
  Decoded *d = NULL;
  CowscopeGraphState *spare = NULL;
  if (cache != NULL)
    {
      g_mutex_lock (&cache->lock);
      if ((d = cache_find_decoded (cache, cp_id)) == NULL)
        spare = g_steal_pointer (&cache->spare);
      g_mutex_unlock (&cache->lock);
    }
  if (d == NULL)
    {
      if ((d = decode (b, cp_id, spare, error)) == NULL)
        return NULL;
      if (cache != NULL)
        cache_add_decoded (cache, d);
    }
  Cursor *c = g_new0 (Cursor, 1);
  c->cp_id = cp_id;
  c->cp_seq = cp_seq;
  c->seq = cp_seq;
  c->replay = g_bytes_ref (d->replay);
  c->extra = d->extra;
  c->n_events = d->n_events;
  if (cache == NULL)
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
  gint64 at = c->at, ts = c->ts, pid = c->pid;
  while (!cowscope_packed_reader_done (&r))
    {
      const guint8 *start = r.p;
      gint64 e_at = at + cowscope_packed_s (&r);
      gint64 e_ts = ts + cowscope_packed_s (&r);
      gint64 type = (gint64) cowscope_packed_u (&r);
      gint64 aux = cowscope_packed_s (&r);
      gint64 e_pid = pid + cowscope_packed_s (&r);
      gint64 v[5];
      for (int k = 0; k < 5; k++)
        v[k] = cowscope_packed_s (&r);
      if (!cowscope_packed_reader_ok (&r))
        break;
      if (e_at > seq)
        {
          r.p = start;
          break;
        }
      at = e_at;
      ts = e_ts;
      pid = e_pid;
      CowscopeGraphNode *born = cowscope_graph_state_apply (c->st, type, aux, (guint32) pid, v);
      int kind = born_kind (type);
      if (kind >= 0)
        {
          gint64 free_ts = cowscope_packed_free (&r, ts);
          gsize name_len = 0;
          const char *name = kind == COWSCOPE_NODE_TENSOR ? cowscope_packed_name (&r, &name_len)
                                                          : NULL;
          if (born != NULL)
            {
              born->free_ts = free_ts;
              if (name != NULL)
                cowscope_graph_state_set_name (c->st, born, name, (gssize) name_len);
            }
        }
      c->n_replayed++;
      if ((++*n_applied & 0x3fff) == 0
          && g_cancellable_set_error_if_cancelled (cancellable, error))
        return FALSE;
    }
  if (!cowscope_packed_reader_ok (&r))
    {
      set_damaged (b, error, "a checkpoint replay cannot be read");
      return FALSE;
    }
  c->offset = (gsize) (r.p - data);
  c->at = at;
  c->ts = ts;
  c->pid = pid;
  c->seq = seq;
  return TRUE;
}

/* The time of the last event at or before @seq (@fallback: none). */
static gboolean
time_of (Builder *b, gint64 seq, gint64 *time, GError **error)
{
  g_autoptr (sqlite3_stmt) q = cowscope_session_db_prepare (
    b->db, b->path, "SELECT ts FROM events WHERE seq <= ?1 ORDER BY seq DESC LIMIT 1", error);
  if (q == NULL)
    return FALSE;
  sqlite3_bind_int64 (q, 1, seq);
  if (sqlite3_step (q) == SQLITE_ROW)
    *time = INT (q, 0);
  return TRUE;
}

/* Schema 2: the graph after @seq from checkpoint @cp_id (-1: the start),
 * through @cache when not NULL. */
static CowscopeSharingGraph *
build_packed (Builder *b, Cache *cache, gint64 seq, gint64 cp_id, gint64 cp_seq,
              gint64 freed_soon_ns, GCancellable *cancellable, GError **error)
{
  gint64 t0 = g_get_monotonic_time ();
  const char *from = "checkpoint";
  Cursor *c = NULL, *anchor = NULL;
  CowscopeGraphState *recycled = NULL, *old_anchor = NULL;
  gboolean back = FALSE;
  if (cache != NULL)
    {
      g_mutex_lock (&cache->lock);
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
  else if (c == NULL && (c = cursor_new (b, cache, cp_id, cp_seq, recycled, error)) == NULL)
    return NULL;
  gint64 t1 = g_get_monotonic_time ();
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
  gint64 t2 = g_get_monotonic_time ();
  CowscopeGraphAssembleOptions options = {
    .seq = seq,
    .time = time,
    .checkpoint_seq = cp_seq,
    .n_replayed = c->n_replayed,
    .freed_soon_ns = freed_soon_ns,
    .itemsizes = b->itemsizes,
    .n_itemsizes = N_ITEMSIZES,
  };
  CowscopeSharingGraph *graph = cowscope_graph_state_assemble (c->st, &options);
  if (g_getenv ("COWSCOPE_GRAPH_TRACE"))
    g_printerr ("graph: from %s %.1f ms, replay %" G_GUINT64_FORMAT " events %.1f ms,"
                " assemble %.1f ms\n",
                from, (t1 - t0) / 1e3, n_applied,
                (t2 - t1) / 1e3, (g_get_monotonic_time () - t2) / 1e3);
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

/* ---- schema 1 ------------------------------------------------------------- */

/* The graph after @seq from checkpoint @cp_id (-1: the start) through the
 * derived tables and the events table. */
static CowscopeSharingGraph *
build_from_rows (Builder *b, gint64 seq, gint64 cp_id, gint64 cp_seq, gint64 freed_soon_ns,
                 GCancellable *cancellable, GError **error)
{
  g_autoptr (GHashTable) created = g_hash_table_new_full (g_direct_hash, g_direct_equal, NULL,
                                                          g_free);
  gint64 time = cowscope_session_document_get_start_ns (b->document);
  guint64 n_replayed = 0;
  int rc;
  if (cp_id >= 0)
    {
      /* Each process in the checkpoint: a skip-scan over its primary key. */
      gint64 pid = -1;
      for (;;)
        {
          g_autoptr (sqlite3_stmt) q = prepare3 (
            b,
            "SELECT pid FROM checkpoint_objects WHERE checkpoint_id = ?1 AND pid > ?2"
            " ORDER BY pid LIMIT 1",
            cp_id, pid, 0, error);
          if (q == NULL)
            return NULL;
          rc = sqlite3_step (q);
          if (rc == SQLITE_DONE)
            break;
          if (rc != SQLITE_ROW)
            {
              check_done (b, rc, "checkpoint processes", error);
              return NULL;
            }
          pid = INT (q, 0);
          g_clear_pointer (&q, sqlite3_finalize);
          if (!load_checkpoint_pid (b, cp_id, cp_seq, (guint32) pid, error))
            return NULL;
          if (g_cancellable_set_error_if_cancelled (cancellable, error))
            return NULL;
        }
    }

  {
    g_autoptr (sqlite3_stmt) q = prepare3 (
      b,
      "SELECT seq, ts, type, aux, pid, v0, v1, v2, v3, v4 FROM events"
      " WHERE seq > ?1 AND seq <= ?2 ORDER BY seq",
      cp_seq, seq, 0, error);
    if (q == NULL)
      return NULL;
    while ((rc = sqlite3_step (q)) == SQLITE_ROW)
      {
        gint64 v[5];
        for (int k = 0; k < 5; k++)
          v[k] = sqlite3_column_int64 (q, 5 + k);
        time = sqlite3_column_int64 (q, 1);
        CowscopeGraphNode *born =
          cowscope_graph_state_apply (b->st, sqlite3_column_int64 (q, 2),
                                      sqlite3_column_int64 (q, 3),
                                      (guint32) sqlite3_column_int64 (q, 4), v);
        if (born != NULL)
          note_created (created, born);
        if ((++n_replayed & 0x3fff) == 0
            && g_cancellable_set_error_if_cancelled (cancellable, error))
          return NULL;
      }
    if (!check_done (b, rc, "events", error))
      return NULL;
  }
  if (n_replayed == 0 && cp_seq >= 0)
    {
      g_autoptr (sqlite3_stmt) q =
        cowscope_session_db_prepare (b->db, b->path, "SELECT ts FROM events WHERE seq = ?1", error);
      if (q == NULL)
        return NULL;
      sqlite3_bind_int64 (q, 1, seq);
      if (sqlite3_step (q) == SQLITE_ROW)
        time = INT (q, 0);
    }
  if (!fetch_created (b, created, error))
    return NULL;
  CowscopeGraphAssembleOptions options = {
    .seq = seq,
    .time = time,
    .checkpoint_seq = cp_seq,
    .n_replayed = n_replayed,
    .freed_soon_ns = freed_soon_ns,
    .itemsizes = b->itemsizes,
    .n_itemsizes = N_ITEMSIZES,
  };
  return cowscope_graph_state_assemble (b->st, &options);
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
      g_mutex_unlock (&cache->lock);
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
    g_autoptr (sqlite3_stmt) q = cowscope_session_db_prepare (
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

  if (cowscope_session_db_has_packed_index (b.db))
    graph = build_packed (&b, cache, seq, cp_id, cp_seq, freed_soon_ns, cancellable, error);
  else
    {
      b.st = cowscope_graph_state_new ();
      graph = build_from_rows (&b, seq, cp_id, cp_seq, freed_soon_ns, cancellable, error);
    }

out:
  cowscope_session_document_release_db (document, b.db);
  g_clear_pointer (&b.st, cowscope_graph_state_free);
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
