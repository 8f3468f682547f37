/* cowscope-timeline-input.c — the copy timeline's pointer input: hit
 * testing, clicks, drags (pan, range, the label column's edge), the wheel
 * and pinch, tooltips and the lane menu (see cowscope-timeline-view.h). */
#include "cowscope-config.h"

#include <glib/gi18n.h>
#include <math.h>

#include "cowscope-timeline-view-private.h"

#include "cowscope-timeline-format.h"

#define CLICK_SLOP 3.0
#define WHEEL_LINE 40.0   /* px the lanes scroll per wheel step */
#define WHEEL_PAN 0.08    /* of the window per wheel step */
#define WHEEL_ZOOM 1.2    /* per wheel step */

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

/* The window's pixel geometry. */
static double
ns_per_px (CowscopeTimelineWindow *window, gint64 *t0, int *width)
{
  *t0 = cowscope_timeline_window_get_start (window);
  *width = (int) cowscope_timeline_window_get_width (window);
  return (double) (cowscope_timeline_window_get_end (window) - *t0) / *width;
}

/* The innermost (shortest) span other than a range under data-area x
 * @px. */
static const CowscopeTimelineItem *
hit_span (CowscopeTimelineWindow *window, double px)
{
  gint64 t0;
  int width;
  double nspp = ns_per_px (window, &t0, &width);
  guint n;
  const CowscopeTimelineItem *spans = cowscope_timeline_window_get_spans (window, &n);
  const CowscopeTimelineItem *hit = NULL;
  for (guint i = 0; i < n; i++)
    {
      const CowscopeTimelineItem *s = &spans[i];
      if (s->kind == COWSCOPE_ITEM_RANGE)
        continue;
      float sx, sw;
      cowscope_lane_span_px (s, t0, nspp, width, &sx, &sw);
      if (px >= sx - 1 && px < sx + sw + 1
          && (hit == NULL || s->end_ns - s->start_ns < hit->end_ns - hit->start_ns))
        hit = s;
    }
  return hit;
}

/* The user range drawn at data-area x @px in range row @row of a thread
 * lane (rows as the painter lays them out), or NULL. */
