/* cowscope-range-summary.c — a time range's copies by group (see header). */
#include "cowscope-range-summary.h"

#include <glib/gi18n-lib.h>

#include "cowscope-format-open.h"
#include "cowscope-format-views.h"
#include "cowscope-session-document-private.h"

struct _CowscopeRangeRow {
  GObject parent_instance;
  char *name;
  guint64 copies, steals, bytes_copied;
  gint64 time_ns;
};

G_DEFINE_FINAL_TYPE (CowscopeRangeRow, cowscope_range_row, G_TYPE_OBJECT)

static void
cowscope_range_row_finalize (GObject *object)
{
  g_free (COWSCOPE_RANGE_ROW (object)->name);
  G_OBJECT_CLASS (cowscope_range_row_parent_class)->finalize (object);
}

static void
cowscope_range_row_class_init (CowscopeRangeRowClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = cowscope_range_row_finalize;
}

static void
cowscope_range_row_init (CowscopeRangeRow *self)
{
  (void) self;
}

const char *cowscope_range_row_get_name (CowscopeRangeRow *self) { return self->name; }
guint64 cowscope_range_row_get_copies (CowscopeRangeRow *self) { return self->copies; }
guint64 cowscope_range_row_get_steals (CowscopeRangeRow *self) { return self->steals; }
guint64 cowscope_range_row_get_bytes_copied (CowscopeRangeRow *self) { return self->bytes_copied; }
gint64 cowscope_range_row_get_time_ns (CowscopeRangeRow *self) { return self->time_ns; }

/* ---- the query ---- */

/* Per grouping: the group key, its name and the joins the name needs.
 * Columns 0 .. 4 of every query are name, copies, steals, bytes copied
 * and time; ?1 and ?2 are the range. */
static const char *
grouping_sql (CowscopeRangeGrouping grouping)
{
#define TOTALS                                                                              \
  " sum (k.name = 'copy'), sum (k.name = 'steal'),"                                         \
  " sum (CASE WHEN k.name = 'copy' THEN ifnull (m.nbytes, 0) ELSE 0 END),"                  \
  " sum (CASE WHEN m.end_ts >= m.begin_ts THEN m.end_ts - m.begin_ts ELSE 0 END)"           \
  " FROM materializations m LEFT JOIN materialize_kinds k ON k.id = m.kind"
#define IN_RANGE " WHERE m.begin_ts >= ?1 AND m.begin_ts < ?2"
  switch (grouping)
    {
    case COWSCOPE_RANGE_BY_OPERATION:
      return "SELECT ifnull (o.name, 'unknown')," TOTALS
             " LEFT JOIN ops o ON o.id = m.op" IN_RANGE " GROUP BY m.op";
    case COWSCOPE_RANGE_BY_TENSOR:
      return "SELECT CASE WHEN t.name IS NULL"
             " THEN 'tensor ' || ifnull (m.tensor_id, '?') || ' (process ' || m.pid || ')'"
             " ELSE t.name || ' (tensor ' || m.tensor_id || ', process ' || m.pid || ')' END," TOTALS
             " LEFT JOIN tensors t ON t.pid = m.pid AND t.id = m.tensor_id" IN_RANGE
             " GROUP BY m.pid, m.tensor_id";
    default:
      return "SELECT ifnull (c.call_site, '(no call stack)')," TOTALS
             " LEFT JOIN call_sites c ON c.stack_id = m.stack_id" IN_RANGE
             " GROUP BY ifnull (c.call_site, '(no call stack)')";
    }
#undef TOTALS
#undef IN_RANGE
}

static int
compare_rows (gconstpointer a, gconstpointer b)
{
  const CowscopeRangeRow *x = *(CowscopeRangeRow *const *) a, *y = *(CowscopeRangeRow *const *) b;
  if (x->bytes_copied != y->bytes_copied)
    return x->bytes_copied > y->bytes_copied ? -1 : 1;
  if (x->copies != y->copies)
    return x->copies > y->copies ? -1 : 1;
  return g_strcmp0 (x->name, y->name);
}

/* SQLite progress handler: stop the statement once cancelled. */
static int
summary_cancelled (void *cancellable)
{
  return g_cancellable_is_cancelled (cancellable);
}

