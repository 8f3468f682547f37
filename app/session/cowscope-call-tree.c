/* cowscope-call-tree.c — the copy call tree (see header).
 *
 * Built in four passes: the events are summed per stack (one scan of the
 * materializations, one of the eager lazy clones); each distinct stack's
 * frames are read once (a query a stack, or one scan of the stack tables
 * when there are many) into its path from the call site out; each
 * direction's tree is built as a trie of the sorted paths; then the
 * children are laid out contiguously, heaviest first, and numbered in
 * preorder, so that a node's events are those of the stacks whose path
 * ends inside its preorder interval. */
#include "cowscope-call-tree.h"
#include "cowscope-call-tree-private.h"

#include <glib/gi18n-lib.h>
#include <inttypes.h>
#include <string.h>

#include "cow-trace.h"
#include "cowscope-format-open.h"
#include "cowscope-session-document-private.h"

/* One node of either tree. */
typedef struct {
  guint frame;            /* index in frames, NO_NODE for a root */
  guint parent;
  guint depth;
  guint first_child;      /* index in children */
  guint n_children;
  guint preorder;         /* within its tree */
  guint subtree;          /* nodes in its subtree, itself included */
  guint own;              /* index + 1 in CowscopeCallTree.own, or 0: none */
  CowscopeCallWeights total;
} Node;

/* The events of one distinct stack. */
typedef struct {
  gint64 stack_id;        /* 0: recorded without a stack */
  CowscopeCallWeights weights;
  guint end[2];           /* where its path ends, per direction */
} StackEntry;

struct _CowscopeCallTree {
  GObject parent_instance;
  CowscopeSessionDocument *document;
  CowscopeCallTreeOptions options;
  GArray *nodes;          /* Node */
  GArray *children;       /* guint: each node's children, contiguous */
  GPtrArray *frames;      /* CowscopeCallFrame* */
  GStringChunk *strings;  /* the frames' strings */
  GArray *stacks;         /* StackEntry */
  GArray *own;            /* CowscopeCallWeights: the self weights of the
                           * nodes paths end at (most nodes have none) */
  guint roots[2];
  guint max_depth[2];
};

G_DEFINE_FINAL_TYPE (CowscopeCallTree, cowscope_call_tree, G_TYPE_OBJECT)

/* Checks the cancellable between SQLite's steps (a non-zero return stops
 * the statement with SQLITE_INTERRUPT). */
#define PROGRESS_STEPS 4096

guint64
cowscope_call_weights_get (const CowscopeCallWeights *weights, CowscopeCallMetric metric)
{
  switch (metric)
    {
    case COWSCOPE_CALL_METRIC_EVENTS:
      return weights->copies + weights->steals + weights->eager;
    case COWSCOPE_CALL_METRIC_TIME:
      return weights->time_ns;
    case COWSCOPE_CALL_METRIC_BYTES:
    default:
      return weights->copy_bytes + weights->eager_bytes;
    }
}

static void
weights_add (CowscopeCallWeights *to, const CowscopeCallWeights *w)
{
  to->copies += w->copies;
  to->copy_bytes += w->copy_bytes;
  to->steals += w->steals;
  to->steal_bytes += w->steal_bytes;
  to->eager += w->eager;
  to->eager_bytes += w->eager_bytes;
  to->time_ns += w->time_ns;
}

void
cowscope_call_tree_options_init (CowscopeCallTreeOptions *options)
{
  *options = (CowscopeCallTreeOptions) {
    .range_start = -1, .range_end = -1,
    .grouping = COWSCOPE_CALL_TREE_BY_LINE,
    .include_internal = FALSE,
  };
}

static void
cowscope_call_tree_finalize (GObject *object)
{
  CowscopeCallTree *self = COWSCOPE_CALL_TREE (object);

  g_clear_object (&self->document);
  g_clear_pointer (&self->nodes, g_array_unref);
  g_clear_pointer (&self->children, g_array_unref);
  g_clear_pointer (&self->frames, g_ptr_array_unref);
  g_clear_pointer (&self->strings, g_string_chunk_free);
  g_clear_pointer (&self->stacks, g_array_unref);
  g_clear_pointer (&self->own, g_array_unref);
  G_OBJECT_CLASS (cowscope_call_tree_parent_class)->finalize (object);
}

static void
cowscope_call_tree_class_init (CowscopeCallTreeClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = cowscope_call_tree_finalize;
}

static void
cowscope_call_tree_init (CowscopeCallTree *self)
{
  self->nodes = g_array_new (FALSE, TRUE, sizeof (Node));
  self->children = g_array_new (FALSE, FALSE, sizeof (guint));
  self->frames = g_ptr_array_new_with_free_func (g_free);
  self->strings = g_string_chunk_new (4096);
  self->stacks = g_array_new (FALSE, TRUE, sizeof (StackEntry));
  self->own = g_array_new (FALSE, TRUE, sizeof (CowscopeCallWeights));
}

/* ---- building ------------------------------------------------------------ */

/* Above this many stacks, the frames of every stack are read in one scan
 * of the stack tables rather than one query a stack (the scan costs what
 * a few hundred queries do). */
#define STACKS_SCAN_THRESHOLD 256

static guint scan_threshold = STACKS_SCAN_THRESHOLD; /* for tests: cowscope-call-tree-private.h */

void
cowscope_call_tree_set_scan_threshold (guint n)
{
  scan_threshold = n > 0 ? n : STACKS_SCAN_THRESHOLD;
}

/* A map from 64-bit keys to non-zero values, open addressing with linear
 * probing: the tree adds a node for nearly every frame of every stack,
 * and GHashTable would allocate each key (and g_int64_hash() keeps only
 * the low 32 bits, which for the (parent, frame) keys is the frame alone,
 * putting every node of a frame in one bucket). */
typedef struct {
  guint64 *keys;
  guint *values;  /* 0: empty */
  gsize mask, used;
} U64Map;

static void
u64map_init (U64Map *m)
{
  m->mask = 1023;
  m->used = 0;
  m->keys = g_new (guint64, m->mask + 1);
  m->values = g_new0 (guint, m->mask + 1);
}

static void
u64map_clear (U64Map *m)
{
  g_clear_pointer (&m->keys, g_free);
  g_clear_pointer (&m->values, g_free);
}

static gsize
u64map_slot (const U64Map *m, guint64 key)
{
  /* Fibonacci hashing spreads every bit of the key. */
  gsize i = (gsize) ((key * G_GUINT64_CONSTANT (0x9E3779B97F4A7C15)) >> 20) & m->mask;
  while (m->values[i] != 0 && m->keys[i] != key)
    i = (i + 1) & m->mask;
  return i;
}

