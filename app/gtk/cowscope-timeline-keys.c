/* cowscope-timeline-keys.c — the copy timeline's actions and the keys
 * bound to them (see cowscope-timeline-view.h for the list): zoom and
 * pan, the cursor, stepping through the selected objects' events, and
 * the lane menu's choices. */
#include "cowscope-config.h"

#include <math.h>
#include <string.h>

#include "cowscope-timeline-view-private.h"

#define ZOOM_STEP 1.5
#define PAN_STEP 0.15
#define CURSOR_FAR_STEP 0.1   /* of the window, with Shift */
#define REVEAL_MARGIN 0.1     /* of the window, kept around what a step shows */

/* ---- the window ------------------------------------------------------------------- */

void
cowscope_timeline_view_zoom (CowscopeTimelineView *self, double factor, double anchor_x)
{
  g_return_if_fail (COWSCOPE_IS_TIMELINE_VIEW (self));
  gint64 t0, t1;
  if (!cowscope_timeline_view_visible (self, &t0, &t1) || factor <= 0)
    return;
  double frac = CLAMP ((anchor_x - self->label_width) / cowscope_timeline_view_data_width (self),
                       0.0, 1.0);
  double anchor = (double) t0 + frac * (double) (t1 - t0);
  double width = (double) (t1 - t0) / factor;
  gint64 n0 = (gint64) llround (anchor - frac * width);
  cowscope_timeline_view_set_window (self, n0, n0 + MAX ((gint64) llround (width), 1));
}

/* The x to zoom around from the keyboard: the pointer when it is over
 * the data, else the cursor when it is shown, else the centre. */
static double
key_zoom_anchor (CowscopeTimelineView *self)
{
  if (self->pointer_inside && self->pointer_x >= self->label_width)
    return self->pointer_x;
  if (self->cursor_shown && self->state != NULL)
    return cowscope_timeline_view_time_to_x (self, cowscope_view_state_get_cursor (self->state));
  return self->label_width + cowscope_timeline_view_data_width (self) / 2.0;
}

/* Pans by @fraction of the visible width (negative: to the left). */
static void
pan (CowscopeTimelineView *self, double fraction)
{
  gint64 t0, t1;
  if (!cowscope_timeline_view_visible (self, &t0, &t1))
    return;
  gint64 d = (gint64) llround (fraction * (double) (t1 - t0));
  cowscope_timeline_view_set_window (self, t0 + d, t1 + d);
}

/* Moves the window, keeping its width, so that [@a, @b] is inside it
 * with a margin (centred on it when it was not); zooms out when it is
 * wider than the window. */
static void
reveal (CowscopeTimelineView *self, gint64 a, gint64 b)
{
  gint64 t0, t1;
  if (!cowscope_timeline_view_visible (self, &t0, &t1))
    return;
  gint64 width = t1 - t0;
  gint64 margin = (gint64) (width * REVEAL_MARGIN);
  if (a >= t0 + margin && b <= t1 - margin)
    return;
  if (b - a > width - 2 * margin)
    {
      gint64 pad = MAX ((b - a) / 5, 1000);
      cowscope_timeline_view_set_window (self, a - pad, b + pad);
      return;
    }
  gint64 mid = a + (b - a) / 2;
  cowscope_timeline_view_set_window (self, mid - width / 2, mid - width / 2 + width);
}

/* ---- the cursor ------------------------------------------------------------------- */

/* Puts the cursor at @t and keeps it in view (the window follows it as
 * a text view follows its caret). */
static void
move_cursor_to (CowscopeTimelineView *self, gint64 t)
{
  cowscope_view_state_set_cursor (self->state, t);
  gint64 c = cowscope_view_state_get_cursor (self->state);
  gint64 t0, t1;
  if (!cowscope_timeline_view_visible (self, &t0, &t1) || (c >= t0 && c <= t1))
    return;
  gint64 width = t1 - t0;
  if (c < t0)
    cowscope_timeline_view_set_window (self, c, c + width);
  else
    cowscope_timeline_view_set_window (self, c - width, c);
}

