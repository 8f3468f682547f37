/* test-ipc-session.c — the session model on a recorded multi-process IPC
 * session (the demo's `ipc` scenario under `cowscope-cli record`): the
 * ipc tables the finalizer derives, the sharing graph's cross-process
 * edges and limbo blocks at chosen instants, one timeline lane per
 * process, and a session without the ipc tables still opening. */
#include <glib.h>
#include <glib/gstdio.h>
#include <sqlite3.h>
#include <string.h>
#include <sys/wait.h>

#include "cowscope-session-document.h"
#include "cowscope-sharing-graph.h"
#include "cowscope-timeline-lane.h"

static char *session_path;
static CowscopeSessionDocument *doc;

/* The demo: 3 consumers x 4 tensors. */
#define N_CONSUMERS 3
#define N_SENDS 12

static gint64
sql_int_on (const char *path, const char *sql)
{
  sqlite3 *db = NULL;
  g_assert_cmpint (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  sqlite3_stmt *stmt = NULL;
  g_assert_cmpint (sqlite3_prepare_v2 (db, sql, -1, &stmt, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_step (stmt), ==, SQLITE_ROW);
  gint64 n = sqlite3_column_int64 (stmt, 0);
  sqlite3_finalize (stmt);
  sqlite3_close (db);
  return n;
}

static gint64
sql_int (const char *sql)
{
  return sql_int_on (session_path, sql);
}

/* Records `cowscope-demo ipc` into @path; FALSE (test skipped) when the
 * command-line tool or the demo is not built. */
static gboolean
record_ipc_demo (const char *path)
{
  const char *cli = g_getenv ("COWSCOPE_CLI"), *demo = g_getenv ("COWSCOPE_DEMO");
  if (cli == NULL || demo == NULL)
    return FALSE;
  const char *argv[] = { cli, "record", "--force", "-o", path, "--", demo, "ipc", NULL };
  g_autofree char *out = NULL, *err = NULL;
  g_autoptr (GError) error = NULL;
  int status = 0;
  g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out,
                               &err, &status, &error));
  g_assert_no_error (error);
  if (!WIFEXITED (status) || WEXITSTATUS (status) != 0)
    g_error ("cowscope-cli record failed (%d): %s%s", status, out, err);
  return TRUE;
}

/* The finalizer derived one ipc_refs row per send, each received by one
 * consumer, sent into the limbo and freed from it; one ipc_blocks row
 * per block. */
static void
test_tables (void)
{
  g_assert_cmpint (sql_int ("SELECT count(*) FROM ipc_refs"), ==, N_SENDS);
  g_assert_cmpint (sql_int ("SELECT count(*) FROM ipc_refs WHERE consumer_pid IS NOT NULL"
                            " AND consumer_pid != producer_pid AND cached = 0"
                            " AND receive_ts >= send_ts AND release_ts >= receive_ts"
                            " AND limbo_enter_ts >= send_ts AND limbo_free_ts >= release_ts"
                            " AND consumer_died = 0 AND consumer_allocation_id IS NOT NULL"
                            " AND storage_id IS NOT NULL AND nbytes > 0"),
                   ==, N_SENDS);
  g_assert_cmpint (sql_int ("SELECT count(DISTINCT consumer_pid) FROM ipc_refs"), ==, N_CONSUMERS);
  g_assert_cmpint (sql_int ("SELECT count(*) FROM ipc_blocks WHERE sends = 1 AND consumers = 1"
                            " AND limbo_free_ts IS NOT NULL AND free_ts = limbo_free_ts"),
                   ==, N_SENDS);
}

typedef struct {
  guint blocks, limbo_blocks, records, received_by, kept_alive_by, block_owns, record_owns;
  gboolean cross_pids_ok;
} IpcCounts;