/* The value of @key, or 0. */
static guint
u64map_get (const U64Map *m, guint64 key)
{
  return m->values[u64map_slot (m, key)];
}

/* Sets @key to @value (not 0). */
static void
u64map_put (U64Map *m, guint64 key, guint value)
{
  if ((m->used + 1) * 2 > m->mask + 1)
    {
      U64Map bigger = { g_new (guint64, (m->mask + 1) * 2), g_new0 (guint, (m->mask + 1) * 2),
                        (m->mask + 1) * 2 - 1, m->used };
      for (gsize i = 0; i <= m->mask; i++)
        if (m->values[i] != 0)
          {
            gsize j = u64map_slot (&bigger, m->keys[i]);
            bigger.keys[j] = m->keys[i];
            bigger.values[j] = m->values[i];
          }
      u64map_clear (m);
      *m = bigger;
    }
  gsize i = u64map_slot (m, key);
  if (m->values[i] == 0)
    m->used++;
  m->keys[i] = key;
  m->values[i] = value;
}

/* A frame as read from the frames table, before it is interned. */
typedef struct {
  CowscopeFrameRef ref;   /* strings in Build.raw_strings */
  guint interned;         /* frame index + 1, or 0 */
} RawFrame;

typedef struct {
  CowscopeCallTree *tree;
  sqlite3 *db;
  const char *path;
  GCancellable *cancellable;
  U64Map stack_index;        /* stack id → StackEntry index + 1 */
  U64Map raw_by_id;          /* frames.id → RawFrame index + 1 */
  GArray *paths;             /* guint frame indexes: each stack's path, call site first */
  GArray *path_of;           /* PathRef per StackEntry */
  GArray *raw;               /* RawFrame */
  GStringChunk *raw_strings;
  GHashTable *frame_by_key;  /* key → frame index + 1 */
  GArray *first_child, *next_sibling; /* guint per node, while building */
  GArray *scratch_refs;      /* CowscopeFrameRef */
} Build;

static int
progress_cb (void *data)
{
  return g_cancellable_is_cancelled (data);
}

/* Sets @error for a failed step (cancelled or not). */
static void
step_error (Build *b, int rc, const char *what, GError **error)
{
  if (g_cancellable_is_cancelled (b->cancellable))
    g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_CANCELLED, _("Cancelled"));
  else
    cowscope_format_set_error (error, b->db, rc, b->path, what);
}

/* The stack entry of @stack_id (0 or less: none), created empty. */
static StackEntry *
stack_entry (Build *b, gint64 stack_id)
{
  stack_id = MAX (stack_id, 0);
  guint index = u64map_get (&b->stack_index, (guint64) stack_id);
  if (index == 0)
    {
      StackEntry entry = { .stack_id = stack_id,
                           .end = { COWSCOPE_CALL_TREE_NO_NODE, COWSCOPE_CALL_TREE_NO_NODE } };
      g_array_append_val (b->tree->stacks, entry);
      index = b->tree->stacks->len;
      u64map_put (&b->stack_index, (guint64) stack_id, index);
    }
  return &g_array_index (b->tree->stacks, StackEntry, index - 1);
}

/* The range condition on a materialization's end (@end_sql) or a lazy
 * clone's time, with ?1 and ?2 bound to the range. */
static char *
range_sql (const CowscopeCallTreeOptions *o, const char *begin_sql, const char *end_sql)
{
  if (o->range_start < 0 && o->range_end < 0)
    return g_strdup ("1");
  /* The begin bound lets SQLite use the index on the begin time. */
  return g_strdup_printf ("%s < ?2 AND %s >= ?1 AND %s < ?2", begin_sql, end_sql, end_sql);
}

static void
bind_range (sqlite3_stmt *q, const CowscopeCallTreeOptions *o)
{
  if (o->range_start < 0 && o->range_end < 0)
    return;
  sqlite3_bind_int64 (q, 1, o->range_start);
  sqlite3_bind_int64 (q, 2, o->range_end);
}

/* Sums the copies, steals and eager fallbacks per stack.  The rows are
 * summed here rather than by a GROUP BY, which sorts them first (four
 * times slower on ten million events). */
static gboolean
sum_events (Build *b, GError **error)
{
  const CowscopeCallTreeOptions *o = &b->tree->options;
  g_autofree char *m_range = range_sql (o, "begin_ts", "COALESCE (end_ts, begin_ts)");
  g_autofree char *m_sql = g_strdup_printf (
    "SELECT COALESCE (stack_id, 0), kind & :materialize_kind_mask, nbytes,"
    " MAX (COALESCE (end_ts, begin_ts) - begin_ts, 0)"
    " FROM materializations WHERE %s AND (kind & :materialize_kind_mask) IN"
    " (:materialize_copy, :materialize_steal)", m_range);
  g_autofree char *l_range = range_sql (o, "ts", "ts");
  g_autofree char *l_sql = g_strdup_printf (
    "SELECT COALESCE (stack_id, 0), nbytes FROM lazy_clones"
    " WHERE eager_reason IS NOT NULL AND %s", l_range);
  StackEntry *e = NULL;
  gint64 last = -1;
  int rc;

  g_autoptr (sqlite3_stmt) m = cowscope_format_statement (b->db, b->path, m_sql, error);
  if (m == NULL)
    return FALSE;
  bind_range (m, o);
  while ((rc = sqlite3_step (m)) == SQLITE_ROW)
    {
      gint64 stack_id = sqlite3_column_int64 (m, 0);
      guint64 bytes = (guint64) MAX (sqlite3_column_int64 (m, 2), 0);
      /* Entries move when the array grows: look up again on a change. */
      if (e == NULL || stack_id != last)
        {
          e = stack_entry (b, stack_id);
          last = stack_id;
        }
      if (sqlite3_column_int64 (m, 1) == COW_MATERIALIZE_COPY)
        {
          e->weights.copies++;
          e->weights.copy_bytes += bytes;
        }
      else
        {
          e->weights.steals++;
          e->weights.steal_bytes += bytes;
        }
      e->weights.time_ns += (guint64) MAX (sqlite3_column_int64 (m, 3), 0);
    }
  if (rc != SQLITE_DONE)
    {
      step_error (b, rc, "materializations", error);
      return FALSE;
    }

  g_autoptr (sqlite3_stmt) l = cowscope_format_statement (b->db, b->path, l_sql, error);
  if (l == NULL)
    return FALSE;
  bind_range (l, o);
  e = NULL;
  while ((rc = sqlite3_step (l)) == SQLITE_ROW)
    {
      gint64 stack_id = sqlite3_column_int64 (l, 0);
      if (e == NULL || stack_id != last)
        {
          e = stack_entry (b, stack_id);
          last = stack_id;
        }
      e->weights.eager++;
      e->weights.eager_bytes += (guint64) MAX (sqlite3_column_int64 (l, 1), 0);
    }
  if (rc != SQLITE_DONE)
    {
      step_error (b, rc, "lazy clones", error);
      return FALSE;
    }
  return TRUE;
}

