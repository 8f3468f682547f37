/* cowscope-timeline-view-private.h — what the timeline widget's files
 * share: cowscope-timeline-view.c (layout, the cache of lane nodes,
 * drawing, what it loads from the model), cowscope-timeline-input.c
 * (pointer, wheel, tooltips, the lane menu) and cowscope-timeline-keys.c
 * (the actions and their keys). */
#pragma once

#include "cowscope-event-steps.h"
#include "cowscope-flows.h"
#include "cowscope-lane-filter.h"
#include "cowscope-lane-painter.h"
#include "cowscope-range-names.h"
#include "cowscope-time-ruler.h"
#include "cowscope-timeline-palette.h"
#include "cowscope-timeline-view.h"

G_BEGIN_DECLS

#define RULER_HEIGHT COWSCOPE_TIME_RULER_HEIGHT
#define DEFAULT_LABEL_WIDTH 200
#define MIN_LABEL_WIDTH 120
#define MAX_LABEL_WIDTH 600
#define MIN_DATA_WIDTH 120
#define DEFAULT_ROW_HEIGHT 24
#define LABEL_EDGE_SLOP 4   /* px either side of the label column's edge */

typedef struct {
  CowscopeTimelineLane *lane;
  CowscopeLaneKind kind;
  gboolean pinned;
  int y;                            /* in its area: pinned, or scrolled */
  CowscopeLaneGeometry geometry;
  GskRenderNode *node;              /* data area, lane-local; NULL: stale */
  GskRenderNode *title_node;        /* label; NULL: stale */
  guint ellipsized;                 /* of the drawn label (bit 0 name, 1 detail) */
  CowscopeTimelineWindow *window;   /* what `node` shows (hit testing) */
} Lane;

/* What the pointer is over. */
typedef struct {
  int lane;                          /* -1: none */
  gboolean in_label;                 /* over the lane's label */
  const CowscopeTimelineItem *item;  /* item or span of lanes[lane].window */
  gboolean is_span;
  int range_row;                     /* a range span's row; -1 */
  const CowscopeCounterSample *sample;
} Hit;

enum {
  DRAG_NONE,
  DRAG_PENDING,  /* pressed, not moved beyond the click slop */
  DRAG_PAN,
  DRAG_RANGE,
  DRAG_LABEL,    /* resizing the label column */
};

struct _CowscopeTimelineView {
  GtkWidget parent_instance;

  CowscopeViewState *state;
  GtkWidget *ruler;       /* CowscopeTimeRuler, the child on top */
  GtkWidget *lane_menu;   /* GtkPopoverMenu, a child; NULL until first shown */
  GPtrArray *lanes;       /* Lane* shown: the pinned ones first */
  guint n_pinned;
  int pinned_height;      /* the pinned lanes' area, under the ruler */
  int content_height;     /* the scrolled lanes' */

  CowscopeLaneFilter *filter;
  int label_width;
  int row_height;         /* the Lane Height preference */
  int text_height;        /* a range label's line */
  int label_height;       /* two lines of a lane label */

  GtkAdjustment *hadjustment;
  GtkAdjustment *vadjustment;
  guint hscroll_policy : 1;
  guint vscroll_policy : 1;

  /* The key the cached lane nodes were drawn for (with the palette). */
  gint64 cache_t0, cache_t1;
  int cache_width;
  CowscopeTimelinePalette palette;
  gboolean palette_stale;   /* the style changed: look the colours up again */

  PangoLayout *layout;        /* lane labels, counter scales, the range box */
  PangoLayout *range_layout;  /* range names, a little smaller */

  gboolean pointer_inside;
  double pointer_x, pointer_y;

  int drag_mode;
  gboolean drag_range_start;  /* the press asked for a range (ruler, Shift) */
  double drag_x, drag_y;
  gint64 drag_t0, drag_t1;
  int drag_label_width;

  gint64 pinch_t0, pinch_t1;
  double pinch_x;

  GCancellable *names_cancellable;
  CowscopeRangeNames *range_names;  /* NULL while reading */

  GCancellable *highlight_cancellable;
  GArray *highlighted;      /* CowscopeObjectEvent of the highlighted objects; NULL: finding */
  GArray *steps;            /* what the step keys go through (a copy of `highlighted`
                             * frozen at the first step), or NULL */
  gint64 step_seq;          /* the event the last step selected */

  GCancellable *flows_cancellable;
  GArray *flows;            /* CowscopeFlow of the selected event; NULL: finding */

  GCancellable *totals_cancellable;
  guint totals_source;
  gboolean totals_valid;
  CowscopeRangeTotals totals;

  gboolean cursor_shown;
  guint frame_count;

  /* The first frame of a session, until every lane of it is exact. */
  gboolean first_frame;
  guint first_pending;               /* exact queries on their way */
  GCancellable *first_cancellable;   /* cancels them */

  guint query_error_source;
  char *query_error;        /* the last error reported by ::query-error */
};

/* cowscope-timeline-view.c */
int cowscope_timeline_view_data_width (CowscopeTimelineView *self);
gboolean cowscope_timeline_view_visible (CowscopeTimelineView *self, gint64 *t0, gint64 *t1);
int cowscope_timeline_view_lane_top (CowscopeTimelineView *self, const Lane *lane);
int cowscope_timeline_view_lane_at (CowscopeTimelineView *self, double y);
int cowscope_timeline_view_find_lane (CowscopeTimelineView *self, CowscopeLaneKind kind,
                                      guint32 pid, gint64 tid, gint64 device);
gboolean cowscope_timeline_view_validate_cache (CowscopeTimelineView *self);
void cowscope_timeline_view_ensure_lane_window (CowscopeTimelineView *self, Lane *lane);
void cowscope_timeline_view_label_texts (CowscopeTimelineView *self, Lane *lane,
                                         CowscopeLaneLabel *label, char **name, char **detail);
void cowscope_timeline_view_set_window (CowscopeTimelineView *self, gint64 t0, gint64 t1);
void cowscope_timeline_view_scroll_lane_into_view (CowscopeTimelineView *self, int i);

/* cowscope-timeline-input.c */
Hit cowscope_timeline_view_hit_test (CowscopeTimelineView *self, double x, double y);
void cowscope_timeline_view_init_input (CowscopeTimelineView *self);
void cowscope_timeline_view_popup_lane_menu (CowscopeTimelineView *self, int lane, double x,
                                             double y);

/* cowscope-timeline-keys.c */
void cowscope_timeline_view_class_init_keys (GtkWidgetClass *widget_class);
void cowscope_timeline_view_update_actions (CowscopeTimelineView *self);

G_END_DECLS
