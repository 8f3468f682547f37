/* cowscope-session-index.c — packed timeline lanes and graph checkpoints
 * (see header; byte layouts in README.md, "Session database"). */
#include "cowscope-session-index.h"

#include <stdlib.h>
#include <string.h>

#include "cow-trace.h"
#include "cowscope-recorder-error.h"

/* Schema-2 tables, for a schema-1 session finalized again. */
static const char create_sql[] =
  "CREATE TABLE IF NOT EXISTS timeline_lanes (id INTEGER PRIMARY KEY, pid INTEGER NOT NULL,"
  " tid INTEGER NOT NULL, device INTEGER, n_instants INTEGER NOT NULL,"
  " n_spans INTEGER NOT NULL);"
  "CREATE TABLE IF NOT EXISTS timeline_chunks (lane INTEGER NOT NULL, chunk INTEGER NOT NULL,"
  " first_ts INTEGER NOT NULL, last_ts INTEGER NOT NULL, n INTEGER NOT NULL,"
  " instants BLOB NOT NULL, PRIMARY KEY (lane, chunk));"
  "CREATE TABLE IF NOT EXISTS timeline_spans (lane INTEGER NOT NULL, chunk INTEGER NOT NULL,"
  " first_start INTEGER NOT NULL, last_start INTEGER NOT NULL, n INTEGER NOT NULL,"
  " spans BLOB NOT NULL, PRIMARY KEY (lane, chunk));"
  "CREATE TABLE IF NOT EXISTS timeline_counters (counter INTEGER PRIMARY KEY,"
  " start_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL, n_bins INTEGER NOT NULL,"
  " bins BLOB NOT NULL);"
  "CREATE TABLE IF NOT EXISTS checkpoint_states (checkpoint_id INTEGER PRIMARY KEY,"
  " n_objects INTEGER NOT NULL, objects BLOB NOT NULL);"
  "CREATE TABLE IF NOT EXISTS checkpoint_replays (checkpoint_id INTEGER PRIMARY KEY,"
  " first_seq INTEGER NOT NULL, last_seq INTEGER NOT NULL, n_events INTEGER NOT NULL,"
  " events BLOB NOT NULL);"
  "DELETE FROM timeline_lanes; DELETE FROM timeline_chunks; DELETE FROM timeline_spans;"
  "DELETE FROM timeline_counters; DELETE FROM checkpoint_states;"
  "DELETE FROM checkpoint_replays; DELETE FROM checkpoint_objects; DELETE FROM checkpoints;";

/* Instants (spans) per chunk: COWSCOPE_TIMELINE_CHUNK but in tests. */
static guint timeline_chunk = COWSCOPE_TIMELINE_CHUNK;

void
cowscope_session_index_set_chunk_for_tests (guint instants)
{
  timeline_chunk = instants > 0 ? instants : COWSCOPE_TIMELINE_CHUNK;
}

/* Span code of a user range (others: materialize or CUDA kind). */
#define SPAN_RANGE 255

enum { OBJ_ALLOCATION, OBJ_CONTEXT, OBJ_STORAGE, OBJ_TENSOR };
static const char *const obj_kind_names[] = { "allocation", "context", "storage", "tensor" };

static void
set_error (GError **error, sqlite3 *db, const char *path)
{
  g_set_error (error, COWSCOPE_RECORDER_ERROR, COWSCOPE_RECORDER_ERROR_IO,
               "cannot finalize session '%s': %s", path, sqlite3_errmsg (db));
}

/* ---- varints ------------------------------------------------------------ */

/* Appends @v as an unsigned LEB128 varint. */
static inline void
put_u (GByteArray *b, guint64 v)
{
  guint8 tmp[10];
  guint n = 0;
  while (v >= 0x80)
    {
      tmp[n++] = (guint8) (v | 0x80);
      v >>= 7;
    }
  tmp[n++] = (guint8) v;
  g_byte_array_append (b, tmp, n);
}

/* Appends @v zigzag-encoded (small magnitudes, either sign, are short). */
static inline void
put_s (GByteArray *b, gint64 v)
{
  put_u (b, ((guint64) v << 1) ^ (guint64) (v >> 63));
}

static inline void
put_byte (GByteArray *b, guint8 v)
{
  g_byte_array_append (b, &v, 1);
}

/* A free time relative to @base: 0 for "never freed". */
static inline void
put_free (GByteArray *b, gint64 free_ts, gint64 base)
{
  if (free_ts < 0)
    put_u (b, 0);
  else
    put_u (b, (((guint64) (free_ts - base) << 1) ^ (guint64) ((free_ts - base) >> 63)) + 1);
}

/* A name: 0 for none, else its length + 1 and its bytes. */
static inline void
put_name (GByteArray *b, const char *name)
{
  if (name == NULL)
    {
      put_u (b, 0);
      return;
    }
  gsize len = strlen (name);
  put_u (b, (guint64) len + 1);
  g_byte_array_append (b, (const guint8 *) name, (guint) len);
}

/* ---- object free times and names (from the derived tables) --------------- */

typedef struct {
  guint64 id;
  gint64 free_ts;
  guint32 pid;
  guint32 kind_name; /* kind << 30 | (offset + 1 into names, 0 for none) */
} ObjInfo;

typedef struct {
  GArray *infos;  /* ObjInfo sorted by (pid, kind, id) */
  GString *names; /* NUL-separated */
} ObjTable;

static int
compare_infos (const void *a, const void *b)
{
  const ObjInfo *x = a, *y = b;
  if (x->pid != y->pid)
    return x->pid < y->pid ? -1 : 1;
  guint32 kx = x->kind_name >> 30, ky = y->kind_name >> 30;
  if (kx != ky)
    return kx < ky ? -1 : 1;
  return (x->id > y->id) - (x->id < y->id);
}

