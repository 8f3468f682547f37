/* cowscope-graph-render.c — see cowscope-graph-render.h. */
#include "cowscope-config.h"

#include <cairo-svg.h>
#include <glib/gi18n.h>
#include <math.h>
#include <pango/pangocairo.h>

#include "cowscope-graph-render.h"

typedef struct { double r, g, b; } Rgb;

#define RGB(hex) { ((hex) >> 16 & 0xff) / 255.0, ((hex) >> 8 & 0xff) / 255.0, ((hex) & 0xff) / 255.0 }

/* Fill, border and text of one state, light and dark (GNOME palette). */
typedef struct { Rgb fill, border, text; } NodeColors;

enum { STYLE_OWNED, STYLE_SHARED, STYLE_MATERIALIZED, STYLE_STOLEN, STYLE_LIMBO, STYLE_FREED_SOON,
       N_STYLES };

static const NodeColors light_colors[N_STYLES] = {
  [STYLE_OWNED] = { RGB (0xf6f5f4), RGB (0x9a9996), RGB (0x241f31) },
  [STYLE_SHARED] = { RGB (0x99c1f1), RGB (0x1c71d8), RGB (0x241f31) },
  [STYLE_MATERIALIZED] = { RGB (0xffbe6f), RGB (0xc64600), RGB (0x241f31) },
  /* Green: it owns bytes that were shared, and nothing was copied. */
  [STYLE_STOLEN] = { RGB (0x8ff0a4), RGB (0x26a269), RGB (0x241f31) },
  [STYLE_LIMBO] = { RGB (0xf66151), RGB (0xa51d2d), RGB (0x241f31) },
  [STYLE_FREED_SOON] = { RGB (0xdc8add), RGB (0x813d9c), RGB (0x241f31) },
};
static const NodeColors dark_colors[N_STYLES] = {
  [STYLE_OWNED] = { RGB (0x3d3846), RGB (0x9a9996), RGB (0xffffff) },
  [STYLE_SHARED] = { RGB (0x1a5fb4), RGB (0x99c1f1), RGB (0xffffff) },
  [STYLE_MATERIALIZED] = { RGB (0xa34200), RGB (0xffbe6f), RGB (0xffffff) },
  [STYLE_STOLEN] = { RGB (0x26a269), RGB (0x8ff0a4), RGB (0xffffff) },
  [STYLE_LIMBO] = { RGB (0xa51d2d), RGB (0xf66151), RGB (0xffffff) },
  [STYLE_FREED_SOON] = { RGB (0x613583), RGB (0xdc8add), RGB (0xffffff) },
};

/* Edge colour, width and dash per kind. */
typedef struct { Rgb light, dark; double width; double dash[2]; int n_dash; } EdgeStyle;

static const EdgeStyle edge_styles[COWSCOPE_N_EDGE_KINDS] = {
  [COWSCOPE_EDGE_VIEW_OF] = { RGB (0x5e5c64), RGB (0xc0bfbc), 1.3, { 0, 0 }, 0 },
  [COWSCOPE_EDGE_LAZY_COPY_OF] = { RGB (0x1c71d8), RGB (0x62a0ea), 1.8, { 6, 4 }, 2 },
  [COWSCOPE_EDGE_MATERIALIZED_FROM] = { RGB (0xe66100), RGB (0xffa348), 1.8, { 2, 3 }, 2 },
  [COWSCOPE_EDGE_OWNS] = { RGB (0xc0bfbc), RGB (0x77767b), 1.0, { 0, 0 }, 0 },
  /* Across processes: long dashes, labelled with the consumer's pid. */
  [COWSCOPE_EDGE_RECEIVED_BY] = { RGB (0x2190a4), RGB (0x33c7de), 2.0, { 9, 4 }, 2 },
  [COWSCOPE_EDGE_KEPT_ALIVE_BY] = { RGB (0xc01c28), RGB (0xf66151), 2.2, { 9, 4 }, 2 },
};

/* Which colour set a node uses. */
static int
node_style (const CowscopeSceneNode *n)
{
  switch (n->state)
    {
    case COWSCOPE_NODE_STATE_SHARED: return STYLE_SHARED;
    case COWSCOPE_NODE_STATE_MATERIALIZED: return STYLE_MATERIALIZED;
    case COWSCOPE_NODE_STATE_STOLEN: return STYLE_STOLEN;
    case COWSCOPE_NODE_STATE_LIMBO: return STYLE_LIMBO;
    default: return STYLE_OWNED;
    }
}

