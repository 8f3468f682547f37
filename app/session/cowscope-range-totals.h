/* cowscope-range-totals.h — what a selected time range of a session
 * holds, over every thread lane: its events, the copies among them (and
 * the bytes they copied), the steals and the lazy clones.
 *
 * Totals add up the lanes' kept per-block sums
 * (cowscope_timeline_lane_sum()), so a range over a whole session of ten
 * million events costs a few thousand blocks, not a walk of its events. */
#pragma once

#include <gio/gio.h>

#include "cowscope-session-document.h"
#include "cowscope-timeline-item.h"

G_BEGIN_DECLS

typedef struct {
  guint64 events;        /* engine events starting in the range */
  guint64 copies;        /* materializations that copied (their end event) */
  guint64 bytes_copied;
  guint64 steals;        /* materializations that stole */
  guint64 lazy_clones;   /* lazy clones (not eager copies) */
} CowscopeRangeTotals;

/* The totals of the per-kind sums @sums of a range's thread lanes. */
void cowscope_range_totals_from_sums (CowscopeRangeTotals *totals, const CowscopeKindSums *sums);

/* Counts [@t0, @t1) over the thread lanes among @lanes (a GListModel of
 * CowscopeTimelineLane) into @totals; FALSE, with @totals unset, when
 * @cancellable was cancelled first.  Safe from any thread. */
gboolean cowscope_range_totals_count (GListModel *lanes, gint64 t0, gint64 t1,
                                      GCancellable *cancellable, CowscopeRangeTotals *totals);

/* Counts [@t0, @t1) over the thread lanes of @document in a worker
 * thread. */
void cowscope_range_totals_count_async (CowscopeSessionDocument *document, gint64 t0, gint64 t1,
                                        GCancellable *cancellable, GAsyncReadyCallback callback,
                                        gpointer user_data);

/* TRUE with @totals set, or FALSE with @error (G_IO_ERROR_CANCELLED). */
gboolean cowscope_range_totals_count_finish (GAsyncResult *result, CowscopeRangeTotals *totals,
                                             GError **error);

G_END_DECLS
