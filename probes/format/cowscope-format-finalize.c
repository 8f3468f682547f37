/* cowscope-format-finalize.c — completing a session (see header); what
 * it derives, and how, is the session builder's
 * (cowscope-session-builder.h). */
#include "cowscope-format-finalize.h"

#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

#include "cowscope-event-store.h"
#include "cowscope-format-error.h"
#include "cowscope-format-index.h"
#include "cowscope-format-open.h"
#include "cowscope-format-repair.h"
#include "cowscope-format-schema.h"
#include "cowscope-format-views.h"
#include "cowscope-format-vocabulary.h"
#include "cowscope-session-builder.h"

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

/* Renumbers `events` in time order.  A recorder stores them in time
 * order as they arrive, but one that was killed, an event that came later
 * than the recorder could wait for it (meta.late_events) or a session of
 * an older version can leave them out of it; everything derived from them
 * (materialization pairs, checkpoints, the graph at an instant) needs
 * them in it.  Ties keep each thread's own order.  A no-op, without
 * decoding a chunk, when the chunks are in order. */
static gboolean
order_events_by_time (sqlite3 *db, const char *path, GError **error)
{
  CowscopeEventCatalog *catalog = cowscope_event_catalog_new (db);
  int rc = cowscope_event_catalog_refresh (catalog);
  gboolean sorted = cowscope_event_catalog_is_sorted (catalog);
  cowscope_event_catalog_free (catalog);
  if (rc != SQLITE_OK)
    return check (FALSE, db, path, error);
  if (sorted)
    return TRUE;

  static const char copy_sql[] =
    "DROP TABLE IF EXISTS temp.events_by_time;"
    "CREATE TEMP TABLE events_by_time AS"
    " SELECT ts, pid, tid, type, op, aux, v0, v1, v2, v3, v4, stack_id FROM events"
    " ORDER BY ts, pid, tid, seq;"
    "DELETE FROM event_chunks;";
  if (!exec (db, path, copy_sql, error))
    return FALSE;
  CowscopeEventStore *store = cowscope_event_store_new (db, &rc);
  sqlite3_stmt *q = NULL;
  if (store != NULL)
    rc = sqlite3_prepare_v2 (db, "SELECT rowid, ts, pid, tid, type, op, aux, v0, v1, v2, v3, v4,"
                                 " stack_id FROM temp.events_by_time ORDER BY rowid",
                             -1, &q, NULL);
  while (rc == SQLITE_OK && (rc = sqlite3_step (q)) == SQLITE_ROW)
    {
      CowscopeEventRow row = { 0 };
      for (int i = 0; i < COWSCOPE_EVENT_N_COLS; i++)
        {
          row.col[i] = sqlite3_column_int64 (q, i);
          if (sqlite3_column_type (q, i) != SQLITE_NULL)
            continue;
          if (i == COWSCOPE_EVENT_COL_STACK)
            row.nulls |= COWSCOPE_EVENT_NULL_STACK;
          else if (i >= COWSCOPE_EVENT_COL_V0)
            row.nulls |= 1u << (i - COWSCOPE_EVENT_COL_V0);
        }
      rc = cowscope_event_store_append (store, &row);
    }
  sqlite3_finalize (q);
  if (rc == SQLITE_DONE)
    rc = cowscope_event_store_flush (store);
  cowscope_event_store_free (store);
  return check (rc == SQLITE_OK, db, path, error)
         && exec (db, path, "DROP TABLE temp.events_by_time;", error);
}

/* The version @db was recorded with (before an upgrade changes it). */
static int
recorded_version (sqlite3 *db)
{
  int version = 0;
  sqlite3_stmt *v = NULL;
  if (sqlite3_prepare_v2 (db, "PRAGMA user_version", -1, &v, NULL) == SQLITE_OK
      && sqlite3_step (v) == SQLITE_ROW)
    version = sqlite3_column_int (v, 0);
  sqlite3_finalize (v);
  return version;
}

/* The span and the views, the totals, the version marks, COMMIT; then one self-contained file
 * (a user copies *.cowscope). */
