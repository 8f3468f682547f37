/* cowscope-session-document.c — loading a session and indexing its lanes. */
#include "cowscope-session-document-private.h"

#include <glib/gi18n-lib.h>
#include <inttypes.h>
#include <string.h>

#include "cowscope-ipc-private.h"
#include "cowscope-lane-index.h"
#include "cowscope-lane-rules.h"
#include "cowscope-packed-lane.h"
#include "cowscope-packed-reader.h"
#include "cowscope-session-db.h"
#include "cowscope-session-model-error.h"
#include "cowscope-timeline-lane-private.h"

#define COUNTER_BINS 65536
#define POOL_MAX 4

struct _CowscopeSessionDocument {
  GObject parent_instance;
  char *path;
  gint64 start_ns, end_ns;
  gint64 first_seq, last_seq;
  guint64 n_events;
  GHashTable *meta;         /* key -> text */
  GHashTable *ops;          /* id -> name */
  GHashTable *event_types;  /* id -> name */
  GHashTable *thread_names; /* (pid << 32 | tid) -> name */
  GArray *processes;        /* CowscopeProcessInfo */
  GListStore *lanes;
  CowscopeTimelineLane *counters[COWSCOPE_N_COUNTERS];
  GMutex pool_lock;         /* protects pool */
  GPtrArray *pool;          /* idle sqlite3 connections */
  gboolean eager;           /* decode every chunk at open (the old design) */
  CowscopeChunkStore *store; /* schema 2: the decoded chunks of every lane */
};

