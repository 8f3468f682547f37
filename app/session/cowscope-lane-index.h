/* cowscope-lane-index.h — the in-memory index behind one timeline lane
 * (private to the session model).
 *
 * Sysprof's pattern for big captures: index, don't parse into objects.
 * Per lane the index keeps, in start order, a timestamp, an id, a kind
 * byte and a byte count per event (25 bytes an event), block prefix sums
 * every 256 events (counts and bytes per kind), and the lane's spans
 * (materializations, user ranges, CUDA activity) grouped by power-of-two
 * duration so that "spans at least one pixel wide in [t0, t1)" is a few
 * binary searches.  Built once by the loader, then read-only: queries
 * from any thread need no lock.  Schema-1 sessions, live snapshots and
 * process lanes use it; a schema-2 session's thread and CUDA lanes keep
 * only their spans here and read their instants lazily
 * (cowscope-packed-lane.h).
 */
#pragma once

#include <glib.h>

#include "cowscope-timeline-item.h"

G_BEGIN_DECLS

typedef struct _CowscopeLaneIndex CowscopeLaneIndex;

CowscopeLaneIndex *cowscope_lane_index_new (void);
void cowscope_lane_index_free (CowscopeLaneIndex *index);

/* Appends an instant (an event); any order, sorted by finish(). */
void cowscope_lane_index_append (CowscopeLaneIndex *index, gint64 ts, gint64 id,
                                 guint8 kind, guint64 bytes);

/* Adds a span [start, end) drawn as a bar when at least a pixel wide. */
void cowscope_lane_index_add_span (CowscopeLaneIndex *index, gint64 start,
                                   gint64 end, gint64 id, guint8 kind,
                                   guint64 bytes);

/* Sorts and builds the prefix sums; call once before any query. */
void cowscope_lane_index_finish (CowscopeLaneIndex *index);

/* Number of instants, and their first/last time (FALSE when empty). */
gsize cowscope_lane_index_get_n (const CowscopeLaneIndex *index);
gboolean cowscope_lane_index_get_bounds (const CowscopeLaneIndex *index,
                                         gint64 *first, gint64 *last);

/* Number of instants with t0 <= ts < t1. */
gsize cowscope_lane_index_count (const CowscopeLaneIndex *index, gint64 t0, gint64 t1);

/* Adds the instants with t0 <= ts < t1 to @sums, per kind. */
void cowscope_lane_index_sum (const CowscopeLaneIndex *index, gint64 t0, gint64 t1,
                              CowscopeKindSums *sums);

/* Appends to @items (CowscopeTimelineItem) one item per non-empty pixel of
 * [t0, t1) split into @width pixels: the event itself when alone in its
 * pixel, else a bucket (count, bytes, dominant kind); the counts add up to
 * cowscope_lane_index_count (t0, t1).  Appends to @spans (may be NULL) the
 * spans that overlap the window and are at least one pixel wide. */
void cowscope_lane_index_query (const CowscopeLaneIndex *index, gint64 t0,
                                gint64 t1, guint width, GArray *items,
                                GArray *spans);

/* A counter's value over time, kept in fixed bins (min, max, last). */
typedef struct _CowscopeCounterSeries CowscopeCounterSeries;

/* A series of @n_bins bins covering [start, end]. */
CowscopeCounterSeries *cowscope_counter_series_new (gint64 start, gint64 end,
                                                    guint n_bins);
void cowscope_counter_series_free (CowscopeCounterSeries *series);

/* Records that the counter is @value from @ts on. */
void cowscope_counter_series_set (CowscopeCounterSeries *series, gint64 ts,
                                  double value);

/* Sets bin @bin as already finished (a series read back from a session's
 * timeline_counters: do not call finish() on it). */
void cowscope_counter_series_set_bin (CowscopeCounterSeries *series, guint bin,
                                      double min, double max, double last);

/* Fills bins no event touched with the value before them. */
void cowscope_counter_series_finish (CowscopeCounterSeries *series);

/* Appends @width CowscopeCounterSample (one per pixel) to @samples. */
void cowscope_counter_series_query (const CowscopeCounterSeries *series,
                                    gint64 t0, gint64 t1, guint width,
                                    GArray *samples);

G_END_DECLS
