/* test-timeline-lanes.c — the copy timeline as a daily tool, under a
 * virtual display, on a fixture session (tests/session/session-fixture.c)
 * and on a recorded demo (cowscope-cli record cowscope-demo training):
 *
 *   readable lane labels (each line's natural width against the label
 *   column, the thread id shown), a tooltip with the whole text, the
 *   column resized by dragging its edge and remembered in GSettings;
 *   named ranges drawn with their names and named in the tooltip;
 *   the keys: the cursor moved, stepping to the next/previous copy,
 *   warning and event of the selected objects, listed in the shortcuts
 *   window;
 *   the wheel (lanes scroll, Shift pans, Ctrl zooms at the pointer), the
 *   legend of the colours;
 *   the Show Counter Tracks and Lane Height preferences;
 *   lanes pinned, hidden, folded under their process, filtered;
 *   the overview strip and jump to the cursor;
 *   the tensor search stepping through a tensor's events;
 *   flow arrows of the selected copy;
 * with screenshots of the session window (light and dark, default and
 * small sizes) in the screenshot folder.
 */
#include <adwaita.h>
#include <glib/gstdio.h>
#include <math.h>
#include <sqlite3.h>
#include <string.h>
#include <sys/wait.h>

#include "gui-test-support.h"
#include "cowscope-application.h"
#include "cowscope-event-steps.h"
#include "cowscope-flows.h"
#include "cowscope-lane-painter.h"
#include "cowscope-time-ruler.h"
#include "cowscope-timeline-legend.h"
#include "cowscope-timeline-overview.h"
#include "cowscope-timeline-toolbar.h"
#include "cowscope-timeline-view.h"
#include "cowscope-window.h"
#include "session-fixture.h"

static CowscopeApplication *app;
static char *tmp_dir;
static char *session_path;       /* the fixture */
static char *demo_path;          /* the recorded demo, or NULL */
static SessionFixtureInfo info;
static CowscopeWindow *window;   /* showing the fixture */

/* ---- helpers ------------------------------------------------------------------------ */

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

