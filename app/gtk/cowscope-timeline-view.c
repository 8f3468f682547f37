/* cowscope-timeline-view.c — see cowscope-timeline-view.h.
 *
 * The widget lays the lanes out under its time ruler (a child widget),
 * caches their render nodes, hit-tests and handles input.  Drawing
 * follows Sysprof's patterns on GTK 4.8: a lane painter
 * (cowscope-lane-painter.h) turns each lane's query result into a
 * GskRenderNode once per (window, width, palette), replayed with
 * gtk_snapshot_append_node; the selection, the cursor, the hover and the
 * range totals are drawn on top every frame.  Lane queries are cheap
 * (in-memory, O(pixels x log events)) and run in the snapshot; the
 * session model counts a range's totals in a worker thread.  Until the
 * first frame of a session is exact, the lanes do not read the file in
 * the snapshot: what is not decoded yet is estimated from the chunks'
 * rows (cowscope_timeline_lane_query_cached()) and the exact answers come
 * from worker threads, each redrawing its lane (a big session's first
 * whole-session frame decodes every chunk).
 */
#include "cowscope-config.h"

#include <math.h>

#include "cowscope-timeline-view.h"

#include "cowscope-lane-order.h"
#include "cowscope-lane-painter.h"
#include "cowscope-object-events.h"
#include "cowscope-paint.h"
#include "cowscope-time-ruler.h"
#include "cowscope-timeline-format.h"
#include "cowscope-timeline-overlay.h"
#include "cowscope-timeline-palette.h"

#define RULER_HEIGHT COWSCOPE_TIME_RULER_HEIGHT
#define GUTTER_WIDTH 176
#define THREAD_LANE_HEIGHT 46
#define CUDA_LANE_HEIGHT 28
#define COUNTER_LANE_HEIGHT 40
#define PROCESS_LANE_HEIGHT 64
#define ZOOM_STEP 1.5
#define PAN_STEP 0.15
#define CLICK_SLOP 3.0
#define TOTALS_DELAY_MS 60  /* coalesces a drag's many range changes */

typedef struct {
  CowscopeTimelineLane *lane;
  CowscopeLaneKind kind;
  int y;                            /* content y (0 = just below the ruler) */
  int height;
  GskRenderNode *node;              /* data area, lane-local; NULL: stale */
  GskRenderNode *title_node;        /* gutter; NULL: stale */
  CowscopeTimelineWindow *window;   /* what `node` shows (hit testing) */
} Lane;

/* What the pointer is over. */
typedef struct {
  int lane;                          /* -1: none */
  const CowscopeTimelineItem *item;  /* item or span of lanes[lane].window */
  gboolean is_span;
  const CowscopeCounterSample *sample;
} Hit;

enum {
  DRAG_NONE,
  DRAG_PENDING,  /* pressed, not moved beyond CLICK_SLOP */
  DRAG_PAN,
  DRAG_RANGE,
};

struct _CowscopeTimelineView {
  GtkWidget parent_instance;

  CowscopeViewState *state;
  GtkWidget *ruler;       /* CowscopeTimeRuler, the child on top */
  GPtrArray *lanes;       /* Lane* */
  int content_height;

  GtkAdjustment *hadjustment;
  GtkAdjustment *vadjustment;
  guint hscroll_policy : 1;
  guint vscroll_policy : 1;

  /* The key the cached lane nodes were drawn for (with the palette). */
  gint64 cache_t0, cache_t1;
  int cache_width;
  CowscopeTimelinePalette palette;
  gboolean palette_stale;   /* the style changed: look the colours up again */

  PangoLayout *layout;

  gboolean pointer_inside;
  double pointer_x, pointer_y;

  int drag_mode;
  gboolean drag_range_start;  /* the press asked for a range (ruler, Shift) */
  double drag_x, drag_y;
  gint64 drag_t0, drag_t1;

  gint64 pinch_t0, pinch_t1;
  double pinch_x;

  GCancellable *highlight_cancellable;
  GArray *highlighted;      /* CowscopeObjectEvent of the highlighted objects; NULL: finding */

  GCancellable *totals_cancellable;
  guint totals_source;
  gboolean totals_valid;
  CowscopeRangeTotals totals;

  guint frame_count;

  /* The first frame of a session, until every lane of it is exact. */
  gboolean first_frame;
  guint first_pending;               /* exact queries on their way */
  GCancellable *first_cancellable;   /* cancels them */

  guint query_error_source;
  char *query_error;        /* the last error reported by ::query-error */
};

enum { QUERY_ERROR, N_SIGNALS };
static guint signals[N_SIGNALS];

