/* cowscope-graph-assembly.c — the sharing graph of a graph state (the
 * session format's live objects, cowscope-graph-state.h): node states,
 * context refcounts, tensor bytes and the edges that
 * cowscope-sharing-graph.h lists.
 *
 * Speed: a state of 100,000 objects is far bigger than the caches, and
 * each node links to one to three others (its storage, context,
 * allocation, source), found through the state's hash table: a lookup
 * waits for a table entry, then for a key, then for the node it names,
 * three cache misses one after the other.  So the links are made in
 * batches of nodes, as a pipeline: while one batch is linked, the nodes
 * the next one links to are requested (prefetched), the keys of the one
 * after are, and the table entries of the one after that, so that the
 * misses of many lookups overlap instead of adding up.  The answers are
 * those of one lookup at a time.
 *
 * A big graph is also assembled by two threads: the copying in ranges of
 * nodes, the links in one task for the contexts and storages (they write
 * to the allocations and contexts they link to) and in ranges of tensors
 * (each writes only its own nodes), each with edges of its own, put
 * together in node order.  The calling thread takes tasks as the helper
 * does, so a helper that the scheduler keeps waiting costs nothing.
 */
#include "cowscope-sharing-graph-private.h"

#include <string.h>

/* Nodes a pipeline stage handles at once. */
#define BATCH 16
/* Lookups of a batch: up to three a node. */
#define N_LOOKUPS (3 * BATCH)
/* Pipeline stages: table entries, keys, nodes, links. */
#define N_STAGES 4

typedef struct {
  CowscopeGraphStateIndex state;
  const guint32 *where; /* live slot -> node index */
  const CowscopeGraphNode *nodes;
  guint n_nodes;
} Index;

/* One lookup: the key and, while it goes through the pipeline, where it
 * stands. */
typedef struct {
  guint64 id;       /* 0: no lookup (the link is empty) */
  guint32 pid;
  guint8 kind;
  guint8 use;       /* what the node does with the one found: USE_* */
  CowscopeGraphStateProbe probe;
  gint64 slot;      /* the candidate slot, then the live slot found; -1: none */
} Lookup;

enum {
  USE_EDGE,  /* only an edge to it */
  USE_NODE,  /* reads or writes its node too */
};

/* The edges, written in place (a GArray sized ahead, trimmed at the end). */
typedef struct {
  GArray *array;
  CowscopeGraphEdge *data;
  guint len, cap;
} Edges;

static inline const CowscopeLiveObject *
object_at (const CowscopeGraphStateIndex *state, guint32 slot)
{
  return cowscope_graph_state_index_object (state, slot);
}

static inline gboolean
key_is (const CowscopeGraphStateKey *k, guint8 kind, guint32 pid, guint64 id)
{
  return k->id == id && k->pid == pid && k->kind == kind;
}

/* The slot of live object (@kind, @pid, @id), or -1 (also when it died:
 * a key has one slot, dead or alive). */
static gint64
find_live_slot (const Index *x, guint8 kind, guint32 pid, guint64 id)
{
  CowscopeGraphStateProbe probe;
  cowscope_graph_state_probe_start (&x->state, kind, pid, id, &probe);
  for (gint64 slot; (slot = cowscope_graph_state_probe_next (&probe)) >= 0;)
    {
      const CowscopeGraphStateKey *k = &x->state.keys[slot];
      if (key_is (k, kind, pid, id))
        return k->dead ? -1 : slot;
    }
  return -1;
}

static inline void
lookup_set (Lookup *l, guint8 kind, guint32 pid, guint64 id, guint8 use)
{
  l->kind = kind;
  l->pid = pid;
  l->id = id;
  l->use = use;
}

/* The lookups of node @o: a (its first link), b (the second), c (the
 * source after a materialization). */