static GSettings *
settings (void)
{
  return cowscope_application_get_settings (app);
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

static gboolean
session_loaded (gpointer data)
{
  return !cowscope_window_is_loading (data) && cowscope_window_get_view_state (data) != NULL;
}

typedef struct {
  CowscopeTimelineView *view;
  guint frames;
} FrameWait;

static gboolean
new_frame (gpointer data)
{
  FrameWait *wait = data;
  return cowscope_timeline_view_get_frame_count (wait->view) > wait->frames
         && gtk_widget_get_width (GTK_WIDGET (wait->view)) > 300;
}

/* Waits for @v to draw its current view state. */
static void
wait_frame_of (CowscopeTimelineView *v)
{
  FrameWait wait = { v, cowscope_timeline_view_get_frame_count (v) };
  gtk_widget_queue_draw (GTK_WIDGET (v));
  g_assert_true (gui_test_wait_until (new_frame, &wait, 20));
}

static void
wait_frame (void)
{
  wait_frame_of (view ());
}

static gboolean
names_read (gpointer data)
{
  return cowscope_timeline_view_get_range_names (data) != NULL;
}

static gint64
sql_int_on (const char *path, const char *sql)
{
  sqlite3 *db = NULL;
  g_assert_cmpint (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  sqlite3_stmt *stmt = NULL;
  g_assert_cmpint (sqlite3_prepare_v2 (db, sql, -1, &stmt, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_step (stmt), ==, SQLITE_ROW);
  gint64 value = sqlite3_column_int64 (stmt, 0);
  sqlite3_finalize (stmt);
  sqlite3_close (db);
  return value;
}

static gint64
sql_int (const char *sql)
{
  return sql_int_on (session_path, sql);
}

/* The seqs @sql returns, in order. */
static GArray *
sql_seqs (const char *sql)
{
  sqlite3 *db = NULL;
  g_assert_cmpint (sqlite3_open_v2 (session_path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  sqlite3_stmt *stmt = NULL;
  g_assert_cmpint (sqlite3_prepare_v2 (db, sql, -1, &stmt, NULL), ==, SQLITE_OK);
  GArray *seqs = g_array_new (FALSE, FALSE, sizeof (gint64));
  while (sqlite3_step (stmt) == SQLITE_ROW)
    {
      gint64 seq = sqlite3_column_int64 (stmt, 0);
      g_array_append_val (seqs, seq);
    }
  sqlite3_finalize (stmt);
  sqlite3_close (db);
  return seqs;
}

/* The timeline's render node as it would be drawn now. */
static GskRenderNode *
snapshot_widget (GtkWidget *w)
{
  g_autoptr (GdkPaintable) paintable = gtk_widget_paintable_new (w);
  GtkSnapshot *snapshot = gtk_snapshot_new ();
  gdk_paintable_snapshot (paintable, GDK_SNAPSHOT (snapshot), gtk_widget_get_width (w),
                          gtk_widget_get_height (w));
  GskRenderNode *node = gtk_snapshot_free_to_node (snapshot);
  g_assert_nonnull (node);
  return node;
}

/* Calls @fn on every node under @node with its translation. */
static void
walk (GskRenderNode *node, float dx, float dy,
      void (*fn) (GskRenderNode *node, float dx, float dy, gpointer data), gpointer data)
{
  fn (node, dx, dy, data);
  switch (gsk_render_node_get_node_type (node))
    {
    case GSK_CONTAINER_NODE:
      for (guint i = 0; i < gsk_container_node_get_n_children (node); i++)
        walk (gsk_container_node_get_child (node, i), dx, dy, fn, data);
      break;
    case GSK_TRANSFORM_NODE:
      {
        float tx = 0, ty = 0;
        GskTransform *t = gsk_transform_node_get_transform (node);
        if (gsk_transform_get_category (t) >= GSK_TRANSFORM_CATEGORY_2D_TRANSLATE)
          gsk_transform_to_translate (t, &tx, &ty);
        walk (gsk_transform_node_get_child (node), dx + tx, dy + ty, fn, data);
      }
      break;
    case GSK_CLIP_NODE:
      walk (gsk_clip_node_get_child (node), dx, dy, fn, data);
      break;
    case GSK_ROUNDED_CLIP_NODE:
      walk (gsk_rounded_clip_node_get_child (node), dx, dy, fn, data);
      break;
    case GSK_OPACITY_NODE:
      walk (gsk_opacity_node_get_child (node), dx, dy, fn, data);
      break;
    case GSK_DEBUG_NODE:
      walk (gsk_debug_node_get_child (node), dx, dy, fn, data);
      break;
    default:
      break;
    }
}

typedef struct {
  GArray *want;          /* glyph ids */
  guint prefix;          /* > 0: a node starting with this many of them counts */
  guint found;
  graphene_rect_t where; /* of the last found, widget coordinates */
} TextSearch;

static void
match_text (GskRenderNode *node, float dx, float dy, gpointer data)
{
  TextSearch *s = data;
  if (gsk_render_node_get_node_type (node) != GSK_TEXT_NODE)
    return;
  /* The number from its own getter: gsk_text_node_get_glyphs() is
   * declared pure, so its out argument may be read before it is set. */
  guint n = gsk_text_node_get_num_glyphs (node);
  const PangoGlyphInfo *glyphs = gsk_text_node_get_glyphs (node, NULL);
  guint need = s->prefix > 0 ? MIN (s->prefix, s->want->len) : s->want->len;
  if (s->prefix > 0 ? n < need : n != s->want->len)
    return;
  for (guint i = 0; i < need; i++)
    if (glyphs[i].glyph != g_array_index (s->want, PangoGlyph, i))
      return;
  s->found++;
  gsk_render_node_get_bounds (node, &s->where);
  s->where.origin.x += dx, s->where.origin.y += dy;
}

static guint count_text_prefix (GskRenderNode *node, PangoLayout *layout, const char *text,
                               guint prefix, graphene_rect_t *where);

/* How many text nodes under @node write @text in @layout's font (and
 * where the last one is). */
static guint
count_text (GskRenderNode *node, PangoLayout *layout, const char *text, graphene_rect_t *where)
{
  return count_text_prefix (node, layout, text, 0, where);
}

/* The same, counting the nodes that start with @prefix glyphs of @text
 * (an ellipsized text) when @prefix > 0. */
static guint
count_text_prefix (GskRenderNode *node, PangoLayout *layout, const char *text, guint prefix,
                   graphene_rect_t *where)
{
  PangoLayout *copy = pango_layout_copy (layout);
  pango_layout_set_width (copy, -1);
  pango_layout_set_text (copy, text, -1);
  TextSearch s = { g_array_new (FALSE, FALSE, sizeof (PangoGlyph)), prefix };
  for (GSList *r = pango_layout_get_line_readonly (copy, 0)->runs; r != NULL; r = r->next)
    {
      PangoGlyphString *gs = ((PangoGlyphItem *) r->data)->glyphs;
      for (int i = 0; i < gs->num_glyphs; i++)
        g_array_append_val (s.want, gs->glyphs[i].glyph);
    }
  g_object_unref (copy);
  walk (node, 0, 0, match_text, &s);
  g_array_unref (s.want);
  if (where != NULL && s.found > 0)
    *where = s.where;
  return s.found;
}

/* A layout in the font the timeline writes range names with (its own,
 * a little smaller). */
static PangoLayout *
range_layout (CowscopeTimelineView *v)
{
  PangoLayout *layout = gtk_widget_create_pango_layout (GTK_WIDGET (v), NULL);
  PangoAttrList *small = pango_attr_list_new ();
  pango_attr_list_insert (small, pango_attr_scale_new (0.85));
  pango_layout_set_attributes (layout, small);
  pango_attr_list_unref (small);
  return layout;
}

typedef struct {
  GskRenderNodeType type;
  GdkRGBA color;              /* colour nodes: of this colour */
  guint found;
  GPtrArray *bounds;          /* graphene_rect_t*, widget coordinates */
} NodeSearch;

static void
match_node (GskRenderNode *node, float dx, float dy, gpointer data)
{
  NodeSearch *s = data;
  if (gsk_render_node_get_node_type (node) != s->type)
    return;
  if (s->type == GSK_COLOR_NODE && !gdk_rgba_equal (gsk_color_node_get_color (node), &s->color))
    return;
  graphene_rect_t *b = g_new (graphene_rect_t, 1);
  gsk_render_node_get_bounds (node, b);
  b->origin.x += dx, b->origin.y += dy;
  g_ptr_array_add (s->bounds, b);
  s->found++;
}

static void
find_nodes (GskRenderNode *node, NodeSearch *s)
{
  if (s->bounds == NULL)
    s->bounds = g_ptr_array_new_with_free_func (g_free);
  walk (node, 0, 0, match_node, s);
}

/* The first shown lane of @kind (and @pid, unless 0), or -1. */
static int
lane_of (CowscopeLaneKind kind, guint32 pid)
{
  for (guint i = 0; i < cowscope_timeline_view_get_n_lanes (view ()); i++)
    {
      CowscopeTimelineLane *lane = cowscope_timeline_view_get_lane (view (), i);
      if (cowscope_timeline_lane_get_kind (lane) == kind
          && (pid == 0 || cowscope_timeline_lane_get_pid (lane) == pid))
        return (int) i;
    }
  return -1;
}

static guint
count_kind (CowscopeLaneKind kind)
{
  guint n = 0;
  for (guint i = 0; i < cowscope_timeline_view_get_n_lanes (view ()); i++)
    n += cowscope_timeline_lane_get_kind (cowscope_timeline_view_get_lane (view (), i)) == kind;
  return n;
}

/* Renders @widget to @name in the screenshot folder (to be looked at). */
static void
screenshot (GtkWidget *widget, const char *name)
{
  g_assert_true (gui_test_wait_until (gui_test_widget_drawn, widget, 10));
  g_autoptr (GskRenderNode) node = snapshot_widget (widget);
  int width = gtk_widget_get_width (widget), height = gtk_widget_get_height (widget);
  cairo_surface_t *surface = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, width, height);
  cairo_t *cr = cairo_create (surface);
  gsk_render_node_draw (node, cr);
  cairo_destroy (cr);
  const char *dir = g_getenv ("COWSCOPE_SCREENSHOT_DIR");
  g_autofree char *path = g_build_filename (dir ? dir : ".", name, NULL);
  g_assert_cmpint (cairo_surface_write_to_png (surface, path), ==, CAIRO_STATUS_SUCCESS);
  g_test_message ("screenshot: %s (%dx%d)", path, width, height);
  cairo_surface_destroy (surface);
}

/* ---- opening ---------------------------------------------------------------------- */

static void
test_open (void)
{
  g_autoptr (GFile) file = g_file_new_for_path (session_path);
  window = cowscope_window_new (app);
  gtk_window_set_default_size (GTK_WINDOW (window), 1280, 800);
  gtk_window_present (GTK_WINDOW (window));
  cowscope_window_open (window, file);
  g_assert_true (gui_test_wait_until (session_loaded, window, 20));
  /* A session opens on its summary: the timeline instead. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.show-view", "s", "timeline"));
  g_assert_true (gui_test_wait_until (names_read, view (), 20));
  wait_frame ();
  g_assert_cmpint (cowscope_timeline_view_get_label_width (view ()), ==,
                   g_settings_get_int (settings (), "timeline-label-width"));
}

/* ---- defect 6: lane labels ----------------------------------------------------------- */

/* Every label, at the default width: its detail line (the thread id and
 * process) is drawn whole, its natural width within the column; so is a
 * thread's name; the tooltip says it all. */
static void
test_labels (void)
{
  CowscopeTimelineView *v = view ();
  int column = cowscope_timeline_view_get_label_width (v);
  g_assert_cmpint (column, ==, 200);
  PangoLayout *layout = gtk_widget_create_pango_layout (GTK_WIDGET (v), NULL);
  guint threads = 0;
  for (guint i = 0; i < cowscope_timeline_view_get_n_lanes (v); i++)
    {
      CowscopeTimelineLane *lane = cowscope_timeline_view_get_lane (v, i);
      CowscopeLaneKind kind = cowscope_timeline_lane_get_kind (lane);
      g_autofree char *name = NULL, *detail = NULL;
      guint cut = 0;
      int y, h;
      cowscope_timeline_view_get_lane_area (v, i, &y, &h);
      gboolean drawn = cowscope_timeline_view_get_lane_label (v, i, &name, &detail, &cut);
      if (kind != COWSCOPE_LANE_THREAD)
        continue;
      threads++;
      /* Scrolled out lanes are drawn when they come into view. */
      if (!drawn)
        {
          GtkAdjustment *adj = gtk_scrollable_get_vadjustment (GTK_SCROLLABLE (v));
          gtk_adjustment_set_value (adj, gtk_adjustment_get_value (adj) + y - 120);
          wait_frame ();
          g_assert_true (cowscope_timeline_view_get_lane_label (v, i, NULL, NULL, &cut));
          cowscope_timeline_view_get_lane_area (v, i, &y, &h);
        }
      g_autofree char *tid = g_strdup_printf ("%" G_GINT64_FORMAT, cowscope_timeline_lane_get_tid (lane));
      g_autofree char *pid = g_strdup_printf ("%u", cowscope_timeline_lane_get_pid (lane));
      g_assert_nonnull (strstr (detail, tid));
      g_assert_nonnull (strstr (detail, pid));
      int name_w, detail_w;
      pango_layout_set_text (layout, name, -1);
      pango_layout_get_pixel_size (layout, &name_w, NULL);
      pango_layout_set_text (layout, detail, -1);
      pango_layout_get_pixel_size (layout, &detail_w, NULL);
      int room = column - COWSCOPE_LANE_LABEL_X - COWSCOPE_LANE_LABEL_PADDING;
      g_test_message ("lane %u: \"%s\" %d px, \"%s\" %d px, room %d px", i, name, name_w, detail,
                      detail_w, room);
      g_assert_cmpint (detail_w, <=, room);
      g_assert_cmpint (name_w, <=, room);
      g_assert_cmpuint (cut, ==, 0);
      /* Two lines fit in the lane. */
      int line;
      pango_layout_get_pixel_size (layout, NULL, &line);
      g_assert_cmpint (h, >=, 2 * line);
      g_autofree char *tip = cowscope_timeline_view_get_tooltip_at (v, 20, y + h / 2.0);
      g_assert_nonnull (tip);
      g_assert_nonnull (strstr (tip, name));
      g_assert_nonnull (strstr (tip, tid));
      g_assert_nonnull (strstr (tip, pid));
    }
  g_assert_cmpuint (threads, ==, info.n_thread_lanes);
  g_object_unref (layout);
}

/* Dragging the column's edge resizes the labels; the width is kept in
 * GSettings; the time axis (the ruler's and the lanes') starts there. */
static void
test_label_resize (void)
{
  CowscopeTimelineView *v = view ();
  int before = cowscope_timeline_view_get_label_width (v);
  int lane = lane_of (COWSCOPE_LANE_THREAD, 0);
  int y, h;
  cowscope_timeline_view_get_lane_area (v, (guint) lane, &y, &h);
  gint64 t0 = cowscope_view_state_get_visible_start (state ());
  cowscope_timeline_view_drag (v, before + 1, 40, 60, 2, 0);
  g_assert_cmpint (cowscope_timeline_view_get_label_width (v), ==, before + 60);
  g_assert_cmpint (g_settings_get_int (settings (), "timeline-label-width"), ==, before + 60);
  g_assert_cmpfloat (fabs (cowscope_timeline_view_time_to_x (v, t0) - (before + 60)), <, 0.01);
  GtkWidget *ruler = find_child (GTK_WIDGET (v), COWSCOPE_TYPE_TIME_RULER);
  g_assert_cmpint (cowscope_time_ruler_get_inset (COWSCOPE_TIME_RULER (ruler)), ==, before + 60);
  /* The drag neither panned nor selected. */
  g_assert_cmpint (cowscope_view_state_get_visible_start (state ()), ==, t0);
  g_assert_cmpint (cowscope_view_state_get_range_start (state ()), ==, -1);
  wait_frame ();
  /* A window opened later starts with the remembered width; the key
   * drives the view too. */
  g_settings_set_int (settings (), "timeline-label-width", before);
  g_assert_cmpint (cowscope_timeline_view_get_label_width (v), ==, before);
  /* Not narrower than a readable minimum. */
  cowscope_timeline_view_drag (v, before, 40, -500, 0, 0);
  g_assert_cmpint (cowscope_timeline_view_get_label_width (v), ==, 120);
  g_settings_set_int (settings (), "timeline-label-width", before);
  wait_frame ();
}

/* ---- defect 5: the timeline's preferences ------------------------------------------- */

static void
test_preferences (void)
{
  CowscopeTimelineView *v = view ();
  g_assert_cmpuint (count_kind (COWSCOPE_LANE_COUNTER), ==, 3);
  g_settings_set_boolean (settings (), "timeline-show-counters", FALSE);
  g_assert_cmpuint (count_kind (COWSCOPE_LANE_COUNTER), ==, 0);
  wait_frame ();
  g_assert_cmpint (cowscope_timeline_lane_get_kind (cowscope_timeline_view_get_lane (v, 0)), !=,
                   COWSCOPE_LANE_COUNTER);
  g_settings_set_boolean (settings (), "timeline-show-counters", TRUE);
  g_assert_cmpuint (count_kind (COWSCOPE_LANE_COUNTER), ==, 3);

  /* Lane height: every thread lane's event row, and the CUDA lanes. */
  guint n = cowscope_timeline_view_get_n_lanes (v);
  g_autofree int *before = g_new0 (int, n);
  for (guint i = 0; i < n; i++)
    cowscope_timeline_view_get_lane_area (v, i, NULL, &before[i]);
  guint default_height = g_settings_get_uint (settings (), "timeline-lane-height");
  g_settings_set_uint (settings (), "timeline-lane-height", default_height + 30);
  g_assert_cmpuint (cowscope_timeline_view_get_n_lanes (v), ==, n);
  for (guint i = 0; i < n; i++)
    {
      int after;
      cowscope_timeline_view_get_lane_area (v, i, NULL, &after);
      CowscopeLaneKind kind = cowscope_timeline_lane_get_kind (cowscope_timeline_view_get_lane (v, i));
      if (kind == COWSCOPE_LANE_CUDA_STREAM)
        g_assert_cmpint (after, ==, (int) default_height + 30);
      else if (kind == COWSCOPE_LANE_THREAD)
        g_assert_cmpint (after, >, before[i]);
      else
        g_assert_cmpint (after, ==, before[i]);
    }
  wait_frame ();
  screenshot (GTK_WIDGET (window), "cowscope-timeline-tall-lanes.png");
  g_settings_set_uint (settings (), "timeline-lane-height", default_height);
  for (guint i = 0; i < n; i++)
    {
      int again;
      cowscope_timeline_view_get_lane_area (v, i, NULL, &again);
      g_assert_cmpint (again, ==, before[i]);
    }
  wait_frame ();
}

/* ---- defect 10: the wheel, the legend ------------------------------------------------- */

static void
test_wheel (void)
{
  CowscopeTimelineView *v = view ();
  CowscopeViewState *st = state ();
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (v), "timeline.zoom-reset", NULL));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (v), "timeline.zoom-in", NULL));
  GtkAdjustment *adj = gtk_scrollable_get_vadjustment (GTK_SCROLLABLE (v));
  gtk_adjustment_set_value (adj, 0);
  g_assert_cmpfloat (gtk_adjustment_get_upper (adj), >, gtk_adjustment_get_page_size (adj));
  gint64 t0 = cowscope_view_state_get_visible_start (st);
  gint64 t1 = cowscope_view_state_get_visible_end (st);

  /* The plain wheel scrolls the lanes, not time (as Sysprof and Perfetto). */
  cowscope_timeline_view_scroll (v, 0, 1, 0);
  g_assert_cmpfloat (gtk_adjustment_get_value (adj), >, 0);
  g_assert_cmpint (cowscope_view_state_get_visible_start (st), ==, t0);
  g_assert_cmpint (cowscope_view_state_get_visible_end (st), ==, t1);
  cowscope_timeline_view_scroll (v, 0, -1, 0);
  g_assert_cmpfloat (gtk_adjustment_get_value (adj), ==, 0);

  /* Shift+wheel pans, by the same amount either way. */
  cowscope_timeline_view_scroll (v, 0, 1, GDK_SHIFT_MASK);
  gint64 p0 = cowscope_view_state_get_visible_start (st);
  g_assert_cmpint (p0, >, t0);
  g_assert_cmpint (cowscope_view_state_get_visible_end (st) - p0, ==, t1 - t0);
  g_assert_cmpfloat (gtk_adjustment_get_value (adj), ==, 0);
  cowscope_timeline_view_scroll (v, 0, -1, GDK_SHIFT_MASK);
  g_assert_cmpint (cowscope_view_state_get_visible_start (st), ==, t0);
  /* A horizontal wheel pans too. */
  cowscope_timeline_view_scroll (v, 1, 0, 0);
  g_assert_cmpint (cowscope_view_state_get_visible_start (st), >, t0);
  cowscope_timeline_view_scroll (v, -1, 0, 0);
  g_assert_cmpint (cowscope_view_state_get_visible_start (st), ==, t0);

  /* Ctrl+wheel zooms (around the data area's centre when the pointer is
   * elsewhere): narrower, the centre time kept. */
  gint64 mid = t0 + (t1 - t0) / 2;
  cowscope_timeline_view_scroll (v, 0, -1, GDK_CONTROL_MASK);
  gint64 z0 = cowscope_view_state_get_visible_start (st);
  gint64 z1 = cowscope_view_state_get_visible_end (st);
  g_assert_cmpfloat (fabs ((double) (z1 - z0) - (double) (t1 - t0) / 1.2), <=, 2);
  g_assert_cmpfloat (fabs ((double) (z0 + (z1 - z0) / 2 - mid)), <=, (double) (t1 - t0) / 500);
  g_assert_cmpfloat (gtk_adjustment_get_value (adj), ==, 0);
  wait_frame ();
}

/* The legend names every colour the timeline draws items with, in that
 * colour, and shows in a popover: it covers no lane until asked for. */
static void
test_legend (void)
{
  CowscopeTimelineView *v = view ();
  GtkWidget *toolbar = find_child (GTK_WIDGET (window), COWSCOPE_TYPE_TIMELINE_TOOLBAR);
  g_assert_nonnull (toolbar);
  CowscopeTimelineLegend *legend =
    COWSCOPE_TIMELINE_LEGEND (find_child (toolbar, COWSCOPE_TYPE_TIMELINE_LEGEND));
  g_assert_nonnull (legend);
  g_assert_false (gtk_widget_get_mapped (GTK_WIDGET (legend)));
  GtkWidget *button = gtk_widget_get_ancestor (GTK_WIDGET (legend), GTK_TYPE_MENU_BUTTON);
  if (button == NULL)
    {
      /* The popover is not the button's descendant in the widget tree:
       * find the button that owns it. */
      GtkWidget *popover = gtk_widget_get_ancestor (GTK_WIDGET (legend), GTK_TYPE_POPOVER);
      button = gtk_widget_get_parent (popover);
    }
  g_assert_true (GTK_IS_MENU_BUTTON (button));
  gtk_menu_button_popup (GTK_MENU_BUTTON (button));
  g_assert_true (gui_test_wait_until (gui_test_widget_drawn, legend, 10));
  screenshot (gtk_widget_get_ancestor (GTK_WIDGET (legend), GTK_TYPE_POPOVER),
              "cowscope-timeline-legend.png");
  guint kinds = 0;
  for (guint i = 0; i < cowscope_timeline_legend_get_n_entries (legend); i++)
    {
      GdkRGBA color, drawn;
      const char *name = cowscope_timeline_legend_get_entry (legend, i, &color);
      g_assert_nonnull (name);
      g_assert_cmpuint (strlen (name), >, 2);
      int kind = cowscope_timeline_legend_get_entry_kind (legend, i);
      if (kind < 0)
        continue;
      cowscope_timeline_view_get_kind_color (v, kind, &drawn);
      g_assert_true (gdk_rgba_equal (&color, &drawn));
      kinds |= 1u << kind;
    }
  /* Every kind with a colour of its own (the everyday events share one). */
  const CowscopeItemKind own[] = {
    COWSCOPE_ITEM_COPY, COWSCOPE_ITEM_STEAL, COWSCOPE_ITEM_EAGER_COPY,
    COWSCOPE_ITEM_MATERIALIZE_FAILED, COWSCOPE_ITEM_LAZY_CLONE, COWSCOPE_ITEM_VIOLATION,
    COWSCOPE_ITEM_RANGE, COWSCOPE_ITEM_MARK, COWSCOPE_ITEM_IPC, COWSCOPE_ITEM_IPC_LIMBO,
    COWSCOPE_ITEM_IPC_HELD, COWSCOPE_ITEM_CUDA_MEMCPY, COWSCOPE_ITEM_CUDA_MEMSET,
    COWSCOPE_ITEM_CUDA_KERNEL, COWSCOPE_ITEM_CUDA_OTHER, COWSCOPE_ITEM_OTHER,
  };
  for (guint i = 0; i < G_N_ELEMENTS (own); i++)
    g_assert_true (kinds & (1u << own[i]));
  gtk_menu_button_popdown (GTK_MENU_BUTTON (button));
  gui_test_spin (100);
  g_assert_false (gtk_widget_get_mapped (GTK_WIDGET (legend)));
}

/* ---- defect 9: keys ------------------------------------------------------------------- */

static gboolean
highlights_found (gpointer data)
{
  guint n;
  return cowscope_timeline_view_get_n_highlighted (view (), &n);
}

/* Highlights the storage of materialization @seq and waits for its
 * events; returns the storage's pid. */
static guint32
highlight_storage_of (const char *table, gint64 seq, guint64 *storage)
{
  g_autofree char *s_sql = g_strdup_printf ("SELECT storage_id FROM %s WHERE seq = %" G_GINT64_FORMAT,
                                            table, seq);
  g_autofree char *p_sql = g_strdup_printf ("SELECT pid FROM %s WHERE seq = %" G_GINT64_FORMAT,
                                            table, seq);
  *storage = (guint64) sql_int (s_sql);
  guint32 pid = (guint32) sql_int (p_sql);
  CowscopeObjectRef ref = { COWSCOPE_NODE_STORAGE, pid, *storage };
  cowscope_view_state_set_highlights (state (), &ref, 1);
  g_assert_true (gui_test_wait_until (highlights_found, NULL, 20));
  return pid;
}

/* The cursor keys' actions: a pixel's time, a tenth of the window, the
 * session's ends, the window following the cursor; jump to the cursor. */
static void
test_cursor_keys (void)
{
  CowscopeTimelineView *v = view ();
  CowscopeViewState *st = state ();
  GtkWidget *w = GTK_WIDGET (v);
  g_assert_true (gtk_widget_activate_action (w, "timeline.zoom-reset", NULL));
  for (int i = 0; i < 4; i++)
    gtk_widget_activate_action (w, "timeline.zoom-in", NULL);
  gint64 t0 = cowscope_view_state_get_visible_start (st);
  gint64 t1 = cowscope_view_state_get_visible_end (st);
  gint64 mid = t0 + (t1 - t0) / 2;
  cowscope_view_state_set_cursor (st, mid);
  double px = (double) (t1 - t0) / (gtk_widget_get_width (w) - cowscope_timeline_view_get_label_width (v));

  g_assert_true (gtk_widget_activate_action (w, "timeline.cursor-right", NULL));
  g_assert_cmpfloat (fabs ((double) (cowscope_view_state_get_cursor (st) - mid) - px), <=, 1);
  g_assert_true (gtk_widget_activate_action (w, "timeline.cursor-left", NULL));
  g_assert_cmpfloat (fabs ((double) (cowscope_view_state_get_cursor (st) - mid)), <=, 1);
  g_assert_true (gtk_widget_activate_action (w, "timeline.cursor-right-far", NULL));
  g_assert_cmpfloat (fabs ((double) (cowscope_view_state_get_cursor (st) - mid) - 0.1 * (t1 - t0)),
                     <=, 1);
  g_assert_true (gtk_widget_activate_action (w, "timeline.cursor-left-far", NULL));
  g_assert_cmpfloat (fabs ((double) (cowscope_view_state_get_cursor (st) - mid)), <=, 2);
  g_assert_cmpint (cowscope_view_state_get_visible_start (st), ==, t0);

  /* Home: the session's start, and the window goes with it. */
  g_assert_true (gtk_widget_activate_action (w, "timeline.cursor-start", NULL));
  g_assert_cmpint (cowscope_view_state_get_cursor (st), ==, info.start_ns);
  g_assert_cmpint (cowscope_view_state_get_visible_start (st), <=, info.start_ns);
  g_assert_cmpint (cowscope_view_state_get_visible_end (st) - cowscope_view_state_get_visible_start (st),
                   ==, t1 - t0);
  g_assert_true (gtk_widget_activate_action (w, "timeline.cursor-end", NULL));
  g_assert_cmpint (cowscope_view_state_get_cursor (st), ==,
                   cowscope_session_document_get_end_ns (cowscope_view_state_get_document (st)));
  g_assert_cmpint (cowscope_view_state_get_visible_end (st), >=, cowscope_view_state_get_cursor (st));

  /* Off screen: jump to the cursor centres the window on it. */
  cowscope_view_state_set_visible (st, t0, t1);
  cowscope_view_state_set_cursor (st, mid);
  cowscope_view_state_set_visible (st, info.start_ns, info.start_ns + (t1 - t0));
  gboolean shown = TRUE;
  g_object_get (v, "cursor-shown", &shown, NULL);
  g_assert_false (shown);
  g_assert_true (gtk_widget_activate_action (w, "timeline.jump-to-cursor", NULL));
  g_object_get (v, "cursor-shown", &shown, NULL);
  g_assert_true (shown);
  gint64 j0 = cowscope_view_state_get_visible_start (st), j1 = cowscope_view_state_get_visible_end (st);
  g_assert_cmpint (j1 - j0, ==, t1 - t0);
  g_assert_cmpfloat (fabs ((double) (j0 + (j1 - j0) / 2 - mid)), <=, 1);
  wait_frame ();
}

/* Stepping through the highlighted storage's events, copies and
 * warnings selects them in time order, as the tables hold them. */
static void
test_step_keys (void)
{
  CowscopeTimelineView *v = view ();
  CowscopeViewState *st = state ();
  GtkWidget *w = GTK_WIDGET (v);
  guint64 storage;
  guint32 pid = highlight_storage_of ("materializations", info.copy_seq, &storage);
  g_autofree char *where = g_strdup_printf ("pid = %u AND storage_id = %" G_GUINT64_FORMAT, pid, storage);
  g_autofree char *lc_where = g_strdup_printf (
    "pid = %u AND (source_storage_id = %" G_GUINT64_FORMAT " OR result_storage_id = %" G_GUINT64_FORMAT ")",
    pid, storage, storage);
  g_autofree char *all_sql = g_strdup_printf (
    "SELECT seq FROM (SELECT seq, begin_ts AS t FROM materializations WHERE %1$s"
    " UNION SELECT seq, ts FROM lazy_clones WHERE %2$s UNION SELECT seq, ts FROM violations"
    " WHERE %1$s) ORDER BY t, seq", where, lc_where);
  g_autofree char *copies_sql = g_strdup_printf (
    "SELECT seq FROM (SELECT seq, begin_ts AS t FROM materializations WHERE %1$s AND kind IN (1, 3)"
    " UNION SELECT seq, ts FROM lazy_clones WHERE %2$s AND context_id IS NULL) ORDER BY t, seq",
    where, lc_where);
  g_autoptr (GArray) all = sql_seqs (all_sql);
  g_autoptr (GArray) copies = sql_seqs (copies_sql);
  g_assert_cmpuint (all->len, >=, 2);
  g_assert_cmpuint (copies->len, >=, 1);

  cowscope_view_state_set_selected_seq (st, -1);
  cowscope_view_state_set_cursor (st, info.start_ns);
  for (guint i = 0; i < all->len; i++)
    {
      g_assert_true (gtk_widget_activate_action (w, "timeline.next-event", NULL));
      g_assert_cmpint (cowscope_view_state_get_selected_seq (st), ==, g_array_index (all, gint64, i));
      /* The selected event is in view. */
      gint64 c = cowscope_view_state_get_cursor (st);
      g_assert_cmpint (c, >=, cowscope_view_state_get_visible_start (st));
      g_assert_cmpint (c, <=, cowscope_view_state_get_visible_end (st));
      gui_test_spin (20); /* the explanation panel re-highlights: steps keep to the storage */
    }
  /* Past the last: nothing changes. */
  gtk_widget_activate_action (w, "timeline.next-event", NULL);
  g_assert_cmpint (cowscope_view_state_get_selected_seq (st), ==,
                   g_array_index (all, gint64, all->len - 1));
  for (guint i = all->len - 1; i-- > 0;)
    {
      g_assert_true (gtk_widget_activate_action (w, "timeline.previous-event", NULL));
      g_assert_cmpint (cowscope_view_state_get_selected_seq (st), ==, g_array_index (all, gint64, i));
    }

  /* Copies only, from the start. */
  cowscope_view_state_set_selected_seq (st, -1);
  highlight_storage_of ("materializations", info.copy_seq, &storage);
  cowscope_view_state_set_cursor (st, info.start_ns);
  for (guint i = 0; i < copies->len; i++)
    {
      g_assert_true (gtk_widget_activate_action (w, "timeline.next-copy", NULL));
      g_assert_cmpint (cowscope_view_state_get_selected_seq (st), ==, g_array_index (copies, gint64, i));
    }
  if (copies->len > 1)
    {
      g_assert_true (gtk_widget_activate_action (w, "timeline.previous-copy", NULL));
      g_assert_cmpint (cowscope_view_state_get_selected_seq (st), ==,
                       g_array_index (copies, gint64, copies->len - 2));
    }

  /* Warnings: the fixture's violation, from its storage. */
  cowscope_view_state_set_selected_seq (st, -1);
  highlight_storage_of ("violations", info.violation_seq, &storage);
  cowscope_view_state_set_cursor (st, info.start_ns);
  g_assert_true (gtk_widget_activate_action (w, "timeline.next-warning", NULL));
  g_autofree char *first_warning = g_strdup_printf (
    "SELECT seq FROM violations WHERE pid = (SELECT pid FROM violations WHERE seq = %1$" G_GINT64_FORMAT
    ") AND storage_id = (SELECT storage_id FROM violations WHERE seq = %1$" G_GINT64_FORMAT
    ") ORDER BY ts, seq LIMIT 1", info.violation_seq);
  g_assert_cmpint (cowscope_view_state_get_selected_seq (st), ==, sql_int (first_warning));
  cowscope_view_state_set_highlights (st, NULL, 0);
  cowscope_view_state_set_selected_seq (st, -1);
  wait_frame ();
}

/* Every key bound on the timeline is listed in the shortcuts window. */
static void
test_shortcuts_listed (void)
{
  g_autoptr (GtkBuilder) builder =
    gtk_builder_new_from_resource ("/org/cowscope/Cowscope/gtk/help-overlay.ui");
  GtkWidget *overlay = GTK_WIDGET (gtk_builder_get_object (builder, "help_overlay"));
  g_assert_nonnull (overlay);
  /* The accelerators the shortcuts window shows. */
  g_autoptr (GPtrArray) shown = g_ptr_array_new_with_free_func (g_free);
  GSList *objects = gtk_builder_get_objects (builder);
  for (GSList *o = objects; o != NULL; o = o->next)
    if (GTK_IS_SHORTCUTS_SHORTCUT (o->data))
      {
        g_autofree char *accel = NULL;
        g_object_get (o->data, "accelerator", &accel, NULL);
        if (accel == NULL)
          continue;
        g_auto (GStrv) parts = g_strsplit (accel, " ", -1);
        for (guint i = 0; parts[i] != NULL; i++)
          {
            guint key;
            GdkModifierType mods;
            if (parts[i][0] != '\0' && gtk_accelerator_parse (parts[i], &key, &mods))
              g_ptr_array_add (shown, gtk_accelerator_name (gdk_keyval_to_lower (key), mods));
          }
      }
  g_slist_free (objects);

  /* The timeline's own key bindings, from its shortcut controllers. */
  guint bindings = 0;
  g_autoptr (GListModel) controllers = gtk_widget_observe_controllers (GTK_WIDGET (view ()));
  for (guint c = 0; c < g_list_model_get_n_items (controllers); c++)
    {
      g_autoptr (GObject) controller = g_list_model_get_item (controllers, c);
      if (!GTK_IS_SHORTCUT_CONTROLLER (controller))
        continue;
      for (guint i = 0; i < g_list_model_get_n_items (G_LIST_MODEL (controller)); i++)
        {
          g_autoptr (GtkShortcut) shortcut = g_list_model_get_item (G_LIST_MODEL (controller), i);
          GtkShortcutTrigger *trigger = gtk_shortcut_get_trigger (shortcut);
          if (!GTK_IS_KEYVAL_TRIGGER (trigger))
            continue;
          guint key = gtk_keyval_trigger_get_keyval (GTK_KEYVAL_TRIGGER (trigger));
          GdkModifierType mods = gtk_keyval_trigger_get_modifiers (GTK_KEYVAL_TRIGGER (trigger));
          /* Keypad twins of listed keys need no line of their own. */
          if (key >= GDK_KEY_KP_Space && key <= GDK_KEY_KP_9)
            continue;
          g_autofree char *name = gtk_accelerator_name (gdk_keyval_to_lower (key), mods);
          gboolean listed = FALSE;
          for (guint k = 0; k < shown->len && !listed; k++)
            listed = g_str_equal (shown->pdata[k], name);
          g_test_message ("timeline key %s: %s", name, listed ? "listed" : "NOT LISTED");
          g_assert_true (listed);
          bindings++;
        }
    }
  g_assert_cmpuint (bindings, >=, 20);
  gtk_window_destroy (GTK_WINDOW (overlay));
}

/* ---- lanes a person manages ----------------------------------------------------------- */

static gboolean
filter_has_text (gpointer data)
{
  return cowscope_lane_filter_get_text (data)[0] != '\0';
}

static void
test_manage_lanes (void)
{
  CowscopeTimelineView *v = view ();
  GtkWidget *w = GTK_WIDGET (v);
  CowscopeLaneFilter *filter = cowscope_timeline_view_get_lane_filter (v);
  guint n = cowscope_timeline_view_get_n_lanes (v);
  GtkAdjustment *adj = gtk_scrollable_get_vadjustment (GTK_SCROLLABLE (v));

  /* Pin the last thread lane: it comes first, right under the ruler, and
   * stays there while the others scroll. */
  int last = -1;
  for (guint i = 0; i < n; i++)
    if (cowscope_timeline_lane_get_kind (cowscope_timeline_view_get_lane (v, i)) == COWSCOPE_LANE_THREAD)
      last = (int) i;
  CowscopeTimelineLane *pinned = cowscope_timeline_view_get_lane (v, (guint) last);
  g_object_ref (pinned);
  g_assert_true (gtk_widget_activate_action (w, "timeline.pin-lane", "i", last));
  g_assert_cmpuint (cowscope_timeline_view_get_n_pinned (v), ==, 1);
  g_assert_true (cowscope_timeline_view_get_lane (v, 0) == pinned);
  int y0, h0;
  cowscope_timeline_view_get_lane_area (v, 0, &y0, &h0);
  g_assert_cmpint (y0, ==, COWSCOPE_TIME_RULER_HEIGHT);
  gtk_adjustment_set_value (adj, 60);
  int y1, h1;
  cowscope_timeline_view_get_lane_area (v, 0, &y1, &h1);
  g_assert_cmpint (y1, ==, y0);
  /* The first scrolled lane sits below the pinned one, scrolled. */
  cowscope_timeline_view_get_lane_area (v, 1, &y1, NULL);
  g_assert_cmpint (y1, ==, y0 + h0 - 60);
  wait_frame ();
  screenshot (GTK_WIDGET (window), "cowscope-timeline-pinned.png");
  gtk_adjustment_set_value (adj, 0);
  g_assert_true (gtk_widget_activate_action (w, "timeline.pin-lane", "i", 0));
  g_assert_cmpuint (cowscope_timeline_view_get_n_pinned (v), ==, 0);

  /* Hide a lane. */
  int thread = lane_of (COWSCOPE_LANE_THREAD, 0);
  CowscopeTimelineLane *hidden = cowscope_timeline_view_get_lane (v, (guint) thread);
  g_assert_true (gtk_widget_activate_action (w, "timeline.hide-lane", "i", thread));
  g_assert_cmpuint (cowscope_timeline_view_get_n_lanes (v), ==, n - 1);
  for (guint i = 0; i < n - 1; i++)
    g_assert_true (cowscope_timeline_view_get_lane (v, i) != hidden);

  /* Fold a process with a click on its expander: its threads go. */
  cowscope_lane_filter_reset (filter);
  int process = lane_of (COWSCOPE_LANE_PROCESS, 0);
  guint32 pid = cowscope_timeline_lane_get_pid (cowscope_timeline_view_get_lane (v, (guint) process));
  int py, ph;
  cowscope_timeline_view_get_lane_area (v, (guint) process, &py, &ph);
  if (py + 10 > gtk_widget_get_height (w))
    {
      gtk_adjustment_set_value (adj, py - 100);
      cowscope_timeline_view_get_lane_area (v, (guint) process, &py, &ph);
    }
  cowscope_timeline_view_click (v, 10, py + 10);
  g_assert_true (cowscope_lane_filter_get_collapsed (filter, pid));
  g_assert_cmpint (lane_of (COWSCOPE_LANE_THREAD, pid), ==, -1);
  g_assert_cmpint (lane_of (COWSCOPE_LANE_PROCESS, pid), >=, 0);
  wait_frame ();
  screenshot (GTK_WIDGET (window), "cowscope-timeline-folded.png");
  process = lane_of (COWSCOPE_LANE_PROCESS, pid);
  g_assert_true (gtk_widget_activate_action (w, "timeline.fold-process", "i", process));
  g_assert_cmpint (lane_of (COWSCOPE_LANE_THREAD, pid), >=, 0);

  /* Only this process: other processes' lanes are hidden, counters stay. */
  g_assert_true (gtk_widget_activate_action (w, "timeline.only-process", "i", lane_of (COWSCOPE_LANE_THREAD, pid)));
  for (guint i = 0; i < cowscope_timeline_view_get_n_lanes (v); i++)
    {
      CowscopeTimelineLane *lane = cowscope_timeline_view_get_lane (v, i);
      if (cowscope_timeline_lane_get_kind (lane) != COWSCOPE_LANE_COUNTER)
        g_assert_cmpuint (cowscope_timeline_lane_get_pid (lane), ==, pid);
    }
  g_assert_cmpuint (count_kind (COWSCOPE_LANE_COUNTER), ==, 3);
  g_assert_true (gtk_widget_activate_action (w, "timeline.show-all-lanes", NULL));
  g_assert_cmpuint (cowscope_timeline_view_get_n_lanes (v), ==, n);

  /* The Lanes popover: a filter by thread name, a check per lane. */
  GtkWidget *toolbar = find_child (GTK_WIDGET (window), COWSCOPE_TYPE_TIMELINE_TOOLBAR);
  GtkWidget *lanes_button = NULL;
  for (GtkWidget *c = gtk_widget_get_first_child (toolbar); c != NULL; c = gtk_widget_get_next_sibling (c))
    if (GTK_IS_MENU_BUTTON (c) && gtk_menu_button_get_label (GTK_MENU_BUTTON (c)) != NULL)
      lanes_button = c;
  g_assert_nonnull (lanes_button);
  gtk_menu_button_popup (GTK_MENU_BUTTON (lanes_button));
  GtkWidget *popover = GTK_WIDGET (gtk_menu_button_get_popover (GTK_MENU_BUTTON (lanes_button)));
  g_assert_true (gui_test_wait_until (gui_test_widget_drawn, popover, 10));
  GtkWidget *list = find_child (popover, GTK_TYPE_LIST_BOX);
  guint rows = 0;
  GtkWidget *first_check = NULL;
  CowscopeTimelineLane *first_lane = NULL;
  for (GtkWidget *row = gtk_widget_get_first_child (list); row != NULL; row = gtk_widget_get_next_sibling (row))
    {
      if (!GTK_IS_LIST_BOX_ROW (row))
        continue;
      rows++;
      GtkWidget *check = find_child (row, GTK_TYPE_CHECK_BUTTON);
      g_assert_true (gtk_check_button_get_active (GTK_CHECK_BUTTON (check)));
      CowscopeTimelineLane *lane = g_object_get_data (G_OBJECT (row), "cowscope-lane");
      if (first_check == NULL && cowscope_timeline_lane_get_kind (lane) == COWSCOPE_LANE_THREAD)
        first_check = check, first_lane = lane;
    }
  g_assert_cmpuint (rows, ==, n);
  gtk_check_button_set_active (GTK_CHECK_BUTTON (first_check), FALSE);
  g_assert_true (cowscope_lane_filter_get_hidden (filter, first_lane));
  g_assert_cmpuint (cowscope_timeline_view_get_n_lanes (v), ==, n - 1);
  screenshot (popover, "cowscope-timeline-lanes-popover.png");
  GtkWidget *entry = find_child (popover, GTK_TYPE_SEARCH_ENTRY);
  gtk_editable_set_text (GTK_EDITABLE (entry), "worker-2");
  g_assert_true (gui_test_wait_until (filter_has_text, filter, 5));
  g_assert_cmpuint (count_kind (COWSCOPE_LANE_THREAD), ==, 2); /* worker-2 of each process */
  GtkWidget *box = gtk_popover_get_child (GTK_POPOVER (popover));
  GtkWidget *show_all = gtk_widget_get_last_child (box);
  g_assert_true (GTK_IS_BUTTON (show_all));
  g_signal_emit_by_name (show_all, "clicked");
  g_assert_cmpuint (cowscope_timeline_view_get_n_lanes (v), ==, n);
  g_assert_false (cowscope_lane_filter_get_hidden (filter, first_lane));
  gtk_menu_button_popdown (GTK_MENU_BUTTON (lanes_button));
  g_object_unref (pinned);
  wait_frame ();
}

/* ---- the overview strip ------------------------------------------------------------------ */

static gboolean
activity_ready (gpointer data)
{
  return cowscope_timeline_overview_get_activity_ready (data);
}

/* A click in the strip centres the window there, keeping its width; the
 * strip draws the window's box and the cursor. */
static void
test_overview (void)
{
  CowscopeTimelineView *v = view ();
  CowscopeViewState *st = state ();
  CowscopeTimelineOverview *overview =
    COWSCOPE_TIMELINE_OVERVIEW (find_child (GTK_WIDGET (window), COWSCOPE_TYPE_TIMELINE_OVERVIEW));
  g_assert_nonnull (overview);
  gtk_widget_activate_action (GTK_WIDGET (v), "timeline.zoom-reset", NULL);
  for (int i = 0; i < 5; i++)
    gtk_widget_activate_action (GTK_WIDGET (v), "timeline.zoom-in", NULL);
  gint64 width = cowscope_view_state_get_visible_end (st) - cowscope_view_state_get_visible_start (st);
  gint64 target = info.start_ns + (info.end_ns - info.start_ns) * 3 / 4;
  double x = cowscope_timeline_overview_time_to_x (overview, target);
  cowscope_timeline_overview_drag (overview, x, 0);
  gint64 t0 = cowscope_view_state_get_visible_start (st), t1 = cowscope_view_state_get_visible_end (st);
  g_assert_cmpint (t1 - t0, ==, width);
  double ns_per_px = (double) (info.end_ns - info.start_ns)
                     / (gtk_widget_get_width (GTK_WIDGET (overview)) - cowscope_timeline_view_get_label_width (v));
  g_assert_cmpfloat (fabs ((double) (t0 + width / 2 - target)), <=, ns_per_px + 1);
  /* Dragging the box moves it by the drag. */
  double box = cowscope_timeline_overview_time_to_x (overview, t0 + width / 2);
  cowscope_timeline_overview_drag (overview, box, -50);
  g_assert_cmpfloat (fabs ((double) (cowscope_view_state_get_visible_start (st) - (t0 - 50 * ns_per_px))),
                     <=, ns_per_px + 1);
  /* Drawn: the cursor (accent, 2 px) where it is. */
  gint64 cursor = cowscope_view_state_get_visible_start (st) + width / 3;
  cowscope_view_state_set_cursor (st, cursor);
  g_test_message ("overview mapped %d, %dx%d", gtk_widget_get_mapped (GTK_WIDGET (overview)),
                  gtk_widget_get_width (GTK_WIDGET (overview)), gtk_widget_get_height (GTK_WIDGET (overview)));
  g_assert_true (gui_test_wait_until (gui_test_widget_drawn, overview, 10));
  g_autoptr (GskRenderNode) node = snapshot_widget (GTK_WIDGET (overview));
  /* The accent colour: the legend's swatch for the cursor. */
  NodeSearch accent = { GSK_COLOR_NODE };
  CowscopeTimelineLegend *legend =
    COWSCOPE_TIMELINE_LEGEND (find_child (GTK_WIDGET (window), COWSCOPE_TYPE_TIMELINE_LEGEND));
  gboolean have_accent = FALSE;
  for (guint i = 0; i < cowscope_timeline_legend_get_n_entries (legend); i++)
    if (cowscope_timeline_legend_get_entry_kind (legend, i) < 0
        && strstr (cowscope_timeline_legend_get_entry (legend, i, NULL), "Cursor") != NULL)
      {
        cowscope_timeline_legend_get_entry (legend, i, &accent.color);
        have_accent = TRUE;
      }
  g_assert_true (have_accent);
  find_nodes (node, &accent);
  double cx = floor (cowscope_timeline_overview_time_to_x (overview, cursor));
  gboolean cursor_drawn = FALSE;
  for (guint i = 0; i < accent.bounds->len; i++)
    {
      graphene_rect_t *b = accent.bounds->pdata[i];
      cursor_drawn |= b->size.width == 2 && fabs (b->origin.x - (cx - 1)) < 0.5;
    }
  g_assert_true (cursor_drawn);
  g_ptr_array_unref (accent.bounds);
  /* The activity, counted in a worker thread, shows the copies. */
  g_assert_true (gui_test_wait_until (activity_ready, overview, 20));
  g_autoptr (GskRenderNode) counted = snapshot_widget (GTK_WIDGET (overview));
  NodeSearch copies = { GSK_COLOR_NODE };
  cowscope_timeline_view_get_kind_color (v, COWSCOPE_ITEM_COPY, &copies.color);
  find_nodes (counted, &copies);
  g_assert_cmpuint (copies.found, >, 0);
  g_ptr_array_unref (copies.bounds);
  screenshot (GTK_WIDGET (overview), "cowscope-timeline-overview.png");
}

/* ---- search ---------------------------------------------------------------------------- */

static gboolean
matches_ready (gpointer data)
{
  return cowscope_timeline_toolbar_get_matches (data, NULL, NULL, NULL);
}

static gboolean
names_loaded (gpointer data)
{
  return cowscope_timeline_toolbar_get_names (data) != NULL;
}

/* A tensor found by name: its events selected one after another, in
 * time order; a name that is not there says so. */
static void
test_search (void)
{
  CowscopeViewState *st = state ();
  CowscopeTimelineToolbar *toolbar =
    COWSCOPE_TIMELINE_TOOLBAR (find_child (GTK_WIDGET (window), COWSCOPE_TYPE_TIMELINE_TOOLBAR));
  /* The names are read once the search is used. */
  g_assert_null (cowscope_timeline_toolbar_get_names (toolbar));
  GtkWidget *entry = find_child (GTK_WIDGET (toolbar), GTK_TYPE_ENTRY);
  gtk_widget_grab_focus (entry);
  g_assert_true (gui_test_wait_until (names_loaded, toolbar, 20));
  GStrv names = cowscope_timeline_toolbar_get_names (toolbar);
  g_assert_cmpuint (g_strv_length (names), ==,
                    sql_int ("SELECT count(DISTINCT name) FROM tensors WHERE name != ''"));

  gint64 copy = sql_int ("SELECT min(m.seq) FROM materializations m JOIN tensors t"
                         " ON m.pid = t.pid AND m.tensor_id = t.id WHERE t.name IS NOT NULL");
  g_autofree char *id_sql = g_strdup_printf ("SELECT tensor_id FROM materializations WHERE seq = %"
                                             G_GINT64_FORMAT, copy);
  g_autofree char *name = g_strdup_printf ("t%" G_GINT64_FORMAT, sql_int (id_sql));
  g_autofree char *named = g_strdup_printf ("(SELECT pid, id FROM tensors WHERE name = '%s')", name);
  g_autofree char *filled = g_strdup_printf (
    "SELECT seq FROM (SELECT seq, begin_ts AS t FROM materializations WHERE (pid, tensor_id) IN %1$s"
    " UNION SELECT seq, ts FROM lazy_clones WHERE (pid, source_tensor_id) IN %1$s"
    " OR (pid, result_tensor_id) IN %1$s UNION SELECT seq, ts FROM violations"
    " WHERE (pid, writer_tensor_id) IN %1$s OR (pid, accessor_tensor_id) IN %1$s) ORDER BY t, seq",
    named);
  g_autoptr (GArray) expected = sql_seqs (filled);
  g_assert_cmpuint (expected->len, >=, 1);

  cowscope_view_state_set_selected_seq (st, -1);
  cowscope_view_state_set_cursor (st, info.start_ns);
  cowscope_timeline_toolbar_search (toolbar, name, 1);
  g_assert_true (gui_test_wait_until (matches_ready, toolbar, 20));
  guint n_tensors, n_events;
  const char *status;
  g_assert_true (cowscope_timeline_toolbar_get_matches (toolbar, &n_tensors, &n_events, &status));
  g_assert_cmpuint (n_events, ==, expected->len);
  g_assert_cmpint (cowscope_view_state_get_selected_seq (st), ==, g_array_index (expected, gint64, 0));
  g_autofree char *one = g_strdup_printf ("1 of %u", expected->len);
  g_assert_true (g_str_has_prefix (status, one));
  /* Its tensors are highlighted (the graph and the timeline outline them). */
  guint n_refs;
  const CowscopeObjectRef *refs = cowscope_view_state_get_highlights (st, &n_refs);
  g_assert_cmpuint (n_refs, >=, 1);
  g_assert_cmpint (refs[0].kind, ==, COWSCOPE_NODE_TENSOR);
  for (guint i = 1; i < expected->len; i++)
    {
      cowscope_timeline_toolbar_search (toolbar, name, 1);
      g_assert_cmpint (cowscope_view_state_get_selected_seq (st), ==, g_array_index (expected, gint64, i));
    }
  if (expected->len > 1)
    {
      cowscope_timeline_toolbar_search (toolbar, name, -1);
      g_assert_cmpint (cowscope_view_state_get_selected_seq (st), ==,
                       g_array_index (expected, gint64, expected->len - 2));
    }
  wait_frame ();
  screenshot (GTK_WIDGET (window), "cowscope-timeline-search.png");

  cowscope_timeline_toolbar_search (toolbar, "no-such-tensor", 1);
  g_assert_true (gui_test_wait_until (matches_ready, toolbar, 20));
  g_assert_true (cowscope_timeline_toolbar_get_matches (toolbar, &n_tensors, &n_events, &status));
  g_assert_cmpuint (n_tensors, ==, 0);
  g_assert_nonnull (strstr (status, "no-such-tensor"));
  cowscope_view_state_set_highlights (st, NULL, 0);
  cowscope_view_state_set_selected_seq (st, -1);
}

/* ---- flows ---------------------------------------------------------------------------- */

static gboolean
flows_found (gpointer data)
{
  return cowscope_timeline_view_get_flows (view ()) != NULL;
}

/* The selected copy's flows: from its lazy clone, and to its CUDA
 * memcpy; each drawn as an arrow from one lane to the other. */
static void
test_flows (void)
{
  CowscopeTimelineView *v = view ();
  CowscopeViewState *st = state ();
  cowscope_view_state_set_selected_seq (st, info.copy_seq);
  g_assert_true (gui_test_wait_until (flows_found, NULL, 20));
  GArray *flows = cowscope_timeline_view_get_flows (v);
  g_assert_cmpuint (flows->len, ==, 2);
  const CowscopeFlow *lc = &g_array_index (flows, CowscopeFlow, 0);
  const CowscopeFlow *cuda = &g_array_index (flows, CowscopeFlow, 1);
  g_assert_cmpint (lc->from.id, ==, info.copy_lazy_clone_seq);
  g_assert_cmpint (cuda->to.id, ==, info.copy_cuda_id);
  /* Both ends in view. */
  gint64 a = MIN (lc->from.ns, cuda->to.ns), b = MAX (lc->to.ns, cuda->to.ns);
  gint64 pad = MAX ((b - a) / 4, 1000);
  cowscope_view_state_set_visible (st, a - pad, b + pad);
  int from_lane = -1, to_lane = -1;
  for (guint i = 0; i < cowscope_timeline_view_get_n_lanes (v); i++)
    {
      CowscopeTimelineLane *lane = cowscope_timeline_view_get_lane (v, i);
      if (cowscope_timeline_lane_get_kind (lane) == COWSCOPE_LANE_THREAD
          && cowscope_timeline_lane_get_pid (lane) == cuda->from.pid
          && cowscope_timeline_lane_get_tid (lane) == cuda->from.tid)
        from_lane = (int) i;
      if (cowscope_timeline_lane_get_kind (lane) == COWSCOPE_LANE_CUDA_STREAM
          && cowscope_timeline_lane_get_pid (lane) == cuda->to.pid
          && cowscope_timeline_lane_get_tid (lane) == cuda->to.tid)
        to_lane = (int) i;
    }
  g_assert_cmpint (from_lane, >=, 0);
  g_assert_cmpint (to_lane, >=, 0);
  /* Pin the copy's thread lane and the CUDA lane, so that they are on
   * screen whatever the scroll (the thread's comes first). */
  CowscopeLaneFilter *filter = cowscope_timeline_view_get_lane_filter (v);
  cowscope_lane_filter_set_pinned (filter, cowscope_timeline_view_get_lane (v, from_lane), TRUE);
  cowscope_lane_filter_set_pinned (filter, cowscope_timeline_view_get_lane (v, to_lane), TRUE);
  wait_frame ();
  g_autoptr (GskRenderNode) node = snapshot_widget (GTK_WIDGET (v));
  NodeSearch curves = { GSK_CAIRO_NODE };
  find_nodes (node, &curves);
  double x0 = cowscope_timeline_view_time_to_x (v, cuda->from.ns);
  double x1 = cowscope_timeline_view_time_to_x (v, cuda->to.ns);
  int y_thread, y_cuda;
  cowscope_timeline_view_get_lane_area (v, 0, &y_thread, NULL);
  cowscope_timeline_view_get_lane_area (v, 1, &y_cuda, NULL);
  gboolean arrow = FALSE;
  for (guint i = 0; i < curves.bounds->len; i++)
    {
      graphene_rect_t *r = curves.bounds->pdata[i];
      arrow |= r->origin.x <= MIN (x0, x1) && r->origin.x + r->size.width >= MAX (x0, x1)
               && r->origin.y <= MIN (y_thread, y_cuda) + 40
               && r->origin.y + r->size.height >= MAX (y_thread, y_cuda);
    }
  g_assert_true (arrow);
  g_ptr_array_unref (curves.bounds);
  screenshot (GTK_WIDGET (window), "cowscope-timeline-flows.png");
  cowscope_lane_filter_reset (filter);
  cowscope_lane_filter_set_pinned (filter, cowscope_timeline_view_get_lane (v, 0), FALSE);
  cowscope_lane_filter_set_pinned (filter, cowscope_timeline_view_get_lane (v, 0), FALSE);
  g_assert_cmpuint (cowscope_timeline_view_get_n_pinned (v), ==, 0);
  cowscope_view_state_set_selected_seq (st, -1);
}

/* ---- defect 8: named ranges, on a recorded program ---------------------------------------- */

/* A merged session (cowscope-cli merge, two recordings of the demo): each
 * process lane's label says its member ("rank 1 · cowscope-demo"), as the
 * model titles it, with its pid on the second line. */
static void
test_rank_labels (void)
{
  const char *cli = g_getenv ("COWSCOPE_CLI");
  if (demo_path == NULL || cli == NULL)
    {
      g_test_skip ("cowscope-cli or the demo is not built");
      return;
    }
  g_autoptr (GError) error = NULL;
  g_autofree char *copy = g_build_filename (tmp_dir, "training-b.cowscope", NULL);
  g_autofree char *merged = g_build_filename (tmp_dir, "merged.cowscope", NULL);
  /* A second recording (merge refuses a copy of the same one). */
  const char *record[] = { cli, "record", "--force", "-o", copy, "--", g_getenv ("COWSCOPE_DEMO"),
                           "--quiet", "--steps", "1", "training", NULL };
  int status = 0;
  g_autofree char *rout = NULL, *rerr = NULL;
  g_assert_true (g_spawn_sync (NULL, (char **) record, NULL, G_SPAWN_DEFAULT, NULL, NULL, &rout,
                               &rerr, &status, &error));
  g_assert_no_error (error);
  if (!WIFEXITED (status) || WEXITSTATUS (status) != 0)
    g_error ("cannot record the second demo: %s%s", rout, rerr);
  const char *args[] = { cli, "merge", "--force", "-o", merged, "--label", "rank 0", "--label",
                         "rank 1", demo_path, copy, NULL };
  g_autofree char *out = NULL, *err = NULL;
  g_assert_true (g_spawn_sync (NULL, (char **) args, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out,
                               &err, &status, &error));
  g_assert_no_error (error);
  if (!WIFEXITED (status) || WEXITSTATUS (status) != 0)
    g_error ("cowscope-cli merge failed: %s%s", out, err);

  CowscopeWindow *w = cowscope_window_new (app);
  gtk_window_set_default_size (GTK_WINDOW (w), 1280, 800);
  gtk_window_present (GTK_WINDOW (w));
  g_autoptr (GFile) file = g_file_new_for_path (merged);
  cowscope_window_open (w, file);
  g_assert_true (gui_test_wait_until (session_loaded, w, 20));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (w), "win.show-view", "s", "timeline"));
  CowscopeTimelineView *v = cowscope_window_get_timeline_view (w);
  wait_frame_of (v);
  guint ranks = 0;
  for (guint i = 0; i < cowscope_timeline_view_get_n_lanes (v); i++)
    {
      CowscopeTimelineLane *lane = cowscope_timeline_view_get_lane (v, i);
      if (cowscope_timeline_lane_get_kind (lane) != COWSCOPE_LANE_PROCESS)
        continue;
      g_autofree char *name = NULL, *detail = NULL;
      cowscope_timeline_view_get_lane_label (v, i, &name, &detail, NULL);
      g_test_message ("process lane: %s / %s", name, detail);
      g_autofree char *pid = g_strdup_printf ("%u", cowscope_timeline_lane_get_pid (lane));
      g_assert_nonnull (strstr (detail, pid));
      if (g_str_has_prefix (name, "rank 0 · ") || g_str_has_prefix (name, "rank 1 · "))
        ranks++;
    }
  g_assert_cmpuint (ranks, ==, 2);
  gtk_window_destroy (GTK_WINDOW (w));
  gui_test_spin (50);
  g_unlink (copy);
  g_unlink (merged);
}