/* The key of @ref under @grouping. */
static char *
location_key (const CowscopeFrameRef *ref, CowscopeCallTreeGrouping grouping)
{
  if (grouping == COWSCOPE_CALL_TREE_BY_FUNCTION && ref->function != NULL)
    return g_strdup_printf ("%s\x1f%s\x1f\x1f%s\x1f", ref->function,
                            ref->file != NULL ? ref->file : "",
                            ref->module != NULL ? ref->module : "");
  return cowscope_call_site_key (ref);
}

/* "update_weights (train.c:88)", "update_weights (train.c)" by function,
 * "0x4a0 in train" unsymbolized. */
static char *
location_display (const CowscopeFrameRef *ref, CowscopeCallTreeGrouping grouping)
{
  g_autofree char *file = ref->file != NULL ? g_path_get_basename (ref->file) : NULL;

  if (!cowscope_call_site_is_symbolized (ref))
    return cowscope_call_site_format (ref);
  if (ref->function == NULL)
    return ref->line > 0 ? g_strdup_printf ("%s:%" G_GINT64_FORMAT, file, ref->line)
                         : g_strdup (file);
  if (file == NULL)
    return g_strdup (ref->function);
  if (grouping == COWSCOPE_CALL_TREE_BY_FUNCTION || ref->line <= 0)
    return g_strdup_printf ("%s (%s)", ref->function, file);
  return g_strdup_printf ("%s (%s:%" G_GINT64_FORMAT ")", ref->function, file, ref->line);
}

/* The frame for @ref (interned by key); returns its index. */
static guint
intern_frame (Build *b, const CowscopeFrameRef *ref, gboolean no_stack)
{
  CowscopeCallTree *t = b->tree;
  g_autofree char *key = no_stack ? g_strdup ("\x1fno-stack") : location_key (ref, t->options.grouping);
  guint index = GPOINTER_TO_UINT (g_hash_table_lookup (b->frame_by_key, key));

  if (index > 0)
    return index - 1;

  CowscopeCallFrame *f = g_new0 (CowscopeCallFrame, 1);
  GStringChunk *s = t->strings;
  g_autofree char *display = no_stack ? g_strdup (_("(no call stack)"))
                                      : location_display (ref, t->options.grouping);
  g_autofree char *site = no_stack ? g_strdup (_("(no call stack)")) : cowscope_call_site_format (ref);

  f->ref.function = ref->function != NULL ? g_string_chunk_insert_const (s, ref->function) : NULL;
  f->ref.file = ref->file != NULL ? g_string_chunk_insert_const (s, ref->file) : NULL;
  f->ref.module = ref->module != NULL ? g_string_chunk_insert_const (s, ref->module) : NULL;
  f->ref.line = ref->line;
  f->ref.address = ref->address;
  f->key = g_string_chunk_insert_const (s, key);
  f->display = g_string_chunk_insert_const (s, display);
  f->site = g_string_chunk_insert_const (s, site);
  f->internal = !no_stack && cowscope_call_site_is_internal (ref);
  f->no_stack = no_stack;
  g_ptr_array_add (t->frames, f);
  g_hash_table_insert (b->frame_by_key, (gpointer) f->key, GUINT_TO_POINTER (t->frames->len));
  return t->frames->len - 1;
}

static guint
new_node (Build *b, guint frame, guint parent)
{
  Node node = { .frame = frame, .parent = parent, .n_children = 0 };
  guint none = COWSCOPE_CALL_TREE_NO_NODE;

  if (parent != COWSCOPE_CALL_TREE_NO_NODE)
    node.depth = g_array_index (b->tree->nodes, Node, parent).depth + 1;
  g_array_append_val (b->tree->nodes, node);
  g_array_append_val (b->first_child, none);
  g_array_append_val (b->next_sibling, none);
  return b->tree->nodes->len - 1;
}

/* Adds a child of @parent for @frame (not there yet). */
static guint
add_child (Build *b, guint parent, guint frame)
{
  guint child = new_node (b, frame, parent);
  g_array_index (b->next_sibling, guint, child) = g_array_index (b->first_child, guint, parent);
  g_array_index (b->first_child, guint, parent) = child;
  g_array_index (b->tree->nodes, Node, parent).n_children++;
  return child;
}

/* Adds a row of the frames table (id, function, file, line, module,
 * address in @q from column @col) to the raw frames; returns its index. */
static guint
add_raw_frame (Build *b, sqlite3_stmt *q, int col)
{
  GStringChunk *s = b->raw_strings;
  const char *function = (const char *) sqlite3_column_text (q, col + 1);
  const char *file = (const char *) sqlite3_column_text (q, col + 2);
  const char *module = (const char *) sqlite3_column_text (q, col + 4);
  /* Files are untrusted: names that are not UTF-8 are repaired. */
  g_autofree char *f = function != NULL && !g_utf8_validate (function, -1, NULL)
                         ? g_utf8_make_valid (function, -1) : NULL;
  g_autofree char *fi = file != NULL && !g_utf8_validate (file, -1, NULL)
                          ? g_utf8_make_valid (file, -1) : NULL;
  g_autofree char *mo = module != NULL && !g_utf8_validate (module, -1, NULL)
                          ? g_utf8_make_valid (module, -1) : NULL;
  RawFrame raw = {
    .ref = {
      function != NULL ? g_string_chunk_insert_const (s, f != NULL ? f : function) : NULL,
      file != NULL ? g_string_chunk_insert_const (s, fi != NULL ? fi : file) : NULL,
      module != NULL ? g_string_chunk_insert_const (s, mo != NULL ? mo : module) : NULL,
      cowscope_format_column_int (q, col + 3, 0),
      (guint64) sqlite3_column_int64 (q, col + 5),
    },
  };
  g_array_append_val (b->raw, raw);
  u64map_put (&b->raw_by_id, (guint64) sqlite3_column_int64 (q, col), b->raw->len);
  return b->raw->len - 1;
}

/* Where a stack's path is in Build.paths. */
typedef struct {
  guint start, length;
} PathRef;

/* Records @e's path (its place in the code from the call site out, or
 * the "(no call stack)" frame); @raw_frames holds its frames' raw
 * indexes, innermost first.  The trees are built from the paths once
 * they are all known (build_tree()). */
