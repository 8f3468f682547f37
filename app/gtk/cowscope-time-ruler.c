/* cowscope-time-ruler.c — see cowscope-time-ruler.h. */
#include "cowscope-time-ruler.h"

#include <math.h>

#include "cowscope-paint.h"
#include "cowscope-timeline-format.h"
#include "cowscope-timeline-palette.h"

#define MIN_TICK_SPACING 100.0  /* px */

struct _CowscopeTimeRuler {
  GtkWidget parent_instance;
  CowscopeViewState *state;
  int inset;
  PangoLayout *layout;
  CowscopeTimelinePalette palette;
  gboolean palette_stale;
};

enum {
  PROP_0,
  PROP_VIEW_STATE,
  PROP_INSET,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

G_DEFINE_FINAL_TYPE (CowscopeTimeRuler, cowscope_time_ruler, GTK_TYPE_WIDGET)

gint64
cowscope_time_axis_to_time (double x, gint64 t0, gint64 t1, double x0, double width)
{
  return t0 + (gint64) llround ((x - x0) * (double) (t1 - t0) / width);
}

/* The tick spacing for @ns_per_px: the smallest 1, 2 or 5 x 10^k ns at
 * least MIN_TICK_SPACING px apart. */
static gint64
tick_step (double ns_per_px)
{
  double min_step = ns_per_px * MIN_TICK_SPACING;
  for (gint64 p = 1; p < G_MAXINT64 / 10; p *= 10)
    {
      if ((double) p >= min_step)
        return p;
      if ((double) (2 * p) >= min_step)
        return 2 * p;
      if ((double) (5 * p) >= min_step)
        return 5 * p;
    }
  return 1;
}

/* Appends the layout's current text at (@x, @y) in @color. */
static void
append_text (CowscopeTimeRuler *self, GtkSnapshot *snapshot, const char *text, float x, float y,
             const GdkRGBA *color)
{
  pango_layout_set_text (self->layout, text, -1);
  gtk_snapshot_save (snapshot);
  gtk_snapshot_translate (snapshot, &GRAPHENE_POINT_INIT (x, y));
  gtk_snapshot_append_layout (snapshot, self->layout, color);
  gtk_snapshot_restore (snapshot);
}

/* Background, ticks and their labels, the inset's "shown", the cursor. */
static void
cowscope_time_ruler_snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
  CowscopeTimeRuler *self = COWSCOPE_TIME_RULER (widget);
  if (self->state == NULL)
    return;
  gint64 t0 = cowscope_view_state_get_visible_start (self->state);
  gint64 t1 = cowscope_view_state_get_visible_end (self->state);
  int w = gtk_widget_get_width (widget), h = gtk_widget_get_height (widget);
  if (t1 <= t0 || w <= self->inset)
    return;
  if (self->palette_stale)
    {
      cowscope_timeline_palette_lookup (&self->palette, widget);
      self->palette_stale = FALSE;
    }
  const CowscopeTimelinePalette *palette = &self->palette;
  GdkRGBA line = cowscope_timeline_palette_fg (palette, 0.15f);
  GdkRGBA tick = cowscope_timeline_palette_fg (palette, 0.35f);
  GdkRGBA text = cowscope_timeline_palette_fg (palette, 0.7f);
  cowscope_paint_rect (snapshot, &palette->ruler, 0, 0, w, h);
  cowscope_paint_rect (snapshot, &line, 0, h - 1, w, 1);

  CowscopeSessionDocument *doc = cowscope_view_state_get_document (self->state);
  gint64 origin = cowscope_session_document_get_start_ns (doc);
  double axis = MAX (w - self->inset, 1);
  gint64 step = tick_step ((double) (t1 - t0) / axis);
  gint64 rel0 = t0 - origin;
  gint64 first = rel0 >= 0 ? (rel0 + step - 1) / step * step : -((-rel0) / step * step);
  for (gint64 rel = first; origin + rel < t1; rel += step)
    {
      float x = (float) floor (cowscope_time_axis_to_x (origin + rel, t0, t1, self->inset, axis));
      cowscope_paint_rect (snapshot, &tick, x, h - 8, 1, 7);
      g_autofree char *label = cowscope_timeline_format_tick (rel, step);
      append_text (self, snapshot, label, x + 4, 4, &text);
    }

  /* The inset, over the labels that ran into it: how much is shown. */
  g_autofree char *shown = cowscope_timeline_format_shown (t0, t1);
  cowscope_paint_rect (snapshot, &palette->ruler, 0, 0, self->inset, h - 1);
  append_text (self, snapshot, shown, 10, 4, &text);

  gint64 cursor = cowscope_view_state_get_cursor (self->state);
  if (cursor >= t0 && cursor <= t1)
    {
      double x = cowscope_time_axis_to_x (cursor, t0, t1, self->inset, axis);
      cowscope_paint_rect (snapshot, &palette->accent, (float) floor (x) - 4, h - 5, 8, 5);
    }
}

static void
cowscope_time_ruler_measure (GtkWidget *widget, GtkOrientation orientation, int for_size,
                             int *minimum, int *natural, int *min_baseline, int *nat_baseline)
{
  if (orientation == GTK_ORIENTATION_VERTICAL)
    *minimum = *natural = COWSCOPE_TIME_RULER_HEIGHT;
  else
    *minimum = *natural = COWSCOPE_TIME_RULER (widget)->inset;
}

