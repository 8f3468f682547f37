/* cowscope-tensor-search.c — see cowscope-tensor-search.h. */
#include "cowscope-tensor-search.h"

#include "cowscope-event-steps.h"
#include "cowscope-format-open.h"
#include "cowscope-object-events.h"
#include "cowscope-session-document-private.h"

/* ---- names ------------------------------------------------------------------- */

static void
names_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  (void) task_data, (void) cancellable;
  CowscopeSessionDocument *document = source;
  GError *error = NULL;
  sqlite3 *db = cowscope_session_document_acquire_db (document, &error);
  if (db == NULL)
    {
      g_task_return_error (task, error);
      return;
    }
  const char *path = cowscope_session_document_get_path (document);
  /* The most common names when there are too many to offer, then sorted. */
  g_autoptr (sqlite3_stmt) stmt = cowscope_format_statement (
    db, path,
    "SELECT name FROM (SELECT name, count(*) AS n FROM tensors WHERE name IS NOT NULL"
    " AND name != '' GROUP BY name ORDER BY n DESC LIMIT ?1) ORDER BY name",
    &error);
  g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  int rc = SQLITE_DONE;
  if (stmt != NULL)
    {
      sqlite3_bind_int (stmt, 1, COWSCOPE_TENSOR_SEARCH_MAX_NAMES);
      while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
        g_ptr_array_add (names, cowscope_format_column_text (stmt, 0));
      if (rc != SQLITE_DONE)
        cowscope_format_set_error (&error, db, rc, path, "tensor names");
    }
  g_clear_pointer (&stmt, sqlite3_finalize);
  cowscope_session_document_release_db (document, db);
  if (error != NULL)
    {
      g_task_return_error (task, error);
      return;
    }
  g_ptr_array_add (names, NULL);
  g_task_return_pointer (task, g_ptr_array_free (g_steal_pointer (&names), FALSE),
                         (GDestroyNotify) g_strfreev);
}

void
cowscope_tensor_search_names_async (CowscopeSessionDocument *document, GCancellable *cancellable,
                                    GAsyncReadyCallback callback, gpointer user_data)
{
  g_return_if_fail (COWSCOPE_IS_SESSION_DOCUMENT (document));
  g_autoptr (GTask) task = g_task_new (document, cancellable, callback, user_data);
  g_task_set_source_tag (task, cowscope_tensor_search_names_async);
  g_task_run_in_thread (task, names_thread);
}

