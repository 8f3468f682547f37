/* cli-fixture.c — builds the known sessions of cli-fixture.h. */
#include "cli-fixture.h"

#include "cow-trace.h"
#include "cowscope-format-schema.h"
#include "cowscope-format-vocabulary.h"

#include <stdarg.h>
#include <string.h>
#include <unistd.h>

char *
cli_fixture_tmpdir (void)
{
  g_autoptr (GError) error = NULL;
  char *dir = g_dir_make_tmp ("cowscope-cli-XXXXXX", &error);

  g_assert_no_error (error);
  return dir;
}

void
cli_fixture_remove_tree (const char *path)
{
  GDir *dir = g_dir_open (path, 0, NULL);
  const char *name;

  if (dir == NULL)
    {
      unlink (path);
      return;
    }
  while ((name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *child = g_build_filename (path, name, NULL);
      cli_fixture_remove_tree (child);
    }
  g_dir_close (dir);
  rmdir (path);
}

static void
exec_or_fail (sqlite3 *db, const char *sql)
{
  if (cowscope_format_exec (db, sql) != SQLITE_OK)
    g_error ("fixture SQL failed: %s\n%s", sqlite3_errmsg (db), sql);
}

sqlite3 *
cli_fixture_create_schema (const char *path)
{
  sqlite3 *db = NULL;

  g_assert_cmpint (sqlite3_open (path, &db), ==, SQLITE_OK);
  exec_or_fail (db, "PRAGMA synchronous = OFF"); /* a test file: no fsync per statement */
  g_assert_true (cowscope_format_create_schema (db));
  return db;
}

void
cli_fixture_exec (const char *path, const char *sql)
{
  sqlite3 *db = NULL;

  g_assert_cmpint (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READWRITE, NULL), ==, SQLITE_OK);
  exec_or_fail (db, sql);
  sqlite3_close (db);
}

/* One events row: ts offset (ns after T0), tid, type, op, aux, v0..v4, stack. */
static void
event (sqlite3_stmt *stmt, gint64 seq, gint64 dt, gint64 tid, int type, int op,
       gint64 aux, gint64 v0, gint64 v1, gint64 v2, gint64 v3, gint64 v4,
       gint64 stack)
{
  sqlite3_reset (stmt);
  sqlite3_bind_int64 (stmt, 1, seq);
  sqlite3_bind_int64 (stmt, 2, CLI_FIXTURE_T0 + dt);
  sqlite3_bind_int64 (stmt, 3, 100);
  sqlite3_bind_int64 (stmt, 4, tid);
  sqlite3_bind_int64 (stmt, 5, type);
  sqlite3_bind_int64 (stmt, 6, op);
  sqlite3_bind_int64 (stmt, 7, aux);
  sqlite3_bind_int64 (stmt, 8, v0);
  sqlite3_bind_int64 (stmt, 9, v1);
  sqlite3_bind_int64 (stmt, 10, v2);
  sqlite3_bind_int64 (stmt, 11, v3);
  sqlite3_bind_int64 (stmt, 12, v4);
  if (stack > 0)
    sqlite3_bind_int64 (stmt, 13, stack);
  else
    sqlite3_bind_null (stmt, 13);
  g_assert_cmpint (sqlite3_step (stmt), ==, SQLITE_DONE);
}

/* The engine's event types (cow-trace.h), short. */
enum { ALLOC_NEW = COW_EVENT_ALLOCATION_NEW, STORAGE_NEW = COW_EVENT_STORAGE_NEW,
       TENSOR_NEW = COW_EVENT_TENSOR_NEW, TENSOR_NAME = COW_EVENT_TENSOR_NAME,
       CONTEXT_NEW = COW_EVENT_CONTEXT_NEW, CONTEXT_REF = COW_EVENT_CONTEXT_REF,
       CONTEXT_UNREF = COW_EVENT_CONTEXT_UNREF, LAZY = COW_EVENT_LAZY_CLONE,
       EAGER = COW_EVENT_LAZY_CLONE_EAGER, MAT_BEGIN = COW_EVENT_MATERIALIZE_BEGIN,
       MAT_END = COW_EVENT_MATERIALIZE_END, VIOLATION = COW_EVENT_SIMULATE_VIOLATION,
       RANGE_BEGIN = COW_EVENT_RANGE_BEGIN, RANGE_END = COW_EVENT_RANGE_END,
       MARK = COW_EVENT_MARK };
enum { OP_EMPTY = COW_OP_EMPTY, OP_LAZY_CLONE = COW_OP_LAZY_CLONE, OP_ADD_ = COW_OP_ADD_,
       OP_MUL_ = COW_OP_MUL_ };

