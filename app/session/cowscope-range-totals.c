/* cowscope-range-totals.c — a time range's totals (see header). */
#include "cowscope-range-totals.h"

#include "cowscope-timeline-lane.h"

void
cowscope_range_totals_from_sums (CowscopeRangeTotals *totals, const CowscopeKindSums *sums)
{
  g_return_if_fail (totals != NULL && sums != NULL);
  *totals = (CowscopeRangeTotals) { 0 };
  for (guint k = 0; k < COWSCOPE_N_ITEM_KINDS; k++)
    totals->events += sums->count[k];
  totals->copies = sums->count[COWSCOPE_ITEM_COPY];
  totals->bytes_copied = sums->bytes[COWSCOPE_ITEM_COPY];
  totals->steals = sums->count[COWSCOPE_ITEM_STEAL];
  totals->lazy_clones = sums->count[COWSCOPE_ITEM_LAZY_CLONE];
}

gboolean
cowscope_range_totals_count (GListModel *lanes, gint64 t0, gint64 t1, GCancellable *cancellable,
                             CowscopeRangeTotals *totals)
{
  g_return_val_if_fail (G_IS_LIST_MODEL (lanes), FALSE);
  g_return_val_if_fail (totals != NULL, FALSE);
  CowscopeKindSums sums = { { 0 } };
  guint n = g_list_model_get_n_items (lanes);
  for (guint i = 0; i < n; i++)
    {
      if (g_cancellable_is_cancelled (cancellable))
        return FALSE;
      g_autoptr (CowscopeTimelineLane) lane = g_list_model_get_item (lanes, i);
      if (cowscope_timeline_lane_get_kind (lane) == COWSCOPE_LANE_THREAD)
        cowscope_timeline_lane_sum (lane, t0, t1, &sums);
    }
  cowscope_range_totals_from_sums (totals, &sums);
  return TRUE;
}

typedef struct {
  gint64 t0, t1;
} Range;

/* The worker thread: the document is the task's source object. */
static void
count_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  const Range *range = task_data;
  GListModel *lanes = cowscope_session_document_get_lanes (source);
  CowscopeRangeTotals *totals = g_new0 (CowscopeRangeTotals, 1);
  if (!cowscope_range_totals_count (lanes, range->t0, range->t1, cancellable, totals))
    {
      g_free (totals);
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_CANCELLED, "cancelled");
      return;
    }
  g_task_return_pointer (task, totals, g_free);
}

void
cowscope_range_totals_count_async (CowscopeSessionDocument *document, gint64 t0, gint64 t1,
                                   GCancellable *cancellable, GAsyncReadyCallback callback,
                                   gpointer user_data)
{
  g_return_if_fail (COWSCOPE_IS_SESSION_DOCUMENT (document));
  g_autoptr (GTask) task = g_task_new (document, cancellable, callback, user_data);
  g_task_set_source_tag (task, cowscope_range_totals_count_async);
  Range *range = g_new (Range, 1);
  range->t0 = t0, range->t1 = t1;
  g_task_set_task_data (task, range, g_free);
  g_task_run_in_thread (task, count_thread);
}

gboolean
cowscope_range_totals_count_finish (GAsyncResult *result, CowscopeRangeTotals *totals,
                                    GError **error)
{
  g_return_val_if_fail (G_IS_TASK (result), FALSE);
  g_autofree CowscopeRangeTotals *counted = g_task_propagate_pointer (G_TASK (result), error);
  if (counted == NULL)
    return FALSE;
  if (totals != NULL)
    *totals = *counted;
  return TRUE;
}
