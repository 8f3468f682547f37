/* test-timeline.c — the copy timeline under a virtual display: a fixture
 * session (tests/session/session-fixture.c) opened through the window's
 * actions, then lanes, zoom and pan actions, clicks, range totals and the
 * render nodes checked against the session, and screenshots of the
 * window with the session open (light and dark).
 */
#include <adwaita.h>
#include <glib/gstdio.h>
#include <math.h>
#include <sqlite3.h>

#include "gui-test-support.h"
#include "cowscope-application.h"
#include "cowscope-copy-explanation.h"
#include "cowscope-graph-view.h"
#include "cowscope-timeline-view.h"
#include "cowscope-window.h"
#include "session-fixture.h"

static CowscopeApplication *app;
static char *tmp_dir;
static char *session_path;
static SessionFixtureInfo info;
static CowscopeWindow *window;   /* the session window every test uses */



static CowscopeTimelineView *
view (void)
{
  return cowscope_window_get_timeline_view (window);
}

static CowscopeViewState *
state (void)
{
  return cowscope_window_get_view_state (window);
}

/* True once the window shows a loaded session. */
static gboolean
session_loaded (gpointer data)
{
  return !cowscope_window_is_loading (data) && cowscope_window_get_view_state (data) != NULL;
}

typedef struct {
  guint frames;
} FrameWait;

/* True once the timeline drew a frame after the one counted in @data. */
static gboolean
new_frame (gpointer data)
{
  FrameWait *wait = data;
  return cowscope_timeline_view_get_frame_count (view ()) > wait->frames
         && gtk_widget_get_width (GTK_WIDGET (view ())) > 400;
}

/* Waits for the timeline to draw the current view state. */
static void
wait_frame (void)
{
  FrameWait wait = { cowscope_timeline_view_get_frame_count (view ()) };
  gtk_widget_queue_draw (GTK_WIDGET (view ()));
  g_assert_true (gui_test_wait_until (new_frame, &wait, 20));
}