static void cowscope_timeline_view_scrollable_init (GtkScrollableInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (CowscopeTimelineView, cowscope_timeline_view, GTK_TYPE_WIDGET,
                               G_IMPLEMENT_INTERFACE (GTK_TYPE_SCROLLABLE,
                                                      cowscope_timeline_view_scrollable_init))

enum {
  PROP_0,
  PROP_VIEW_STATE,
  N_PROPS,
  /* GtkScrollable */
  PROP_HADJUSTMENT = N_PROPS,
  PROP_VADJUSTMENT,
  PROP_HSCROLL_POLICY,
  PROP_VSCROLL_POLICY,
};

static GParamSpec *properties[N_PROPS];

/* ---- geometry ------------------------------------------------------------ */

/* The data area's width in pixels (what lanes are queried at); >= 1. */
static int
data_width (CowscopeTimelineView *self)
{
  return MAX (gtk_widget_get_width (GTK_WIDGET (self)) - GUTTER_WIDTH, 1);
}

/* The vertical scroll offset of the lanes. */
static int
scroll_y (CowscopeTimelineView *self)
{
  return self->vadjustment ? (int) gtk_adjustment_get_value (self->vadjustment) : 0;
}

/* The visible window; FALSE without a view state. */
static gboolean
visible (CowscopeTimelineView *self, gint64 *t0, gint64 *t1)
{
  if (self->state == NULL)
    return FALSE;
  *t0 = cowscope_view_state_get_visible_start (self->state);
  *t1 = cowscope_view_state_get_visible_end (self->state);
  return *t1 > *t0;
}

/* Widget x of time @t (may fall outside the widget). */
double
cowscope_timeline_view_time_to_x (CowscopeTimelineView *self, gint64 t)
{
  g_return_val_if_fail (COWSCOPE_IS_TIMELINE_VIEW (self), 0);
  gint64 t0, t1;
  if (!visible (self, &t0, &t1))
    return GUTTER_WIDTH;
  return cowscope_time_axis_to_x (t, t0, t1, GUTTER_WIDTH, data_width (self));
}

/* The time at widget x @x (extrapolated outside the data area). */
gint64
cowscope_timeline_view_x_to_time (CowscopeTimelineView *self, double x)
{
  g_return_val_if_fail (COWSCOPE_IS_TIMELINE_VIEW (self), 0);
  gint64 t0, t1;
  if (!visible (self, &t0, &t1))
    return 0;
  return cowscope_time_axis_to_time (x, t0, t1, GUTTER_WIDTH, data_width (self));
}

/* The lane under widget y @y, or -1 (the ruler, or below the lanes). */
static int
lane_at (CowscopeTimelineView *self, double y)
{
  if (self->lanes == NULL || y < RULER_HEIGHT)
    return -1;
  double cy = y - RULER_HEIGHT + scroll_y (self);
  for (guint i = 0; i < self->lanes->len; i++)
    {
      Lane *lane = self->lanes->pdata[i];
      if (cy >= lane->y && cy < lane->y + lane->height)
        return (int) i;
    }
  return -1;
}

/* ---- lanes ------------------------------------------------------------------ */

/* Frees one Lane. */
static void
lane_free (gpointer data)
{
  Lane *lane = data;
  g_clear_object (&lane->lane);
  g_clear_pointer (&lane->node, gsk_render_node_unref);
  g_clear_pointer (&lane->title_node, gsk_render_node_unref);
  g_clear_object (&lane->window);
  g_free (lane);
}

/* Drops every cached lane node (and titles when @titles); the caller
 * redraws. */
static void
drop_caches (CowscopeTimelineView *self, gboolean titles)
{
  if (self->lanes != NULL)
    for (guint i = 0; i < self->lanes->len; i++)
      {
        Lane *lane = self->lanes->pdata[i];
        g_clear_pointer (&lane->node, gsk_render_node_unref);
        g_clear_object (&lane->window);
        if (titles)
          g_clear_pointer (&lane->title_node, gsk_render_node_unref);
      }
}

/* Sets up the vertical adjustment for the current height and lanes. */
static void
update_adjustment (CowscopeTimelineView *self)
{
  if (self->vadjustment == NULL)
    return;
  double page = MAX (gtk_widget_get_height (GTK_WIDGET (self)) - RULER_HEIGHT, 1);
  double upper = MAX (self->content_height, page);
  double value = CLAMP (gtk_adjustment_get_value (self->vadjustment), 0, upper - page);
  gtk_adjustment_configure (self->vadjustment, value, 0, upper, 24, page * 0.9, page);
}

/* How tall a lane of @kind is. */
static int
lane_height (CowscopeLaneKind kind)
{
  switch (kind)
    {
    case COWSCOPE_LANE_THREAD: return THREAD_LANE_HEIGHT;
    case COWSCOPE_LANE_CUDA_STREAM: return CUDA_LANE_HEIGHT;
    case COWSCOPE_LANE_PROCESS: return PROCESS_LANE_HEIGHT;
    case COWSCOPE_LANE_COUNTER:
    default: return COUNTER_LANE_HEIGHT;
    }
}

/* Rebuilds the lane list from the document, in the model's display
 * order, stacked top to bottom. */
static void
rebuild_lanes (CowscopeTimelineView *self)
{
  g_clear_pointer (&self->lanes, g_ptr_array_unref);
  self->content_height = 0;
  if (self->state != NULL)
    {
      CowscopeSessionDocument *doc = cowscope_view_state_get_document (self->state);
      g_autoptr (GPtrArray) ordered =
        cowscope_lane_order_for_display (cowscope_session_document_get_lanes (doc));
      self->lanes = g_ptr_array_new_with_free_func (lane_free);
      for (guint i = 0; i < ordered->len; i++)
        {
          Lane *lane = g_new0 (Lane, 1);
          lane->lane = g_object_ref (ordered->pdata[i]);
          lane->kind = cowscope_timeline_lane_get_kind (lane->lane);
          lane->y = self->content_height;
          lane->height = lane_height (lane->kind);
          self->content_height += lane->height;
          g_ptr_array_add (self->lanes, lane);
        }
    }
  update_adjustment (self);
  gtk_widget_queue_resize (GTK_WIDGET (self));
}

/* ---- the cache of lane nodes ------------------------------------------------- */

/* Looks the colours up again after a style change; drops every node
 * drawn with other colours. */
static void
refresh_palette (CowscopeTimelineView *self)
{
  if (!self->palette_stale)
    return;
  self->palette_stale = FALSE;
  CowscopeTimelinePalette palette;
  cowscope_timeline_palette_lookup (&palette, GTK_WIDGET (self));
  if (cowscope_timeline_palette_equal (&palette, &self->palette))
    return;
  self->palette = palette;
  drop_caches (self, TRUE);
}

/* Drops the lane caches when the window, the width or the colours
 * changed since they were drawn; FALSE without a window to show. */
static gboolean
validate_cache (CowscopeTimelineView *self)
{
  gint64 t0, t1;
  if (!visible (self, &t0, &t1) || self->lanes == NULL)
    return FALSE;
  refresh_palette (self);
  int dw = data_width (self);
  if (self->cache_t0 != t0 || self->cache_t1 != t1 || self->cache_width != dw)
    {
      drop_caches (self, FALSE);
      self->cache_t0 = t0, self->cache_t1 = t1, self->cache_width = dw;
    }
  return TRUE;
}

/* An exact query for the first frame, on its way. */
typedef struct {
  CowscopeTimelineView *self;   /* a reference */
  GCancellable *cancellable;    /* the first frame's, a reference */
  gint64 t0, t1;
  int width;
} FirstQuery;

/* Stops waiting for exact first-frame queries: from now on the lanes are
 * queried in the snapshot. */
static void
end_first_frame (CowscopeTimelineView *self)
{
  g_cancellable_cancel (self->first_cancellable);
  g_clear_object (&self->first_cancellable);
  self->first_frame = FALSE;
  self->first_pending = 0;
}

/* An exact first-frame answer: it replaces the estimate when the lanes
 * still show the window it was asked for. */
static void
first_query_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  FirstQuery *q = user_data;
  g_autoptr (GError) error = NULL;
  g_autoptr (CowscopeTimelineWindow) window =
    cowscope_timeline_lane_query_finish (COWSCOPE_TIMELINE_LANE (source), result, &error);
  CowscopeTimelineView *self = q->self;
  /* Cancelled: the first frame ended (or the session went) meanwhile. */
  if (window != NULL && !g_cancellable_is_cancelled (q->cancellable) && self->lanes != NULL)
    {
      gboolean same = self->cache_t0 == q->t0 && self->cache_t1 == q->t1
                      && self->cache_width == q->width;
      for (guint i = 0; same && i < self->lanes->len; i++)
        {
          Lane *lane = self->lanes->pdata[i];
          if (lane->lane != (gpointer) source)
            continue;
          g_set_object (&lane->window, window);
          g_clear_pointer (&lane->node, gsk_render_node_unref);
          break;
        }
      if (--self->first_pending == 0)
        end_first_frame (self);
      gtk_widget_queue_draw (GTK_WIDGET (self));
    }
  g_object_unref (q->cancellable);
  g_object_unref (q->self);
  g_free (q);
}

/* Makes sure @lane's query result for the cached key exists (the lane
 * may not have been drawn: scrolled out of view).  During the first
 * frame, an estimate that needs no reading, and the exact answer asked
 * of a worker thread. */
static void
ensure_lane_window (CowscopeTimelineView *self, Lane *lane)
{
  if (lane->window != NULL)
    return;
  if (!self->first_frame)
    {
      lane->window = cowscope_timeline_lane_query (lane->lane, self->cache_t0, self->cache_t1,
                                                   (guint) self->cache_width);
      return;
    }
  gboolean complete;
  lane->window = cowscope_timeline_lane_query_cached (lane->lane, self->cache_t0, self->cache_t1,
                                                      (guint) self->cache_width, &complete);
  if (complete)
    return;
  if (self->first_cancellable == NULL)
    self->first_cancellable = g_cancellable_new ();
  FirstQuery *q = g_new (FirstQuery, 1);
  *q = (FirstQuery) { g_object_ref (self), g_object_ref (self->first_cancellable),
                      self->cache_t0, self->cache_t1, self->cache_width };
  self->first_pending++;
  cowscope_timeline_lane_query_async (lane->lane, q->t0, q->t1, (guint) q->width,
                                      self->first_cancellable, first_query_done, q);
}