/* Reads every object's free time (and tensors' names). */
static gboolean
obj_table_load (ObjTable *t, sqlite3 *db, const char *path, GError **error)
{
  sqlite3_stmt *q = NULL;
  if (sqlite3_prepare_v2 (db,
                          "SELECT pid, 0, id, free_ts, NULL FROM allocations"
                          " UNION ALL SELECT pid, 1, id, free_ts, NULL FROM contexts"
                          " UNION ALL SELECT pid, 2, id, free_ts, NULL FROM storages"
                          " UNION ALL SELECT pid, 3, id, free_ts, name FROM tensors",
                          -1, &q, NULL) != SQLITE_OK)
    {
      set_error (error, db, path);
      return FALSE;
    }
  t->infos = g_array_new (FALSE, FALSE, sizeof (ObjInfo));
  t->names = g_string_new (NULL);
  int rc;
  while ((rc = sqlite3_step (q)) == SQLITE_ROW)
    {
      ObjInfo info = {
        .pid = (guint32) sqlite3_column_int64 (q, 0),
        .id = (guint64) sqlite3_column_int64 (q, 2),
        .free_ts = sqlite3_column_type (q, 3) == SQLITE_INTEGER ? sqlite3_column_int64 (q, 3) : -1,
        .kind_name = (guint32) sqlite3_column_int (q, 1) << 30,
      };
      if (sqlite3_column_type (q, 4) == SQLITE_TEXT && t->names->len < (1u << 29))
        {
          info.kind_name |= (guint32) t->names->len + 1;
          g_string_append (t->names, (const char *) sqlite3_column_text (q, 4));
          g_string_append_c (t->names, '\0');
        }
      g_array_append_val (t->infos, info);
    }
  sqlite3_finalize (q);
  if (rc != SQLITE_DONE)
    {
      set_error (error, db, path);
      return FALSE;
    }
  g_array_sort (t->infos, compare_infos);
  return TRUE;
}

static void
obj_table_clear (ObjTable *t)
{
  if (t->infos)
    g_array_unref (t->infos);
  if (t->names)
    g_string_free (t->names, TRUE);
}

/* Free time (-1: never) and name (NULL: none) of an object. */
static void
obj_table_find (const ObjTable *t, guint32 pid, guint kind, guint64 id, gint64 *free_ts,
                const char **name)
{
  ObjInfo key = { .id = id, .pid = pid, .kind_name = (guint32) kind << 30 };
  const ObjInfo *found = t->infos->len == 0 ? NULL
                                            : bsearch (&key, t->infos->data, t->infos->len,
                                                       sizeof (ObjInfo), compare_infos);
  *free_ts = found ? found->free_ts : -1;
  guint32 off = found ? found->kind_name & ((1u << 30) - 1) : 0;
  *name = off ? t->names->str + off - 1 : NULL;
}

/* ---- the sharing-graph state ---------------------------------------------
 *
 * The rules of the session model's app/session/cowscope-graph-state.c
 * (cowscope_graph_state_apply), which the application replays after each
 * checkpoint written here.  The recorder must not include the session
 * model (DESIGN.md, "Layering"), so they are repeated; keep the two in
 * step.  test-session-model's /session/graph/packed-state-matches-replay
 * checks that every checkpoint's packed state equals the previous one plus
 * the model's replay of the events in between. */

typedef struct {
  guint32 pid;
  guint8 kind;
  guint8 alloc_kind;
  guint64 id;
  guint64 nbytes;
  gint64 device;
  guint64 allocation_id, context_id, left_context_id, storage_id, source_id;
  gint64 numel;
  guint32 dtype, ndim;
  gint64 free_ts;
  const char *name;
} LiveObj;

static guint
live_hash (gconstpointer p)
{
  const LiveObj *o = p;
  guint64 h = o->id * 0x9E3779B97F4A7C15ull ^ ((guint64) o->pid << 8 | o->kind);
  return (guint) (h ^ (h >> 32));
}

static gboolean
live_equal (gconstpointer a, gconstpointer b)
{
  const LiveObj *x = a, *y = b;
  return x->id == y->id && x->pid == y->pid && x->kind == y->kind;
}

static LiveObj *
live_get (GHashTable *live, guint8 kind, guint32 pid, guint64 id)
{
  LiveObj key = { .pid = pid, .kind = kind, .id = id };
  return g_hash_table_lookup (live, &key);
}

/* A new live object (replacing one with the same key). */
static LiveObj *
live_add (GHashTable *live, const ObjTable *objs, guint8 kind, guint32 pid, guint64 id)
{
  LiveObj *o = g_new0 (LiveObj, 1);
  o->kind = kind;
  o->pid = pid;
  o->id = id;
  obj_table_find (objs, pid, kind, id, &o->free_ts, &o->name);
  g_hash_table_replace (live, o, o);
  return o;
}

static void
live_remove (GHashTable *live, guint8 kind, guint32 pid, guint64 id)
{
  LiveObj key = { .pid = pid, .kind = kind, .id = id };
  g_hash_table_remove (live, &key);
}