/* The theme or the dark style changed: look the colours up again. */
static void
cowscope_time_ruler_css_changed (GtkWidget *widget, GtkCssStyleChange *change)
{
  GTK_WIDGET_CLASS (cowscope_time_ruler_parent_class)->css_changed (widget, change);
  COWSCOPE_TIME_RULER (widget)->palette_stale = TRUE;
  gtk_widget_queue_draw (widget);
}

/* The window, the cursor or the document changed. */
static void
state_notify_cb (CowscopeViewState *state, GParamSpec *pspec, CowscopeTimeRuler *self)
{
  if (g_str_has_prefix (pspec->name, "visible-") || g_str_equal (pspec->name, "cursor")
      || g_str_equal (pspec->name, "document"))
    gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
cowscope_time_ruler_dispose (GObject *object)
{
  CowscopeTimeRuler *self = COWSCOPE_TIME_RULER (object);
  cowscope_time_ruler_set_view_state (self, NULL);
  g_clear_object (&self->layout);
  G_OBJECT_CLASS (cowscope_time_ruler_parent_class)->dispose (object);
}

static void
cowscope_time_ruler_get_property (GObject *object, guint prop_id, GValue *value,
                                  GParamSpec *pspec)
{
  CowscopeTimeRuler *self = COWSCOPE_TIME_RULER (object);
  switch (prop_id)
    {
    case PROP_VIEW_STATE: g_value_set_object (value, self->state); break;
    case PROP_INSET: g_value_set_int (value, self->inset); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
cowscope_time_ruler_set_property (GObject *object, guint prop_id, const GValue *value,
                                  GParamSpec *pspec)
{
  CowscopeTimeRuler *self = COWSCOPE_TIME_RULER (object);
  switch (prop_id)
    {
    case PROP_VIEW_STATE: cowscope_time_ruler_set_view_state (self, g_value_get_object (value)); break;
    case PROP_INSET: cowscope_time_ruler_set_inset (self, g_value_get_int (value)); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
cowscope_time_ruler_class_init (CowscopeTimeRulerClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  object_class->dispose = cowscope_time_ruler_dispose;
  object_class->get_property = cowscope_time_ruler_get_property;
  object_class->set_property = cowscope_time_ruler_set_property;
  widget_class->snapshot = cowscope_time_ruler_snapshot;
  widget_class->measure = cowscope_time_ruler_measure;
  widget_class->css_changed = cowscope_time_ruler_css_changed;

  /**
   * CowscopeTimeRuler:view-state:
   *
   * The view state whose visible window and cursor the ruler shows.
   */
  properties[PROP_VIEW_STATE] =
    g_param_spec_object ("view-state", NULL, NULL, COWSCOPE_TYPE_VIEW_STATE,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /**
   * CowscopeTimeRuler:inset:
   *
   * Pixels from the left edge to where the time axis starts.
   */
  properties[PROP_INSET] =
    g_param_spec_int ("inset", NULL, NULL, 0, G_MAXINT, 0,
                      G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  gtk_widget_class_set_css_name (widget_class, "cowscope-time-ruler");
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_PRESENTATION);
}

static void
cowscope_time_ruler_init (CowscopeTimeRuler *self)
{
  gtk_widget_set_overflow (GTK_WIDGET (self), GTK_OVERFLOW_HIDDEN);
  self->layout = gtk_widget_create_pango_layout (GTK_WIDGET (self), NULL);
  self->palette_stale = TRUE;
}

GtkWidget *
cowscope_time_ruler_new (void)
{
  return g_object_new (COWSCOPE_TYPE_TIME_RULER, NULL);
}

CowscopeViewState *
cowscope_time_ruler_get_view_state (CowscopeTimeRuler *self)
{
  g_return_val_if_fail (COWSCOPE_IS_TIME_RULER (self), NULL);
  return self->state;
}

void
cowscope_time_ruler_set_view_state (CowscopeTimeRuler *self, CowscopeViewState *state)
{
  g_return_if_fail (COWSCOPE_IS_TIME_RULER (self));
  g_return_if_fail (state == NULL || COWSCOPE_IS_VIEW_STATE (state));
  if (self->state == state)
    return;
  if (self->state != NULL)
    {
      g_signal_handlers_disconnect_by_func (self->state, state_notify_cb, self);
      g_clear_object (&self->state);
    }
  if (state != NULL)
    {
      self->state = g_object_ref (state);
      g_signal_connect (state, "notify", G_CALLBACK (state_notify_cb), self);
    }
  gtk_widget_queue_draw (GTK_WIDGET (self));
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_VIEW_STATE]);
}

int
cowscope_time_ruler_get_inset (CowscopeTimeRuler *self)
{
  g_return_val_if_fail (COWSCOPE_IS_TIME_RULER (self), 0);
  return self->inset;
}

void
cowscope_time_ruler_set_inset (CowscopeTimeRuler *self, int inset)
{
  g_return_if_fail (COWSCOPE_IS_TIME_RULER (self));
  inset = MAX (inset, 0);
  if (self->inset == inset)
    return;
  self->inset = inset;
  gtk_widget_queue_resize (GTK_WIDGET (self));
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_INSET]);
}