/* One integer from @sql on the fixture session. */
static gint64
sql_int (const char *sql)
{
  sqlite3 *db = NULL;
  sqlite3_stmt *stmt = NULL;
  g_assert_cmpint (sqlite3_open_v2 (session_path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_prepare_v2 (db, sql, -1, &stmt, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_step (stmt), ==, SQLITE_ROW);
  gint64 value = sqlite3_column_int64 (stmt, 0);
  sqlite3_finalize (stmt);
  sqlite3_close (db);
  return value;
}

/* Opening through win.open-uri shows the session with its view state,
 * and the timeline draws it. */
static void
test_open (void)
{
  g_autoptr (GFile) file = g_file_new_for_path (session_path);
  g_autofree char *uri = g_file_get_uri (file);
  window = cowscope_window_new (app);
  gtk_window_set_default_size (GTK_WINDOW (window), 1280, 800);
  gtk_window_present (GTK_WINDOW (window));
  g_assert_null (cowscope_window_get_view_state (window));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.open-uri", "s", uri));
  g_assert_true (gui_test_wait_until (session_loaded, window, 20));
  g_assert_cmpstr (cowscope_window_get_visible_page (window), ==, "session");
  g_assert_true (cowscope_timeline_view_get_view_state (view ()) == state ());
  /* A session opens on its summary: show the timeline. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.show-view", "s", "timeline"));
  wait_frame ();
  /* The whole session is shown at first. */
  CowscopeSessionDocument *doc = cowscope_view_state_get_document (state ());
  g_assert_cmpint (cowscope_view_state_get_visible_start (state ()), ==, info.start_ns);
  g_assert_cmpint (cowscope_session_document_get_n_events (doc), ==, info.n_events);
}

/* One lane per (pid, tid) thread and per CUDA stream, plus three counters. */
static void
test_lanes (void)
{
  guint threads = 0, cuda = 0, counters = 0, processes = 0;
  g_autoptr (GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  guint n = cowscope_timeline_view_get_n_lanes (view ());
  for (guint i = 0; i < n; i++)
    {
      CowscopeTimelineLane *lane = cowscope_timeline_view_get_lane (view (), i);
      CowscopeLaneKind kind = cowscope_timeline_lane_get_kind (lane);
      g_autofree char *key = g_strdup_printf ("%d/%u/%" G_GINT64_FORMAT "/%" G_GINT64_FORMAT "/%d",
                                              kind, cowscope_timeline_lane_get_pid (lane),
                                              cowscope_timeline_lane_get_tid (lane),
                                              cowscope_timeline_lane_get_device (lane),
                                              cowscope_timeline_lane_get_counter (lane));
      g_assert_false (g_hash_table_contains (seen, key));
      g_hash_table_add (seen, g_steal_pointer (&key));
      g_assert_nonnull (cowscope_timeline_lane_get_title (lane));
      threads += kind == COWSCOPE_LANE_THREAD;
      cuda += kind == COWSCOPE_LANE_CUDA_STREAM;
      counters += kind == COWSCOPE_LANE_COUNTER;
      processes += kind == COWSCOPE_LANE_PROCESS;
      int y, h;
      cowscope_timeline_view_get_lane_area (view (), i, &y, &h);
      g_assert_cmpint (h, >, 0);
    }
  g_assert_cmpuint (threads, ==, sql_int ("SELECT count(*) FROM (SELECT DISTINCT pid, tid FROM events)"));
  g_assert_cmpuint (cuda, ==, sql_int ("SELECT count(*) FROM (SELECT DISTINCT pid, device_id,"
                                       " stream_id FROM cuda_activity)"));
  g_assert_cmpuint (threads, ==, info.n_thread_lanes);
  g_assert_cmpuint (cuda, ==, info.n_cuda_lanes);
  g_assert_cmpuint (cuda, >, 0);
  g_assert_cmpuint (counters, ==, 3);
  /* Several processes: one process lane each, heading its threads. */
  g_assert_cmpuint (processes, ==, sql_int ("SELECT count(*) FROM processes"));
  g_assert_cmpuint (n, ==, threads + cuda + counters + processes);
}

/* Zoom and pan actions change the visible window as expected; zooming
 * around a point keeps that point's time where it is. */
static void
test_zoom (void)
{
  CowscopeViewState *st = state ();
  GtkWidget *w = GTK_WIDGET (view ());
  g_assert_true (gtk_widget_activate_action (w, "timeline.zoom-reset", NULL));
  gint64 a0 = cowscope_view_state_get_visible_start (st);
  gint64 a1 = cowscope_view_state_get_visible_end (st);
  g_assert_cmpint (a0, ==, info.start_ns);

  g_assert_true (gtk_widget_activate_action (w, "timeline.zoom-in", NULL));
  gint64 b0 = cowscope_view_state_get_visible_start (st);
  gint64 b1 = cowscope_view_state_get_visible_end (st);
  g_assert_cmpfloat (fabs ((double) (b1 - b0) - (double) (a1 - a0) / 1.5), <=, 2);
  g_assert_cmpint (b0, >=, a0);
  g_assert_cmpint (b1, <=, a1);

  /* Around an explicit point: its time stays under it. */
  double x = gtk_widget_get_width (w) * 0.7;
  gint64 at = cowscope_timeline_view_x_to_time (view (), x);
  cowscope_timeline_view_zoom (view (), 4.0, x);
  gint64 c0 = cowscope_view_state_get_visible_start (st);
  gint64 c1 = cowscope_view_state_get_visible_end (st);
  g_assert_cmpfloat (fabs ((double) (c1 - c0) - (double) (b1 - b0) / 4.0), <=, 2);
  g_assert_cmpfloat (fabs ((double) (cowscope_timeline_view_x_to_time (view (), x) - at)), <=,
                     (double) (c1 - c0) / 500.0);
  g_assert_cmpint (c0, >, b0);

  /* Pan right by 15 % of the width, then back. */
  g_assert_true (gtk_widget_activate_action (w, "timeline.pan-right", NULL));
  gint64 d0 = cowscope_view_state_get_visible_start (st);
  g_assert_cmpfloat (fabs ((double) (d0 - c0) - 0.15 * (double) (c1 - c0)), <=, 2);
  g_assert_cmpint (cowscope_view_state_get_visible_end (st) - d0, ==, c1 - c0);
  g_assert_true (gtk_widget_activate_action (w, "timeline.pan-left", NULL));
  g_assert_cmpint (cowscope_view_state_get_visible_start (st), ==, c0);

  /* Zoom out past the session: clamped to the whole session. */
  for (int i = 0; i < 20; i++)
    gtk_widget_activate_action (w, "timeline.zoom-out", NULL);
  g_assert_cmpint (cowscope_view_state_get_visible_start (st), ==, a0);
  g_assert_cmpint (cowscope_view_state_get_visible_end (st), ==, a1);
  wait_frame ();
}

/* Shows the materialization @seq at a few dozen pixels wide; returns its
 * lane index, begin and end. */
static int
zoom_on_materialization (gint64 seq, gint64 *begin, gint64 *end)
{
  CowscopeSessionDocument *doc = cowscope_view_state_get_document (state ());
  g_autoptr (GError) error = NULL;
  g_autoptr (CowscopeCopyExplanation) ex = cowscope_copy_explanation_new (doc, seq, &error);
  g_assert_no_error (error);
  *begin = cowscope_copy_explanation_get_begin_ns (ex);
  *end = cowscope_copy_explanation_get_end_ns (ex);
  gint64 d = MAX (*end - *begin, 100);
  cowscope_view_state_set_visible (state (), *begin - 15 * d, *end + 15 * d);
  wait_frame ();
  for (guint i = 0; i < cowscope_timeline_view_get_n_lanes (view ()); i++)
    {
      CowscopeTimelineLane *lane = cowscope_timeline_view_get_lane (view (), i);
      if (cowscope_timeline_lane_get_kind (lane) == COWSCOPE_LANE_THREAD
          && cowscope_timeline_lane_get_pid (lane) == cowscope_copy_explanation_get_pid (ex)
          && cowscope_timeline_lane_get_tid (lane) == cowscope_copy_explanation_get_tid (ex))
        {
          /* Scroll the lane to the top of the lanes. */
          GtkAdjustment *adj = gtk_scrollable_get_vadjustment (GTK_SCROLLABLE (view ()));
          int y, h;
          cowscope_timeline_view_get_lane_area (view (), i, &y, &h);
          gtk_adjustment_set_value (adj, gtk_adjustment_get_value (adj) + y - 30);
          wait_frame ();
          return (int) i;
        }
    }
  g_assert_not_reached ();
}

/* A click on a materialization selects its seq and puts the cursor on
 * it; a click on empty space moves only the cursor. */
static void
test_click (void)
{
  gint64 begin, end;
  int lane = zoom_on_materialization (info.copy_seq, &begin, &end);
  int y, h;
  cowscope_timeline_view_get_lane_area (view (), (guint) lane, &y, &h);
  g_assert_cmpint (y, >, 0);
  cowscope_view_state_set_selected_seq (state (), -1);
  double x = cowscope_timeline_view_time_to_x (view (), begin + (end - begin) / 2);
  cowscope_timeline_view_click (view (), x, y + 12);
  g_assert_cmpint (cowscope_view_state_get_selected_seq (state ()), ==, info.copy_seq);
  gint64 cursor = cowscope_view_state_get_cursor (state ());
  g_assert_cmpint (cursor, >=, begin);
  g_assert_cmpint (cursor, <=, end);
  wait_frame ();

  /* Empty space: the first counter lane holds no events. */
  int cy, ch;
  cowscope_timeline_view_get_lane_area (view (), 0, &cy, &ch);
  g_assert_cmpint (cowscope_timeline_lane_get_kind (cowscope_timeline_view_get_lane (view (), 0)),
                   ==, COWSCOPE_LANE_COUNTER);
  double x2 = gtk_widget_get_width (GTK_WIDGET (view ())) - 30;
  cowscope_timeline_view_click (view (), x2, cy + ch / 2);
  g_assert_cmpint (cowscope_view_state_get_selected_seq (state ()), ==, info.copy_seq);
  g_assert_cmpint (cowscope_view_state_get_cursor (state ()), ==,
                   cowscope_timeline_view_x_to_time (view (), x2));
}

static void screenshot (const char *name);

static gboolean
highlights_found (gpointer data)
{
  guint n;
  return cowscope_timeline_view_get_n_highlighted (view (), &n);
}

/* Highlighting a storage outlines its copies, lazy clones and warnings. */
static void
test_highlights (void)
{
  g_autofree char *storage_sql = g_strdup_printf (
    "SELECT storage_id FROM materializations WHERE seq = %" G_GINT64_FORMAT, info.copy_seq);
  g_autofree char *pid_sql = g_strdup_printf (
    "SELECT pid FROM materializations WHERE seq = %" G_GINT64_FORMAT, info.copy_seq);
  gint64 storage = sql_int (storage_sql), pid = sql_int (pid_sql);
  g_autofree char *count_sql = g_strdup_printf (
    "SELECT (SELECT count(*) FROM materializations WHERE pid = %1$" G_GINT64_FORMAT
    " AND storage_id = %2$" G_GINT64_FORMAT ") + (SELECT count(*) FROM lazy_clones WHERE pid = %1$"
    G_GINT64_FORMAT " AND (source_storage_id = %2$" G_GINT64_FORMAT " OR result_storage_id = %2$"
    G_GINT64_FORMAT ")) + (SELECT count(*) FROM violations WHERE pid = %1$" G_GINT64_FORMAT
    " AND storage_id = %2$" G_GINT64_FORMAT ")", pid, storage);
  gint64 expected = sql_int (count_sql);
  g_assert_cmpint (expected, >=, 2); /* its copy and the lazy clone that made it */

  CowscopeObjectRef ref = { COWSCOPE_NODE_STORAGE, (guint32) pid, (guint64) storage };
  cowscope_view_state_set_highlights (state (), &ref, 1);
  g_assert_false (highlights_found (NULL));
  g_assert_true (gui_test_wait_until (highlights_found, NULL, 20));
  guint n = 0;
  g_assert_true (cowscope_timeline_view_get_n_highlighted (view (), &n));
  g_assert_cmpint (n, ==, expected);

  /* Zoomed out so the copy shares pixels with other events: still
   * outlined (cowscope-timeline-highlights.png shows it). */
  gint64 begin, end;
  zoom_on_materialization (info.copy_seq, &begin, &end);
  cowscope_view_state_set_visible (state (), begin - 200 * (end - begin), end + 800 * (end - begin));
  wait_frame ();
  gui_test_spin (200);
  screenshot ("cowscope-timeline-highlights.png");

  cowscope_view_state_set_highlights (state (), NULL, 0);
  g_assert_true (cowscope_timeline_view_get_n_highlighted (view (), &n));
  g_assert_cmpuint (n, ==, 0);
}

static gboolean
totals_ready (gpointer data)
{
  return cowscope_timeline_view_get_range_totals (view (), NULL);
}

/* The totals of a selected range equal a direct count in the session. */
static void
test_range_totals (void)
{
  gint64 span = info.end_ns - info.start_ns;
  gint64 r0 = info.start_ns + span / 10, r1 = info.start_ns + span * 6 / 10;
  cowscope_view_state_set_range (state (), r0, r1);
  g_assert_false (cowscope_timeline_view_get_range_totals (view (), NULL));
  g_assert_true (gui_test_wait_until (totals_ready, NULL, 20));
  CowscopeRangeTotals totals;
  g_assert_true (cowscope_timeline_view_get_range_totals (view (), &totals));

  g_autofree char *where = g_strdup_printf ("ts >= %" G_GINT64_FORMAT " AND ts < %" G_GINT64_FORMAT,
                                            r0, r1);
  g_autofree char *q_events = g_strdup_printf ("SELECT count(*) FROM events WHERE %s", where);
  g_autofree char *q_copies = g_strdup_printf (
    "SELECT count(*) FROM events WHERE type = 15 AND (aux & 255) = 1 AND %s", where);
  g_autofree char *q_bytes = g_strdup_printf (
    "SELECT coalesce(sum(v3), 0) FROM events WHERE type = 15 AND (aux & 255) = 1 AND %s", where);
  g_autofree char *q_steals = g_strdup_printf (
    "SELECT count(*) FROM events WHERE type = 15 AND (aux & 255) = 2 AND %s", where);
  g_autofree char *q_clones = g_strdup_printf (
    "SELECT count(*) FROM events WHERE type = 12 AND %s", where);
  g_assert_cmpuint (totals.events, ==, sql_int (q_events));
  g_assert_cmpuint (totals.copies, ==, sql_int (q_copies));
  g_assert_cmpuint (totals.steals, ==, sql_int (q_steals));
  g_assert_cmpuint (totals.lazy_clones, ==, sql_int (q_clones));
  g_assert_cmpuint (totals.copies, >, 0);
  g_assert_cmpuint (totals.lazy_clones, >, 0);
  /* The model keeps event byte counts as floats: equal within rounding. */
  double bytes = (double) sql_int (q_bytes);
  g_assert_cmpfloat (fabs ((double) totals.bytes_copied - bytes), <=, bytes * 1e-6 + 1);
  wait_frame ();

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (view ()), "timeline.zoom-to-range", NULL));
  g_assert_cmpint (cowscope_view_state_get_visible_start (state ()), ==, r0);
  g_assert_cmpint (cowscope_view_state_get_visible_end (state ()), ==, r1);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (view ()), "timeline.clear-range", NULL));
  g_assert_cmpint (cowscope_view_state_get_range_start (state ()), ==, -1);
}