/* Applies one event, as cowscope_graph_state_apply() does. */
static void
live_apply (GHashTable *live, const ObjTable *objs, gint64 type, gint64 aux, guint32 pid,
            const gint64 v[5])
{
  LiveObj *o;
  switch (type)
    {
    case COW_EVENT_ALLOCATION_NEW:
      o = live_add (live, objs, OBJ_ALLOCATION, pid, (guint64) v[0]);
      o->alloc_kind = (guint8) aux;
      o->nbytes = (guint64) v[1];
      o->device = v[3];
      break;
    case COW_EVENT_ALLOCATION_FREE:
      live_remove (live, OBJ_ALLOCATION, pid, (guint64) v[0]);
      break;
    case COW_EVENT_STORAGE_NEW:
      o = live_add (live, objs, OBJ_STORAGE, pid, (guint64) v[0]);
      o->allocation_id = (guint64) v[1];
      o->nbytes = (guint64) v[2];
      o->context_id = (guint64) v[3];
      o->source_id = (guint64) v[4];
      break;
    case COW_EVENT_STORAGE_FREE:
      live_remove (live, OBJ_STORAGE, pid, (guint64) v[0]);
      break;
    case COW_EVENT_TENSOR_NEW:
      o = live_add (live, objs, OBJ_TENSOR, pid, (guint64) v[0]);
      o->storage_id = (guint64) v[1];
      o->source_id = (guint64) v[2];
      o->numel = v[3];
      o->dtype = (guint32) (aux & 0xff);
      o->ndim = (guint32) ((aux >> 8) & 0xff);
      break;
    case COW_EVENT_TENSOR_FREE:
      live_remove (live, OBJ_TENSOR, pid, (guint64) v[0]);
      break;
    case COW_EVENT_CONTEXT_NEW:
      o = live_add (live, objs, OBJ_CONTEXT, pid, (guint64) v[0]);
      o->allocation_id = (guint64) v[3];
      o->storage_id = (guint64) v[1];
      /* The first storage joins the context, as on a ref. */
      G_GNUC_FALLTHROUGH;
    case COW_EVENT_CONTEXT_REF:
      if ((o = live_get (live, OBJ_STORAGE, pid, (guint64) v[1])) != NULL)
        {
          o->context_id = (guint64) v[0];
          o->left_context_id = 0;
        }
      break;
    case COW_EVENT_CONTEXT_UNREF:
      if ((o = live_get (live, OBJ_STORAGE, pid, (guint64) v[1])) != NULL
          && o->context_id == (guint64) v[0])
        o->context_id = 0;
      break;
    case COW_EVENT_CONTEXT_FREE:
      live_remove (live, OBJ_CONTEXT, pid, (guint64) v[0]);
      break;
    case COW_EVENT_MATERIALIZE_END:
      if ((aux & 0xff) != COW_MATERIALIZE_COPY && (aux & 0xff) != COW_MATERIALIZE_STEAL)
        break;
      if ((o = live_get (live, OBJ_STORAGE, pid, (guint64) v[0])) != NULL)
        {
          o->context_id = 0;
          o->left_context_id = (guint64) v[1];
          o->allocation_id = (guint64) v[2];
        }
      break;
    default:
      break;
    }
}

static int
compare_live (const void *a, const void *b)
{
  const LiveObj *x = *(const LiveObj *const *) a, *y = *(const LiveObj *const *) b;
  if (x->kind != y->kind)
    return x->kind < y->kind ? -1 : 1;
  if (x->pid != y->pid)
    return x->pid < y->pid ? -1 : 1;
  return (x->id > y->id) - (x->id < y->id);
}

/* Encodes the live set, sorted by (kind, pid, id): the order of the
 * graph's nodes. */
static void
encode_state (GHashTable *live, gint64 cp_ts, GByteArray *out, GPtrArray *sorted)
{
  g_ptr_array_set_size (sorted, 0);
  GHashTableIter it;
  gpointer key;
  g_hash_table_iter_init (&it, live);
  while (g_hash_table_iter_next (&it, &key, NULL))
    g_ptr_array_add (sorted, key);
  if (sorted->len > 1)
    qsort (sorted->pdata, sorted->len, sizeof (gpointer), compare_live);
  guint32 prev_pid = 0;
  guint8 prev_kind = 0;
  guint64 prev_id = 0;
  for (guint i = 0; i < sorted->len; i++)
    {
      const LiveObj *o = sorted->pdata[i];
      if (o->pid != prev_pid || o->kind != prev_kind)
        prev_id = 0;
      put_s (out, (gint64) o->pid - (gint64) prev_pid);
      put_byte (out, o->kind);
      put_s (out, (gint64) (o->id - prev_id));
      prev_pid = o->pid;
      prev_kind = o->kind;
      prev_id = o->id;
      switch (o->kind)
        {
        case OBJ_ALLOCATION:
          put_u (out, o->alloc_kind);
          put_s (out, o->device);
          put_u (out, o->nbytes);
          break;
        case OBJ_CONTEXT:
          put_u (out, o->allocation_id);
          put_u (out, o->storage_id);
          break;
        case OBJ_STORAGE:
          put_u (out, o->allocation_id);
          put_u (out, o->nbytes);
          put_u (out, o->context_id);
          put_u (out, o->left_context_id);
          put_u (out, o->source_id);
          break;
        default:
          put_u (out, o->storage_id);
          put_u (out, o->source_id);
          put_u (out, o->dtype);
          put_u (out, o->ndim);
          put_s (out, o->numel);
          break;
        }
      put_free (out, o->free_ts, cp_ts);
      if (o->kind == OBJ_TENSOR)
        put_name (out, o->name);
    }
}

/* Event types that cannot change the sharing graph (left out of replays). */
static gboolean
graph_irrelevant (gint64 type)
{
  switch (type)
    {
    case COW_EVENT_TENSOR_NAME:
    case COW_EVENT_LAZY_CLONE:
    case COW_EVENT_LAZY_CLONE_EAGER:
    case COW_EVENT_MATERIALIZE_BEGIN:
    case COW_EVENT_SIMULATE_VIOLATION:
    case COW_EVENT_RANGE_BEGIN:
    case COW_EVENT_RANGE_END:
    case COW_EVENT_MARK:
      return TRUE;
    default:
      return FALSE;
    }
}

