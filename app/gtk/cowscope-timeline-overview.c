/* cowscope-timeline-overview.c — see cowscope-timeline-overview.h. */
#include "cowscope-config.h"

#include <glib/gi18n.h>
#include <math.h>

#include "cowscope-timeline-overview.h"

#include "cowscope-paint.h"
#include "cowscope-time-ruler.h"
#include "cowscope-timeline-palette.h"

#define OVERVIEW_HEIGHT 28
/* The activity is counted in this many bins whatever the strip's width
 * (drawn stretched to it): a resize or a label column dragged wider does
 * not count it again. */
#define ACTIVITY_BINS 2048

/* How busy each pixel of the strip is: counted in a worker thread. */
typedef struct {
  int width;
  guint64 *counts;     /* events starting in each pixel */
  gboolean *copies;    /* a copy among them */
} Activity;

static void
activity_free (gpointer data)
{
  Activity *a = data;
  g_free (a->counts);
  g_free (a->copies);
  g_free (a);
}

struct _CowscopeTimelineOverview {
  GtkWidget parent_instance;
  CowscopeTimelineView *timeline;
  CowscopeViewState *state;
  PangoLayout *layout;
  CowscopeTimelinePalette palette;
  gboolean palette_stale;

  /* The activity of activity_doc and its node (drawn with the palette);
   * a count under way for counting_doc. */
  CowscopeSessionDocument *activity_doc;
  Activity *activity;
  GskRenderNode *activity_node;
  GCancellable *counting;
  CowscopeSessionDocument *counting_doc;
  guint count_source;

  gboolean dragging;
  double drag_x;
  gint64 drag_t0, drag_t1;
};

enum { PROP_0, PROP_TIMELINE, N_PROPS };
static GParamSpec *properties[N_PROPS];

G_DEFINE_FINAL_TYPE (CowscopeTimelineOverview, cowscope_timeline_overview, GTK_TYPE_WIDGET)

/* Where the time axis starts: under the timeline's label column. */
static int
inset (CowscopeTimelineOverview *self)
{
  return self->timeline != NULL ? cowscope_timeline_view_get_label_width (self->timeline) : 0;
}

static int
axis_width (CowscopeTimelineOverview *self)
{
  return MAX (gtk_widget_get_width (GTK_WIDGET (self)) - inset (self), 1);
}

/* The session's bounds [s0, s1); FALSE without a session. */
static gboolean
session_bounds (CowscopeTimelineOverview *self, gint64 *s0, gint64 *s1)
{
  if (self->state == NULL)
    return FALSE;
  CowscopeSessionDocument *doc = cowscope_view_state_get_document (self->state);
  *s0 = cowscope_session_document_get_start_ns (doc);
  *s1 = cowscope_session_document_get_end_ns (doc) + 1;
  return TRUE;
}

double
cowscope_timeline_overview_time_to_x (CowscopeTimelineOverview *self, gint64 t)
{
  g_return_val_if_fail (COWSCOPE_IS_TIMELINE_OVERVIEW (self), 0);
  gint64 s0, s1;
  if (!session_bounds (self, &s0, &s1))
    return inset (self);
  return cowscope_time_axis_to_x (t, s0, s1, inset (self), axis_width (self));
}

/* Counts the activity of every thread and CUDA lane of the task's
 * document over the whole session in ACTIVITY_BINS bins (a worker thread:
 * the lanes' queries are thread-safe, and on a session of millions of
 * events this is a few hundred milliseconds). */
static void
count_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  CowscopeSessionDocument *doc = source;
  int width = ACTIVITY_BINS;
  gint64 s0 = cowscope_session_document_get_start_ns (doc);
  gint64 s1 = cowscope_session_document_get_end_ns (doc) + 1;
  Activity *a = g_new0 (Activity, 1);
  a->width = width;
  a->counts = g_new0 (guint64, width);
  a->copies = g_new0 (gboolean, width);
  const guint32 copy_kinds = (1u << COWSCOPE_ITEM_COPY) | (1u << COWSCOPE_ITEM_EAGER_COPY);
  GListModel *lanes = cowscope_session_document_get_lanes (doc);
  for (guint i = 0; i < g_list_model_get_n_items (lanes); i++)
    {
      if (g_task_return_error_if_cancelled (task))
        {
          activity_free (a);
          return;
        }
      g_autoptr (CowscopeTimelineLane) lane = g_list_model_get_item (lanes, i);
      CowscopeLaneKind kind = cowscope_timeline_lane_get_kind (lane);
      if (kind != COWSCOPE_LANE_THREAD && kind != COWSCOPE_LANE_CUDA_STREAM)
        continue;
      g_autoptr (CowscopeTimelineWindow) win =
        cowscope_timeline_lane_query (lane, s0, s1, (guint) width);
      guint n;
      const CowscopeTimelineItem *items = cowscope_timeline_window_get_items (win, &n);
      for (guint k = 0; k < n; k++)
        if (items[k].pixel < width)
          {
            a->counts[items[k].pixel] += items[k].count;
            a->copies[items[k].pixel] |= (items[k].kinds & copy_kinds) != 0;
          }
    }
  g_task_return_pointer (task, a, activity_free);
}