typedef struct {
  GdkRGBA color;
  guint found;
  double near_x;
  graphene_rect_t bounds;  /* widget coordinates, of the match nearest near_x */
} ColorSearch;

/* Walks @node (with the translation @dx, @dy) for color nodes of
 * @search->color. */
static void
find_color (GskRenderNode *node, float dx, float dy, ColorSearch *search)
{
  switch (gsk_render_node_get_node_type (node))
    {
    case GSK_COLOR_NODE:
      if (gdk_rgba_equal (gsk_color_node_get_color (node), &search->color))
        {
          graphene_rect_t b;
          gsk_render_node_get_bounds (node, &b);
          b.origin.x += dx, b.origin.y += dy;
          if (search->found++ == 0
              || fabs (b.origin.x - search->near_x) < fabs (search->bounds.origin.x - search->near_x))
            search->bounds = b;
        }
      break;
    case GSK_CONTAINER_NODE:
      for (guint i = 0; i < gsk_container_node_get_n_children (node); i++)
        find_color (gsk_container_node_get_child (node, i), dx, dy, search);
      break;
    case GSK_TRANSFORM_NODE:
      {
        float tx = 0, ty = 0;
        GskTransform *t = gsk_transform_node_get_transform (node);
        if (gsk_transform_get_category (t) >= GSK_TRANSFORM_CATEGORY_2D_TRANSLATE)
          gsk_transform_to_translate (t, &tx, &ty);
        find_color (gsk_transform_node_get_child (node), dx + tx, dy + ty, search);
      }
      break;
    case GSK_CLIP_NODE:
      find_color (gsk_clip_node_get_child (node), dx, dy, search);
      break;
    case GSK_ROUNDED_CLIP_NODE:
      find_color (gsk_rounded_clip_node_get_child (node), dx, dy, search);
      break;
    case GSK_OPACITY_NODE:
      find_color (gsk_opacity_node_get_child (node), dx, dy, search);
      break;
    case GSK_DEBUG_NODE:
      find_color (gsk_debug_node_get_child (node), dx, dy, search);
      break;
    default:
      break;
    }
}