void
cli_fixture_write_session (const char *path, gboolean finalized, guint padding)
{
  sqlite3 *db = cli_fixture_create_schema (path);
  sqlite3_stmt *stmt = NULL, *str = NULL;
  const gint64 M4 = 4 * MiB;

  exec_or_fail (db, "BEGIN");
  g_assert_cmpint (sqlite3_prepare_v2 (db,
    "INSERT INTO events (seq, ts, pid, tid, type, op, aux, v0, v1, v2, v3, v4, stack_id)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", -1, &stmt, NULL), ==, SQLITE_OK);

  /* seq, dt, tid, type, op, aux, v0..v4, stack */
  event (stmt, 1, 0, 100, ALLOC_NEW, OP_EMPTY, 0, 1, M4, 0x1000, 0, 0, 0);
  event (stmt, 2, 100, 100, STORAGE_NEW, OP_EMPTY, 0, 1, 1, M4, 0, 0, 0);
  event (stmt, 3, 200, 100, TENSOR_NEW, OP_EMPTY, 6 | 1 << 8, 1, 1, 0, M4 / 4, 0, 0);
  event (stmt, 4, 1000, 100, CONTEXT_NEW, OP_LAZY_CLONE, 0, 1, 1, 2, 1, 0, 0);
  event (stmt, 5, 1100, 100, STORAGE_NEW, OP_LAZY_CLONE, 0, 2, 1, M4, 1, 1, 0);
  event (stmt, 6, 1200, 100, LAZY, OP_LAZY_CLONE, 0, 1, 2, 1, 2, 1, 0);
  event (stmt, 7, 1300, 100, CONTEXT_REF, OP_LAZY_CLONE, 0, 1, 1, 3, 1, 0, 0);
  event (stmt, 8, 1400, 100, STORAGE_NEW, OP_LAZY_CLONE, 0, 3, 1, M4, 1, 1, 0);
  event (stmt, 9, 1500, 100, LAZY, OP_LAZY_CLONE, 0, 1, 3, 1, 3, 1, 0);
  event (stmt, 10, 1600, 100, CONTEXT_REF, OP_LAZY_CLONE, 0, 1, 1, 4, 1, 0, 0);
  event (stmt, 11, 1700, 100, STORAGE_NEW, OP_LAZY_CLONE, 0, 4, 1, M4, 1, 1, 0);
  event (stmt, 12, 1800, 100, LAZY, OP_LAZY_CLONE, 0, 1, 4, 1, 4, 1, 0);
  event (stmt, 13, 2000, 100, EAGER, OP_LAZY_CLONE, COW_EAGER_FOREIGN_DATA_PTR, 1, 5, 1, 5, MiB, 0);
  event (stmt, 14, 5000, 100, MAT_BEGIN, OP_ADD_, 0, 2, 1, 2, M4, 0, 1);
  event (stmt, 15, 7500, 100, MAT_END, OP_ADD_, COW_MATERIALIZE_COPY, 2, 1, 2, M4, 300, 0);
  event (stmt, 16, 7600, 100, CONTEXT_UNREF, OP_ADD_, 0, 1, 2, 3, 1, 0, 0);
  event (stmt, 17, 5500, 101, MAT_BEGIN, OP_MUL_, 0, 3, 1, 3, M4, 0, 2);
  event (stmt, 18, 6500, 101, MAT_END, OP_MUL_, COW_MATERIALIZE_COPY, 3, 1, 3, M4, 200, 0);
  event (stmt, 19, 8200, 100, MAT_BEGIN, OP_ADD_, 0, 4, 1, 4, M4, 0, 0);
  event (stmt, 20, 8300, 100, MAT_END, OP_ADD_, COW_MATERIALIZE_STEAL, 4, 1, 1, M4, 0, 0);
  event (stmt, 21, 8400, 100, VIOLATION, OP_ADD_, COW_ACCESS_READ, 1, 2, 3, 1, 0, 3);
  event (stmt, 22, 4000, 100, RANGE_BEGIN, 0, 0, 1, 11, 0, 0, 0, 0);
  event (stmt, 23, 9000, 100, RANGE_END, 0, 0, 1, 0, 0, 0, 0, 0);
  event (stmt, 24, 8000, 100, MARK, 0, 0, 0, 12, 1, 0, 0, 0);
  event (stmt, 25, 4100, 101, RANGE_BEGIN, 0, 0, 2, 13, 0, 0, 0, 0);
  event (stmt, 26, 300, 100, TENSOR_NAME, 0, 0, 2, 14, 0, 0, 0, 0);
  event (stmt, 27, 300, 100, TENSOR_NAME, 0, 0, 3, 15, 0, 0, 0, 0);
  event (stmt, 28, 300, 100, TENSOR_NAME, 0, 0, 4, 16, 0, 0, 0, 0);
  event (stmt, 29, 1150, 100, TENSOR_NEW, OP_LAZY_CLONE, 6 | 1 << 8, 2, 2, 1, M4 / 4, 0, 0);
  event (stmt, 30, 1450, 100, TENSOR_NEW, OP_LAZY_CLONE, 6 | 1 << 8, 3, 3, 1, M4 / 4, 0, 0);
  event (stmt, 31, 1750, 100, TENSOR_NEW, OP_LAZY_CLONE, 6 | 1 << 8, 4, 4, 1, M4 / 4, 0, 0);
  for (guint i = 0; i < padding; i++) /* tensor_new of unrelated tensors */
    event (stmt, 1000 + i, 100 + i % 50, 100, TENSOR_NEW, OP_EMPTY, 6 | 1 << 8,
           1000 + i, 1, 0, 1, 0, 0);
  sqlite3_finalize (stmt);

  g_assert_cmpint (sqlite3_prepare_v2 (db, "INSERT INTO strings VALUES (100, ?, ?)",
                                       -1, &str, NULL), ==, SQLITE_OK);
  {
    static const struct { gint64 id; const char *text; } strings[] = {
      { 11, "epoch 1" }, { 12, CLI_FIXTURE_WEIRD_MARK }, { 13, "never closed" },
      { 14, "weights" }, { 15, "snapshot" }, { 16, "grad, \"x\"\nline 2" },
      { 17, "my_kernel" },
    };
    for (gsize i = 0; i < G_N_ELEMENTS (strings); i++)
      {
        sqlite3_reset (str);
        sqlite3_bind_int64 (str, 1, strings[i].id);
        sqlite3_bind_text (str, 2, strings[i].text, -1, SQLITE_STATIC);
        g_assert_cmpint (sqlite3_step (str), ==, SQLITE_DONE);
      }
  }
  sqlite3_finalize (str);

  exec_or_fail (db,
    "INSERT INTO meta VALUES ('format', 'cowscope-session'), ('schema_version', 1),"
    " ('recorder_version', '0.1.0'), ('created_utc', '2024-05-01T12:00:00Z'),"
    " ('command', 'train --epochs 1'), ('program', '/usr/bin/train'), ('stacks', 1),"
    " ('gpu_tracing', 'available'), ('target_pid', 100), ('target_end', 'exited'),"
    " ('exit_status', 0), ('produced', 31), ('stored', 31), ('dropped', 0);"
    "INSERT INTO processes VALUES (100, 1, '/usr/bin/train', 'train --epochs 1',"
    " 1000000000000, 1000000010000, 'exited', 0, NULL, 'available');"
    "INSERT INTO threads VALUES (100, 100, 'main', 1024, 22, 22, 0),"
    " (100, 101, 'worker', 1024, 9, 9, 0);"
    "INSERT INTO thread_events (pid, tid, produced, stored, dropped) VALUES"
    " (100, 100, 22, 22, 0), (100, 101, 9, 9, 0);"
    "INSERT INTO frames VALUES (1, 100, 4096, '/usr/lib/libcowtensor.so.0', 'cow_storage_materialize', 'cow-storage.c', 290),"
    " (2, 100, 8192, '/usr/bin/train', 'update_weights', '/src/train.c', 88),"
    " (3, 100, 8300, '/usr/bin/train', 'main', '/src/train.c', 120),"
    " (4, 100, 8400, '/usr/bin/train', 'main', '/src/train.c', 130),"
    " (5, 100, 3735928559, '/usr/bin/train', NULL, NULL, NULL);"
    "INSERT INTO stacks VALUES (1, 3), (2, 3), (3, 1);"
    "INSERT INTO stack_frames VALUES (1, 0, 1), (1, 1, 2), (1, 2, 3),"
    " (2, 0, 1), (2, 1, 2), (2, 2, 4), (3, 0, 5);"
    "INSERT INTO cuda_activity (id, pid, kind, subkind, start_ns, end_ns, bytes,"
    " correlation_id, device_id, context_id, stream_id, address, external_id, name)"
    " VALUES (1, 100, :cuda_memcpy, 1, 1000000006000, 1000000007000, 4194304, 55, 0, 1, 7, NULL,"
    "  NULL, NULL),"
    " (2, 100, :cuda_kernel, NULL, 1000000008000, 1000000008500, NULL, 56, 0, 1, 7, NULL, NULL,"
    "  'my_kernel');");

  if (finalized)
    /* The memcpy was issued by the first copy (its begin event, seq 14). */
    exec_or_fail (db, "UPDATE cuda_activity SET external_id = 14 WHERE id = 1");
  else
    /* As the probe records it: CUPTI's external correlation record tags
     * the memcpy's correlation id with the begin event's timestamp, which
     * finalizing turns into that event's seq. */
    exec_or_fail (db,
      "INSERT INTO cuda_activity (id, pid, kind, subkind, start_ns, end_ns, correlation_id,"
      " external_id) VALUES (3, 100, :cuda_external_correlation, 0, 1000000006000,"
      " 1000000006000, 55, 1000000005000);");

  if (finalized)
    exec_or_fail (db,
      "INSERT INTO meta VALUES ('finalized', 1);"
      "INSERT INTO lazy_clones VALUES"
      " (6, 100, 100, 1000000001200, 15, 1, 2, 1, 2, 1, NULL, 4194304, NULL),"
      " (9, 100, 100, 1000000001500, 15, 1, 3, 1, 3, 1, NULL, 4194304, NULL),"
      " (12, 100, 100, 1000000001800, 15, 1, 4, 1, 4, 1, NULL, 4194304, NULL),"
      " (13, 100, 100, 1000000002000, 15, 1, 5, 1, 5, NULL, :eager_foreign_data_ptr, 1048576,"
      "  NULL);"
      "INSERT INTO materializations VALUES"
      " (14, 100, 100, 1000000005000, 1000000007500, 19, 2, 1, 2, 4194304, :materialize_copy, 0,"
      "  300, 2, 6, 1),"
      " (17, 100, 101, 1000000005500, 1000000006500, 21, 3, 1, 3, 4194304, :materialize_copy, 0,"
      "  200, 3, 9, 2),"
      " (19, 100, 100, 1000000008200, 1000000008300, 19, 4, 1, 4, 4194304, :materialize_steal, 0,"
      "  0, 1, 12, NULL);"
      "INSERT INTO violations VALUES"
      " (21, 100, 100, 1000000008400, 19, :access_read, 1, 2, 3, 1, 0, 3);"
      "INSERT INTO ranges VALUES (100, 1, 100, 'epoch 1', NULL, 1000000004000, 1000000009000),"
      " (100, 2, 101, 'never closed', NULL, 1000000004100, NULL);"
      "INSERT INTO tensors (pid, id, storage_id, name) VALUES (100, 1, 1, NULL),"
      " (100, 2, 2, 'weights'), (100, 3, 3, 'snapshot');"
      "INSERT INTO tensors (pid, id, storage_id, name) SELECT 100, 4, 4, value FROM strings WHERE id = 16;");
  else
    exec_or_fail (db, "INSERT INTO meta VALUES ('finalized', 0);");
  exec_or_fail (db, "COMMIT");
  g_assert_cmpint (sqlite3_close (db), ==, SQLITE_OK);
}

