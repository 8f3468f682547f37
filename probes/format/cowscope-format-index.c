/* cowscope-format-index.c — packed timeline lanes and graph checkpoints
 * (see header). */
#include "cowscope-format-index.h"

#include <stdlib.h>
#include <string.h>

#include "cow-trace.h"
#include "cowscope-format-counters.h"
#include "cowscope-format-error.h"
#include "cowscope-format-open.h"
#include "cowscope-format-schema.h"
#include "cowscope-format-timeline.h"
#include "cowscope-format-vocabulary.h"
#include "cowscope-graph-state.h"
#include "cowscope-packed-records.h"

static const char clear_sql[] =
  "DELETE FROM timeline_lanes; DELETE FROM timeline_chunks; DELETE FROM timeline_spans;"
  "DELETE FROM timeline_counters; DELETE FROM checkpoint_states;"
  "DELETE FROM checkpoint_replays; DELETE FROM checkpoint_objects; DELETE FROM checkpoints;";

/* Instants (spans) per chunk: COWSCOPE_TIMELINE_CHUNK but in tests. */
static guint timeline_chunk = COWSCOPE_TIMELINE_CHUNK;

void
cowscope_format_index_set_chunk_for_tests (guint instants)
{
  timeline_chunk = instants > 0 ? instants : COWSCOPE_TIMELINE_CHUNK;
}

typedef struct Lane Lane;

typedef struct {
  sqlite3 *db;
  const char *path;
  GHashTable *lanes;  /* Lane set */
  gint64 next_lane;
  sqlite3_stmt *ins_chunk, *ins_span, *ins_lane, *ins_counter;
  sqlite3_stmt *ins_cp, *ins_cpo, *ins_state, *ins_replay;
  GByteArray *buf;
} Writer;

static gboolean
fail (Writer *w, GError **error)
{
  cowscope_format_set_write_error (error, w->db, w->path, "finalize");
  return FALSE;
}

static gboolean
prepare (Writer *w, const char *sql, sqlite3_stmt **stmt, GError **error)
{
  int rc = cowscope_format_prepare (w->db, sql, stmt);
  return rc == SQLITE_OK || fail (w, error);
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
  return rc == SQLITE_DONE || fail (w, error);
}

