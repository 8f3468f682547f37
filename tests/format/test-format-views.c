/* test-format-views.c — the session views (session-views.sql): what
 * finalizing creates, their values on a known recording, the call-site
 * rule, that they never read `events`, their upgrade into older sessions,
 * and the TEMP views readers create, which shadow a file's own. */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>

#include "cow-trace.h"
#include "cowscope-format-finalize.h"
#include "cowscope-format-open.h"
#include "cowscope-format-schema.h"
#include "cowscope-format-views.h"
#include "cowscope-format-vocabulary.h"

typedef struct {
  char *dir;
  char *path;
} Fixture;

static void
exec_ok (sqlite3 *db, const char *sql)
{
  if (cowscope_format_exec (db, sql) != SQLITE_OK)
    g_error ("%s: %s", sql, sqlite3_errmsg (db));
}

static gint64
query_int (sqlite3 *db, const char *sql)
{
  sqlite3_stmt *stmt = NULL;
  if (cowscope_format_prepare (db, sql, &stmt) != SQLITE_OK)
    g_error ("%s: %s", sql, sqlite3_errmsg (db));
  g_assert_cmpint (sqlite3_step (stmt), ==, SQLITE_ROW);
  gint64 value = sqlite3_column_int64 (stmt, 0);
  sqlite3_finalize (stmt);
  return value;
}

static double
query_double (sqlite3 *db, const char *sql)
{
  sqlite3_stmt *stmt = NULL;
  if (cowscope_format_prepare (db, sql, &stmt) != SQLITE_OK)
    g_error ("%s: %s", sql, sqlite3_errmsg (db));
  g_assert_cmpint (sqlite3_step (stmt), ==, SQLITE_ROW);
  double value = sqlite3_column_double (stmt, 0);
  sqlite3_finalize (stmt);
  return value;
}

/* The first row's first column as a new string (NULL for NULL). */
static char *
query_text (sqlite3 *db, const char *sql)
{
  sqlite3_stmt *stmt = NULL;
  if (cowscope_format_prepare (db, sql, &stmt) != SQLITE_OK)
    g_error ("%s: %s", sql, sqlite3_errmsg (db));
  g_assert_cmpint (sqlite3_step (stmt), ==, SQLITE_ROW);
  char *value = g_strdup ((const char *) sqlite3_column_text (stmt, 0));
  sqlite3_finalize (stmt);
  return value;
}

static void
assert_text (sqlite3 *db, const char *sql, const char *expected)
{
  g_autofree char *value = query_text (db, sql);
  g_assert_cmpstr (value, ==, expected);
}

/* A recording never finalized (pid 100, thread 1 "main", events from
 * t = 1000 ns): tensor 3 "weights" (4096 bytes, f32) lazily cloned into
 * tensor 6 in range "step 0"; add_ on the clone copies (stack 2: its
 * innermost frames are the engine's, then train.c:88 in update_weights);
 * scale_ on the source then steals (stack 3: engine frames only); an
 * eager clone of foreign memory without a stack; a read through tensor 6
 * after a write through tensor 3 (stack 4: an unsymbolized address in
 * /usr/bin/train above an engine frame).  The session ends at 1200 ns. */