/* The timeline's render node as it would be drawn now. */
static GskRenderNode *
snapshot_view (void)
{
  GtkWidget *w = GTK_WIDGET (view ());
  g_autoptr (GdkPaintable) paintable = gtk_widget_paintable_new (w);
  GtkSnapshot *snapshot = gtk_snapshot_new ();
  gdk_paintable_snapshot (paintable, GDK_SNAPSHOT (snapshot), gtk_widget_get_width (w),
                          gtk_widget_get_height (w));
  GskRenderNode *node = gtk_snapshot_free_to_node (snapshot);
  g_assert_nonnull (node);
  return node;
}

/* Copy and steal boxes are in the render nodes, in different colours,
 * where the materializations are. */
static void
test_render_nodes (void)
{
  ColorSearch copy = { 0 }, steal = { 0 };
  cowscope_timeline_view_get_kind_color (view (), COWSCOPE_ITEM_COPY, &copy.color);
  cowscope_timeline_view_get_kind_color (view (), COWSCOPE_ITEM_STEAL, &steal.color);
  g_assert_false (gdk_rgba_equal (&copy.color, &steal.color));

  gint64 begin, end;
  zoom_on_materialization (info.copy_seq, &begin, &end);
  double x0 = cowscope_timeline_view_time_to_x (view (), begin);
  double x1 = cowscope_timeline_view_time_to_x (view (), end);
  copy.near_x = x0;
  {
    g_autoptr (GskRenderNode) node = snapshot_view ();
    find_color (node, 0, 0, &copy);
  }
  g_assert_cmpuint (copy.found, >=, 1);
  g_test_message ("copy box %.1f+%.1f, expected %.1f..%.1f", copy.bounds.origin.x,
                  copy.bounds.size.width, x0, x1);
  g_assert_cmpfloat (copy.bounds.size.width, >=, 1);
  g_assert_cmpfloat (fabs (copy.bounds.origin.x - x0), <=, 2);
  g_assert_cmpfloat (fabs (copy.bounds.origin.x + copy.bounds.size.width - x1), <=, 2);

  zoom_on_materialization (info.steal_seq, &begin, &end);
  steal.near_x = cowscope_timeline_view_time_to_x (view (), begin);
  {
    g_autoptr (GskRenderNode) node = snapshot_view ();
    find_color (node, 0, 0, &steal);
  }
  g_assert_cmpuint (steal.found, >=, 1);
  g_assert_cmpfloat (steal.bounds.size.width, >=, 1);
}

