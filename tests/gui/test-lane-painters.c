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

/* Glyphs of every text node under @node, one GArray of glyph ids each. */
static void
collect_glyphs (GskRenderNode *node, GPtrArray *out)
{
  switch (gsk_render_node_get_node_type (node))
    {
    case GSK_TEXT_NODE:
      {
        /* Its own getter: gsk_text_node_get_glyphs() is declared pure,
         * so its out argument may be read before it is set. */
        guint n = gsk_text_node_get_num_glyphs (node);
        const PangoGlyphInfo *glyphs = gsk_text_node_get_glyphs (node, NULL);
        GArray *ids = g_array_new (FALSE, FALSE, sizeof (PangoGlyph));
        for (guint i = 0; i < n; i++)
          g_array_append_val (ids, glyphs[i].glyph);
        g_ptr_array_add (out, ids);
      }
      break;
    case GSK_CONTAINER_NODE:
      for (guint i = 0; i < gsk_container_node_get_n_children (node); i++)
        collect_glyphs (gsk_container_node_get_child (node, i), out);
      break;
    case GSK_TRANSFORM_NODE:
      collect_glyphs (gsk_transform_node_get_child (node), out);
      break;
    case GSK_CLIP_NODE:
      collect_glyphs (gsk_clip_node_get_child (node), out);
      break;
    default:
      break;
    }
}

/* The glyphs @layout's font gives @text. */
static GArray *
glyphs_of (PangoLayout *layout, const char *text)
{
  PangoLayout *copy = pango_layout_copy (layout);
  pango_layout_set_width (copy, -1);
  pango_layout_set_text (copy, text, -1);
  GArray *ids = g_array_new (FALSE, FALSE, sizeof (PangoGlyph));
  for (GSList *r = pango_layout_get_line_readonly (copy, 0)->runs; r != NULL; r = r->next)
    {
      PangoGlyphString *gs = ((PangoGlyphItem *) r->data)->glyphs;
      for (int i = 0; i < gs->num_glyphs; i++)
        g_array_append_val (ids, gs->glyphs[i].glyph);
    }
  g_object_unref (copy);
  return ids;
}

/* How many text nodes under @node write @text with @layout's font: all
 * of it, or (when @prefix) at least its first @prefix glyphs, as an
 * ellipsized text does. */
static guint
count_text (GskRenderNode *node, PangoLayout *layout, const char *text, guint prefix)
{
  g_autoptr (GPtrArray) nodes = g_ptr_array_new_with_free_func ((GDestroyNotify) g_array_unref);
  collect_glyphs (node, nodes);
  g_autoptr (GArray) want = glyphs_of (layout, text);
  guint found = 0;
  for (guint i = 0; i < nodes->len; i++)
    {
      GArray *have = nodes->pdata[i];
      guint need = prefix > 0 ? MIN (prefix, want->len) : want->len;
      if (have->len < need || (prefix == 0 && have->len != want->len))
        continue;
      if (memcmp (have->data, want->data, need * sizeof (PangoGlyph)) == 0)
        found++;
    }
  return found;
}

static PangoLayout *
test_layout (void)
{
  PangoContext *context = pango_font_map_create_context (pango_cairo_font_map_get_default ());
  PangoLayout *layout = pango_layout_new (context);
  g_object_unref (context);
  /* About the timeline's range font (the widget's, a little smaller). */
  PangoFontDescription *font = pango_font_description_from_string ("Sans 8");
  pango_layout_set_font_description (layout, font);
  pango_font_description_free (font);
  return layout;
}