/* The object kind an event creates, or -1. */
static int
born_kind (gint64 type)
{
  switch (type)
    {
    case COW_EVENT_ALLOCATION_NEW: return OBJ_ALLOCATION;
    case COW_EVENT_CONTEXT_NEW: return OBJ_CONTEXT;
    case COW_EVENT_STORAGE_NEW: return OBJ_STORAGE;
    case COW_EVENT_TENSOR_NEW: return OBJ_TENSOR;
    default: return -1;
    }
}

/* ---- timeline lanes ------------------------------------------------------- */

typedef struct {
  gint64 ts, id;
  guint64 bytes;
  guint8 code, aux;
} Instant;

typedef struct {
  gint64 start, end, id;
  guint64 bytes;
  guint8 code;
  gboolean open;
} SpanRec;

typedef struct {
  guint32 pid;
  gint64 tid, device; /* device -1: a thread lane */
  gint64 lane_id;
  GArray *pending;    /* Instant, up to a chunk */
  guint64 n_instants;
  gint64 n_chunks;
  GArray *spans;      /* SpanRec */
} Lane;

static guint
lane_hash (gconstpointer p)
{
  const Lane *l = p;
  guint64 h = ((guint64) l->pid << 32 ^ (guint64) l->tid) * 0x9E3779B97F4A7C15ull
              ^ (guint64) l->device;
  return (guint) (h ^ (h >> 32));
}

static gboolean
lane_equal (gconstpointer a, gconstpointer b)
{
  const Lane *x = a, *y = b;
  return x->pid == y->pid && x->tid == y->tid && x->device == y->device;
}

static void
lane_free (gpointer data)
{
  Lane *l = data;
  g_array_unref (l->pending);
  g_array_unref (l->spans);
  g_free (l);
}

typedef struct {
  sqlite3 *db;
  const char *path;
  GHashTable *lanes;  /* Lane set */
  gint64 next_lane;
  sqlite3_stmt *ins_chunk, *ins_span, *ins_lane, *ins_counter;
  sqlite3_stmt *ins_cp, *ins_cpo, *ins_state, *ins_replay;
  GByteArray *buf;
} Writer;

static Lane *
lane_for (Writer *w, guint32 pid, gint64 tid, gint64 device)
{
  Lane key = { .pid = pid, .tid = tid, .device = device };
  Lane *l = g_hash_table_lookup (w->lanes, &key);
  if (l == NULL)
    {
      l = g_new0 (Lane, 1);
      *l = key;
      l->lane_id = w->next_lane++;
      l->pending = g_array_sized_new (FALSE, FALSE, sizeof (Instant), 1024);
      l->spans = g_array_new (FALSE, FALSE, sizeof (SpanRec));
      g_hash_table_add (w->lanes, l);
    }
  return l;
}

/* Binds @b as a BLOB; an empty one too (a NULL pointer would bind NULL). */
static void
bind_bytes (sqlite3_stmt *s, int col, GByteArray *b)
{
  if (b->len == 0)
    sqlite3_bind_zeroblob (s, col, 0);
  else
    sqlite3_bind_blob (s, col, b->data, (int) b->len, SQLITE_STATIC);
}

static gboolean
step_done (Writer *w, sqlite3_stmt *s, GError **error)
{
  int rc = sqlite3_step (s);
  sqlite3_reset (s);
  sqlite3_clear_bindings (s);
  if (rc != SQLITE_DONE)
    {
      set_error (error, w->db, w->path);
      return FALSE;
    }
  return TRUE;
}

/* Writes a lane's pending instants as one chunk. */
static gboolean
lane_flush (Writer *w, Lane *l, GError **error)
{
  if (l->pending->len == 0)
    return TRUE;
  g_byte_array_set_size (w->buf, 0);
  gint64 prev_ts = 0, prev_id = 0;
  gboolean cuda = l->device >= 0;
  for (guint i = 0; i < l->pending->len; i++)
    {
      const Instant *in = &g_array_index (l->pending, Instant, i);
      put_s (w->buf, in->ts - prev_ts);
      put_s (w->buf, in->id - prev_id);
      put_byte (w->buf, in->code);
      if (!cuda && in->code == COW_EVENT_MATERIALIZE_END)
        put_byte (w->buf, in->aux);
      put_u (w->buf, in->bytes);
      prev_ts = in->ts;
      prev_id = in->id;
    }
  sqlite3_stmt *s = w->ins_chunk;
  sqlite3_bind_int64 (s, 1, l->lane_id);
  sqlite3_bind_int64 (s, 2, l->n_chunks++);
  sqlite3_bind_int64 (s, 3, g_array_index (l->pending, Instant, 0).ts);
  sqlite3_bind_int64 (s, 4, g_array_index (l->pending, Instant, l->pending->len - 1).ts);
  sqlite3_bind_int64 (s, 5, l->pending->len);
  bind_bytes (s, 6, w->buf);
  l->n_instants += l->pending->len;
  g_array_set_size (l->pending, 0);
  return step_done (w, s, error);
}

static gboolean
lane_append (Writer *w, Lane *l, gint64 ts, gint64 id, guint8 code, guint8 aux,
             guint64 bytes, GError **error)
{
  Instant in = { ts, id, bytes, code, aux };
  g_array_append_val (l->pending, in);
  if (l->pending->len >= timeline_chunk)
    return lane_flush (w, l, error);
  return TRUE;
}

static int
compare_span_recs (const void *a, const void *b)
{
  const SpanRec *x = a, *y = b;
  if (x->start != y->start)
    return x->start < y->start ? -1 : 1;
  return (x->id > y->id) - (x->id < y->id);
}

