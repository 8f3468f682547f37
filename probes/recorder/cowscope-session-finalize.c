/* cowscope-session-finalize.c — completes a recorded session. */
#include "cowscope-session-finalize.h"

#include <errno.h>
#include <string.h>

#include "cow-dtype.h"
#include "cow-trace.h"
#include "cowscope-protocol.h"
#include "cowscope-recorder-error.h"
#include "cowscope-session-index.h"
#include "cowscope-session-ipc.h"
#include "cowscope-session-writer.h"
#include "cowscope-symbolizer.h"

static gint64 step_start;

/* Logs how long the step that just ended took (G_MESSAGES_DEBUG). */
static gboolean
step_done (const char *what)
{
  gint64 now = g_get_monotonic_time ();
  g_debug ("finalize: %s took %.3f s", what, (double) (now - step_start) / 1e6);
  step_start = now;
  return TRUE;
}

static gboolean
exec (sqlite3 *db, const char *path, const char *sql, GError **error)
{
  if (sqlite3_exec (db, sql, NULL, NULL, NULL) != SQLITE_OK)
    {
      cowscope_session_set_sqlite_error (error, db, path, "finalize");
      return FALSE;
    }
  return TRUE;
}

static gboolean
prepare (sqlite3 *db, const char *path, const char *sql, sqlite3_stmt **stmt, GError **error)
{
  if (sqlite3_prepare_v2 (db, sql, -1, stmt, NULL) != SQLITE_OK)
    {
      cowscope_session_set_sqlite_error (error, db, path, "finalize");
      return FALSE;
    }
  return TRUE;
}

static gboolean
insert_names (sqlite3 *db, const char *path, const char *table, const char *const *names,
              int n, GError **error)
{
  g_autofree char *sql = g_strdup_printf ("INSERT OR REPLACE INTO %s (id, name) VALUES (?, ?)", table);
  sqlite3_stmt *s;
  if (!prepare (db, path, sql, &s, error))
    return FALSE;
  for (int i = 0; i < n; i++)
    {
      if (!names[i])
        continue;
      sqlite3_bind_int (s, 1, i);
      sqlite3_bind_text (s, 2, names[i], -1, SQLITE_STATIC);
      if (sqlite3_step (s) != SQLITE_DONE)
        {
          cowscope_session_set_sqlite_error (error, db, path, "finalize");
          sqlite3_finalize (s);
          return FALSE;
        }
      sqlite3_reset (s);
    }
  sqlite3_finalize (s);
  return TRUE;
}

