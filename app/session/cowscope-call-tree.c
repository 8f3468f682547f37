/* cowscope-call-tree.c — the copy call tree (see header).
 *
 * Built in three passes: SQL sums the events per stack (one GROUP BY over
 * the materializations, one over the eager lazy clones), each distinct
 * stack's frames are read once and its path added to both trees, then the
 * children are laid out contiguously, heaviest first, and numbered in
 * preorder so that a node's events are those of the stacks whose path
 * ends inside its preorder interval. */
#include "cowscope-call-tree.h"

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
  CowscopeCallWeights total, self;
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
}

/* ---- building ------------------------------------------------------------ */

typedef struct {
  CowscopeCallTree *tree;
  sqlite3 *db;
  const char *path;
  GCancellable *cancellable;
  GHashTable *stack_index;   /* gint64* stack id → StackEntry index + 1 */
  GHashTable *frame_by_id;   /* frames.id (gint64*) → frame index + 1 */
  GHashTable *frame_by_key;  /* key → frame index + 1 */
  GHashTable *child_of;      /* guint64* (parent << 32 | frame) → node + 1 */
  GArray *first_child, *next_sibling; /* guint per node, while building */
  GPtrArray *keys;           /* owns the gint64/guint64 keys above */
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

/* g_int64_hash() keeps only the low 32 bits, which for the (parent,
 * frame) keys is the frame alone: every node of a frame would share a
 * bucket.  This mixes all 64 bits (a Fibonacci hash). */
static guint
mix64_hash (gconstpointer key)
{
  guint64 k = *(const guint64 *) key * G_GUINT64_CONSTANT (0x9E3779B97F4A7C15);
  return (guint) (k >> 32) ^ (guint) k;
}

static gpointer
key64 (Build *b, guint64 value)
{
  guint64 *key = g_new (guint64, 1);
  *key = value;
  g_ptr_array_add (b->keys, key);
  return key;
}

/* The stack entry of @stack_id (0 or less: none), created empty. */
static StackEntry *
stack_entry (Build *b, gint64 stack_id)
{
  stack_id = MAX (stack_id, 0);
  guint index = GPOINTER_TO_UINT (g_hash_table_lookup (b->stack_index, &stack_id));
  if (index == 0)
    {
      StackEntry entry = { .stack_id = stack_id,
                           .end = { COWSCOPE_CALL_TREE_NO_NODE, COWSCOPE_CALL_TREE_NO_NODE } };
      g_array_append_val (b->tree->stacks, entry);
      index = b->tree->stacks->len;
      g_hash_table_insert (b->stack_index, key64 (b, (guint64) stack_id), GUINT_TO_POINTER (index));
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

/* Sums the copies, steals and eager fallbacks per stack. */
static gboolean
sum_events (Build *b, GError **error)
{
  const CowscopeCallTreeOptions *o = &b->tree->options;
  g_autofree char *m_range = range_sql (o, "begin_ts", "COALESCE (end_ts, begin_ts)");
  g_autofree char *m_sql = g_strdup_printf (
    "SELECT COALESCE (stack_id, 0), kind & :materialize_kind_mask, count(*), SUM (nbytes),"
    " SUM (MAX (COALESCE (end_ts, begin_ts) - begin_ts, 0))"
    " FROM materializations WHERE %s AND (kind & :materialize_kind_mask) IN"
    " (:materialize_copy, :materialize_steal) GROUP BY 1, 2", m_range);
  g_autofree char *l_range = range_sql (o, "ts", "ts");
  g_autofree char *l_sql = g_strdup_printf (
    "SELECT COALESCE (stack_id, 0), count(*), SUM (nbytes) FROM lazy_clones"
    " WHERE eager_reason IS NOT NULL AND %s GROUP BY 1", l_range);
  int rc;

  g_autoptr (sqlite3_stmt) m = cowscope_format_statement (b->db, b->path, m_sql, error);
  if (m == NULL)
    return FALSE;
  bind_range (m, o);
  while ((rc = sqlite3_step (m)) == SQLITE_ROW)
    {
      StackEntry *e = stack_entry (b, sqlite3_column_int64 (m, 0));
      guint64 count = (guint64) sqlite3_column_int64 (m, 2);
      guint64 bytes = (guint64) MAX (sqlite3_column_int64 (m, 3), 0);
      if (sqlite3_column_int64 (m, 1) == COW_MATERIALIZE_COPY)
        {
          e->weights.copies += count;
          e->weights.copy_bytes += bytes;
        }
      else
        {
          e->weights.steals += count;
          e->weights.steal_bytes += bytes;
        }
      e->weights.time_ns += (guint64) MAX (sqlite3_column_int64 (m, 4), 0);
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
  while ((rc = sqlite3_step (l)) == SQLITE_ROW)
    {
      StackEntry *e = stack_entry (b, sqlite3_column_int64 (l, 0));
      e->weights.eager += (guint64) sqlite3_column_int64 (l, 1);
      e->weights.eager_bytes += (guint64) MAX (sqlite3_column_int64 (l, 2), 0);
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

/* The child of @parent for @frame, added when missing. */
static guint
child_for (Build *b, guint parent, guint frame)
{
  guint64 k = ((guint64) parent << 32) | frame;
  guint child = GPOINTER_TO_UINT (g_hash_table_lookup (b->child_of, &k));

  if (child > 0)
    return child - 1;
  child = new_node (b, frame, parent);
  g_hash_table_insert (b->child_of, key64 (b, k), GUINT_TO_POINTER (child + 1));
  g_array_index (b->next_sibling, guint, child) = g_array_index (b->first_child, guint, parent);
  g_array_index (b->first_child, guint, parent) = child;
  g_array_index (b->tree->nodes, Node, parent).n_children++;
  return child;
}

/* Adds @w along the path of @frames (in order) under @root; returns the
 * node it ends at. */
static guint
add_path (Build *b, guint root, const guint *frames, guint n, const CowscopeCallWeights *w)
{
  guint node = root;

  weights_add (&g_array_index (b->tree->nodes, Node, root).total, w);
  for (guint i = 0; i < n; i++)
    {
      node = child_for (b, node, frames[i]);
      weights_add (&g_array_index (b->tree->nodes, Node, node).total, w);
    }
  weights_add (&g_array_index (b->tree->nodes, Node, node).self, w);
  return node;
}

/* Reads the frames of @e's stack and adds its path to both trees. */
static gboolean
add_stack (Build *b, sqlite3_stmt *frames_q, StackEntry *e, GArray *path, GArray *refs,
           GArray *ids, GError **error)
{
  CowscopeCallTree *t = b->tree;
  int rc = SQLITE_DONE;
  guint none_frame;
  gint site;

  g_array_set_size (path, 0);
  g_array_set_size (refs, 0);
  g_array_set_size (ids, 0);
  g_autoptr (GStringChunk) strings = NULL;
  if (e->stack_id > 0)
    {
      sqlite3_reset (frames_q);
      sqlite3_bind_int64 (frames_q, 1, e->stack_id);
      while ((rc = sqlite3_step (frames_q)) == SQLITE_ROW)
        {
          gint64 frame_id = sqlite3_column_int64 (frames_q, 0);
          g_array_append_val (ids, frame_id);
          if (g_hash_table_contains (b->frame_by_id, &frame_id))
            {
              /* Known: only its classification matters for the call site. */
              guint index = GPOINTER_TO_UINT (g_hash_table_lookup (b->frame_by_id, &frame_id)) - 1;
              const CowscopeCallFrame *f = g_ptr_array_index (t->frames, index);
              g_array_append_val (refs, f->ref);
              continue;
            }
          if (strings == NULL)
            strings = g_string_chunk_new (256);
          g_autofree char *function = cowscope_format_column_text (frames_q, 1);
          g_autofree char *file = cowscope_format_column_text (frames_q, 2);
          g_autofree char *module = cowscope_format_column_text (frames_q, 4);
          CowscopeFrameRef ref = {
            function != NULL ? g_string_chunk_insert (strings, function) : NULL,
            file != NULL ? g_string_chunk_insert (strings, file) : NULL,
            module != NULL ? g_string_chunk_insert (strings, module) : NULL,
            cowscope_format_column_int (frames_q, 3, 0),
            (guint64) sqlite3_column_int64 (frames_q, 5),
          };
          guint index = intern_frame (b, &ref, FALSE);
          g_hash_table_insert (b->frame_by_id, key64 (b, (guint64) frame_id),
                               GUINT_TO_POINTER (index + 1));
          g_array_append_val (refs, ref);
        }
      if (rc != SQLITE_DONE)
        {
          step_error (b, rc, "stack frames", error);
          return FALSE;
        }
    }

  site = cowscope_call_site_choose ((const CowscopeFrameRef *) refs->data, refs->len);
  if (site < 0)
    {
      none_frame = intern_frame (b, &(CowscopeFrameRef) { 0 }, TRUE);
      e->end[COWSCOPE_CALL_TREE_TOP_DOWN] =
        add_path (b, t->roots[COWSCOPE_CALL_TREE_TOP_DOWN], &none_frame, 1, &e->weights);
      e->end[COWSCOPE_CALL_TREE_BOTTOM_UP] =
        add_path (b, t->roots[COWSCOPE_CALL_TREE_BOTTOM_UP], &none_frame, 1, &e->weights);
      return TRUE;
    }

  guint first = t->options.include_internal ? 0 : (guint) site;
  for (guint i = first; i < ids->len; i++)
    {
      gint64 id = g_array_index (ids, gint64, i);
      guint index = GPOINTER_TO_UINT (g_hash_table_lookup (b->frame_by_id, &id)) - 1;
      g_array_append_val (path, index);
    }
  /* path: innermost first, so bottom-up as it is; top-down reversed. */
  e->end[COWSCOPE_CALL_TREE_BOTTOM_UP] =
    add_path (b, t->roots[COWSCOPE_CALL_TREE_BOTTOM_UP], (const guint *) path->data, path->len,
              &e->weights);
  for (guint i = 0; i < path->len / 2; i++)
    {
      guint tmp = g_array_index (path, guint, i);
      g_array_index (path, guint, i) = g_array_index (path, guint, path->len - 1 - i);
      g_array_index (path, guint, path->len - 1 - i) = tmp;
    }
  e->end[COWSCOPE_CALL_TREE_TOP_DOWN] =
    add_path (b, t->roots[COWSCOPE_CALL_TREE_TOP_DOWN], (const guint *) path->data, path->len,
              &e->weights);
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

static const char frames_sql[] =
  "SELECT f.id, f.function, f.file, f.line, f.module, f.address"
  " FROM stack_frames sf JOIN frames f ON f.id = sf.frame_id"
  " WHERE sf.stack_id = ?1 ORDER BY sf.position";

static gint
compare_stack_ids (gconstpointer a, gconstpointer b)
{
  gint64 x = ((const StackEntry *) a)->stack_id, y = ((const StackEntry *) b)->stack_id;
  return (x > y) - (x < y);
}

static gboolean
build (Build *b, GError **error)
{
  CowscopeCallTree *t = b->tree;

  if (!sum_events (b, error))
    return FALSE;
  /* In stack order, so that frames are interned the same way each time. */
  g_array_sort (t->stacks, compare_stack_ids);

  g_autoptr (sqlite3_stmt) frames_q = cowscope_format_statement (b->db, b->path, frames_sql, error);
  if (frames_q == NULL)
    return FALSE;
  g_autoptr (GArray) path = g_array_new (FALSE, FALSE, sizeof (guint));
  g_autoptr (GArray) refs = g_array_new (FALSE, FALSE, sizeof (CowscopeFrameRef));
  g_autoptr (GArray) ids = g_array_new (FALSE, FALSE, sizeof (gint64));
  for (guint i = 0; i < t->stacks->len; i++)
    {
      if ((i & 255) == 0 && g_cancellable_set_error_if_cancelled (b->cancellable, error))
        return FALSE;
      if (!add_stack (b, frames_q, &g_array_index (t->stacks, StackEntry, i), path, refs, ids,
                      error))
        return FALSE;
    }
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
    .stack_index = g_hash_table_new (mix64_hash, g_int64_equal),
    .frame_by_id = g_hash_table_new (mix64_hash, g_int64_equal),
    .frame_by_key = g_hash_table_new (g_str_hash, g_str_equal),
    .child_of = g_hash_table_new (mix64_hash, g_int64_equal),
    .first_child = g_array_new (FALSE, FALSE, sizeof (guint)),
    .next_sibling = g_array_new (FALSE, FALSE, sizeof (guint)),
    .keys = g_ptr_array_new_with_free_func (g_free),
  };
  self->roots[COWSCOPE_CALL_TREE_TOP_DOWN] = new_node (&b, COWSCOPE_CALL_TREE_NO_NODE,
                                                       COWSCOPE_CALL_TREE_NO_NODE);
  self->roots[COWSCOPE_CALL_TREE_BOTTOM_UP] = new_node (&b, COWSCOPE_CALL_TREE_NO_NODE,
                                                        COWSCOPE_CALL_TREE_NO_NODE);
  if (cancellable != NULL)
    sqlite3_progress_handler (db, PROGRESS_STEPS, progress_cb, cancellable);
  gboolean ok = build (&b, error);
  sqlite3_progress_handler (db, 0, NULL, NULL);
  cowscope_session_document_release_db (document, db);

  g_hash_table_unref (b.stack_index);
  g_hash_table_unref (b.frame_by_id);
  g_hash_table_unref (b.frame_by_key);
  g_hash_table_unref (b.child_of);
  g_array_unref (b.first_child);
  g_array_unref (b.next_sibling);
  g_ptr_array_unref (b.keys);
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
  const Node *n = node_at (self, node);
  return n != NULL ? &n->self : NULL;
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
