/* cowscope-lane-order.c — the timeline's lane order (see header). */
#include "cowscope-lane-order.h"

#include "cowscope-timeline-lane.h"

/* Appends to @out the lanes of @kind in @lanes (a GPtrArray of every lane
 * in document order), only those of process @pid unless @any_pid. */
static void
append_kind (GPtrArray *out, GPtrArray *lanes, CowscopeLaneKind kind, gboolean any_pid,
             guint32 pid)
{
  for (guint i = 0; i < lanes->len; i++)
    {
      CowscopeTimelineLane *lane = lanes->pdata[i];
      if (cowscope_timeline_lane_get_kind (lane) == kind
          && (any_pid || cowscope_timeline_lane_get_pid (lane) == pid))
        g_ptr_array_add (out, g_object_ref (lane));
    }
}

GPtrArray *
cowscope_lane_order_for_display (GListModel *lanes)
{
  g_return_val_if_fail (G_IS_LIST_MODEL (lanes), NULL);
  guint n = g_list_model_get_n_items (lanes);
  g_autoptr (GPtrArray) all = g_ptr_array_new_full (n, g_object_unref);
  for (guint i = 0; i < n; i++)
    g_ptr_array_add (all, g_list_model_get_item (lanes, i));

  GPtrArray *out = g_ptr_array_new_full (n, g_object_unref);
  append_kind (out, all, COWSCOPE_LANE_COUNTER, TRUE, 0);
  g_autoptr (GHashTable) headed = g_hash_table_new (g_direct_hash, g_direct_equal);
  for (guint i = 0; i < all->len; i++)
    {
      CowscopeTimelineLane *lane = all->pdata[i];
      if (cowscope_timeline_lane_get_kind (lane) != COWSCOPE_LANE_PROCESS)
        continue;
      guint32 pid = cowscope_timeline_lane_get_pid (lane);
      g_ptr_array_add (out, g_object_ref (lane));
      /* A second process lane of one pid would list its threads twice. */
      if (g_hash_table_add (headed, GUINT_TO_POINTER (pid)))
        append_kind (out, all, COWSCOPE_LANE_THREAD, FALSE, pid);
    }
  for (guint i = 0; i < all->len; i++)
    {
      CowscopeTimelineLane *lane = all->pdata[i];
      if (cowscope_timeline_lane_get_kind (lane) == COWSCOPE_LANE_THREAD
          && !g_hash_table_contains (headed, GUINT_TO_POINTER (cowscope_timeline_lane_get_pid (lane))))
        g_ptr_array_add (out, g_object_ref (lane));
    }
  append_kind (out, all, COWSCOPE_LANE_CUDA_STREAM, TRUE, 0);
  return out;
}