static inline void
set_lookups (const CowscopeGraphNode *o, Lookup *a, Lookup *b, Lookup *c)
{
  a->id = b->id = c->id = 0;
  switch (o->kind)
    {
    case COWSCOPE_NODE_CONTEXT:
      lookup_set (a, COWSCOPE_NODE_ALLOCATION, o->pid, o->allocation_id, USE_NODE);
      break;
    case COWSCOPE_NODE_STORAGE:
      if (o->context_id != 0)
        {
          lookup_set (a, COWSCOPE_NODE_CONTEXT, o->pid, o->context_id, USE_NODE);
          lookup_set (b, COWSCOPE_NODE_STORAGE, o->pid, o->source_id, USE_NODE);
        }
      else
        {
          lookup_set (a, COWSCOPE_NODE_ALLOCATION, o->pid, o->allocation_id,
                      o->left_context_id != 0 ? USE_NODE : USE_EDGE);
          if (o->left_context_id != 0)
            {
              lookup_set (b, COWSCOPE_NODE_CONTEXT, o->pid, o->left_context_id, USE_EDGE);
              lookup_set (c, COWSCOPE_NODE_STORAGE, o->pid, o->source_id, USE_EDGE);
            }
        }
      break;
    case COWSCOPE_NODE_TENSOR:
      lookup_set (a, COWSCOPE_NODE_STORAGE, o->pid, o->storage_id, USE_NODE);
      lookup_set (b, COWSCOPE_NODE_TENSOR, o->pid, o->source_id, USE_NODE);
      break;
    default:
      break;
    }
}

/* Stage 1: the lookups of nodes [@base, @base + @m), their table entries
 * requested. */
static void
stage_table (const Index *x, guint base, guint m, Lookup *l)
{
  for (guint j = 0; j < BATCH; j++)
    {
      Lookup *a = &l[j], *b = &l[BATCH + j], *c = &l[2 * BATCH + j];
      if (j >= m)
        {
          a->id = b->id = c->id = 0;
          continue;
        }
      set_lookups (&x->nodes[base + j], a, b, c);
      /* The next batch's nodes (written long ago, out of the caches). */
      if (base + BATCH + j < x->n_nodes)
        {
          __builtin_prefetch (&x->nodes[base + BATCH + j]);
          __builtin_prefetch ((const char *) &x->nodes[base + BATCH + j] + 64);
        }
    }
  for (guint j = 0; j < N_LOOKUPS; j++)
    if (l[j].id != 0)
      {
        cowscope_graph_state_probe_start (&x->state, l[j].kind, l[j].pid, l[j].id, &l[j].probe);
        __builtin_prefetch (&l[j].probe.table[l[j].probe.at]);
      }
}

/* Stage 2: each lookup's first candidate slot; its key and node index
 * requested. */
static void
stage_keys (const Index *x, Lookup *l)
{
  for (guint j = 0; j < N_LOOKUPS; j++)
    {
      l[j].slot = -1;
      if (l[j].id == 0)
        continue;
      l[j].slot = cowscope_graph_state_probe_next (&l[j].probe);
      if (l[j].slot >= 0)
        {
          __builtin_prefetch (&x->state.keys[l[j].slot]);
          __builtin_prefetch (&x->where[l[j].slot]);
        }
    }
}

/* Stage 3: the live slot each lookup names (the candidate's key checked,
 * the probe taken on in the rare case of another key with the same hash
 * bits); the nodes to be read or written requested. */
static void
stage_nodes (const Index *x, Lookup *l)
{
  for (guint j = 0; j < N_LOOKUPS; j++)
    {
      if (l[j].slot < 0)
        continue;
      const CowscopeGraphStateKey *k = &x->state.keys[l[j].slot];
      if (key_is (k, l[j].kind, l[j].pid, l[j].id))
        l[j].slot = k->dead ? -1 : l[j].slot;
      else
        l[j].slot = find_live_slot (x, l[j].kind, l[j].pid, l[j].id);
      if (l[j].slot >= 0 && l[j].use == USE_NODE)
        __builtin_prefetch (&x->nodes[x->where[l[j].slot]], 1);
    }
}

