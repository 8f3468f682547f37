/* cowscope-graph-layout.c — see cowscope-graph-layout.h. */
#include "cowscope-config.h"

#include <glib/gi18n.h>
#include <gvc.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cowscope-graph-layout.h"

/* ---- the layout thread ------------------------------------------------- */

static GThreadPool *layout_pool;   /* one exclusive thread: serial Graphviz */
static GThread *layout_thread;     /* set by that thread on its first job */
static GVC_t *layout_gvc;          /* owned by the layout thread */

typedef struct {
  CowscopeSessionDocument *document;
  gint64 t;
  CowscopeSharingGraph *graph;
  CowscopeGraphLayoutOptions options;
  GArray *expanded, *focus; /* the copies the options point into */
} Job;

/* Frees a job and what it holds. */
static void
job_free (gpointer data)
{
  Job *job = data;
  g_clear_object (&job->document);
  g_clear_object (&job->graph);
  g_clear_pointer (&job->expanded, g_array_unref);
  g_clear_pointer (&job->focus, g_array_unref);
  g_free (job);
}

/* Copies @refs into a new array (possibly empty). */
static GArray *
copy_refs (const CowscopeObjectRef *refs, guint n)
{
  GArray *a = g_array_new (FALSE, FALSE, sizeof (CowscopeObjectRef));
  if (refs != NULL && n > 0)
    g_array_append_vals (a, refs, n);
  return a;
}

/* A job with deep copies of @options. */
static Job *
job_new (CowscopeSessionDocument *document, gint64 t, CowscopeSharingGraph *graph,
         const CowscopeGraphLayoutOptions *options)
{
  Job *job = g_new0 (Job, 1);
  job->document = document ? g_object_ref (document) : NULL;
  job->t = t;
  job->graph = graph ? g_object_ref (graph) : NULL;
  if (options != NULL)
    job->options = *options;
  job->expanded = copy_refs (job->options.expanded, job->options.n_expanded);
  job->focus = copy_refs (job->options.focus, job->options.n_focus);
  job->options.expanded = (const CowscopeObjectRef *) (gpointer) job->expanded->data;
  job->options.focus = (const CowscopeObjectRef *) (gpointer) job->focus->data;
  return job;
}

static CowscopeGraphScene *layout_run (CowscopeSharingGraph *graph,
                                       const CowscopeGraphLayoutOptions *options, double build_ms,
                                       GCancellable *cancellable, GError **error);

/* Serves one GTask on the layout thread: builds the graph if needed, then
 * aggregates and lays it out; skips work once the task is cancelled. */
static void
layout_thread_func (gpointer data, gpointer pool_data)
{
  GTask *task = data;
  Job *job = g_task_get_task_data (task);
  GCancellable *cancellable = g_task_get_cancellable (task);
  g_autoptr (GError) error = NULL;
  g_autoptr (CowscopeSharingGraph) graph = NULL;
  double build_ms = 0;

  layout_thread = g_thread_self ();
  if (g_cancellable_set_error_if_cancelled (cancellable, &error))
    goto fail;
  if (job->graph != NULL)
    graph = g_object_ref (job->graph);
  else
    {
      gint64 t0 = g_get_monotonic_time ();
      gint64 seq = cowscope_session_document_seq_at_time (job->document, job->t, &error);
      if (error != NULL)
        goto fail;
      graph = cowscope_sharing_graph_build (job->document, seq,
                                            cowscope_graph_layout_freed_soon_ns (job->document),
                                            cancellable, &error);
      if (graph == NULL)
        goto fail;
      build_ms = (double) (g_get_monotonic_time () - t0) / 1000.0;
    }
  if (g_cancellable_set_error_if_cancelled (cancellable, &error))
    goto fail;
  CowscopeGraphScene *scene = layout_run (graph, &job->options, build_ms, cancellable, &error);
  if (scene == NULL)
    goto fail;
  g_task_return_pointer (task, scene, g_object_unref);
  g_object_unref (task);
  return;

fail:
  g_task_return_error (task, g_steal_pointer (&error));
  g_object_unref (task);
}

/* Creates the pool on first use; thread-safe. */
static GThreadPool *
get_pool (void)
{
  static gsize once = 0;
  if (g_once_init_enter (&once))
    {
      layout_pool = g_thread_pool_new (layout_thread_func, NULL, 1, TRUE, NULL);
      g_once_init_leave (&once, 1);
    }
  return layout_pool;
}

gboolean
cowscope_graph_layout_is_layout_thread (void)
{
  return layout_thread != NULL && g_thread_self () == layout_thread;
}

gint64
cowscope_graph_layout_freed_soon_ns (CowscopeSessionDocument *document)
{
  gint64 span = cowscope_session_document_get_end_ns (document) -
                cowscope_session_document_get_start_ns (document);
  return MAX (span / 50, 1000000);
}

/* Queues the request; the task owns the job and a reference is handed to
 * the pool, dropped by layout_thread_func. */
void
cowscope_graph_layout_async (CowscopeSessionDocument *document, gint64 t,
                             CowscopeSharingGraph *graph,
                             const CowscopeGraphLayoutOptions *options,
                             GCancellable *cancellable, GAsyncReadyCallback callback,
                             gpointer user_data)
{
  g_return_if_fail (graph != NULL || COWSCOPE_IS_SESSION_DOCUMENT (document));
  GTask *task = g_task_new (NULL, cancellable, callback, user_data);
  g_task_set_source_tag (task, cowscope_graph_layout_async);
  g_task_set_task_data (task, job_new (document, t, graph, options), job_free);
  g_thread_pool_push (get_pool (), task, NULL);
}

CowscopeGraphScene *
cowscope_graph_layout_finish (GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, NULL), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}

typedef struct {
  GMutex lock;
  GCond cond;
  gboolean done;
  GAsyncResult *result;
} SyncWait;