/* The activity as a node @height tall, a bin a unit wide: per bin a bar
 * of its events on a log scale, and a mark in the copy colour on top
 * where a copy is. */
static GskRenderNode *
paint_activity (CowscopeTimelineOverview *self, const Activity *a, int height)
{
  guint64 max = 1;
  for (int x = 0; x < a->width; x++)
    max = MAX (max, a->counts[x]);
  double scale = (height - 6) / log1p ((double) max);
  GtkSnapshot *snapshot = gtk_snapshot_new ();
  GdkRGBA bar = cowscope_timeline_palette_fg (&self->palette, 0.3f);
  CowscopePaintRun run = { .snapshot = snapshot };
  for (int x = 0; x < a->width; x++)
    if (a->counts[x] > 0)
      {
        float h = (float) MAX (1, round (log1p ((double) a->counts[x]) * scale));
        cowscope_paint_run_add (&run, &bar, x, x + 1, height - 2 - h, h);
      }
  for (int x = 0; x < a->width; x++)
    if (a->copies[x])
      cowscope_paint_run_add (&run, &self->palette.kinds[COWSCOPE_ITEM_COPY], x, x + 1, 2, 4);
  cowscope_paint_run_flush (&run);
  GskRenderNode *node = gtk_snapshot_free_to_node (snapshot);
  return node != NULL ? node : gsk_container_node_new (NULL, 0);
}