static void
add_stack (Build *b, StackEntry *e, const guint *raw_frames, guint n)
{
  CowscopeCallTree *t = b->tree;
  GArray *refs = b->scratch_refs;
  PathRef *where = &g_array_index (b->path_of, PathRef, e - (StackEntry *) t->stacks->data);

  where->start = b->paths->len;
  g_array_set_size (refs, 0);
  for (guint i = 0; i < n; i++)
    g_array_append_val (refs, g_array_index (b->raw, RawFrame, raw_frames[i]).ref);
  gint site = cowscope_call_site_choose ((const CowscopeFrameRef *) refs->data, refs->len);
  if (site < 0)
    {
      guint none_frame = intern_frame (b, &(CowscopeFrameRef) { 0 }, TRUE);
      g_array_append_val (b->paths, none_frame);
    }
  else
    for (guint i = t->options.include_internal ? 0 : (guint) site; i < n; i++)
      {
        RawFrame *raw = &g_array_index (b->raw, RawFrame, raw_frames[i]);
        if (raw->interned == 0)
          raw->interned = intern_frame (b, &raw->ref, FALSE) + 1;
        guint frame = raw->interned - 1;
        g_array_append_val (b->paths, frame);
      }
  where->length = b->paths->len - where->start;
}

typedef struct {
  Build *build;
  CowscopeCallTreeDirection direction;
} PathOrder;

/* Frame @i of the path @p in @direction's order (top-down: outermost
 * first, the reverse of how paths are kept). */
static inline guint
path_frame (const Build *b, const PathRef *p, CowscopeCallTreeDirection direction, guint i)
{
  guint at = direction == COWSCOPE_CALL_TREE_BOTTOM_UP ? p->start + i : p->start + p->length - 1 - i;
  return g_array_index (b->paths, guint, at);
}

/* Orders stack indexes by their paths in the direction's order, so that
 * paths sharing a beginning are next to each other. */
static gint
compare_paths (gconstpointer x, gconstpointer y, gpointer data)
{
  const PathOrder *o = data;
  const PathRef *p = &g_array_index (o->build->path_of, PathRef, *(const guint *) x);
  const PathRef *q = &g_array_index (o->build->path_of, PathRef, *(const guint *) y);
  guint n = MIN (p->length, q->length);
  for (guint i = 0; i < n; i++)
    {
      guint a = path_frame (o->build, p, o->direction, i);
      guint c = path_frame (o->build, q, o->direction, i);
      if (a != c)
        return a < c ? -1 : 1;
    }
  return (p->length > q->length) - (p->length < q->length);
}

/* Builds @direction's tree as a trie of the stacks' paths: sorted, each
 * path shares the nodes of its common beginning with the one before it
 * and adds nodes for the rest, so no lookup is needed; then adds each
 * stack's weights along its path. */
static void
build_tree (Build *b, CowscopeCallTreeDirection direction)
{
  CowscopeCallTree *t = b->tree;
  guint n = t->stacks->len;
  g_autofree guint *order = g_new (guint, MAX (n, 1));
  g_autoptr (GArray) nodes = g_array_new (FALSE, FALSE, sizeof (guint)); /* the path so far */
  PathOrder o = { b, direction };
  const PathRef *previous = NULL;
  guint root = t->roots[direction];

  for (guint i = 0; i < n; i++)
    order[i] = i;
  g_qsort_with_data (order, (gint) n, sizeof (guint), compare_paths, &o);
  g_array_append_val (nodes, root);
  for (guint k = 0; k < n; k++)
    {
      StackEntry *e = &g_array_index (t->stacks, StackEntry, order[k]);
      const PathRef *p = &g_array_index (b->path_of, PathRef, order[k]);
      guint common = 0;
      if (previous != NULL)
        while (common < MIN (p->length, previous->length)
               && path_frame (b, p, direction, common) == path_frame (b, previous, direction, common))
          common++;
      g_array_set_size (nodes, common + 1);
      for (guint i = common; i < p->length; i++)
        {
          guint child = add_child (b, g_array_index (nodes, guint, i), path_frame (b, p, direction, i));
          g_array_append_val (nodes, child);
        }
      for (guint i = 0; i < nodes->len; i++)
        weights_add (&g_array_index (t->nodes, Node, g_array_index (nodes, guint, i)).total, &e->weights);
      e->end[direction] = g_array_index (nodes, guint, nodes->len - 1);
      Node *end = &g_array_index (t->nodes, Node, e->end[direction]);
      if (end->own == 0)
        {
          g_array_set_size (t->own, t->own->len + 1);
          end->own = t->own->len;
        }
      weights_add (&g_array_index (t->own, CowscopeCallWeights, end->own - 1), &e->weights);
      previous = p;
    }
}

static gint
compare_stack_ids (gconstpointer a, gconstpointer b)
{
  gint64 x = ((const StackEntry *) a)->stack_id, y = ((const StackEntry *) b)->stack_id;
  return (x > y) - (x < y);
}

/* Reads the frames of the stacks, one query a stack, and adds them. */
static gboolean
add_stacks_by_query (Build *b, GError **error)
{
  CowscopeCallTree *t = b->tree;
  g_autoptr (sqlite3_stmt) q = cowscope_format_statement (b->db, b->path,
    "SELECT f.id, f.function, f.file, f.line, f.module, f.address"
    " FROM stack_frames sf JOIN frames f ON f.id = sf.frame_id"
    " WHERE sf.stack_id = ?1 ORDER BY sf.position", error);
  g_autoptr (GArray) frames = g_array_new (FALSE, FALSE, sizeof (guint));
  if (q == NULL)
    return FALSE;
  for (guint i = 0; i < t->stacks->len; i++)
    {
      StackEntry *e = &g_array_index (t->stacks, StackEntry, i);
      int rc = SQLITE_DONE;
      g_array_set_size (frames, 0);
      if (e->stack_id > 0)
        {
          sqlite3_reset (q);
          sqlite3_bind_int64 (q, 1, e->stack_id);
          while ((rc = sqlite3_step (q)) == SQLITE_ROW)
            {
              guint raw = u64map_get (&b->raw_by_id, (guint64) sqlite3_column_int64 (q, 0));
              raw = raw > 0 ? raw - 1 : add_raw_frame (b, q, 0);
              g_array_append_val (frames, raw);
            }
          if (rc != SQLITE_DONE)
            {
              step_error (b, rc, "stack frames", error);
              return FALSE;
            }
        }
      add_stack (b, e, (const guint *) frames->data, frames->len);
    }
  return TRUE;
}

/* Reads every frame, then every stack's frames in one scan, and adds the
 * stacks that have events. */
