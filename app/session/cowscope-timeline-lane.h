/* cowscope-timeline-lane.h — one row of the copy timeline: a thread, a
 * CUDA stream or a counter track.  Lanes are immutable once the document
 * has loaded; queries are thread-safe.  A schema-2 session's thread and
 * CUDA lanes read their instants from the file when a query first needs
 * them (through the document's bounded store of decoded chunks); other
 * lanes answer from memory. */
#pragma once

#include <gio/gio.h>

#include "cowscope-session-types.h"
#include "cowscope-timeline-window.h"

G_BEGIN_DECLS

#define COWSCOPE_TYPE_TIMELINE_LANE (cowscope_timeline_lane_get_type ())
G_DECLARE_FINAL_TYPE (CowscopeTimelineLane, cowscope_timeline_lane, COWSCOPE,
                      TIMELINE_LANE, GObject)

CowscopeLaneKind cowscope_timeline_lane_get_kind (CowscopeTimelineLane *self);
/* A translated title: "python (1234)", "CUDA stream 7 (device 0)", ... */
const char *cowscope_timeline_lane_get_title (CowscopeTimelineLane *self);
guint32 cowscope_timeline_lane_get_pid (CowscopeTimelineLane *self);
/* Thread lanes: the tid; CUDA lanes: the stream id; counters: 0. */
gint64 cowscope_timeline_lane_get_tid (CowscopeTimelineLane *self);
/* CUDA lanes: the device; others -1. */
gint64 cowscope_timeline_lane_get_device (CowscopeTimelineLane *self);
CowscopeCounterKind cowscope_timeline_lane_get_counter (CowscopeTimelineLane *self);
/* Events (or CUDA records) the lane holds; 0 for counters. */
guint64 cowscope_timeline_lane_get_n_events (CowscopeTimelineLane *self);

/* What to draw for [@t0, @t1) at @width pixels (see CowscopeTimelineWindow):
 * everything under one pixel merged into one bucket per pixel.  About
 * O(pixels x log events) once the chunks it covers are decoded; a damaged
 * chunk is left out (cowscope_session_document_take_query_error() tells
 * why).  Safe from any thread. */
CowscopeTimelineWindow *cowscope_timeline_lane_query (CowscopeTimelineLane *self,
                                                      gint64 t0, gint64 t1,
                                                      guint width);

/* The same without reading the session file, for a first frame that
 * must not wait for it: the part of a schema-2 lane not decoded yet is
 * estimated from what the lane knows without it (each chunk's time span
 * and count: its instants as if spread evenly, in buckets of kind
 * COWSCOPE_ITEM_OTHER), and *@complete is FALSE; otherwise the answer is
 * the query's and *@complete TRUE.  Safe from any thread; never waits for
 * another thread's decoding. */
CowscopeTimelineWindow *cowscope_timeline_lane_query_cached (CowscopeTimelineLane *self,
                                                             gint64 t0, gint64 t1,
                                                             guint width, gboolean *complete);
/* cowscope_timeline_lane_query() in a worker thread; the callback runs in
 * the caller's thread-default main context. */
void cowscope_timeline_lane_query_async (CowscopeTimelineLane *self, gint64 t0, gint64 t1,
                                         guint width, GCancellable *cancellable,
                                         GAsyncReadyCallback callback, gpointer user_data);
CowscopeTimelineWindow *cowscope_timeline_lane_query_finish (CowscopeTimelineLane *self,
                                                             GAsyncResult *result,
                                                             GError **error);
/* Number of events (CUDA records) that start in [@t0, @t1). */
guint64 cowscope_timeline_lane_count (CowscopeTimelineLane *self, gint64 t0, gint64 t1);

/* Adds the events (CUDA records) that start in [@t0, @t1), counts and
 * bytes per item kind, to @sums: whole blocks of the lane from their kept
 * totals, so a range of millions of events costs a few blocks' work (and,
 * on a schema-2 session, decoding each chunk once).  A damaged chunk is
 * left out, as in queries.  Safe from any thread. */
void cowscope_timeline_lane_sum (CowscopeTimelineLane *self, gint64 t0, gint64 t1,
                                 CowscopeKindSums *sums);

G_END_DECLS