static void
write_recording (const char *path)
{
  sqlite3 *db = NULL;
  g_unlink (path);
  g_assert_cmpint (sqlite3_open (path, &db), ==, SQLITE_OK);
  exec_ok (db, "PRAGMA synchronous = OFF");
  g_assert_true (cowscope_format_create_schema (db));
  g_autofree char *sql = g_strdup_printf (
    "INSERT INTO meta VALUES ('format', 'cowscope-session'), ('schema_version', 2),"
    " ('finalized', 0), ('program', 'train');"
    "INSERT INTO processes (pid, exe) VALUES (100, '/usr/bin/train');"
    "INSERT INTO threads (pid, tid, name, produced, stored) VALUES (100, 1, 'main', 20, 20);"
    "INSERT INTO strings VALUES (100, 1, 'weights'), (100, 2, 'step 0');"
    "INSERT INTO frames (id, pid, address, module, function, file, line) VALUES"
    " (1, 100, 4096, '/usr/lib/libcowtensor.so.0', 'cow_storage_mutable_data', 'cow-storage.c', 10),"
    " (2, 100, 8192, '/usr/lib/libcowtensor.so.0', 'cow_tensor_add_', 'cow-ops.c', 20),"
    " (3, 100, 12288, '/usr/bin/train', 'update_weights', '/src/train/train.c', 88),"
    " (4, 100, 16384, '/usr/bin/train', 'main', '/src/train/train.c', 120),"
    " (5, 100, 20480, '/usr/lib/libcowtensor.so.0', NULL, NULL, NULL),"
    " (6, 100, 48879, '/usr/bin/train', NULL, NULL, NULL),"
    " (7, 100, 24576, '/usr/lib/libcowscope-probe.so', 'probe_stack', NULL, NULL),"
    " (8, 100, 28672, '/usr/bin/train', 'helper', NULL, NULL);"
    "INSERT INTO stacks VALUES (1, 2), (2, 4), (3, 2), (4, 2);"
    "INSERT INTO stack_frames VALUES (1, 0, 8), (1, 1, 4),"
    " (2, 0, 1), (2, 1, 2), (2, 2, 3), (2, 3, 4),"
    " (3, 0, 5), (3, 1, 7),"
    " (4, 0, 1), (4, 1, 6);"
    "INSERT INTO events (ts, pid, tid, type, op, aux, v0, v1, v2, v3, v4, stack_id) VALUES"
    " (1000, 100, 1, :ev_range_begin, %d, 0, 10, 2, 0, 0, 0, NULL),"
    " (1005, 100, 1, :ev_allocation_new, %d, 0, 1, 4096, 65536, 0, 0, NULL),"
    " (1010, 100, 1, :ev_storage_new, %d, 0, 2, 1, 4096, 0, 0, NULL),"
    " (1020, 100, 1, :ev_tensor_new, %d, 256, 3, 2, 0, 1024, 0, NULL),"
    " (1021, 100, 1, :ev_tensor_name, %d, 0, 3, 1, 0, 0, 0, NULL),"
    " (1030, 100, 1, :ev_context_new, %d, 0, 4, 2, 2, 1, 0, NULL),"
    " (1040, 100, 1, :ev_storage_new, %d, 0, 5, 1, 4096, 4, 2, NULL),"
    " (1045, 100, 1, :ev_tensor_new, %d, 256, 6, 5, 3, 1024, 0, NULL),"
    " (1050, 100, 1, :ev_lazy_clone, %d, 0, 3, 6, 2, 5, 4, 1),"
    " (1060, 100, 1, :ev_materialize_begin, %d, 0, 5, 4, 6, 4096, 0, 2),"
    " (1065, 100, 1, :ev_allocation_new, %d, 0, 7, 4096, 131072, 0, 0, NULL),"
    " (1070, 100, 1, :ev_context_unref, %d, 0, 4, 5, 1, 1, 0, NULL),"
    " (1080, 100, 1, :ev_materialize_end, %d, :materialize_copy, 5, 4, 7, 4096, 30, NULL),"
    " (1090, 100, 1, :ev_range_end, %d, 0, 10, 0, 0, 0, 0, NULL),"
    " (1100, 100, 1, :ev_materialize_begin, %d, 0, 2, 4, 3, 4096, 0, 3),"
    " (1110, 100, 1, :ev_materialize_end, %d, :materialize_steal, 2, 4, 1, 4096, 0, NULL),"
    " (1120, 100, 1, :ev_lazy_clone_eager, %d, :eager_foreign_data_ptr, 3, 8, 2, 9, 2048, NULL),"
    " (1130, 100, 1, :ev_simulate_violation, %d, :access_read, 2, 3, 6, 1, 0, 4),"
    " (1190, 100, 1, :ev_tensor_free, %d, 0, 6, 5, 3, 1024, 0, NULL),"
    " (1200, 100, 1, :ev_storage_free, %d, 0, 5, 7, 4096, 0, 0, NULL);",
    COW_OP_NONE, COW_OP_EMPTY, COW_OP_EMPTY, COW_OP_EMPTY, COW_OP_NONE, COW_OP_LAZY_CLONE,
    COW_OP_LAZY_CLONE, COW_OP_LAZY_CLONE, COW_OP_LAZY_CLONE, COW_OP_ADD_, COW_OP_ADD_,
    COW_OP_ADD_, COW_OP_ADD_, COW_OP_NONE, COW_OP_SCALE_, COW_OP_SCALE_, COW_OP_LAZY_CLONE,
    COW_OP_NONE, COW_OP_NONE, COW_OP_NONE);
  exec_ok (db, sql);
  sqlite3_close (db);
}

