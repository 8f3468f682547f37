/* test-timeline-model.c — what the session model tells the copy timeline,
 * without a display: the order its lanes are shown in, and the totals of
 * a selected time range, on hand-built lanes and sessions whose expected
 * answers are written out below. */
#include <glib/gstdio.h>
#include <sqlite3.h>

#include "cowscope-lane-order.h"
#include "cowscope-range-totals.h"
#include "cowscope-session-document-private.h"
#include "cow-trace.h"
#include "cowscope-format-index.h"
#include "cowscope-format-schema.h"
#include "cowscope-format-error.h"
#include "cowscope-timeline-lane-private.h"

/* ---- lane order ----------------------------------------------------------- */

/* A lane of @kind with no events, titled "@name". */
static CowscopeTimelineLane *
lane_new (CowscopeLaneKind kind, const char *name, guint32 pid, gint64 tid)
{
  if (kind == COWSCOPE_LANE_COUNTER)
    return cowscope_timeline_lane_new_counter ((CowscopeCounterKind) tid, name,
                                               cowscope_counter_bins_new (0, 1, 1));
  CowscopeLaneIndex *index = cowscope_lane_index_new ();
  cowscope_lane_index_finish (index);
  return cowscope_timeline_lane_new_events (kind, name, pid, tid, -1, index);
}

/* The titles of @lanes joined by spaces. */
static char *
titles (GPtrArray *lanes)
{
  GString *s = g_string_new (NULL);
  for (guint i = 0; i < lanes->len; i++)
    g_string_append_printf (s, "%s%s", i > 0 ? " " : "",
                            cowscope_timeline_lane_get_title (lanes->pdata[i]));
  return g_string_free (s, FALSE);
}

/* A multi-process session's lanes in the document's order (threads by
 * pid and tid, CUDA streams, counters, then process lanes) come out as:
 * counters, each process lane heading its threads, threads of a process
 * without a lane, CUDA streams; each group keeps the document's order. */
static void
test_order_processes (void)
{
  g_autoptr (GListStore) store = g_list_store_new (COWSCOPE_TYPE_TIMELINE_LANE);
  struct { CowscopeLaneKind kind; const char *name; guint32 pid; gint64 tid; } lanes[] = {
    { COWSCOPE_LANE_THREAD, "t100.1", 100, 1 },
    { COWSCOPE_LANE_THREAD, "t100.2", 100, 2 },
    { COWSCOPE_LANE_THREAD, "t200.5", 200, 5 },
    { COWSCOPE_LANE_THREAD, "t300.9", 300, 9 },
    { COWSCOPE_LANE_CUDA_STREAM, "s7", 100, 7 },
    { COWSCOPE_LANE_COUNTER, "allocated", 0, COWSCOPE_COUNTER_BYTES_ALLOCATED },
    { COWSCOPE_LANE_COUNTER, "shared", 0, COWSCOPE_COUNTER_BYTES_SHARED },
    { COWSCOPE_LANE_PROCESS, "p200", 200, 0 },
    { COWSCOPE_LANE_PROCESS, "p100", 100, 0 },
    { COWSCOPE_LANE_CUDA_STREAM, "s3", 200, 3 },
  };
  for (guint i = 0; i < G_N_ELEMENTS (lanes); i++)
    {
      g_autoptr (CowscopeTimelineLane) lane =
        lane_new (lanes[i].kind, lanes[i].name, lanes[i].pid, lanes[i].tid);
      g_list_store_append (store, lane);
    }
  g_autoptr (GPtrArray) ordered = cowscope_lane_order_for_display (G_LIST_MODEL (store));
  g_autofree char *got = titles (ordered);
  g_assert_cmpstr (got, ==, "allocated shared p200 t200.5 p100 t100.1 t100.2 t300.9 s7 s3");
  /* The array holds its own references. */
  g_list_store_remove_all (store);
  g_assert_true (COWSCOPE_IS_TIMELINE_LANE (ordered->pdata[0]));
  g_assert_cmpuint (G_OBJECT (ordered->pdata[0])->ref_count, ==, 1);
}

/* A single-process session (no process lanes): counters, threads, CUDA;
 * an empty model gives an empty array. */