static gboolean
add_stacks_by_scan (Build *b, GError **error)
{
  CowscopeCallTree *t = b->tree;
  g_autoptr (sqlite3_stmt) fq = cowscope_format_statement (b->db, b->path,
    "SELECT id, function, file, line, module, address FROM frames", error);
  if (fq == NULL)
    return FALSE;
  int rc;
  while ((rc = sqlite3_step (fq)) == SQLITE_ROW)
    add_raw_frame (b, fq, 0);
  if (rc != SQLITE_DONE)
    {
      step_error (b, rc, "frames", error);
      return FALSE;
    }

  g_autoptr (sqlite3_stmt) q = cowscope_format_statement (b->db, b->path,
    "SELECT stack_id, frame_id FROM stack_frames ORDER BY stack_id, position", error);
  g_autoptr (GArray) frames = g_array_new (FALSE, FALSE, sizeof (guint));
  if (q == NULL)
    return FALSE;
  gint64 current = -1;
  StackEntry *e = NULL;
  gboolean more = TRUE;
  while (more)
    {
      rc = sqlite3_step (q);
      more = rc == SQLITE_ROW;
      gint64 stack_id = more ? sqlite3_column_int64 (q, 0) : -1;
      if (stack_id != current)
        {
          if (e != NULL)
            add_stack (b, e, (const guint *) frames->data, frames->len);
          g_array_set_size (frames, 0);
          current = stack_id;
          guint index = more ? u64map_get (&b->stack_index, (guint64) MAX (stack_id, 0)) : 0;
          e = index > 0 ? &g_array_index (t->stacks, StackEntry, index - 1) : NULL;
        }
      if (e != NULL)
        {
          /* A frame id the frames table lacks is left out, as the join
           * of the query per stack leaves it. */
          guint raw = u64map_get (&b->raw_by_id, (guint64) sqlite3_column_int64 (q, 1));
          if (raw > 0)
            {
              raw--;
              g_array_append_val (frames, raw);
            }
        }
    }
  if (rc != SQLITE_DONE)
    {
      step_error (b, rc, "stack frames", error);
      return FALSE;
    }
  /* Stacks with no frames at all (the events without a stack, ids the
   * stack tables lack): no path yet (every path has a frame). */
  for (guint i = 0; i < t->stacks->len; i++)
    if (g_array_index (b->path_of, PathRef, i).length == 0)
      add_stack (b, &g_array_index (t->stacks, StackEntry, i), NULL, 0);
  return TRUE;
}

/* Heaviest first: bytes copied, events, time, then the display text (so
 * the order never depends on the order stacks were read in). */
static gint
compare_children (gconstpointer a, gconstpointer b, gpointer data)
{
  CowscopeCallTree *t = data;
  const Node *x = &g_array_index (t->nodes, Node, *(const guint *) a);
  const Node *y = &g_array_index (t->nodes, Node, *(const guint *) b);
  static const CowscopeCallMetric order[] = {
    COWSCOPE_CALL_METRIC_BYTES, COWSCOPE_CALL_METRIC_EVENTS, COWSCOPE_CALL_METRIC_TIME,
  };

  for (guint i = 0; i < G_N_ELEMENTS (order); i++)
    {
      guint64 u = cowscope_call_weights_get (&x->total, order[i]);
      guint64 v = cowscope_call_weights_get (&y->total, order[i]);
      if (u != v)
        return u > v ? -1 : 1;
    }
  const CowscopeCallFrame *f = g_ptr_array_index (t->frames, x->frame);
  const CowscopeCallFrame *g = g_ptr_array_index (t->frames, y->frame);
  int c = g_strcmp0 (f->display, g->display);
  return c != 0 ? c : g_strcmp0 (f->key, g->key);
}

/* Lays the children out contiguously, sorted, numbers @direction's tree
 * in preorder (iteratively: stacks can be deep) and counts each node's
 * subtree (children before parents: in reverse preorder). */
static void
finish_tree (Build *b, CowscopeCallTreeDirection direction)
{
  CowscopeCallTree *t = b->tree;
  g_autoptr (GArray) todo = g_array_new (FALSE, FALSE, sizeof (guint));
  g_autoptr (GArray) order = g_array_new (FALSE, FALSE, sizeof (guint));
  guint root = t->roots[direction];

  g_array_append_val (todo, root);
  while (todo->len > 0)
    {
      guint id = g_array_index (todo, guint, todo->len - 1);
      g_array_set_size (todo, todo->len - 1);
      Node *node = &g_array_index (t->nodes, Node, id);
      node->preorder = order->len;
      node->subtree = 1;
      g_array_append_val (order, id);
      node->first_child = t->children->len;
      t->max_depth[direction] = MAX (t->max_depth[direction], node->depth);
      for (guint c = g_array_index (b->first_child, guint, id); c != COWSCOPE_CALL_TREE_NO_NODE;
           c = g_array_index (b->next_sibling, guint, c))
        g_array_append_val (t->children, c);
      guint n = node->n_children;
      guint *kids = &g_array_index (t->children, guint, node->first_child);
      g_qsort_with_data (kids, (gint) n, sizeof (guint), compare_children, t);
      /* Pushed in reverse, so the heaviest child is numbered next. */
      for (guint i = n; i > 0; i--)
        g_array_append_val (todo, kids[i - 1]);
    }
  for (guint i = order->len; i > 1; i--)
    {
      const Node *node = &g_array_index (t->nodes, Node, g_array_index (order, guint, i - 1));
      g_array_index (t->nodes, Node, node->parent).subtree += node->subtree;
    }
}

/* Makes room for @n elements in @array (its length unchanged). */
static void
reserve (GArray *array, guint n)
{
  guint length = array->len;
  if (n > length)
    {
      g_array_set_size (array, n);
      g_array_set_size (array, length);
    }
}

static gboolean
build (Build *b, GError **error)
{
  CowscopeCallTree *t = b->tree;

  if (!sum_events (b, error))
    return FALSE;
  if (g_cancellable_set_error_if_cancelled (b->cancellable, error))
    return FALSE;
  /* In stack order, so that frames are interned the same way each time. */
  g_array_sort (t->stacks, compare_stack_ids);
  for (guint i = 0; i < t->stacks->len; i++)
    u64map_put (&b->stack_index, (guint64) g_array_index (t->stacks, StackEntry, i).stack_id, i + 1);
  g_array_set_size (b->path_of, t->stacks->len);
  if (!(t->stacks->len > scan_threshold ? add_stacks_by_scan (b, error)
                                               : add_stacks_by_query (b, error)))
    return FALSE;
  if (g_cancellable_set_error_if_cancelled (b->cancellable, error))
    return FALSE;
  /* Room for the most nodes the paths can make, at once: growing by
   * copies costs more than the tree itself. */
  guint most = 2 + 2 * b->paths->len;
  reserve (t->nodes, most);
  reserve (b->first_child, most);
  reserve (b->next_sibling, most);
  build_tree (b, COWSCOPE_CALL_TREE_TOP_DOWN);
  build_tree (b, COWSCOPE_CALL_TREE_BOTTOM_UP);
  finish_tree (b, COWSCOPE_CALL_TREE_TOP_DOWN);
  finish_tree (b, COWSCOPE_CALL_TREE_BOTTOM_UP);
  return TRUE;
}

