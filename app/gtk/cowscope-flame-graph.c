/* cowscope-flame-graph.c — see cowscope-flame-graph.h.
 *
 * The layout (each visible node's row and horizontal extent, as fractions
 * of the width) is computed when the tree, metric or zoom changes; the
 * drawing of it is cached as a render node for the current width and
 * colours (Sysprof's flame graph does the same), and only the hovered
 * box is drawn on top of it at each frame. */
#include "cowscope-config.h"

#include <glib/gi18n.h>

#include "cowscope-flame-graph.h"

#define ROW_HEIGHT 20
#define MIN_LABEL_WIDTH 28.0
/* Boxes narrower than this fraction of the width are not laid out (under
 * a pixel at any usual width). */
#define MIN_FRACTION 1e-4

typedef struct {
  guint node;
  guint depth;
  double x0, x1; /* fractions of the width */
} Box;

typedef struct {
  GdkRGBA user[4];
  GdkRGBA internal, no_stack, root, text, selected, hover;
} Palette;

struct _CowscopeFlameGraph {
  GtkWidget parent_instance;
  CowscopeCallTree *tree;
  CowscopeCallTreeDirection direction;
  CowscopeCallMetric metric;
  guint zoom;      /* the node drawn full width (the root when zoomed out) */
  guint selected;
  guint hover;
  GArray *boxes;   /* Box, in layout order (parents before children) */
  GskRenderNode *cache;
  int cache_width;
  Palette palette;
  gboolean palette_stale;
};

G_DEFINE_FINAL_TYPE (CowscopeFlameGraph, cowscope_flame_graph, GTK_TYPE_WIDGET)

enum { NODE_SELECTED, NODE_ACTIVATED, N_SIGNALS };
static guint signals[N_SIGNALS];

static void
lookup (GtkWidget *widget, const char *name, GdkRGBA *color)
{
  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  if (!gtk_style_context_lookup_color (gtk_widget_get_style_context (widget), name, color))
    *color = (GdkRGBA) { 0.5f, 0.5f, 0.5f, 1.0f };
  G_GNUC_END_IGNORE_DEPRECATIONS
}

static void
load_palette (CowscopeFlameGraph *self)
{
  static const char *const user[] = {
    "flame_user_1_color", "flame_user_2_color", "flame_user_3_color", "flame_user_4_color",
  };
  GtkWidget *w = GTK_WIDGET (self);
  for (guint i = 0; i < G_N_ELEMENTS (user); i++)
    lookup (w, user[i], &self->palette.user[i]);
  lookup (w, "flame_internal_color", &self->palette.internal);
  lookup (w, "flame_no_stack_color", &self->palette.no_stack);
  lookup (w, "flame_root_color", &self->palette.root);
  lookup (w, "flame_text_color", &self->palette.text);
  lookup (w, "flame_selected_color", &self->palette.selected);
  lookup (w, "flame_hover_color", &self->palette.hover);
  self->palette_stale = FALSE;
}

