/* cowscope-sharing-graph-private.h — assembling a graph (the builder). */
#pragma once

#include "cowscope-sharing-graph.h"

G_BEGIN_DECLS

/* The name of string @name_id of @pid (from a TENSOR_NAME event), or NULL. */
typedef const char *(*CowscopeGraphNameFunc) (guint32 pid, gint64 name_id, gpointer user_data);

typedef struct {
  gint64 seq, time, checkpoint_seq;
  guint64 n_replayed;
  gint64 freed_soon_ns;     /* freed within this after @time: freed_soon */
  const guint *itemsizes;   /* by dtype (0: unknown); NULL: numel bytes */
  guint n_itemsizes;
  CowscopeGraphNameFunc name_func; /* labels of unnamed tensors with a name id */
  gpointer name_data;
} CowscopeGraphAssembleOptions;

/* The sharing graph of the live objects of @state: nodes sorted by
 * (kind, pid, id), node states, context refcounts, tensor bytes and the
 * edges (cowscope-sharing-graph.h says which); @state is not changed
 * (cowscope-graph-assembly.c). */
CowscopeSharingGraph *cowscope_sharing_graph_new_from_state (const CowscopeGraphState *state,
                                                             const CowscopeGraphAssembleOptions *options);

/* Graphs of @min_nodes nodes or more are assembled by two threads, each
 * task copying or linking @nodes_per_task nodes (16,384 and 4,096 unless
 * set; tests lower them to run that path on small graphs). */
void cowscope_graph_assembly_set_parallel (guint min_nodes, guint nodes_per_task);

/* Takes @nodes (CowscopeGraphNode), @edges (CowscopeGraphEdge) and
 * @labels (the strings the nodes' labels point into). */
CowscopeSharingGraph *cowscope_sharing_graph_new_take (GArray *nodes, GArray *edges,
                                                       GStringChunk *labels, gint64 seq,
                                                       gint64 time, gint64 checkpoint_seq,
                                                       guint64 n_replayed);

/* The same with the nodes' counts per kind known (sorted nodes: from
 * where each kind starts), without reading the nodes again. */
CowscopeSharingGraph *cowscope_sharing_graph_new_take_counted (GArray *nodes, GArray *edges,
                                                               GStringChunk *labels, gint64 seq,
                                                               gint64 time, gint64 checkpoint_seq,
                                                               guint64 n_replayed,
                                                               const guint counts[COWSCOPE_N_NODE_KINDS]);

/* Appends @nodes (sorted by pid, then id, of kinds after every node
 * already there) and @edges (node indices of the whole graph). */
void cowscope_sharing_graph_append (CowscopeSharingGraph *self, const CowscopeGraphNode *nodes,
                                    guint n_nodes, const CowscopeGraphEdge *edges,
                                    guint n_edges);
/* Names process @pid (copied). */
void cowscope_sharing_graph_set_process_label (CowscopeSharingGraph *self, guint32 pid,
                                               const char *label);

/* Adds the IPC nodes and edges at the graph's seq (cowscope-ipc-graph.c). */
gboolean cowscope_ipc_graph_augment (CowscopeSessionDocument *document,
                                     CowscopeSharingGraph *graph, GError **error);

/* The reconstruction itself (cowscope-graph-builder.c). */
CowscopeSharingGraph *cowscope_graph_builder_run (CowscopeSessionDocument *document,
                                                  gint64 seq, gint64 freed_soon_ns,
                                                  GCancellable *cancellable,
                                                  GError **error);
/* The same from checkpoint @cp_id (-1: from the start), which must be at
 * or before @seq, bypassing the document's cache (tests compare the two). */
CowscopeSharingGraph *cowscope_graph_builder_run_from (CowscopeSessionDocument *document,
                                                       gint64 seq, gint64 cp_id,
                                                       gint64 freed_soon_ns, GError **error);
/* Forgets the decoded checkpoints and the last state the builder keeps
 * for @document (the next build starts cold). */
void cowscope_graph_builder_clear_cache (CowscopeSessionDocument *document);
/* Keeps decoded checkpoints of @document up to @bytes (at least one;
 * 96 MiB unless set). */
void cowscope_graph_builder_set_cache_size (CowscopeSessionDocument *document, gsize bytes);

G_END_DECLS