/* Completion of a synchronous request: runs in the waiter's context. */
static void
sync_done (GObject *source, GAsyncResult *result, gpointer data)
{
  SyncWait *w = data;
  g_mutex_lock (&w->lock);
  w->result = g_object_ref (result);
  w->done = TRUE;
  g_cond_signal (&w->cond);
  g_mutex_unlock (&w->lock);
}

/* Runs the request with a private main context so the completion does not
 * depend on any other loop; returns once it completed. */
CowscopeGraphScene *
cowscope_graph_layout_sync (CowscopeSharingGraph *graph, const CowscopeGraphLayoutOptions *options,
                            GError **error)
{
  g_return_val_if_fail (COWSCOPE_IS_SHARING_GRAPH (graph), NULL);
  GMainContext *context = g_main_context_new ();
  SyncWait w = { 0 };
  g_main_context_push_thread_default (context);
  cowscope_graph_layout_async (NULL, 0, graph, options, NULL, sync_done, &w);
  while (!w.done)
    g_main_context_iteration (context, TRUE);
  g_main_context_pop_thread_default (context);
  CowscopeGraphScene *scene = cowscope_graph_layout_finish (w.result, error);
  g_object_unref (w.result);
  g_main_context_unref (context);
  return scene;
}

/* ---- aggregation ------------------------------------------------------- */

/* A unit is one scene node before layout: an object, a group of views of
 * one storage, or an overflow of many objects. */
typedef struct {
  guint8 type, kind, state, freed_soon;
  guint32 pid;
  guint64 id, nbytes;
  guint n_members;
  gint graph_index;
  gboolean focused;
  guint component; /* union-find root */
} Unit;

/* Union-find root of @i with path halving. */
static guint
uf_find (guint *parent, guint i)
{
  while (parent[i] != i)
    {
      parent[i] = parent[parent[i]];
      i = parent[i];
    }
  return i;
}

/* Whether (@pid, @id) is in @refs (any kind when @kind < 0). */
static gboolean
refs_contain (const CowscopeObjectRef *refs, guint n, gint kind, guint32 pid, guint64 id)
{
  for (guint i = 0; i < n; i++)
    if (refs[i].pid == pid && refs[i].id == id && (kind < 0 || (gint) refs[i].kind == kind))
      return TRUE;
  return FALSE;
}

typedef struct {
  guint root;
  guint size;
  guint priority; /* 2 focused, 1 sharing, 0 other */
  guint64 nbytes;
} Component;

/* Orders components by priority, then bytes, then size, all descending. */
static int
compare_components (gconstpointer a, gconstpointer b)
{
  const Component *x = a, *y = b;
  if (x->priority != y->priority)
    return x->priority > y->priority ? -1 : 1;
  if (x->nbytes != y->nbytes)
    return x->nbytes > y->nbytes ? -1 : 1;
  if (x->size != y->size)
    return x->size > y->size ? -1 : 1;
  return (x->root > y->root) - (x->root < y->root);
}

/* The bytes an object stands for: a context its allocation's. */
static guint64
node_bytes (CowscopeSharingGraph *graph, const CowscopeGraphNode *n)
{
  if (n->kind == COWSCOPE_NODE_CONTEXT && n->nbytes == 0 && n->allocation_id != 0)
    {
      gint a = cowscope_sharing_graph_lookup (graph, COWSCOPE_NODE_ALLOCATION, n->pid,
                                              n->allocation_id);
      if (a >= 0)
        return cowscope_sharing_graph_get_node (graph, (guint) a)->nbytes;
    }
  return n->nbytes;
}

/* The person-readable first and second lines of a unit. */
static void
unit_labels (CowscopeSharingGraph *graph, const Unit *u, char **label, char **detail)
{
  g_autofree char *size = g_format_size (u->nbytes);
  const CowscopeGraphNode *n =
    u->graph_index >= 0 ? cowscope_sharing_graph_get_node (graph, (guint) u->graph_index) : NULL;

  if (u->type == COWSCOPE_SCENE_NODE_GROUP)
    {
      *label = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "×%u tensor", "×%u tensors",
                                             u->n_members), u->n_members);
      *detail = g_strdup_printf (_("views of storage %" PRIu64), u->id);
      return;
    }
  if (u->type == COWSCOPE_SCENE_NODE_OVERFLOW)
    {
      switch (u->kind)
        {
        case COWSCOPE_NODE_ALLOCATION:
          *label = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "×%u more allocation",
                                                 "×%u more allocations", u->n_members),
                                    u->n_members);
          break;
        case COWSCOPE_NODE_CONTEXT:
          *label = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "×%u more context",
                                                 "×%u more contexts", u->n_members),
                                    u->n_members);
          break;
        case COWSCOPE_NODE_STORAGE:
          *label = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "×%u more storage",
                                                 "×%u more storages", u->n_members),
                                    u->n_members);
          break;
        case COWSCOPE_NODE_IPC_BLOCK:
        case COWSCOPE_NODE_IPC_RECEIVED:
          *label = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "×%u more shared block",
                                                 "×%u more shared blocks", u->n_members),
                                    u->n_members);
          break;
        default:
          *label = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "×%u more tensor",
                                                 "×%u more tensors", u->n_members),
                                    u->n_members);
          break;
        }
      /* Translators: %s is a size, %u a process id */
      *detail = g_strdup_printf (_("%s in process %u"), size, u->pid);
      return;
    }
  switch (u->kind)
    {
    case COWSCOPE_NODE_ALLOCATION:
      *label = n->alloc_kind == 1
                 ? g_strdup_printf (_("CUDA allocation %" PRIu64), u->id)
                 : g_strdup_printf (_("allocation %" PRIu64), u->id);
      *detail = g_steal_pointer (&size);
      break;
    case COWSCOPE_NODE_CONTEXT:
      *label = g_strdup_printf (_("CoW context %" PRIu64), u->id);
      *detail = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "shared by %u storage",
                                              "shared by %u storages", n->refcount),
                                 n->refcount);
      break;
    case COWSCOPE_NODE_STORAGE:
      *label = g_strdup_printf (_("storage %" PRIu64), u->id);
      *detail = g_steal_pointer (&size);
      break;
    case COWSCOPE_NODE_IPC_BLOCK:
      {
        g_autofree char *id = g_strdup_printf ("%" G_GUINT64_FORMAT, u->id);
        *label = n->state == COWSCOPE_NODE_STATE_LIMBO
                   /* Translators: %s is an allocation id */
                   ? g_strdup_printf (_("block %s in limbo"), id)
                   /* Translators: %s is an allocation id */
                   : g_strdup_printf (_("sent block %s"), id);
        /* Translators: %s is a size, %u how many consumers count the block */
        *detail = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "%s · %u consumer",
                                                "%s · %u consumers", n->refcount),
                                   size, n->refcount);
      }
      break;
    case COWSCOPE_NODE_IPC_RECEIVED:
      /* Translators: a consumer's received-data record; %u is the producer's pid */
      *label = g_strdup_printf (_("received from %u"), n->peer_pid);
      *detail = g_steal_pointer (&size);
      break;
    default:
      *label = n->label != NULL ? g_strdup (n->label)
                                : g_strdup_printf (_("tensor %" PRIu64), u->id);
      *detail = g_steal_pointer (&size);
      break;
    }
}

