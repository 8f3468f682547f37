/* cowscope-lane-title-painter.c — a lane's label node (see
 * cowscope-lane-painter.h). */
#include "cowscope-lane-painter.h"

#include "cowscope-paint.h"

#define TITLE_Y 3

/* Appends @layout's text at (@x, @y) in @color. */
static void
append_text (GtkSnapshot *snapshot, PangoLayout *layout, float x, float y, const GdkRGBA *color)
{
  gtk_snapshot_save (snapshot);
  gtk_snapshot_translate (snapshot, &GRAPHENE_POINT_INIT (x, y));
  gtk_snapshot_append_layout (snapshot, layout, color);
  gtk_snapshot_restore (snapshot);
}

/* A triangle pointing right (folded) or down (open), centred in a
 * @size-pixel square at (@x, @y). */
static void
draw_expander (GtkSnapshot *snapshot, gboolean open, float x, float y, float size,
               const GdkRGBA *color)
{
  cairo_t *cr = gtk_snapshot_append_cairo (snapshot, &GRAPHENE_RECT_INIT (x, y, size, size));
  double c = size / 2, r = size * 0.3;
  if (open)
    {
      cairo_move_to (cr, x + c - r, y + c - r * 0.6);
      cairo_line_to (cr, x + c + r, y + c - r * 0.6);
      cairo_line_to (cr, x + c, y + c + r * 0.8);
    }
  else
    {
      cairo_move_to (cr, x + c - r * 0.6, y + c - r);
      cairo_line_to (cr, x + c - r * 0.6, y + c + r);
      cairo_line_to (cr, x + c + r * 0.8, y + c);
    }
  cairo_close_path (cr);
  gdk_cairo_set_source_rgba (cr, color);
  cairo_fill (cr);
  cairo_destroy (cr);
}

GskRenderNode *
cowscope_lane_title_paint (const CowscopeLaneLabel *label, const CowscopeTimelinePalette *palette,
                           int width, int height, PangoLayout *layout, guint *ellipsized)
{
  g_return_val_if_fail (label != NULL && label->name != NULL, NULL);
  g_return_val_if_fail (palette != NULL && PANGO_IS_LAYOUT (layout), NULL);
  GtkSnapshot *snapshot = gtk_snapshot_new ();
  GdkRGBA text = cowscope_timeline_palette_fg (palette, 0.85f);
  GdkRGBA dim = cowscope_timeline_palette_fg (palette, 0.55f);
  guint cut = 0;
  PangoAttrList *font = pango_layout_get_attributes (layout);
  if (font != NULL)
    pango_attr_list_ref (font);
  float x = label->expander >= 0 ? COWSCOPE_LANE_LABEL_EXPANDER_X : COWSCOPE_LANE_LABEL_X;
  int text_width = MAX (width - (int) x - COWSCOPE_LANE_LABEL_PADDING, 1);
  pango_layout_set_width (layout, text_width * PANGO_SCALE);
  pango_layout_set_ellipsize (layout, PANGO_ELLIPSIZE_END);

  if (label->pinned)
    cowscope_paint_rect (snapshot, &palette->accent, 0, 1, 3, height - 2);
  pango_layout_set_text (layout, label->name, -1);
  if (label->bold)
    {
      PangoAttrList *bold = font != NULL ? pango_attr_list_copy (font) : pango_attr_list_new ();
      pango_attr_list_insert (bold, pango_attr_weight_new (PANGO_WEIGHT_BOLD));
      pango_layout_set_attributes (layout, bold);
      pango_attr_list_unref (bold);
    }
  int lh;
  pango_layout_get_pixel_size (layout, NULL, &lh);
  if (pango_layout_is_ellipsized (layout))
    cut |= 1;
  append_text (snapshot, layout, x, TITLE_Y, &text);
  pango_layout_set_attributes (layout, font);
  if (label->expander >= 0)
    draw_expander (snapshot, label->expander == 1, 5, TITLE_Y + (lh - 14) / 2.0f, 14, &dim);

  if (label->detail != NULL && height >= 2 * lh + 4)
    {
      pango_layout_set_text (layout, label->detail, -1);
      if (pango_layout_is_ellipsized (layout))
        cut |= 2;
      append_text (snapshot, layout, x, TITLE_Y + lh, &dim);
    }
  pango_layout_set_width (layout, -1);
  pango_layout_set_ellipsize (layout, PANGO_ELLIPSIZE_NONE);
  if (font != NULL)
    pango_attr_list_unref (font);
  if (ellipsized != NULL)
    *ellipsized = cut;
  return cowscope_lane_paint_finish (snapshot);
}
