/* cowscope-format-schema.c — the embedded schema and its versions (see
 * header). */
#include "cowscope-format-schema.h"

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
    default: return NULL;
    }
}

gboolean
cowscope_format_create_schema (sqlite3 *db)
{
  g_assert (cowscope_format_required_tables (cowscope_format_schema_version ()) != NULL);
  return sqlite3_exec (db, cowscope_format_schema_sql_text, NULL, NULL, NULL) == SQLITE_OK;
}

gboolean
cowscope_format_upgrade_schema (sqlite3 *db)
{
  g_auto (GStrv) parts = g_strsplit (cowscope_format_schema_sql_text, "CREATE TABLE ", -1);
  g_autofree char *sql = g_strjoinv ("CREATE TABLE IF NOT EXISTS ", parts);
  g_autofree char *meta = g_strdup_printf (
    "INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', %d)",
    cowscope_format_schema_version ());
  return sqlite3_exec (db, sql, NULL, NULL, NULL) == SQLITE_OK
         && sqlite3_exec (db, meta, NULL, NULL, NULL) == SQLITE_OK;
}
