/* test-live-session.c — following a session while it is written.
 *
 * A writer connection plays the recorder: it creates a session from the
 * schema in WAL mode and commits events in two batches; the live session
 * must deliver snapshots whose lanes, counters, graph and totals reflect
 * each batch, and once stopped must hold no connection (the recorder can
 * then leave WAL mode, as finalizing does). */
#include <glib/gstdio.h>
#include <sqlite3.h>

#include "cow-trace.h"
#include "cowscope-format-schema.h"
#include "cowscope-live-session.h"
#include "cowscope-session-types.h"
#include "cowscope-timeline-lane.h"

#define PID 100

static void
exec_ok (sqlite3 *db, const char *sql)
{
  char *message = NULL;
  int rc = sqlite3_exec (db, sql, NULL, NULL, &message);
  if (rc != SQLITE_OK)
    g_error ("%s: %s", sql, message);
}

/* One engine event of thread @tid, committed at once. */
static void
add_event (sqlite3 *db, gint64 ts, gint64 tid, gint64 type, gint64 aux, gint64 v0, gint64 v1,
           gint64 v2, gint64 v3, gint64 v4)
{
  g_autofree char *sql = g_strdup_printf (
    "INSERT INTO events (ts, pid, tid, type, op, aux, v0, v1, v2, v3, v4)"
    " VALUES (%" G_GINT64_FORMAT ", %d, %" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ", 0, %"
    G_GINT64_FORMAT ", %" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ", %"
    G_GINT64_FORMAT ", %" G_GINT64_FORMAT ")",
    ts, PID, tid, type, aux, v0, v1, v2, v3, v4);
  exec_ok (db, sql);
}

static void
updated_cb (CowscopeLiveSession *live G_GNUC_UNUSED, guint *count)
{
  (*count)++;
}

/* Iterates the default context until @count exceeds @than (bounded). */
static gboolean
wait_for_update (guint *count, guint than)
{
  gint64 deadline = g_get_monotonic_time () + 30 * G_USEC_PER_SEC;
  while (*count <= than)
    {
      if (g_get_monotonic_time () > deadline)
        return FALSE;
      g_main_context_iteration (NULL, TRUE);
    }
  return TRUE;
}

/* The node (@kind, @id) of the live graph, or NULL. */
static const CowscopeGraphNode *
node (CowscopeLiveSession *live, CowscopeNodeKind kind, guint64 id)
{
  CowscopeSharingGraph *graph = cowscope_live_session_get_graph (live);
  gint i = cowscope_sharing_graph_lookup (graph, kind, PID, id);
  return i >= 0 ? cowscope_sharing_graph_get_node (graph, (guint) i) : NULL;
}

/* Counts the document's lanes of @kind and the events of its thread lanes. */
static guint
count_lanes (CowscopeLiveSession *live, CowscopeLaneKind kind, guint64 *events)
{
  GListModel *lanes = cowscope_session_document_get_lanes (cowscope_live_session_get_document (live));
  guint n = 0;
  if (events != NULL)
    *events = 0;
  for (guint i = 0; i < g_list_model_get_n_items (lanes); i++)
    {
      g_autoptr (CowscopeTimelineLane) lane = g_list_model_get_item (lanes, i);
      if (cowscope_timeline_lane_get_kind (lane) != kind)
        continue;
      n++;
      if (events != NULL)
        *events += cowscope_timeline_lane_get_n_events (lane);
    }
  return n;
}

