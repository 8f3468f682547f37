/* cowscope-graph-state.h — the live objects of a session at one instant
 * and the rules that move them along one event at a time.
 *
 * These are the only graph-state rules in the tree.  The finalizer
 * (cowscope-format-index.c) applies them to write each checkpoint's
 * packed state; the session model applies them to replay the events after
 * a checkpoint (app/session/cowscope-graph-builder.c) and to follow a
 * recording (app/session/cowscope-live-session.c), then turns a state into
 * its sharing graph (app/session/cowscope-graph-assembly.c).
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The objects with a table of their own; values are stored in
 * checkpoint_states and are the sharing graph's first node kinds. */
typedef enum {
  COWSCOPE_OBJECT_ALLOCATION,
  COWSCOPE_OBJECT_CONTEXT,
  COWSCOPE_OBJECT_STORAGE,
  COWSCOPE_OBJECT_TENSOR,
  COWSCOPE_N_OBJECT_KINDS
} CowscopeObjectKind;

/* checkpoint_objects.kind of @kind: "allocation", "context", ... */
const char *cowscope_object_kind_name (CowscopeObjectKind kind);

/* One live object: what the sharing graph needs of it.  Links are ids
 * within the same process (0: none). */
typedef struct {
  guint32 pid;
  guint8 kind;           /* CowscopeObjectKind */
  guint8 alloc_kind;     /* allocations: CowAllocationKind */
  guint8 stolen;         /* storage: it left left_context_id by stealing its bytes, not
                          * by a copy (not in checkpoint_states: the model's graph
                          * builder reads it back from materializations) */
  guint64 id;
  guint64 nbytes;        /* allocations, storages */
  gint64 free_ts;        /* when it will be freed; -1: never (or unknown) */
  guint64 allocation_id; /* storage: the one it owns now; context: the shared one */
  guint64 context_id;    /* storage: the context it shares now */
  guint64 left_context_id; /* storage: the context it materialized from */
  guint64 storage_id;    /* tensor: its storage; context: its first storage */
  guint64 source_id;     /* storage: lazy-clone source; tensor: base tensor */
  gint64 numel;          /* tensors */
  guint32 dtype, ndim;   /* tensors */
  gint64 device;         /* allocations: the device index */
} CowscopeLiveObject;

/* The object kind an event of @type creates, or -1. */
int cowscope_event_creates (gint64 type);

/* Whether an event of @type can change the state (the others are left
 * out of checkpoint_replays). */
gboolean cowscope_event_changes_graph (gint64 type);

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

/* The live object (@kind, @pid, @id), cleared (free_ts -1, no name),
 * replacing a dead or live one with the same key.  The pointer is valid
 * until the next change to the state. */
CowscopeLiveObject *cowscope_graph_state_add (CowscopeGraphState *self, guint8 kind, guint32 pid,
                                              guint64 id);
/* add() for a key that is not in @self, dead or alive (the caller knows:
 * keys that come strictly increasing into an empty state); faster. */
CowscopeLiveObject *cowscope_graph_state_add_new (CowscopeGraphState *self, guint8 kind,
                                                  guint32 pid, guint64 id);
/* add_new() for many keys at once, as when a checkpoint's objects are
 * read: each append() adds an object as add_new() does, but its key goes
 * into the index only at end_append(), all together (their cache misses
 * overlap).  Between the first append() and end_append() only append()
 * and set_name() may be called. */
CowscopeLiveObject *cowscope_graph_state_append (CowscopeGraphState *self, guint8 kind,
                                                 guint32 pid, guint64 id);
void cowscope_graph_state_end_append (CowscopeGraphState *self);
/* The live object (@kind, @pid, @id), or NULL. */
CowscopeLiveObject *cowscope_graph_state_lookup (CowscopeGraphState *self, guint8 kind,
                                                 guint32 pid, guint64 id);
/* Names @object (from add() or lookup()): @len bytes of @name (-1: up to
 * its NUL), copied; NULL: no name. */
void cowscope_graph_state_set_name (CowscopeGraphState *self, CowscopeLiveObject *object,
                                    const char *name, gssize len);

/* Applies one event (type, aux, pid and v0..v4 as in the events table):
 *   allocation, storage, tensor, context new   the object becomes live;
 *   ... free                                   it is gone;
 *   context new / ref (v1: the storage)        the storage shares the context;
 *   context unref                              the storage stops sharing it;
 *   materialize end by copy or steal           the storage owns allocation
 *                                              v2 and left context v1
 *                                              (stolen: by a steal);
 *   tensor name                                the tensor's name is string v1.
 * Returns the object the event created, or NULL. */
CowscopeLiveObject *cowscope_graph_state_apply (CowscopeGraphState *self, gint64 type,
                                                gint64 aux, guint32 pid, const gint64 v[5]);