/* Appends a rounded rectangle path. */
static void
rounded_rect (cairo_t *cr, double x, double y, double w, double h, double r)
{
  r = MIN (r, MIN (w, h) / 2);
  cairo_new_sub_path (cr);
  cairo_arc (cr, x + w - r, y + r, r, -G_PI / 2, 0);
  cairo_arc (cr, x + w - r, y + h - r, r, 0, G_PI / 2);
  cairo_arc (cr, x + r, y + h - r, r, G_PI / 2, G_PI);
  cairo_arc (cr, x + r, y + r, r, G_PI, 3 * G_PI / 2);
  cairo_close_path (cr);
}

/* Appends the outline of a node of @kind in the given box. */
static void
shape_path (cairo_t *cr, guint kind, double x, double y, double w, double h)
{
  switch (kind)
    {
    case COWSCOPE_NODE_TENSOR:
      rounded_rect (cr, x, y, w, h, h / 2);
      break;
    case COWSCOPE_NODE_STORAGE:
      rounded_rect (cr, x, y, w, h, 7);
      break;
    case COWSCOPE_NODE_CONTEXT:
      {
        double k = MIN (h / 2, w / 4);
        cairo_move_to (cr, x + k, y);
        cairo_line_to (cr, x + w - k, y);
        cairo_line_to (cr, x + w, y + h / 2);
        cairo_line_to (cr, x + w - k, y + h);
        cairo_line_to (cr, x + k, y + h);
        cairo_line_to (cr, x, y + h / 2);
        cairo_close_path (cr);
      }
      break;
    case COWSCOPE_NODE_IPC_BLOCK:
      {
        /* An octagon: a block that leaves its process. */
        double k = MIN (h / 3, w / 4);
        cairo_move_to (cr, x + k, y);
        cairo_line_to (cr, x + w - k, y);
        cairo_line_to (cr, x + w, y + k);
        cairo_line_to (cr, x + w, y + h - k);
        cairo_line_to (cr, x + w - k, y + h);
        cairo_line_to (cr, x + k, y + h);
        cairo_line_to (cr, x, y + h - k);
        cairo_line_to (cr, x, y + k);
        cairo_close_path (cr);
      }
      break;
    case COWSCOPE_NODE_IPC_RECEIVED:
      {
        /* A parallelogram: bytes that came from elsewhere. */
        double k = MIN (h / 3, w / 6);
        cairo_move_to (cr, x + k, y);
        cairo_line_to (cr, x + w, y);
        cairo_line_to (cr, x + w - k, y + h);
        cairo_line_to (cr, x, y + h);
        cairo_close_path (cr);
      }
      break;
    default:
      rounded_rect (cr, x, y, w, h, 1.5);
      break;
    }
}

/* Whether box (@x, @y, @w, @h) meets @clip (always with no clip). */
static gboolean
meets (const cairo_rectangle_t *clip, double x, double y, double w, double h)
{
  return clip == NULL || (x <= clip->x + clip->width && x + w >= clip->x &&
                          y <= clip->y + clip->height && y + h >= clip->y);
}

/* Draws one line of text centred in [x, x+w] at baseline-independent top
 * @y, ellipsized to @w. */
static void
draw_text (cairo_t *cr, PangoLayout *layout, const char *text, const char *font, double x,
           double y, double w)
{
  PangoFontDescription *desc = pango_font_description_from_string (font);
  pango_layout_set_font_description (layout, desc);
  pango_font_description_free (desc);
  pango_layout_set_text (layout, text, -1);
  pango_layout_set_width (layout, (int) (MAX (w, 1) * PANGO_SCALE));
  pango_layout_set_ellipsize (layout, PANGO_ELLIPSIZE_END);
  pango_layout_set_alignment (layout, PANGO_ALIGN_CENTER);
  cairo_move_to (cr, x, y);
  pango_cairo_show_layout (cr, layout);
}