/* The enum lookup tables, from the engine's own names where it has them. */
static gboolean
fill_enums (sqlite3 *db, const char *path, GError **error)
{
  const char *event_names[COW_N_EVENT_TYPES];
  for (int i = 0; i < COW_N_EVENT_TYPES; i++)
    event_names[i] = cow_event_type_name ((CowEventType) i);
  const char *op_names[COW_N_OPS];
  for (int i = 0; i < COW_N_OPS; i++)
    op_names[i] = cow_op_name ((CowOp) i);
  static const char *const materialize[] = { NULL, "copy", "steal", "failed" };
  static const char *const eager[] = { NULL, "foreign_data_ptr", "not_simple" };
  static const char *const access[] = { NULL, "read", "write" };
  static const char *const alloc_kinds[] = { "cpu", "cuda", "foreign" };
  static const char *const cuda[] = { NULL, "memcpy", "memset", "kernel", "memory_alloc",
                                      "memory_free", "external_correlation", "runtime_api" };

  if (!insert_names (db, path, "event_types", event_names, COW_N_EVENT_TYPES, error)
      || !insert_names (db, path, "ops", op_names, COW_N_OPS, error)
      || !insert_names (db, path, "materialize_kinds", (const char *const *) materialize,
                        G_N_ELEMENTS (materialize), error)
      || !insert_names (db, path, "eager_reasons", (const char *const *) eager,
                        G_N_ELEMENTS (eager), error)
      || !insert_names (db, path, "access_kinds", (const char *const *) access,
                        G_N_ELEMENTS (access), error)
      || !insert_names (db, path, "allocation_kinds", (const char *const *) alloc_kinds,
                        G_N_ELEMENTS (alloc_kinds), error)
      || !insert_names (db, path, "cuda_kinds", (const char *const *) cuda, G_N_ELEMENTS (cuda),
                        error))
    return FALSE;

  sqlite3_stmt *s;
  if (!prepare (db, path, "INSERT OR REPLACE INTO dtypes (id, name, itemsize) VALUES (?, ?, ?)",
                &s, error))
    return FALSE;
  for (int i = 0; i < COW_N_DTYPES; i++)
    {
      sqlite3_bind_int (s, 1, i);
      sqlite3_bind_text (s, 2, cow_dtype_name ((CowDType) i), -1, SQLITE_STATIC);
      sqlite3_bind_int64 (s, 3, (sqlite3_int64) cow_dtype_size ((CowDType) i));
      if (sqlite3_step (s) != SQLITE_DONE)
        {
          cowscope_session_set_sqlite_error (error, db, path, "finalize");
          sqlite3_finalize (s);
          return FALSE;
        }
      sqlite3_reset (s);
    }
  sqlite3_finalize (s);
  return TRUE;
}

/* Renumbers `events` in time order.  The recorder appends events in the
 * order it drains the rings, one ring (thread) at a time, so `seq` is not
 * time order across threads; everything derived from it (materialization
 * pairs, checkpoints, the graph at an instant) needs it to be.  Ties keep
 * each thread's own order.  A no-op when events are already in order, so
 * finalizing twice costs one scan. */
static gboolean
order_events_by_time (sqlite3 *db, const char *path, GError **error)
{
  sqlite3_stmt *s = NULL;
  gboolean in_order = TRUE;
  g_autofree char *ddl = NULL;

  if (!prepare (db, path,
                "SELECT 1 FROM events a JOIN events b ON b.seq = a.seq + 1"
                " WHERE b.ts < a.ts LIMIT 1", &s, error))
    return FALSE;
  if (sqlite3_step (s) == SQLITE_ROW)
    in_order = FALSE;
  sqlite3_finalize (s);
  if (in_order)
    return TRUE;

  /* The table's own DDL, so the copy keeps `seq INTEGER PRIMARY KEY`. */
  if (!prepare (db, path, "SELECT sql FROM sqlite_master WHERE type = 'table'"
                " AND name = 'events'", &s, error))
    return FALSE;
  if (sqlite3_step (s) == SQLITE_ROW)
    {
      const char *sql = (const char *) sqlite3_column_text (s, 0);
      const char *rest = sql ? strstr (sql, "events") : NULL;
      if (rest != NULL)
        ddl = g_strdup_printf ("CREATE TABLE events_by_time%s", rest + strlen ("events"));
    }
  sqlite3_finalize (s);
  if (ddl == NULL)
    {
      g_set_error (error, COWSCOPE_RECORDER_ERROR, COWSCOPE_RECORDER_ERROR_NOT_SESSION,
                   "cannot finalize '%s': it has no events table", path);
      return FALSE;
    }

  static const char copy_sql[] =
    "INSERT INTO events_by_time (ts, pid, tid, type, op, aux, v0, v1, v2, v3, v4, stack_id)"
    " SELECT ts, pid, tid, type, op, aux, v0, v1, v2, v3, v4, stack_id FROM events"
    " ORDER BY ts, pid, tid, seq;"
    "DROP TABLE events;"
    "ALTER TABLE events_by_time RENAME TO events;";
  return exec (db, path, ddl, error) && exec (db, path, copy_sql, error);
}

/* Indexes for the derivation below and for the app's queries: an
 * object's events, a thread's time range, CUDA activity by time. */
