/* cowscope-timeline-view.c — see cowscope-timeline-view.h.
 *
 * The widget lays the lanes out under its time ruler (a child widget),
 * caches their render nodes and draws.  Drawing follows Sysprof's
 * patterns on GTK 4.8: a lane painter (cowscope-lane-painter.h) turns
 * each lane's query result into a GskRenderNode once per (window, width,
 * palette), replayed with gtk_snapshot_append_node; the selection, the
 * cursor, the hover, the flows and the range totals are drawn on top
 * every frame.  Lane queries are cheap (in-memory, O(pixels x log
 * events)) and run in the snapshot; the session model counts a range's
 * totals, finds the highlighted objects' events and the selection's
 * flows, and reads the range names in worker threads.  Until the first
 * frame of a session is exact, the lanes do not read the file in the
 * snapshot: what is not decoded yet is estimated from the chunks' rows
 * (cowscope_timeline_lane_query_cached()) and the exact answers come from
 * worker threads, each redrawing its lane (a big session's first
 * whole-session frame decodes every chunk).  Input is in
 * cowscope-timeline-input.c, actions and keys in cowscope-timeline-keys.c.
 */
#include "cowscope-config.h"

#include <math.h>

#include "cowscope-timeline-view-private.h"

#include "cowscope-lane-order.h"
#include "cowscope-object-events.h"
#include "cowscope-paint.h"
#include "cowscope-time-ruler.h"
#include "cowscope-timeline-format.h"
#include "cowscope-timeline-overlay.h"

#define TOTALS_DELAY_MS 60  /* coalesces a drag's many range changes */

enum { QUERY_ERROR, N_SIGNALS };
static guint signals[N_SIGNALS];

