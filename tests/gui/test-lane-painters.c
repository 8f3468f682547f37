/* test-lane-painters.c — the timeline's lane painters and overlays as the
 * pure functions they are: hand-built query results and a palette of
 * made-up colours in, render nodes out, checked for what is drawn where
 * and in which colour. */
#include <gtk/gtk.h>
#include <math.h>
#include <string.h>

#include "cowscope-lane-painter.h"
#include "cowscope-timeline-lane-private.h"
#include "cowscope-timeline-overlay.h"

/* A palette whose every colour is different and opaque. */
static CowscopeTimelinePalette
test_palette (void)
{
  CowscopeTimelinePalette p;
  memset (&p, 0, sizeof p);
  for (guint k = 0; k < COWSCOPE_N_ITEM_KINDS; k++)
    p.kinds[k] = (GdkRGBA) { (k + 1) / 64.0f, 0.25f, 0.5f, 1 };
  for (guint c = 0; c < COWSCOPE_N_COUNTERS; c++)
    p.counters[c] = (GdkRGBA) { 0.75f, (c + 1) / 8.0f, 0.5f, 1 };
  p.foreground = (GdkRGBA) { 0, 0, 0, 1 };
  p.label_backdrop = (GdkRGBA) { 0.9f, 0.9f, 0.1f, 1 };
  p.accent = (GdkRGBA) { 0.1f, 0.2f, 0.9f, 1 };
  p.overlay = (GdkRGBA) { 0.95f, 0.95f, 0.95f, 1 };
  return p;
}

typedef struct {
  GdkRGBA color;
  graphene_rect_t bounds;
} Rect;

/* Appends to @out every colour node under @node, in the coordinates of
 * the node's root (translations applied). */
static void
collect (GskRenderNode *node, float dx, float dy, GArray *out)
{
  switch (gsk_render_node_get_node_type (node))
    {
    case GSK_COLOR_NODE:
      {
        Rect r = { *gsk_color_node_get_color (node) };
        gsk_render_node_get_bounds (node, &r.bounds);
        r.bounds.origin.x += dx, r.bounds.origin.y += dy;
        g_array_append_val (out, r);
      }
      break;
    case GSK_CONTAINER_NODE:
      for (guint i = 0; i < gsk_container_node_get_n_children (node); i++)
        collect (gsk_container_node_get_child (node, i), dx, dy, out);
      break;
    case GSK_TRANSFORM_NODE:
      {
        float tx = 0, ty = 0;
        gsk_transform_to_translate (gsk_transform_node_get_transform (node), &tx, &ty);
        collect (gsk_transform_node_get_child (node), dx + tx, dy + ty, out);
      }
      break;
    case GSK_CLIP_NODE:
      collect (gsk_clip_node_get_child (node), dx, dy, out);
      break;
    case GSK_ROUNDED_CLIP_NODE:
      collect (gsk_rounded_clip_node_get_child (node), dx, dy, out);
      break;
    default:
      break;
    }
}

/* How many colour rectangles of @color at (x, y, w, h) @rects hold. */
static guint
count_rects (GArray *rects, const GdkRGBA *color, float x, float y, float w, float h)
{
  guint n = 0;
  for (guint i = 0; i < rects->len; i++)
    {
      const Rect *r = &g_array_index (rects, Rect, i);
      if (gdk_rgba_equal (&r->color, color) && r->bounds.origin.x == x && r->bounds.origin.y == y
          && r->bounds.size.width == w && r->bounds.size.height == h)
        n++;
    }
  return n;
}

static CowscopeTimelineItem
instant (gint64 t, guint16 pixel, guint16 kind, gint64 id)
{
  return (CowscopeTimelineItem) { .start_ns = t, .end_ns = t, .id = id, .count = 1,
                                  .kind = kind, .kinds = 1u << kind, .pixel = pixel };
}

static CowscopeTimelineItem
span (gint64 start, gint64 end, guint16 kind, gint64 id)
{
  return (CowscopeTimelineItem) { .start_ns = start, .end_ns = end, .id = id, .count = 1,
                                  .kind = kind, .kinds = 1u << kind, .pixel = start / 10 };
}

/* [0, 1000) ns at 100 px: 10 ns a pixel. */
static CowscopeTimelineWindow *
window_new (const CowscopeTimelineItem *items, guint n_items, const CowscopeTimelineItem *spans,
            guint n_spans)
{
  GArray *a = g_array_new (FALSE, FALSE, sizeof (CowscopeTimelineItem));
  GArray *b = g_array_new (FALSE, FALSE, sizeof (CowscopeTimelineItem));
  g_array_append_vals (a, items, n_items);
  g_array_append_vals (b, spans, n_spans);
  return cowscope_timeline_window_new (0, 1000, 100, a, b,
                                       g_array_new (FALSE, FALSE, sizeof (CowscopeCounterSample)));
}

/* A thread lane: a lone lazy clone 3 px wide in the upper half; a
 * bucket of tensor events drawn as a tick, with the copy it hides as a
 * full-height column on top; a copy span as a box where its times are;
 * two nested user ranges in two rows. */