/* Draws one node: shape (cards for a group), outline, two label lines. */
static void
draw_node (cairo_t *cr, PangoLayout *layout, const CowscopeSceneNode *n, gboolean labels,
           gboolean dark)
{
  const NodeColors *c = &(dark ? dark_colors : light_colors)[node_style (n)];
  double x = n->x, y = n->y, w = n->width, h = n->height;

  if (n->type == COWSCOPE_SCENE_NODE_GROUP)
    {
      /* Two cards behind the front one. */
      w -= 8, h -= 8;
      for (int k = 2; k >= 1; k--)
        {
          shape_path (cr, n->kind, x + 4 * k, y + 4 * k, w, h);
          cairo_set_source_rgb (cr, c->fill.r * 0.85, c->fill.g * 0.85, c->fill.b * 0.85);
          cairo_fill_preserve (cr);
          cairo_set_source_rgb (cr, c->border.r, c->border.g, c->border.b);
          cairo_set_line_width (cr, 1.0);
          cairo_stroke (cr);
        }
    }
  shape_path (cr, n->kind, x, y, w, h);
  /* Freed soon: the state's colour, faded, with a purple dashed outline. */
  cairo_set_source_rgba (cr, c->fill.r, c->fill.g, c->fill.b,
                         n->type == COWSCOPE_SCENE_NODE_OVERFLOW ? 0.5 : n->freed_soon ? 0.55 : 1.0);
  cairo_fill_preserve (cr);
  if (n->freed_soon && n->type == COWSCOPE_SCENE_NODE_OBJECT)
    {
      const NodeColors *f = &(dark ? dark_colors : light_colors)[STYLE_FREED_SOON];
      cairo_set_source_rgb (cr, f->border.r, f->border.g, f->border.b);
    }
  else
    cairo_set_source_rgb (cr, c->border.r, c->border.g, c->border.b);
  cairo_set_line_width (cr, 1.5);
  if (n->freed_soon || n->type == COWSCOPE_SCENE_NODE_OVERFLOW)
    {
      static const double dash[] = { 4, 3 };
      cairo_set_dash (cr, dash, 2, 0);
    }
  cairo_stroke (cr);
  cairo_set_dash (cr, NULL, 0, 0);

  if (!labels)
    return;
  cairo_set_source_rgb (cr, c->text.r, c->text.g, c->text.b);
  double pad = n->kind == COWSCOPE_NODE_TENSOR || n->kind == COWSCOPE_NODE_CONTEXT
                   || n->kind == COWSCOPE_NODE_IPC_BLOCK || n->kind == COWSCOPE_NODE_IPC_RECEIVED
                 ? h / 3
                 : 6;
  double ty = y + h / 2 - 14;
  draw_text (cr, layout, n->label, "Sans Bold 9", x + pad, ty, w - 2 * pad);
  cairo_set_source_rgba (cr, c->text.r, c->text.g, c->text.b, 0.8);
  draw_text (cr, layout, n->detail, "Sans 8", x + pad, ty + 14, w - 2 * pad);
}

/* A process: a faint box with its name in the top-left corner. */
static void
draw_cluster (cairo_t *cr, PangoLayout *layout, const CowscopeSceneCluster *c, gboolean labels,
              gboolean dark)
{
  rounded_rect (cr, c->x, c->y, c->width, c->height, 8);
  cairo_set_source_rgba (cr, dark ? 1 : 0, dark ? 1 : 0.1, dark ? 1 : 0.3, dark ? 0.05 : 0.035);
  cairo_fill_preserve (cr);
  cairo_set_source_rgba (cr, dark ? 1 : 0, dark ? 1 : 0, dark ? 1 : 0, 0.28);
  cairo_set_line_width (cr, 1.2);
  cairo_stroke (cr);
  if (!labels)
    return;
  PangoFontDescription *desc = pango_font_description_from_string ("Sans Bold 9");
  pango_layout_set_font_description (layout, desc);
  pango_font_description_free (desc);
  pango_layout_set_text (layout, c->label, -1);
  pango_layout_set_width (layout, (int) (MAX (c->width - 16, 1) * PANGO_SCALE));
  pango_layout_set_ellipsize (layout, PANGO_ELLIPSIZE_END);
  pango_layout_set_alignment (layout, PANGO_ALIGN_LEFT);
  cairo_set_source_rgba (cr, dark ? 1 : 0.14, dark ? 1 : 0.12, dark ? 1 : 0.19, 0.8);
  cairo_move_to (cr, c->x + 8, c->y + 4);
  pango_cairo_show_layout (cr, layout);
}

/* The point halfway along an edge's Bézier chain (its middle control
 * point: close enough for a label). */
static void
edge_middle (const CowscopeSceneEdge *e, double *x, double *y)
{
  guint m = e->n_points / 2;
  *x = e->points[2 * m];
  *y = e->points[2 * m + 1];
}

/* "received by 1234" / "kept alive by 1234" on a pill at the edge's
 * middle: the consumer at its head. */
