/* cowscope-session-builder.c — the derived tables, as the events arrive
 * (see header).  Event payloads: engine/cow-trace.h. */
#include "cowscope-session-builder.h"

#include <string.h>

#include "cow-trace.h"
#include "cowscope-event-store.h"
#include "cowscope-format-error.h"
#include "cowscope-format-index.h"
#include "cowscope-format-vocabulary.h"
#include "cowscope-graph-state.h"
#include "cowscope-packed-records.h"

/* Events between two checkpoints of live objects (the finalizer's). */
#include "cowscope-format-finalize.h"

static const char clear_sql[] =
  "DELETE FROM allocations; DELETE FROM storages; DELETE FROM tensors; DELETE FROM contexts;"
  "DELETE FROM lazy_clones; DELETE FROM materializations; DELETE FROM violations;"
  "DELETE FROM ranges; DELETE FROM ipc_refs; DELETE FROM ipc_blocks;";

/* The indexes the readers' queries need, there from the start: rows go
 * in while recording, so nothing is sorted when it ends. */
static const char index_sql[] =
  "CREATE INDEX IF NOT EXISTS storages_context ON storages (pid, context_id);"
  "CREATE INDEX IF NOT EXISTS storages_allocation ON storages (pid, allocation_id);"
  "CREATE INDEX IF NOT EXISTS tensors_storage ON tensors (pid, storage_id);"
  "CREATE INDEX IF NOT EXISTS lazy_clones_context ON lazy_clones (pid, context_id);"
  "CREATE INDEX IF NOT EXISTS lazy_clones_time ON lazy_clones (ts);"
  "CREATE INDEX IF NOT EXISTS materializations_storage ON materializations (pid, storage_id, seq);"
  "CREATE INDEX IF NOT EXISTS materializations_time ON materializations (begin_ts);"
  /* What each lazy copy caused (the lazy_copies view). */
  "CREATE INDEX IF NOT EXISTS materializations_lazy_clone ON materializations (lazy_clone_seq);"
  "CREATE INDEX IF NOT EXISTS violations_storage ON violations (pid, storage_id);"
  "CREATE INDEX IF NOT EXISTS ranges_thread_time ON ranges (pid, tid, begin_ts);"
  "CREATE INDEX IF NOT EXISTS checkpoint_seq ON checkpoints (seq);"
  "CREATE INDEX IF NOT EXISTS cuda_time ON cuda_activity (pid, start_ns);"
  "CREATE INDEX IF NOT EXISTS cuda_correlation ON cuda_activity (pid, correlation_id);"
  "CREATE INDEX IF NOT EXISTS cuda_external ON cuda_activity (external_id)"
  " WHERE external_id IS NOT NULL;";

/* CUDA: kernel names; the probe tags a device materialization's CUDA
 * work with its begin event's timestamp, which becomes that
 * materialization's seq (its begin event's). */
static const char cuda_sql[] =
  "UPDATE cuda_activity SET name = (SELECT s.value FROM strings s"
  "  WHERE s.pid = cuda_activity.pid AND s.id = cuda_activity.name_id)"
  " WHERE name_id IS NOT NULL;"
  "UPDATE cuda_activity SET external_id = (SELECT m.seq FROM materializations m"
  "  WHERE m.pid = cuda_activity.pid AND m.begin_ts = (SELECT x.external_id FROM cuda_activity x"
  "   WHERE x.kind = :cuda_external_correlation AND x.pid = cuda_activity.pid"
  "    AND x.correlation_id = cuda_activity.correlation_id ORDER BY x.id DESC LIMIT 1)"
  "  ORDER BY m.seq LIMIT 1)"
  " WHERE kind != :cuda_external_correlation AND external_id IS NULL;";

/* Cross-process sharing (ipc_refs, ipc_blocks; README, "Session
 * database"), from the IPC events, which the builder keeps (with, for
 * each receive, the first allocation and storage its thread makes next)
 * in temp.ipc_events.  IPC payloads (engine/cow-ipc.h): v0 allocation id
 * (the producer's), v1 counter file id, v2 slot, v3 count after, v4 peer
 * pid; aux bit 0: a receive that hit the cache, a limbo free because the
 * consumer died.  A send is keyed by (producer pid, counter file id,
 * slot): the producer's ids are unique within it. */
