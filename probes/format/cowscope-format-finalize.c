/* cowscope-format-finalize.c — the derivation of a finalized session
 * (see header).  Event payloads: engine/cow-trace.h; codes are the
 * vocabulary's parameters (cowscope-format-vocabulary.h). */
#include "cowscope-format-finalize.h"

#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

#include "cowscope-format-error.h"
#include "cowscope-format-index.h"
#include "cowscope-format-open.h"
#include "cowscope-format-repair.h"
#include "cowscope-format-schema.h"
#include "cowscope-format-views.h"
#include "cowscope-format-vocabulary.h"

/* Indexes for the derivation below and for the readers' queries: an
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
  /* What each lazy copy caused (the lazy_copies view). */
  "CREATE INDEX IF NOT EXISTS materializations_lazy_clone ON materializations (lazy_clone_seq);"
  "CREATE INDEX IF NOT EXISTS violations_storage ON violations (pid, storage_id);"
  "CREATE INDEX IF NOT EXISTS ranges_thread_time ON ranges (pid, tid, begin_ts);"
  "CREATE INDEX IF NOT EXISTS marks_time ON marks (ts);"
  "CREATE INDEX IF NOT EXISTS checkpoint_seq ON checkpoints (seq);";

/* The object tables and what happened to the objects. */
static const char derive_sql[] =
  "DELETE FROM allocations; DELETE FROM storages; DELETE FROM tensors; DELETE FROM contexts;"
  "DELETE FROM lazy_clones; DELETE FROM materializations; DELETE FROM violations;"
  "DELETE FROM ranges; DELETE FROM marks;"

  /* ALLOCATION_NEW: v0 id, v1 nbytes, v2 address, v3 device; aux kind */
  "INSERT OR IGNORE INTO allocations"
  " SELECT n.pid, n.v0, n.aux, n.v3, n.v1, n.v2, n.op, n.ts,"
  "  (SELECT min (f.ts) FROM events f WHERE f.type = :ev_allocation_free AND f.pid = n.pid"
  "    AND f.v0 = n.v0)"
  " FROM events n WHERE n.type = :ev_allocation_new ORDER BY n.seq;"

  /* STORAGE_NEW: v0 id, v1 allocation, v2 nbytes, v3 context, v4 source */
  "INSERT OR IGNORE INTO storages"
  " SELECT n.pid, n.v0, n.v1, n.v2, nullif (n.v3, 0), nullif (n.v4, 0), n.op, n.ts,"
  "  (SELECT min (f.ts) FROM events f WHERE f.type = :ev_storage_free AND f.pid = n.pid"
  "    AND f.v0 = n.v0)"
  " FROM events n WHERE n.type = :ev_storage_new ORDER BY n.seq;"

  /* TENSOR_NEW: v0 id, v1 storage, v2 base, v3 numel, v4 offset;
   * aux dtype | ndim << 8.  TENSOR_NAME: v0 tensor, v1 string. */
  "INSERT OR IGNORE INTO tensors"
  " SELECT n.pid, n.v0, n.v1, nullif (n.v2, 0), n.aux & 255, (n.aux >> 8) & 255, n.v3, n.v4,"
  "  n.op,"
  "  (SELECT s.value FROM events t JOIN strings s ON s.pid = t.pid AND s.id = t.v1"
  "    WHERE t.type = :ev_tensor_name AND t.pid = n.pid AND t.v0 = n.v0"
  "    ORDER BY t.seq DESC LIMIT 1),"
  "  n.tid, n.ts,"
  "  (SELECT min (f.ts) FROM events f WHERE f.type = :ev_tensor_free AND f.pid = n.pid"
  "    AND f.v0 = n.v0)"
  " FROM events n WHERE n.type = :ev_tensor_new ORDER BY n.seq;"

  /* CONTEXT_NEW/_REF/_UNREF/_FREE: v0 id, v1 storage, v2 refcount after, v3 allocation */
  "INSERT OR IGNORE INTO contexts"
  " SELECT n.pid, n.v0, n.v3, n.v1, n.ts,"
  "  (SELECT min (f.ts) FROM events f WHERE f.type = :ev_context_free AND f.pid = n.pid"
  "    AND f.v0 = n.v0),"
  "  (SELECT max (r.v2) FROM events r"
  "    WHERE r.type IN (:ev_context_new, :ev_context_ref, :ev_context_unref)"
  "    AND r.pid = n.pid AND r.v0 = n.v0)"
  " FROM events n WHERE n.type = :ev_context_new ORDER BY n.seq;"

  /* LAZY_CLONE: v4 context; LAZY_CLONE_EAGER: v4 nbytes copied, aux reason */
  "INSERT INTO lazy_clones"
  " SELECT e.seq, e.pid, e.tid, e.ts, e.op, e.v0, e.v1, e.v2, e.v3,"
  "  CASE WHEN e.type = :ev_lazy_clone THEN e.v4 END,"
  "  CASE WHEN e.type = :ev_lazy_clone_eager THEN e.aux & 255 END,"
  "  CASE WHEN e.type = :ev_lazy_clone_eager THEN e.v4"
  "   ELSE coalesce ((SELECT s.nbytes FROM storages s WHERE s.pid = e.pid AND s.id = e.v3),"
  "                  (SELECT s.nbytes FROM storages s WHERE s.pid = e.pid AND s.id = e.v2)) END,"
  "  e.stack_id"
  " FROM events e WHERE e.type IN (:ev_lazy_clone, :ev_lazy_clone_eager);"

  /* MATERIALIZE_BEGIN: v0 storage, v1 context, v2 tensor, v3 nbytes;
   * the END is the next one of the same (pid, tid, storage):
   * v2 allocation, v3 nbytes, v4 lock wait; aux kind | flags. */
  "INSERT INTO materializations"
  " SELECT b.seq, b.pid, b.tid, b.ts, e.ts, b.op, b.v0, b.v1, b.v2, coalesce (e.v3, b.v3),"
  "  CASE WHEN e.seq IS NOT NULL THEN e.aux & :materialize_kind_mask END,"
  "  CASE WHEN e.seq IS NOT NULL THEN (e.aux & :materialize_copy_discarded) != 0 END,"
  "  e.v4, e.v2,"
  "  coalesce ("
  "   (SELECT max (l.seq) FROM lazy_clones l WHERE l.pid = b.pid AND l.context_id = b.v1"
  "     AND l.seq < b.seq AND (l.result_storage_id = b.v0 OR l.source_storage_id = b.v0)),"
  "   (SELECT max (l.seq) FROM lazy_clones l WHERE l.pid = b.pid AND l.context_id = b.v1"
  "     AND l.seq < b.seq)),"
  "  coalesce (b.stack_id, e.stack_id)"
  " FROM events b LEFT JOIN events e ON e.seq ="
  "  (SELECT min (x.seq) FROM events x WHERE x.type = :ev_materialize_end AND x.pid = b.pid"
  "    AND x.v0 = b.v0 AND x.tid = b.tid AND x.seq > b.seq)"
  " WHERE b.type = :ev_materialize_begin;"

  /* MATERIALIZE_END without a BEGIN (the BEGIN was dropped).  The
   * temporary index keeps this a lookup per END, not a scan of every
   * materialization (quadratic: seconds at 10,000 copies). */
  "CREATE INDEX IF NOT EXISTS materializations_end ON materializations (pid, storage_id, end_ts);"
  "INSERT INTO materializations"
  " SELECT e.seq, e.pid, e.tid, NULL, e.ts, e.op, e.v0, e.v1, NULL, e.v3,"
  "  e.aux & :materialize_kind_mask, (e.aux & :materialize_copy_discarded) != 0, e.v4, e.v2,"
  "  NULL, e.stack_id"
  " FROM events e WHERE e.type = :ev_materialize_end"
  "  AND NOT EXISTS (SELECT 1 FROM materializations m WHERE m.pid = e.pid AND m.tid = e.tid"
  "   AND m.storage_id = e.v0 AND m.end_ts = e.ts AND m.kind = (e.aux & :materialize_kind_mask));"
  "DROP INDEX IF EXISTS materializations_end;"

  /* SIMULATE_VIOLATION: v0 storage, v1 writer, v2 accessor, v3/v4 generations */
  "INSERT INTO violations"
  " SELECT e.seq, e.pid, e.tid, e.ts, e.op, e.aux, e.v0, e.v1, e.v2, e.v3, e.v4, e.stack_id"
  " FROM events e WHERE e.type = :ev_simulate_violation;"

  /* RANGE_BEGIN/END: v0 id, v1 string, v2 parent; MARK: v1 string, v2 enclosing range */
  "INSERT OR IGNORE INTO ranges"
  " SELECT b.pid, b.v0, b.tid, (SELECT s.value FROM strings s WHERE s.pid = b.pid AND s.id = b.v1),"
  "  nullif (b.v2, 0), b.ts,"
  "  (SELECT min (f.ts) FROM events f WHERE f.type = :ev_range_end AND f.pid = b.pid"
  "    AND f.v0 = b.v0)"
  " FROM events b WHERE b.type = :ev_range_begin ORDER BY b.seq;"
  "INSERT INTO marks"
  " SELECT e.seq, e.pid, e.tid, e.ts,"
  "  (SELECT s.value FROM strings s WHERE s.pid = e.pid AND s.id = e.v1), nullif (e.v2, 0)"
  " FROM events e WHERE e.type = :ev_mark;"

  /* CUDA: kernel names; external ids through the correlation records. */
  "UPDATE cuda_activity SET name = (SELECT s.value FROM strings s"
  "  WHERE s.pid = cuda_activity.pid AND s.id = cuda_activity.name_id)"
  " WHERE name_id IS NOT NULL;"
  /* The probe tags a device materialization's CUDA work with its begin
   * event's timestamp; the activity gets that event's seq. */
  "UPDATE cuda_activity SET external_id = (SELECT e.seq FROM events e"
  "  WHERE e.pid = cuda_activity.pid AND e.type = :ev_materialize_begin"
  "  AND e.ts = (SELECT x.external_id FROM cuda_activity x"
  "   WHERE x.kind = :cuda_external_correlation AND x.pid = cuda_activity.pid"
  "    AND x.correlation_id = cuda_activity.correlation_id ORDER BY x.id DESC LIMIT 1)"
  "  ORDER BY e.seq LIMIT 1)"
  " WHERE kind != :cuda_external_correlation AND external_id IS NULL;";

