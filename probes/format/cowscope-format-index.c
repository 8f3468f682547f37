/* cowscope-format-index.c — packed timeline lanes, counter tracks and
 * graph checkpoints (see header). */
#include "cowscope-format-index.h"

#include <stdlib.h>
#include <string.h>

#include "cow-trace.h"
#include "cowscope-event-store.h"
#include "cowscope-format-counters.h"
#include "cowscope-format-error.h"
#include "cowscope-format-open.h"
#include "cowscope-format-schema.h"
#include "cowscope-format-timeline.h"
#include "cowscope-format-vocabulary.h"
#include "cowscope-graph-state.h"

static const char clear_sql[] =
  "DELETE FROM timeline_lanes; DELETE FROM timeline_chunks; DELETE FROM timeline_spans;"
  "DELETE FROM timeline_counters; DELETE FROM checkpoint_states;"
  "DELETE FROM checkpoint_replays; DELETE FROM checkpoint_objects; DELETE FROM checkpoints;";

/* Instants (spans) per chunk: COWSCOPE_TIMELINE_CHUNK but in tests. */
static guint timeline_chunk = COWSCOPE_TIMELINE_CHUNK;

/* Instants the lanes may hold before the biggest is written as a
 * shorter chunk: a recording of many busy threads keeps its memory. */
#define PENDING_INSTANTS_MAX (1 << 20)

/* A counter track ends with at most this many bins per bin a value fell
 * into (and at least COUNTER_MIN_BINS): a short session gets a small
 * track, a long one up to COWSCOPE_COUNTER_BINS. */
#define COUNTER_BINS_PER_CHANGE 16
#define COUNTER_MIN_BINS 256

void
cowscope_format_index_set_chunk_for_tests (guint instants)
{
  timeline_chunk = instants > 0 ? instants : COWSCOPE_TIMELINE_CHUNK;
}

typedef struct Lane Lane;

typedef struct {
  sqlite3 *db;
  const char *path;
  sqlite3_stmt *ins_chunk, *ins_span, *ins_lane, *ins_counter;
  sqlite3_stmt *ins_cp, *ins_cpo, *ins_state, *ins_replay;
  GByteArray *buf;
} Writer;

struct _CowscopeIndexWriter {
  Writer w;
  char *path;
  GHashTable *lanes;  /* Lane set */
  gint64 next_lane;
  Lane *last;         /* the lane of the last event */
  guint64 pending;    /* instants held by all lanes */
  CowscopeCounterRules rules;
  CowscopeCounterBins *bins[COWSCOPE_N_COUNTERS];
  gboolean any_event;
};

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
lane_for (CowscopeIndexWriter *x, guint32 pid, gint64 tid, gint64 device)
{
  Lane key = { .pid = pid, .tid = tid, .device = device };
  Lane *l = g_hash_table_lookup (x->lanes, &key);
  if (l == NULL)
    {
      l = g_new0 (Lane, 1);
      *l = key;
      l->lane_id = x->next_lane++;
      l->pending = g_array_new (FALSE, FALSE, sizeof (CowscopeInstant));
      l->spans = g_array_new (FALSE, FALSE, sizeof (CowscopeSpan));
      g_hash_table_add (x->lanes, l);
    }
  return l;
}

/* Writes a lane's pending instants as one chunk. */
static gboolean
lane_flush (CowscopeIndexWriter *x, Lane *l, GError **error)
{
  Writer *w = &x->w;
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
  x->pending -= l->pending->len;
  g_array_set_size (l->pending, 0);
  /* A lane that filled a chunk will fill more: keep its room. */
  return step_done (w, s, error);
}

/* Writes the lane holding the most instants as a (shorter) chunk. */
static gboolean
flush_biggest (CowscopeIndexWriter *x, GError **error)
{
  Lane *biggest = NULL;
  GHashTableIter it;
  gpointer key;
  g_hash_table_iter_init (&it, x->lanes);
  while (g_hash_table_iter_next (&it, &key, NULL))
    if (biggest == NULL || ((Lane *) key)->pending->len > biggest->pending->len)
      biggest = key;
  return biggest == NULL || lane_flush (x, biggest, error);
}

