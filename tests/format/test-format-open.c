/* test-format-open.c — the session file itself: the schema and its
 * versions, what the finalizer derives, the opener's refusals, and the
 * finalized copy that readers of an older or unfinished session use
 * (the file they name is never written). */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>

#include "cow-dtype.h"
#include "cow-trace.h"
#include "cowscope-format-finalize.h"
#include "cowscope-format-open.h"
#include "cowscope-format-schema.h"
#include "cowscope-format-vocabulary.h"

#define PID 100

typedef struct {
  char *dir;
  char *path;
} Fixture;

static void
exec_ok (sqlite3 *db, const char *sql)
{
  g_assert_cmpint (cowscope_format_exec (db, sql), ==, SQLITE_OK);
}

static gint64
query_int (sqlite3 *db, const char *sql)
{
  sqlite3_stmt *stmt = NULL;
  g_assert_cmpint (cowscope_format_prepare (db, sql, &stmt), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_step (stmt), ==, SQLITE_ROW);
  gint64 value = sqlite3_column_int64 (stmt, 0);
  sqlite3_finalize (stmt);
  return value;
}

static gint64
file_int (const char *path, const char *sql)
{
  sqlite3 *db = NULL;
  g_assert_cmpint (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  gint64 value = query_int (db, sql);
  sqlite3_close (db);
  return value;
}

static void
file_exec (const char *path, const char *sql)
{
  sqlite3 *db = NULL;
  g_assert_cmpint (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READWRITE, NULL), ==, SQLITE_OK);
  exec_ok (db, "PRAGMA synchronous = OFF");
  exec_ok (db, sql);
  sqlite3_close (db);
}

/* A session as the recorder leaves it when it dies: the schema, its meta,
 * one thread's raw events (a tensor lazily cloned, the clone copied on
 * write), never finalized. */
static void
write_recording (const char *path)
{
  sqlite3 *db = NULL;
  g_unlink (path);
  g_assert_cmpint (sqlite3_open (path, &db), ==, SQLITE_OK);
  exec_ok (db, "PRAGMA synchronous = OFF"); /* a test file: no fsync per statement */
  g_assert_true (cowscope_format_create_schema (db));
  exec_ok (db,
           "INSERT INTO meta VALUES ('format', 'cowscope-session'), ('schema_version', 2),"
           " ('finalized', 0);"
           "INSERT INTO threads (pid, tid, name, produced, stored) VALUES (100, 1, 'main', 9, 9);"
           "INSERT INTO events (ts, pid, tid, type, op, aux, v0, v1, v2, v3, v4) VALUES"
           " (1000, 100, 1, :ev_allocation_new, 1, 0, 1, 4096, 0, 0, 0),"
           " (1010, 100, 1, :ev_storage_new, 1, 0, 2, 1, 4096, 0, 0),"
           " (1020, 100, 1, :ev_tensor_new, 1, 256, 3, 2, 0, 1024, 0),"
           " (1030, 100, 1, :ev_context_new, 15, 0, 4, 2, 2, 1, 0),"
           " (1040, 100, 1, :ev_storage_new, 15, 0, 5, 1, 4096, 4, 2),"
           " (1050, 100, 1, :ev_lazy_clone, 15, 0, 3, 6, 2, 5, 4),"
           " (1060, 100, 1, :ev_materialize_begin, 19, 0, 5, 4, 6, 4096, 0),"
           " (1070, 100, 1, :ev_context_unref, 19, 0, 4, 5, 1, 1, 0),"
           " (1080, 100, 1, :ev_materialize_end, 19, :materialize_copy, 5, 4, 7, 4096, 30);");
  sqlite3_close (db);
}