/* The node's size in scene units: wider and taller with more bytes,
 * never narrower than its label needs (estimated at 7 units a char). */
static void
unit_size (const Unit *u, const char *label, const char *detail, double *w, double *h)
{
  double lb = log2 ((double) MAX (u->nbytes, 256) / 256.0); /* 0 at 256 B, 22 at 1 GiB */
  double text = 7.0 * (double) MAX (g_utf8_strlen (label, -1), g_utf8_strlen (detail, -1)) + 20;
  /* Pills and hexagons lose about two thirds of their height to the ends. */
  if (u->kind == COWSCOPE_NODE_TENSOR || u->kind == COWSCOPE_NODE_CONTEXT
      || u->kind == COWSCOPE_NODE_IPC_BLOCK || u->kind == COWSCOPE_NODE_IPC_RECEIVED)
    text += 26;
  *w = CLAMP (64 + 6.0 * lb, 64, 200);
  *w = MAX (*w, MIN (text, 250));
  *h = CLAMP (34 + 0.9 * lb, 34, 54);
  if (u->type != COWSCOPE_SCENE_NODE_OBJECT)
    *h += 6;
}

/* ---- Graphviz ---------------------------------------------------------- */

#define SCENE_MARGIN 16.0 /* around the layout, scene units */

/* The distinct processes of @units, in order of first appearance. */
static GArray *
unit_pids (GArray *units)
{
  GArray *pids = g_array_new (FALSE, FALSE, sizeof (guint32));
  for (guint i = 0; i < units->len; i++)
    {
      guint32 pid = g_array_index (units, Unit, i).pid;
      gboolean known = FALSE;
      for (guint k = 0; k < pids->len && !known; k++)
        known = g_array_index (pids, guint32, k) == pid;
      if (!known)
        g_array_append_val (pids, pid);
    }
  return pids;
}

/* Frees the labels of the scene nodes in @nodes, then @nodes. */
static void
scene_nodes_free (GArray *nodes)
{
  for (guint i = 0; i < nodes->len; i++)
    {
      CowscopeSceneNode *n = &g_array_index (nodes, CowscopeSceneNode, i);
      g_free (n->label);
      g_free (n->detail);
    }
  g_array_unref (nodes);
}

/* Frees the Béziers of the scene edges in @edges, then @edges. */
static void
scene_edges_free (GArray *edges)
{
  for (guint i = 0; i < edges->len; i++)
    g_free (g_array_index (edges, CowscopeSceneEdge, i).points);
  g_array_unref (edges);
}

/* Frees the labels of the process boxes in @clusters, then @clusters. */
static void
scene_clusters_free (GArray *clusters)
{
  for (guint i = 0; i < clusters->len; i++)
    g_free (g_array_index (clusters, CowscopeSceneCluster, i).label);
  g_array_unref (clusters);
}

/* One scene node per unit: what it stands for, its labels and its size
 * (the layout places it). */
static GArray *
scene_nodes_new (CowscopeSharingGraph *graph, GArray *units)
{
  GArray *nodes = g_array_sized_new (FALSE, TRUE, sizeof (CowscopeSceneNode), units->len);
  g_array_set_size (nodes, units->len);
  for (guint i = 0; i < units->len; i++)
    {
      const Unit *u = &g_array_index (units, Unit, i);
      CowscopeSceneNode *n = &g_array_index (nodes, CowscopeSceneNode, i);
      n->type = u->type;
      n->kind = u->kind;
      n->state = u->state;
      n->freed_soon = u->freed_soon;
      n->pid = u->pid;
      n->id = u->id;
      n->nbytes = u->nbytes;
      n->n_members = u->n_members;
      n->graph_index = u->type == COWSCOPE_SCENE_NODE_OBJECT ? u->graph_index : -1;
      unit_labels (graph, u, &n->label, &n->detail);
      unit_size (u, n->label, n->detail, &n->width, &n->height);
    }
  return nodes;
}

/* The Graphviz input for the units of process @pid (all of them when
 * @all_pids): @nodes as fixed-size boxes named by index, its connected
 * components packed in an array, and the edges of @uedges between two of
 * its units, with their kinds. */