static void
test_event_lane (void)
{
  CowscopeTimelinePalette p = test_palette ();
  CowscopeTimelineItem bucket = { .start_ns = 200, .end_ns = 210, .id = -1, .count = 5,
                                  .kind = COWSCOPE_ITEM_TENSOR, .pixel = 20,
                                  .kinds = 1u << COWSCOPE_ITEM_TENSOR | 1u << COWSCOPE_ITEM_COPY };
  CowscopeTimelineItem items[] = { instant (100, 10, COWSCOPE_ITEM_LAZY_CLONE, 7), bucket };
  CowscopeTimelineItem spans[] = { span (300, 500, COWSCOPE_ITEM_COPY, 9),
                                   span (100, 900, COWSCOPE_ITEM_RANGE, 1),
                                   span (200, 300, COWSCOPE_ITEM_RANGE, 2) };
  g_autoptr (CowscopeTimelineWindow) win = window_new (items, 2, spans, 3);
  g_autoptr (GskRenderNode) node = cowscope_event_lane_paint (win, &p, FALSE, 46);
  g_autoptr (GArray) rects = g_array_new (FALSE, FALSE, sizeof (Rect));
  collect (node, 0, 0, rects);

  g_assert_cmpuint (count_rects (rects, &p.kinds[COWSCOPE_ITEM_LAZY_CLONE], 9, 3, 3, 10), ==, 1);
  /* 4 + 2 log2 (5) = 8.6 px tall, at the bottom of the 20 px row. */
  float tick = 4.0f + 2.0f * (float) log2 (5.0);
  g_assert_cmpuint (count_rects (rects, &p.kinds[COWSCOPE_ITEM_TENSOR], 20, 23 - tick, 1, tick), ==, 1);
  g_assert_cmpuint (count_rects (rects, &p.kinds[COWSCOPE_ITEM_COPY], 20, 3, 1, 20), ==, 1);
  g_assert_cmpuint (count_rects (rects, &p.kinds[COWSCOPE_ITEM_COPY], 30, 3, 20, 20), ==, 1);
  GdkRGBA range = p.kinds[COWSCOPE_ITEM_RANGE];
  range.alpha *= 0.8f;
  g_assert_cmpuint (count_rects (rects, &range, 10, 26, 80, 5), ==, 1);
  g_assert_cmpuint (count_rects (rects, &range, 20, 32, 10, 5), ==, 1);

  /* A CUDA lane draws everything as full-height columns. */
  g_autoptr (GskRenderNode) cuda = cowscope_event_lane_paint (win, &p, TRUE, 28);
  g_array_set_size (rects, 0);
  collect (cuda, 0, 0, rects);
  g_assert_cmpuint (count_rects (rects, &p.kinds[COWSCOPE_ITEM_LAZY_CLONE], 10, 3, 1, 22), ==, 1);

  /* Nothing to draw is an empty node, not NULL. */
  g_autoptr (CowscopeTimelineWindow) empty = window_new (NULL, 0, NULL, 0);
  g_autoptr (GskRenderNode) none = cowscope_event_lane_paint (empty, &p, FALSE, 46);
  g_assert_nonnull (none);
}

/* A process lane packs overlapping spans into rows: the second of two
 * overlapping limbo spans goes one row down, a later one back up. */
static void
test_process_lane (void)
{
  CowscopeTimelinePalette p = test_palette ();
  CowscopeTimelineItem spans[] = { span (100, 500, COWSCOPE_ITEM_IPC_LIMBO, 1),
                                   span (200, 300, COWSCOPE_ITEM_IPC_HELD, 2),
                                   span (600, 700, COWSCOPE_ITEM_IPC_LIMBO, 3) };
  g_autoptr (CowscopeTimelineWindow) win = window_new (NULL, 0, spans, 3);
  g_autoptr (GskRenderNode) node = cowscope_process_lane_paint (win, &p, 64);
  g_autoptr (GArray) rects = g_array_new (FALSE, FALSE, sizeof (Rect));
  collect (node, 0, 0, rects);
  GdkRGBA limbo = p.kinds[COWSCOPE_ITEM_IPC_LIMBO], held = p.kinds[COWSCOPE_ITEM_IPC_HELD];
  limbo.alpha *= 0.85f, held.alpha *= 0.85f;
  g_assert_cmpuint (count_rects (rects, &limbo, 10, 16, 40, 5), ==, 1);
  g_assert_cmpuint (count_rects (rects, &held, 20, 22, 10, 5), ==, 1);
  g_assert_cmpuint (count_rects (rects, &limbo, 60, 16, 10, 5), ==, 1);
}

/* A counter lane writes its scale on a backdrop in the top right corner
 * and leaves the layout's font as it was. */
