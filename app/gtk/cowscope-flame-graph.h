/* cowscope-flame-graph.h — a copy call tree drawn as a flame graph.
 *
 * One row per depth from the root down (an icicle, as Perfetto and
 * speedscope draw it), each node as wide as its share of its parent under
 * the chosen metric (bytes copied, events or time), heaviest child first.
 * Clicking a node selects it and zooms into it (its ancestors stay across
 * the top; clicking one zooms out to it); double-clicking activates it.
 * Colours come from the style sheets (flame_* in style.css). */
#pragma once

#include <gtk/gtk.h>

#include "cowscope-call-tree.h"

G_BEGIN_DECLS

#define COWSCOPE_TYPE_FLAME_GRAPH (cowscope_flame_graph_get_type ())
G_DECLARE_FINAL_TYPE (CowscopeFlameGraph, cowscope_flame_graph, COWSCOPE, FLAME_GRAPH, GtkWidget)

GtkWidget *cowscope_flame_graph_new (void);

/* Shows @tree (NULL: nothing) in @direction, zoomed out. */
void cowscope_flame_graph_set_tree (CowscopeFlameGraph *self, CowscopeCallTree *tree,
                                    CowscopeCallTreeDirection direction);
CowscopeCallTree *cowscope_flame_graph_get_tree (CowscopeFlameGraph *self);

void cowscope_flame_graph_set_metric (CowscopeFlameGraph *self, CowscopeCallMetric metric);

/* The selected node (outlined), or COWSCOPE_CALL_TREE_NO_NODE.  Setting
 * it emits nothing; the zoom goes out to the root when the node is not
 * inside it. */
guint cowscope_flame_graph_get_selected (CowscopeFlameGraph *self);
void cowscope_flame_graph_set_selected (CowscopeFlameGraph *self, guint node);

/* The node drawn full width (its ancestors above it), as a click does;
 * COWSCOPE_CALL_TREE_NO_NODE or the root zooms out. */
guint cowscope_flame_graph_get_zoom (CowscopeFlameGraph *self);
void cowscope_flame_graph_zoom_to (CowscopeFlameGraph *self, guint node);

/* The node drawn at (@x, @y) in widget coordinates, or
 * COWSCOPE_CALL_TREE_NO_NODE. */
guint cowscope_flame_graph_node_at (CowscopeFlameGraph *self, double x, double y);

/* Where @node is drawn, in widget coordinates: FALSE when it is not
 * (narrower than a pixel, or outside the zoom). */
gboolean cowscope_flame_graph_get_node_bounds (CowscopeFlameGraph *self, guint node,
                                               graphene_rect_t *bounds);

G_END_DECLS
