/* test-export-trace.c — the Chrome trace export of a recorded demo
 * (`cowscope-demo all` under `cowscope-cli record`): the properties every
 * trace must have (tests/cli/trace-check.h: stable names, nested slices,
 * flows strictly inside slices, one name per process), and that what the
 * session holds is all there: a slice per copy and steal with its call
 * stack, an arrow per lazy clone that a copy or steal ended, the IPC
 * sends, receives, releases, held blocks and limbo. */
#include <glib.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <sqlite3.h>
#include <string.h>
#include <sys/wait.h>

#include "cowscope-export.h"
#include "trace-check.h"

static char *session_path;
static JsonParser *parser;
static JsonArray *events;
static sqlite3 *db;

static gint64
sql_int (const char *sql)
{
  sqlite3_stmt *stmt = NULL;
  if (sqlite3_prepare_v2 (db, sql, -1, &stmt, NULL) != SQLITE_OK)
    g_error ("%s: %s", sql, sqlite3_errmsg (db));
  g_assert_cmpint (sqlite3_step (stmt), ==, SQLITE_ROW);
  gint64 n = sqlite3_column_int64 (stmt, 0);
  sqlite3_finalize (stmt);
  return n;
}

/* Every value of @sql's first column (NULLs left out). */
static GStrv
sql_strings (const char *sql)
{
  g_autoptr (GStrvBuilder) builder = g_strv_builder_new ();
  sqlite3_stmt *stmt = NULL;
  g_assert_cmpint (sqlite3_prepare_v2 (db, sql, -1, &stmt, NULL), ==, SQLITE_OK);
  while (sqlite3_step (stmt) == SQLITE_ROW)
    if (sqlite3_column_type (stmt, 0) != SQLITE_NULL)
      {
        /* As the JSON carries them: invalid UTF-8 replaced. */
        g_autofree char *text = g_utf8_make_valid ((const char *) sqlite3_column_text (stmt, 0),
                                                   -1);
        g_strv_builder_add (builder, text);
      }
  sqlite3_finalize (stmt);
  return g_strv_builder_end (builder);
}

/* Events with phase @ph and name @name. */
static guint
count_events (const char *ph, const char *name)
{
  guint n = 0;
  for (guint i = 0; i < json_array_get_length (events); i++)
    {
      JsonObject *e = json_array_get_object_element (events, i);
      if (g_strcmp0 (json_object_get_string_member (e, "ph"), ph) == 0
          && g_strcmp0 (json_object_get_string_member (e, "name"), name) == 0)
        n++;
    }
  return n;
}

/* Records the demo and exports it; FALSE when the command-line tool or
 * the demo is not built. */