static char *
write_dot (GArray *units, GArray *nodes, GArray *uedges, guint32 pid, gboolean all_pids)
{
  GString *dot = g_string_sized_new (64 + 48 * units->len + 24 * uedges->len);
  g_string_append (dot, "digraph g {\n"
                        " graph [rankdir=TB, nodesep=0.28, ranksep=0.42,"
                        " pack=16, packmode=\"array\", splines=true, outputorder=edgesfirst];\n"
                        " node [shape=box, fixedsize=true, label=\"\"];\n"
                        " edge [arrowsize=0.7];\n");
  for (guint i = 0; i < units->len; i++)
    {
      if (!all_pids && g_array_index (units, Unit, i).pid != pid)
        continue;
      const CowscopeSceneNode *n = &g_array_index (nodes, CowscopeSceneNode, i);
      char wbuf[G_ASCII_DTOSTR_BUF_SIZE], hbuf[G_ASCII_DTOSTR_BUF_SIZE];
      g_ascii_formatd (wbuf, sizeof wbuf, "%.3f", n->width / 72.0);
      g_ascii_formatd (hbuf, sizeof hbuf, "%.3f", n->height / 72.0);
      g_string_append_printf (dot, " n%u [width=%s, height=%s];\n", i, wbuf, hbuf);
    }
  for (guint i = 0; i < uedges->len; i += 3)
    {
      guint from = g_array_index (uedges, guint, i), to = g_array_index (uedges, guint, i + 1);
      if (!all_pids && (g_array_index (units, Unit, from).pid != pid ||
                        g_array_index (units, Unit, to).pid != pid))
        continue;
      g_string_append_printf (dot, " n%u -> n%u [k=%u];\n", from, to,
                              g_array_index (uedges, guint, i + 2));
    }
  g_string_append (dot, "}\n");
  return g_string_free (dot, FALSE);
}

/* Where a layout's coordinates go in the scene: Graphviz's y grows
 * upwards from its bounding box's bottom, the scene's downwards; (@dx,
 * @dy) is where the bounding box's top-left corner lands. */
typedef struct {
  boxf bb;
  double dx, dy;
} Placement;

static inline double
scene_x (const Placement *at, double x)
{
  return x - at->bb.LL.x + at->dx;
}

static inline double
scene_y (const Placement *at, double y)
{
  return at->bb.UR.y - y + at->dy;
}

/* Puts each of @nodes laid out in @g where @at places the layout. */
static void
read_node_positions (Agraph_t *g, GArray *nodes, const Placement *at)
{
  for (Agnode_t *an = agfstnode (g); an != NULL; an = agnxtnode (g, an))
    {
      guint i = (guint) strtoul (agnameof (an) + 1, NULL, 10);
      if (i >= nodes->len)
        continue;
      CowscopeSceneNode *n = &g_array_index (nodes, CowscopeSceneNode, i);
      pointf c = ND_coord (an);
      n->width = ND_width (an) * 72.0;
      n->height = ND_height (an) * 72.0;
      n->x = scene_x (at, c.x) - n->width / 2;
      n->y = scene_y (at, c.y) - n->height / 2;
    }
}

/* Appends the edges of laid-out graph @g to @edges: their kind, Bézier
 * and arrow tip, placed by @at. */
static void
read_edges (Agraph_t *g, const Placement *at, GArray *edges)
{
  for (Agnode_t *an = agfstnode (g); an != NULL; an = agnxtnode (g, an))
    for (Agedge_t *ae = agfstout (g, an); ae != NULL; ae = agnxtout (g, ae))
      {
        CowscopeSceneEdge e = { 0 };
        e.from = (guint) strtoul (agnameof (agtail (ae)) + 1, NULL, 10);
        e.to = (guint) strtoul (agnameof (aghead (ae)) + 1, NULL, 10);
        const char *k = agget (ae, "k");
        e.kind = k != NULL ? (guint8) atoi (k) : COWSCOPE_EDGE_VIEW_OF;
        splines *spl = ED_spl (ae);
        if (spl != NULL && spl->size > 0 && spl->list[0].size > 0)
          {
            bezier *bz = &spl->list[0];
            e.n_points = (guint) bz->size;
            e.points = g_new (double, 2 * e.n_points);
            for (guint p = 0; p < e.n_points; p++)
              {
                e.points[2 * p] = scene_x (at, bz->list[p].x);
                e.points[2 * p + 1] = scene_y (at, bz->list[p].y);
              }
            if (bz->eflag)
              {
                e.has_arrow = TRUE;
                e.arrow_x = scene_x (at, bz->ep.x);
                e.arrow_y = scene_y (at, bz->ep.y);
              }
          }
        g_array_append_val (edges, e);
      }
}

/* Lays out the units of process @pid (all of them when @all_pids) with
 * Graphviz `dot`; on success returns the layout (gvFreeLayout() and
 * agclose() it) with its bounding box in @bb. */
static Agraph_t *
layout_dot (GArray *units, GArray *nodes, GArray *uedges, guint32 pid, gboolean all_pids,
            boxf *bb)
{
  if (layout_gvc == NULL)
    layout_gvc = gvContext ();
  agseterr (AGERR);
  char *dot = write_dot (units, nodes, uedges, pid, all_pids);
  Agraph_t *g = agmemread (dot);
  g_free (dot);
  if (g == NULL)
    return NULL;
  if (gvLayout (layout_gvc, g, "dot") != 0)
    {
      agclose (g);
      return NULL;
    }
  *bb = GD_bb (g);
  return g;
}

#define CLUSTER_PADDING 12.0 /* inside a process box, around its nodes */
#define CLUSTER_LABEL 20.0   /* above its nodes, for the process's name */
#define CLUSTER_GAP 28.0     /* between process boxes */

/* How far a straight line from the centre of node @n towards (@dx, @dy)
 * runs inside the node (to start or end an edge at its border). */
static double
border_distance (const CowscopeSceneNode *n, double dx, double dy)
{
  double len = hypot (dx, dy);
  if (len == 0)
    return 0;
  double tx = fabs (dx) > 1e-9 ? (n->width / 2) / fabs (dx) : G_MAXDOUBLE;
  double ty = fabs (dy) > 1e-9 ? (n->height / 2) / fabs (dy) : G_MAXDOUBLE;
  return MIN (tx, ty) * len;
}

/* Edges between processes are not part of any process's layout: each is
 * a straight cubic from the border of its tail to just before the border
 * of its head, where the arrow ends. */
