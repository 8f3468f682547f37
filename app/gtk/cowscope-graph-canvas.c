/* cowscope-graph-canvas.c — see cowscope-graph-canvas.h. */
#include "cowscope-config.h"

#include <adwaita.h>
#include <glib/gi18n.h>
#include <math.h>

#include "cowscope-graph-canvas.h"
#include "cowscope-graph-render.h"

#define TILE 512
#define MAX_TILES 384
#define MIN_ZOOM 0.005
/* The first view of a scene fits it, but not below the zoom at which
 * labels are still drawn: a huge graph fitted whole is a grey smear. */
#define FIRST_VIEW_MIN_ZOOM 0.5
#define MAX_ZOOM 4.0

struct _CowscopeGraphCanvas {
  GtkWidget parent_instance;
  CowscopeGraphScene *scene;
  GHashTable *tiles;     /* (tx, ty) packed in a gint64 -> GskRenderNode */
  guint8 *marks;         /* one per scene node, or NULL */
  guint n_marks;
  double zoom;
  double ox, oy;         /* the scene point at the widget's top-left */
  gboolean fitted;       /* the first scene was fitted to the view */
  /* Until the user zooms or pans, the view fits each scene and each size
   * (at a zoom of at least fit_floor): the first view, or after Fit. */
  gboolean follow_fit;
  double fit_floor;
  double drag_ox, drag_oy, pinch_zoom;
  gboolean dragged;
};

G_DEFINE_FINAL_TYPE (CowscopeGraphCanvas, cowscope_graph_canvas, GTK_TYPE_WIDGET)

enum { PROP_0, PROP_SCENE, PROP_ZOOM, N_PROPS };
enum { NODE_CLICKED, N_SIGNALS };
static GParamSpec *properties[N_PROPS];
static guint signals[N_SIGNALS];

/* Whether the dark colours apply. */
static gboolean
is_dark (void)
{
  return adw_style_manager_get_dark (adw_style_manager_get_default ());
}

/* Drops every cached tile (after a scene, zoom or colour change). */
static void
invalidate_tiles (CowscopeGraphCanvas *self)
{
  g_hash_table_remove_all (self->tiles);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

/* Keeps part of the scene on screen whatever the pan. */
static void
clamp_pan (CowscopeGraphCanvas *self)
{
  if (self->scene == NULL)
    return;
  double vw = gtk_widget_get_width (GTK_WIDGET (self)) / self->zoom;
  double vh = gtk_widget_get_height (GTK_WIDGET (self)) / self->zoom;
  double sw = cowscope_graph_scene_get_width (self->scene);
  double sh = cowscope_graph_scene_get_height (self->scene);
  self->ox = CLAMP (self->ox, MIN (-vw * 0.8, sw - vw), MAX (sw - vw * 0.2, 0));
  self->oy = CLAMP (self->oy, MIN (-vh * 0.8, sh - vh), MAX (sh - vh * 0.2, 0));
}

/* Sets the zoom so widget point (@x, @y) keeps its scene point. */
static void
set_zoom_at (CowscopeGraphCanvas *self, double zoom, double x, double y)
{
  zoom = CLAMP (zoom, MIN_ZOOM, MAX_ZOOM);
  if (fabs (zoom - self->zoom) < 1e-9)
    return;
  double sx = self->ox + x / self->zoom, sy = self->oy + y / self->zoom;
  self->follow_fit = FALSE;
  self->zoom = zoom;
  self->ox = sx - x / zoom;
  self->oy = sy - y / zoom;
  clamp_pan (self);
  invalidate_tiles (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ZOOM]);
}

/* Fits the whole scene in the widget, at a zoom of at most 1 and at
 * least @min_zoom, centred where it is smaller than the widget. */
static void
fit (CowscopeGraphCanvas *self, double min_zoom)
{
  int w = gtk_widget_get_width (GTK_WIDGET (self)), h = gtk_widget_get_height (GTK_WIDGET (self));
  if (self->scene == NULL || w <= 0 || h <= 0)
    return;
  double sw = MAX (cowscope_graph_scene_get_width (self->scene), 1);
  double sh = MAX (cowscope_graph_scene_get_height (self->scene), 1);
  double zoom = CLAMP (MIN (w / sw, h / sh), MIN_ZOOM, 1.0);
  zoom = MAX (zoom, min_zoom);
  self->zoom = zoom;
  self->ox = sw * zoom < w ? -(w / zoom - sw) / 2 : 0;
  self->oy = sh * zoom < h ? -(h / zoom - sh) / 2 : 0;
  self->follow_fit = TRUE;
  self->fit_floor = min_zoom;
  invalidate_tiles (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ZOOM]);
}