/* The colours come from the style sheet: under the dark style the copy
 * boxes are drawn in another colour (style-dark.css's), and no longer in
 * the light one; back to the default style, in the light one again. */
static void
test_dark_colors (void)
{
  ColorSearch light = { 0 }, dark = { 0 };
  cowscope_timeline_view_get_kind_color (view (), COWSCOPE_ITEM_COPY, &light.color);
  gint64 begin, end;
  zoom_on_materialization (info.copy_seq, &begin, &end);

  AdwStyleManager *manager = adw_style_manager_get_default ();
  adw_style_manager_set_color_scheme (manager, ADW_COLOR_SCHEME_FORCE_DARK);
  wait_frame ();
  cowscope_timeline_view_get_kind_color (view (), COWSCOPE_ITEM_COPY, &dark.color);
  g_assert_false (gdk_rgba_equal (&light.color, &dark.color));
  {
    g_autoptr (GskRenderNode) node = snapshot_view ();
    find_color (node, 0, 0, &dark);
    find_color (node, 0, 0, &light);
  }
  g_assert_cmpuint (dark.found, >=, 1);
  g_assert_cmpuint (light.found, ==, 0);

  adw_style_manager_set_color_scheme (manager, ADW_COLOR_SCHEME_DEFAULT);
  wait_frame ();
  GdkRGBA again;
  cowscope_timeline_view_get_kind_color (view (), COWSCOPE_ITEM_COPY, &again);
  g_assert_true (gdk_rgba_equal (&again, &light.color));
}

/* Renders the whole window to @name in $COWSCOPE_SCREENSHOT_DIR and
 * checks that it is not blank. */