/* Cross-process sharing (ipc_refs, ipc_blocks; README, "Session
 * database").  IPC payloads (engine/cow-ipc.h): v0 allocation id (the
 * producer's), v1 counter file id, v2 slot, v3 count after, v4 peer pid;
 * aux bit 0: a receive that hit the cache, a limbo free because the
 * consumer died.  A send is keyed by (producer pid, counter file id,
 * slot): the producer's ids are unique within it. */
static const char ipc_derive_sql[] =
  "DELETE FROM ipc_refs; DELETE FROM ipc_blocks;"

  "INSERT INTO ipc_refs (send_seq, producer_pid, allocation_id, counter_file_id, slot, send_ts,"
  "  nbytes, storage_id)"
  " SELECT s.seq, s.pid, s.v0, s.v1, s.v2, s.ts,"
  "  (SELECT a.nbytes FROM allocations a WHERE a.pid = s.pid AND a.id = s.v0),"
  "  (SELECT st.id FROM storages st WHERE st.pid = s.pid AND st.allocation_id = s.v0"
  "    AND st.new_ts <= s.ts ORDER BY st.new_ts DESC LIMIT 1)"
  " FROM events s WHERE s.type = :ev_ipc_send;"

  /* The receive of each slot (the first, should a handle be replayed). */
  "UPDATE ipc_refs SET (consumer_pid, receive_seq, receive_ts, cached) ="
  " (SELECT r.pid, r.seq, r.ts, r.aux & 1 FROM events r WHERE r.type = :ev_ipc_receive"
  "   AND r.v0 = ipc_refs.allocation_id AND r.v4 = ipc_refs.producer_pid"
  "   AND r.v1 = ipc_refs.counter_file_id AND r.v2 = ipc_refs.slot ORDER BY r.seq LIMIT 1);"

  /* The consumer's foreign allocation and storage over the mapping: the
   * first ones its receiving thread makes after the receive. */
  "UPDATE ipc_refs SET"
  " consumer_allocation_id = (SELECT a.v0 FROM events r JOIN events a"
  "   ON a.type = :ev_allocation_new AND a.pid = r.pid AND a.tid = r.tid AND a.seq > r.seq"
  "   WHERE r.seq = ipc_refs.receive_seq ORDER BY a.seq LIMIT 1),"
  " consumer_storage_id = (SELECT a.v0 FROM events r JOIN events a"
  "   ON a.type = :ev_storage_new AND a.pid = r.pid AND a.tid = r.tid AND a.seq > r.seq"
  "   WHERE r.seq = ipc_refs.receive_seq ORDER BY a.seq LIMIT 1)"
  " WHERE receive_seq IS NOT NULL;"

  /* Release: the consumer's IPC_RELEASE of the slot; a cache hit gave
   * its slot back at the receive itself. */
  "UPDATE ipc_refs SET (release_seq, release_ts) ="
  " (SELECT x.seq, x.ts FROM events x WHERE x.type = :ev_ipc_release"
  "   AND x.pid = ipc_refs.consumer_pid"
  "   AND x.v0 = ipc_refs.allocation_id AND x.v4 = ipc_refs.producer_pid"
  "   AND x.v1 = ipc_refs.counter_file_id AND x.v2 = ipc_refs.slot"
  "   AND x.seq > ipc_refs.receive_seq ORDER BY x.seq LIMIT 1)"
  " WHERE receive_seq IS NOT NULL AND cached = 0;"
  "UPDATE ipc_refs SET release_seq = receive_seq, release_ts = receive_ts WHERE cached = 1;"

  "UPDATE ipc_refs SET (limbo_enter_seq, limbo_enter_ts) ="
  " (SELECT x.seq, x.ts FROM events x WHERE x.type = :ev_ipc_limbo_enter"
  "   AND x.pid = ipc_refs.producer_pid"
  "   AND x.v0 = ipc_refs.allocation_id AND x.v1 = ipc_refs.counter_file_id"
  "   AND x.v2 = ipc_refs.slot ORDER BY x.seq LIMIT 1);"
  "UPDATE ipc_refs SET (limbo_free_seq, limbo_free_ts, consumer_died) ="
  " (SELECT x.seq, x.ts, x.aux & 1 FROM events x WHERE x.type = :ev_ipc_limbo_free"
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

  "CREATE INDEX IF NOT EXISTS ipc_refs_consumer ON ipc_refs (consumer_pid, receive_seq);";