static void
draw_edge_label (cairo_t *cr, PangoLayout *layout, CowscopeGraphScene *scene,
                 const CowscopeSceneEdge *e, gboolean dark)
{
  if (e->n_points == 0)
    return;
  const CowscopeSceneNode *to = cowscope_graph_scene_get_node (scene, e->to);
  g_autofree char *text = e->kind == COWSCOPE_EDGE_KEPT_ALIVE_BY
                            /* Translators: an edge in the graph; %u is a process id */
                            ? g_strdup_printf (_("kept alive by %u"), to->pid)
                            /* Translators: an edge in the graph; %u is a process id */
                            : g_strdup_printf (_("received by %u"), to->pid);
  const EdgeStyle *s = &edge_styles[e->kind];
  const Rgb *c = dark ? &s->dark : &s->light;
  PangoFontDescription *desc = pango_font_description_from_string ("Sans 7.5");
  pango_layout_set_font_description (layout, desc);
  pango_font_description_free (desc);
  pango_layout_set_width (layout, -1);
  pango_layout_set_ellipsize (layout, PANGO_ELLIPSIZE_NONE);
  pango_layout_set_text (layout, text, -1);
  int tw, th;
  pango_layout_get_pixel_size (layout, &tw, &th);
  double mx, my;
  edge_middle (e, &mx, &my);
  rounded_rect (cr, mx - tw / 2.0 - 4, my - th / 2.0 - 1, tw + 8, th + 2, 4);
  cairo_set_source_rgba (cr, dark ? 0.14 : 1, dark ? 0.14 : 1, dark ? 0.14 : 1, 0.9);
  cairo_fill_preserve (cr);
  cairo_set_source_rgb (cr, c->r, c->g, c->b);
  cairo_set_line_width (cr, 1);
  cairo_stroke (cr);
  cairo_move_to (cr, mx - tw / 2.0, my - th / 2.0);
  pango_cairo_show_layout (cr, layout);
}

/* Strokes one edge with its kind's style and an open arrow head. */
static void
draw_edge (cairo_t *cr, const CowscopeSceneEdge *e, gboolean dark)
{
  const EdgeStyle *s = &edge_styles[MIN (e->kind, COWSCOPE_N_EDGE_KINDS - 1)];
  const Rgb *c = dark ? &s->dark : &s->light;
  const double *p = e->points;

  if (e->n_points == 0)
    return;
  cairo_set_source_rgb (cr, c->r, c->g, c->b);
  cairo_set_line_width (cr, s->width);
  cairo_set_dash (cr, s->dash, s->n_dash, 0);
  cairo_move_to (cr, p[0], p[1]);
  for (guint i = 1; i + 2 < e->n_points; i += 3)
    cairo_curve_to (cr, p[2 * i], p[2 * i + 1], p[2 * i + 2], p[2 * i + 3], p[2 * i + 4],
                    p[2 * i + 5]);
  double ex = p[2 * (e->n_points - 1)], ey = p[2 * (e->n_points - 1) + 1];
  if (e->has_arrow)
    cairo_line_to (cr, e->arrow_x, e->arrow_y);
  cairo_stroke (cr);
  cairo_set_dash (cr, NULL, 0, 0);
  if (e->has_arrow)
    {
      double dx = e->arrow_x - ex, dy = e->arrow_y - ey, len = hypot (dx, dy);
      if (len > 0.01)
        {
          double ux = dx / len, uy = dy / len, k = 7;
          cairo_move_to (cr, e->arrow_x - k * ux + k * 0.55 * uy, e->arrow_y - k * uy - k * 0.55 * ux);
          cairo_line_to (cr, e->arrow_x, e->arrow_y);
          cairo_line_to (cr, e->arrow_x - k * ux - k * 0.55 * uy, e->arrow_y - k * uy + k * 0.55 * ux);
          cairo_set_line_width (cr, MAX (s->width, 1.4));
          cairo_stroke (cr);
        }
    }
}

/* The bounding box of an edge's control points. */
static void
edge_bounds (const CowscopeSceneEdge *e, double *x, double *y, double *w, double *h)
{
  double x0 = G_MAXDOUBLE, y0 = G_MAXDOUBLE, x1 = -G_MAXDOUBLE, y1 = -G_MAXDOUBLE;
  for (guint i = 0; i < e->n_points; i++)
    {
      x0 = MIN (x0, e->points[2 * i]), x1 = MAX (x1, e->points[2 * i]);
      y0 = MIN (y0, e->points[2 * i + 1]), y1 = MAX (y1, e->points[2 * i + 1]);
    }
  if (e->has_arrow)
    {
      x0 = MIN (x0, e->arrow_x), x1 = MAX (x1, e->arrow_x);
      y0 = MIN (y0, e->arrow_y), y1 = MAX (y1, e->arrow_y);
    }
  *x = x0 - 8, *y = y0 - 8, *w = x1 - x0 + 16, *h = y1 - y0 + 16;
}

