/* cowscope-live-session.c — following a session while it records (see
 * the header).
 *
 * The reader thread owns everything under `Reader` except the fields
 * marked as shared; the main thread owns the GObject.  They meet in one
 * mutex-protected slot holding the newest unpublished snapshot, which a
 * single idle source per snapshot moves into the object.
 *
 * Events become lane items, counter values and graph state by the session
 * format's rules (cowscope-format-timeline.h, cowscope-format-counters.h,
 * cowscope-graph-state.h), which the finalizer and the graph builder
 * apply too; here they are applied incrementally.
 */
#include "cowscope-live-session.h"

#include <glib/gi18n-lib.h>
#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "cowscope-format-counters.h"
#include "cowscope-format-open.h"
#include "cowscope-format-timeline.h"
#include "cowscope-format-vocabulary.h"
#include "cowscope-graph-state.h"
#include "cowscope-lane-index.h"
#include "cowscope-session-document-private.h"
#include "cowscope-sharing-graph-private.h"
#include "cowscope-timeline-lane-private.h"

/* Rows read per query, and the time one poll may spend reading. */
#define BATCH_ROWS 20000
#define POLL_BUDGET_US (150 * 1000)
#define POLL_MS 100
#define COUNTER_BINS 4096
/* How long the last read before finalizing may take: the recorder waits
 * for it, so a reader far behind shows what it caught up with. */
#define FINAL_READ_BUDGET_US (500 * 1000)

/* ---- the running state (reader thread) --------------------------------- */

typedef struct {
  gint64 ts;
  gint64 id;
  float bytes;
  guint8 kind;
} Instant;

typedef struct {
  gint64 start, end, id;
  guint64 bytes;
  guint8 kind;
} Span;

typedef struct {
  guint32 pid;
  gint64 tid;
  GArray *instants;        /* Instant, in time order once `sorted` */
  gboolean sorted;
  GArray *spans;           /* Span, closed */
  GHashTable *open_ranges; /* range id -> Span* (no end yet) */
  GHashTable *open_copies; /* storage id -> Span* (materialize begin) */
  char *name;
} Lane;

typedef struct {
  gint64 ts;
  double value;
  guint8 counter;
} CounterPoint;

typedef struct {
  gint refs;               /* atomic */
  char *path;
  GMainContext *context;
  GWeakRef owner;          /* the CowscopeLiveSession */
  guint interval_ms;

  GMutex lock;             /* protects stop, final, pending, pending_graph, totals */
  GCond cond;
  gboolean stop;
  gboolean final;          /* stopped by finish: its last snapshot is still delivered */
  CowscopeSessionDocument *pending;
  CowscopeSharingGraph *pending_graph;
  CowscopeLiveTotals totals;

  /* Reader thread only. */
  sqlite3 *db;
  gint64 last_seq;
  gboolean finalized;      /* seen meta.finalized = 1: seq is no longer read order */
  GHashTable *lanes;       /* (pid << 32 | tid) -> Lane* */
  CowscopeGraphState *graph; /* the live objects */
  GHashTable *strings;     /* (pid << 40 ^ id) -> name */
  CowscopeCounterRules counters;
  GArray *points;          /* CounterPoint */
  gint64 start_ns, end_ns;
  guint64 n_events;
  CowscopeLiveTotals running;
  gboolean changed;
  gint64 last_publish_us;
  gint64 publish_cost_us;
} Reader;

struct _CowscopeLiveSession {
  GObject parent_instance;
  Reader *reader;
  GThread *thread;
  GMutex thread_lock;      /* protects thread */
  CowscopeSessionDocument *document;
  CowscopeSharingGraph *graph;
  CowscopeLiveTotals totals;
  guint n_updates;
};

G_DEFINE_FINAL_TYPE (CowscopeLiveSession, cowscope_live_session, G_TYPE_OBJECT)

enum { UPDATED, N_SIGNALS };
static guint signals[N_SIGNALS];

static void
lane_free (gpointer data)
{
  Lane *lane = data;
  g_array_unref (lane->instants);
  g_array_unref (lane->spans);
  g_hash_table_unref (lane->open_ranges);
  g_hash_table_unref (lane->open_copies);
  g_free (lane->name);
  g_free (lane);
}

