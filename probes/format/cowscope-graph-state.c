/* cowscope-graph-state.c — live objects and the event rules (see the
 * header).
 *
 * Objects are slots in one array, found through an open-addressing table
 * (kind, pid, id) -> slot index + 1, whose entries also carry 32 bits of
 * the key's hash: a probe touches a slot only when the hashes agree.  The
 * keys (and whether each object is dead) sit apart from the slots, in an
 * array of 16-byte entries: a probe, a free and the sort read only that
 * array, not the 112-byte slots (in a state of 100,000 objects, every
 * slot read is a cache miss).  A freed object's slot stays, marked dead,
 * until compact(): a replay never deletes from the table, and an id born
 * again reuses its slot.
 */
#include "cowscope-graph-state.h"

#include <stdlib.h>
#include <string.h>

#include "cow-trace.h"

typedef struct {
  CowscopeLiveObject node; /* first: an object pointer is a slot pointer */
  gint64 name_id;         /* strings id from a TENSOR_NAME event, or 0 */
  guint32 name;           /* offset + 1 into names, or 0 */
} Slot;

/* Slot k's key (the same as slots[k].node's) and whether it is dead. */
typedef CowscopeGraphStateKey Key;

G_STATIC_ASSERT (sizeof (Key) == 16);

struct _CowscopeGraphState {
  Slot *slots;
  Key *keys;         /* parallel to slots */
  guint n_slots, cap_slots;
  guint n_indexed;   /* slots from here on were appended, not yet in the table */
  guint64 *table;    /* hash >> 32 << 32 | (slot index + 1); 0: empty */
  gsize mask;
  guint n_dead;
  GByteArray *names; /* NUL-terminated names, appended */
};


/* An empty state. */
CowscopeGraphState *
cowscope_graph_state_new (void)
{
  CowscopeGraphState *self = g_new0 (CowscopeGraphState, 1);
  self->cap_slots = 1024;
  self->slots = g_new (Slot, self->cap_slots);
  self->keys = g_new (Key, self->cap_slots);
  self->mask = 4095;
  self->table = g_new0 (guint64, self->mask + 1);
  self->names = g_byte_array_new ();
  return self;
}

/* A deep copy into @into (its memory reused) or a new state: four
 * memory copies, and a rehash only when @extra needs a bigger table. */
CowscopeGraphState *
cowscope_graph_state_copy (const CowscopeGraphState *self, gsize extra,
                           CowscopeGraphState *into)
{
  g_return_val_if_fail (self->n_indexed == self->n_slots, NULL);
  extra = MIN (extra, (gsize) G_MAXUINT32 / 4);
  CowscopeGraphState *copy = into;
  if (copy == NULL)
    {
      copy = g_new0 (CowscopeGraphState, 1);
      copy->names = g_byte_array_sized_new (self->names->len + 1024);
    }
  if (copy->cap_slots < self->n_slots + extra)
    {
      g_free (copy->slots);
      g_free (copy->keys);
      copy->cap_slots = self->n_slots + (guint) extra;
      copy->slots = g_new (Slot, MAX (copy->cap_slots, 1));
      copy->keys = g_new (Key, MAX (copy->cap_slots, 1));
    }
  if (self->n_slots > 0) /* an empty state may have no slots array at all */
    {
      memcpy (copy->slots, self->slots, sizeof (Slot) * self->n_slots);
      memcpy (copy->keys, self->keys, sizeof (Key) * self->n_slots);
    }
  copy->n_slots = copy->n_indexed = self->n_slots;
  if (copy->table == NULL || copy->mask != self->mask)
    {
      g_free (copy->table);
      copy->table = g_new (guint64, self->mask + 1);
      copy->mask = self->mask;
    }
  memcpy (copy->table, self->table, sizeof (guint64) * (self->mask + 1));
  copy->n_dead = self->n_dead;
  g_byte_array_set_size (copy->names, 0);
  g_byte_array_append (copy->names, self->names->data, self->names->len);
  cowscope_graph_state_reserve (copy, extra);
  return copy;
}

/* Empty, with the memory kept. */
void
cowscope_graph_state_reset (CowscopeGraphState *self)
{
  self->n_slots = self->n_indexed = 0;
  self->n_dead = 0;
  memset (self->table, 0, sizeof (guint64) * (self->mask + 1));
  g_byte_array_set_size (self->names, 0);
}