static void
edges_grow (Edges *e)
{
  e->cap = MAX (e->cap * 2, 1024);
  g_array_set_size (e->array, e->cap);
  e->data = (CowscopeGraphEdge *) (gpointer) e->array->data;
}

/* An edge from node @from to node @to (none when -1). */
static inline void
add_edge (Edges *e, guint from, gint to, guint8 kind)
{
  if (to < 0)
    return;
  if (G_UNLIKELY (e->len == e->cap))
    edges_grow (e);
  e->data[e->len++] = (CowscopeGraphEdge) { from, (guint32) to, kind };
}

/* A storage's state, from its own links and whether it left its context
 * by a steal (@stolen) rather than a copy. */
static inline guint8
storage_state (const CowscopeGraphNode *v, gboolean stolen)
{
  return v->context_id != 0        ? COWSCOPE_NODE_STATE_SHARED
         : v->left_context_id == 0 ? COWSCOPE_NODE_STATE_OWNED
         : stolen                  ? COWSCOPE_NODE_STATE_STOLEN
                                   : COWSCOPE_NODE_STATE_MATERIALIZED;
}

/* Stage 4: the links of nodes [@base, @base + @m), in node order.  Nodes
 * are sorted by kind: allocations, contexts, storages, tensors; so a
 * node's state is final before a later node reads it (a tensor takes its
 * storage's), and an allocation's state is decided by its contexts
 * (shared) before its storages (materialized only when not shared). */
