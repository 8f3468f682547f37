/* cowscope-call-tree.h — where copies come from: the call stacks of a
 * session's copies, steals and eager lazy-clone fallbacks, merged into a
 * call tree weighted by bytes copied, events and time.
 *
 * Two trees are built at once over the same events, as Sysprof's
 * callgraph offers them: top-down (from the outermost frame, main(), to
 * the call site) and bottom-up (from the call site out to its callers).
 * A node is one place in the code (cowscope_call_site_key(): function,
 * file and line, or an address in a module), reached along one path.
 * Cowscope's own frames inside the call site (the engine's copy, the
 * probe) are left out unless the options ask for them, so the roots of
 * the bottom-up tree are exactly the report's call sites
 * (cowscope-call-site.h).  Events without a call stack hang under one
 * "(no call stack)" node.
 *
 * Each event counts where it ends: a materialization when its end event
 * happens (the time the timeline's range totals use), an eager fallback
 * when it happens; a range [start, end) keeps the events in it.
 * Failed materializations copy nothing and are left out.
 *
 * The tree is plain data, separate from any widget: nodes are numbers,
 * children are listed heaviest (bytes copied) first, and every node has a
 * key path from its root, so two trees (two sessions, two ranges) can be
 * compared node by node (cowscope_call_tree_find_child()).  A built tree
 * is immutable and may be read from any thread. */
#pragma once

#include <gio/gio.h>

#include "cowscope-call-site.h"
#include "cowscope-session-document.h"

G_BEGIN_DECLS

#define COWSCOPE_CALL_TREE_NO_NODE G_MAXUINT

typedef enum {
  COWSCOPE_CALL_TREE_TOP_DOWN,  /* outermost frame first: callees below callers */
  COWSCOPE_CALL_TREE_BOTTOM_UP, /* call site first: callers below callees */
} CowscopeCallTreeDirection;

typedef enum {
  COWSCOPE_CALL_TREE_BY_LINE,     /* a node per function, file and line */
  COWSCOPE_CALL_TREE_BY_FUNCTION, /* a node per function (and module) */
} CowscopeCallTreeGrouping;

/* What a node's width or order follows. */
typedef enum {
  COWSCOPE_CALL_METRIC_BYTES,  /* bytes copied: copies and eager fallbacks */
  COWSCOPE_CALL_METRIC_EVENTS, /* copies, steals and eager fallbacks */
  COWSCOPE_CALL_METRIC_TIME,   /* time spent materializing (copies and steals) */
} CowscopeCallMetric;

/* What the events under a node add up to. */
typedef struct {
  guint64 copies, copy_bytes;   /* materializations that copied */
  guint64 steals, steal_bytes;  /* materializations that took the bytes over */
  guint64 eager, eager_bytes;   /* lazy clones that copied eagerly instead */
  guint64 time_ns;              /* materializations' begin to end */
} CowscopeCallWeights;

/* @weights under @metric. */
guint64 cowscope_call_weights_get (const CowscopeCallWeights *weights, CowscopeCallMetric metric);

typedef struct {
  gint64 range_start, range_end; /* [start, end) in session ns; -1, -1: all */
  CowscopeCallTreeGrouping grouping;
  gboolean include_internal;     /* keep Cowscope's own frames inside the call site */
} CowscopeCallTreeOptions;

/* The whole session, by line, without Cowscope's frames. */
void cowscope_call_tree_options_init (CowscopeCallTreeOptions *options);

/* A node's place in the code; strings owned by the tree. */
typedef struct {
  CowscopeFrameRef ref;
  const char *key;     /* equal for the same place in any session */
  const char *display; /* "update_weights (train.c:88)", "0x4a0 in train" */
  const char *site;    /* as the report writes it: "train.c:88 in update_weights()" */
  gboolean internal;   /* Cowscope's own code */
  gboolean no_stack;   /* stands for the events recorded without a stack */
} CowscopeCallFrame;

#define COWSCOPE_TYPE_CALL_TREE (cowscope_call_tree_get_type ())
G_DECLARE_FINAL_TYPE (CowscopeCallTree, cowscope_call_tree, COWSCOPE, CALL_TREE, GObject)

/* Builds the trees of @document in the calling thread.  NULL with
 * @error (G_IO_ERROR_CANCELLED when @cancellable was cancelled, or
 * COWSCOPE_SESSION_ERROR when the session cannot be read). */
CowscopeCallTree *cowscope_call_tree_new (CowscopeSessionDocument *document,
                                          const CowscopeCallTreeOptions *options,
                                          GCancellable *cancellable, GError **error);