static const char ipc_sql[] =
  "INSERT INTO ipc_refs (send_seq, producer_pid, allocation_id, counter_file_id, slot, send_ts,"
  "  nbytes, storage_id)"
  " SELECT s.seq, s.pid, s.v0, s.v1, s.v2, s.ts,"
  "  (SELECT a.nbytes FROM allocations a WHERE a.pid = s.pid AND a.id = s.v0),"
  "  (SELECT st.id FROM storages st WHERE st.pid = s.pid AND st.allocation_id = s.v0"
  "    AND st.new_ts <= s.ts ORDER BY st.new_ts DESC LIMIT 1)"
  " FROM temp.ipc_events s WHERE s.type = :ev_ipc_send;"

  /* The receive of each slot (the first, should a handle be replayed). */
  "UPDATE ipc_refs SET (consumer_pid, receive_seq, receive_ts, cached) ="
  " (SELECT r.pid, r.seq, r.ts, r.aux & 1 FROM temp.ipc_events r WHERE r.type = :ev_ipc_receive"
  "   AND r.v0 = ipc_refs.allocation_id AND r.v4 = ipc_refs.producer_pid"
  "   AND r.v1 = ipc_refs.counter_file_id AND r.v2 = ipc_refs.slot ORDER BY r.seq LIMIT 1);"

  /* The consumer's foreign allocation and storage over the mapping: the
   * first ones its receiving thread makes after the receive. */
  "UPDATE ipc_refs SET"
  " consumer_allocation_id = (SELECT a.v0 FROM temp.ipc_events r JOIN temp.ipc_events a"
  "   ON a.type = :ev_allocation_new AND a.pid = r.pid AND a.tid = r.tid AND a.seq > r.seq"
  "   WHERE r.seq = ipc_refs.receive_seq ORDER BY a.seq LIMIT 1),"
  " consumer_storage_id = (SELECT a.v0 FROM temp.ipc_events r JOIN temp.ipc_events a"
  "   ON a.type = :ev_storage_new AND a.pid = r.pid AND a.tid = r.tid AND a.seq > r.seq"
  "   WHERE r.seq = ipc_refs.receive_seq ORDER BY a.seq LIMIT 1)"
  " WHERE receive_seq IS NOT NULL;"

  /* Release: the consumer's IPC_RELEASE of the slot; a cache hit gave
   * its slot back at the receive itself. */
  "UPDATE ipc_refs SET (release_seq, release_ts) ="
  " (SELECT x.seq, x.ts FROM temp.ipc_events x WHERE x.type = :ev_ipc_release"
  "   AND x.pid = ipc_refs.consumer_pid"
  "   AND x.v0 = ipc_refs.allocation_id AND x.v4 = ipc_refs.producer_pid"
  "   AND x.v1 = ipc_refs.counter_file_id AND x.v2 = ipc_refs.slot"
  "   AND x.seq > ipc_refs.receive_seq ORDER BY x.seq LIMIT 1)"
  " WHERE receive_seq IS NOT NULL AND cached = 0;"
  "UPDATE ipc_refs SET release_seq = receive_seq, release_ts = receive_ts WHERE cached = 1;"

  "UPDATE ipc_refs SET (limbo_enter_seq, limbo_enter_ts) ="
  " (SELECT x.seq, x.ts FROM temp.ipc_events x WHERE x.type = :ev_ipc_limbo_enter"
  "   AND x.pid = ipc_refs.producer_pid"
  "   AND x.v0 = ipc_refs.allocation_id AND x.v1 = ipc_refs.counter_file_id"
  "   AND x.v2 = ipc_refs.slot ORDER BY x.seq LIMIT 1);"
  "UPDATE ipc_refs SET (limbo_free_seq, limbo_free_ts, consumer_died) ="
  " (SELECT x.seq, x.ts, x.aux & 1 FROM temp.ipc_events x WHERE x.type = :ev_ipc_limbo_free"
  "   AND x.pid = ipc_refs.producer_pid AND x.v0 = ipc_refs.allocation_id"
  "   AND x.v1 = ipc_refs.counter_file_id AND x.v2 = ipc_refs.slot ORDER BY x.seq LIMIT 1)"
  " WHERE limbo_enter_seq IS NOT NULL;"

  "INSERT INTO ipc_blocks"
  " SELECT r.producer_pid, r.allocation_id, min (r.storage_id), max (r.nbytes), count (*),"
  "  count (DISTINCT r.consumer_pid), min (r.send_ts), min (r.limbo_enter_ts),"
  "  CASE WHEN count (r.limbo_enter_ts) > count (r.limbo_free_ts) THEN NULL"
  "   ELSE max (r.limbo_free_ts) END,"
  "  CASE WHEN count (r.limbo_enter_ts) > count (r.limbo_free_ts) THEN NULL"
  "   ELSE nullif (max (coalesce (max (r.limbo_free_ts), 0),"
  "             coalesce ((SELECT a.free_ts FROM allocations a WHERE a.pid = r.producer_pid"
  "                         AND a.id = r.allocation_id), 0)), 0) END"
  " FROM ipc_refs r GROUP BY r.producer_pid, r.allocation_id;"

  "CREATE INDEX IF NOT EXISTS ipc_refs_consumer ON ipc_refs (consumer_pid, receive_seq);"
  "DROP TABLE temp.ipc_events;";

/* ---- keys -------------------------------------------------------------------- */

/* (pid, a, b): an object (kind, id), a string (0, id), a thread (tid, 0),
 * a storage's lazy clones (storage, 0), a context (context, 0)… */
typedef struct {
  guint32 pid;
  guint32 tag;
  gint64 a, b;
} Key;

static guint
key_hash (gconstpointer p)
{
  const Key *k = p;
  guint64 h = ((guint64) k->pid << 32 | k->tag) * 0x9E3779B97F4A7C15ull;
  h ^= (guint64) k->a * 0xC2B2AE3D27D4EB4Full;
  h ^= (guint64) k->b * 0x165667B19E3779F9ull;
  return (guint) (h ^ (h >> 31));
}

static gboolean
key_equal (gconstpointer x, gconstpointer y)
{
  const Key *a = x, *b = y;
  return a->pid == b->pid && a->tag == b->tag && a->a == b->a && a->b == b->b;
}

/* A hash table of entries that start with their Key, freed with g_free. */
static GHashTable *
keyed_table (void)
{
  return g_hash_table_new_full (key_hash, key_equal, NULL, g_free);
}

/* ---- state ------------------------------------------------------------------- */

/* An object whose row is written when it is freed: what its creating
 * event said. */
typedef struct {
  Key key;          /* pid, kind, id */
  gint64 ts, op, tid, aux;
  gint64 v[5];
  gint64 name_id;   /* tensors: the string of the last name given; -1 none */
  gint64 max_refcount; /* contexts */
} Object;

/* A materialization begun on (pid, tid, storage) and not yet ended. */
typedef struct {
  gint64 seq, ts, op;
  gint64 v[4];
  gint64 stack_id;       /* -1: none */
  gint64 lazy_clone_seq; /* -1: none */
} Begin;

typedef struct {
  Key key;          /* pid, tid, storage */
  GArray *begins;   /* Begin */
} OpenMaterialization;

typedef struct {
  Key key;          /* pid, range id */
  gint64 tid, name_id, parent, ts;
} OpenRange;

/* The last lazy clone (seq) of a context. */
typedef struct {
  Key key;          /* pid, context */
  gint64 seq;
} LastClone;

/* The last lazy clone of each context a storage was the result or the
 * source of (a storage is seldom in more than one or two). */
#define STORAGE_CONTEXTS 4
typedef struct {
  Key key;          /* pid, storage */
  guint n;
  struct { gint64 context, seq; } last[STORAGE_CONTEXTS];
} StorageClones;

typedef struct {
  Key key;          /* pid, string id */
  char value[];
} String;

struct _CowscopeSessionBuilder {
  sqlite3 *db;
  char *path;
  GHashTable *objects;    /* Object, by (pid, kind, id) */
  GHashTable *strings;    /* String, by (pid, id) */
  GHashTable *open_mats;  /* OpenMaterialization, by (pid, tid, storage) */
  GHashTable *open_ranges;/* OpenRange, by (pid, id) */
  GHashTable *last_clone; /* LastClone by (pid, context), StorageClones by (pid, storage) */
  GHashTable *early_names;/* LastClone (name string in seq) by (pid, tensor): names given
                           * before the tensor's creation came (another thread's clock) */
  GHashTable *receivers;  /* Key of threads that received an IPC block and made no
                           * allocation (tag 1) or storage (tag 2) since */
  GArray *ipc_events;     /* CowscopeEventRow */
  sqlite3_stmt *ins_alloc, *ins_storage, *ins_tensor, *ins_context, *ins_lazy, *ins_mat,
    *ins_viol, *ins_range;
  CowscopeIndexWriter *index;
};

enum { TAG_OBJECT = 1, TAG_STRING, TAG_THREAD_STORAGE, TAG_RANGE, TAG_CONTEXT_CLONE,
       TAG_STORAGE_CLONE, TAG_RECEIVE_ALLOC, TAG_RECEIVE_STORAGE, TAG_EARLY_NAME };

/* Names kept for tensors not created yet, at most (a name whose tensor
 * never comes, its creation dropped, is then forgotten). */
#define EARLY_NAMES_MAX 65536