static void
invalidate (CowscopeFlameGraph *self)
{
  g_clear_pointer (&self->cache, gsk_render_node_unref);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static guint64
weight (CowscopeFlameGraph *self, guint node)
{
  return cowscope_call_weights_get (cowscope_call_tree_get_total (self->tree, node), self->metric);
}

/* Heaviest under the metric first; the tree's order (bytes) breaks ties. */
static gint
compare_weight (gconstpointer a, gconstpointer b, gpointer data)
{
  CowscopeFlameGraph *self = data;
  guint64 x = weight (self, *(const guint *) a), y = weight (self, *(const guint *) b);
  if (x != y)
    return x > y ? -1 : 1;
  return (*(const guint *) a > *(const guint *) b) - (*(const guint *) a < *(const guint *) b);
}

/* Lays out @node's children inside [x0, x1) at the next row, recursively. */
static void
layout_children (CowscopeFlameGraph *self, guint node, double x0, double x1)
{
  guint n = cowscope_call_tree_get_n_children (self->tree, node);
  guint64 total = weight (self, node);
  if (n == 0 || total == 0)
    return;
  g_autofree guint *kids = g_new (guint, n);
  for (guint i = 0; i < n; i++)
    kids[i] = cowscope_call_tree_get_child (self->tree, node, i);
  g_qsort_with_data (kids, (gint) n, sizeof (guint), compare_weight, self);
  double x = x0;
  for (guint i = 0; i < n; i++)
    {
      double w = (x1 - x0) * (double) weight (self, kids[i]) / (double) total;
      if (w < MIN_FRACTION)
        break; /* sorted: the rest are narrower still */
      Box box = { kids[i], cowscope_call_tree_get_depth (self->tree, kids[i]), x, x + w };
      g_array_append_val (self->boxes, box);
      layout_children (self, kids[i], x, x + w);
      x += w;
    }
}

/* The zoom node's ancestors full width, then it and its subtree. */
static void
relayout (CowscopeFlameGraph *self)
{
  g_array_set_size (self->boxes, 0);
  if (self->tree != NULL && self->zoom != COWSCOPE_CALL_TREE_NO_NODE)
    {
      g_autoptr (GArray) chain = g_array_new (FALSE, FALSE, sizeof (guint));
      for (guint n = self->zoom; n != COWSCOPE_CALL_TREE_NO_NODE;
           n = cowscope_call_tree_get_parent (self->tree, n))
        g_array_prepend_val (chain, n);
      for (guint i = 0; i < chain->len; i++)
        {
          guint n = g_array_index (chain, guint, i);
          Box box = { n, cowscope_call_tree_get_depth (self->tree, n), 0.0, 1.0 };
          g_array_append_val (self->boxes, box);
        }
      layout_children (self, self->zoom, 0.0, 1.0);
    }
  gtk_widget_queue_resize (GTK_WIDGET (self));
  invalidate (self);
}

static const Box *
box_of (CowscopeFlameGraph *self, guint node)
{
  for (guint i = 0; i < self->boxes->len; i++)
    if (g_array_index (self->boxes, Box, i).node == node)
      return &g_array_index (self->boxes, Box, i);
  return NULL;
}

static graphene_rect_t
box_rect (const Box *box, int width)
{
  return GRAPHENE_RECT_INIT ((float) (box->x0 * width), (float) (box->depth * ROW_HEIGHT),
                             (float) MAX ((box->x1 - box->x0) * width - 1.0, 0.0),
                             ROW_HEIGHT - 1);
}

static const GdkRGBA *
box_color (CowscopeFlameGraph *self, guint node)
{
  const CowscopeCallFrame *f = cowscope_call_tree_get_frame (self->tree, node);
  if (f == NULL)
    return &self->palette.root;
  if (f->no_stack)
    return &self->palette.no_stack;
  if (f->internal)
    return &self->palette.internal;
  /* The same function gets the same colour in every view.  g_str_hash()
   * modulo 4 is the sum of the characters modulo 4 (33 is 1 modulo 4):
   * the top bits of a Fibonacci hash of it spread better. */
  guint32 h = g_str_hash (f->ref.function != NULL ? f->ref.function : f->display) * 2654435761u;
  G_STATIC_ASSERT (G_N_ELEMENTS (self->palette.user) == 4);
  return &self->palette.user[h >> 30];
}

static const char *
box_label (CowscopeFlameGraph *self, guint node)
{
  const CowscopeCallFrame *f = cowscope_call_tree_get_frame (self->tree, node);
  return f != NULL ? f->display : _("All copies");
}

/* Draws every box and its label into a new render node. */
static GskRenderNode *
render (CowscopeFlameGraph *self, int width)
{
  GtkSnapshot *snapshot = gtk_snapshot_new ();
  PangoLayout *layout = gtk_widget_create_pango_layout (GTK_WIDGET (self), NULL);
  pango_layout_set_ellipsize (layout, PANGO_ELLIPSIZE_END);
  for (guint i = 0; i < self->boxes->len; i++)
    {
      const Box *box = &g_array_index (self->boxes, Box, i);
      graphene_rect_t r = box_rect (box, width);
      if (r.size.width < 1.0f)
        continue;
      gtk_snapshot_append_color (snapshot, box_color (self, box->node), &r);
      if (r.size.width < MIN_LABEL_WIDTH)
        continue;
      pango_layout_set_text (layout, box_label (self, box->node), -1);
      pango_layout_set_width (layout, (int) ((r.size.width - 6) * PANGO_SCALE));
      int lh;
      pango_layout_get_pixel_size (layout, NULL, &lh);
      gtk_snapshot_save (snapshot);
      gtk_snapshot_push_clip (snapshot, &r);
      gtk_snapshot_translate (snapshot,
                              &GRAPHENE_POINT_INIT (r.origin.x + 3,
                                                    r.origin.y + (ROW_HEIGHT - 1 - lh) / 2.0f));
      gtk_snapshot_append_layout (snapshot, layout, &self->palette.text);
      gtk_snapshot_pop (snapshot);
      gtk_snapshot_restore (snapshot);
    }
  const Box *sel = self->selected != COWSCOPE_CALL_TREE_NO_NODE ? box_of (self, self->selected) : NULL;
  if (sel != NULL)
    {
      graphene_rect_t r = box_rect (sel, width);
      GskRoundedRect outline;
      gsk_rounded_rect_init_from_rect (&outline, &r, 0);
      const float widths[4] = { 2, 2, 2, 2 };
      const GdkRGBA colors[4] = { self->palette.selected, self->palette.selected,
                                  self->palette.selected, self->palette.selected };
      gtk_snapshot_append_border (snapshot, &outline, widths, colors);
    }
  g_object_unref (layout);
  return gtk_snapshot_free_to_node (snapshot);
}

static void
cowscope_flame_graph_snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
  CowscopeFlameGraph *self = COWSCOPE_FLAME_GRAPH (widget);
  int width = gtk_widget_get_width (widget);
  if (self->tree == NULL || width <= 0)
    return;
  if (self->palette_stale)
    {
      load_palette (self);
      g_clear_pointer (&self->cache, gsk_render_node_unref);
    }
  if (self->cache == NULL || self->cache_width != width)
    {
      g_clear_pointer (&self->cache, gsk_render_node_unref);
      self->cache = render (self, width);
      self->cache_width = width;
    }
  if (self->cache != NULL)
    gtk_snapshot_append_node (snapshot, self->cache);
  const Box *hover = self->hover != COWSCOPE_CALL_TREE_NO_NODE ? box_of (self, self->hover) : NULL;
  if (hover != NULL)
    {
      graphene_rect_t r = box_rect (hover, width);
      gtk_snapshot_append_color (snapshot, &self->palette.hover, &r);
    }
}