/* A thread lane: a lone lazy clone 3 px wide in the upper half; a
 * bucket of tensor events drawn as a tick, with the copy it hides as a
 * full-height column on top; a copy span as a box where its times are;
 * nested user ranges in the rows of their depth, each named inside its
 * box when wide enough, the name ellipsized to the box. */
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
                                   span (150, 850, COWSCOPE_ITEM_RANGE, 2),
                                   span (850, 880, COWSCOPE_ITEM_RANGE, 3),
                                   span (880, 890, COWSCOPE_ITEM_RANGE, 4) };
  const CowscopeNamedRange rows[] = {
    { 42, 1, 43, -1, "step 3" },
    { 42, 2, 43, 1, "forward" },
    { 42, 3, 43, 1, "a long range name that cannot fit" },
    { 42, 4, 43, 1, "backward" },
  };
  g_autoptr (CowscopeRangeNames) names = cowscope_range_names_new (rows, G_N_ELEMENTS (rows));
  g_assert_cmpuint (cowscope_range_names_get_thread_rows (names, 42, 43), ==, 2);
  CowscopeLaneGeometry geo;
  cowscope_lane_geometry_init (&geo, COWSCOPE_LANE_THREAD, 26, 2, 12, 0);
  g_assert_cmpfloat (geo.event_y, ==, 3);
  g_assert_cmpfloat (geo.event_h, ==, 20);
  g_assert_cmpfloat (geo.range_y, ==, 26);
  g_assert_cmpfloat (geo.range_step, ==, 15);
  g_assert_cmpint (geo.height, ==, 26 + 2 * 15);
  g_assert_cmpint (cowscope_lane_geometry_range_row_at (&geo, 30), ==, 0);
  g_assert_cmpint (cowscope_lane_geometry_range_row_at (&geo, 45), ==, 1);
  g_assert_cmpint (cowscope_lane_geometry_range_row_at (&geo, 10), ==, -1);

  PangoLayout *layout = test_layout ();
  g_autoptr (CowscopeTimelineWindow) win = window_new (items, 2, spans, 5);
  g_autoptr (GskRenderNode) node = cowscope_event_lane_paint (win, &p, FALSE, &geo, names, 42,
                                                              layout);
  g_autoptr (GArray) rects = g_array_new (FALSE, FALSE, sizeof (Rect));
  collect (node, 0, 0, rects);

  g_assert_cmpuint (count_rects (rects, &p.kinds[COWSCOPE_ITEM_LAZY_CLONE], 9, 3, 3, 10), ==, 1);
  /* 4 + 2 log2 (5) = 8.6 px tall, at the bottom of the 20 px row. */
  float tick = 4.0f + 2.0f * (float) log2 (5.0);
  g_assert_cmpuint (count_rects (rects, &p.kinds[COWSCOPE_ITEM_TENSOR], 20, 23 - tick, 1, tick), ==, 1);
  g_assert_cmpuint (count_rects (rects, &p.kinds[COWSCOPE_ITEM_COPY], 20, 3, 1, 20), ==, 1);
  g_assert_cmpuint (count_rects (rects, &p.kinds[COWSCOPE_ITEM_COPY], 30, 3, 20, 20), ==, 1);
  /* Ranges: depth 0 in the first row, depth 1 in the second. */
  GdkRGBA fill = p.kinds[COWSCOPE_ITEM_RANGE];
  fill.alpha *= 0.22f;
  g_assert_cmpuint (count_rects (rects, &fill, 10, 26, 80, 13), ==, 1);
  g_assert_cmpuint (count_rects (rects, &fill, 15, 41, 70, 13), ==, 1);
  g_assert_cmpuint (count_rects (rects, &fill, 85, 41, 3, 13), ==, 1);
  g_assert_cmpuint (count_rects (rects, &fill, 88, 41, 1, 13), ==, 1);
  /* Names: whole inside the wide boxes; the 30 px box's ellipsized (its
   * text narrower than the box); none in the 10 px box. */
  g_assert_cmpuint (count_text (node, layout, "step 3", 0), ==, 1);
  g_assert_cmpuint (count_text (node, layout, "forward", 0), ==, 1);
  g_assert_cmpuint (count_text (node, layout, "backward", 0), ==, 0);
  g_assert_cmpuint (count_text (node, layout, "a long range name that cannot fit", 0), ==, 0);
  g_assert_cmpint (pango_layout_get_width (layout), ==, -1);
  g_assert_cmpint (pango_layout_get_ellipsize (layout), ==, PANGO_ELLIPSIZE_NONE);

  /* Without names: rows by nesting in the window, no text. */
  g_autoptr (GskRenderNode) unnamed = cowscope_event_lane_paint (win, &p, FALSE, &geo, NULL, 42,
                                                                 layout);
  g_array_set_size (rects, 0);
  collect (unnamed, 0, 0, rects);
  g_assert_cmpuint (count_rects (rects, &fill, 10, 26, 80, 13), ==, 1);
  g_assert_cmpuint (count_rects (rects, &fill, 15, 41, 70, 13), ==, 1);
  g_assert_cmpuint (count_text (unnamed, layout, "step 3", 0), ==, 0);

  /* A CUDA lane draws everything as full-height columns. */
  CowscopeLaneGeometry cuda_geo;
  cowscope_lane_geometry_init (&cuda_geo, COWSCOPE_LANE_CUDA_STREAM, 28, 3, 12, 0);
  g_assert_cmpuint (cuda_geo.n_range_rows, ==, 0);
  g_assert_cmpint (cuda_geo.height, ==, 28);
  g_autoptr (GskRenderNode) cuda = cowscope_event_lane_paint (win, &p, TRUE, &cuda_geo, NULL, 42,
                                                              layout);
  g_array_set_size (rects, 0);
  collect (cuda, 0, 0, rects);
  g_assert_cmpuint (count_rects (rects, &p.kinds[COWSCOPE_ITEM_LAZY_CLONE], 10, 3, 1, 22), ==, 1);

  /* Nothing to draw is an empty node, not NULL. */
  g_autoptr (CowscopeTimelineWindow) empty = window_new (NULL, 0, NULL, 0);
  g_autoptr (GskRenderNode) none = cowscope_event_lane_paint (empty, &p, FALSE, &geo, names, 42,
                                                              layout);
  g_assert_nonnull (none);
  g_object_unref (layout);
}