static gboolean
fail (CowscopeSessionBuilder *b, GError **error)
{
  cowscope_format_set_write_error (error, b->db, b->path, "derive the tables of");
  return FALSE;
}

static gboolean
step (CowscopeSessionBuilder *b, sqlite3_stmt *s, GError **error)
{
  int rc = sqlite3_step (s);
  sqlite3_reset (s);
  sqlite3_clear_bindings (s);
  return rc == SQLITE_DONE || fail (b, error);
}

static void
bind_or_null (sqlite3_stmt *s, int i, gboolean present, gint64 v)
{
  if (present)
    sqlite3_bind_int64 (s, i, v);
  else
    sqlite3_bind_null (s, i);
}

/* "nullif (v, 0)" */
static void
bind_nonzero (sqlite3_stmt *s, int i, gint64 v)
{
  bind_or_null (s, i, v != 0, v);
}

static const char *
string_of (CowscopeSessionBuilder *b, guint32 pid, gint64 id)
{
  Key k = { pid, TAG_STRING, id, 0 };
  String *s = g_hash_table_lookup (b->strings, &k);
  return s ? s->value : NULL;
}

void
cowscope_session_builder_string (CowscopeSessionBuilder *b, guint32 pid, gint64 id,
                                 const char *value)
{
  gsize len = strlen (value);
  String *s = g_malloc (sizeof (String) + len + 1);
  s->key = (Key) { pid, TAG_STRING, id, 0 };
  memcpy (s->value, value, len + 1);
  /* A later copy replaces it (as strings' INSERT OR REPLACE). */
  g_hash_table_replace (b->strings, &s->key, s);
}

/* ---- objects ------------------------------------------------------------------ */

static int
object_kind_of_free (gint64 type)
{
  switch (type)
    {
    case COW_EVENT_ALLOCATION_FREE: return COWSCOPE_OBJECT_ALLOCATION;
    case COW_EVENT_CONTEXT_FREE: return COWSCOPE_OBJECT_CONTEXT;
    case COW_EVENT_STORAGE_FREE: return COWSCOPE_OBJECT_STORAGE;
    case COW_EVENT_TENSOR_FREE: return COWSCOPE_OBJECT_TENSOR;
    default: return -1;
    }
}

/* The row of @o, freed at @free_ts (-1: never). */
static gboolean
write_object (CowscopeSessionBuilder *b, const Object *o, gint64 free_ts, GError **error)
{
  sqlite3_stmt *s;
  const gint64 *v = o->v;
  switch ((int) o->key.a)
    {
    case COWSCOPE_OBJECT_ALLOCATION:
      /* v0 id, v1 nbytes, v2 address, v3 device; aux kind */
      s = b->ins_alloc;
      sqlite3_bind_int64 (s, 1, o->key.pid);
      sqlite3_bind_int64 (s, 2, o->key.b);
      sqlite3_bind_int64 (s, 3, o->aux);
      sqlite3_bind_int64 (s, 4, v[3]);
      sqlite3_bind_int64 (s, 5, v[1]);
      sqlite3_bind_int64 (s, 6, v[2]);
      sqlite3_bind_int64 (s, 7, o->op);
      sqlite3_bind_int64 (s, 8, o->ts);
      bind_or_null (s, 9, free_ts >= 0, free_ts);
      break;
    case COWSCOPE_OBJECT_STORAGE:
      /* v0 id, v1 allocation, v2 nbytes, v3 context, v4 source */
      s = b->ins_storage;
      sqlite3_bind_int64 (s, 1, o->key.pid);
      sqlite3_bind_int64 (s, 2, o->key.b);
      sqlite3_bind_int64 (s, 3, v[1]);
      sqlite3_bind_int64 (s, 4, v[2]);
      bind_nonzero (s, 5, v[3]);
      bind_nonzero (s, 6, v[4]);
      sqlite3_bind_int64 (s, 7, o->op);
      sqlite3_bind_int64 (s, 8, o->ts);
      bind_or_null (s, 9, free_ts >= 0, free_ts);
      break;
    case COWSCOPE_OBJECT_TENSOR:
      {
        /* v0 id, v1 storage, v2 base, v3 numel, v4 offset; aux dtype | ndim << 8 */
        s = b->ins_tensor;
        const char *name = o->name_id >= 0 ? string_of (b, o->key.pid, o->name_id) : NULL;
        sqlite3_bind_int64 (s, 1, o->key.pid);
        sqlite3_bind_int64 (s, 2, o->key.b);
        sqlite3_bind_int64 (s, 3, v[1]);
        bind_nonzero (s, 4, v[2]);
        sqlite3_bind_int64 (s, 5, o->aux & 255);
        sqlite3_bind_int64 (s, 6, (o->aux >> 8) & 255);
        sqlite3_bind_int64 (s, 7, v[3]);
        sqlite3_bind_int64 (s, 8, v[4]);
        sqlite3_bind_int64 (s, 9, o->op);
        if (name != NULL)
          sqlite3_bind_text (s, 10, name, -1, SQLITE_STATIC);
        else
          sqlite3_bind_null (s, 10);
        sqlite3_bind_int64 (s, 11, o->tid);
        sqlite3_bind_int64 (s, 12, o->ts);
        bind_or_null (s, 13, free_ts >= 0, free_ts);
        break;
      }
    case COWSCOPE_OBJECT_CONTEXT:
      /* v0 id, v1 storage, v2 refcount after, v3 allocation */
      s = b->ins_context;
      sqlite3_bind_int64 (s, 1, o->key.pid);
      sqlite3_bind_int64 (s, 2, o->key.b);
      sqlite3_bind_int64 (s, 3, v[3]);
      sqlite3_bind_int64 (s, 4, v[1]);
      sqlite3_bind_int64 (s, 5, o->ts);
      bind_or_null (s, 6, free_ts >= 0, free_ts);
      sqlite3_bind_int64 (s, 7, o->max_refcount);
      break;
    default:
      return TRUE;
    }
  return step (b, s, error);
}

static Object *
find_object (CowscopeSessionBuilder *b, guint32 pid, int kind, gint64 id)
{
  Key k = { pid, TAG_OBJECT, kind, id };
  return g_hash_table_lookup (b->objects, &k);
}