static void
cowscope_flame_graph_measure (GtkWidget *widget, GtkOrientation orientation, int for_size,
                              int *minimum, int *natural, int *minimum_baseline,
                              int *natural_baseline)
{
  CowscopeFlameGraph *self = COWSCOPE_FLAME_GRAPH (widget);
  if (orientation == GTK_ORIENTATION_HORIZONTAL)
    {
      *minimum = 120;
      *natural = 600;
    }
  else
    {
      guint rows = 0;
      for (guint i = 0; i < self->boxes->len; i++)
        rows = MAX (rows, g_array_index (self->boxes, Box, i).depth + 1);
      *minimum = *natural = (int) rows * ROW_HEIGHT;
    }
}

guint
cowscope_flame_graph_node_at (CowscopeFlameGraph *self, double x, double y)
{
  g_return_val_if_fail (COWSCOPE_IS_FLAME_GRAPH (self), COWSCOPE_CALL_TREE_NO_NODE);
  int width = gtk_widget_get_width (GTK_WIDGET (self));
  if (width <= 0 || y < 0)
    return COWSCOPE_CALL_TREE_NO_NODE;
  guint depth = (guint) (y / ROW_HEIGHT);
  double fx = x / width;
  for (guint i = 0; i < self->boxes->len; i++)
    {
      const Box *box = &g_array_index (self->boxes, Box, i);
      if (box->depth == depth && fx >= box->x0 && fx < box->x1)
        return box->node;
    }
  return COWSCOPE_CALL_TREE_NO_NODE;
}

gboolean
cowscope_flame_graph_get_node_bounds (CowscopeFlameGraph *self, guint node, graphene_rect_t *bounds)
{
  g_return_val_if_fail (COWSCOPE_IS_FLAME_GRAPH (self), FALSE);
  const Box *box = box_of (self, node);
  if (box == NULL)
    return FALSE;
  *bounds = box_rect (box, gtk_widget_get_width (GTK_WIDGET (self)));
  return bounds->size.width >= 1.0f;
}

static void
motion_cb (GtkEventControllerMotion *motion, double x, double y, CowscopeFlameGraph *self)
{
  guint node = cowscope_flame_graph_node_at (self, x, y);
  if (node != self->hover)
    {
      self->hover = node;
      gtk_widget_queue_draw (GTK_WIDGET (self));
    }
}