/* A range name too long for its box is cut at the end: the text node
 * starts with the name's glyphs and is no wider than the box. */
static void
test_range_name_ellipsized (void)
{
  CowscopeTimelinePalette p = test_palette ();
  CowscopeTimelineItem spans[] = { span (100, 500, COWSCOPE_ITEM_RANGE, 1) };
  const CowscopeNamedRange rows[] = {
    { 42, 1, 43, -1, "backward pass of the second transformer block" },
  };
  g_autoptr (CowscopeRangeNames) names = cowscope_range_names_new (rows, 1);
  CowscopeLaneGeometry geo;
  cowscope_lane_geometry_init (&geo, COWSCOPE_LANE_THREAD, 26, 1, 12, 0);
  PangoLayout *layout = test_layout ();
  g_autoptr (CowscopeTimelineWindow) win = window_new (NULL, 0, spans, 1);
  g_autoptr (GskRenderNode) node = cowscope_event_lane_paint (win, &p, FALSE, &geo, names, 42,
                                                              layout);
  g_assert_cmpuint (count_text (node, layout, rows[0].name, 0), ==, 0);
  g_assert_cmpuint (count_text (node, layout, rows[0].name, 3), ==, 1);
  /* The text is inside the 40 px box (its bounds, less the glyphs' ink
   * overhang, within [10, 50)). */
  graphene_rect_t bounds;
  gsk_render_node_get_bounds (node, &bounds);
  g_assert_cmpfloat (bounds.origin.x, >=, 10 - 1);
  g_assert_cmpfloat (bounds.origin.x + bounds.size.width, <=, 50 + 1);
  g_object_unref (layout);
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

/* The title painter writes the name (a process lane's in bold) and the
 * detail line, says which did not fit, and gives the layout back with
 * the attributes it had (the timeline's font). */
static void
test_title_keeps_font (void)
{
  CowscopeTimelinePalette p = test_palette ();
  PangoLayout *layout = test_layout ();
  PangoAttrList *font = pango_attr_list_new ();
  pango_attr_list_insert (font, pango_attr_scale_new (0.85));
  pango_layout_set_attributes (layout, font);
  CowscopeLaneLabel label = { "train", "process 42", TRUE, 1, FALSE };
  guint cut = 99;
  g_autoptr (GskRenderNode) node = cowscope_lane_title_paint (&label, &p, 176, 64, layout, &cut);
  g_assert_nonnull (node);
  g_assert_cmpuint (cut, ==, 0);
  g_assert_cmpuint (count_text (node, layout, "process 42", 0), ==, 1);
  g_assert_true (pango_layout_get_attributes (layout) == font);
  g_assert_cmpint (pango_layout_get_width (layout), ==, -1);
  g_assert_cmpint (pango_layout_get_ellipsize (layout), ==, PANGO_ELLIPSIZE_NONE);

  /* A long name is cut, its detail (the thread id) is not. */
  CowscopeLaneLabel thread = { "a-thread-name-much-longer-than-any-column", "tid 1234 · process 99",
                               FALSE, -1, FALSE };
  g_autoptr (GskRenderNode) cut_node = cowscope_lane_title_paint (&thread, &p, 176, 40, layout, &cut);
  g_assert_cmpuint (cut, ==, 1);
  g_assert_cmpuint (count_text (cut_node, layout, "tid 1234 · process 99", 0), ==, 1);
  /* Too short for two lines: the name only. */
  g_autoptr (GskRenderNode) one = cowscope_lane_title_paint (&thread, &p, 176, 20, layout, &cut);
  g_assert_cmpuint (count_text (one, layout, "tid 1234 · process 99", 0), ==, 0);
  pango_attr_list_unref (font);
  g_object_unref (layout);
}

/* Overlays: the selected event's outline hugs its span in the event row,
 * at the lane's offset; a highlight beyond the data area is not drawn. */
static void
test_overlays (void)
{
  CowscopeTimelinePalette p = test_palette ();
  CowscopeTimelineItem spans[] = { span (300, 500, COWSCOPE_ITEM_COPY, 9) };
  g_autoptr (CowscopeTimelineWindow) win = window_new (NULL, 0, spans, 1);
  CowscopeLaneGeometry geo;
  cowscope_lane_geometry_init (&geo, COWSCOPE_LANE_THREAD, 26, 0, 12, 0);
  GtkSnapshot *snapshot = gtk_snapshot_new ();
  cowscope_overlay_selected (snapshot, win, &geo, 9, 176, 100, &p.foreground);
  g_autoptr (GskRenderNode) node = gtk_snapshot_free_to_node (snapshot);
  g_assert_cmpint (gsk_render_node_get_node_type (node), ==, GSK_BORDER_NODE);
  graphene_rect_t b;
  gsk_render_node_get_bounds (node, &b);
  g_assert_cmpfloat (b.origin.x, ==, 176 + 30 - 2);
  g_assert_cmpfloat (b.origin.y, ==, 100 + 3 - 2);
  g_assert_cmpfloat (b.size.width, ==, 24);
  g_assert_cmpfloat (b.size.height, ==, 24);

  snapshot = gtk_snapshot_new ();
  cowscope_overlay_selected (snapshot, win, &geo, 10, 176, 100, &p.foreground); /* not shown */
  cowscope_overlay_highlighted (snapshot, &geo, 50, 60, 176, 1000, 100, &p.highlight);
  g_autoptr (GskRenderNode) nothing = gtk_snapshot_free_to_node (snapshot);
  g_assert_null (nothing);
}

int
main (int argc, char *argv[])
{
  gtk_test_init (&argc, &argv, NULL);
  g_test_add_func ("/cowscope/lane-painters/event-lane", test_event_lane);
  g_test_add_func ("/cowscope/lane-painters/range-name-ellipsized", test_range_name_ellipsized);
  g_test_add_func ("/cowscope/lane-painters/process-lane", test_process_lane);
  g_test_add_func ("/cowscope/lane-painters/counter-lane", test_counter_lane);
  g_test_add_func ("/cowscope/lane-painters/title-keeps-font", test_title_keeps_font);
  g_test_add_func ("/cowscope/lane-painters/overlays", test_overlays);
  return g_test_run ();
}
