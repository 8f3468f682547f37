/* cowscope-timeline-toolbar.h — the copy timeline's toolbar:
 *
 *   find a tensor across time (its name, completed from the session's
 *   tensor names, or part of it): its tensors are highlighted, and Enter
 *   or the arrows step through their copy events on the timeline,
 *   selecting each (cowscope-tensor-search.h);
 *   the Lanes popover: a filter by process or thread, each lane shown or
 *   hidden and pinned or not, "Show All Lanes";
 *   the legend of the timeline's colours (cowscope-timeline-legend.h);
 *   "jump to the cursor", sensitive when the cursor is off screen.
 *
 * It acts on a CowscopeTimelineView, and adds "/" to it: focus the
 * search. */
#pragma once

#include <gtk/gtk.h>

#include "cowscope-timeline-view.h"

G_BEGIN_DECLS

#define COWSCOPE_TYPE_TIMELINE_TOOLBAR (cowscope_timeline_toolbar_get_type ())
G_DECLARE_FINAL_TYPE (CowscopeTimelineToolbar, cowscope_timeline_toolbar, COWSCOPE,
                      TIMELINE_TOOLBAR, GtkWidget)

GtkWidget *cowscope_timeline_toolbar_new (void);

CowscopeTimelineView *cowscope_timeline_toolbar_get_timeline (CowscopeTimelineToolbar *self);
void cowscope_timeline_toolbar_set_timeline (CowscopeTimelineToolbar *self,
                                             CowscopeTimelineView *timeline);

/* Searches for @text (as if typed) and steps to its next (@direction >
 * 0) or previous event; the answer comes back through the main loop. */
void cowscope_timeline_toolbar_search (CowscopeTimelineToolbar *self, const char *text,
                                       int direction);

/* TRUE once the last search has its answer; then how many tensors and
 * events it found, and the text shown beside the arrows. */
gboolean cowscope_timeline_toolbar_get_matches (CowscopeTimelineToolbar *self, guint *n_tensors,
                                                guint *n_events, const char **status);

/* The tensor names the search completes from (read when the search is
 * first focused or used), NULL until then. */
GStrv cowscope_timeline_toolbar_get_names (CowscopeTimelineToolbar *self);

G_END_DECLS