enum {
  PROP_0,
  PROP_PATH,
  PROP_START_NS,
  PROP_END_NS,
  PROP_N_EVENTS,
  PROP_LANES,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

G_DEFINE_FINAL_TYPE (CowscopeSessionDocument, cowscope_session_document, G_TYPE_OBJECT)

static void
clear_process (gpointer data)
{
  CowscopeProcessInfo *info = data;
  g_free (info->exe);
  g_free (info->cmdline);
  g_free (info->end_reason);
  g_free (info->gpu_status);
}

static void
cowscope_session_document_finalize (GObject *object)
{
  CowscopeSessionDocument *self = COWSCOPE_SESSION_DOCUMENT (object);
  g_free (self->path);
  g_clear_pointer (&self->meta, g_hash_table_unref);
  g_clear_pointer (&self->ops, g_hash_table_unref);
  g_clear_pointer (&self->event_types, g_hash_table_unref);
  g_clear_pointer (&self->thread_names, g_hash_table_unref);
  g_clear_pointer (&self->processes, g_array_unref);
  g_clear_object (&self->lanes);
  for (guint i = 0; i < COWSCOPE_N_COUNTERS; i++)
    g_clear_object (&self->counters[i]);
  g_clear_pointer (&self->store, cowscope_chunk_store_unref);
  for (guint i = 0; self->pool && i < self->pool->len; i++)
    sqlite3_close (g_ptr_array_index (self->pool, i));
  g_clear_pointer (&self->pool, g_ptr_array_unref);
  g_mutex_clear (&self->pool_lock);
  G_OBJECT_CLASS (cowscope_session_document_parent_class)->finalize (object);
}

static void
cowscope_session_document_get_property (GObject *object, guint prop_id, GValue *value,
                                        GParamSpec *pspec)
{
  CowscopeSessionDocument *self = COWSCOPE_SESSION_DOCUMENT (object);
  switch (prop_id)
    {
    case PROP_PATH:
      g_value_set_string (value, self->path);
      break;
    case PROP_START_NS:
      g_value_set_int64 (value, self->start_ns);
      break;
    case PROP_END_NS:
      g_value_set_int64 (value, self->end_ns);
      break;
    case PROP_N_EVENTS:
      g_value_set_uint64 (value, self->n_events);
      break;
    case PROP_LANES:
      g_value_set_object (value, self->lanes);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
cowscope_session_document_class_init (CowscopeSessionDocumentClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  object_class->finalize = cowscope_session_document_finalize;
  object_class->get_property = cowscope_session_document_get_property;

  properties[PROP_PATH] = g_param_spec_string ("path", NULL, NULL, NULL,
                                               G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  properties[PROP_START_NS] = g_param_spec_int64 ("start-ns", NULL, NULL, G_MININT64,
                                                  G_MAXINT64, 0,
                                                  G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  properties[PROP_END_NS] = g_param_spec_int64 ("end-ns", NULL, NULL, G_MININT64,
                                                G_MAXINT64, 0,
                                                G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  properties[PROP_N_EVENTS] = g_param_spec_uint64 ("n-events", NULL, NULL, 0, G_MAXUINT64, 0,
                                                   G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  properties[PROP_LANES] = g_param_spec_object ("lanes", NULL, NULL, G_TYPE_LIST_MODEL,
                                                G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
cowscope_session_document_init (CowscopeSessionDocument *self)
{
  g_mutex_init (&self->pool_lock);
  self->pool = g_ptr_array_new ();
  self->meta = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  self->ops = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
  self->event_types = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
  self->thread_names = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
  self->processes = g_array_new (FALSE, TRUE, sizeof (CowscopeProcessInfo));
  g_array_set_clear_func (self->processes, clear_process);
  self->lanes = g_list_store_new (COWSCOPE_TYPE_TIMELINE_LANE);
}

/* ---- connection pool -------------------------------------------------- */

/* Pops an idle connection or opens a new validated one. */
sqlite3 *
cowscope_session_document_acquire_db (CowscopeSessionDocument *self, GError **error)
{
  g_return_val_if_fail (COWSCOPE_IS_SESSION_DOCUMENT (self), NULL);
  g_mutex_lock (&self->pool_lock);
  sqlite3 *db = self->pool->len > 0 ? g_ptr_array_steal_index_fast (self->pool,
                                                                     self->pool->len - 1)
                                    : NULL;
  g_mutex_unlock (&self->pool_lock);
  if (db == NULL)
    db = cowscope_session_db_open (self->path, TRUE, NULL, error);
  return db;
}

/* Returns @db to the pool (or closes it when the pool is full). */
void
cowscope_session_document_release_db (CowscopeSessionDocument *self, sqlite3 *db)
{
  if (db == NULL)
    return;
  sqlite3_stmt *stmt;
  while ((stmt = sqlite3_next_stmt (db, NULL)) != NULL)
    sqlite3_finalize (stmt);
  g_mutex_lock (&self->pool_lock);
  if (self->pool->len < POOL_MAX)
    {
      g_ptr_array_add (self->pool, db);
      db = NULL;
    }
  g_mutex_unlock (&self->pool_lock);
  if (db != NULL)
    sqlite3_close (db);
}

/* ---- loading ---------------------------------------------------------- */

typedef struct {
  GMutex lock;           /* protects fraction and pending */
  double fraction;
  gboolean pending;      /* an idle callback is scheduled */
  GMainContext *context;
  CowscopeLoadProgressFunc func;
  gpointer data;
  GDestroyNotify notify;
  gint refs;
} Progress;

static Progress *
progress_ref (Progress *progress)
{
  g_atomic_int_inc (&progress->refs);
  return progress;
}

static void
progress_unref (gpointer data)
{
  Progress *progress = data;
  if (progress == NULL || !g_atomic_int_dec_and_test (&progress->refs))
    return;
  if (progress->notify)
    progress->notify (progress->data);
  g_main_context_unref (progress->context);
  g_mutex_clear (&progress->lock);
  g_free (progress);
}

/* Runs in the caller's main context: reports the newest fraction. */
static gboolean
progress_dispatch (gpointer data)
{
  Progress *progress = data;
  g_mutex_lock (&progress->lock);
  double fraction = progress->fraction;
  progress->pending = FALSE;
  g_mutex_unlock (&progress->lock);
  progress->func (fraction, progress->data);
  return G_SOURCE_REMOVE;
}

/* From the worker: records @fraction and schedules one dispatch. */
static void
progress_report (Progress *progress, double fraction)
{
  if (progress == NULL || progress->func == NULL)
    return;
  g_mutex_lock (&progress->lock);
  progress->fraction = fraction;
  gboolean schedule = !progress->pending;
  progress->pending = TRUE;
  g_mutex_unlock (&progress->lock);
  if (schedule)
    {
      GSource *source = g_idle_source_new ();
      g_source_set_priority (source, G_PRIORITY_LOW);
      g_source_set_callback (source, progress_dispatch, progress_ref (progress),
                             progress_unref);
      g_source_set_static_name (source, "[cowscope] load progress");
      g_source_attach (source, progress->context);
      g_source_unref (source);
    }
}

/* Fills @table (id -> name) from a two-column lookup table. */
static gboolean
load_names (sqlite3 *db, const char *path, const char *sql, GHashTable *table,
            GError **error)
{
  g_autoptr (sqlite3_stmt) stmt = cowscope_session_db_prepare (db, path, sql, error);
  if (stmt == NULL)
    return FALSE;
  int rc;
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      char *name = cowscope_session_db_column_text (stmt, 1);
      if (name == NULL || sqlite3_column_type (stmt, 0) != SQLITE_INTEGER)
        {
          g_free (name);
          continue;
        }
      g_hash_table_insert (table, g_memdup2 (&(gint64) { sqlite3_column_int64 (stmt, 0) },
                                             sizeof (gint64)),
                           name);
    }
  if (rc != SQLITE_DONE)
    {
      cowscope_session_db_set_error (error, db, rc, path, sql);
      return FALSE;
    }
  return TRUE;
}

typedef struct {
  guint32 pid;
  gint64 tid;
  gint64 device;
  CowscopeLaneIndex *index;
  CowscopePackedLane *packed; /* schema 2, read lazily: the instants */
} LaneBuild;

static void
lane_build_free (gpointer data)
{
  LaneBuild *build = data;
  cowscope_lane_index_free (build->index);
  cowscope_packed_lane_free (build->packed);
  g_free (build);
}

/* The lane builder for a key, created on first use. */
static LaneBuild *
lane_for (GHashTable *lanes, guint32 pid, gint64 tid, gint64 device)
{
  gint64 key = (gint64) (((guint64) pid << 32) ^ ((guint64) tid & 0xffffffffull)
                         ^ ((guint64) device << 56));
  LaneBuild *build = g_hash_table_lookup (lanes, &key);
  if (build == NULL)
    {
      build = g_new0 (LaneBuild, 1);
      build->pid = pid;
      build->tid = tid;
      build->device = device;
      build->index = cowscope_lane_index_new ();
      g_hash_table_insert (lanes, g_memdup2 (&key, sizeof key), build);
    }
  return build;
}

/* Orders lanes by (pid, device, tid). */
static int
compare_lane_builds (gconstpointer a, gconstpointer b)
{
  const LaneBuild *x = *(LaneBuild *const *) a, *y = *(LaneBuild *const *) b;
  if (x->pid != y->pid)
    return x->pid < y->pid ? -1 : 1;
  if (x->device != y->device)
    return x->device < y->device ? -1 : 1;
  return (x->tid > y->tid) - (x->tid < y->tid);
}

/* Counter state while scanning events in time order. */
typedef struct {
  CowscopeCounterRules rules;
  CowscopeCounterSeries *series[COWSCOPE_N_COUNTERS];
} Counters;

/* Applies one event's effect on the counter tracks. */
static void
counters_apply (Counters *c, guint32 pid, gint64 ts, gint64 type, const gint64 v[4])
{
  guint changed = cowscope_counter_rules_apply (&c->rules, pid, type, v);
  for (guint k = 0; changed != 0; k++, changed >>= 1)
    if (changed & 1)
      cowscope_counter_series_set (c->series[k], ts, c->rules.value[k]);
}

/* Reads one integer result of @sql into @a and @b (NULL -> fallback). */
static gboolean
query_pair (sqlite3 *db, const char *path, const char *sql, gint64 *a, gint64 *b,
            gint64 fallback, GError **error)
{
  g_autoptr (sqlite3_stmt) stmt = cowscope_session_db_prepare (db, path, sql, error);
  if (stmt == NULL)
    return FALSE;
  int rc = sqlite3_step (stmt);
  if (rc != SQLITE_ROW)
    {
      cowscope_session_db_set_error (error, db, rc, path, sql);
      return FALSE;
    }
  *a = cowscope_session_db_column_int (stmt, 0, fallback);
  *b = cowscope_session_db_column_int (stmt, 1, fallback);
  return TRUE;
}

/* Schema 2: fills the lanes from timeline_lanes/_chunks/_spans and the
 * counter series from timeline_counters, without reading `events`.  The
 * instants stay in the file: each lane gets its chunks' rows (times and
 * counts, not their BLOBs) and decodes them when a query needs them
 * (cowscope-packed-lane.h); spans are decoded now.  An eager document
 * (the design before lazy lanes, kept to compare with) decodes every
 * chunk into memory instead. */
static gboolean
load_packed (CowscopeSessionDocument *self, sqlite3 *db, GHashTable *lanes,
             Counters *counters, gint64 max_ts, GCancellable *cancellable,
             Progress *progress, GError **error)
{
  const char *path = self->path;
  int rc;
  g_autoptr (GHashTable) by_id = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free,
                                                       NULL);
  g_autoptr (GHashTable) cuda_names = g_hash_table_new_full (g_int64_hash, g_int64_equal,
                                                            g_free, g_free);
  guint64 n_events = 0, n_chunks = 0, done = 0;
  if (!load_names (db, path, "SELECT id, name FROM cuda_kinds", cuda_names, error))
    return FALSE;
  guint8 cuda_kinds[256];
  for (gint64 code = 0; code < 256; code++)
    cuda_kinds[code] = cowscope_lane_rules_cuda_kind (g_hash_table_lookup (cuda_names, &code));
  self->store = cowscope_chunk_store_new (path, cuda_kinds);
  {
    g_autoptr (sqlite3_stmt) q = cowscope_session_db_prepare (
      db, path,
      "SELECT id, pid, tid, device, n_instants,"
      " (SELECT count(*) FROM timeline_chunks c WHERE c.lane = l.id) FROM timeline_lanes l",
      error);
    if (q == NULL)
      return FALSE;
    while ((rc = sqlite3_step (q)) == SQLITE_ROW)
      {
        gint64 device = cowscope_session_db_column_int (q, 3, -1);
        LaneBuild *build = lane_for (lanes, (guint32) cowscope_session_db_column_int (q, 1, 0),
                                     cowscope_session_db_column_int (q, 2, 0), MAX (device, -1));
        gint64 *id = g_new (gint64, 1);
        *id = sqlite3_column_int64 (q, 0);
        g_hash_table_insert (by_id, id, build);
        if (!self->eager && build->packed == NULL)
          build->packed = cowscope_packed_lane_new (self->store, *id, device >= 0);
        if (device < 0)
          n_events += (guint64) cowscope_session_db_column_int (q, 4, 0);
        n_chunks += (guint64) cowscope_session_db_column_int (q, 5, 0);
      }
    if (rc != SQLITE_DONE)
      {
        cowscope_session_db_set_error (error, db, rc, path, "timeline_lanes");
        return FALSE;
      }
  }
  self->n_events = n_events;

  if (!self->eager)
    {
      /* The chunks' rows: the BLOB, last in the row, is not read. */
      g_autoptr (sqlite3_stmt) q = cowscope_session_db_prepare (
        db, path, "SELECT lane, chunk, first_ts, last_ts, n FROM timeline_chunks"
                  " ORDER BY lane, chunk", error);
      if (q == NULL)
        return FALSE;
      while ((rc = sqlite3_step (q)) == SQLITE_ROW)
        {
          gint64 lane = sqlite3_column_int64 (q, 0);
          LaneBuild *build = g_hash_table_lookup (by_id, &lane);
          if (build == NULL || build->packed == NULL)
            continue;
          if (!cowscope_packed_lane_add_chunk (build->packed, sqlite3_column_int64 (q, 1),
                                               cowscope_session_db_column_int (q, 2, 0),
                                               cowscope_session_db_column_int (q, 3, -1),
                                               cowscope_session_db_column_int (q, 4, 0)))
            {
              g_set_error (error, COWSCOPE_SESSION_MODEL_ERROR,
                           COWSCOPE_SESSION_MODEL_ERROR_DAMAGED,
                           _("The session “%s” is damaged (%s)"), path, "timeline_chunks");
              return FALSE;
            }
        }
      if (rc != SQLITE_DONE)
        {
          cowscope_session_db_set_error (error, db, rc, path, "timeline_chunks");
          return FALSE;
        }
      progress_report (progress, 0.5);
    }

  static const char *const sql[2] = {
    "SELECT lane, instants FROM timeline_chunks ORDER BY lane, chunk",
    "SELECT lane, spans FROM timeline_spans ORDER BY lane, chunk",
  };
  for (int pass = self->eager ? 0 : 1; pass < 2; pass++)
    {
      g_autoptr (sqlite3_stmt) q = cowscope_session_db_prepare (db, path, sql[pass], error);
      if (q == NULL)
        return FALSE;
      while ((rc = sqlite3_step (q)) == SQLITE_ROW)
        {
          gint64 lane = sqlite3_column_int64 (q, 0);
          LaneBuild *build = g_hash_table_lookup (by_id, &lane);
          if (build == NULL)
            continue;
          gboolean cuda = build->device >= 0;
          CowscopePackedReader r;
          cowscope_packed_reader_init (&r, sqlite3_column_blob (q, 1),
                                       (gsize) sqlite3_column_bytes (q, 1));
          gint64 ts = 0, id = 0;
          while (!cowscope_packed_reader_done (&r))
            {
              ts += cowscope_packed_s (&r);
              guint64 len = 0;
              if (pass == 1)
                len = cowscope_packed_u (&r);
              id += cowscope_packed_s (&r);
              guint8 code = cowscope_packed_byte (&r);
              guint8 kind;
              if (cuda)
                kind = cuda_kinds[code];
              else if (pass == 1)
                kind = code == 255 ? COWSCOPE_ITEM_RANGE
                                   : cowscope_lane_rules_event_kind (COWSCOPE_EV_MATERIALIZE_END, code);
              else
                kind = cowscope_lane_rules_event_kind (code, code == COWSCOPE_EV_MATERIALIZE_END
                                                               ? cowscope_packed_byte (&r) : 0);
              guint64 bytes = cowscope_packed_u (&r);
              if (!cowscope_packed_reader_ok (&r))
                break;
              if (pass == 0)
                cowscope_lane_index_append (build->index, ts, id, kind, bytes);
              else
                {
                  gint64 end = len == 0 ? max_ts
                                        : ts + ((gint64) ((len - 1) >> 1) ^ -(gint64) ((len - 1) & 1));
                  cowscope_lane_index_add_span (build->index, ts, end, id, kind, bytes);
                }
            }
          if (!cowscope_packed_reader_ok (&r))
            {
              g_set_error (error, COWSCOPE_SESSION_MODEL_ERROR,
                           COWSCOPE_SESSION_MODEL_ERROR_DAMAGED,
                           _("The session “%s” is damaged (%s)"), path, "timeline");
              return FALSE;
            }
          if (pass == 0)
            {
              if (g_cancellable_set_error_if_cancelled (cancellable, error))
                return FALSE;
              progress_report (progress, 0.9 * (double) ++done / (double) MAX (n_chunks, 1));
            }
        }
      if (rc != SQLITE_DONE)
        {
          cowscope_session_db_set_error (error, db, rc, path, sql[pass]);
          return FALSE;
        }
    }

  /* Counter tracks, already binned. */
  g_autoptr (sqlite3_stmt) q = cowscope_session_db_prepare (
    db, path, "SELECT counter, start_ns, end_ns, n_bins, bins FROM timeline_counters", error);
  if (q == NULL)
    return FALSE;
  while ((rc = sqlite3_step (q)) == SQLITE_ROW)
    {
      gint64 k = sqlite3_column_int64 (q, 0);
      gint64 n_bins = sqlite3_column_int64 (q, 3);
      if (k < 0 || k >= COWSCOPE_N_COUNTERS || n_bins <= 0 || n_bins > G_MAXINT32
          || sqlite3_column_bytes (q, 4) != n_bins * 24)
        continue;
      CowscopePackedReader r;
      cowscope_packed_reader_init (&r, sqlite3_column_blob (q, 4),
                                   (gsize) sqlite3_column_bytes (q, 4));
      CowscopeCounterSeries *series = cowscope_counter_series_new (
        sqlite3_column_int64 (q, 1), sqlite3_column_int64 (q, 2), (guint) n_bins);
      for (guint b = 0; b < (guint) n_bins; b++)
        {
          double min = cowscope_packed_double (&r), max = cowscope_packed_double (&r);
          cowscope_counter_series_set_bin (series, b, min, max, cowscope_packed_double (&r));
        }
      cowscope_counter_series_free (counters->series[k]);
      counters->series[k] = series;
    }
  if (rc != SQLITE_DONE)
    {
      cowscope_session_db_set_error (error, db, rc, path, "timeline_counters");
      return FALSE;
    }
  return TRUE;
}

/* Does the whole load on @db: metadata, processes, lane index. */
static gboolean
load (CowscopeSessionDocument *self, sqlite3 *db, GCancellable *cancellable,
      Progress *progress, GError **error)
{
  const char *path = self->path;
  int rc;

  /* meta */
  {
    g_autoptr (sqlite3_stmt) stmt =
      cowscope_session_db_prepare (db, path, "SELECT key, value FROM meta", error);
    if (stmt == NULL)
      return FALSE;
    while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
      {
        char *key = cowscope_session_db_column_text (stmt, 0);
        char *value = cowscope_session_db_column_text (stmt, 1);
        if (key != NULL && value != NULL)
          g_hash_table_replace (self->meta, key, value);
        else
          {
            g_free (key);
            g_free (value);
          }
      }
    if (rc != SQLITE_DONE)
      {
        cowscope_session_db_set_error (error, db, rc, path, "meta");
        return FALSE;
      }
  }

  if (!load_names (db, path, "SELECT id, name FROM ops", self->ops, error)
      || !load_names (db, path, "SELECT id, name FROM event_types", self->event_types, error))
    return FALSE;

  /* processes */
  {
    g_autoptr (sqlite3_stmt) stmt = cowscope_session_db_prepare (
      db, path,
      "SELECT pid, ppid, exe, cmdline, start_ns, end_ns, end_reason, exit_status,"
      " exit_signal, gpu_status FROM processes ORDER BY pid",
      error);
    if (stmt == NULL)
      return FALSE;
    while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
      {
        CowscopeProcessInfo info = {
          .pid = (guint32) cowscope_session_db_column_int (stmt, 0, 0),
          .ppid = (guint32) cowscope_session_db_column_int (stmt, 1, 0),
          .exe = cowscope_session_db_column_text (stmt, 2),
          .cmdline = cowscope_session_db_column_text (stmt, 3),
          .start_ns = cowscope_session_db_column_int (stmt, 4, -1),
          .end_ns = cowscope_session_db_column_int (stmt, 5, -1),
          .end_reason = cowscope_session_db_column_text (stmt, 6),
          .exit_status = cowscope_session_db_column_int (stmt, 7, -1),
          .exit_signal = cowscope_session_db_column_int (stmt, 8, -1),
          .gpu_status = cowscope_session_db_column_text (stmt, 9),
        };
        g_array_append_val (self->processes, info);
      }
    if (rc != SQLITE_DONE)
      {
        cowscope_session_db_set_error (error, db, rc, path, "processes");
        return FALSE;
      }
  }

  /* thread names */
  {
    g_autoptr (sqlite3_stmt) stmt =
      cowscope_session_db_prepare (db, path, "SELECT pid, tid, name FROM threads", error);
    if (stmt == NULL)
      return FALSE;
    while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
      {
        gint64 key = (gint64) (((guint64) cowscope_session_db_column_int (stmt, 0, 0) << 32)
                               | ((guint64) cowscope_session_db_column_int (stmt, 1, 0)
                                  & 0xffffffffull));
        char *name = cowscope_session_db_column_text (stmt, 2);
        if (name != NULL)
          g_hash_table_replace (self->thread_names, g_memdup2 (&key, sizeof key), name);
      }
    if (rc != SQLITE_DONE)
      {
        cowscope_session_db_set_error (error, db, rc, path, "threads");
        return FALSE;
      }
  }

  /* bounds: min/max on rowid and (with the finalizer's index) on ts are
   * O(log n), but only one per SELECT (SQLite scans the whole table or
   * index for "min(x), max(x)" in one query). */
  gint64 first_seq, last_seq, min_ts, max_ts, cuda_min, cuda_max;
  if (!query_pair (db, path,
                   "SELECT (SELECT min(seq) FROM events), (SELECT max(seq) FROM events)",
                   &first_seq, &last_seq, 0, error)
      || !query_pair (db, path,
                      "SELECT (SELECT min(ts) FROM events), (SELECT max(ts) FROM events)",
                      &min_ts, &max_ts, G_MININT64, error)
      || !query_pair (db, path,
                      "SELECT (SELECT min(start_ns) FROM cuda_activity),"
                      " (SELECT max(end_ns) FROM cuda_activity)",
                      &cuda_min, &cuda_max, G_MININT64, error))
    return FALSE;
  if (min_ts == G_MININT64)
    min_ts = max_ts = cuda_min != G_MININT64 ? cuda_min : 0;
  if (cuda_min != G_MININT64)
    {
      min_ts = MIN (min_ts, cuda_min);
      max_ts = MAX (max_ts, cuda_max);
    }
  if (max_ts < min_ts)
    max_ts = min_ts;
  self->start_ns = min_ts;
  self->end_ns = max_ts;
  self->first_seq = first_seq;
  self->last_seq = last_seq;

  g_autoptr (GHashTable) lanes = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free,
                                                        lane_build_free);
  Counters counters = { 0 };
  cowscope_counter_rules_init (&counters.rules);
  for (guint i = 0; i < COWSCOPE_N_COUNTERS; i++)
    counters.series[i] = cowscope_counter_series_new (min_ts, max_ts, COUNTER_BINS);

  gboolean ok = FALSE;
  gboolean packed = cowscope_session_db_has_packed_index (db);
  sqlite3_stmt *scan = NULL;
  if (packed)
    {
      if (!load_packed (self, db, lanes, &counters, max_ts, cancellable, progress, error))
        goto out;
      goto lanes_done;
    }
  scan = cowscope_session_db_prepare (
    db, path, "SELECT seq, ts, pid, tid, type, aux, v0, v1, v2, v3 FROM events", error);
  if (scan == NULL)
    goto out;
  {
    double span = (double) MAX (last_seq - first_seq + 1, 1);
    guint64 n = 0;
    LaneBuild *last = NULL;
    while ((rc = sqlite3_step (scan)) == SQLITE_ROW)
      {
        gint64 seq = sqlite3_column_int64 (scan, 0);
        gint64 ts = sqlite3_column_int64 (scan, 1);
        guint32 pid = (guint32) sqlite3_column_int64 (scan, 2);
        gint64 tid = sqlite3_column_int64 (scan, 3);
        gint64 type = sqlite3_column_int64 (scan, 4);
        gint64 aux = sqlite3_column_int64 (scan, 5);
        gint64 v[4];
        for (int k = 0; k < 4; k++)
          v[k] = sqlite3_column_int64 (scan, 6 + k); /* NULL reads as 0 */
        if (last == NULL || last->pid != pid || last->tid != tid)
          last = lane_for (lanes, pid, tid, -1);
        cowscope_lane_index_append (last->index, ts, seq, cowscope_lane_rules_event_kind (type, aux),
                                    cowscope_lane_rules_event_bytes (type, v));
        counters_apply (&counters, pid, ts, type, v);
        if ((++n & 0xffff) == 0)
          {
            if (g_cancellable_set_error_if_cancelled (cancellable, error))
              goto out;
            progress_report (progress, 0.9 * (double) (seq - first_seq) / span);
          }
      }
    if (rc != SQLITE_DONE)
      {
        cowscope_session_db_set_error (error, db, rc, path, "events");
        goto out;
      }
    self->n_events = n;
  }
  g_clear_pointer (&scan, sqlite3_finalize);

  /* Spans on thread lanes: materializations and user ranges. */
  scan = cowscope_session_db_prepare (
    db, path, "SELECT seq, pid, tid, begin_ts, end_ts, kind, nbytes FROM materializations",
    error);
  if (scan == NULL)
    goto out;
  while ((rc = sqlite3_step (scan)) == SQLITE_ROW)
    {
      gint64 begin = cowscope_session_db_column_int (scan, 3, G_MININT64);
      if (begin == G_MININT64)
        continue;
      gint64 kind = cowscope_session_db_column_int (scan, 5, 0);
      LaneBuild *build = lane_for (lanes, (guint32) cowscope_session_db_column_int (scan, 1, 0),
                                   cowscope_session_db_column_int (scan, 2, 0), -1);
      cowscope_lane_index_add_span (build->index, begin,
                                    cowscope_session_db_column_int (scan, 4, begin),
                                    sqlite3_column_int64 (scan, 0),
                                    cowscope_lane_rules_event_kind (COWSCOPE_EV_MATERIALIZE_END, kind),
                                    (guint64) cowscope_session_db_column_int (scan, 6, 0));
    }
  if (rc != SQLITE_DONE)
    {
      cowscope_session_db_set_error (error, db, rc, path, "materializations");
      goto out;
    }
  g_clear_pointer (&scan, sqlite3_finalize);

  scan = cowscope_session_db_prepare (db, path,
                                      "SELECT id, pid, tid, begin_ts, end_ts FROM ranges", error);
  if (scan == NULL)
    goto out;
  while ((rc = sqlite3_step (scan)) == SQLITE_ROW)
    {
      gint64 begin = cowscope_session_db_column_int (scan, 3, G_MININT64);
      if (begin == G_MININT64)
        continue;
      LaneBuild *build = lane_for (lanes, (guint32) cowscope_session_db_column_int (scan, 1, 0),
                                   cowscope_session_db_column_int (scan, 2, 0), -1);
      cowscope_lane_index_add_span (build->index, begin,
                                    cowscope_session_db_column_int (scan, 4, max_ts),
                                    sqlite3_column_int64 (scan, 0), COWSCOPE_ITEM_RANGE, 0);
    }
  if (rc != SQLITE_DONE)
    {
      cowscope_session_db_set_error (error, db, rc, path, "ranges");
      goto out;
    }
  g_clear_pointer (&scan, sqlite3_finalize);

  /* CUDA streams. */
  scan = cowscope_session_db_prepare (
    db, path,
    "SELECT a.id, a.pid, a.device_id, a.stream_id, a.start_ns, a.end_ns, a.bytes, k.name"
    " FROM cuda_activity a LEFT JOIN cuda_kinds k ON k.id = a.kind",
    error);
  if (scan == NULL)
    goto out;
  while ((rc = sqlite3_step (scan)) == SQLITE_ROW)
    {
      gint64 start = cowscope_session_db_column_int (scan, 4, G_MININT64);
      if (start == G_MININT64)
        continue;
      LaneBuild *build = lane_for (lanes, (guint32) cowscope_session_db_column_int (scan, 1, 0),
                                   cowscope_session_db_column_int (scan, 3, 0),
                                   MAX (cowscope_session_db_column_int (scan, 2, 0), 0));
      guint8 kind = cowscope_lane_rules_cuda_kind ((const char *) sqlite3_column_text (scan, 7));
      gint64 id = sqlite3_column_int64 (scan, 0);
      guint64 bytes = (guint64) cowscope_session_db_column_int (scan, 6, 0);
      cowscope_lane_index_append (build->index, start, id, kind, bytes);
      cowscope_lane_index_add_span (build->index, start,
                                    cowscope_session_db_column_int (scan, 5, start), id, kind,
                                    bytes);
    }
  if (rc != SQLITE_DONE)
    {
      cowscope_session_db_set_error (error, db, rc, path, "cuda_activity");
      goto out;
    }
  g_clear_pointer (&scan, sqlite3_finalize);

lanes_done:
  /* Lanes in order: threads, then CUDA streams, then counters. */
  {
    g_autoptr (GPtrArray) builds = g_ptr_array_new_with_free_func (lane_build_free);
    GHashTableIter iter;
    gpointer key, value;
    g_hash_table_iter_init (&iter, lanes);
    while (g_hash_table_iter_next (&iter, &key, &value))
      {
        g_ptr_array_add (builds, value);
        g_hash_table_iter_steal (&iter);
        g_free (key);
      }
    g_ptr_array_sort (builds, compare_lane_builds);
    for (int pass = 0; pass < 2; pass++)
      for (guint i = 0; i < builds->len; i++)
        {
          LaneBuild *build = g_ptr_array_index (builds, i);
          gboolean cuda = build->device >= 0;
          if (cuda != (pass == 1) || build->index == NULL)
            continue;
          cowscope_lane_index_finish (build->index);
          g_autofree char *title = NULL;
          if (cuda)
            title = g_strdup_printf (_("CUDA stream %" PRId64 " (device %"
                                       PRId64 ", process %u)"),
                                     build->tid, build->device, build->pid);
          else
            {
              const char *name = cowscope_session_document_thread_name (self, build->pid,
                                                                        build->tid);
              title = name ? g_strdup_printf (_("%s (thread %" PRId64 ")"), name,
                                              build->tid)
                           : g_strdup_printf (_("Thread %" PRId64), build->tid);
            }
          g_autoptr (CowscopeTimelineLane) lane = cowscope_timeline_lane_new_packed (
            cuda ? COWSCOPE_LANE_CUDA_STREAM : COWSCOPE_LANE_THREAD, title, build->pid,
            build->tid, cuda ? build->device : -1, g_steal_pointer (&build->index),
            g_steal_pointer (&build->packed));
          g_list_store_append (self->lanes, lane);
        }
  }
  {
    static const char *const titles[COWSCOPE_N_COUNTERS] = {
      N_("Bytes allocated"), N_("Bytes shared lazily"), N_("Live storages"),
    };
    for (guint i = 0; i < COWSCOPE_N_COUNTERS; i++)
      {
        if (!packed)
          cowscope_counter_series_finish (counters.series[i]);
        self->counters[i] = cowscope_timeline_lane_new_counter ((CowscopeCounterKind) i,
                                                                _(titles[i]),
                                                                g_steal_pointer (&counters.series[i]));
        g_list_store_append (self->lanes, self->counters[i]);
      }
  }
  if (!cowscope_ipc_lanes_load (self, db, path, max_ts, self->lanes, error))
    goto out;
  progress_report (progress, 1.0);
  ok = TRUE;

out:
  g_clear_pointer (&scan, sqlite3_finalize);
  cowscope_counter_rules_clear (&counters.rules);
  for (guint i = 0; i < COWSCOPE_N_COUNTERS; i++)
    cowscope_counter_series_free (counters.series[i]);
  return ok;
}

/* Opens, validates and indexes @path; the calling thread does the work. */
static CowscopeSessionDocument *
load_with_progress (const char *path, gboolean eager, GCancellable *cancellable,
                    Progress *progress, GError **error)
{
  g_autoptr (CowscopeSessionDocument) self =
    g_object_new (COWSCOPE_TYPE_SESSION_DOCUMENT, NULL);
  self->path = g_strdup (path);
  self->eager = eager;
  sqlite3 *db = cowscope_session_db_open (path, TRUE, NULL, error);
  if (db == NULL)
    return NULL;
  if (!load (self, db, cancellable, progress, error))
    {
      sqlite3_close (db);
      return NULL;
    }
  cowscope_session_document_release_db (self, db);
  return g_steal_pointer (&self);
}

/* Loads synchronously in the calling thread. */
CowscopeSessionDocument *
cowscope_session_document_load (const char *path, GCancellable *cancellable, GError **error)
{
  g_return_val_if_fail (path != NULL, NULL);
  return load_with_progress (path, FALSE, cancellable, NULL, error);
}

/* Loads as before lazy lanes: every chunk decoded at open. */
CowscopeSessionDocument *
cowscope_session_document_load_eager (const char *path, GError **error)
{
  g_return_val_if_fail (path != NULL, NULL);
  return load_with_progress (path, TRUE, NULL, NULL, error);
}

static void
load_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  (void) source;
  Progress *progress = task_data;
  GError *error = NULL;
  const char *path = g_object_get_data (G_OBJECT (task), "cowscope-path");
  CowscopeSessionDocument *doc = load_with_progress (path, FALSE, cancellable, progress, &error);
  if (doc == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, doc, g_object_unref);
}

/* Starts the load in a GTask thread. */
void
cowscope_session_document_load_async (const char *path, GCancellable *cancellable,
                                      CowscopeLoadProgressFunc progress_func,
                                      gpointer progress_data, GDestroyNotify progress_notify,
                                      GAsyncReadyCallback callback, gpointer user_data)
{
  g_return_if_fail (path != NULL);
  g_autoptr (GTask) task = g_task_new (NULL, cancellable, callback, user_data);
  g_task_set_source_tag (task, cowscope_session_document_load_async);
  g_task_set_name (task, "[cowscope] load session");
  Progress *progress = g_new0 (Progress, 1);
  g_mutex_init (&progress->lock);
  progress->refs = 1;
  progress->context = g_main_context_ref_thread_default ();
  progress->func = progress_func;
  progress->data = progress_data;
  progress->notify = progress_notify;
  g_object_set_data_full (G_OBJECT (task), "cowscope-path", g_strdup (path), g_free);
  g_task_set_task_data (task, progress, progress_unref);
  g_task_run_in_thread (task, load_thread);
}

/* The document, or NULL with @error (as the worker reported it). */
CowscopeSessionDocument *
cowscope_session_document_load_finish (GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, NULL), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}

/* ---- accessors -------------------------------------------------------- */

/* The session file's path. */
const char *
cowscope_session_document_get_path (CowscopeSessionDocument *self)
{
  g_return_val_if_fail (COWSCOPE_IS_SESSION_DOCUMENT (self), NULL);
  return self->path;
}

/* Earliest event or CUDA record time. */
gint64
cowscope_session_document_get_start_ns (CowscopeSessionDocument *self)
{
  g_return_val_if_fail (COWSCOPE_IS_SESSION_DOCUMENT (self), 0);
  return self->start_ns;
}

/* Latest event time or CUDA record end. */
gint64
cowscope_session_document_get_end_ns (CowscopeSessionDocument *self)
{
  g_return_val_if_fail (COWSCOPE_IS_SESSION_DOCUMENT (self), 0);
  return self->end_ns;
}

/* Number of rows in `events`. */
guint64
cowscope_session_document_get_n_events (CowscopeSessionDocument *self)
{
  g_return_val_if_fail (COWSCOPE_IS_SESSION_DOCUMENT (self), 0);
  return self->n_events;
}

/* Smallest events.seq (0 when there are no events). */
gint64
cowscope_session_document_get_first_seq (CowscopeSessionDocument *self)
{
  g_return_val_if_fail (COWSCOPE_IS_SESSION_DOCUMENT (self), 0);
  return self->first_seq;
}

/* Largest events.seq (0 when there are no events). */
gint64
cowscope_session_document_get_last_seq (CowscopeSessionDocument *self)
{
  g_return_val_if_fail (COWSCOPE_IS_SESSION_DOCUMENT (self), 0);
  return self->last_seq;
}

/* meta.@key as text, or NULL; valid as long as @self. */
const char *
cowscope_session_document_get_meta (CowscopeSessionDocument *self, const char *key)
{
  g_return_val_if_fail (COWSCOPE_IS_SESSION_DOCUMENT (self), NULL);
  return g_hash_table_lookup (self->meta, key);
}

/* Number of processes. */
guint
cowscope_session_document_get_n_processes (CowscopeSessionDocument *self)
{
  g_return_val_if_fail (COWSCOPE_IS_SESSION_DOCUMENT (self), 0);
  return self->processes->len;
}

/* The process at @position (by pid), or NULL past the end. */
const CowscopeProcessInfo *
cowscope_session_document_get_process (CowscopeSessionDocument *self, guint position)
{
  g_return_val_if_fail (COWSCOPE_IS_SESSION_DOCUMENT (self), NULL);
  if (position >= self->processes->len)
    return NULL;
  return &g_array_index (self->processes, CowscopeProcessInfo, position);
}

/* The lanes; owned by @self. */
GListModel *
cowscope_session_document_get_lanes (CowscopeSessionDocument *self)
{
  g_return_val_if_fail (COWSCOPE_IS_SESSION_DOCUMENT (self), NULL);
  return G_LIST_MODEL (self->lanes);
}

/* A counter lane; owned by @self. */
CowscopeTimelineLane *
cowscope_session_document_get_counter_lane (CowscopeSessionDocument *self,
                                            CowscopeCounterKind counter)
{
  g_return_val_if_fail (COWSCOPE_IS_SESSION_DOCUMENT (self), NULL);
  g_return_val_if_fail (counter >= 0 && counter < COWSCOPE_N_COUNTERS, NULL);
  return self->counters[counter];
}

/* One indexed seek: the last event at or before @t. */
gint64
cowscope_session_document_seq_at_time (CowscopeSessionDocument *self, gint64 t, GError **error)
{
  g_return_val_if_fail (COWSCOPE_IS_SESSION_DOCUMENT (self), -1);
  sqlite3 *db = cowscope_session_document_acquire_db (self, error);
  if (db == NULL)
    return -1;
  gint64 seq = self->first_seq - 1;
  g_autoptr (sqlite3_stmt) stmt = cowscope_session_db_prepare (
    db, self->path, "SELECT seq FROM events WHERE ts <= ?1 ORDER BY ts DESC, seq DESC LIMIT 1",
    error);
  if (stmt != NULL)
    {
      sqlite3_bind_int64 (stmt, 1, t);
      int rc = sqlite3_step (stmt);
      if (rc == SQLITE_ROW)
        seq = sqlite3_column_int64 (stmt, 0);
      else if (rc != SQLITE_DONE)
        {
          cowscope_session_db_set_error (error, db, rc, self->path, "seq at time");
          seq = -1;
        }
    }
  else
    seq = -1;
  g_clear_pointer (&stmt, sqlite3_finalize);
  cowscope_session_document_release_db (self, db);
  return seq;
}

/* An op's name, or "op N". */
const char *
cowscope_session_document_op_name (CowscopeSessionDocument *self, gint64 op)
{
  g_return_val_if_fail (COWSCOPE_IS_SESSION_DOCUMENT (self), "");
  const char *name = g_hash_table_lookup (self->ops, &op);
  return name ? name : "unknown";
}

/* An event type's name, or "unknown". */
const char *
cowscope_session_document_event_type_name (CowscopeSessionDocument *self, gint64 type)
{
  g_return_val_if_fail (COWSCOPE_IS_SESSION_DOCUMENT (self), "");
  const char *name = g_hash_table_lookup (self->event_types, &type);
  return name ? name : "unknown";
}

/* A thread's recorded name, or NULL. */
const char *
cowscope_session_document_thread_name (CowscopeSessionDocument *self, guint32 pid, gint64 tid)
{
  g_return_val_if_fail (COWSCOPE_IS_SESSION_DOCUMENT (self), NULL);
  gint64 key = (gint64) (((guint64) pid << 32) | ((guint64) tid & 0xffffffffull));
  return g_hash_table_lookup (self->thread_names, &key);
}

/* The first error a timeline query met, once (see the header). */
GError *
cowscope_session_document_take_query_error (CowscopeSessionDocument *self)
{
  g_return_val_if_fail (COWSCOPE_IS_SESSION_DOCUMENT (self), NULL);
  return self->store != NULL ? cowscope_chunk_store_take_error (self->store) : NULL;
}

/* Bounds the decoded chunks kept (see the private header). */
void
cowscope_session_document_set_chunk_budget (CowscopeSessionDocument *self, gsize bytes)
{
  g_return_if_fail (COWSCOPE_IS_SESSION_DOCUMENT (self));
  if (self->store != NULL)
    cowscope_chunk_store_set_budget (self->store, bytes);
}

/* What the decoded-chunk store holds (zeros without one). */
void
cowscope_session_document_get_chunk_stats (CowscopeSessionDocument *self,
                                           CowscopeChunkStoreStats *stats)
{
  g_return_if_fail (COWSCOPE_IS_SESSION_DOCUMENT (self));
  memset (stats, 0, sizeof *stats);
  if (self->store != NULL)
    cowscope_chunk_store_get_stats (self->store, stats);
}

/* ---- live snapshots ---------------------------------------------------- */

/* A document over lanes built elsewhere (cowscope-live-session.c): takes
 * a reference on each lane; @counters (may hold NULLs) are appended
 * after @lanes.  Nothing is read from @path. */
CowscopeSessionDocument *
cowscope_session_document_new_snapshot (const char *path, gint64 start_ns, gint64 end_ns,
                                        guint64 n_events, GPtrArray *lanes,
                                        CowscopeTimelineLane *const *counters)
{
  g_return_val_if_fail (path != NULL, NULL);
  CowscopeSessionDocument *self = g_object_new (COWSCOPE_TYPE_SESSION_DOCUMENT, NULL);
  self->path = g_strdup (path);
  self->start_ns = start_ns;
  self->end_ns = MAX (end_ns, start_ns);
  self->n_events = n_events;
  self->first_seq = n_events > 0 ? 1 : 0;
  self->last_seq = (gint64) n_events;
  g_hash_table_insert (self->meta, g_strdup ("finalized"), g_strdup ("0"));
  for (guint i = 0; lanes != NULL && i < lanes->len; i++)
    g_list_store_append (self->lanes, g_ptr_array_index (lanes, i));
  for (guint i = 0; counters != NULL && i < COWSCOPE_N_COUNTERS; i++)
    if (counters[i] != NULL)
      {
        self->counters[i] = g_object_ref (counters[i]);
        g_list_store_append (self->lanes, counters[i]);
      }
  return self;
}