static void
counted_cb (GObject *source, GAsyncResult *result, gpointer data)
{
  g_autoptr (GError) error = NULL;
  Activity *a = g_task_propagate_pointer (G_TASK (result), &error);
  if (a == NULL)
    return; /* cancelled: another session or width */
  CowscopeTimelineOverview *self = data;
  g_clear_object (&self->counting);
  g_set_object (&self->activity_doc, self->counting_doc);
  g_clear_object (&self->counting_doc);
  g_clear_pointer (&self->activity, activity_free);
  g_clear_pointer (&self->activity_node, gsk_render_node_unref);
  self->activity = a;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

/* Starts the count decided on in ensure_activity(), once the frame that
 * asked for it is drawn. */
static gboolean
start_count (gpointer data)
{
  CowscopeTimelineOverview *self = data;
  self->count_source = 0;
  if (self->counting == NULL || g_cancellable_is_cancelled (self->counting))
    return G_SOURCE_REMOVE;
  g_autoptr (GTask) task = g_task_new (self->counting_doc, self->counting, counted_cb, self);
  g_task_set_source_tag (task, start_count);
  g_task_run_in_thread (task, count_thread);
  return G_SOURCE_REMOVE;
}

/* Makes sure the activity of @doc is there or being counted.  The count
 * starts at idle priority, after the frame: a session that has just
 * opened shows its timeline first (the count takes the same lanes'
 * chunks and a core for a moment). */
static void
ensure_activity (CowscopeTimelineOverview *self, CowscopeSessionDocument *doc)
{
  if (self->activity != NULL && self->activity_doc == doc)
    return;
  if (self->counting != NULL && self->counting_doc == doc)
    return;
  g_cancellable_cancel (self->counting);
  g_clear_object (&self->counting);
  self->counting = g_cancellable_new ();
  g_set_object (&self->counting_doc, doc);
  if (self->count_source == 0)
    self->count_source = g_idle_add_full (G_PRIORITY_DEFAULT_IDLE, start_count, self, NULL);
}

static void
cowscope_timeline_overview_snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
  CowscopeTimelineOverview *self = COWSCOPE_TIMELINE_OVERVIEW (widget);
  int w = gtk_widget_get_width (widget), h = gtk_widget_get_height (widget);
  int x0 = inset (self), aw = axis_width (self);
  gint64 s0, s1;
  if (self->palette_stale)
    {
      CowscopeTimelinePalette palette;
      cowscope_timeline_palette_lookup (&palette, widget);
      if (!cowscope_timeline_palette_equal (&palette, &self->palette))
        g_clear_pointer (&self->activity_node, gsk_render_node_unref);
      self->palette = palette;
      self->palette_stale = FALSE;
    }
  const CowscopeTimelinePalette *palette = &self->palette;
  GdkRGBA line = cowscope_timeline_palette_fg (palette, 0.15f);
  cowscope_paint_rect (snapshot, &palette->ruler, 0, 0, w, h);
  cowscope_paint_rect (snapshot, &line, 0, h - 1, w, 1);
  if (!session_bounds (self, &s0, &s1) || w <= x0)
    return;

  CowscopeSessionDocument *doc = cowscope_view_state_get_document (self->state);
  ensure_activity (self, doc);
  GdkRGBA text = cowscope_timeline_palette_fg (palette, 0.55f);
  gtk_snapshot_save (snapshot);
  gtk_snapshot_translate (snapshot, &GRAPHENE_POINT_INIT (10, (h - 16) / 2.0f));
  gtk_snapshot_push_clip (snapshot, &GRAPHENE_RECT_INIT (0, 0, MAX (x0 - 16, 0), h));
  gtk_snapshot_append_layout (snapshot, self->layout, &text);
  gtk_snapshot_pop (snapshot);
  gtk_snapshot_restore (snapshot);
  if (self->activity != NULL && self->activity_doc == doc)
    {
      if (self->activity_node == NULL)
        self->activity_node = paint_activity (self, self->activity, h);
      gtk_snapshot_save (snapshot);
      gtk_snapshot_translate (snapshot, &GRAPHENE_POINT_INIT (x0, 0));
      gtk_snapshot_scale (snapshot, (float) aw / self->activity->width, 1);
      gtk_snapshot_append_node (snapshot, self->activity_node);
      gtk_snapshot_restore (snapshot);
    }

  /* The visible window: what is outside it dimmed, a box around it. */
  gint64 t0 = cowscope_view_state_get_visible_start (self->state);
  gint64 t1 = cowscope_view_state_get_visible_end (self->state);
  float a = (float) floor (cowscope_timeline_overview_time_to_x (self, t0));
  float b = (float) MAX (ceil (cowscope_timeline_overview_time_to_x (self, t1)), a + 2);
  a = MAX (a, x0), b = MIN (b, w);
  GdkRGBA dim = cowscope_timeline_palette_fg (palette, 0.08f);
  GdkRGBA fill = cowscope_rgba_with_alpha (&palette->accent, 0.12f);
  cowscope_paint_rect (snapshot, &dim, x0, 0, MAX (a - x0, 0), h - 1);
  cowscope_paint_rect (snapshot, &dim, b, 0, MAX (w - b, 0), h - 1);
  cowscope_paint_rect (snapshot, &fill, a, 0, b - a, h - 1);
  cowscope_paint_outline (snapshot, &palette->accent, a, 0, b - a, h - 1, 1);

  gint64 cursor = cowscope_view_state_get_cursor (self->state);
  float cx = (float) floor (cowscope_timeline_overview_time_to_x (self, cursor));
  cowscope_paint_rect (snapshot, &palette->accent, cx - 1, 0, 2, h - 1);
}

/* ---- input ------------------------------------------------------------------- */

/* Moves the window so that it starts at @t0 and is @width long. */
static void
set_window (CowscopeTimelineOverview *self, gint64 t0, gint64 width)
{
  cowscope_view_state_set_visible (self->state, t0, t0 + width);
}

/* Press at @x: inside the window's box, grab it; elsewhere, centre the
 * window there first. */