static void
leave_cb (GtkEventControllerMotion *motion, CowscopeFlameGraph *self)
{
  self->hover = COWSCOPE_CALL_TREE_NO_NODE;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
pressed_cb (GtkGestureClick *click, int n_press, double x, double y, CowscopeFlameGraph *self)
{
  guint node = cowscope_flame_graph_node_at (self, x, y);
  if (node == COWSCOPE_CALL_TREE_NO_NODE)
    return;
  if (n_press == 2)
    {
      g_signal_emit (self, signals[NODE_ACTIVATED], 0, node);
      return;
    }
  cowscope_flame_graph_set_selected (self, node);
  cowscope_flame_graph_zoom_to (self, node);
  g_signal_emit (self, signals[NODE_SELECTED], 0, node);
}

/* "update_weights (train.c:88)\n4.0 MiB copied (62.5 %), 3 events, 1.2 ms" */
static gboolean
query_tooltip_cb (GtkWidget *widget, int x, int y, gboolean keyboard, GtkTooltip *tooltip,
                  CowscopeFlameGraph *self)
{
  guint node = cowscope_flame_graph_node_at (self, x, y);
  if (node == COWSCOPE_CALL_TREE_NO_NODE)
    return FALSE;
  const CowscopeCallWeights *w = cowscope_call_tree_get_total (self->tree, node);
  const CowscopeCallWeights *all =
    cowscope_call_tree_get_total (self->tree, cowscope_call_tree_get_root (self->tree, self->direction));
  guint64 total = cowscope_call_weights_get (all, self->metric);
  double share = total > 0 ? 100.0 * (double) weight (self, node) / (double) total : 0.0;
  g_autofree char *bytes = g_format_size (w->copy_bytes + w->eager_bytes);
  guint64 events = cowscope_call_weights_get (w, COWSCOPE_CALL_METRIC_EVENTS);
  const CowscopeCallFrame *f = cowscope_call_tree_get_frame (self->tree, node);
  g_autofree char *where = f != NULL && f->ref.file != NULL
                             ? g_strdup_printf ("\n%s", f->ref.file) : g_strdup ("");
  g_autofree char *text = g_strdup_printf (
    /* Translators: a flame graph box's tooltip: the place, the bytes
     * copied, the share of the whole under the chosen measure, the count
     * of copies, steals and eager copies, the time */
    g_dngettext (GETTEXT_PACKAGE, "%s%s\n%s copied, %.1f %% of the whole; %" G_GUINT64_FORMAT
                 " event; %.3f ms materializing",
                 "%s%s\n%s copied, %.1f %% of the whole; %" G_GUINT64_FORMAT
                 " events; %.3f ms materializing", events),
    box_label (self, node), where, bytes, share, events, (double) w->time_ns / 1e6);
  gtk_tooltip_set_text (tooltip, text);
  return TRUE;
}

static void
cowscope_flame_graph_css_changed (GtkWidget *widget, GtkCssStyleChange *change)
{
  GTK_WIDGET_CLASS (cowscope_flame_graph_parent_class)->css_changed (widget, change);
  COWSCOPE_FLAME_GRAPH (widget)->palette_stale = TRUE;
  invalidate (COWSCOPE_FLAME_GRAPH (widget));
}

static void
cowscope_flame_graph_dispose (GObject *object)
{
  CowscopeFlameGraph *self = COWSCOPE_FLAME_GRAPH (object);
  g_clear_object (&self->tree);
  g_clear_pointer (&self->cache, gsk_render_node_unref);
  G_OBJECT_CLASS (cowscope_flame_graph_parent_class)->dispose (object);
}

static void
cowscope_flame_graph_finalize (GObject *object)
{
  g_array_unref (COWSCOPE_FLAME_GRAPH (object)->boxes);
  G_OBJECT_CLASS (cowscope_flame_graph_parent_class)->finalize (object);
}

static void
cowscope_flame_graph_class_init (CowscopeFlameGraphClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  object_class->dispose = cowscope_flame_graph_dispose;
  object_class->finalize = cowscope_flame_graph_finalize;
  widget_class->snapshot = cowscope_flame_graph_snapshot;
  widget_class->measure = cowscope_flame_graph_measure;
  widget_class->css_changed = cowscope_flame_graph_css_changed;

  /* A node was clicked (it is now selected and zoomed into). */
  signals[NODE_SELECTED] = g_signal_new ("node-selected", G_TYPE_FROM_CLASS (klass),
                                         G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL, G_TYPE_NONE, 1,
                                         G_TYPE_UINT);
  /* A node was double-clicked. */
  signals[NODE_ACTIVATED] = g_signal_new ("node-activated", G_TYPE_FROM_CLASS (klass),
                                          G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL, G_TYPE_NONE, 1,
                                          G_TYPE_UINT);
  gtk_widget_class_set_css_name (widget_class, "cowscope-flame-graph");
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_IMG);
}

