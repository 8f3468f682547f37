/* cowscope-lane-painter.c — what the lane painters share (see
 * cowscope-lane-painter.h; each painter is in its own file). */
#include "cowscope-lane-painter.h"

#include <math.h>

void
cowscope_lane_geometry_init (CowscopeLaneGeometry *geometry, CowscopeLaneKind kind,
                             int row_height, guint n_range_rows, int text_height,
                             int min_height)
{
  g_return_if_fail (geometry != NULL);
  row_height = MAX (row_height, 12);
  *geometry = (CowscopeLaneGeometry) {
    .event_y = COWSCOPE_LANE_EVENT_ROW_Y,
    .event_h = row_height - 2 * COWSCOPE_LANE_EVENT_ROW_Y,
    .range_y = row_height,
    .range_h = MAX (text_height, 4) + 1,
    .range_step = MAX (text_height, 4) + 3,
    .n_range_rows = kind == COWSCOPE_LANE_THREAD ? MIN (n_range_rows, COWSCOPE_LANE_MAX_RANGE_ROWS)
                                                  : 0,
  };
  if (kind == COWSCOPE_LANE_PROCESS)
    {
      /* IPC ticks on top, limbo and held spans packed below. */
      geometry->event_h = COWSCOPE_LANE_PROCESS_TICK_HEIGHT;
      geometry->height = min_height < 0 ? -min_height
                                        : MAX (COWSCOPE_LANE_PROCESS_HEIGHT, min_height);
      return;
    }
  if (kind == COWSCOPE_LANE_COUNTER)
    {
      geometry->height = MAX (COWSCOPE_LANE_COUNTER_HEIGHT, min_height);
      return;
    }
  geometry->height = row_height;
  if (geometry->n_range_rows > 0)
    geometry->height = (int) ceilf (geometry->range_y + geometry->n_range_rows * geometry->range_step);
  geometry->height = MAX (geometry->height, min_height);
}

int
cowscope_lane_geometry_range_row_at (const CowscopeLaneGeometry *geometry, double y)
{
  g_return_val_if_fail (geometry != NULL, -1);
  if (geometry->n_range_rows == 0 || y < geometry->range_y - 1)
    return -1;
  int row = (int) floor ((y - geometry->range_y + 1) / geometry->range_step);
  return row < (int) geometry->n_range_rows ? row : -1;
}

gboolean
cowscope_lane_kind_is_box (guint kind)
{
  return kind == COWSCOPE_ITEM_COPY || kind == COWSCOPE_ITEM_STEAL
         || kind == COWSCOPE_ITEM_MATERIALIZE_FAILED || kind == COWSCOPE_ITEM_EAGER_COPY;
}

void
cowscope_lane_span_px (const CowscopeTimelineItem *span, gint64 t0, double ns_per_px, int width,
                       float *x, float *w)
{
  double a = MAX ((double) (span->start_ns - t0) / ns_per_px, -1.0);
  double b = MIN ((double) (span->end_ns - t0) / ns_per_px, width + 1.0);
  a = floor (a);
  b = MAX (ceil (b), a + 1);
  *x = (float) a;
  *w = (float) (b - a);
}

int
cowscope_lane_compare_spans (gconstpointer a, gconstpointer b)
{
  const CowscopeTimelineItem *x = *(const CowscopeTimelineItem *const *) a;
  const CowscopeTimelineItem *y = *(const CowscopeTimelineItem *const *) b;
  if (x->start_ns != y->start_ns)
    return x->start_ns < y->start_ns ? -1 : 1;
  return (x->end_ns < y->end_ns) - (x->end_ns > y->end_ns);
}

GskRenderNode *
cowscope_lane_paint_finish (GtkSnapshot *snapshot)
{
  GskRenderNode *node = gtk_snapshot_free_to_node (snapshot);
  return node != NULL ? node : gsk_container_node_new (NULL, 0);
}