static const char index_sql[] =
  "CREATE INDEX IF NOT EXISTS events_object ON events (type, pid, v0);"
  "CREATE INDEX IF NOT EXISTS events_thread_time ON events (pid, tid, ts);"
  "CREATE INDEX IF NOT EXISTS events_time ON events (ts);"
  "CREATE INDEX IF NOT EXISTS events_stack ON events (stack_id) WHERE stack_id IS NOT NULL;"
  "CREATE INDEX IF NOT EXISTS cuda_time ON cuda_activity (pid, start_ns);"
  "CREATE INDEX IF NOT EXISTS cuda_correlation ON cuda_activity (pid, correlation_id);"
  "CREATE INDEX IF NOT EXISTS cuda_external ON cuda_activity (external_id) WHERE external_id IS NOT NULL;";

static const char derived_index_sql[] =
  "CREATE INDEX IF NOT EXISTS storages_context ON storages (pid, context_id);"
  "CREATE INDEX IF NOT EXISTS storages_allocation ON storages (pid, allocation_id);"
  "CREATE INDEX IF NOT EXISTS tensors_storage ON tensors (pid, storage_id);"
  "CREATE INDEX IF NOT EXISTS lazy_clones_context ON lazy_clones (pid, context_id);"
  "CREATE INDEX IF NOT EXISTS lazy_clones_time ON lazy_clones (ts);"
  "CREATE INDEX IF NOT EXISTS materializations_storage ON materializations (pid, storage_id, seq);"
  "CREATE INDEX IF NOT EXISTS materializations_time ON materializations (begin_ts);"
  "CREATE INDEX IF NOT EXISTS violations_storage ON violations (pid, storage_id);"
  "CREATE INDEX IF NOT EXISTS ranges_thread_time ON ranges (pid, tid, begin_ts);"
  "CREATE INDEX IF NOT EXISTS marks_time ON marks (ts);"
  "CREATE INDEX IF NOT EXISTS checkpoint_seq ON checkpoints (seq);";

