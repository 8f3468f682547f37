/* cowscope-object-events.c — see cowscope-object-events.h. */
#include "cowscope-object-events.h"

#include "cowscope-format-open.h"
#include "cowscope-session-document-private.h"

typedef struct {
  CowscopeSessionDocument *document;
  GArray *refs; /* CowscopeObjectRef */
} Find;

static void
find_free (gpointer data)
{
  Find *find = data;
  g_object_unref (find->document);
  g_array_unref (find->refs);
  g_free (find);
}

/* The queries for one kind of object: ?1 pid, ?2 id.  Each names the
 * columns that can hold such an object (cowscope-object-events.h has the
 * columns each returns). */
#define MATERIALIZATIONS COWSCOPE_OBJECT_EVENTS_FROM_MATERIALIZATIONS
#define LAZY_CLONES COWSCOPE_OBJECT_EVENTS_FROM_LAZY_CLONES
#define VIOLATIONS COWSCOPE_OBJECT_EVENTS_FROM_VIOLATIONS

static const char *const *
queries_for (CowscopeNodeKind kind)
{
  static const char *const allocation[] = {
    MATERIALIZATIONS " WHERE pid = ?1 AND allocation_id = ?2",
    NULL,
  };
  static const char *const context[] = {
    MATERIALIZATIONS " WHERE pid = ?1 AND context_id = ?2",
    LAZY_CLONES " WHERE pid = ?1 AND context_id = ?2",
    NULL,
  };
  static const char *const storage[] = {
    MATERIALIZATIONS " WHERE pid = ?1 AND storage_id = ?2",
    LAZY_CLONES " WHERE pid = ?1 AND (source_storage_id = ?2 OR result_storage_id = ?2)",
    VIOLATIONS " WHERE pid = ?1 AND storage_id = ?2",
    NULL,
  };
  static const char *const tensor[] = {
    MATERIALIZATIONS " WHERE pid = ?1 AND tensor_id = ?2",
    LAZY_CLONES " WHERE pid = ?1 AND (source_tensor_id = ?2 OR result_tensor_id = ?2)",
    VIOLATIONS " WHERE pid = ?1 AND (writer_tensor_id = ?2 OR accessor_tensor_id = ?2)",
    NULL,
  };
  switch (kind)
    {
    case COWSCOPE_NODE_ALLOCATION: return allocation;
    case COWSCOPE_NODE_CONTEXT: return context;
    case COWSCOPE_NODE_STORAGE: return storage;
    default: return tensor;
    }
}

guint16
cowscope_object_event_kind_from_word (const char *word)
{
  static const struct {
    const char *word;
    CowscopeItemKind kind;
  } words[] = {
    { "copy", COWSCOPE_ITEM_COPY },
    { "steal", COWSCOPE_ITEM_STEAL },
    { "failed", COWSCOPE_ITEM_MATERIALIZE_FAILED },
    { "lazy", COWSCOPE_ITEM_LAZY_CLONE },
    { "eager", COWSCOPE_ITEM_EAGER_COPY },
    { "warning", COWSCOPE_ITEM_VIOLATION },
  };
  for (guint i = 0; word != NULL && i < G_N_ELEMENTS (words); i++)
    if (g_str_equal (word, words[i].word))
      return words[i].kind;
  return COWSCOPE_ITEM_OTHER;
}

void
cowscope_object_event_from_row (sqlite3_stmt *stmt, CowscopeObjectEvent *ev)
{
  g_return_if_fail (stmt != NULL && ev != NULL);
  *ev = (CowscopeObjectEvent) {
    .seq = sqlite3_column_int64 (stmt, 0),
    .pid = (guint32) cowscope_format_column_int (stmt, 1, 0),
    .tid = cowscope_format_column_int (stmt, 2, 0),
    .start_ns = cowscope_format_column_int (stmt, 3, 0),
    .kind = cowscope_object_event_kind_from_word ((const char *) sqlite3_column_text (stmt, 5)),
  };
  ev->end_ns = MAX (cowscope_format_column_int (stmt, 4, ev->start_ns), ev->start_ns);
}

static int
compare_seq (gconstpointer a, gconstpointer b)
{
  gint64 x = ((const CowscopeObjectEvent *) a)->seq, y = ((const CowscopeObjectEvent *) b)->seq;
  return (x > y) - (x < y);
}

static void
find_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  (void) source;
  Find *find = task_data;
  GError *error = NULL;
  g_autoptr (GArray) events = g_array_new (FALSE, FALSE, sizeof (CowscopeObjectEvent));
  if (find->refs->len == 0)
    {
      g_task_return_pointer (task, g_steal_pointer (&events), (GDestroyNotify) g_array_unref);
      return;
    }
  sqlite3 *db = cowscope_session_document_acquire_db (find->document, &error);
  const char *path = cowscope_session_document_get_path (find->document);
  for (guint r = 0; db != NULL && r < find->refs->len && error == NULL; r++)
    {
      const CowscopeObjectRef *ref = &g_array_index (find->refs, CowscopeObjectRef, r);
      for (const char *const *sql = queries_for (ref->kind); *sql != NULL && error == NULL; sql++)
        {
          if (g_cancellable_set_error_if_cancelled (cancellable, &error))
            break;
          sqlite3_stmt *stmt = cowscope_format_statement (db, path, *sql, &error);
          if (stmt == NULL)
            break;
          sqlite3_bind_int64 (stmt, 1, ref->pid);
          sqlite3_bind_int64 (stmt, 2, (sqlite3_int64) ref->id);
          int rc;
          while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
            {
              CowscopeObjectEvent ev;
              cowscope_object_event_from_row (stmt, &ev);
              g_array_append_val (events, ev);
            }
          if (rc != SQLITE_DONE)
            cowscope_format_set_error (&error, db, rc, path, "highlighted objects");
          sqlite3_finalize (stmt);
        }
    }
  cowscope_session_document_release_db (find->document, db);
  if (error != NULL)
    {
      g_task_return_error (task, error);
      return;
    }
  /* An event can concern two highlighted objects (a copy's storage and
   * its tensor): keep it once. */
  g_array_sort (events, compare_seq);
  guint kept = 0;
  for (guint i = 0; i < events->len; i++)
    if (kept == 0 || g_array_index (events, CowscopeObjectEvent, kept - 1).seq
                       != g_array_index (events, CowscopeObjectEvent, i).seq)
      g_array_index (events, CowscopeObjectEvent, kept++) = g_array_index (events, CowscopeObjectEvent, i);
  g_array_set_size (events, kept);
  g_task_return_pointer (task, g_steal_pointer (&events), (GDestroyNotify) g_array_unref);
}

void
cowscope_object_events_find_async (CowscopeSessionDocument *document,
                                   const CowscopeObjectRef *refs, guint n_refs,
                                   GCancellable *cancellable, GAsyncReadyCallback callback,
                                   gpointer user_data)
{
  g_return_if_fail (COWSCOPE_IS_SESSION_DOCUMENT (document));
  g_return_if_fail (refs != NULL || n_refs == 0);
  Find *find = g_new0 (Find, 1);
  find->document = g_object_ref (document);
  find->refs = g_array_new (FALSE, FALSE, sizeof (CowscopeObjectRef));
  if (n_refs > 0)
    g_array_append_vals (find->refs, refs, n_refs);
  GTask *task = g_task_new (NULL, cancellable, callback, user_data);
  g_task_set_source_tag (task, cowscope_object_events_find_async);
  g_task_set_task_data (task, find, find_free);
  g_task_run_in_thread (task, find_thread);
  g_object_unref (task);
}

GArray *
cowscope_object_events_find_finish (GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, NULL), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}