/* Moves the cursor by @pixels of the data area's time (negative: left),
 * or by @fraction of the window. */
static void
move_cursor (CowscopeTimelineView *self, double pixels, double fraction)
{
  gint64 t0, t1;
  if (!cowscope_timeline_view_visible (self, &t0, &t1))
    return;
  double ns = pixels * (double) (t1 - t0) / cowscope_timeline_view_data_width (self)
              + fraction * (double) (t1 - t0);
  gint64 step = (gint64) llround (ns);
  if (step == 0)
    step = ns < 0 ? -1 : 1;
  move_cursor_to (self, cowscope_view_state_get_cursor (self->state) + step);
}

/* Centres the window on the cursor, keeping its width. */
static void
jump_to_cursor (CowscopeTimelineView *self)
{
  gint64 t0, t1;
  if (!cowscope_timeline_view_visible (self, &t0, &t1))
    return;
  gint64 c = cowscope_view_state_get_cursor (self->state), width = t1 - t0;
  cowscope_timeline_view_set_window (self, c - width / 2, c - width / 2 + width);
}

/* ---- steps ------------------------------------------------------------------------ */

gboolean
cowscope_timeline_view_step_through (CowscopeTimelineView *self, GArray *events, int direction,
                                     guint32 kinds)
{
  g_return_val_if_fail (COWSCOPE_IS_TIMELINE_VIEW (self), FALSE);
  g_return_val_if_fail (events != NULL, FALSE);
  if (self->state == NULL)
    return FALSE;
  int i = cowscope_event_steps_find (events, cowscope_view_state_get_selected_seq (self->state),
                                     cowscope_view_state_get_cursor (self->state), direction,
                                     kinds);
  if (i < 0)
    return FALSE;
  const CowscopeObjectEvent ev = g_array_index (events, CowscopeObjectEvent, i);
  self->step_seq = ev.seq;
  cowscope_view_state_set_selected_seq (self->state, ev.seq);
  cowscope_view_state_set_cursor (self->state, ev.end_ns);
  reveal (self, ev.start_ns, ev.end_ns);
  cowscope_timeline_view_scroll_lane_into_view (
    self, cowscope_timeline_view_find_lane (self, COWSCOPE_LANE_THREAD, ev.pid, ev.tid, -1));
  return TRUE;
}

/* A step key: through the highlighted objects' events, as they were
 * when the person began stepping (selecting an event highlights its own
 * objects; the steps keep to the first ones until something else is
 * selected). */
static void
step (CowscopeTimelineView *self, int direction, guint32 kinds)
{
  gint64 selected = cowscope_view_state_get_selected_seq (self->state);
  if (self->steps == NULL || selected != self->step_seq)
    {
      g_clear_pointer (&self->steps, g_array_unref);
      if (self->highlighted == NULL)
        return; /* still finding them */
      self->steps = g_array_copy (self->highlighted);
    }
  if (!cowscope_timeline_view_step_through (self, self->steps, direction, kinds))
    gtk_widget_error_bell (GTK_WIDGET (self));
}

/* ---- lanes ------------------------------------------------------------------------ */

/* Lane @i of the shown lanes, or NULL. */
static Lane *
shown_lane (CowscopeTimelineView *self, GVariant *param)
{
  int i = param != NULL ? g_variant_get_int32 (param) : -1;
  if (self->lanes == NULL || i < 0 || (guint) i >= self->lanes->len)
    return NULL;
  return self->lanes->pdata[i];
}

/* ---- the actions ------------------------------------------------------------------- */

