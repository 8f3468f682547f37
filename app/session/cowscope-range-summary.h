/* cowscope-range-summary.h — what a selected time range of a session
 * copied, grouped as Perfetto's area selection groups slices: by the
 * operation whose write caused each materialization, by the tensor
 * written, or by the call site (the innermost frame outside Cowscope of
 * its call stack, as the report's "Top call sites").
 *
 * A row per group: the copies and the steals whose begin falls in
 * [t0, t1), the bytes copied and the time spent materializing (begin to
 * end), ordered by bytes copied, then copies, then name.  Computed in
 * SQL (the materializations' begin_ts index), in any thread; the async
 * form runs in a worker. */
#pragma once

#include <gio/gio.h>

#include "cowscope-session-document.h"

G_BEGIN_DECLS

typedef enum {
  COWSCOPE_RANGE_BY_OPERATION,
  COWSCOPE_RANGE_BY_TENSOR,
  COWSCOPE_RANGE_BY_CALL_SITE,
  COWSCOPE_N_RANGE_GROUPINGS
} CowscopeRangeGrouping;

#define COWSCOPE_TYPE_RANGE_ROW (cowscope_range_row_get_type ())
G_DECLARE_FINAL_TYPE (CowscopeRangeRow, cowscope_range_row, COWSCOPE, RANGE_ROW, GObject)

/* The group's name: an operation ("add_"), a tensor ("weights (tensor 3,
 * process 100)", or "tensor 3 (process 100)" unnamed), a call site ("train_step (train.c:42)"). */
const char *cowscope_range_row_get_name (CowscopeRangeRow *self);
guint64 cowscope_range_row_get_copies (CowscopeRangeRow *self);
guint64 cowscope_range_row_get_steals (CowscopeRangeRow *self);
guint64 cowscope_range_row_get_bytes_copied (CowscopeRangeRow *self);
/* Nanoseconds from begin to end, summed over the group's finished
 * materializations. */
gint64 cowscope_range_row_get_time_ns (CowscopeRangeRow *self);

/* The rows of [@t0, @t1) grouped by @grouping (a GListModel of
 * CowscopeRangeRow), or NULL with @error.  Any thread. */
GListModel *cowscope_range_summary_compute (CowscopeSessionDocument *document, gint64 t0,
                                            gint64 t1, CowscopeRangeGrouping grouping,
                                            GCancellable *cancellable, GError **error);

void cowscope_range_summary_compute_async (CowscopeSessionDocument *document, gint64 t0,
                                           gint64 t1, CowscopeRangeGrouping grouping,
                                           GCancellable *cancellable,
                                           GAsyncReadyCallback callback, gpointer user_data);
GListModel *cowscope_range_summary_compute_finish (GAsyncResult *result, GError **error);

G_END_DECLS