/* The demo's training steps ("step 3", "forward", "backward"): drawn with
 * their names inside their boxes, named in the tooltip. */
static void
test_named_ranges (void)
{
  if (demo_path == NULL)
    {
      g_test_skip ("cowscope-cli or the demo is not built");
      return;
    }
  CowscopeWindow *w = cowscope_window_new (app);
  gtk_window_set_default_size (GTK_WINDOW (w), 1280, 800);
  gtk_window_present (GTK_WINDOW (w));
  g_autoptr (GFile) file = g_file_new_for_path (demo_path);
  cowscope_window_open (w, file);
  g_assert_true (gui_test_wait_until (session_loaded, w, 20));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (w), "win.show-view", "s", "timeline"));
  CowscopeTimelineView *v = cowscope_window_get_timeline_view (w);
  CowscopeViewState *st = cowscope_window_get_view_state (w);
  g_assert_true (gui_test_wait_until (names_read, v, 20));

  gint64 b = sql_int_on (demo_path, "SELECT begin_ts FROM ranges WHERE name = 'step 3'");
  gint64 e = sql_int_on (demo_path, "SELECT end_ts FROM ranges WHERE name = 'step 3'");
  gint64 tid = sql_int_on (demo_path, "SELECT tid FROM ranges WHERE name = 'step 3'");
  /* Step 3 over the middle third of the window. */
  cowscope_view_state_set_visible (st, b - (e - b), e + (e - b));
  int lane = -1;
  for (guint i = 0; i < cowscope_timeline_view_get_n_lanes (v); i++)
    {
      CowscopeTimelineLane *l = cowscope_timeline_view_get_lane (v, i);
      if (cowscope_timeline_lane_get_kind (l) == COWSCOPE_LANE_THREAD
          && cowscope_timeline_lane_get_tid (l) == tid)
        lane = (int) i;
    }
  g_assert_cmpint (lane, >=, 0);
  cowscope_lane_filter_set_pinned (cowscope_timeline_view_get_lane_filter (v),
                                   cowscope_timeline_view_get_lane (v, lane), TRUE);
  g_assert_cmpuint (cowscope_timeline_view_get_n_pinned (v), ==, 1);
  int y, h;
  cowscope_timeline_view_get_lane_area (v, 0, &y, &h);
  g_assert_true (gui_test_wait_until (gui_test_widget_drawn, v, 10));
  wait_frame_of (v);
  g_autoptr (GskRenderNode) node = snapshot_widget (GTK_WIDGET (v));
  PangoLayout *layout = range_layout (v);
  graphene_rect_t where;
  g_assert_cmpuint (count_text (node, layout, "step 3", &where), ==, 1);
  double x0 = cowscope_timeline_view_time_to_x (v, b), x1 = cowscope_timeline_view_time_to_x (v, e);
  g_test_message ("“step 3” at %.1f..%.1f, box %.1f..%.1f", where.origin.x,
                  where.origin.x + where.size.width, x0, x1);
  g_assert_cmpfloat (where.origin.x, >=, x0);
  g_assert_cmpfloat (where.origin.x, <, x1);
  g_assert_cmpfloat (where.origin.y, >=, y);
  g_assert_cmpfloat (where.origin.y, <, y + h);
  /* Its children, each written whole when its box has room for the
   * name, cut at the end when it has less, not at all when too narrow. */
  const char *const children[] = { "forward", "backward" };
  for (guint i = 0; i < G_N_ELEMENTS (children); i++)
    {
      g_autofree char *bsql = g_strdup_printf ("SELECT begin_ts FROM ranges WHERE name = '%s'"
                                               " AND parent_id = (SELECT id FROM ranges"
                                               " WHERE name = 'step 3')", children[i]);
      g_autofree char *esql = g_strdup_printf ("SELECT end_ts FROM ranges WHERE name = '%s'"
                                               " AND parent_id = (SELECT id FROM ranges"
                                               " WHERE name = 'step 3')", children[i]);
      double box = cowscope_timeline_view_time_to_x (v, sql_int_on (demo_path, esql))
                   - cowscope_timeline_view_time_to_x (v, sql_int_on (demo_path, bsql));
      int text_w;
      pango_layout_set_text (layout, children[i], -1);
      pango_layout_get_pixel_size (layout, &text_w, NULL);
      g_test_message ("“%s”: box %.1f px, text %d px", children[i], box, text_w);
      if (box >= text_w + 8)
        g_assert_cmpuint (count_text (node, layout, children[i], NULL), >=, 1);
      else if (box >= COWSCOPE_LANE_MIN_LABELLED_SPAN + 2)
        g_assert_cmpuint (count_text_prefix (node, layout, children[i], 1, NULL), >=, 1);
    }
  /* The tooltip over the box names the range. */
  g_autofree char *tip = cowscope_timeline_view_get_tooltip_at (v, where.origin.x + 2,
                                                                where.origin.y + where.size.height / 2);
  g_assert_nonnull (tip);
  g_test_message ("tooltip: %s", tip);
  g_assert_nonnull (strstr (tip, "“step 3”"));
  /* A click on it selects its time range. */
  cowscope_timeline_view_click (v, where.origin.x + 2, where.origin.y + where.size.height / 2);
  g_assert_cmpint (cowscope_view_state_get_range_start (st), ==, b);
  g_assert_cmpint (cowscope_view_state_get_range_end (st), ==, e);
  cowscope_view_state_set_range (st, -1, -1);

  /* The labels of a recorded program's threads show their ids whole. */
  for (guint i = 0; i < cowscope_timeline_view_get_n_lanes (v); i++)
    {
      g_autofree char *name = NULL, *detail = NULL;
      guint cut = 0;
      if (cowscope_timeline_lane_get_kind (cowscope_timeline_view_get_lane (v, i)) == COWSCOPE_LANE_THREAD
          && cowscope_timeline_view_get_lane_label (v, i, &name, &detail, &cut))
        g_assert_cmpuint (cut & 2, ==, 0);
    }
  wait_frame_of (v);
  screenshot (GTK_WIDGET (w), "cowscope-timeline-ranges.png");
  AdwStyleManager *manager = adw_style_manager_get_default ();
  adw_style_manager_set_color_scheme (manager, ADW_COLOR_SCHEME_FORCE_DARK);
  wait_frame_of (v);
  screenshot (GTK_WIDGET (w), "cowscope-timeline-ranges-dark.png");
  adw_style_manager_set_color_scheme (manager, ADW_COLOR_SCHEME_DEFAULT);
  cowscope_lane_filter_reset (cowscope_timeline_view_get_lane_filter (v));
  g_object_unref (layout);
  gtk_window_destroy (GTK_WINDOW (w));
  gui_test_spin (50);
}