static void
stage_link (const Index *x, CowscopeGraphNode *n, guint base, guint m, const Lookup *l,
            Edges *edges, const CowscopeGraphAssembleOptions *options)
{
  for (guint j = 0; j < m; j++)
    {
      guint i = base + j;
      gint64 sa = l[j].slot, sb = l[BATCH + j].slot, sc = l[2 * BATCH + j].slot;
      gint a = sa >= 0 ? (gint) x->where[sa] : -1;
      gint b = sb >= 0 ? (gint) x->where[sb] : -1;
      gint c = sc >= 0 ? (gint) x->where[sc] : -1;
      CowscopeGraphNode *v = &n[i];
      switch (v->kind)
        {
        case COWSCOPE_NODE_CONTEXT:
          v->state = COWSCOPE_NODE_STATE_SHARED;
          add_edge (edges, i, a, COWSCOPE_EDGE_OWNS);
          if (a >= 0)
            n[a].state = COWSCOPE_NODE_STATE_SHARED;
          break;
        case COWSCOPE_NODE_STORAGE:
          if (v->context_id != 0)
            {
              v->state = COWSCOPE_NODE_STATE_SHARED;
              if (a >= 0)
                n[a].refcount++;
              add_edge (edges, i, a, COWSCOPE_EDGE_LAZY_COPY_OF);
              if (b >= 0 && n[b].context_id == v->context_id)
                add_edge (edges, i, b, COWSCOPE_EDGE_LAZY_COPY_OF);
              break;
            }
          /* A copy, or the shared bytes themselves (a steal): the copy
           * stage left STOLEN in the node of a storage that stole. */
          v->state = storage_state (v, v->state == COWSCOPE_NODE_STATE_STOLEN);
          add_edge (edges, i, a, COWSCOPE_EDGE_OWNS);
          if (v->left_context_id != 0)
            {
              add_edge (edges, i, b, COWSCOPE_EDGE_MATERIALIZED_FROM);
              add_edge (edges, i, c, COWSCOPE_EDGE_MATERIALIZED_FROM);
              if (a >= 0 && n[a].state == COWSCOPE_NODE_STATE_OWNED)
                n[a].state = v->state;
            }
          break;
        case COWSCOPE_NODE_TENSOR:
          {
            /* From the storage's links, not its node's state: another
             * thread may be writing that. */
            if (a >= 0)
              v->state = storage_state (&n[a], object_at (&x->state, (guint32) sa)->stolen);
            guint size = v->dtype < options->n_itemsizes && options->itemsizes != NULL
                           ? options->itemsizes[v->dtype]
                           : 0;
            v->nbytes = (guint64) MAX (v->numel, 0) * MAX (size, 1);
            add_edge (edges, i, a, COWSCOPE_EDGE_VIEW_OF);
            if (b >= 0 && n[b].storage_id == v->storage_id)
              add_edge (edges, i, b, COWSCOPE_EDGE_VIEW_OF);
          }
          break;
        default:
          break;
        }
    }
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

/* ---- two threads ------------------------------------------------------------- */

/* Graphs smaller than this are assembled by the calling thread alone,
 * and a task copies or links this many nodes (tests lower both). */
static gint parallel_nodes = 16384; /* atomic */
static gint task_nodes = 4096;      /* atomic */

void
cowscope_graph_assembly_set_parallel (guint min_nodes, guint nodes_per_task)
{
  g_atomic_int_set (&parallel_nodes, (gint) MIN (min_nodes, G_MAXINT));
  g_atomic_int_set (&task_nodes, (gint) CLAMP (nodes_per_task, 1, G_MAXINT));
}

/* Tasks shared by the calling thread and the helper. */
typedef struct {
  gint refs;        /* atomic: the caller's, and the helper's until it is done */
  void (*run) (gpointer data, guint task);
  gpointer data;
  guint n_tasks;
  gint next;        /* atomic: the next task to take */
  GMutex lock;      /* protects done */
  GCond cond;
  guint done;       /* tasks finished */
} Work;

static void
work_unref (Work *w)
{
  if (!g_atomic_int_dec_and_test (&w->refs))
    return;
  g_mutex_clear (&w->lock);
  g_cond_clear (&w->cond);
  g_free (w);
}

/* Takes and runs tasks until none is left. */
static void
work_do (Work *w)
{
  for (;;)
    {
      guint t = (guint) g_atomic_int_add (&w->next, 1);
      if (t >= w->n_tasks)
        return;
      w->run (w->data, t);
      g_mutex_lock (&w->lock);
      if (++w->done == w->n_tasks)
        g_cond_signal (&w->cond);
      g_mutex_unlock (&w->lock);
    }
}

static void
helper_run (gpointer data, gpointer pool_data)
{
  (void) pool_data;
  work_do (data);
  work_unref (data);
}

/* Runs tasks 0 .. @n_tasks - 1 of @run, some on the helper thread;
 * returns once all are done.  @first (may be NULL) runs on the calling
 * thread alone, before it takes tasks. */
static void
run_tasks (void (*run) (gpointer data, guint task), gpointer data, guint n_tasks,
           void (*first) (gpointer data))
{
  static GThreadPool *helper; /* one thread for every assembly */
  static gsize helper_ready;
  if (g_once_init_enter (&helper_ready))
    {
      helper = g_thread_pool_new (helper_run, NULL, 1, TRUE, NULL);
      g_once_init_leave (&helper_ready, 1);
    }
  Work *w = g_new0 (Work, 1);
  w->refs = 2;
  w->run = run;
  w->data = data;
  w->n_tasks = n_tasks;
  g_mutex_init (&w->lock);
  g_cond_init (&w->cond);
  g_thread_pool_push (helper, w, NULL);
  if (first != NULL)
    first (data);
  work_do (w);
  g_mutex_lock (&w->lock);
  while (w->done < w->n_tasks)
    g_cond_wait (&w->cond, &w->lock);
  g_mutex_unlock (&w->lock);
  work_unref (w);
}

/* ---- the assembly ---------------------------------------------------------------- */

typedef struct {
  Index x;
  const CowscopeGraphState *st;
  const CowscopeGraphAssembleOptions *options;
  CowscopeGraphNode *n;
  const guint32 *order;
  guint32 *where;
  guint n_nodes;
  guint first_context, first_tensor; /* node ranges by kind */
  guint task;                        /* nodes a task copies or links */
  guint n_link_tasks;
  Edges *edges;                      /* one per link task */
  GStringChunk *labels;
} Assembly;

/* Nodes [@begin, @end): the live objects in node order (the slots a
 * little ahead requested first: after a replay, node order hops about the
 * slots). */
static void
copy_nodes (Assembly *as, guint begin, guint end)
{
  enum { AHEAD = 16 };
  gint64 soon = as->options->time + as->options->freed_soon_ns;
  for (guint k = begin; k < end; k++)
    {
      if (k + AHEAD < end)
        {
          const CowscopeLiveObject *next = object_at (&as->x.state, as->order[k + AHEAD]);
          __builtin_prefetch (next);
          __builtin_prefetch ((const char *) next + 64);
        }
      as->where[as->order[k]] = k;
      CowscopeGraphNode *v = &as->n[k];
      node_from_object (v, object_at (&as->x.state, as->order[k]));
      v->freed_soon = v->free_ts >= 0 && v->free_ts <= soon;
    }
}

static void
copy_task (gpointer data, guint task)
{
  Assembly *as = data;
  copy_nodes (as, task * as->task, MIN (as->n_nodes, (task + 1) * as->task));
}

/* The tensors' labels (only tensors have names); on the calling thread,
 * since a name function may not be thread-safe. */
static void
label_tensors (gpointer data)
{
  Assembly *as = data;
  const CowscopeGraphAssembleOptions *options = as->options;
  for (guint k = as->first_tensor; k < as->n_nodes && as->n[k].kind == COWSCOPE_NODE_TENSOR; k++)
    {
      CowscopeGraphNode *v = &as->n[k];
      gint64 name_id = 0;
      const char *name = cowscope_graph_state_get_slot_name (as->st, as->order[k], &name_id);
      if (name == NULL && name_id != 0 && options->name_func != NULL)
        name = options->name_func (v->pid, name_id, options->name_data);
      if (name != NULL)
        v->label = g_string_chunk_insert (as->labels, name);
    }
}

/* The links of nodes [@begin, @end) through the pipeline (see the file
 * comment): batch k is linked while k + 1's nodes, k + 2's keys and k +
 * 3's table entries are requested. */
static void
link_nodes (Assembly *as, guint begin, guint end, Edges *edges)
{
  guint n_batches = (end - begin + BATCH - 1) / BATCH;
  Lookup ring[N_STAGES][N_LOOKUPS];
  for (guint k = 0; k < n_batches + N_STAGES - 1; k++)
    {
      if (k < n_batches)
        stage_table (&as->x, begin + k * BATCH, MIN (BATCH, end - begin - k * BATCH),
                     ring[k % N_STAGES]);
      if (k >= 1 && k - 1 < n_batches)
        stage_keys (&as->x, ring[(k - 1) % N_STAGES]);
      if (k >= 2 && k - 2 < n_batches)
        stage_nodes (&as->x, ring[(k - 2) % N_STAGES]);
      if (k >= 3)
        {
          guint d = k - 3;
          stage_link (&as->x, as->n, begin + d * BATCH, MIN (BATCH, end - begin - d * BATCH),
                      ring[d % N_STAGES], edges, as->options);
        }
    }
}

/* Link task 0: the contexts and storages (they write to the allocations
 * and contexts they link to: one task); then ranges of tensors. */
static void
link_task (gpointer data, guint task)
{
  Assembly *as = data;
  if (task == 0)
    link_nodes (as, as->first_context, as->first_tensor, &as->edges[0]);
  else
    link_nodes (as, as->first_tensor + (task - 1) * as->task,
                MIN (as->n_nodes, as->first_tensor + task * as->task), &as->edges[task]);
}

/* The first node of kind @kind or later (nodes are sorted by kind). */
static guint
first_of_kind (const CowscopeGraphNode *n, guint n_nodes, guint8 kind)
{
  guint lo = 0, hi = n_nodes;
  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;
      if (n[mid].kind < kind)
        lo = mid + 1;
      else
        hi = mid;
    }
  return lo;
}