static void
fixture_set_up (Fixture *f, gconstpointer data)
{
  (void) data;
  f->dir = g_dir_make_tmp ("cowscope-format-XXXXXX", NULL);
  g_assert_nonnull (f->dir);
  f->path = g_build_filename (f->dir, "s.cowscope", NULL);
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

static void
test_schema (Fixture *f, gconstpointer data)
{
  (void) data;
  g_assert_cmpint (cowscope_format_schema_version (), ==, 4);
  sqlite3 *db = NULL;
  g_assert_cmpint (sqlite3_open (f->path, &db), ==, SQLITE_OK);
  exec_ok (db, "PRAGMA synchronous = OFF");
  g_assert_true (cowscope_format_create_schema (db));
  g_assert_cmpint (query_int (db, "PRAGMA user_version"), ==, cowscope_format_schema_version ());
  const char *const *v1 = cowscope_format_required_tables (1);
  const char *const *v2 = cowscope_format_required_tables (2);
  const char *const *v3 = cowscope_format_required_tables (3);
  const char *const *v4 = cowscope_format_required_tables (4);
  g_assert_nonnull (v1);
  g_assert_nonnull (v2);
  g_assert_nonnull (v3);
  g_assert_nonnull (v4);
  g_assert_null (cowscope_format_required_tables (5));
  g_assert_null (cowscope_format_required_tables (0));
  for (gsize i = 0; v4[i] != NULL; i++)
    {
      g_autofree char *sql = g_strdup_printf (
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = '%s'", v4[i]);
      g_assert_cmpint (query_int (db, sql), ==, 1);
    }
  /* Version 4: events packed (read through a virtual table), marks a view. */
  for (gsize i = 0; v3[i] != NULL; i++)
    g_assert_true (g_strv_contains (v4, v3[i]) || g_strcmp0 (v3[i], "marks") == 0);
  g_assert_true (g_strv_contains (v4, "event_chunks"));
  g_assert_false (g_strv_contains (v3, "event_chunks"));
  g_assert_cmpint (query_int (db, "SELECT count(*) FROM sqlite_master WHERE name = 'events'"
                                  " AND sql LIKE 'CREATE VIRTUAL TABLE%'"), ==, 1);
  g_assert_cmpint (query_int (db, "SELECT count(*) FROM sqlite_master WHERE type = 'view'"
                                  " AND name = 'marks'"), ==, 1);
  /* The view names the mark's code as a number: it must be the engine's. */
  exec_ok (db, "INSERT INTO strings VALUES (1, 5, 'here');"
               "INSERT INTO events (ts, pid, tid, type, op, aux, v0, v1, v2, v3, v4) VALUES"
               " (10, 1, 1, :ev_mark, 0, 0, 0, 5, 0, 0, 0),"
               " (11, 1, 1, :ev_range_begin, 0, 0, 1, 5, 0, 0, 0)");
  g_assert_cmpint (query_int (db, "SELECT count(*) FROM marks WHERE name = 'here' AND ts = 10"),
                   ==, 1);
  g_assert_cmpint (query_int (db, "SELECT count(*) FROM marks"), ==, 1);
  for (gsize i = 0; v1[i] != NULL; i++)
    g_assert_true (g_strv_contains (v2, v1[i]));
  for (gsize i = 0; v2[i] != NULL; i++)
    g_assert_true (g_strv_contains (v3, v2[i]));
  g_assert_true (g_strv_contains (v2, "checkpoint_states"));
  g_assert_false (g_strv_contains (v1, "checkpoint_states"));
  g_assert_true (g_strv_contains (v3, "thread_events"));
  g_assert_false (g_strv_contains (v2, "thread_events"));

  /* The lookup tables hold the engine's names. */
  g_assert_true (cowscope_format_fill_lookup_tables (db));
  g_assert_cmpint (query_int (db, "SELECT count(*) FROM event_types"), ==, COW_N_EVENT_TYPES);
  g_assert_cmpint (query_int (db, "SELECT id FROM event_types WHERE name = 'materialize_end'"),
                   ==, COW_EVENT_MATERIALIZE_END);
  g_assert_cmpint (query_int (db, "SELECT itemsize FROM dtypes WHERE name = 'f64'"), ==, 8);
  g_assert_cmpint (query_int (db, "SELECT id FROM cuda_kinds WHERE name = 'kernel'"), ==, 3);

  /* An older session gains the tables it lacks, and the version. */
  exec_ok (db, "DROP TABLE checkpoint_states; DROP TABLE ipc_refs; PRAGMA user_version = 1;"
               "INSERT INTO meta VALUES ('schema_version', 1)");
  g_assert_true (cowscope_format_upgrade_schema (db));
  g_assert_cmpint (query_int (db, "SELECT count(*) FROM sqlite_master WHERE name IN"
                                  " ('checkpoint_states', 'ipc_refs')"), ==, 2);
  g_assert_cmpint (query_int (db, "PRAGMA user_version"), ==, 4);
  g_assert_cmpint (query_int (db, "SELECT value FROM meta WHERE key = 'schema_version'"), ==, 4);
  sqlite3_close (db);
}

/* A version-3 session's `events` table becomes packed chunks, its rows
 * and seqs kept, and its `marks` table the view. */
static void
test_upgrade_events (Fixture *f, gconstpointer data)
{
  (void) data;
  sqlite3 *db = NULL;
  g_assert_cmpint (sqlite3_open (f->path, &db), ==, SQLITE_OK);
  exec_ok (db, "PRAGMA synchronous = OFF");
  g_assert_true (cowscope_format_create_schema (db));
  g_assert_true (cowscope_format_fill_lookup_tables (db));
  exec_ok (db,
           "DROP TABLE events; DROP TABLE event_chunks; DROP VIEW marks;"
           "CREATE TABLE events (seq INTEGER PRIMARY KEY, ts INTEGER NOT NULL, pid INTEGER NOT NULL,"
           " tid INTEGER NOT NULL, type INTEGER NOT NULL, op INTEGER NOT NULL, aux INTEGER NOT NULL,"
           " v0 INTEGER, v1 INTEGER, v2 INTEGER, v3 INTEGER, v4 INTEGER, stack_id INTEGER);"
           "CREATE INDEX events_time ON events (ts);"
           "CREATE TABLE marks (seq INTEGER PRIMARY KEY, pid INTEGER, tid INTEGER, ts INTEGER,"
           " name TEXT, range_id INTEGER);"
           "INSERT INTO events VALUES (3, 1000, 100, 1, :ev_range_begin, 0, 0, 7, 1, 0, 0, 0, NULL),"
           " (5, 1010, 100, 1, :ev_mark, 0, 0, 0, 2, 7, 0, 0, 12),"
           " (6, 1020, 100, 1, :ev_range_end, 0, 0, 7, NULL, 0, 0, 0, NULL);"
           "INSERT INTO strings VALUES (100, 1, 'step'), (100, 2, 'tick');"
           "INSERT INTO marks VALUES (5, 100, 1, 1010, 'tick', 7);"
           "PRAGMA user_version = 3; INSERT INTO meta VALUES ('schema_version', 3);");
  exec_ok (db, "BEGIN");
  g_assert_true (cowscope_format_upgrade_schema (db));
  exec_ok (db, "COMMIT");
  g_assert_cmpint (query_int (db, "PRAGMA user_version"), ==, 4);
  g_assert_cmpint (query_int (db, "SELECT count(*) FROM events"), ==, 3);
  g_assert_cmpint (query_int (db, "SELECT sum (n) FROM event_chunks"), ==, 3);
  g_assert_cmpint (query_int (db, "SELECT ts FROM events WHERE seq = 5"), ==, 1010);
  g_assert_cmpint (query_int (db, "SELECT stack_id FROM events WHERE seq = 5"), ==, 12);
  g_assert_cmpint (query_int (db, "SELECT count(*) FROM events WHERE seq = 6 AND v1 IS NULL"), ==,
                   1);
  g_assert_cmpint (query_int (db, "SELECT count(*) FROM events WHERE stack_id IS NULL"), ==, 2);
  g_assert_cmpint (query_int (db, "SELECT count(*) FROM sqlite_master WHERE type = 'view'"
                                  " AND name = 'marks'"), ==, 1);
  g_assert_cmpint (query_int (db, "SELECT range_id FROM marks WHERE name = 'tick'"), ==, 7);
  g_assert_cmpint (query_int (db, "SELECT count(*) FROM sqlite_master WHERE name LIKE 'events_%'"
                                  " AND type = 'table'"), ==, 0);
  sqlite3_close (db);
}

static void
test_finalize (Fixture *f, gconstpointer data)
{
  (void) data;
  write_recording (f->path);
  g_autoptr (GError) error = NULL;
  CowscopeFormatInfo info;
  {
    g_autoptr (sqlite3) db = cowscope_format_open (f->path, COWSCOPE_FORMAT_OPEN_READ_WRITE, &info,
                                                   &error);
    g_assert_no_error (error);
    g_assert_false (info.finalized);
    g_assert_false (info.current);
    g_assert_true (cowscope_format_finalize (db, f->path, NULL, &error));
    g_assert_no_error (error);
  }
  g_autoptr (sqlite3) db = cowscope_format_open (f->path, COWSCOPE_FORMAT_OPEN_FINALIZED, &info,
                                                 &error);
  g_assert_no_error (error);
  g_assert_true (info.finalized);
  g_assert_true (info.current);
  g_assert_cmpint (info.checkpoint_interval, ==, COWSCOPE_CHECKPOINT_INTERVAL);
  /* The derived tables. */
  g_assert_cmpint (query_int (db, "SELECT count(*) FROM allocations"), ==, 1);
  g_assert_cmpint (query_int (db, "SELECT count(*) FROM storages"), ==, 2);
  g_assert_cmpint (query_int (db, "SELECT context_id FROM storages WHERE id = 5"), ==, 4);
  g_assert_cmpint (query_int (db, "SELECT dtype FROM tensors WHERE id = 3"), ==, COW_DTYPE_F32);
  g_assert_cmpint (query_int (db, "SELECT ndim FROM tensors WHERE id = 3"), ==, 1);
  g_assert_cmpint (query_int (db, "SELECT max_refcount FROM contexts WHERE id = 4"), ==, 2);
  g_assert_cmpint (query_int (db, "SELECT nbytes FROM lazy_clones WHERE context_id = 4"), ==, 4096);
  g_assert_cmpint (query_int (db, "SELECT kind FROM materializations"), ==, COW_MATERIALIZE_COPY);
  g_assert_cmpint (query_int (db, "SELECT end_ts - begin_ts FROM materializations"), ==, 20);
  g_assert_cmpint (query_int (db, "SELECT lock_wait_ns FROM materializations"), ==, 30);
  g_assert_cmpint (query_int (db, "SELECT lazy_clone_seq FROM materializations"), ==, 6);
  /* The packed summaries: one thread lane of nine instants and one span. */
  g_assert_cmpint (query_int (db, "SELECT n_instants FROM timeline_lanes"), ==, 9);
  g_assert_cmpint (query_int (db, "SELECT n_spans FROM timeline_lanes"), ==, 1);
  g_assert_cmpint (query_int (db, "SELECT count(*) FROM timeline_counters"), ==, 3);
  g_assert_cmpint (query_int (db, "SELECT n_events FROM checkpoint_replays"), ==, 7);
  g_assert_cmpint (query_int (db, "SELECT value FROM meta WHERE key = 'events'"), ==, 9);
  g_assert_cmpint (query_int (db, "SELECT count(*) FROM event_types"), ==, COW_N_EVENT_TYPES);
}

/* Expects @path to be refused with @code and a message naming the file
 * and containing @fragment. */
static void
assert_refused (const char *path, CowscopeFormatOpenFlags flags, int code, const char *fragment)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (sqlite3) db = cowscope_format_open (path, flags, NULL, &error);
  g_assert_null (db);
  g_assert_error (error, COWSCOPE_SESSION_ERROR, code);
  g_assert_nonnull (strstr (error->message, path));
  if (strstr (error->message, fragment) == NULL)
    g_error ("'%s' lacks '%s'", error->message, fragment);
}

static void
test_refusals (Fixture *f, gconstpointer data)
{
  (void) data;
  assert_refused (f->path, 0, COWSCOPE_SESSION_ERROR_NOT_FOUND, "No such file");
  assert_refused (f->dir, 0, COWSCOPE_SESSION_ERROR_NOT_FOUND, "directory");

  g_assert_true (g_file_set_contents (f->path, "hello, I am text\nnot a database\n", -1, NULL));
  assert_refused (f->path, 0, COWSCOPE_SESSION_ERROR_NOT_SQLITE, "is not an SQLite database");
  static const char png[] = "\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x10\0\0\0\x10\x08\x06\0\0\0";
  g_assert_true (g_file_set_contents (f->path, png, sizeof png - 1, NULL));
  assert_refused (f->path, 0, COWSCOPE_SESSION_ERROR_NOT_SQLITE, "is not an SQLite database");
  g_assert_true (g_file_set_contents (f->path, "", 0, NULL));
  assert_refused (f->path, 0, COWSCOPE_SESSION_ERROR_NOT_SQLITE, "is empty");

  /* Refusing a missing file creates none, read-write included. */
  g_unlink (f->path);
  assert_refused (f->path, COWSCOPE_FORMAT_OPEN_READ_WRITE, COWSCOPE_SESSION_ERROR_NOT_FOUND,
                  "No such file");
  g_assert_false (g_file_test (f->path, G_FILE_TEST_EXISTS));
}

static void
test_refusals_sqlite (Fixture *f, gconstpointer data)
{
  (void) data;
  sqlite3 *db = NULL;
  g_assert_cmpint (sqlite3_open (f->path, &db), ==, SQLITE_OK);
  exec_ok (db, "CREATE TABLE photos (id INTEGER)");
  sqlite3_close (db);
  assert_refused (f->path, 0, COWSCOPE_SESSION_ERROR_NOT_SESSION, "without Cowscope metadata");

  write_recording (f->path);
  file_exec (f->path, "UPDATE meta SET value = 'something-else' WHERE key = 'format'");
  assert_refused (f->path, 0, COWSCOPE_SESSION_ERROR_NOT_SESSION, "has format 'something-else'");

  write_recording (f->path);
  file_exec (f->path, "PRAGMA user_version = 99");
  assert_refused (f->path, 0, COWSCOPE_SESSION_ERROR_NEWER,
                  "was written by a newer Cowscope (schema 99; this build reads up to 4)");
  write_recording (f->path);
  file_exec (f->path, "UPDATE meta SET value = 7 WHERE key = 'schema_version'");
  assert_refused (f->path, 0, COWSCOPE_SESSION_ERROR_NEWER, "(schema 7;");

  write_recording (f->path);
  file_exec (f->path, "DROP TABLE materializations");
  assert_refused (f->path, 0, COWSCOPE_SESSION_ERROR_DAMAGED, "table 'materializations' is missing");
  /* A schema-2 session promises its packed tables; a schema-1 one does not. */
  write_recording (f->path);
  file_exec (f->path, "DROP TABLE timeline_lanes");
  assert_refused (f->path, 0, COWSCOPE_SESSION_ERROR_DAMAGED, "table 'timeline_lanes' is missing");
  file_exec (f->path, "PRAGMA user_version = 1; UPDATE meta SET value = 1 WHERE key = 'schema_version'");
  g_autoptr (GError) error = NULL;
  CowscopeFormatInfo info;
  g_autoptr (sqlite3) old = cowscope_format_open (f->path, 0, &info, &error);
  g_assert_no_error (error);
  g_assert_cmpint (info.schema_version, ==, 1);
  g_clear_pointer (&old, sqlite3_close);

  write_recording (f->path);
  file_exec (f->path, "DELETE FROM meta WHERE key = 'schema_version'; PRAGMA user_version = 0");
  assert_refused (f->path, 0, COWSCOPE_SESSION_ERROR_DAMAGED, "has no schema version");

  /* Not finalized: refused only when the caller needs it finalized. */
  write_recording (f->path);
  assert_refused (f->path, COWSCOPE_FORMAT_OPEN_FINALIZED, COWSCOPE_SESSION_ERROR_NOT_FINALIZED,
                  "cowscope-cli finalize");
  g_autoptr (sqlite3) raw = cowscope_format_open (f->path, 0, &info, &error);
  g_assert_no_error (error);
  g_assert_false (info.finalized);
}

static void
test_refusals_damaged (Fixture *f, gconstpointer data)
{
  (void) data;
  write_recording (f->path);
  {
    sqlite3 *db = NULL;
    g_assert_cmpint (sqlite3_open (f->path, &db), ==, SQLITE_OK);
    exec_ok (db, "CREATE TABLE padding (x); WITH RECURSIVE n (i) AS (SELECT 1 UNION ALL"
                 " SELECT i + 1 FROM n WHERE i < 5000) INSERT INTO padding SELECT randomblob (100)"
                 " FROM n");
    sqlite3_close (db);
  }
  g_autofree char *contents = NULL;
  gsize length = 0;
  g_assert_true (g_file_get_contents (f->path, &contents, &length, NULL));
  g_assert_cmpuint (length, >, 64 * 1024);

  /* Cut short: its header promises more pages than there are. */
  g_assert_true (g_file_set_contents (f->path, contents, (gssize) length / 2, NULL));
  assert_refused (f->path, 0, COWSCOPE_SESSION_ERROR_DAMAGED, "is truncated");
  /* Cut inside the header. */
  g_assert_true (g_file_set_contents (f->path, contents, 50, NULL));
  assert_refused (f->path, 0, COWSCOPE_SESSION_ERROR_DAMAGED, "header is truncated");
  /* Scribbled over the schema table's b-tree page header. */
  memset (contents + 100, 0xee, 200);
  g_assert_true (g_file_set_contents (f->path, contents, (gssize) length, NULL));
  assert_refused (f->path, 0, COWSCOPE_SESSION_ERROR_DAMAGED, "is damaged");
}

/* Readers of a session that is not current read a finalized copy; the
 * session they name is not written. */
static void
test_finalized_copy (Fixture *f, gconstpointer data)
{
  (void) data;
  write_recording (f->path);
  g_autofree char *before = NULL;
  gsize before_len = 0;
  g_assert_true (g_file_get_contents (f->path, &before, &before_len, NULL));

  g_autoptr (GError) error = NULL;
  g_autofree char *copy = cowscope_format_finalized_copy (f->path, &error);
  g_assert_no_error (error);
  g_assert_nonnull (copy);
  g_assert_cmpstr (copy, !=, f->path);
  CowscopeFormatInfo info;
  {
    g_autoptr (sqlite3) db = cowscope_format_open (copy, COWSCOPE_FORMAT_OPEN_FINALIZED, &info,
                                                   &error);
    g_assert_no_error (error);
    g_assert_true (info.current);
    g_assert_cmpint (query_int (db, "SELECT count(*) FROM materializations"), ==, 1);
  }
  g_unlink (copy);
  g_autofree char *after = NULL;
  gsize after_len = 0;
  g_assert_true (g_file_get_contents (f->path, &after, &after_len, NULL));
  g_assert_cmpmem (before, before_len, after, after_len);
  g_assert_cmpint (file_int (f->path, "SELECT value FROM meta WHERE key = 'finalized'"), ==, 0);

  /* A schema-1 session is upgraded in the copy. */
  {
    g_autoptr (sqlite3) db = cowscope_format_open (f->path, COWSCOPE_FORMAT_OPEN_READ_WRITE, NULL,
                                                   &error);
    g_assert_true (cowscope_format_finalize (db, f->path, NULL, &error));
    exec_ok (db, "DROP TABLE timeline_lanes; DROP TABLE checkpoint_states;"
                 "DELETE FROM meta WHERE key = 'index_format';"
                 "UPDATE meta SET value = 1 WHERE key = 'schema_version'; PRAGMA user_version = 1");
  }
  g_autoptr (sqlite3) old = cowscope_format_open (f->path, COWSCOPE_FORMAT_OPEN_FINALIZED, &info,
                                                  &error);
  g_assert_no_error (error);
  g_assert_false (info.current);
  g_clear_pointer (&old, sqlite3_close);
  g_autofree char *upgraded = cowscope_format_finalized_copy (f->path, &error);
  g_assert_no_error (error);
  {
    g_autoptr (sqlite3) db = cowscope_format_open (upgraded, COWSCOPE_FORMAT_OPEN_FINALIZED,
                                                   &info, &error);
    g_assert_no_error (error);
    g_assert_true (info.current);
    g_assert_cmpint (info.schema_version, ==, 4);
    g_assert_cmpint (query_int (db, "SELECT count(*) FROM checkpoint_states"), >=, 0);
    g_assert_cmpint (query_int (db, "SELECT sum (n_instants) FROM timeline_lanes"), ==, 9);
  }
  g_unlink (upgraded);
  g_assert_cmpint (file_int (f->path, "PRAGMA user_version"), ==, 1);

  /* A file that cannot be opened gives no copy. */
  g_autofree char *missing = g_build_filename (f->dir, "missing.cowscope", NULL);
  g_assert_null (cowscope_format_finalized_copy (missing, &error));
  g_assert_error (error, COWSCOPE_SESSION_ERROR, COWSCOPE_SESSION_ERROR_NOT_FOUND);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
#define ADD(path, func) g_test_add (path, Fixture, NULL, fixture_set_up, func, fixture_tear_down)
  ADD ("/format/open/schema", test_schema);
  ADD ("/format/open/upgrade-events", test_upgrade_events);
  ADD ("/format/open/finalize", test_finalize);
  ADD ("/format/open/refusals-files", test_refusals);
  ADD ("/format/open/refusals-databases", test_refusals_sqlite);
  ADD ("/format/open/refusals-damaged", test_refusals_damaged);
  ADD ("/format/open/finalized-copy", test_finalized_copy);
#undef ADD
  return g_test_run ();
}
