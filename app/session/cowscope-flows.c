/* cowscope-flows.c — see cowscope-flows.h. */
#include "cowscope-flows.h"

#include "cowscope-copy-explanation.h"
#include "cowscope-format-open.h"
#include "cowscope-session-document-private.h"

/* The flows of a materialization, from its explanation (the owner of how
 * a copy's lazy clone and CUDA record are found). */
static void
materialization_flows (CowscopeCopyExplanation *ex, GArray *flows)
{
  if (cowscope_copy_explanation_get_kind (ex) != COWSCOPE_EXPLANATION_MATERIALIZATION)
    return;
  CowscopeFlowEnd copy = {
    .pid = cowscope_copy_explanation_get_pid (ex),
    .tid = cowscope_copy_explanation_get_tid (ex),
    .device = -1,
    .ns = cowscope_copy_explanation_get_begin_ns (ex),
    .id = cowscope_copy_explanation_get_seq (ex),
  };
  if (cowscope_copy_explanation_get_lazy_clone_seq (ex) >= 0)
    {
      CowscopeFlow flow = {
        .kind = COWSCOPE_FLOW_LAZY_CLONE_TO_COPY,
        .from = {
          .pid = copy.pid,
          .tid = cowscope_copy_explanation_get_lazy_clone_tid (ex),
          .device = -1,
          .ns = cowscope_copy_explanation_get_lazy_clone_ns (ex),
          .id = cowscope_copy_explanation_get_lazy_clone_seq (ex),
        },
        .to = copy,
      };
      g_array_append_val (flows, flow);
    }
  if (cowscope_copy_explanation_get_cuda_id (ex) >= 0)
    {
      CowscopeFlow flow = {
        .kind = COWSCOPE_FLOW_OPERATION_TO_CUDA,
        .from = copy,
        .to = {
          .pid = copy.pid,
          .tid = cowscope_copy_explanation_get_cuda_stream (ex),
          .device = MAX (cowscope_copy_explanation_get_cuda_device (ex), 0),
          .ns = cowscope_copy_explanation_get_cuda_start_ns (ex),
          .id = cowscope_copy_explanation_get_cuda_id (ex),
        },
      };
      g_array_append_val (flows, flow);
    }
}

/* The flows of lazy clone @seq: to each materialization it caused.
 * FALSE with @error when the file cannot be read. */
static gboolean
lazy_clone_flows (CowscopeSessionDocument *document, gint64 seq, GArray *flows, GError **error)
{
  sqlite3 *db = cowscope_session_document_acquire_db (document, error);
  if (db == NULL)
    return FALSE;
  const char *path = cowscope_session_document_get_path (document);
  g_autoptr (sqlite3_stmt) stmt = cowscope_format_statement (
    db, path,
    "SELECT l.pid, l.tid, l.ts, m.seq, m.tid, m.begin_ts FROM lazy_clones l"
    " JOIN materializations m ON m.pid = l.pid AND m.lazy_clone_seq = l.seq"
    " WHERE l.seq = ?1 ORDER BY m.begin_ts",
    error);
  int rc = SQLITE_DONE;
  if (stmt != NULL)
    {
      sqlite3_bind_int64 (stmt, 1, seq);
      while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
        {
          guint32 pid = (guint32) cowscope_format_column_int (stmt, 0, 0);
          CowscopeFlow flow = {
            .kind = COWSCOPE_FLOW_LAZY_CLONE_TO_COPY,
            .from = { pid, cowscope_format_column_int (stmt, 1, 0), -1,
                      cowscope_format_column_int (stmt, 2, 0), seq },
            .to = { pid, cowscope_format_column_int (stmt, 4, 0), -1,
                    cowscope_format_column_int (stmt, 5, 0),
                    cowscope_format_column_int (stmt, 3, -1) },
          };
          g_array_append_val (flows, flow);
        }
      if (rc != SQLITE_DONE)
        cowscope_format_set_error (error, db, rc, path, "flows");
    }
  gboolean ok = stmt != NULL && rc == SQLITE_DONE;
  g_clear_pointer (&stmt, sqlite3_finalize);
  cowscope_session_document_release_db (document, db);
  return ok;
}

GArray *
cowscope_flows_find (CowscopeSessionDocument *document, gint64 seq, GCancellable *cancellable,
                     GError **error)
{
  g_return_val_if_fail (COWSCOPE_IS_SESSION_DOCUMENT (document), NULL);
  g_autoptr (GArray) flows = g_array_new (FALSE, FALSE, sizeof (CowscopeFlow));
  if (seq < 0)
    return g_steal_pointer (&flows);
  g_autoptr (GError) local = NULL;
  g_autoptr (CowscopeCopyExplanation) ex = cowscope_copy_explanation_new (document, seq, &local);
  if (ex != NULL)
    {
      materialization_flows (ex, flows);
      return g_steal_pointer (&flows);
    }
  if (!g_error_matches (local, COWSCOPE_SESSION_ERROR,
                        COWSCOPE_SESSION_ERROR_NO_SUCH_OBJECT))
    {
      g_propagate_error (error, g_steal_pointer (&local));
      return NULL;
    }
  if (g_cancellable_set_error_if_cancelled (cancellable, error)
      || !lazy_clone_flows (document, seq, flows, error))
    return NULL;
  return g_steal_pointer (&flows);
}

static void
find_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  GError *error = NULL;
  GArray *flows = cowscope_flows_find (source, *(gint64 *) task_data, cancellable, &error);
  if (flows == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, flows, (GDestroyNotify) g_array_unref);
}

void
cowscope_flows_find_async (CowscopeSessionDocument *document, gint64 seq,
                           GCancellable *cancellable, GAsyncReadyCallback callback,
                           gpointer user_data)
{
  g_return_if_fail (COWSCOPE_IS_SESSION_DOCUMENT (document));
  g_autoptr (GTask) task = g_task_new (document, cancellable, callback, user_data);
  g_task_set_source_tag (task, cowscope_flows_find_async);
  g_task_set_task_data (task, g_memdup2 (&seq, sizeof seq), g_free);
  g_task_run_in_thread (task, find_thread);
}

GArray *
cowscope_flows_find_finish (GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (G_IS_TASK (result), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}