static void
test_follow (void)
{
  g_autofree char *dir = g_dir_make_tmp ("cowscope-live-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "live.cowscope", NULL);
  sqlite3 *db = NULL;
  guint updates = 0;
  CowscopeLiveTotals totals;
  const CowscopeGraphNode *n;
  guint64 events;

  g_assert_cmpint (sqlite3_open (path, &db), ==, SQLITE_OK);
  exec_ok (db, "PRAGMA journal_mode = WAL");
  g_assert_true (cowscope_format_create_schema (db));
  /* What the recorder writes when it starts. */
  exec_ok (db, "INSERT INTO meta (key, value) VALUES ('format', 'cowscope-session'),"
               " ('finalized', 0)");
  exec_ok (db, "INSERT INTO strings (pid, id, value) VALUES (100, 7, 'weights')");
  exec_ok (db, "INSERT INTO threads (pid, tid, name) VALUES (100, 1, 'main')");

  /* Batch 1, thread 1: a named tensor, then a lazy clone of its storage. */
  add_event (db, 1000, 1, COW_EVENT_ALLOCATION_NEW, 0, 1, 4096, 0, 0, 0);
  add_event (db, 1010, 1, COW_EVENT_STORAGE_NEW, 0, 2, 1, 4096, 0, 0);
  add_event (db, 1020, 1, COW_EVENT_TENSOR_NEW, 0, 3, 2, 0, 1024, 0);
  add_event (db, 1030, 1, COW_EVENT_TENSOR_NAME, 0, 3, 7, 0, 0, 0);
  add_event (db, 1040, 1, COW_EVENT_CONTEXT_NEW, 0, 4, 2, 2, 1, 0);
  add_event (db, 1050, 1, COW_EVENT_STORAGE_NEW, 0, 5, 1, 4096, 4, 2);
  add_event (db, 1060, 1, COW_EVENT_LAZY_CLONE, 0, 3, 0, 2, 5, 4);

  g_autoptr (CowscopeLiveSession) live = cowscope_live_session_new (path);
  g_signal_connect (live, "updated", G_CALLBACK (updated_cb), &updates);
  g_assert_null (cowscope_live_session_get_document (live));
  cowscope_live_session_start (live, 10);
  g_assert_true (wait_for_update (&updates, 0));
  /* A snapshot may have caught part of a batch only: wait for all of it. */
  while (cowscope_session_document_get_n_events (cowscope_live_session_get_document (live)) < 7)
    g_assert_true (wait_for_update (&updates, updates));

  g_assert_cmpuint (count_lanes (live, COWSCOPE_LANE_THREAD, &events), ==, 1);
  g_assert_cmpuint (events, ==, 7);
  g_assert_cmpuint (count_lanes (live, COWSCOPE_LANE_COUNTER, NULL), ==, COWSCOPE_N_COUNTERS);
  g_assert_cmpint (cowscope_session_document_get_start_ns (cowscope_live_session_get_document (live)),
                   ==, 1000);
  g_assert_cmpstr (cowscope_session_document_get_meta (cowscope_live_session_get_document (live),
                                                       "finalized"), ==, "0");
  g_assert_cmpuint (cowscope_sharing_graph_get_n_nodes (cowscope_live_session_get_graph (live)), ==, 5);
  n = node (live, COWSCOPE_NODE_TENSOR, 3);
  g_assert_nonnull (n);
  g_assert_cmpstr (n->label, ==, "weights");
  g_assert_cmpuint (n->nbytes, ==, 4096); /* 1024 f32 */
  g_assert_cmpint (node (live, COWSCOPE_NODE_STORAGE, 5)->state, ==, COWSCOPE_NODE_STATE_SHARED);
  g_assert_cmpuint (node (live, COWSCOPE_NODE_CONTEXT, 4)->refcount, ==, 2);
  cowscope_live_session_get_totals (live, &totals);
  g_assert_cmpuint (totals.events, ==, 7);
  g_assert_cmpuint (totals.lazy_clones, ==, 1);
  g_assert_cmpuint (totals.copies, ==, 0);

  /* Batch 2, thread 2, read in an order that is not time order (as the
   * recorder drains one ring at a time): the clone materializes by copy. */
  exec_ok (db, "BEGIN");
  add_event (db, 1090, 2, COW_EVENT_MATERIALIZE_END, COW_MATERIALIZE_COPY, 5, 4, 6, 4096, 0);
  add_event (db, 1070, 2, COW_EVENT_MATERIALIZE_BEGIN, 0, 5, 4, 3, 4096, 0);
  add_event (db, 1080, 2, COW_EVENT_ALLOCATION_NEW, 0, 6, 4096, 0, 0, 0);
  add_event (db, 1085, 2, COW_EVENT_CONTEXT_UNREF, 0, 4, 5, 1, 1, 0);
  exec_ok (db, "COMMIT");
  while (cowscope_session_document_get_n_events (cowscope_live_session_get_document (live)) < 11)
    g_assert_true (wait_for_update (&updates, updates));

  g_assert_cmpuint (count_lanes (live, COWSCOPE_LANE_THREAD, &events), ==, 2);
  g_assert_cmpuint (events, ==, 11);
  n = node (live, COWSCOPE_NODE_STORAGE, 5);
  g_assert_cmpint (n->state, ==, COWSCOPE_NODE_STATE_MATERIALIZED);
  g_assert_cmpuint (n->allocation_id, ==, 6);
  g_assert_nonnull (node (live, COWSCOPE_NODE_ALLOCATION, 6));
  g_assert_cmpuint (node (live, COWSCOPE_NODE_CONTEXT, 4)->refcount, ==, 1);
  cowscope_live_session_get_totals (live, &totals);
  g_assert_cmpuint (totals.copies, ==, 1);
  g_assert_cmpuint (totals.bytes_copied, ==, 4096);

  /* Stopped, it holds no connection: the writer can leave WAL mode. */
  cowscope_live_session_stop (live);
  {
    sqlite3_stmt *q = NULL;
    g_assert_cmpint (sqlite3_prepare_v2 (db, "PRAGMA journal_mode = DELETE", -1, &q, NULL), ==,
                     SQLITE_OK);
    g_assert_cmpint (sqlite3_step (q), ==, SQLITE_ROW);
    g_assert_cmpstr ((const char *) sqlite3_column_text (q, 0), ==, "delete");
    sqlite3_finalize (q);
  }
  guint before = cowscope_live_session_get_n_updates (live);
  while (g_main_context_iteration (NULL, FALSE))
    ;
  g_assert_cmpuint (cowscope_live_session_get_n_updates (live), ==, before);

  sqlite3_close (db);
  g_remove (path);
  g_rmdir (dir);
}

/* A program shorter than the first snapshot: finish() reads what was
 * written and delivers one last snapshot, started or not, then holds no
 * connection and delivers nothing more. */
static void
test_finish (void)
{
  g_autofree char *dir = g_dir_make_tmp ("cowscope-live-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "short.cowscope", NULL);
  sqlite3 *db = NULL;
  guint updates = 0;
  guint64 events;

  g_assert_cmpint (sqlite3_open (path, &db), ==, SQLITE_OK);
  exec_ok (db, "PRAGMA journal_mode = WAL");
  g_assert_true (cowscope_format_create_schema (db));
  exec_ok (db, "INSERT INTO meta (key, value) VALUES ('format', 'cowscope-session'),"
               " ('finalized', 0)");
  add_event (db, 1000, 1, COW_EVENT_ALLOCATION_NEW, 0, 1, 4096, 0, 0, 0);
  add_event (db, 1010, 1, COW_EVENT_STORAGE_NEW, 0, 2, 1, 4096, 0, 0);
  add_event (db, 1020, 1, COW_EVENT_TENSOR_NEW, 0, 3, 2, 0, 1024, 0);

  /* Never started (the recorder had not reported yet). */
  g_autoptr (CowscopeLiveSession) live = cowscope_live_session_new (path);
  g_signal_connect (live, "updated", G_CALLBACK (updated_cb), &updates);
  cowscope_live_session_finish (live);
  g_assert_true (wait_for_update (&updates, 0));
  g_assert_cmpuint (count_lanes (live, COWSCOPE_LANE_THREAD, &events), ==, 1);
  g_assert_cmpuint (events, ==, 3);
  g_assert_cmpuint (cowscope_sharing_graph_get_n_nodes (cowscope_live_session_get_graph (live)), ==, 3);

  /* Started with a long interval: the events after its first snapshot
   * are in the last one all the same. */
  g_autoptr (CowscopeLiveSession) started = cowscope_live_session_new (path);
  guint started_updates = 0;
  g_signal_connect (started, "updated", G_CALLBACK (updated_cb), &started_updates);
  cowscope_live_session_start (started, 60 * 1000);
  g_assert_true (wait_for_update (&started_updates, 0));
  add_event (db, 1030, 1, COW_EVENT_TENSOR_NEW, 0, 4, 2, 0, 1024, 0);
  add_event (db, 1040, 1, COW_EVENT_TENSOR_NEW, 0, 5, 2, 0, 1024, 0);
  cowscope_live_session_finish (started);
  while (cowscope_session_document_get_n_events (cowscope_live_session_get_document (started)) < 5)
    g_assert_true (wait_for_update (&started_updates, started_updates));
  g_assert_cmpuint (cowscope_sharing_graph_get_n_nodes (cowscope_live_session_get_graph (started)), ==, 5);

  /* No connection left: the writer can leave WAL mode. */
  {
    sqlite3_stmt *q = NULL;
    g_assert_cmpint (sqlite3_prepare_v2 (db, "PRAGMA journal_mode = DELETE", -1, &q, NULL), ==,
                     SQLITE_OK);
    g_assert_cmpint (sqlite3_step (q), ==, SQLITE_ROW);
    g_assert_cmpstr ((const char *) sqlite3_column_text (q, 0), ==, "delete");
    sqlite3_finalize (q);
  }
  /* Finishing twice, or stopping after, changes nothing. */
  cowscope_live_session_finish (live);
  cowscope_live_session_stop (started);
  guint before = cowscope_live_session_get_n_updates (live);
  while (g_main_context_iteration (NULL, FALSE))
    ;
  g_assert_cmpuint (cowscope_live_session_get_n_updates (live), ==, before);

  sqlite3_close (db);
  g_remove (path);
  g_rmdir (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/session/live/follow", test_follow);
  g_test_add_func ("/session/live/finish", test_finish);
  return g_test_run ();
}