static void
edges_init (Edges *e, guint cap)
{
  e->array = g_array_new (FALSE, FALSE, sizeof (CowscopeGraphEdge));
  e->cap = MAX (cap, 1024);
  e->len = 0;
  g_array_set_size (e->array, e->cap);
  e->data = (CowscopeGraphEdge *) (gpointer) e->array->data;
}

CowscopeSharingGraph *
cowscope_sharing_graph_new_from_state (const CowscopeGraphState *st,
                                       const CowscopeGraphAssembleOptions *options)
{
  guint n_slots = cowscope_graph_state_get_n_slots (st);
  guint n_nodes = cowscope_graph_state_get_n_live (st);
  GArray *nodes = g_array_sized_new (FALSE, FALSE, sizeof (CowscopeGraphNode), n_nodes);
  g_array_set_size (nodes, n_nodes);
  g_autofree guint32 *order = cowscope_graph_state_sort (st);
  g_autofree guint32 *where = g_new (guint32, MAX (n_slots, 1)); /* only live slots are read */
  Assembly as = {
    .st = st,
    .options = options,
    .n = (CowscopeGraphNode *) (gpointer) nodes->data,
    .order = order,
    .where = where,
    .n_nodes = n_nodes,
    .labels = g_string_chunk_new (4096),
  };
  cowscope_graph_state_get_index (st, &as.x.state);
  as.x.where = where;
  as.x.nodes = as.n;
  as.x.n_nodes = n_nodes;
  gboolean parallel = n_nodes >= (guint) g_atomic_int_get (&parallel_nodes);
  as.task = (guint) g_atomic_int_get (&task_nodes);

  /* The nodes, then their links. */
  if (parallel)
    run_tasks (copy_task, &as, (n_nodes + as.task - 1) / as.task, NULL);
  else
    copy_nodes (&as, 0, n_nodes);
  as.first_context = first_of_kind (as.n, n_nodes, COWSCOPE_NODE_CONTEXT);
  as.first_tensor = first_of_kind (as.n, n_nodes, COWSCOPE_NODE_TENSOR);
  guint n_tensors = first_of_kind (as.n, n_nodes, COWSCOPE_NODE_TENSOR + 1) - as.first_tensor;
  as.n_link_tasks = 1 + (n_tensors + as.task - 1) / as.task;
  g_autofree Edges *edges = g_new0 (Edges, as.n_link_tasks);
  as.edges = edges;
  for (guint t = 0; t < as.n_link_tasks; t++)
    edges_init (&edges[t], t == 0 ? 2 * (as.first_tensor - as.first_context) : 2 * as.task);
  if (parallel)
    run_tasks (link_task, &as, as.n_link_tasks, label_tensors);
  else
    {
      label_tensors (&as);
      for (guint t = 0; t < as.n_link_tasks; t++)
        link_task (&as, t);
    }

  /* The tasks' edges, in node order. */
  guint n_edges = 0;
  for (guint t = 0; t < as.n_link_tasks; t++)
    n_edges += edges[t].len;
  GArray *all = edges[0].array;
  g_array_set_size (all, edges[0].len);
  g_array_set_size (all, n_edges);
  guint at = edges[0].len;
  for (guint t = 1; t < as.n_link_tasks; t++)
    {
      memcpy (&g_array_index (all, CowscopeGraphEdge, at), edges[t].data,
              sizeof (CowscopeGraphEdge) * edges[t].len);
      at += edges[t].len;
      g_array_unref (edges[t].array);
    }
  /* Nodes are sorted by kind: each kind's count from where it starts. */
  guint counts[COWSCOPE_N_NODE_KINDS];
  for (guint k = 0; k < COWSCOPE_N_NODE_KINDS; k++)
    counts[k] = first_of_kind (as.n, n_nodes, (guint8) (k + 1)) - first_of_kind (as.n, n_nodes, (guint8) k);
  return cowscope_sharing_graph_new_take_counted (nodes, all, as.labels, options->seq,
                                                  options->time, options->checkpoint_seq,
                                                  options->n_replayed, counts);
}
