/* cowscope-counter-lane-painter.c — a counter lane's node (see
 * cowscope-lane-painter.h). */
#include "cowscope-lane-painter.h"

#include <math.h>

#include "cowscope-paint.h"
#include "cowscope-timeline-format.h"

/* The samples' maximum as a filled step area and their last values as a
 * line, scaled so that @vmax reaches the lane's top. */
static void
draw_series (GtkSnapshot *snapshot, const CowscopeCounterSample *samples, guint n, double vmax,
             int width, int height, const GdkRGBA *color)
{
  float top = 4, bottom = height - 2;
  double scale = (bottom - top) / vmax;
  cairo_t *cr = gtk_snapshot_append_cairo (snapshot, &GRAPHENE_RECT_INIT (0, 0, width, height));
  cairo_move_to (cr, samples[0].pixel, bottom);
  for (guint i = 0; i < n; i++)
    {
      double y = bottom - samples[i].max * scale;
      cairo_line_to (cr, samples[i].pixel, y);
      cairo_line_to (cr, samples[i].pixel + 1, y);
    }
  cairo_line_to (cr, samples[n - 1].pixel + 1, bottom);
  cairo_close_path (cr);
  GdkRGBA fill = cowscope_rgba_with_alpha (color, 0.35f);
  gdk_cairo_set_source_rgba (cr, &fill);
  cairo_fill (cr);
  for (guint i = 0; i < n; i++)
    {
      double y = floor (bottom - samples[i].last * scale) + 0.5;
      if (i == 0)
        cairo_move_to (cr, samples[i].pixel, y);
      else
        cairo_line_to (cr, samples[i].pixel, y);
      cairo_line_to (cr, samples[i].pixel + 1, y);
    }
  gdk_cairo_set_source_rgba (cr, color);
  cairo_set_line_width (cr, 1.0);
  cairo_stroke (cr);
  cairo_destroy (cr);
}

/* The scale (the window's maximum) in the top right corner, on a
 * backdrop so the series does not cross it. */
static void
draw_scale (GtkSnapshot *snapshot, const CowscopeTimelinePalette *palette,
            CowscopeCounterKind counter, double vmax, int width, PangoLayout *layout)
{
  g_autofree char *label = cowscope_timeline_format_counter (counter, vmax);
  pango_layout_set_text (layout, label, -1);
  int lw, lh;
  pango_layout_get_pixel_size (layout, &lw, &lh);
  GdkRGBA text = cowscope_timeline_palette_fg (palette, 0.7f);
  cowscope_paint_rect (snapshot, &palette->label_backdrop, width - lw - 9, 1, lw + 6, lh);
  gtk_snapshot_save (snapshot);
  gtk_snapshot_translate (snapshot, &GRAPHENE_POINT_INIT (width - lw - 6, 1));
  gtk_snapshot_append_layout (snapshot, layout, &text);
  gtk_snapshot_restore (snapshot);
}

GskRenderNode *
cowscope_counter_lane_paint (CowscopeTimelineWindow *window,
                             const CowscopeTimelinePalette *palette, CowscopeCounterKind counter,
                             int height, PangoLayout *layout)
{
  g_return_val_if_fail (COWSCOPE_IS_TIMELINE_WINDOW (window), NULL);
  g_return_val_if_fail (palette != NULL && PANGO_IS_LAYOUT (layout), NULL);
  guint n;
  const CowscopeCounterSample *samples = cowscope_timeline_window_get_samples (window, &n);
  int width = (int) cowscope_timeline_window_get_width (window);
  GtkSnapshot *snapshot = gtk_snapshot_new ();
  if (n > 0)
    {
      double vmax = 0;
      for (guint i = 0; i < n; i++)
        vmax = MAX (vmax, samples[i].max);
      const GdkRGBA *color = &palette->counters[CLAMP (counter, 0, COWSCOPE_N_COUNTERS - 1)];
      draw_series (snapshot, samples, n, vmax > 0 ? vmax : 1, width, height, color);
      draw_scale (snapshot, palette, counter, vmax, width, layout);
    }
  return cowscope_lane_paint_finish (snapshot);
}
