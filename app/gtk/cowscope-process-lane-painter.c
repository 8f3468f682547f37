/* cowscope-process-lane-painter.c — a process lane's node (see
 * cowscope-lane-painter.h). */
#include "cowscope-lane-painter.h"

#include "cowscope-paint.h"

/* IPC events as ticks (a lone one 3 px wide) along the top. */
static void
draw_ticks (GtkSnapshot *snapshot, CowscopeTimelineWindow *win, const GdkRGBA *colors)
{
  guint n_items;
  const CowscopeTimelineItem *items = cowscope_timeline_window_get_items (win, &n_items);
  CowscopePaintRun run = { .snapshot = snapshot };
  for (guint i = 0; i < n_items; i++)
    {
      guint kind = items[i].kind < COWSCOPE_N_ITEM_KINDS ? items[i].kind : COWSCOPE_ITEM_OTHER;
      int half = items[i].count == 1 ? 1 : 0;
      cowscope_paint_run_add (&run, &colors[kind], items[i].pixel - half,
                              items[i].pixel + 1 + half, COWSCOPE_LANE_EVENT_ROW_Y,
                              COWSCOPE_LANE_PROCESS_TICK_HEIGHT);
    }
  cowscope_paint_run_flush (&run);
}

/* Limbo and held spans in start order, each in the first row free at its
 * start (the last row when none is). */
static void
draw_spans (GtkSnapshot *snapshot, CowscopeTimelineWindow *win, const GdkRGBA *colors,
            int height)
{
  gint64 t0 = cowscope_timeline_window_get_start (win);
  gint64 t1 = cowscope_timeline_window_get_end (win);
  int width = (int) cowscope_timeline_window_get_width (win);
  double nspp = (double) (t1 - t0) / width;
  guint n_spans;
  const CowscopeTimelineItem *spans = cowscope_timeline_window_get_spans (win, &n_spans);
  guint n_rows = MAX ((height - COWSCOPE_LANE_PROCESS_SPAN_Y - 2) / COWSCOPE_LANE_PROCESS_SPAN_STEP,
                      1);
  g_autofree float *row_end = g_new (float, n_rows);
  for (guint r = 0; r < n_rows; r++)
    row_end[r] = -G_MAXFLOAT;
  g_autoptr (GPtrArray) sorted = g_ptr_array_sized_new (n_spans);
  for (guint i = 0; i < n_spans; i++)
    g_ptr_array_add (sorted, (gpointer) &spans[i]);
  g_ptr_array_sort (sorted, cowscope_lane_compare_spans);
  for (guint i = 0; i < sorted->len; i++)
    {
      const CowscopeTimelineItem *s = sorted->pdata[i];
      guint kind = s->kind < COWSCOPE_N_ITEM_KINDS ? s->kind : COWSCOPE_ITEM_OTHER;
      float x, w;
      cowscope_lane_span_px (s, t0, nspp, width, &x, &w);
      guint row = n_rows - 1;
      for (guint r = 0; r < n_rows; r++)
        if (row_end[r] <= x)
          {
            row = r;
            break;
          }
      row_end[row] = MAX (row_end[row], x + w + 1);
      GdkRGBA c = cowscope_rgba_with_alpha (&colors[kind], 0.85f);
      cowscope_paint_rect (snapshot, &c, x,
                           COWSCOPE_LANE_PROCESS_SPAN_Y + row * COWSCOPE_LANE_PROCESS_SPAN_STEP, w,
                           COWSCOPE_LANE_PROCESS_SPAN_HEIGHT);
    }
}

GskRenderNode *
cowscope_process_lane_paint (CowscopeTimelineWindow *window,
                             const CowscopeTimelinePalette *palette, int height)
{
  g_return_val_if_fail (COWSCOPE_IS_TIMELINE_WINDOW (window), NULL);
  g_return_val_if_fail (palette != NULL, NULL);
  GtkSnapshot *snapshot = gtk_snapshot_new ();
  /* A faint tint sets the process apart from its thread lanes. */
  GdkRGBA tint = cowscope_timeline_palette_fg (palette, 0.04f);
  cowscope_paint_rect (snapshot, &tint, 0, 0, cowscope_timeline_window_get_width (window),
                       height - 1);
  draw_ticks (snapshot, window, palette->kinds);
  draw_spans (snapshot, window, palette->kinds, height);
  return cowscope_lane_paint_finish (snapshot);
}