static void
action_cb (GtkWidget *widget, const char *name, GVariant *param)
{
  CowscopeTimelineView *self = COWSCOPE_TIMELINE_VIEW (widget);
  if (self->state == NULL)
    return;
  name += strlen ("timeline.");
  if (g_str_equal (name, "zoom-in"))
    cowscope_timeline_view_zoom (self, ZOOM_STEP, key_zoom_anchor (self));
  else if (g_str_equal (name, "zoom-out"))
    cowscope_timeline_view_zoom (self, 1.0 / ZOOM_STEP, key_zoom_anchor (self));
  else if (g_str_equal (name, "zoom-reset"))
    {
      CowscopeSessionDocument *doc = cowscope_view_state_get_document (self->state);
      cowscope_timeline_view_set_window (self, cowscope_session_document_get_start_ns (doc),
                                         cowscope_session_document_get_end_ns (doc) + 1);
    }
  else if (g_str_equal (name, "pan-left"))
    pan (self, -PAN_STEP);
  else if (g_str_equal (name, "pan-right"))
    pan (self, PAN_STEP);
  else if (g_str_equal (name, "zoom-to-range"))
    {
      gint64 r0 = cowscope_view_state_get_range_start (self->state);
      gint64 r1 = cowscope_view_state_get_range_end (self->state);
      if (r0 >= 0 && r1 > r0)
        cowscope_timeline_view_set_window (self, r0, r1);
    }
  else if (g_str_equal (name, "clear-range"))
    cowscope_view_state_set_range (self->state, -1, -1);
  else if (g_str_equal (name, "cursor-left"))
    move_cursor (self, -1, 0);
  else if (g_str_equal (name, "cursor-right"))
    move_cursor (self, 1, 0);
  else if (g_str_equal (name, "cursor-left-far"))
    move_cursor (self, 0, -CURSOR_FAR_STEP);
  else if (g_str_equal (name, "cursor-right-far"))
    move_cursor (self, 0, CURSOR_FAR_STEP);
  else if (g_str_equal (name, "cursor-start"))
    move_cursor_to (self,
                    cowscope_session_document_get_start_ns (cowscope_view_state_get_document (self->state)));
  else if (g_str_equal (name, "cursor-end"))
    move_cursor_to (self,
                    cowscope_session_document_get_end_ns (cowscope_view_state_get_document (self->state)));
  else if (g_str_equal (name, "jump-to-cursor"))
    jump_to_cursor (self);
  else if (g_str_equal (name, "next-event"))
    step (self, 1, COWSCOPE_STEP_ANY);
  else if (g_str_equal (name, "previous-event"))
    step (self, -1, COWSCOPE_STEP_ANY);
  else if (g_str_equal (name, "next-copy"))
    step (self, 1, COWSCOPE_STEP_COPIES);
  else if (g_str_equal (name, "previous-copy"))
    step (self, -1, COWSCOPE_STEP_COPIES);
  else if (g_str_equal (name, "next-warning"))
    step (self, 1, COWSCOPE_STEP_WARNINGS);
  else if (g_str_equal (name, "previous-warning"))
    step (self, -1, COWSCOPE_STEP_WARNINGS);
  else if (g_str_equal (name, "show-all-lanes"))
    cowscope_lane_filter_reset (self->filter);
  else
    {
      Lane *lane = shown_lane (self, param);
      if (lane == NULL)
        return;
      guint32 pid = cowscope_timeline_lane_get_pid (lane->lane);
      if (g_str_equal (name, "pin-lane"))
        cowscope_lane_filter_set_pinned (self->filter, lane->lane, !lane->pinned);
      else if (g_str_equal (name, "hide-lane"))
        cowscope_lane_filter_set_hidden (self->filter, lane->lane, TRUE);
      else if (g_str_equal (name, "fold-process"))
        cowscope_lane_filter_set_collapsed (self->filter, pid,
                                            !cowscope_lane_filter_get_collapsed (self->filter, pid));
      else if (g_str_equal (name, "only-process"))
        cowscope_lane_filter_show_only_process (
          self->filter, cowscope_session_document_get_lanes (cowscope_view_state_get_document (self->state)),
          pid);
    }
}

