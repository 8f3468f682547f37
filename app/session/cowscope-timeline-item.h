/* cowscope-timeline-item.h — what a timeline query returns per lane: plain
 * structs, so a window of thousands of items costs no allocations each. */
#pragma once

#include <glib.h>

#include "cowscope-session-types.h"

G_BEGIN_DECLS

/* One thing to draw.  A single event (count 1) carries its own time (and
 * end, for a span) and its id (events.seq, or cuda_activity.id on a CUDA
 * lane); a bucket (count > 1, id -1) stands for every item whose start
 * falls in pixel @pixel, and its [start_ns, end_ns) is that pixel. */
typedef struct {
  gint64 start_ns;
  gint64 end_ns;
  gint64 id;
  guint64 bytes;   /* total bytes of the items (copies, allocations, ...) */
  guint32 count;
  guint16 kind;    /* CowscopeItemKind; for a bucket, the most frequent */
  guint16 pixel;   /* x of the pixel the item starts in, 0..width-1 */
  guint32 kinds;   /* bit k: an item of kind k is among them (a bucket hides
                    * no copy behind its most frequent kind) */
} CowscopeTimelineItem;

/* What a lane's instants (not its spans) that start in a time range add
 * up to, per CowscopeItemKind: how many there are and the bytes they
 * carry.  Whole blocks of the lane are summed from their kept totals. */
typedef struct {
  guint64 count[COWSCOPE_N_ITEM_KINDS];
  guint64 bytes[COWSCOPE_N_ITEM_KINDS];
} CowscopeKindSums;

/* A counter track's value over one pixel (steps between samples). */
typedef struct {
  gint64 start_ns;
  gint64 end_ns;
  double min;
  double max;
  double last;     /* value at the end of the pixel */
  guint16 pixel;
} CowscopeCounterSample;

G_END_DECLS