/* The totals readers show; the version marks. */
static const char meta_sql[] =
  "INSERT OR REPLACE INTO meta (key, value) VALUES"
  " ('produced', (SELECT coalesce (sum (produced), 0) FROM threads)),"
  " ('stored', (SELECT coalesce (sum (stored), 0) FROM threads)),"
  " ('dropped', (SELECT coalesce (sum (dropped), 0) FROM threads)),"
  " ('events', (SELECT count (*) FROM events)),"
  " ('finalized', 1);";

/* Events apart from the other records, where the recorder counted them
 * (schema 3 and later; in an older session its readers take its records
 * for its events). */
static const char event_counts_sql[] =
  "INSERT OR REPLACE INTO meta (key, value)"
  " SELECT 'events_produced', coalesce (sum (produced), 0) FROM thread_events"
  " UNION ALL SELECT 'events_stored', coalesce (sum (stored), 0) FROM thread_events"
  " UNION ALL SELECT 'events_dropped', coalesce (sum (dropped), 0) FROM thread_events;";

/* The first schema whose recorder counts events apart from records. */
#define EVENT_COUNTS_SINCE 3

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
  if (cowscope_format_exec (db, sql) != SQLITE_OK)
    {
      cowscope_format_set_write_error (error, db, path, "finalize");
      return FALSE;
    }
  return TRUE;
}