/* Sorts a lane's spans and writes them in chunks. */
static gboolean
lane_write_spans (Writer *w, Lane *l, GError **error)
{
  g_array_sort (l->spans, compare_span_recs);
  for (guint first = 0, chunk = 0; first < l->spans->len; first += timeline_chunk, chunk++)
    {
      guint last = MIN (first + timeline_chunk, l->spans->len);
      g_byte_array_set_size (w->buf, 0);
      gint64 prev_start = 0, prev_id = 0;
      for (guint i = first; i < last; i++)
        {
          const SpanRec *s = &g_array_index (l->spans, SpanRec, i);
          put_s (w->buf, s->start - prev_start);
          if (s->open)
            put_u (w->buf, 0);
          else
            put_u (w->buf, (((guint64) (s->end - s->start) << 1)
                            ^ (guint64) ((s->end - s->start) >> 63)) + 1);
          put_s (w->buf, s->id - prev_id);
          put_byte (w->buf, s->code);
          put_u (w->buf, s->bytes);
          prev_start = s->start;
          prev_id = s->id;
        }
      sqlite3_stmt *q = w->ins_span;
      sqlite3_bind_int64 (q, 1, l->lane_id);
      sqlite3_bind_int64 (q, 2, chunk);
      sqlite3_bind_int64 (q, 3, g_array_index (l->spans, SpanRec, first).start);
      sqlite3_bind_int64 (q, 4, g_array_index (l->spans, SpanRec, last - 1).start);
      sqlite3_bind_int64 (q, 5, last - first);
      bind_bytes (q, 6, w->buf);
      if (!step_done (w, q, error))
        return FALSE;
    }
  return TRUE;
}

/* ---- counter tracks (the app's definitions, README "timeline_counters") -- */

enum { COUNTER_ALLOCATED, COUNTER_SHARED, COUNTER_STORAGES, N_COUNTERS };

typedef struct {
  gint64 start;
  double bin_ns;
  guint n_bins;
  double *min, *max, *last;
  guint8 *touched;
} Series;

static void
series_init (Series *s, gint64 start, gint64 end, guint n_bins)
{
  s->start = start;
  s->n_bins = n_bins;
  s->bin_ns = MAX ((double) (end - start + 1) / n_bins, 1.0);
  s->min = g_new0 (double, n_bins);
  s->max = g_new0 (double, n_bins);
  s->last = g_new0 (double, n_bins);
  s->touched = g_new0 (guint8, n_bins);
}

static void
series_clear (Series *s)
{
  g_free (s->min);
  g_free (s->max);
  g_free (s->last);
  g_free (s->touched);
}

static void
series_set (Series *s, gint64 ts, double value)
{
  double f = (double) (ts - s->start) / s->bin_ns;
  guint b = f < 0 ? 0 : f >= s->n_bins ? s->n_bins - 1 : (guint) f;
  if (!s->touched[b])
    {
      s->touched[b] = 1;
      s->min[b] = s->max[b] = value;
    }
  else
    {
      s->min[b] = MIN (s->min[b], value);
      s->max[b] = MAX (s->max[b], value);
    }
  s->last[b] = value;
}

static void
put_double (GByteArray *b, double v)
{
  guint64 bits;
  memcpy (&bits, &v, sizeof bits);
  bits = GUINT64_TO_LE (bits);
  g_byte_array_append (b, (const guint8 *) &bits, sizeof bits);
}

typedef struct {
  double allocated, shared, storages;
  GHashTable *contexts; /* (pid, context) folded -> bytes one sharer shares */
  Series series[N_COUNTERS];
} Counters;

static gpointer
pid_id_key (guint32 pid, gint64 id)
{
  return GSIZE_TO_POINTER (((guint64) pid << 44) ^ (guint64) id);
}

static void
counters_apply (Counters *c, guint32 pid, gint64 ts, gint64 type, const gint64 v[5])
{
  switch (type)
    {
    case COW_EVENT_ALLOCATION_NEW:
      c->allocated += (double) v[1];
      series_set (&c->series[COUNTER_ALLOCATED], ts, c->allocated);
      break;
    case COW_EVENT_ALLOCATION_FREE:
      c->allocated -= (double) v[1];
      series_set (&c->series[COUNTER_ALLOCATED], ts, c->allocated);
      break;
    case COW_EVENT_STORAGE_NEW:
      c->storages += 1;
      series_set (&c->series[COUNTER_STORAGES], ts, c->storages);
      if (v[3] != 0)
        {
          g_hash_table_insert (c->contexts, pid_id_key (pid, v[3]), GSIZE_TO_POINTER (v[2]));
          c->shared += (double) v[2];
          series_set (&c->series[COUNTER_SHARED], ts, c->shared);
        }
      break;
    case COW_EVENT_STORAGE_FREE:
      c->storages -= 1;
      series_set (&c->series[COUNTER_STORAGES], ts, c->storages);
      break;
    case COW_EVENT_CONTEXT_UNREF:
      if (v[2] >= 1)
        {
          gpointer nbytes;
          if (g_hash_table_lookup_extended (c->contexts, pid_id_key (pid, v[0]), NULL, &nbytes))
            {
              c->shared -= (double) GPOINTER_TO_SIZE (nbytes);
              series_set (&c->series[COUNTER_SHARED], ts, c->shared);
            }
        }
      break;
    case COW_EVENT_CONTEXT_FREE:
      g_hash_table_remove (c->contexts, pid_id_key (pid, v[0]));
      break;
    default:
      break;
    }
}

