/* test-session-tables.c — a session's tables as reports and exports read
 * them: opened defensively, a session never finalized read from a
 * finalized copy (the file itself untouched). */
#include <glib/gstdio.h>
#include <string.h>

#include "cli-fixture.h"
#include "cowscope-session-tables.h"

typedef struct {
  char *dir;
  char *path;
} Fixture;

static void
fixture_set_up (Fixture *f, gconstpointer data)
{
  (void) data;
  f->dir = cli_fixture_tmpdir ();
  f->path = g_build_filename (f->dir, "s.cowscope", NULL);
}

static void
fixture_tear_down (Fixture *f, gconstpointer data)
{
  (void) data;
  cli_fixture_remove_tree (f->dir);
  g_free (f->dir);
  g_free (f->path);
}

/* Session files (*.cowscope) right in @dir. */
static guint
count_files (const char *dir)
{
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;
  guint n = 0;
  while (d != NULL && (name = g_dir_read_name (d)) != NULL)
    n += g_str_has_suffix (name, ".cowscope");
  return n;
}

/* Opening @path fails with @code and a message containing @fragment. */
static void
assert_open_fails (const char *path, int code, const char *fragment)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (CowscopeSessionTables) session = cowscope_session_tables_open (path, &error);

  g_assert_null (session);
  g_assert_error (error, COWSCOPE_SESSION_ERROR, code);
  g_test_message ("%s", error->message);
  g_assert_nonnull (strstr (error->message, fragment));
  g_assert_nonnull (strstr (error->message, path));
  g_assert_null (strchr (error->message, '\n'));
}

static void
test_open_finalized (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (CowscopeSessionTables) session = NULL;
  gint64 value = 0;

  (void) data;
  cli_fixture_write_session (f->path, TRUE, 0);
  session = cowscope_session_tables_open (f->path, &error);
  g_assert_no_error (error);
  g_assert_true (cowscope_session_tables_is_finalized (session));
  g_assert_cmpint (cowscope_session_tables_get_schema_version (session), ==, 4);
  g_assert_cmpstr (cowscope_session_tables_get_meta (session, "command"), ==, "train --epochs 1");
  g_assert_true (cowscope_session_tables_get_meta_int (session, "exit_status", &value));
  g_assert_cmpint (value, ==, 0);
  g_assert_false (cowscope_session_tables_get_meta_int (session, "command", &value));
  g_assert_null (cowscope_session_tables_get_meta (session, "no such key"));
  /* Lookup tables first, the engine's names when a table lacks a value. */
  g_assert_cmpstr (cowscope_session_tables_enum_name (session, "materialize_kinds", 2), ==, "steal");
  g_assert_cmpstr (cowscope_session_tables_enum_name (session, "ops", 19), ==, "add_");
  g_assert_cmpstr (cowscope_session_tables_enum_name (session, "ops", 999), ==, "ops #999");
  g_assert_true (cowscope_session_tables_has_column (session, "cuda_activity", "external_id"));
  g_assert_false (cowscope_session_tables_has_column (session, "cuda_activity", "nope"));
}

