/* cowscope-timeline-overview.h — an overview strip of the whole session
 * above the copy timeline, as Perfetto has: how busy each moment was
 * (events, and copies marked in their colour), the visible window as a
 * box, the cursor as a line.  A click centres the window there, a drag
 * moves it; the width of the window stays.
 *
 * It follows a CowscopeTimelineView (its view state, and its label
 * column, so that its time axis starts where the timeline's does).  The
 * activity is counted once per session in a worker thread and drawn into
 * a cached render node; a frame adds the window and the cursor. */
#pragma once

#include <gtk/gtk.h>

#include "cowscope-timeline-view.h"

G_BEGIN_DECLS

#define COWSCOPE_TYPE_TIMELINE_OVERVIEW (cowscope_timeline_overview_get_type ())
G_DECLARE_FINAL_TYPE (CowscopeTimelineOverview, cowscope_timeline_overview, COWSCOPE,
                      TIMELINE_OVERVIEW, GtkWidget)

GtkWidget *cowscope_timeline_overview_new (void);

CowscopeTimelineView *cowscope_timeline_overview_get_timeline (CowscopeTimelineOverview *self);
void cowscope_timeline_overview_set_timeline (CowscopeTimelineOverview *self,
                                              CowscopeTimelineView *timeline);

/* The x of session time @t in the strip. */
double cowscope_timeline_overview_time_to_x (CowscopeTimelineOverview *self, gint64 t);

/* What a press at @x dragged by @dx does, as the pointer would: centres
 * the window at @x (unless the press is inside the window's box), then
 * moves it with the drag. */
void cowscope_timeline_overview_drag (CowscopeTimelineOverview *self, double x, double dx);

/* Whether the activity of the session is counted (and drawn from the
 * next frame on). */
gboolean cowscope_timeline_overview_get_activity_ready (CowscopeTimelineOverview *self);

G_END_DECLS
