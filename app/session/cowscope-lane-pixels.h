/* cowscope-lane-pixels.h — the pixel geometry of a timeline query and the
 * per-pixel accumulator that turns instants and partial sums into items
 * (private to the session model; shared by the in-memory lane index and
 * the lazily decoded packed lanes, so that both give the same items). */
#pragma once

#include <glib.h>
#include <math.h>
#include <string.h>

#include "cowscope-timeline-item.h"

G_BEGIN_DECLS

/* Pixel geometry of a window: pixel p is [edge (p), edge (p + 1)). */
typedef struct {
  gint64 t0, t1;
  guint width;
  double ns_per_px;
} CowscopePixels;

static inline void
cowscope_pixels_init (CowscopePixels *px, gint64 t0, gint64 t1, guint width)
{
  px->t0 = t0;
  px->t1 = t1;
  px->width = MIN (width, G_MAXUINT16);
  px->ns_per_px = (double) (t1 - t0) / px->width;
}

/* The left edge of pixel @p; edge (0) = t0, edge (width) = t1, and edges
 * never decrease. */
static inline gint64
cowscope_pixels_edge (const CowscopePixels *px, guint p)
{
  if (p >= px->width)
    return px->t1;
  return px->t0 + (gint64) floor ((double) p * px->ns_per_px);
}

/* The pixel that contains @t (t0 <= t < t1). */
static inline guint
cowscope_pixels_of (const CowscopePixels *px, gint64 t)
{
  double guess = floor ((double) (t - px->t0) / px->ns_per_px);
  guint p = guess < 0 ? 0 : guess >= px->width ? px->width - 1 : (guint) guess;
  while (p + 1 < px->width && cowscope_pixels_edge (px, p + 1) <= t)
    p++;
  while (p > 0 && cowscope_pixels_edge (px, p) > t)
    p--;
  return p;
}

/* Sums what falls in one pixel, fed in time order, then appends the
 * pixel's item: the instant itself when alone, else a bucket (count,
 * bytes, most frequent kind, every kind present). */
typedef struct {
  const CowscopePixels *px;
  GArray *items;            /* CowscopeTimelineItem */
  gint p;                   /* the pixel being summed, -1 before the first */
  gint64 left, right;       /* its edges */
  guint32 count;
  guint32 counts[COWSCOPE_N_ITEM_KINDS];
  guint64 bytes;
  gint64 ts, id;            /* the instant, while count is 1 */
  guint8 kind;
} CowscopePixelSum;

static inline void
cowscope_pixel_sum_init (CowscopePixelSum *sum, const CowscopePixels *px, GArray *items)
{
  sum->px = px;
  sum->items = items;
  sum->p = -1;
  sum->left = sum->right = G_MININT64;
  sum->count = 0;
}

/* Appends the item of the pixel summed so far (if any). */
static inline void
cowscope_pixel_sum_flush (CowscopePixelSum *sum)
{
  if (sum->p < 0 || sum->count == 0)
    return;
  CowscopeTimelineItem item = { 0 };
  item.pixel = (guint16) sum->p;
  item.count = sum->count;
  item.bytes = sum->bytes;
  if (sum->count == 1)
    {
      item.start_ns = item.end_ns = sum->ts;
      item.id = sum->id;
      item.kind = sum->kind;
      item.kinds = 1u << MIN (sum->kind, COWSCOPE_N_ITEM_KINDS - 1);
    }
  else
    {
      guint best = 0;
      for (guint k = 1; k < COWSCOPE_N_ITEM_KINDS; k++)
        if (sum->counts[k] > sum->counts[best])
          best = k;
      for (guint k = 0; k < COWSCOPE_N_ITEM_KINDS; k++)
        if (sum->counts[k] > 0)
          item.kinds |= 1u << k;
      item.start_ns = sum->left;
      item.end_ns = sum->right;
      item.id = -1;
      item.kind = (guint16) best;
    }
  g_array_append_val (sum->items, item);
  sum->count = 0;
}

/* Makes pixel @p (not before the current one) the one being summed. */
static inline void
cowscope_pixel_sum_move (CowscopePixelSum *sum, guint p)
{
  if ((gint) p == sum->p)
    return;
  cowscope_pixel_sum_flush (sum);
  sum->p = (gint) p;
  sum->left = cowscope_pixels_edge (sum->px, p);
  sum->right = cowscope_pixels_edge (sum->px, p + 1);
  sum->count = 0;
  sum->bytes = 0;
  memset (sum->counts, 0, sizeof sum->counts);
}

/* Adds one instant at @ts (t0 <= ts < t1, not before the last one). */
static inline void
cowscope_pixel_sum_add (CowscopePixelSum *sum, gint64 ts, gint64 id, guint8 kind,
                        guint64 bytes)
{
  if (ts >= sum->right || ts < sum->left)
    cowscope_pixel_sum_move (sum, cowscope_pixels_of (sum->px, ts));
  if (sum->count == 0)
    {
      sum->ts = ts;
      sum->id = id;
      sum->kind = kind;
    }
  sum->count++;
  sum->counts[kind < COWSCOPE_N_ITEM_KINDS ? kind : 0]++;
  sum->bytes += bytes;
}

/* Adds @n >= 2 instants that all fall in pixel @p: their counts per kind
 * and their bytes. */
static inline void
cowscope_pixel_sum_add_many (CowscopePixelSum *sum, guint p, guint32 n,
                             const guint32 counts[COWSCOPE_N_ITEM_KINDS], guint64 bytes)
{
  cowscope_pixel_sum_move (sum, p);
  sum->count += n;
  for (guint k = 0; k < COWSCOPE_N_ITEM_KINDS; k++)
    sum->counts[k] += counts[k];
  sum->bytes += bytes;
}

/* As add_many(), with counts per kind in bytes (a block of the packed
 * lanes). */
static inline void
cowscope_pixel_sum_add_many8 (CowscopePixelSum *sum, guint p, guint32 n,
                              const guint8 counts[COWSCOPE_N_ITEM_KINDS], guint64 bytes)
{
  cowscope_pixel_sum_move (sum, p);
  sum->count += n;
  for (guint k = 0; k < COWSCOPE_N_ITEM_KINDS; k++)
    sum->counts[k] += counts[k];
  sum->bytes += bytes;
}

G_END_DECLS
