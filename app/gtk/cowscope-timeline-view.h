/* cowscope-timeline-view.h — the copy timeline.
 *
 * A time ruler (CowscopeTimeRuler, a child) over one lane per counter
 * track (bytes allocated, bytes shared lazily, live storages), per process
 * of a multi-process session, per thread and per CUDA stream, in the
 * session model's order (cowscope-lane-order.h).  It draws only the
 * visible window of its CowscopeViewState, asking each lane for items
 * aggregated at the widget's pixel width, and caches the render node each
 * lane's painter (cowscope-lane-painter.h) makes until the window, the
 * width or the colours (named colours of the style sheet) change.  It
 * follows and changes the view state: zoom and pan set the visible window,
 * a click selects an event and moves the cursor, a drag on the ruler (or
 * with Shift) selects a range whose totals (cowscope-range-totals.h) it
 * shows.
 *
 * Actions: timeline.zoom-in (+), timeline.zoom-out (−), timeline.zoom-reset
 * (0), timeline.pan-left (←), timeline.pan-right (→), timeline.zoom-to-range
 * (Enter), timeline.clear-range (Escape).  Ctrl+scroll and pinch zoom around
 * the pointer; plain scroll and drag pan; Shift+scroll scrolls the lanes.
 *
 * Implements GtkScrollable (vertically): put it in a GtkScrolledWindow.
 */
#pragma once

#include <gtk/gtk.h>

#include "cowscope-range-totals.h"
#include "cowscope-timeline-lane.h"
#include "cowscope-view-state.h"

G_BEGIN_DECLS

#define COWSCOPE_TYPE_TIMELINE_VIEW (cowscope_timeline_view_get_type ())
G_DECLARE_FINAL_TYPE (CowscopeTimelineView, cowscope_timeline_view, COWSCOPE, TIMELINE_VIEW,
                      GtkWidget)

GtkWidget *cowscope_timeline_view_new (void);

CowscopeViewState *cowscope_timeline_view_get_view_state (CowscopeTimelineView *self);
void cowscope_timeline_view_set_view_state (CowscopeTimelineView *self,
                                            CowscopeViewState *state);

/* The lanes shown, top to bottom: counters; in sessions of several
 * processes each process lane followed by its threads; other threads;
 * CUDA streams. */
guint cowscope_timeline_view_get_n_lanes (CowscopeTimelineView *self);
CowscopeTimelineLane *cowscope_timeline_view_get_lane (CowscopeTimelineView *self, guint i);
/* Where lane @i is, in widget coordinates (it may be scrolled out). */
void cowscope_timeline_view_get_lane_area (CowscopeTimelineView *self, guint i, int *y,
                                           int *height);

/* Widget x <-> session time for the visible window. */
double cowscope_timeline_view_time_to_x (CowscopeTimelineView *self, gint64 t);
gint64 cowscope_timeline_view_x_to_time (CowscopeTimelineView *self, double x);

/* Zooms by @factor (> 1 zooms in) keeping the time under widget x
 * @anchor_x where it is. */
void cowscope_timeline_view_zoom (CowscopeTimelineView *self, double factor, double anchor_x);

/* What a primary click at (@x, @y) does: selects the event there (if any)
 * and moves the cursor. */
void cowscope_timeline_view_click (CowscopeTimelineView *self, double x, double y);

/* The totals of the view state's range; FALSE while they are being counted
 * or when there is no range. */
gboolean cowscope_timeline_view_get_range_totals (CowscopeTimelineView *self,
                                                  CowscopeRangeTotals *totals);

/* The colour items of @kind are drawn with (for tests). */
void cowscope_timeline_view_get_kind_color (CowscopeTimelineView *self, CowscopeItemKind kind,
                                            GdkRGBA *color);

/* How many events are outlined because they concern the highlighted
 * objects (the timeline's side of a highlight); FALSE while those are
 * still being looked up. */
gboolean cowscope_timeline_view_get_n_highlighted (CowscopeTimelineView *self, guint *n_events);

/* The message of the last ::query-error emitted (a damaged part of the
 * session met while drawing), or NULL. */
const char *cowscope_timeline_view_get_query_error (CowscopeTimelineView *self);

/* Snapshots that drew a session so far (for tests and the benchmark). */
guint cowscope_timeline_view_get_frame_count (CowscopeTimelineView *self);

/* FALSE while the first frame of a session shows estimates for lanes not
 * decoded yet and waits for their exact answers (see the .c file). */
gboolean cowscope_timeline_view_is_exact (CowscopeTimelineView *self);

G_END_DECLS