static gboolean
check (gboolean ok, sqlite3 *db, const char *path, GError **error)
{
  if (!ok)
    cowscope_format_set_write_error (error, db, path, "finalize");
  return ok;
}

/* meta.start_ns and meta.end_ns: the session's span (the format's
 * bounds rule), which the views' *_ms columns count from. */
static gboolean
write_bounds (sqlite3 *db, const char *path, GError **error)
{
  gint64 start = 0, end = 0;
  if (!cowscope_format_query_bounds (db, path, &start, &end, error))
    return FALSE;
  g_autofree char *sql = g_strdup_printf ("INSERT OR REPLACE INTO meta (key, value) VALUES"
                                          " ('start_ns', %" G_GINT64_FORMAT "),"
                                          " ('end_ns', %" G_GINT64_FORMAT ")",
                                          start, end);
  return exec (db, path, sql, error);
}

/* The session's span and its views (cowscope-format-views.h). */
static gboolean
write_views (sqlite3 *db, const char *path, GError **error)
{
  return write_bounds (db, path, error)
         && check (cowscope_format_create_views (db), db, path, error);
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

  if (sqlite3_prepare_v2 (db,
                          "SELECT 1 FROM events a JOIN events b ON b.seq = a.seq + 1"
                          " WHERE b.ts < a.ts LIMIT 1", -1, &s, NULL) != SQLITE_OK)
    return check (FALSE, db, path, error);
  if (sqlite3_step (s) == SQLITE_ROW)
    in_order = FALSE;
  sqlite3_finalize (s);
  if (in_order)
    return TRUE;

  /* The table's own DDL, so the copy keeps `seq INTEGER PRIMARY KEY`. */
  if (sqlite3_prepare_v2 (db, "SELECT sql FROM sqlite_master WHERE type = 'table'"
                          " AND name = 'events'", -1, &s, NULL) != SQLITE_OK)
    return check (FALSE, db, path, error);
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
      g_set_error (error, COWSCOPE_SESSION_ERROR, COWSCOPE_SESSION_ERROR_DAMAGED,
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

gboolean
cowscope_format_finalize (sqlite3 *db, const char *path, CowscopeSymbolizeFunc symbolize,
                          GError **error)
{
  if (!exec (db, path, "BEGIN", error))
    return FALSE;
  g_autofree char *interval_sql = g_strdup_printf (
    "INSERT OR REPLACE INTO meta (key, value) VALUES ('checkpoint_interval', %d);"
    "PRAGMA user_version = %d;",
    COWSCOPE_CHECKPOINT_INTERVAL, cowscope_format_schema_version ());
  /* The version it was recorded with, before the upgrade changes it. */
  int recorded_version = 0;
  sqlite3_stmt *v = NULL;
  if (sqlite3_prepare_v2 (db, "PRAGMA user_version", -1, &v, NULL) == SQLITE_OK
      && sqlite3_step (v) == SQLITE_ROW)
    recorded_version = sqlite3_column_int (v, 0);
  sqlite3_finalize (v);
  step_start = g_get_monotonic_time ();
  if (!check (cowscope_format_upgrade_schema (db), db, path, error)
      || !check (cowscope_format_fill_lookup_tables (db), db, path, error)
      || !order_events_by_time (db, path, error) || !step_done ("time order")
      || !exec (db, path, index_sql, error) || !step_done ("event indexes")
      || !exec (db, path, derive_sql, error) || !step_done ("derived tables")
      || !exec (db, path, derived_index_sql, error) || !step_done ("derived indexes")
      || !exec (db, path, ipc_derive_sql, error) || !step_done ("ipc tables")
      || (symbolize != NULL && !symbolize (db, path, error)) || !step_done ("symbols")
      || !cowscope_format_index_write (db, path, COWSCOPE_CHECKPOINT_INTERVAL, error)
      || !step_done ("checkpoints and timeline summaries")
      || !write_views (db, path, error)
      || !exec (db, path, meta_sql, error)
      || (recorded_version >= EVENT_COUNTS_SINCE && !exec (db, path, event_counts_sql, error))
      || !exec (db, path, interval_sql, error)
      || !exec (db, path, "COMMIT", error))
    {
      sqlite3_exec (db, "ROLLBACK", NULL, NULL, NULL);
      return FALSE;
    }
  /* One self-contained file from now on (a user copies *.cowscope). */
  sqlite3_exec (db, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL);
  return exec (db, path, "PRAGMA journal_mode = DELETE", error);
}

gboolean
cowscope_format_reconcile_counts (sqlite3 *db, const char *path, GError **error)
{
  static const char sql[] =
    /* Threads whose counters the recorder never wrote. */
    "INSERT OR IGNORE INTO threads (pid, tid, produced, stored, dropped)"
    " SELECT pid, tid, count (*), count (*), 0 FROM events GROUP BY pid, tid;"
    "INSERT OR IGNORE INTO thread_events (pid, tid) SELECT pid, tid FROM threads;"
    /* Events: what the events table holds is what was stored. */
    "UPDATE thread_events SET stored = (SELECT count (*) FROM events e"
    "  WHERE e.pid = thread_events.pid AND e.tid = thread_events.tid);"
    "UPDATE thread_events SET produced = max (produced, stored + dropped);"
    "UPDATE thread_events SET dropped = produced - stored;"
    /* Records: the last counters the recorder wrote; what it had not
     * stored by then is lost. */
    "UPDATE threads SET produced = max (produced, stored + dropped);"
    "UPDATE threads SET dropped = produced - stored;";
  return check (cowscope_format_upgrade_schema (db), db, path, error)
         && exec (db, path, sql, error);
}

/* Finalizes a session that an older version finalized: its events are in
 * time order and its derived tables are what derive_sql gives (no
 * version changed them), so only what the current version added is
 * derived: the IPC tables when it lacks them, the packed summaries, the
 * span and the views. */
static gboolean
refinalize (sqlite3 *db, const char *path, GError **error)
{
  gboolean had_ipc = cowscope_format_has_table (db, "ipc_refs")
                     && cowscope_format_has_table (db, "ipc_blocks");
  g_autofree char *version_sql = g_strdup_printf ("PRAGMA user_version = %d;",
                                                  cowscope_format_schema_version ());
  if (!exec (db, path, "BEGIN", error))
    return FALSE;
  if (!check (cowscope_format_upgrade_schema (db), db, path, error)
      || !check (cowscope_format_fill_lookup_tables (db), db, path, error)
      || !exec (db, path, index_sql, error)
      || !exec (db, path, derived_index_sql, error)
      || (!had_ipc && !exec (db, path, ipc_derive_sql, error))
      || !cowscope_format_index_write (db, path, COWSCOPE_CHECKPOINT_INTERVAL, error)
      || !write_views (db, path, error)
      || !exec (db, path, version_sql, error)
      || !exec (db, path, "INSERT OR REPLACE INTO meta (key, value) VALUES"
                          " ('checkpoint_interval', " G_STRINGIFY (COWSCOPE_CHECKPOINT_INTERVAL) ")",
                error)
      || !exec (db, path, "COMMIT", error))
    {
      sqlite3_exec (db, "ROLLBACK", NULL, NULL, NULL);
      return FALSE;
    }
  return exec (db, path, "PRAGMA journal_mode = DELETE", error);
}

char *
cowscope_format_finalized_copy (const char *path, GError **error)
{
  CowscopeFormatInfo info;
  g_autoptr (sqlite3) source = cowscope_format_open (path, COWSCOPE_FORMAT_OPEN_READ_ONLY, &info,
                                                     error);
  if (source == NULL)
    return NULL;
  g_autofree char *copy = NULL;
  int fd = g_file_open_tmp ("cowscope-XXXXXX.cowscope", &copy, error);
  if (fd < 0)
    return NULL;
  close (fd);

  /* VACUUM INTO writes what a reader of @path sees (the WAL of a
   * recording included) into the empty temporary file. */
  sqlite3_stmt *vacuum = NULL;
  int rc = sqlite3_prepare_v2 (source, "VACUUM INTO ?1", -1, &vacuum, NULL);
  if (rc == SQLITE_OK)
    {
      sqlite3_bind_text (vacuum, 1, copy, -1, SQLITE_STATIC);
      rc = sqlite3_step (vacuum);
    }
  sqlite3_finalize (vacuum);
  if (rc != SQLITE_DONE)
    {
      cowscope_format_set_error (error, source, rc, path, "copying");
      g_unlink (copy);
      return NULL;
    }
  g_clear_pointer (&source, sqlite3_close);

  /* What is derived is computed from what was recorded (sums of counts
   * among others): a recorded value out of its range is named as the
   * damage it is, before SQLite's arithmetic fails on it. */
  g_autoptr (sqlite3) db = NULL;
  if (sqlite3_open_v2 (copy, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK
      /* The copy is removed when its reader closes it: a crash loses
       * nothing, so no write of it waits for the disk. */
      || sqlite3_exec (db, "PRAGMA synchronous = OFF", NULL, NULL, NULL) != SQLITE_OK
      || !(info.finalized ? refinalize (db, path, error)
                          : cowscope_format_check_recorded (db, path, FALSE, error)
                              && cowscope_format_finalize (db, path, NULL, error)))
    {
      if (error != NULL && *error == NULL)
        cowscope_format_set_write_error (error, db, copy, "open");
      g_unlink (copy);
      return NULL;
    }
  return g_steal_pointer (&copy);
}