/* Carries values into untouched bins and writes the three tracks. */
static gboolean
counters_write (Writer *w, Counters *c, gint64 start, gint64 end, GError **error)
{
  for (guint k = 0; k < N_COUNTERS; k++)
    {
      Series *s = &c->series[k];
      double carried = 0;
      g_byte_array_set_size (w->buf, 0);
      for (guint b = 0; b < s->n_bins; b++)
        {
          if (!s->touched[b])
            s->min[b] = s->max[b] = s->last[b] = carried;
          else
            {
              s->min[b] = MIN (s->min[b], carried);
              s->max[b] = MAX (s->max[b], carried);
            }
          carried = s->last[b];
          put_double (w->buf, s->min[b]);
          put_double (w->buf, s->max[b]);
          put_double (w->buf, s->last[b]);
        }
      sqlite3_stmt *q = w->ins_counter;
      sqlite3_bind_int64 (q, 1, k);
      sqlite3_bind_int64 (q, 2, start);
      sqlite3_bind_int64 (q, 3, end);
      sqlite3_bind_int64 (q, 4, s->n_bins);
      bind_bytes (q, 5, w->buf);
      if (!step_done (w, q, error))
        return FALSE;
    }
  return TRUE;
}

/* ---- the pass ------------------------------------------------------------- */

static gboolean
prepare (Writer *w, const char *sql, sqlite3_stmt **stmt, GError **error)
{
  if (sqlite3_prepare_v2 (w->db, sql, -1, stmt, NULL) != SQLITE_OK)
    {
      set_error (error, w->db, w->path);
      return FALSE;
    }
  return TRUE;
}

/* One integer pair from @sql (NULL -> @fallback). */
static gboolean
query_pair (Writer *w, const char *sql, gint64 *a, gint64 *b, gint64 fallback, GError **error)
{
  sqlite3_stmt *q;
  if (!prepare (w, sql, &q, error))
    return FALSE;
  *a = *b = fallback;
  if (sqlite3_step (q) == SQLITE_ROW)
    {
      if (sqlite3_column_type (q, 0) == SQLITE_INTEGER)
        *a = sqlite3_column_int64 (q, 0);
      if (sqlite3_column_type (q, 1) == SQLITE_INTEGER)
        *b = sqlite3_column_int64 (q, 1);
    }
  sqlite3_finalize (q);
  return TRUE;
}

typedef struct {
  gint64 cp_id;        /* the checkpoint the segment follows (0: the start) */
  gint64 first_seq;
  gint64 n;
  gint64 prev_seq, prev_ts, prev_pid;
  GByteArray *events;
} Segment;

static gboolean
segment_flush (Writer *w, Segment *seg, gint64 last_seq, GError **error)
{
  sqlite3_stmt *q = w->ins_replay;
  sqlite3_bind_int64 (q, 1, seg->cp_id);
  sqlite3_bind_int64 (q, 2, seg->first_seq);
  sqlite3_bind_int64 (q, 3, last_seq);
  sqlite3_bind_int64 (q, 4, seg->n);
  bind_bytes (q, 5, seg->events);
  gboolean ok = step_done (w, q, error);
  g_byte_array_set_size (seg->events, 0);
  seg->n = 0;
  seg->prev_seq = seg->prev_ts = seg->prev_pid = 0;
  return ok;
}

static void
segment_add (Segment *seg, const ObjTable *objs, gint64 seq, gint64 ts, guint32 pid,
             gint64 type, gint64 aux, const gint64 v[5])
{
  GByteArray *b = seg->events;
  put_s (b, seq - seg->prev_seq);
  put_s (b, ts - seg->prev_ts);
  put_u (b, (guint64) type);
  put_s (b, aux);
  put_s (b, (gint64) pid - seg->prev_pid);
  for (int k = 0; k < 5; k++)
    put_s (b, v[k]);
  int kind = born_kind (type);
  if (kind >= 0)
    {
      gint64 free_ts;
      const char *name;
      obj_table_find (objs, pid, (guint) kind, (guint64) v[0], &free_ts, &name);
      put_free (b, free_ts, ts);
      if (kind == OBJ_TENSOR)
        put_name (b, name);
    }
  seg->prev_seq = seq;
  seg->prev_ts = ts;
  seg->prev_pid = pid;
  seg->n++;
}

static gboolean
write_checkpoint (Writer *w, GHashTable *live, gint64 id, gint64 seq, gint64 ts,
                  GPtrArray *sorted, GError **error)
{
  sqlite3_bind_int64 (w->ins_cp, 1, id);
  sqlite3_bind_int64 (w->ins_cp, 2, seq);
  sqlite3_bind_int64 (w->ins_cp, 3, ts);
  if (!step_done (w, w->ins_cp, error))
    return FALSE;
  g_byte_array_set_size (w->buf, 0);
  encode_state (live, ts, w->buf, sorted);
  for (guint i = 0; i < sorted->len; i++)
    {
      const LiveObj *o = sorted->pdata[i];
      sqlite3_bind_int64 (w->ins_cpo, 1, id);
      sqlite3_bind_int64 (w->ins_cpo, 2, o->pid);
      sqlite3_bind_text (w->ins_cpo, 3, obj_kind_names[o->kind], -1, SQLITE_STATIC);
      sqlite3_bind_int64 (w->ins_cpo, 4, (gint64) o->id);
      if (!step_done (w, w->ins_cpo, error))
        return FALSE;
    }
  sqlite3_bind_int64 (w->ins_state, 1, id);
  sqlite3_bind_int64 (w->ins_state, 2, sorted->len);
  bind_bytes (w->ins_state, 3, w->buf);
  return step_done (w, w->ins_state, error);
}

/* The byte count the timeline shows for an event (0 when none). */
static guint64
event_bytes (gint64 type, const gint64 v[5])
{
  switch (type)
    {
    case COW_EVENT_ALLOCATION_NEW:
    case COW_EVENT_ALLOCATION_FREE: return (guint64) v[1];
    case COW_EVENT_STORAGE_NEW:
    case COW_EVENT_STORAGE_FREE: return (guint64) v[2];
    case COW_EVENT_MATERIALIZE_BEGIN:
    case COW_EVENT_MATERIALIZE_END: return (guint64) v[3];
    default: return 0;
    }
}

static gint64
col_int (sqlite3_stmt *q, int col, gint64 fallback)
{
  return sqlite3_column_type (q, col) == SQLITE_INTEGER ? sqlite3_column_int64 (q, col) : fallback;
}

