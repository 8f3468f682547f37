/* cowscope-sharing-graph.h — the storage sharing graph at one instant.
 *
 * The graph after event seq S (the instant t maps to the last event at or
 * before t: cowscope_session_document_seq_at_time()) holds every live
 * allocation, CoW context, storage and tensor of every process, with
 * edges
 *   VIEW_OF           tensor -> its storage, and tensor -> its base tensor
 *                     when both share that storage;
 *   LAZY_COPY_OF      storage -> the context whose bytes it shares, and
 *                     storage -> its lazy-clone source while both share it;
 *   MATERIALIZED_FROM storage -> the context it left by materializing
 *                     (while that context lives), and -> its source storage;
 *   OWNS              context -> allocation, storage -> allocation (when
 *                     the storage owns its bytes); an IPC block -> the
 *                     producer's allocation, a received-data record -> the
 *                     consumer's allocation over the mapping;
 *   RECEIVED_BY       IPC block -> a consumer's received-data record (another
 *                     process) while that consumer's slot counts;
 *   KEPT_ALIVE_BY     the same while the block is in the producer's limbo
 *                     (only consumers keep it alive).
 * Sessions with IPC events also get IPC_BLOCK nodes (a block a producer
 * sent, in the producer; state LIMBO while in the limbo) and IPC_RECEIVED
 * nodes (a consumer's received-data record), from the session's ipc_refs
 * table (cowscope-ipc-graph.c); a session without that table has none.
 * It is rebuilt from the nearest checkpoint at or before S plus the events
 * after it, never by replaying from the start.  Nodes and edges are plain
 * structs: a graph of 100,000 objects is a few arrays.
 */
#pragma once

#include <gio/gio.h>

#include "cowscope-graph-state.h"
#include "cowscope-session-document.h"

G_BEGIN_DECLS

/* The first four are the session format's object kinds. */
typedef enum {
  COWSCOPE_NODE_ALLOCATION = COWSCOPE_OBJECT_ALLOCATION,
  COWSCOPE_NODE_CONTEXT = COWSCOPE_OBJECT_CONTEXT,
  COWSCOPE_NODE_STORAGE = COWSCOPE_OBJECT_STORAGE,
  COWSCOPE_NODE_TENSOR = COWSCOPE_OBJECT_TENSOR,
  COWSCOPE_NODE_IPC_BLOCK,     /* a block its producer sent: id = allocation id */
  COWSCOPE_NODE_IPC_RECEIVED,  /* a consumer's received-data record: id = receive seq */
  COWSCOPE_N_NODE_KINDS
} CowscopeNodeKind;

typedef enum {
  COWSCOPE_NODE_STATE_OWNED,        /* owns its bytes, never shared */
  COWSCOPE_NODE_STATE_SHARED,       /* shares bytes through a CoW context */
  COWSCOPE_NODE_STATE_MATERIALIZED, /* was a lazy copy, now owns its bytes */
  COWSCOPE_NODE_STATE_LIMBO,        /* IPC block its producer dropped; consumers keep it */
  COWSCOPE_NODE_STATE_STOLEN,       /* was a lazy copy, took the shared bytes without a copy */
} CowscopeNodeState;

typedef enum {
  COWSCOPE_EDGE_VIEW_OF,
  COWSCOPE_EDGE_LAZY_COPY_OF,
  COWSCOPE_EDGE_MATERIALIZED_FROM,
  COWSCOPE_EDGE_OWNS,
  COWSCOPE_EDGE_RECEIVED_BY,   /* crosses processes */
  COWSCOPE_EDGE_KEPT_ALIVE_BY, /* crosses processes; the block is in the limbo */
  COWSCOPE_N_EDGE_KINDS
} CowscopeEdgeKind;

