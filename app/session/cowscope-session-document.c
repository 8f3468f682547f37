/* cowscope-session-document.c — loading a session and indexing its lanes. */
#include "cowscope-session-document-private.h"

#include <glib/gi18n-lib.h>
#include <glib/gstdio.h>
#include <inttypes.h>
#include <string.h>

#include "cowscope-format-check.h"
#include "cowscope-format-counters.h"
#include "cowscope-format-finalize.h"
#include "cowscope-format-open.h"
#include "cowscope-format-timeline.h"
#include "cowscope-ipc-private.h"
#include "cowscope-lane-index.h"
#include "cowscope-packed-lane.h"
#include "cowscope-packed-records.h"
#include "cowscope-timeline-lane-private.h"

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
  CowscopeChunkStore *store; /* the decoded chunks of every lane */
  char *db_path;            /* what connections open: path, or copy_path */
  char *copy_path;          /* a finalized copy of an older session, or NULL */
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
  g_free (info->group);
}

static void
cowscope_session_document_finalize (GObject *object)
{
  CowscopeSessionDocument *self = COWSCOPE_SESSION_DOCUMENT (object);
  g_free (self->path);
  g_free (self->db_path);
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
  if (self->copy_path != NULL)
    g_unlink (self->copy_path);
  g_free (self->copy_path);
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
    db = cowscope_format_open (self->db_path, COWSCOPE_FORMAT_OPEN_FINALIZED, NULL, error);
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
  g_autoptr (sqlite3_stmt) stmt = cowscope_format_statement (db, path, sql, error);
  if (stmt == NULL)
    return FALSE;
  int rc;
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      char *name = cowscope_format_column_text (stmt, 1);
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
      cowscope_format_set_error (error, db, rc, path, sql);
      return FALSE;
    }
  return TRUE;
}

/* The meta table, the op and event type names. */
static gboolean
load_meta (CowscopeSessionDocument *self, sqlite3 *db, GError **error)
{
  g_autoptr (sqlite3_stmt) stmt =
    cowscope_format_statement (db, self->path, "SELECT key, value FROM meta", error);
  if (stmt == NULL)
    return FALSE;
  int rc;
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      char *key = cowscope_format_column_text (stmt, 0);
      char *value = cowscope_format_column_text (stmt, 1);
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
      cowscope_format_set_error (error, db, rc, self->path, "meta");
      return FALSE;
    }
  return load_names (db, self->path, "SELECT id, name FROM ops", self->ops, error)
         && load_names (db, self->path, "SELECT id, name FROM event_types", self->event_types,
                        error);
}

/* The processes, by pid; in a merged session with the member each came
 * from (sessions before merging existed lack the tables). */