static void
screenshot (const char *name)
{
  GtkWidget *w = GTK_WIDGET (window);
  g_assert_true (gui_test_wait_until (gui_test_widget_drawn, w, 10));
  int width = gtk_widget_get_width (w), height = gtk_widget_get_height (w);
  g_autoptr (GdkPaintable) paintable = gtk_widget_paintable_new (w);
  GtkSnapshot *snapshot = gtk_snapshot_new ();
  gdk_paintable_snapshot (paintable, GDK_SNAPSHOT (snapshot), width, height);
  g_autoptr (GskRenderNode) node = gtk_snapshot_free_to_node (snapshot);
  cairo_surface_t *surface = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, width, height);
  cairo_t *cr = cairo_create (surface);
  gsk_render_node_draw (node, cr);
  cairo_destroy (cr);
  cairo_surface_flush (surface);
  const char *dir = g_getenv ("COWSCOPE_SCREENSHOT_DIR");
  g_autofree char *path = g_build_filename (dir ? dir : ".", name, NULL);
  g_assert_cmpint (cairo_surface_write_to_png (surface, path), ==, CAIRO_STATUS_SUCCESS);
  g_test_message ("screenshot: %s (%dx%d)", path, width, height);

  const guint8 *pixels = cairo_image_surface_get_data (surface);
  int stride = cairo_image_surface_get_stride (surface);
  double sum = 0, sum2 = 0;
  for (int y = 0; y < height; y++)
    for (int x = 0; x < width; x++)
      {
        const guint8 *p = pixels + y * stride + x * 4;
        double lum = 0.2126 * p[2] + 0.7152 * p[1] + 0.0722 * p[0];
        sum += lum, sum2 += lum * lum;
      }
  double variance = sum2 / (width * height) - pow (sum / (width * height), 2);
  g_assert_cmpfloat (variance, >, 20.0);
  cairo_surface_destroy (surface);
}

/* The window with the session open: cowscope-session-window.png (and a
 * dark-mode twin), with a selected copy, a range and the whole session. */
static void
test_session_screenshot (void)
{
  CowscopeViewState *st = state ();
  gtk_widget_activate_action (GTK_WIDGET (view ()), "timeline.zoom-reset", NULL);
  gtk_adjustment_set_value (gtk_scrollable_get_vadjustment (GTK_SCROLLABLE (view ())), 0);
  gint64 span = info.end_ns - info.start_ns;
  cowscope_view_state_set_range (st, info.start_ns + span * 3 / 10, info.start_ns + span * 45 / 100);
  cowscope_view_state_set_selected_seq (st, info.copy_seq);
  cowscope_view_state_set_cursor (st, info.start_ns + span * 2 / 3);
  /* The selected copy's objects, as its explanation highlights them. */
  g_autoptr (CowscopeCopyExplanation) explanation =
    cowscope_copy_explanation_new (cowscope_view_state_get_document (st), info.copy_seq, NULL);
  g_assert_nonnull (explanation);
  guint n_refs;
  const CowscopeObjectRef *refs = cowscope_copy_explanation_get_highlights (explanation, &n_refs);
  cowscope_view_state_set_highlights (st, refs, n_refs);
  g_assert_true (gui_test_wait_until (highlights_found, NULL, 20));
  g_assert_true (gui_test_wait_until (totals_ready, NULL, 20));
  wait_frame ();
  gui_test_spin (300);
  screenshot ("cowscope-session-window.png");

  AdwStyleManager *manager = adw_style_manager_get_default ();
  adw_style_manager_set_color_scheme (manager, ADW_COLOR_SCHEME_FORCE_DARK);
  wait_frame ();
  gui_test_spin (300);
  screenshot ("cowscope-session-window-dark.png");
  adw_style_manager_set_color_scheme (manager, ADW_COLOR_SCHEME_DEFAULT);
  wait_frame ();
}

static void
count_query_error (CowscopeTimelineView *view, const char *message, guint *count)
{
  g_assert_nonnull (strstr (message, "damaged"));
  (*count)++;
}

static gboolean
nonzero (gpointer data)
{
  return *(guint *) data > 0;
}

/* A session whose first lane has a damaged chunk opens; the timeline
 * draws the rest, and the error is reported once (a toast), however
 * often the lane is drawn again. */