static void
cowscope_flame_graph_init (CowscopeFlameGraph *self)
{
  self->boxes = g_array_new (FALSE, FALSE, sizeof (Box));
  self->zoom = self->selected = self->hover = COWSCOPE_CALL_TREE_NO_NODE;
  self->palette_stale = TRUE;

  GtkEventController *motion = gtk_event_controller_motion_new ();
  g_signal_connect (motion, "motion", G_CALLBACK (motion_cb), self);
  g_signal_connect (motion, "leave", G_CALLBACK (leave_cb), self);
  gtk_widget_add_controller (GTK_WIDGET (self), motion);
  GtkGesture *click = gtk_gesture_click_new ();
  g_signal_connect (click, "pressed", G_CALLBACK (pressed_cb), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (click));
  gtk_widget_set_has_tooltip (GTK_WIDGET (self), TRUE);
  g_signal_connect (self, "query-tooltip", G_CALLBACK (query_tooltip_cb), self);
}

GtkWidget *
cowscope_flame_graph_new (void)
{
  return g_object_new (COWSCOPE_TYPE_FLAME_GRAPH, NULL);
}

void
cowscope_flame_graph_set_tree (CowscopeFlameGraph *self, CowscopeCallTree *tree,
                               CowscopeCallTreeDirection direction)
{
  g_return_if_fail (COWSCOPE_IS_FLAME_GRAPH (self));
  g_return_if_fail (tree == NULL || COWSCOPE_IS_CALL_TREE (tree));
  g_set_object (&self->tree, tree);
  self->direction = direction;
  self->zoom = tree != NULL ? cowscope_call_tree_get_root (tree, direction) : COWSCOPE_CALL_TREE_NO_NODE;
  self->selected = self->hover = COWSCOPE_CALL_TREE_NO_NODE;
  relayout (self);
}

CowscopeCallTree *
cowscope_flame_graph_get_tree (CowscopeFlameGraph *self)
{
  g_return_val_if_fail (COWSCOPE_IS_FLAME_GRAPH (self), NULL);
  return self->tree;
}

void
cowscope_flame_graph_set_metric (CowscopeFlameGraph *self, CowscopeCallMetric metric)
{
  g_return_if_fail (COWSCOPE_IS_FLAME_GRAPH (self));
  if (self->metric == metric)
    return;
  self->metric = metric;
  relayout (self);
}

guint
cowscope_flame_graph_get_selected (CowscopeFlameGraph *self)
{
  g_return_val_if_fail (COWSCOPE_IS_FLAME_GRAPH (self), COWSCOPE_CALL_TREE_NO_NODE);
  return self->selected;
}

/* TRUE when @node is @ancestor or under it. */
static gboolean
is_under (CowscopeCallTree *tree, guint node, guint ancestor)
{
  for (guint n = node; n != COWSCOPE_CALL_TREE_NO_NODE; n = cowscope_call_tree_get_parent (tree, n))
    if (n == ancestor)
      return TRUE;
  return FALSE;
}

void
cowscope_flame_graph_set_selected (CowscopeFlameGraph *self, guint node)
{
  g_return_if_fail (COWSCOPE_IS_FLAME_GRAPH (self));
  if (self->tree == NULL)
    return;
  g_return_if_fail (node == COWSCOPE_CALL_TREE_NO_NODE || node < cowscope_call_tree_get_n_nodes (self->tree));
  self->selected = node;
  if (node != COWSCOPE_CALL_TREE_NO_NODE && !is_under (self->tree, node, self->zoom))
    cowscope_flame_graph_zoom_to (self, COWSCOPE_CALL_TREE_NO_NODE);
  else
    invalidate (self);
}

guint
cowscope_flame_graph_get_zoom (CowscopeFlameGraph *self)
{
  g_return_val_if_fail (COWSCOPE_IS_FLAME_GRAPH (self), COWSCOPE_CALL_TREE_NO_NODE);
  return self->zoom;
}

void
cowscope_flame_graph_zoom_to (CowscopeFlameGraph *self, guint node)
{
  g_return_if_fail (COWSCOPE_IS_FLAME_GRAPH (self));
  if (self->tree == NULL)
    return;
  self->zoom = node != COWSCOPE_CALL_TREE_NO_NODE ? node
                                                   : cowscope_call_tree_get_root (self->tree, self->direction);
  relayout (self);
}
