/* cowscope-event-list.c — events as a lazily read list model. */
#include "cowscope-event-list.h"

#include <glib/gi18n-lib.h>

#include "cowscope-event-item.h"
#include "cowscope-format-open.h"
#include "cowscope-session-document-private.h"

struct _CowscopeEventList {
  GObject parent_instance;
  CowscopeSessionDocument *document;
  gint64 first_seq;
  guint n_events;     /* every event in the session */
  guint n_items;      /* the rows shown: n_events, or order->len */
  gboolean dense;     /* seq has no gaps */
  GArray *order;      /* gint64 seqs of the rows shown, or NULL: natural order */
};

static void list_model_iface_init (GListModelInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (CowscopeEventList, cowscope_event_list, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (G_TYPE_LIST_MODEL, list_model_iface_init))

static GType
get_item_type (GListModel *model)
{
  (void) model;
  return COWSCOPE_TYPE_EVENT_ITEM;
}

static guint
get_n_items (GListModel *model)
{
  return COWSCOPE_EVENT_LIST (model)->n_items;
}

#define ROW_COLUMNS "SELECT seq, ts, pid, tid, type, op, aux, v0, v1, v2, v3, v4, stack_id FROM events"

/* The item for the row @stmt (ROW_COLUMNS) is on. */
static CowscopeEventItem *
item_of_row (CowscopeSessionDocument *document, sqlite3_stmt *stmt)
{
  gint64 v[5];
  for (int k = 0; k < 5; k++)
    v[k] = cowscope_format_column_int (stmt, 7 + k, 0);
  gint64 type = cowscope_format_column_int (stmt, 4, 0);
  return cowscope_event_item_new (
    sqlite3_column_int64 (stmt, 0), cowscope_format_column_int (stmt, 1, 0),
    (guint32) cowscope_format_column_int (stmt, 2, 0), cowscope_format_column_int (stmt, 3, 0),
    type, cowscope_session_document_event_type_name (document, type),
    cowscope_session_document_op_name (document, cowscope_format_column_int (stmt, 5, 0)),
    cowscope_format_column_int (stmt, 6, 0), v, cowscope_format_column_int (stmt, 12, 0));
}

/* Reads row @position; NULL past the end or when the file fails. */
static gpointer
get_item (GListModel *model, guint position)
{
  CowscopeEventList *self = COWSCOPE_EVENT_LIST (model);
  if (position >= self->n_items)
    return NULL;
  gint64 seq = cowscope_event_list_get_seq (self, position);
  g_autoptr (GPtrArray) rows = cowscope_event_list_read_rows (self->document, seq >= 0 ? &seq : NULL, 1,
                                                              position, NULL);
  return rows != NULL && rows->len == 1 ? g_object_ref (rows->pdata[0]) : NULL;
}

static void
list_model_iface_init (GListModelInterface *iface)
{
  iface->get_item_type = get_item_type;
  iface->get_n_items = get_n_items;
  iface->get_item = get_item;
}

static void
cowscope_event_list_dispose (GObject *object)
{
  g_clear_object (&COWSCOPE_EVENT_LIST (object)->document);
  G_OBJECT_CLASS (cowscope_event_list_parent_class)->dispose (object);
}

static void
cowscope_event_list_finalize (GObject *object)
{
  g_clear_pointer (&COWSCOPE_EVENT_LIST (object)->order, g_array_unref);
  G_OBJECT_CLASS (cowscope_event_list_parent_class)->finalize (object);
}

static void
cowscope_event_list_class_init (CowscopeEventListClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = cowscope_event_list_dispose;
  G_OBJECT_CLASS (klass)->finalize = cowscope_event_list_finalize;
}

static void
cowscope_event_list_init (CowscopeEventList *self)
{
  (void) self;
}

/* A list over every event of @document. */
CowscopeEventList *
cowscope_event_list_new (CowscopeSessionDocument *document)
{
  g_return_val_if_fail (COWSCOPE_IS_SESSION_DOCUMENT (document), NULL);
  CowscopeEventList *self = g_object_new (COWSCOPE_TYPE_EVENT_LIST, NULL);
  self->document = g_object_ref (document);
  self->first_seq = cowscope_session_document_get_first_seq (document);
  guint64 n = cowscope_session_document_get_n_events (document);
  self->n_events = (guint) MIN (n, G_MAXUINT);
  self->n_items = self->n_events;
  self->dense = n == 0 || (guint64) (cowscope_session_document_get_last_seq (document)
                                     - self->first_seq + 1) == n;
  return self;
}

/* The position of event @seq, or -1: arithmetic in the natural order of a
 * dense table, a scan of the seqs shown otherwise (10 M compares: ms). */
gint64
cowscope_event_list_position_of (CowscopeEventList *self, gint64 seq)
{
  g_return_val_if_fail (COWSCOPE_IS_EVENT_LIST (self), -1);
  if (self->order != NULL)
    {
      const gint64 *seqs = (const gint64 *) (gpointer) self->order->data;
      for (guint i = 0; i < self->order->len; i++)
        if (seqs[i] == seq)
          return i;
      return -1;
    }
  if (!self->dense || seq < self->first_seq || seq - self->first_seq >= self->n_items)
    return -1;
  return seq - self->first_seq;
}

CowscopeSessionDocument *
cowscope_event_list_get_document (CowscopeEventList *self)
{
  g_return_val_if_fail (COWSCOPE_IS_EVENT_LIST (self), NULL);
  return self->document;
}

gint64
cowscope_event_list_get_seq (CowscopeEventList *self, guint position)
{
  g_return_val_if_fail (COWSCOPE_IS_EVENT_LIST (self), -1);
  if (position >= self->n_items)
    return -1;
  if (self->order != NULL)
    return g_array_index (self->order, gint64, position);
  return self->dense ? self->first_seq + position : -1;
}

/* Any thread: one statement for a page of rows, stepped once per seq (an
 * indexed lookup each) or walked from @offset in seq order. */
GPtrArray *
cowscope_event_list_read_rows (CowscopeSessionDocument *document, const gint64 *seqs, guint n,
                               guint offset, GError **error)
{
  g_return_val_if_fail (COWSCOPE_IS_SESSION_DOCUMENT (document), NULL);
  sqlite3 *db = cowscope_session_document_acquire_db (document, error);
  if (db == NULL)
    return NULL;
  const char *path = cowscope_session_document_get_path (document);
  sqlite3_stmt *stmt = cowscope_format_statement (
    db, path, seqs != NULL ? ROW_COLUMNS " WHERE seq = ?1" : ROW_COLUMNS " ORDER BY seq LIMIT ?2 OFFSET ?1",
    error);
  GPtrArray *rows = NULL;
  if (stmt != NULL)
    {
      rows = g_ptr_array_new_full (n, g_object_unref);
      int rc = SQLITE_DONE;
      for (guint i = 0; i < (seqs != NULL ? n : 1) && (rc == SQLITE_DONE || rc == SQLITE_ROW); i++)
        {
          sqlite3_reset (stmt);
          sqlite3_bind_int64 (stmt, 1, seqs != NULL ? seqs[i] : (gint64) offset);
          if (seqs == NULL)
            sqlite3_bind_int64 (stmt, 2, n);
          while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
            g_ptr_array_add (rows, item_of_row (document, stmt));
        }
      if (rc != SQLITE_DONE)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, _("Could not read the events of “%s”: %s"),
                       path, sqlite3_errmsg (db));
          g_clear_pointer (&rows, g_ptr_array_unref);
        }
      sqlite3_finalize (stmt);
    }
  cowscope_session_document_release_db (document, db);
  return rows;
}

