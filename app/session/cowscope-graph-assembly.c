/* cowscope-graph-assembly.c — the sharing graph of a graph state (the
 * session format's live objects, cowscope-graph-state.h): node states,
 * context refcounts, tensor bytes and the edges that
 * cowscope-sharing-graph.h lists.
 *
 * Speed: a state of 100,000 objects is far bigger than the caches, and
 * each node looks up one or two others (its storage, context, allocation,
 * source): a lookup that waits for its table entry and then for the node
 * it names costs two cache misses, one after the other.  So nodes are
 * resolved in batches: the table entries of a whole batch are requested
 * first (prefetched), then probed, then the candidate nodes requested,
 * then checked, so that the misses of a batch overlap instead of adding
 * up.  The answers are exactly those of one lookup at a time.
 */
#include "cowscope-sharing-graph-private.h"

#include <string.h>

/* Nodes resolved together; their lookups' misses overlap. */
#define BATCH 32

typedef struct {
  CowscopeGraphStateIndex state;
  const guint32 *where; /* slot index -> node index, G_MAXUINT32: dead */
  const CowscopeGraphNode *nodes;
} Index;

/* One lookup of a batch: the key and, once probed, where it stands. */
typedef struct {
  guint64 id;       /* 0: no lookup (the link is empty) */
  guint32 pid;
  guint8 kind;
  CowscopeGraphStateProbe probe;
  gint64 candidate; /* the node the first matching hash names, or -1 */
} Lookup;

/* The node index of live object (@kind, @pid, @id), or -1.  The key is
 * checked on the node (which the caller reads next anyway), not on the
 * state's slot. */
static gint
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
lookup_set (Lookup *l, guint8 kind, guint32 pid, guint64 id)
{
  l->kind = kind;
  l->pid = pid;
  l->id = id;
}

/* Resolves @n lookups to node indices in @out (-1: none), as find_node()
 * would one by one, with their cache misses overlapped (see the file
 * comment). */
static void
resolve (const Index *x, Lookup *l, guint n, gint *out)
{
  for (guint j = 0; j < n; j++)
    if (l[j].id != 0)
      {
        cowscope_graph_state_probe_start (&x->state, l[j].kind, l[j].pid, l[j].id, &l[j].probe);
        __builtin_prefetch (&l[j].probe.table[l[j].probe.at]);
      }
  for (guint j = 0; j < n; j++)
    {
      l[j].candidate = -1;
      if (l[j].id == 0)
        continue;
      for (gint64 slot; (slot = cowscope_graph_state_probe_next (&l[j].probe)) >= 0;)
        if (x->where[slot] != G_MAXUINT32)
          {
            l[j].candidate = x->where[slot];
            __builtin_prefetch (&x->nodes[l[j].candidate]);
            break;
          }
    }
  for (guint j = 0; j < n; j++)
    {
      out[j] = -1;
      if (l[j].candidate < 0)
        continue;
      const CowscopeGraphNode *m = &x->nodes[l[j].candidate];
      if (m->id == l[j].id && m->pid == l[j].pid && m->kind == l[j].kind)
        out[j] = (gint) l[j].candidate;
      else /* another key with the same hash bits (rare): probe on */
        out[j] = find_node (x, l[j].kind, l[j].pid, l[j].id);
    }
}

/* The edges, written in place (a GArray sized ahead, trimmed at the end). */
typedef struct {
  GArray *array;
  CowscopeGraphEdge *data;
  guint len, cap;
} Edges;

static void
edges_grow (Edges *e)
{
  e->cap = MAX (e->cap * 2, 1024);
  g_array_set_size (e->array, e->cap);
  e->data = (CowscopeGraphEdge *) (gpointer) e->array->data;
}

static inline void
add_edge (Edges *e, gint from, gint to, guint8 kind)
{
  if (from < 0 || to < 0)
    return;
  if (G_UNLIKELY (e->len == e->cap))
    edges_grow (e);
  e->data[e->len++] = (CowscopeGraphEdge) { (guint32) from, (guint32) to, kind };
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
  n->storage_id = o->storage_id;
  n->source_id = o->source_id;
  n->numel = o->numel;
  n->dtype = o->dtype;
  n->ndim = o->ndim;
  n->device = o->device;
}

/* Node states, context refcounts, tensor bytes and every edge, in one
 * pass in node order: nodes are sorted by kind, allocations, contexts,
 * storages, then tensors, so each node's state is final before a later
 * one reads it (a tensor takes its storage's), and an allocation's state
 * is decided by its contexts (shared) before its storages (materialized
 * only when not shared).  Up to three lookups a node, resolved a batch at
 * a time. */