static gboolean
complete (sqlite3 *db, const char *path, int version, GError **error)
{
  g_autofree char *interval_sql = g_strdup_printf (
    "INSERT OR REPLACE INTO meta (key, value) VALUES ('checkpoint_interval', %d);"
    "PRAGMA user_version = %d;",
    COWSCOPE_CHECKPOINT_INTERVAL, cowscope_format_schema_version ());
  if (!write_views (db, path, error)
      || !exec (db, path, meta_sql, error)
      || (version >= EVENT_COUNTS_SINCE && !exec (db, path, event_counts_sql, error))
      || !exec (db, path, interval_sql, error)
      || !exec (db, path, "COMMIT", error))
    return FALSE;
  sqlite3_exec (db, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL);
  return exec (db, path, "PRAGMA journal_mode = DELETE", error);
}

gboolean
cowscope_format_finalize (sqlite3 *db, const char *path, CowscopeSymbolizeFunc symbolize,
                          GError **error)
{
  if (!exec (db, path, "BEGIN", error))
    return FALSE;
  int version = recorded_version (db);
  step_start = g_get_monotonic_time ();
  if (!check (cowscope_format_upgrade_schema (db), db, path, error)
      || !check (cowscope_format_fill_lookup_tables (db), db, path, error)
      || !order_events_by_time (db, path, error) || !step_done ("time order")
      || !cowscope_session_builder_run (db, path, error) || !step_done ("derived tables")
      || (symbolize != NULL && !symbolize (db, path, error)) || !step_done ("symbols")
      || !complete (db, path, version, error))
    {
      sqlite3_exec (db, "ROLLBACK", NULL, NULL, NULL);
      return FALSE;
    }
  return TRUE;
}

gboolean
cowscope_format_reconcile_counts (sqlite3 *db, const char *path, GError **error)
{
  static const char sql[] =
    /* One pass over the events: what each thread stored. */
    "DROP TABLE IF EXISTS temp.stored_events;"
    "CREATE TEMP TABLE stored_events AS"
    " SELECT pid, tid, count (*) AS n FROM events GROUP BY pid, tid;"
    /* Threads whose counters the recorder never wrote. */
    "INSERT OR IGNORE INTO threads (pid, tid, produced, stored, dropped)"
    " SELECT pid, tid, n, n, 0 FROM temp.stored_events;"
    "INSERT OR IGNORE INTO thread_events (pid, tid) SELECT pid, tid FROM threads;"
    /* Events: what the events table holds is what was stored. */
    "UPDATE thread_events SET stored = coalesce ((SELECT n FROM temp.stored_events e"
    "  WHERE e.pid = thread_events.pid AND e.tid = thread_events.tid), 0);"
    "UPDATE thread_events SET produced = max (produced, stored + dropped);"
    "UPDATE thread_events SET dropped = produced - stored;"
    /* Records: the last counters the recorder wrote; what it had not
     * stored by then is lost. */
    "UPDATE threads SET produced = max (produced, stored + dropped);"
    "UPDATE threads SET dropped = produced - stored;"
    "DROP TABLE temp.stored_events;";
  return check (cowscope_format_upgrade_schema (db), db, path, error)
         && exec (db, path, sql, error);
}

/* Finalizes a session that an older version finalized: its events are in
 * time order and its derived tables are what the builder gives (no
 * version changed their rules), so they are kept; what the current version
 * added is derived: the IPC tables when it lacks them, the packed
 * summaries. */
static gboolean
refinalize (sqlite3 *db, const char *path, GError **error)
{
  gboolean had_ipc = cowscope_format_has_table (db, "ipc_refs")
                     && cowscope_format_has_table (db, "ipc_blocks");
  int version = recorded_version (db);
  if (!exec (db, path, "BEGIN", error))
    return FALSE;
  if (!check (cowscope_format_upgrade_schema (db), db, path, error)
      || !check (cowscope_format_fill_lookup_tables (db), db, path, error)
      || !cowscope_session_builder_create_indexes (db, path, error)
      || (!had_ipc && !cowscope_session_builder_run_ipc (db, path, error))
      || !cowscope_format_index_write (db, path, COWSCOPE_CHECKPOINT_INTERVAL, error)
      || !complete (db, path, version, error))
    {
      sqlite3_exec (db, "ROLLBACK", NULL, NULL, NULL);
      return FALSE;
    }
  return TRUE;
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