/* A new object; the first of an id wins (a second creation is ignored). */
static void
object_new (CowscopeSessionBuilder *b, int kind, const CowscopeEventRow *ev)
{
  guint32 pid = (guint32) ev->col[COWSCOPE_EVENT_COL_PID];
  gint64 id = ev->col[COWSCOPE_EVENT_COL_V0];
  if (find_object (b, pid, kind, id) != NULL)
    return;
  Object *o = g_new (Object, 1);
  o->key = (Key) { pid, TAG_OBJECT, kind, id };
  o->ts = ev->col[COWSCOPE_EVENT_COL_TS];
  o->op = ev->col[COWSCOPE_EVENT_COL_OP];
  o->tid = ev->col[COWSCOPE_EVENT_COL_TID];
  o->aux = ev->col[COWSCOPE_EVENT_COL_AUX];
  memcpy (o->v, &ev->col[COWSCOPE_EVENT_COL_V0], sizeof o->v);
  o->name_id = -1;
  o->max_refcount = kind == COWSCOPE_OBJECT_CONTEXT ? o->v[2] : 0;
  if (kind == COWSCOPE_OBJECT_TENSOR && g_hash_table_size (b->early_names) > 0)
    {
      Key k = { pid, TAG_EARLY_NAME, id, 0 };
      LastClone *name = g_hash_table_lookup (b->early_names, &k);
      if (name != NULL)
        {
          o->name_id = name->seq;
          g_hash_table_remove (b->early_names, &k);
        }
    }
  g_hash_table_insert (b->objects, &o->key, o);
}

/* ---- lazy clones and materializations ----------------------------------------- */

static gint64
context_clone (CowscopeSessionBuilder *b, guint32 pid, gint64 context)
{
  Key k = { pid, TAG_CONTEXT_CLONE, context, 0 };
  LastClone *l = g_hash_table_lookup (b->last_clone, &k);
  return l ? l->seq : -1;
}

static gint64
storage_clone (CowscopeSessionBuilder *b, guint32 pid, gint64 storage, gint64 context)
{
  Key k = { pid, TAG_STORAGE_CLONE, storage, 0 };
  StorageClones *c = g_hash_table_lookup (b->last_clone, &k);
  for (guint i = 0; c != NULL && i < c->n; i++)
    if (c->last[i].context == context)
      return c->last[i].seq;
  return -1;
}

static void
note_clone (CowscopeSessionBuilder *b, guint32 pid, gint64 storage, gint64 context, gint64 seq)
{
  Key k = { pid, TAG_STORAGE_CLONE, storage, 0 };
  StorageClones *c = g_hash_table_lookup (b->last_clone, &k);
  if (c == NULL)
    {
      c = g_new0 (StorageClones, 1);
      c->key = k;
      g_hash_table_insert (b->last_clone, &c->key, c);
    }
  guint i = 0;
  while (i < c->n && c->last[i].context != context)
    i++;
  if (i == STORAGE_CONTEXTS)
    {
      /* The oldest context makes room. */
      memmove (&c->last[0], &c->last[1], sizeof c->last[0] * (STORAGE_CONTEXTS - 1));
      i = STORAGE_CONTEXTS - 1;
    }
  else if (i == c->n)
    c->n++;
  c->last[i].context = context;
  c->last[i].seq = seq;
}

static void
note_context_clone (CowscopeSessionBuilder *b, guint32 pid, gint64 context, gint64 seq)
{
  Key k = { pid, TAG_CONTEXT_CLONE, context, 0 };
  LastClone *l = g_hash_table_lookup (b->last_clone, &k);
  if (l == NULL)
    {
      l = g_new (LastClone, 1);
      l->key = k;
      g_hash_table_insert (b->last_clone, &l->key, l);
    }
  l->seq = seq;
}

/* A freed context or storage can begin no materialization. */
static void
forget_clones (CowscopeSessionBuilder *b, guint32 pid, guint32 tag, gint64 id)
{
  Key k = { pid, tag, id, 0 };
  g_hash_table_remove (b->last_clone, &k);
}

/* LAZY_CLONE: v0 source tensor, v1 result tensor, v2 source storage, v3
 * result storage, v4 context; LAZY_CLONE_EAGER: v4 bytes copied, aux the
 * reason.  nbytes: what the result (else the source) storage holds. */
static gboolean
lazy_clone (CowscopeSessionBuilder *b, const CowscopeEventRow *ev, GError **error)
{
  guint32 pid = (guint32) ev->col[COWSCOPE_EVENT_COL_PID];
  const gint64 *v = &ev->col[COWSCOPE_EVENT_COL_V0];
  gboolean eager = ev->col[COWSCOPE_EVENT_COL_TYPE] == COW_EVENT_LAZY_CLONE_EAGER;
  gint64 seq = ev->col[COWSCOPE_EVENT_COL_SEQ];
  sqlite3_stmt *s = b->ins_lazy;
  sqlite3_bind_int64 (s, 1, seq);
  sqlite3_bind_int64 (s, 2, pid);
  sqlite3_bind_int64 (s, 3, ev->col[COWSCOPE_EVENT_COL_TID]);
  sqlite3_bind_int64 (s, 4, ev->col[COWSCOPE_EVENT_COL_TS]);
  sqlite3_bind_int64 (s, 5, ev->col[COWSCOPE_EVENT_COL_OP]);
  for (int k = 0; k < 4; k++)
    sqlite3_bind_int64 (s, 6 + k, v[k]);
  bind_or_null (s, 10, !eager, v[4]);
  bind_or_null (s, 11, eager, ev->col[COWSCOPE_EVENT_COL_AUX] & 255);
  if (eager)
    sqlite3_bind_int64 (s, 12, v[4]);
  else
    {
      const Object *st = find_object (b, pid, COWSCOPE_OBJECT_STORAGE, v[3]);
      if (st == NULL)
        st = find_object (b, pid, COWSCOPE_OBJECT_STORAGE, v[2]);
      bind_or_null (s, 12, st != NULL, st ? st->v[2] : 0);
    }
  bind_or_null (s, 13, !(ev->nulls & COWSCOPE_EVENT_NULL_STACK), ev->col[COWSCOPE_EVENT_COL_STACK]);
  if (!eager)
    {
      note_context_clone (b, pid, v[4], seq);
      note_clone (b, pid, v[3], v[4], seq);
      note_clone (b, pid, v[2], v[4], seq);
    }
  return step (b, s, error);
}

/* The materializations table's row (and the timeline's span) of a begin
 * @bg on (pid, tid), ended by @end (NULL: never). */
