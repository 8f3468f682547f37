/* cowscope-event-lane-painter.c — a thread or CUDA stream lane's node
 * (see cowscope-lane-painter.h). */
#include "cowscope-lane-painter.h"

#include <math.h>

#include "cowscope-paint.h"

#define EVENT_ROW_Y COWSCOPE_LANE_EVENT_ROW_Y
#define RANGE_ROW_Y COWSCOPE_LANE_RANGE_ROW_Y

/* Kinds a person looks for: never hidden inside a bucket. */
static gboolean
is_notable_kind (guint kind)
{
  return cowscope_lane_kind_is_box (kind) || kind == COWSCOPE_ITEM_LAZY_CLONE
         || kind == COWSCOPE_ITEM_MARK || kind == COWSCOPE_ITEM_IPC
         || kind == COWSCOPE_ITEM_VIOLATION;
}

/* The row a range span is drawn in: its nesting depth among the window's
 * ranges (a range shorter than a pixel has no parent shown). */
static guint
range_row (const CowscopeTimelineItem *const *sorted, guint i)
{
  guint depth = 0;
  for (guint k = 0; k < i; k++)
    if (sorted[k]->end_ns >= sorted[i]->end_ns && sorted[k]->start_ns <= sorted[i]->start_ns)
      depth++;
  return MIN (depth, COWSCOPE_LANE_N_RANGE_ROWS - 1);
}

/* Draws @it as an item of @kind: copies and CUDA work as full-height
 * columns, lazy clones, marks and IPC in the upper half, warnings wider,
 * range ends in the range row, other events as ticks growing with their
 * count. */
static void
draw_item_kind (CowscopePaintRun *run, const CowscopeTimelineItem *it, guint kind, gboolean cuda,
                float row_h, const GdkRGBA colors[COWSCOPE_N_ITEM_KINDS])
{
  int x = it->pixel;
  if (cuda || cowscope_lane_kind_is_box (kind))
    cowscope_paint_run_add (run, &colors[kind], x, x + 1, EVENT_ROW_Y, row_h);
  else if (kind == COWSCOPE_ITEM_LAZY_CLONE || kind == COWSCOPE_ITEM_MARK
           || kind == COWSCOPE_ITEM_IPC)
    {
      int half = it->count == 1 ? 1 : 0;
      cowscope_paint_run_add (run, &colors[kind], x - half, x + 1 + half, EVENT_ROW_Y,
                              row_h * 0.5f);
    }
  else if (kind == COWSCOPE_ITEM_VIOLATION)
    cowscope_paint_run_add (run, &colors[kind], x, x + 2, EVENT_ROW_Y, row_h);
  else if (kind == COWSCOPE_ITEM_RANGE)
    cowscope_paint_run_add (run, &colors[kind], x, x + 1, RANGE_ROW_Y,
                            COWSCOPE_LANE_RANGE_ROW_HEIGHT);
  else
    {
      float h = MIN (4.0f + 2.0f * (float) log2 ((double) it->count), row_h * 0.6f);
      cowscope_paint_run_add (run, &colors[kind], x, x + 1, EVENT_ROW_Y + row_h - h, h);
    }
}

/* Ordinary events as ticks at the bottom of the row, taller for buckets
 * holding more events, marks of interest at the top; then, for each
 * bucket, the notable kinds it holds besides its most frequent one (a
 * copy among a thousand tensor events), in a second pass since runs merge
 * only left to right. */
static void
draw_items (GtkSnapshot *snapshot, CowscopeTimelineWindow *win, const GdkRGBA *colors,
            gboolean cuda, float row_h)
{
  guint n_items;
  const CowscopeTimelineItem *items = cowscope_timeline_window_get_items (win, &n_items);
  CowscopePaintRun run = { .snapshot = snapshot };
  for (guint i = 0; i < n_items; i++)
    {
      const CowscopeTimelineItem *it = &items[i];
      guint kind = it->kind < COWSCOPE_N_ITEM_KINDS ? it->kind : COWSCOPE_ITEM_OTHER;
      draw_item_kind (&run, it, kind, cuda, row_h, colors);
    }
  cowscope_paint_run_flush (&run);
  for (guint i = 0; i < n_items && !cuda; i++)
    {
      const CowscopeTimelineItem *it = &items[i];
      if (it->count == 1)
        continue;
      for (guint k = 0; k < COWSCOPE_N_ITEM_KINDS; k++)
        if (k != it->kind && (it->kinds & (1u << k)) != 0 && is_notable_kind (k))
          draw_item_kind (&run, it, k, cuda, row_h, colors);
    }
  cowscope_paint_run_flush (&run);
}

/* Materializations and CUDA activity as boxes in the event row (outlined
 * when wide enough), user ranges in nested rows below it. */
static void
draw_spans (GtkSnapshot *snapshot, CowscopeTimelineWindow *win,
            const CowscopeTimelinePalette *palette, float row_h)
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
      cowscope_paint_rect (snapshot, &palette->kinds[kind], x, EVENT_ROW_Y, w, row_h);
      if (w >= 5)
        cowscope_paint_outline (snapshot, &edge, x, EVENT_ROW_Y, w, row_h, 1);
    }
  if (ranges->len == 0)
    return;
  g_ptr_array_sort (ranges, cowscope_lane_compare_spans);
  GdkRGBA c = cowscope_rgba_with_alpha (&palette->kinds[COWSCOPE_ITEM_RANGE], 0.8f);
  for (guint i = 0; i < ranges->len; i++)
    {
      float x, w;
      cowscope_lane_span_px (ranges->pdata[i], t0, nspp, width, &x, &w);
      guint row = range_row ((const CowscopeTimelineItem *const *) ranges->pdata, i);
      cowscope_paint_rect (snapshot, &c, x, RANGE_ROW_Y + row * COWSCOPE_LANE_RANGE_ROW_STEP, w,
                           COWSCOPE_LANE_RANGE_ROW_HEIGHT);
    }
}

GskRenderNode *
cowscope_event_lane_paint (CowscopeTimelineWindow *window, const CowscopeTimelinePalette *palette,
                           gboolean cuda, int height)
{
  g_return_val_if_fail (COWSCOPE_IS_TIMELINE_WINDOW (window), NULL);
  g_return_val_if_fail (palette != NULL, NULL);
  float row_h = cuda ? height - 2 * EVENT_ROW_Y : COWSCOPE_LANE_EVENT_ROW_HEIGHT;
  GtkSnapshot *snapshot = gtk_snapshot_new ();
  draw_items (snapshot, window, palette->kinds, cuda, row_h);
  draw_spans (snapshot, window, palette, row_h);
  return cowscope_lane_paint_finish (snapshot);
}