/* Counts the IPC part of the graph after @seq. */
static void
count_ipc (gint64 seq, IpcCounts *c)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (CowscopeSharingGraph) g = cowscope_sharing_graph_build (doc, seq, 0, NULL, &error);
  g_assert_no_error (error);
  memset (c, 0, sizeof *c);
  c->cross_pids_ok = TRUE;
  c->blocks = cowscope_sharing_graph_count_nodes (g, COWSCOPE_NODE_IPC_BLOCK);
  c->records = cowscope_sharing_graph_count_nodes (g, COWSCOPE_NODE_IPC_RECEIVED);
  for (guint i = 0; i < cowscope_sharing_graph_get_n_nodes (g); i++)
    {
      const CowscopeGraphNode *n = cowscope_sharing_graph_get_node (g, i);
      if (n->kind == COWSCOPE_NODE_IPC_BLOCK && n->state == COWSCOPE_NODE_STATE_LIMBO)
        c->limbo_blocks++;
      if (n->kind != COWSCOPE_NODE_IPC_BLOCK && n->kind != COWSCOPE_NODE_IPC_RECEIVED)
        g_assert_cmpint (n->state, !=, COWSCOPE_NODE_STATE_LIMBO);
    }
  for (guint i = 0; i < cowscope_sharing_graph_get_n_edges (g); i++)
    {
      const CowscopeGraphEdge *e = cowscope_sharing_graph_get_edge (g, i);
      const CowscopeGraphNode *a = cowscope_sharing_graph_get_node (g, e->from);
      const CowscopeGraphNode *b = cowscope_sharing_graph_get_node (g, e->to);
      if (COWSCOPE_EDGE_KIND_IS_CROSS_PROCESS (e->kind))
        {
          /* Producer's block -> consumer's record, the record naming
           * the producer. */
          if (a->kind != COWSCOPE_NODE_IPC_BLOCK || b->kind != COWSCOPE_NODE_IPC_RECEIVED
              || a->pid == b->pid || b->peer_pid != a->pid || b->source_id != a->id)
            c->cross_pids_ok = FALSE;
          if (e->kind == COWSCOPE_EDGE_RECEIVED_BY)
            c->received_by++;
          else
            c->kept_alive_by++;
        }
      else if (a->pid != b->pid)
        c->cross_pids_ok = FALSE; /* only IPC edges cross processes */
      if (e->kind == COWSCOPE_EDGE_OWNS && a->kind == COWSCOPE_NODE_IPC_BLOCK
          && b->kind == COWSCOPE_NODE_ALLOCATION)
        c->block_owns++;
      if (e->kind == COWSCOPE_EDGE_OWNS && a->kind == COWSCOPE_NODE_IPC_RECEIVED
          && b->kind == COWSCOPE_NODE_ALLOCATION && b->alloc_kind == 2)
        c->record_owns++;
    }
  /* Every process has a label ("cowscope-demo (pid N)"). */
  for (guint i = 0; i < cowscope_session_document_get_n_processes (doc); i++)
    {
      const CowscopeProcessInfo *p = cowscope_session_document_get_process (doc, i);
      const char *label = cowscope_sharing_graph_get_process_label (g, p->pid);
      g_assert_nonnull (label);
      g_assert_nonnull (strstr (label, "cowscope-demo"));
    }
}

/* Once every block is sent and received, before the producer drops any:
 * one block per send in the producer, one record per consumer slot, a
 * "received by" edge from each block to a record in another process,
 * nothing in the limbo. */
static void
test_graph_shared (void)
{
  gint64 seq = sql_int ("SELECT min(limbo_enter_seq) - 1 FROM ipc_refs");
  g_assert_cmpint (seq, >=, sql_int ("SELECT max(receive_seq) FROM ipc_refs"));
  IpcCounts c;
  count_ipc (seq, &c);
  g_assert_cmpuint (c.blocks, ==, N_SENDS);
  g_assert_cmpuint (c.limbo_blocks, ==, 0);
  g_assert_cmpuint (c.records, ==, N_SENDS);
  g_assert_cmpuint (c.received_by, ==, N_SENDS);
  g_assert_cmpuint (c.kept_alive_by, ==, 0);
  g_assert_cmpuint (c.block_owns, ==, N_SENDS);
  g_assert_cmpuint (c.record_owns, ==, N_SENDS);
  g_assert_true (c.cross_pids_ok);
}