/* The first scene: fitted, unless that would make labels unreadable. */
static void
show_first_view (CowscopeGraphCanvas *self)
{
  self->fitted = TRUE;
  fit (self, FIRST_VIEW_MIN_ZOOM);
}

/* Renders tile (@tx, @ty) of the scene at the current zoom. */
static GskRenderNode *
make_tile (CowscopeGraphCanvas *self, gint64 tx, gint64 ty)
{
  graphene_rect_t bounds = GRAPHENE_RECT_INIT ((float) (tx * TILE), (float) (ty * TILE), TILE, TILE);
  GtkSnapshot *snapshot = gtk_snapshot_new ();
  cairo_t *cr = gtk_snapshot_append_cairo (snapshot, &bounds);
  cairo_rectangle_t clip = { (double) tx * TILE / self->zoom, (double) ty * TILE / self->zoom,
                             TILE / self->zoom, TILE / self->zoom };
  cairo_scale (cr, self->zoom, self->zoom);
  cowscope_graph_render_scene (self->scene, cr, &clip, self->zoom, is_dark ());
  cairo_destroy (cr);
  return gtk_snapshot_free_to_node (snapshot);
}

static void
cowscope_graph_canvas_snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
  CowscopeGraphCanvas *self = COWSCOPE_GRAPH_CANVAS (widget);
  int w = gtk_widget_get_width (widget), h = gtk_widget_get_height (widget);
  gboolean dark = is_dark ();

  if (self->scene == NULL || w <= 0 || h <= 0)
    return;
  if (!self->fitted)
    show_first_view (self);

  double x0 = self->ox * self->zoom, y0 = self->oy * self->zoom;
  double sw = cowscope_graph_scene_get_width (self->scene) * self->zoom;
  double sh = cowscope_graph_scene_get_height (self->scene) * self->zoom;
  gint64 tx0 = (gint64) floor (MAX (x0, 0) / TILE), ty0 = (gint64) floor (MAX (y0, 0) / TILE);
  gint64 tx1 = (gint64) floor (MIN (x0 + w, sw) / TILE), ty1 = (gint64) floor (MIN (y0 + h, sh) / TILE);

  if (g_hash_table_size (self->tiles) > MAX_TILES)
    g_hash_table_remove_all (self->tiles);

  gtk_snapshot_push_clip (snapshot, &GRAPHENE_RECT_INIT (0, 0, (float) w, (float) h));
  gtk_snapshot_save (snapshot);
  gtk_snapshot_translate (snapshot, &GRAPHENE_POINT_INIT ((float) -x0, (float) -y0));
  for (gint64 ty = ty0; ty <= ty1; ty++)
    for (gint64 tx = tx0; tx <= tx1; tx++)
      {
        gint64 key = (tx << 32) | (ty & 0xffffffff);
        GskRenderNode *node = g_hash_table_lookup (self->tiles, &key);
        if (node == NULL)
          {
            gint64 *stored = g_new (gint64, 1);
            *stored = key;
            node = make_tile (self, tx, ty);
            g_hash_table_insert (self->tiles, stored, node);
          }
        gtk_snapshot_append_node (snapshot, node);
      }
  if (self->marks != NULL)
    {
      cairo_t *cr = gtk_snapshot_append_cairo (
        snapshot, &GRAPHENE_RECT_INIT ((float) x0, (float) y0, (float) w, (float) h));
      cairo_rectangle_t clip = { self->ox, self->oy, w / self->zoom, h / self->zoom };
      cairo_scale (cr, self->zoom, self->zoom);
      cowscope_graph_render_marks (self->scene, cr, &clip, self->marks, dark);
      cairo_destroy (cr);
    }
  gtk_snapshot_restore (snapshot);

  gtk_snapshot_pop (snapshot);
}

