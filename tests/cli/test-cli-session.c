/* test-cli-session.c — opening session files defensively. */
#include <glib/gstdio.h>
#include <string.h>

#include "cli-fixture.h"
#include "cowscope-session.h"

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

/* Opening @path fails with @code and a message containing @fragment. */
static void
assert_open_fails (const char *path, int code, const char *fragment)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (CowscopeSession) session = cowscope_session_open (path, &error);

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
  g_autoptr (CowscopeSession) session = NULL;
  gint64 value = 0;

  (void) data;
  cli_fixture_write_session (f->path, TRUE, 0);
  session = cowscope_session_open (f->path, &error);
  g_assert_no_error (error);
  g_assert_true (cowscope_session_is_finalized (session));
  g_assert_cmpint (cowscope_session_get_schema_version (session), ==, 3);
  g_assert_cmpstr (cowscope_session_get_meta (session, "command"), ==, "train --epochs 1");
  g_assert_true (cowscope_session_get_meta_int (session, "exit_status", &value));
  g_assert_cmpint (value, ==, 0);
  g_assert_false (cowscope_session_get_meta_int (session, "command", &value));
  g_assert_null (cowscope_session_get_meta (session, "no such key"));
  /* Lookup tables first, the engine's names when a table lacks a value. */
  g_assert_cmpstr (cowscope_session_enum_name (session, "materialize_kinds", 2), ==, "steal");
  g_assert_cmpstr (cowscope_session_enum_name (session, "ops", 19), ==, "add_");
  g_assert_cmpstr (cowscope_session_enum_name (session, "ops", 999), ==, "ops #999");
  g_assert_true (cowscope_session_has_column (session, "cuda_activity", "external_id"));
  g_assert_false (cowscope_session_has_column (session, "cuda_activity", "nope"));
}

static void
test_open_not_finalized (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (CowscopeSession) session = NULL;
  gint64 n = 0;

  (void) data;
  cli_fixture_write_session (f->path, FALSE, 0);
  session = cowscope_session_open (f->path, &error);
  g_assert_no_error (error);
  g_assert_false (cowscope_session_is_finalized (session));
  /* The derived tables are read from the raw events. */
  g_assert_true (cowscope_session_query_int (session,
                   "SELECT count(*) FROM materializations", &n, &error));
  g_assert_cmpint (n, ==, 3);
  g_assert_true (cowscope_session_query_int (session,
                   "SELECT count(*) FROM lazy_clones WHERE eager_reason IS NULL", &n, &error));
  g_assert_cmpint (n, ==, 3);
  /* The file itself is never written. */
  g_assert_true (cowscope_session_query_int (session,
                   "SELECT count(*) FROM main.materializations", &n, &error));
  g_assert_cmpint (n, ==, 0);
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
  assert_open_fails (f->path, COWSCOPE_SESSION_ERROR_NOT_SESSION, "is not an SQLite database");
}

static void
test_png_file (Fixture *f, gconstpointer data)
{
  static const char png[] = "\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x10\0\0\0\x10\x08\x06\0\0\0";

  (void) data;
  g_assert_true (g_file_set_contents (f->path, png, sizeof png - 1, NULL));
  assert_open_fails (f->path, COWSCOPE_SESSION_ERROR_NOT_SESSION, "is not an SQLite database");
}

static void
test_empty_file (Fixture *f, gconstpointer data)
{
  (void) data;
  g_assert_true (g_file_set_contents (f->path, "", 0, NULL));
  assert_open_fails (f->path, COWSCOPE_SESSION_ERROR_NOT_SESSION, "is empty");
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
                     "was written by a newer Cowscope (schema 99; this build reads up to 3)");
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
  assert_open_fails (f->path, COWSCOPE_SESSION_ERROR_NOT_SESSION, "not an SQLite database");
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

  return g_test_run ();
}
