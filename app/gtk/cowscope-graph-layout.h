/* cowscope-graph-layout.h — from a sharing graph to a drawable scene.
 *
 * Two steps, both off the main thread:
 *  1. aggregation: objects smaller than a size are hidden; more than
 *     `group_threshold` tensors viewing one storage become one group node
 *     ("×N tensors") unless that storage is expanded; when more than
 *     `max_nodes` remain, whole connected components are kept by priority
 *     (focused objects, then sharing, then bytes) and the rest are counted
 *     in one overflow node per process and kind, so a graph of 100,000
 *     live objects still lays out in a readable ~2,000 nodes;
 *  2. layout with Graphviz `dot` through libgvc (components packed in an
 *     array), read back as node rectangles and edge Béziers.
 * Graphviz is not thread-safe: every Graphviz call of the process runs on
 * one dedicated worker thread, which serves requests in order.  A request
 * whose GCancellable is cancelled before it runs is skipped, so a view
 * that cancels its previous request on each cursor move only pays for the
 * newest.
 */
#pragma once

#include <gio/gio.h>

#include "cowscope-copy-explanation.h"
#include "cowscope-graph-scene.h"

G_BEGIN_DECLS

#define COWSCOPE_GRAPH_DEFAULT_GROUP_THRESHOLD 50
#define COWSCOPE_GRAPH_DEFAULT_MAX_NODES 2000

typedef struct {
  guint64 min_bytes;        /* hide objects smaller than this (0: none) */
  guint group_threshold;    /* 0: COWSCOPE_GRAPH_DEFAULT_GROUP_THRESHOLD */
  guint max_nodes;          /* 0: COWSCOPE_GRAPH_DEFAULT_MAX_NODES */
  const CowscopeObjectRef *expanded; /* storages whose views are not grouped */
  guint n_expanded;
  const CowscopeObjectRef *focus;    /* objects never aggregated away */
  guint n_focus;
} CowscopeGraphLayoutOptions;

/* Lays out @graph (or, when @graph is NULL, first builds the graph of
 * @document at instant @t) on the layout thread; @callback runs in the
 * caller's thread-default main context.  @options is copied. */
void cowscope_graph_layout_async (CowscopeSessionDocument *document, gint64 t,
                                  CowscopeSharingGraph *graph,
                                  const CowscopeGraphLayoutOptions *options,
                                  GCancellable *cancellable, GAsyncReadyCallback callback,
                                  gpointer user_data);
CowscopeGraphScene *cowscope_graph_layout_finish (GAsyncResult *result, GError **error);

/* The same, blocking the calling thread (never the main thread of a UI)
 * until the layout thread has served the request: for benchmarks. */
CowscopeGraphScene *cowscope_graph_layout_sync (CowscopeSharingGraph *graph,
                                                const CowscopeGraphLayoutOptions *options,
                                                GError **error);

/* The "freed soon" horizon used for the graph of @document: 2% of the
 * session, at least 1 ms. */
gint64 cowscope_graph_layout_freed_soon_ns (CowscopeSessionDocument *document);

/* Whether the calling thread is the layout thread (for assertions). */
gboolean cowscope_graph_layout_is_layout_thread (void);

G_END_DECLS
