/* cowscope-graph-builder.c — rebuilding the sharing graph at event seq S
 * from the nearest checkpoint at or before S plus the events after it.
 *
 * The checkpoint lists the ids of live objects; their static attributes
 * come from the derived tables (one join per kind and process), and a
 * storage's changing state (the context it shares, the allocation it
 * owns, whether it materialized) from its materializations up to the
 * checkpoint and the live contexts' first storages.  The events after the
 * checkpoint are then applied in seq order.  Objects created by those
 * events get their free time and name from one id-range scan per table
 * (ids grow with time, so they are contiguous).
 */
#include "cowscope-sharing-graph-private.h"

#include <glib/gi18n-lib.h>
#include <stdlib.h>
#include <string.h>

#include "cowscope-packed-reader.h"
#include "cowscope-session-db.h"
#include "cowscope-session-document-private.h"
#include "cowscope-session-model-error.h"

typedef struct {
  CowscopeGraphNode node;
  gboolean dead;
  const char *name; /* before interning */
} Slot;

/* Open-addressing map (kind, pid, id) -> slot index + 1; never deletes. */
typedef struct {
  GArray *slots;     /* Slot */
  guint32 *table;
  gsize mask;
  gsize used;
  GStringChunk *names;
} State;

static guint64
hash_key (guint8 kind, guint32 pid, guint64 id)
{
  guint64 h = id * 0x9E3779B97F4A7C15ull;
  h ^= ((guint64) pid << 8 | kind) * 0xC2B2AE3D27D4EB4Full;
  return h ^ (h >> 29);
}

static void
state_init (State *st)
{
  st->slots = g_array_sized_new (FALSE, TRUE, sizeof (Slot), 1024);
  st->mask = 4095;
  st->table = g_new0 (guint32, st->mask + 1);
  st->used = 0;
  st->names = g_string_chunk_new (4096);
}

static void
state_clear (State *st)
{
  g_clear_pointer (&st->slots, g_array_unref);
  g_clear_pointer (&st->table, g_free);
  g_clear_pointer (&st->names, g_string_chunk_free);
}

/* The slot of (kind, pid, id), or NULL. */
static Slot *
state_find (State *st, guint8 kind, guint32 pid, guint64 id)
{
  gsize i = hash_key (kind, pid, id) & st->mask;
  for (;;)
    {
      guint32 v = st->table[i];
      if (v == 0)
        return NULL;
      Slot *s = &g_array_index (st->slots, Slot, v - 1);
      if (s->node.id == id && s->node.pid == pid && s->node.kind == kind)
        return s;
      i = (i + 1) & st->mask;
    }
}

/* Inserts into the open-addressing table. */
static void
table_put (State *st, guint32 index)
{
  Slot *s = &g_array_index (st->slots, Slot, index);
  gsize i = hash_key (s->node.kind, s->node.pid, s->node.id) & st->mask;
  while (st->table[i] != 0)
    i = (i + 1) & st->mask;
  st->table[i] = index + 1;
}

/* A live slot for (kind, pid, id): the existing one revived and cleared,
 * or a new one.  The returned pointer is valid until the next add. */
static Slot *
state_add (State *st, guint8 kind, guint32 pid, guint64 id)
{
  Slot *s = state_find (st, kind, pid, id);
  if (s != NULL)
    {
      memset (s, 0, sizeof *s);
    }
  else
    {
      if ((st->used + 1) * 2 > st->mask + 1)
        {
          g_free (st->table);
          st->mask = st->mask * 2 + 1;
          st->table = g_new0 (guint32, st->mask + 1);
          for (guint32 i = 0; i < st->slots->len; i++)
            table_put (st, i);
        }
      g_array_set_size (st->slots, st->slots->len + 1);
      s = &g_array_index (st->slots, Slot, st->slots->len - 1);
      memset (s, 0, sizeof *s);
      s->node.kind = kind;
      s->node.pid = pid;
      s->node.id = id;
      table_put (st, st->slots->len - 1);
      st->used++;
    }
  s->node.kind = kind;
  s->node.pid = pid;
  s->node.id = id;
  s->node.free_ts = -1;
  return s;
}

/* Makes room for @n more slots without rehashing (a hint; any @n works). */
static void
state_reserve (State *st, gsize n)
{
  n = MIN (n, (gsize) G_MAXUINT32 / 4);
  gsize want = st->slots->len + n;
  if (want * 2 <= st->mask + 1)
    return;
  gsize size = st->mask + 1;
  while (size < want * 2)
    size *= 2;
  g_free (st->table);
  st->mask = size - 1;
  st->table = g_new0 (guint32, size);
  for (guint32 i = 0; i < st->slots->len; i++)
    table_put (st, i);
  guint len = st->slots->len;
  g_array_set_size (st->slots, (guint) want);
  g_array_set_size (st->slots, len);
}

