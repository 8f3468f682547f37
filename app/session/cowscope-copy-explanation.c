/* cowscope-copy-explanation.c — why one copy (or warning) happened. */
#include "cowscope-copy-explanation.h"

#include <glib/gi18n-lib.h>
#include <inttypes.h>

#include "cow-trace.h"
#include "cowscope-format-open.h"
#include "cowscope-session-document-private.h"
#include "cowscope-stack-frame.h"

struct _CowscopeCopyExplanation {
  GObject parent_instance;
  CowscopeExplanationKind kind;
  gint64 seq, end_seq;
  guint32 pid;
  gint64 tid;
  char *thread_name;
  gint64 begin_ns, end_ns;
  char *op;
  GListStore *stack;
  char *mode, *reason;
  gboolean copy_discarded;
  guint64 nbytes;
  gint64 lock_wait_ns;
  guint64 storage_id, context_id, tensor_id, allocation_id;
  char *tensor_name;
  gint64 lc_seq, lc_ns, lc_tid;
  char *lc_op;
  guint64 lc_src_tensor, lc_res_tensor, lc_src_storage, lc_res_storage;
  char *lc_src_name, *lc_res_name;
  GListStore *lc_stack;
  gint64 cuda_id, cuda_start, cuda_end, cuda_stream, cuda_device;
  char *cuda_kind;
  guint64 cuda_bytes;
  char *access;
  guint64 writer, accessor;
  char *writer_name, *accessor_name;
  gint64 writer_gen, accessor_gen;
  char *summary;
  GArray *highlights;
};

enum { PROP_0, PROP_KIND, PROP_SEQ, PROP_SUMMARY, N_PROPS };
static GParamSpec *properties[N_PROPS];

G_DEFINE_FINAL_TYPE (CowscopeCopyExplanation, cowscope_copy_explanation, G_TYPE_OBJECT)

static void
cowscope_copy_explanation_finalize (GObject *object)
{
  CowscopeCopyExplanation *self = COWSCOPE_COPY_EXPLANATION (object);
  g_free (self->thread_name);
  g_free (self->op);
  g_clear_object (&self->stack);
  g_free (self->mode);
  g_free (self->reason);
  g_free (self->lc_op);
  g_free (self->tensor_name);
  g_free (self->lc_src_name);
  g_free (self->lc_res_name);
  g_clear_object (&self->lc_stack);
  g_free (self->cuda_kind);
  g_free (self->access);
  g_free (self->writer_name);
  g_free (self->accessor_name);
  g_free (self->summary);
  g_clear_pointer (&self->highlights, g_array_unref);
  G_OBJECT_CLASS (cowscope_copy_explanation_parent_class)->finalize (object);
}

