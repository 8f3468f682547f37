/* cowscope-timeline-legend.h — what the copy timeline's colours mean: a
 * compact grid of swatches and names (copies, steals, lazy clones,
 * warnings, ranges, IPC, CUDA work, counters, the cursor and highlights),
 * shown in a popover from the timeline's toolbar so that it never covers
 * a lane.  The swatches are the timeline's own named colours
 * (cowscope-timeline-palette.h), so they follow the dark style. */
#pragma once

#include <gtk/gtk.h>

#include "cowscope-session-types.h"
#include "cowscope-timeline-palette.h"

G_BEGIN_DECLS

#define COWSCOPE_TYPE_TIMELINE_LEGEND (cowscope_timeline_legend_get_type ())
G_DECLARE_FINAL_TYPE (CowscopeTimelineLegend, cowscope_timeline_legend, COWSCOPE,
                      TIMELINE_LEGEND, GtkWidget)

GtkWidget *cowscope_timeline_legend_new (void);

/* The entries, in order: each one's name and the colour its swatch has
 * now (for tests). */
guint cowscope_timeline_legend_get_n_entries (CowscopeTimelineLegend *self);
const char *cowscope_timeline_legend_get_entry (CowscopeTimelineLegend *self, guint i,
                                                GdkRGBA *color);
/* The item kind entry @i stands for, or -1 (counters, cursor...). */
int cowscope_timeline_legend_get_entry_kind (CowscopeTimelineLegend *self, guint i);

G_END_DECLS