static gboolean
load_processes (CowscopeSessionDocument *self, sqlite3 *db, GError **error)
{
  gboolean merged = FALSE;
  {
    g_autoptr (sqlite3_stmt) tables = cowscope_format_statement (
      db, self->path,
      "SELECT count (*) = 2 FROM sqlite_master WHERE type = 'table'"
      " AND name IN ('merged_processes', 'merged_sessions')",
      error);
    if (tables == NULL)
      return FALSE;
    merged = sqlite3_step (tables) == SQLITE_ROW && sqlite3_column_int (tables, 0) == 1;
  }
  g_autoptr (sqlite3_stmt) stmt = cowscope_format_statement (
    db, self->path,
    merged ? "SELECT p.pid, p.ppid, p.exe, p.cmdline, p.start_ns, p.end_ns, p.end_reason,"
             " p.exit_status, p.exit_signal, p.gpu_status, s.label, m.original_pid"
             " FROM processes p LEFT JOIN merged_processes m ON m.pid = p.pid"
             " LEFT JOIN merged_sessions s ON s.id = m.session_id ORDER BY p.pid"
           : "SELECT pid, ppid, exe, cmdline, start_ns, end_ns, end_reason, exit_status,"
             " exit_signal, gpu_status, NULL, NULL FROM processes ORDER BY pid",
    error);
  if (stmt == NULL)
    return FALSE;
  int rc;
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      CowscopeProcessInfo info = {
        .pid = (guint32) cowscope_format_column_int (stmt, 0, 0),
        .ppid = (guint32) cowscope_format_column_int (stmt, 1, 0),
        .exe = cowscope_format_column_text (stmt, 2),
        .cmdline = cowscope_format_column_text (stmt, 3),
        .start_ns = cowscope_format_column_int (stmt, 4, -1),
        .end_ns = cowscope_format_column_int (stmt, 5, -1),
        .end_reason = cowscope_format_column_text (stmt, 6),
        .exit_status = cowscope_format_column_int (stmt, 7, -1),
        .exit_signal = cowscope_format_column_int (stmt, 8, -1),
        .gpu_status = cowscope_format_column_text (stmt, 9),
        .group = cowscope_format_column_text (stmt, 10),
      };
      info.original_pid = (guint32) cowscope_format_column_int (stmt, 11, info.pid);
      g_array_append_val (self->processes, info);
    }
  if (rc != SQLITE_DONE)
    {
      cowscope_format_set_error (error, db, rc, self->path, "processes");
      return FALSE;
    }
  return TRUE;
}

/* The threads' names. */
static gboolean
load_thread_names (CowscopeSessionDocument *self, sqlite3 *db, GError **error)
{
  g_autoptr (sqlite3_stmt) stmt =
    cowscope_format_statement (db, self->path, "SELECT pid, tid, name FROM threads", error);
  if (stmt == NULL)
    return FALSE;
  int rc;
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      gint64 key = (gint64) (((guint64) cowscope_format_column_int (stmt, 0, 0) << 32)
                             | ((guint64) cowscope_format_column_int (stmt, 1, 0)
                                & 0xffffffffull));
      char *name = cowscope_format_column_text (stmt, 2);
      if (name != NULL)
        g_hash_table_replace (self->thread_names, g_memdup2 (&key, sizeof key), name);
    }
  if (rc != SQLITE_DONE)
    {
      cowscope_format_set_error (error, db, rc, self->path, "threads");
      return FALSE;
    }
  return TRUE;
}

/* Reads one integer result of @sql into @a and @b (NULL -> fallback). */
static gboolean
query_pair (sqlite3 *db, const char *path, const char *sql, gint64 *a, gint64 *b,
            gint64 fallback, GError **error)
{
  g_autoptr (sqlite3_stmt) stmt = cowscope_format_statement (db, path, sql, error);
  if (stmt == NULL)
    return FALSE;
  int rc = sqlite3_step (stmt);
  if (rc != SQLITE_ROW)
    {
      cowscope_format_set_error (error, db, rc, path, sql);
      return FALSE;
    }
  *a = cowscope_format_column_int (stmt, 0, fallback);
  *b = cowscope_format_column_int (stmt, 1, fallback);
  return TRUE;
}

/* The seq range of the events and the session's time span. */
static gboolean
load_bounds (CowscopeSessionDocument *self, sqlite3 *db, GError **error)
{
  return query_pair (db, self->path,
                     "SELECT (SELECT min(seq) FROM events), (SELECT max(seq) FROM events)",
                     &self->first_seq, &self->last_seq, 0, error)
         && cowscope_format_query_bounds (db, self->path, &self->start_ns, &self->end_ns, error);
}

/* ---- timeline lanes ----------------------------------------------------- */

/* One thread or CUDA lane while it is read. */
typedef struct {
  guint32 pid;
  gint64 tid;
  gint64 device;              /* -1: a thread lane */
  gboolean cuda;
  CowscopeLaneIndex *index;   /* its spans (and, eager, its instants) */
  CowscopePackedLane *packed; /* its instants, read lazily */
} LaneBuild;