static Reader *
reader_new (const char *path, guint interval_ms)
{
  Reader *r = g_new0 (Reader, 1);
  r->refs = 1;
  r->path = g_strdup (path);
  r->context = g_main_context_ref_thread_default ();
  r->interval_ms = interval_ms > 0 ? interval_ms : 200;
  g_mutex_init (&r->lock);
  g_cond_init (&r->cond);
  g_weak_ref_init (&r->owner, NULL);
  r->lanes = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, lane_free);
  r->graph = cowscope_graph_state_new ();
  r->strings = g_hash_table_new_full (g_direct_hash, g_direct_equal, NULL, g_free);
  cowscope_counter_rules_init (&r->counters);
  r->points = g_array_new (FALSE, FALSE, sizeof (CounterPoint));
  r->start_ns = G_MAXINT64;
  r->end_ns = G_MININT64;
  return r;
}

static Reader *
reader_ref (Reader *r)
{
  g_atomic_int_inc (&r->refs);
  return r;
}

static void
reader_unref (gpointer data)
{
  Reader *r = data;
  if (!g_atomic_int_dec_and_test (&r->refs))
    return;
  g_clear_pointer (&r->db, sqlite3_close);
  g_clear_object (&r->pending);
  g_clear_object (&r->pending_graph);
  g_hash_table_unref (r->lanes);
  cowscope_graph_state_free (r->graph);
  g_hash_table_unref (r->strings);
  cowscope_counter_rules_clear (&r->counters);
  g_array_unref (r->points);
  g_weak_ref_clear (&r->owner);
  g_main_context_unref (r->context);
  g_mutex_clear (&r->lock);
  g_cond_clear (&r->cond);
  g_free (r->path);
  g_free (r);
}

/* Whether the reader was asked to stop. */
static gboolean
reader_stopping (Reader *r)
{
  g_mutex_lock (&r->lock);
  gboolean stop = r->stop;
  g_mutex_unlock (&r->lock);
  return stop;
}

/* ---- events to lanes and counters ---------------------------------------- */

/* The lane of (@pid, @tid), created on first use. */
static Lane *
lane_for (Reader *r, guint32 pid, gint64 tid)
{
  gint64 key = (gint64) (((guint64) pid << 32) | ((guint64) tid & 0xffffffffull));
  Lane *lane = g_hash_table_lookup (r->lanes, &key);
  if (lane == NULL)
    {
      lane = g_new0 (Lane, 1);
      lane->pid = pid;
      lane->tid = tid;
      lane->instants = g_array_new (FALSE, FALSE, sizeof (Instant));
      lane->sorted = TRUE;
      lane->spans = g_array_new (FALSE, FALSE, sizeof (Span));
      lane->open_ranges = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
      lane->open_copies = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
      g_hash_table_insert (r->lanes, g_memdup2 (&key, sizeof key), lane);
    }
  return lane;
}

/* The counter tracks' rules, recording each change as a point. */
static void
counters_apply (Reader *r, gint64 ts, guint32 pid, gint64 type, const gint64 v[5])
{
  guint changed = cowscope_counter_rules_apply (&r->counters, pid, type, v);
  for (guint8 k = 0; changed != 0; k++, changed >>= 1)
    if (changed & 1)
      {
        CounterPoint p = { ts, r->counters.value[k], k };
        g_array_append_val (r->points, p);
      }
}

/* Appends the event to its lane: an instant, and the spans that
 * materializations and user ranges make. */