/* The same in a GTask thread (@options is copied). */
void cowscope_call_tree_new_async (CowscopeSessionDocument *document,
                                   const CowscopeCallTreeOptions *options,
                                   GCancellable *cancellable, GAsyncReadyCallback callback,
                                   gpointer user_data);
CowscopeCallTree *cowscope_call_tree_new_finish (GAsyncResult *result, GError **error);

CowscopeSessionDocument *cowscope_call_tree_get_document (CowscopeCallTree *self);
const CowscopeCallTreeOptions *cowscope_call_tree_get_options (CowscopeCallTree *self);

/* The root of @direction's tree: it stands for every event (no frame). */
guint cowscope_call_tree_get_root (CowscopeCallTree *self, CowscopeCallTreeDirection direction);
/* The number of nodes of both trees (node numbers run below it). */
guint cowscope_call_tree_get_n_nodes (CowscopeCallTree *self);
/* The deepest node's depth under @direction's root (the root is 0). */
guint cowscope_call_tree_get_max_depth (CowscopeCallTree *self,
                                        CowscopeCallTreeDirection direction);

/* The node's frame, or NULL for a root. */
const CowscopeCallFrame *cowscope_call_tree_get_frame (CowscopeCallTree *self, guint node);
/* COWSCOPE_CALL_TREE_NO_NODE for a root. */
guint cowscope_call_tree_get_parent (CowscopeCallTree *self, guint node);
guint cowscope_call_tree_get_depth (CowscopeCallTree *self, guint node);
guint cowscope_call_tree_get_n_children (CowscopeCallTree *self, guint node);
/* The @i-th child, heaviest first: by bytes copied, then events, then
 * time, then display text. */
guint cowscope_call_tree_get_child (CowscopeCallTree *self, guint node, guint i);
/* The child of @node whose frame key is @key, or COWSCOPE_CALL_TREE_NO_NODE. */
guint cowscope_call_tree_find_child (CowscopeCallTree *self, guint node, const char *key);

/* Every event under the node (the node's subtree), and the events whose
 * path ends at it (in the bottom-up tree, none but at the roots). */
const CowscopeCallWeights *cowscope_call_tree_get_total (CowscopeCallTree *self, guint node);
const CowscopeCallWeights *cowscope_call_tree_get_self (CowscopeCallTree *self, guint node);

/* The bottom-up root for the call site @site (as the report names it:
 * its function, file, line, module and address), or
 * COWSCOPE_CALL_TREE_NO_NODE when none of the tree's events is there.
 * NULL @site finds the "(no call stack)" root. */
guint cowscope_call_tree_find_site (CowscopeCallTree *self, const CowscopeFrameRef *site);

typedef enum {
  COWSCOPE_CALL_EVENT_COPY,
  COWSCOPE_CALL_EVENT_STEAL,
  COWSCOPE_CALL_EVENT_EAGER, /* a lazy clone that copied eagerly */
} CowscopeCallEventKind;

/* One event under a node. */
typedef struct {
  gint64 seq;             /* events.seq: the materialization's begin, the lazy clone */
  gint64 ts_ns;           /* when it counts (see above) */
  gint64 duration_ns;
  guint32 pid;
  gint64 tid;
  CowscopeCallEventKind kind;
  gint64 op;              /* ops.id of the write (or the lazy clone) */
  guint64 nbytes;
  guint64 storage_id;     /* the storage materialized, or the eager clone's */
  guint64 tensor_id;      /* the tensor written, or the eager clone */
  char *tensor_name;      /* its name, or NULL (freed with the array) */
} CowscopeCallEvent;

/* The events under @node in seq order, at most @limit of them, in a
 * GTask thread.  The finish gets how many there are in all (@n_total)
 * and the seq of the largest of them all (@largest_seq: the first of the
 * largest, by bytes; -1 when there is none), listed or not. */
void cowscope_call_tree_list_events_async (CowscopeCallTree *self, guint node, guint limit,
                                           GCancellable *cancellable,
                                           GAsyncReadyCallback callback, gpointer user_data);
/* A GArray of CowscopeCallEvent, or NULL with @error. */
GArray *cowscope_call_tree_list_events_finish (CowscopeCallTree *self, GAsyncResult *result,
                                               guint64 *n_total, gint64 *largest_seq,
                                               GError **error);
/* The same in the calling thread (@n_total, @largest_seq may be NULL). */
GArray *cowscope_call_tree_list_events (CowscopeCallTree *self, guint node, guint limit,
                                        guint64 *n_total, gint64 *largest_seq,
                                        GCancellable *cancellable, GError **error);

G_END_DECLS
