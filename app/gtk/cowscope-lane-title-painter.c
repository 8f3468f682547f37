/* cowscope-lane-title-painter.c — a lane's gutter node (see
 * cowscope-lane-painter.h). */
#include "cowscope-lane-painter.h"

#include "cowscope-timeline-format.h"

#define TITLE_X 10
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

GskRenderNode *
cowscope_lane_title_paint (CowscopeTimelineLane *lane, const CowscopeTimelinePalette *palette,
                           int width, int height, PangoLayout *layout)
{
  g_return_val_if_fail (COWSCOPE_IS_TIMELINE_LANE (lane), NULL);
  g_return_val_if_fail (palette != NULL && PANGO_IS_LAYOUT (layout), NULL);
  GtkSnapshot *snapshot = gtk_snapshot_new ();
  GdkRGBA text = cowscope_timeline_palette_fg (palette, 0.85f);
  GdkRGBA dim = cowscope_timeline_palette_fg (palette, 0.5f);
  PangoAttrList *font = pango_layout_get_attributes (layout);
  if (font != NULL)
    pango_attr_list_ref (font);
  pango_layout_set_width (layout, (width - 16) * PANGO_SCALE);
  pango_layout_set_ellipsize (layout, PANGO_ELLIPSIZE_END);

  pango_layout_set_text (layout, cowscope_timeline_lane_get_title (lane), -1);
  if (cowscope_timeline_lane_get_kind (lane) == COWSCOPE_LANE_PROCESS)
    {
      /* A process heads the thread lanes below it: bold. */
      PangoAttrList *bold = font != NULL ? pango_attr_list_copy (font) : pango_attr_list_new ();
      pango_attr_list_insert (bold, pango_attr_weight_new (PANGO_WEIGHT_BOLD));
      pango_layout_set_attributes (layout, bold);
      pango_attr_list_unref (bold);
    }
  int lh;
  pango_layout_get_pixel_size (layout, NULL, &lh);
  append_text (snapshot, layout, TITLE_X, TITLE_Y, &text);
  pango_layout_set_attributes (layout, font);

  g_autofree char *sub = cowscope_timeline_format_lane_subtitle (lane);
  if (sub != NULL && height >= 2 * lh + 4)
    {
      pango_layout_set_text (layout, sub, -1);
      append_text (snapshot, layout, TITLE_X, TITLE_Y + lh, &dim);
    }
  pango_layout_set_width (layout, -1);
  pango_layout_set_ellipsize (layout, PANGO_ELLIPSIZE_NONE);
  if (font != NULL)
    pango_attr_list_unref (font);
  return cowscope_lane_paint_finish (snapshot);
}
