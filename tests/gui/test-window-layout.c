/* test-window-layout.c — how the session window fits a screen, measured
 * rather than looked at: its minimum width with a session open, and the
 * sharing graph's legend against the graph's nodes after Fit at the
 * default and at the minimum window size (no node under the legend,
 * every node inside the canvas), on a generated session.
 */
#include <adwaita.h>
#include <glib/gstdio.h>

#include "gui-test-support.h"
#include "cowscope-application.h"
#include "cowscope-graph-canvas.h"
#include "cowscope-graph-view.h"
#include "cowscope-window.h"
#include "session-fixture.h"

/* A window this narrow still shows a session (the issue asks for 600 px
 * or less; it was 864). */
#define MAX_MIN_WIDTH 600

static char *fixture_path;
static CowscopeApplication *app;

/* The first widget of @type under @root, depth first. */
static GtkWidget *
find_child (GtkWidget *root, GType type)
{
  if (G_TYPE_CHECK_INSTANCE_TYPE (root, type))
    return root;
  for (GtkWidget *c = gtk_widget_get_first_child (root); c != NULL; c = gtk_widget_get_next_sibling (c))
    {
      GtkWidget *found = find_child (c, type);
      if (found != NULL)
        return found;
    }
  return NULL;
}

static gboolean
session_shown (gpointer data)
{
  return g_strcmp0 (cowscope_window_get_visible_page (data), "session") == 0;
}

static gboolean
graph_shown (gpointer data)
{
  CowscopeWindow *window = data;
  GtkWidget *graph = find_child (GTK_WIDGET (window), COWSCOPE_TYPE_GRAPH_VIEW);
  return g_strcmp0 (cowscope_window_get_visible_page (window), "session") == 0 && graph != NULL
         && cowscope_graph_view_get_ready (COWSCOPE_GRAPH_VIEW (graph))
         && cowscope_graph_view_get_scene (COWSCOPE_GRAPH_VIEW (graph)) != NULL
         && gtk_widget_get_width (graph) > 0;
}

typedef struct {
  GtkWidget *widget;
  int width;
} WidthWait;

/* The width of the window on the screen (its surface: with the frame
 * that GTK's measure of the window includes too). */
static int
surface_width (GtkWidget *window)
{
  GdkSurface *surface = gtk_native_get_surface (GTK_NATIVE (window));
  return surface != NULL ? gdk_surface_get_width (surface) : 0;
}

static gboolean
has_width (gpointer data)
{
  WidthWait *w = data;
  return surface_width (w->widget) == w->width;
}

/* A window showing the fixture session at @width x 700 (clamped to its
 * minimum by GTK), its graph laid out. */
static CowscopeWindow *
open_window (int width)
{
  CowscopeWindow *window = cowscope_window_new (app);
  g_autoptr (GFile) file = g_file_new_for_path (fixture_path);

  gtk_window_set_default_size (GTK_WINDOW (window), width, 700);
  gtk_window_present (GTK_WINDOW (window));
  cowscope_window_open (window, file);
  g_assert_true (gui_test_wait_until (session_shown, window, 60));
  /* A session opens on its summary: show the timeline and its graph. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.show-view", "s", "timeline"));
  g_assert_true (gui_test_wait_until (graph_shown, window, 60));
  g_assert_true (gui_test_wait_until (gui_test_widget_drawn, window, 10));
  return window;
}

/* The window's minimum width, as GTK measures it (shadow included). */
static int
minimum_width (CowscopeWindow *window)
{
  int min = 0, nat = 0;
  gtk_widget_measure (GTK_WIDGET (window), GTK_ORIENTATION_HORIZONTAL, -1, &min, &nat, NULL, NULL);
  return min;
}

/* Resizes @window to @width and waits until it has that width. */
static void
resize (CowscopeWindow *window, int width)
{
  WidthWait w = { GTK_WIDGET (window), width };
  gtk_window_set_default_size (GTK_WINDOW (window), width, 700);
  if (!gui_test_wait_until (has_width, &w, 10))
    g_error ("the window is %d px wide, not %d", surface_width (GTK_WIDGET (window)), width);
  g_assert_true (gui_test_wait_until (gui_test_widget_drawn, window, 10));
}

/* Lets the legend follow the width, then fits the graph and lets the
 * canvas take its final size. */
static void
fit (CowscopeGraphView *graph)
{
  gui_test_spin (200);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (graph), "graph.zoom-fit", NULL));
  g_assert_true (gui_test_wait_until (gui_test_widget_drawn, graph, 10));
}

/* Every node of the scene lies inside the canvas and, when the legend is
 * shown, none meets it (window coordinates). */