void
cowscope_timeline_view_update_actions (CowscopeTimelineView *self)
{
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "timeline.jump-to-cursor",
                                 self->state != NULL && !self->cursor_shown);
}

void
cowscope_timeline_view_class_init_keys (GtkWidgetClass *widget_class)
{
  static const char *const actions[] = {
    "timeline.zoom-in", "timeline.zoom-out", "timeline.zoom-reset", "timeline.pan-left",
    "timeline.pan-right", "timeline.zoom-to-range", "timeline.clear-range",
    "timeline.cursor-left", "timeline.cursor-right", "timeline.cursor-left-far",
    "timeline.cursor-right-far", "timeline.cursor-start", "timeline.cursor-end",
    "timeline.jump-to-cursor", "timeline.next-event", "timeline.previous-event",
    "timeline.next-copy", "timeline.previous-copy", "timeline.next-warning",
    "timeline.previous-warning", "timeline.show-all-lanes",
  };
  for (guint i = 0; i < G_N_ELEMENTS (actions); i++)
    gtk_widget_class_install_action (widget_class, actions[i], NULL, action_cb);
  static const char *const lane_actions[] = {
    "timeline.pin-lane", "timeline.hide-lane", "timeline.fold-process", "timeline.only-process",
  };
  for (guint i = 0; i < G_N_ELEMENTS (lane_actions); i++)
    gtk_widget_class_install_action (widget_class, lane_actions[i], "i", action_cb);

  /* Keep in step with the shortcuts window (cowscope-help-overlay.ui). */
  static const struct {
    guint key;
    GdkModifierType mods;
    const char *action;
  } keys[] = {
    { GDK_KEY_plus, 0, "timeline.zoom-in" },
    { GDK_KEY_equal, 0, "timeline.zoom-in" },
    { GDK_KEY_KP_Add, 0, "timeline.zoom-in" },
    { GDK_KEY_w, 0, "timeline.zoom-in" },
    { GDK_KEY_minus, 0, "timeline.zoom-out" },
    { GDK_KEY_KP_Subtract, 0, "timeline.zoom-out" },
    { GDK_KEY_s, 0, "timeline.zoom-out" },
    { GDK_KEY_0, 0, "timeline.zoom-reset" },
    { GDK_KEY_KP_0, 0, "timeline.zoom-reset" },
    { GDK_KEY_a, 0, "timeline.pan-left" },
    { GDK_KEY_d, 0, "timeline.pan-right" },
    { GDK_KEY_Return, 0, "timeline.zoom-to-range" },
    { GDK_KEY_KP_Enter, 0, "timeline.zoom-to-range" },
    { GDK_KEY_Escape, 0, "timeline.clear-range" },
    { GDK_KEY_Left, 0, "timeline.cursor-left" },
    { GDK_KEY_Right, 0, "timeline.cursor-right" },
    { GDK_KEY_Left, GDK_SHIFT_MASK, "timeline.cursor-left-far" },
    { GDK_KEY_Right, GDK_SHIFT_MASK, "timeline.cursor-right-far" },
    { GDK_KEY_Home, 0, "timeline.cursor-start" },
    { GDK_KEY_End, 0, "timeline.cursor-end" },
    { GDK_KEY_c, 0, "timeline.jump-to-cursor" },
    { GDK_KEY_bracketright, 0, "timeline.next-event" },
    { GDK_KEY_bracketleft, 0, "timeline.previous-event" },
    { GDK_KEY_n, 0, "timeline.next-copy" },
    { GDK_KEY_N, GDK_SHIFT_MASK, "timeline.previous-copy" },
    { GDK_KEY_F8, 0, "timeline.next-warning" },
    { GDK_KEY_F8, GDK_SHIFT_MASK, "timeline.previous-warning" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (keys); i++)
    gtk_widget_class_add_binding_action (widget_class, keys[i].key, keys[i].mods, keys[i].action,
                                         NULL);
}