/* After the producer dropped every block and before any consumer
 * released: all twelve blocks are limbo nodes, kept alive by the
 * consumers (dashed "kept alive by" edges), and the producer's
 * allocations are gone. */
static void
test_graph_limbo (void)
{
  gint64 seq = sql_int ("SELECT max(e.seq) FROM events e, ipc_refs r WHERE e.pid = r.producer_pid"
                        " AND e.seq < (SELECT min(release_seq) FROM ipc_refs)");
  g_assert_cmpint (seq, >, sql_int ("SELECT max(limbo_enter_seq) FROM ipc_refs"));
  IpcCounts c;
  count_ipc (seq, &c);
  g_assert_cmpuint (c.blocks, ==, N_SENDS);
  g_assert_cmpuint (c.limbo_blocks, ==, N_SENDS);
  g_assert_cmpuint (c.records, ==, N_SENDS);
  g_assert_cmpuint (c.received_by, ==, 0);
  g_assert_cmpuint (c.kept_alive_by, ==, N_SENDS);
  g_assert_cmpuint (c.block_owns, ==, 0);
  g_assert_true (c.cross_pids_ok);

  /* Halfway through the releases: the released consumers' records and
   * edges are gone, their blocks wait in the limbo for the collect. */
  gint64 mid = sql_int ("SELECT release_seq FROM ipc_refs ORDER BY release_seq LIMIT 1 OFFSET 5");
  count_ipc (mid, &c);
  g_assert_cmpuint (c.blocks, ==, N_SENDS);
  g_assert_cmpuint (c.limbo_blocks, ==, N_SENDS);
  g_assert_cmpuint (c.records, ==, N_SENDS - 6);
  g_assert_cmpuint (c.kept_alive_by, ==, N_SENDS - 6);

  /* At the end nothing is shared any more. */
  count_ipc (cowscope_session_document_get_last_seq (doc), &c);
  g_assert_cmpuint (c.blocks + c.records + c.received_by + c.kept_alive_by, ==, 0);
}

/* One process lane per process, with the process's IPC events; the
 * producer's lane shows a limbo span per block, each consumer's a held
 * span per block it received. */
static void
test_process_lanes (void)
{
  GListModel *lanes = cowscope_session_document_get_lanes (doc);
  guint n_process_lanes = 0;
  gint64 producer = sql_int ("SELECT min(producer_pid) FROM ipc_refs");
  gint64 t0 = cowscope_session_document_get_start_ns (doc);
  gint64 t1 = cowscope_session_document_get_end_ns (doc) + 1;
  for (guint i = 0; i < g_list_model_get_n_items (lanes); i++)
    {
      g_autoptr (CowscopeTimelineLane) lane = g_list_model_get_item (lanes, i);
      if (cowscope_timeline_lane_get_kind (lane) != COWSCOPE_LANE_PROCESS)
        continue;
      n_process_lanes++;
      guint32 pid = cowscope_timeline_lane_get_pid (lane);
      g_autofree char *events_sql = g_strdup_printf (
        "SELECT count(*) FROM events WHERE pid = %u AND type BETWEEN 20 AND 25", pid);
      g_assert_cmpuint (cowscope_timeline_lane_get_n_events (lane), ==, sql_int (events_sql));
      g_assert_cmpstr (cowscope_timeline_lane_get_title (lane), ==, "cowscope-demo");
      g_autoptr (CowscopeTimelineWindow) win = cowscope_timeline_lane_query (lane, t0, t1, 1000000);
      guint limbo = 0, held = 0;
      guint n_spans = 0;
      const CowscopeTimelineItem *spans = cowscope_timeline_window_get_spans (win, &n_spans);
      for (guint k = 0; k < n_spans; k++)
        {
          const CowscopeTimelineItem *s = &spans[k];
          limbo += s->kind == COWSCOPE_ITEM_IPC_LIMBO;
          held += s->kind == COWSCOPE_ITEM_IPC_HELD;
        }
      if (pid == producer)
        {
          g_assert_cmpuint (limbo, ==, N_SENDS);
          g_assert_cmpuint (held, ==, 0);
        }
      else
        {
          g_assert_cmpuint (limbo, ==, 0);
          g_assert_cmpuint (held, ==, N_SENDS / N_CONSUMERS);
        }
    }
  g_assert_cmpuint (n_process_lanes, ==, 1 + N_CONSUMERS);
  g_assert_cmpuint (n_process_lanes, ==, sql_int ("SELECT count(*) FROM processes"));
}