/* Derived tables, from the event log.  Event payloads: engine/cow-trace.h. */
static const char derive_sql[] =
  "DELETE FROM allocations; DELETE FROM storages; DELETE FROM tensors; DELETE FROM contexts;"
  "DELETE FROM lazy_clones; DELETE FROM materializations; DELETE FROM violations;"
  "DELETE FROM ranges; DELETE FROM marks;"

  /* ALLOCATION_NEW: v0 id, v1 nbytes, v2 address, v3 device; aux kind */
  "INSERT OR IGNORE INTO allocations"
  " SELECT n.pid, n.v0, n.aux, n.v3, n.v1, n.v2, n.op, n.ts,"
  "  (SELECT min (f.ts) FROM events f WHERE f.type = 2 AND f.pid = n.pid AND f.v0 = n.v0)"
  " FROM events n WHERE n.type = 1 ORDER BY n.seq;"

  /* STORAGE_NEW: v0 id, v1 allocation, v2 nbytes, v3 context, v4 source */
  "INSERT OR IGNORE INTO storages"
  " SELECT n.pid, n.v0, n.v1, n.v2, nullif (n.v3, 0), nullif (n.v4, 0), n.op, n.ts,"
  "  (SELECT min (f.ts) FROM events f WHERE f.type = 4 AND f.pid = n.pid AND f.v0 = n.v0)"
  " FROM events n WHERE n.type = 3 ORDER BY n.seq;"

  /* TENSOR_NEW: v0 id, v1 storage, v2 base, v3 numel, v4 offset;
   * aux dtype | ndim << 8.  TENSOR_NAME: v0 tensor, v1 string. */
  "INSERT OR IGNORE INTO tensors"
  " SELECT n.pid, n.v0, n.v1, nullif (n.v2, 0), n.aux & 255, (n.aux >> 8) & 255, n.v3, n.v4,"
  "  n.op,"
  "  (SELECT s.value FROM events t JOIN strings s ON s.pid = t.pid AND s.id = t.v1"
  "    WHERE t.type = 7 AND t.pid = n.pid AND t.v0 = n.v0 ORDER BY t.seq DESC LIMIT 1),"
  "  n.tid, n.ts,"
  "  (SELECT min (f.ts) FROM events f WHERE f.type = 6 AND f.pid = n.pid AND f.v0 = n.v0)"
  " FROM events n WHERE n.type = 5 ORDER BY n.seq;"

  /* CONTEXT_NEW/_REF/_UNREF/_FREE: v0 id, v1 storage, v2 refcount after, v3 allocation */
  "INSERT OR IGNORE INTO contexts"
  " SELECT n.pid, n.v0, n.v3, n.v1, n.ts,"
  "  (SELECT min (f.ts) FROM events f WHERE f.type = 11 AND f.pid = n.pid AND f.v0 = n.v0),"
  "  (SELECT max (r.v2) FROM events r WHERE r.type IN (8, 9, 10) AND r.pid = n.pid AND r.v0 = n.v0)"
  " FROM events n WHERE n.type = 8 ORDER BY n.seq;"

  /* LAZY_CLONE: v4 context; LAZY_CLONE_EAGER: v4 nbytes copied, aux reason */
  "INSERT INTO lazy_clones"
  " SELECT e.seq, e.pid, e.tid, e.ts, e.op, e.v0, e.v1, e.v2, e.v3,"
  "  CASE WHEN e.type = 12 THEN e.v4 END,"
  "  CASE WHEN e.type = 13 THEN e.aux & 255 END,"
  "  CASE WHEN e.type = 13 THEN e.v4"
  "   ELSE coalesce ((SELECT s.nbytes FROM storages s WHERE s.pid = e.pid AND s.id = e.v3),"
  "                  (SELECT s.nbytes FROM storages s WHERE s.pid = e.pid AND s.id = e.v2)) END,"
  "  e.stack_id"
  " FROM events e WHERE e.type IN (12, 13);"

  /* MATERIALIZE_BEGIN: v0 storage, v1 context, v2 tensor, v3 nbytes;
   * the END is the next one of the same (pid, tid, storage):
   * v2 allocation, v3 nbytes, v4 lock wait; aux kind | flags. */
  "INSERT INTO materializations"
  " SELECT b.seq, b.pid, b.tid, b.ts, e.ts, b.op, b.v0, b.v1, b.v2, coalesce (e.v3, b.v3),"
  "  CASE WHEN e.seq IS NOT NULL THEN e.aux & 255 END,"
  "  CASE WHEN e.seq IS NOT NULL THEN (e.aux & 256) != 0 END,"
  "  e.v4, e.v2,"
  "  coalesce ("
  "   (SELECT max (l.seq) FROM lazy_clones l WHERE l.pid = b.pid AND l.context_id = b.v1"
  "     AND l.seq < b.seq AND (l.result_storage_id = b.v0 OR l.source_storage_id = b.v0)),"
  "   (SELECT max (l.seq) FROM lazy_clones l WHERE l.pid = b.pid AND l.context_id = b.v1"
  "     AND l.seq < b.seq)),"
  "  coalesce (b.stack_id, e.stack_id)"
  " FROM events b LEFT JOIN events e ON e.seq ="
  "  (SELECT min (x.seq) FROM events x WHERE x.type = 15 AND x.pid = b.pid AND x.v0 = b.v0"
  "    AND x.tid = b.tid AND x.seq > b.seq)"
  " WHERE b.type = 14;"

  /* MATERIALIZE_END without a BEGIN (the BEGIN was dropped).  The
   * temporary index keeps this a lookup per END, not a scan of every
   * materialization (quadratic: seconds at 10,000 copies). */
  "CREATE INDEX IF NOT EXISTS materializations_end ON materializations (pid, storage_id, end_ts);"
  "INSERT INTO materializations"
  " SELECT e.seq, e.pid, e.tid, NULL, e.ts, e.op, e.v0, e.v1, NULL, e.v3, e.aux & 255,"
  "  (e.aux & 256) != 0, e.v4, e.v2, NULL, e.stack_id"
  " FROM events e WHERE e.type = 15"
  "  AND NOT EXISTS (SELECT 1 FROM materializations m WHERE m.pid = e.pid AND m.tid = e.tid"
  "   AND m.storage_id = e.v0 AND m.end_ts = e.ts AND m.kind = (e.aux & 255));"
  "DROP INDEX IF EXISTS materializations_end;"

  /* SIMULATE_VIOLATION: v0 storage, v1 writer, v2 accessor, v3/v4 generations */
  "INSERT INTO violations"
  " SELECT e.seq, e.pid, e.tid, e.ts, e.op, e.aux, e.v0, e.v1, e.v2, e.v3, e.v4, e.stack_id"
  " FROM events e WHERE e.type = 16;"

  /* RANGE_BEGIN/END: v0 id, v1 string, v2 parent; MARK: v1 string, v2 enclosing range */
  "INSERT OR IGNORE INTO ranges"
  " SELECT b.pid, b.v0, b.tid, (SELECT s.value FROM strings s WHERE s.pid = b.pid AND s.id = b.v1),"
  "  nullif (b.v2, 0), b.ts,"
  "  (SELECT min (f.ts) FROM events f WHERE f.type = 18 AND f.pid = b.pid AND f.v0 = b.v0)"
  " FROM events b WHERE b.type = 17 ORDER BY b.seq;"
  "INSERT INTO marks"
  " SELECT e.seq, e.pid, e.tid, e.ts,"
  "  (SELECT s.value FROM strings s WHERE s.pid = e.pid AND s.id = e.v1), nullif (e.v2, 0)"
  " FROM events e WHERE e.type = 19;"

  /* CUDA: kernel names; external ids through the correlation records. */
  "UPDATE cuda_activity SET name = (SELECT s.value FROM strings s"
  "  WHERE s.pid = cuda_activity.pid AND s.id = cuda_activity.name_id)"
  " WHERE name_id IS NOT NULL;"
  /* The probe tags a device materialization's CUDA work with its begin
   * event's timestamp; the activity gets that event's seq. */
  "UPDATE cuda_activity SET external_id = (SELECT e.seq FROM events e"
  "  WHERE e.pid = cuda_activity.pid AND e.type = 14 AND e.ts = (SELECT x.external_id"
  "   FROM cuda_activity x WHERE x.kind = 6 AND x.pid = cuda_activity.pid"
  "    AND x.correlation_id = cuda_activity.correlation_id ORDER BY x.id DESC LIMIT 1)"
  "  ORDER BY e.seq LIMIT 1)"
  " WHERE kind != 6 AND external_id IS NULL;";