static void
add_cross_process_edges (GArray *units, GArray *nodes, GArray *uedges, GArray *edges)
{
  const double arrow = 7.0;
  for (guint i = 0; i < uedges->len; i += 3)
    {
      guint from = g_array_index (uedges, guint, i), to = g_array_index (uedges, guint, i + 1);
      if (g_array_index (units, Unit, from).pid == g_array_index (units, Unit, to).pid)
        continue;
      const CowscopeSceneNode *a = &g_array_index (nodes, CowscopeSceneNode, from);
      const CowscopeSceneNode *b = &g_array_index (nodes, CowscopeSceneNode, to);
      double ax = a->x + a->width / 2, ay = a->y + a->height / 2;
      double bx = b->x + b->width / 2, by = b->y + b->height / 2;
      double dx = bx - ax, dy = by - ay, len = hypot (dx, dy);
      if (len == 0)
        continue;
      double ux = dx / len, uy = dy / len;
      double start = border_distance (a, dx, dy);
      double tip = len - border_distance (b, dx, dy);
      double end = MAX (start, tip - arrow);
      CowscopeSceneEdge e = { 0 };
      e.from = from;
      e.to = to;
      e.kind = (guint8) g_array_index (uedges, guint, i + 2);
      e.n_points = 4;
      e.points = g_new (double, 8);
      for (guint p = 0; p < 4; p++)
        {
          double d = start + (end - start) * p / 3.0;
          e.points[2 * p] = ax + ux * d;
          e.points[2 * p + 1] = ay + uy * d;
        }
      e.has_arrow = TRUE;
      e.arrow_x = ax + ux * tip;
      e.arrow_y = ay + uy * tip;
      g_array_append_val (edges, e);
    }
}

/* One process's box: its layout's size plus padding and its name. */
static CowscopeSceneCluster
cluster_new (CowscopeSharingGraph *graph, guint32 pid, boxf bb)
{
  CowscopeSceneCluster cl = { 0 };
  cl.pid = pid;
  cl.width = bb.UR.x - bb.LL.x + 2 * CLUSTER_PADDING;
  cl.height = bb.UR.y - bb.LL.y + CLUSTER_PADDING + CLUSTER_LABEL;
  const char *name = cowscope_sharing_graph_get_process_label (graph, pid);
  cl.label = name ? g_strdup (name) : g_strdup_printf (_("Process %u"), pid);
  return cl;
}

/* Whether process @pid sends to others (it is the tail of an edge
 * between processes) and receives from none: an IPC producer. */
static gboolean
is_producer (GArray *units, GArray *uedges, guint32 pid)
{
  gboolean sends = FALSE;
  for (guint i = 0; i < uedges->len; i += 3)
    {
      guint32 from = g_array_index (units, Unit, g_array_index (uedges, guint, i)).pid;
      guint32 to = g_array_index (units, Unit, g_array_index (uedges, guint, i + 1)).pid;
      if (from == to)
        continue;
      if (to == pid)
        return FALSE;
      sends |= from == pid;
    }
  return sends;
}

/* Places the process boxes of @clusters in rows, each row centred: the
 * first @n_first boxes (producers) on rows of their own above the
 * others, so that edges between processes run downwards, and rows about
 * as wide as the boxes are tall together.  Sets the boxes' x and y and
 * the scene's size. */
static void
place_clusters (GArray *clusters, guint n_first, double *width, double *height)
{
  double area = 0, widest = 0;
  for (guint k = 0; k < clusters->len; k++)
    {
      const CowscopeSceneCluster *cl = &g_array_index (clusters, CowscopeSceneCluster, k);
      area += (cl->width + CLUSTER_GAP) * (cl->height + CLUSTER_GAP);
      widest = MAX (widest, cl->width);
    }
  double row_limit = MAX (widest, sqrt (area) * 1.5);
  /* Rows: [row_start[r], row_start[r + 1]) */
  g_autofree guint *row_start = g_new (guint, clusters->len + 1);
  g_autofree double *row_width = g_new0 (double, clusters->len + 1);
  guint n_rows = 0;
  for (guint k = 0; k < clusters->len; k++)
    {
      double w = g_array_index (clusters, CowscopeSceneCluster, k).width;
      if (n_rows == 0 || k == n_first || row_width[n_rows - 1] + CLUSTER_GAP + w > row_limit)
        {
          row_start[n_rows] = k;
          row_width[n_rows++] = w;
        }
      else
        row_width[n_rows - 1] += CLUSTER_GAP + w;
    }
  row_start[n_rows] = clusters->len;
  double total = 0;
  for (guint r = 0; r < n_rows; r++)
    total = MAX (total, row_width[r]);
  double y = SCENE_MARGIN;
  for (guint r = 0; r < n_rows; r++)
    {
      double x = SCENE_MARGIN + (total - row_width[r]) / 2, row_height = 0;
      for (guint k = row_start[r]; k < row_start[r + 1]; k++)
        {
          CowscopeSceneCluster *cl = &g_array_index (clusters, CowscopeSceneCluster, k);
          cl->x = x;
          cl->y = y;
          x += cl->width + CLUSTER_GAP;
          row_height = MAX (row_height, cl->height);
        }
      y += row_height + CLUSTER_GAP;
    }
  *width = total + 2 * SCENE_MARGIN;
  *height = y - CLUSTER_GAP + SCENE_MARGIN;
}

/* Lays out each process of @pids on its own (Graphviz's clusters cost
 * several times the layout of the same nodes apart), places the process
 * boxes and draws the edges between processes.  Returns FALSE when
 * Graphviz fails. */
