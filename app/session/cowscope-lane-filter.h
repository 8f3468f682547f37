/* cowscope-lane-filter.h — which of a session's lanes the timeline shows,
 * and where, as the person chose:
 *
 *   pinned lanes stay at the top (the timeline keeps them in view while
 *   the other lanes scroll), in display order;
 *   hidden lanes are not shown;
 *   a collapsed process shows its process lane but not its threads;
 *   a filter text keeps the thread, CUDA and process lanes whose title,
 *   thread id, process id or program contains it (ignoring case), and the
 *   process lane above each kept thread;
 *   the counter tracks show only when asked for (a preference).
 *
 * Lanes are known by a key that survives reopening the session (kind,
 * process, thread or stream, counter), not by position.  Main thread
 * only; ::changed tells the views. */
#pragma once

#include <gio/gio.h>

#include "cowscope-session-document.h"
#include "cowscope-timeline-lane.h"

G_BEGIN_DECLS

#define COWSCOPE_TYPE_LANE_FILTER (cowscope_lane_filter_get_type ())
G_DECLARE_FINAL_TYPE (CowscopeLaneFilter, cowscope_lane_filter, COWSCOPE, LANE_FILTER, GObject)

CowscopeLaneFilter *cowscope_lane_filter_new (void);

/* A key naming @lane in any session ("thread/1234/1240"). */
char *cowscope_lane_key (CowscopeTimelineLane *lane);

gboolean cowscope_lane_filter_get_pinned (CowscopeLaneFilter *self, CowscopeTimelineLane *lane);
void cowscope_lane_filter_set_pinned (CowscopeLaneFilter *self, CowscopeTimelineLane *lane,
                                      gboolean pinned);

gboolean cowscope_lane_filter_get_hidden (CowscopeLaneFilter *self, CowscopeTimelineLane *lane);
void cowscope_lane_filter_set_hidden (CowscopeLaneFilter *self, CowscopeTimelineLane *lane,
                                      gboolean hidden);

/* Process @pid's thread lanes folded under its process lane. */
gboolean cowscope_lane_filter_get_collapsed (CowscopeLaneFilter *self, guint32 pid);
void cowscope_lane_filter_set_collapsed (CowscopeLaneFilter *self, guint32 pid,
                                         gboolean collapsed);

/* The filter text ("" or NULL: every lane). */
const char *cowscope_lane_filter_get_text (CowscopeLaneFilter *self);
void cowscope_lane_filter_set_text (CowscopeLaneFilter *self, const char *text);

gboolean cowscope_lane_filter_get_show_counters (CowscopeLaneFilter *self);
void cowscope_lane_filter_set_show_counters (CowscopeLaneFilter *self, gboolean show);

/* Shows every lane again: no hidden lane, no filter text, nothing
 * collapsed (pins stay). */
void cowscope_lane_filter_reset (CowscopeLaneFilter *self);

/* Shows only process @pid's lanes (and the counters): every other
 * thread, CUDA and process lane of @lanes (CowscopeTimelineLane) hidden,
 * nothing folded, no filter text; one ::changed. */
void cowscope_lane_filter_show_only_process (CowscopeLaneFilter *self, GListModel *lanes,
                                             guint32 pid);

/* Whether @lane of @document matches the filter text by itself. */
gboolean cowscope_lane_filter_matches_text (CowscopeLaneFilter *self,
                                            CowscopeSessionDocument *document,
                                            CowscopeTimelineLane *lane);

/* The lanes to show, from @ordered (CowscopeTimelineLane in display
 * order, cowscope-lane-order.h) of @document: pinned lanes first, then
 * the others; a new array holding a reference to each.  @n_pinned gets
 * how many lead it. */
GPtrArray *cowscope_lane_filter_arrange (CowscopeLaneFilter *self,
                                         CowscopeSessionDocument *document, GPtrArray *ordered,
                                         guint *n_pinned);

G_END_DECLS