CowscopeCallTree *
cowscope_call_tree_new (CowscopeSessionDocument *document, const CowscopeCallTreeOptions *options,
                        GCancellable *cancellable, GError **error)
{
  g_return_val_if_fail (COWSCOPE_IS_SESSION_DOCUMENT (document), NULL);
  g_return_val_if_fail (options != NULL, NULL);

  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return NULL;
  sqlite3 *db = cowscope_session_document_acquire_db (document, error);
  if (db == NULL)
    return NULL;

  g_autoptr (CowscopeCallTree) self = g_object_new (COWSCOPE_TYPE_CALL_TREE, NULL);
  self->document = g_object_ref (document);
  self->options = *options;
  Build b = {
    .tree = self, .db = db, .path = cowscope_session_document_get_path (document),
    .cancellable = cancellable,
    .raw = g_array_new (FALSE, FALSE, sizeof (RawFrame)),
    .raw_strings = g_string_chunk_new (4096),
    .frame_by_key = g_hash_table_new (g_str_hash, g_str_equal),
    .first_child = g_array_new (FALSE, FALSE, sizeof (guint)),
    .next_sibling = g_array_new (FALSE, FALSE, sizeof (guint)),
    .scratch_refs = g_array_new (FALSE, FALSE, sizeof (CowscopeFrameRef)),
    .paths = g_array_new (FALSE, FALSE, sizeof (guint)),
    .path_of = g_array_new (FALSE, TRUE, sizeof (PathRef)),
  };
  u64map_init (&b.stack_index);
  u64map_init (&b.raw_by_id);
  self->roots[COWSCOPE_CALL_TREE_TOP_DOWN] = new_node (&b, COWSCOPE_CALL_TREE_NO_NODE,
                                                       COWSCOPE_CALL_TREE_NO_NODE);
  self->roots[COWSCOPE_CALL_TREE_BOTTOM_UP] = new_node (&b, COWSCOPE_CALL_TREE_NO_NODE,
                                                        COWSCOPE_CALL_TREE_NO_NODE);
  if (cancellable != NULL)
    sqlite3_progress_handler (db, PROGRESS_STEPS, progress_cb, cancellable);
  gboolean ok = build (&b, error);
  sqlite3_progress_handler (db, 0, NULL, NULL);
  cowscope_session_document_release_db (document, db);

  u64map_clear (&b.stack_index);
  u64map_clear (&b.raw_by_id);
  g_array_unref (b.raw);
  g_string_chunk_free (b.raw_strings);
  g_hash_table_unref (b.frame_by_key);
  g_array_unref (b.first_child);
  g_array_unref (b.next_sibling);
  g_array_unref (b.scratch_refs);
  g_array_unref (b.paths);
  g_array_unref (b.path_of);
  return ok ? g_steal_pointer (&self) : NULL;
}

static void
build_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  GError *error = NULL;
  CowscopeCallTree *tree = cowscope_call_tree_new (source, task_data, cancellable, &error);

  if (tree == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, tree, g_object_unref);
}

void
cowscope_call_tree_new_async (CowscopeSessionDocument *document,
                              const CowscopeCallTreeOptions *options, GCancellable *cancellable,
                              GAsyncReadyCallback callback, gpointer user_data)
{
  g_return_if_fail (COWSCOPE_IS_SESSION_DOCUMENT (document));
  g_return_if_fail (options != NULL);

  g_autoptr (GTask) task = g_task_new (document, cancellable, callback, user_data);
  g_task_set_source_tag (task, cowscope_call_tree_new_async);
  g_task_set_name (task, "[cowscope] call tree");
  g_task_set_task_data (task, g_memdup2 (options, sizeof *options), g_free);
  g_task_run_in_thread (task, build_thread);
}

CowscopeCallTree *
cowscope_call_tree_new_finish (GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == cowscope_call_tree_new_async,
                        NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}

/* ---- reading ------------------------------------------------------------- */

static const Node *
node_at (CowscopeCallTree *self, guint node)
{
  g_return_val_if_fail (node < self->nodes->len, NULL);
  return &g_array_index (self->nodes, Node, node);
}

CowscopeSessionDocument *
cowscope_call_tree_get_document (CowscopeCallTree *self)
{
  g_return_val_if_fail (COWSCOPE_IS_CALL_TREE (self), NULL);
  return self->document;
}

const CowscopeCallTreeOptions *
cowscope_call_tree_get_options (CowscopeCallTree *self)
{
  g_return_val_if_fail (COWSCOPE_IS_CALL_TREE (self), NULL);
  return &self->options;
}

guint
cowscope_call_tree_get_root (CowscopeCallTree *self, CowscopeCallTreeDirection direction)
{
  g_return_val_if_fail (COWSCOPE_IS_CALL_TREE (self), COWSCOPE_CALL_TREE_NO_NODE);
  g_return_val_if_fail (direction <= COWSCOPE_CALL_TREE_BOTTOM_UP, COWSCOPE_CALL_TREE_NO_NODE);
  return self->roots[direction];
}

guint
cowscope_call_tree_get_n_nodes (CowscopeCallTree *self)
{
  g_return_val_if_fail (COWSCOPE_IS_CALL_TREE (self), 0);
  return self->nodes->len;
}

guint
cowscope_call_tree_get_max_depth (CowscopeCallTree *self, CowscopeCallTreeDirection direction)
{
  g_return_val_if_fail (COWSCOPE_IS_CALL_TREE (self), 0);
  g_return_val_if_fail (direction <= COWSCOPE_CALL_TREE_BOTTOM_UP, 0);
  return self->max_depth[direction];
}

const CowscopeCallFrame *
cowscope_call_tree_get_frame (CowscopeCallTree *self, guint node)
{
  g_return_val_if_fail (COWSCOPE_IS_CALL_TREE (self), NULL);
  const Node *n = node_at (self, node);
  return n != NULL && n->frame != COWSCOPE_CALL_TREE_NO_NODE
           ? g_ptr_array_index (self->frames, n->frame) : NULL;
}

