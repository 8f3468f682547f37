/* cowscope-graph-assembly.c — the sharing graph of a graph state (the
 * session format's live objects, cowscope-graph-state.h): node states,
 * context refcounts, tensor bytes and the edges that
 * cowscope-sharing-graph.h lists. */
#include "cowscope-sharing-graph-private.h"

#include <string.h>

typedef struct {
  CowscopeGraphStateIndex state;
  const guint32 *where; /* slot index -> node index, G_MAXUINT32: dead */
  const CowscopeGraphNode *nodes;
} Index;

/* The node index of live object (@kind, @pid, @id), or -1.  The key is
 * checked on the node (which the caller reads next anyway), not on the
 * state's slot. */
static inline gint
find_node (const Index *x, guint8 kind, guint32 pid, guint64 id)
{
  if (id == 0)
    return -1;
  CowscopeGraphStateProbe probe;
  cowscope_graph_state_probe_start (&x->state, kind, pid, id, &probe);
  for (gint64 slot; (slot = cowscope_graph_state_probe_next (&probe)) >= 0;)
    {
      guint32 k = x->where[slot];
      if (k == G_MAXUINT32)
        continue;
      const CowscopeGraphNode *m = &x->nodes[k];
      if (m->id == id && m->pid == pid && m->kind == kind)
        return (gint) k;
    }
  return -1;
}

static inline void
add_edge (GArray *edges, gint from, gint to, guint8 kind)
{
  if (from < 0 || to < 0)
    return;
  CowscopeGraphEdge e = { (guint32) from, (guint32) to, kind };
  g_array_append_val (edges, e);
}

static void
node_from_object (CowscopeGraphNode *n, const CowscopeLiveObject *o)
{
  memset (n, 0, sizeof *n);
  n->pid = o->pid;
  n->kind = o->kind;
  n->alloc_kind = o->alloc_kind;
  n->id = o->id;
  n->nbytes = o->nbytes;
  n->free_ts = o->free_ts;
  n->allocation_id = o->allocation_id;
  n->context_id = o->context_id;
  n->left_context_id = o->left_context_id;
  n->state = o->stolen ? COWSCOPE_NODE_STATE_STOLEN : COWSCOPE_NODE_STATE_OWNED;
  n->storage_id = o->storage_id;
  n->source_id = o->source_id;
  n->numel = o->numel;
  n->dtype = o->dtype;
  n->ndim = o->ndim;
  n->device = o->device;
}