/* Marks (kind, pid, id) freed. */
static void
state_kill (State *st, guint8 kind, guint32 pid, guint64 id)
{
  Slot *s = state_find (st, kind, pid, id);
  if (s != NULL)
    s->dead = TRUE;
}

/* A live slot or NULL. */
static Slot *
state_live (State *st, guint8 kind, guint32 pid, guint64 id)
{
  Slot *s = state_find (st, kind, pid, id);
  return s != NULL && !s->dead ? s : NULL;
}

typedef struct {
  CowscopeSessionDocument *document;
  sqlite3 *db;
  const char *path;
  State st;
  GHashTable *itemsize; /* dtype -> itemsize */
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
  State *st = &b->st;
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
        Slot *s = state_add (st, COWSCOPE_NODE_ALLOCATION, pid, (guint64) INT (q, 0));
        s->node.alloc_kind = (guint8) INT (q, 1);
        s->node.device = INT (q, 2);
        s->node.nbytes = (guint64) INT (q, 3);
        s->node.free_ts = cowscope_session_db_column_int (q, 4, -1);
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
        Slot *s = state_add (st, COWSCOPE_NODE_CONTEXT, pid, (guint64) INT (q, 0));
        s->node.allocation_id = (guint64) INT (q, 1);
        s->node.storage_id = (guint64) INT (q, 2);
        s->node.free_ts = cowscope_session_db_column_int (q, 3, -1);
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
        Slot *s = state_add (st, COWSCOPE_NODE_STORAGE, pid, (guint64) INT (q, 0));
        s->node.allocation_id = (guint64) INT (q, 1);
        s->node.nbytes = (guint64) INT (q, 2);
        s->node.context_id = (guint64) INT (q, 3); /* birth context, checked below */
        s->node.source_id = (guint64) INT (q, 4);
        s->node.free_ts = cowscope_session_db_column_int (q, 5, -1);
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
        Slot *s = state_add (st, COWSCOPE_NODE_TENSOR, pid, (guint64) INT (q, 0));
        s->node.storage_id = (guint64) INT (q, 1);
        s->node.source_id = (guint64) INT (q, 2);
        s->node.dtype = (guint32) INT (q, 3);
        s->node.ndim = (guint32) INT (q, 4);
        s->node.numel = INT (q, 5);
        if (sqlite3_column_type (q, 6) == SQLITE_TEXT)
          {
            g_autofree char *name = cowscope_session_db_column_text (q, 6);
            s->name = g_string_chunk_insert_const (st->names, name);
          }
        s->node.free_ts = cowscope_session_db_column_int (q, 7, -1);
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
        Slot *s = state_live (st, COWSCOPE_NODE_STORAGE, pid, (guint64) INT (q, 0));
        if (s == NULL)
          continue;
        guint64 ctx = (guint64) INT (q, 1);
        s->node.left_context_id = ctx;
        s->node.allocation_id = (guint64) INT (q, 2);
        /* Remember (storage, context) pairs that ended. */
        g_hash_table_add (left, GSIZE_TO_POINTER ((s->node.id * 0x9E3779B97F4A7C15ull) ^ ctx));
      }
    if (!check_done (b, rc, "checkpoint materializations", error))
      return FALSE;
  }
#define LEFT(sid, ctx) \
  g_hash_table_contains (left, GSIZE_TO_POINTER (((sid) * 0x9E3779B97F4A7C15ull) ^ (ctx)))

  for (guint i = 0; i < st->slots->len; i++)
    {
      Slot *s = &g_array_index (st->slots, Slot, i);
      if (s->dead || s->node.pid != pid || s->node.kind != COWSCOPE_NODE_STORAGE)
        continue;
      guint64 birth = s->node.context_id;
      s->node.context_id = 0;
      if (birth != 0 && state_live (st, COWSCOPE_NODE_CONTEXT, pid, birth) != NULL
          && !LEFT (s->node.id, birth))
        s->node.context_id = birth;
    }
  for (guint i = 0; i < st->slots->len; i++)
    {
      Slot *c = &g_array_index (st->slots, Slot, i);
      if (c->dead || c->node.pid != pid || c->node.kind != COWSCOPE_NODE_CONTEXT)
        continue;
      guint64 first = c->node.storage_id;
      Slot *s = state_live (st, COWSCOPE_NODE_STORAGE, pid, first);
      if (s != NULL && !LEFT (first, c->node.id)
          && (s->node.context_id == 0 || s->node.context_id < c->node.id))
        s->node.context_id = c->node.id;
    }
  for (guint i = 0; i < st->slots->len; i++)
    {
      Slot *s = &g_array_index (st->slots, Slot, i);
      if (s->dead || s->node.pid != pid || s->node.kind != COWSCOPE_NODE_STORAGE)
        continue;
      if (s->node.context_id != 0)
        {
          Slot *c = state_live (st, COWSCOPE_NODE_CONTEXT, pid, s->node.context_id);
          s->node.left_context_id = 0;
          if (c != NULL && c->node.allocation_id != 0)
            s->node.allocation_id = c->node.allocation_id;
        }
    }
