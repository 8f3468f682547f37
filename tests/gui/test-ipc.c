/* test-ipc.c — a recorded multi-process IPC session (the demo's `ipc`
 * scenario under `cowscope-cli record`) in the application window under
 * a virtual display: at an instant when every sent block is in the
 * producer's limbo the graph shows one "kept alive by" edge per block
 * into the consumers' process clusters, the timeline has a lane per
 * process heading its threads, and a screenshot is written. */
#include <math.h>
#include <adwaita.h>
#include <glib/gstdio.h>
#include <sqlite3.h>
#include <string.h>
#include <sys/wait.h>

#include "gui-test-support.h"
#include "cowscope-graph-view.h"
#include "cowscope-graph-render.h"
#include "cowscope-graph-scene.h"
#include "cowscope-timeline-view.h"
#include "cowscope-view-state.h"
#include "cowscope-window.h"

#define N_CONSUMERS 3

/* Whether (@x, @y) lies on the border of node @n (within half a unit). */
static gboolean
on_border (const CowscopeSceneNode *n, double x, double y)
{
  gboolean inside = x >= n->x - 0.5 && x <= n->x + n->width + 0.5 && y >= n->y - 0.5 &&
                    y <= n->y + n->height + 0.5;
  gboolean near_edge = fabs (x - n->x) < 0.5 || fabs (x - n->x - n->width) < 0.5 ||
                       fabs (y - n->y) < 0.5 || fabs (y - n->y - n->height) < 0.5;
  return inside && near_edge;
}
#define N_SENDS 12

static char *session_path;

