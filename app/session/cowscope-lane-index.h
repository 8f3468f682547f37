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
 * from any thread need no lock.  Live snapshots, process lanes and eager
 * loads use it whole; a finalized session's thread and CUDA lanes keep
 * only their spans here and read their instants lazily
 * (cowscope-packed-lane.h).
 */
#pragma once

#include <glib.h>

#include "cowscope-format-counters.h"
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

/* Appends @width CowscopeCounterSample (one per pixel) of the finished
 * counter track @bins to @samples. */
void cowscope_counter_bins_query (const CowscopeCounterBins *bins, gint64 t0, gint64 t1,
                                  guint width, GArray *samples);

G_END_DECLS
