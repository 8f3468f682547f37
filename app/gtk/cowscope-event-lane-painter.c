/* cowscope-event-lane-painter.c — a thread or CUDA stream lane's node
 * (see cowscope-lane-painter.h). */
#include "cowscope-lane-painter.h"

#include <math.h>

#include "cowscope-paint.h"


/* Kinds a person looks for: never hidden inside a bucket. */
static gboolean
is_notable_kind (guint kind)
{
  return cowscope_lane_kind_is_box (kind) || kind == COWSCOPE_ITEM_LAZY_CLONE
         || kind == COWSCOPE_ITEM_MARK || kind == COWSCOPE_ITEM_IPC
         || kind == COWSCOPE_ITEM_VIOLATION;
}

guint
cowscope_lane_range_row (const CowscopeLaneGeometry *geometry, const CowscopeRangeNames *names,
                         guint32 pid, const CowscopeTimelineItem *const *sorted, guint i)
{
  g_return_val_if_fail (geometry != NULL && sorted != NULL, 0);
  guint depth = 0;
  if (names != NULL)
    depth = cowscope_range_names_get_depth (names, pid, sorted[i]->id);
  else
    /* Nesting among the window's ranges (a range shorter than a pixel has
     * no parent shown). */
    for (guint k = 0; k < i; k++)
      if (sorted[k]->end_ns >= sorted[i]->end_ns && sorted[k]->start_ns <= sorted[i]->start_ns)
        depth++;
  return MIN (depth, MAX (geometry->n_range_rows, 1) - 1);
}

/* Draws @it as an item of @kind: copies and CUDA work as full-height
 * columns, lazy clones, marks and IPC in the upper half, warnings wider,
 * range ends in the range row, other events as ticks growing with their
 * count. */
static void
draw_item_kind (CowscopePaintRun *run, const CowscopeTimelineItem *it, guint kind, gboolean cuda,
                const CowscopeLaneGeometry *geo, const GdkRGBA colors[COWSCOPE_N_ITEM_KINDS])
{
  int x = it->pixel;
  float y = geo->event_y, row_h = geo->event_h;
  if (cuda || cowscope_lane_kind_is_box (kind))
    cowscope_paint_run_add (run, &colors[kind], x, x + 1, y, row_h);
  else if (kind == COWSCOPE_ITEM_LAZY_CLONE || kind == COWSCOPE_ITEM_MARK
           || kind == COWSCOPE_ITEM_IPC)
    {
      int half = it->count == 1 ? 1 : 0;
      cowscope_paint_run_add (run, &colors[kind], x - half, x + 1 + half, y, row_h * 0.5f);
    }
  else if (kind == COWSCOPE_ITEM_VIOLATION)
    cowscope_paint_run_add (run, &colors[kind], x, x + 2, y, row_h);
  else if (kind == COWSCOPE_ITEM_RANGE)
    {
      /* A range's begin or end: a tick at the top of the range rows. */
      if (geo->n_range_rows > 0)
        cowscope_paint_run_add (run, &colors[kind], x, x + 1, geo->range_y, 3);
    }
  else
    {
      float h = MIN (4.0f + 2.0f * (float) log2 ((double) it->count), row_h * 0.6f);
      cowscope_paint_run_add (run, &colors[kind], x, x + 1, y + row_h - h, h);
    }
}

/* Ordinary events as ticks at the bottom of the row, taller for buckets
 * holding more events, marks of interest at the top; then, for each
 * bucket, the notable kinds it holds besides its most frequent one (a
 * copy among a thousand tensor events), in a second pass since runs merge
 * only left to right. */
static void
draw_items (GtkSnapshot *snapshot, CowscopeTimelineWindow *win, const GdkRGBA *colors,
            gboolean cuda, const CowscopeLaneGeometry *geo)
{
  guint n_items;
  const CowscopeTimelineItem *items = cowscope_timeline_window_get_items (win, &n_items);
  CowscopePaintRun run = { .snapshot = snapshot };
  for (guint i = 0; i < n_items; i++)
    {
      const CowscopeTimelineItem *it = &items[i];
      guint kind = it->kind < COWSCOPE_N_ITEM_KINDS ? it->kind : COWSCOPE_ITEM_OTHER;
      draw_item_kind (&run, it, kind, cuda, geo, colors);
    }
  cowscope_paint_run_flush (&run);
  for (guint i = 0; i < n_items && !cuda; i++)
    {
      const CowscopeTimelineItem *it = &items[i];
      if (it->count == 1)
        continue;
      for (guint k = 0; k < COWSCOPE_N_ITEM_KINDS; k++)
        if (k != it->kind && (it->kinds & (1u << k)) != 0 && is_notable_kind (k))
          draw_item_kind (&run, it, k, cuda, geo, colors);
    }
  cowscope_paint_run_flush (&run);
}

/* @name inside the range box at (@x, @y) @w wide: from the box's left
 * edge, or the window's when the range began before it, ellipsized to
 * what is shown of the box; nothing when that is too narrow. */
