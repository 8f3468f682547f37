/* cowscope-graph-scene.c — see cowscope-graph-scene.h. */
#include "cowscope-graph-scene.h"

struct _CowscopeGraphScene {
  GObject parent_instance;
  CowscopeSharingGraph *graph;
  GArray *nodes; /* CowscopeSceneNode */
  GArray *edges; /* CowscopeSceneEdge */
  GHashTable *by_object; /* "kind:pid:id" -> scene index + 1 */
  GArray *clusters;      /* CowscopeSceneCluster, or NULL */
  double width, height;
  CowscopeSceneStats stats;
};

G_DEFINE_FINAL_TYPE (CowscopeGraphScene, cowscope_graph_scene, G_TYPE_OBJECT)

enum { PROP_0, PROP_N_NODES, PROP_N_EDGES, N_PROPS };
static GParamSpec *properties[N_PROPS];

/* Frees what one node owns (GArray clear func). */
static void
clear_node (gpointer data)
{
  CowscopeSceneNode *n = data;
  g_clear_pointer (&n->label, g_free);
  g_clear_pointer (&n->detail, g_free);
}

/* Frees what one edge owns (GArray clear func). */
static void
clear_edge (gpointer data)
{
  CowscopeSceneEdge *e = data;
  g_clear_pointer (&e->points, g_free);
}

static void
cowscope_graph_scene_finalize (GObject *object)
{
  CowscopeGraphScene *self = COWSCOPE_GRAPH_SCENE (object);
  g_clear_object (&self->graph);
  g_clear_pointer (&self->nodes, g_array_unref);
  g_clear_pointer (&self->edges, g_array_unref);
  g_clear_pointer (&self->by_object, g_hash_table_unref);
  g_clear_pointer (&self->clusters, g_array_unref);
  G_OBJECT_CLASS (cowscope_graph_scene_parent_class)->finalize (object);
}

