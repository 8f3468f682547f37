/* cowscope-ipc-lanes.c — one timeline lane per process (see
 * cowscope-ipc-private.h). */
#include "cowscope-ipc-private.h"

#include <glib/gi18n-lib.h>

#include "cowscope-format-open.h"
#include "cowscope-timeline-lane-private.h"

char *
cowscope_ipc_process_program (const CowscopeProcessInfo *process)
{
  char *program = NULL;
  if (process->exe != NULL && *process->exe != '\0')
    program = g_path_get_basename (process->exe);
  else if (process->cmdline != NULL && *process->cmdline != '\0')
    {
      g_auto (GStrv) words = g_strsplit (process->cmdline, " ", 2);
      program = g_path_get_basename (words[0]);
    }
  return program;
}

char *
cowscope_ipc_process_label (const CowscopeProcessInfo *process)
{
  g_autofree char *program = cowscope_ipc_process_program (process);
  if (program == NULL)
    return g_strdup_printf (_("Process %u"), process->pid);
  /* Translators: a process: program name, process id */
  return g_strdup_printf (_("%s (pid %u)"), program, process->pid);
}

gboolean
cowscope_ipc_has_table (sqlite3 *db, const char *path, const char *name, gboolean *has,
                        GError **error)
{
  g_autoptr (sqlite3_stmt) q = cowscope_format_statement (
    db, path, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1", error);
  if (q == NULL)
    return FALSE;
  sqlite3_bind_text (q, 1, name, -1, SQLITE_STATIC);
  int rc = sqlite3_step (q);
  if (rc != SQLITE_ROW && rc != SQLITE_DONE)
    {
      cowscope_format_set_error (error, db, rc, path, name);
      return FALSE;
    }
  *has = rc == SQLITE_ROW;
  return TRUE;
}

/* The index of process @pid's lane, created on first use. */
static CowscopeLaneIndex *
index_for (GHashTable *indexes, guint32 pid)
{
  CowscopeLaneIndex *index = g_hash_table_lookup (indexes, GUINT_TO_POINTER (pid));
  if (index == NULL)
    {
      index = cowscope_lane_index_new ();
      g_hash_table_insert (indexes, GUINT_TO_POINTER (pid), index);
    }
  return index;
}

static gint
compare_pids (gconstpointer a, gconstpointer b)
{
  guint32 x = GPOINTER_TO_UINT (*(gconstpointer const *) a);
  guint32 y = GPOINTER_TO_UINT (*(gconstpointer const *) b);
  return (x > y) - (x < y);
}

gboolean
cowscope_ipc_lanes_load (CowscopeSessionDocument *document, sqlite3 *db, const char *path,
                         gint64 end_ns, GListStore *lanes, GError **error)
{
  g_autoptr (GHashTable) indexes = g_hash_table_new_full (
    g_direct_hash, g_direct_equal, NULL, (GDestroyNotify) cowscope_lane_index_free);
  guint n_processes = cowscope_session_document_get_n_processes (document);
  for (guint i = 0; i < n_processes; i++)
    index_for (indexes, cowscope_session_document_get_process (document, i)->pid);
  int rc;

  /* IPC events: a range of the events_object index (type, pid, v0). */
  guint64 n_ipc = 0;
  {
    g_autoptr (sqlite3_stmt) q = cowscope_format_statement (
      db, path,
      "SELECT seq, ts, pid FROM events WHERE type BETWEEN :ev_ipc_send AND :ev_ipc_collect",
      error);
    if (q == NULL)
      return FALSE;
    while ((rc = sqlite3_step (q)) == SQLITE_ROW)
      {
        guint32 pid = (guint32) sqlite3_column_int64 (q, 2);
        cowscope_lane_index_append (index_for (indexes, pid), sqlite3_column_int64 (q, 1),
                                    sqlite3_column_int64 (q, 0), COWSCOPE_ITEM_IPC, 0);
        n_ipc++;
      }
    if (rc != SQLITE_DONE)
      {
        cowscope_format_set_error (error, db, rc, path, "events");
        return FALSE;
      }
  }
  if (n_ipc == 0 && g_hash_table_size (indexes) < 2)
    return TRUE;

  gboolean has = FALSE;
  if (!cowscope_ipc_has_table (db, path, "ipc_refs", &has, error))
    return FALSE;
  if (has)
    {
      g_autoptr (sqlite3_stmt) q = cowscope_format_statement (
        db, path,
        "SELECT producer_pid, nbytes, limbo_enter_seq, limbo_enter_ts, limbo_free_ts,"
        " consumer_pid, cached, receive_seq, receive_ts, release_ts FROM ipc_refs",
        error);
      if (q == NULL)
        return FALSE;
      while ((rc = sqlite3_step (q)) == SQLITE_ROW)
        {
          guint64 nbytes = (guint64) MAX (cowscope_format_column_int (q, 1, 0), 0);
          gint64 enter = cowscope_format_column_int (q, 3, -1);
          if (enter >= 0)
            cowscope_lane_index_add_span (
              index_for (indexes, (guint32) sqlite3_column_int64 (q, 0)), enter,
              cowscope_format_column_int (q, 4, end_ns), sqlite3_column_int64 (q, 2),
              COWSCOPE_ITEM_IPC_LIMBO, nbytes);
          gint64 received = cowscope_format_column_int (q, 8, -1);
          if (received >= 0 && cowscope_format_column_int (q, 6, 0) == 0)
            cowscope_lane_index_add_span (
              index_for (indexes, (guint32) sqlite3_column_int64 (q, 5)), received,
              cowscope_format_column_int (q, 9, end_ns), sqlite3_column_int64 (q, 7),
              COWSCOPE_ITEM_IPC_HELD, nbytes);
        }
      if (rc != SQLITE_DONE)
        {
          cowscope_format_set_error (error, db, rc, path, "ipc_refs");
          return FALSE;
        }
    }

  g_autoptr (GPtrArray) pids = g_ptr_array_new ();
  GHashTableIter iter;
  gpointer key;
  g_hash_table_iter_init (&iter, indexes);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    g_ptr_array_add (pids, key);
  g_ptr_array_sort (pids, compare_pids);
  for (guint i = 0; i < pids->len; i++)
    {
      guint32 pid = GPOINTER_TO_UINT (g_ptr_array_index (pids, i));
      CowscopeLaneIndex *index = g_hash_table_lookup (indexes, GUINT_TO_POINTER (pid));
      g_hash_table_steal (indexes, GUINT_TO_POINTER (pid));
      cowscope_lane_index_finish (index);
      g_autofree char *title = NULL;
      for (guint k = 0; k < n_processes && title == NULL; k++)
        {
          const CowscopeProcessInfo *p = cowscope_session_document_get_process (document, k);
          if (p->pid == pid && p->group != NULL)
            {
              /* A merged session's process heads its member's lanes:
               * "rank 3 · train". */
              g_autofree char *program = cowscope_ipc_process_program (p);
              title = g_strdup_printf (_("%s · %s"), p->group, program);
            }
          else if (p->pid == pid)
            title = cowscope_ipc_process_program (p); /* the view shows the pid below */
        }
      if (title == NULL)
        title = g_strdup_printf (_("Process %u"), pid);
      g_autoptr (CowscopeTimelineLane) lane =
        cowscope_timeline_lane_new_events (COWSCOPE_LANE_PROCESS, title, pid, 0, -1, index);
      g_list_store_append (lanes, lane);
    }
  return TRUE;
}