static gboolean
write_materialization (CowscopeSessionBuilder *b, guint32 pid, gint64 tid, const Begin *bg,
                       const CowscopeEventRow *end, GError **error)
{
  sqlite3_stmt *s = b->ins_mat;
  const gint64 *ev = end ? &end->col[COWSCOPE_EVENT_COL_V0] : NULL;
  gint64 aux = end ? end->col[COWSCOPE_EVENT_COL_AUX] : 0;
  gboolean end_v3 = end && !(end->nulls & (1u << 3));
  gint64 nbytes = end_v3 ? ev[3] : bg->v[3];
  sqlite3_bind_int64 (s, 1, bg->seq);
  sqlite3_bind_int64 (s, 2, pid);
  sqlite3_bind_int64 (s, 3, tid);
  sqlite3_bind_int64 (s, 4, bg->ts);
  bind_or_null (s, 5, end != NULL, end ? end->col[COWSCOPE_EVENT_COL_TS] : 0);
  sqlite3_bind_int64 (s, 6, bg->op);
  sqlite3_bind_int64 (s, 7, bg->v[0]);
  sqlite3_bind_int64 (s, 8, bg->v[1]);
  sqlite3_bind_int64 (s, 9, bg->v[2]);
  sqlite3_bind_int64 (s, 10, nbytes);
  bind_or_null (s, 11, end != NULL, aux & COW_MATERIALIZE_KIND_MASK);
  bind_or_null (s, 12, end != NULL, (aux & COW_MATERIALIZE_FLAG_COPY_DISCARDED) != 0);
  bind_or_null (s, 13, end != NULL && !(end->nulls & (1u << 4)), ev ? ev[4] : 0);
  bind_or_null (s, 14, end != NULL && !(end->nulls & (1u << 2)), ev ? ev[2] : 0);
  bind_or_null (s, 15, bg->lazy_clone_seq >= 0, bg->lazy_clone_seq);
  gboolean end_stack = end && !(end->nulls & COWSCOPE_EVENT_NULL_STACK);
  bind_or_null (s, 16, bg->stack_id >= 0 || end_stack,
                bg->stack_id >= 0 ? bg->stack_id : end_stack ? end->col[COWSCOPE_EVENT_COL_STACK] : 0);
  gint64 end_ts = end ? end->col[COWSCOPE_EVENT_COL_TS] : bg->ts;
  CowscopeSpan span = { bg->ts, end_ts, bg->seq, (guint64) nbytes,
                        end ? (guint8) CLAMP (aux & COW_MATERIALIZE_KIND_MASK, 0,
                                              COWSCOPE_SPAN_RANGE - 1) : 0, FALSE };
  cowscope_index_writer_span (b->index, pid, tid, &span);
  return step (b, s, error);
}

/* MATERIALIZE_BEGIN: v0 storage, v1 context, v2 tensor, v3 nbytes.  The
 * lazy clone that made the sharing: the context's last one with this
 * storage as result or source, else the context's last one. */
static void
materialize_begin (CowscopeSessionBuilder *b, const CowscopeEventRow *ev)
{
  guint32 pid = (guint32) ev->col[COWSCOPE_EVENT_COL_PID];
  const gint64 *v = &ev->col[COWSCOPE_EVENT_COL_V0];
  Key k = { pid, TAG_THREAD_STORAGE, ev->col[COWSCOPE_EVENT_COL_TID], v[0] };
  OpenMaterialization *m = g_hash_table_lookup (b->open_mats, &k);
  if (m == NULL)
    {
      m = g_new (OpenMaterialization, 1);
      m->key = k;
      m->begins = g_array_new (FALSE, FALSE, sizeof (Begin));
      g_hash_table_insert (b->open_mats, &m->key, m);
    }
  gint64 clone = storage_clone (b, pid, v[0], v[1]);
  if (clone < 0)
    clone = context_clone (b, pid, v[1]);
  Begin bg = {
    .seq = ev->col[COWSCOPE_EVENT_COL_SEQ], .ts = ev->col[COWSCOPE_EVENT_COL_TS],
    .op = ev->col[COWSCOPE_EVENT_COL_OP], .v = { v[0], v[1], v[2], v[3] },
    .stack_id = (ev->nulls & COWSCOPE_EVENT_NULL_STACK) ? -1 : ev->col[COWSCOPE_EVENT_COL_STACK],
    .lazy_clone_seq = clone,
  };
  g_array_append_val (m->begins, bg);
}

/* MATERIALIZE_END: v0 storage, v1 context, v2 allocation, v3 nbytes, v4
 * lock wait; aux kind | flags.  It ends every begin of its thread and
 * storage still open; one without a begin (dropped) gets a row of its
 * own. */
static gboolean
materialize_end (CowscopeSessionBuilder *b, const CowscopeEventRow *ev, GError **error)
{
  guint32 pid = (guint32) ev->col[COWSCOPE_EVENT_COL_PID];
  gint64 tid = ev->col[COWSCOPE_EVENT_COL_TID];
  const gint64 *v = &ev->col[COWSCOPE_EVENT_COL_V0];
  Key k = { pid, TAG_THREAD_STORAGE, tid, v[0] };
  OpenMaterialization *m = g_hash_table_lookup (b->open_mats, &k);
  if (m != NULL)
    {
      for (guint i = 0; i < m->begins->len; i++)
        if (!write_materialization (b, pid, tid, &g_array_index (m->begins, Begin, i), ev, error))
          return FALSE;
      g_hash_table_remove (b->open_mats, &k);
      return TRUE;
    }
  gint64 aux = ev->col[COWSCOPE_EVENT_COL_AUX];
  sqlite3_stmt *s = b->ins_mat;
  sqlite3_bind_int64 (s, 1, ev->col[COWSCOPE_EVENT_COL_SEQ]);
  sqlite3_bind_int64 (s, 2, pid);
  sqlite3_bind_int64 (s, 3, tid);
  sqlite3_bind_null (s, 4);
  sqlite3_bind_int64 (s, 5, ev->col[COWSCOPE_EVENT_COL_TS]);
  sqlite3_bind_int64 (s, 6, ev->col[COWSCOPE_EVENT_COL_OP]);
  sqlite3_bind_int64 (s, 7, v[0]);
  sqlite3_bind_int64 (s, 8, v[1]);
  sqlite3_bind_null (s, 9);
  bind_or_null (s, 10, !(ev->nulls & (1u << 3)), v[3]);
  sqlite3_bind_int64 (s, 11, aux & COW_MATERIALIZE_KIND_MASK);
  sqlite3_bind_int64 (s, 12, (aux & COW_MATERIALIZE_FLAG_COPY_DISCARDED) != 0);
  bind_or_null (s, 13, !(ev->nulls & (1u << 4)), v[4]);
  bind_or_null (s, 14, !(ev->nulls & (1u << 2)), v[2]);
  sqlite3_bind_null (s, 15);
  bind_or_null (s, 16, !(ev->nulls & COWSCOPE_EVENT_NULL_STACK), ev->col[COWSCOPE_EVENT_COL_STACK]);
  return step (b, s, error);
}

/* ---- ranges, violations, IPC -------------------------------------------------------- */

/* RANGE_BEGIN/END: v0 id, v1 string, v2 parent.  The first begin of an
 * id opens it, its first end closes it. */