static void
cowscope_graph_scene_get_property (GObject *object, guint prop_id, GValue *value,
                                   GParamSpec *pspec)
{
  CowscopeGraphScene *self = COWSCOPE_GRAPH_SCENE (object);
  switch (prop_id)
    {
    case PROP_N_NODES: g_value_set_uint (value, self->nodes->len); break;
    case PROP_N_EDGES: g_value_set_uint (value, self->edges->len); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
cowscope_graph_scene_class_init (CowscopeGraphSceneClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  object_class->finalize = cowscope_graph_scene_finalize;
  object_class->get_property = cowscope_graph_scene_get_property;
  properties[PROP_N_NODES] = g_param_spec_uint ("n-nodes", NULL, NULL, 0, G_MAXUINT, 0,
                                                G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  properties[PROP_N_EDGES] = g_param_spec_uint ("n-edges", NULL, NULL, 0, G_MAXUINT, 0,
                                                G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
cowscope_graph_scene_init (CowscopeGraphScene *self)
{
}

/* Returns the key under which object (@kind, @pid, @id) is indexed. */
static char *
object_key (guint kind, guint32 pid, guint64 id)
{
  return g_strdup_printf ("%u:%u:%" G_GUINT64_FORMAT, kind, pid, id);
}

/* Builds the scene; every object of @graph that some scene node shows
 * (itself, or a group holding it) is indexed for find_object(). */
CowscopeGraphScene *
cowscope_graph_scene_new_take (CowscopeSharingGraph *graph, GArray *nodes, GArray *edges,
                               double width, double height, const CowscopeSceneStats *stats)
{
  g_return_val_if_fail (COWSCOPE_IS_SHARING_GRAPH (graph), NULL);
  CowscopeGraphScene *self = g_object_new (COWSCOPE_TYPE_GRAPH_SCENE, NULL);
  self->graph = g_object_ref (graph);
  self->nodes = nodes;
  self->edges = edges;
  g_array_set_clear_func (nodes, clear_node);
  g_array_set_clear_func (edges, clear_edge);
  self->width = width;
  self->height = height;
  if (stats != NULL)
    self->stats = *stats;
  self->by_object = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  for (guint i = 0; i < nodes->len; i++)
    {
      const CowscopeSceneNode *n = &g_array_index (nodes, CowscopeSceneNode, i);
      if (n->type == COWSCOPE_SCENE_NODE_OBJECT)
        g_hash_table_insert (self->by_object, object_key (n->kind, n->pid, n->id),
                             GUINT_TO_POINTER (i + 1));
    }
  return self;
}

CowscopeSharingGraph *
cowscope_graph_scene_get_graph (CowscopeGraphScene *self)
{
  g_return_val_if_fail (COWSCOPE_IS_GRAPH_SCENE (self), NULL);
  return self->graph;
}

double cowscope_graph_scene_get_width (CowscopeGraphScene *self) { return self->width; }
double cowscope_graph_scene_get_height (CowscopeGraphScene *self) { return self->height; }
guint cowscope_graph_scene_get_n_nodes (CowscopeGraphScene *self) { return self->nodes->len; }
guint cowscope_graph_scene_get_n_edges (CowscopeGraphScene *self) { return self->edges->len; }
const CowscopeSceneStats *cowscope_graph_scene_get_stats (CowscopeGraphScene *self) { return &self->stats; }

/* Node @i (must be < n_nodes). */
const CowscopeSceneNode *
cowscope_graph_scene_get_node (CowscopeGraphScene *self, guint i)
{
  g_return_val_if_fail (i < self->nodes->len, NULL);
  return &g_array_index (self->nodes, CowscopeSceneNode, i);
}

/* Edge @i (must be < n_edges). */
const CowscopeSceneEdge *
cowscope_graph_scene_get_edge (CowscopeGraphScene *self, guint i)
{
  g_return_val_if_fail (i < self->edges->len, NULL);
  return &g_array_index (self->edges, CowscopeSceneEdge, i);
}

/* Linear scan, last drawn first: nodes never overlap in a dot layout. */
gint
cowscope_graph_scene_pick (CowscopeGraphScene *self, double x, double y)
{
  g_return_val_if_fail (COWSCOPE_IS_GRAPH_SCENE (self), -1);
  for (guint i = self->nodes->len; i-- > 0;)
    {
      const CowscopeSceneNode *n = &g_array_index (self->nodes, CowscopeSceneNode, i);
      if (x >= n->x && x <= n->x + n->width && y >= n->y && y <= n->y + n->height)
        return (gint) i;
    }
  return -1;
}

/* Objects drawn as themselves come from the index; grouped tensors map to
 * their storage's group; anything else aggregated to its overflow node. */
gint
cowscope_graph_scene_find_object (CowscopeGraphScene *self, CowscopeNodeKind kind, guint32 pid,
                                  guint64 id)
{
  g_return_val_if_fail (COWSCOPE_IS_GRAPH_SCENE (self), -1);
  g_autofree char *key = object_key (kind, pid, id);
  gpointer found = g_hash_table_lookup (self->by_object, key);
  if (found != NULL)
    return GPOINTER_TO_INT (found) - 1;
  gint gi = cowscope_sharing_graph_lookup (self->graph, kind, pid, id);
  if (gi < 0)
    return -1;
  const CowscopeGraphNode *g = cowscope_sharing_graph_get_node (self->graph, (guint) gi);
  for (guint i = 0; i < self->nodes->len; i++)
    {
      const CowscopeSceneNode *n = &g_array_index (self->nodes, CowscopeSceneNode, i);
      if (n->type == COWSCOPE_SCENE_NODE_GROUP && kind == COWSCOPE_NODE_TENSOR &&
          n->pid == pid && n->id == g->storage_id)
        return (gint) i;
      if (n->type == COWSCOPE_SCENE_NODE_OVERFLOW && n->pid == pid && n->kind == kind)
        return (gint) i;
    }
  return -1;
}

/* Frees what one cluster owns (GArray clear func). */
static void
clear_cluster (gpointer data)
{
  CowscopeSceneCluster *c = data;
  g_clear_pointer (&c->label, g_free);
}

void
cowscope_graph_scene_set_clusters (CowscopeGraphScene *self, GArray *clusters)
{
  g_return_if_fail (COWSCOPE_IS_GRAPH_SCENE (self));
  g_clear_pointer (&self->clusters, g_array_unref);
  self->clusters = clusters;
  if (clusters != NULL)
    g_array_set_clear_func (clusters, clear_cluster);
}

guint
cowscope_graph_scene_get_n_clusters (CowscopeGraphScene *self)
{
  g_return_val_if_fail (COWSCOPE_IS_GRAPH_SCENE (self), 0);
  return self->clusters != NULL ? self->clusters->len : 0;
}

const CowscopeSceneCluster *
cowscope_graph_scene_get_cluster (CowscopeGraphScene *self, guint i)
{
  g_return_val_if_fail (COWSCOPE_IS_GRAPH_SCENE (self), NULL);
  if (self->clusters == NULL || i >= self->clusters->len)
    return NULL;
  return &g_array_index (self->clusters, CowscopeSceneCluster, i);
}

guint
cowscope_graph_scene_count_cross_process_edges (CowscopeGraphScene *self)
{
  g_return_val_if_fail (COWSCOPE_IS_GRAPH_SCENE (self), 0);
  guint n = 0;
  for (guint i = 0; i < self->edges->len; i++)
    n += COWSCOPE_EDGE_KIND_IS_CROSS_PROCESS (g_array_index (self->edges, CowscopeSceneEdge, i).kind);
  return n;
}