static gboolean
layout_processes (CowscopeSharingGraph *graph, GArray *units, GArray *nodes, GArray *uedges,
                  GArray *pids, GArray *edges, GArray *clusters, double *width, double *height)
{
  /* Producers first: they go on top. */
  g_autoptr (GArray) order = g_array_sized_new (FALSE, FALSE, sizeof (guint32), pids->len);
  for (int producers = 1; producers >= 0; producers--)
    for (guint k = 0; k < pids->len; k++)
      {
        guint32 pid = g_array_index (pids, guint32, k);
        if (is_producer (units, uedges, pid) == producers)
          g_array_append_val (order, pid);
      }
  guint n_producers = 0;
  while (n_producers < order->len &&
         is_producer (units, uedges, g_array_index (order, guint32, n_producers)))
    n_producers++;

  g_autofree boxf *bbs = g_new (boxf, order->len);
  g_autofree Agraph_t **layouts = g_new0 (Agraph_t *, order->len);
  gboolean ok = TRUE;
  for (guint k = 0; k < order->len && ok; k++)
    {
      guint32 pid = g_array_index (order, guint32, k);
      layouts[k] = layout_dot (units, nodes, uedges, pid, FALSE, &bbs[k]);
      ok = layouts[k] != NULL;
      if (ok)
        {
          CowscopeSceneCluster cl = cluster_new (graph, pid, bbs[k]);
          g_array_append_val (clusters, cl);
        }
    }
  if (ok)
    {
      place_clusters (clusters, n_producers, width, height);
      for (guint k = 0; k < order->len; k++)
        {
          const CowscopeSceneCluster *cl = &g_array_index (clusters, CowscopeSceneCluster, k);
          Placement at = { bbs[k], cl->x + CLUSTER_PADDING, cl->y + CLUSTER_LABEL };
          read_node_positions (layouts[k], nodes, &at);
          read_edges (layouts[k], &at, edges);
        }
      add_cross_process_edges (units, nodes, uedges, edges);
    }
  for (guint k = 0; k < order->len; k++)
    if (layouts[k] != NULL)
      {
        gvFreeLayout (layout_gvc, layouts[k]);
        agclose (layouts[k]);
      }
  return ok;
}

/* Lays out the units of a single process: one packed Graphviz layout. */
static gboolean
layout_single (GArray *units, GArray *nodes, GArray *uedges, GArray *edges, double *width,
               double *height)
{
  boxf bb;
  Agraph_t *g = layout_dot (units, nodes, uedges, 0, TRUE, &bb);
  if (g == NULL)
    return FALSE;
  Placement at = { bb, SCENE_MARGIN, SCENE_MARGIN };
  read_node_positions (g, nodes, &at);
  read_edges (g, &at, edges);
  *width = bb.UR.x - bb.LL.x + 2 * SCENE_MARGIN;
  *height = bb.UR.y - bb.LL.y + 2 * SCENE_MARGIN;
  gvFreeLayout (layout_gvc, g);
  agclose (g);
  return TRUE;
}

/* Lays out @units with @uedges (triples: unit indices and kind) and
 * returns the scene.  Layout thread only. */
static CowscopeGraphScene *
run_graphviz (CowscopeSharingGraph *graph, GArray *units, GArray *uedges,
              CowscopeSceneStats *stats, GError **error)
{
  g_assert (cowscope_graph_layout_is_layout_thread ());
  g_autoptr (GArray) pids = unit_pids (units);
  GArray *nodes = scene_nodes_new (graph, units);
  GArray *edges = g_array_new (FALSE, TRUE, sizeof (CowscopeSceneEdge));
  GArray *clusters = NULL;
  double width = 0, height = 0;
  gint64 t0 = g_get_monotonic_time ();
  gboolean ok;
  if (pids->len >= 2)
    {
      clusters = g_array_new (FALSE, TRUE, sizeof (CowscopeSceneCluster));
      ok = layout_processes (graph, units, nodes, uedges, pids, edges, clusters, &width, &height);
    }
  else
    ok = layout_single (units, nodes, uedges, edges, &width, &height);
  stats->layout_ms = (double) (g_get_monotonic_time () - t0) / 1000.0;
  if (!ok)
    {
      scene_nodes_free (nodes);
      scene_edges_free (edges);
      if (clusters != NULL)
        scene_clusters_free (clusters);
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_FAILED,
                           _("Graphviz could not lay out the graph"));
      return NULL;
    }
  CowscopeGraphScene *scene = cowscope_graph_scene_new_take (graph, nodes, edges, width, height,
                                                             stats);
  if (clusters != NULL)
    cowscope_graph_scene_set_clusters (scene, clusters);
  return scene;
}

/* ---- aggregation, step by step ------------------------------------------ */

/* 1. The size filter: which of the graph's objects stay visible (those of
 * at least options->min_bytes, and the focused ones). */
static guint8 *
filter_by_size (CowscopeSharingGraph *graph, const CowscopeGraphLayoutOptions *options,
                CowscopeSceneStats *stats)
{
  guint n_nodes = cowscope_sharing_graph_get_n_nodes (graph);
  guint8 *visible = g_new0 (guint8, MAX (n_nodes, 1));
  for (guint i = 0; i < n_nodes; i++)
    {
      const CowscopeGraphNode *n = cowscope_sharing_graph_get_node (graph, i);
      visible[i] = options->min_bytes == 0 || node_bytes (graph, n) >= options->min_bytes ||
                   refs_contain (options->focus, options->n_focus, n->kind, n->pid, n->id);
      if (!visible[i])
        stats->n_filtered++;
    }
  return visible;
}

/* 2. Views of one storage: for each visible tensor viewing a visible
 * storage, that storage (@storage_of, else -1), and for each storage how
 * many visible tensors view it (@views). */
static void
count_views (CowscopeSharingGraph *graph, const guint8 *visible, gint **storage_of,
             guint **views)
{
  guint n_nodes = cowscope_sharing_graph_get_n_nodes (graph);
  guint n_edges = cowscope_sharing_graph_get_n_edges (graph);
  *views = g_new0 (guint, MAX (n_nodes, 1));
  *storage_of = g_new (gint, MAX (n_nodes, 1));
  for (guint i = 0; i < n_nodes; i++)
    (*storage_of)[i] = -1;
  for (guint i = 0; i < n_edges; i++)
    {
      const CowscopeGraphEdge *e = cowscope_sharing_graph_get_edge (graph, i);
      const CowscopeGraphNode *a = cowscope_sharing_graph_get_node (graph, e->from);
      const CowscopeGraphNode *b = cowscope_sharing_graph_get_node (graph, e->to);
      if (e->kind == COWSCOPE_EDGE_VIEW_OF && a->kind == COWSCOPE_NODE_TENSOR &&
          b->kind == COWSCOPE_NODE_STORAGE && visible[e->from] && visible[e->to])
        {
          (*storage_of)[e->from] = (gint) e->to;
          (*views)[e->to]++;
        }
    }
}