static void
lane_apply (Lane *lane, gint64 seq, gint64 ts, gint64 type, gint64 aux, const gint64 v[5])
{
  Instant in = { ts, seq, (float) cowscope_timeline_event_bytes (type, v), cowscope_timeline_event_kind (type, aux) };
  if (lane->instants->len > 0
      && ts < g_array_index (lane->instants, Instant, lane->instants->len - 1).ts)
    lane->sorted = FALSE;
  g_array_append_val (lane->instants, in);

  switch (type)
    {
    case COW_EVENT_MATERIALIZE_BEGIN:
      {
        Span *s = g_new0 (Span, 1);
        s->start = ts;
        s->id = seq;
        s->bytes = (guint64) v[3];
        g_hash_table_replace (lane->open_copies, g_memdup2 (&v[0], sizeof (gint64)), s);
        break;
      }
    case COW_EVENT_MATERIALIZE_END:
      {
        Span *s = g_hash_table_lookup (lane->open_copies, &v[0]);
        Span span = { s != NULL ? s->start : ts, ts, s != NULL ? s->id : seq, (guint64) v[3],
                      cowscope_timeline_event_kind (type, aux) };
        g_array_append_val (lane->spans, span);
        g_hash_table_remove (lane->open_copies, &v[0]);
        break;
      }
    case COW_EVENT_RANGE_BEGIN:
      {
        Span *s = g_new0 (Span, 1);
        s->start = ts;
        s->id = v[0];
        s->kind = COWSCOPE_ITEM_RANGE;
        g_hash_table_replace (lane->open_ranges, g_memdup2 (&v[0], sizeof (gint64)), s);
        break;
      }
    case COW_EVENT_RANGE_END:
      {
        const Span *open = g_hash_table_lookup (lane->open_ranges, &v[0]);
        if (open != NULL)
          {
            Span span = *open;
            span.end = ts;
            g_array_append_val (lane->spans, span);
            g_hash_table_remove (lane->open_ranges, &v[0]);
          }
        break;
      }
    default:
      break;
    }
}

/* Per-type totals. */
static void
totals_apply (CowscopeLiveTotals *t, gint64 type, gint64 aux, const gint64 v[5])
{
  t->events++;
  if (type == COW_EVENT_LAZY_CLONE)
    t->lazy_clones++;
  else if (type == COW_EVENT_LAZY_CLONE_EAGER)
    {
      t->eager_copies++;
      t->bytes_copied += (guint64) MAX (v[4], 0);
    }
  else if (type == COW_EVENT_MATERIALIZE_END
           && (aux & COW_MATERIALIZE_KIND_MASK) == COW_MATERIALIZE_COPY)
    {
      t->copies++;
      t->bytes_copied += (guint64) MAX (v[3], 0);
    }
  else if (type == COW_EVENT_MATERIALIZE_END
           && (aux & COW_MATERIALIZE_KIND_MASK) == COW_MATERIALIZE_STEAL)
    t->steals++;
}

/* ---- reading ------------------------------------------------------------------ */

typedef struct {
  gint64 seq, ts, type, aux, v[5];
  guint32 pid;
  gint64 tid;
} Row;

