/* cowscope-sharing-graph.c — the graph at one instant (see header). */
#include "cowscope-sharing-graph-private.h"

#include <string.h>

struct _CowscopeSharingGraph {
  GObject parent_instance;
  GArray *nodes;
  GArray *edges;
  GStringChunk *labels;
  gint64 seq, time, checkpoint_seq;
  guint64 n_replayed;
  guint counts[COWSCOPE_N_NODE_KINDS];
  GHashTable *process_labels; /* pid -> label; NULL until one is set */
};

enum {
  PROP_0,
  PROP_SEQ,
  PROP_TIME,
  PROP_N_NODES,
  PROP_N_EDGES,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

G_DEFINE_FINAL_TYPE (CowscopeSharingGraph, cowscope_sharing_graph, G_TYPE_OBJECT)

static void
cowscope_sharing_graph_finalize (GObject *object)
{
  CowscopeSharingGraph *self = COWSCOPE_SHARING_GRAPH (object);
  g_clear_pointer (&self->nodes, g_array_unref);
  g_clear_pointer (&self->edges, g_array_unref);
  g_clear_pointer (&self->labels, g_string_chunk_free);
  g_clear_pointer (&self->process_labels, g_hash_table_unref);
  G_OBJECT_CLASS (cowscope_sharing_graph_parent_class)->finalize (object);
}

static void
cowscope_sharing_graph_get_property (GObject *object, guint prop_id, GValue *value,
                                     GParamSpec *pspec)
{
  CowscopeSharingGraph *self = COWSCOPE_SHARING_GRAPH (object);
  switch (prop_id)
    {
    case PROP_SEQ:
      g_value_set_int64 (value, self->seq);
      break;
    case PROP_TIME:
      g_value_set_int64 (value, self->time);
      break;
    case PROP_N_NODES:
      g_value_set_uint (value, self->nodes->len);
      break;
    case PROP_N_EDGES:
      g_value_set_uint (value, self->edges->len);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
cowscope_sharing_graph_class_init (CowscopeSharingGraphClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  object_class->finalize = cowscope_sharing_graph_finalize;
  object_class->get_property = cowscope_sharing_graph_get_property;
  properties[PROP_SEQ] = g_param_spec_int64 ("seq", NULL, NULL, G_MININT64, G_MAXINT64, 0,
                                             G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  properties[PROP_TIME] = g_param_spec_int64 ("time", NULL, NULL, G_MININT64, G_MAXINT64, 0,
                                              G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  properties[PROP_N_NODES] = g_param_spec_uint ("n-nodes", NULL, NULL, 0, G_MAXUINT, 0,
                                                G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  properties[PROP_N_EDGES] = g_param_spec_uint ("n-edges", NULL, NULL, 0, G_MAXUINT, 0,
                                                G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
cowscope_sharing_graph_init (CowscopeSharingGraph *self)
{
  (void) self;
}

/* Takes the arrays and the counts of nodes per kind. */
CowscopeSharingGraph *
cowscope_sharing_graph_new_take_counted (GArray *nodes, GArray *edges, GStringChunk *labels,
                                         gint64 seq, gint64 time, gint64 checkpoint_seq,
                                         guint64 n_replayed,
                                         const guint counts[COWSCOPE_N_NODE_KINDS])
{
  CowscopeSharingGraph *self = g_object_new (COWSCOPE_TYPE_SHARING_GRAPH, NULL);
  self->nodes = nodes;
  self->edges = edges;
  self->labels = labels;
  self->seq = seq;
  self->time = time;
  self->checkpoint_seq = checkpoint_seq;
  self->n_replayed = n_replayed;
  memcpy (self->counts, counts, sizeof self->counts);
  return self;
}

/* Takes the arrays; counts nodes per kind. */
CowscopeSharingGraph *
cowscope_sharing_graph_new_take (GArray *nodes, GArray *edges, GStringChunk *labels,
                                 gint64 seq, gint64 time, gint64 checkpoint_seq,
                                 guint64 n_replayed)
{
  guint counts[COWSCOPE_N_NODE_KINDS] = { 0 };
  for (guint i = 0; i < nodes->len; i++)
    {
      guint8 kind = g_array_index (nodes, CowscopeGraphNode, i).kind;
      if (kind < COWSCOPE_N_NODE_KINDS)
        counts[kind]++;
    }
  return cowscope_sharing_graph_new_take_counted (nodes, edges, labels, seq, time,
                                                  checkpoint_seq, n_replayed, counts);
}

/* Builds synchronously; see cowscope-graph-builder.c. */
CowscopeSharingGraph *
cowscope_sharing_graph_build (CowscopeSessionDocument *document, gint64 seq,
                              gint64 freed_soon_ns, GCancellable *cancellable, GError **error)
{
  g_return_val_if_fail (COWSCOPE_IS_SESSION_DOCUMENT (document), NULL);
  CowscopeSharingGraph *graph =
    cowscope_graph_builder_run (document, seq, freed_soon_ns, cancellable, error);
  if (graph != NULL && !cowscope_ipc_graph_augment (document, graph, error))
    g_clear_object (&graph);
  return graph;
}

typedef struct {
  gint64 t;
  gint64 freed_soon_ns;
} BuildRequest;

static void
build_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  CowscopeSessionDocument *document = source;
  BuildRequest *request = task_data;
  GError *error = NULL;
  gint64 seq = cowscope_session_document_seq_at_time (document, request->t, &error);
  CowscopeSharingGraph *graph = NULL;
  if (error == NULL)
    graph = cowscope_graph_builder_run (document, seq, request->freed_soon_ns, cancellable,
                                        &error);
  if (graph != NULL && !cowscope_ipc_graph_augment (document, graph, &error))
    g_clear_object (&graph);
  if (graph == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, graph, g_object_unref);
}

/* Runs the build in a GTask thread. */
void
cowscope_sharing_graph_build_at_time_async (CowscopeSessionDocument *document, gint64 t,
                                            gint64 freed_soon_ns, GCancellable *cancellable,
                                            GAsyncReadyCallback callback, gpointer user_data)
{
  g_return_if_fail (COWSCOPE_IS_SESSION_DOCUMENT (document));
  g_autoptr (GTask) task = g_task_new (document, cancellable, callback, user_data);
  g_task_set_source_tag (task, cowscope_sharing_graph_build_at_time_async);
  g_task_set_name (task, "[cowscope] sharing graph");
  BuildRequest *request = g_new (BuildRequest, 1);
  request->t = t;
  request->freed_soon_ns = freed_soon_ns;
  g_task_set_task_data (task, request, g_free);
  g_task_run_in_thread (task, build_thread);
}

/* The graph, or NULL with @error. */
CowscopeSharingGraph *
cowscope_sharing_graph_build_finish (GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (G_IS_TASK (result), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}

/* The event the graph is after. */
gint64
cowscope_sharing_graph_get_seq (CowscopeSharingGraph *self)
{
  g_return_val_if_fail (COWSCOPE_IS_SHARING_GRAPH (self), 0);
  return self->seq;
}

/* The instant shown (that event's time). */
gint64
cowscope_sharing_graph_get_time (CowscopeSharingGraph *self)
{
  g_return_val_if_fail (COWSCOPE_IS_SHARING_GRAPH (self), 0);
  return self->time;
}

/* The checkpoint's seq, or -1 when the build started from empty. */
gint64
cowscope_sharing_graph_get_checkpoint_seq (CowscopeSharingGraph *self)
{
  g_return_val_if_fail (COWSCOPE_IS_SHARING_GRAPH (self), -1);
  return self->checkpoint_seq;
}

/* Events replayed after the checkpoint. */
guint64
cowscope_sharing_graph_get_n_replayed (CowscopeSharingGraph *self)
{
  g_return_val_if_fail (COWSCOPE_IS_SHARING_GRAPH (self), 0);
  return self->n_replayed;
}

/* Number of nodes. */
guint
cowscope_sharing_graph_get_n_nodes (CowscopeSharingGraph *self)
{
  g_return_val_if_fail (COWSCOPE_IS_SHARING_GRAPH (self), 0);
  return self->nodes->len;
}

/* Node @index (ordered by kind, pid, id), or NULL past the end. */
const CowscopeGraphNode *
cowscope_sharing_graph_get_node (CowscopeSharingGraph *self, guint index)
{
  g_return_val_if_fail (COWSCOPE_IS_SHARING_GRAPH (self), NULL);
  if (index >= self->nodes->len)
    return NULL;
  return &g_array_index (self->nodes, CowscopeGraphNode, index);
}

/* Number of edges. */
guint
cowscope_sharing_graph_get_n_edges (CowscopeSharingGraph *self)
{
  g_return_val_if_fail (COWSCOPE_IS_SHARING_GRAPH (self), 0);
  return self->edges->len;
}

/* Edge @index, or NULL past the end. */
const CowscopeGraphEdge *
cowscope_sharing_graph_get_edge (CowscopeSharingGraph *self, guint index)
{
  g_return_val_if_fail (COWSCOPE_IS_SHARING_GRAPH (self), NULL);
  if (index >= self->edges->len)
    return NULL;
  return &g_array_index (self->edges, CowscopeGraphEdge, index);
}

/* Nodes of one kind. */
guint
cowscope_sharing_graph_count_nodes (CowscopeSharingGraph *self, CowscopeNodeKind kind)
{
  g_return_val_if_fail (COWSCOPE_IS_SHARING_GRAPH (self), 0);
  g_return_val_if_fail (kind < COWSCOPE_N_NODE_KINDS, 0);
  return self->counts[kind];
}

/* Nodes are sorted by (kind, pid, id): a binary search. */
gint
cowscope_sharing_graph_lookup (CowscopeSharingGraph *self, CowscopeNodeKind kind, guint32 pid,
                               guint64 id)
{
  g_return_val_if_fail (COWSCOPE_IS_SHARING_GRAPH (self), -1);
  const CowscopeGraphNode *nodes = (const CowscopeGraphNode *) self->nodes->data;
  guint lo = 0, hi = self->nodes->len;
  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;
      const CowscopeGraphNode *n = &nodes[mid];
      int c = n->kind != kind ? (n->kind < kind ? -1 : 1)
              : n->pid != pid ? (n->pid < pid ? -1 : 1)
              : n->id != id   ? (n->id < id ? -1 : 1)
                              : 0;
      if (c == 0)
        return (gint) mid;
      if (c < 0)
        lo = mid + 1;
      else
        hi = mid;
    }
  return -1;
}

/* Appends after the existing nodes: the caller keeps the sort order. */
void
cowscope_sharing_graph_append (CowscopeSharingGraph *self, const CowscopeGraphNode *nodes,
                               guint n_nodes, const CowscopeGraphEdge *edges, guint n_edges)
{
  g_return_if_fail (COWSCOPE_IS_SHARING_GRAPH (self));
  g_array_append_vals (self->nodes, nodes, n_nodes);
  g_array_append_vals (self->edges, edges, n_edges);
  for (guint i = 0; i < n_nodes; i++)
    if (nodes[i].kind < COWSCOPE_N_NODE_KINDS)
      self->counts[nodes[i].kind]++;
}

void
cowscope_sharing_graph_set_process_label (CowscopeSharingGraph *self, guint32 pid,
                                          const char *label)
{
  g_return_if_fail (COWSCOPE_IS_SHARING_GRAPH (self));
  if (self->process_labels == NULL)
    self->process_labels = g_hash_table_new_full (g_direct_hash, g_direct_equal, NULL, g_free);
  g_hash_table_replace (self->process_labels, GUINT_TO_POINTER (pid), g_strdup (label));
}

/* Nodes are sorted by kind first, so pids repeat per kind: a set. */
guint
cowscope_sharing_graph_get_n_processes (CowscopeSharingGraph *self)
{
  g_return_val_if_fail (COWSCOPE_IS_SHARING_GRAPH (self), 0);
  g_autoptr (GHashTable) pids = g_hash_table_new (g_direct_hash, g_direct_equal);
  for (guint i = 0; i < self->nodes->len; i++)
    g_hash_table_add (pids, GUINT_TO_POINTER (g_array_index (self->nodes, CowscopeGraphNode, i).pid));
  return g_hash_table_size (pids);
}

const char *
cowscope_sharing_graph_get_process_label (CowscopeSharingGraph *self, guint32 pid)
{
  g_return_val_if_fail (COWSCOPE_IS_SHARING_GRAPH (self), NULL);
  if (self->process_labels == NULL)
    return NULL;
  return g_hash_table_lookup (self->process_labels, GUINT_TO_POINTER (pid));
}
