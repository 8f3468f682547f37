/* cowscope-timeline-format.h — how the copy timeline writes times,
 * counts and its items for people: the ruler's labels, lane subtitles,
 * tooltips and the selected range's totals.  Every user-visible string of
 * the timeline is here. */
#pragma once

#include <glib.h>

#include "cowscope-range-totals.h"
#include "cowscope-session-document.h"
#include "cowscope-timeline-item.h"
#include "cowscope-timeline-lane.h"

G_BEGIN_DECLS

/* A duration with about three significant digits ("12.5 ms"). */
char *cowscope_timeline_format_duration (gint64 ns);

/* A ruler label for @ns after the session start, with as many decimals as
 * the tick spacing @step needs ("1.25 ms"). */
char *cowscope_timeline_format_tick (gint64 ns, gint64 step);

/* How much of the session the window [t0, t1) shows ("12.5 ms shown"). */
char *cowscope_timeline_format_shown (gint64 t0, gint64 t1);

/* @n with the locale's digit grouping ("48,211"). */
char *cowscope_timeline_format_number (guint64 n);

/* A counter's value: a size for byte counters, else a count. */
char *cowscope_timeline_format_counter (CowscopeCounterKind counter, double value);

/* What @lane of @document is called in its label: a @name ("worker-1",
 * the thread's name, or "Thread 1234"; a process's program; "CUDA stream
 * 7"; a counter's title) and a @detail line that says which thread,
 * stream or process it is ("tid 1234 · process 99"); both newly
 * allocated. */
void cowscope_timeline_format_lane_label (CowscopeTimelineLane *lane,
                                          CowscopeSessionDocument *document, char **name,
                                          char **detail);

/* The tooltip of @lane's label: its whole name, which thread of which
 * process (and program), and how many events it holds. */
char *cowscope_timeline_format_lane_tooltip (CowscopeTimelineLane *lane,
                                             CowscopeSessionDocument *document);

/* The tooltip of @item in @lane (times after @origin, the session start);
 * @range_name: a user range's name, or NULL. */
char *cowscope_timeline_format_item_tooltip (CowscopeTimelineLane *lane,
                                             const CowscopeTimelineItem *item, gint64 origin,
                                             const char *range_name);

/* The name of an item kind, for people ("Copy", "Lazy clone"). */
const char *cowscope_timeline_format_kind_name (CowscopeItemKind kind);

/* The tooltip of counter lane @lane's @sample. */
char *cowscope_timeline_format_sample_tooltip (CowscopeTimelineLane *lane,
                                               const CowscopeCounterSample *sample, gint64 origin);

/* The box over a selected range [r0, r1): its duration and @totals, or
 * that they are being counted when @totals is NULL. */
char *cowscope_timeline_format_range (gint64 r0, gint64 r1, const CowscopeRangeTotals *totals);

G_END_DECLS