guint
cowscope_call_tree_get_parent (CowscopeCallTree *self, guint node)
{
  g_return_val_if_fail (COWSCOPE_IS_CALL_TREE (self), COWSCOPE_CALL_TREE_NO_NODE);
  const Node *n = node_at (self, node);
  return n != NULL ? n->parent : COWSCOPE_CALL_TREE_NO_NODE;
}

guint
cowscope_call_tree_get_depth (CowscopeCallTree *self, guint node)
{
  g_return_val_if_fail (COWSCOPE_IS_CALL_TREE (self), 0);
  const Node *n = node_at (self, node);
  return n != NULL ? n->depth : 0;
}

guint
cowscope_call_tree_get_n_children (CowscopeCallTree *self, guint node)
{
  g_return_val_if_fail (COWSCOPE_IS_CALL_TREE (self), 0);
  const Node *n = node_at (self, node);
  return n != NULL ? n->n_children : 0;
}

guint
cowscope_call_tree_get_child (CowscopeCallTree *self, guint node, guint i)
{
  g_return_val_if_fail (COWSCOPE_IS_CALL_TREE (self), COWSCOPE_CALL_TREE_NO_NODE);
  const Node *n = node_at (self, node);
  g_return_val_if_fail (n != NULL && i < n->n_children, COWSCOPE_CALL_TREE_NO_NODE);
  return g_array_index (self->children, guint, n->first_child + i);
}

guint
cowscope_call_tree_find_child (CowscopeCallTree *self, guint node, const char *key)
{
  g_return_val_if_fail (COWSCOPE_IS_CALL_TREE (self), COWSCOPE_CALL_TREE_NO_NODE);
  g_return_val_if_fail (key != NULL, COWSCOPE_CALL_TREE_NO_NODE);
  const Node *n = node_at (self, node);
  if (n == NULL)
    return COWSCOPE_CALL_TREE_NO_NODE;
  for (guint i = 0; i < n->n_children; i++)
    {
      guint child = g_array_index (self->children, guint, n->first_child + i);
      const CowscopeCallFrame *f = cowscope_call_tree_get_frame (self, child);
      if (g_str_equal (f->key, key))
        return child;
    }
  return COWSCOPE_CALL_TREE_NO_NODE;
}

const CowscopeCallWeights *
cowscope_call_tree_get_total (CowscopeCallTree *self, guint node)
{
  g_return_val_if_fail (COWSCOPE_IS_CALL_TREE (self), NULL);
  const Node *n = node_at (self, node);
  return n != NULL ? &n->total : NULL;
}

const CowscopeCallWeights *
cowscope_call_tree_get_self (CowscopeCallTree *self, guint node)
{
  g_return_val_if_fail (COWSCOPE_IS_CALL_TREE (self), NULL);
  static const CowscopeCallWeights none;
  const Node *n = node_at (self, node);
  if (n == NULL)
    return NULL;
  return n->own > 0 ? &g_array_index (self->own, CowscopeCallWeights, n->own - 1) : &none;
}

guint
cowscope_call_tree_find_site (CowscopeCallTree *self, const CowscopeFrameRef *site)
{
  g_return_val_if_fail (COWSCOPE_IS_CALL_TREE (self), COWSCOPE_CALL_TREE_NO_NODE);
  g_autofree char *key = site != NULL ? location_key (site, self->options.grouping)
                                      : g_strdup ("\x1fno-stack");
  return cowscope_call_tree_find_child (self, self->roots[COWSCOPE_CALL_TREE_BOTTOM_UP], key);
}

/* ---- the events of a node ------------------------------------------------ */

/* The stacks whose path ends in @node's subtree (gint64* stack ids), or
 * NULL when that is every stack (a root). */
static GHashTable *
stacks_under (CowscopeCallTree *self, guint node)
{
  const Node *n = node_at (self, node);
  if (n->parent == COWSCOPE_CALL_TREE_NO_NODE)
    return NULL;
  CowscopeCallTreeDirection direction = COWSCOPE_CALL_TREE_TOP_DOWN;
  guint r = node;
  while (node_at (self, r)->parent != COWSCOPE_CALL_TREE_NO_NODE)
    r = node_at (self, r)->parent;
  if (r == self->roots[COWSCOPE_CALL_TREE_BOTTOM_UP])
    direction = COWSCOPE_CALL_TREE_BOTTOM_UP;

  GHashTable *set = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  for (guint i = 0; i < self->stacks->len; i++)
    {
      const StackEntry *e = &g_array_index (self->stacks, StackEntry, i);
      guint pre = node_at (self, e->end[direction])->preorder;
      if (pre >= n->preorder && pre < n->preorder + n->subtree)
        g_hash_table_add (set, g_memdup2 (&e->stack_id, sizeof e->stack_id));
    }
  return set;
}

static void
clear_event (gpointer data)
{
  g_clear_pointer (&((CowscopeCallEvent *) data)->tensor_name, g_free);
}

/* Fills the tensor names of @events (their tensors, by process). */
static gboolean
name_tensors (Build *b, GArray *events, GError **error)
{
  g_autoptr (sqlite3_stmt) q = cowscope_format_statement (
    b->db, b->path, "SELECT name FROM tensors WHERE pid = ?1 AND id = ?2", error);
  if (q == NULL)
    return FALSE;
  for (guint i = 0; i < events->len; i++)
    {
      CowscopeCallEvent *e = &g_array_index (events, CowscopeCallEvent, i);
      sqlite3_reset (q);
      sqlite3_bind_int64 (q, 1, e->pid);
      sqlite3_bind_int64 (q, 2, (gint64) e->tensor_id);
      int rc = sqlite3_step (q);
      if (rc == SQLITE_ROW)
        e->tensor_name = cowscope_format_column_text (q, 0);
      else if (rc != SQLITE_DONE)
        {
          step_error (b, rc, "tensors", error);
          return FALSE;
        }
    }
  return TRUE;
}