/* Symbolizes every frame that has no module yet, process by process. */
static gboolean
symbolize_frames (sqlite3 *db, const char *path, GError **error)
{
  sqlite3_stmt *pids = NULL, *frames = NULL, *update = NULL;
  gboolean ok = FALSE;

  if (!prepare (db, path,
                "SELECT DISTINCT f.pid, m.maps FROM frames f"
                " LEFT JOIN process_maps m ON m.pid = f.pid WHERE f.module IS NULL",
                &pids, error)
      || !prepare (db, path, "SELECT id, address FROM frames WHERE pid = ? AND module IS NULL",
                   &frames, error)
      || !prepare (db, path,
                   "UPDATE frames SET module = ?, function = ?, file = ?, line = ? WHERE id = ?",
                   &update, error))
    goto out;

  int rc;
  while ((rc = sqlite3_step (pids)) == SQLITE_ROW)
    {
      sqlite3_int64 pid = sqlite3_column_int64 (pids, 0);
      const char *maps = (const char *) sqlite3_column_text (pids, 1);
      CowscopeSymbolizer *sym = cowscope_symbolizer_new (maps);
      sqlite3_bind_int64 (frames, 1, pid);
      while ((rc = sqlite3_step (frames)) == SQLITE_ROW)
        {
          CowscopeSymbol s;
          sqlite3_int64 id = sqlite3_column_int64 (frames, 0);
          uint64_t address = (uint64_t) sqlite3_column_int64 (frames, 1);
          cowscope_symbolizer_lookup (sym, address, &s);
          /* '' marks "looked up, no module", so a re-run skips it. */
          sqlite3_bind_text (update, 1, s.module ? s.module : "", -1, SQLITE_TRANSIENT);
          if (s.function)
            sqlite3_bind_text (update, 2, s.function, -1, SQLITE_TRANSIENT);
          else
            sqlite3_bind_null (update, 2);
          if (s.file)
            sqlite3_bind_text (update, 3, s.file, -1, SQLITE_TRANSIENT);
          else
            sqlite3_bind_null (update, 3);
          if (s.line > 0)
            sqlite3_bind_int (update, 4, s.line);
          else
            sqlite3_bind_null (update, 4);
          sqlite3_bind_int64 (update, 5, id);
          if (sqlite3_step (update) != SQLITE_DONE)
            {
              cowscope_symbolizer_free (sym);
              cowscope_session_set_sqlite_error (error, db, path, "finalize");
              goto out;
            }
          sqlite3_reset (update);
        }
      sqlite3_reset (frames);
      cowscope_symbolizer_free (sym);
      if (rc != SQLITE_DONE)
        {
          cowscope_session_set_sqlite_error (error, db, path, "finalize");
          goto out;
        }
    }
  if (rc != SQLITE_DONE)
    {
      cowscope_session_set_sqlite_error (error, db, path, "finalize");
      goto out;
    }
  ok = TRUE;

out:
  sqlite3_finalize (pids);
  sqlite3_finalize (frames);
  sqlite3_finalize (update);
  return ok;
}

