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

#include "cowscope-range-names.h"
#include "cowscope-timeline-lane.h"
#include "cowscope-timeline-palette.h"

G_BEGIN_DECLS

/* Thread and CUDA lanes: the event row starts this far down. */
#define COWSCOPE_LANE_EVENT_ROW_Y 3
/* Thread lanes: user ranges nest in at most this many rows below the
 * event row (deeper ones share the last), each a line of text tall. */
#define COWSCOPE_LANE_MAX_RANGE_ROWS 6
/* The narrowest range that gets its name written inside it (px). */
#define COWSCOPE_LANE_MIN_LABELLED_SPAN 24
/* Process and counter lanes are this tall (or as tall as their label). */
#define COWSCOPE_LANE_PROCESS_HEIGHT 64
#define COWSCOPE_LANE_COUNTER_HEIGHT 40
/* Process lanes: IPC ticks on top, limbo and held spans packed below. */
#define COWSCOPE_LANE_PROCESS_TICK_HEIGHT 10
#define COWSCOPE_LANE_PROCESS_SPAN_Y 16
#define COWSCOPE_LANE_PROCESS_SPAN_HEIGHT 5
#define COWSCOPE_LANE_PROCESS_SPAN_STEP 6

/* Where things are drawn in a thread or CUDA stream lane (the widget,
 * the painters, the overlays and hit testing share it). */
typedef struct {
  int height;            /* the whole lane */
  float event_y, event_h;  /* the event row: ticks, boxes */
  float range_y;         /* the first range row */
  float range_h;         /* a range row's box */
  float range_step;      /* from one range row to the next */
  guint n_range_rows;    /* 0: the lane draws no ranges */
} CowscopeLaneGeometry;

/* The geometry of a lane of @kind whose event row area is @row_height
 * pixels tall (the Lane Height preference; at least 12), with
 * @n_range_rows rows of ranges (thread lanes; capped at
 * COWSCOPE_LANE_MAX_RANGE_ROWS) whose text is @text_height pixels tall,
 * and at least @min_height tall (room for its label).  CUDA lanes are
 * their event row; process and counter lanes have their own height (and a
 * process lane's event row is its IPC ticks); a negative @min_height
 * makes a process lane exactly -@min_height tall (one with nothing to
 * draw but its label). */
void cowscope_lane_geometry_init (CowscopeLaneGeometry *geometry, CowscopeLaneKind kind,
                                  int row_height, guint n_range_rows, int text_height,
                                  int min_height);

/* The range row @y (lane coordinates) is in, or -1. */
int cowscope_lane_geometry_range_row_at (const CowscopeLaneGeometry *geometry, double y);

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

/* A thread lane (or a CUDA stream's, when @cuda) laid out as @geometry:
 * events as ticks and columns in the event row, materializations and CUDA
 * work as boxes, user ranges nested below, in the row of their depth in
 * @names (may be NULL: by how they contain each other in the window),
 * with their name from @names written inside each one wide enough
 * (ellipsized to fit) with @label_layout (its font; left as found).
 * @pid: the lane's process (range ids are per process). */
GskRenderNode *cowscope_event_lane_paint (CowscopeTimelineWindow *window,
                                          const CowscopeTimelinePalette *palette,
                                          gboolean cuda, const CowscopeLaneGeometry *geometry,
                                          const CowscopeRangeNames *names, guint32 pid,
                                          PangoLayout *label_layout);

/* The row range span @span of a thread lane's window is drawn in: its
 * depth in @names when known, else its nesting among the window's
 * @sorted ranges (cowscope_lane_compare_spans order) up to index @i;
 * never beyond the geometry's last row. */
guint cowscope_lane_range_row (const CowscopeLaneGeometry *geometry,
                               const CowscopeRangeNames *names, guint32 pid,
                               const CowscopeTimelineItem *const *sorted, guint i);

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

/* What a lane's label says: its name ("worker-1", "python"), a detail
 * line ("tid 1234 · process 99"), in bold for a process lane, with an
 * expander (a process lane's threads shown or folded) or none, and a mark
 * when it is pinned. */
typedef struct {
  const char *name;
  const char *detail;    /* NULL: none */
  gboolean bold;
  int expander;          /* -1: none; 0: folded; 1: open */
  gboolean pinned;
} CowscopeLaneLabel;

/* The left edge of a lane label's text, and how much narrower than the
 * label column the text may be. */
#define COWSCOPE_LANE_LABEL_X 10
#define COWSCOPE_LANE_LABEL_EXPANDER_X 22
#define COWSCOPE_LANE_LABEL_PADDING 8

/* The label of a lane, @width by @height: the name and, when there is
 * room, the detail line, each ellipsized at the end to fit.  Written with
 * @layout, left as it was found.  @ellipsized (may be NULL) gets bit 0
 * set when the name did not fit, bit 1 when the detail did not. */
GskRenderNode *cowscope_lane_title_paint (const CowscopeLaneLabel *label,
                                          const CowscopeTimelinePalette *palette, int width,
                                          int height, PangoLayout *layout, guint *ellipsized);

G_END_DECLS
