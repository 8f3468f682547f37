/* cowscope-timeline-window.h — the answer to one timeline query: what to
 * draw in one lane for the time window [t0, t1) at a given pixel width. */
#pragma once

#include <glib-object.h>

#include "cowscope-timeline-item.h"

G_BEGIN_DECLS

#define COWSCOPE_TYPE_TIMELINE_WINDOW (cowscope_timeline_window_get_type ())
G_DECLARE_FINAL_TYPE (CowscopeTimelineWindow, cowscope_timeline_window,
                      COWSCOPE, TIMELINE_WINDOW, GObject)

/* The window asked for. */
gint64 cowscope_timeline_window_get_start (CowscopeTimelineWindow *self);
gint64 cowscope_timeline_window_get_end (CowscopeTimelineWindow *self);
guint cowscope_timeline_window_get_width (CowscopeTimelineWindow *self);

/* Instants and buckets in start order, at most one per pixel. */
const CowscopeTimelineItem *cowscope_timeline_window_get_items (CowscopeTimelineWindow *self,
                                                                guint *n_items);
/* Spans (materializations, ranges, CUDA activity) at least one pixel wide. */
const CowscopeTimelineItem *cowscope_timeline_window_get_spans (CowscopeTimelineWindow *self,
                                                                guint *n_spans);
/* Counter lanes only: one sample per pixel. */
const CowscopeCounterSample *cowscope_timeline_window_get_samples (CowscopeTimelineWindow *self,
                                                                   guint *n_samples);

/* Sum of the items' counts: the number of events starting in the window. */
guint64 cowscope_timeline_window_get_total_count (CowscopeTimelineWindow *self);

/* Private to the session model: takes the arrays. */
CowscopeTimelineWindow *cowscope_timeline_window_new (gint64 t0, gint64 t1, guint width,
                                                      GArray *items, GArray *spans,
                                                      GArray *samples);

G_END_DECLS