#undef LEFT
  return TRUE;
}

/* Applies one event to the state (the same rules a full replay uses). */
static void
apply_event (State *st, gint64 type, gint64 aux, guint32 pid, const gint64 v[5],
             GHashTable *created)
{
  Slot *s;
  switch (type)
    {
    case COWSCOPE_EV_ALLOCATION_NEW:
      s = state_add (st, COWSCOPE_NODE_ALLOCATION, pid, (guint64) v[0]);
      s->node.alloc_kind = (guint8) aux;
      s->node.nbytes = (guint64) v[1];
      s->node.device = v[3];
      break;
    case COWSCOPE_EV_ALLOCATION_FREE:
      state_kill (st, COWSCOPE_NODE_ALLOCATION, pid, (guint64) v[0]);
      return;
    case COWSCOPE_EV_STORAGE_NEW:
      s = state_add (st, COWSCOPE_NODE_STORAGE, pid, (guint64) v[0]);
      s->node.allocation_id = (guint64) v[1];
      s->node.nbytes = (guint64) v[2];
      s->node.context_id = (guint64) v[3];
      s->node.source_id = (guint64) v[4];
      break;
    case COWSCOPE_EV_STORAGE_FREE:
      state_kill (st, COWSCOPE_NODE_STORAGE, pid, (guint64) v[0]);
      return;
    case COWSCOPE_EV_TENSOR_NEW:
      s = state_add (st, COWSCOPE_NODE_TENSOR, pid, (guint64) v[0]);
      s->node.storage_id = (guint64) v[1];
      s->node.source_id = (guint64) v[2];
      s->node.numel = v[3];
      s->node.dtype = (guint32) (aux & 0xff);
      s->node.ndim = (guint32) ((aux >> 8) & 0xff);
      break;
    case COWSCOPE_EV_TENSOR_FREE:
      state_kill (st, COWSCOPE_NODE_TENSOR, pid, (guint64) v[0]);
      return;
    case COWSCOPE_EV_CONTEXT_NEW:
      s = state_add (st, COWSCOPE_NODE_CONTEXT, pid, (guint64) v[0]);
      s->node.allocation_id = (guint64) v[3];
      s->node.storage_id = (guint64) v[1];
      {
        Slot *joined = state_live (st, COWSCOPE_NODE_STORAGE, pid, (guint64) v[1]);
        if (joined != NULL)
          {
            joined->node.context_id = (guint64) v[0];
            joined->node.left_context_id = 0;
          }
        s = state_live (st, COWSCOPE_NODE_CONTEXT, pid, (guint64) v[0]);
      }
      break;
    case COWSCOPE_EV_CONTEXT_REF:
      if ((s = state_live (st, COWSCOPE_NODE_STORAGE, pid, (guint64) v[1])) != NULL)
        {
          s->node.context_id = (guint64) v[0];
          s->node.left_context_id = 0;
        }
      return;
    case COWSCOPE_EV_CONTEXT_UNREF:
      if ((s = state_live (st, COWSCOPE_NODE_STORAGE, pid, (guint64) v[1])) != NULL
          && s->node.context_id == (guint64) v[0])
        s->node.context_id = 0;
      return;
    case COWSCOPE_EV_CONTEXT_FREE:
      state_kill (st, COWSCOPE_NODE_CONTEXT, pid, (guint64) v[0]);
      return;
    case COWSCOPE_EV_MATERIALIZE_END:
      if ((aux & 0xff) != COWSCOPE_MATERIALIZE_COPY && (aux & 0xff) != COWSCOPE_MATERIALIZE_STEAL)
        return;
      if ((s = state_live (st, COWSCOPE_NODE_STORAGE, pid, (guint64) v[0])) != NULL)
        {
          s->node.context_id = 0;
          s->node.left_context_id = (guint64) v[1];
          s->node.allocation_id = (guint64) v[2];
        }
      return;
    default:
      return;
    }
  if (created != NULL)
    {
      /* Track the id range created per (kind, pid) for the attribute scan. */
      gpointer key = GSIZE_TO_POINTER (((gsize) pid << 8) | s->node.kind);
      gint64 *range = g_hash_table_lookup (created, key);
      if (range == NULL)
        {
          range = g_new (gint64, 2);
          range[0] = range[1] = (gint64) s->node.id;
          g_hash_table_insert (created, key, range);
        }
      range[0] = MIN (range[0], (gint64) s->node.id);
      range[1] = MAX (range[1], (gint64) s->node.id);
    }
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
          Slot *s = state_live (&b->st, kind, pid, (guint64) INT (q, 0));
          if (s == NULL)
            continue;
          s->node.free_ts = cowscope_session_db_column_int (q, 1, -1);
          if (sqlite3_column_type (q, 2) == SQLITE_TEXT)
            {
              g_autofree char *name = cowscope_session_db_column_text (q, 2);
              s->name = g_string_chunk_insert_const (b->st.names, name);
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

/* Reads one BLOB column of the row @key of @sql into a copy (freed by the
 * caller); *@found is FALSE when there is no such row. */
static guint8 *
read_blob (Builder *b, const char *sql, gint64 key, gsize *len, gint64 *extra,
           gboolean *found, GError **error)
{
  g_autoptr (sqlite3_stmt) q = cowscope_session_db_prepare (b->db, b->path, sql, error);
  *found = FALSE;
  *len = 0;
  if (q == NULL)
    return NULL;
  sqlite3_bind_int64 (q, 1, key);
  int rc = sqlite3_step (q);
  if (rc == SQLITE_DONE)
    return g_malloc (1);
  if (rc != SQLITE_ROW)
    {
      check_done (b, rc, "checkpoint", error);
      return NULL;
    }
  *found = TRUE;
  if (extra != NULL)
    *extra = INT (q, 1);
  const void *data = sqlite3_column_blob (q, 0);
  *len = (gsize) sqlite3_column_bytes (q, 0);
  return data != NULL ? g_memdup2 (data, *len) : g_malloc (1);
}

/* Sets a tensor slot's name from a packed (unterminated) name. */
static void
set_packed_name (State *st, Slot *s, const char *name, gsize len)
{
  if (name == NULL)
    return;
  g_autofree char *copy = g_strndup (name, len);
  s->name = g_string_chunk_insert_const (st->names, copy);
}

/* Loads checkpoint @cp_id's whole state from checkpoint_states. */
static gboolean
load_packed_state (Builder *b, gint64 cp_id, GError **error)
{
  gsize len;
  gint64 cp_ts = 0;
  gboolean found;
  {
    g_autoptr (sqlite3_stmt) q = cowscope_session_db_prepare (
      b->db, b->path, "SELECT ts FROM checkpoints WHERE id = ?1", error);
    if (q == NULL)
      return FALSE;
    sqlite3_bind_int64 (q, 1, cp_id);
    if (sqlite3_step (q) == SQLITE_ROW)
      cp_ts = INT (q, 0);
  }
  gint64 n_objects = 0;
  g_autofree guint8 *blob = read_blob (
    b, "SELECT objects, n_objects FROM checkpoint_states WHERE checkpoint_id = ?1", cp_id, &len,
    &n_objects, &found, error);
  if (blob == NULL)
    return FALSE;
  if (!found)
    {
      set_damaged (b, error, "a checkpoint state is missing");
      return FALSE;
    }
  State *st = &b->st;
  state_reserve (st, (gsize) CLAMP (n_objects, 0, (gint64) len));
  CowscopePackedReader r;
  cowscope_packed_reader_init (&r, blob, len);
  guint32 pid = 0;
  guint8 kind = 0;
  guint64 id = 0;
  while (!cowscope_packed_reader_done (&r))
    {
      gint64 dpid = cowscope_packed_s (&r);
      guint8 k = cowscope_packed_byte (&r);
      if (dpid != 0 || k != kind)
        id = 0;
      pid = (guint32) ((gint64) pid + dpid);
      kind = k;
      id += (guint64) cowscope_packed_s (&r);
      if (kind >= COWSCOPE_N_NODE_KINDS || !cowscope_packed_reader_ok (&r))
        break;
      Slot *s = state_add (st, kind, pid, id);
      switch (kind)
        {
        case COWSCOPE_NODE_ALLOCATION:
          s->node.alloc_kind = (guint8) cowscope_packed_u (&r);
          s->node.device = cowscope_packed_s (&r);
          s->node.nbytes = cowscope_packed_u (&r);
          break;
        case COWSCOPE_NODE_CONTEXT:
          s->node.allocation_id = cowscope_packed_u (&r);
          s->node.storage_id = cowscope_packed_u (&r);
          break;
        case COWSCOPE_NODE_STORAGE:
          s->node.allocation_id = cowscope_packed_u (&r);
          s->node.nbytes = cowscope_packed_u (&r);
          s->node.context_id = cowscope_packed_u (&r);
          s->node.left_context_id = cowscope_packed_u (&r);
          s->node.source_id = cowscope_packed_u (&r);
          break;
        default:
          s->node.storage_id = cowscope_packed_u (&r);
          s->node.source_id = cowscope_packed_u (&r);
          s->node.dtype = (guint32) cowscope_packed_u (&r);
          s->node.ndim = (guint32) cowscope_packed_u (&r);
          s->node.numel = cowscope_packed_s (&r);
          break;
        }
      s->node.free_ts = cowscope_packed_free (&r, cp_ts);
      if (kind == COWSCOPE_NODE_TENSOR)
        {
          gsize name_len;
          const char *name = cowscope_packed_name (&r, &name_len);
          set_packed_name (st, s, name, name_len);
        }
    }
  if (!cowscope_packed_reader_ok (&r) || kind >= COWSCOPE_N_NODE_KINDS)
    {
      set_damaged (b, error, "a checkpoint state cannot be read");
      return FALSE;
    }
  return TRUE;
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

/* Applies the packed events after checkpoint @cp_id (0: the start) up to
 * @seq, with the free times and names of the objects they create. */
static gboolean
replay_packed (Builder *b, gint64 cp_id, gint64 seq, guint64 *n_replayed,
               GCancellable *cancellable, GError **error)
{
  gsize len;
  gboolean found;
  gint64 n_events = 0;
  g_autofree guint8 *blob = read_blob (
    b, "SELECT events, n_events FROM checkpoint_replays WHERE checkpoint_id = ?1", cp_id, &len,
    &n_events, &found, error);
  if (blob == NULL)
    return FALSE;
  if (!found)
    {
      set_damaged (b, error, "a checkpoint replay is missing");
      return FALSE;
    }
  /* About one object is born every other event. */
  state_reserve (&b->st, (gsize) CLAMP (n_events, 0, (gint64) len) / 2);
  CowscopePackedReader r;
  cowscope_packed_reader_init (&r, blob, len);
  gint64 at = 0, ts = 0, pid = 0;
  while (!cowscope_packed_reader_done (&r))
    {
      at += cowscope_packed_s (&r);
      ts += cowscope_packed_s (&r);
      gint64 type = (gint64) cowscope_packed_u (&r);
      gint64 aux = cowscope_packed_s (&r);
      pid += cowscope_packed_s (&r);
      gint64 v[5];
      for (int k = 0; k < 5; k++)
        v[k] = cowscope_packed_s (&r);
      if (!cowscope_packed_reader_ok (&r) || at > seq)
        break;
      apply_event (&b->st, type, aux, (guint32) pid, v, NULL);
      int kind = born_kind (type);
      if (kind >= 0)
        {
          gint64 free_ts = cowscope_packed_free (&r, ts);
          gsize name_len = 0;
          const char *name = kind == COWSCOPE_NODE_TENSOR ? cowscope_packed_name (&r, &name_len)
                                                          : NULL;
          Slot *s = state_live (&b->st, (guint8) kind, (guint32) pid, (guint64) v[0]);
          if (s != NULL)
            {
              s->node.free_ts = free_ts;
              set_packed_name (&b->st, s, name, name_len);
            }
        }
      if ((++*n_replayed & 0x3fff) == 0
          && g_cancellable_set_error_if_cancelled (cancellable, error))
        return FALSE;
    }
  if (!cowscope_packed_reader_ok (&r))
    {
      set_damaged (b, error, "a checkpoint replay cannot be read");
      return FALSE;
    }
  return TRUE;
}

/* Orders nodes by (kind, pid, id). */
static int
compare_nodes (const void *a, const void *b)
{
  const CowscopeGraphNode *x = a, *y = b;
  if (x->kind != y->kind)
    return x->kind < y->kind ? -1 : 1;
  if (x->pid != y->pid)
    return x->pid < y->pid ? -1 : 1;
  return (x->id > y->id) - (x->id < y->id);
}

/* Sorts @nodes by compare_nodes().  A checkpoint's objects come in that
 * order and the replay appends the rest, so only the unsorted tail is
 * sorted, then merged in. */
static void
sort_nodes (GArray *nodes)
{
  CowscopeGraphNode *n = (CowscopeGraphNode *) nodes->data;
  guint head = 1;
  while (head < nodes->len && compare_nodes (&n[head - 1], &n[head]) <= 0)
    head++;
  if (head >= nodes->len)
    return;
  if (head < nodes->len / 2)
    {
      g_array_sort (nodes, compare_nodes);
      return;
    }
  guint tail = nodes->len - head;
  qsort (n + head, tail, sizeof (CowscopeGraphNode), compare_nodes);
  CowscopeGraphNode *merged = g_new (CowscopeGraphNode, nodes->len);
  guint i = 0, j = head, k = 0;
  while (i < head && j < nodes->len)
    merged[k++] = compare_nodes (&n[j], &n[i]) < 0 ? n[j++] : n[i++];
  while (i < head)
    merged[k++] = n[i++];
  while (j < nodes->len)
    merged[k++] = n[j++];
  memcpy (n, merged, sizeof (CowscopeGraphNode) * nodes->len);
  g_free (merged);
}

/* Binary search in the sorted node array. */
static gint
find_node (GArray *nodes, guint8 kind, guint32 pid, guint64 id)
{
  if (id == 0)
    return -1;
  /* Inline comparisons: this runs several times per node. */
  const CowscopeGraphNode *n = (const CowscopeGraphNode *) nodes->data;
  guint lo = 0, hi = nodes->len;
  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;
      const CowscopeGraphNode *m = &n[mid];
      if (m->kind < kind || (m->kind == kind && (m->pid < pid || (m->pid == pid && m->id < id))))
        lo = mid + 1;
      else
        hi = mid;
    }
  return lo < nodes->len && n[lo].kind == kind && n[lo].pid == pid && n[lo].id == id ? (gint) lo
                                                                                     : -1;
}

static void
add_edge (GArray *edges, gint from, gint to, guint8 kind)
{
  if (from < 0 || to < 0)
    return;
  CowscopeGraphEdge e = { (guint32) from, (guint32) to, kind };
  g_array_append_val (edges, e);
}

/* Turns the live slots into sorted nodes, derives states and edges. */
static CowscopeSharingGraph *
assemble (Builder *b, gint64 seq, gint64 time, gint64 cp_seq, guint64 n_replayed,
          gint64 freed_soon_ns)
{
  State *st = &b->st;
  GArray *nodes = g_array_sized_new (FALSE, TRUE, sizeof (CowscopeGraphNode), st->slots->len);
  for (guint i = 0; i < st->slots->len; i++)
    {
      Slot *s = &g_array_index (st->slots, Slot, i);
      if (s->dead)
        continue;
      s->node.label = s->name;
      g_array_append_val (nodes, s->node);
    }
  sort_nodes (nodes);
  GArray *edges = g_array_new (FALSE, FALSE, sizeof (CowscopeGraphEdge));
  CowscopeGraphNode *n = (CowscopeGraphNode *) nodes->data;

  for (guint i = 0; i < nodes->len; i++)
    {
      n[i].freed_soon = n[i].free_ts >= 0 && n[i].free_ts <= time + freed_soon_ns;
      if (n[i].kind == COWSCOPE_NODE_STORAGE)
        {
          gint ctx = find_node (nodes, COWSCOPE_NODE_CONTEXT, n[i].pid, n[i].context_id);
          if (n[i].context_id != 0)
            {
              n[i].state = COWSCOPE_NODE_STATE_SHARED;
              if (ctx >= 0)
                n[ctx].refcount++;
              add_edge (edges, (gint) i, ctx, COWSCOPE_EDGE_LAZY_COPY_OF);
              gint src = find_node (nodes, COWSCOPE_NODE_STORAGE, n[i].pid, n[i].source_id);
              if (src >= 0 && n[src].context_id == n[i].context_id)
                add_edge (edges, (gint) i, src, COWSCOPE_EDGE_LAZY_COPY_OF);
            }
          else
            {
              n[i].state = n[i].left_context_id != 0 ? COWSCOPE_NODE_STATE_MATERIALIZED
                                                     : COWSCOPE_NODE_STATE_OWNED;
              add_edge (edges, (gint) i,
                        find_node (nodes, COWSCOPE_NODE_ALLOCATION, n[i].pid, n[i].allocation_id),
                        COWSCOPE_EDGE_OWNS);
              if (n[i].left_context_id != 0)
                {
                  add_edge (edges, (gint) i,
                            find_node (nodes, COWSCOPE_NODE_CONTEXT, n[i].pid,
                                       n[i].left_context_id),
                            COWSCOPE_EDGE_MATERIALIZED_FROM);
                  add_edge (edges, (gint) i,
                            find_node (nodes, COWSCOPE_NODE_STORAGE, n[i].pid, n[i].source_id),
                            COWSCOPE_EDGE_MATERIALIZED_FROM);
                }
            }
        }
      else if (n[i].kind == COWSCOPE_NODE_CONTEXT)
        {
          n[i].state = COWSCOPE_NODE_STATE_SHARED;
          add_edge (edges, (gint) i,
                    find_node (nodes, COWSCOPE_NODE_ALLOCATION, n[i].pid, n[i].allocation_id),
                    COWSCOPE_EDGE_OWNS);
        }
    }
  /* Allocations take the state of whoever owns them; tensors their
   * storage's; tensor bytes from the dtype's item size. */
  for (guint i = 0; i < nodes->len; i++)
    {
      if (n[i].kind == COWSCOPE_NODE_CONTEXT)
        {
          gint a = find_node (nodes, COWSCOPE_NODE_ALLOCATION, n[i].pid, n[i].allocation_id);
          if (a >= 0)
            n[a].state = COWSCOPE_NODE_STATE_SHARED;
        }
      else if (n[i].kind == COWSCOPE_NODE_STORAGE && n[i].state == COWSCOPE_NODE_STATE_MATERIALIZED)
        {
          gint a = find_node (nodes, COWSCOPE_NODE_ALLOCATION, n[i].pid, n[i].allocation_id);
          if (a >= 0 && n[a].state == COWSCOPE_NODE_STATE_OWNED)
            n[a].state = COWSCOPE_NODE_STATE_MATERIALIZED;
        }
      else if (n[i].kind == COWSCOPE_NODE_TENSOR)
        {
          gint s = find_node (nodes, COWSCOPE_NODE_STORAGE, n[i].pid, n[i].storage_id);
          if (s >= 0)
            n[i].state = n[s].state;
          gpointer size = g_hash_table_lookup (b->itemsize, GINT_TO_POINTER (n[i].dtype));
          n[i].nbytes = (guint64) MAX (n[i].numel, 0) * (size ? GPOINTER_TO_UINT (size) : 1);
          add_edge (edges, (gint) i, s, COWSCOPE_EDGE_VIEW_OF);
          gint base = find_node (nodes, COWSCOPE_NODE_TENSOR, n[i].pid, n[i].source_id);
          if (base >= 0 && n[base].storage_id == n[i].storage_id)
            add_edge (edges, (gint) i, base, COWSCOPE_EDGE_VIEW_OF);
        }
    }
  GStringChunk *labels = g_steal_pointer (&st->names);
  return cowscope_sharing_graph_new_take (nodes, edges, labels, seq, time, cp_seq, n_replayed);
}

/* The reconstruction (see the file comment). */
CowscopeSharingGraph *
cowscope_graph_builder_run (CowscopeSessionDocument *document, gint64 seq,
                            gint64 freed_soon_ns, GCancellable *cancellable, GError **error)
{
  Builder b = { .document = document, .path = cowscope_session_document_get_path (document) };
  b.db = cowscope_session_document_acquire_db (document, error);
  if (b.db == NULL)
    return NULL;
  state_init (&b.st);
  b.itemsize = g_hash_table_new (g_direct_hash, g_direct_equal);
  g_autoptr (GHashTable) created = g_hash_table_new_full (g_direct_hash, g_direct_equal, NULL,
                                                          g_free);
  CowscopeSharingGraph *graph = NULL;
  gint64 cp_id = -1, cp_seq = -1, time = cowscope_session_document_get_start_ns (document);
  guint64 n_replayed = 0;
  int rc;

  {
    g_autoptr (sqlite3_stmt) q =
      cowscope_session_db_prepare (b.db, b.path, "SELECT id, itemsize FROM dtypes", error);
    if (q == NULL)
      goto out;
    while ((rc = sqlite3_step (q)) == SQLITE_ROW)
      g_hash_table_insert (b.itemsize, GINT_TO_POINTER ((gint) INT (q, 0)),
                           GUINT_TO_POINTER ((guint) MAX (INT (q, 1), 1)));
    if (!check_done (&b, rc, "dtypes", error))
      goto out;
  }
  {
    g_autoptr (sqlite3_stmt) q = cowscope_session_db_prepare (
      b.db, b.path,
      "SELECT id, seq FROM checkpoints WHERE seq <= ?1 ORDER BY seq DESC, id DESC LIMIT 1",
      error);
    if (q == NULL)
      goto out;
    sqlite3_bind_int64 (q, 1, seq);
    rc = sqlite3_step (q);
    if (rc == SQLITE_ROW)
      {
        cp_id = INT (q, 0);
        cp_seq = INT (q, 1);
      }
    else if (!check_done (&b, rc, "checkpoints", error))
      goto out;
  }

  gint64 tr0 = g_get_monotonic_time (), tr1, tr2, tr3;
  if (cowscope_session_db_has_packed_index (b.db))
    {
      /* Schema 2: one state and one replay, no joins. */
      if ((cp_id >= 0 && !load_packed_state (&b, cp_id, error)))
        goto out;
      tr1 = g_get_monotonic_time ();
      if (!replay_packed (&b, MAX (cp_id, 0), seq, &n_replayed, cancellable, error))
        goto out;
      g_autoptr (sqlite3_stmt) q = cowscope_session_db_prepare (
        b.db, b.path, "SELECT ts FROM events WHERE seq <= ?1 ORDER BY seq DESC LIMIT 1", error);
      if (q == NULL)
        goto out;
      sqlite3_bind_int64 (q, 1, seq);
      if (sqlite3_step (q) == SQLITE_ROW)
        time = INT (q, 0);
      tr2 = tr3 = g_get_monotonic_time ();
      goto assemble;
    }
  if (cp_id >= 0)
    {
      /* Each process in the checkpoint: a skip-scan over its primary key. */
      gint64 pid = -1;
      for (;;)
        {
          g_autoptr (sqlite3_stmt) q = prepare3 (
            &b,
            "SELECT pid FROM checkpoint_objects WHERE checkpoint_id = ?1 AND pid > ?2"
            " ORDER BY pid LIMIT 1",
            cp_id, pid, 0, error);
          if (q == NULL)
            goto out;
          rc = sqlite3_step (q);
          if (rc == SQLITE_DONE)
            break;
          if (rc != SQLITE_ROW)
            {
              check_done (&b, rc, "checkpoint processes", error);
              goto out;
            }
          pid = INT (q, 0);
          g_clear_pointer (&q, sqlite3_finalize);
          if (!load_checkpoint_pid (&b, cp_id, cp_seq, (guint32) pid, error))
            goto out;
          if (g_cancellable_set_error_if_cancelled (cancellable, error))
            goto out;
        }
    }

  tr1 = g_get_monotonic_time ();
  {
    g_autoptr (sqlite3_stmt) q = prepare3 (
      &b,
      "SELECT seq, ts, type, aux, pid, v0, v1, v2, v3, v4 FROM events"
      " WHERE seq > ?1 AND seq <= ?2 ORDER BY seq",
      cp_seq, seq, 0, error);
    if (q == NULL)
      goto out;
    while ((rc = sqlite3_step (q)) == SQLITE_ROW)
      {
        gint64 v[5];
        for (int k = 0; k < 5; k++)
          v[k] = sqlite3_column_int64 (q, 5 + k);
        time = sqlite3_column_int64 (q, 1);
        apply_event (&b.st, sqlite3_column_int64 (q, 2), sqlite3_column_int64 (q, 3),
                     (guint32) sqlite3_column_int64 (q, 4), v, created);
        if ((++n_replayed & 0x3fff) == 0
            && g_cancellable_set_error_if_cancelled (cancellable, error))
          goto out;
      }
    if (!check_done (&b, rc, "events", error))
      goto out;
  }
  if (n_replayed == 0 && cp_seq >= 0)
    {
      g_autoptr (sqlite3_stmt) q =
        cowscope_session_db_prepare (b.db, b.path, "SELECT ts FROM events WHERE seq = ?1", error);
      if (q == NULL)
        goto out;
      sqlite3_bind_int64 (q, 1, seq);
      if (sqlite3_step (q) == SQLITE_ROW)
        time = INT (q, 0);
    }
  tr2 = g_get_monotonic_time ();
  if (!fetch_created (&b, created, error))
    goto out;
  tr3 = g_get_monotonic_time ();

assemble:
  graph = assemble (&b, seq, time, cp_seq, n_replayed, freed_soon_ns);
  if (g_getenv ("COWSCOPE_GRAPH_TRACE"))
    g_printerr ("graph: checkpoint %.1f ms, replay %.1f ms, fetch %.1f ms, assemble %.1f ms\n",
                (tr1 - tr0) / 1e3, (tr2 - tr1) / 1e3, (tr3 - tr2) / 1e3,
                (g_get_monotonic_time () - tr3) / 1e3);

out:
  cowscope_session_document_release_db (document, b.db);
  state_clear (&b.st);
  g_hash_table_unref (b.itemsize);
  return graph;
}