/* Scroll: ctrl zooms around the pointer, otherwise pans. */
static gboolean
scroll_cb (GtkEventControllerScroll *controller, double dx, double dy, CowscopeGraphCanvas *self)
{
  GdkModifierType mods = gtk_event_controller_get_current_event_state (GTK_EVENT_CONTROLLER (controller));
  GdkScrollUnit unit = gtk_event_controller_scroll_get_unit (controller);
  double step = unit == GDK_SCROLL_UNIT_WHEEL ? 48 : 1;

  if (self->scene == NULL)
    return FALSE;
  if (mods & GDK_CONTROL_MASK)
    {
      double x = -1, y = -1;
      GdkEvent *event = gtk_event_controller_get_current_event (GTK_EVENT_CONTROLLER (controller));
      if (event == NULL || !gdk_event_get_position (event, &x, &y))
        x = y = -1;
      else
        {
          graphene_point_t p;
          GtkNative *native = gtk_widget_get_native (GTK_WIDGET (self));
          double nx, ny;
          gtk_native_get_surface_transform (native, &nx, &ny);
          if (gtk_widget_compute_point (GTK_WIDGET (native), GTK_WIDGET (self),
                                        &GRAPHENE_POINT_INIT ((float) (x - nx), (float) (y - ny)), &p))
            x = p.x, y = p.y;
        }
      cowscope_graph_canvas_zoom_by (self, pow (1.1, -dy * (unit == GDK_SCROLL_UNIT_WHEEL ? 1 : 0.1)), x, y);
      return TRUE;
    }
  if (mods & GDK_SHIFT_MASK && dx == 0)
    dx = dy, dy = 0;
  self->follow_fit = FALSE;
  self->ox += dx * step / self->zoom;
  self->oy += dy * step / self->zoom;
  clamp_pan (self);
  gtk_widget_queue_draw (GTK_WIDGET (self));
  return TRUE;
}

static void
drag_begin_cb (GtkGestureDrag *gesture, double x, double y, CowscopeGraphCanvas *self)
{
  self->drag_ox = self->ox;
  self->drag_oy = self->oy;
  self->dragged = FALSE;
}