static void
lane_build_free (gpointer data)
{
  LaneBuild *build = data;
  cowscope_lane_index_free (build->index);
  cowscope_packed_lane_free (build->packed);
  g_free (build);
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

/* What loading the timeline needs besides the document. */
typedef struct {
  sqlite3 *db;
  GHashTable *by_id;     /* timeline_lanes.id -> LaneBuild */
  guint8 cuda_kinds[256]; /* cuda_activity.kind -> CowscopeItemKind */
  guint64 n_chunks;
  GCancellable *cancellable;
  Progress *progress;
} LaneLoad;

/* The item kind of each CUDA kind, from the session's cuda_kinds names. */
static gboolean
load_cuda_kinds (CowscopeSessionDocument *self, LaneLoad *load, GError **error)
{
  g_autoptr (GHashTable) names = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free,
                                                        g_free);
  if (!load_names (load->db, self->path, "SELECT id, name FROM cuda_kinds", names, error))
    return FALSE;
  for (gint64 code = 0; code < 256; code++)
    load->cuda_kinds[code] = cowscope_timeline_cuda_kind (g_hash_table_lookup (names, &code));
  return TRUE;
}

/* timeline_lanes: one LaneBuild per row; the event count. */
static gboolean
load_lane_rows (CowscopeSessionDocument *self, LaneLoad *load, GError **error)
{
  g_autoptr (sqlite3_stmt) q = cowscope_format_statement (
    load->db, self->path,
    "SELECT id, pid, tid, device, n_instants,"
    " (SELECT count(*) FROM timeline_chunks c WHERE c.lane = l.id) FROM timeline_lanes l",
    error);
  if (q == NULL)
    return FALSE;
  int rc;
  while ((rc = sqlite3_step (q)) == SQLITE_ROW)
    {
      gint64 id = sqlite3_column_int64 (q, 0);
      if (g_hash_table_contains (load->by_id, &id))
        continue;
      LaneBuild *build = g_new0 (LaneBuild, 1);
      build->pid = (guint32) cowscope_format_column_int (q, 1, 0);
      build->tid = cowscope_format_column_int (q, 2, 0);
      build->device = MAX (cowscope_format_column_int (q, 3, -1), -1);
      build->cuda = build->device >= 0;
      build->index = cowscope_lane_index_new ();
      if (!self->eager)
        build->packed = cowscope_packed_lane_new (self->store, id, build->cuda);
      g_hash_table_insert (load->by_id, g_memdup2 (&id, sizeof id), build);
      if (!build->cuda)
        self->n_events += (guint64) cowscope_format_column_int (q, 4, 0);
      load->n_chunks += (guint64) cowscope_format_column_int (q, 5, 0);
    }
  if (rc != SQLITE_DONE)
    {
      cowscope_format_set_error (error, load->db, rc, self->path, "timeline_lanes");
      return FALSE;
    }
  return TRUE;
}

static void
set_damaged (GError **error, const char *path, const char *what)
{
  g_set_error (error, COWSCOPE_SESSION_ERROR, COWSCOPE_SESSION_ERROR_DAMAGED,
               _("The session “%s” is damaged (%s)"), path, what);
}

/* timeline_chunks' rows, not their BLOBs (the last column, never read):
 * each lane learns its chunks' times and counts, and decodes a chunk when
 * a query first needs it. */