static void
link_nodes (const Index *x, CowscopeGraphNode *n, guint n_nodes, Edges *edges,
            const CowscopeGraphAssembleOptions *options)
{
  Lookup l[3 * BATCH];
  gint found[3 * BATCH];
  for (guint base = 0; base < n_nodes; base += BATCH)
    {
      guint m = MIN (BATCH, n_nodes - base);
      for (guint j = 0; j < m; j++)
        {
          const CowscopeGraphNode *v = &n[base + j];
          Lookup *a = &l[j], *b = &l[BATCH + j], *c = &l[2 * BATCH + j];
          a->id = b->id = c->id = 0;
          switch (v->kind)
            {
            case COWSCOPE_NODE_CONTEXT:
              lookup_set (a, COWSCOPE_NODE_ALLOCATION, v->pid, v->allocation_id);
              break;
            case COWSCOPE_NODE_STORAGE:
              if (v->context_id != 0)
                {
                  lookup_set (a, COWSCOPE_NODE_CONTEXT, v->pid, v->context_id);
                  lookup_set (b, COWSCOPE_NODE_STORAGE, v->pid, v->source_id);
                }
              else
                {
                  lookup_set (a, COWSCOPE_NODE_ALLOCATION, v->pid, v->allocation_id);
                  if (v->left_context_id != 0)
                    {
                      lookup_set (b, COWSCOPE_NODE_CONTEXT, v->pid, v->left_context_id);
                      lookup_set (c, COWSCOPE_NODE_STORAGE, v->pid, v->source_id);
                    }
                }
              break;
            case COWSCOPE_NODE_TENSOR:
              lookup_set (a, COWSCOPE_NODE_STORAGE, v->pid, v->storage_id);
              lookup_set (b, COWSCOPE_NODE_TENSOR, v->pid, v->source_id);
              break;
            default:
              break;
            }
        }
      resolve (x, l, m, found);
      resolve (x, l + BATCH, m, found + BATCH);
      resolve (x, l + 2 * BATCH, m, found + 2 * BATCH);
      for (guint j = 0; j < m; j++)
        {
          guint i = base + j;
          gint a = found[j], b = found[BATCH + j], c = found[2 * BATCH + j];
          switch (n[i].kind)
            {
            case COWSCOPE_NODE_CONTEXT:
              n[i].state = COWSCOPE_NODE_STATE_SHARED;
              add_edge (edges, (gint) i, a, COWSCOPE_EDGE_OWNS);
              if (a >= 0)
                n[a].state = COWSCOPE_NODE_STATE_SHARED;
              break;
            case COWSCOPE_NODE_STORAGE:
              if (n[i].context_id != 0)
                {
                  n[i].state = COWSCOPE_NODE_STATE_SHARED;
                  if (a >= 0)
                    n[a].refcount++;
                  add_edge (edges, (gint) i, a, COWSCOPE_EDGE_LAZY_COPY_OF);
                  if (b >= 0 && n[b].context_id == n[i].context_id)
                    add_edge (edges, (gint) i, b, COWSCOPE_EDGE_LAZY_COPY_OF);
                  break;
                }
              n[i].state = n[i].left_context_id != 0 ? COWSCOPE_NODE_STATE_MATERIALIZED
                                                     : COWSCOPE_NODE_STATE_OWNED;
              add_edge (edges, (gint) i, a, COWSCOPE_EDGE_OWNS);
              if (n[i].left_context_id != 0)
                {
                  add_edge (edges, (gint) i, b, COWSCOPE_EDGE_MATERIALIZED_FROM);
                  add_edge (edges, (gint) i, c, COWSCOPE_EDGE_MATERIALIZED_FROM);
                  if (a >= 0 && n[a].state == COWSCOPE_NODE_STATE_OWNED)
                    n[a].state = COWSCOPE_NODE_STATE_MATERIALIZED;
                }
              break;
            case COWSCOPE_NODE_TENSOR:
              {
                if (a >= 0)
                  n[i].state = n[a].state;
                guint size = n[i].dtype < options->n_itemsizes && options->itemsizes != NULL
                               ? options->itemsizes[n[i].dtype]
                               : 0;
                n[i].nbytes = (guint64) MAX (n[i].numel, 0) * MAX (size, 1);
                add_edge (edges, (gint) i, a, COWSCOPE_EDGE_VIEW_OF);
                if (b >= 0 && n[b].storage_id == n[i].storage_id)
                  add_edge (edges, (gint) i, b, COWSCOPE_EDGE_VIEW_OF);
              }
              break;
            default:
              break;
            }
        }
    }
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
  gint64 time = options->time;
  for (guint k = 0; k < n_nodes; k++)
    {
      where[order[k]] = k;
      node_from_object (&n[k], cowscope_graph_state_index_object (&x.state, order[k]));
      n[k].freed_soon = n[k].free_ts >= 0 && n[k].free_ts <= time + options->freed_soon_ns;
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

  Edges edges = { .array = g_array_new (FALSE, FALSE, sizeof (CowscopeGraphEdge)) };
  edges.cap = MAX (n_nodes + n_nodes / 2, 1024);
  g_array_set_size (edges.array, edges.cap);
  edges.data = (CowscopeGraphEdge *) (gpointer) edges.array->data;
  link_nodes (&x, n, n_nodes, &edges, options);
  g_array_set_size (edges.array, edges.len);
  return cowscope_sharing_graph_new_take (nodes, edges.array, labels, options->seq, options->time,
                                          options->checkpoint_seq, options->n_replayed);
}