/* Makes sure @lane's data node shows the cached key's window: its kind's
 * painter draws it. */
static void
ensure_lane_node (CowscopeTimelineView *self, Lane *lane)
{
  if (lane->node != NULL)
    return;
  ensure_lane_window (self, lane);
  switch (lane->kind)
    {
    case COWSCOPE_LANE_COUNTER:
      lane->node = cowscope_counter_lane_paint (lane->window, &self->palette,
                                                cowscope_timeline_lane_get_counter (lane->lane),
                                                lane->height, self->layout);
      break;
    case COWSCOPE_LANE_PROCESS:
      lane->node = cowscope_process_lane_paint (lane->window, &self->palette, lane->height);
      break;
    case COWSCOPE_LANE_CUDA_STREAM:
    case COWSCOPE_LANE_THREAD:
    default:
      lane->node = cowscope_event_lane_paint (lane->window, &self->palette,
                                              lane->kind == COWSCOPE_LANE_CUDA_STREAM,
                                              lane->height);
      break;
    }
}

/* Makes sure @lane's gutter node (its title) exists. */
static void
ensure_title_node (CowscopeTimelineView *self, Lane *lane)
{
  if (lane->title_node == NULL)
    lane->title_node = cowscope_lane_title_paint (lane->lane, &self->palette, GUTTER_WIDTH,
                                                  lane->height, self->layout);
}

/* ---- hit testing --------------------------------------------------------------- */

/* The counter sample under data-area x @px. */
static const CowscopeCounterSample *
hit_sample (CowscopeTimelineWindow *window, double px)
{
  guint n;
  const CowscopeCounterSample *samples = cowscope_timeline_window_get_samples (window, &n);
  const CowscopeCounterSample *hit = NULL;
  for (guint i = 0; i < n; i++)
    if (samples[i].pixel == (guint16) px)
      hit = &samples[i];
  return hit;
}

/* The innermost (shortest) span under data-area x @px: user ranges when
 * @ranges, else the others. */
static const CowscopeTimelineItem *
hit_span (CowscopeTimelineWindow *window, double px, gboolean ranges)
{
  gint64 t0 = cowscope_timeline_window_get_start (window);
  gint64 t1 = cowscope_timeline_window_get_end (window);
  int width = (int) cowscope_timeline_window_get_width (window);
  double nspp = (double) (t1 - t0) / width;
  guint n;
  const CowscopeTimelineItem *spans = cowscope_timeline_window_get_spans (window, &n);
  const CowscopeTimelineItem *hit = NULL;
  for (guint i = 0; i < n; i++)
    {
      const CowscopeTimelineItem *s = &spans[i];
      if ((s->kind == COWSCOPE_ITEM_RANGE) != ranges)
        continue;
      float sx, sw;
      cowscope_lane_span_px (s, t0, nspp, width, &sx, &sw);
      if (px >= sx - 1 && px < sx + sw + 1
          && (hit == NULL || s->end_ns - s->start_ns < hit->end_ns - hit->start_ns))
        hit = s;
    }
  return hit;
}

/* The nearest item within two pixels of data-area x @px, single events
 * and materializations preferred. */
static const CowscopeTimelineItem *
hit_item (CowscopeTimelineWindow *window, double px)
{
  guint n;
  const CowscopeTimelineItem *items = cowscope_timeline_window_get_items (window, &n);
  const CowscopeTimelineItem *hit = NULL;
  double best = 3;
  for (guint i = 0; i < n; i++)
    {
      double d = fabs (items[i].pixel + 0.5 - px) + (items[i].count > 1 ? 0.5 : 0)
                 - (cowscope_lane_kind_is_box (items[i].kind) ? 0.75 : 0);
      if (d < best)
        best = d, hit = &items[i];
    }
  return hit;
}

/* What is under widget (x, y) in the cached lane windows: a counter
 * sample, a span (a user range in a thread lane's range rows), or the
 * nearest item. */
static Hit
hit_test (CowscopeTimelineView *self, double x, double y)
{
  Hit hit = { .lane = -1 };
  int li = lane_at (self, y);
  if (li < 0 || x < GUTTER_WIDTH || !validate_cache (self))
    return hit;
  Lane *lane = self->lanes->pdata[li];
  hit.lane = li;
  ensure_lane_window (self, lane);
  double px = x - GUTTER_WIDTH;
  double ly = y - RULER_HEIGHT + scroll_y (self) - lane->y;
  if (lane->kind == COWSCOPE_LANE_COUNTER)
    {
      hit.sample = hit_sample (lane->window, px);
      return hit;
    }
  gboolean in_ranges = lane->kind == COWSCOPE_LANE_THREAD && ly >= COWSCOPE_LANE_RANGE_ROW_Y - 1;
  hit.item = hit_span (lane->window, px, in_ranges);
  hit.is_span = hit.item != NULL;
  if (hit.item == NULL && !in_ranges)
    hit.item = hit_item (lane->window, px);
  return hit;
}

/* ---- what is drawn over the lanes ----------------------------------------------- */

/* Outlines the events of the highlighted objects in thread lane @lane. */
static void
draw_highlighted (CowscopeTimelineView *self, GtkSnapshot *snapshot, Lane *lane)
{
  if (lane->kind != COWSCOPE_LANE_THREAD || self->highlighted == NULL)
    return;
  guint32 pid = cowscope_timeline_lane_get_pid (lane->lane);
  gint64 tid = cowscope_timeline_lane_get_tid (lane->lane);
  int w = gtk_widget_get_width (GTK_WIDGET (self));
  for (guint i = 0; i < self->highlighted->len; i++)
    {
      const CowscopeObjectEvent *ev = &g_array_index (self->highlighted, CowscopeObjectEvent, i);
      if (ev->pid == pid && ev->tid == tid)
        cowscope_overlay_highlighted (snapshot, cowscope_timeline_view_time_to_x (self, ev->start_ns),
                                      cowscope_timeline_view_time_to_x (self, ev->end_ns),
                                      GUTTER_WIDTH, w, lane->y, &self->palette.highlight);
    }
}

/* Draws the visible lanes (stripes, gutter, cached nodes) and their
 * outlines, scrolled, below the ruler. */
