/* cowscope-range-names.c — see cowscope-range-names.h. */
#include "cowscope-range-names.h"

#include "cowscope-format-open.h"
#include "cowscope-session-document-private.h"

/* Deeper parent chains than this are cut (a file is untrusted: a chain
 * that loops must not hang the reader). */
#define MAX_DEPTH 16

typedef struct {
  guint32 pid;
  gint64 id;
  gint64 tid;
  gint64 parent;       /* -1: none */
  const char *name;    /* in names; NULL: unnamed */
  guint depth;
} Range;

struct _CowscopeRangeNames {
  GArray *ranges;      /* Range, sorted by (pid, id) */
  GStringChunk *names;
  GHashTable *rows;    /* (pid << 32 | tid) -> rows, as gint64 keys */
};

G_DEFINE_BOXED_TYPE (CowscopeRangeNames, cowscope_range_names, cowscope_range_names_ref,
                     cowscope_range_names_unref)

static void
range_names_clear (gpointer data)
{
  CowscopeRangeNames *self = data;
  g_array_unref (self->ranges);
  g_string_chunk_free (self->names);
  g_hash_table_unref (self->rows);
}

CowscopeRangeNames *
cowscope_range_names_ref (CowscopeRangeNames *self)
{
  g_return_val_if_fail (self != NULL, NULL);
  return g_atomic_rc_box_acquire (self);
}

void
cowscope_range_names_unref (CowscopeRangeNames *self)
{
  if (self != NULL)
    g_atomic_rc_box_release_full (self, range_names_clear);
}

static int
compare_ranges (gconstpointer a, gconstpointer b)
{
  const Range *x = a, *y = b;
  if (x->pid != y->pid)
    return x->pid < y->pid ? -1 : 1;
  return (x->id > y->id) - (x->id < y->id);
}

/* Range (@pid, @id), or NULL. */
static const Range *
find (const CowscopeRangeNames *self, guint32 pid, gint64 id)
{
  guint lo = 0, hi = self->ranges->len;
  const Range key = { .pid = pid, .id = id };
  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;
      int c = compare_ranges (&g_array_index (self->ranges, Range, mid), &key);
      if (c == 0)
        return &g_array_index (self->ranges, Range, mid);
      if (c < 0)
        lo = mid + 1;
      else
        hi = mid;
    }
  return NULL;
}

static gint64
thread_key (guint32 pid, gint64 tid)
{
  return (gint64) (((guint64) pid << 32) | ((guint64) tid & 0xffffffffull));
}

/* Fills every range's depth by walking up its parents (at most MAX_DEPTH
 * steps), then each thread's rows. */
static void
compute_depths (CowscopeRangeNames *self)
{
  for (guint i = 0; i < self->ranges->len; i++)
    {
      Range *r = &g_array_index (self->ranges, Range, i);
      guint depth = 0;
      const Range *p = r;
      while (p->parent >= 0 && depth < MAX_DEPTH
             && (p = find (self, r->pid, p->parent)) != NULL)
        depth++;
      r->depth = depth;
      gint64 key = thread_key (r->pid, r->tid);
      guint rows = GPOINTER_TO_UINT (g_hash_table_lookup (self->rows, &key));
      if (depth + 1 > rows)
        g_hash_table_replace (self->rows, g_memdup2 (&key, sizeof key),
                              GUINT_TO_POINTER (depth + 1));
    }
}

/* An empty table. */
static CowscopeRangeNames *
range_names_new_empty (void)
{
  CowscopeRangeNames *self = g_atomic_rc_box_new0 (CowscopeRangeNames);
  self->ranges = g_array_new (FALSE, FALSE, sizeof (Range));
  self->names = g_string_chunk_new (4096);
  self->rows = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  return self;
}

/* Adds @row; the table is sorted and its depths computed afterwards. */
static void
add_row (CowscopeRangeNames *self, const CowscopeNamedRange *row)
{
  Range r = {
    .pid = row->pid,
    .id = row->id,
    .tid = row->tid,
    .parent = row->parent,
    .name = row->name != NULL && row->name[0] != '\0'
              ? g_string_chunk_insert_const (self->names, row->name) : NULL,
  };
  g_array_append_val (self->ranges, r);
}