static gboolean
lane_append (CowscopeIndexWriter *x, Lane *l, const CowscopeInstant *in, GError **error)
{
  g_array_append_val (l->pending, *in);
  x->pending++;
  if (l->pending->len >= timeline_chunk)
    return lane_flush (x, l, error);
  if (x->pending > PENDING_INSTANTS_MAX)
    return flush_biggest (x, error);
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
write_lanes (CowscopeIndexWriter *x, GError **error)
{
  Writer *w = &x->w;
  GHashTableIter it;
  gpointer key;
  g_hash_table_iter_init (&it, x->lanes);
  while (g_hash_table_iter_next (&it, &key, NULL))
    {
      Lane *l = key;
      if (!lane_flush (x, l, error) || !lane_write_spans (w, l, error))
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

/* ---- counter tracks ---------------------------------------------------------
 * Grown as the events come (cowscope_counter_bins_new_growing()): the end
 * of a recording is not known while it runs. */

static void
counters_apply (CowscopeIndexWriter *x, guint32 pid, gint64 ts, gint64 type, const gint64 v[5])
{
  guint changed = cowscope_counter_rules_apply (&x->rules, pid, type, v);
  for (guint k = 0; changed != 0; k++, changed >>= 1)
    if (changed & 1)
      {
        if (x->bins[k] == NULL)
          x->bins[k] = cowscope_counter_bins_new_growing (ts);
        cowscope_counter_bins_set (x->bins[k], ts, x->rules.value[k]);
      }
}

static gboolean
counters_write (CowscopeIndexWriter *x, gint64 start, GError **error)
{
  Writer *w = &x->w;
  for (guint k = 0; k < COWSCOPE_N_COUNTERS; k++)
    {
      /* A counter no event moved: one bin of 0 over the session. */
      if (x->bins[k] == NULL)
        x->bins[k] = cowscope_counter_bins_new_growing (start);
      CowscopeCounterBins *bins = x->bins[k];
      guint touched = cowscope_counter_bins_count_touched (bins);
      cowscope_counter_bins_trim (bins, MAX (COUNTER_MIN_BINS, COUNTER_BINS_PER_CHANGE * touched));
      cowscope_counter_bins_finish (bins);
      g_byte_array_set_size (w->buf, 0);
      cowscope_counter_bins_write (bins, w->buf);
      sqlite3_stmt *q = w->ins_counter;
      sqlite3_bind_int64 (q, 1, k);
      sqlite3_bind_int64 (q, 2, bins->start);
      sqlite3_bind_int64 (q, 3, cowscope_counter_bins_end (bins));
      sqlite3_bind_int64 (q, 4, bins->n_bins);
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

/* ---- reading the events back ---------------------------------------------------- */

/* The events in seq order, from event_chunks or through `events`. */
typedef struct {
  sqlite3_stmt *stmt;            /* through `events`, or NULL */
  CowscopeEventCatalog *catalog; /* from event_chunks */
  guint chunk;
  CowscopeEventBlock *block;
  guint row;
} EventSource;

static gboolean
source_open (EventSource *src, Writer *w, gboolean from_chunks, GError **error)
{
  memset (src, 0, sizeof *src);
  if (!from_chunks)
    return prepare (w, "SELECT seq, ts, pid, tid, type, op, aux, v0, v1, v2, v3, v4, stack_id"
                       " FROM events ORDER BY seq", &src->stmt, error);
  src->catalog = cowscope_event_catalog_new (w->db);
  return cowscope_event_catalog_refresh (src->catalog) == SQLITE_OK || fail (w, error);
}

static void
source_close (EventSource *src)
{
  sqlite3_finalize (src->stmt);
  cowscope_event_block_unref (src->block);
  cowscope_event_catalog_free (src->catalog);
}

/* The next event into @row: TRUE, or FALSE at the end (@error unset) or
 * on failure. */
static gboolean
source_next (EventSource *src, Writer *w, CowscopeEventRow *row, GError **error)
{
  if (src->stmt != NULL)
    {
      int rc = sqlite3_step (src->stmt);
      if (rc == SQLITE_DONE)
        return FALSE;
      if (rc != SQLITE_ROW)
        return fail (w, error);
      row->nulls = 0;
      for (int c = 0; c < COWSCOPE_EVENT_N_COLS; c++)
        row->col[c] = sqlite3_column_int64 (src->stmt, c); /* NULL reads as 0 */
      return TRUE;
    }
  while (src->block == NULL || src->row >= src->block->n)
    {
      g_clear_pointer (&src->block, cowscope_event_block_unref);
      if (src->chunk >= cowscope_event_catalog_get_n_chunks (src->catalog))
        return FALSE;
      int rc;
      const char *what;
      CowscopeEventBlock *b = cowscope_event_catalog_read (src->catalog, src->chunk++, &rc, &what);
      if (b == NULL)
        {
          if (what != NULL)
            g_set_error (error, COWSCOPE_SESSION_ERROR, COWSCOPE_SESSION_ERROR_DAMAGED,
                         "%s is damaged: %s", w->path, what);
          else
            fail (w, error);
          return FALSE;
        }
      src->block = cowscope_event_block_ref (b);
      src->row = 0;
    }
  cowscope_event_block_get (src->block, src->row++, row);
  return TRUE;
}

/* ---- the checkpoint pass ------------------------------------------------------------ */

/* One pass over the events in seq order: the checkpoints with the
 * replays between them. */
static gboolean
scan_checkpoints (Writer *w, const ObjTable *objs, gint64 interval, gboolean from_chunks,
                  GError **error)
{
  EventSource src;
  gboolean ok = FALSE;
  g_autoptr (CowscopeGraphState) live = cowscope_graph_state_new ();
  Segment seg = { .cp_id = 0, .first_seq = 1, .events = g_byte_array_new () };
  gint64 since = 0, next_cp = 1, seq = 0;
  gboolean first = TRUE;
  CowscopeEventRow row;

  if (!source_open (&src, w, from_chunks, error))
    goto out;
  while (source_next (&src, w, &row, error))
    {
      CowscopeReplayEvent ev = {
        .seq = row.col[COWSCOPE_EVENT_COL_SEQ],
        .ts = row.col[COWSCOPE_EVENT_COL_TS],
        .pid = (guint32) row.col[COWSCOPE_EVENT_COL_PID],
        .type = row.col[COWSCOPE_EVENT_COL_TYPE],
        .aux = row.col[COWSCOPE_EVENT_COL_AUX],
      };
      for (int k = 0; k < 5; k++)
        ev.v[k] = row.col[COWSCOPE_EVENT_COL_V0 + k]; /* NULL reads as 0 */
      seq = ev.seq;
      if (first)
        {
          seg.first_seq = seq;
          first = FALSE;
        }
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
  if (error != NULL && *error != NULL)
    goto out;
  ok = segment_flush (w, &seg, seq, error);
out:
  source_close (&src);
  g_byte_array_unref (seg.events);
  return ok;
}

/* ---- spans and CUDA lanes ------------------------------------------------------------ */

/* Materializations and user ranges on thread lanes, from their tables. */
static gboolean
scan_thread_spans (CowscopeIndexWriter *x, GError **error)
{
  Writer *w = &x->w;
  sqlite3_stmt *q = NULL;
  int rc;
  if (!prepare (w, "SELECT seq, pid, tid, begin_ts, end_ts, kind, nbytes FROM materializations"
                   " WHERE begin_ts IS NOT NULL", &q, error))
    return FALSE;
  while ((rc = sqlite3_step (q)) == SQLITE_ROW)
    {
      gint64 begin = sqlite3_column_int64 (q, 3);
      CowscopeSpan s = { begin, col_int (q, 4, begin), sqlite3_column_int64 (q, 0),
                         (guint64) col_int (q, 6, 0),
                         (guint8) CLAMP (col_int (q, 5, 0), 0, COWSCOPE_SPAN_RANGE - 1), FALSE };
      cowscope_index_writer_span (x, (guint32) col_int (q, 1, 0), col_int (q, 2, 0), &s);
    }
  sqlite3_finalize (q);
  if (rc != SQLITE_DONE)
    return fail (w, error);

  if (!prepare (w, "SELECT id, pid, tid, begin_ts, end_ts FROM ranges WHERE begin_ts IS NOT NULL",
                &q, error))
    return FALSE;
  while ((rc = sqlite3_step (q)) == SQLITE_ROW)
    {
      gint64 begin = sqlite3_column_int64 (q, 3);
      gboolean open = sqlite3_column_type (q, 4) != SQLITE_INTEGER;
      CowscopeSpan s = { begin, open ? begin : sqlite3_column_int64 (q, 4),
                         sqlite3_column_int64 (q, 0), 0, COWSCOPE_SPAN_RANGE, open };
      cowscope_index_writer_span (x, (guint32) col_int (q, 1, 0), col_int (q, 2, 0), &s);
    }
  sqlite3_finalize (q);
  return rc == SQLITE_DONE || fail (w, error);
}

/* CUDA records: one lane per (process, device, stream). */
static gboolean
scan_cuda (CowscopeIndexWriter *x, GError **error)
{
  Writer *w = &x->w;
  sqlite3_stmt *q = NULL;
  int rc;
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
        last = lane_for (x, pid, stream, device);
      gint64 start = sqlite3_column_int64 (q, 4), id = sqlite3_column_int64 (q, 0);
      guint64 bytes = (guint64) col_int (q, 6, 0);
      guint8 code = (guint8) CLAMP (col_int (q, 7, 0), 0, COWSCOPE_SPAN_RANGE - 1);
      CowscopeInstant in = { start, id, bytes, code, 0 };
      if (!lane_append (x, last, &in, error))
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

/* ---- the writer ------------------------------------------------------------------------ */

CowscopeIndexWriter *
cowscope_index_writer_new (sqlite3 *db, const char *path, GError **error)
{
  CowscopeIndexWriter *x = g_new0 (CowscopeIndexWriter, 1);
  x->path = g_strdup (path);
  Writer *w = &x->w;
  w->db = db;
  w->path = x->path;
  w->buf = g_byte_array_new ();
  x->next_lane = 1;
  x->lanes = g_hash_table_new_full (lane_hash, lane_equal, lane_free, NULL);
  cowscope_counter_rules_init (&x->rules);
  if (sqlite3_exec (db, clear_sql, NULL, NULL, NULL) != SQLITE_OK
      || !prepare (w, "INSERT INTO timeline_chunks VALUES (?, ?, ?, ?, ?, ?)", &w->ins_chunk, error)
      || !prepare (w, "INSERT INTO timeline_spans VALUES (?, ?, ?, ?, ?, ?)", &w->ins_span, error)
      || !prepare (w, "INSERT INTO timeline_lanes VALUES (?, ?, ?, ?, ?, ?)", &w->ins_lane, error)
      || !prepare (w, "INSERT INTO timeline_counters VALUES (?, ?, ?, ?, ?)", &w->ins_counter,
                   error)
      || !prepare (w, "INSERT INTO checkpoints (id, seq, ts) VALUES (?, ?, ?)", &w->ins_cp, error)
      || !prepare (w, "INSERT OR IGNORE INTO checkpoint_objects (checkpoint_id, pid, kind, id)"
                      " VALUES (?, ?, ?, ?)", &w->ins_cpo, error)
      || !prepare (w, "INSERT INTO checkpoint_states VALUES (?, ?, ?)", &w->ins_state, error)
      || !prepare (w, "INSERT INTO checkpoint_replays VALUES (?, ?, ?, ?, ?)", &w->ins_replay,
                   error))
    {
      if (error != NULL && *error == NULL)
        fail (w, error);
      cowscope_index_writer_free (x);
      return NULL;
    }
  return x;
}

void
cowscope_index_writer_free (CowscopeIndexWriter *x)
{
  if (x == NULL)
    return;
  Writer *w = &x->w;
  sqlite3_stmt *all[] = { w->ins_chunk, w->ins_span, w->ins_lane, w->ins_counter, w->ins_cp,
                          w->ins_cpo, w->ins_state, w->ins_replay };
  for (guint i = 0; i < G_N_ELEMENTS (all); i++)
    sqlite3_finalize (all[i]);
  for (guint k = 0; k < COWSCOPE_N_COUNTERS; k++)
    cowscope_counter_bins_free (x->bins[k]);
  cowscope_counter_rules_clear (&x->rules);
  g_hash_table_unref (x->lanes);
  g_byte_array_unref (w->buf);
  g_free (x->path);
  g_free (x);
}

gboolean
cowscope_index_writer_event (CowscopeIndexWriter *x, const CowscopeEventRow *ev, GError **error)
{
  guint32 pid = (guint32) ev->col[COWSCOPE_EVENT_COL_PID];
  gint64 tid = ev->col[COWSCOPE_EVENT_COL_TID], ts = ev->col[COWSCOPE_EVENT_COL_TS];
  gint64 type = ev->col[COWSCOPE_EVENT_COL_TYPE], aux = ev->col[COWSCOPE_EVENT_COL_AUX];
  const gint64 *v = &ev->col[COWSCOPE_EVENT_COL_V0];
  x->any_event = TRUE;
  if (x->last == NULL || x->last->pid != pid || x->last->tid != tid)
    x->last = lane_for (x, pid, tid, -1);
  CowscopeInstant in = { ts, ev->col[COWSCOPE_EVENT_COL_SEQ], cowscope_timeline_event_bytes (type, v),
                         (guint8) CLAMP (type, 0, 255), (guint8) (aux & 0xff) };
  if (!lane_append (x, x->last, &in, error))
    return FALSE;
  counters_apply (x, pid, ts, type, v);
  return TRUE;
}

void
cowscope_index_writer_span (CowscopeIndexWriter *x, guint32 pid, gint64 tid,
                            const CowscopeSpan *span)
{
  Lane *l = lane_for (x, pid, tid, -1);
  g_array_append_val (l->spans, *span);
}

gboolean
cowscope_index_writer_finish (CowscopeIndexWriter *x, gint64 checkpoint_interval,
                              CowscopeIndexFlags flags, GError **error)
{
  Writer *w = &x->w;
  ObjTable objs = { 0 };
  gint64 start, end;
  g_autofree char *meta = g_strdup_printf (
    "INSERT OR REPLACE INTO meta (key, value) VALUES ('index_format', %d)",
    COWSCOPE_FORMAT_INDEX_VERSION);
  gboolean ok = cowscope_format_query_bounds (w->db, w->path, &start, &end, error)
                && ((flags & COWSCOPE_INDEX_SPANS_FROM_TABLES) == 0
                    || scan_thread_spans (x, error))
                && scan_cuda (x, error)
                && write_lanes (x, error)
                && counters_write (x, start, error)
                && obj_table_load (&objs, w, error)
                && scan_checkpoints (w, &objs, MAX (checkpoint_interval, 1),
                                     (flags & COWSCOPE_INDEX_EVENTS_IN_CHUNKS) != 0, error);
  obj_table_clear (&objs);
  if (ok && sqlite3_exec (w->db, meta, NULL, NULL, NULL) != SQLITE_OK)
    ok = fail (w, error);
  (void) end;
  return ok;
}

gboolean
cowscope_format_index_write (sqlite3 *db, const char *path, gint64 checkpoint_interval,
                             GError **error)
{
  g_return_val_if_fail (db != NULL, FALSE);
  g_autoptr (CowscopeIndexWriter) x = cowscope_index_writer_new (db, path, error);
  if (x == NULL)
    return FALSE;
  EventSource src;
  CowscopeEventRow row;
  if (!source_open (&src, &x->w, FALSE, error))
    return FALSE;
  gboolean ok = TRUE;
  while (ok && source_next (&src, &x->w, &row, error))
    ok = cowscope_index_writer_event (x, &row, error);
  source_close (&src);
  if (!ok || (error != NULL && *error != NULL))
    return FALSE;
  return cowscope_index_writer_finish (x, checkpoint_interval, COWSCOPE_INDEX_SPANS_FROM_TABLES,
                                       error);
}
