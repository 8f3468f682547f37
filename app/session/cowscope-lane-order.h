/* cowscope-lane-order.h — the order the copy timeline shows a session's
 * lanes in, top to bottom:
 *
 *   the counter tracks;
 *   in sessions of several processes, each process lane followed by the
 *   thread lanes of that process;
 *   the thread lanes of processes without a process lane;
 *   the CUDA stream lanes.
 *
 * Within each group the document's own order (threads by pid and tid)
 * stays. */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/* @lanes (a GListModel of CowscopeTimelineLane) in display order: a new
 * array holding a reference to each lane. */
GPtrArray *cowscope_lane_order_for_display (GListModel *lanes);

G_END_DECLS