/* Adds member @n (object @i, focused or not) to the group of the views of
 * storage @s, creating the group unit first; returns the group's unit. */
static gint
join_group (CowscopeSharingGraph *graph, GArray *units, gint *group_unit, gint s,
            const CowscopeGraphNode *n, gboolean focused, CowscopeSceneStats *stats)
{
  if (group_unit[s] < 0)
    {
      const CowscopeGraphNode *sn = cowscope_sharing_graph_get_node (graph, (guint) s);
      Unit g = { .type = COWSCOPE_SCENE_NODE_GROUP, .kind = COWSCOPE_NODE_TENSOR,
                 .state = sn->state, .pid = sn->pid, .id = sn->id, .graph_index = s };
      group_unit[s] = (gint) units->len;
      g_array_append_val (units, g);
      stats->n_groups++;
    }
  Unit *g = &g_array_index (units, Unit, group_unit[s]);
  g->n_members++;
  g->nbytes += n->nbytes;
  g->freed_soon |= n->freed_soon;
  g->focused |= focused;
  stats->n_grouped++;
  return group_unit[s];
}

/* 3. The units: one per visible object, except that the views of a
 * storage viewed by more than @threshold tensors (and not expanded) join
 * one group unit.  @unit_of receives each object's unit (-1: hidden). */
static GArray *
make_units (CowscopeSharingGraph *graph, const CowscopeGraphLayoutOptions *options,
            guint threshold, const guint8 *visible, const gint *storage_of, const guint *views,
            gint **unit_of, CowscopeSceneStats *stats)
{
  guint n_nodes = cowscope_sharing_graph_get_n_nodes (graph);
  GArray *units = g_array_new (FALSE, TRUE, sizeof (Unit));
  *unit_of = g_new (gint, MAX (n_nodes, 1));
  g_autofree gint *group_unit = g_new (gint, MAX (n_nodes, 1)); /* by storage index */
  for (guint i = 0; i < n_nodes; i++)
    (*unit_of)[i] = group_unit[i] = -1;
  for (guint i = 0; i < n_nodes; i++)
    {
      if (!visible[i])
        continue;
      const CowscopeGraphNode *n = cowscope_sharing_graph_get_node (graph, i);
      gboolean focused = refs_contain (options->focus, options->n_focus, n->kind, n->pid, n->id);
      gint s = storage_of[i];
      if (s >= 0 && views[s] > threshold)
        {
          const CowscopeGraphNode *sn = cowscope_sharing_graph_get_node (graph, (guint) s);
          if (!refs_contain (options->expanded, options->n_expanded, COWSCOPE_NODE_STORAGE,
                             sn->pid, sn->id))
            {
              (*unit_of)[i] = join_group (graph, units, group_unit, s, n, focused, stats);
              continue;
            }
        }
      Unit u = { .type = COWSCOPE_SCENE_NODE_OBJECT, .kind = n->kind, .state = n->state,
                 .freed_soon = n->freed_soon, .pid = n->pid, .id = n->id,
                 .nbytes = node_bytes (graph, n), .n_members = 1, .graph_index = (gint) i,
                 .focused = focused };
      (*unit_of)[i] = (gint) units->len;
      g_array_append_val (units, u);
    }
  return units;
}

/* The graph's edges between units, without duplicates or loops: triples
 * (from, to, kind) in the order the graph first has them. */
static GArray *
unit_edges (CowscopeSharingGraph *graph, const gint *unit_of)
{
  guint n_edges = cowscope_sharing_graph_get_n_edges (graph);
  GArray *uedges = g_array_new (FALSE, FALSE, sizeof (guint));
  g_autoptr (GHashTable) seen = g_hash_table_new (g_int64_hash, g_int64_equal);
  g_autoptr (GArray) keys = g_array_sized_new (FALSE, FALSE, sizeof (gint64), n_edges);
  for (guint i = 0; i < n_edges; i++)
    {
      const CowscopeGraphEdge *e = cowscope_sharing_graph_get_edge (graph, i);
      gint a = unit_of[e->from], b = unit_of[e->to];
      if (a < 0 || b < 0 || a == b)
        continue;
      gint64 key = ((gint64) a << 35) | ((gint64) b << 3) | e->kind;
      g_array_append_val (keys, key);
    }
  /* The hash keys point into `keys`, which no longer grows. */
  for (guint i = 0; i < keys->len; i++)
    {
      gint64 *key = &g_array_index (keys, gint64, i);
      if (g_hash_table_contains (seen, key))
        continue;
      g_hash_table_add (seen, key);
      guint triple[3] = { (guint) (*key >> 35), (guint) ((*key >> 3) & 0xffffffff),
                          (guint) (*key & 7) };
      g_array_append_vals (uedges, triple, 3);
    }
  return uedges;
}

/* 4a. The connected components of @units over @uedges: union-find
 * parents (uf_find() gives each unit's root). */
static guint *
unit_components (GArray *units, GArray *uedges)
{
  guint *parent = g_new (guint, MAX (units->len, 1));
  for (guint i = 0; i < units->len; i++)
    parent[i] = i;
  for (guint i = 0; i < uedges->len; i += 3)
    {
      guint a = uf_find (parent, g_array_index (uedges, guint, i));
      guint b = uf_find (parent, g_array_index (uedges, guint, i + 1));
      if (a != b)
        parent[a] = b;
    }
  return parent;
}

/* 4b. Which components to keep, by their root: by priority (focused,
 * then sharing, then the others), then bytes, then size, while they fit
 * in @budget units; a focused component is always kept, and so is the
 * first one. */