static gboolean
load_chunk_rows (CowscopeSessionDocument *self, LaneLoad *load, GError **error)
{
  g_autoptr (sqlite3_stmt) q = cowscope_format_statement (
    load->db, self->path,
    "SELECT lane, chunk, first_ts, last_ts, n FROM timeline_chunks ORDER BY lane, chunk", error);
  if (q == NULL)
    return FALSE;
  int rc;
  while ((rc = sqlite3_step (q)) == SQLITE_ROW)
    {
      gint64 lane = sqlite3_column_int64 (q, 0);
      LaneBuild *build = g_hash_table_lookup (load->by_id, &lane);
      if (build == NULL)
        continue;
      if (!cowscope_packed_lane_add_chunk (build->packed, sqlite3_column_int64 (q, 1),
                                           cowscope_format_column_int (q, 2, 0),
                                           cowscope_format_column_int (q, 3, -1),
                                           cowscope_format_column_int (q, 4, 0)))
        {
          set_damaged (error, self->path, "timeline_chunks");
          return FALSE;
        }
    }
  if (rc != SQLITE_DONE)
    {
      cowscope_format_set_error (error, load->db, rc, self->path, "timeline_chunks");
      return FALSE;
    }
  progress_report (load->progress, 0.5);
  return TRUE;
}

/* Every chunk's instants decoded into the lanes' in-memory indexes (the
 * design before lazy lanes, kept to compare with). */
static gboolean
load_instants_eagerly (CowscopeSessionDocument *self, LaneLoad *load, GError **error)
{
  g_autoptr (sqlite3_stmt) q = cowscope_format_statement (
    load->db, self->path, "SELECT lane, instants FROM timeline_chunks ORDER BY lane, chunk", error);
  if (q == NULL)
    return FALSE;
  guint64 done = 0;
  int rc;
  while ((rc = sqlite3_step (q)) == SQLITE_ROW)
    {
      gint64 lane = sqlite3_column_int64 (q, 0);
      LaneBuild *build = g_hash_table_lookup (load->by_id, &lane);
      if (build == NULL)
        continue;
      CowscopePackedReader r;
      cowscope_packed_reader_init (&r, sqlite3_column_blob (q, 1),
                                   (gsize) sqlite3_column_bytes (q, 1));
      CowscopeInstant in = { 0 };
      while (!cowscope_packed_reader_done (&r))
        {
          cowscope_instant_read (&r, &in, build->cuda);
          if (!cowscope_packed_reader_ok (&r) || !cowscope_instant_valid (&in))
            {
              cowscope_packed_reader_fail (&r);
              break;
            }
          guint8 kind = build->cuda ? load->cuda_kinds[in.code]
                                    : cowscope_timeline_event_kind (in.code, in.aux);
          cowscope_lane_index_append (build->index, in.ts, in.id, kind, in.bytes);
        }
      if (!cowscope_packed_reader_ok (&r))
        {
          set_damaged (error, self->path, "timeline");
          return FALSE;
        }
      if (g_cancellable_set_error_if_cancelled (load->cancellable, error))
        return FALSE;
      progress_report (load->progress, 0.9 * (double) ++done / (double) MAX (load->n_chunks, 1));
    }
  if (rc != SQLITE_DONE)
    {
      cowscope_format_set_error (error, load->db, rc, self->path, "timeline_chunks");
      return FALSE;
    }
  return TRUE;
}

/* timeline_spans: materializations, user ranges and CUDA records, into
 * the lanes' in-memory indexes; a span still open ends with the session. */
static gboolean
load_spans (CowscopeSessionDocument *self, LaneLoad *load, GError **error)
{
  g_autoptr (sqlite3_stmt) q = cowscope_format_statement (
    load->db, self->path, "SELECT lane, spans FROM timeline_spans ORDER BY lane, chunk", error);
  if (q == NULL)
    return FALSE;
  int rc;
  while ((rc = sqlite3_step (q)) == SQLITE_ROW)
    {
      gint64 lane = sqlite3_column_int64 (q, 0);
      LaneBuild *build = g_hash_table_lookup (load->by_id, &lane);
      if (build == NULL)
        continue;
      CowscopePackedReader r;
      cowscope_packed_reader_init (&r, sqlite3_column_blob (q, 1),
                                   (gsize) sqlite3_column_bytes (q, 1));
      CowscopeSpan span = { 0 };
      while (!cowscope_packed_reader_done (&r))
        {
          cowscope_span_read (&r, &span);
          if (!cowscope_packed_reader_ok (&r) || !cowscope_span_valid (&span))
            {
              cowscope_packed_reader_fail (&r);
              break;
            }
          guint8 kind = build->cuda ? load->cuda_kinds[span.code]
                                    : cowscope_timeline_span_kind (span.code);
          cowscope_lane_index_add_span (build->index, span.start,
                                        span.open ? self->end_ns : span.end, span.id, kind,
                                        span.bytes);
        }
      if (!cowscope_packed_reader_ok (&r))
        {
          set_damaged (error, self->path, "timeline");
          return FALSE;
        }
    }
  if (rc != SQLITE_DONE)
    {
      cowscope_format_set_error (error, load->db, rc, self->path, "timeline_spans");
      return FALSE;
    }
  return TRUE;
}