static void
draw_lanes (CowscopeTimelineView *self, GtkSnapshot *snapshot, int w, int h)
{
  const CowscopeTimelinePalette *palette = &self->palette;
  int sy = scroll_y (self), dw = data_width (self);
  GdkRGBA stripe = cowscope_timeline_palette_fg (palette, 0.03f);
  GdkRGBA sep = cowscope_timeline_palette_fg (palette, 0.08f);
  GdkRGBA sel_color = cowscope_timeline_palette_fg (palette, 0.95f);
  gint64 selected = cowscope_view_state_get_selected_seq (self->state);

  gtk_snapshot_push_clip (snapshot, &GRAPHENE_RECT_INIT (0, RULER_HEIGHT, w, h - RULER_HEIGHT));
  gtk_snapshot_save (snapshot);
  gtk_snapshot_translate (snapshot, &GRAPHENE_POINT_INIT (0, RULER_HEIGHT - sy));
  for (guint i = 0; i < self->lanes->len; i++)
    {
      Lane *lane = self->lanes->pdata[i];
      if (lane->y + lane->height <= sy || lane->y >= sy + h - RULER_HEIGHT)
        continue;
      if (i % 2 == 1)
        cowscope_paint_rect (snapshot, &stripe, 0, lane->y, w, lane->height);
      cowscope_paint_rect (snapshot,
                           lane->kind == COWSCOPE_LANE_PROCESS ? &palette->process_gutter
                                                               : &palette->gutter,
                           0, lane->y, GUTTER_WIDTH, lane->height);
      cowscope_paint_rect (snapshot, &sep, 0, lane->y + lane->height - 1, w, 1);
      ensure_lane_node (self, lane);
      ensure_title_node (self, lane);
      gtk_snapshot_save (snapshot);
      gtk_snapshot_translate (snapshot, &GRAPHENE_POINT_INIT (0, lane->y));
      gtk_snapshot_append_node (snapshot, lane->title_node);
      gtk_snapshot_push_clip (snapshot, &GRAPHENE_RECT_INIT (GUTTER_WIDTH, 0, dw, lane->height));
      gtk_snapshot_translate (snapshot, &GRAPHENE_POINT_INIT (GUTTER_WIDTH, 0));
      gtk_snapshot_append_node (snapshot, lane->node);
      gtk_snapshot_pop (snapshot);
      gtk_snapshot_restore (snapshot);
      draw_highlighted (self, snapshot, lane);
      if (selected >= 0 && lane->kind == COWSCOPE_LANE_THREAD)
        cowscope_overlay_selected (snapshot, lane->window, selected, GUTTER_WIDTH, lane->y,
                                   &sel_color);
    }
  cowscope_paint_rect (snapshot, &sep, GUTTER_WIDTH - 1, sy, 1, h);
  gtk_snapshot_restore (snapshot);
  gtk_snapshot_pop (snapshot);
}

/* The hover: a faint line at the pointer and the outline of what it is
 * over. */
static void
draw_hover (CowscopeTimelineView *self, GtkSnapshot *snapshot, int h)
{
  GdkRGBA line = cowscope_timeline_palette_fg (&self->palette, 0.25f);
  cowscope_paint_rect (snapshot, &line, (float) floor (self->pointer_x), 0, 1, h);
  Hit hit = hit_test (self, self->pointer_x, self->pointer_y);
  if (hit.item == NULL)
    return;
  Lane *lane = self->lanes->pdata[hit.lane];
  GdkRGBA color = cowscope_timeline_palette_fg (&self->palette, 0.8f);
  cowscope_overlay_hover (snapshot, lane->window, hit.item, hit.is_span, lane->kind, lane->height,
                          GUTTER_WIDTH, RULER_HEIGHT - scroll_y (self) + lane->y, &color);
}

/* Main loop, after the frame: emits ::query-error. */
static gboolean
report_query_error (gpointer data)
{
  CowscopeTimelineView *self = data;
  self->query_error_source = 0;
  g_signal_emit (self, signals[QUERY_ERROR], 0, self->query_error);
  return G_SOURCE_REMOVE;
}

/* Takes the document's query error, if a query just met one (a damaged
 * chunk: the lanes drew without it), and reports it once the frame is
 * done (not while snapshotting). */
static void
check_query_error (CowscopeTimelineView *self)
{
  if (self->state == NULL)
    return;
  g_autoptr (GError) error =
    cowscope_session_document_take_query_error (cowscope_view_state_get_document (self->state));
  if (error == NULL)
    return;
  g_free (self->query_error);
  self->query_error = g_strdup (error->message);
  if (self->query_error_source == 0)
    self->query_error_source = g_idle_add_full (G_PRIORITY_DEFAULT, report_query_error, self,
                                                NULL);
}

/* Draws the lanes (cached nodes), then the selected range, the hover and
 * the cursor, the ruler on top of them, and the range's totals. */
static void
cowscope_timeline_view_snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
  CowscopeTimelineView *self = COWSCOPE_TIMELINE_VIEW (widget);
  int w = gtk_widget_get_width (widget), h = gtk_widget_get_height (widget);
  gint64 t0, t1;
  if (!visible (self, &t0, &t1) || self->lanes == NULL || w <= GUTTER_WIDTH)
    return;
  self->frame_count++;
  validate_cache (self);

  draw_lanes (self, snapshot, w, h);
  check_query_error (self);
  /* Every lane drawn was exact: the first frame is over. */
  if (self->first_frame && self->first_pending == 0)
    end_first_frame (self);

  gint64 r0 = cowscope_view_state_get_range_start (self->state);
  gint64 r1 = cowscope_view_state_get_range_end (self->state);
  gboolean range_shown = r0 >= 0 && r1 > r0 && r1 > t0 && r0 < t1;
  if (range_shown)
    cowscope_overlay_range (snapshot, &self->palette, cowscope_timeline_view_time_to_x (self, r0),
                            cowscope_timeline_view_time_to_x (self, r1), GUTTER_WIDTH, w, h);
  if (self->pointer_inside && self->pointer_x >= GUTTER_WIDTH && self->drag_mode != DRAG_PAN)
    draw_hover (self, snapshot, h);
  /* The cursor: the instant the sharing graph shows. */
  gint64 cursor = cowscope_view_state_get_cursor (self->state);
  if (cursor >= t0 && cursor <= t1)
    {
      double x = cowscope_timeline_view_time_to_x (self, cursor);
      cowscope_paint_rect (snapshot, &self->palette.accent, (float) floor (x) - 1, 0, 2, h);
    }

  gtk_widget_snapshot_child (widget, self->ruler, snapshot);
  if (range_shown)
    {
      g_autofree char *text =
        cowscope_timeline_format_range (r0, r1, self->totals_valid ? &self->totals : NULL);
      cowscope_overlay_range_box (snapshot, self->layout, &self->palette, text,
                                  cowscope_timeline_view_time_to_x (self, r0),
                                  cowscope_timeline_view_time_to_x (self, r1), GUTTER_WIDTH, w,
                                  RULER_HEIGHT + 6, h);
    }
}

/* ---- range totals ------------------------------------------------------------------ */

/* The model counted the range (unless cancelled): show the totals. */
static void
totals_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  CowscopeRangeTotals totals;
  g_autoptr (GError) error = NULL;
  if (!cowscope_range_totals_count_finish (result, &totals, &error))
    return; /* cancelled: a newer range, or the view went away */
  CowscopeTimelineView *self = user_data;
  self->totals = totals;
  self->totals_valid = TRUE;
  check_query_error (self);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

/* Starts counting the view state's range (cancelling any count still
 * running). */
static gboolean
start_totals (gpointer user_data)
{
  CowscopeTimelineView *self = user_data;
  self->totals_source = 0;
  g_cancellable_cancel (self->totals_cancellable);
  g_clear_object (&self->totals_cancellable);
  self->totals_valid = FALSE;
  if (self->state == NULL)
    return G_SOURCE_REMOVE;
  gint64 r0 = cowscope_view_state_get_range_start (self->state);
  gint64 r1 = cowscope_view_state_get_range_end (self->state);
  if (r0 < 0 || r1 <= r0)
    return G_SOURCE_REMOVE;
  self->totals_cancellable = g_cancellable_new ();
  cowscope_range_totals_count_async (cowscope_view_state_get_document (self->state), r0, r1,
                                     self->totals_cancellable, totals_done, self);
  return G_SOURCE_REMOVE;
}

