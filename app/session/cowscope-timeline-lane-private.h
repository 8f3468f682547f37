/* cowscope-timeline-lane-private.h — constructors used by the loader. */
#pragma once

#include "cowscope-lane-index.h"
#include "cowscope-packed-lane.h"
#include "cowscope-timeline-lane.h"

G_BEGIN_DECLS

/* Takes @index (finished). */
CowscopeTimelineLane *cowscope_timeline_lane_new_events (CowscopeLaneKind kind,
                                                         const char *title,
                                                         guint32 pid, gint64 tid,
                                                         gint64 device,
                                                         CowscopeLaneIndex *index);
/* Takes @index (finished; spans only) and @packed (the instants). */
CowscopeTimelineLane *cowscope_timeline_lane_new_packed (CowscopeLaneKind kind,
                                                         const char *title,
                                                         guint32 pid, gint64 tid,
                                                         gint64 device,
                                                         CowscopeLaneIndex *index,
                                                         CowscopePackedLane *packed);
/* Takes @series (finished). */
CowscopeTimelineLane *cowscope_timeline_lane_new_counter (CowscopeCounterKind counter,
                                                          const char *title,
                                                          CowscopeCounterBins *series);

G_END_DECLS