static gint64
col_int (sqlite3_stmt *q, int col, gint64 fallback)
{
  return sqlite3_column_type (q, col) == SQLITE_INTEGER ? sqlite3_column_int64 (q, col) : fallback;
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
obj_table_load (ObjTable *t, Writer *w, GError **error)
{
  g_autofree char *sql = g_strdup_printf (
    "SELECT pid, %d, id, free_ts, NULL FROM allocations"
    " UNION ALL SELECT pid, %d, id, free_ts, NULL FROM contexts"
    " UNION ALL SELECT pid, %d, id, free_ts, NULL FROM storages"
    " UNION ALL SELECT pid, %d, id, free_ts, name FROM tensors",
    COWSCOPE_OBJECT_ALLOCATION, COWSCOPE_OBJECT_CONTEXT, COWSCOPE_OBJECT_STORAGE,
    COWSCOPE_OBJECT_TENSOR);
  sqlite3_stmt *q = NULL;
  if (!prepare (w, sql, &q, error))
    return FALSE;
  t->infos = g_array_new (FALSE, FALSE, sizeof (ObjInfo));
  t->names = g_string_new (NULL);
  int rc;
  while ((rc = sqlite3_step (q)) == SQLITE_ROW)
    {
      ObjInfo info = {
        .pid = (guint32) sqlite3_column_int64 (q, 0),
        .id = (guint64) sqlite3_column_int64 (q, 2),
        .free_ts = col_int (q, 3, -1),
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
    return fail (w, error);
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

/* ---- timeline lanes ------------------------------------------------------- */

struct Lane {
  guint32 pid;
  gint64 tid, device; /* device -1: a thread lane */
  gint64 lane_id;
  GArray *pending;    /* CowscopeInstant, up to a chunk */
  guint64 n_instants;
  gint64 n_chunks;
  GArray *spans;      /* CowscopeSpan */
};

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
      l->pending = g_array_sized_new (FALSE, FALSE, sizeof (CowscopeInstant), 1024);
      l->spans = g_array_new (FALSE, FALSE, sizeof (CowscopeSpan));
      g_hash_table_add (w->lanes, l);
    }
  return l;
}

/* Writes a lane's pending instants as one chunk. */
static gboolean
lane_flush (Writer *w, Lane *l, GError **error)
{
  if (l->pending->len == 0)
    return TRUE;
  g_byte_array_set_size (w->buf, 0);
  CowscopeInstant prev = { 0 };
  const CowscopeInstant *in = (const CowscopeInstant *) (gpointer) l->pending->data;
  for (guint i = 0; i < l->pending->len; i++)
    {
      cowscope_instant_write (w->buf, &prev, &in[i], l->device >= 0);
      prev = in[i];
    }
  sqlite3_stmt *s = w->ins_chunk;
  sqlite3_bind_int64 (s, 1, l->lane_id);
  sqlite3_bind_int64 (s, 2, l->n_chunks++);
  sqlite3_bind_int64 (s, 3, in[0].ts);
  sqlite3_bind_int64 (s, 4, in[l->pending->len - 1].ts);
  sqlite3_bind_int64 (s, 5, l->pending->len);
  bind_bytes (s, 6, w->buf);
  l->n_instants += l->pending->len;
  g_array_set_size (l->pending, 0);
  return step_done (w, s, error);
}

static gboolean
lane_append (Writer *w, Lane *l, const CowscopeInstant *in, GError **error)
{
  g_array_append_val (l->pending, *in);
  if (l->pending->len >= timeline_chunk)
    return lane_flush (w, l, error);
  return TRUE;
}

static int
compare_spans (const void *a, const void *b)
{
  const CowscopeSpan *x = a, *y = b;
  if (x->start != y->start)
    return x->start < y->start ? -1 : 1;
  return (x->id > y->id) - (x->id < y->id);
}

/* Sorts a lane's spans and writes them in chunks. */
static gboolean
lane_write_spans (Writer *w, Lane *l, GError **error)
{
  g_array_sort (l->spans, compare_spans);
  const CowscopeSpan *spans = (const CowscopeSpan *) (gpointer) l->spans->data;
  for (guint first = 0, chunk = 0; first < l->spans->len; first += timeline_chunk, chunk++)
    {
      guint last = MIN (first + timeline_chunk, l->spans->len);
      g_byte_array_set_size (w->buf, 0);
      CowscopeSpan prev = { 0 };
      for (guint i = first; i < last; i++)
        {
          cowscope_span_write (w->buf, &prev, &spans[i]);
          prev = spans[i];
        }
      sqlite3_stmt *q = w->ins_span;
      sqlite3_bind_int64 (q, 1, l->lane_id);
      sqlite3_bind_int64 (q, 2, chunk);
      sqlite3_bind_int64 (q, 3, spans[first].start);
      sqlite3_bind_int64 (q, 4, spans[last - 1].start);
      sqlite3_bind_int64 (q, 5, last - first);
      bind_bytes (q, 6, w->buf);
      if (!step_done (w, q, error))
        return FALSE;
    }
  return TRUE;
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

/* ---- counter tracks --------------------------------------------------------- */

typedef struct {
  CowscopeCounterRules rules;
  CowscopeCounterBins *bins[COWSCOPE_N_COUNTERS];
} Counters;

static void
counters_apply (Counters *c, guint32 pid, gint64 ts, gint64 type, const gint64 v[5])
{
  guint changed = cowscope_counter_rules_apply (&c->rules, pid, type, v);
  for (guint k = 0; changed != 0; k++, changed >>= 1)
    if (changed & 1)
      cowscope_counter_bins_set (c->bins[k], ts, c->rules.value[k]);
}

static gboolean
counters_write (Writer *w, Counters *c, gint64 start, gint64 end, GError **error)
{
  for (guint k = 0; k < COWSCOPE_N_COUNTERS; k++)
    {
      cowscope_counter_bins_finish (c->bins[k]);
      /* A track no event moved is left out: 1.5 MB of zeros, most of
       * an empty session. */
      if (cowscope_counter_bins_is_zero (c->bins[k]))
        continue;
      g_byte_array_set_size (w->buf, 0);
      cowscope_counter_bins_write (c->bins[k], w->buf);
      sqlite3_stmt *q = w->ins_counter;
      sqlite3_bind_int64 (q, 1, k);
      sqlite3_bind_int64 (q, 2, start);
      sqlite3_bind_int64 (q, 3, end);
      sqlite3_bind_int64 (q, 4, c->bins[k]->n_bins);
      bind_bytes (q, 5, w->buf);
      if (!step_done (w, q, error))
        return FALSE;
    }
  return TRUE;
}

/* ---- checkpoints -------------------------------------------------------------- */

/* The graph-relevant events after one checkpoint (0: the start). */
typedef struct {
  gint64 cp_id;
  gint64 first_seq;
  gint64 n;
  CowscopeReplayEvent prev;
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
  memset (&seg->prev, 0, sizeof seg->prev);
  return ok;
}

static void
segment_add (Segment *seg, const ObjTable *objs, const CowscopeReplayEvent *ev)
{
  gint64 free_ts = -1;
  const char *name = NULL;
  int kind = cowscope_event_creates (ev->type);
  if (kind >= 0)
    obj_table_find (objs, (guint32) ev->pid, (guint) kind, (guint64) ev->v[0], &free_ts, &name);
  cowscope_replay_write (seg->events, &seg->prev, ev, free_ts, name);
  seg->n++;
}

/* The checkpoint row, its live objects' ids and its packed state. */
static gboolean
write_checkpoint (Writer *w, const CowscopeGraphState *live, gint64 id, gint64 seq, gint64 ts,
                  GError **error)
{
  sqlite3_bind_int64 (w->ins_cp, 1, id);
  sqlite3_bind_int64 (w->ins_cp, 2, seq);
  sqlite3_bind_int64 (w->ins_cp, 3, ts);
  if (!step_done (w, w->ins_cp, error))
    return FALSE;
  g_byte_array_set_size (w->buf, 0);
  guint n = cowscope_graph_state_get_n_live (live);
  g_autofree guint32 *order = cowscope_graph_state_sort (live);
  CowscopeObjectKey prev = { 0 };
  for (guint i = 0; i < n; i++)
    {
      const CowscopeLiveObject *o = cowscope_graph_state_get_slot (live, order[i]);
      gint64 name_id;
      cowscope_object_write (w->buf, &prev, o, ts,
                             cowscope_graph_state_get_slot_name (live, order[i], &name_id));
      sqlite3_bind_int64 (w->ins_cpo, 1, id);
      sqlite3_bind_int64 (w->ins_cpo, 2, o->pid);
      sqlite3_bind_text (w->ins_cpo, 3, cowscope_object_kind_name (o->kind), -1, SQLITE_STATIC);
      sqlite3_bind_int64 (w->ins_cpo, 4, (gint64) o->id);
      if (!step_done (w, w->ins_cpo, error))
        return FALSE;
    }
  sqlite3_bind_int64 (w->ins_state, 1, id);
  sqlite3_bind_int64 (w->ins_state, 2, n);
  bind_bytes (w->ins_state, 3, w->buf);
  return step_done (w, w->ins_state, error);
}

/* Applies one event to the live state; a created object gets its free
 * time and name from the derived tables. */
static void
live_apply (CowscopeGraphState *live, const ObjTable *objs, const CowscopeReplayEvent *ev)
{
  CowscopeLiveObject *born =
    cowscope_graph_state_apply (live, ev->type, ev->aux, (guint32) ev->pid, ev->v);
  if (born == NULL)
    return;
  const char *name;
  obj_table_find (objs, born->pid, born->kind, born->id, &born->free_ts, &name);
  if (name != NULL)
    cowscope_graph_state_set_name (live, born, name, -1);
}

/* ---- the pass ------------------------------------------------------------------ */

/* One pass over `events` in seq order: instants of the thread lanes,
 * counters, and the checkpoints with the replays between them. */
static gboolean
scan_events (Writer *w, const ObjTable *objs, Counters *counters, gint64 interval,
             GError **error)
{
  sqlite3_stmt *scan = NULL;
  gboolean ok = FALSE;
  g_autoptr (CowscopeGraphState) live = cowscope_graph_state_new ();
  Segment seg = { .cp_id = 0, .first_seq = 1, .events = g_byte_array_new () };
  gint64 since = 0, next_cp = 1, seq = 0;
  Lane *last = NULL;
  gboolean first = TRUE;
  int rc;

  if (!prepare (w, "SELECT seq, ts, pid, tid, type, aux, v0, v1, v2, v3, v4 FROM events"
                   " ORDER BY seq", &scan, error))
    goto out;
  while ((rc = sqlite3_step (scan)) == SQLITE_ROW)
    {
      CowscopeReplayEvent ev = {
        .seq = sqlite3_column_int64 (scan, 0),
        .ts = sqlite3_column_int64 (scan, 1),
        .pid = (guint32) sqlite3_column_int64 (scan, 2),
        .type = sqlite3_column_int64 (scan, 4),
        .aux = sqlite3_column_int64 (scan, 5),
      };
      gint64 tid = sqlite3_column_int64 (scan, 3);
      for (int k = 0; k < 5; k++)
        ev.v[k] = sqlite3_column_int64 (scan, 6 + k); /* NULL reads as 0 */
      seq = ev.seq;
      if (first)
        {
          seg.first_seq = seq;
          first = FALSE;
        }

      if (last == NULL || last->pid != ev.pid || last->tid != tid)
        last = lane_for (w, (guint32) ev.pid, tid, -1);
      CowscopeInstant in = { ev.ts, seq, cowscope_timeline_event_bytes (ev.type, ev.v),
                             (guint8) CLAMP (ev.type, 0, 255), (guint8) (ev.aux & 0xff) };
      if (!lane_append (w, last, &in, error))
        goto out;
      counters_apply (counters, (guint32) ev.pid, ev.ts, ev.type, ev.v);

      live_apply (live, objs, &ev);
      if (cowscope_event_changes_graph (ev.type))
        segment_add (&seg, objs, &ev);
      if ((seq & 0xfff) == 0)
        cowscope_graph_state_compact (live);
      if (++since >= MAX (interval, (gint64) cowscope_graph_state_get_n_live (live)))
        {
          if (!segment_flush (w, &seg, seq, error)
              || !write_checkpoint (w, live, next_cp, seq, ev.ts, error))
            goto out;
          seg.cp_id = next_cp++;
          seg.first_seq = seq + 1;
          since = 0;
        }
    }
  if (rc != SQLITE_DONE)
    {
      fail (w, error);
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
      CowscopeSpan s = { begin, col_int (q, 4, begin), sqlite3_column_int64 (q, 0),
                         (guint64) col_int (q, 6, 0),
                         (guint8) CLAMP (col_int (q, 5, 0), 0, COWSCOPE_SPAN_RANGE - 1), FALSE };
      g_array_append_val (l->spans, s);
    }
  sqlite3_finalize (q);
  if (rc != SQLITE_DONE)
    return fail (w, error);

  if (!prepare (w, "SELECT id, pid, tid, begin_ts, end_ts FROM ranges WHERE begin_ts IS NOT NULL",
                &q, error))
    return FALSE;
  while ((rc = sqlite3_step (q)) == SQLITE_ROW)
    {
      Lane *l = lane_for (w, (guint32) col_int (q, 1, 0), col_int (q, 2, 0), -1);
      gint64 begin = sqlite3_column_int64 (q, 3);
      gboolean open = sqlite3_column_type (q, 4) != SQLITE_INTEGER;
      CowscopeSpan s = { begin, open ? begin : sqlite3_column_int64 (q, 4),
                         sqlite3_column_int64 (q, 0), 0, COWSCOPE_SPAN_RANGE, open };
      g_array_append_val (l->spans, s);
    }
  sqlite3_finalize (q);
  if (rc != SQLITE_DONE)
    return fail (w, error);

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
      guint8 code = (guint8) CLAMP (col_int (q, 7, 0), 0, COWSCOPE_SPAN_RANGE - 1);
      CowscopeInstant in = { start, id, bytes, code, 0 };
      if (!lane_append (w, last, &in, error))
        {
          sqlite3_finalize (q);
          return FALSE;
        }
      CowscopeSpan s = { start, col_int (q, 5, start), id, bytes, code, FALSE };
      g_array_append_val (last->spans, s);
    }
  sqlite3_finalize (q);
  return rc == SQLITE_DONE || fail (w, error);
}

gboolean
cowscope_format_index_write (sqlite3 *db, const char *path, gint64 checkpoint_interval,
                             GError **error)
{
  g_return_val_if_fail (db != NULL, FALSE);
  Writer w = { .db = db, .path = path, .next_lane = 1 };
  ObjTable objs = { 0 };
  Counters counters = { 0 };
  gboolean ok = FALSE;
  gint64 start, end;
  g_autofree char *meta = g_strdup_printf (
    "INSERT OR REPLACE INTO meta (key, value) VALUES ('index_format', %d)",
    COWSCOPE_FORMAT_INDEX_VERSION);

  w.lanes = g_hash_table_new_full (lane_hash, lane_equal, lane_free, NULL);
  w.buf = g_byte_array_new ();
  cowscope_counter_rules_init (&counters.rules);

  int rc = sqlite3_exec (db, clear_sql, NULL, NULL, NULL);
  if (rc != SQLITE_OK)
    {
      fail (&w, error);
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
      || !prepare (&w, "INSERT INTO checkpoint_replays VALUES (?, ?, ?, ?, ?)", &w.ins_replay, error)
      /* The counter tracks cover exactly what the application shows. */
      || !cowscope_format_query_bounds (db, path, &start, &end, error))
    goto out;
  for (guint k = 0; k < COWSCOPE_N_COUNTERS; k++)
    counters.bins[k] = cowscope_counter_bins_new (start, end, COWSCOPE_COUNTER_BINS);

  ok = obj_table_load (&objs, &w, error)
       && scan_events (&w, &objs, &counters, MAX (checkpoint_interval, 1), error)
       && scan_spans (&w, error)
       && write_lanes (&w, error)
       && counters_write (&w, &counters, start, end, error);
  if (ok && (rc = sqlite3_exec (db, meta, NULL, NULL, NULL)) != SQLITE_OK)
    ok = fail (&w, error);

out:
  {
    sqlite3_stmt *all[] = { w.ins_chunk, w.ins_span, w.ins_lane, w.ins_counter, w.ins_cp,
                            w.ins_cpo, w.ins_state, w.ins_replay };
    for (guint i = 0; i < G_N_ELEMENTS (all); i++)
      sqlite3_finalize (all[i]);
  }
  obj_table_clear (&objs);
  for (guint k = 0; k < COWSCOPE_N_COUNTERS; k++)
    cowscope_counter_bins_free (counters.bins[k]);
  cowscope_counter_rules_clear (&counters.rules);
  g_hash_table_unref (w.lanes);
  g_byte_array_unref (w.buf);
  return ok;
}