/* The range changed: recount soon (coalescing a drag's many changes). */
static void
range_changed (CowscopeTimelineView *self)
{
  self->totals_valid = FALSE;
  g_cancellable_cancel (self->totals_cancellable);
  if (self->totals_source == 0)
    self->totals_source = g_timeout_add (TOTALS_DELAY_MS, start_totals, self);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

/* ---- navigation ------------------------------------------------------------------- */

/* Sets the visible window to [@t0, @t1) (the view state clamps it). */
static void
set_window (CowscopeTimelineView *self, gint64 t0, gint64 t1)
{
  if (self->state != NULL)
    cowscope_view_state_set_visible (self->state, t0, t1);
}

/* Zooms by @factor keeping the time at @anchor_x fixed. */
void
cowscope_timeline_view_zoom (CowscopeTimelineView *self, double factor, double anchor_x)
{
  g_return_if_fail (COWSCOPE_IS_TIMELINE_VIEW (self));
  gint64 t0, t1;
  if (!visible (self, &t0, &t1) || factor <= 0)
    return;
  double frac = CLAMP ((anchor_x - GUTTER_WIDTH) / data_width (self), 0.0, 1.0);
  double anchor = (double) t0 + frac * (double) (t1 - t0);
  double width = (double) (t1 - t0) / factor;
  gint64 n0 = (gint64) llround (anchor - frac * width);
  set_window (self, n0, n0 + MAX ((gint64) llround (width), 1));
}

/* The x to zoom around: the pointer when it is over the data, else the
 * centre of the data area. */
static double
zoom_anchor (CowscopeTimelineView *self)
{
  if (self->pointer_inside && self->pointer_x >= GUTTER_WIDTH)
    return self->pointer_x;
  return GUTTER_WIDTH + data_width (self) / 2.0;
}

/* Pans by @fraction of the visible width (negative: to the left). */
static void
pan (CowscopeTimelineView *self, double fraction)
{
  gint64 t0, t1;
  if (!visible (self, &t0, &t1))
    return;
  gint64 d = (gint64) llround (fraction * (double) (t1 - t0));
  set_window (self, t0 + d, t1 + d);
}

/* timeline.zoom-in / zoom-out / zoom-reset / pan-left / pan-right /
 * zoom-to-range / clear-range. */
static void
action_cb (GtkWidget *widget, const char *name, GVariant *param)
{
  CowscopeTimelineView *self = COWSCOPE_TIMELINE_VIEW (widget);
  if (self->state == NULL)
    return;
  if (g_str_equal (name, "timeline.zoom-in"))
    cowscope_timeline_view_zoom (self, ZOOM_STEP, zoom_anchor (self));
  else if (g_str_equal (name, "timeline.zoom-out"))
    cowscope_timeline_view_zoom (self, 1.0 / ZOOM_STEP, zoom_anchor (self));
  else if (g_str_equal (name, "timeline.zoom-reset"))
    {
      CowscopeSessionDocument *doc = cowscope_view_state_get_document (self->state);
      set_window (self, cowscope_session_document_get_start_ns (doc),
                  cowscope_session_document_get_end_ns (doc) + 1);
    }
  else if (g_str_equal (name, "timeline.pan-left"))
    pan (self, -PAN_STEP);
  else if (g_str_equal (name, "timeline.pan-right"))
    pan (self, PAN_STEP);
  else if (g_str_equal (name, "timeline.zoom-to-range"))
    {
      gint64 r0 = cowscope_view_state_get_range_start (self->state);
      gint64 r1 = cowscope_view_state_get_range_end (self->state);
      if (r0 >= 0 && r1 > r0)
        set_window (self, r0, r1);
    }
  else if (g_str_equal (name, "timeline.clear-range"))
    cowscope_view_state_set_range (self->state, -1, -1);
}

/* Selects what is at (x, y) and moves the cursor: a materialization or
 * event selects its seq and puts the cursor at its end; a user range
 * selects its time range; empty space moves only the cursor. */
void
cowscope_timeline_view_click (CowscopeTimelineView *self, double x, double y)
{
  g_return_if_fail (COWSCOPE_IS_TIMELINE_VIEW (self));
  if (self->state == NULL || x < GUTTER_WIDTH)
    return;
  Hit hit = hit_test (self, x, y);
  gint64 t = cowscope_timeline_view_x_to_time (self, x);
  if (hit.item != NULL)
    {
      Lane *lane = self->lanes->pdata[hit.lane];
      const CowscopeTimelineItem *it = hit.item;
      if (it->kind == COWSCOPE_ITEM_RANGE && hit.is_span)
        {
          cowscope_view_state_set_range (self->state, it->start_ns, it->end_ns);
          cowscope_view_state_set_cursor (self->state, t);
          return;
        }
      if (lane->kind == COWSCOPE_LANE_PROCESS && hit.is_span)
        {
          /* A limbo or held span: show the graph inside it. */
          cowscope_view_state_set_cursor (self->state, CLAMP (t, it->start_ns, it->end_ns));
          return;
        }
      if (it->count == 1
          && (lane->kind == COWSCOPE_LANE_THREAD || lane->kind == COWSCOPE_LANE_PROCESS))
        {
          cowscope_view_state_set_selected_seq (self->state, it->id);
          cowscope_view_state_set_cursor (self->state, it->end_ns);
          return;
        }
      if (it->count == 1)
        t = it->start_ns;
    }
  cowscope_view_state_set_cursor (self->state, t);
}

/* ---- input --------------------------------------------------------------------------- */

/* Scroll: Ctrl zooms around the pointer, Shift scrolls the lanes, plain
 * scrolling pans. */
static gboolean
scroll_cb (GtkEventControllerScroll *controller, double dx, double dy,
           CowscopeTimelineView *self)
{
  if (self->state == NULL)
    return FALSE;
  GdkModifierType mods =
    gtk_event_controller_get_current_event_state (GTK_EVENT_CONTROLLER (controller));
  if (mods & GDK_CONTROL_MASK)
    {
      cowscope_timeline_view_zoom (self, pow (1.2, -dy), zoom_anchor (self));
      return TRUE;
    }
  if (mods & GDK_SHIFT_MASK)
    {
      if (self->vadjustment != NULL)
        gtk_adjustment_set_value (self->vadjustment,
                                  gtk_adjustment_get_value (self->vadjustment)
                                    + (dy != 0 ? dy : dx) * 40);
      return TRUE;
    }
  pan (self, (dx + dy) * 0.08);
  return TRUE;
}

/* Pointer motion: remembers it and redraws the hover. */
static void
motion_cb (GtkEventControllerMotion *controller, double x, double y,
           CowscopeTimelineView *self)
{
  self->pointer_inside = TRUE;
  self->pointer_x = x, self->pointer_y = y;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

/* Pointer left: no hover. */
static void
leave_cb (GtkEventControllerMotion *controller, CowscopeTimelineView *self)
{
  self->pointer_inside = FALSE;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

/* Press: a click, a pan or (on the ruler, or with Shift) a range. */
static void
drag_begin_cb (GtkGestureDrag *gesture, double x, double y, CowscopeTimelineView *self)
{
  gint64 t0, t1;
  if (!visible (self, &t0, &t1))
    {
      gtk_gesture_set_state (GTK_GESTURE (gesture), GTK_EVENT_SEQUENCE_DENIED);
      return;
    }
  gtk_widget_grab_focus (GTK_WIDGET (self));
  GdkModifierType mods =
    gtk_event_controller_get_current_event_state (GTK_EVENT_CONTROLLER (gesture));
  self->drag_mode = DRAG_PENDING;
  self->drag_range_start = y < RULER_HEIGHT || (mods & GDK_SHIFT_MASK) != 0;
  self->drag_x = x, self->drag_y = y;
  self->drag_t0 = t0, self->drag_t1 = t1;
}

/* Drag: pans the window or stretches the range. */
static void
drag_update_cb (GtkGestureDrag *gesture, double dx, double dy, CowscopeTimelineView *self)
{
  if (self->drag_mode == DRAG_NONE || self->state == NULL)
    return;
  if (self->drag_mode == DRAG_PENDING)
    {
      if (fabs (dx) + fabs (dy) < CLICK_SLOP)
        return;
      self->drag_mode = self->drag_range_start ? DRAG_RANGE : DRAG_PAN;
      gtk_gesture_set_state (GTK_GESTURE (gesture), GTK_EVENT_SEQUENCE_CLAIMED);
    }
  if (self->drag_mode == DRAG_PAN)
    {
      gint64 d = (gint64) llround (-dx * (double) (self->drag_t1 - self->drag_t0)
                                   / data_width (self));
      set_window (self, self->drag_t0 + d, self->drag_t1 + d);
    }
  else
    {
      gint64 a = cowscope_timeline_view_x_to_time (self, MAX (self->drag_x, GUTTER_WIDTH));
      gint64 b = cowscope_timeline_view_x_to_time (self, MAX (self->drag_x + dx, GUTTER_WIDTH));
      cowscope_view_state_set_range (self->state, MIN (a, b), MAX (a, b));
    }
}

/* Release: a press that did not move is a click. */
static void
drag_end_cb (GtkGestureDrag *gesture, double dx, double dy, CowscopeTimelineView *self)
{
  int mode = self->drag_mode;
  self->drag_mode = DRAG_NONE;
  if (mode == DRAG_PENDING)
    {
      if (self->drag_y < RULER_HEIGHT && self->state != NULL)
        cowscope_view_state_set_cursor (self->state,
                                        cowscope_timeline_view_x_to_time (self, self->drag_x));
      else
        cowscope_timeline_view_click (self, self->drag_x, self->drag_y);
    }
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

/* Pinch begins: remember the window and the centre. */
static void
pinch_begin_cb (GtkGesture *gesture, GdkEventSequence *sequence, CowscopeTimelineView *self)
{
  double x, y;
  if (!visible (self, &self->pinch_t0, &self->pinch_t1)
      || !gtk_gesture_get_bounding_box_center (gesture, &x, &y))
    {
      gtk_gesture_set_state (gesture, GTK_EVENT_SEQUENCE_DENIED);
      return;
    }
  self->pinch_x = x;
}

/* Pinch: scale the window from where it began, around the centre. */
static void
pinch_scale_cb (GtkGestureZoom *gesture, double scale, CowscopeTimelineView *self)
{
  if (self->state == NULL || scale <= 0)
    return;
  double frac = CLAMP ((self->pinch_x - GUTTER_WIDTH) / data_width (self), 0.0, 1.0);
  double width = (double) (self->pinch_t1 - self->pinch_t0);
  double anchor = (double) self->pinch_t0 + frac * width;
  double nw = width / scale;
  gint64 n0 = (gint64) llround (anchor - frac * nw);
  set_window (self, n0, n0 + MAX ((gint64) llround (nw), 1));
}

/* Tooltip: what the pointer is over. */
static gboolean
query_tooltip_cb (GtkWidget *widget, int x, int y, gboolean keyboard, GtkTooltip *tooltip,
                  gpointer user_data)
{
  CowscopeTimelineView *self = COWSCOPE_TIMELINE_VIEW (widget);
  if (self->state == NULL || keyboard)
    return FALSE;
  Hit hit = hit_test (self, x, y);
  if (hit.lane < 0 || (hit.sample == NULL && hit.item == NULL))
    return FALSE;
  Lane *lane = self->lanes->pdata[hit.lane];
  CowscopeSessionDocument *doc = cowscope_view_state_get_document (self->state);
  gint64 origin = cowscope_session_document_get_start_ns (doc);
  g_autofree char *text =
    hit.sample != NULL ? cowscope_timeline_format_sample_tooltip (lane->lane, hit.sample, origin)
                       : cowscope_timeline_format_item_tooltip (lane->lane, hit.item, origin);
  gtk_tooltip_set_text (tooltip, text);
  return TRUE;
}

/* ---- GObject / GtkWidget ------------------------------------------------------------ */

/* The view state changed its window, cursor or selection: redraw (the
 * lane caches check their key themselves). */
static void
state_notify_cb (CowscopeViewState *state, GParamSpec *pspec, CowscopeTimelineView *self)
{
  if (g_str_has_prefix (pspec->name, "range-"))
    range_changed (self);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
highlighted_found_cb (GObject *source, GAsyncResult *result, gpointer data)
{
  g_autoptr (GError) error = NULL;
  GArray *events = cowscope_object_events_find_finish (result, &error);
  if (events == NULL && g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return; /* newer highlights, or the view went away */
  CowscopeTimelineView *self = data;
  if (events == NULL) /* outlines are a nicety: the graph still shows the objects */
    {
      g_warning ("Could not find the events of the highlighted objects: %s", error->message);
      events = g_array_new (FALSE, FALSE, sizeof (CowscopeObjectEvent));
    }
  g_clear_object (&self->highlight_cancellable);
  g_clear_pointer (&self->highlighted, g_array_unref);
  self->highlighted = events;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

/* Highlights changed: find the events they took part in, then outline them. */
static void
highlights_cb (CowscopeViewState *state, CowscopeTimelineView *self)
{
  g_cancellable_cancel (self->highlight_cancellable);
  g_clear_object (&self->highlight_cancellable);
  g_clear_pointer (&self->highlighted, g_array_unref);
  guint n = 0;
  const CowscopeObjectRef *refs = state != NULL ? cowscope_view_state_get_highlights (state, &n) : NULL;
  if (n > 0)
    {
      self->highlight_cancellable = g_cancellable_new ();
      cowscope_object_events_find_async (cowscope_view_state_get_document (state), refs, n,
                                         self->highlight_cancellable, highlighted_found_cb, self);
    }
  else
    self->highlighted = g_array_new (FALSE, FALSE, sizeof (CowscopeObjectEvent));
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

/* The theme or the dark style changed: the colours are looked up again
 * at the next frame (and the lanes redrawn if they differ). */
static void
cowscope_timeline_view_css_changed (GtkWidget *widget, GtkCssStyleChange *change)
{
  GTK_WIDGET_CLASS (cowscope_timeline_view_parent_class)->css_changed (widget, change);
  COWSCOPE_TIMELINE_VIEW (widget)->palette_stale = TRUE;
  gtk_widget_queue_draw (widget);
}

/* The vertical scroll moved. */
static void
vadjustment_changed_cb (GtkAdjustment *adjustment, CowscopeTimelineView *self)
{
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

/* Replaces the vertical adjustment. */
static void
set_vadjustment (CowscopeTimelineView *self, GtkAdjustment *adjustment)
{
  if (self->vadjustment == adjustment)
    return;
  if (self->vadjustment != NULL)
    {
      g_signal_handlers_disconnect_by_func (self->vadjustment, vadjustment_changed_cb, self);
      g_clear_object (&self->vadjustment);
    }
  if (adjustment != NULL)
    {
      self->vadjustment = g_object_ref_sink (adjustment);
      g_signal_connect (adjustment, "value-changed", G_CALLBACK (vadjustment_changed_cb), self);
      update_adjustment (self);
    }
}

/* Replaces the (unused) horizontal adjustment. */
static void
set_hadjustment (CowscopeTimelineView *self, GtkAdjustment *adjustment)
{
  if (adjustment != NULL)
    {
      g_object_ref_sink (adjustment);
      gtk_adjustment_configure (adjustment, 0, 0, 0, 0, 0, 0);
    }
  g_clear_object (&self->hadjustment);
  self->hadjustment = adjustment;
}

/* Size request: as wide as the gutter plus a little, as tall as the lanes. */
static void
cowscope_timeline_view_measure (GtkWidget *widget, GtkOrientation orientation, int for_size,
                                int *minimum, int *natural, int *min_baseline,
                                int *nat_baseline)
{
  CowscopeTimelineView *self = COWSCOPE_TIMELINE_VIEW (widget);
  if (orientation == GTK_ORIENTATION_HORIZONTAL)
    *minimum = *natural = GUTTER_WIDTH + 120;
  else
    {
      *minimum = RULER_HEIGHT + 40;
      *natural = RULER_HEIGHT + MAX (self->content_height, 40);
    }
}

/* New size: the ruler spans the top, the adjustment's page follows. */
static void
cowscope_timeline_view_size_allocate (GtkWidget *widget, int width, int height, int baseline)
{
  CowscopeTimelineView *self = COWSCOPE_TIMELINE_VIEW (widget);
  /* The lanes start RULER_HEIGHT down: the ruler gets exactly that (it
   * asks for no more), measured first as GTK expects of a parent. */
  gtk_widget_measure (self->ruler, GTK_ORIENTATION_VERTICAL, width, NULL, NULL, NULL, NULL);
  gtk_widget_size_allocate (self->ruler, &(GtkAllocation) { 0, 0, width, RULER_HEIGHT }, -1);
  update_adjustment (self);
}

static void
cowscope_timeline_view_dispose (GObject *object)
{
  CowscopeTimelineView *self = COWSCOPE_TIMELINE_VIEW (object);
  cowscope_timeline_view_set_view_state (self, NULL);
  end_first_frame (self);
  g_clear_handle_id (&self->totals_source, g_source_remove);
  g_clear_handle_id (&self->query_error_source, g_source_remove);
  g_clear_pointer (&self->query_error, g_free);
  g_cancellable_cancel (self->totals_cancellable);
  g_clear_object (&self->totals_cancellable);
  g_cancellable_cancel (self->highlight_cancellable);
  g_clear_object (&self->highlight_cancellable);
  g_clear_pointer (&self->highlighted, g_array_unref);
  set_vadjustment (self, NULL);
  g_clear_object (&self->hadjustment);
  g_clear_object (&self->layout);
  g_clear_pointer (&self->ruler, gtk_widget_unparent);
  G_OBJECT_CLASS (cowscope_timeline_view_parent_class)->dispose (object);
}

static void
cowscope_timeline_view_get_property (GObject *object, guint prop_id, GValue *value,
                                     GParamSpec *pspec)
{
  CowscopeTimelineView *self = COWSCOPE_TIMELINE_VIEW (object);
  switch (prop_id)
    {
    case PROP_VIEW_STATE: g_value_set_object (value, self->state); break;
    case PROP_HADJUSTMENT: g_value_set_object (value, self->hadjustment); break;
    case PROP_VADJUSTMENT: g_value_set_object (value, self->vadjustment); break;
    case PROP_HSCROLL_POLICY: g_value_set_enum (value, self->hscroll_policy); break;
    case PROP_VSCROLL_POLICY: g_value_set_enum (value, self->vscroll_policy); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
cowscope_timeline_view_set_property (GObject *object, guint prop_id, const GValue *value,
                                     GParamSpec *pspec)
{
  CowscopeTimelineView *self = COWSCOPE_TIMELINE_VIEW (object);
  switch (prop_id)
    {
    case PROP_VIEW_STATE: cowscope_timeline_view_set_view_state (self, g_value_get_object (value)); break;
    case PROP_HADJUSTMENT: set_hadjustment (self, g_value_get_object (value)); break;
    case PROP_VADJUSTMENT: set_vadjustment (self, g_value_get_object (value)); break;
    case PROP_HSCROLL_POLICY: self->hscroll_policy = g_value_get_enum (value); break;
    case PROP_VSCROLL_POLICY: self->vscroll_policy = g_value_get_enum (value); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

/* GtkScrollable: the default border is none. */
static gboolean
get_border (GtkScrollable *scrollable, GtkBorder *border)
{
  return FALSE;
}

static void
cowscope_timeline_view_scrollable_init (GtkScrollableInterface *iface)
{
  iface->get_border = get_border;
}

static void
cowscope_timeline_view_class_init (CowscopeTimelineViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = cowscope_timeline_view_dispose;
  object_class->get_property = cowscope_timeline_view_get_property;
  object_class->set_property = cowscope_timeline_view_set_property;
  widget_class->snapshot = cowscope_timeline_view_snapshot;
  widget_class->measure = cowscope_timeline_view_measure;
  widget_class->size_allocate = cowscope_timeline_view_size_allocate;
  widget_class->css_changed = cowscope_timeline_view_css_changed;

  /**
   * CowscopeTimelineView:view-state:
   *
   * The view state the timeline shows and changes, or %NULL (empty).
   */
  properties[PROP_VIEW_STATE] =
    g_param_spec_object ("view-state", NULL, NULL, COWSCOPE_TYPE_VIEW_STATE,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);
  /**
   * CowscopeTimelineView::query-error:
   * @message: why, for people
   *
   * Drawing (or counting a range) met a part of the session that cannot
   * be read, a damaged chunk of a lane: the timeline shows the rest.
   * Emitted once per document, from the main loop.
   */
  signals[QUERY_ERROR] = g_signal_new ("query-error", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                       0, NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_STRING);

  g_object_class_override_property (object_class, PROP_HADJUSTMENT, "hadjustment");
  g_object_class_override_property (object_class, PROP_VADJUSTMENT, "vadjustment");
  g_object_class_override_property (object_class, PROP_HSCROLL_POLICY, "hscroll-policy");
  g_object_class_override_property (object_class, PROP_VSCROLL_POLICY, "vscroll-policy");

  static const char *const actions[] = {
    "timeline.zoom-in", "timeline.zoom-out", "timeline.zoom-reset", "timeline.pan-left",
    "timeline.pan-right", "timeline.zoom-to-range", "timeline.clear-range",
  };
  for (guint i = 0; i < G_N_ELEMENTS (actions); i++)
    gtk_widget_class_install_action (widget_class, actions[i], NULL, action_cb);

  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_plus, 0, "timeline.zoom-in", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_equal, 0, "timeline.zoom-in", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_KP_Add, 0, "timeline.zoom-in", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_minus, 0, "timeline.zoom-out", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_KP_Subtract, 0, "timeline.zoom-out", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_0, 0, "timeline.zoom-reset", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_KP_0, 0, "timeline.zoom-reset", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Left, 0, "timeline.pan-left", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Right, 0, "timeline.pan-right", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Return, 0, "timeline.zoom-to-range", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Escape, 0, "timeline.clear-range", NULL);

  gtk_widget_class_set_css_name (widget_class, "cowscope-timeline");
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_IMG);
}

static void
cowscope_timeline_view_init (CowscopeTimelineView *self)
{
  GtkWidget *widget = GTK_WIDGET (self);
  gtk_widget_set_focusable (widget, TRUE);
  gtk_widget_set_focus_on_click (widget, TRUE);
  gtk_widget_set_overflow (widget, GTK_OVERFLOW_HIDDEN);
  gtk_widget_set_has_tooltip (widget, TRUE);
  gtk_widget_set_hexpand (widget, TRUE);
  gtk_widget_set_vexpand (widget, TRUE);
  self->cache_t0 = self->cache_t1 = -1;
  self->palette_stale = TRUE;
  self->layout = gtk_widget_create_pango_layout (widget, NULL);
  self->ruler = cowscope_time_ruler_new ();
  cowscope_time_ruler_set_inset (COWSCOPE_TIME_RULER (self->ruler), GUTTER_WIDTH);
  gtk_widget_set_parent (self->ruler, widget);

  g_signal_connect (widget, "query-tooltip", G_CALLBACK (query_tooltip_cb), NULL);

  GtkEventController *scroll =
    gtk_event_controller_scroll_new (GTK_EVENT_CONTROLLER_SCROLL_BOTH_AXES);
  g_signal_connect (scroll, "scroll", G_CALLBACK (scroll_cb), self);
  gtk_widget_add_controller (widget, scroll);

  GtkEventController *motion = gtk_event_controller_motion_new ();
  g_signal_connect (motion, "enter", G_CALLBACK (motion_cb), self);
  g_signal_connect (motion, "motion", G_CALLBACK (motion_cb), self);
  g_signal_connect (motion, "leave", G_CALLBACK (leave_cb), self);
  gtk_widget_add_controller (widget, motion);

  GtkGesture *drag = gtk_gesture_drag_new ();
  gtk_gesture_single_set_button (GTK_GESTURE_SINGLE (drag), GDK_BUTTON_PRIMARY);
  g_signal_connect (drag, "drag-begin", G_CALLBACK (drag_begin_cb), self);
  g_signal_connect (drag, "drag-update", G_CALLBACK (drag_update_cb), self);
  g_signal_connect (drag, "drag-end", G_CALLBACK (drag_end_cb), self);
  gtk_widget_add_controller (widget, GTK_EVENT_CONTROLLER (drag));

  GtkGesture *pinch = gtk_gesture_zoom_new ();
  g_signal_connect (pinch, "begin", G_CALLBACK (pinch_begin_cb), self);
  g_signal_connect (pinch, "scale-changed", G_CALLBACK (pinch_scale_cb), self);
  gtk_widget_add_controller (widget, GTK_EVENT_CONTROLLER (pinch));
}

/* A new, empty timeline. */
GtkWidget *
cowscope_timeline_view_new (void)
{
  return g_object_new (COWSCOPE_TYPE_TIMELINE_VIEW, NULL);
}

/* The view state shown, or NULL. */
CowscopeViewState *
cowscope_timeline_view_get_view_state (CowscopeTimelineView *self)
{
  g_return_val_if_fail (COWSCOPE_IS_TIMELINE_VIEW (self), NULL);
  return self->state;
}

/* Shows @state (NULL: nothing) and follows its changes. */
void
cowscope_timeline_view_set_view_state (CowscopeTimelineView *self, CowscopeViewState *state)
{
  g_return_if_fail (COWSCOPE_IS_TIMELINE_VIEW (self));
  g_return_if_fail (state == NULL || COWSCOPE_IS_VIEW_STATE (state));
  if (self->state == state)
    return;
  if (self->state != NULL)
    {
      g_signal_handlers_disconnect_by_data (self->state, self);
      g_clear_object (&self->state);
    }
  if (state != NULL)
    {
      self->state = g_object_ref (state);
      g_signal_connect (state, "notify", G_CALLBACK (state_notify_cb), self);
      g_signal_connect (state, "highlights-changed", G_CALLBACK (highlights_cb), self);
    }
  cowscope_time_ruler_set_view_state (COWSCOPE_TIME_RULER (self->ruler), state);
  highlights_cb (state, self);
  end_first_frame (self);
  self->first_frame = state != NULL;
  self->cache_t0 = self->cache_t1 = -1;
  rebuild_lanes (self);
  range_changed (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_VIEW_STATE]);
}

/* The message of the last ::query-error, or NULL. */
const char *
cowscope_timeline_view_get_query_error (CowscopeTimelineView *self)
{
  g_return_val_if_fail (COWSCOPE_IS_TIMELINE_VIEW (self), NULL);
  return self->query_error_source == 0 ? self->query_error : NULL;
}

/* Number of lanes shown. */
guint
cowscope_timeline_view_get_n_lanes (CowscopeTimelineView *self)
{
  g_return_val_if_fail (COWSCOPE_IS_TIMELINE_VIEW (self), 0);
  return self->lanes ? self->lanes->len : 0;
}

/* Lane @i (transfer none), or NULL. */
CowscopeTimelineLane *
cowscope_timeline_view_get_lane (CowscopeTimelineView *self, guint i)
{
  g_return_val_if_fail (COWSCOPE_IS_TIMELINE_VIEW (self), NULL);
  if (self->lanes == NULL || i >= self->lanes->len)
    return NULL;
  return ((Lane *) self->lanes->pdata[i])->lane;
}

/* Widget y and height of lane @i (0, 0 when there is none). */
void
cowscope_timeline_view_get_lane_area (CowscopeTimelineView *self, guint i, int *y, int *height)
{
  g_return_if_fail (COWSCOPE_IS_TIMELINE_VIEW (self));
  int ly = 0, lh = 0;
  if (self->lanes != NULL && i < self->lanes->len)
    {
      Lane *lane = self->lanes->pdata[i];
      ly = RULER_HEIGHT + lane->y - scroll_y (self);
      lh = lane->height;
    }
  if (y != NULL)
    *y = ly;
  if (height != NULL)
    *height = lh;
}

/* The range totals, when counted. */
gboolean
cowscope_timeline_view_get_range_totals (CowscopeTimelineView *self, CowscopeRangeTotals *totals)
{
  g_return_val_if_fail (COWSCOPE_IS_TIMELINE_VIEW (self), FALSE);
  if (!self->totals_valid)
    return FALSE;
  if (totals != NULL)
    *totals = self->totals;
  return TRUE;
}

/* The colour of @kind in the current style. */
void
cowscope_timeline_view_get_kind_color (CowscopeTimelineView *self, CowscopeItemKind kind,
                                       GdkRGBA *color)
{
  g_return_if_fail (COWSCOPE_IS_TIMELINE_VIEW (self));
  g_return_if_fail (kind < COWSCOPE_N_ITEM_KINDS);
  refresh_palette (self);
  *color = self->palette.kinds[kind];
}

/* The events outlined for the highlighted objects; FALSE while finding. */
gboolean
cowscope_timeline_view_get_n_highlighted (CowscopeTimelineView *self, guint *n_events)
{
  g_return_val_if_fail (COWSCOPE_IS_TIMELINE_VIEW (self), FALSE);
  if (self->highlighted == NULL)
    return FALSE;
  *n_events = self->highlighted->len;
  return TRUE;
}

/* How many snapshots drew a session. */
guint
cowscope_timeline_view_get_frame_count (CowscopeTimelineView *self)
{
  g_return_val_if_fail (COWSCOPE_IS_TIMELINE_VIEW (self), 0);
  return self->frame_count;
}

/* Whether the lanes drawn are exact (not the first frame's estimates). */
gboolean
cowscope_timeline_view_is_exact (CowscopeTimelineView *self)
{
  g_return_val_if_fail (COWSCOPE_IS_TIMELINE_VIEW (self), FALSE);
  return !self->first_frame;
}