static guint8 *
keep_components (GArray *units, guint *parent, guint budget)
{
  g_autofree gint *comp_of_root = g_new (gint, MAX (units->len, 1));
  for (guint i = 0; i < units->len; i++)
    comp_of_root[i] = -1;
  g_autoptr (GArray) comps = g_array_new (FALSE, TRUE, sizeof (Component));
  for (guint i = 0; i < units->len; i++)
    {
      Unit *u = &g_array_index (units, Unit, i);
      guint r = uf_find (parent, i);
      if (comp_of_root[r] < 0)
        {
          Component c = { .root = r };
          comp_of_root[r] = (gint) comps->len;
          g_array_append_val (comps, c);
        }
      Component *c = &g_array_index (comps, Component, comp_of_root[r]);
      c->size++;
      c->nbytes += u->nbytes;
      guint p = u->focused ? 2
                : (u->state != COWSCOPE_NODE_STATE_OWNED || u->type != COWSCOPE_SCENE_NODE_OBJECT) ? 1
                : 0;
      c->priority = MAX (c->priority, p);
    }
  g_array_sort (comps, compare_components);
  guint8 *keep_root = g_new0 (guint8, MAX (units->len, 1));
  guint kept = 0;
  for (guint c = 0; c < comps->len; c++)
    {
      Component *cp = &g_array_index (comps, Component, c);
      if (kept + cp->size > budget && !(cp->priority == 2) && kept > 0)
        continue;
      keep_root[cp->root] = 1;
      kept += cp->size;
    }
  return keep_root;
}

/* 4c. Replaces @units and @uedges by the kept units, then one overflow
 * unit per (pid, kind) counting the others; edges renumbered, those to
 * an overflow unit dropped. */
static void
fold_overflow (GArray **units, GArray **uedges, guint *parent, const guint8 *keep_root,
               CowscopeSceneStats *stats)
{
  GArray *old = *units;
  g_autofree gint *renum = g_new (gint, MAX (old->len, 1));
  GArray *next = g_array_new (FALSE, TRUE, sizeof (Unit));
  g_autoptr (GHashTable) overflow = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free,
                                                           NULL);
  for (guint i = 0; i < old->len; i++)
    {
      Unit *u = &g_array_index (old, Unit, i);
      if (keep_root[uf_find (parent, i)])
        {
          renum[i] = (gint) next->len;
          g_array_append_val (next, *u);
        }
      else
        renum[i] = -1;
    }
  for (guint i = 0; i < old->len; i++)
    {
      Unit *u = &g_array_index (old, Unit, i);
      if (renum[i] >= 0)
        continue;
      gint64 key = ((gint64) u->pid << 8) | u->kind;
      gpointer found = NULL;
      if (!g_hash_table_lookup_extended (overflow, &key, NULL, &found))
        {
          Unit o = { .type = COWSCOPE_SCENE_NODE_OVERFLOW, .kind = u->kind,
                     .state = COWSCOPE_NODE_STATE_OWNED, .pid = u->pid, .graph_index = -1 };
          g_array_append_val (next, o);
          found = GUINT_TO_POINTER (next->len - 1);
          g_hash_table_insert (overflow, g_memdup2 (&key, sizeof key), found);
        }
      Unit *o = &g_array_index (next, Unit, GPOINTER_TO_UINT (found));
      o->n_members += u->n_members;
      o->nbytes += u->nbytes;
      stats->n_aggregated += u->n_members;
    }
  GArray *nextedges = g_array_new (FALSE, FALSE, sizeof (guint));
  for (guint i = 0; i < (*uedges)->len; i += 3)
    {
      gint a = renum[g_array_index (*uedges, guint, i)];
      gint b = renum[g_array_index (*uedges, guint, i + 1)];
      if (a < 0 || b < 0)
        continue;
      guint triple[3] = { (guint) a, (guint) b, g_array_index (*uedges, guint, i + 2) };
      g_array_append_vals (nextedges, triple, 3);
    }
  g_array_unref (old);
  *units = next;
  g_array_unref (*uedges);
  *uedges = nextedges;
}

/* 4. Over @max_nodes units: keeps whole components by priority and
 * counts the rest in overflow units. */
static void
keep_within_budget (GArray **units, GArray **uedges, guint max_nodes, CowscopeSceneStats *stats)
{
  g_autofree guint *parent = unit_components (*units, *uedges);
  /* Room for the overflow nodes (at most 4 kinds × a few processes). */
  guint budget = max_nodes > 64 ? max_nodes - 32 : max_nodes;
  g_autofree guint8 *keep_root = keep_components (*units, parent, budget);
  fold_overflow (units, uedges, parent, keep_root, stats);
}

/* Aggregates @graph as the header describes, then lays it out. */
static CowscopeGraphScene *
layout_run (CowscopeSharingGraph *graph, const CowscopeGraphLayoutOptions *options,
            double build_ms, GCancellable *cancellable, GError **error)
{
  gint64 t0 = g_get_monotonic_time ();
  CowscopeSceneStats stats = { .build_ms = build_ms };
  stats.n_graph_nodes = cowscope_sharing_graph_get_n_nodes (graph);
  stats.n_graph_edges = cowscope_sharing_graph_get_n_edges (graph);
  guint threshold = options->group_threshold ? options->group_threshold
                                             : COWSCOPE_GRAPH_DEFAULT_GROUP_THRESHOLD;
  guint max_nodes = options->max_nodes ? options->max_nodes : COWSCOPE_GRAPH_DEFAULT_MAX_NODES;

  g_autofree guint8 *visible = filter_by_size (graph, options, &stats);
  g_autofree gint *storage_of = NULL;
  g_autofree guint *views = NULL;
  count_views (graph, visible, &storage_of, &views);
  g_autofree gint *unit_of = NULL;
  g_autoptr (GArray) units = make_units (graph, options, threshold, visible, storage_of, views,
                                         &unit_of, &stats);
  g_autoptr (GArray) uedges = unit_edges (graph, unit_of);
  if (units->len > max_nodes)
    keep_within_budget (&units, &uedges, max_nodes, &stats);
  stats.aggregate_ms = (double) (g_get_monotonic_time () - t0) / 1000.0;

  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return NULL;
  return run_graphviz (graph, units, uedges, &stats, error);
}
