/* cowscope-timeline-view.h — the copy timeline.
 *
 * A time ruler (CowscopeTimeRuler, a child) over one lane per counter
 * track (bytes allocated, bytes shared lazily, live storages), per process
 * of a multi-process session, per thread and per CUDA stream, in the
 * session model's order (cowscope-lane-order.h) as the person arranged
 * them (cowscope-lane-filter.h: pinned lanes stay at the top while the
 * others scroll; hidden, folded and filtered-out lanes are not shown).
 * Each lane has a label column on the left (a name, and a detail line
 * such as "tid 1234 · process 99"), as wide as the label-width property;
 * its edge is dragged to resize it.
 *
 * It draws only the visible window of its CowscopeViewState, asking each
 * lane for items aggregated at the data area's pixel width, and caches
 * the render node each lane's painter (cowscope-lane-painter.h) makes
 * until the window, the width or the colours (named colours of the style
 * sheet) change.  User ranges carry their names (cowscope-range-names.h);
 * the selected event's flows (cowscope-flows.h) are drawn as arrows.  It
 * follows and changes the view state: zoom and pan set the visible
 * window, a click selects an event and moves the cursor, a drag on the
 * ruler (or with Shift) selects a range whose totals
 * (cowscope-range-totals.h) it shows.
 *
 * Input, as Perfetto and Sysprof users expect: the wheel scrolls the
 * lanes, Shift+wheel (or a horizontal wheel) pans, Ctrl+wheel and pinch
 * zoom at the pointer; dragging pans.  Right-click on a label opens the
 * lane menu (pin, hide, fold a process, show only a process).  Keys (the
 * actions, listed in the shortcuts window):
 *
 *   timeline.zoom-in / zoom-out (+ − W S), zoom-reset (0),
 *   timeline.pan-left / pan-right (A D), zoom-to-range (Enter),
 *   clear-range (Escape);
 *   timeline.cursor-left / cursor-right (← →: a pixel's time; with Shift,
 *   a tenth of the window), cursor-start / cursor-end (Home End);
 *   timeline.jump-to-cursor (C): the window centred on the cursor;
 *   timeline.next-event / previous-event (] [),
 *   timeline.next-copy / previous-copy (N, Shift+N),
 *   timeline.next-warning / previous-warning (F8, Shift+F8): through the
 *   events of the highlighted (selected) objects, selecting each.
 *
 * Implements GtkScrollable (vertically): put it in a GtkScrolledWindow.
 */
#pragma once

#include <gtk/gtk.h>

#include "cowscope-lane-filter.h"
#include "cowscope-range-names.h"
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

/* The lanes the person arranged (never NULL; kept across sessions). */
CowscopeLaneFilter *cowscope_timeline_view_get_lane_filter (CowscopeTimelineView *self);

/* The label column's width (pixels; clamped to a sane range). */
int cowscope_timeline_view_get_label_width (CowscopeTimelineView *self);
void cowscope_timeline_view_set_label_width (CowscopeTimelineView *self, int width);

/* Binds the timeline's preferences to @settings: timeline-show-counters
 * (show-counters), timeline-lane-height (lane-height) and
 * timeline-label-width (label-width, both ways: a drag is remembered). */
void cowscope_timeline_view_bind_settings (CowscopeTimelineView *self, GSettings *settings);

/* The lanes shown, top to bottom: the pinned ones, then counters; in
 * sessions of several processes each process lane followed by its
 * threads; other threads; CUDA streams. */
guint cowscope_timeline_view_get_n_lanes (CowscopeTimelineView *self);
guint cowscope_timeline_view_get_n_pinned (CowscopeTimelineView *self);
CowscopeTimelineLane *cowscope_timeline_view_get_lane (CowscopeTimelineView *self, guint i);
/* Where lane @i is, in widget coordinates (it may be scrolled out). */
void cowscope_timeline_view_get_lane_area (CowscopeTimelineView *self, guint i, int *y,
                                           int *height);
/* What lane @i's label says (newly allocated) and, once it was drawn,
 * which of its lines did not fit (bit 0: the name, bit 1: the detail);
 * FALSE when it was not drawn yet. */
gboolean cowscope_timeline_view_get_lane_label (CowscopeTimelineView *self, guint i, char **name,
                                                char **detail, guint *ellipsized);

/* Widget x <-> session time for the visible window. */
double cowscope_timeline_view_time_to_x (CowscopeTimelineView *self, gint64 t);
gint64 cowscope_timeline_view_x_to_time (CowscopeTimelineView *self, double x);

/* Zooms by @factor (> 1 zooms in) keeping the time under widget x
 * @anchor_x where it is. */
void cowscope_timeline_view_zoom (CowscopeTimelineView *self, double factor, double anchor_x);

/* What a primary click at (@x, @y) does: selects the event there (if any)
 * and moves the cursor; on a process lane's expander, folds or unfolds
 * its threads. */
void cowscope_timeline_view_click (CowscopeTimelineView *self, double x, double y);

/* What a press at (@x, @y) with @modifiers dragged by (@dx, @dy) does,
 * as the pointer would: pans, selects a range, or (from the label
 * column's edge) resizes the labels. */
void cowscope_timeline_view_drag (CowscopeTimelineView *self, double x, double y, double dx,
                                  double dy, GdkModifierType modifiers);

/* What a wheel turn of (@dx, @dy) with @modifiers does, at the pointer's
 * last position: scrolls the lanes, pans (Shift, or @dx) or zooms (Ctrl). */
void cowscope_timeline_view_scroll (CowscopeTimelineView *self, double dx, double dy,
                                    GdkModifierType modifiers);

/* The tooltip text at (@x, @y), or NULL (what the pointer shows there). */
char *cowscope_timeline_view_get_tooltip_at (CowscopeTimelineView *self, double x, double y);

/* Selects the event of @events (CowscopeObjectEvent in step order,
 * cowscope-event-steps.h) of a kind in @kinds after (@direction > 0) or
 * before the selection or cursor, puts the cursor at its end and brings
 * it into view; FALSE when there is none. */
gboolean cowscope_timeline_view_step_through (CowscopeTimelineView *self, GArray *events,
                                              int direction, guint32 kinds);

/* The range names read for the session, NULL while they are read. */
CowscopeRangeNames *cowscope_timeline_view_get_range_names (CowscopeTimelineView *self);

/* The flows of the selected event (CowscopeFlow), NULL while they are
 * looked up. */
GArray *cowscope_timeline_view_get_flows (CowscopeTimelineView *self);

/* The totals of the view state's range; FALSE while they are being counted
 * or when there is no range. */
gboolean cowscope_timeline_view_get_range_totals (CowscopeTimelineView *self,
                                                  CowscopeRangeTotals *totals);

/* The colour items of @kind are drawn with (for tests and the legend). */
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