CowscopeSharingGraph *
cowscope_sharing_graph_new_from_state (const CowscopeGraphState *st,
                                       const CowscopeGraphAssembleOptions *options)
{
  guint n_slots = cowscope_graph_state_get_n_slots (st);
  guint n_nodes = cowscope_graph_state_get_n_live (st);
  GArray *nodes = g_array_sized_new (FALSE, FALSE, sizeof (CowscopeGraphNode), n_nodes);
  g_array_set_size (nodes, n_nodes);
  GStringChunk *labels = g_string_chunk_new (4096);
  CowscopeGraphNode *n = (CowscopeGraphNode *) (gpointer) nodes->data;

  /* Copy out the live objects in node order; only tensors have names. */
  Index x;
  cowscope_graph_state_get_index (st, &x.state);
  g_autofree guint32 *order = cowscope_graph_state_sort (st);
  g_autofree guint32 *where = g_new (guint32, MAX (n_slots, 1));
  memset (where, 0xff, sizeof (guint32) * n_slots);
  for (guint k = 0; k < n_nodes; k++)
    {
      where[order[k]] = k;
      node_from_object (&n[k], cowscope_graph_state_index_object (&x.state, order[k]));
      if (n[k].kind != COWSCOPE_NODE_TENSOR)
        continue;
      gint64 name_id = 0;
      const char *name = cowscope_graph_state_get_slot_name (st, order[k], &name_id);
      if (name == NULL && name_id != 0 && options->name_func != NULL)
        name = options->name_func (n[k].pid, name_id, options->name_data);
      if (name != NULL)
        n[k].label = g_string_chunk_insert (labels, name);
    }
  x.where = where;
  x.nodes = n;

  GArray *edges = g_array_sized_new (FALSE, FALSE, sizeof (CowscopeGraphEdge), n_nodes);
  /* The allocation a context or an owning storage owns, found once. */
  g_autofree gint *owned = g_new (gint, MAX (n_nodes, 1));
  gint64 time = options->time;
  for (guint i = 0; i < n_nodes; i++)
    {
      n[i].freed_soon = n[i].free_ts >= 0 && n[i].free_ts <= time + options->freed_soon_ns;
      if (n[i].kind == COWSCOPE_NODE_STORAGE)
        {
          if (n[i].context_id != 0)
            {
              gint ctx = find_node (&x, COWSCOPE_NODE_CONTEXT, n[i].pid, n[i].context_id);
              n[i].state = COWSCOPE_NODE_STATE_SHARED;
              if (ctx >= 0)
                n[ctx].refcount++;
              add_edge (edges, (gint) i, ctx, COWSCOPE_EDGE_LAZY_COPY_OF);
              gint src = find_node (&x, COWSCOPE_NODE_STORAGE, n[i].pid, n[i].source_id);
              if (src >= 0 && n[src].context_id == n[i].context_id)
                add_edge (edges, (gint) i, src, COWSCOPE_EDGE_LAZY_COPY_OF);
            }
          else
            {
              /* A copy, or the shared bytes themselves (a steal). */
              n[i].state = n[i].left_context_id == 0 ? COWSCOPE_NODE_STATE_OWNED
                           : n[i].state == COWSCOPE_NODE_STATE_STOLEN
                             ? COWSCOPE_NODE_STATE_STOLEN
                             : COWSCOPE_NODE_STATE_MATERIALIZED;
              owned[i] = find_node (&x, COWSCOPE_NODE_ALLOCATION, n[i].pid, n[i].allocation_id);
              add_edge (edges, (gint) i, owned[i], COWSCOPE_EDGE_OWNS);
              if (n[i].left_context_id != 0)
                {
                  add_edge (edges, (gint) i,
                            find_node (&x, COWSCOPE_NODE_CONTEXT, n[i].pid, n[i].left_context_id),
                            COWSCOPE_EDGE_MATERIALIZED_FROM);
                  add_edge (edges, (gint) i,
                            find_node (&x, COWSCOPE_NODE_STORAGE, n[i].pid, n[i].source_id),
                            COWSCOPE_EDGE_MATERIALIZED_FROM);
                }
            }
        }
      else if (n[i].kind == COWSCOPE_NODE_CONTEXT)
        {
          n[i].state = COWSCOPE_NODE_STATE_SHARED;
          owned[i] = find_node (&x, COWSCOPE_NODE_ALLOCATION, n[i].pid, n[i].allocation_id);
          add_edge (edges, (gint) i, owned[i], COWSCOPE_EDGE_OWNS);
        }
    }
  /* Allocations take the state of whoever owns them; tensors their
   * storage's; tensor bytes from the dtype's item size. */
  for (guint i = 0; i < n_nodes; i++)
    {
      if (n[i].kind == COWSCOPE_NODE_CONTEXT)
        {
          gint a = owned[i];
          if (a >= 0)
            n[a].state = COWSCOPE_NODE_STATE_SHARED;
        }
      else if (n[i].kind == COWSCOPE_NODE_STORAGE
               && (n[i].state == COWSCOPE_NODE_STATE_MATERIALIZED
                   || n[i].state == COWSCOPE_NODE_STATE_STOLEN))
        {
          gint a = owned[i];
          if (a >= 0 && n[a].state == COWSCOPE_NODE_STATE_OWNED)
            n[a].state = n[i].state;
        }
      else if (n[i].kind == COWSCOPE_NODE_TENSOR)
        {
          gint s = find_node (&x, COWSCOPE_NODE_STORAGE, n[i].pid, n[i].storage_id);
          if (s >= 0)
            n[i].state = n[s].state;
          guint size = n[i].dtype < options->n_itemsizes && options->itemsizes != NULL
                         ? options->itemsizes[n[i].dtype]
                         : 0;
          n[i].nbytes = (guint64) MAX (n[i].numel, 0) * MAX (size, 1);
          add_edge (edges, (gint) i, s, COWSCOPE_EDGE_VIEW_OF);
          gint base = find_node (&x, COWSCOPE_NODE_TENSOR, n[i].pid, n[i].source_id);
          if (base >= 0 && n[base].storage_id == n[i].storage_id)
            add_edge (edges, (gint) i, base, COWSCOPE_EDGE_VIEW_OF);
        }
    }
  return cowscope_sharing_graph_new_take (nodes, edges, labels, options->seq, options->time,
                                          options->checkpoint_seq, options->n_replayed);
}