/* Time order within a batch; ties keep the order read (seq). */
static int
compare_rows (const void *a, const void *b)
{
  const Row *x = a, *y = b;
  if (x->ts != y->ts)
    return x->ts < y->ts ? -1 : 1;
  return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Opens the session read-only once the recorder has created it. */
static gboolean
reader_open (Reader *r)
{
  sqlite3 *db = cowscope_format_open (r->path, COWSCOPE_FORMAT_OPEN_READ_ONLY, NULL, NULL);
  if (db == NULL)
    return FALSE;
  /* Polled: a busy file is read at the next tick. */
  sqlite3_busy_timeout (db, 100);
  r->db = db;
  return TRUE;
}

/* Reads one batch of new events inside a read transaction (so that
 * meta.finalized and the rows agree); returns the rows read, or -1 when
 * the database cannot be read now. */
static gint
read_batch (Reader *r)
{
  if (sqlite3_exec (r->db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
    return -1;
  gint n = -1;
  g_autoptr (GArray) rows = g_array_new (FALSE, FALSE, sizeof (Row));
  sqlite3_stmt *q = NULL;

  if (sqlite3_prepare_v2 (r->db, "SELECT value FROM meta WHERE key = 'finalized'", -1, &q, NULL)
      != SQLITE_OK)
    goto out;
  if (sqlite3_step (q) == SQLITE_ROW && sqlite3_column_int64 (q, 0) == 1)
    {
      /* Renumbered in time order: "seq > last" no longer means new. */
      r->finalized = TRUE;
      n = 0;
      goto out;
    }
  g_clear_pointer (&q, sqlite3_finalize);

  if (sqlite3_prepare_v2 (r->db,
                          "SELECT seq, ts, pid, tid, type, aux, v0, v1, v2, v3, v4 FROM events"
                          " WHERE seq > ?1 ORDER BY seq LIMIT ?2",
                          -1, &q, NULL)
      != SQLITE_OK)
    goto out;
  sqlite3_bind_int64 (q, 1, r->last_seq);
  sqlite3_bind_int (q, 2, BATCH_ROWS);
  int rc;
  while ((rc = sqlite3_step (q)) == SQLITE_ROW)
    {
      Row row;
      row.seq = sqlite3_column_int64 (q, 0);
      row.ts = sqlite3_column_int64 (q, 1);
      row.pid = (guint32) sqlite3_column_int64 (q, 2);
      row.tid = sqlite3_column_int64 (q, 3);
      row.type = sqlite3_column_int64 (q, 4);
      row.aux = sqlite3_column_int64 (q, 5);
      for (int k = 0; k < 5; k++)
        row.v[k] = sqlite3_column_int64 (q, 6 + k); /* NULL reads as 0 */
      g_array_append_val (rows, row);
    }
  if (rc != SQLITE_DONE)
    goto out;
  n = (gint) rows->len;

out:
  if (n < 0)
    g_debug ("live: cannot read %s yet: %s", r->path, sqlite3_errmsg (r->db));
  g_clear_pointer (&q, sqlite3_finalize);
  sqlite3_exec (r->db, "COMMIT", NULL, NULL, NULL);
  if (n <= 0)
    return n;

  /* Seq is drain order (one ring at a time): apply in time order. */
  r->last_seq = g_array_index (rows, Row, rows->len - 1).seq;
  g_array_sort (rows, compare_rows);
  Lane *lane = NULL;
  for (guint i = 0; i < rows->len; i++)
    {
      const Row *row = &g_array_index (rows, Row, i);
      if (lane == NULL || lane->pid != row->pid || lane->tid != row->tid)
        lane = lane_for (r, row->pid, row->tid);
      lane_apply (lane, row->seq, row->ts, row->type, row->aux, row->v);
      counters_apply (r, row->ts, row->pid, row->type, row->v);
      cowscope_graph_state_apply (r->graph, row->type, row->aux, row->pid, row->v);
      totals_apply (&r->running, row->type, row->aux, row->v);
      r->start_ns = MIN (r->start_ns, row->ts);
      r->end_ns = MAX (r->end_ns, row->ts);
    }
  cowscope_graph_state_compact (r->graph);
  r->n_events += rows->len;
  r->changed = TRUE;
  return n;
}

/* Thread names from `threads` (small: read whole when a lane has none). */
static void
read_thread_names (Reader *r)
{
  gboolean missing = FALSE;
  GHashTableIter iter;
  gpointer value;
  g_hash_table_iter_init (&iter, r->lanes);
  while (!missing && g_hash_table_iter_next (&iter, NULL, &value))
    missing = ((Lane *) value)->name == NULL;
  if (!missing)
    return;

  sqlite3_stmt *q = NULL;
  if (sqlite3_prepare_v2 (r->db, "SELECT pid, tid, name FROM threads WHERE name IS NOT NULL", -1,
                          &q, NULL)
      != SQLITE_OK)
    return;
  while (sqlite3_step (q) == SQLITE_ROW)
    {
      gint64 key = (gint64) (((guint64) sqlite3_column_int64 (q, 0) << 32)
                             | ((guint64) sqlite3_column_int64 (q, 1) & 0xffffffffull));
      Lane *lane = g_hash_table_lookup (r->lanes, &key);
      if (lane != NULL && lane->name == NULL)
        lane->name = cowscope_format_column_text (q, 2);
    }
  sqlite3_finalize (q);
}

/* The name of string @id of @pid (cached; NULL when not written yet). */
static const char *
lookup_string (Reader *r, sqlite3_stmt *q, guint32 pid, gint64 id)
{
  gpointer key = GSIZE_TO_POINTER (((guint64) pid << 40) ^ (guint64) id);
  const char *name = g_hash_table_lookup (r->strings, key);
  if (name != NULL || q == NULL)
    return name;
  sqlite3_reset (q);
  sqlite3_bind_int64 (q, 1, pid);
  sqlite3_bind_int64 (q, 2, id);
  if (sqlite3_step (q) == SQLITE_ROW)
    {
      char *text = cowscope_format_column_text (q, 0);
      if (text != NULL)
        g_hash_table_insert (r->strings, key, text);
      return text;
    }
  return NULL;
}

/* ---- snapshots ------------------------------------------------------------------- */

static int
compare_lanes (gconstpointer a, gconstpointer b)
{
  const Lane *x = *(Lane *const *) a, *y = *(Lane *const *) b;
  if (x->pid != y->pid)
    return x->pid < y->pid ? -1 : 1;
  return (x->tid > y->tid) - (x->tid < y->tid);
}

static int
compare_instants (gconstpointer a, gconstpointer b)
{
  const Instant *x = a, *y = b;
  if (x->ts != y->ts)
    return x->ts < y->ts ? -1 : 1;
  return (x->id > y->id) - (x->id < y->id);
}

/* The timeline lanes of the current state (new, immutable objects). */
static GPtrArray *
build_lanes (Reader *r)
{
  g_autoptr (GPtrArray) sorted = g_ptr_array_new ();
  GHashTableIter iter;
  gpointer value;
  g_hash_table_iter_init (&iter, r->lanes);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    g_ptr_array_add (sorted, value);
  g_ptr_array_sort (sorted, compare_lanes);

  GPtrArray *lanes = g_ptr_array_new_with_free_func (g_object_unref);
  for (guint i = 0; i < sorted->len; i++)
    {
      Lane *lane = g_ptr_array_index (sorted, i);
      if (!lane->sorted)
        {
          g_array_sort (lane->instants, compare_instants);
          lane->sorted = TRUE;
        }
      CowscopeLaneIndex *index = cowscope_lane_index_new ();
      for (guint k = 0; k < lane->instants->len; k++)
        {
          const Instant *in = &g_array_index (lane->instants, Instant, k);
          cowscope_lane_index_append (index, in->ts, in->id, in->kind, (guint64) in->bytes);
        }
      for (guint k = 0; k < lane->spans->len; k++)
        {
          const Span *s = &g_array_index (lane->spans, Span, k);
          cowscope_lane_index_add_span (index, s->start, s->end, s->id, s->kind, s->bytes);
        }
      /* Ranges still open run to the newest event. */
      GHashTableIter open;
      g_hash_table_iter_init (&open, lane->open_ranges);
      while (g_hash_table_iter_next (&open, NULL, &value))
        {
          const Span *s = value;
          cowscope_lane_index_add_span (index, s->start, r->end_ns, s->id, s->kind, 0);
        }
      cowscope_lane_index_finish (index);

      g_autofree char *tid = g_strdup_printf ("%" G_GINT64_FORMAT, lane->tid);
      g_autofree char *title = lane->name != NULL
                                 ? g_strdup_printf (_("%s (thread %s)"), lane->name, tid)
                                 : g_strdup_printf (_("Thread %s"), tid);
      g_ptr_array_add (lanes, cowscope_timeline_lane_new_events (COWSCOPE_LANE_THREAD, title,
                                                                 lane->pid, lane->tid, -1,
                                                                 index));
    }
  return lanes;
}

/* The counter tracks of the current state, binned over the session. */
static void
build_counters (Reader *r, CowscopeTimelineLane *counters[COWSCOPE_N_COUNTERS])
{
  static const char *const titles[COWSCOPE_N_COUNTERS] = {
    N_("Bytes allocated"), N_("Bytes shared lazily"), N_("Live storages"),
  };
  CowscopeCounterBins *series[COWSCOPE_N_COUNTERS];
  for (guint i = 0; i < COWSCOPE_N_COUNTERS; i++)
    series[i] = cowscope_counter_bins_new (r->start_ns, r->end_ns, COUNTER_BINS);
  for (guint k = 0; k < r->points->len; k++)
    {
      const CounterPoint *p = &g_array_index (r->points, CounterPoint, k);
      cowscope_counter_bins_set (series[p->counter], p->ts, p->value);
    }
  for (guint i = 0; i < COWSCOPE_N_COUNTERS; i++)
    {
      cowscope_counter_bins_finish (series[i]);
      counters[i] = cowscope_timeline_lane_new_counter ((CowscopeCounterKind) i,
                                                        _(titles[i]),
                                                        series[i]);
    }
}

typedef struct {
  Reader *r;
  sqlite3_stmt *q;
} NameLookup;

static const char *
name_of (guint32 pid, gint64 name_id, gpointer data)
{
  NameLookup *names = data;
  return lookup_string (names->r, names->q, pid, name_id);
}

/* The sharing graph of the live objects, as the graph builder assembles
 * it (no free times are known yet, so nothing is freed soon). */
static CowscopeSharingGraph *
build_graph (Reader *r)
{
  NameLookup names = { r, NULL };
  guint n_itemsizes;
  if (sqlite3_prepare_v2 (r->db, "SELECT value FROM strings WHERE pid = ?1 AND id = ?2", -1,
                          &names.q, NULL)
      != SQLITE_OK)
    g_clear_pointer (&names.q, sqlite3_finalize);
  CowscopeGraphAssembleOptions options = {
    .seq = (gint64) r->n_events,
    .time = r->end_ns,
    .checkpoint_seq = -1,
    .n_replayed = r->n_events,
    /* The dtypes table is filled only when the session is finalized. */
    .itemsizes = cowscope_format_dtype_sizes (&n_itemsizes),
    .n_itemsizes = n_itemsizes,
    .name_func = name_of,
    .name_data = &names,
  };
  CowscopeSharingGraph *graph = cowscope_sharing_graph_new_from_state (r->graph, &options);
  g_clear_pointer (&names.q, sqlite3_finalize);
  return graph;
}

/* Main context: moves the pending snapshot into the object. */
static gboolean
deliver (gpointer data)
{
  Reader *r = data;
  g_autoptr (CowscopeLiveSession) self = g_weak_ref_get (&r->owner);
  g_mutex_lock (&r->lock);
  CowscopeSessionDocument *document = g_steal_pointer (&r->pending);
  CowscopeSharingGraph *graph = g_steal_pointer (&r->pending_graph);
  CowscopeLiveTotals totals = r->totals;
  gboolean stop = r->stop && !r->final;
  g_mutex_unlock (&r->lock);

  if (self != NULL && document != NULL && !stop)
    {
      g_clear_object (&self->document);
      g_clear_object (&self->graph);
      self->document = g_steal_pointer (&document);
      self->graph = g_steal_pointer (&graph);
      self->totals = totals;
      self->n_updates++;
      g_signal_emit (self, signals[UPDATED], 0);
    }
  g_clear_object (&document);
  g_clear_object (&graph);
  return G_SOURCE_REMOVE;
}

/* Builds a snapshot of the current state and hands it to the main
 * context (replacing one not delivered yet). */
static void
publish (Reader *r)
{
  gint64 t0 = g_get_monotonic_time ();
  read_thread_names (r);
  g_autoptr (GPtrArray) lanes = build_lanes (r);
  CowscopeTimelineLane *counters[COWSCOPE_N_COUNTERS];
  build_counters (r, counters);
  CowscopeSessionDocument *document =
    cowscope_session_document_new_snapshot (r->path, r->start_ns, r->end_ns + 1, r->n_events,
                                            lanes, counters);
  for (guint i = 0; i < COWSCOPE_N_COUNTERS; i++)
    g_object_unref (counters[i]);
  CowscopeSharingGraph *graph = build_graph (r);

  g_mutex_lock (&r->lock);
  gboolean schedule = r->pending == NULL;
  g_clear_object (&r->pending);
  g_clear_object (&r->pending_graph);
  r->pending = document;
  r->pending_graph = graph;
  r->totals = r->running;
  g_mutex_unlock (&r->lock);
  if (schedule)
    {
      GSource *source = g_idle_source_new ();
      /* As the page's own refresh timer: a busy main loop (a chatty
       * target's output) must not starve the live views. */
      g_source_set_priority (source, G_PRIORITY_DEFAULT);
      g_source_set_callback (source, deliver, reader_ref (r), reader_unref);
      g_source_set_static_name (source, "[cowscope] live session");
      g_source_attach (source, r->context);
      g_source_unref (source);
    }
  r->changed = FALSE;
  r->last_publish_us = g_get_monotonic_time ();
  r->publish_cost_us = r->last_publish_us - t0;
  g_debug ("live: snapshot of %" G_GUINT64_FORMAT " events, %u objects in %.1f ms",
           r->n_events, cowscope_graph_state_get_n_live (r->graph), r->publish_cost_us / 1e3);
}

/* The reader thread: polls, applies, publishes, until stopped. */
static gpointer
reader_thread (gpointer data)
{
  Reader *r = data;
  while (!reader_stopping (r))
    {
      if (r->db == NULL)
        reader_open (r);
      gboolean behind = FALSE;
      if (r->db != NULL && !r->finalized)
        {
          gint64 deadline = g_get_monotonic_time () + POLL_BUDGET_US;
          while ((behind = read_batch (r) == BATCH_ROWS) && g_get_monotonic_time () < deadline
                 && !reader_stopping (r))
            ;
        }
      /* Publishing copies the state: never spend most of the time on it. */
      gint64 now = g_get_monotonic_time ();
      gint64 gap = MAX ((gint64) r->interval_ms * 1000, 2 * r->publish_cost_us);
      if (r->changed && r->db != NULL && now - r->last_publish_us >= gap)
        publish (r);

      /* Catching up: read on at once (publishing keeps its pace). */
      if (behind)
        continue;
      g_mutex_lock (&r->lock);
      if (!r->stop)
        g_cond_wait_until (&r->cond, &r->lock,
                           g_get_monotonic_time () + MIN (POLL_MS, r->interval_ms) * 1000);
      g_mutex_unlock (&r->lock);
    }
  g_clear_pointer (&r->db, sqlite3_close);
  reader_unref (r);
  return NULL;
}

/* After the reader thread (joined, or never started): reads what is
 * left, within FINAL_READ_BUDGET_US, publishes what changed and closes
 * the connection. */
static void
final_read (Reader *r)
{
  if (r->db == NULL && !reader_open (r))
    return;
  gint64 deadline = g_get_monotonic_time () + FINAL_READ_BUDGET_US;
  if (!r->finalized)
    while (read_batch (r) == BATCH_ROWS && g_get_monotonic_time () < deadline)
      ;
  if (r->changed)
    publish (r);
  g_clear_pointer (&r->db, sqlite3_close);
}

/* ---- the object ----------------------------------------------------------------- */

static void
cowscope_live_session_dispose (GObject *object)
{
  CowscopeLiveSession *self = COWSCOPE_LIVE_SESSION (object);
  cowscope_live_session_stop (self);
  g_clear_object (&self->document);
  g_clear_object (&self->graph);
  G_OBJECT_CLASS (cowscope_live_session_parent_class)->dispose (object);
}

static void
cowscope_live_session_finalize (GObject *object)
{
  CowscopeLiveSession *self = COWSCOPE_LIVE_SESSION (object);
  g_clear_pointer (&self->reader, reader_unref);
  g_mutex_clear (&self->thread_lock);
  G_OBJECT_CLASS (cowscope_live_session_parent_class)->finalize (object);
}

static void
cowscope_live_session_class_init (CowscopeLiveSessionClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  object_class->dispose = cowscope_live_session_dispose;
  object_class->finalize = cowscope_live_session_finalize;

  /**
   * CowscopeLiveSession::updated:
   *
   * A new snapshot (document, graph, totals) was delivered.
   */
  signals[UPDATED] = g_signal_new ("updated", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                                   NULL, NULL, NULL, G_TYPE_NONE, 0);
}

static void
cowscope_live_session_init (CowscopeLiveSession *self)
{
  g_mutex_init (&self->thread_lock);
}

/* A follower of the session being recorded at @path (not started). */
CowscopeLiveSession *
cowscope_live_session_new (const char *path)
{
  g_return_val_if_fail (path != NULL, NULL);
  CowscopeLiveSession *self = g_object_new (COWSCOPE_TYPE_LIVE_SESSION, NULL);
  self->reader = reader_new (path, 0);
  g_weak_ref_set (&self->reader->owner, self);
  return self;
}

/* Starts the reader thread; see the header. */
void
cowscope_live_session_start (CowscopeLiveSession *self, guint interval_ms)
{
  g_return_if_fail (COWSCOPE_IS_LIVE_SESSION (self));
  g_mutex_lock (&self->thread_lock);
  g_mutex_lock (&self->reader->lock);
  gboolean stopped = self->reader->stop;
  g_mutex_unlock (&self->reader->lock);
  if (self->thread == NULL && !stopped)
    {
      Reader *r = self->reader;
      g_main_context_unref (r->context);
      r->context = g_main_context_ref_thread_default ();
      r->interval_ms = interval_ms > 0 ? interval_ms : 200;
      self->thread = g_thread_new ("cowscope-live", reader_thread, reader_ref (r));
    }
  g_mutex_unlock (&self->thread_lock);
}

/* Stops and joins the reader thread; see the header. */
void
cowscope_live_session_stop (CowscopeLiveSession *self)
{
  g_return_if_fail (COWSCOPE_IS_LIVE_SESSION (self));
  g_mutex_lock (&self->reader->lock);
  self->reader->stop = TRUE;
  g_cond_broadcast (&self->reader->cond);
  g_mutex_unlock (&self->reader->lock);

  g_mutex_lock (&self->thread_lock);
  GThread *thread = g_steal_pointer (&self->thread);
  g_mutex_unlock (&self->thread_lock);
  if (thread != NULL)
    g_thread_join (thread);
}

/* Reads to the end, delivers a last snapshot and stops; see the header. */
void
cowscope_live_session_finish (CowscopeLiveSession *self)
{
  g_return_if_fail (COWSCOPE_IS_LIVE_SESSION (self));
  g_mutex_lock (&self->reader->lock);
  gboolean already = self->reader->stop;
  self->reader->stop = TRUE;
  self->reader->final = !already;
  g_cond_broadcast (&self->reader->cond);
  g_mutex_unlock (&self->reader->lock);

  /* No thread starts after this: start() sees stop under thread_lock. */
  g_mutex_lock (&self->thread_lock);
  GThread *thread = g_steal_pointer (&self->thread);
  g_mutex_unlock (&self->thread_lock);
  if (thread != NULL)
    g_thread_join (thread);
  if (!already)
    final_read (self->reader);
}

/* The newest snapshot document, or NULL. */
CowscopeSessionDocument *
cowscope_live_session_get_document (CowscopeLiveSession *self)
{
  g_return_val_if_fail (COWSCOPE_IS_LIVE_SESSION (self), NULL);
  return self->document;
}

/* The newest live graph, or NULL. */
CowscopeSharingGraph *
cowscope_live_session_get_graph (CowscopeLiveSession *self)
{
  g_return_val_if_fail (COWSCOPE_IS_LIVE_SESSION (self), NULL);
  return self->graph;
}

/* The totals of the newest snapshot. */
void
cowscope_live_session_get_totals (CowscopeLiveSession *self, CowscopeLiveTotals *totals)
{
  g_return_if_fail (COWSCOPE_IS_LIVE_SESSION (self));
  g_return_if_fail (totals != NULL);
  *totals = self->totals;
}

/* Snapshots delivered so far. */
guint
cowscope_live_session_get_n_updates (CowscopeLiveSession *self)
{
  g_return_val_if_fail (COWSCOPE_IS_LIVE_SESSION (self), 0);
  return self->n_updates;
}
