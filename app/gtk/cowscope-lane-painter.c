/* cowscope-lane-painter.c — what the lane painters share (see
 * cowscope-lane-painter.h; each painter is in its own file). */
#include "cowscope-lane-painter.h"

#include <math.h>

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