static void
test_order_single_process (void)
{
  g_autoptr (GListStore) store = g_list_store_new (COWSCOPE_TYPE_TIMELINE_LANE);
  g_autoptr (GPtrArray) none = cowscope_lane_order_for_display (G_LIST_MODEL (store));
  g_assert_cmpuint (none->len, ==, 0);

  CowscopeTimelineLane *lanes[] = {
    lane_new (COWSCOPE_LANE_CUDA_STREAM, "s1", 42, 1),
    lane_new (COWSCOPE_LANE_THREAD, "main", 42, 42),
    lane_new (COWSCOPE_LANE_COUNTER, "storages", 0, COWSCOPE_COUNTER_LIVE_STORAGES),
    lane_new (COWSCOPE_LANE_THREAD, "worker", 42, 43),
  };
  for (guint i = 0; i < G_N_ELEMENTS (lanes); i++)
    {
      g_list_store_append (store, lanes[i]);
      g_object_unref (lanes[i]);
    }
  g_autoptr (GPtrArray) ordered = cowscope_lane_order_for_display (G_LIST_MODEL (store));
  g_autofree char *got = titles (ordered);
  g_assert_cmpstr (got, ==, "storages main worker s1");
}

/* ---- range totals --------------------------------------------------------- */

#define T0 1000000   /* the first event's time */

/* A scratch path for @name. */
static char *
scratch (const char *name)
{
  const char *dir = g_getenv ("COWSCOPE_TEST_TMPDIR");
  g_autofree char *base = g_strdup_printf ("test-timeline-model-%d-%s", (int) getpid (), name);
  return g_build_filename (dir ? dir : g_get_tmp_dir (), base, NULL);
}

static void
exec_ok (sqlite3 *db, const char *sql)
{
  char *message = NULL;
  if (sqlite3_exec (db, sql, NULL, NULL, &message) != SQLITE_OK)
    g_error ("%s: %s", sql, message);
}

/* Appends one event (aux and the byte-carrying payload field only). */
static void
event (sqlite3_stmt *insert, gint64 ts, guint32 pid, gint64 tid, gint64 type, gint64 aux,
       gint64 v1, gint64 v2, gint64 v3)
{
  sqlite3_reset (insert);
  sqlite3_bind_int64 (insert, 1, ts);
  sqlite3_bind_int64 (insert, 2, pid);
  sqlite3_bind_int64 (insert, 3, tid);
  sqlite3_bind_int64 (insert, 4, type);
  sqlite3_bind_int64 (insert, 5, aux);
  sqlite3_bind_int64 (insert, 6, v1);
  sqlite3_bind_int64 (insert, 7, v2);
  sqlite3_bind_int64 (insert, 8, v3);
  g_assert_cmpint (sqlite3_step (insert), ==, SQLITE_DONE);
}

/* Writes the hand-built session at @path, finalized with timeline chunks
 * of 100 instants:
 *
 *   process 100, thread 1: 1,000 events 10 ns apart from T0, event i
 *     (0..999) by i % 5: 0 a lazy clone, 1 a copy of 64 bytes, 2 a steal
 *     of 8 bytes, 3 a new tensor, 4 an allocation of 4,096 bytes;
 *   process 100, thread 2: a copy of 1,000 bytes at T0 + 5 and a steal of
 *     3 bytes at T0 + 9,000;
 *   process 200, thread 7: a copy of 20 bytes at T0 + 70 (the first
 *     range's start) and a lazy clone at T0 + 9,070 (its end).
 *
 * So thread 1 spans ten chunks (a full block of 64 and 36 more each), and
 * the lane index of an eager load three whole blocks of 256. */