GListModel *
cowscope_range_summary_compute (CowscopeSessionDocument *document, gint64 t0, gint64 t1,
                                CowscopeRangeGrouping grouping, GCancellable *cancellable,
                                GError **error)
{
  g_return_val_if_fail (COWSCOPE_IS_SESSION_DOCUMENT (document), NULL);
  g_return_val_if_fail (grouping < COWSCOPE_N_RANGE_GROUPINGS, NULL);
  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return NULL;
  sqlite3 *db = cowscope_session_document_acquire_db (document, error);
  if (db == NULL)
    return NULL;
  const char *path = cowscope_session_document_get_path (document);
  /* This version's views (call_sites), whatever the file holds. */
  if (!cowscope_format_create_temp_views (db))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED,
                   _("Could not summarize the range of “%s”: %s"), path, sqlite3_errmsg (db));
      cowscope_session_document_release_db (document, db);
      return NULL;
    }
  sqlite3_stmt *stmt = cowscope_format_statement (db, path, grouping_sql (grouping), error);
  GPtrArray *rows = NULL;
  if (stmt != NULL)
    {
      if (cancellable != NULL)
        sqlite3_progress_handler (db, 10000, summary_cancelled, cancellable);
      sqlite3_bind_int64 (stmt, 1, t0);
      sqlite3_bind_int64 (stmt, 2, t1);
      rows = g_ptr_array_new_with_free_func (g_object_unref);
      int rc;
      while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
        {
          CowscopeRangeRow *row = g_object_new (COWSCOPE_TYPE_RANGE_ROW, NULL);
          const char *name = (const char *) sqlite3_column_text (stmt, 0);
          row->name = g_strdup (name != NULL ? name : "");
          row->copies = (guint64) MAX (cowscope_format_column_int (stmt, 1, 0), 0);
          row->steals = (guint64) MAX (cowscope_format_column_int (stmt, 2, 0), 0);
          row->bytes_copied = (guint64) MAX (cowscope_format_column_int (stmt, 3, 0), 0);
          row->time_ns = MAX (cowscope_format_column_int (stmt, 4, 0), 0);
          g_ptr_array_add (rows, row);
        }
      sqlite3_progress_handler (db, 0, NULL, NULL);
      if (rc != SQLITE_DONE)
        {
          if (!g_cancellable_set_error_if_cancelled (cancellable, error))
            g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED,
                         _("Could not summarize the range of “%s”: %s"), path, sqlite3_errmsg (db));
          g_clear_pointer (&rows, g_ptr_array_unref);
        }
      sqlite3_finalize (stmt);
    }
  cowscope_session_document_release_db (document, db);
  if (rows == NULL)
    return NULL;
  g_ptr_array_sort (rows, compare_rows);
  GListStore *store = g_list_store_new (COWSCOPE_TYPE_RANGE_ROW);
  g_list_store_splice (store, 0, 0, rows->pdata, rows->len);
  g_ptr_array_unref (rows);
  return G_LIST_MODEL (store);
}

typedef struct {
  gint64 t0, t1;
  CowscopeRangeGrouping grouping;
} Request;

static void
compute_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  const Request *r = task_data;
  GError *error = NULL;
  GListModel *rows = cowscope_range_summary_compute (source, r->t0, r->t1, r->grouping,
                                                     cancellable, &error);
  if (rows == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, rows, g_object_unref);
}

void
cowscope_range_summary_compute_async (CowscopeSessionDocument *document, gint64 t0, gint64 t1,
                                      CowscopeRangeGrouping grouping, GCancellable *cancellable,
                                      GAsyncReadyCallback callback, gpointer user_data)
{
  g_return_if_fail (COWSCOPE_IS_SESSION_DOCUMENT (document));
  g_autoptr (GTask) task = g_task_new (document, cancellable, callback, user_data);
  g_task_set_source_tag (task, cowscope_range_summary_compute_async);
  Request *r = g_new (Request, 1);
  r->t0 = t0, r->t1 = t1, r->grouping = grouping;
  g_task_set_task_data (task, r, g_free);
  g_task_run_in_thread (task, compute_thread);
}

GListModel *
cowscope_range_summary_compute_finish (GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (G_IS_TASK (result), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}