static void
test_damaged_chunk (void)
{
  g_autofree char *bad = g_build_filename (tmp_dir, "damaged.cowscope", NULL);
  g_autofree char *contents = NULL;
  gsize length = 0;
  g_assert_true (g_file_get_contents (session_path, &contents, &length, NULL));
  g_assert_true (g_file_set_contents (bad, contents, (gssize) length, NULL));
  sqlite3 *db = NULL;
  g_assert_cmpint (sqlite3_open (bad, &db), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_exec (db, "UPDATE timeline_chunks SET instants = x'02ffffffff'"
                                     " WHERE lane = (SELECT min (id) FROM timeline_lanes)",
                                 NULL, NULL, NULL), ==, SQLITE_OK);
  sqlite3_close (db);

  CowscopeWindow *w = cowscope_window_new (app);
  gtk_window_set_default_size (GTK_WINDOW (w), 1280, 800);
  gtk_window_present (GTK_WINDOW (w));
  CowscopeTimelineView *tv = cowscope_window_get_timeline_view (w);
  guint errors = 0;
  g_signal_connect (tv, "query-error", G_CALLBACK (count_query_error), &errors);
  g_autoptr (GFile) file = g_file_new_for_path (bad);
  cowscope_window_open (w, file);
  g_assert_true (gui_test_wait_until (session_loaded, w, 20));
  g_assert_cmpstr (cowscope_window_get_visible_page (w), ==, "session");
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (w), "win.show-view", "s", "timeline"));
  g_assert_true (gui_test_wait_until (nonzero, &errors, 20));
  g_assert_nonnull (cowscope_timeline_view_get_query_error (tv));
  for (int i = 0; i < 3; i++)
    {
      g_assert_true (gtk_widget_activate_action (GTK_WIDGET (tv), "timeline.zoom-in", NULL));
      gui_test_spin (50);
    }
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (tv), "timeline.zoom-reset", NULL));
  gui_test_spin (100);
  g_assert_cmpuint (errors, ==, 1);
  g_assert_cmpstr (cowscope_window_get_visible_page (w), ==, "session");
  gtk_window_destroy (GTK_WINDOW (w));
  gui_test_spin (50);
  g_unlink (bad);
}

/* The first widget of @type under @root, or NULL. */
static GtkWidget *
find_widget (GtkWidget *root, GType type)
{
  if (G_TYPE_CHECK_INSTANCE_TYPE (root, type))
    return root;
  for (GtkWidget *c = gtk_widget_get_first_child (root); c != NULL; c = gtk_widget_get_next_sibling (c))
    {
      GtkWidget *found = find_widget (c, type);
      if (found != NULL)
        return found;
    }
  return NULL;
}

typedef struct {
  CowscopeWindow *window;
  CowscopeGraphView *graph;
  guint painted;             /* frames painted with the session */
  gboolean exact_at_first;   /* the timeline was exact when the first was */
  gboolean panels_estimated; /* the graph had the view state while it was not */
} FirstFrame;

static void
first_frame_after_paint (GdkFrameClock *clock, FirstFrame *ff)
{
  CowscopeTimelineView *tv = cowscope_window_get_timeline_view (ff->window);
  if (cowscope_timeline_view_get_frame_count (tv) == 0)
    return;
  if (ff->painted++ == 0)
    ff->exact_at_first = cowscope_timeline_view_is_exact (tv);
  if (!cowscope_timeline_view_is_exact (tv) && cowscope_graph_view_get_view_state (ff->graph) != NULL)
    ff->panels_estimated = TRUE;
}

static gboolean
panels_shown (gpointer data)
{
  FirstFrame *ff = data;
  return cowscope_graph_view_get_view_state (ff->graph) != NULL;
}

/* What @tv's snapshot draws now, as a string. */
static char *
serialize_view (CowscopeTimelineView *tv)
{
  GtkWidget *w = GTK_WIDGET (tv);
  GtkSnapshot *snapshot = gtk_snapshot_new ();
  GTK_WIDGET_GET_CLASS (w)->snapshot (w, snapshot);
  g_autoptr (GskRenderNode) node = gtk_snapshot_free_to_node (snapshot);
  g_assert_nonnull (node);
  g_autoptr (GBytes) bytes = gsk_render_node_serialize (node);
  return g_strndup (g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes));
}

/* Opening a session draws its first frame at once, without reading the
 * file: the lanes not decoded yet are estimated (the timeline is not
 * exact then).  Worker threads' exact answers replace the estimates, and
 * the graph and the other panels get the view state only once the
 * timeline has painted an exact frame.  Then the timeline draws exactly
 * what it draws when it queries the lanes itself. */
/* A session opens on its summary: the timeline instead, as soon as the
 * session is there and before its first frame. */
static void
show_timeline_on_load (CowscopeWindow *win, GParamSpec *pspec, gpointer data)
{
  (void) pspec;
  (void) data;
  if (cowscope_window_get_view_state (win) != NULL)
    gtk_widget_activate_action (GTK_WIDGET (win), "win.show-view", "s", "timeline");
}

