/* test-range-summary.c — a selected range's copies by operation, by
 * tensor and by call site, on a hand-built session whose answers are
 * written out below; computed in a worker as the app does. */
#include <glib/gstdio.h>
#include <sqlite3.h>
#include <string.h>

#include "cow-trace.h"
#include "cowscope-format-index.h"
#include "cowscope-format-schema.h"
#include "cowscope-range-summary.h"

#define T0 1000000 /* the first event's time */

static char *session_path;
static CowscopeSessionDocument *doc;

static void
exec_ok (sqlite3 *db, const char *sql)
{
  char *message = NULL;
  if (sqlite3_exec (db, sql, NULL, NULL, &message) != SQLITE_OK)
    g_error ("%s: %s", sql, message);
}

/* The session: two processes, ops add_ and mul_, tensors "weights" and
 * "grad" in process 100 and an unnamed one in process 200, two call
 * stacks (1: cow_materialize inside Cowscope, called from train_step at
 * train.c:42; 2: update at opt.c:7), and these materializations (begin,
 * end relative to T0; kind; bytes; op; tensor; stack):
 *
 *   seq 10   100..150  copy   1000  add_  100/1 weights  stack 1
 *   seq 20   200..210  copy    500  add_  100/2 grad     stack 2
 *   seq 30   300..330  steal    64  mul_  100/1 weights  stack 1
 *   seq 40   400..480  copy    200  mul_  200/1 -        no stack
 *   seq 50   900..950  copy   4000  add_  100/1 weights  stack 1   (after the range)
 *
 * The range [T0 + 100, T0 + 500) holds the first four. */
static void
write_session (const char *path)
{
  g_unlink (path);
  sqlite3 *db = NULL;
  g_assert_cmpint (sqlite3_open (path, &db), ==, SQLITE_OK);
  g_assert_true (cowscope_format_create_schema (db));
  g_autofree char *sql = g_strdup_printf (
    "BEGIN;"
    "INSERT INTO materialize_kinds VALUES (1, 'copy'), (2, 'steal'), (3, 'failed');"
    "INSERT INTO ops VALUES (1, 'add_'), (2, 'mul_');"
    "INSERT INTO meta VALUES ('format', 'cowscope-session'), ('schema_version', '2'),"
    " ('recorder_version', 'hand-built'), ('program', 'hand-built'), ('stacks', '2'),"
    " ('finalized', 1);"
    "INSERT INTO processes (pid, start_ns, end_ns) VALUES (100, %d, %d), (200, %d, %d);"
    "INSERT INTO threads (pid, tid, name) VALUES (100, 1, 'main'), (200, 7, 'worker');"
    "INSERT INTO tensors (pid, id, name) VALUES (100, 1, 'weights'), (100, 2, 'grad'), (200, 1, NULL);"
    "INSERT INTO frames (id, pid, address, module, function, file, line) VALUES"
    " (1, 100, 4096, '/usr/lib/libcowtensor.so', 'cow_materialize', 'cow.c', 9),"
    " (2, 100, 8192, '/usr/bin/train', 'train_step', 'train.c', 42),"
    " (3, 100, 12288, '/usr/bin/train', 'update', 'opt.c', 7);"
    "INSERT INTO stacks (id, depth) VALUES (1, 2), (2, 1);"
    "INSERT INTO stack_frames VALUES (1, 0, 1), (1, 1, 2), (2, 0, 3);"
    "INSERT INTO materializations (seq, pid, tid, begin_ts, end_ts, op, tensor_id, nbytes, kind,"
    " stack_id) VALUES"
    " (10, 100, 1, %d, %d, 1, 1, 1000, 1, 1), (20, 100, 1, %d, %d, 1, 2, 500, 1, 2),"
    " (30, 100, 1, %d, %d, 2, 1, 64, 2, 1), (40, 200, 7, %d, %d, 2, 1, 200, 1, NULL),"
    " (50, 100, 1, %d, %d, 1, 1, 4000, 1, 1);",
    T0, T0 + 1000, T0, T0 + 1000, T0 + 100, T0 + 150, T0 + 200, T0 + 210, T0 + 300, T0 + 330,
    T0 + 400, T0 + 480, T0 + 900, T0 + 950);
  exec_ok (db, sql);
  /* One event per materialization's begin, so the session has a time line. */
  for (int i = 1; i <= 5; i++)
    {
      g_autofree char *ev = g_strdup_printf (
        "INSERT INTO events (seq, ts, pid, tid, type, op, aux, v0, v1, v2, v3, v4)"
        " VALUES (%d, %d, 100, 1, %d, 0, 0, 0, 0, 0, 0, 0);",
        i * 10, T0 + (i == 5 ? 900 : i * 100), COW_EVENT_MATERIALIZE_BEGIN);
      exec_ok (db, ev);
    }
  g_autoptr (GError) error = NULL;
  g_assert_true (cowscope_format_index_write (db, path, G_MAXINT64, &error));
  g_assert_no_error (error);
  exec_ok (db, "COMMIT");
  sqlite3_close (db);
}

static void
summary_done (GObject *source G_GNUC_UNUSED, GAsyncResult *result, gpointer data)
{
  GListModel **rows = data;
  g_autoptr (GError) error = NULL;
  *rows = cowscope_range_summary_compute_finish (result, &error);
  g_assert_no_error (error);
}

