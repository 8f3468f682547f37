/* cowscope-time-ruler.h — the copy timeline's time ruler.
 *
 * A strip that labels the visible window of a CowscopeViewState with
 * ticks every 1, 2 or 5 x 10^k ns (at least about 100 px apart), relative
 * to the session start, marks the cursor, and says in its left inset (the
 * lanes' title gutter) how much of the session is shown.  It only draws:
 * the timeline that holds it handles presses on it (a click moves the
 * cursor, a drag selects a range).
 *
 * The time axis: [t0, t1) of the window spans [inset, width) of the
 * widget; the timeline's lanes use the same mapping. */
#pragma once

#include <gtk/gtk.h>

#include "cowscope-view-state.h"

G_BEGIN_DECLS

#define COWSCOPE_TIME_RULER_HEIGHT 26

#define COWSCOPE_TYPE_TIME_RULER (cowscope_time_ruler_get_type ())
G_DECLARE_FINAL_TYPE (CowscopeTimeRuler, cowscope_time_ruler, COWSCOPE, TIME_RULER, GtkWidget)

GtkWidget *cowscope_time_ruler_new (void);

CowscopeViewState *cowscope_time_ruler_get_view_state (CowscopeTimeRuler *self);
void cowscope_time_ruler_set_view_state (CowscopeTimeRuler *self, CowscopeViewState *state);

/* Where the time axis starts, in pixels from the left edge. */
int cowscope_time_ruler_get_inset (CowscopeTimeRuler *self);
void cowscope_time_ruler_set_inset (CowscopeTimeRuler *self, int inset);

/* The x of time @t when [@t0, @t1) spans [@x0, @x0 + @width). */
static inline double
cowscope_time_axis_to_x (gint64 t, gint64 t0, gint64 t1, double x0, double width)
{
  return x0 + (double) (t - t0) * width / (double) (t1 - t0);
}

/* The time at @x on the same axis (rounded to the nanosecond). */
gint64 cowscope_time_axis_to_time (double x, gint64 t0, gint64 t1, double x0, double width);

G_END_DECLS
