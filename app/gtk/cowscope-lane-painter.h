/* cowscope-lane-painter.h — the copy timeline's lane painters.
 *
 * A painter is a pure function from what one lane shows of a time window
 * (a CowscopeTimelineWindow, the session model's answer to a query) and a
 * palette to a render node, one painter per lane kind, as Sysprof's
 * charts are layers over their series.  The widget caches the nodes and
 * replays them until the window, the width or the palette changes.
 *
 * Painters draw in lane coordinates: x 0 is the window's start and its
 * width the window's pixel width; y 0 is the lane's top.  The rows below
 * are shared with the widget's hit testing and outlines. */
#pragma once

#include <gtk/gtk.h>

#include "cowscope-timeline-lane.h"
#include "cowscope-timeline-palette.h"

G_BEGIN_DECLS

/* Thread and CUDA lanes: the event row (a CUDA lane's fills the lane). */
#define COWSCOPE_LANE_EVENT_ROW_Y 3
#define COWSCOPE_LANE_EVENT_ROW_HEIGHT 20
/* Thread lanes: user ranges in nested rows below the event row. */
#define COWSCOPE_LANE_RANGE_ROW_Y 26
#define COWSCOPE_LANE_RANGE_ROW_HEIGHT 5
#define COWSCOPE_LANE_RANGE_ROW_STEP 6
#define COWSCOPE_LANE_N_RANGE_ROWS 3
/* Process lanes: IPC ticks on top, limbo and held spans packed below. */
#define COWSCOPE_LANE_PROCESS_TICK_HEIGHT 10
#define COWSCOPE_LANE_PROCESS_SPAN_Y 16
#define COWSCOPE_LANE_PROCESS_SPAN_HEIGHT 5
#define COWSCOPE_LANE_PROCESS_SPAN_STEP 6

/* Is @kind a materialization (drawn as a box, and easier to hit)? */
gboolean cowscope_lane_kind_is_box (guint kind);

/* The x range of span @span in a window starting at @t0 with @ns_per_px
 * nanoseconds a pixel and @width pixels: at least 1 px wide, clamped to
 * a pixel beyond either edge. */
void cowscope_lane_span_px (const CowscopeTimelineItem *span, gint64 t0, double ns_per_px,
                            int width, float *x, float *w);

/* Shared by the painters: orders pointers to spans by start, longer
 * first (a GPtrArray sort function); and the node @snapshot drew (an empty
 * container when it drew nothing), freeing @snapshot. */
int cowscope_lane_compare_spans (gconstpointer a, gconstpointer b);
GskRenderNode *cowscope_lane_paint_finish (GtkSnapshot *snapshot);

/* A thread lane (or a CUDA stream's, when @cuda): events as ticks and
 * columns in the event row, materializations and CUDA work as boxes,
 * user ranges nested below. */
GskRenderNode *cowscope_event_lane_paint (CowscopeTimelineWindow *window,
                                          const CowscopeTimelinePalette *palette,
                                          gboolean cuda, int height);

/* A process lane: its IPC events as ticks, its limbo (red) and held
 * (blue) spans packed into thin rows so overlapping blocks stay visible. */
GskRenderNode *cowscope_process_lane_paint (CowscopeTimelineWindow *window,
                                            const CowscopeTimelinePalette *palette, int height);

/* A counter lane of @counter: the per-pixel maximum as a step area, the
 * value at each pixel's end as a line, the scale in the top right corner
 * written with @layout (its font; only its text is changed). */
GskRenderNode *cowscope_counter_lane_paint (CowscopeTimelineWindow *window,
                                            const CowscopeTimelinePalette *palette,
                                            CowscopeCounterKind counter, int height,
                                            PangoLayout *layout);

/* The gutter of @lane, @width by @height: its title and, when there is
 * room, a second line (a process lane's title in bold).  Written with
 * @layout, left as it was found. */
GskRenderNode *cowscope_lane_title_paint (CowscopeTimelineLane *lane,
                                          const CowscopeTimelinePalette *palette, int width,
                                          int height, PangoLayout *layout);

G_END_DECLS