static gboolean
record_and_export (const char *dir)
{
  const char *cli = g_getenv ("COWSCOPE_CLI"), *demo = g_getenv ("COWSCOPE_DEMO");
  if (cli == NULL || demo == NULL)
    return FALSE;
  session_path = g_build_filename (dir, "demo.cowscope", NULL);
  const char *argv[] = { cli, "record", "--force", "-o", session_path, "--", demo, "--quiet",
                         "all", NULL };
  g_autofree char *out = NULL, *err = NULL;
  g_autoptr (GError) error = NULL;
  int status = 0;
  g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out,
                               &err, &status, &error));
  g_assert_no_error (error);
  if (!WIFEXITED (status) || WEXITSTATUS (status) != 0)
    g_error ("cowscope-cli record failed (%d): %s%s", status, out, err);

  g_autofree char *json = g_build_filename (dir, "demo.json", NULL);
  g_autoptr (CowscopeSessionTables) tables = cowscope_session_tables_open (session_path, &error);
  g_assert_no_error (error);
  g_assert_true (cowscope_export_chrome (tables, json, FALSE, NULL, &error));
  g_assert_no_error (error);
  parser = json_parser_new ();
  g_assert_true (json_parser_load_from_file (parser, json, &error));
  g_assert_no_error (error);
  events = json_object_get_array_member (json_node_get_object (json_parser_get_root (parser)),
                                         "traceEvents");
  g_assert_cmpint (sqlite3_open_v2 (session_path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  return TRUE;
}

/* Stable names, nesting, flows inside slices, one name per process; an
 * arrow for every lazy clone that a copy or steal ended. */
static void
test_properties (void)
{
  g_auto (GStrv) names = sql_strings ("SELECT name FROM ranges UNION SELECT name FROM marks"
                                      " UNION SELECT name FROM cuda_activity");
  TraceCheckCounts counts = trace_check_properties (events, (const char *const *) names);
  g_assert_cmpuint (counts.lazy_flows, ==,
                    sql_int ("SELECT count(*) FROM materializations m JOIN lazy_clones l"
                             " ON l.seq = m.lazy_clone_seq WHERE m.begin_ts IS NOT NULL"
                             " AND l.ts IS NOT NULL"));
  g_assert_cmpuint (counts.lazy_flows, >, 10);
  /* No GPU here: CUDA arrows are checked on the fixture. */
  g_assert_cmpuint (counts.cuda_flows, ==,
                    sql_int ("SELECT count(*) FROM cuda_activity WHERE external_id IS NOT NULL"
                             " AND kind IN (SELECT id FROM cuda_kinds"
                             "  WHERE name IN ('memcpy', 'memset', 'kernel'))"));
  /* Every process is named, once (trace_check_properties). */
  for (gint64 i = 0, n = sql_int ("SELECT count(*) FROM processes"); i < n; i++)
    {
      g_autofree char *sql = g_strdup_printf ("SELECT pid FROM processes ORDER BY pid"
                                              " LIMIT 1 OFFSET %" G_GINT64_FORMAT, i);
      gint64 pid = sql_int (sql);
      gboolean named = FALSE;
      for (guint k = 0; k < json_array_get_length (events) && !named; k++)
        {
          JsonObject *e = json_array_get_object_element (events, k);
          named = g_strcmp0 (json_object_get_string_member (e, "name"), "process_name") == 0
                  && json_object_get_int_member (e, "pid") == pid;
        }
      g_assert_true (named);
    }
}

/* A slice per copy and steal, named so, with the view's call site and the
 * whole stack. */
static void
test_materializations (void)
{
  g_assert_cmpuint (count_events ("X", "copy"), ==, sql_int ("SELECT count(*) FROM copies"));
  g_assert_cmpuint (count_events ("X", "steal"), ==, sql_int ("SELECT count(*) FROM steals"));
  g_assert_cmpuint (count_events ("X", "copy"), >, 0);
  g_assert_cmpuint (count_events ("X", "lazy clone") + count_events ("i", "lazy clone"), ==,
                    sql_int ("SELECT count(*) FROM lazy_copies"));
  g_assert_cmpuint (count_events ("i", "eager clone"), ==,
                    sql_int ("SELECT count(*) FROM eager_fallbacks"));
  g_assert_cmpuint (count_events ("i", "simulate-mode warning"), ==,
                    sql_int ("SELECT count(*) FROM warnings"));

  sqlite3_stmt *site = NULL, *depth = NULL;
  g_assert_cmpint (sqlite3_prepare_v2 (db, "SELECT call_site, stack_id FROM copies_and_steals"
                                           " WHERE seq = ?", -1, &site, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_prepare_v2 (db, "SELECT count(*) FROM call_stacks WHERE stack_id = ?",
                                       -1, &depth, NULL), ==, SQLITE_OK);
  guint checked = 0;
  for (guint i = 0; i < json_array_get_length (events); i++)
    {
      JsonObject *e = json_array_get_object_element (events, i);
      const char *name = json_object_get_string_member (e, "name");
      if (g_strcmp0 (name, "copy") != 0 && g_strcmp0 (name, "steal") != 0)
        continue;
      JsonObject *args = json_object_get_object_member (e, "args");
      sqlite3_reset (site);
      sqlite3_bind_int64 (site, 1, json_object_get_int_member (args, "seq"));
      g_assert_cmpint (sqlite3_step (site), ==, SQLITE_ROW);
      if (sqlite3_column_type (site, 1) == SQLITE_NULL)
        continue;
      g_assert_cmpstr (json_object_get_string_member (args, "call_site"), ==,
                       (const char *) sqlite3_column_text (site, 0));
      sqlite3_reset (depth);
      sqlite3_bind_int64 (depth, 1, sqlite3_column_int64 (site, 1));
      g_assert_cmpint (sqlite3_step (depth), ==, SQLITE_ROW);
      g_assert_cmpuint (json_array_get_length (json_object_get_array_member (args, "stack")), ==,
                        sqlite3_column_int64 (depth, 0));
      checked++;
    }
  sqlite3_finalize (site);
  sqlite3_finalize (depth);
  g_assert_cmpuint (checked, >, 0);
}

/* The demo's IPC: every send, receive and release as a process instant,
 * every held block and limbo as an async slice. */
static void
test_ipc (void)
{
  g_assert_cmpuint (count_events ("i", "ipc send"), ==, sql_int ("SELECT count(*) FROM ipc_refs"));
  g_assert_cmpuint (count_events ("i", "ipc send"), ==, 12);
  g_assert_cmpuint (count_events ("i", "ipc receive"), ==,
                    sql_int ("SELECT count(*) FROM ipc_refs WHERE receive_ts IS NOT NULL"));
  g_assert_cmpuint (count_events ("i", "ipc release"), ==,
                    sql_int ("SELECT count(*) FROM ipc_refs WHERE release_ts IS NOT NULL"
                             " AND cached = 0"));
  g_assert_cmpuint (count_events ("b", "ipc held"), ==,
                    sql_int ("SELECT count(*) FROM ipc_refs WHERE receive_ts IS NOT NULL"
                             " AND cached = 0"));
  g_assert_cmpuint (count_events ("b", "ipc limbo"), ==,
                    sql_int ("SELECT count(*) FROM ipc_blocks WHERE limbo_enter_ts IS NOT NULL"));
  g_assert_cmpuint (count_events ("b", "ipc limbo"), >, 0);
  /* The receives are the consumers': other processes than the sends. */
  for (guint i = 0; i < json_array_get_length (events); i++)
    {
      JsonObject *e = json_array_get_object_element (events, i);
      const char *name = json_object_get_string_member (e, "name");
      if (g_strcmp0 (name, "ipc send") == 0 || g_strcmp0 (name, "ipc receive") == 0)
        {
          JsonObject *args = json_object_get_object_member (e, "args");
          g_assert_cmpstr (json_object_get_string_member (e, "s"), ==, "p");
          if (g_strcmp0 (name, "ipc receive") == 0)
            g_assert_cmpint (json_object_get_int_member (args, "producer_pid"), !=,
                             json_object_get_int_member (e, "pid"));
        }
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_autofree char *dir = g_dir_make_tmp ("cowscope-export-trace-XXXXXX", NULL);
  g_assert_nonnull (dir);
  if (!record_and_export (dir))
    {
      g_rmdir (dir);
      g_print ("1..0 # SKIP needs COWSCOPE_CLI and COWSCOPE_DEMO\n");
      return 0;
    }
  g_test_add_func ("/export-trace/properties", test_properties);
  g_test_add_func ("/export-trace/materializations", test_materializations);
  g_test_add_func ("/export-trace/ipc", test_ipc);
  int status = g_test_run ();

  sqlite3_close (db);
  g_clear_object (&parser);
  g_autofree char *json = g_build_filename (dir, "demo.json", NULL);
  g_unlink (json);
  g_unlink (session_path);
  g_rmdir (dir);
  g_free (session_path);
  return status;
}