static const char meta_sql[] =
  "INSERT OR REPLACE INTO meta (key, value) VALUES"
  " ('produced', (SELECT coalesce (sum (produced), 0) FROM threads)),"
  " ('stored', (SELECT coalesce (sum (stored), 0) FROM threads)),"
  " ('dropped', (SELECT coalesce (sum (dropped), 0) FROM threads)),"
  " ('events_produced', (SELECT coalesce (sum (produced), 0) FROM thread_events)),"
  " ('events_stored', (SELECT coalesce (sum (stored), 0) FROM thread_events)),"
  " ('events_dropped', (SELECT coalesce (sum (dropped), 0) FROM thread_events)),"
  " ('events', (SELECT count (*) FROM events)),"
  " ('finalized', 1);"
  "INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', "
  G_STRINGIFY (COWSCOPE_SESSION_SCHEMA_VERSION) ");"
  "PRAGMA user_version = " G_STRINGIFY (COWSCOPE_SESSION_SCHEMA_VERSION) ";";

gboolean
cowscope_session_finalize (sqlite3 *db, const char *path, GError **error)
{
  if (!exec (db, path, "BEGIN", error))
    return FALSE;
  g_autofree char *interval_sql =
    g_strdup_printf ("INSERT OR REPLACE INTO meta (key, value) VALUES ('checkpoint_interval', %d)",
                     COWSCOPE_CHECKPOINT_INTERVAL);
  step_start = g_get_monotonic_time ();
  if (!fill_enums (db, path, error)
      || !order_events_by_time (db, path, error) || !step_done ("time order")
      || !exec (db, path, index_sql, error) || !step_done ("event indexes")
      || !exec (db, path, derive_sql, error) || !step_done ("derived tables")
      || !exec (db, path, derived_index_sql, error) || !step_done ("derived indexes")
      || !cowscope_session_derive_ipc (db, path, error) || !step_done ("ipc tables")
      || !symbolize_frames (db, path, error) || !step_done ("symbols")
      || !cowscope_session_index_write (db, path, COWSCOPE_CHECKPOINT_INTERVAL, error)
      || !step_done ("checkpoints and timeline summaries")
      || !cowscope_session_upgrade_schema (db, path, error)
      || !exec (db, path, interval_sql, error)
      || !exec (db, path, meta_sql, error)
      || !exec (db, path, "COMMIT", error))
    {
      sqlite3_exec (db, "ROLLBACK", NULL, NULL, NULL);
      return FALSE;
    }
  /* One self-contained file from now on (a user copies *.cowscope). */
  sqlite3_exec (db, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL);
  return exec (db, path, "PRAGMA journal_mode = DELETE", error);
}

