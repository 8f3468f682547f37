/* cowscope-format-schema.c — the embedded schema and its versions (see
 * header). */
#include "cowscope-format-schema.h"

#include "cowscope-event-store.h"
#include "cowscope-format-sqlite.h"

#include <stdlib.h>
#include <string.h>

/* session-schema.sql, embedded by meson.build. */
extern const char cowscope_format_schema_sql_text[];

static const char *const tables_v1[] = {
  "meta", "event_types", "ops", "processes", "threads", "strings", "events",
  "frames", "stacks", "stack_frames", "cuda_activity", "allocations",
  "storages", "tensors", "contexts", "lazy_clones", "materializations",
  "violations", "ranges", "marks", "checkpoints", "checkpoint_objects",
  NULL,
};

static const char *const tables_v2[] = {
  "meta", "event_types", "ops", "processes", "threads", "strings", "events",
  "frames", "stacks", "stack_frames", "cuda_activity", "allocations",
  "storages", "tensors", "contexts", "lazy_clones", "materializations",
  "violations", "ranges", "marks", "checkpoints", "checkpoint_objects",
  "timeline_lanes", "timeline_chunks", "timeline_spans", "timeline_counters",
  "checkpoint_states", "checkpoint_replays",
  NULL,
};

static const char *const tables_v4[] = {
  "meta", "event_types", "ops", "processes", "threads", "strings", "event_chunks", "events",
  "frames", "stacks", "stack_frames", "cuda_activity", "allocations",
  "storages", "tensors", "contexts", "lazy_clones", "materializations",
  "violations", "ranges", "checkpoints", "checkpoint_objects",
  "timeline_lanes", "timeline_chunks", "timeline_spans", "timeline_counters",
  "checkpoint_states", "checkpoint_replays",
  "thread_events", "process_identity", "peer_faults",
  NULL,
};

static const char *const tables_v3[] = {
  "meta", "event_types", "ops", "processes", "threads", "strings", "events",
  "frames", "stacks", "stack_frames", "cuda_activity", "allocations",
  "storages", "tensors", "contexts", "lazy_clones", "materializations",
  "violations", "ranges", "marks", "checkpoints", "checkpoint_objects",
  "timeline_lanes", "timeline_chunks", "timeline_spans", "timeline_counters",
  "checkpoint_states", "checkpoint_replays",
  "thread_events", "process_identity", "peer_faults",
  NULL,
};

int
cowscope_format_schema_version (void)
{
  static gsize version;
  if (g_once_init_enter (&version))
    {
      const char *pragma = strstr (cowscope_format_schema_sql_text, "PRAGMA user_version =");
      g_assert (pragma != NULL);
      long parsed = strtol (pragma + strlen ("PRAGMA user_version ="), NULL, 10);
      g_assert (parsed > 0);
      g_once_init_leave (&version, (gsize) parsed);
    }
  return (int) version;
}

const char *
cowscope_format_schema_sql (void)
{
  return cowscope_format_schema_sql_text;
}

const char *const *
cowscope_format_required_tables (int version)
{
  G_STATIC_ASSERT (G_N_ELEMENTS (tables_v2) > G_N_ELEMENTS (tables_v1));
  G_STATIC_ASSERT (G_N_ELEMENTS (tables_v3) > G_N_ELEMENTS (tables_v2));
  switch (version)
    {
    case 1: return tables_v1;
    case 2: return tables_v2;
    case 3: return tables_v3;
    case 4: return tables_v4;
    default: return NULL;
    }
}

gboolean
cowscope_format_create_schema (sqlite3 *db)
{
  g_assert (cowscope_format_required_tables (cowscope_format_schema_version ()) != NULL);
  cowscope_format_register_everywhere ();
  return cowscope_format_register_sqlite (db) == SQLITE_OK
         && sqlite3_exec (db, cowscope_format_schema_sql_text, NULL, NULL, NULL) == SQLITE_OK;
}

/* The kind of schema object @name is ("table", "view", …) and whether
 * it is a virtual table; NULL when there is none. */
static char *
object_kind (sqlite3 *db, const char *name, gboolean *is_virtual)
{
  sqlite3_stmt *q = NULL;
  char *kind = NULL;
  *is_virtual = FALSE;
  if (sqlite3_prepare_v2 (db, "SELECT type, sql LIKE 'CREATE VIRTUAL%' FROM main.sqlite_master"
                              " WHERE name = ?1", -1, &q, NULL) == SQLITE_OK)
    {
      sqlite3_bind_text (q, 1, name, -1, SQLITE_STATIC);
      if (sqlite3_step (q) == SQLITE_ROW)
        {
          kind = g_strdup ((const char *) sqlite3_column_text (q, 0));
          *is_virtual = sqlite3_column_int (q, 1) != 0;
        }
    }
  sqlite3_finalize (q);
  return kind;
}

