/* cowscope-call-node.h — one node of a copy call tree as a GObject, for
 * list widgets (GtkTreeListModel rows, sorters on its properties).
 *
 * A light handle on an immutable CowscopeCallTree: its properties are the
 * node's frame and its total and self weights (cowscope-call-tree.h). */
#pragma once

#include <gio/gio.h>

#include "cowscope-call-tree.h"

G_BEGIN_DECLS

#define COWSCOPE_TYPE_CALL_NODE (cowscope_call_node_get_type ())
G_DECLARE_FINAL_TYPE (CowscopeCallNode, cowscope_call_node, COWSCOPE, CALL_NODE, GObject)

CowscopeCallNode *cowscope_call_node_new (CowscopeCallTree *tree, guint node);

CowscopeCallTree *cowscope_call_node_get_tree (CowscopeCallNode *self);
guint cowscope_call_node_get_node (CowscopeCallNode *self);

/* The frame's display text ("update_weights (train.c:88)"), or "All copies"
 * for a root ("All copies"). */
const char *cowscope_call_node_get_display (CowscopeCallNode *self);

/* A new list of the node's children (CowscopeCallNode, heaviest first),
 * or NULL when it has none (what GtkTreeListModel asks of a leaf). */
GListModel *cowscope_call_node_list_children (CowscopeCallNode *self);

G_END_DECLS