/* The window at a small size: the toolbar and labels still fit. */
typedef struct {
  GtkWidget *window;
  int width;
} WidthWait;

static gboolean
has_width (gpointer data)
{
  WidthWait *w = data;
  GdkSurface *surface = gtk_native_get_surface (GTK_NATIVE (w->window));
  return surface != NULL && gdk_surface_get_width (surface) == w->width;
}

/* At the window's minimum width (what GTK measures with the session
 * open: the timeline's toolbar and label column included) the lanes keep
 * room for their events and the label column its width; every control
 * of the toolbar is inside the window. */
static void
test_small_window (void)
{
  int min = 0;
  gtk_widget_measure (GTK_WIDGET (window), GTK_ORIENTATION_HORIZONTAL, -1, &min, NULL, NULL,
                      NULL);
  g_test_message ("minimum window width with a session: %d px", min);
  WidthWait w = { GTK_WIDGET (window), min };
  gtk_window_set_default_size (GTK_WINDOW (window), min, 600);
  g_assert_true (gui_test_wait_until (has_width, &w, 10));
  gtk_widget_activate_action (GTK_WIDGET (view ()), "timeline.zoom-reset", NULL);
  gui_test_spin (300);
  wait_frame ();
  screenshot (GTK_WIDGET (window), "cowscope-timeline-small.png");
  int label_width = cowscope_timeline_view_get_label_width (view ());
  g_assert_cmpint (label_width, ==, g_settings_get_int (settings (), "timeline-label-width"));
  g_assert_cmpint (gtk_widget_get_width (GTK_WIDGET (view ())), >, label_width + 200);
  GtkWidget *toolbar = find_child (GTK_WIDGET (window), COWSCOPE_TYPE_TIMELINE_TOOLBAR);
  g_assert_nonnull (toolbar);
  graphene_rect_t window_box, box;
  g_assert_true (gtk_widget_compute_bounds (GTK_WIDGET (window), GTK_WIDGET (window), &window_box));
  for (GtkWidget *c = gtk_widget_get_first_child (toolbar); c != NULL;
       c = gtk_widget_get_next_sibling (c))
    if (gtk_widget_get_visible (c))
      {
        g_assert_true (gtk_widget_compute_bounds (c, GTK_WIDGET (window), &box));
        g_assert_true (graphene_rect_contains_rect (&window_box, &box));
        int cmin = 0;
        gtk_widget_measure (c, GTK_ORIENTATION_HORIZONTAL, -1, &cmin, NULL, NULL, NULL);
        g_assert_cmpfloat (box.size.width, >=, cmin);
      }
  gtk_window_set_default_size (GTK_WINDOW (window), 1280, 800);
  gui_test_spin (200);
}

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

  tmp_dir = g_dir_make_tmp ("cowscope-lanes-XXXXXX", &error);
  g_assert_no_error (error);
  session_path = g_build_filename (tmp_dir, "fixture.cowscope", NULL);
  SessionFixtureOptions options;
  session_fixture_options_small (&options);
  if (!session_fixture_generate (session_path, &options, &info, &error))
    g_error ("fixture: %s", error->message);

  const char *cli = g_getenv ("COWSCOPE_CLI"), *demo = g_getenv ("COWSCOPE_DEMO");
  if (cli != NULL && demo != NULL)
    {
      demo_path = g_build_filename (tmp_dir, "training.cowscope", NULL);
      const char *args[] = { cli, "record", "--force", "-o", demo_path, "--", demo, "--quiet",
                             "training", NULL };
      g_autofree char *out = NULL, *err = NULL;
      int status = 0;
      if (!g_spawn_sync (NULL, (char **) args, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err,
                         &status, &error)
          || !WIFEXITED (status) || WEXITSTATUS (status) != 0)
        g_error ("cannot record the training demo: %s%s%s", error ? error->message : "",
                 out ? out : "", err ? err : "");
    }

  app = cowscope_application_new ();
  g_application_set_flags (G_APPLICATION (app), G_APPLICATION_HANDLES_OPEN | G_APPLICATION_NON_UNIQUE);
  g_assert_true (g_application_register (G_APPLICATION (app), NULL, &error));

  g_test_add_func ("/cowscope/timeline-lanes/open", test_open);
  g_test_add_func ("/cowscope/timeline-lanes/labels-readable", test_labels);
  g_test_add_func ("/cowscope/timeline-lanes/label-column-resized", test_label_resize);
  g_test_add_func ("/cowscope/timeline-lanes/preferences", test_preferences);
  g_test_add_func ("/cowscope/timeline-lanes/wheel", test_wheel);
  g_test_add_func ("/cowscope/timeline-lanes/legend", test_legend);
  g_test_add_func ("/cowscope/timeline-lanes/cursor-keys", test_cursor_keys);
  g_test_add_func ("/cowscope/timeline-lanes/step-keys", test_step_keys);
  g_test_add_func ("/cowscope/timeline-lanes/shortcuts-listed", test_shortcuts_listed);
  g_test_add_func ("/cowscope/timeline-lanes/manage-lanes", test_manage_lanes);
  g_test_add_func ("/cowscope/timeline-lanes/overview", test_overview);
  g_test_add_func ("/cowscope/timeline-lanes/search", test_search);
  g_test_add_func ("/cowscope/timeline-lanes/flows", test_flows);
  g_test_add_func ("/cowscope/timeline-lanes/named-ranges", test_named_ranges);
  g_test_add_func ("/cowscope/timeline-lanes/rank-labels", test_rank_labels);
  g_test_add_func ("/cowscope/timeline-lanes/small-window", test_small_window);
  g_test_add_func ("/cowscope/timeline-lanes/close", test_close);
  int status = g_test_run ();

  g_object_unref (app);
  g_unlink (session_path);
  if (demo_path != NULL)
    g_unlink (demo_path);
  g_rmdir (tmp_dir);
  g_free (session_path);
  g_free (demo_path);
  g_free (tmp_dir);
  return status;
}