static void
finish (CowscopeRangeNames *self)
{
  g_array_sort (self->ranges, compare_ranges);
  compute_depths (self);
}

CowscopeRangeNames *
cowscope_range_names_new (const CowscopeNamedRange *rows, guint n_rows)
{
  g_return_val_if_fail (rows != NULL || n_rows == 0, NULL);
  CowscopeRangeNames *self = range_names_new_empty ();
  for (guint i = 0; i < n_rows; i++)
    add_row (self, &rows[i]);
  finish (self);
  return self;
}

CowscopeRangeNames *
cowscope_range_names_load (CowscopeSessionDocument *document, GCancellable *cancellable,
                           GError **error)
{
  g_return_val_if_fail (COWSCOPE_IS_SESSION_DOCUMENT (document), NULL);
  sqlite3 *db = cowscope_session_document_acquire_db (document, error);
  if (db == NULL)
    return NULL;
  CowscopeRangeNames *self = range_names_new_empty ();
  const char *path = cowscope_session_document_get_path (document);
  g_autoptr (sqlite3_stmt) stmt = cowscope_format_statement (
    db, path, "SELECT pid, id, tid, name, parent_id FROM ranges", error);
  int rc = SQLITE_DONE;
  gboolean cancelled = FALSE;
  guint n = 0;
  while (stmt != NULL && (rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      if ((++n & 0xfff) == 0 && g_cancellable_set_error_if_cancelled (cancellable, error))
        {
          cancelled = TRUE;
          break;
        }
      g_autofree char *name = cowscope_format_column_text (stmt, 3);
      CowscopeNamedRange row = {
        .pid = (guint32) cowscope_format_column_int (stmt, 0, 0),
        .id = cowscope_format_column_int (stmt, 1, -1),
        .tid = cowscope_format_column_int (stmt, 2, 0),
        .parent = cowscope_format_column_int (stmt, 4, -1),
        .name = name,
      };
      add_row (self, &row);
    }
  gboolean ok = stmt != NULL && !cancelled && rc == SQLITE_DONE;
  if (stmt != NULL && !cancelled && rc != SQLITE_DONE)
    cowscope_format_set_error (error, db, rc, path, "ranges");
  g_clear_pointer (&stmt, sqlite3_finalize);
  cowscope_session_document_release_db (document, db);
  if (!ok)
    {
      cowscope_range_names_unref (self);
      return NULL;
    }
  finish (self);
  return self;
}

static void
load_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  (void) task_data;
  GError *error = NULL;
  CowscopeRangeNames *names = cowscope_range_names_load (source, cancellable, &error);
  if (names == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, names, (GDestroyNotify) cowscope_range_names_unref);
}

void
cowscope_range_names_load_async (CowscopeSessionDocument *document, GCancellable *cancellable,
                                 GAsyncReadyCallback callback, gpointer user_data)
{
  g_return_if_fail (COWSCOPE_IS_SESSION_DOCUMENT (document));
  g_autoptr (GTask) task = g_task_new (document, cancellable, callback, user_data);
  g_task_set_source_tag (task, cowscope_range_names_load_async);
  g_task_run_in_thread (task, load_thread);
}

CowscopeRangeNames *
cowscope_range_names_load_finish (GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (G_IS_TASK (result), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}

const char *
cowscope_range_names_lookup (const CowscopeRangeNames *self, guint32 pid, gint64 id)
{
  g_return_val_if_fail (self != NULL, NULL);
  const Range *r = find (self, pid, id);
  return r != NULL ? r->name : NULL;
}

guint
cowscope_range_names_get_depth (const CowscopeRangeNames *self, guint32 pid, gint64 id)
{
  g_return_val_if_fail (self != NULL, 0);
  const Range *r = find (self, pid, id);
  return r != NULL ? r->depth : 0;
}

guint
cowscope_range_names_get_thread_rows (const CowscopeRangeNames *self, guint32 pid, gint64 tid)
{
  g_return_val_if_fail (self != NULL, 0);
  gint64 key = thread_key (pid, tid);
  return GPOINTER_TO_UINT (g_hash_table_lookup (self->rows, &key));
}

guint
cowscope_range_names_get_n_ranges (const CowscopeRangeNames *self)
{
  g_return_val_if_fail (self != NULL, 0);
  return self->ranges->len;
}