static gboolean
scan_events (Writer *w, const ObjTable *objs, Counters *counters, gint64 interval,
             GError **error)
{
  sqlite3_stmt *scan = NULL;
  gboolean ok = FALSE;
  g_autoptr (GHashTable) live = g_hash_table_new_full (live_hash, live_equal, g_free, NULL);
  g_autoptr (GPtrArray) sorted = g_ptr_array_new ();
  Segment seg = { .cp_id = 0, .first_seq = 1, .events = g_byte_array_new () };
  gint64 since = 0, next_cp = 1, seq = 0;
  Lane *last = NULL;
  int rc;

  if (!prepare (w, "SELECT seq, ts, pid, tid, type, aux, v0, v1, v2, v3, v4 FROM events"
                   " ORDER BY seq", &scan, error))
    goto out;
  gboolean first = TRUE;
  while ((rc = sqlite3_step (scan)) == SQLITE_ROW)
    {
      seq = sqlite3_column_int64 (scan, 0);
      gint64 ts = sqlite3_column_int64 (scan, 1);
      guint32 pid = (guint32) sqlite3_column_int64 (scan, 2);
      gint64 tid = sqlite3_column_int64 (scan, 3);
      gint64 type = sqlite3_column_int64 (scan, 4);
      gint64 aux = sqlite3_column_int64 (scan, 5);
      gint64 v[5];
      for (int k = 0; k < 5; k++)
        v[k] = sqlite3_column_int64 (scan, 6 + k); /* NULL reads as 0 */
      if (first)
        {
          seg.first_seq = seq;
          first = FALSE;
        }

      if (last == NULL || last->pid != pid || last->tid != tid)
        last = lane_for (w, pid, tid, -1);
      if (!lane_append (w, last, ts, seq, (guint8) CLAMP (type, 0, 255), (guint8) (aux & 0xff),
                        event_bytes (type, v), error))
        goto out;
      counters_apply (counters, pid, ts, type, v);

      live_apply (live, objs, type, aux, pid, v);
      if (!graph_irrelevant (type))
        segment_add (&seg, objs, seq, ts, pid, type, aux, v);
      if (++since >= MAX (interval, (gint64) g_hash_table_size (live)))
        {
          if (!segment_flush (w, &seg, seq, error)
              || !write_checkpoint (w, live, next_cp, seq, ts, sorted, error))
            goto out;
          seg.cp_id = next_cp++;
          seg.first_seq = seq + 1;
          since = 0;
        }
    }
  if (rc != SQLITE_DONE)
    {
      set_error (error, w->db, w->path);
      goto out;
    }
  ok = segment_flush (w, &seg, seq, error);
out:
  sqlite3_finalize (scan);
  g_byte_array_unref (seg.events);
  return ok;
}

/* Materializations and user ranges on thread lanes; CUDA records. */
static gboolean
scan_spans (Writer *w, GError **error)
{
  sqlite3_stmt *q = NULL;
  int rc;
  if (!prepare (w, "SELECT seq, pid, tid, begin_ts, end_ts, kind, nbytes FROM materializations"
                   " WHERE begin_ts IS NOT NULL", &q, error))
    return FALSE;
  while ((rc = sqlite3_step (q)) == SQLITE_ROW)
    {
      Lane *l = lane_for (w, (guint32) col_int (q, 1, 0), col_int (q, 2, 0), -1);
      gint64 begin = sqlite3_column_int64 (q, 3);
      SpanRec s = { begin, col_int (q, 4, begin), sqlite3_column_int64 (q, 0),
                    (guint64) col_int (q, 6, 0), (guint8) CLAMP (col_int (q, 5, 0), 0, 254),
                    FALSE };
      g_array_append_val (l->spans, s);
    }
  sqlite3_finalize (q);
  if (rc != SQLITE_DONE)
    goto fail;

  if (!prepare (w, "SELECT id, pid, tid, begin_ts, end_ts FROM ranges WHERE begin_ts IS NOT NULL",
                &q, error))
    return FALSE;
  while ((rc = sqlite3_step (q)) == SQLITE_ROW)
    {
      Lane *l = lane_for (w, (guint32) col_int (q, 1, 0), col_int (q, 2, 0), -1);
      gint64 begin = sqlite3_column_int64 (q, 3);
      gboolean open = sqlite3_column_type (q, 4) != SQLITE_INTEGER;
      SpanRec s = { begin, open ? begin : sqlite3_column_int64 (q, 4),
                    sqlite3_column_int64 (q, 0), 0, SPAN_RANGE, open };
      g_array_append_val (l->spans, s);
    }
  sqlite3_finalize (q);
  if (rc != SQLITE_DONE)
    goto fail;

  if (!prepare (w, "SELECT id, pid, max (coalesce (device_id, 0), 0), coalesce (stream_id, 0),"
                   " start_ns, end_ns, bytes, kind FROM cuda_activity"
                   " ORDER BY 2, 3, 4, start_ns, id", &q, error))
    return FALSE;
  Lane *last = NULL;
  while ((rc = sqlite3_step (q)) == SQLITE_ROW)
    {
      guint32 pid = (guint32) sqlite3_column_int64 (q, 1);
      gint64 device = sqlite3_column_int64 (q, 2), stream = sqlite3_column_int64 (q, 3);
      if (last == NULL || last->pid != pid || last->tid != stream || last->device != device)
        last = lane_for (w, pid, stream, device);
      gint64 start = sqlite3_column_int64 (q, 4), id = sqlite3_column_int64 (q, 0);
      guint64 bytes = (guint64) col_int (q, 6, 0);
      guint8 code = (guint8) CLAMP (col_int (q, 7, 0), 0, 254);
      if (!lane_append (w, last, start, id, code, 0, bytes, error))
        {
          sqlite3_finalize (q);
          return FALSE;
        }
      SpanRec s = { start, col_int (q, 5, start), id, bytes, code, FALSE };
      g_array_append_val (last->spans, s);
    }
  sqlite3_finalize (q);
  if (rc != SQLITE_DONE)
    goto fail;
  return TRUE;

fail:
  set_error (error, w->db, w->path);
  return FALSE;
}