void
cowscope_graph_render_scene (CowscopeGraphScene *scene, cairo_t *cr,
                             const cairo_rectangle_t *clip, double zoom, gboolean dark)
{
  g_return_if_fail (COWSCOPE_IS_GRAPH_SCENE (scene));
  PangoLayout *layout = pango_cairo_create_layout (cr);
  gboolean labels = zoom >= 0.5;

  for (guint i = 0; i < cowscope_graph_scene_get_n_clusters (scene); i++)
    {
      const CowscopeSceneCluster *c = cowscope_graph_scene_get_cluster (scene, i);
      if (meets (clip, c->x, c->y, c->width, c->height))
        draw_cluster (cr, layout, c, labels, dark);
    }
  for (guint i = 0; i < cowscope_graph_scene_get_n_edges (scene); i++)
    {
      const CowscopeSceneEdge *e = cowscope_graph_scene_get_edge (scene, i);
      double x, y, w, h;
      edge_bounds (e, &x, &y, &w, &h);
      if (meets (clip, x, y, w, h))
        draw_edge (cr, e, dark);
    }
  if (labels)
    for (guint i = 0; i < cowscope_graph_scene_get_n_edges (scene); i++)
      {
        const CowscopeSceneEdge *e = cowscope_graph_scene_get_edge (scene, i);
        double x, y, w, h;
        edge_bounds (e, &x, &y, &w, &h);
        if (COWSCOPE_EDGE_KIND_IS_CROSS_PROCESS (e->kind) && meets (clip, x, y, w, h))
          draw_edge_label (cr, layout, scene, e, dark);
      }
  for (guint i = 0; i < cowscope_graph_scene_get_n_nodes (scene); i++)
    {
      const CowscopeSceneNode *n = cowscope_graph_scene_get_node (scene, i);
      if (meets (clip, n->x - 2, n->y - 2, n->width + 4, n->height + 4))
        draw_node (cr, layout, n, labels, dark);
    }
  g_object_unref (layout);
}

void
cowscope_graph_render_marks (CowscopeGraphScene *scene, cairo_t *cr,
                             const cairo_rectangle_t *clip, const guint8 *marks, gboolean dark)
{
  g_return_if_fail (COWSCOPE_IS_GRAPH_SCENE (scene));
  if (marks == NULL)
    return;
  static const Rgb highlight = RGB (0xf5c211), selected = RGB (0x3584e4), match = RGB (0x26a269);
  for (guint i = 0; i < cowscope_graph_scene_get_n_nodes (scene); i++)
    {
      if (marks[i] == 0)
        continue;
      const CowscopeSceneNode *n = cowscope_graph_scene_get_node (scene, i);
      if (!meets (clip, n->x - 8, n->y - 8, n->width + 16, n->height + 16))
        continue;
      double grow = 3;
      const Rgb *order[3] = { NULL, NULL, NULL };
      if (marks[i] & COWSCOPE_GRAPH_MARK_HIGHLIGHT) order[0] = &highlight;
      if (marks[i] & COWSCOPE_GRAPH_MARK_MATCH) order[1] = &match;
      if (marks[i] & COWSCOPE_GRAPH_MARK_SELECTED) order[2] = &selected;
      for (int k = 0; k < 3; k++)
        {
          if (order[k] == NULL)
            continue;
          shape_path (cr, n->kind, n->x - grow, n->y - grow, n->width + 2 * grow,
                      n->height + 2 * grow);
          cairo_set_source_rgb (cr, order[k]->r, order[k]->g, order[k]->b);
          cairo_set_line_width (cr, 3);
          cairo_stroke (cr);
          grow += 3;
        }
    }
}

/* The legend's words, one per node style and one per edge kind. */
static const char *const state_names[N_STYLES] = {
  N_("Owned"), N_("Shared (lazy copy)"), N_("Materialized (copied)"),
  N_("Materialized (stolen, no copy)"), N_("In limbo (IPC)"), N_("Freed soon"),
};
static const char *const edge_names[COWSCOPE_N_EDGE_KINDS] = {
  N_("View of"), N_("Lazy copy of"), N_("Materialized from"), N_("Owns bytes"),
  N_("Received by (IPC)"), N_("Kept alive by (IPC)"),
};

guint
cowscope_graph_legend_get_n_entries (void)
{
  return N_STYLES + COWSCOPE_N_EDGE_KINDS;
}

gboolean
cowscope_graph_legend_entry_is_edge (guint entry)
{
  return entry >= N_STYLES;
}