static void
drag_update_cb (GtkGestureDrag *gesture, double dx, double dy, CowscopeGraphCanvas *self)
{
  if (!self->dragged && hypot (dx, dy) < 4)
    return;
  self->dragged = TRUE;
  self->follow_fit = FALSE;
  gtk_widget_set_cursor_from_name (GTK_WIDGET (self), "grabbing");
  self->ox = self->drag_ox - dx / self->zoom;
  self->oy = self->drag_oy - dy / self->zoom;
  clamp_pan (self);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
drag_end_cb (GtkGestureDrag *gesture, double dx, double dy, CowscopeGraphCanvas *self)
{
  gtk_widget_set_cursor_from_name (GTK_WIDGET (self), NULL);
}

/* A click (not a drag) picks the node under the pointer (-1: none). */
static void
click_released_cb (GtkGestureClick *gesture, int n_press, double x, double y,
                   CowscopeGraphCanvas *self)
{
  if (self->dragged || self->scene == NULL)
    return;
  gtk_widget_grab_focus (GTK_WIDGET (self));
  double sx, sy;
  cowscope_graph_canvas_to_scene (self, x, y, &sx, &sy);
  g_signal_emit (self, signals[NODE_CLICKED], 0, cowscope_graph_scene_pick (self->scene, sx, sy),
                 n_press);
}

static void
zoom_begin_cb (GtkGesture *gesture, GdkEventSequence *sequence, CowscopeGraphCanvas *self)
{
  self->pinch_zoom = self->zoom;
}

static void
zoom_scale_cb (GtkGestureZoom *gesture, double scale, CowscopeGraphCanvas *self)
{
  double x, y;
  if (!gtk_gesture_get_bounding_box_center (GTK_GESTURE (gesture), &x, &y))
    x = y = -1;
  if (x < 0)
    x = gtk_widget_get_width (GTK_WIDGET (self)) / 2.0, y = gtk_widget_get_height (GTK_WIDGET (self)) / 2.0;
  set_zoom_at (self, self->pinch_zoom * scale, x, y);
}

/* Tooltip: the node's two lines. */
static gboolean
query_tooltip_cb (GtkWidget *widget, int x, int y, gboolean keyboard, GtkTooltip *tooltip,
                  CowscopeGraphCanvas *self)
{
  if (self->scene == NULL || keyboard)
    return FALSE;
  double sx, sy;
  cowscope_graph_canvas_to_scene (self, x, y, &sx, &sy);
  gint i = cowscope_graph_scene_pick (self->scene, sx, sy);
  if (i < 0)
    return FALSE;
  const CowscopeSceneNode *n = cowscope_graph_scene_get_node (self->scene, (guint) i);
  g_autofree char *text = g_strdup_printf ("%s\n%s", n->label, n->detail);
  gtk_tooltip_set_text (tooltip, text);
  return TRUE;
}

static void
dark_changed_cb (AdwStyleManager *manager, GParamSpec *pspec, CowscopeGraphCanvas *self)
{
  invalidate_tiles (self);
}

static void
cowscope_graph_canvas_size_allocate (GtkWidget *widget, int width, int height, int baseline)
{
  CowscopeGraphCanvas *self = COWSCOPE_GRAPH_CANVAS (widget);
  if (self->follow_fit)
    fit (self, self->fit_floor);
  else
    clamp_pan (self);
}

static void
cowscope_graph_canvas_dispose (GObject *object)
{
  CowscopeGraphCanvas *self = COWSCOPE_GRAPH_CANVAS (object);
  g_signal_handlers_disconnect_by_func (adw_style_manager_get_default (), dark_changed_cb, self);
  g_clear_object (&self->scene);
  g_clear_pointer (&self->tiles, g_hash_table_unref);
  g_clear_pointer (&self->marks, g_free);
  G_OBJECT_CLASS (cowscope_graph_canvas_parent_class)->dispose (object);
}

static void
cowscope_graph_canvas_get_property (GObject *object, guint prop_id, GValue *value,
                                    GParamSpec *pspec)
{
  CowscopeGraphCanvas *self = COWSCOPE_GRAPH_CANVAS (object);
  switch (prop_id)
    {
    case PROP_SCENE: g_value_set_object (value, self->scene); break;
    case PROP_ZOOM: g_value_set_double (value, self->zoom); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
cowscope_graph_canvas_class_init (CowscopeGraphCanvasClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = cowscope_graph_canvas_dispose;
  object_class->get_property = cowscope_graph_canvas_get_property;
  widget_class->snapshot = cowscope_graph_canvas_snapshot;
  widget_class->size_allocate = cowscope_graph_canvas_size_allocate;

  properties[PROP_SCENE] = g_param_spec_object ("scene", NULL, NULL, COWSCOPE_TYPE_GRAPH_SCENE,
                                                G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  properties[PROP_ZOOM] = g_param_spec_double ("zoom", NULL, NULL, MIN_ZOOM, MAX_ZOOM, 1.0,
                                               G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  /* A click on node index (-1: the background) with the press count. */
  signals[NODE_CLICKED] = g_signal_new ("node-clicked", G_TYPE_FROM_CLASS (klass),
                                        G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL, G_TYPE_NONE, 2,
                                        G_TYPE_INT, G_TYPE_INT);
  gtk_widget_class_set_css_name (widget_class, "cowscope-graph-canvas");
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_IMG);
}

static void
cowscope_graph_canvas_init (CowscopeGraphCanvas *self)
{
  self->zoom = 1.0;
  self->tiles = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free,
                                       (GDestroyNotify) gsk_render_node_unref);
  gtk_widget_set_focusable (GTK_WIDGET (self), TRUE);
  gtk_widget_set_hexpand (GTK_WIDGET (self), TRUE);
  gtk_widget_set_vexpand (GTK_WIDGET (self), TRUE);
  gtk_widget_set_overflow (GTK_WIDGET (self), GTK_OVERFLOW_HIDDEN);
  gtk_widget_set_has_tooltip (GTK_WIDGET (self), TRUE);
  g_signal_connect (self, "query-tooltip", G_CALLBACK (query_tooltip_cb), self);

  GtkEventController *scroll =
    gtk_event_controller_scroll_new (GTK_EVENT_CONTROLLER_SCROLL_BOTH_AXES);
  g_signal_connect (scroll, "scroll", G_CALLBACK (scroll_cb), self);
  gtk_widget_add_controller (GTK_WIDGET (self), scroll);

  GtkGesture *drag = gtk_gesture_drag_new ();
  g_signal_connect (drag, "drag-begin", G_CALLBACK (drag_begin_cb), self);
  g_signal_connect (drag, "drag-update", G_CALLBACK (drag_update_cb), self);
  g_signal_connect (drag, "drag-end", G_CALLBACK (drag_end_cb), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (drag));

  GtkGesture *click = gtk_gesture_click_new ();
  g_signal_connect (click, "released", G_CALLBACK (click_released_cb), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (click));

  GtkGesture *zoom = gtk_gesture_zoom_new ();
  g_signal_connect (zoom, "begin", G_CALLBACK (zoom_begin_cb), self);
  g_signal_connect (zoom, "scale-changed", G_CALLBACK (zoom_scale_cb), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (zoom));

  g_signal_connect (adw_style_manager_get_default (), "notify::dark",
                    G_CALLBACK (dark_changed_cb), self);
}

GtkWidget *
cowscope_graph_canvas_new (void)
{
  return g_object_new (COWSCOPE_TYPE_GRAPH_CANVAS, NULL);
}

void
cowscope_graph_canvas_set_scene (CowscopeGraphCanvas *self, CowscopeGraphScene *scene)
{
  g_return_if_fail (COWSCOPE_IS_GRAPH_CANVAS (self));
  if (!g_set_object (&self->scene, scene))
    return;
  g_clear_pointer (&self->marks, g_free);
  self->n_marks = 0;
  if (scene != NULL && gtk_widget_get_width (GTK_WIDGET (self)) > 0 && !self->fitted)
    show_first_view (self);
  else if (scene != NULL && self->follow_fit)
    fit (self, self->fit_floor);
  clamp_pan (self);
  invalidate_tiles (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SCENE]);
}

CowscopeGraphScene *
cowscope_graph_canvas_get_scene (CowscopeGraphCanvas *self)
{
  g_return_val_if_fail (COWSCOPE_IS_GRAPH_CANVAS (self), NULL);
  return self->scene;
}

void
cowscope_graph_canvas_set_marks (CowscopeGraphCanvas *self, const guint8 *marks, guint n)
{
  g_return_if_fail (COWSCOPE_IS_GRAPH_CANVAS (self));
  g_clear_pointer (&self->marks, g_free);
  self->n_marks = 0;
  if (marks != NULL && self->scene != NULL && n == cowscope_graph_scene_get_n_nodes (self->scene))
    {
      self->marks = g_memdup2 (marks, n);
      self->n_marks = n;
    }
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

double
cowscope_graph_canvas_get_zoom (CowscopeGraphCanvas *self)
{
  g_return_val_if_fail (COWSCOPE_IS_GRAPH_CANVAS (self), 1.0);
  return self->zoom;
}

void
cowscope_graph_canvas_zoom_by (CowscopeGraphCanvas *self, double factor, double x, double y)
{
  g_return_if_fail (COWSCOPE_IS_GRAPH_CANVAS (self));
  if (x < 0 || y < 0)
    {
      x = gtk_widget_get_width (GTK_WIDGET (self)) / 2.0;
      y = gtk_widget_get_height (GTK_WIDGET (self)) / 2.0;
    }
  set_zoom_at (self, self->zoom * factor, x, y);
}

void
cowscope_graph_canvas_zoom_to_fit (CowscopeGraphCanvas *self)
{
  g_return_if_fail (COWSCOPE_IS_GRAPH_CANVAS (self));
  fit (self, MIN_ZOOM);
}

void
cowscope_graph_canvas_center_on (CowscopeGraphCanvas *self, guint index, double min_zoom)
{
  g_return_if_fail (COWSCOPE_IS_GRAPH_CANVAS (self));
  if (self->scene == NULL || index >= cowscope_graph_scene_get_n_nodes (self->scene))
    return;
  const CowscopeSceneNode *n = cowscope_graph_scene_get_node (self->scene, index);
  if (self->zoom < min_zoom)
    {
      self->zoom = CLAMP (min_zoom, MIN_ZOOM, MAX_ZOOM);
      invalidate_tiles (self);
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ZOOM]);
    }
  double vw = gtk_widget_get_width (GTK_WIDGET (self)) / self->zoom;
  double vh = gtk_widget_get_height (GTK_WIDGET (self)) / self->zoom;
  self->ox = n->x + n->width / 2 - vw / 2;
  self->oy = n->y + n->height / 2 - vh / 2;
  self->fitted = TRUE;
  self->follow_fit = FALSE;
  clamp_pan (self);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
cowscope_graph_canvas_to_scene (CowscopeGraphCanvas *self, double x, double y, double *sx,
                                double *sy)
{
  *sx = self->ox + x / self->zoom;
  *sy = self->oy + y / self->zoom;
}

void
cowscope_graph_canvas_to_widget (CowscopeGraphCanvas *self, double sx, double sy, double *x,
                                 double *y)
{
  *x = (sx - self->ox) * self->zoom;
  *y = (sy - self->oy) * self->zoom;
}

guint
cowscope_graph_canvas_get_n_cached_tiles (CowscopeGraphCanvas *self)
{
  return g_hash_table_size (self->tiles);
}
