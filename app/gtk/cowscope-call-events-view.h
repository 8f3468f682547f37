/* cowscope-call-events-view.h — the events under one call tree node (its
 * copies, steals and eager fallbacks) as a table: time, kind, bytes,
 * operation, tensor (by name, as the graph shows it) and thread.
 *
 * The events are listed off the main thread, the first thousand in time
 * order, with how many there are and the largest of them all.
 * Activating a row emits "event-activated" with the event's seq. */
#pragma once

#include <gtk/gtk.h>

#include "cowscope-call-tree.h"
#include "cowscope-view-state.h"

G_BEGIN_DECLS

#define COWSCOPE_TYPE_CALL_EVENTS_VIEW (cowscope_call_events_view_get_type ())
G_DECLARE_FINAL_TYPE (CowscopeCallEventsView, cowscope_call_events_view, COWSCOPE,
                      CALL_EVENTS_VIEW, GtkWidget)

GtkWidget *cowscope_call_events_view_new (void);

/* Where times start and names come from (the session's view state). */
void cowscope_call_events_view_set_view_state (CowscopeCallEventsView *self,
                                               CowscopeViewState *state);

/* Lists the events of @node of @tree (NULL or COWSCOPE_CALL_TREE_NO_NODE:
 * none), replacing the list; "listed" is emitted when they are in. */
void cowscope_call_events_view_show (CowscopeCallEventsView *self, CowscopeCallTree *tree,
                                     guint node);
/* The node listed (or being listed), or COWSCOPE_CALL_TREE_NO_NODE. */
guint cowscope_call_events_view_get_node (CowscopeCallEventsView *self);
/* TRUE when the node's events are in ("ready" notifies). */
gboolean cowscope_call_events_view_get_ready (CowscopeCallEventsView *self);

/* The events listed (CowscopeCallEventItem), how many the node has in
 * all, and the seq of the largest of them (-1: none). */
GListModel *cowscope_call_events_view_get_events (CowscopeCallEventsView *self);
guint64 cowscope_call_events_view_get_n_events (CowscopeCallEventsView *self);
gint64 cowscope_call_events_view_get_largest_seq (CowscopeCallEventsView *self);

G_END_DECLS