void
cowscope_graph_state_free (CowscopeGraphState *self)
{
  if (self == NULL)
    return;
  g_free (self->slots);
  g_free (self->keys);
  g_free (self->table);
  g_byte_array_unref (self->names);
  g_free (self);
}

guint
cowscope_graph_state_get_n_live (const CowscopeGraphState *self)
{
  return self->n_slots - self->n_dead;
}

gsize
cowscope_graph_state_get_size (const CowscopeGraphState *self)
{
  return (sizeof (Slot) + sizeof (Key)) * self->n_slots + sizeof (guint64) * (self->mask + 1)
         + self->names->len;
}

/* The index of the slot of (kind, pid, id), dead or alive, or -1. */
static inline gint64
find_slot (const CowscopeGraphState *self, guint8 kind, guint32 pid, guint64 id)
{
  const Key *keys = self->keys;
  guint64 h = cowscope_graph_state_hash (kind, pid, id);
  guint64 tag = h & ~(guint64) G_MAXUINT32;
  gsize i = h & self->mask;
  for (;;)
    {
      guint64 v = self->table[i];
      if (v == 0)
        return -1;
      if ((v & ~(guint64) G_MAXUINT32) == tag)
        {
          guint32 at = (guint32) v - 1;
          const Key *k = &keys[at];
          if (k->id == id && k->pid == pid && k->kind == kind)
            return at;
        }
      i = (i + 1) & self->mask;
    }
}

static inline guint64
key_hash (const Key *k)
{
  return cowscope_graph_state_hash (k->kind, k->pid, k->id);
}

static inline void
table_put_hash (CowscopeGraphState *self, guint32 index, guint64 h)
{
  gsize i = h & self->mask;
  while (self->table[i] != 0)
    i = (i + 1) & self->mask;
  self->table[i] = (h & ~(guint64) G_MAXUINT32) | ((guint64) index + 1);
}

/* Puts slots [@from, @to) into the table, asking for the entries of the
 * slots a little ahead first so that their cache misses overlap. */
static void
table_put_range (CowscopeGraphState *self, guint32 from, guint32 to)
{
  enum { AHEAD = 16 };
  for (guint32 i = from; i < MIN (to, from + AHEAD); i++)
    __builtin_prefetch (&self->table[key_hash (&self->keys[i]) & self->mask], 1);
  for (guint32 i = from; i < to; i++)
    {
      if (i + AHEAD < to)
        __builtin_prefetch (&self->table[key_hash (&self->keys[i + AHEAD]) & self->mask], 1);
      table_put_hash (self, i, key_hash (&self->keys[i]));
    }
}

/* Rebuilds the table at a size that holds @want slots at most half full. */
static void
rehash (CowscopeGraphState *self, gsize want)
{
  gsize size = self->mask + 1;
  while (size < want * 2)
    size *= 2;
  g_free (self->table);
  self->mask = size - 1;
  self->table = g_new0 (guint64, size);
  table_put_range (self, 0, self->n_indexed);
}

/* Room for one more slot (the table is not touched). */
static inline void
grow_slots (CowscopeGraphState *self, guint want)
{
  if (want <= self->cap_slots)
    return;
  self->cap_slots = MAX (want, MAX (self->cap_slots * 2, 1024));
  self->slots = g_renew (Slot, self->slots, self->cap_slots);
  self->keys = g_renew (Key, self->keys, self->cap_slots);
}

void
cowscope_graph_state_reserve (CowscopeGraphState *self, gsize n)
{
  n = MIN (n, (gsize) G_MAXUINT32 / 4);
  gsize want = self->n_slots + n;
  if (want * 2 > self->mask + 1)
    rehash (self, want);
  if (want > self->cap_slots)
    {
      self->cap_slots = (guint) want;
      self->slots = g_renew (Slot, self->slots, self->cap_slots);
      self->keys = g_renew (Key, self->keys, self->cap_slots);
    }
}

/* Fills slot @at with a fresh object (@kind, @pid, @id). */
static inline CowscopeLiveObject *
fill_slot (CowscopeGraphState *self, guint at, guint8 kind, guint32 pid, guint64 id)
{
  Slot *s = &self->slots[at];
  Key *k = &self->keys[at];
  memset (s, 0, sizeof *s);
  s->node.kind = k->kind = kind;
  s->node.pid = k->pid = pid;
  s->node.id = k->id = id;
  s->node.free_ts = -1;
  k->dead = FALSE;
  return &s->node;
}