static void
test_first_frame (void)
{
  CowscopeWindow *w = cowscope_window_new (app);
  gtk_window_set_default_size (GTK_WINDOW (w), 1280, 800);
  gtk_window_present (GTK_WINDOW (w));
  g_assert_true (gui_test_wait_until (gui_test_widget_drawn, w, 20));
  CowscopeGraphView *graph = COWSCOPE_GRAPH_VIEW (find_widget (GTK_WIDGET (w), COWSCOPE_TYPE_GRAPH_VIEW));
  g_assert_nonnull (graph);
  FirstFrame ff = { w, graph };
  GdkFrameClock *clock = gtk_widget_get_frame_clock (GTK_WIDGET (w));
  gulong handler = g_signal_connect (clock, "after-paint", G_CALLBACK (first_frame_after_paint), &ff);
  gulong shown = g_signal_connect (w, "notify::view-state", G_CALLBACK (show_timeline_on_load), NULL);
  g_autoptr (GFile) file = g_file_new_for_path (session_path);
  cowscope_window_open (w, file);
  g_assert_true (gui_test_wait_until (session_loaded, w, 20));
  g_signal_handler_disconnect (w, shown);
  /* Loaded, not painted yet: the panels wait. */
  if (ff.painted == 0)
    g_assert_null (cowscope_graph_view_get_view_state (graph));
  g_assert_true (gui_test_wait_until (panels_shown, &ff, 20));
  g_signal_handler_disconnect (clock, handler);
  g_assert_cmpuint (ff.painted, >=, 2);
  g_assert_false (ff.exact_at_first);
  g_assert_false (ff.panels_estimated);
  g_assert_true (cowscope_timeline_view_is_exact (cowscope_window_get_timeline_view (w)));
  g_assert_true (cowscope_graph_view_get_view_state (graph) == cowscope_window_get_view_state (w));

  /* Exact now: the same nodes as after the view queried every lane
   * itself (another window and back drops its lanes' answers). */
  CowscopeTimelineView *tv = cowscope_window_get_timeline_view (w);
  CowscopeViewState *st = cowscope_window_get_view_state (w);
  g_autofree char *exact = serialize_view (tv);
  gint64 t0 = cowscope_view_state_get_visible_start (st);
  gint64 t1 = cowscope_view_state_get_visible_end (st);
  cowscope_view_state_set_visible (st, t0, t0 + (t1 - t0) / 2);
  g_autofree char *half = serialize_view (tv);
  cowscope_view_state_set_visible (st, t0, t1);
  g_autofree char *again = serialize_view (tv);
  g_assert_cmpstr (half, !=, exact);
  g_assert_cmpstr (again, ==, exact);
  gtk_window_destroy (GTK_WINDOW (w));
  gui_test_spin (50);
}

/* Closing the window drops the session. */
static void
test_close (void)
{
  gtk_window_destroy (GTK_WINDOW (window));
  window = NULL;
  gui_test_spin (50);
}

int
main (int argc, char *argv[])
{
  g_autoptr (GError) error = NULL;
  gtk_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  adw_init ();

  tmp_dir = g_dir_make_tmp ("cowscope-timeline-XXXXXX", &error);
  g_assert_no_error (error);
  session_path = g_build_filename (tmp_dir, "fixture.cowscope", NULL);
  SessionFixtureOptions options;
  session_fixture_options_small (&options);
  if (!session_fixture_generate (session_path, &options, &info, &error))
    g_error ("fixture: %s", error->message);
  g_assert_cmpint (info.copy_seq, >, 0);
  g_assert_cmpint (info.steal_seq, >, 0);

  app = cowscope_application_new ();
  g_application_set_flags (G_APPLICATION (app), G_APPLICATION_HANDLES_OPEN | G_APPLICATION_NON_UNIQUE);
  g_assert_true (g_application_register (G_APPLICATION (app), NULL, &error));

  g_test_add_func ("/cowscope/timeline/open", test_open);
  g_test_add_func ("/cowscope/timeline/lanes", test_lanes);
  g_test_add_func ("/cowscope/timeline/zoom-and-pan", test_zoom);
  g_test_add_func ("/cowscope/timeline/click-selects", test_click);
  g_test_add_func ("/cowscope/timeline/highlights-outlined", test_highlights);
  g_test_add_func ("/cowscope/timeline/range-totals", test_range_totals);
  g_test_add_func ("/cowscope/timeline/render-nodes", test_render_nodes);
  g_test_add_func ("/cowscope/timeline/dark-colors", test_dark_colors);
  g_test_add_func ("/cowscope/timeline/session-screenshot", test_session_screenshot);
  g_test_add_func ("/cowscope/timeline/damaged-chunk", test_damaged_chunk);
  g_test_add_func ("/cowscope/timeline/first-frame", test_first_frame);
  g_test_add_func ("/cowscope/timeline/close", test_close);
  int status = g_test_run ();

  g_object_unref (app);
  g_unlink (session_path);
  g_rmdir (tmp_dir);
  g_free (session_path);
  g_free (tmp_dir);
  return status;
}