static void
write_session (const char *path)
{
  g_unlink (path);
  sqlite3 *db = NULL;
  g_assert_cmpint (sqlite3_open (path, &db), ==, SQLITE_OK);
  g_assert_true (cowscope_format_create_schema (db));
  exec_ok (db, "BEGIN;"
               "INSERT INTO materialize_kinds VALUES (1, 'copy'), (2, 'steal'), (3, 'failed');"
               "INSERT INTO meta VALUES ('format', 'cowscope-session'), ('schema_version', '2'),"
               " ('recorder_version', 'hand-built'), ('program', 'hand-built'), ('stacks', '0'),"
               " ('finalized', 1);"
               "INSERT INTO processes (pid, start_ns, end_ns) VALUES (100, 1000000, 1010000),"
               " (200, 1000000, 1010000);"
               "INSERT INTO threads (pid, tid, name) VALUES (100, 1, 'main'), (100, 2, 'loader'),"
               " (200, 7, 'consumer');");
  sqlite3_stmt *insert = NULL;
  g_assert_cmpint (sqlite3_prepare_v2 (db, "INSERT INTO events (ts, pid, tid, type, op, aux, v0,"
                                           " v1, v2, v3, v4) VALUES (?1, ?2, ?3, ?4, 0, ?5, 0,"
                                           " ?6, ?7, ?8, 0)", -1, &insert, NULL),
                   ==, SQLITE_OK);
  /* In time order, as the recorder stores them. */
  event (insert, T0, 100, 1, COW_EVENT_LAZY_CLONE, 0, 0, 0, 0);
  event (insert, T0 + 5, 100, 2, COW_EVENT_MATERIALIZE_END, COW_MATERIALIZE_COPY, 0, 0, 1000);
  for (gint64 i = 1; i < 1000; i++)
    {
      gint64 ts = T0 + 10 * i;
      switch (i % 5)
        {
        case 0: event (insert, ts, 100, 1, COW_EVENT_LAZY_CLONE, 0, 0, 0, 0); break;
        case 1: event (insert, ts, 100, 1, COW_EVENT_MATERIALIZE_END, COW_MATERIALIZE_COPY, 0, 0, 64); break;
        case 2: event (insert, ts, 100, 1, COW_EVENT_MATERIALIZE_END, COW_MATERIALIZE_STEAL, 0, 0, 8); break;
        case 3: event (insert, ts, 100, 1, COW_EVENT_TENSOR_NEW, 0, 0, 0, 0); break;
        default: event (insert, ts, 100, 1, COW_EVENT_ALLOCATION_NEW, 0, 4096, 0, 0); break;
        }
      if (i == 7)
        event (insert, ts, 200, 7, COW_EVENT_MATERIALIZE_END, COW_MATERIALIZE_COPY, 0, 0, 20);
      if (i == 900)
        event (insert, ts, 100, 2, COW_EVENT_MATERIALIZE_END, COW_MATERIALIZE_STEAL, 0, 0, 3);
      if (i == 907)
        event (insert, ts, 200, 7, COW_EVENT_LAZY_CLONE, 0, 0, 0, 0);
    }
  sqlite3_finalize (insert);
  g_autoptr (GError) error = NULL;
  cowscope_format_index_set_chunk_for_tests (100);
  g_assert_true (cowscope_format_index_write (db, path, G_MAXINT64, &error));
  g_assert_no_error (error);
  cowscope_format_index_set_chunk_for_tests (0);
  exec_ok (db, "COMMIT");
  sqlite3_close (db);
}

/* The totals of [t0, t1) in @doc, counted twice (a packed lane's chunks
 * are decoded the first time, summed from their kept totals the second):
 * both counts agree. */
static CowscopeRangeTotals
count (CowscopeSessionDocument *doc, gint64 t0, gint64 t1)
{
  CowscopeRangeTotals first, again;
  GListModel *lanes = cowscope_session_document_get_lanes (doc);
  g_assert_true (cowscope_range_totals_count (lanes, t0, t1, NULL, &first));
  g_assert_true (cowscope_range_totals_count (lanes, t0, t1, NULL, &again));
  g_assert_cmpmem (&first, sizeof first, &again, sizeof again);
  return first;
}

static void
assert_totals (CowscopeRangeTotals t, guint64 events, guint64 copies, guint64 bytes_copied,
               guint64 steals, guint64 lazy_clones)
{
  g_assert_cmpuint (t.events, ==, events);
  g_assert_cmpuint (t.copies, ==, copies);
  g_assert_cmpuint (t.bytes_copied, ==, bytes_copied);
  g_assert_cmpuint (t.steals, ==, steals);
  g_assert_cmpuint (t.lazy_clones, ==, lazy_clones);
}

/* The expected totals of the hand-built session, the same whether its
 * thread lanes are packed chunks read lazily or in-memory indexes. */
static void
check_totals (CowscopeSessionDocument *doc)
{
  /* Everything: thread 1's 1,000 events (200 of each kind), and
   * thread 2's and thread 7's two each. */
  assert_totals (count (doc, T0, T0 + 10000), 1004, 202, 200 * 64 + 1000 + 20, 201, 201);
  /* [T0 + 70, T0 + 9,070): thread 1's events 7 to 906 (180 of each
   * kind, the copies i = 11, 16, ..., 906), thread 2's steal, thread 7's
   * copy at the start; not thread 7's lazy clone at the end. */
  assert_totals (count (doc, T0 + 70, T0 + 9070), 902, 181, 180 * 64 + 20, 181, 180);
  /* Inside one chunk of thread 1 (events 305 to 309) and one block. */
  assert_totals (count (doc, T0 + 3050, T0 + 3100), 5, 1, 64, 1, 1);
  /* A single nanosecond: the copy at T0 + 5 only. */
  assert_totals (count (doc, T0 + 5, T0 + 6), 1, 1, 1000, 0, 0);
  /* Between events, empty, and reversed. */
  assert_totals (count (doc, T0 + 6, T0 + 10), 0, 0, 0, 0, 0);
  assert_totals (count (doc, T0 + 9070, T0 + 70), 0, 0, 0, 0, 0);
}

