/* cowscope-graph-state.h — the live objects of a session at one instant,
 * the rules that move them along one event at a time, and the sharing
 * graph they make.
 *
 * This is the session model's only copy of the graph state rules: the
 * graph builder (cowscope-graph-builder.c) replays the events after a
 * checkpoint with it, the live session (cowscope-live-session.c) follows
 * a recording with it.  The recorder applies the same rules when it
 * writes the packed checkpoint states (probes/recorder/
 * cowscope-session-index.c, live_apply(); the recorder must not include
 * the session model); test-session-model checks that a checkpoint's
 * packed state equals this file's replay up to that checkpoint.
 */
#pragma once

#include "cowscope-sharing-graph.h"

G_BEGIN_DECLS

typedef struct _CowscopeGraphState CowscopeGraphState;

/* An empty state. */
CowscopeGraphState *cowscope_graph_state_new (void);
/* An independent copy of @self (names included) with room for @extra
 * more objects, made in @into (whose contents go; its memory is reused:
 * a large fresh allocation costs page faults) or, when NULL, a new state. */
CowscopeGraphState *cowscope_graph_state_copy (const CowscopeGraphState *self, gsize extra,
                                               CowscopeGraphState *into);
void cowscope_graph_state_free (CowscopeGraphState *self);
/* Empties @self but keeps its memory (to fill it again without the page
 * faults of a large fresh allocation). */
void cowscope_graph_state_reset (CowscopeGraphState *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (CowscopeGraphState, cowscope_graph_state_free)

/* Live objects. */
guint cowscope_graph_state_get_n_live (const CowscopeGraphState *self);
/* Bytes held (an estimate, for caches). */
gsize cowscope_graph_state_get_size (const CowscopeGraphState *self);

/* Makes room for @n more objects without rehashing (a hint). */
void cowscope_graph_state_reserve (CowscopeGraphState *self, gsize n);

/* The live node (@kind, @pid, @id), cleared (free_ts -1, no name),
 * replacing a dead or live one with the same key.  The pointer is valid
 * until the next change to the state. */
CowscopeGraphNode *cowscope_graph_state_add (CowscopeGraphState *self, guint8 kind, guint32 pid,
                                             guint64 id);
/* add() for a key that is not in @self, dead or alive (the caller knows:
 * keys that come strictly increasing into an empty state); faster. */
CowscopeGraphNode *cowscope_graph_state_add_new (CowscopeGraphState *self, guint8 kind,
                                                 guint32 pid, guint64 id);
/* The live node (@kind, @pid, @id), or NULL. */
CowscopeGraphNode *cowscope_graph_state_lookup (CowscopeGraphState *self, guint8 kind,
                                                guint32 pid, guint64 id);
/* Names @node (from add() or lookup()): @len bytes of @name (-1: up to
 * its NUL), copied; NULL: no name. */
void cowscope_graph_state_set_name (CowscopeGraphState *self, CowscopeGraphNode *node,
                                    const char *name, gssize len);

/* Applies one event (type, aux, pid and v0..v4 as in the events table):
 * object new/free, a storage joining a context (context new, ref),
 * leaving it (unref), materialization by copy or steal, tensor names.
 * Returns the node the event created, or NULL. */
CowscopeGraphNode *cowscope_graph_state_apply (CowscopeGraphState *self, gint64 type,
                                               gint64 aux, guint32 pid, const gint64 v[5]);

/* Forgets freed objects (their memory too) once they outnumber the live
 * ones, so that a long recording followed live stays as big as its live
 * set; cheap to call after every batch.  The builder never needs to. */
void cowscope_graph_state_compact (CowscopeGraphState *self);

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

/* The sharing graph of the live objects: nodes sorted by (kind, pid, id),
 * node states, context refcounts, tensor bytes and the edges
 * (cowscope-sharing-graph.h says which).  @self is not changed. */
CowscopeSharingGraph *cowscope_graph_state_assemble (const CowscopeGraphState *self,
                                                     const CowscopeGraphAssembleOptions *options);

G_END_DECLS