static gint64
sql_int (const char *sql)
{
  sqlite3 *db = NULL;
  g_assert_cmpint (sqlite3_open_v2 (session_path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  sqlite3_stmt *stmt = NULL;
  g_assert_cmpint (sqlite3_prepare_v2 (db, sql, -1, &stmt, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_step (stmt), ==, SQLITE_ROW);
  gint64 n = sqlite3_column_int64 (stmt, 0);
  sqlite3_finalize (stmt);
  sqlite3_close (db);
  return n;
}

static GtkWidget *
find_child (GtkWidget *widget, GType type)
{
  if (G_TYPE_CHECK_INSTANCE_TYPE (widget, type))
    return widget;
  for (GtkWidget *c = gtk_widget_get_first_child (widget); c != NULL;
       c = gtk_widget_get_next_sibling (c))
    {
      GtkWidget *found = find_child (c, type);
      if (found != NULL)
        return found;
    }
  return NULL;
}

/* Writes the widget's rendering to @name in the screenshot folder. */
static void
write_screenshot (GtkWidget *widget, const char *name)
{
  g_assert_true (gui_test_wait_until (gui_test_widget_drawn, widget, 10));
  int width = gtk_widget_get_width (widget), height = gtk_widget_get_height (widget);
  GdkPaintable *paintable = gtk_widget_paintable_new (widget);
  GtkSnapshot *snapshot = gtk_snapshot_new ();
  gdk_paintable_snapshot (paintable, snapshot, width, height);
  GskRenderNode *node = gtk_snapshot_free_to_node (snapshot);
  g_assert_nonnull (node);
  cairo_surface_t *surface = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, width, height);
  cairo_t *cr = cairo_create (surface);
  gsk_render_node_draw (node, cr);
  cairo_destroy (cr);
  const char *dir = g_getenv ("COWSCOPE_SCREENSHOT_DIR");
  g_autofree char *path = g_build_filename (dir ? dir : ".", name, NULL);
  g_assert_cmpint (cairo_surface_write_to_png (surface, path), ==, CAIRO_STATUS_SUCCESS);
  g_test_message ("screenshot: %s (%dx%d)", path, width, height);
  cairo_surface_destroy (surface);
  gsk_render_node_unref (node);
  g_object_unref (paintable);
}

static gboolean
window_shows_session (gpointer data)
{
  CowscopeWindow *window = data;
  return cowscope_window_get_view_state (window) != NULL
         && g_strcmp0 (cowscope_window_get_visible_page (window), "session") == 0;
}

typedef struct {
  CowscopeGraphView *view;
  gint64 t;
} SceneAt;

/* The graph view shows a scene laid out for instant @t. */
static gboolean
scene_at (gpointer data)
{
  SceneAt *s = data;
  if (!cowscope_graph_view_get_ready (s->view))
    return FALSE;
  CowscopeGraphScene *scene = cowscope_graph_view_get_scene (s->view);
  return scene != NULL
         && cowscope_sharing_graph_get_time (cowscope_graph_scene_get_graph (scene)) == s->t;
}

typedef struct {
  gboolean done, ok;
} Exported;

static void
export_done (GObject *source, GAsyncResult *result, gpointer data)
{
  Exported *ex = data;
  g_autoptr (GError) error = NULL;
  ex->ok = cowscope_graph_export_finish (result, &error);
  g_assert_no_error (error);
  ex->done = TRUE;
}

static gboolean
export_finished (gpointer data)
{
  return ((Exported *) data)->done;
}

static void
test_ipc_window (void)
{
  g_autoptr (CowscopeApplication) app = cowscope_application_new ();
  g_application_register (G_APPLICATION (app), NULL, NULL);
  CowscopeWindow *window = cowscope_window_new (app);
  gtk_window_set_default_size (GTK_WINDOW (window), 1280, 800);
  gtk_window_present (GTK_WINDOW (window));
  gtk_stack_set_transition_type (GTK_STACK (find_child (GTK_WIDGET (window), GTK_TYPE_STACK)),
                                 GTK_STACK_TRANSITION_TYPE_NONE);
  g_autoptr (GFile) file = g_file_new_for_path (session_path);
  cowscope_window_open (window, file);
  g_assert_true (gui_test_wait_until (window_shows_session, window, 30));
  /* A session opens on its summary: show the timeline and the graph. */
  gtk_widget_activate_action (GTK_WIDGET (window), "win.show-view", "s", "timeline");
  CowscopeViewState *state = cowscope_window_get_view_state (window);
  CowscopeGraphView *graph =
    COWSCOPE_GRAPH_VIEW (find_child (GTK_WIDGET (window), COWSCOPE_TYPE_GRAPH_VIEW));
  CowscopeTimelineView *timeline =
    COWSCOPE_TIMELINE_VIEW (find_child (GTK_WIDGET (window), COWSCOPE_TYPE_TIMELINE_VIEW));
  g_assert_nonnull (graph);
  g_assert_nonnull (timeline);

  /* The instant after the producer's last free before any consumer
   * releases: all blocks in the limbo. */
  gint64 t = sql_int ("SELECT max(e.ts) FROM events e, ipc_refs r WHERE e.pid = r.producer_pid"
                      " AND e.seq < (SELECT min(release_seq) FROM ipc_refs)");
  cowscope_view_state_set_cursor (state, t);
  SceneAt at = { graph, t };
  g_assert_true (gui_test_wait_until (scene_at, &at, 30));
  CowscopeGraphScene *scene = cowscope_graph_view_get_scene (graph);
  g_assert_cmpuint (cowscope_graph_scene_count_cross_process_edges (scene), ==, N_SENDS);
  guint limbo = 0;
  for (guint i = 0; i < cowscope_graph_scene_get_n_nodes (scene); i++)
    {
      const CowscopeSceneNode *n = cowscope_graph_scene_get_node (scene, i);
      limbo += n->kind == COWSCOPE_NODE_IPC_BLOCK && n->state == COWSCOPE_NODE_STATE_LIMBO;
    }
  g_assert_cmpuint (limbo, ==, N_SENDS);
  for (guint i = 0; i < cowscope_graph_scene_get_n_edges (scene); i++)
    {
      const CowscopeSceneEdge *e = cowscope_graph_scene_get_edge (scene, i);
      if (COWSCOPE_EDGE_KIND_IS_CROSS_PROCESS (e->kind))
        {
          g_assert_cmpint (e->kind, ==, COWSCOPE_EDGE_KEPT_ALIVE_BY);
          g_assert_cmpuint (cowscope_graph_scene_get_node (scene, e->from)->pid, !=,
                            cowscope_graph_scene_get_node (scene, e->to)->pid);
          g_assert_cmpuint (e->n_points, >, 0);
          /* It leaves its tail at the tail's border and its arrow ends at
           * the head's border, not inside either box. */
          const CowscopeSceneNode *a = cowscope_graph_scene_get_node (scene, e->from);
          const CowscopeSceneNode *b = cowscope_graph_scene_get_node (scene, e->to);
          g_assert_true (e->has_arrow);
          g_assert_true (on_border (a, e->points[0], e->points[1]));
          g_assert_true (on_border (b, e->arrow_x, e->arrow_y));
        }
    }
  /* Process boxes never overlap, and the producer's (the tail of every
   * edge between processes) sits above each consumer's. */
  guint32 producer = sql_int ("SELECT producer_pid FROM ipc_refs LIMIT 1");
  for (guint c = 0; c < cowscope_graph_scene_get_n_clusters (scene); c++)
    {
      const CowscopeSceneCluster *p = cowscope_graph_scene_get_cluster (scene, c);
      for (guint d = c + 1; d < cowscope_graph_scene_get_n_clusters (scene); d++)
        {
          const CowscopeSceneCluster *q = cowscope_graph_scene_get_cluster (scene, d);
          g_assert_true (p->x + p->width <= q->x || q->x + q->width <= p->x ||
                         p->y + p->height <= q->y || q->y + q->height <= p->y);
        }
      if (p->pid != producer)
        continue;
      for (guint d = 0; d < cowscope_graph_scene_get_n_clusters (scene); d++)
        {
          const CowscopeSceneCluster *q = cowscope_graph_scene_get_cluster (scene, d);
          if (q->pid != producer)
            g_assert_cmpfloat (p->y + p->height, <=, q->y);
        }
    }
  /* One cluster per process, each around its own nodes. */
  g_assert_cmpuint (cowscope_graph_scene_get_n_clusters (scene), ==, 1 + N_CONSUMERS);
  for (guint c = 0; c < cowscope_graph_scene_get_n_clusters (scene); c++)
    {
      const CowscopeSceneCluster *cl = cowscope_graph_scene_get_cluster (scene, c);
      g_assert_nonnull (strstr (cl->label, "cowscope-demo"));
      for (guint i = 0; i < cowscope_graph_scene_get_n_nodes (scene); i++)
        {
          const CowscopeSceneNode *n = cowscope_graph_scene_get_node (scene, i);
          if (n->pid != cl->pid)
            continue;
          g_assert_cmpfloat (n->x, >=, cl->x - 0.5);
          g_assert_cmpfloat (n->y, >=, cl->y - 0.5);
          g_assert_cmpfloat (n->x + n->width, <=, cl->x + cl->width + 0.5);
          g_assert_cmpfloat (n->y + n->height, <=, cl->y + cl->height + 0.5);
        }
    }

  /* The timeline: a lane per process, each directly above its threads. */
  guint processes = 0;
  guint32 heading = 0;
  for (guint i = 0; i < cowscope_timeline_view_get_n_lanes (timeline); i++)
    {
      CowscopeTimelineLane *lane = cowscope_timeline_view_get_lane (timeline, i);
      CowscopeLaneKind kind = cowscope_timeline_lane_get_kind (lane);
      if (kind == COWSCOPE_LANE_PROCESS)
        {
          processes++;
          heading = cowscope_timeline_lane_get_pid (lane);
        }
      else if (kind == COWSCOPE_LANE_THREAD)
        g_assert_cmpuint (cowscope_timeline_lane_get_pid (lane), ==, heading);
    }
  g_assert_cmpuint (processes, ==, 1 + N_CONSUMERS);
  g_assert_cmpuint (processes, ==, sql_int ("SELECT count(*) FROM processes"));

  /* Centre a limbo block, as a person would, and take a picture; then
   * export the whole graph (every cluster) as PNG. */
  for (guint i = 0; i < cowscope_graph_scene_get_n_nodes (scene); i++)
    if (cowscope_graph_scene_get_node (scene, i)->kind == COWSCOPE_NODE_IPC_BLOCK)
      {
        cowscope_graph_view_select_node (graph, (gint) i);
        break;
      }
  gui_test_spin (800);
  write_screenshot (GTK_WIDGET (window), "cowscope-ipc.png");
  const char *dir = g_getenv ("COWSCOPE_SCREENSHOT_DIR");
  g_autofree char *png = g_build_filename (dir ? dir : ".", "cowscope-ipc-graph.png", NULL);
  g_autoptr (GFile) out = g_file_new_for_path (png);
  Exported ex = { FALSE, FALSE };
  cowscope_graph_export_async (scene, out, COWSCOPE_GRAPH_EXPORT_PNG, NULL, NULL, NULL,
                               export_done, &ex);
  g_assert_true (gui_test_wait_until (export_finished, &ex, 30));
  g_assert_true (ex.ok);
  g_test_message ("graph export: %s", png);
  gtk_window_destroy (GTK_WINDOW (window));
  gui_test_spin (50);
}

int
main (int argc, char **argv)
{
  gtk_test_init (&argc, &argv, NULL);
  adw_init ();
  const char *cli = g_getenv ("COWSCOPE_CLI"), *demo = g_getenv ("COWSCOPE_DEMO");
  const char *dir = g_getenv ("COWSCOPE_SCREENSHOT_DIR");
  g_autofree char *name = g_strdup_printf ("test-ipc-%d.cowscope", (int) getpid ());
  session_path = g_build_filename (dir ? dir : g_get_tmp_dir (), name, NULL);
  if (cli == NULL || demo == NULL)
    {
      g_test_skip ("cowscope-cli or the demo is not built");
      return g_test_run ();
    }
  const char *args[] = { cli, "record", "--force", "-o", session_path, "--", demo, "ipc", NULL };
  g_autofree char *out = NULL, *err = NULL;
  g_autoptr (GError) error = NULL;
  int status = 0;
  if (!g_spawn_sync (NULL, (char **) args, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err,
                     &status, &error)
      || !WIFEXITED (status) || WEXITSTATUS (status) != 0)
    g_error ("cannot record the ipc demo: %s%s%s", error ? error->message : "", out ? out : "",
             err ? err : "");

  g_test_add_func ("/cowscope/ipc/graph-and-process-lanes", test_ipc_window);
  int rc = g_test_run ();
  g_unlink (session_path);
  g_free (session_path);
  return rc;
}