GArray *
cowscope_call_tree_list_events (CowscopeCallTree *self, guint node, guint limit,
                                guint64 *n_total, gint64 *largest_seq, GCancellable *cancellable,
                                GError **error)
{
  g_return_val_if_fail (COWSCOPE_IS_CALL_TREE (self), NULL);
  g_return_val_if_fail (node < self->nodes->len, NULL);

  const CowscopeCallTreeOptions *o = &self->options;
  const char *path = cowscope_session_document_get_path (self->document);
  g_autoptr (GHashTable) stacks = stacks_under (self, node);
  g_autofree char *m_range = range_sql (o, "begin_ts", "COALESCE (end_ts, begin_ts)");
  g_autofree char *l_range = range_sql (o, "ts", "ts");
  /* Both in seq order, merged below. */
  g_autofree char *m_sql = g_strdup_printf (
    "SELECT seq, pid, tid, begin_ts, COALESCE (end_ts, begin_ts), op,"
    " kind & :materialize_kind_mask, nbytes, storage_id, tensor_id, COALESCE (stack_id, 0)"
    " FROM materializations WHERE %s AND (kind & :materialize_kind_mask) IN"
    " (:materialize_copy, :materialize_steal) ORDER BY seq", m_range);
  g_autofree char *l_sql = g_strdup_printf (
    "SELECT seq, pid, tid, ts, ts, op, -1, nbytes, result_storage_id, result_tensor_id,"
    " COALESCE (stack_id, 0) FROM lazy_clones WHERE eager_reason IS NOT NULL AND %s"
    " ORDER BY seq", l_range);
  GArray *events = g_array_new (FALSE, FALSE, sizeof (CowscopeCallEvent));
  guint64 total = 0, largest_bytes = 0;
  gint64 largest = -1;

  g_array_set_clear_func (events, clear_event);
  gboolean ok = FALSE;

  if (n_total != NULL)
    *n_total = 0;
  if (largest_seq != NULL)
    *largest_seq = -1;
  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    {
      g_array_unref (events);
      return NULL;
    }
  sqlite3 *db = cowscope_session_document_acquire_db (self->document, error);
  if (db == NULL)
    {
      g_array_unref (events);
      return NULL;
    }
  if (cancellable != NULL)
    sqlite3_progress_handler (db, PROGRESS_STEPS, progress_cb, cancellable);
  sqlite3_stmt *q[2] = {
    cowscope_format_statement (db, path, m_sql, error), NULL,
  };
  if (q[0] != NULL)
    q[1] = cowscope_format_statement (db, path, l_sql, error);
  if (q[0] != NULL && q[1] != NULL)
    {
      int rc[2];
      Build b = { .tree = self, .db = db, .path = path, .cancellable = cancellable };
      for (guint i = 0; i < 2; i++)
        {
          bind_range (q[i], o);
          rc[i] = sqlite3_step (q[i]);
        }
      while (rc[0] == SQLITE_ROW || rc[1] == SQLITE_ROW)
        {
          /* The lower seq of the two next rows. */
          guint k = rc[1] != SQLITE_ROW ? 0
                    : rc[0] != SQLITE_ROW ? 1
                    : sqlite3_column_int64 (q[0], 0) <= sqlite3_column_int64 (q[1], 0) ? 0 : 1;
          sqlite3_stmt *s = q[k];
          gint64 stack_id = sqlite3_column_int64 (s, 10);
          if (stacks == NULL || g_hash_table_contains (stacks, &stack_id))
            {
              guint64 nbytes = (guint64) MAX (sqlite3_column_int64 (s, 7), 0);
              total++;
              if (largest < 0 || nbytes > largest_bytes)
                {
                  largest = sqlite3_column_int64 (s, 0);
                  largest_bytes = nbytes;
                }
              if (events->len < limit)
                {
                  gint64 kind = sqlite3_column_int64 (s, 6);
                  CowscopeCallEvent ev = {
                    .seq = sqlite3_column_int64 (s, 0),
                    .pid = (guint32) sqlite3_column_int64 (s, 1),
                    .tid = sqlite3_column_int64 (s, 2),
                    .ts_ns = sqlite3_column_int64 (s, 4),
                    .duration_ns = MAX (sqlite3_column_int64 (s, 4) - sqlite3_column_int64 (s, 3), 0),
                    .op = sqlite3_column_int64 (s, 5),
                    .kind = kind < 0 ? COWSCOPE_CALL_EVENT_EAGER
                            : kind == COW_MATERIALIZE_COPY ? COWSCOPE_CALL_EVENT_COPY
                            : COWSCOPE_CALL_EVENT_STEAL,
                    .nbytes = nbytes,
                    .storage_id = (guint64) sqlite3_column_int64 (s, 8),
                    .tensor_id = (guint64) sqlite3_column_int64 (s, 9),
                  };
                  g_array_append_val (events, ev);
                }
            }
          rc[k] = sqlite3_step (s);
        }
      if (rc[0] != SQLITE_DONE)
        step_error (&b, rc[0], "materializations", error);
      else if (rc[1] != SQLITE_DONE)
        step_error (&b, rc[1], "lazy clones", error);
      else
        ok = name_tensors (&b, events, error);
    }
  sqlite3_finalize (q[0]);
  sqlite3_finalize (q[1]);
  sqlite3_progress_handler (db, 0, NULL, NULL);
  cowscope_session_document_release_db (self->document, db);
  if (!ok)
    {
      g_array_unref (events);
      return NULL;
    }
  if (n_total != NULL)
    *n_total = total;
  if (largest_seq != NULL)
    *largest_seq = largest;
  return events;
}

typedef struct {
  guint node, limit;
  guint64 n_total;
  gint64 largest_seq;
} ListData;

static void
list_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  ListData *d = task_data;
  GError *error = NULL;
  GArray *events = cowscope_call_tree_list_events (source, d->node, d->limit, &d->n_total,
                                                   &d->largest_seq, cancellable, &error);
  if (events == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, events, (GDestroyNotify) g_array_unref);
}

void
cowscope_call_tree_list_events_async (CowscopeCallTree *self, guint node, guint limit,
                                      GCancellable *cancellable, GAsyncReadyCallback callback,
                                      gpointer user_data)
{
  g_return_if_fail (COWSCOPE_IS_CALL_TREE (self));
  g_return_if_fail (node < self->nodes->len);

  g_autoptr (GTask) task = g_task_new (self, cancellable, callback, user_data);
  ListData *d = g_new0 (ListData, 1);
  d->node = node;
  d->limit = limit;
  g_task_set_source_tag (task, cowscope_call_tree_list_events_async);
  g_task_set_name (task, "[cowscope] call tree events");
  g_task_set_task_data (task, d, g_free);
  g_task_run_in_thread (task, list_thread);
}

GArray *
cowscope_call_tree_list_events_finish (CowscopeCallTree *self, GAsyncResult *result,
                                       guint64 *n_total, gint64 *largest_seq, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);
  GArray *events = g_task_propagate_pointer (G_TASK (result), error);
  const ListData *d = g_task_get_task_data (G_TASK (result));
  if (n_total != NULL)
    *n_total = events != NULL ? d->n_total : 0;
  if (largest_seq != NULL)
    *largest_seq = events != NULL ? d->largest_seq : -1;
  return events;
}