/* add() for a key the caller knows is new (@at = -1), or any key. */
static inline CowscopeLiveObject *
add_at (CowscopeGraphState *self, gint64 at, guint8 kind, guint32 pid, guint64 id)
{
  if (at >= 0)
    {
      if (self->keys[at].dead)
        self->n_dead--;
      return fill_slot (self, (guint) at, kind, pid, id);
    }
  if ((gsize) (self->n_slots + 1) * 2 > self->mask + 1)
    rehash (self, self->n_slots + 1);
  grow_slots (self, self->n_slots + 1);
  guint slot = self->n_slots++;
  self->n_indexed = self->n_slots;
  CowscopeLiveObject *o = fill_slot (self, slot, kind, pid, id);
  table_put_hash (self, slot, key_hash (&self->keys[slot]));
  return o;
}

CowscopeLiveObject *
cowscope_graph_state_add (CowscopeGraphState *self, guint8 kind, guint32 pid, guint64 id)
{
  g_return_val_if_fail (self->n_indexed == self->n_slots, NULL);
  return add_at (self, find_slot (self, kind, pid, id), kind, pid, id);
}

CowscopeLiveObject *
cowscope_graph_state_add_new (CowscopeGraphState *self, guint8 kind, guint32 pid, guint64 id)
{
  g_return_val_if_fail (self->n_indexed == self->n_slots, NULL);
  return add_at (self, -1, kind, pid, id);
}

CowscopeLiveObject *
cowscope_graph_state_append (CowscopeGraphState *self, guint8 kind, guint32 pid, guint64 id)
{
  grow_slots (self, self->n_slots + 1);
  return fill_slot (self, self->n_slots++, kind, pid, id);
}

void
cowscope_graph_state_end_append (CowscopeGraphState *self)
{
  if (self->n_indexed == self->n_slots)
    return;
  if ((gsize) self->n_slots * 2 > self->mask + 1)
    {
      self->n_indexed = self->n_slots;
      rehash (self, self->n_slots);
      return;
    }
  table_put_range (self, self->n_indexed, self->n_slots);
  self->n_indexed = self->n_slots;
}

CowscopeLiveObject *
cowscope_graph_state_lookup (CowscopeGraphState *self, guint8 kind, guint32 pid, guint64 id)
{
  gint64 at = find_slot (self, kind, pid, id);
  if (at < 0 || self->keys[at].dead)
    return NULL;
  return &self->slots[at].node;
}

/* Marks (kind, pid, id) freed. */
static void
state_kill (CowscopeGraphState *self, guint8 kind, guint32 pid, guint64 id)
{
  gint64 at = find_slot (self, kind, pid, id);
  if (at < 0)
    return;
  Key *k = &self->keys[at];
  if (!k->dead)
    {
      k->dead = TRUE;
      self->n_dead++;
    }
}

void
cowscope_graph_state_set_name (CowscopeGraphState *self, CowscopeLiveObject *node,
                               const char *name, gssize len)
{
  Slot *s = (Slot *) node;
  if (name == NULL)
    {
      s->name = 0;
      return;
    }
  gsize n = len < 0 ? strlen (name) : (gsize) len;
  const char *nul = memchr (name, '\0', n);
  if (nul != NULL)
    n = (gsize) (nul - name);
  if (self->names->len + n + 1 >= G_MAXUINT32)
    return;
  s->name = self->names->len + 1;
  g_byte_array_append (self->names, (const guint8 *) name, (guint) n);
  g_byte_array_append (self->names, (const guint8 *) "", 1);
}

/* ---- the rules ------------------------------------------------------------ */

static const char *const kind_names[COWSCOPE_N_OBJECT_KINDS] = {
  "allocation", "context", "storage", "tensor",
};

const char *
cowscope_object_kind_name (CowscopeObjectKind kind)
{
  return kind < COWSCOPE_N_OBJECT_KINDS ? kind_names[kind] : "unknown";
}

int
cowscope_event_creates (gint64 type)
{
  switch (type)
    {
    case COW_EVENT_ALLOCATION_NEW: return COWSCOPE_OBJECT_ALLOCATION;
    case COW_EVENT_CONTEXT_NEW: return COWSCOPE_OBJECT_CONTEXT;
    case COW_EVENT_STORAGE_NEW: return COWSCOPE_OBJECT_STORAGE;
    case COW_EVENT_TENSOR_NEW: return COWSCOPE_OBJECT_TENSOR;
    default: return -1;
    }
}