/* ---- sorting and filtering in SQL ------------------------------------- */

typedef struct {
  CowscopeSessionDocument *document;
  CowscopeEventOrder order;
  gboolean descending;
  char *filter;          /* casefolded, or NULL */
  gint64 start_ns;
} Query;

typedef struct {
  GArray *seqs;          /* NULL: the natural order */
} QueryResult;

static void
query_free (gpointer data)
{
  Query *q = data;
  g_object_unref (q->document);
  g_free (q->filter);
  g_free (q);
}

static void
query_result_free (gpointer data)
{
  QueryResult *r = data;
  g_clear_pointer (&r->seqs, g_array_unref);
  g_free (r);
}

/* The ORDER BY expressions for @order, most significant first. */
static const char *const *
order_columns (CowscopeEventOrder order)
{
  static const char *const seq[] = { "e.seq", NULL };
  static const char *const time[] = { "e.ts", NULL };
  static const char *const process[] = { "e.pid", NULL };
  static const char *const thread[] = { "e.tid", NULL };
  static const char *const type[] = { "t.name", NULL };
  static const char *const op[] = { "o.name", NULL };
  static const char *const values[] = { "ifnull(e.v0, 0)", "ifnull(e.v1, 0)", "ifnull(e.v2, 0)",
                                        "ifnull(e.v3, 0)", NULL };
  switch (order)
    {
    case COWSCOPE_EVENT_ORDER_TIME: return time;
    case COWSCOPE_EVENT_ORDER_PROCESS: return process;
    case COWSCOPE_EVENT_ORDER_THREAD: return thread;
    case COWSCOPE_EVENT_ORDER_TYPE: return type;
    case COWSCOPE_EVENT_ORDER_OP: return op;
    case COWSCOPE_EVENT_ORDER_VALUES: return values;
    default: return seq;
    }
}

/* The SQL for @q: ?1 is the casefolded filter, ?2 the session's start.
 * The filter mirrors the table's cells; SQLite's lower() folds ASCII
 * only, so a non-ASCII capital in a thread name matches case-sensitively. */