static gboolean
write_lanes (Writer *w, GError **error)
{
  GHashTableIter it;
  gpointer key;
  g_hash_table_iter_init (&it, w->lanes);
  while (g_hash_table_iter_next (&it, &key, NULL))
    {
      Lane *l = key;
      if (!lane_flush (w, l, error) || !lane_write_spans (w, l, error))
        return FALSE;
      sqlite3_stmt *q = w->ins_lane;
      sqlite3_bind_int64 (q, 1, l->lane_id);
      sqlite3_bind_int64 (q, 2, l->pid);
      sqlite3_bind_int64 (q, 3, l->tid);
      if (l->device >= 0)
        sqlite3_bind_int64 (q, 4, l->device);
      else
        sqlite3_bind_null (q, 4);
      sqlite3_bind_int64 (q, 5, (gint64) l->n_instants);
      sqlite3_bind_int64 (q, 6, l->spans->len);
      if (!step_done (w, q, error))
        return FALSE;
    }
  return TRUE;
}

gboolean
cowscope_session_index_write (sqlite3 *db, const char *path, gint64 checkpoint_interval,
                              GError **error)
{
  g_return_val_if_fail (db != NULL, FALSE);
  Writer w = { .db = db, .path = path, .next_lane = 1 };
  ObjTable objs = { 0 };
  Counters counters = { 0 };
  gboolean ok = FALSE;
  gint64 min_ts, max_ts, cuda_min, cuda_max;
  g_autofree char *meta = g_strdup_printf (
    "INSERT OR REPLACE INTO meta (key, value) VALUES ('index_format', %d)",
    COWSCOPE_SESSION_INDEX_FORMAT);

  w.lanes = g_hash_table_new_full (lane_hash, lane_equal, lane_free, NULL);
  w.buf = g_byte_array_new ();
  counters.contexts = g_hash_table_new (g_direct_hash, g_direct_equal);

  if (sqlite3_exec (db, create_sql, NULL, NULL, NULL) != SQLITE_OK)
    {
      set_error (error, db, path);
      goto out;
    }
  if (!prepare (&w, "INSERT INTO timeline_chunks VALUES (?, ?, ?, ?, ?, ?)", &w.ins_chunk, error)
      || !prepare (&w, "INSERT INTO timeline_spans VALUES (?, ?, ?, ?, ?, ?)", &w.ins_span, error)
      || !prepare (&w, "INSERT INTO timeline_lanes VALUES (?, ?, ?, ?, ?, ?)", &w.ins_lane, error)
      || !prepare (&w, "INSERT INTO timeline_counters VALUES (?, ?, ?, ?, ?)", &w.ins_counter, error)
      || !prepare (&w, "INSERT INTO checkpoints (id, seq, ts) VALUES (?, ?, ?)", &w.ins_cp, error)
      || !prepare (&w, "INSERT OR IGNORE INTO checkpoint_objects (checkpoint_id, pid, kind, id)"
                       " VALUES (?, ?, ?, ?)", &w.ins_cpo, error)
      || !prepare (&w, "INSERT INTO checkpoint_states VALUES (?, ?, ?)", &w.ins_state, error)
      || !prepare (&w, "INSERT INTO checkpoint_replays VALUES (?, ?, ?, ?, ?)", &w.ins_replay, error))
    goto out;

  /* The bounds the app computes: events, widened by CUDA activity. */
  if (!query_pair (&w, "SELECT min (ts), max (ts) FROM events", &min_ts, &max_ts, G_MININT64, error)
      || !query_pair (&w, "SELECT min (start_ns), max (end_ns) FROM cuda_activity", &cuda_min,
                      &cuda_max, G_MININT64, error))
    goto out;
  if (min_ts == G_MININT64)
    min_ts = max_ts = cuda_min != G_MININT64 ? cuda_min : 0;
  if (cuda_min != G_MININT64)
    {
      min_ts = MIN (min_ts, cuda_min);
      max_ts = MAX (max_ts, cuda_max);
    }
  max_ts = MAX (max_ts, min_ts);
  for (guint k = 0; k < N_COUNTERS; k++)
    series_init (&counters.series[k], min_ts, max_ts, COWSCOPE_TIMELINE_COUNTER_BINS);

  ok = obj_table_load (&objs, db, path, error)
       && scan_events (&w, &objs, &counters, MAX (checkpoint_interval, 1), error)
       && scan_spans (&w, error)
       && write_lanes (&w, error)
       && counters_write (&w, &counters, min_ts, max_ts, error);
  if (ok && sqlite3_exec (db, meta, NULL, NULL, NULL) != SQLITE_OK)
    {
      set_error (error, db, path);
      ok = FALSE;
    }

out:
  {
    sqlite3_stmt *all[] = { w.ins_chunk, w.ins_span, w.ins_lane, w.ins_counter, w.ins_cp,
                            w.ins_cpo, w.ins_state, w.ins_replay };
    for (guint i = 0; i < G_N_ELEMENTS (all); i++)
      sqlite3_finalize (all[i]);
  }
  obj_table_clear (&objs);
  for (guint k = 0; k < N_COUNTERS; k++)
    series_clear (&counters.series[k]);
  g_hash_table_unref (counters.contexts);
  g_hash_table_unref (w.lanes);
  g_byte_array_unref (w.buf);
  return ok;
}