static char *session_path;

static const char *
session (void)
{
  if (session_path == NULL)
    {
      session_path = scratch ("hand-built.cowscope");
      write_session (session_path);
    }
  return session_path;
}

/* A finalized session's lanes are packed: totals from whole chunks and
 * the cut chunks' instants. */
static void
test_totals_packed (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (CowscopeSessionDocument) doc = cowscope_session_document_load (session (), NULL, &error);
  g_assert_no_error (error);
  check_totals (doc);
}

/* The same session with every lane decoded into memory at open: totals
 * from the lane index's block prefix sums. */
static void
test_totals_in_memory (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (CowscopeSessionDocument) doc = cowscope_session_document_load_eager (session (), &error);
  g_assert_no_error (error);
  check_totals (doc);
}

/* A damaged chunk of thread 1 (events 300 to 399: 20 of each kind) is
 * left out of the totals, and reported once. */
static void
test_totals_damaged_chunk (void)
{
  g_autofree char *bad = scratch ("damaged.cowscope");
  g_autofree char *contents = NULL;
  gsize length = 0;
  g_assert_true (g_file_get_contents (session (), &contents, &length, NULL));
  g_assert_true (g_file_set_contents (bad, contents, (gssize) length, NULL));
  sqlite3 *db = NULL;
  g_assert_cmpint (sqlite3_open (bad, &db), ==, SQLITE_OK);
  exec_ok (db, "UPDATE timeline_chunks SET instants = x'02ffffffff' WHERE chunk = 3 AND lane ="
               " (SELECT id FROM timeline_lanes WHERE pid = 100 AND tid = 1 AND device IS NULL)");
  g_assert_cmpint (sqlite3_changes (db), ==, 1);
  sqlite3_close (db);

  g_autoptr (GError) error = NULL;
  g_autoptr (CowscopeSessionDocument) doc = cowscope_session_document_load (bad, NULL, &error);
  g_assert_no_error (error);
  assert_totals (count (doc, T0, T0 + 10000), 1004 - 100, 202 - 20, 180 * 64 + 1000 + 20,
                 201 - 20, 201 - 20);
  g_autoptr (GError) damaged = cowscope_session_document_take_query_error (doc);
  g_assert_error (damaged, COWSCOPE_SESSION_ERROR, COWSCOPE_SESSION_ERROR_DAMAGED);
  g_unlink (bad);
}

static void
totals_counted (GObject *source G_GNUC_UNUSED, GAsyncResult *result, gpointer data)
{
  GAsyncResult **out = data;
  *out = g_object_ref (result);
}

/* The asynchronous count answers in the main context with the same
 * totals; a cancelled one answers G_IO_ERROR_CANCELLED. */
static void
test_totals_async (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (CowscopeSessionDocument) doc = cowscope_session_document_load (session (), NULL, &error);
  g_assert_no_error (error);

  g_autoptr (GAsyncResult) result = NULL;
  cowscope_range_totals_count_async (doc, T0 + 70, T0 + 9070, NULL, totals_counted, &result);
  while (result == NULL)
    g_main_context_iteration (NULL, TRUE);
  CowscopeRangeTotals totals;
  g_assert_true (cowscope_range_totals_count_finish (result, &totals, &error));
  g_assert_no_error (error);
  assert_totals (totals, 902, 181, 180 * 64 + 20, 181, 180);

  g_autoptr (GCancellable) cancellable = g_cancellable_new ();
  g_cancellable_cancel (cancellable);
  g_autoptr (GAsyncResult) cancelled = NULL;
  cowscope_range_totals_count_async (doc, T0, T0 + 10000, cancellable, totals_counted, &cancelled);
  while (cancelled == NULL)
    g_main_context_iteration (NULL, TRUE);
  g_assert_false (cowscope_range_totals_count_finish (cancelled, &totals, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
}

int
main (int argc, char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/timeline-model/order/processes", test_order_processes);
  g_test_add_func ("/timeline-model/order/single-process", test_order_single_process);
  g_test_add_func ("/timeline-model/totals/packed", test_totals_packed);
  g_test_add_func ("/timeline-model/totals/in-memory", test_totals_in_memory);
  g_test_add_func ("/timeline-model/totals/damaged-chunk", test_totals_damaged_chunk);
  g_test_add_func ("/timeline-model/totals/async", test_totals_async);
  int status = g_test_run ();
  if (session_path != NULL)
    g_unlink (session_path);
  g_free (session_path);
  return status;
}