static gboolean
write_range (CowscopeSessionBuilder *b, const OpenRange *r, gint64 end_ts, GError **error)
{
  sqlite3_stmt *s = b->ins_range;
  const char *name = string_of (b, r->key.pid, r->name_id);
  sqlite3_bind_int64 (s, 1, r->key.pid);
  sqlite3_bind_int64 (s, 2, r->key.a);
  sqlite3_bind_int64 (s, 3, r->tid);
  if (name != NULL)
    sqlite3_bind_text (s, 4, name, -1, SQLITE_STATIC);
  else
    sqlite3_bind_null (s, 4);
  bind_nonzero (s, 5, r->parent);
  sqlite3_bind_int64 (s, 6, r->ts);
  bind_or_null (s, 7, end_ts >= 0, end_ts);
  CowscopeSpan span = { r->ts, end_ts >= 0 ? end_ts : r->ts, r->key.a, 0, COWSCOPE_SPAN_RANGE,
                        end_ts < 0 };
  cowscope_index_writer_span (b->index, r->key.pid, r->tid, &span);
  return step (b, s, error);
}

static gboolean
range_event (CowscopeSessionBuilder *b, const CowscopeEventRow *ev, GError **error)
{
  guint32 pid = (guint32) ev->col[COWSCOPE_EVENT_COL_PID];
  const gint64 *v = &ev->col[COWSCOPE_EVENT_COL_V0];
  Key k = { pid, TAG_RANGE, v[0], 0 };
  OpenRange *r = g_hash_table_lookup (b->open_ranges, &k);
  if (ev->col[COWSCOPE_EVENT_COL_TYPE] == COW_EVENT_RANGE_BEGIN)
    {
      if (r != NULL)
        return TRUE;
      r = g_new (OpenRange, 1);
      *r = (OpenRange) { k, ev->col[COWSCOPE_EVENT_COL_TID], v[1], v[2],
                         ev->col[COWSCOPE_EVENT_COL_TS] };
      g_hash_table_insert (b->open_ranges, &r->key, r);
      return TRUE;
    }
  if (r == NULL)
    return TRUE;
  gboolean ok = write_range (b, r, ev->col[COWSCOPE_EVENT_COL_TS], error);
  g_hash_table_remove (b->open_ranges, &k);
  return ok;
}

/* SIMULATE_VIOLATION: v0 storage, v1 writer, v2 accessor, v3/v4 generations. */
static gboolean
violation (CowscopeSessionBuilder *b, const CowscopeEventRow *ev, GError **error)
{
  sqlite3_stmt *s = b->ins_viol;
  sqlite3_bind_int64 (s, 1, ev->col[COWSCOPE_EVENT_COL_SEQ]);
  sqlite3_bind_int64 (s, 2, ev->col[COWSCOPE_EVENT_COL_PID]);
  sqlite3_bind_int64 (s, 3, ev->col[COWSCOPE_EVENT_COL_TID]);
  sqlite3_bind_int64 (s, 4, ev->col[COWSCOPE_EVENT_COL_TS]);
  sqlite3_bind_int64 (s, 5, ev->col[COWSCOPE_EVENT_COL_OP]);
  sqlite3_bind_int64 (s, 6, ev->col[COWSCOPE_EVENT_COL_AUX]);
  for (int k = 0; k < 5; k++)
    bind_or_null (s, 7 + k, !(ev->nulls & (1u << k)), ev->col[COWSCOPE_EVENT_COL_V0 + k]);
  bind_or_null (s, 12, !(ev->nulls & COWSCOPE_EVENT_NULL_STACK), ev->col[COWSCOPE_EVENT_COL_STACK]);
  return step (b, s, error);
}

/* Keeps the IPC events, and after each receive the first allocation and
 * storage its thread makes. */
static void
ipc_capture (CowscopeSessionBuilder *b, const CowscopeEventRow *ev)
{
  gint64 type = ev->col[COWSCOPE_EVENT_COL_TYPE];
  guint32 pid = (guint32) ev->col[COWSCOPE_EVENT_COL_PID];
  gint64 tid = ev->col[COWSCOPE_EVENT_COL_TID];
  if (type >= COW_EVENT_IPC_SEND && type <= COW_EVENT_IPC_COLLECT)
    {
      g_array_append_val (b->ipc_events, *ev);
      if (type == COW_EVENT_IPC_RECEIVE)
        for (guint32 tag = TAG_RECEIVE_ALLOC; tag <= TAG_RECEIVE_STORAGE; tag++)
          {
            Key *k = g_new (Key, 1);
            *k = (Key) { pid, tag, tid, 0 };
            g_hash_table_replace (b->receivers, k, k);
          }
      return;
    }
  guint32 tag = type == COW_EVENT_ALLOCATION_NEW ? TAG_RECEIVE_ALLOC
                : type == COW_EVENT_STORAGE_NEW  ? TAG_RECEIVE_STORAGE : 0;
  if (tag == 0 || g_hash_table_size (b->receivers) == 0)
    return;
  Key k = { pid, tag, tid, 0 };
  if (g_hash_table_remove (b->receivers, &k))
    g_array_append_val (b->ipc_events, *ev);
}

static gboolean
write_ipc (CowscopeSessionBuilder *b, GError **error)
{
  if (cowscope_format_exec (b->db,
                            "DROP TABLE IF EXISTS temp.ipc_events;"
                            "CREATE TEMP TABLE ipc_events (seq INTEGER PRIMARY KEY, ts, pid, tid,"
                            " type, op, aux, v0, v1, v2, v3, v4, stack_id);") != SQLITE_OK)
    return fail (b, error);
  sqlite3_stmt *s = NULL;
  if (sqlite3_prepare_v2 (b->db, "INSERT OR IGNORE INTO temp.ipc_events VALUES"
                                 " (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", -1, &s, NULL)
      != SQLITE_OK)
    return fail (b, error);
  for (guint i = 0; i < b->ipc_events->len; i++)
    {
      const CowscopeEventRow *ev = &g_array_index (b->ipc_events, CowscopeEventRow, i);
      for (int c = 0; c < COWSCOPE_EVENT_N_COLS; c++)
        sqlite3_bind_int64 (s, c + 1, ev->col[c]);
      if (!step (b, s, error))
        {
          sqlite3_finalize (s);
          return FALSE;
        }
    }
  sqlite3_finalize (s);
  return cowscope_format_exec (b->db, ipc_sql) == SQLITE_OK || fail (b, error);
}

/* ---- the builder ----------------------------------------------------------------- */

static void
open_mat_free (gpointer data)
{
  OpenMaterialization *m = data;
  g_array_unref (m->begins);
  g_free (m);
}

static gboolean
load_strings (CowscopeSessionBuilder *b, GError **error)
{
  sqlite3_stmt *q = NULL;
  if (sqlite3_prepare_v2 (b->db, "SELECT pid, id, value FROM strings", -1, &q, NULL) != SQLITE_OK)
    return fail (b, error);
  int rc;
  while ((rc = sqlite3_step (q)) == SQLITE_ROW)
    if (sqlite3_column_type (q, 2) == SQLITE_TEXT)
      cowscope_session_builder_string (b, (guint32) sqlite3_column_int64 (q, 0),
                                       sqlite3_column_int64 (q, 1),
                                       (const char *) sqlite3_column_text (q, 2));
  sqlite3_finalize (q);
  return rc == SQLITE_DONE || fail (b, error);
}

