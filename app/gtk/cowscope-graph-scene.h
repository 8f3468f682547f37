/* cowscope-graph-scene.h — one laid-out storage sharing graph.
 *
 * A scene is what the graph view draws: node rectangles and edge Bézier
 * curves in scene units (1 unit = 1 px at zoom 1, y grows downwards),
 * produced by the layout worker (cowscope-graph-layout.h) from a
 * CowscopeSharingGraph after filtering and grouping.  A scene is immutable
 * once built, so it is handed from the layout thread to the UI without
 * locks and may be read from any thread.
 */
#pragma once

#include <glib-object.h>

#include "cowscope-sharing-graph.h"

G_BEGIN_DECLS

typedef enum {
  COWSCOPE_SCENE_NODE_OBJECT,   /* one object of the sharing graph */
  COWSCOPE_SCENE_NODE_GROUP,    /* many tensors viewing one storage */
  COWSCOPE_SCENE_NODE_OVERFLOW, /* objects aggregated to keep the graph readable */
} CowscopeSceneNodeType;

typedef struct {
  double x, y, width, height; /* top-left corner and size, scene units */
  guint8 type;                /* CowscopeSceneNodeType */
  guint8 kind;                /* CowscopeNodeKind (groups: their members') */
  guint8 state;               /* CowscopeNodeState */
  guint8 freed_soon;
  guint32 pid;
  guint64 id;                 /* object id; groups: the storage viewed */
  guint64 nbytes;             /* groups: the members' sum */
  guint n_members;            /* groups and overflow nodes: objects inside */
  gint graph_index;           /* index in the sharing graph, -1 for groups */
  char *label;                /* first line (tensor name, "storage 12", "×60 tensors") */
  char *detail;               /* second line (size) */
} CowscopeSceneNode;

typedef struct {
  guint from, to;             /* scene node indices */
  guint8 kind;                /* CowscopeEdgeKind */
  guint8 has_arrow;
  guint n_points;             /* 1 + 3k cubic Bézier points (x, y pairs) */
  double *points;
  double arrow_x, arrow_y;    /* the arrow's tip when has_arrow */
} CowscopeSceneEdge;

/* A process drawn as a box around its nodes (graphs of several
 * processes: one Graphviz cluster each). */
typedef struct {
  double x, y, width, height; /* scene units */
  guint32 pid;
  char *label;                /* "cowscope-demo (pid 1234)" */
} CowscopeSceneCluster;

/* What the layout did, for the status line and the benchmark. */
typedef struct {
  guint n_graph_nodes, n_graph_edges; /* the model's graph */
  guint n_filtered;                   /* hidden by the size filter */
  guint n_grouped;                    /* inside group nodes */
  guint n_groups;
  guint n_aggregated;                 /* inside overflow nodes */
  double build_ms, aggregate_ms, layout_ms;
} CowscopeSceneStats;

#define COWSCOPE_TYPE_GRAPH_SCENE (cowscope_graph_scene_get_type ())
G_DECLARE_FINAL_TYPE (CowscopeGraphScene, cowscope_graph_scene, COWSCOPE, GRAPH_SCENE, GObject)

/* Takes @nodes (CowscopeSceneNode, owning label/detail) and @edges
 * (CowscopeSceneEdge, owning points); keeps a reference on @graph. */
CowscopeGraphScene *cowscope_graph_scene_new_take (CowscopeSharingGraph *graph, GArray *nodes,
                                                   GArray *edges, double width, double height,
                                                   const CowscopeSceneStats *stats);

/* Takes @clusters (CowscopeSceneCluster, owning labels); drawn behind
 * the nodes.  Layout thread, before the scene is handed out. */
void cowscope_graph_scene_set_clusters (CowscopeGraphScene *self, GArray *clusters);
guint cowscope_graph_scene_get_n_clusters (CowscopeGraphScene *self);
const CowscopeSceneCluster *cowscope_graph_scene_get_cluster (CowscopeGraphScene *self, guint i);
/* Edges that join two processes (CowscopeEdgeKind RECEIVED_BY, KEPT_ALIVE_BY). */
guint cowscope_graph_scene_count_cross_process_edges (CowscopeGraphScene *self);

/* The model graph the scene was made from (never NULL). */
CowscopeSharingGraph *cowscope_graph_scene_get_graph (CowscopeGraphScene *self);
double cowscope_graph_scene_get_width (CowscopeGraphScene *self);
double cowscope_graph_scene_get_height (CowscopeGraphScene *self);
guint cowscope_graph_scene_get_n_nodes (CowscopeGraphScene *self);
const CowscopeSceneNode *cowscope_graph_scene_get_node (CowscopeGraphScene *self, guint i);
guint cowscope_graph_scene_get_n_edges (CowscopeGraphScene *self);
const CowscopeSceneEdge *cowscope_graph_scene_get_edge (CowscopeGraphScene *self, guint i);
const CowscopeSceneStats *cowscope_graph_scene_get_stats (CowscopeGraphScene *self);

/* The topmost node containing scene point (@x, @y), or -1. */
gint cowscope_graph_scene_pick (CowscopeGraphScene *self, double x, double y);
/* The scene node showing object (@kind, @pid, @id): the object itself or
 * the group or overflow node holding it; -1 when it is filtered out. */
gint cowscope_graph_scene_find_object (CowscopeGraphScene *self, CowscopeNodeKind kind,
                                       guint32 pid, guint64 id);

G_END_DECLS