/* The rows of [t0, t1) by @grouping, computed in a worker. */
static GListModel *
summarize (gint64 t0, gint64 t1, CowscopeRangeGrouping grouping)
{
  GListModel *rows = NULL;
  cowscope_range_summary_compute_async (doc, t0, t1, grouping, NULL, summary_done, &rows);
  while (rows == NULL)
    g_main_context_iteration (NULL, TRUE);
  return rows;
}

static void
assert_row (GListModel *rows, guint i, const char *name, guint64 copies, guint64 steals,
            guint64 bytes, gint64 time_ns)
{
  g_autoptr (CowscopeRangeRow) row = g_list_model_get_item (rows, i);
  g_assert_nonnull (row);
  g_assert_cmpstr (cowscope_range_row_get_name (row), ==, name);
  g_assert_cmpuint (cowscope_range_row_get_copies (row), ==, copies);
  g_assert_cmpuint (cowscope_range_row_get_steals (row), ==, steals);
  g_assert_cmpuint (cowscope_range_row_get_bytes_copied (row), ==, bytes);
  g_assert_cmpint (cowscope_range_row_get_time_ns (row), ==, time_ns);
}

static void
test_by_operation (void)
{
  g_autoptr (GListModel) rows = summarize (T0 + 100, T0 + 500, COWSCOPE_RANGE_BY_OPERATION);
  g_assert_cmpuint (g_list_model_get_n_items (rows), ==, 2);
  /* add_: seq 10 and 20; mul_: the steal 30 and the copy 40. */
  assert_row (rows, 0, "add_", 2, 0, 1500, 50 + 10);
  assert_row (rows, 1, "mul_", 1, 1, 200, 30 + 80);
  /* The whole session adds seq 50 to add_. */
  g_autoptr (GListModel) all = summarize (T0, T0 + 1000, COWSCOPE_RANGE_BY_OPERATION);
  assert_row (all, 0, "add_", 3, 0, 5500, 110);
}

static void
test_by_tensor (void)
{
  g_autoptr (GListModel) rows = summarize (T0 + 100, T0 + 500, COWSCOPE_RANGE_BY_TENSOR);
  g_assert_cmpuint (g_list_model_get_n_items (rows), ==, 3);
  assert_row (rows, 0, "weights (tensor 1, process 100)", 1, 1, 1000, 50 + 30);
  assert_row (rows, 1, "grad (tensor 2, process 100)", 1, 0, 500, 10);
  assert_row (rows, 2, "tensor 1 (process 200)", 1, 0, 200, 80);
}

static void
test_by_call_site (void)
{
  g_autoptr (GListModel) rows = summarize (T0 + 100, T0 + 500, COWSCOPE_RANGE_BY_CALL_SITE);
  g_assert_cmpuint (g_list_model_get_n_items (rows), ==, 3);
  /* Stack 1's call site is train_step, not cow_materialize (Cowscope's own). */
  g_autoptr (CowscopeRangeRow) first = g_list_model_get_item (rows, 0);
  g_assert_nonnull (strstr (cowscope_range_row_get_name (first), "train_step"));
  g_assert_null (strstr (cowscope_range_row_get_name (first), "cow_materialize"));
  g_assert_cmpuint (cowscope_range_row_get_copies (first), ==, 1);
  g_assert_cmpuint (cowscope_range_row_get_steals (first), ==, 1);
  g_assert_cmpuint (cowscope_range_row_get_bytes_copied (first), ==, 1000);
  g_autoptr (CowscopeRangeRow) second = g_list_model_get_item (rows, 1);
  g_assert_nonnull (strstr (cowscope_range_row_get_name (second), "update"));
  g_assert_cmpuint (cowscope_range_row_get_bytes_copied (second), ==, 500);
  assert_row (rows, 2, "(no call stack)", 1, 0, 200, 80);
}

static void
test_empty_and_cancelled (void)
{
  /* Between materializations, and reversed: no rows. */
  g_autoptr (GListModel) none = summarize (T0 + 500, T0 + 900, COWSCOPE_RANGE_BY_OPERATION);
  g_assert_cmpuint (g_list_model_get_n_items (none), ==, 0);
  g_autoptr (GListModel) reversed = summarize (T0 + 500, T0 + 100, COWSCOPE_RANGE_BY_TENSOR);
  g_assert_cmpuint (g_list_model_get_n_items (reversed), ==, 0);
  /* A cancelled computation says so. */
  g_autoptr (GCancellable) cancellable = g_cancellable_new ();
  g_cancellable_cancel (cancellable);
  g_autoptr (GError) error = NULL;
  g_autoptr (GListModel) rows = cowscope_range_summary_compute (doc, T0, T0 + 1000,
                                                                COWSCOPE_RANGE_BY_OPERATION,
                                                                cancellable, &error);
  g_assert_null (rows);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  const char *dir = g_getenv ("COWSCOPE_TEST_TMPDIR");
  g_autofree char *base = g_strdup_printf ("test-range-summary-%d.cowscope", (int) getpid ());
  session_path = g_build_filename (dir ? dir : g_get_tmp_dir (), base, NULL);
  write_session (session_path);
  g_autoptr (GError) error = NULL;
  doc = cowscope_session_document_load (session_path, NULL, &error);
  g_assert_no_error (error);

  g_test_add_func ("/range-summary/by-operation", test_by_operation);
  g_test_add_func ("/range-summary/by-tensor", test_by_tensor);
  g_test_add_func ("/range-summary/by-call-site", test_by_call_site);
  g_test_add_func ("/range-summary/empty-and-cancelled", test_empty_and_cancelled);
  int status = g_test_run ();
  g_clear_object (&doc);
  g_unlink (session_path);
  g_free (session_path);
  return status;
}
