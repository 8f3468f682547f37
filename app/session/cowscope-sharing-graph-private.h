/* cowscope-sharing-graph-private.h — assembling a graph (the builder). */
#pragma once

#include "cowscope-sharing-graph.h"

G_BEGIN_DECLS

/* Takes @nodes (CowscopeGraphNode), @edges (CowscopeGraphEdge) and
 * @labels (the strings the nodes' labels point into). */
CowscopeSharingGraph *cowscope_sharing_graph_new_take (GArray *nodes, GArray *edges,
                                                       GStringChunk *labels, gint64 seq,
                                                       gint64 time, gint64 checkpoint_seq,
                                                       guint64 n_replayed);

/* The reconstruction itself (cowscope-graph-builder.c). */
CowscopeSharingGraph *cowscope_graph_builder_run (CowscopeSessionDocument *document,
                                                  gint64 seq, gint64 freed_soon_ns,
                                                  GCancellable *cancellable,
                                                  GError **error);

G_END_DECLS