const char *
cowscope_graph_legend_get_entry_name (guint entry)
{
  g_return_val_if_fail (entry < cowscope_graph_legend_get_n_entries (), NULL);
  return entry < N_STYLES ? _(state_names[entry]) : _(edge_names[entry - N_STYLES]);
}

void
cowscope_graph_render_legend_swatch (cairo_t *cr, guint entry, double x, double y, double width,
                                     double height, gboolean dark)
{
  g_return_if_fail (entry < cowscope_graph_legend_get_n_entries ());
  const NodeColors *colors = dark ? dark_colors : light_colors;

  cairo_save (cr);
  if (entry >= N_STYLES)
    {
      double sy = y + height / 2;
      CowscopeSceneEdge e = { .kind = (guint8) (entry - N_STYLES), .n_points = 4, .has_arrow = TRUE };
      double pts[8] = { x, sy, x + (width - 4) / 3, sy, x + 2 * (width - 4) / 3, sy, x + width - 4, sy };
      e.points = pts;
      e.arrow_x = x + width;
      e.arrow_y = sy;
      draw_edge (cr, &e, dark);
      cairo_restore (cr);
      return;
    }
  rounded_rect (cr, x + 0.75, y + 0.75, width - 1.5, height - 1.5, 3);
  if (entry == STYLE_FREED_SOON)
    {
      /* Any state's colour, faded, with a dashed purple outline. */
      static const double dash[] = { 4, 3 };
      const NodeColors *o = &colors[STYLE_OWNED];
      cairo_set_source_rgba (cr, o->fill.r, o->fill.g, o->fill.b, 0.55);
      cairo_fill_preserve (cr);
      cairo_set_dash (cr, dash, 2, 0);
    }
  else
    {
      cairo_set_source_rgb (cr, colors[entry].fill.r, colors[entry].fill.g, colors[entry].fill.b);
      cairo_fill_preserve (cr);
    }
  cairo_set_source_rgb (cr, colors[entry].border.r, colors[entry].border.g, colors[entry].border.b);
  cairo_set_line_width (cr, 1.5);
  cairo_stroke (cr);
  cairo_restore (cr);
}

void
cowscope_graph_render_legend (cairo_t *cr, double x, double y, gboolean dark, double *width,
                              double *height)
{
  const double row = 20, swatch = 26, col = 170, pad = 10;
  double w = 2 * pad + 2 * col, h = 2 * pad + MAX ((int) N_STYLES, (int) COWSCOPE_N_EDGE_KINDS) * row;
  if (width) *width = w;
  if (height) *height = h;
  if (cr == NULL)
    return;

  PangoLayout *layout = pango_cairo_create_layout (cr);
  PangoFontDescription *desc = pango_font_description_from_string ("Sans 8");
  pango_layout_set_font_description (layout, desc);
  pango_font_description_free (desc);

  cairo_save (cr);
  rounded_rect (cr, x, y, w, h, 6);
  cairo_set_source_rgba (cr, dark ? 0.14 : 1, dark ? 0.14 : 1, dark ? 0.14 : 1, 0.92);
  cairo_fill_preserve (cr);
  cairo_set_source_rgba (cr, dark ? 1 : 0, dark ? 1 : 0, dark ? 1 : 0, 0.15);
  cairo_set_line_width (cr, 1);
  cairo_stroke (cr);
  /* Node states in the first column, edge kinds in the second. */
  for (guint i = 0; i < cowscope_graph_legend_get_n_entries (); i++)
    {
      gboolean edge = cowscope_graph_legend_entry_is_edge (i);
      double sx = x + pad + (edge ? col : 0);
      double sy = y + pad + (edge ? i - N_STYLES : i) * row;
      cowscope_graph_render_legend_swatch (cr, i, sx, sy + 3, swatch, row - 6, dark);
      cairo_set_source_rgb (cr, dark ? 1 : 0.14, dark ? 1 : 0.12, dark ? 1 : 0.19);
      pango_layout_set_text (layout, cowscope_graph_legend_get_entry_name (i), -1);
      cairo_move_to (cr, sx + swatch + 6, sy + 3);
      pango_cairo_show_layout (cr, layout);
    }
  cairo_restore (cr);
  g_object_unref (layout);
}

/* ---- export ------------------------------------------------------------ */

#define EXPORT_MAX_SIDE 16384.0
#define EXPORT_MAX_PIXELS 40e6 /* 160 MB of ARGB */