/* Finalizes @path in place. */
static void
finalize (const char *path)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (sqlite3) db = cowscope_format_open (path, COWSCOPE_FORMAT_OPEN_READ_WRITE, NULL,
                                                 &error);
  g_assert_no_error (error);
  g_assert_true (cowscope_format_finalize (db, path, NULL, &error));
  g_assert_no_error (error);
}

static sqlite3 *
open_file (const char *path, int flags)
{
  sqlite3 *db = NULL;
  g_assert_cmpint (sqlite3_open_v2 (path, &db, flags, NULL), ==, SQLITE_OK);
  return db;
}

static gint64
count_views (sqlite3 *db, const char *schema)
{
  /* `marks` is the schema's own view of the mark events (version 4),
   * there from the start; these are the views finalize creates. */
  g_autofree char *sql = g_strdup_printf ("SELECT count(*) FROM %s.sqlite_master WHERE type = 'view'"
                                          " AND name != 'marks'",
                                          schema);
  return query_int (db, sql);
}

static void
fixture_set_up (Fixture *f, gconstpointer data)
{
  (void) data;
  f->dir = g_dir_make_tmp ("cowscope-views-XXXXXX", NULL);
  g_assert_nonnull (f->dir);
  f->path = g_build_filename (f->dir, "s.cowscope", NULL);
  write_recording (f->path);
}

static void
fixture_tear_down (Fixture *f, gconstpointer data)
{
  (void) data;
  g_autoptr (GDir) dir = g_dir_open (f->dir, 0, NULL);
  const char *name;
  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *child = g_build_filename (f->dir, name, NULL);
      g_unlink (child);
    }
  g_rmdir (f->dir);
  g_free (f->path);
  g_free (f->dir);
}

/* Finalizing creates every view, and the span its *_ms columns count from. */
static void
test_finalize_creates (Fixture *f, gconstpointer data)
{
  (void) data;
  const char *const *names = cowscope_format_view_names ();
  guint n = g_strv_length ((char **) names);
  g_assert_cmpuint (n, >=, 10);
  for (const char *want[] = { "copies", "steals", "lazy_copies", "eager_fallbacks", "warnings",
                              "call_sites", "call_sites_by_bytes", "object_lifetimes", NULL },
       **w = want; *w != NULL; w++)
    g_assert_true (g_strv_contains (names, *w));

  sqlite3 *db = open_file (f->path, SQLITE_OPEN_READONLY);
  g_assert_cmpint (count_views (db, "main"), ==, 0);
  sqlite3_close (db);
  finalize (f->path);
  db = open_file (f->path, SQLITE_OPEN_READONLY);
  g_assert_cmpint (count_views (db, "main"), ==, n);
  for (const char *const *name = names; *name != NULL; name++)
    {
      g_autofree char *sql = g_strdup_printf ("SELECT count(*) FROM sqlite_master"
                                              " WHERE type = 'view' AND name = '%s'", *name);
      g_assert_cmpint (query_int (db, sql), ==, 1);
    }
  g_assert_cmpint (query_int (db, "SELECT value FROM meta WHERE key = 'start_ns'"), ==, 1000);
  g_assert_cmpint (query_int (db, "SELECT value FROM meta WHERE key = 'end_ns'"), ==, 1200);
  sqlite3_close (db);
}