static char *
query_sql (const Query *q)
{
  GString *sql = g_string_new ("SELECT e.seq FROM events e");
  if (q->filter != NULL || q->order == COWSCOPE_EVENT_ORDER_TYPE)
    g_string_append (sql, " LEFT JOIN event_types t ON t.id = e.type");
  if (q->filter != NULL || q->order == COWSCOPE_EVENT_ORDER_OP)
    g_string_append (sql, " LEFT JOIN ops o ON o.id = e.op");
  if (q->filter != NULL)
    g_string_append (
      sql,
      " LEFT JOIN threads th ON th.pid = e.pid AND th.tid = e.tid"
      " WHERE instr(e.seq, ?1) OR instr(printf('%.6f', (e.ts - ?2) / 1e6), ?1)"
      " OR instr(e.pid, ?1) OR instr(e.tid, ?1) OR instr(lower(ifnull(th.name, '')), ?1)"
      " OR instr(lower(ifnull(t.name, 'unknown')), ?1) OR instr(lower(ifnull(o.name, 'unknown')), ?1)"
      " OR instr(ifnull(e.v0, 0) || ' ' || ifnull(e.v1, 0) || ' ' || ifnull(e.v2, 0) || ' '"
      "          || ifnull(e.v3, 0), ?1)");
  g_string_append (sql, " ORDER BY ");
  for (const char *const *column = order_columns (q->order); *column != NULL; column++)
    g_string_append_printf (sql, "%s %s, ", *column, q->descending ? "DESC" : "ASC");
  /* Descending is the exact reverse of ascending, so SQLite can walk an
   * index backwards (events (ts) holds seq) instead of sorting 10 M rows. */
  g_string_append_printf (sql, "e.seq %s", q->descending ? "DESC" : "ASC");
  return g_string_free (sql, FALSE);
}

/* SQLite progress handler: stop the statement once the query is cancelled. */
static int
query_cancelled (void *cancellable)
{
  return g_cancellable_is_cancelled (cancellable);
}

static void
query_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  (void) source;
  Query *q = task_data;
  QueryResult *result = g_new0 (QueryResult, 1);
  if (q->filter == NULL && q->order == COWSCOPE_EVENT_ORDER_SEQ && !q->descending)
    {
      g_task_return_pointer (task, result, query_result_free);
      return;
    }
  GError *error = NULL;
  sqlite3 *db = cowscope_session_document_acquire_db (q->document, &error);
  if (db == NULL)
    {
      query_result_free (result);
      g_task_return_error (task, error);
      return;
    }
  g_autofree char *sql = query_sql (q);
  const char *path = cowscope_session_document_get_path (q->document);
  sqlite3_stmt *stmt = cowscope_format_statement (db, path, sql, &error);
  int rc = SQLITE_ERROR;
  if (stmt != NULL)
    {
      if (cancellable != NULL)
        sqlite3_progress_handler (db, 10000, query_cancelled, cancellable);
      if (q->filter != NULL)
        sqlite3_bind_text (stmt, 1, q->filter, -1, SQLITE_STATIC);
      sqlite3_bind_int64 (stmt, 2, q->start_ns);
      result->seqs = g_array_new (FALSE, FALSE, sizeof (gint64));
      while ((rc = sqlite3_step (stmt)) == SQLITE_ROW && result->seqs->len < G_MAXUINT)
        {
          gint64 seq = sqlite3_column_int64 (stmt, 0);
          g_array_append_val (result->seqs, seq);
        }
      sqlite3_progress_handler (db, 0, NULL, NULL);
      if (rc != SQLITE_DONE && rc != SQLITE_ROW &&
          !g_cancellable_set_error_if_cancelled (cancellable, &error))
        g_set_error (&error, G_IO_ERROR, G_IO_ERROR_FAILED,
                     _("Could not sort or filter the events of “%s”: %s"), path,
                     sqlite3_errmsg (db));
      sqlite3_finalize (stmt);
    }
  cowscope_session_document_release_db (q->document, db);
  if (error != NULL)
    {
      query_result_free (result);
      g_task_return_error (task, error);
    }
  else
    g_task_return_pointer (task, result, query_result_free);
}

void
cowscope_event_list_query_async (CowscopeEventList *self, CowscopeEventOrder order,
                                 gboolean descending, const char *filter,
                                 GCancellable *cancellable, GAsyncReadyCallback callback,
                                 gpointer user_data)
{
  g_return_if_fail (COWSCOPE_IS_EVENT_LIST (self));
  g_return_if_fail (order < COWSCOPE_N_EVENT_ORDERS);
  Query *q = g_new0 (Query, 1);
  q->document = g_object_ref (self->document);
  q->order = order;
  q->descending = descending;
  q->filter = filter != NULL && filter[0] != '\0' ? g_utf8_casefold (filter, -1) : NULL;
  q->start_ns = cowscope_session_document_get_start_ns (self->document);
  GTask *task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, cowscope_event_list_query_async);
  g_task_set_task_data (task, q, query_free);
  g_task_run_in_thread (task, query_thread);
  g_object_unref (task);
}

gboolean
cowscope_event_list_query_finish (CowscopeEventList *self, GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);
  QueryResult *r = g_task_propagate_pointer (G_TASK (result), error);
  if (r == NULL)
    return FALSE;
  guint removed = self->n_items;
  g_clear_pointer (&self->order, g_array_unref);
  self->order = g_steal_pointer (&r->seqs);
  self->n_items = self->order != NULL ? self->order->len : self->n_events;
  query_result_free (r);
  g_list_model_items_changed (G_LIST_MODEL (self), 0, removed, self->n_items);
  return TRUE;
}