void
cowscope_graph_export_size (CowscopeGraphScene *scene, int *width, int *height, double *scale)
{
  double lw, lh;
  cowscope_graph_render_legend (NULL, 0, 0, FALSE, &lw, &lh);
  double w = MAX (cowscope_graph_scene_get_width (scene), lw + 16);
  double h = cowscope_graph_scene_get_height (scene) + lh + 16;
  double s = MIN (1.0, MIN (EXPORT_MAX_SIDE / w, EXPORT_MAX_SIDE / h));
  s = MIN (s, sqrt (EXPORT_MAX_PIXELS / (w * h)));
  if (width) *width = (int) ceil (w * s);
  if (height) *height = (int) ceil (h * s);
  if (scale) *scale = s;
}

typedef struct {
  CowscopeGraphScene *scene;
  GFile *file;
  CowscopeGraphExportFormat format;
  CowscopeGraphExportProgress progress;
  GObject *progress_object;
  GMainContext *context;
  GOutputStream *out;
  GError *write_error;
} Export;

static void
export_free (gpointer data)
{
  Export *ex = data;
  g_clear_object (&ex->scene);
  g_clear_object (&ex->file);
  g_clear_object (&ex->out);
  g_clear_object (&ex->progress_object);
  g_clear_pointer (&ex->context, g_main_context_unref);
  g_clear_error (&ex->write_error);
  g_free (ex);
}

typedef struct {
  CowscopeGraphExportProgress func;
  GObject *object;
  double fraction;
} ProgressCall;

/* Delivers one progress report in the caller's context. */
static gboolean
progress_idle (gpointer data)
{
  ProgressCall *call = data;
  call->func (call->fraction, call->object);
  return G_SOURCE_REMOVE;
}

/* Frees a delivered (or dropped) report. */
static void
progress_call_free (gpointer data)
{
  ProgressCall *call = data;
  g_clear_object (&call->object);
  g_free (call);
}

/* Posts @fraction to the caller's context. */
static void
report (Export *ex, double fraction)
{
  if (ex->progress == NULL)
    return;
  ProgressCall *call = g_new (ProgressCall, 1);
  call->func = ex->progress;
  call->object = ex->progress_object ? g_object_ref (ex->progress_object) : NULL;
  call->fraction = fraction;
  /* An idle source, not g_main_context_invoke(): that would run the
   * report right here when nobody holds the context. */
  GSource *source = g_idle_source_new ();
  g_source_set_priority (source, G_PRIORITY_DEFAULT);
  g_source_set_callback (source, progress_idle, call, progress_call_free);
  g_source_set_static_name (source, "[cowscope] graph export progress");
  g_source_attach (source, ex->context);
  g_source_unref (source);
}

/* cairo's write callback onto the GOutputStream; remembers the first error. */
static cairo_status_t
write_cb (void *closure, const unsigned char *data, unsigned int length)
{
  Export *ex = closure;
  if (ex->write_error != NULL)
    return CAIRO_STATUS_WRITE_ERROR;
  if (!g_output_stream_write_all (ex->out, data, length, NULL, NULL, &ex->write_error))
    return CAIRO_STATUS_WRITE_ERROR;
  return CAIRO_STATUS_SUCCESS;
}

/* Draws the legend, then the scene in horizontal bands (reporting progress
 * after each), onto @cr in export pixels. */
static void
export_draw (Export *ex, cairo_t *cr, double scale, GCancellable *cancellable)
{
  int w, h;
  double lw, lh;
  cowscope_graph_export_size (ex->scene, &w, &h, NULL);
  cowscope_graph_render_legend (NULL, 0, 0, FALSE, &lw, &lh);
  cairo_scale (cr, scale, scale);
  cairo_rectangle (cr, 0, 0, w / scale, h / scale);
  cairo_set_source_rgb (cr, 1, 1, 1);
  cairo_fill (cr);
  cowscope_graph_render_legend (cr, 8, 8, FALSE, NULL, NULL);
  cairo_translate (cr, 0, lh + 16);
  double sh = cowscope_graph_scene_get_height (ex->scene);
  double sw = cowscope_graph_scene_get_width (ex->scene);
  const int bands = 10;
  for (int b = 0; b < bands; b++)
    {
      if (g_cancellable_is_cancelled (cancellable))
        return;
      /* Each object is drawn in the band holding its top edge. */
      cairo_rectangle_t band = { 0, sh * b / bands, sw, sh / bands };
      cairo_save (cr);
      CowscopeGraphScene *scene = ex->scene;
      if (b == 0)
        {
          PangoLayout *cl = pango_cairo_create_layout (cr);
          for (guint i = 0; i < cowscope_graph_scene_get_n_clusters (scene); i++)
            draw_cluster (cr, cl, cowscope_graph_scene_get_cluster (scene, i), TRUE, FALSE);
          g_object_unref (cl);
        }
      for (guint i = 0; i < cowscope_graph_scene_get_n_edges (scene); i++)
        {
          const CowscopeSceneEdge *e = cowscope_graph_scene_get_edge (scene, i);
          double top = e->n_points ? MIN (e->points[1], e->points[2 * (e->n_points - 1) + 1]) : 0;
          if (top >= band.y && (top < band.y + band.height || b == bands - 1))
            draw_edge (cr, e, FALSE);
        }
      cairo_restore (cr);
      report (ex, (b + 0.5) / (bands + 1));
    }
  PangoLayout *layout = pango_cairo_create_layout (cr);
  for (guint i = 0; i < cowscope_graph_scene_get_n_edges (ex->scene); i++)
    {
      const CowscopeSceneEdge *e = cowscope_graph_scene_get_edge (ex->scene, i);
      if (COWSCOPE_EDGE_KIND_IS_CROSS_PROCESS (e->kind))
        draw_edge_label (cr, layout, ex->scene, e, FALSE);
    }
  for (guint i = 0; i < cowscope_graph_scene_get_n_nodes (ex->scene); i++)
    draw_node (cr, layout, cowscope_graph_scene_get_node (ex->scene, i), TRUE, FALSE);
  g_object_unref (layout);
}

