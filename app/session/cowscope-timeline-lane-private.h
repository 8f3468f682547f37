/* cowscope-timeline-lane-private.h — constructors used by the loader. */
#pragma once

#include "cowscope-lane-index.h"
#include "cowscope-timeline-lane.h"

G_BEGIN_DECLS

/* Takes @index (finished). */
CowscopeTimelineLane *cowscope_timeline_lane_new_events (CowscopeLaneKind kind,
                                                         const char *title,
                                                         guint32 pid, gint64 tid,
                                                         gint64 device,
                                                         CowscopeLaneIndex *index);
/* Takes @series (finished). */
CowscopeTimelineLane *cowscope_timeline_lane_new_counter (CowscopeCounterKind counter,
                                                          const char *title,
                                                          CowscopeCounterSeries *series);

G_END_DECLS