/* The views' values on the known recording. */
static void
test_values (Fixture *f, gconstpointer data)
{
  (void) data;
  finalize (f->path);
  sqlite3 *db = open_file (f->path, SQLITE_OPEN_READONLY);

  g_assert_cmpint (query_int (db, "SELECT count(*) FROM copies"), ==, 1);
  g_assert_cmpfloat (query_double (db, "SELECT at_ms FROM copies"), ==, 60e-6);
  g_assert_cmpfloat (query_double (db, "SELECT duration_ms FROM copies"), ==, 20e-6);
  g_assert_cmpfloat (query_double (db, "SELECT lock_wait_ms FROM copies"), ==, 30e-6);
  g_assert_cmpint (query_int (db, "SELECT bytes FROM copies"), ==, 4096);
  g_assert_cmpint (query_int (db, "SELECT start_ns FROM copies"), ==, 1060);
  assert_text (db, "SELECT operation FROM copies", "add_");
  assert_text (db, "SELECT tensor FROM copies", "tensor 6");
  assert_text (db, "SELECT call_site FROM copies", "update_weights (train.c:88)");
  assert_text (db, "SELECT in_range FROM copies", "step 0");
  assert_text (db, "SELECT thread FROM copies", "main (1)");

  g_assert_cmpint (query_int (db, "SELECT count(*) FROM steals"), ==, 1);
  assert_text (db, "SELECT tensor FROM steals", "weights");
  assert_text (db, "SELECT operation FROM steals", "scale_");
  assert_text (db, "SELECT in_range FROM steals", NULL);
  assert_text (db, "SELECT group_concat (kind) FROM (SELECT kind FROM copies_and_steals"
                   " ORDER BY at_ms)", "copy,steal");

  g_assert_cmpint (query_int (db, "SELECT count(*) FROM lazy_copies"), ==, 1);
  assert_text (db, "SELECT source || ' -> ' || result FROM lazy_copies", "weights -> tensor 6");
  g_assert_cmpint (query_int (db, "SELECT copies_caused FROM lazy_copies"), ==, 1);
  g_assert_cmpint (query_int (db, "SELECT steals_caused FROM lazy_copies"), ==, 1);
  g_assert_cmpint (query_int (db, "SELECT bytes FROM lazy_copies"), ==, 4096);
  assert_text (db, "SELECT call_site FROM lazy_copies", "helper");

  g_assert_cmpint (query_int (db, "SELECT count(*) FROM eager_fallbacks"), ==, 1);
  assert_text (db, "SELECT reason FROM eager_fallbacks", "foreign_data_ptr");
  g_assert_cmpint (query_int (db, "SELECT bytes FROM eager_fallbacks"), ==, 2048);
  assert_text (db, "SELECT call_site FROM eager_fallbacks", "(no call stack)");

  assert_text (db, "SELECT message FROM warnings",
               "read through 'tensor 6' after a write through 'weights'");

  /* Grouped by call site: the copy's site first. */
  assert_text (db, "SELECT call_site FROM call_sites_by_bytes LIMIT 1",
               "update_weights (train.c:88)");
  g_assert_cmpint (query_int (db, "SELECT copied_bytes FROM call_sites_by_bytes LIMIT 1"), ==, 4096);
  g_assert_cmpint (query_int (db, "SELECT count(*) FROM call_sites_by_bytes"), ==, 2);
  g_assert_cmpint (query_int (db, "SELECT stolen_bytes FROM call_sites_by_bytes"
                                  " WHERE copies = 0"), ==, 4096);
  assert_text (db, "SELECT group_concat (operation) FROM operations_by_bytes", "add_,scale_");

  /* Lifetimes: tensor 6 lived from 45 to 190 ns; the allocation never freed. */
  assert_text (db, "SELECT object FROM object_lifetimes WHERE kind = 'tensor' AND id = 3",
               "tensor 3 'weights'");
  g_assert_cmpint (query_int (db, "SELECT bytes FROM object_lifetimes"
                                  " WHERE kind = 'tensor' AND id = 3"), ==, 4096);
  g_assert_cmpfloat (query_double (db, "SELECT freed_ms FROM object_lifetimes"
                                       " WHERE kind = 'tensor' AND id = 6"), ==, 190e-6);
  g_assert_cmpfloat (query_double (db, "SELECT alive_until_ms FROM object_lifetimes"
                                       " WHERE kind = 'allocation' AND id = 1"), ==, 200e-6);
  g_assert_cmpint (query_int (db, "SELECT count(*) FROM object_lifetimes"
                                  " WHERE born_ms <= 150e-6 AND alive_until_ms > 150e-6"
                                  " AND kind = 'tensor'"), ==, 2);
  g_assert_cmpint (query_int (db, "SELECT count(*) FROM object_lifetimes"
                                  " WHERE born_ms <= 195e-6 AND alive_until_ms > 195e-6"
                                  " AND kind = 'tensor'"), ==, 1);

  g_assert_cmpint (query_int (db, "SELECT copies FROM user_ranges WHERE name = 'step 0'"), ==, 1);
  g_assert_cmpfloat (query_double (db, "SELECT duration_ms FROM user_ranges"), ==, 90e-6);
  /* The steal came after the range closed, the lazy copy (4 KiB) inside
   * it, the eager fallback after it. */
  assert_text (db, "SELECT steals || ' ' || stolen_bytes || ' ' || lazy_copies || ' '"
                   " || shared_bytes FROM user_ranges WHERE name = 'step 0'", "0 0 1 4096");

  g_assert_cmpint (query_int (db, "SELECT copies FROM session_overview"), ==, 1);
  g_assert_cmpint (query_int (db, "SELECT steals FROM session_overview"), ==, 1);
  g_assert_cmpint (query_int (db, "SELECT warnings FROM session_overview"), ==, 1);
  g_assert_cmpfloat (query_double (db, "SELECT duration_ms FROM session_overview"), ==, 200e-6);
  sqlite3_close (db);
}