static gboolean
press (CowscopeTimelineOverview *self, double x)
{
  gint64 s0, s1;
  if (!session_bounds (self, &s0, &s1) || x < inset (self))
    return FALSE;
  gint64 t0 = cowscope_view_state_get_visible_start (self->state);
  gint64 t1 = cowscope_view_state_get_visible_end (self->state);
  double a = cowscope_timeline_overview_time_to_x (self, t0);
  double b = cowscope_timeline_overview_time_to_x (self, t1);
  if (x < a - 2 || x > b + 2)
    {
      gint64 t = cowscope_time_axis_to_time (x, s0, s1, inset (self), axis_width (self));
      set_window (self, t - (t1 - t0) / 2, t1 - t0);
    }
  self->dragging = TRUE;
  self->drag_x = x;
  self->drag_t0 = cowscope_view_state_get_visible_start (self->state);
  self->drag_t1 = cowscope_view_state_get_visible_end (self->state);
  return TRUE;
}

static void
move (CowscopeTimelineOverview *self, double dx)
{
  gint64 s0, s1;
  if (!self->dragging || !session_bounds (self, &s0, &s1))
    return;
  gint64 d = (gint64) llround (dx * (double) (s1 - s0) / axis_width (self));
  set_window (self, self->drag_t0 + d, self->drag_t1 - self->drag_t0);
}

void
cowscope_timeline_overview_drag (CowscopeTimelineOverview *self, double x, double dx)
{
  g_return_if_fail (COWSCOPE_IS_TIMELINE_OVERVIEW (self));
  if (!press (self, x))
    return;
  move (self, dx);
  self->dragging = FALSE;
}

static void
drag_begin_cb (GtkGestureDrag *gesture, double x, double y, CowscopeTimelineOverview *self)
{
  if (!press (self, x))
    gtk_gesture_set_state (GTK_GESTURE (gesture), GTK_EVENT_SEQUENCE_DENIED);
  else
    gtk_gesture_set_state (GTK_GESTURE (gesture), GTK_EVENT_SEQUENCE_CLAIMED);
}

static void
drag_update_cb (GtkGestureDrag *gesture, double dx, double dy, CowscopeTimelineOverview *self)
{
  move (self, dx);
}

static void
drag_end_cb (GtkGestureDrag *gesture, double dx, double dy, CowscopeTimelineOverview *self)
{
  self->dragging = FALSE;
}

/* ---- following the timeline --------------------------------------------------- */

static void
state_notify_cb (CowscopeViewState *state, GParamSpec *pspec, CowscopeTimelineOverview *self)
{
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
set_state (CowscopeTimelineOverview *self, CowscopeViewState *state)
{
  if (self->state == state)
    return;
  if (self->state != NULL)
    g_signal_handlers_disconnect_by_func (self->state, state_notify_cb, self);
  g_set_object (&self->state, state);
  if (state != NULL)
    g_signal_connect (state, "notify", G_CALLBACK (state_notify_cb), self);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
timeline_notify_cb (CowscopeTimelineView *timeline, GParamSpec *pspec,
                    CowscopeTimelineOverview *self)
{
  if (g_str_equal (pspec->name, "view-state"))
    set_state (self, cowscope_timeline_view_get_view_state (timeline));
  else if (g_str_equal (pspec->name, "label-width"))
    gtk_widget_queue_draw (GTK_WIDGET (self));
}

CowscopeTimelineView *
cowscope_timeline_overview_get_timeline (CowscopeTimelineOverview *self)
{
  g_return_val_if_fail (COWSCOPE_IS_TIMELINE_OVERVIEW (self), NULL);
  return self->timeline;
}

void
cowscope_timeline_overview_set_timeline (CowscopeTimelineOverview *self,
                                         CowscopeTimelineView *timeline)
{
  g_return_if_fail (COWSCOPE_IS_TIMELINE_OVERVIEW (self));
  g_return_if_fail (timeline == NULL || COWSCOPE_IS_TIMELINE_VIEW (timeline));
  if (self->timeline == timeline)
    return;
  if (self->timeline != NULL)
    g_signal_handlers_disconnect_by_func (self->timeline, timeline_notify_cb, self);
  g_set_object (&self->timeline, timeline);
  if (timeline != NULL)
    g_signal_connect (timeline, "notify", G_CALLBACK (timeline_notify_cb), self);
  set_state (self, timeline != NULL ? cowscope_timeline_view_get_view_state (timeline) : NULL);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_TIMELINE]);
}

static void
cowscope_timeline_overview_measure (GtkWidget *widget, GtkOrientation orientation, int for_size,
                                    int *minimum, int *natural, int *min_baseline,
                                    int *nat_baseline)
{
  if (orientation == GTK_ORIENTATION_VERTICAL)
    *minimum = *natural = OVERVIEW_HEIGHT;
  else
    *minimum = *natural = 0;
}