/* The thread lanes, then the CUDA streams, in (pid, device, tid) order. */
static void
publish_lanes (CowscopeSessionDocument *self, LaneLoad *load)
{
  g_autoptr (GPtrArray) builds = g_ptr_array_new_with_free_func (lane_build_free);
  GHashTableIter iter;
  gpointer key, value;
  g_hash_table_iter_init (&iter, load->by_id);
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
        if (build->cuda != (pass == 1))
          continue;
        cowscope_lane_index_finish (build->index);
        g_autofree char *title = NULL;
        if (build->cuda)
          title = g_strdup_printf (_("CUDA stream %" PRId64 " (device %" PRId64 ", process %u)"),
                                   build->tid, build->device, build->pid);
        else
          {
            const char *name = cowscope_session_document_thread_name (self, build->pid,
                                                                      build->tid);
            title = name ? g_strdup_printf (_("%s (thread %" PRId64 ")"), name, build->tid)
                         : g_strdup_printf (_("Thread %" PRId64), build->tid);
          }
        g_autoptr (CowscopeTimelineLane) lane = cowscope_timeline_lane_new_packed (
          build->cuda ? COWSCOPE_LANE_CUDA_STREAM : COWSCOPE_LANE_THREAD, title, build->pid,
          build->tid, build->cuda ? build->device : -1, g_steal_pointer (&build->index),
          g_steal_pointer (&build->packed));
        g_list_store_append (self->lanes, lane);
      }
}

/* The thread and CUDA lanes, from the packed tables (the instants stay
 * in the file unless the document is eager: cowscope-packed-lane.h). */
static gboolean
load_lanes (CowscopeSessionDocument *self, LaneLoad *load, GError **error)
{
  if (!load_cuda_kinds (self, load, error))
    return FALSE;
  self->store = cowscope_chunk_store_new (self->db_path, self->path, load->cuda_kinds);
  if (!load_lane_rows (self, load, error)
      || !(self->eager ? load_instants_eagerly (self, load, error)
                       : load_chunk_rows (self, load, error))
      || !load_spans (self, load, error))
    return FALSE;
  publish_lanes (self, load);
  return TRUE;
}

/* The three counter tracks, already binned in timeline_counters (a track
 * missing or unreadable there stays at 0). */