typedef struct {
  guint32 pid;
  guint8 kind;        /* CowscopeNodeKind */
  guint8 state;       /* CowscopeNodeState; a tensor has its storage's */
  guint8 freed_soon;  /* freed within the horizon given to the build */
  guint8 alloc_kind;  /* allocations: 0 CPU, 1 CUDA, 2 foreign */
  guint64 id;
  guint64 nbytes;     /* tensors: numel x itemsize when known, else numel */
  gint64 free_ts;     /* -1: never freed */
  /* Links by id within the same process (0: none). */
  guint64 allocation_id; /* storage: current; context: the shared one */
  guint64 context_id;    /* storage: the context it shares now */
  guint64 left_context_id; /* storage: the context it materialized from */
  guint64 storage_id;    /* tensor: its storage; context: first storage */
  guint64 source_id;     /* storage: lazy-clone source; tensor: base tensor */
  gint64 numel;          /* tensors */
  guint32 dtype, ndim;   /* tensors */
  guint32 refcount;      /* contexts: storages sharing it now */
  gint64 device;         /* allocations */
  const char *label;     /* tensor name (or NULL), owned by the graph */
  guint32 peer_pid;      /* IPC_RECEIVED: the producer */
} CowscopeGraphNode;

typedef struct {
  guint32 from;  /* node index */
  guint32 to;    /* node index */
  guint8 kind;   /* CowscopeEdgeKind */
} CowscopeGraphEdge;

#define COWSCOPE_TYPE_SHARING_GRAPH (cowscope_sharing_graph_get_type ())
G_DECLARE_FINAL_TYPE (CowscopeSharingGraph, cowscope_sharing_graph, COWSCOPE,
                      SHARING_GRAPH, GObject)

/* Builds the graph after event @seq in the calling thread (any thread).
 * Objects freed within @freed_soon_ns after the instant are marked
 * freed_soon.  NULL with @error on a read failure or cancellation. */
CowscopeSharingGraph *cowscope_sharing_graph_build (CowscopeSessionDocument *document,
                                                    gint64 seq, gint64 freed_soon_ns,
                                                    GCancellable *cancellable,
                                                    GError **error);

/* The same at instant @t, in a GTask thread; the callback runs in the
 * caller's thread-default main context. */
void cowscope_sharing_graph_build_at_time_async (CowscopeSessionDocument *document,
                                                 gint64 t, gint64 freed_soon_ns,
                                                 GCancellable *cancellable,
                                                 GAsyncReadyCallback callback,
                                                 gpointer user_data);
CowscopeSharingGraph *cowscope_sharing_graph_build_finish (GAsyncResult *result,
                                                           GError **error);

gint64 cowscope_sharing_graph_get_seq (CowscopeSharingGraph *self);
/* The time of event seq (the instant shown). */
gint64 cowscope_sharing_graph_get_time (CowscopeSharingGraph *self);
/* The checkpoint the build started from (-1: none) and how many events
 * were replayed after it. */
gint64 cowscope_sharing_graph_get_checkpoint_seq (CowscopeSharingGraph *self);
guint64 cowscope_sharing_graph_get_n_replayed (CowscopeSharingGraph *self);

guint cowscope_sharing_graph_get_n_nodes (CowscopeSharingGraph *self);
const CowscopeGraphNode *cowscope_sharing_graph_get_node (CowscopeSharingGraph *self,
                                                          guint index);
guint cowscope_sharing_graph_get_n_edges (CowscopeSharingGraph *self);
const CowscopeGraphEdge *cowscope_sharing_graph_get_edge (CowscopeSharingGraph *self,
                                                          guint index);
/* Node counts per kind. */
guint cowscope_sharing_graph_count_nodes (CowscopeSharingGraph *self, CowscopeNodeKind kind);

/* Whether edges of @kind join two processes. */
#define COWSCOPE_EDGE_KIND_IS_CROSS_PROCESS(kind) \
  ((kind) == COWSCOPE_EDGE_RECEIVED_BY || (kind) == COWSCOPE_EDGE_KEPT_ALIVE_BY)

/* Distinct processes among the nodes, and a person-readable name of one
 * ("cowscope-demo (pid 1234)"), or NULL when the session does not know it. */
guint cowscope_sharing_graph_get_n_processes (CowscopeSharingGraph *self);
const char *cowscope_sharing_graph_get_process_label (CowscopeSharingGraph *self, guint32 pid);

/* The index of node (@kind, @pid, @id), or -1. */
gint cowscope_sharing_graph_lookup (CowscopeSharingGraph *self, CowscopeNodeKind kind,
                                    guint32 pid, guint64 id);

G_END_DECLS