/* A hint for a caller that applies a stream of events (no effect on the
 * state): asks the memory system for what apply() of this event will read,
 * first its index entry (@near FALSE, some 16 events ahead), then the
 * object the entry names (@near TRUE, a few events ahead), so that the
 * cache misses of successive events overlap. */
void cowscope_graph_state_prefetch (const CowscopeGraphState *self, gint64 type, guint32 pid,
                                    const gint64 v[5], gboolean near);

/* Forgets freed objects (their memory too) once they outnumber the live
 * ones, so that a long recording followed live stays as big as its live
 * set; cheap to call after every event.  A replay never needs to. */
void cowscope_graph_state_compact (CowscopeGraphState *self);

/* ---- reading a state whole ------------------------------------------------
 *
 * Objects sit in slots 0 .. n_slots - 1; a freed object's slot stays
 * (dead) until compact(). */

guint cowscope_graph_state_get_n_slots (const CowscopeGraphState *self);
/* Slot @slot: its object (dead or alive), or NULL when dead. */
const CowscopeLiveObject *cowscope_graph_state_get_slot (const CowscopeGraphState *self,
                                                         guint slot);
/* The name of slot @slot's object: set_name()'s (NUL-terminated), else
 * NULL with *@name_id the string id of its TENSOR_NAME event (0: none). */
const char *cowscope_graph_state_get_slot_name (const CowscopeGraphState *self, guint slot,
                                                gint64 *name_id);
/* The slot of (@kind, @pid, @id), dead or alive, or -1. */
gint64 cowscope_graph_state_find_slot (const CowscopeGraphState *self, guint8 kind, guint32 pid,
                                       guint64 id);

/* The state's own index, for a caller that copies the live objects out
 * (the sharing graph's nodes) and looks keys up among them: a probe hands
 * out the slots whose hash matches, without reading the slots themselves
 * (in a state of 100,000 objects each read is a cache miss), and the
 * caller checks the key in the slots' compact key array.  Valid until the
 * state changes.  Each table entry is the key's hash with its low 32 bits
 * replaced by the slot + 1; 0 is an empty entry. */
typedef struct {
  guint64 id;
  guint32 pid;
  guint8 kind;
  guint8 dead; /* the slot's object was freed */
} CowscopeGraphStateKey;

typedef struct {
  const guint64 *table;
  gsize mask;
  const CowscopeGraphStateKey *keys; /* slot k's key is keys[k] */
  const CowscopeLiveObject *objects; /* slot k's object is at objects + k * stride bytes */
  gsize stride;
} CowscopeGraphStateIndex;

void cowscope_graph_state_get_index (const CowscopeGraphState *self,
                                     CowscopeGraphStateIndex *index);

/* The hash of a key (the table's; stable for the process). */
static inline guint64
cowscope_graph_state_hash (guint8 kind, guint32 pid, guint64 id)
{
  guint64 h = id * 0x9E3779B97F4A7C15ull;
  h ^= ((guint64) pid << 8 | kind) * 0xC2B2AE3D27D4EB4Full;
  return h ^ (h >> 29);
}

/* Slot @slot's object (alive or dead) through @index. */
static inline const CowscopeLiveObject *
cowscope_graph_state_index_object (const CowscopeGraphStateIndex *index, gsize slot)
{
  return (const CowscopeLiveObject *) (gconstpointer) ((const char *) index->objects
                                                       + slot * index->stride);
}

typedef struct {
  const guint64 *table;
  gsize mask, at;
  guint64 tag;
} CowscopeGraphStateProbe;

static inline void
cowscope_graph_state_probe_start (const CowscopeGraphStateIndex *index, guint8 kind, guint32 pid,
                                  guint64 id, CowscopeGraphStateProbe *probe)
{
  guint64 h = cowscope_graph_state_hash (kind, pid, id);
  probe->table = index->table;
  probe->mask = index->mask;
  probe->at = h & index->mask;
  probe->tag = h & ~(guint64) G_MAXUINT32;
}

/* The next slot whose hash matches, or -1 when there is none left. */
static inline gint64
cowscope_graph_state_probe_next (CowscopeGraphStateProbe *probe)
{
  for (;;)
    {
      guint64 v = probe->table[probe->at];
      if (v == 0)
        return -1;
      probe->at = (probe->at + 1) & probe->mask;
      if ((v & ~(guint64) G_MAXUINT32) == probe->tag)
        return (gint64) (guint32) v - 1;
    }
}

/* The live slots in (kind, pid, id) order, the order of a checkpoint's
 * records and of the sharing graph's nodes: a new array of
 * get_n_live() indices. */
guint32 *cowscope_graph_state_sort (const CowscopeGraphState *self);

G_END_DECLS