static void
test_open_not_finalized (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (CowscopeSessionTables) session = NULL;
  gint64 n = 0;

  (void) data;
  cli_fixture_write_session (f->path, FALSE, 0);
  session = cowscope_session_tables_open (f->path, &error);
  g_assert_no_error (error);
  g_assert_false (cowscope_session_tables_is_finalized (session));
  /* The derived tables are derived from the raw events. */
  g_assert_true (cowscope_session_tables_query_int (session,
                   "SELECT count(*) FROM materializations", &n, &error));
  g_assert_cmpint (n, ==, 3);
  g_assert_true (cowscope_session_tables_query_int (session,
                   "SELECT count(*) FROM lazy_clones WHERE eager_reason IS NULL", &n, &error));
  g_assert_cmpint (n, ==, 3);
  /* The file itself is never written: still unfinalized, with no
   * derived rows. */
  sqlite3 *db = NULL;
  sqlite3_stmt *stmt = NULL;
  g_assert_cmpint (sqlite3_open_v2 (f->path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_prepare_v2 (db, "SELECT (SELECT count(*) FROM materializations),"
                                       " (SELECT value FROM meta WHERE key = 'finalized')",
                                       -1, &stmt, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_step (stmt), ==, SQLITE_ROW);
  g_assert_cmpint (sqlite3_column_int (stmt, 0), ==, 0);
  g_assert_cmpint (sqlite3_column_int (stmt, 1), ==, 0);
  sqlite3_finalize (stmt);
  sqlite3_close (db);
  /* ... and the finalized copy (in this test's own TMPDIR: see main())
   * goes with the tables. */
  g_assert_cmpuint (count_files (g_get_tmp_dir ()), ==, 1);
  g_clear_pointer (&session, cowscope_session_tables_free);
  g_assert_cmpuint (count_files (g_get_tmp_dir ()), ==, 0);
}

static void
test_missing_file (Fixture *f, gconstpointer data)
{
  (void) data;
  assert_open_fails (f->path, COWSCOPE_SESSION_ERROR_NOT_FOUND, "No such file");
  assert_open_fails (f->dir, COWSCOPE_SESSION_ERROR_NOT_FOUND, "directory");
}

static void
test_text_file (Fixture *f, gconstpointer data)
{
  (void) data;
  g_assert_true (g_file_set_contents (f->path, "hello, I am text\nnot a database\n", -1, NULL));
  assert_open_fails (f->path, COWSCOPE_SESSION_ERROR_NOT_SQLITE, "is not an SQLite database");
}

static void
test_png_file (Fixture *f, gconstpointer data)
{
  static const char png[] = "\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x10\0\0\0\x10\x08\x06\0\0\0";

  (void) data;
  g_assert_true (g_file_set_contents (f->path, png, sizeof png - 1, NULL));
  assert_open_fails (f->path, COWSCOPE_SESSION_ERROR_NOT_SQLITE, "is not an SQLite database");
}

static void
test_empty_file (Fixture *f, gconstpointer data)
{
  (void) data;
  g_assert_true (g_file_set_contents (f->path, "", 0, NULL));
  assert_open_fails (f->path, COWSCOPE_SESSION_ERROR_NOT_SQLITE, "is empty");
}

static void
test_other_sqlite (Fixture *f, gconstpointer data)
{
  sqlite3 *db = NULL;

  (void) data;
  g_assert_cmpint (sqlite3_open (f->path, &db), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_exec (db, "CREATE TABLE photos (id INTEGER)", NULL, NULL, NULL), ==, SQLITE_OK);
  sqlite3_close (db);
  assert_open_fails (f->path, COWSCOPE_SESSION_ERROR_NOT_SESSION, "without Cowscope metadata");
}

static void
test_wrong_format (Fixture *f, gconstpointer data)
{
  (void) data;
  cli_fixture_write_session (f->path, TRUE, 0);
  cli_fixture_exec (f->path, "UPDATE meta SET value = 'something-else' WHERE key = 'format'");
  assert_open_fails (f->path, COWSCOPE_SESSION_ERROR_NOT_SESSION, "something-else");
}

static void
test_newer_user_version (Fixture *f, gconstpointer data)
{
  (void) data;
  cli_fixture_write_session (f->path, TRUE, 0);
  cli_fixture_exec (f->path, "PRAGMA user_version = 99");
  assert_open_fails (f->path, COWSCOPE_SESSION_ERROR_NEWER,
                     "was written by a newer Cowscope (schema 99; this build reads up to 4)");
}

static void
test_newer_meta_version (Fixture *f, gconstpointer data)
{
  (void) data;
  cli_fixture_write_session (f->path, TRUE, 0);
  cli_fixture_exec (f->path, "UPDATE meta SET value = 7 WHERE key = 'schema_version'");
  assert_open_fails (f->path, COWSCOPE_SESSION_ERROR_NEWER, "schema 7");
}

static void
test_missing_table (Fixture *f, gconstpointer data)
{
  (void) data;
  cli_fixture_write_session (f->path, TRUE, 0);
  cli_fixture_exec (f->path, "DROP TABLE materializations");
  assert_open_fails (f->path, COWSCOPE_SESSION_ERROR_DAMAGED, "'materializations' is missing");
}

static void
test_truncated_header (Fixture *f, gconstpointer data)
{
  g_autofree char *contents = NULL;
  gsize length = 0;

  (void) data;
  cli_fixture_write_session (f->path, TRUE, 0);
  g_assert_true (g_file_get_contents (f->path, &contents, &length, NULL));
  g_assert_true (g_file_set_contents (f->path, contents, 10, NULL));
  assert_open_fails (f->path, COWSCOPE_SESSION_ERROR_NOT_SQLITE, "not an SQLite database");
}

static void
test_damaged_schema_page (Fixture *f, gconstpointer data)
{
  g_autofree char *contents = NULL;
  gsize length = 0;

  (void) data;
  cli_fixture_write_session (f->path, TRUE, 0);
  g_assert_true (g_file_get_contents (f->path, &contents, &length, NULL));
  /* Scribble over the schema table's b-tree page header (page 1 after the
   * 100-byte file header). */
  memset (contents + 100, 0xee, 200);
  g_assert_true (g_file_set_contents (f->path, contents, length, NULL));
  assert_open_fails (f->path, COWSCOPE_SESSION_ERROR_DAMAGED, "is damaged");
}

int
main (int argc, char **argv)
{
  /* A temporary directory of its own, to see the finalized copies come
   * and go; set before GLib reads it. */
  char tmp[] = "/tmp/cowscope-test-tables-XXXXXX";
  g_assert_nonnull (mkdtemp (tmp));
  g_setenv ("TMPDIR", tmp, TRUE);
  g_test_init (&argc, &argv, NULL);

#define ADD(path, func) \
  g_test_add (path, Fixture, NULL, fixture_set_up, func, fixture_tear_down)
  ADD ("/cli/session/open-finalized", test_open_finalized);
  ADD ("/cli/session/open-not-finalized-reads-raw-events", test_open_not_finalized);
  ADD ("/cli/session/missing-file", test_missing_file);
  ADD ("/cli/session/text-file", test_text_file);
  ADD ("/cli/session/png-file", test_png_file);
  ADD ("/cli/session/empty-file", test_empty_file);
  ADD ("/cli/session/other-sqlite-database", test_other_sqlite);
  ADD ("/cli/session/wrong-format", test_wrong_format);
  ADD ("/cli/session/newer-user-version", test_newer_user_version);
  ADD ("/cli/session/newer-meta-version", test_newer_meta_version);
  ADD ("/cli/session/missing-table", test_missing_table);
  ADD ("/cli/session/truncated-header", test_truncated_header);
  ADD ("/cli/session/damaged-schema-page", test_damaged_schema_page);
#undef ADD

  int status = g_test_run ();
  g_rmdir (tmp);
  return status;
}