static void
check_nodes_clear_of_legend (CowscopeWindow *window, CowscopeGraphView *graph)
{
  CowscopeGraphCanvas *canvas = cowscope_graph_view_get_canvas (graph);
  CowscopeGraphScene *scene = cowscope_graph_view_get_scene (graph);
  GtkWidget *legend = cowscope_graph_view_get_legend (graph);
  graphene_rect_t canvas_box, legend_box;

  g_assert_true (gtk_widget_compute_bounds (GTK_WIDGET (canvas), GTK_WIDGET (window), &canvas_box));
  g_assert_cmpfloat (canvas_box.size.width, >, 100);
  g_assert_cmpfloat (canvas_box.size.height, >, 50);
  gboolean legend_shown = gtk_widget_get_mapped (legend);
  if (legend_shown)
    {
      g_assert_true (gtk_widget_compute_bounds (legend, GTK_WIDGET (window), &legend_box));
      g_assert_cmpfloat (legend_box.size.width, >, 50);
    }
  g_assert_cmpuint (cowscope_graph_scene_get_n_nodes (scene), >, 0);
  for (guint i = 0; i < cowscope_graph_scene_get_n_nodes (scene); i++)
    {
      const CowscopeSceneNode *n = cowscope_graph_scene_get_node (scene, i);
      double x0, y0, x1, y1;
      graphene_point_t p0, p1;
      graphene_rect_t box;

      cowscope_graph_canvas_to_widget (canvas, n->x, n->y, &x0, &y0);
      cowscope_graph_canvas_to_widget (canvas, n->x + n->width, n->y + n->height, &x1, &y1);
      g_assert_true (gtk_widget_compute_point (GTK_WIDGET (canvas), GTK_WIDGET (window),
                                               &GRAPHENE_POINT_INIT ((float) x0, (float) y0), &p0));
      g_assert_true (gtk_widget_compute_point (GTK_WIDGET (canvas), GTK_WIDGET (window),
                                               &GRAPHENE_POINT_INIT ((float) x1, (float) y1), &p1));
      graphene_rect_init (&box, p0.x, p0.y, p1.x - p0.x, p1.y - p0.y);
      if (!graphene_rect_contains_rect (&canvas_box, &box))
        g_error ("node %u (%s) at %.0f,%.0f %.0fx%.0f is outside the canvas %.0f,%.0f %.0fx%.0f", i,
                 n->label, box.origin.x, box.origin.y, box.size.width, box.size.height,
                 canvas_box.origin.x, canvas_box.origin.y, canvas_box.size.width,
                 canvas_box.size.height);
      if (legend_shown && graphene_rect_intersection (&legend_box, &box, NULL))
        g_error ("node %u (%s) is under the legend", i, n->label);
    }
}

/* With a session open the window can be made narrower than 600 px: what
 * forced 864 px (the graph's toolbar, and a side panel that could not
 * give way) no longer does. */
static void
test_minimum_width (void)
{
  CowscopeWindow *window = open_window (1100);
  int min = minimum_width (window);

  g_test_message ("minimum window width with a session: %d px", min);
  g_assert_cmpint (min, <=, MAX_MIN_WIDTH);
  /* And it really gets that narrow, the session still shown. */
  resize (window, min);
  g_assert_cmpstr (cowscope_window_get_visible_page (window), ==, "session");
  gtk_window_destroy (GTK_WINDOW (window));
  gui_test_spin (50);
}

/* At the default size the legend is shown beside the graph; after Fit no
 * node is under it and every node is in the canvas.  At the minimum size
 * it starts hidden, Fit fits, and shown there it still covers nothing. */
static void
test_legend_beside_graph (void)
{
  CowscopeWindow *window = open_window (1100);
  CowscopeGraphView *graph =
    COWSCOPE_GRAPH_VIEW (find_child (GTK_WIDGET (window), COWSCOPE_TYPE_GRAPH_VIEW));

  fit (graph);
  g_assert_true (cowscope_graph_view_get_legend_visible (graph));
  check_nodes_clear_of_legend (window, graph);

  /* The smallest window: the legend gives the graph its room. */
  resize (window, minimum_width (window));
  fit (graph);
  g_assert_false (cowscope_graph_view_get_legend_visible (graph));
  check_nodes_clear_of_legend (window, graph);

  /* Asked for there (the toolbar's toggle), it sits beside the graph. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (graph), "graph.show-legend", NULL));
  g_assert_true (cowscope_graph_view_get_legend_visible (graph));
  fit (graph);
  g_assert_true (gtk_widget_get_mapped (cowscope_graph_view_get_legend (graph)));
  check_nodes_clear_of_legend (window, graph);

  /* The user's choice stays when the window grows again. */
  resize (window, 1100);
  gui_test_spin (200);
  g_assert_true (cowscope_graph_view_get_legend_visible (graph));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (graph), "graph.show-legend", NULL));
  gui_test_spin (200);
  g_assert_false (cowscope_graph_view_get_legend_visible (graph));

  gtk_window_destroy (GTK_WINDOW (window));
  gui_test_spin (50);
}

int
main (int argc, char **argv)
{
  g_autoptr (GError) error = NULL;
  SessionFixtureOptions options;
  SessionFixtureInfo info;
  const char *dir = g_getenv ("COWSCOPE_SCREENSHOT_DIR");
  g_autofree char *base = g_strdup_printf ("test-window-layout-%d.cowscope", (int) getpid ());
  int status;

  gtk_test_init (&argc, &argv, NULL);
  adw_init ();

  fixture_path = g_build_filename (dir != NULL ? dir : g_get_tmp_dir (), base, NULL);
  session_fixture_options_small (&options);
  if (!session_fixture_generate (fixture_path, &options, &info, &error))
    g_error ("cannot generate the fixture: %s", error->message);

  app = cowscope_application_new ();
  g_application_set_flags (G_APPLICATION (app), G_APPLICATION_NON_UNIQUE);
  g_assert_true (g_application_register (G_APPLICATION (app), NULL, &error));

  g_test_add_func ("/cowscope/window-layout/minimum-width", test_minimum_width);
  g_test_add_func ("/cowscope/window-layout/legend-beside-graph", test_legend_beside_graph);

  status = g_test_run ();
  g_object_unref (app);
  g_unlink (fixture_path);
  g_free (fixture_path);
  return status;
}
