/* cowscope-timeline-overlay.h — what the copy timeline draws over its
 * lanes every frame, uncached: the outline of the selected event, of the
 * highlighted objects' events and of what the pointer is over, and the
 * selected range's shade and totals box.
 *
 * Pure functions like the lane painters (cowscope-lane-painter.h), whose
 * rows they outline.  A lane's outlines take @x0, the widget x of the
 * lane's data area, and @y0, the lane's top. */
#pragma once

#include <gtk/gtk.h>

#include "cowscope-lane-painter.h"
#include "cowscope-timeline-lane.h"
#include "cowscope-timeline-palette.h"

G_BEGIN_DECLS

/* Outlines event @seq in a thread lane's @window (laid out as @geometry)
 * where it is shown on its own (a span, or an item not merged into a
 * bucket); nothing otherwise. */
void cowscope_overlay_selected (GtkSnapshot *snapshot, CowscopeTimelineWindow *window,
                                const CowscopeLaneGeometry *geometry, gint64 seq, float x0,
                                float y0, const GdkRGBA *color);

/* Outlines, in a thread lane's event row, an event from widget x @x_start
 * to @x_end, kept inside the data area [@left, @right): by time, so it is
 * seen even where it shares a pixel with others.  Nothing when it is
 * outside. */
void cowscope_overlay_highlighted (GtkSnapshot *snapshot, const CowscopeLaneGeometry *geometry,
                                   double x_start, double x_end, float left, float right,
                                   float y0, const GdkRGBA *color);

/* Outlines @item (a span of @window when @is_span) of a lane laid out as
 * @geometry: what the pointer is over.  A user range is outlined in range
 * row @range_row. */
void cowscope_overlay_hover (GtkSnapshot *snapshot, CowscopeTimelineWindow *window,
                             const CowscopeTimelineItem *item, gboolean is_span,
                             const CowscopeLaneGeometry *geometry, int range_row, float x0,
                             float y0, const GdkRGBA *color);

/* A flow arrow from (@x_from, @y_from) to (@x_to, @y_to), widget
 * coordinates: a curve leaving and arriving level, a head at its end, a
 * dot at its start, as Perfetto draws flows. */
void cowscope_overlay_flow (GtkSnapshot *snapshot, double x_from, double y_from, double x_to,
                            double y_to, const GdkRGBA *color);

/* Shades the selected range, from widget x @x_start to @x_end clamped to
 * [@left, @right), over the whole @height. */
void cowscope_overlay_range (GtkSnapshot *snapshot, const CowscopeTimelinePalette *palette,
                             double x_start, double x_end, float left, float right, int height);

/* The box of @text (a range's totals) centred over the range from widget
 * x @x_start to @x_end, kept within [@left, @right), at @top; nothing when
 * it would reach below @bottom.  Written with @layout. */
void cowscope_overlay_range_box (GtkSnapshot *snapshot, PangoLayout *layout,
                                 const CowscopeTimelinePalette *palette, const char *text,
                                 double x_start, double x_end, float left, float right, float top,
                                 float bottom);

G_END_DECLS