static void
cowscope_timeline_overview_css_changed (GtkWidget *widget, GtkCssStyleChange *change)
{
  GTK_WIDGET_CLASS (cowscope_timeline_overview_parent_class)->css_changed (widget, change);
  COWSCOPE_TIMELINE_OVERVIEW (widget)->palette_stale = TRUE;
  gtk_widget_queue_draw (widget);
}

static void
cowscope_timeline_overview_dispose (GObject *object)
{
  CowscopeTimelineOverview *self = COWSCOPE_TIMELINE_OVERVIEW (object);
  cowscope_timeline_overview_set_timeline (self, NULL);
  g_clear_handle_id (&self->count_source, g_source_remove);
  g_cancellable_cancel (self->counting);
  g_clear_object (&self->counting);
  g_clear_object (&self->counting_doc);
  g_clear_pointer (&self->activity, activity_free);
  g_clear_pointer (&self->activity_node, gsk_render_node_unref);
  g_clear_object (&self->activity_doc);
  g_clear_object (&self->layout);
  G_OBJECT_CLASS (cowscope_timeline_overview_parent_class)->dispose (object);
}

static void
cowscope_timeline_overview_get_property (GObject *object, guint prop_id, GValue *value,
                                         GParamSpec *pspec)
{
  CowscopeTimelineOverview *self = COWSCOPE_TIMELINE_OVERVIEW (object);
  switch (prop_id)
    {
    case PROP_TIMELINE: g_value_set_object (value, self->timeline); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
cowscope_timeline_overview_set_property (GObject *object, guint prop_id, const GValue *value,
                                         GParamSpec *pspec)
{
  CowscopeTimelineOverview *self = COWSCOPE_TIMELINE_OVERVIEW (object);
  switch (prop_id)
    {
    case PROP_TIMELINE: cowscope_timeline_overview_set_timeline (self, g_value_get_object (value)); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
cowscope_timeline_overview_class_init (CowscopeTimelineOverviewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  object_class->dispose = cowscope_timeline_overview_dispose;
  object_class->get_property = cowscope_timeline_overview_get_property;
  object_class->set_property = cowscope_timeline_overview_set_property;
  widget_class->snapshot = cowscope_timeline_overview_snapshot;
  widget_class->measure = cowscope_timeline_overview_measure;
  widget_class->css_changed = cowscope_timeline_overview_css_changed;

  /**
   * CowscopeTimelineOverview:timeline:
   *
   * The timeline whose session, window and cursor the strip shows.
   */
  properties[PROP_TIMELINE] =
    g_param_spec_object ("timeline", NULL, NULL, COWSCOPE_TYPE_TIMELINE_VIEW,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);
  gtk_widget_class_set_css_name (widget_class, "cowscope-timeline-overview");
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_IMG);
}

static void
cowscope_timeline_overview_init (CowscopeTimelineOverview *self)
{
  GtkWidget *widget = GTK_WIDGET (self);
  gtk_widget_set_overflow (widget, GTK_OVERFLOW_HIDDEN);
  gtk_widget_set_hexpand (widget, TRUE);
  gtk_widget_set_tooltip_text (widget, _("The whole session: click or drag to move the timeline"));
  self->palette_stale = TRUE;
  self->layout = gtk_widget_create_pango_layout (widget, _("Whole session"));
  GtkGesture *drag = gtk_gesture_drag_new ();
  g_signal_connect (drag, "drag-begin", G_CALLBACK (drag_begin_cb), self);
  g_signal_connect (drag, "drag-update", G_CALLBACK (drag_update_cb), self);
  g_signal_connect (drag, "drag-end", G_CALLBACK (drag_end_cb), self);
  gtk_widget_add_controller (widget, GTK_EVENT_CONTROLLER (drag));
}

GtkWidget *
cowscope_timeline_overview_new (void)
{
  return g_object_new (COWSCOPE_TYPE_TIMELINE_OVERVIEW, NULL);
}

gboolean
cowscope_timeline_overview_get_activity_ready (CowscopeTimelineOverview *self)
{
  g_return_val_if_fail (COWSCOPE_IS_TIMELINE_OVERVIEW (self), FALSE);
  return self->activity != NULL && self->state != NULL
         && self->activity_doc == cowscope_view_state_get_document (self->state);
}