GStrv
cowscope_tensor_search_names_finish (GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (G_IS_TASK (result), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}

/* ---- matches ----------------------------------------------------------------- */

void
cowscope_tensor_matches_free (CowscopeTensorMatches *matches)
{
  if (matches == NULL)
    return;
  g_free (matches->text);
  g_clear_pointer (&matches->tensors, g_array_unref);
  g_clear_pointer (&matches->events, g_array_unref);
  g_free (matches);
}

/* The tensors that ?1 selects: by name, or by a LIKE pattern. */
#define EXACT "SELECT pid, id FROM tensors WHERE name = ?1"
#define LIKE "SELECT pid, id FROM tensors WHERE name LIKE ?1 ESCAPE '\\'"

/* @text as a LIKE pattern for "contains" (its own % _ \ escaped). */
static char *
like_pattern (const char *text)
{
  GString *s = g_string_new ("%");
  for (const char *p = text; *p != '\0'; p++)
    {
      if (*p == '%' || *p == '_' || *p == '\\')
        g_string_append_c (s, '\\');
      g_string_append_c (s, *p);
    }
  g_string_append_c (s, '%');
  return g_string_free (s, FALSE);
}

/* Runs @sql with ?1 bound to @arg; each row goes to @row. */
static gboolean
run (sqlite3 *db, const char *path, const char *sql, const char *arg, GCancellable *cancellable,
     void (*row) (sqlite3_stmt *stmt, CowscopeTensorMatches *m), CowscopeTensorMatches *m,
     GError **error)
{
  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return FALSE;
  g_autoptr (sqlite3_stmt) stmt = cowscope_format_statement (db, path, sql, error);
  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_text (stmt, 1, arg, -1, SQLITE_STATIC);
  int rc;
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    row (stmt, m);
  if (rc != SQLITE_DONE)
    {
      cowscope_format_set_error (error, db, rc, path, "tensor search");
      return FALSE;
    }
  return TRUE;
}

static void
tensor_row (sqlite3_stmt *stmt, CowscopeTensorMatches *m)
{
  CowscopeObjectRef ref = {
    .kind = COWSCOPE_NODE_TENSOR,
    .pid = (guint32) cowscope_format_column_int (stmt, 0, 0),
    .id = (guint64) cowscope_format_column_int (stmt, 1, 0),
  };
  g_array_append_val (m->tensors, ref);
}

static void
event_row (sqlite3_stmt *stmt, CowscopeTensorMatches *m)
{
  CowscopeObjectEvent ev;
  cowscope_object_event_from_row (stmt, &ev);
  g_array_append_val (m->events, ev);
}

static int
compare_seq (gconstpointer a, gconstpointer b)
{
  gint64 x = ((const CowscopeObjectEvent *) a)->seq, y = ((const CowscopeObjectEvent *) b)->seq;
  return (x > y) - (x < y);
}

/* Keeps each event once (a lazy clone from one matched tensor into
 * another is found twice), in step order. */
static void
dedupe_and_sort (GArray *events)
{
  g_array_sort (events, compare_seq);
  guint kept = 0;
  for (guint i = 0; i < events->len; i++)
    if (kept == 0 || g_array_index (events, CowscopeObjectEvent, kept - 1).seq
                       != g_array_index (events, CowscopeObjectEvent, i).seq)
      g_array_index (events, CowscopeObjectEvent, kept++) =
        g_array_index (events, CowscopeObjectEvent, i);
  g_array_set_size (events, kept);
  cowscope_event_steps_sort (events);
}

static gboolean
find_with (sqlite3 *db, const char *path, const char *tensors, const char *arg,
           GCancellable *cancellable, CowscopeTensorMatches *m, GError **error)
{
  g_autofree char *refs = g_strdup_printf ("%s ORDER BY pid, id", tensors);
  if (!run (db, path, refs, arg, cancellable, tensor_row, m, error))
    return FALSE;
  if (m->tensors->len == 0)
    return TRUE;
  /* One pass over each table; (pid, id) IN (...) is a lookup in a
   * temporary index of the matched tensors. */
  g_autofree char *mat = g_strdup_printf (
    COWSCOPE_OBJECT_EVENTS_FROM_MATERIALIZATIONS " WHERE (pid, tensor_id) IN (%s)", tensors);
  g_autofree char *lazy = g_strdup_printf (
    COWSCOPE_OBJECT_EVENTS_FROM_LAZY_CLONES " WHERE (pid, source_tensor_id) IN (%s)"
    " OR (pid, result_tensor_id) IN (%s)", tensors, tensors);
  g_autofree char *viol = g_strdup_printf (
    COWSCOPE_OBJECT_EVENTS_FROM_VIOLATIONS " WHERE (pid, writer_tensor_id) IN (%s)"
    " OR (pid, accessor_tensor_id) IN (%s)", tensors, tensors);
  return run (db, path, mat, arg, cancellable, event_row, m, error)
         && run (db, path, lazy, arg, cancellable, event_row, m, error)
         && run (db, path, viol, arg, cancellable, event_row, m, error);
}

CowscopeTensorMatches *
cowscope_tensor_search_find (CowscopeSessionDocument *document, const char *text,
                             GCancellable *cancellable, GError **error)
{
  g_return_val_if_fail (COWSCOPE_IS_SESSION_DOCUMENT (document), NULL);
  g_return_val_if_fail (text != NULL, NULL);
  g_autoptr (CowscopeTensorMatches) m = g_new0 (CowscopeTensorMatches, 1);
  m->text = g_strdup (text);
  m->tensors = g_array_new (FALSE, FALSE, sizeof (CowscopeObjectRef));
  m->events = g_array_new (FALSE, FALSE, sizeof (CowscopeObjectEvent));
  if (text[0] == '\0')
    return g_steal_pointer (&m);
  sqlite3 *db = cowscope_session_document_acquire_db (document, error);
  if (db == NULL)
    return NULL;
  const char *path = cowscope_session_document_get_path (document);
  g_autofree char *pattern = like_pattern (text);
  m->exact = TRUE;
  gboolean ok = find_with (db, path, EXACT, text, cancellable, m, error);
  if (ok && m->tensors->len == 0)
    {
      m->exact = FALSE;
      ok = find_with (db, path, LIKE, pattern, cancellable, m, error);
    }
  cowscope_session_document_release_db (document, db);
  if (!ok)
    return NULL;
  dedupe_and_sort (m->events);
  return g_steal_pointer (&m);
}

static void
find_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  GError *error = NULL;
  CowscopeTensorMatches *m = cowscope_tensor_search_find (source, task_data, cancellable, &error);
  if (m == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, m, (GDestroyNotify) cowscope_tensor_matches_free);
}

void
cowscope_tensor_search_find_async (CowscopeSessionDocument *document, const char *text,
                                   GCancellable *cancellable, GAsyncReadyCallback callback,
                                   gpointer user_data)
{
  g_return_if_fail (COWSCOPE_IS_SESSION_DOCUMENT (document));
  g_return_if_fail (text != NULL);
  g_autoptr (GTask) task = g_task_new (document, cancellable, callback, user_data);
  g_task_set_source_tag (task, cowscope_tensor_search_find_async);
  g_task_set_task_data (task, g_strdup (text), g_free);
  g_task_run_in_thread (task, find_thread);
}

CowscopeTensorMatches *
cowscope_tensor_search_find_finish (GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (G_IS_TASK (result), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}