/* TENSOR_NAME changes a live state (the live view names tensors from
 * it), but a replay gets each tensor's final name with the event that
 * created it, so checkpoint_replays leave it out. */
gboolean
cowscope_event_changes_graph (gint64 type)
{
  switch (type)
    {
    case COW_EVENT_TENSOR_NAME:
    case COW_EVENT_LAZY_CLONE:
    case COW_EVENT_LAZY_CLONE_EAGER:
    case COW_EVENT_MATERIALIZE_BEGIN:
    case COW_EVENT_SIMULATE_VIOLATION:
    case COW_EVENT_RANGE_BEGIN:
    case COW_EVENT_RANGE_END:
    case COW_EVENT_MARK:
      return FALSE;
    default:
      return TRUE;
    }
}

/* The object an event of @type acts on first: its kind and its id among
 * @v (FALSE: the event changes no object).  apply() and prefetch() both
 * start from it. */
static inline gboolean
event_subject (gint64 type, const gint64 v[5], guint8 *kind, guint64 *id)
{
  switch (type)
    {
    case COW_EVENT_ALLOCATION_NEW:
    case COW_EVENT_ALLOCATION_FREE:
      *kind = COWSCOPE_OBJECT_ALLOCATION;
      break;
    case COW_EVENT_STORAGE_NEW:
    case COW_EVENT_STORAGE_FREE:
    case COW_EVENT_MATERIALIZE_END:
      *kind = COWSCOPE_OBJECT_STORAGE;
      break;
    case COW_EVENT_TENSOR_NEW:
    case COW_EVENT_TENSOR_FREE:
    case COW_EVENT_TENSOR_NAME:
      *kind = COWSCOPE_OBJECT_TENSOR;
      break;
    case COW_EVENT_CONTEXT_NEW:
    case COW_EVENT_CONTEXT_FREE:
      *kind = COWSCOPE_OBJECT_CONTEXT;
      break;
    case COW_EVENT_CONTEXT_REF:
    case COW_EVENT_CONTEXT_UNREF:
      /* v0 is the context, v1 the storage that joins or leaves it. */
      *kind = COWSCOPE_OBJECT_STORAGE;
      *id = (guint64) v[1];
      return TRUE;
    default:
      return FALSE;
    }
  *id = (guint64) v[0];
  return TRUE;
}

CowscopeLiveObject *
cowscope_graph_state_apply (CowscopeGraphState *self, gint64 type, gint64 aux, guint32 pid,
                            const gint64 v[5])
{
  CowscopeLiveObject *n;
  guint8 kind;
  guint64 id;
  if (!event_subject (type, v, &kind, &id))
    return NULL;
  switch (type)
    {
    case COW_EVENT_ALLOCATION_NEW:
      n = cowscope_graph_state_add (self, kind, pid, id);
      n->alloc_kind = (guint8) aux;
      n->nbytes = (guint64) v[1];
      n->device = v[3];
      return n;
    case COW_EVENT_STORAGE_NEW:
      n = cowscope_graph_state_add (self, kind, pid, id);
      n->allocation_id = (guint64) v[1];
      n->nbytes = (guint64) v[2];
      n->context_id = (guint64) v[3];
      n->source_id = (guint64) v[4];
      return n;
    case COW_EVENT_TENSOR_NEW:
      n = cowscope_graph_state_add (self, kind, pid, id);
      n->storage_id = (guint64) v[1];
      n->source_id = (guint64) v[2];
      n->numel = v[3];
      n->dtype = (guint32) (aux & 0xff);
      n->ndim = (guint32) ((aux >> 8) & 0xff);
      return n;
    case COW_EVENT_ALLOCATION_FREE:
    case COW_EVENT_STORAGE_FREE:
    case COW_EVENT_TENSOR_FREE:
    case COW_EVENT_CONTEXT_FREE:
      state_kill (self, kind, pid, id);
      return NULL;
    case COW_EVENT_TENSOR_NAME:
      if ((n = cowscope_graph_state_lookup (self, kind, pid, id)) != NULL)
        ((Slot *) n)->name_id = v[1];
      return NULL;
    case COW_EVENT_CONTEXT_NEW:
      {
        CowscopeLiveObject *c = cowscope_graph_state_add (self, kind, pid, id);
        c->allocation_id = (guint64) v[3];
        c->storage_id = (guint64) v[1];
        /* The first storage joins the context, as on a ref. */
        if ((n = cowscope_graph_state_lookup (self, COWSCOPE_OBJECT_STORAGE, pid, (guint64) v[1]))
            != NULL)
          {
            n->context_id = (guint64) v[0];
            n->left_context_id = 0;
          }
        return cowscope_graph_state_lookup (self, kind, pid, id);
      }
    case COW_EVENT_CONTEXT_REF:
      if ((n = cowscope_graph_state_lookup (self, kind, pid, id)) != NULL)
        {
          n->context_id = (guint64) v[0];
          n->left_context_id = 0;
        }
      return NULL;
    case COW_EVENT_CONTEXT_UNREF:
      if ((n = cowscope_graph_state_lookup (self, kind, pid, id)) != NULL
          && n->context_id == (guint64) v[0])
        n->context_id = 0;
      return NULL;
    case COW_EVENT_MATERIALIZE_END:
      if ((aux & COW_MATERIALIZE_KIND_MASK) != COW_MATERIALIZE_COPY
          && (aux & COW_MATERIALIZE_KIND_MASK) != COW_MATERIALIZE_STEAL)
        return NULL;
      if ((n = cowscope_graph_state_lookup (self, kind, pid, id)) != NULL)
        {
          n->context_id = 0;
          n->left_context_id = (guint64) v[1];
          n->allocation_id = (guint64) v[2];
          n->stolen = (aux & COW_MATERIALIZE_KIND_MASK) == COW_MATERIALIZE_STEAL;
        }
      return NULL;
    default:
      return NULL;
    }
}