/* A session finalized before the ipc tables existed still opens: its
 * graph has no IPC nodes, its process lanes no spans. */
static void
test_old_session (void)
{
  g_autofree char *old = g_strdup_printf ("%s.old.cowscope", session_path);
  g_autofree char *contents = NULL;
  gsize len;
  g_assert_true (g_file_get_contents (session_path, &contents, &len, NULL));
  g_assert_true (g_file_set_contents (old, contents, (gssize) len, NULL));
  sqlite3 *db = NULL;
  g_assert_cmpint (sqlite3_open (old, &db), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_exec (db, "DROP TABLE ipc_refs; DROP TABLE ipc_blocks;", NULL, NULL,
                                 NULL), ==, SQLITE_OK);
  sqlite3_close (db);

  g_autoptr (GError) error = NULL;
  g_autoptr (CowscopeSessionDocument) old_doc = cowscope_session_document_load (old, NULL, &error);
  g_assert_no_error (error);
  gint64 seq = sql_int ("SELECT max(limbo_enter_seq) FROM ipc_refs");
  g_autoptr (CowscopeSharingGraph) g = cowscope_sharing_graph_build (old_doc, seq, 0, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (cowscope_sharing_graph_count_nodes (g, COWSCOPE_NODE_IPC_BLOCK), ==, 0);
  g_assert_cmpuint (cowscope_sharing_graph_count_nodes (g, COWSCOPE_NODE_TENSOR), >, 0);
  GListModel *lanes = cowscope_session_document_get_lanes (old_doc);
  guint n_process_lanes = 0;
  for (guint i = 0; i < g_list_model_get_n_items (lanes); i++)
    {
      g_autoptr (CowscopeTimelineLane) lane = g_list_model_get_item (lanes, i);
      n_process_lanes += cowscope_timeline_lane_get_kind (lane) == COWSCOPE_LANE_PROCESS;
    }
  g_assert_cmpuint (n_process_lanes, ==, 1 + N_CONSUMERS);
  g_unlink (old);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  const char *dir = g_getenv ("COWSCOPE_TEST_TMPDIR");
  g_autofree char *name = g_strdup_printf ("test-ipc-session-%d.cowscope", (int) getpid ());
  session_path = g_build_filename (dir ? dir : g_get_tmp_dir (), name, NULL);
  if (!record_ipc_demo (session_path))
    {
      g_test_skip ("cowscope-cli or the demo is not built");
      return g_test_run ();
    }
  g_autoptr (GError) error = NULL;
  doc = cowscope_session_document_load (session_path, NULL, &error);
  g_assert_no_error (error);

  g_test_add_func ("/ipc-session/tables", test_tables);
  g_test_add_func ("/ipc-session/graph-received-by", test_graph_shared);
  g_test_add_func ("/ipc-session/graph-limbo-kept-alive-by", test_graph_limbo);
  g_test_add_func ("/ipc-session/timeline-process-lanes", test_process_lanes);
  g_test_add_func ("/ipc-session/old-session-opens", test_old_session);
  int status = g_test_run ();
  g_clear_object (&doc);
  g_unlink (session_path);
  g_free (session_path);
  return status;
}