/* The text of meta.@key, or NULL (caller frees). */
static char *
meta_text (sqlite3 *db, const char *key)
{
  sqlite3_stmt *s;
  char *value = NULL;
  if (sqlite3_prepare_v2 (db, "SELECT value FROM meta WHERE key = ?", -1, &s, NULL) != SQLITE_OK)
    return NULL;
  sqlite3_bind_text (s, 1, key, -1, SQLITE_STATIC);
  if (sqlite3_step (s) == SQLITE_ROW && sqlite3_column_type (s, 0) != SQLITE_NULL)
    value = g_strdup ((const char *) sqlite3_column_text (s, 0));
  sqlite3_finalize (s);
  return value;
}

gboolean
cowscope_session_finalize_file (const char *path, GError **error)
{
  sqlite3 *db = NULL;
  gboolean ok = FALSE;
  g_autofree char *format = NULL, *version = NULL, *finalized = NULL, *end = NULL;

  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    {
      g_set_error (error, COWSCOPE_RECORDER_ERROR, COWSCOPE_RECORDER_ERROR_IO,
                   "cannot open session '%s': %s", path, g_strerror (ENOENT));
      return FALSE;
    }
  if (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK)
    {
      cowscope_session_set_sqlite_error (error, db, path, "open");
      goto out;
    }
  sqlite3_busy_timeout (db, 2000);
  format = meta_text (db, "format");
  if (g_strcmp0 (format, "cowscope-session") != 0)
    {
      g_set_error (error, COWSCOPE_RECORDER_ERROR, COWSCOPE_RECORDER_ERROR_NOT_SESSION,
                   "'%s' is not a Cowscope session", path);
      goto out;
    }
  version = meta_text (db, "schema_version");
  if (!version || g_ascii_strtoll (version, NULL, 10) > COWSCOPE_SESSION_SCHEMA_VERSION)
    {
      g_set_error (error, COWSCOPE_RECORDER_ERROR, COWSCOPE_RECORDER_ERROR_NOT_SESSION,
                   "'%s' has session schema version %s; this cowscope reads up to %d", path,
                   version ? version : "(none)", COWSCOPE_SESSION_SCHEMA_VERSION);
      goto out;
    }
  finalized = meta_text (db, "finalized");
  if (g_strcmp0 (finalized, "1") != 0)
    {
      end = meta_text (db, "target_end");
      if (!exec (db, path,
                 "INSERT OR REPLACE INTO meta (key, value) VALUES ('recorder_killed', 1)", error))
        goto out;
      if (!end && !exec (db, path,
                         "INSERT OR REPLACE INTO meta (key, value) VALUES ('target_end', 'unknown')",
                         error))
        goto out;
      if (!cowscope_session_upgrade_schema (db, path, error)
          || !cowscope_session_reconcile_counts (db, path, error))
        goto out;
    }
  ok = cowscope_session_finalize (db, path, error);

out:
  sqlite3_close (db);
  return ok;
}