/* The export thread: replaces the file, draws, finishes the surface. */
static void
export_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  Export *ex = task_data;
  GError *error = NULL;
  int w, h;
  double scale;

  ex->out = G_OUTPUT_STREAM (g_file_replace (ex->file, NULL, FALSE, G_FILE_CREATE_REPLACE_DESTINATION,
                                             cancellable, &error));
  if (ex->out == NULL)
    {
      g_task_return_error (task, error);
      return;
    }
  cowscope_graph_export_size (ex->scene, &w, &h, &scale);
  cairo_surface_t *surface;
  if (ex->format == COWSCOPE_GRAPH_EXPORT_SVG)
    surface = cairo_svg_surface_create_for_stream (write_cb, ex, w, h);
  else
    surface = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, w, h);
  cairo_t *cr = cairo_create (surface);
  export_draw (ex, cr, scale, cancellable);
  cairo_destroy (cr);
  if (ex->format == COWSCOPE_GRAPH_EXPORT_PNG && !g_cancellable_is_cancelled (cancellable))
    cairo_surface_write_to_png_stream (surface, write_cb, ex);
  cairo_surface_finish (surface);
  cairo_status_t status = cairo_surface_status (surface);
  cairo_surface_destroy (surface);
  report (ex, 1.0);

  if (g_cancellable_set_error_if_cancelled (cancellable, &error))
    {
      g_output_stream_close (ex->out, NULL, NULL);
      g_task_return_error (task, error);
      return;
    }
  if (ex->write_error != NULL)
    {
      g_task_return_error (task, g_steal_pointer (&ex->write_error));
      return;
    }
  if (status != CAIRO_STATUS_SUCCESS)
    {
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_FAILED, _("Drawing failed: %s"),
                               cairo_status_to_string (status));
      return;
    }
  if (!g_output_stream_close (ex->out, cancellable, &error))
    {
      g_task_return_error (task, error);
      return;
    }
  g_task_return_boolean (task, TRUE);
}

void
cowscope_graph_export_async (CowscopeGraphScene *scene, GFile *file,
                             CowscopeGraphExportFormat format,
                             CowscopeGraphExportProgress progress, GObject *progress_object,
                             GCancellable *cancellable, GAsyncReadyCallback callback,
                             gpointer user_data)
{
  g_return_if_fail (COWSCOPE_IS_GRAPH_SCENE (scene));
  g_return_if_fail (G_IS_FILE (file));
  Export *ex = g_new0 (Export, 1);
  ex->scene = g_object_ref (scene);
  ex->file = g_object_ref (file);
  ex->format = format;
  ex->progress = progress;
  ex->progress_object = progress_object ? g_object_ref (progress_object) : NULL;
  ex->context = g_main_context_ref_thread_default ();
  GTask *task = g_task_new (NULL, cancellable, callback, user_data);
  g_task_set_source_tag (task, cowscope_graph_export_async);
  g_task_set_task_data (task, ex, export_free);
  g_task_run_in_thread (task, export_thread);
  g_object_unref (task);
}

gboolean
cowscope_graph_export_finish (GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, NULL), FALSE);
  return g_task_propagate_boolean (G_TASK (result), error);
}