/* What apply() reads first for this event: its table entry (!@near) or,
 * once that has arrived, the object's key and slot (@near). */
void
cowscope_graph_state_prefetch (const CowscopeGraphState *self, gint64 type, guint32 pid,
                               const gint64 v[5], gboolean near)
{
  guint8 kind;
  guint64 id;
  if (!event_subject (type, v, &kind, &id))
    return;
  guint64 h = cowscope_graph_state_hash (kind, pid, id);
  const guint64 *entry = &self->table[h & self->mask];
  if (!near)
    {
      __builtin_prefetch (entry);
      return;
    }
  /* The home entry only: most keys sit there, a miss costs nothing. */
  guint64 e = *entry;
  if (e != 0 && (e & ~(guint64) G_MAXUINT32) == (h & ~(guint64) G_MAXUINT32))
    {
      guint32 at = (guint32) e - 1;
      if (at < self->n_slots)
        {
          __builtin_prefetch (&self->keys[at], 1);
          __builtin_prefetch (&self->slots[at].node.context_id, 1);
        }
    }
}

void
cowscope_graph_state_compact (CowscopeGraphState *self)
{
  /* Amortized: only once the dead outnumber the living. */
  if (self->n_dead <= self->n_slots - self->n_dead + 1024)
    return;
  g_return_if_fail (self->n_indexed == self->n_slots);
  Slot *slots = self->slots;
  Key *keys = self->keys;
  guint k = 0;
  for (guint i = 0; i < self->n_slots; i++)
    if (!keys[i].dead)
      {
        slots[k] = slots[i];
        keys[k++] = keys[i];
      }
  self->n_slots = self->n_indexed = k;
  self->n_dead = 0;
  memset (self->table, 0, sizeof (guint64) * (self->mask + 1));
  table_put_range (self, 0, k);
}

/* ---- reading a state whole ----------------------------------------------- */

guint
cowscope_graph_state_get_n_slots (const CowscopeGraphState *self)
{
  return self->n_slots;
}

const CowscopeLiveObject *
cowscope_graph_state_get_slot (const CowscopeGraphState *self, guint slot)
{
  g_return_val_if_fail (slot < self->n_slots, NULL);
  return self->keys[slot].dead ? NULL : &self->slots[slot].node;
}

const char *
cowscope_graph_state_get_slot_name (const CowscopeGraphState *self, guint slot, gint64 *name_id)
{
  g_return_val_if_fail (slot < self->n_slots, NULL);
  const Slot *s = &self->slots[slot];
  *name_id = s->name != 0 ? 0 : s->name_id;
  return s->name != 0 ? (const char *) self->names->data + s->name - 1 : NULL;
}

gint64
cowscope_graph_state_find_slot (const CowscopeGraphState *self, guint8 kind, guint32 pid,
                                guint64 id)
{
  g_return_val_if_fail (self->n_indexed == self->n_slots, -1);
  return find_slot (self, kind, pid, id);
}