static void
cowscope_copy_explanation_get_property (GObject *object, guint prop_id, GValue *value,
                                        GParamSpec *pspec)
{
  CowscopeCopyExplanation *self = COWSCOPE_COPY_EXPLANATION (object);
  switch (prop_id)
    {
    case PROP_KIND: g_value_set_int (value, self->kind); break;
    case PROP_SEQ: g_value_set_int64 (value, self->seq); break;
    case PROP_SUMMARY: g_value_set_string (value, self->summary); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
cowscope_copy_explanation_class_init (CowscopeCopyExplanationClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  object_class->finalize = cowscope_copy_explanation_finalize;
  object_class->get_property = cowscope_copy_explanation_get_property;
  properties[PROP_KIND] = g_param_spec_int ("kind", NULL, NULL, 0, 1, 0,
                                            G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  properties[PROP_SEQ] = g_param_spec_int64 ("seq", NULL, NULL, G_MININT64, G_MAXINT64, 0,
                                             G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  properties[PROP_SUMMARY] = g_param_spec_string ("summary", NULL, NULL, NULL,
                                                  G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
cowscope_copy_explanation_init (CowscopeCopyExplanation *self)
{
  self->stack = g_list_store_new (COWSCOPE_TYPE_STACK_FRAME);
  self->lc_stack = g_list_store_new (COWSCOPE_TYPE_STACK_FRAME);
  self->highlights = g_array_new (FALSE, FALSE, sizeof (CowscopeObjectRef));
  self->end_seq = self->lc_seq = self->cuda_id = -1;
  self->lc_ns = self->lc_tid = self->cuda_start = self->cuda_end = -1;
  self->cuda_stream = self->cuda_device = -1;
}

#define INT(stmt, col) cowscope_format_column_int ((stmt), (col), 0)

/* Prepares @sql with one int64 parameter. */
static sqlite3_stmt *
prepare1 (sqlite3 *db, const char *path, const char *sql, gint64 a, GError **error)
{
  sqlite3_stmt *stmt = cowscope_format_statement (db, path, sql, error);
  if (stmt != NULL)
    sqlite3_bind_int64 (stmt, 1, a);
  return stmt;
}

/* Fills @store with the frames of @stack_id (innermost first). */
static gboolean
load_stack (sqlite3 *db, const char *path, gint64 stack_id, GListStore *store, GError **error)
{
  if (stack_id <= 0)
    return TRUE;
  g_autoptr (sqlite3_stmt) q = prepare1 (
    db, path,
    "SELECT f.address, f.module, f.function, f.file, f.line FROM stack_frames sf"
    " JOIN frames f ON f.id = sf.frame_id WHERE sf.stack_id = ?1 ORDER BY sf.position",
    stack_id, error);
  if (q == NULL)
    return FALSE;
  int rc;
  while ((rc = sqlite3_step (q)) == SQLITE_ROW)
    {
      g_autofree char *module = cowscope_format_column_text (q, 1);
      g_autofree char *function = cowscope_format_column_text (q, 2);
      g_autofree char *file = cowscope_format_column_text (q, 3);
      g_autoptr (CowscopeStackFrame) frame =
        cowscope_stack_frame_new ((guint64) INT (q, 0), module, function, file, INT (q, 4));
      g_list_store_append (store, frame);
    }
  if (rc != SQLITE_DONE)
    {
      cowscope_format_set_error (error, db, rc, path, "stack");
      return FALSE;
    }
  return TRUE;
}

static void
highlight (CowscopeCopyExplanation *self, CowscopeNodeKind kind, guint64 id)
{
  if (id == 0)
    return;
  for (guint i = 0; i < self->highlights->len; i++)
    {
      CowscopeObjectRef *r = &g_array_index (self->highlights, CowscopeObjectRef, i);
      if (r->kind == kind && r->id == id)
        return;
    }
  CowscopeObjectRef ref = { kind, self->pid, id };
  g_array_append_val (self->highlights, ref);
}

/* A tensor's name, or NULL. */
static char *
tensor_name (sqlite3 *db, const char *path, guint32 pid, guint64 id)
{
  g_autoptr (sqlite3_stmt) q =
    prepare1 (db, path, "SELECT name FROM tensors WHERE pid = ?2 AND id = ?1", (gint64) id, NULL);
  if (q == NULL)
    return NULL;
  sqlite3_bind_int64 (q, 2, pid);
  if (sqlite3_step (q) != SQLITE_ROW)
    return NULL;
  return cowscope_format_column_text (q, 0);
}

/* Reads the lazy clone @lc_seq (or, when <= 0, the latest lazy clone of
 * storage @storage_id at or before @before). */
static gboolean
load_lazy_clone (CowscopeCopyExplanation *self, CowscopeSessionDocument *document, sqlite3 *db,
                 const char *path, gint64 lc_seq, guint64 storage_id, gint64 before,
                 GError **error)
{
  g_autoptr (sqlite3_stmt) q = NULL;
  const char *columns = "SELECT seq, ts, tid, op, source_tensor_id, result_tensor_id,"
                        " source_storage_id, result_storage_id, stack_id FROM lazy_clones ";
  if (lc_seq > 0)
    {
      g_autofree char *sql = g_strconcat (columns, "WHERE seq = ?1", NULL);
      q = prepare1 (db, path, sql, lc_seq, error);
    }
  else
    {
      g_autofree char *sql = g_strconcat (columns,
                                          "WHERE pid = ?2 AND seq <= ?1 AND context_id IS NOT NULL"
                                          " AND (result_storage_id = ?3 OR source_storage_id = ?3)"
                                          " ORDER BY seq DESC LIMIT 1",
                                          NULL);
      q = prepare1 (db, path, sql, before, error);
      if (q != NULL)
        {
          sqlite3_bind_int64 (q, 2, self->pid);
          sqlite3_bind_int64 (q, 3, (gint64) storage_id);
        }
    }
  if (q == NULL)
    return FALSE;
  int rc = sqlite3_step (q);
  if (rc == SQLITE_DONE)
    return TRUE;
  if (rc != SQLITE_ROW)
    {
      cowscope_format_set_error (error, db, rc, path, "lazy clone");
      return FALSE;
    }
  self->lc_seq = INT (q, 0);
  self->lc_ns = INT (q, 1);
  self->lc_tid = INT (q, 2);
  self->lc_op = g_strdup (cowscope_session_document_op_name (document, INT (q, 3)));
  self->lc_src_tensor = (guint64) INT (q, 4);
  self->lc_res_tensor = (guint64) INT (q, 5);
  self->lc_src_storage = (guint64) INT (q, 6);
  self->lc_res_storage = (guint64) INT (q, 7);
  self->lc_src_name = tensor_name (db, path, self->pid, self->lc_src_tensor);
  self->lc_res_name = tensor_name (db, path, self->pid, self->lc_res_tensor);
  highlight (self, COWSCOPE_NODE_TENSOR, self->lc_src_tensor);
  highlight (self, COWSCOPE_NODE_TENSOR, self->lc_res_tensor);
  highlight (self, COWSCOPE_NODE_STORAGE, self->lc_src_storage);
  highlight (self, COWSCOPE_NODE_STORAGE, self->lc_res_storage);
  return load_stack (db, path, INT (q, 8), self->lc_stack, error);
}

/* "“weights”", or "tensor 12" for a tensor without a name (a new string). */
static char *
quoted_tensor (const char *name, guint64 id)
{
  g_autofree char *label = cowscope_tensor_label (name, id);
  return name != NULL ? g_strdup_printf ("“%s”", label) : g_steal_pointer (&label);
}

/* Fills a materialization explanation from its row. */
static gboolean
explain_materialization (CowscopeCopyExplanation *self, CowscopeSessionDocument *document,
                         sqlite3 *db, const char *path, sqlite3_stmt *m, GError **error)
{
  self->kind = COWSCOPE_EXPLANATION_MATERIALIZATION;
  self->seq = INT (m, 0);
  self->pid = (guint32) INT (m, 1);
  self->tid = INT (m, 2);
  self->begin_ns = INT (m, 3);
  self->end_ns = cowscope_format_column_int (m, 4, self->begin_ns);
  self->op = g_strdup (cowscope_session_document_op_name (document, INT (m, 5)));
  self->storage_id = (guint64) INT (m, 6);
  self->context_id = (guint64) INT (m, 7);
  self->tensor_id = (guint64) INT (m, 8);
  self->nbytes = (guint64) INT (m, 9);
  gint64 kind = INT (m, 10) & COW_MATERIALIZE_KIND_MASK;
  self->copy_discarded = INT (m, 11) != 0;
  self->lock_wait_ns = INT (m, 12);
  self->allocation_id = (guint64) INT (m, 13);
  gint64 lc_seq = cowscope_format_column_int (m, 14, -1);
  gint64 stack_id = INT (m, 15);
  self->thread_name = g_strdup (cowscope_session_document_thread_name (document, self->pid,
                                                                      self->tid));
  highlight (self, COWSCOPE_NODE_STORAGE, self->storage_id);
  highlight (self, COWSCOPE_NODE_CONTEXT, self->context_id);
  highlight (self, COWSCOPE_NODE_TENSOR, self->tensor_id);
  highlight (self, COWSCOPE_NODE_ALLOCATION, self->allocation_id);

  switch (kind)
    {
    case COW_MATERIALIZE_COPY:
      self->mode = g_strdup ("copy");
      self->reason = g_strdup (_("Other storages still shared the bytes, so this write "
                                 "needed its own copy."));
      break;
    case COW_MATERIALIZE_STEAL:
      self->mode = g_strdup ("steal");
      self->reason = g_strdup (
        self->copy_discarded
          ? _("Every other sharer left while the bytes were being copied: the copy was "
              "thrown away and the original bytes taken over (wasted work).")
          : _("This storage held the last reference, so it took the original bytes "
              "over without copying."));
      break;
    default:
      self->mode = g_strdup ("failed");
      self->reason = g_strdup (_("The copy failed (out of memory); the storage is still a "
                                 "lazy copy."));
      break;
    }

  /* The end event: the first MATERIALIZE_END of this storage after it. */
  {
    g_autoptr (sqlite3_stmt) q = prepare1 (
      db, path,
      "SELECT seq FROM events WHERE seq > ?1 AND seq <= ?1 + 100000 AND type = :ev_materialize_end"
      " AND pid = ?2 AND v0 = ?3 ORDER BY seq LIMIT 1",
      self->seq, error);
    if (q == NULL)
      return FALSE;
    sqlite3_bind_int64 (q, 2, self->pid);
    sqlite3_bind_int64 (q, 3, (gint64) self->storage_id);
    if (sqlite3_step (q) == SQLITE_ROW)
      self->end_seq = INT (q, 0);
  }

  /* The CUDA record the engine operation issued. */
  {
    g_autoptr (sqlite3_stmt) q = prepare1 (
      db, path,
      "SELECT a.id, k.name, a.start_ns, a.end_ns, a.bytes, a.stream_id, a.device_id"
      " FROM cuda_activity a LEFT JOIN cuda_kinds k ON k.id = a.kind"
      " WHERE a.pid = ?3 AND a.external_id BETWEEN ?1 AND ?2 ORDER BY a.start_ns LIMIT 1",
      self->seq, error);
    if (q == NULL)
      return FALSE;
    sqlite3_bind_int64 (q, 2, self->end_seq > 0 ? self->end_seq : self->seq);
    sqlite3_bind_int64 (q, 3, self->pid);
    if (sqlite3_step (q) == SQLITE_ROW)
      {
        self->cuda_id = INT (q, 0);
        self->cuda_kind = cowscope_format_column_text (q, 1);
        self->cuda_start = INT (q, 2);
        self->cuda_end = INT (q, 3);
        self->cuda_bytes = (guint64) INT (q, 4);
        self->cuda_stream = INT (q, 5);
        self->cuda_device = INT (q, 6);
      }
  }

  if (!load_stack (db, path, stack_id, self->stack, error)
      || !load_lazy_clone (self, document, db, path, lc_seq, self->storage_id, self->seq, error))
    return FALSE;

  self->tensor_name = tensor_name (db, path, self->pid, self->tensor_id);
  g_autofree char *size = g_format_size (self->nbytes);
  g_autofree char *tensor = quoted_tensor (self->tensor_name, self->tensor_id);
  if (self->lc_seq > 0)
    self->summary = g_strdup_printf (
      /* Translators: "copy of 4.2 MB in “add_”: the write to “weights”
       * (storage 12) broke the sharing created by the lazy clone at event 345." */
      _("%s of %s in “%s”: the write to %s (storage %" PRIu64 ") broke the sharing "
        "created by the lazy clone at event %" PRId64 "."),
      self->mode, size, self->op, tensor, self->storage_id, self->lc_seq);
  else
    self->summary = g_strdup_printf (_("%s of %s in “%s” on storage %" PRIu64 "."),
                                     self->mode, size, self->op, self->storage_id);
  return TRUE;
}

/* Fills a violation explanation from its row. */
static gboolean
explain_violation (CowscopeCopyExplanation *self, CowscopeSessionDocument *document,
                   sqlite3 *db, const char *path, sqlite3_stmt *v, GError **error)
{
  self->kind = COWSCOPE_EXPLANATION_VIOLATION;
  self->seq = INT (v, 0);
  self->pid = (guint32) INT (v, 1);
  self->tid = INT (v, 2);
  self->begin_ns = self->end_ns = INT (v, 3);
  self->op = g_strdup (cowscope_session_document_op_name (document, INT (v, 4)));
  self->access = g_strdup (INT (v, 5) == COW_ACCESS_WRITE ? "write" : "read");
  self->storage_id = (guint64) INT (v, 6);
  self->writer = (guint64) INT (v, 7);
  self->accessor = (guint64) INT (v, 8);
  self->writer_gen = INT (v, 9);
  self->accessor_gen = INT (v, 10);
  gint64 stack_id = INT (v, 11);
  self->thread_name = g_strdup (cowscope_session_document_thread_name (document, self->pid,
                                                                      self->tid));
  self->writer_name = tensor_name (db, path, self->pid, self->writer);
  self->accessor_name = tensor_name (db, path, self->pid, self->accessor);
  highlight (self, COWSCOPE_NODE_STORAGE, self->storage_id);
  highlight (self, COWSCOPE_NODE_TENSOR, self->writer);
  highlight (self, COWSCOPE_NODE_TENSOR, self->accessor);
  if (!load_stack (db, path, stack_id, self->stack, error)
      || !load_lazy_clone (self, document, db, path, -1, self->storage_id, self->seq, error))
    return FALSE;
  g_autofree char *writer = quoted_tensor (self->writer_name, self->writer);
  g_autofree char *accessor = quoted_tensor (self->accessor_name, self->accessor);
  self->summary = g_strdup_printf (
    /* Translators: the tensors are “name” or "tensor N" */
    _("A write to %s (generation %" PRId64 "), then %s %s the same storage through "
      "another view (generation %" PRId64 "): the program relies on aliasing that a lazy "
      "copy would break."),
    writer, self->writer_gen, accessor,
    g_str_equal (self->access, "write") ? _("wrote") : _("read"), self->accessor_gen);
  return TRUE;
}

/* Looks @seq up as a materialization (begin or end) or a violation. */
CowscopeCopyExplanation *
cowscope_copy_explanation_new (CowscopeSessionDocument *document, gint64 seq, GError **error)
{
  g_return_val_if_fail (COWSCOPE_IS_SESSION_DOCUMENT (document), NULL);
  const char *path = cowscope_session_document_get_path (document);
  sqlite3 *db = cowscope_session_document_acquire_db (document, error);
  if (db == NULL)
    return NULL;
  g_autoptr (CowscopeCopyExplanation) self = g_object_new (COWSCOPE_TYPE_COPY_EXPLANATION, NULL);
  gboolean ok = FALSE, found = FALSE;
  const char *m_sql =
    "SELECT seq, pid, tid, begin_ts, end_ts, op, storage_id, context_id, tensor_id, nbytes,"
    " kind, copy_discarded, lock_wait_ns, allocation_id, lazy_clone_seq, stack_id"
    " FROM materializations WHERE seq = ?1";
  g_autoptr (sqlite3_stmt) m = prepare1 (db, path, m_sql, seq, error);
  if (m == NULL)
    goto out;
  int rc = sqlite3_step (m);
  if (rc == SQLITE_DONE)
    {
      /* Maybe the END event: find its begin (the latest BEGIN of that storage). */
      g_autoptr (sqlite3_stmt) e = prepare1 (
        db, path,
        "SELECT b.seq FROM events e JOIN events b ON b.pid = e.pid AND b.v0 = e.v0"
        " AND b.type = :ev_materialize_begin AND b.seq < e.seq AND b.seq >= e.seq - 100000"
        " WHERE e.seq = ?1 AND e.type = :ev_materialize_end ORDER BY b.seq DESC LIMIT 1",
        seq, error);
      if (e == NULL)
        goto out;
      if (sqlite3_step (e) == SQLITE_ROW)
        {
          g_clear_pointer (&m, sqlite3_finalize);
          m = prepare1 (db, path, m_sql, INT (e, 0), error);
          if (m == NULL)
            goto out;
          rc = sqlite3_step (m);
        }
    }
  if (rc == SQLITE_ROW)
    {
      found = TRUE;
      ok = explain_materialization (self, document, db, path, m, error);
    }
  else if (rc != SQLITE_DONE)
    {
      cowscope_format_set_error (error, db, rc, path, "materializations");
      goto out;
    }
  if (!found)
    {
      g_autoptr (sqlite3_stmt) v = prepare1 (
        db, path,
        "SELECT seq, pid, tid, ts, op, access, storage_id, writer_tensor_id,"
        " accessor_tensor_id, writer_generation, accessor_generation, stack_id"
        " FROM violations WHERE seq = ?1",
        seq, error);
      if (v == NULL)
        goto out;
      rc = sqlite3_step (v);
      if (rc == SQLITE_ROW)
        {
          found = TRUE;
          ok = explain_violation (self, document, db, path, v, error);
        }
      else if (rc != SQLITE_DONE)
        {
          cowscope_format_set_error (error, db, rc, path, "violations");
          goto out;
        }
    }
  if (!found)
    g_set_error (error, COWSCOPE_SESSION_ERROR,
                 COWSCOPE_SESSION_ERROR_NO_SUCH_OBJECT,
                 _("Event %" PRId64 " is neither a copy nor a simulate-mode warning"),
                 seq);
out:
  g_clear_pointer (&m, sqlite3_finalize);
  cowscope_session_document_release_db (document, db);
  return ok ? g_steal_pointer (&self) : NULL;
}

static void
explain_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  (void) cancellable;
  GError *error = NULL;
  CowscopeCopyExplanation *self =
    cowscope_copy_explanation_new (source, *(gint64 *) task_data, &error);
  if (self == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, self, g_object_unref);
}

/* Runs cowscope_copy_explanation_new() in a GTask thread. */
void
cowscope_copy_explanation_new_async (CowscopeSessionDocument *document, gint64 seq,
                                     GCancellable *cancellable, GAsyncReadyCallback callback,
                                     gpointer user_data)
{
  g_return_if_fail (COWSCOPE_IS_SESSION_DOCUMENT (document));
  g_autoptr (GTask) task = g_task_new (document, cancellable, callback, user_data);
  g_task_set_source_tag (task, cowscope_copy_explanation_new_async);
  g_task_set_name (task, "[cowscope] explain copy");
  g_task_set_task_data (task, g_memdup2 (&seq, sizeof seq), g_free);
  g_task_run_in_thread (task, explain_thread);
}

/* The explanation, or NULL with @error. */
CowscopeCopyExplanation *
cowscope_copy_explanation_new_finish (GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (G_IS_TASK (result), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}

/* Plain getters: each returns the field read at construction. */
#define GETTER(type, name, field) \
  type cowscope_copy_explanation_get_##name (CowscopeCopyExplanation *self) \
  { \
    g_return_val_if_fail (COWSCOPE_IS_COPY_EXPLANATION (self), (type) 0); \
    return self->field; \
  }

GETTER (CowscopeExplanationKind, kind, kind)
GETTER (gint64, seq, seq)
GETTER (gint64, end_seq, end_seq)
GETTER (guint32, pid, pid)
GETTER (gint64, tid, tid)
GETTER (const char *, thread_name, thread_name)
GETTER (gint64, begin_ns, begin_ns)
GETTER (gint64, end_ns, end_ns)
GETTER (const char *, op, op)
GETTER (const char *, mode, mode)
GETTER (const char *, reason, reason)
GETTER (gboolean, copy_discarded, copy_discarded)
GETTER (guint64, nbytes, nbytes)
GETTER (gint64, lock_wait_ns, lock_wait_ns)
GETTER (guint64, storage_id, storage_id)
GETTER (guint64, context_id, context_id)
GETTER (guint64, tensor_id, tensor_id)
GETTER (gint64, lazy_clone_seq, lc_seq)
GETTER (gint64, lazy_clone_ns, lc_ns)
GETTER (gint64, lazy_clone_tid, lc_tid)
GETTER (const char *, lazy_clone_op, lc_op)
GETTER (guint64, lazy_clone_source_tensor, lc_src_tensor)
GETTER (guint64, lazy_clone_result_tensor, lc_res_tensor)
GETTER (guint64, lazy_clone_source_storage, lc_src_storage)
GETTER (guint64, lazy_clone_result_storage, lc_res_storage)
GETTER (gint64, cuda_id, cuda_id)
GETTER (const char *, cuda_kind, cuda_kind)
GETTER (gint64, cuda_start_ns, cuda_start)
GETTER (gint64, cuda_end_ns, cuda_end)
GETTER (guint64, cuda_bytes, cuda_bytes)
GETTER (gint64, cuda_stream, cuda_stream)
GETTER (gint64, cuda_device, cuda_device)
GETTER (const char *, access, access)
GETTER (guint64, writer_tensor, writer)
GETTER (const char *, writer_name, writer_name)
GETTER (guint64, accessor_tensor, accessor)
GETTER (const char *, accessor_name, accessor_name)
GETTER (gint64, writer_generation, writer_gen)
GETTER (gint64, accessor_generation, accessor_gen)
GETTER (const char *, summary, summary)
GETTER (const char *, tensor_name, tensor_name)
GETTER (const char *, lazy_clone_source_name, lc_src_name)
GETTER (const char *, lazy_clone_result_name, lc_res_name)

char *
cowscope_tensor_label (const char *name, guint64 id)
{
  if (name != NULL)
    return g_strdup (name);
  /* Translators: a tensor without a name, as the sharing graph shows it */
  return g_strdup_printf (_("tensor %" PRIu64), id);
}

/* The trigger's stack (CowscopeStackFrame). */
GListModel *
cowscope_copy_explanation_get_stack (CowscopeCopyExplanation *self)
{
  g_return_val_if_fail (COWSCOPE_IS_COPY_EXPLANATION (self), NULL);
  return G_LIST_MODEL (self->stack);
}

/* The lazy clone's stack (CowscopeStackFrame). */
GListModel *
cowscope_copy_explanation_get_lazy_clone_stack (CowscopeCopyExplanation *self)
{
  g_return_val_if_fail (COWSCOPE_IS_COPY_EXPLANATION (self), NULL);
  return G_LIST_MODEL (self->lc_stack);
}

/* The objects to highlight, valid as long as @self. */
const CowscopeObjectRef *
cowscope_copy_explanation_get_highlights (CowscopeCopyExplanation *self, guint *n_refs)
{
  g_return_val_if_fail (COWSCOPE_IS_COPY_EXPLANATION (self), NULL);
  if (n_refs)
    *n_refs = self->highlights->len;
  return (const CowscopeObjectRef *) self->highlights->data;
}