static const CowscopeTimelineItem *
hit_range (CowscopeTimelineView *self, Lane *lane, double px, int row)
{
  gint64 t0;
  int width;
  double nspp = ns_per_px (lane->window, &t0, &width);
  guint n;
  const CowscopeTimelineItem *spans = cowscope_timeline_window_get_spans (lane->window, &n);
  g_autoptr (GPtrArray) ranges = g_ptr_array_new ();
  for (guint i = 0; i < n; i++)
    if (spans[i].kind == COWSCOPE_ITEM_RANGE)
      g_ptr_array_add (ranges, (gpointer) &spans[i]);
  g_ptr_array_sort (ranges, cowscope_lane_compare_spans);
  guint32 pid = cowscope_timeline_lane_get_pid (lane->lane);
  const CowscopeTimelineItem *hit = NULL;
  for (guint i = 0; i < ranges->len; i++)
    {
      const CowscopeTimelineItem *s = ranges->pdata[i];
      float sx, sw;
      cowscope_lane_span_px (s, t0, nspp, width, &sx, &sw);
      if (px < sx - 1 || px >= sx + sw + 1
          || (int) cowscope_lane_range_row (&lane->geometry, self->range_names, pid,
                                            (const CowscopeTimelineItem *const *) ranges->pdata, i)
               != row)
        continue;
      if (hit == NULL || s->end_ns - s->start_ns < hit->end_ns - hit->start_ns)
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

/* What is under widget (x, y): a lane's label, a counter sample, a span (a
 * user range in a thread lane's range rows), or the nearest item. */
Hit
cowscope_timeline_view_hit_test (CowscopeTimelineView *self, double x, double y)
{
  Hit hit = { .lane = -1, .range_row = -1 };
  int li = cowscope_timeline_view_lane_at (self, y);
  if (li < 0 || !cowscope_timeline_view_validate_cache (self))
    return hit;
  hit.lane = li;
  if (x < self->label_width)
    {
      hit.in_label = TRUE;
      return hit;
    }
  Lane *lane = self->lanes->pdata[li];
  cowscope_timeline_view_ensure_lane_window (self, lane);
  double px = x - self->label_width;
  double ly = y - cowscope_timeline_view_lane_top (self, lane);
  if (lane->kind == COWSCOPE_LANE_COUNTER)
    {
      hit.sample = hit_sample (lane->window, px);
      return hit;
    }
  int row = lane->kind == COWSCOPE_LANE_THREAD
              ? cowscope_lane_geometry_range_row_at (&lane->geometry, ly) : -1;
  if (row >= 0)
    {
      hit.item = hit_range (self, lane, px, row);
      hit.is_span = hit.item != NULL;
      hit.range_row = row;
      return hit;
    }
  hit.item = hit_span (lane->window, px);
  hit.is_span = hit.item != NULL;
  if (hit.item == NULL)
    hit.item = hit_item (lane->window, px);
  return hit;
}

/* Is widget x @x on the label column's edge (where a drag resizes it)? */
static gboolean
on_label_edge (CowscopeTimelineView *self, double x)
{
  return fabs (x - self->label_width) <= LABEL_EDGE_SLOP;
}

/* ---- clicks ---------------------------------------------------------------------- */

/* A click on lane @li's label: a process lane's expander folds or
 * unfolds its threads. */
static void
click_label (CowscopeTimelineView *self, int li, double x, double y)
{
  Lane *lane = self->lanes->pdata[li];
  if (lane->kind != COWSCOPE_LANE_PROCESS || x >= COWSCOPE_LANE_LABEL_EXPANDER_X)
    return;
  guint32 pid = cowscope_timeline_lane_get_pid (lane->lane);
  cowscope_lane_filter_set_collapsed (self->filter, pid,
                                      !cowscope_lane_filter_get_collapsed (self->filter, pid));
}

/* Selects what is at (x, y) and moves the cursor: a materialization or
 * event selects its seq and puts the cursor at its end; a user range
 * selects its time range; empty space moves only the cursor. */
void
cowscope_timeline_view_click (CowscopeTimelineView *self, double x, double y)
{
  g_return_if_fail (COWSCOPE_IS_TIMELINE_VIEW (self));
  if (self->state == NULL)
    return;
  Hit hit = cowscope_timeline_view_hit_test (self, x, y);
  if (hit.in_label)
    {
      click_label (self, hit.lane, x, y);
      return;
    }
  if (x < self->label_width)
    return;
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

/* ---- drags ------------------------------------------------------------------------ */

/* Press at (@x, @y): a click, a pan, a range (on the ruler, or with
 * Shift) or, on the label column's edge, a resize; FALSE when there is
 * nothing to drag. */
static gboolean
drag_begin (CowscopeTimelineView *self, double x, double y, GdkModifierType mods)
{
  gint64 t0, t1;
  if (!cowscope_timeline_view_visible (self, &t0, &t1))
    return FALSE;
  self->drag_x = x, self->drag_y = y;
  self->drag_t0 = t0, self->drag_t1 = t1;
  if (on_label_edge (self, x))
    {
      self->drag_mode = DRAG_LABEL;
      self->drag_label_width = self->label_width;
      return TRUE;
    }
  self->drag_mode = DRAG_PENDING;
  self->drag_range_start = y < RULER_HEIGHT || (mods & GDK_SHIFT_MASK) != 0;
  return TRUE;
}

/* The pointer moved by (@dx, @dy) since the press; TRUE when that made
 * the press a drag. */
static gboolean
drag_update (CowscopeTimelineView *self, double dx, double dy)
{
  if (self->drag_mode == DRAG_NONE || self->state == NULL)
    return FALSE;
  gboolean claimed = FALSE;
  if (self->drag_mode == DRAG_PENDING)
    {
      if (fabs (dx) + fabs (dy) < CLICK_SLOP)
        return FALSE;
      self->drag_mode = self->drag_range_start ? DRAG_RANGE : DRAG_PAN;
      claimed = TRUE;
    }
  int lw = self->label_width;
  if (self->drag_mode == DRAG_LABEL)
    cowscope_timeline_view_set_label_width (
      self, MIN (self->drag_label_width + (int) lround (dx),
                 gtk_widget_get_width (GTK_WIDGET (self)) - MIN_DATA_WIDTH));
  else if (self->drag_mode == DRAG_PAN)
    {
      gint64 d = (gint64) llround (-dx * (double) (self->drag_t1 - self->drag_t0)
                                   / cowscope_timeline_view_data_width (self));
      cowscope_timeline_view_set_window (self, self->drag_t0 + d, self->drag_t1 + d);
    }
  else
    {
      gint64 a = cowscope_timeline_view_x_to_time (self, MAX (self->drag_x, lw));
      gint64 b = cowscope_timeline_view_x_to_time (self, MAX (self->drag_x + dx, lw));
      cowscope_view_state_set_range (self->state, MIN (a, b), MAX (a, b));
    }
  return claimed;
}

/* Release: a press that did not move is a click. */
static void
drag_end (CowscopeTimelineView *self)
{
  int mode = self->drag_mode;
  self->drag_mode = DRAG_NONE;
  if (mode == DRAG_PENDING && self->state != NULL)
    {
      if (self->drag_y < RULER_HEIGHT)
        cowscope_view_state_set_cursor (self->state,
                                        cowscope_timeline_view_x_to_time (self, self->drag_x));
      else
        cowscope_timeline_view_click (self, self->drag_x, self->drag_y);
    }
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
cowscope_timeline_view_drag (CowscopeTimelineView *self, double x, double y, double dx,
                             double dy, GdkModifierType modifiers)
{
  g_return_if_fail (COWSCOPE_IS_TIMELINE_VIEW (self));
  if (!drag_begin (self, x, y, modifiers))
    return;
  drag_update (self, dx, dy);
  drag_end (self);
}

static void
drag_begin_cb (GtkGestureDrag *gesture, double x, double y, CowscopeTimelineView *self)
{
  GdkModifierType mods =
    gtk_event_controller_get_current_event_state (GTK_EVENT_CONTROLLER (gesture));
  if (!drag_begin (self, x, y, mods))
    {
      gtk_gesture_set_state (GTK_GESTURE (gesture), GTK_EVENT_SEQUENCE_DENIED);
      return;
    }
  gtk_widget_grab_focus (GTK_WIDGET (self));
  if (self->drag_mode == DRAG_LABEL)
    gtk_gesture_set_state (GTK_GESTURE (gesture), GTK_EVENT_SEQUENCE_CLAIMED);
}

static void
drag_update_cb (GtkGestureDrag *gesture, double dx, double dy, CowscopeTimelineView *self)
{
  if (drag_update (self, dx, dy))
    gtk_gesture_set_state (GTK_GESTURE (gesture), GTK_EVENT_SEQUENCE_CLAIMED);
}

static void
drag_end_cb (GtkGestureDrag *gesture, double dx, double dy, CowscopeTimelineView *self)
{
  drag_end (self);
}

/* ---- the wheel and pinch ------------------------------------------------------------ */

/* The x to zoom around: the pointer when it is over the data, else the
 * centre of the data area. */
static double
zoom_anchor (CowscopeTimelineView *self)
{
  if (self->pointer_inside && self->pointer_x >= self->label_width)
    return self->pointer_x;
  return self->label_width + cowscope_timeline_view_data_width (self) / 2.0;
}

void
cowscope_timeline_view_scroll (CowscopeTimelineView *self, double dx, double dy,
                               GdkModifierType modifiers)
{
  g_return_if_fail (COWSCOPE_IS_TIMELINE_VIEW (self));
  gint64 t0, t1;
  if (!cowscope_timeline_view_visible (self, &t0, &t1))
    return;
  if (modifiers & GDK_CONTROL_MASK)
    {
      cowscope_timeline_view_zoom (self, pow (WHEEL_ZOOM, -dy), zoom_anchor (self));
      return;
    }
  /* Shift turns the vertical wheel into a horizontal one. */
  double pan = (modifiers & GDK_SHIFT_MASK) ? dx + dy : dx;
  double lines = (modifiers & GDK_SHIFT_MASK) ? 0 : dy;
  if (pan != 0)
    {
      gint64 d = (gint64) llround (pan * WHEEL_PAN * (double) (t1 - t0));
      cowscope_timeline_view_set_window (self, t0 + d, t1 + d);
    }
  if (lines != 0 && self->vadjustment != NULL)
    gtk_adjustment_set_value (self->vadjustment,
                              gtk_adjustment_get_value (self->vadjustment) + lines * WHEEL_LINE);
}

static gboolean
scroll_cb (GtkEventControllerScroll *controller, double dx, double dy,
           CowscopeTimelineView *self)
{
  if (self->state == NULL)
    return FALSE;
  cowscope_timeline_view_scroll (
    self, dx, dy, gtk_event_controller_get_current_event_state (GTK_EVENT_CONTROLLER (controller)));
  return TRUE;
}

static void
pinch_begin_cb (GtkGesture *gesture, GdkEventSequence *sequence, CowscopeTimelineView *self)
{
  double x, y;
  if (!cowscope_timeline_view_visible (self, &self->pinch_t0, &self->pinch_t1)
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
  double frac = CLAMP ((self->pinch_x - self->label_width) / cowscope_timeline_view_data_width (self),
                       0.0, 1.0);
  double width = (double) (self->pinch_t1 - self->pinch_t0);
  double anchor = (double) self->pinch_t0 + frac * width;
  double nw = width / scale;
  gint64 n0 = (gint64) llround (anchor - frac * nw);
  cowscope_timeline_view_set_window (self, n0, n0 + MAX ((gint64) llround (nw), 1));
}

/* ---- pointer ---------------------------------------------------------------------- */

static void
motion_cb (GtkEventControllerMotion *controller, double x, double y,
           CowscopeTimelineView *self)
{
  self->pointer_inside = TRUE;
  self->pointer_x = x, self->pointer_y = y;
  gtk_widget_set_cursor_from_name (GTK_WIDGET (self),
                                   on_label_edge (self, x) || self->drag_mode == DRAG_LABEL
                                     ? "col-resize" : NULL);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
leave_cb (GtkEventControllerMotion *controller, CowscopeTimelineView *self)
{
  self->pointer_inside = FALSE;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

char *
cowscope_timeline_view_get_tooltip_at (CowscopeTimelineView *self, double x, double y)
{
  g_return_val_if_fail (COWSCOPE_IS_TIMELINE_VIEW (self), NULL);
  if (self->state == NULL)
    return NULL;
  Hit hit = cowscope_timeline_view_hit_test (self, x, y);
  if (hit.lane < 0)
    return NULL;
  Lane *lane = self->lanes->pdata[hit.lane];
  CowscopeSessionDocument *doc = cowscope_view_state_get_document (self->state);
  if (hit.in_label)
    return cowscope_timeline_format_lane_tooltip (lane->lane, doc);
  gint64 origin = cowscope_session_document_get_start_ns (doc);
  if (hit.sample != NULL)
    return cowscope_timeline_format_sample_tooltip (lane->lane, hit.sample, origin);
  if (hit.item == NULL)
    return NULL;
  const char *range_name = NULL;
  if (hit.item->kind == COWSCOPE_ITEM_RANGE && hit.is_span && self->range_names != NULL)
    range_name = cowscope_range_names_lookup (self->range_names,
                                              cowscope_timeline_lane_get_pid (lane->lane),
                                              hit.item->id);
  return cowscope_timeline_format_item_tooltip (lane->lane, hit.item, origin, range_name);
}

static gboolean
query_tooltip_cb (GtkWidget *widget, int x, int y, gboolean keyboard, GtkTooltip *tooltip,
                  gpointer user_data)
{
  if (keyboard)
    return FALSE;
  g_autofree char *text = cowscope_timeline_view_get_tooltip_at (COWSCOPE_TIMELINE_VIEW (widget),
                                                                 x, y);
  if (text == NULL)
    return FALSE;
  gtk_tooltip_set_text (tooltip, text);
  return TRUE;
}

/* ---- the lane menu ------------------------------------------------------------------ */

void
cowscope_timeline_view_popup_lane_menu (CowscopeTimelineView *self, int li, double x, double y)
{
  if (self->lanes == NULL || li < 0 || (guint) li >= self->lanes->len)
    return;
  Lane *lane = self->lanes->pdata[li];
  g_autoptr (GMenu) menu = g_menu_new ();
  g_autoptr (GMenu) lane_section = g_menu_new ();
  g_autoptr (GMenuItem) pin = g_menu_item_new (lane->pinned ? _("_Unpin Lane")
                                                            : _("_Pin Lane to the Top"), NULL);
  g_menu_item_set_action_and_target (pin, "timeline.pin-lane", "i", li);
  g_menu_append_item (lane_section, pin);
  g_autoptr (GMenuItem) hide = g_menu_item_new (_("_Hide Lane"), NULL);
  g_menu_item_set_action_and_target (hide, "timeline.hide-lane", "i", li);
  g_menu_append_item (lane_section, hide);
  g_menu_append_section (menu, NULL, G_MENU_MODEL (lane_section));

  g_autoptr (GMenu) process_section = g_menu_new ();
  if (lane->kind != COWSCOPE_LANE_COUNTER)
    {
      guint32 pid = cowscope_timeline_lane_get_pid (lane->lane);
      if (cowscope_timeline_view_find_lane (self, COWSCOPE_LANE_PROCESS, pid, 0, -1) >= 0)
        {
          g_autoptr (GMenuItem) fold = g_menu_item_new (
            cowscope_lane_filter_get_collapsed (self->filter, pid) ? _("_Expand Process")
                                                                   : _("_Collapse Process"),
            NULL);
          g_menu_item_set_action_and_target (fold, "timeline.fold-process", "i", li);
          g_menu_append_item (process_section, fold);
        }
      g_autoptr (GMenuItem) only = g_menu_item_new (_("Show _Only This Process"), NULL);
      g_menu_item_set_action_and_target (only, "timeline.only-process", "i", li);
      g_menu_append_item (process_section, only);
    }
  g_menu_append (process_section, _("Show _All Lanes"), "timeline.show-all-lanes");
  g_menu_append_section (menu, NULL, G_MENU_MODEL (process_section));

  if (self->lane_menu == NULL)
    {
      self->lane_menu = gtk_popover_menu_new_from_model (NULL);
      gtk_popover_set_has_arrow (GTK_POPOVER (self->lane_menu), FALSE);
      gtk_widget_set_halign (self->lane_menu, GTK_ALIGN_START);
      gtk_widget_set_parent (self->lane_menu, GTK_WIDGET (self));
    }
  gtk_popover_menu_set_menu_model (GTK_POPOVER_MENU (self->lane_menu), G_MENU_MODEL (menu));
  gtk_popover_set_pointing_to (GTK_POPOVER (self->lane_menu),
                               &(GdkRectangle) { (int) x, (int) y, 1, 1 });
  gtk_popover_popup (GTK_POPOVER (self->lane_menu));
}

/* Secondary click: the lane menu, over a label or a lane. */
static void
context_pressed_cb (GtkGestureClick *gesture, int n_press, double x, double y,
                    CowscopeTimelineView *self)
{
  int li = cowscope_timeline_view_lane_at (self, y);
  if (li < 0)
    return;
  gtk_gesture_set_state (GTK_GESTURE (gesture), GTK_EVENT_SEQUENCE_CLAIMED);
  cowscope_timeline_view_popup_lane_menu (self, li, x, y);
}

/* ---- set up --------------------------------------------------------------------- */

void
cowscope_timeline_view_init_input (CowscopeTimelineView *self)
{
  GtkWidget *widget = GTK_WIDGET (self);
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

  GtkGesture *context = gtk_gesture_click_new ();
  gtk_gesture_single_set_button (GTK_GESTURE_SINGLE (context), GDK_BUTTON_SECONDARY);
  g_signal_connect (context, "pressed", G_CALLBACK (context_pressed_cb), self);
  gtk_widget_add_controller (widget, GTK_EVENT_CONTROLLER (context));

  GtkGesture *pinch = gtk_gesture_zoom_new ();
  g_signal_connect (pinch, "begin", G_CALLBACK (pinch_begin_cb), self);
  g_signal_connect (pinch, "scale-changed", G_CALLBACK (pinch_scale_cb), self);
  gtk_widget_add_controller (widget, GTK_EVENT_CONTROLLER (pinch));
}