CowscopeSessionBuilder *
cowscope_session_builder_new (sqlite3 *db, const char *path, GError **error)
{
  CowscopeSessionBuilder *b = g_new0 (CowscopeSessionBuilder, 1);
  b->db = db;
  b->path = g_strdup (path);
  b->objects = keyed_table ();
  b->strings = keyed_table ();
  b->open_mats = g_hash_table_new_full (key_hash, key_equal, NULL, open_mat_free);
  b->open_ranges = keyed_table ();
  b->last_clone = keyed_table ();
  b->early_names = keyed_table ();
  b->receivers = g_hash_table_new_full (key_hash, key_equal, NULL, g_free);
  b->ipc_events = g_array_new (FALSE, FALSE, sizeof (CowscopeEventRow));
  struct { sqlite3_stmt **stmt; const char *sql; } stmts[] = {
    { &b->ins_alloc, "INSERT OR IGNORE INTO allocations VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)" },
    { &b->ins_storage, "INSERT OR IGNORE INTO storages VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)" },
    { &b->ins_tensor, "INSERT OR IGNORE INTO tensors VALUES"
                      " (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)" },
    { &b->ins_context, "INSERT OR IGNORE INTO contexts VALUES (?, ?, ?, ?, ?, ?, ?)" },
    { &b->ins_lazy, "INSERT OR IGNORE INTO lazy_clones VALUES"
                    " (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)" },
    { &b->ins_mat, "INSERT OR IGNORE INTO materializations VALUES"
                   " (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)" },
    { &b->ins_viol, "INSERT OR IGNORE INTO violations VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)" },
    { &b->ins_range, "INSERT OR IGNORE INTO ranges VALUES (?, ?, ?, ?, ?, ?, ?)" },
  };
  if (cowscope_format_exec (db, clear_sql) != SQLITE_OK
      || cowscope_format_exec (db, index_sql) != SQLITE_OK)
    goto failed;
  for (guint i = 0; i < G_N_ELEMENTS (stmts); i++)
    if (sqlite3_prepare_v3 (db, stmts[i].sql, -1, SQLITE_PREPARE_PERSISTENT, stmts[i].stmt, NULL)
        != SQLITE_OK)
      goto failed;
  if (!load_strings (b, error)
      || (b->index = cowscope_index_writer_new (db, path, error)) == NULL)
    {
      cowscope_session_builder_free (b);
      return NULL;
    }
  return b;

failed:
  fail (b, error);
  cowscope_session_builder_free (b);
  return NULL;
}

gboolean
cowscope_session_builder_create_indexes (sqlite3 *db, const char *path, GError **error)
{
  if (cowscope_format_exec (db, index_sql) == SQLITE_OK)
    return TRUE;
  cowscope_format_set_write_error (error, db, path, "index");
  return FALSE;
}

void
cowscope_session_builder_free (CowscopeSessionBuilder *b)
{
  if (b == NULL)
    return;
  sqlite3_stmt *all[] = { b->ins_alloc, b->ins_storage, b->ins_tensor, b->ins_context,
                          b->ins_lazy, b->ins_mat, b->ins_viol, b->ins_range };
  for (guint i = 0; i < G_N_ELEMENTS (all); i++)
    sqlite3_finalize (all[i]);
  g_hash_table_unref (b->objects);
  g_hash_table_unref (b->strings);
  g_hash_table_unref (b->open_mats);
  g_hash_table_unref (b->open_ranges);
  g_hash_table_unref (b->last_clone);
  g_hash_table_unref (b->early_names);
  g_hash_table_unref (b->receivers);
  g_array_unref (b->ipc_events);
  cowscope_index_writer_free (b->index);
  g_free (b->path);
  g_free (b);
}

gboolean
cowscope_session_builder_event (CowscopeSessionBuilder *b, const CowscopeEventRow *ev,
                                GError **error)
{
  guint32 pid = (guint32) ev->col[COWSCOPE_EVENT_COL_PID];
  gint64 type = ev->col[COWSCOPE_EVENT_COL_TYPE];
  const gint64 *v = &ev->col[COWSCOPE_EVENT_COL_V0];
  if (!cowscope_index_writer_event (b->index, ev, error))
    return FALSE;
  if (b->ipc_events->len > 0 || (type >= COW_EVENT_IPC_SEND && type <= COW_EVENT_IPC_COLLECT))
    ipc_capture (b, ev);

  int created = cowscope_event_creates (type);
  if (created >= 0)
    {
      object_new (b, created, ev);
      return TRUE;
    }
  int freed = object_kind_of_free (type);
  if (freed >= 0)
    {
      Object *o = find_object (b, pid, freed, v[0]);
      if (o == NULL)
        return TRUE;
      gboolean ok = write_object (b, o, ev->col[COWSCOPE_EVENT_COL_TS], error);
      if (freed == COWSCOPE_OBJECT_CONTEXT)
        forget_clones (b, pid, TAG_CONTEXT_CLONE, v[0]);
      else if (freed == COWSCOPE_OBJECT_STORAGE)
        forget_clones (b, pid, TAG_STORAGE_CLONE, v[0]);
      g_hash_table_remove (b->objects, &o->key);
      return ok;
    }
  switch (type)
    {
    case COW_EVENT_TENSOR_NAME:
      {
        /* v0 tensor, v1 string: the last name given wins. */
        Object *o = find_object (b, pid, COWSCOPE_OBJECT_TENSOR, v[0]);
        if (o != NULL)
          o->name_id = v[1];
        else if (g_hash_table_size (b->early_names) < EARLY_NAMES_MAX)
          {
            LastClone *name = g_new (LastClone, 1);
            name->key = (Key) { pid, TAG_EARLY_NAME, v[0], 0 };
            name->seq = v[1];
            g_hash_table_replace (b->early_names, &name->key, name);
          }
        return TRUE;
      }
    case COW_EVENT_CONTEXT_REF:
    case COW_EVENT_CONTEXT_UNREF:
      {
        Object *o = find_object (b, pid, COWSCOPE_OBJECT_CONTEXT, v[0]);
        if (o != NULL)
          o->max_refcount = MAX (o->max_refcount, v[2]);
        return TRUE;
      }
    case COW_EVENT_LAZY_CLONE:
    case COW_EVENT_LAZY_CLONE_EAGER:
      return lazy_clone (b, ev, error);
    case COW_EVENT_MATERIALIZE_BEGIN:
      materialize_begin (b, ev);
      return TRUE;
    case COW_EVENT_MATERIALIZE_END:
      return materialize_end (b, ev, error);
    case COW_EVENT_SIMULATE_VIOLATION:
      return violation (b, ev, error);
    case COW_EVENT_RANGE_BEGIN:
    case COW_EVENT_RANGE_END:
      return range_event (b, ev, error);
    default:
      return TRUE;
    }
}