static void cowscope_timeline_view_scrollable_init (GtkScrollableInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (CowscopeTimelineView, cowscope_timeline_view, GTK_TYPE_WIDGET,
                               G_IMPLEMENT_INTERFACE (GTK_TYPE_SCROLLABLE,
                                                      cowscope_timeline_view_scrollable_init))

enum {
  PROP_0,
  PROP_VIEW_STATE,
  PROP_LABEL_WIDTH,
  PROP_LANE_HEIGHT,
  PROP_SHOW_COUNTERS,
  PROP_CURSOR_SHOWN,
  N_PROPS,
  /* GtkScrollable */
  PROP_HADJUSTMENT = N_PROPS,
  PROP_VADJUSTMENT,
  PROP_HSCROLL_POLICY,
  PROP_VSCROLL_POLICY,
};

static GParamSpec *properties[N_PROPS];

static void range_changed (CowscopeTimelineView *self);
static void rebuild_lanes (CowscopeTimelineView *self);

/* ---- geometry ------------------------------------------------------------ */

/* The data area's width in pixels (what lanes are queried at); >= 1. */
int
cowscope_timeline_view_data_width (CowscopeTimelineView *self)
{
  return MAX (gtk_widget_get_width (GTK_WIDGET (self)) - self->label_width, 1);
}

/* The vertical scroll offset of the scrolled lanes. */
static int
scroll_y (CowscopeTimelineView *self)
{
  return self->vadjustment ? (int) gtk_adjustment_get_value (self->vadjustment) : 0;
}

/* The top of the scrolled lanes' area, in widget coordinates. */
static int
scrolled_top (CowscopeTimelineView *self)
{
  return RULER_HEIGHT + self->pinned_height;
}

/* The visible window; FALSE without a view state. */
gboolean
cowscope_timeline_view_visible (CowscopeTimelineView *self, gint64 *t0, gint64 *t1)
{
  if (self->state == NULL)
    return FALSE;
  *t0 = cowscope_view_state_get_visible_start (self->state);
  *t1 = cowscope_view_state_get_visible_end (self->state);
  return *t1 > *t0;
}

double
cowscope_timeline_view_time_to_x (CowscopeTimelineView *self, gint64 t)
{
  g_return_val_if_fail (COWSCOPE_IS_TIMELINE_VIEW (self), 0);
  gint64 t0, t1;
  if (!cowscope_timeline_view_visible (self, &t0, &t1))
    return self->label_width;
  return cowscope_time_axis_to_x (t, t0, t1, self->label_width,
                                  cowscope_timeline_view_data_width (self));
}

gint64
cowscope_timeline_view_x_to_time (CowscopeTimelineView *self, double x)
{
  g_return_val_if_fail (COWSCOPE_IS_TIMELINE_VIEW (self), 0);
  gint64 t0, t1;
  if (!cowscope_timeline_view_visible (self, &t0, &t1))
    return 0;
  return cowscope_time_axis_to_time (x, t0, t1, self->label_width,
                                     cowscope_timeline_view_data_width (self));
}

/* The widget y of @lane's top (pinned lanes do not scroll). */
int
cowscope_timeline_view_lane_top (CowscopeTimelineView *self, const Lane *lane)
{
  if (lane->pinned)
    return RULER_HEIGHT + lane->y;
  return scrolled_top (self) + lane->y - scroll_y (self);
}

/* The lane under widget y @y, or -1 (the ruler, below the lanes, or a
 * scrolled lane under the pinned ones). */
int
cowscope_timeline_view_lane_at (CowscopeTimelineView *self, double y)
{
  if (self->lanes == NULL || y < RULER_HEIGHT)
    return -1;
  gboolean in_pinned = y < scrolled_top (self);
  for (guint i = 0; i < self->lanes->len; i++)
    {
      Lane *lane = self->lanes->pdata[i];
      if (lane->pinned != in_pinned)
        continue;
      int top = cowscope_timeline_view_lane_top (self, lane);
      if (y >= top && y < top + lane->geometry.height)
        return (int) i;
    }
  return -1;
}

/* The shown lane of @kind for (@pid, @tid[, @device]), or -1. */
int
cowscope_timeline_view_find_lane (CowscopeTimelineView *self, CowscopeLaneKind kind, guint32 pid,
                                  gint64 tid, gint64 device)
{
  for (guint i = 0; self->lanes != NULL && i < self->lanes->len; i++)
    {
      Lane *lane = self->lanes->pdata[i];
      if (lane->kind == kind && cowscope_timeline_lane_get_pid (lane->lane) == pid
          && (kind == COWSCOPE_LANE_PROCESS || cowscope_timeline_lane_get_tid (lane->lane) == tid)
          && (kind != COWSCOPE_LANE_CUDA_STREAM
              || cowscope_timeline_lane_get_device (lane->lane) == device))
        return (int) i;
    }
  return -1;
}

/* ---- lanes ------------------------------------------------------------------ */

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

/* Drops every cached lane node (and labels when @titles); the caller
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
  double page = MAX (gtk_widget_get_height (GTK_WIDGET (self)) - scrolled_top (self), 1);
  double upper = MAX (self->content_height, page);
  double value = CLAMP (gtk_adjustment_get_value (self->vadjustment), 0, upper - page);
  gtk_adjustment_configure (self->vadjustment, value, 0, upper, 24, page * 0.9, page);
}

/* Measures the fonts: a range name's line and a lane label's two lines. */
static void
measure_text (CowscopeTimelineView *self)
{
  int h;
  pango_layout_set_text (self->range_layout, "Ag", -1);
  pango_layout_get_pixel_size (self->range_layout, NULL, &h);
  self->text_height = h;
  pango_layout_set_text (self->layout, "Ag", -1);
  pango_layout_get_pixel_size (self->layout, NULL, &h);
  self->label_height = 2 * h + 8;
}

/* Rows of ranges thread lane @lane needs (one until the names are read,
 * so no range is left out meanwhile). */
static guint
range_rows (CowscopeTimelineView *self, CowscopeTimelineLane *lane)
{
  if (cowscope_timeline_lane_get_kind (lane) != COWSCOPE_LANE_THREAD)
    return 0;
  if (self->range_names == NULL)
    return 1;
  return cowscope_range_names_get_thread_rows (self->range_names,
                                               cowscope_timeline_lane_get_pid (lane),
                                               cowscope_timeline_lane_get_tid (lane));
}

/* The lanes from the document, in the model's display order as the lane
 * filter arranges them: pinned ones stacked in their area, the others in
 * the scrolled one. */
static void
rebuild_lanes (CowscopeTimelineView *self)
{
  g_clear_pointer (&self->lanes, g_ptr_array_unref);
  self->content_height = self->pinned_height = 0;
  self->n_pinned = 0;
  if (self->state != NULL)
    {
      CowscopeSessionDocument *doc = cowscope_view_state_get_document (self->state);
      g_autoptr (GPtrArray) ordered =
        cowscope_lane_order_for_display (cowscope_session_document_get_lanes (doc));
      g_autoptr (GPtrArray) shown =
        cowscope_lane_filter_arrange (self->filter, doc, ordered, &self->n_pinned);
      measure_text (self);
      self->lanes = g_ptr_array_new_with_free_func (lane_free);
      for (guint i = 0; i < shown->len; i++)
        {
          Lane *lane = g_new0 (Lane, 1);
          lane->lane = g_object_ref (shown->pdata[i]);
          lane->kind = cowscope_timeline_lane_get_kind (lane->lane);
          lane->pinned = i < self->n_pinned;
          /* CUDA lanes show one line of label; the others two.  A
           * process lane with no IPC draws nothing: its label is all. */
          int min_height = lane->kind == COWSCOPE_LANE_CUDA_STREAM
                             ? self->label_height / 2 + 2 : self->label_height;
          if (lane->kind == COWSCOPE_LANE_PROCESS
              && cowscope_timeline_lane_get_n_events (lane->lane) == 0)
            min_height = -self->label_height;
          cowscope_lane_geometry_init (&lane->geometry, lane->kind, self->row_height,
                                       range_rows (self, lane->lane), self->text_height,
                                       min_height);
          int *end = lane->pinned ? &self->pinned_height : &self->content_height;
          lane->y = *end;
          *end += lane->geometry.height;
          g_ptr_array_add (self->lanes, lane);
        }
    }
  self->cache_t0 = self->cache_t1 = -1;
  update_adjustment (self);
  gtk_widget_queue_resize (GTK_WIDGET (self));
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

/* Brings shown lane @i into the scrolled area's view (pinned lanes are
 * always in view). */
void
cowscope_timeline_view_scroll_lane_into_view (CowscopeTimelineView *self, int i)
{
  if (self->lanes == NULL || i < 0 || (guint) i >= self->lanes->len || self->vadjustment == NULL)
    return;
  Lane *lane = self->lanes->pdata[i];
  if (lane->pinned)
    return;
  double value = gtk_adjustment_get_value (self->vadjustment);
  double page = gtk_adjustment_get_page_size (self->vadjustment);
  if (lane->y < value)
    gtk_adjustment_set_value (self->vadjustment, lane->y);
  else if (lane->y + lane->geometry.height > value + page)
    gtk_adjustment_set_value (self->vadjustment, lane->y + lane->geometry.height - page);
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
gboolean
cowscope_timeline_view_validate_cache (CowscopeTimelineView *self)
{
  gint64 t0, t1;
  if (!cowscope_timeline_view_visible (self, &t0, &t1) || self->lanes == NULL)
    return FALSE;
  refresh_palette (self);
  int dw = cowscope_timeline_view_data_width (self);
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
void
cowscope_timeline_view_ensure_lane_window (CowscopeTimelineView *self, Lane *lane)
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
  cowscope_timeline_view_ensure_lane_window (self, lane);
  switch (lane->kind)
    {
    case COWSCOPE_LANE_COUNTER:
      lane->node = cowscope_counter_lane_paint (lane->window, &self->palette,
                                                cowscope_timeline_lane_get_counter (lane->lane),
                                                lane->geometry.height, self->layout);
      break;
    case COWSCOPE_LANE_PROCESS:
      lane->node = cowscope_process_lane_paint (lane->window, &self->palette,
                                                lane->geometry.height);
      break;
    case COWSCOPE_LANE_CUDA_STREAM:
    case COWSCOPE_LANE_THREAD:
    default:
      lane->node = cowscope_event_lane_paint (lane->window, &self->palette,
                                              lane->kind == COWSCOPE_LANE_CUDA_STREAM,
                                              &lane->geometry, self->range_names,
                                              cowscope_timeline_lane_get_pid (lane->lane),
                                              self->range_layout);
      break;
    }
}

/* What @lane's label says (@name and @detail newly allocated, pointed to
 * by @label). */
void
cowscope_timeline_view_label_texts (CowscopeTimelineView *self, Lane *lane,
                                    CowscopeLaneLabel *label, char **name, char **detail)
{
  CowscopeSessionDocument *doc = cowscope_view_state_get_document (self->state);
  cowscope_timeline_format_lane_label (lane->lane, doc, name, detail);
  *label = (CowscopeLaneLabel) {
    .name = *name,
    .detail = *detail,
    .bold = lane->kind == COWSCOPE_LANE_PROCESS,
    .expander = -1,
    .pinned = lane->pinned,
  };
  if (lane->kind == COWSCOPE_LANE_PROCESS)
    label->expander = cowscope_lane_filter_get_collapsed (
                        self->filter, cowscope_timeline_lane_get_pid (lane->lane)) ? 0 : 1;
}

/* Makes sure @lane's label node exists. */
static void
ensure_title_node (CowscopeTimelineView *self, Lane *lane)
{
  if (lane->title_node != NULL)
    return;
  CowscopeLaneLabel label;
  g_autofree char *name = NULL, *detail = NULL;
  cowscope_timeline_view_label_texts (self, lane, &label, &name, &detail);
  lane->title_node = cowscope_lane_title_paint (&label, &self->palette, self->label_width,
                                                lane->geometry.height, self->layout,
                                                &lane->ellipsized);
}

/* ---- what is drawn over the lanes ----------------------------------------------- */

/* Outlines the events of the highlighted objects in thread lane @lane
 * (drawn at @top). */
static void
draw_highlighted (CowscopeTimelineView *self, GtkSnapshot *snapshot, Lane *lane, int top)
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
        cowscope_overlay_highlighted (snapshot, &lane->geometry,
                                      cowscope_timeline_view_time_to_x (self, ev->start_ns),
                                      cowscope_timeline_view_time_to_x (self, ev->end_ns),
                                      self->label_width, w, top, &self->palette.highlight);
    }
}

/* Draws the lanes of one area (the pinned or the scrolled), those of it
 * between widget y @area_top and @area_bottom. */
static void
draw_area (CowscopeTimelineView *self, GtkSnapshot *snapshot, gboolean pinned, int w,
           int area_top, int area_bottom)
{
  const CowscopeTimelinePalette *palette = &self->palette;
  int lw = self->label_width, dw = cowscope_timeline_view_data_width (self);
  GdkRGBA stripe = cowscope_timeline_palette_fg (palette, 0.03f);
  GdkRGBA sep = cowscope_timeline_palette_fg (palette, 0.08f);
  GdkRGBA sel_color = cowscope_timeline_palette_fg (palette, 0.95f);
  gint64 selected = cowscope_view_state_get_selected_seq (self->state);
  if (area_bottom <= area_top)
    return;
  gtk_snapshot_push_clip (snapshot,
                          &GRAPHENE_RECT_INIT (0, area_top, w, area_bottom - area_top));
  for (guint i = 0; i < self->lanes->len; i++)
    {
      Lane *lane = self->lanes->pdata[i];
      if (lane->pinned != pinned)
        continue;
      int top = cowscope_timeline_view_lane_top (self, lane), h = lane->geometry.height;
      if (top + h <= area_top || top >= area_bottom)
        continue;
      if (i % 2 == 1)
        cowscope_paint_rect (snapshot, &stripe, 0, top, w, h);
      cowscope_paint_rect (snapshot,
                           lane->kind == COWSCOPE_LANE_PROCESS ? &palette->process_gutter
                                                               : &palette->gutter,
                           0, top, lw, h);
      cowscope_paint_rect (snapshot, &sep, 0, top + h - 1, w, 1);
      ensure_lane_node (self, lane);
      ensure_title_node (self, lane);
      gtk_snapshot_save (snapshot);
      gtk_snapshot_translate (snapshot, &GRAPHENE_POINT_INIT (0, top));
      gtk_snapshot_push_clip (snapshot, &GRAPHENE_RECT_INIT (0, 0, lw - 1, h));
      gtk_snapshot_append_node (snapshot, lane->title_node);
      gtk_snapshot_pop (snapshot);
      gtk_snapshot_push_clip (snapshot, &GRAPHENE_RECT_INIT (lw, 0, dw, h));
      gtk_snapshot_translate (snapshot, &GRAPHENE_POINT_INIT (lw, 0));
      gtk_snapshot_append_node (snapshot, lane->node);
      gtk_snapshot_pop (snapshot);
      gtk_snapshot_restore (snapshot);
      draw_highlighted (self, snapshot, lane, top);
      if (selected >= 0 && lane->kind == COWSCOPE_LANE_THREAD)
        cowscope_overlay_selected (snapshot, lane->window, &lane->geometry, selected, lw, top,
                                   &sel_color);
    }
  cowscope_paint_rect (snapshot, &sep, lw - 1, area_top, 1, area_bottom - area_top);
  gtk_snapshot_pop (snapshot);
}

/* The scrolled lanes, then the pinned ones over them, with a line under
 * the pinned area. */
static void
draw_lanes (CowscopeTimelineView *self, GtkSnapshot *snapshot, int w, int h)
{
  draw_area (self, snapshot, FALSE, w, scrolled_top (self), h);
  if (self->pinned_height > 0)
    {
      draw_area (self, snapshot, TRUE, w, RULER_HEIGHT, scrolled_top (self));
      GdkRGBA line = cowscope_timeline_palette_fg (&self->palette, 0.3f);
      cowscope_paint_rect (snapshot, &line, 0, scrolled_top (self) - 1, w, 1);
    }
}

/* The hover: a faint line at the pointer and the outline of what it is
 * over. */
static void
draw_hover (CowscopeTimelineView *self, GtkSnapshot *snapshot, int h)
{
  GdkRGBA line = cowscope_timeline_palette_fg (&self->palette, 0.25f);
  cowscope_paint_rect (snapshot, &line, (float) floor (self->pointer_x), 0, 1, h);
  Hit hit = cowscope_timeline_view_hit_test (self, self->pointer_x, self->pointer_y);
  if (hit.item == NULL)
    return;
  Lane *lane = self->lanes->pdata[hit.lane];
  GdkRGBA color = cowscope_timeline_palette_fg (&self->palette, 0.8f);
  cowscope_overlay_hover (snapshot, lane->window, hit.item, hit.is_span, &lane->geometry,
                          hit.range_row, self->label_width,
                          cowscope_timeline_view_lane_top (self, lane), &color);
}

/* Where flow end @end is drawn: its lane's event row (the process lane
 * when its thread is folded or hidden); FALSE when no lane shows it. */
static gboolean
flow_point (CowscopeTimelineView *self, const CowscopeFlowEnd *end, double *x, double *y)
{
  int i = end->device >= 0
            ? cowscope_timeline_view_find_lane (self, COWSCOPE_LANE_CUDA_STREAM, end->pid,
                                                end->tid, end->device)
            : cowscope_timeline_view_find_lane (self, COWSCOPE_LANE_THREAD, end->pid, end->tid,
                                                -1);
  if (i < 0)
    i = cowscope_timeline_view_find_lane (self, COWSCOPE_LANE_PROCESS, end->pid, 0, -1);
  if (i < 0)
    return FALSE;
  Lane *lane = self->lanes->pdata[i];
  *x = cowscope_timeline_view_time_to_x (self, end->ns);
  *y = cowscope_timeline_view_lane_top (self, lane) + lane->geometry.event_y
       + lane->geometry.event_h / 2;
  return TRUE;
}

/* The selected event's flows as arrows over the lanes' data area. */
static void
draw_flows (CowscopeTimelineView *self, GtkSnapshot *snapshot, int w, int h)
{
  if (self->flows == NULL || self->flows->len == 0)
    return;
  gtk_snapshot_push_clip (snapshot, &GRAPHENE_RECT_INIT (self->label_width, RULER_HEIGHT,
                                                         w - self->label_width, h - RULER_HEIGHT));
  for (guint i = 0; i < self->flows->len; i++)
    {
      const CowscopeFlow *flow = &g_array_index (self->flows, CowscopeFlow, i);
      double x0, y0, x1, y1;
      if (flow_point (self, &flow->from, &x0, &y0) && flow_point (self, &flow->to, &x1, &y1))
        cowscope_overlay_flow (snapshot, x0, y0, x1, y1,
                               flow->kind == COWSCOPE_FLOW_OPERATION_TO_CUDA
                                 ? &self->palette.kinds[COWSCOPE_ITEM_CUDA_MEMCPY]
                                 : &self->palette.kinds[COWSCOPE_ITEM_LAZY_CLONE]);
    }
  gtk_snapshot_pop (snapshot);
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

/* Draws the lanes (cached nodes), then the selected range, the flows, the
 * hover and the cursor, the ruler on top of them, and the range's
 * totals. */
static void
cowscope_timeline_view_snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
  CowscopeTimelineView *self = COWSCOPE_TIMELINE_VIEW (widget);
  int w = gtk_widget_get_width (widget), h = gtk_widget_get_height (widget);
  int lw = self->label_width;
  gint64 t0, t1;
  if (!cowscope_timeline_view_visible (self, &t0, &t1) || self->lanes == NULL || w <= lw)
    return;
  self->frame_count++;
  cowscope_timeline_view_validate_cache (self);

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
                            cowscope_timeline_view_time_to_x (self, r1), lw, w, h);
  draw_flows (self, snapshot, w, h);
  if (self->pointer_inside && self->pointer_x >= lw && self->drag_mode != DRAG_PAN)
    draw_hover (self, snapshot, h);
  /* The cursor: the instant the sharing graph shows. */
  gint64 cursor = cowscope_view_state_get_cursor (self->state);
  if (cursor >= t0 && cursor <= t1)
    {
      double x = cowscope_timeline_view_time_to_x (self, cursor);
      cowscope_paint_rect (snapshot, &self->palette.accent, (float) floor (x) - 1, 0, 2, h);
    }

  gtk_widget_snapshot_child (widget, self->ruler, snapshot);
  if (self->lane_menu != NULL)
    gtk_widget_snapshot_child (widget, self->lane_menu, snapshot);
  if (range_shown)
    {
      g_autofree char *text =
        cowscope_timeline_format_range (r0, r1, self->totals_valid ? &self->totals : NULL);
      cowscope_overlay_range_box (snapshot, self->layout, &self->palette, text,
                                  cowscope_timeline_view_time_to_x (self, r0),
                                  cowscope_timeline_view_time_to_x (self, r1), lw, w,
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

/* ---- what the model looks up for the view --------------------------------------- */

/* The range names were read: lanes get their rows, ranges their names. */
static void
names_loaded_cb (GObject *source, GAsyncResult *result, gpointer data)
{
  g_autoptr (GError) error = NULL;
  CowscopeRangeNames *names = cowscope_range_names_load_finish (result, &error);
  if (names == NULL && g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;
  CowscopeTimelineView *self = data;
  g_clear_object (&self->names_cancellable);
  if (names == NULL)
    {
      /* Ranges still show, unnamed, in one row. */
      g_warning ("Could not read the names of the user ranges: %s", error->message);
      return;
    }
  self->range_names = names;
  rebuild_lanes (self);
}

/* Whether @doc is a finalized session: one still being recorded (a live
 * snapshot) has no derived tables yet to read names or flows from. */
static gboolean
is_finalized (CowscopeSessionDocument *doc)
{
  return g_strcmp0 (cowscope_session_document_get_meta (doc, "finalized"), "0") != 0;
}

/* Starts reading the range names of the view state's document. */
static void
load_range_names (CowscopeTimelineView *self)
{
  g_cancellable_cancel (self->names_cancellable);
  g_clear_object (&self->names_cancellable);
  g_clear_pointer (&self->range_names, cowscope_range_names_unref);
  if (self->state == NULL || !is_finalized (cowscope_view_state_get_document (self->state)))
    return;
  self->names_cancellable = g_cancellable_new ();
  cowscope_range_names_load_async (cowscope_view_state_get_document (self->state),
                                   self->names_cancellable, names_loaded_cb, self);
}

static void
flows_found_cb (GObject *source, GAsyncResult *result, gpointer data)
{
  g_autoptr (GError) error = NULL;
  GArray *flows = cowscope_flows_find_finish (result, &error);
  if (flows == NULL && g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;
  CowscopeTimelineView *self = data;
  if (flows == NULL) /* arrows are a nicety: the explanation still tells the story */
    {
      g_warning ("Could not find the flows of the selected event: %s", error->message);
      flows = g_array_new (FALSE, FALSE, sizeof (CowscopeFlow));
    }
  g_clear_object (&self->flows_cancellable);
  g_clear_pointer (&self->flows, g_array_unref);
  self->flows = flows;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

/* The selection changed: look its flows up. */
static void
selection_changed (CowscopeTimelineView *self)
{
  g_cancellable_cancel (self->flows_cancellable);
  g_clear_object (&self->flows_cancellable);
  g_clear_pointer (&self->flows, g_array_unref);
  gint64 seq = self->state != NULL ? cowscope_view_state_get_selected_seq (self->state) : -1;
  if (seq < 0 || !is_finalized (cowscope_view_state_get_document (self->state)))
    {
      self->flows = g_array_new (FALSE, FALSE, sizeof (CowscopeFlow));
      return;
    }
  self->flows_cancellable = g_cancellable_new ();
  cowscope_flows_find_async (cowscope_view_state_get_document (self->state), seq,
                             self->flows_cancellable, flows_found_cb, self);
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
  cowscope_event_steps_sort (events);
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

/* Whether the cursor is in the visible window (the jump-to-cursor
 * button's and action's sensitivity follow it). */
static void
update_cursor_shown (CowscopeTimelineView *self)
{
  gint64 t0, t1;
  gboolean shown = TRUE;
  if (cowscope_timeline_view_visible (self, &t0, &t1))
    {
      gint64 cursor = cowscope_view_state_get_cursor (self->state);
      shown = cursor >= t0 && cursor <= t1;
    }
  if (shown == self->cursor_shown)
    return;
  self->cursor_shown = shown;
  cowscope_timeline_view_update_actions (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_CURSOR_SHOWN]);
}

/* The view state changed its window, cursor or selection: redraw (the
 * lane caches check their key themselves). */
static void
state_notify_cb (CowscopeViewState *state, GParamSpec *pspec, CowscopeTimelineView *self)
{
  if (g_str_has_prefix (pspec->name, "range-"))
    range_changed (self);
  else if (g_str_equal (pspec->name, "selected-seq"))
    selection_changed (self);
  update_cursor_shown (self);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

/* The person changed which lanes to show. */
static void
filter_changed_cb (CowscopeLaneFilter *filter, CowscopeTimelineView *self)
{
  rebuild_lanes (self);
}

/* ---- GObject / GtkWidget ------------------------------------------------------------ */

/* The theme, the font or the dark style changed: the colours are looked
 * up again at the next frame (and the lanes redrawn if they differ); text
 * may be another size, so the lanes are laid out again. */
static void
cowscope_timeline_view_css_changed (GtkWidget *widget, GtkCssStyleChange *change)
{
  CowscopeTimelineView *self = COWSCOPE_TIMELINE_VIEW (widget);
  GTK_WIDGET_CLASS (cowscope_timeline_view_parent_class)->css_changed (widget, change);
  self->palette_stale = TRUE;
  int text_height = self->text_height, label_height = self->label_height;
  measure_text (self);
  if (self->text_height != text_height || self->label_height != label_height)
    rebuild_lanes (self);
  gtk_widget_queue_draw (widget);
}

static void
vadjustment_changed_cb (GtkAdjustment *adjustment, CowscopeTimelineView *self)
{
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

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

/* Size request: as wide as the labels plus a little, as tall as the
 * lanes. */
static void
cowscope_timeline_view_measure (GtkWidget *widget, GtkOrientation orientation, int for_size,
                                int *minimum, int *natural, int *min_baseline,
                                int *nat_baseline)
{
  CowscopeTimelineView *self = COWSCOPE_TIMELINE_VIEW (widget);
  if (orientation == GTK_ORIENTATION_HORIZONTAL)
    *minimum = *natural = MIN_LABEL_WIDTH + MIN_DATA_WIDTH;
  else
    {
      *minimum = RULER_HEIGHT + self->pinned_height + 40;
      *natural = RULER_HEIGHT + self->pinned_height + MAX (self->content_height, 40);
    }
}

/* New size: the ruler spans the top, the adjustment's page follows; a
 * label column wider than the widget leaves room for the data. */
static void
cowscope_timeline_view_size_allocate (GtkWidget *widget, int width, int height, int baseline)
{
  CowscopeTimelineView *self = COWSCOPE_TIMELINE_VIEW (widget);
  /* The lanes start RULER_HEIGHT down: the ruler gets exactly that (it
   * asks for no more), measured first as GTK expects of a parent. */
  gtk_widget_measure (self->ruler, GTK_ORIENTATION_VERTICAL, width, NULL, NULL, NULL, NULL);
  gtk_widget_size_allocate (self->ruler, &(GtkAllocation) { 0, 0, width, RULER_HEIGHT }, -1);
  if (self->lane_menu != NULL)
    gtk_popover_present (GTK_POPOVER (self->lane_menu));
  update_adjustment (self);
  update_cursor_shown (self);
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
  g_clear_pointer (&self->steps, g_array_unref);
  g_cancellable_cancel (self->flows_cancellable);
  g_clear_object (&self->flows_cancellable);
  g_clear_pointer (&self->flows, g_array_unref);
  g_cancellable_cancel (self->names_cancellable);
  g_clear_object (&self->names_cancellable);
  g_clear_pointer (&self->range_names, cowscope_range_names_unref);
  if (self->filter != NULL)
    g_signal_handlers_disconnect_by_data (self->filter, self);
  g_clear_object (&self->filter);
  set_vadjustment (self, NULL);
  g_clear_object (&self->hadjustment);
  g_clear_object (&self->layout);
  g_clear_object (&self->range_layout);
  g_clear_pointer (&self->ruler, gtk_widget_unparent);
  g_clear_pointer (&self->lane_menu, gtk_widget_unparent);
  G_OBJECT_CLASS (cowscope_timeline_view_parent_class)->dispose (object);
}

/* Sets the Lane Height preference: every thread and CUDA lane's event
 * row area. */
static void
set_row_height (CowscopeTimelineView *self, int height)
{
  height = CLAMP (height, 12, 200);
  if (self->row_height == height)
    return;
  self->row_height = height;
  rebuild_lanes (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_LANE_HEIGHT]);
}

static void
cowscope_timeline_view_get_property (GObject *object, guint prop_id, GValue *value,
                                     GParamSpec *pspec)
{
  CowscopeTimelineView *self = COWSCOPE_TIMELINE_VIEW (object);
  switch (prop_id)
    {
    case PROP_VIEW_STATE: g_value_set_object (value, self->state); break;
    case PROP_LABEL_WIDTH: g_value_set_int (value, self->label_width); break;
    case PROP_LANE_HEIGHT: g_value_set_uint (value, (guint) self->row_height); break;
    case PROP_SHOW_COUNTERS:
      g_value_set_boolean (value, cowscope_lane_filter_get_show_counters (self->filter));
      break;
    case PROP_CURSOR_SHOWN: g_value_set_boolean (value, self->cursor_shown); break;
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
    case PROP_LABEL_WIDTH: cowscope_timeline_view_set_label_width (self, g_value_get_int (value)); break;
    case PROP_LANE_HEIGHT: set_row_height (self, (int) g_value_get_uint (value)); break;
    case PROP_SHOW_COUNTERS:
      if (cowscope_lane_filter_get_show_counters (self->filter) != g_value_get_boolean (value))
        {
          cowscope_lane_filter_set_show_counters (self->filter, g_value_get_boolean (value));
          g_object_notify_by_pspec (object, pspec);
        }
      break;
    case PROP_HADJUSTMENT: set_hadjustment (self, g_value_get_object (value)); break;
    case PROP_VADJUSTMENT: set_vadjustment (self, g_value_get_object (value)); break;
    case PROP_HSCROLL_POLICY: self->hscroll_policy = g_value_get_enum (value); break;
    case PROP_VSCROLL_POLICY: self->vscroll_policy = g_value_get_enum (value); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

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
  /**
   * CowscopeTimelineView:label-width:
   *
   * The width of the lanes' label column, in pixels.
   */
  properties[PROP_LABEL_WIDTH] =
    g_param_spec_int ("label-width", NULL, NULL, MIN_LABEL_WIDTH, MAX_LABEL_WIDTH,
                      DEFAULT_LABEL_WIDTH,
                      G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /**
   * CowscopeTimelineView:lane-height:
   *
   * The height of a thread or CUDA stream lane's event row, in pixels (a
   * thread's named ranges add rows below it).
   */
  properties[PROP_LANE_HEIGHT] =
    g_param_spec_uint ("lane-height", NULL, NULL, 12, 200, DEFAULT_ROW_HEIGHT,
                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /**
   * CowscopeTimelineView:show-counters:
   *
   * Whether the counter tracks are shown.
   */
  properties[PROP_SHOW_COUNTERS] =
    g_param_spec_boolean ("show-counters", NULL, NULL, TRUE,
                          G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /**
   * CowscopeTimelineView:cursor-shown:
   *
   * Whether the cursor is inside the visible window (when it is not,
   * timeline.jump-to-cursor brings it back).
   */
  properties[PROP_CURSOR_SHOWN] =
    g_param_spec_boolean ("cursor-shown", NULL, NULL, TRUE,
                          G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
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

  cowscope_timeline_view_class_init_keys (widget_class);

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
  self->cursor_shown = TRUE;
  self->label_width = DEFAULT_LABEL_WIDTH;
  self->row_height = DEFAULT_ROW_HEIGHT;
  self->layout = gtk_widget_create_pango_layout (widget, NULL);
  self->range_layout = gtk_widget_create_pango_layout (widget, NULL);
  PangoAttrList *small = pango_attr_list_new ();
  pango_attr_list_insert (small, pango_attr_scale_new (0.85));
  pango_layout_set_attributes (self->range_layout, small);
  pango_attr_list_unref (small);
  measure_text (self);
  self->filter = cowscope_lane_filter_new ();
  g_signal_connect (self->filter, "changed", G_CALLBACK (filter_changed_cb), self);
  self->ruler = cowscope_time_ruler_new ();
  cowscope_time_ruler_set_inset (COWSCOPE_TIME_RULER (self->ruler), self->label_width);
  gtk_widget_set_parent (self->ruler, widget);
  cowscope_timeline_view_init_input (self);
  cowscope_timeline_view_update_actions (self);
}

GtkWidget *
cowscope_timeline_view_new (void)
{
  return g_object_new (COWSCOPE_TYPE_TIMELINE_VIEW, NULL);
}

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
  CowscopeSessionDocument *old_doc =
    self->state != NULL ? cowscope_view_state_get_document (self->state) : NULL;
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
  selection_changed (self);
  g_clear_pointer (&self->steps, g_array_unref);
  /* A live recording gets a new view state over a new snapshot of the
   * same file every second or so: the names are read again for each
   * document. */
  if (state == NULL || cowscope_view_state_get_document (state) != old_doc)
    load_range_names (self);
  end_first_frame (self);
  self->first_frame = state != NULL;
  rebuild_lanes (self);
  range_changed (self);
  update_cursor_shown (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_VIEW_STATE]);
}

CowscopeLaneFilter *
cowscope_timeline_view_get_lane_filter (CowscopeTimelineView *self)
{
  g_return_val_if_fail (COWSCOPE_IS_TIMELINE_VIEW (self), NULL);
  return self->filter;
}

int
cowscope_timeline_view_get_label_width (CowscopeTimelineView *self)
{
  g_return_val_if_fail (COWSCOPE_IS_TIMELINE_VIEW (self), 0);
  return self->label_width;
}

void
cowscope_timeline_view_set_label_width (CowscopeTimelineView *self, int width)
{
  g_return_if_fail (COWSCOPE_IS_TIMELINE_VIEW (self));
  width = CLAMP (width, MIN_LABEL_WIDTH, MAX_LABEL_WIDTH);
  if (self->label_width == width)
    return;
  self->label_width = width;
  cowscope_time_ruler_set_inset (COWSCOPE_TIME_RULER (self->ruler), width);
  drop_caches (self, TRUE);
  gtk_widget_queue_draw (GTK_WIDGET (self));
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_LABEL_WIDTH]);
}

void
cowscope_timeline_view_bind_settings (CowscopeTimelineView *self, GSettings *settings)
{
  g_return_if_fail (COWSCOPE_IS_TIMELINE_VIEW (self));
  g_return_if_fail (G_IS_SETTINGS (settings));
  g_settings_bind (settings, "timeline-show-counters", self, "show-counters",
                   G_SETTINGS_BIND_GET);
  g_settings_bind (settings, "timeline-lane-height", self, "lane-height", G_SETTINGS_BIND_GET);
  g_settings_bind (settings, "timeline-label-width", self, "label-width", G_SETTINGS_BIND_DEFAULT);
}

const char *
cowscope_timeline_view_get_query_error (CowscopeTimelineView *self)
{
  g_return_val_if_fail (COWSCOPE_IS_TIMELINE_VIEW (self), NULL);
  return self->query_error_source == 0 ? self->query_error : NULL;
}

guint
cowscope_timeline_view_get_n_lanes (CowscopeTimelineView *self)
{
  g_return_val_if_fail (COWSCOPE_IS_TIMELINE_VIEW (self), 0);
  return self->lanes ? self->lanes->len : 0;
}

guint
cowscope_timeline_view_get_n_pinned (CowscopeTimelineView *self)
{
  g_return_val_if_fail (COWSCOPE_IS_TIMELINE_VIEW (self), 0);
  return self->n_pinned;
}

CowscopeTimelineLane *
cowscope_timeline_view_get_lane (CowscopeTimelineView *self, guint i)
{
  g_return_val_if_fail (COWSCOPE_IS_TIMELINE_VIEW (self), NULL);
  if (self->lanes == NULL || i >= self->lanes->len)
    return NULL;
  return ((Lane *) self->lanes->pdata[i])->lane;
}

void
cowscope_timeline_view_get_lane_area (CowscopeTimelineView *self, guint i, int *y, int *height)
{
  g_return_if_fail (COWSCOPE_IS_TIMELINE_VIEW (self));
  int ly = 0, lh = 0;
  if (self->lanes != NULL && i < self->lanes->len)
    {
      Lane *lane = self->lanes->pdata[i];
      ly = cowscope_timeline_view_lane_top (self, lane);
      lh = lane->geometry.height;
    }
  if (y != NULL)
    *y = ly;
  if (height != NULL)
    *height = lh;
}

gboolean
cowscope_timeline_view_get_lane_label (CowscopeTimelineView *self, guint i, char **name,
                                       char **detail, guint *ellipsized)
{
  g_return_val_if_fail (COWSCOPE_IS_TIMELINE_VIEW (self), FALSE);
  if (self->lanes == NULL || i >= self->lanes->len)
    return FALSE;
  Lane *lane = self->lanes->pdata[i];
  CowscopeLaneLabel label;
  char *n = NULL, *d = NULL;
  cowscope_timeline_view_label_texts (self, lane, &label, &n, &d);
  if (name != NULL)
    *name = n;
  else
    g_free (n);
  if (detail != NULL)
    *detail = d;
  else
    g_free (d);
  if (ellipsized != NULL)
    *ellipsized = lane->ellipsized;
  return lane->title_node != NULL;
}

CowscopeRangeNames *
cowscope_timeline_view_get_range_names (CowscopeTimelineView *self)
{
  g_return_val_if_fail (COWSCOPE_IS_TIMELINE_VIEW (self), NULL);
  return self->range_names;
}

GArray *
cowscope_timeline_view_get_flows (CowscopeTimelineView *self)
{
  g_return_val_if_fail (COWSCOPE_IS_TIMELINE_VIEW (self), NULL);
  return self->flows;
}

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

void
cowscope_timeline_view_get_kind_color (CowscopeTimelineView *self, CowscopeItemKind kind,
                                       GdkRGBA *color)
{
  g_return_if_fail (COWSCOPE_IS_TIMELINE_VIEW (self));
  g_return_if_fail (kind < COWSCOPE_N_ITEM_KINDS);
  refresh_palette (self);
  *color = self->palette.kinds[kind];
}

gboolean
cowscope_timeline_view_get_n_highlighted (CowscopeTimelineView *self, guint *n_events)
{
  g_return_val_if_fail (COWSCOPE_IS_TIMELINE_VIEW (self), FALSE);
  if (self->highlighted == NULL)
    return FALSE;
  *n_events = self->highlighted->len;
  return TRUE;
}

guint
cowscope_timeline_view_get_frame_count (CowscopeTimelineView *self)
{
  g_return_val_if_fail (COWSCOPE_IS_TIMELINE_VIEW (self), 0);
  return self->frame_count;
}

/* Sets the visible window to [@t0, @t1) (the view state clamps it). */
void
cowscope_timeline_view_set_window (CowscopeTimelineView *self, gint64 t0, gint64 t1)
{
  if (self->state != NULL)
    cowscope_view_state_set_visible (self->state, t0, t1);
}

/* Whether the lanes drawn are exact (not the first frame's estimates). */
gboolean
cowscope_timeline_view_is_exact (CowscopeTimelineView *self)
{
  g_return_val_if_fail (COWSCOPE_IS_TIMELINE_VIEW (self), FALSE);
  return !self->first_frame;
}