/* A call site is the innermost symbolized frame outside Cowscope, else
 * the innermost outside it, else the innermost frame. */
static void
test_call_site_rule (Fixture *f, gconstpointer data)
{
  (void) data;
  finalize (f->path);
  sqlite3 *db = open_file (f->path, SQLITE_OPEN_READONLY);
  assert_text (db, "SELECT call_site FROM call_sites WHERE stack_id = 1", "helper");
  assert_text (db, "SELECT call_site FROM call_sites WHERE stack_id = 2",
               "update_weights (train.c:88)");
  g_assert_cmpint (query_int (db, "SELECT line FROM call_sites WHERE stack_id = 2"), ==, 88);
  assert_text (db, "SELECT file FROM call_sites WHERE stack_id = 2", "/src/train/train.c");
  /* Engine frames only: the innermost one, an address in its module. */
  assert_text (db, "SELECT call_site FROM call_sites WHERE stack_id = 3",
               "0x5000 in libcowtensor.so.0");
  /* An unsymbolized frame of the program wins over the engine's. */
  assert_text (db, "SELECT call_site FROM call_sites WHERE stack_id = 4", "0xbeef in train");
  /* Every frame of a stack, innermost first, flagged. */
  assert_text (db, "SELECT group_concat (frame, ' | ') FROM (SELECT frame FROM call_stacks"
                   " WHERE stack_id = 2 ORDER BY position)",
               "cow_storage_mutable_data (cow-storage.c:10) | cow_tensor_add_ (cow-ops.c:20)"
               " | update_weights (train.c:88) | main (train.c:120)");
  assert_text (db, "SELECT group_concat (in_cowscope) FROM (SELECT in_cowscope FROM call_stacks"
                   " WHERE stack_id IN (2, 3) ORDER BY stack_id, position)", "1,1,0,0,1,1");
  sqlite3_close (db);
}

/* Every column of every view, as text, in a fixed order. */
static char *
dump_views (sqlite3 *db)
{
  GString *out = g_string_new (NULL);
  for (const char *const *name = cowscope_format_view_names (); *name != NULL; name++)
    {
      g_autofree char *sql = g_strdup_printf ("SELECT * FROM %s ORDER BY 1, 2, 3", *name);
      sqlite3_stmt *stmt = NULL;
      if (sqlite3_prepare_v2 (db, sql, -1, &stmt, NULL) != SQLITE_OK)
        g_error ("%s: %s", sql, sqlite3_errmsg (db));
      int rc;
      g_string_append_printf (out, "%s:\n", *name);
      while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
        {
          for (int i = 0; i < sqlite3_column_count (stmt); i++)
            g_string_append_printf (out, "%s|", sqlite3_column_type (stmt, i) == SQLITE_NULL
                                                  ? "NULL"
                                                  : (const char *) sqlite3_column_text (stmt, i));
          g_string_append_c (out, '\n');
        }
      if (rc != SQLITE_DONE)
        g_error ("%s: %s", sql, sqlite3_errmsg (db));
      sqlite3_finalize (stmt);
    }
  return g_string_free (out, FALSE);
}

/* The views read only derived tables: without `events` (another storage
 * of the raw events) they give the same rows; and they need no trusted
 * schema, as in a careful sqlite3 shell. */
