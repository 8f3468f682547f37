/* cowscope-timeline-overlay.c — see cowscope-timeline-overlay.h. */
#include "cowscope-timeline-overlay.h"

#include <math.h>

#include "cowscope-lane-painter.h"
#include "cowscope-paint.h"


/* The window's pixel geometry: start, nanoseconds a pixel, width. */
static void
window_geometry (CowscopeTimelineWindow *window, gint64 *t0, double *ns_per_px, int *width)
{
  *t0 = cowscope_timeline_window_get_start (window);
  *width = (int) cowscope_timeline_window_get_width (window);
  *ns_per_px = (double) (cowscope_timeline_window_get_end (window) - *t0) / *width;
}

void
cowscope_overlay_selected (GtkSnapshot *snapshot, CowscopeTimelineWindow *window,
                           const CowscopeLaneGeometry *geo, gint64 seq, float x0, float y0,
                           const GdkRGBA *color)
{
  gint64 t0;
  double nspp;
  int width;
  window_geometry (window, &t0, &nspp, &width);
  guint n;
  const CowscopeTimelineItem *spans = cowscope_timeline_window_get_spans (window, &n);
  for (guint i = 0; i < n; i++)
    if (spans[i].id == seq && spans[i].kind != COWSCOPE_ITEM_RANGE)
      {
        float x, w;
        cowscope_lane_span_px (&spans[i], t0, nspp, width, &x, &w);
        cowscope_paint_outline (snapshot, color, x0 + x - 2, y0 + geo->event_y - 2, w + 4,
                                geo->event_h + 4, 2);
        return;
      }
  const CowscopeTimelineItem *items = cowscope_timeline_window_get_items (window, &n);
  for (guint i = 0; i < n; i++)
    if (items[i].count == 1 && items[i].id == seq)
      {
        cowscope_paint_outline (snapshot, color, x0 + items[i].pixel - 3, y0 + geo->event_y - 2,
                                7, geo->event_h + 4, 2);
        return;
      }
}

void
cowscope_overlay_highlighted (GtkSnapshot *snapshot, const CowscopeLaneGeometry *geo,
                              double x_start, double x_end, float left, float right, float y0,
                              const GdkRGBA *color)
{
  if (x_end < left || x_start > right)
    return;
  x_start = MAX (x_start, left + 3);
  x_end = MIN (x_end, right - 3);
  float x = (float) floor (x_start) - 3;
  float width = (float) MAX (ceil (x_end) - floor (x_start), 1) + 6;
  cowscope_paint_outline (snapshot, color, x, y0 + geo->event_y - 2, width, geo->event_h + 4, 2);
}

void
cowscope_overlay_hover (GtkSnapshot *snapshot, CowscopeTimelineWindow *window,
                        const CowscopeTimelineItem *item, gboolean is_span,
                        const CowscopeLaneGeometry *geo, int range_row, float x0, float y0,
                        const GdkRGBA *color)
{
  if (is_span)
    {
      gint64 t0;
      double nspp;
      int width;
      window_geometry (window, &t0, &nspp, &width);
      float x, w;
      cowscope_lane_span_px (item, t0, nspp, width, &x, &w);
      if (item->kind == COWSCOPE_ITEM_RANGE)
        cowscope_paint_outline (snapshot, color, x0 + x - 1,
                                y0 + geo->range_y + MAX (range_row, 0) * geo->range_step - 1,
                                w + 2, geo->range_h + 2, 1);
      else
        cowscope_paint_outline (snapshot, color, x0 + x - 1, y0 + geo->event_y - 1, w + 2,
                                geo->event_h + 2, 1);
      return;
    }
  cowscope_paint_outline (snapshot, color, x0 + item->pixel - 2, y0 + geo->event_y - 1, 5,
                          geo->event_h + 2, 1);
}