/* What never ended: objects never freed, materializations never ended,
 * ranges never closed. */
static gboolean
write_open (CowscopeSessionBuilder *b, GError **error)
{
  GHashTableIter it;
  gpointer value;
  g_hash_table_iter_init (&it, b->objects);
  while (g_hash_table_iter_next (&it, NULL, &value))
    if (!write_object (b, value, -1, error))
      return FALSE;
  g_hash_table_iter_init (&it, b->open_mats);
  while (g_hash_table_iter_next (&it, NULL, &value))
    {
      OpenMaterialization *m = value;
      for (guint i = 0; i < m->begins->len; i++)
        if (!write_materialization (b, m->key.pid, m->key.a,
                                    &g_array_index (m->begins, Begin, i), NULL, error))
          return FALSE;
    }
  g_hash_table_iter_init (&it, b->open_ranges);
  while (g_hash_table_iter_next (&it, NULL, &value))
    if (!write_range (b, value, -1, error))
      return FALSE;
  g_hash_table_remove_all (b->objects);
  g_hash_table_remove_all (b->open_mats);
  g_hash_table_remove_all (b->open_ranges);
  return TRUE;
}

gboolean
cowscope_session_builder_finish (CowscopeSessionBuilder *b, gboolean events_in_chunks,
                                 GError **error)
{
  return write_open (b, error)
         && write_ipc (b, error)
         && (cowscope_format_exec (b->db, cuda_sql) == SQLITE_OK || fail (b, error))
         && cowscope_index_writer_finish (b->index, COWSCOPE_CHECKPOINT_INTERVAL,
                                          events_in_chunks ? COWSCOPE_INDEX_EVENTS_IN_CHUNKS : 0,
                                          error);
}

/* The page cache a whole pass gets, in KiB. */
#define BUILD_CACHE_KIB 65536

static gboolean run (sqlite3 *db, const char *path, GError **error);

gboolean
cowscope_session_builder_run (sqlite3 *db, const char *path, GError **error)
{
  /* Objects' rows go in as the objects are freed, in no key order, into
   * tables already indexed: with SQLite's default 2 MB page cache that is
   * a page read and write per row once the tables outgrow it.  A bounded
   * cache for the pass, the connection's own put back after. */
  sqlite3_int64 cache_size = -2000;
  sqlite3_stmt *q = NULL;
  if (sqlite3_prepare_v2 (db, "PRAGMA cache_size", -1, &q, NULL) == SQLITE_OK
      && sqlite3_step (q) == SQLITE_ROW)
    cache_size = sqlite3_column_int64 (q, 0);
  sqlite3_finalize (q);
  sqlite3_exec (db, "PRAGMA cache_size = -" G_STRINGIFY (BUILD_CACHE_KIB), NULL, NULL, NULL);
  gboolean ok = run (db, path, error);
  g_autofree char *restore = g_strdup_printf ("PRAGMA cache_size = %" G_GINT64_FORMAT,
                                              (gint64) cache_size);
  sqlite3_exec (db, restore, NULL, NULL, NULL);
  return ok;
}

static gboolean
run (sqlite3 *db, const char *path, GError **error)
{
  g_autoptr (CowscopeSessionBuilder) b = cowscope_session_builder_new (db, path, error);
  if (b == NULL)
    return FALSE;
  CowscopeEventCatalog *catalog = cowscope_event_catalog_new (db);
  gboolean ok = cowscope_event_catalog_refresh (catalog) == SQLITE_OK || fail (b, error);
  for (guint i = 0; ok && i < cowscope_event_catalog_get_n_chunks (catalog); i++)
    {
      int rc;
      const char *what;
      const CowscopeEventBlock *block = cowscope_event_catalog_read (catalog, i, &rc, &what);
      if (block == NULL)
        {
          if (what != NULL)
            g_set_error (error, COWSCOPE_SESSION_ERROR, COWSCOPE_SESSION_ERROR_DAMAGED,
                         "%s is damaged: %s", path, what);
          else
            fail (b, error);
          ok = FALSE;
          break;
        }
      for (guint r = 0; ok && r < block->n; r++)
        {
          CowscopeEventRow row;
          cowscope_event_block_get (block, r, &row);
          ok = cowscope_session_builder_event (b, &row, error);
        }
    }
  cowscope_event_catalog_free (catalog);
  return ok && cowscope_session_builder_finish (b, TRUE, error);
}

gboolean
cowscope_session_builder_run_ipc (sqlite3 *db, const char *path, GError **error)
{
  /* Only the IPC capture of a builder: nothing else is cleared or written. */
  CowscopeSessionBuilder b = {
    .db = db,
    .path = (char *) path,
    .receivers = g_hash_table_new_full (key_hash, key_equal, NULL, g_free),
    .ipc_events = g_array_new (FALSE, FALSE, sizeof (CowscopeEventRow)),
  };
  CowscopeEventCatalog *catalog = cowscope_event_catalog_new (db);
  gboolean ok = cowscope_event_catalog_refresh (catalog) == SQLITE_OK || fail (&b, error);
  guint64 wanted = cowscope_event_type_bit (COW_EVENT_ALLOCATION_NEW)
                   | cowscope_event_type_bit (COW_EVENT_STORAGE_NEW);
  for (gint64 t = COW_EVENT_IPC_SEND; t <= COW_EVENT_IPC_COLLECT; t++)
    wanted |= cowscope_event_type_bit (t);
  for (guint i = 0; ok && i < cowscope_event_catalog_get_n_chunks (catalog); i++)
    {
      if ((cowscope_event_catalog_get_chunk (catalog, i)->types & wanted) == 0)
        continue;
      int rc;
      const char *what;
      const CowscopeEventBlock *block = cowscope_event_catalog_read (catalog, i, &rc, &what);
      if (block == NULL)
        {
          if (what != NULL)
            g_set_error (error, COWSCOPE_SESSION_ERROR, COWSCOPE_SESSION_ERROR_DAMAGED,
                         "%s is damaged: %s", path, what);
          else
            fail (&b, error);
          ok = FALSE;
          break;
        }
      for (guint r = 0; r < block->n; r++)
        {
          CowscopeEventRow row;
          cowscope_event_block_get (block, r, &row);
          gint64 type = row.col[COWSCOPE_EVENT_COL_TYPE];
          if (b.ipc_events->len > 0 || (type >= COW_EVENT_IPC_SEND && type <= COW_EVENT_IPC_COLLECT))
            ipc_capture (&b, &row);
        }
    }
  cowscope_event_catalog_free (catalog);
  ok = ok && write_ipc (&b, error);
  g_hash_table_unref (b.receivers);
  g_array_unref (b.ipc_events);
  return ok;
}