static void
test_without_events (Fixture *f, gconstpointer data)
{
  (void) data;
  finalize (f->path);
  sqlite3 *db = open_file (f->path, SQLITE_OPEN_READWRITE);
  g_autofree char *before = dump_views (db);
  exec_ok (db, "DROP TABLE events; PRAGMA trusted_schema = OFF");
  g_autofree char *after = dump_views (db);
  g_assert_cmpstr (after, ==, before);
  g_assert_nonnull (strstr (after, "update_weights (train.c:88)"));
  sqlite3_close (db);
}

/* A session finalized by an older version (no views, no span) gets both
 * when finalized again or read through a finalized copy; stale
 * definitions are replaced. */
static void
test_upgrade (Fixture *f, gconstpointer data)
{
  (void) data;
  finalize (f->path);
  sqlite3 *db = open_file (f->path, SQLITE_OPEN_READWRITE);
  for (const char *const *name = cowscope_format_view_names (); *name != NULL; name++)
    {
      g_autofree char *sql = g_strdup_printf ("DROP VIEW %s", *name);
      exec_ok (db, sql);
    }
  exec_ok (db, "DELETE FROM meta WHERE key IN ('start_ns', 'end_ns');"
               "CREATE VIEW copies AS SELECT 'stale' AS at_ms;"
               "CREATE VIEW my_own AS SELECT 42 AS answer");
  sqlite3_close (db);

  g_autoptr (GError) error = NULL;
  g_autofree char *copy = cowscope_format_finalized_copy (f->path, &error);
  g_assert_no_error (error);
  db = open_file (copy, SQLITE_OPEN_READONLY);
  g_assert_cmpint (count_views (db, "main"), ==,
                   g_strv_length ((char **) cowscope_format_view_names ()) + 1);
  g_assert_cmpfloat (query_double (db, "SELECT at_ms FROM copies"), ==, 60e-6);
  g_assert_cmpint (query_int (db, "SELECT answer FROM my_own"), ==, 42);
  sqlite3_close (db);
  g_unlink (copy);

  /* `cowscope-cli finalize` finalizes it again in place. */
  finalize (f->path);
  db = open_file (f->path, SQLITE_OPEN_READONLY);
  g_assert_cmpfloat (query_double (db, "SELECT at_ms FROM copies"), ==, 60e-6);
  g_assert_cmpint (query_int (db, "SELECT value FROM meta WHERE key = 'start_ns'"), ==, 1000);
  g_assert_cmpint (query_int (db, "SELECT answer FROM my_own"), ==, 42);
  sqlite3_close (db);
}

/* A reader's TEMP views: on a read-only connection to a session without
 * views, and shadowing a file's own view of the same name. */
static void
test_temp_views (Fixture *f, gconstpointer data)
{
  (void) data;
  finalize (f->path);
  sqlite3 *db = open_file (f->path, SQLITE_OPEN_READWRITE);
  exec_ok (db, "DROP VIEW call_sites;"
               "CREATE VIEW call_sites AS SELECT 2 AS stack_id, 'not the call site' AS call_site");
  sqlite3_close (db);

  db = open_file (f->path, SQLITE_OPEN_READONLY);
  assert_text (db, "SELECT call_site FROM call_sites WHERE stack_id = 2", "not the call site");
  g_assert_true (cowscope_format_create_temp_views (db));
  g_assert_true (cowscope_format_create_temp_views (db));
  g_assert_cmpint (count_views (db, "temp"), ==,
                   g_strv_length ((char **) cowscope_format_view_names ()));
  assert_text (db, "SELECT call_site FROM call_sites WHERE stack_id = 2",
               "update_weights (train.c:88)");
  assert_text (db, "SELECT call_site FROM copies", "update_weights (train.c:88)");
  sqlite3_close (db);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
#define ADD(path, func) g_test_add (path, Fixture, NULL, fixture_set_up, func, fixture_tear_down)
  ADD ("/format/views/finalize-creates", test_finalize_creates);
  ADD ("/format/views/values", test_values);
  ADD ("/format/views/call-site-rule", test_call_site_rule);
  ADD ("/format/views/without-events", test_without_events);
  ADD ("/format/views/upgrade", test_upgrade);
  ADD ("/format/views/temp", test_temp_views);
#undef ADD
  return g_test_run ();
}