static void
test_counter_lane (void)
{
  CowscopeTimelinePalette p = test_palette ();
  GArray *samples = g_array_new (FALSE, FALSE, sizeof (CowscopeCounterSample));
  for (guint16 px = 0; px < 100; px++)
    {
      CowscopeCounterSample s = { px * 10, px * 10 + 10, px, px, px, px };
      g_array_append_val (samples, s);
    }
  g_autoptr (CowscopeTimelineWindow) win =
    cowscope_timeline_window_new (0, 1000, 100, g_array_new (FALSE, FALSE, sizeof (CowscopeTimelineItem)),
                                  g_array_new (FALSE, FALSE, sizeof (CowscopeTimelineItem)), samples);
  PangoLayout *layout = pango_layout_new (pango_font_map_create_context (pango_cairo_font_map_get_default ()));
  g_autoptr (GskRenderNode) node =
    cowscope_counter_lane_paint (win, &p, COWSCOPE_COUNTER_LIVE_STORAGES, 40, layout);
  g_autoptr (GArray) rects = g_array_new (FALSE, FALSE, sizeof (Rect));
  collect (node, 0, 0, rects);
  guint backdrops = 0;
  for (guint i = 0; i < rects->len; i++)
    {
      const Rect *r = &g_array_index (rects, Rect, i);
      if (gdk_rgba_equal (&r->color, &p.label_backdrop))
        {
          backdrops++;
          g_assert_cmpfloat (r->bounds.origin.x + r->bounds.size.width, ==, 100 - 3);
          g_assert_cmpfloat (r->bounds.origin.y, ==, 1);
        }
    }
  g_assert_cmpuint (backdrops, ==, 1);
  g_assert_cmpstr (pango_layout_get_text (layout), ==, "99");
  g_object_unref (pango_layout_get_context (layout));
  g_object_unref (layout);
}

/* The title painter writes a process lane's title in bold and gives the
 * layout back with the attributes it had (the timeline's font). */
static void
test_title_keeps_font (void)
{
  CowscopeTimelinePalette p = test_palette ();
  PangoContext *context = pango_font_map_create_context (pango_cairo_font_map_get_default ());
  PangoLayout *layout = pango_layout_new (context);
  PangoAttrList *font = pango_attr_list_new ();
  pango_attr_list_insert (font, pango_attr_scale_new (0.85));
  pango_layout_set_attributes (layout, font);
  CowscopeLaneIndex *index = cowscope_lane_index_new ();
  cowscope_lane_index_finish (index);
  g_autoptr (CowscopeTimelineLane) lane =
    cowscope_timeline_lane_new_events (COWSCOPE_LANE_PROCESS, "train (42)", 42, 0, -1, index);
  g_autoptr (GskRenderNode) node = cowscope_lane_title_paint (lane, &p, 176, 64, layout);
  g_assert_nonnull (node);
  g_assert_true (pango_layout_get_attributes (layout) == font);
  g_assert_cmpint (pango_layout_get_width (layout), ==, -1);
  g_assert_cmpint (pango_layout_get_ellipsize (layout), ==, PANGO_ELLIPSIZE_NONE);
  pango_attr_list_unref (font);
  g_object_unref (layout);
  g_object_unref (context);
}

/* Overlays: the selected event's outline hugs its span in the event row,
 * at the lane's offset; a highlight beyond the data area is not drawn. */
static void
test_overlays (void)
{
  CowscopeTimelinePalette p = test_palette ();
  CowscopeTimelineItem spans[] = { span (300, 500, COWSCOPE_ITEM_COPY, 9) };
  g_autoptr (CowscopeTimelineWindow) win = window_new (NULL, 0, spans, 1);
  GtkSnapshot *snapshot = gtk_snapshot_new ();
  cowscope_overlay_selected (snapshot, win, 9, 176, 100, &p.foreground);
  g_autoptr (GskRenderNode) node = gtk_snapshot_free_to_node (snapshot);
  g_assert_cmpint (gsk_render_node_get_node_type (node), ==, GSK_BORDER_NODE);
  graphene_rect_t b;
  gsk_render_node_get_bounds (node, &b);
  g_assert_cmpfloat (b.origin.x, ==, 176 + 30 - 2);
  g_assert_cmpfloat (b.origin.y, ==, 100 + 3 - 2);
  g_assert_cmpfloat (b.size.width, ==, 24);
  g_assert_cmpfloat (b.size.height, ==, 24);

  snapshot = gtk_snapshot_new ();
  cowscope_overlay_selected (snapshot, win, 10, 176, 100, &p.foreground); /* not shown */
  cowscope_overlay_highlighted (snapshot, 50, 60, 176, 1000, 100, &p.highlight);
  g_autoptr (GskRenderNode) nothing = gtk_snapshot_free_to_node (snapshot);
  g_assert_null (nothing);
}

int
main (int argc, char *argv[])
{
  gtk_test_init (&argc, &argv, NULL);
  g_test_add_func ("/cowscope/lane-painters/event-lane", test_event_lane);
  g_test_add_func ("/cowscope/lane-painters/process-lane", test_process_lane);
  g_test_add_func ("/cowscope/lane-painters/counter-lane", test_counter_lane);
  g_test_add_func ("/cowscope/lane-painters/title-keeps-font", test_title_keeps_font);
  g_test_add_func ("/cowscope/lane-painters/overlays", test_overlays);
  return g_test_run ();
}