int
cli_fixture_run (CliCommand command, char **out, char **err, const char *name, ...)
{
  g_autoptr (GPtrArray) args = g_ptr_array_new ();
  char *out_text = NULL, *err_text = NULL;
  size_t out_len = 0, err_len = 0;
  FILE *out_stream = open_memstream (&out_text, &out_len);
  FILE *err_stream = open_memstream (&err_text, &err_len);
  const char *arg;
  va_list ap;
  int status;

  g_ptr_array_add (args, (gpointer) name);
  va_start (ap, name);
  while ((arg = va_arg (ap, const char *)) != NULL)
    g_ptr_array_add (args, (gpointer) arg);
  va_end (ap);
  g_ptr_array_add (args, NULL);

  status = command ((int) args->len - 1, (char **) args->pdata, out_stream, err_stream);
  fclose (out_stream);
  fclose (err_stream);
  g_test_message ("%s → %d\nstdout: %s\nstderr: %s", name, status, out_text, err_text);
  if (out != NULL)
    *out = out_text;
  else
    free (out_text);
  if (err != NULL)
    *err = err_text;
  else
    free (err_text);
  return status;
}

guint
cli_fixture_count_partial (const char *path)
{
  GDir *dir = g_dir_open (path, 0, NULL);
  const char *name;
  guint n = 0;

  if (dir == NULL)
    return 0;
  while ((name = g_dir_read_name (dir)) != NULL)
    if (strstr (name, ".part") != NULL)
      n++;
  g_dir_close (dir);
  return n;
}