static gboolean
load_counters (CowscopeSessionDocument *self, sqlite3 *db, GError **error)
{
  static const char *const titles[COWSCOPE_N_COUNTERS] = {
    N_("Bytes allocated"), N_("Bytes shared lazily"), N_("Live storages"),
  };
  CowscopeCounterBins *bins[COWSCOPE_N_COUNTERS] = { NULL };
  g_autoptr (sqlite3_stmt) q = cowscope_format_statement (
    db, self->path, "SELECT counter, start_ns, end_ns, n_bins, bins FROM timeline_counters",
    error);
  if (q == NULL)
    return FALSE;
  int rc;
  while ((rc = sqlite3_step (q)) == SQLITE_ROW)
    {
      gint64 k = sqlite3_column_int64 (q, 0);
      if (k < 0 || k >= COWSCOPE_N_COUNTERS)
        continue;
      CowscopeCounterBins *read = cowscope_counter_bins_read (
        sqlite3_column_int64 (q, 1), sqlite3_column_int64 (q, 2), sqlite3_column_int64 (q, 3),
        sqlite3_column_blob (q, 4), (gsize) sqlite3_column_bytes (q, 4));
      if (read == NULL)
        continue;
      cowscope_counter_bins_free (bins[k]);
      bins[k] = read;
    }
  if (rc != SQLITE_DONE)
    {
      for (guint i = 0; i < COWSCOPE_N_COUNTERS; i++)
        cowscope_counter_bins_free (bins[i]);
      cowscope_format_set_error (error, db, rc, self->path, "timeline_counters");
      return FALSE;
    }
  for (guint i = 0; i < COWSCOPE_N_COUNTERS; i++)
    {
      if (bins[i] == NULL)
        {
          bins[i] = cowscope_counter_bins_new (self->start_ns, self->end_ns, COWSCOPE_COUNTER_BINS);
          cowscope_counter_bins_finish (bins[i]);
        }
      self->counters[i] = cowscope_timeline_lane_new_counter ((CowscopeCounterKind) i,
                                                              _(titles[i]), bins[i]);
      g_list_store_append (self->lanes, self->counters[i]);
    }
  return TRUE;
}

/* Does the whole load on @db: metadata, processes, lanes. */
static gboolean
load (CowscopeSessionDocument *self, sqlite3 *db, GCancellable *cancellable,
      Progress *progress, GError **error)
{
  g_autoptr (GHashTable) by_id = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free,
                                                        lane_build_free);
  LaneLoad lanes = { .db = db, .by_id = by_id, .cancellable = cancellable,
                     .progress = progress };
  /* The values of the small tables read whole at load are checked
   * (cowscope-format-check.h); their structure is not: quick_check reads
   * every page of the chunks' BLOBs, seconds for a large session. */
  static const char *const loaded_tables[] = {
    "meta", "processes", "threads", "timeline_lanes", "timeline_chunks", "timeline_spans",
    "timeline_counters", "ipc_refs", "ipc_blocks", NULL,
  };
  if (!cowscope_format_check_tables (db, self->path, loaded_tables, COWSCOPE_FORMAT_CHECK_VALUES,
                                     error)
      || !load_meta (self, db, error) || !load_processes (self, db, error)
      || !load_thread_names (self, db, error) || !load_bounds (self, db, error)
      || !load_lanes (self, &lanes, error) || !load_counters (self, db, error)
      || !cowscope_ipc_lanes_load (self, db, self->path, self->end_ns, self->lanes, error))
    return FALSE;
  progress_report (progress, 1.0);
  return TRUE;
}

/* Opens @path for reading: itself when it is current, else a finalized
 * copy of it (an older schema: cowscope-format-finalize.h), whose path
 * becomes self->db_path and is deleted with the document. */
static sqlite3 *
open_current (CowscopeSessionDocument *self, GError **error)
{
  CowscopeFormatInfo info;
  sqlite3 *db = cowscope_format_open (self->path, COWSCOPE_FORMAT_OPEN_FINALIZED, &info, error);
  if (db == NULL || info.current)
    {
      self->db_path = g_strdup (self->path);
      return db;
    }
  sqlite3_close (db);
  self->copy_path = cowscope_format_finalized_copy (self->path, error);
  if (self->copy_path == NULL)
    return NULL;
  self->db_path = g_strdup (self->copy_path);
  return cowscope_format_open (self->db_path, COWSCOPE_FORMAT_OPEN_FINALIZED, NULL, error);
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
  sqlite3 *db = open_current (self, error);
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
  g_autoptr (sqlite3_stmt) stmt = cowscope_format_statement (
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
          cowscope_format_set_error (error, db, rc, self->path, "seq at time");
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
  self->db_path = g_strdup (path);
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