void
cowscope_overlay_flow (GtkSnapshot *snapshot, double x_from, double y_from, double x_to,
                       double y_to, const GdkRGBA *color)
{
  /* Between two lanes: level at both ends, bending between (the control
   * points half the horizontal distance out).  Within one lane: an arc
   * above the row, so that it does not lie on the events it joins. */
  gboolean same_row = fabs (y_to - y_from) < 1;
  double lift = same_row ? MIN (fabs (x_to - x_from) / 4 + 4, 14) : 0;
  double left = MIN (x_from, x_to) - 8, top = MIN (y_from, y_to) - 8 - lift;
  double w = fabs (x_to - x_from) + 16, h = fabs (y_to - y_from) + 16 + lift;
  cairo_t *cr = gtk_snapshot_append_cairo (snapshot, &GRAPHENE_RECT_INIT (left, top, w, h));
  gdk_cairo_set_source_rgba (cr, color);
  cairo_set_line_width (cr, 1.5);
  double bend = MAX (fabs (x_to - x_from) / 2, 12);
  double dir = x_to >= x_from ? 1 : -1;
  cairo_move_to (cr, x_from, y_from);
  if (same_row)
    cairo_curve_to (cr, x_from, y_from - 1.3 * lift, x_to, y_to - 1.3 * lift, x_to, y_to);
  else
    cairo_curve_to (cr, x_from + dir * bend, y_from, x_to - dir * bend, y_to, x_to, y_to);
  cairo_stroke (cr);
  cairo_arc (cr, x_from, y_from, 2.5, 0, 2 * G_PI);
  cairo_fill (cr);
  cairo_move_to (cr, x_to, y_to);
  if (same_row)
    {
      /* Coming down onto the event. */
      cairo_line_to (cr, x_to - 4, y_to - 7);
      cairo_line_to (cr, x_to + 4, y_to - 7);
    }
  else
    {
      cairo_line_to (cr, x_to - dir * 7, y_to - 4);
      cairo_line_to (cr, x_to - dir * 7, y_to + 4);
    }
  cairo_close_path (cr);
  cairo_fill (cr);
  cairo_destroy (cr);
}

void
cowscope_overlay_range (GtkSnapshot *snapshot, const CowscopeTimelinePalette *palette,
                        double x_start, double x_end, float left, float right, int height)
{
  double x0 = MAX (x_start, left);
  double x1 = MIN (x_end, right);
  GdkRGBA fill = cowscope_rgba_with_alpha (&palette->accent, 0.15f);
  GdkRGBA edge = cowscope_rgba_with_alpha (&palette->accent, 0.8f);
  cowscope_paint_rect (snapshot, &fill, (float) x0, 0, (float) MAX (x1 - x0, 1), height);
  cowscope_paint_rect (snapshot, &edge, (float) x0, 0, 1, height);
  cowscope_paint_rect (snapshot, &edge, (float) x1 - 1, 0, 1, height);
}

void
cowscope_overlay_range_box (GtkSnapshot *snapshot, PangoLayout *layout,
                            const CowscopeTimelinePalette *palette, const char *text,
                            double x_start, double x_end, float left, float right, float top,
                            float bottom)
{
  pango_layout_set_text (layout, text, -1);
  int lw, lh;
  pango_layout_get_pixel_size (layout, &lw, &lh);
  float bw = lw + 16, bh = lh + 10;
  float bx = (float) CLAMP ((x_start + x_end) / 2 - bw / 2, left + 2, MAX (right - bw - 2, left + 2));
  if (top + bh > bottom)
    return;
  GskRoundedRect box;
  gsk_rounded_rect_init_from_rect (&box, &GRAPHENE_RECT_INIT (bx, top, bw, bh), 6);
  GdkRGBA border = cowscope_timeline_palette_fg (palette, 0.2f);
  GdkRGBA color = cowscope_timeline_palette_fg (palette, 0.9f);
  gtk_snapshot_push_rounded_clip (snapshot, &box);
  cowscope_paint_rect (snapshot, &palette->overlay, bx, top, bw, bh);
  gtk_snapshot_pop (snapshot);
  const float widths[4] = { 1, 1, 1, 1 };
  const GdkRGBA colors[4] = { border, border, border, border };
  gtk_snapshot_append_border (snapshot, &box, widths, colors);
  gtk_snapshot_save (snapshot);
  gtk_snapshot_translate (snapshot, &GRAPHENE_POINT_INIT (bx + 8, top + 5));
  gtk_snapshot_append_layout (snapshot, layout, &color);
  gtk_snapshot_restore (snapshot);
}
