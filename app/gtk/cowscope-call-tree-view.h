/* cowscope-call-tree-view.h — where copies come from: the session's copy
 * call tree (cowscope-call-tree.h) as a tree table and a flame graph.
 *
 * Like Sysprof's callgraph: top-down or bottom-up, weighted by bytes
 * copied, events or time, by line or by function; it follows the view
 * state's selected time range (built in a worker thread when the view is
 * shown, and again when the range changes).  Selecting a node lists its events below and highlights the
 * storages they copied; activating a node (Enter, double-click) or one of
 * its events selects it in the view state (the largest event for a node)
 * and asks the window to show the timeline (the win.show-view action). */
#pragma once

#include <gtk/gtk.h>

#include "cowscope-call-tree.h"
#include "cowscope-view-state.h"

G_BEGIN_DECLS

#define COWSCOPE_TYPE_CALL_TREE_VIEW (cowscope_call_tree_view_get_type ())
G_DECLARE_FINAL_TYPE (CowscopeCallTreeView, cowscope_call_tree_view, COWSCOPE, CALL_TREE_VIEW,
                      GtkWidget)

GtkWidget *cowscope_call_tree_view_new (void);

void cowscope_call_tree_view_set_view_state (CowscopeCallTreeView *self, CowscopeViewState *state);
CowscopeViewState *cowscope_call_tree_view_get_view_state (CowscopeCallTreeView *self);

/* The tree shown (NULL while the first one is built). */
CowscopeCallTree *cowscope_call_tree_view_get_tree (CowscopeCallTreeView *self);
/* TRUE when no tree is being built or due ("ready" notifies). */
gboolean cowscope_call_tree_view_get_ready (CowscopeCallTreeView *self);

void cowscope_call_tree_view_set_direction (CowscopeCallTreeView *self,
                                            CowscopeCallTreeDirection direction);
CowscopeCallTreeDirection cowscope_call_tree_view_get_direction (CowscopeCallTreeView *self);
void cowscope_call_tree_view_set_metric (CowscopeCallTreeView *self, CowscopeCallMetric metric);
/* Shows the flame graph instead of the tree table. */
void cowscope_call_tree_view_set_flame (CowscopeCallTreeView *self, gboolean flame);

/* The selected node, or COWSCOPE_CALL_TREE_NO_NODE. */
guint cowscope_call_tree_view_get_selected (CowscopeCallTreeView *self);
/* Selects @node: expands the tree to it, scrolls to it, lists its events. */
void cowscope_call_tree_view_select (CowscopeCallTreeView *self, guint node);
/* Shows the call site @site (as the report names it) bottom-up and
 * selects it, once the tree is built; a toast says when the tree (its
 * range) has no copy there. */
void cowscope_call_tree_view_show_site (CowscopeCallTreeView *self, const CowscopeFrameRef *site);
/* Goes to the events of @node: as activating it does. */
void cowscope_call_tree_view_activate_node (CowscopeCallTreeView *self, guint node);

/* The events listed for the selected node (CowscopeCallEventItem), and
 * how many there are in all. */
GListModel *cowscope_call_tree_view_get_events (CowscopeCallTreeView *self);
guint64 cowscope_call_tree_view_get_n_events (CowscopeCallTreeView *self);

G_END_DECLS
