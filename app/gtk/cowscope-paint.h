/* cowscope-paint.h — small GtkSnapshot helpers the timeline's painters,
 * ruler and overlays share: filled and outlined rectangles, and runs of
 * equal marks in neighbouring pixels merged into one node (a window of
 * thousands of one-pixel ticks becomes a few hundred nodes). */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

/* Appends a rectangle in @color. */
static inline void
cowscope_paint_rect (GtkSnapshot *snapshot, const GdkRGBA *color, float x, float y, float w,
                     float h)
{
  gtk_snapshot_append_color (snapshot, color, &GRAPHENE_RECT_INIT (x, y, w, h));
}

/* Appends an outline @width px wide of @color inside the rectangle. */
static inline void
cowscope_paint_outline (GtkSnapshot *snapshot, const GdkRGBA *color, float x, float y, float w,
                        float h, float width)
{
  GskRoundedRect r;
  gsk_rounded_rect_init_from_rect (&r, &GRAPHENE_RECT_INIT (x, y, w, h), 0);
  const float widths[4] = { width, width, width, width };
  const GdkRGBA colors[4] = { *color, *color, *color, *color };
  gtk_snapshot_append_border (snapshot, &r, widths, colors);
}

/* Marks added left to right; one that continues the pending one (same
 * colour pointer, row and height, touching) extends it. */
typedef struct {
  GtkSnapshot *snapshot;
  const GdkRGBA *color;   /* of the pending run; NULL: none */
  int x0, x1;
  float y, h;
} CowscopePaintRun;

/* Draws the pending run, if any. */
static inline void
cowscope_paint_run_flush (CowscopePaintRun *run)
{
  if (run->color != NULL && run->x1 > run->x0)
    cowscope_paint_rect (run->snapshot, run->color, run->x0, run->y, run->x1 - run->x0, run->h);
  run->color = NULL;
}

/* Adds [x0, x1) x [y, y + h) in @color. */
static inline void
cowscope_paint_run_add (CowscopePaintRun *run, const GdkRGBA *color, int x0, int x1, float y,
                        float h)
{
  if (run->color == color && run->y == y && run->h == h && x0 <= run->x1)
    {
      run->x1 = MAX (run->x1, x1);
      return;
    }
  cowscope_paint_run_flush (run);
  run->color = color;
  run->x0 = x0, run->x1 = x1, run->y = y, run->h = h;
}

G_END_DECLS