void
cowscope_graph_state_get_index (const CowscopeGraphState *self, CowscopeGraphStateIndex *index)
{
  G_STATIC_ASSERT (G_STRUCT_OFFSET (Slot, node) == 0);
  g_return_if_fail (self->n_indexed == self->n_slots);
  index->table = self->table;
  index->mask = self->mask;
  index->keys = self->keys;
  /* A slot pointer is an object pointer (the object comes first); an
   * empty copy may have no slots array. */
  index->objects = (const CowscopeLiveObject *) (gconstpointer) self->slots;
  index->stride = sizeof (Slot);
}

static int
compare_slot_ids (gconstpointer a, gconstpointer b, gpointer data)
{
  const Key *keys = data;
  guint64 x = keys[*(const guint32 *) a].id, y = keys[*(const guint32 *) b].id;
  return (x > y) - (x < y);
}

static int
compare_keys (gconstpointer a, gconstpointer b)
{
  guint64 x = *(const guint64 *) a, y = *(const guint64 *) b;
  return (x > y) - (x < y);
}

/* A counting sort by (kind, pid), keeping slot order within each group:
 * since ids grow with time and a checkpoint's objects come sorted, that
 * is almost always id order already (checked; sorted when not). */
guint32 *
cowscope_graph_state_sort (const CowscopeGraphState *self)
{
  const Key *slots = self->keys;
  guint n_slots = self->n_slots;
  guint n_live = n_slots - self->n_dead;
  guint32 *order = g_new (guint32, MAX (n_live, 1));
  g_autofree guint32 *group_of = g_new (guint32, MAX (n_slots, 1));
  g_autoptr (GHashTable) groups =
    g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL); /* key -> group + 1 */
  g_autoptr (GArray) keys = g_array_new (FALSE, FALSE, sizeof (guint64));
  g_autoptr (GArray) counts = g_array_new (FALSE, TRUE, sizeof (guint));
  /* The last group of each kind: replayed births interleave kinds, mostly
   * of one process. */
  guint64 last_key[COWSCOPE_N_OBJECT_KINDS + 1];
  guint32 last_group[COWSCOPE_N_OBJECT_KINDS + 1] = { 0 };
  for (guint k = 0; k <= COWSCOPE_N_OBJECT_KINDS; k++)
    last_key[k] = G_MAXUINT64;
  for (guint i = 0; i < n_slots; i++)
    {
      if (slots[i].dead)
        continue;
      guint64 key = (guint64) slots[i].kind << 32 | slots[i].pid;
      guint c = MIN (slots[i].kind, COWSCOPE_N_OBJECT_KINDS);
      if (key != last_key[c])
        {
          gpointer found = g_hash_table_lookup (groups, &key);
          if (found == NULL)
            {
              g_array_append_val (keys, key);
              g_array_set_size (counts, keys->len);
              found = GUINT_TO_POINTER (keys->len);
              g_hash_table_insert (groups, g_memdup2 (&key, sizeof key), found);
            }
          last_key[c] = key;
          last_group[c] = GPOINTER_TO_UINT (found) - 1;
        }
      group_of[i] = last_group[c];
      g_array_index (counts, guint, last_group[c])++;
    }
  /* Offsets of the groups in key order. */
  guint n_groups = keys->len;
  g_autofree guint64 *sorted = g_new (guint64, MAX (n_groups, 1));
  if (n_groups > 0)
    {
      memcpy (sorted, keys->data, sizeof (guint64) * n_groups);
      qsort (sorted, n_groups, sizeof (guint64), compare_keys);
    }
  g_autofree guint *start = g_new0 (guint, MAX (n_groups, 1));
  g_autofree guint *next = g_new0 (guint, MAX (n_groups, 1));
  guint at = 0;
  for (guint k = 0; k < n_groups; k++)
    {
      guint g = GPOINTER_TO_UINT (g_hash_table_lookup (groups, &sorted[k])) - 1;
      start[g] = next[g] = at;
      at += g_array_index (counts, guint, g);
    }
  for (guint i = 0; i < n_slots; i++)
    if (!slots[i].dead)
      order[next[group_of[i]]++] = i;
  for (guint g = 0; g < n_groups; g++)
    {
      guint32 *o = order + start[g];
      guint n = next[g] - start[g];
      for (guint k = 1; k < n; k++)
        if (slots[o[k - 1]].id > slots[o[k]].id)
          {
            g_qsort_with_data (o, (gint) n, sizeof (guint32), compare_slot_ids,
                               (gpointer) slots);
            break;
          }
    }
  return order;
}