static void
draw_range_label (GtkSnapshot *snapshot, PangoLayout *layout, const char *name, float x, float y,
                  float w, int width, const CowscopeLaneGeometry *geo, const GdkRGBA *color)
{
  float left = MAX (x, 0), right = MIN (x + w, (float) width);
  if (name == NULL || right - left < COWSCOPE_LANE_MIN_LABELLED_SPAN)
    return;
  pango_layout_set_text (layout, name, -1);
  pango_layout_set_width (layout, (int) ((right - left - 6) * PANGO_SCALE));
  int lh;
  pango_layout_get_pixel_size (layout, NULL, &lh);
  gtk_snapshot_save (snapshot);
  gtk_snapshot_translate (snapshot, &GRAPHENE_POINT_INIT (left + 3, y + (geo->range_h - lh) / 2));
  gtk_snapshot_append_layout (snapshot, layout, color);
  gtk_snapshot_restore (snapshot);
}

/* User ranges in the rows of their depth, named when @names knows them
 * and the box is wide enough. */
static void
draw_ranges (GtkSnapshot *snapshot, GPtrArray *ranges, gint64 t0, double nspp, int width,
             const CowscopeTimelinePalette *palette, const CowscopeLaneGeometry *geo,
             const CowscopeRangeNames *names, guint32 pid, PangoLayout *layout)
{
  if (ranges->len == 0 || geo->n_range_rows == 0)
    return;
  g_ptr_array_sort (ranges, cowscope_lane_compare_spans);
  const GdkRGBA *base = &palette->kinds[COWSCOPE_ITEM_RANGE];
  GdkRGBA fill = cowscope_rgba_with_alpha (base, 0.22f);
  GdkRGBA edge = cowscope_rgba_with_alpha (base, 0.9f);
  GdkRGBA text = cowscope_timeline_palette_fg (palette, 0.9f);
  PangoEllipsizeMode ellipsize = pango_layout_get_ellipsize (layout);
  pango_layout_set_ellipsize (layout, PANGO_ELLIPSIZE_END);
  for (guint i = 0; i < ranges->len; i++)
    {
      const CowscopeTimelineItem *s = ranges->pdata[i];
      float x, w;
      cowscope_lane_span_px (s, t0, nspp, width, &x, &w);
      guint row = cowscope_lane_range_row (geo, names, pid,
                                           (const CowscopeTimelineItem *const *) ranges->pdata, i);
      float y = geo->range_y + row * geo->range_step;
      cowscope_paint_rect (snapshot, &fill, x, y, w, geo->range_h);
      cowscope_paint_rect (snapshot, &edge, x, y, MIN (w, 1), geo->range_h);
      cowscope_paint_rect (snapshot, &edge, x, y + geo->range_h - 1, w, 1);
      if (names != NULL)
        draw_range_label (snapshot, layout, cowscope_range_names_lookup (names, pid, s->id), x, y,
                          w, width, geo, &text);
    }
  pango_layout_set_width (layout, -1);
  pango_layout_set_ellipsize (layout, ellipsize);
}

/* Materializations and CUDA activity as boxes in the event row (outlined
 * when wide enough), user ranges in nested rows below it. */
static void
draw_spans (GtkSnapshot *snapshot, CowscopeTimelineWindow *win,
            const CowscopeTimelinePalette *palette, const CowscopeLaneGeometry *geo,
            const CowscopeRangeNames *names, guint32 pid, PangoLayout *layout)
{
  gint64 t0 = cowscope_timeline_window_get_start (win);
  gint64 t1 = cowscope_timeline_window_get_end (win);
  int width = (int) cowscope_timeline_window_get_width (win);
  double nspp = (double) (t1 - t0) / width;
  guint n_spans;
  const CowscopeTimelineItem *spans = cowscope_timeline_window_get_spans (win, &n_spans);
  GdkRGBA edge = cowscope_timeline_palette_fg (palette, 0.45f);
  g_autoptr (GPtrArray) ranges = g_ptr_array_new ();
  for (guint i = 0; i < n_spans; i++)
    {
      const CowscopeTimelineItem *s = &spans[i];
      guint kind = s->kind < COWSCOPE_N_ITEM_KINDS ? s->kind : COWSCOPE_ITEM_OTHER;
      if (kind == COWSCOPE_ITEM_RANGE)
        {
          g_ptr_array_add (ranges, (gpointer) s);
          continue;
        }
      float x, w;
      cowscope_lane_span_px (s, t0, nspp, width, &x, &w);
      cowscope_paint_rect (snapshot, &palette->kinds[kind], x, geo->event_y, w, geo->event_h);
      if (w >= 5)
        cowscope_paint_outline (snapshot, &edge, x, geo->event_y, w, geo->event_h, 1);
    }
  draw_ranges (snapshot, ranges, t0, nspp, width, palette, geo, names, pid, layout);
}

GskRenderNode *
cowscope_event_lane_paint (CowscopeTimelineWindow *window, const CowscopeTimelinePalette *palette,
                           gboolean cuda, const CowscopeLaneGeometry *geometry,
                           const CowscopeRangeNames *names, guint32 pid,
                           PangoLayout *label_layout)
{
  g_return_val_if_fail (COWSCOPE_IS_TIMELINE_WINDOW (window), NULL);
  g_return_val_if_fail (palette != NULL && geometry != NULL, NULL);
  g_return_val_if_fail (PANGO_IS_LAYOUT (label_layout), NULL);
  GtkSnapshot *snapshot = gtk_snapshot_new ();
  draw_items (snapshot, window, palette->kinds, cuda, geometry);
  draw_spans (snapshot, window, palette, geometry, names, pid, label_layout);
  return cowscope_lane_paint_finish (snapshot);
}