/* A column of a row of `events` from before version 4, as an event
 * column: integers as they are, anything else as NULL (a file is
 * untrusted; NOT NULL columns then read 0). */
static void
legacy_column (sqlite3_stmt *q, int i, CowscopeEventRow *row)
{
  if (sqlite3_column_type (q, i) == SQLITE_INTEGER)
    {
      row->col[i] = sqlite3_column_int64 (q, i);
      return;
    }
  row->col[i] = 0;
  if (i == COWSCOPE_EVENT_COL_STACK)
    row->nulls |= COWSCOPE_EVENT_NULL_STACK;
  else if (i >= COWSCOPE_EVENT_COL_V0)
    row->nulls |= 1u << (i - COWSCOPE_EVENT_COL_V0);
}

/* Moves the rows of a version 1-3 `events` table (renamed @legacy) into
 * event_chunks, seqs kept. */
static gboolean
move_legacy_events (sqlite3 *db, const char *legacy)
{
  int rc;
  CowscopeEventStore *store = cowscope_event_store_new (db, &rc);
  if (store == NULL)
    return FALSE;
  g_autofree char *sql = g_strdup_printf (
    "SELECT seq, ts, pid, tid, type, op, aux, v0, v1, v2, v3, v4, stack_id FROM \"%s\""
    " WHERE typeof (seq) = 'integer' ORDER BY seq", legacy);
  sqlite3_stmt *q = NULL;
  rc = sqlite3_prepare_v2 (db, sql, -1, &q, NULL);
  while (rc == SQLITE_OK && (rc = sqlite3_step (q)) == SQLITE_ROW)
    {
      CowscopeEventRow row = { 0 };
      for (int i = 0; i < COWSCOPE_EVENT_N_COLS; i++)
        legacy_column (q, i, &row);
      rc = cowscope_event_store_append (store, &row);
    }
  sqlite3_finalize (q);
  if (rc == SQLITE_DONE)
    rc = cowscope_event_store_flush (store);
  cowscope_event_store_free (store);
  return rc == SQLITE_OK;
}

#define LEGACY_EVENTS "events_before_v4"

gboolean
cowscope_format_upgrade_schema (sqlite3 *db)
{
  cowscope_format_register_everywhere ();
  if (cowscope_format_register_sqlite (db) != SQLITE_OK)
    return FALSE;
  /* Before version 4: `events` a table of rows, `marks` a derived table. */
  gboolean events_virtual, marks_virtual;
  g_autofree char *events_kind = object_kind (db, "events", &events_virtual);
  g_autofree char *marks_kind = object_kind (db, "marks", &marks_virtual);
  gboolean legacy = g_strcmp0 (events_kind, "table") == 0 && !events_virtual;
  if (legacy
      && sqlite3_exec (db, "ALTER TABLE events RENAME TO " LEGACY_EVENTS, NULL, NULL, NULL)
           != SQLITE_OK)
    return FALSE;
  if (g_strcmp0 (marks_kind, "table") == 0
      && sqlite3_exec (db, "DROP TABLE marks", NULL, NULL, NULL) != SQLITE_OK)
    return FALSE;

  g_auto (GStrv) tables = g_strsplit (cowscope_format_schema_sql_text, "CREATE TABLE ", -1);
  g_autofree char *sql1 = g_strjoinv ("CREATE TABLE IF NOT EXISTS ", tables);
  g_auto (GStrv) virtuals = g_strsplit (sql1, "CREATE VIRTUAL TABLE ", -1);
  g_autofree char *sql2 = g_strjoinv ("CREATE VIRTUAL TABLE IF NOT EXISTS ", virtuals);
  g_auto (GStrv) views = g_strsplit (sql2, "CREATE VIEW ", -1);
  g_autofree char *sql = g_strjoinv ("CREATE VIEW IF NOT EXISTS ", views);
  g_autofree char *meta = g_strdup_printf (
    "INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', %d)",
    cowscope_format_schema_version ());
  if (sqlite3_exec (db, sql, NULL, NULL, NULL) != SQLITE_OK
      || sqlite3_exec (db, meta, NULL, NULL, NULL) != SQLITE_OK)
    return FALSE;
  if (legacy
      && (!move_legacy_events (db, LEGACY_EVENTS)
          || sqlite3_exec (db, "DROP TABLE " LEGACY_EVENTS, NULL, NULL, NULL) != SQLITE_OK))
    return FALSE;
  return TRUE;
}
