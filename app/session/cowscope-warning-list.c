/* cowscope-warning-list.c — warnings as a lazily read list model. */
#include "cowscope-warning-list.h"

#include <glib/gi18n-lib.h>
#include <inttypes.h>

#include "cow-trace.h"
#include "cowscope-format-open.h"
#include "cowscope-session-document-private.h"
#include "cowscope-warning-item.h"

typedef struct {
  gint64 seq;
  gint64 kind;
} Key;

struct _CowscopeWarningList {
  GObject parent_instance;
  CowscopeSessionDocument *document;
  GArray *keys;
};

static void list_model_iface_init (GListModelInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (CowscopeWarningList, cowscope_warning_list, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (G_TYPE_LIST_MODEL, list_model_iface_init))

static GType
get_item_type (GListModel *model)
{
  (void) model;
  return COWSCOPE_TYPE_WARNING_ITEM;
}

static guint
get_n_items (GListModel *model)
{
  return COWSCOPE_WARNING_LIST (model)->keys->len;
}

/* Reads one warning; NULL past the end or on failure. */
static gpointer
get_item (GListModel *model, guint position)
{
  CowscopeWarningList *self = COWSCOPE_WARNING_LIST (model);
  if (position >= self->keys->len)
    return NULL;
  static const char *const sql[] = {
    "SELECT ts, pid, tid, storage_id, writer_tensor_id, accessor_tensor_id"
    " FROM violations WHERE seq = ?1",
    "SELECT begin_ts, pid, tid, storage_id, nbytes, 0 FROM materializations WHERE seq = ?1",
    "SELECT ts, pid, tid, source_storage_id, nbytes, eager_reason FROM lazy_clones WHERE seq = ?1",
  };
  const Key *key = &g_array_index (self->keys, Key, position);
  sqlite3 *db = cowscope_session_document_acquire_db (self->document, NULL);
  if (db == NULL)
    return NULL;
  CowscopeWarningItem *item = NULL;
  sqlite3_stmt *stmt = cowscope_format_statement (
    db, cowscope_session_document_get_path (self->document), sql[key->kind], NULL);
  if (stmt != NULL)
    {
      sqlite3_bind_int64 (stmt, 1, key->seq);
      if (sqlite3_step (stmt) == SQLITE_ROW)
        {
          gint64 a = cowscope_format_column_int (stmt, 3, 0);
          gint64 b = cowscope_format_column_int (stmt, 4, 0);
          gint64 c = cowscope_format_column_int (stmt, 5, 0);
          g_autofree char *message = NULL;
          g_autofree char *size = g_format_size ((guint64) MAX (b, 0));
          switch (key->kind)
            {
            case COWSCOPE_WARNING_VIOLATION:
              message = g_strdup_printf (_("Storage %" PRId64 ": tensor %" PRId64
                                           " relies on a write through tensor %" PRId64),
                                         a, c, b);
              break;
            case COWSCOPE_WARNING_FAILED_COPY:
              message = g_strdup_printf (_("Storage %" PRId64 ": copying %s failed"),
                                         a, size);
              break;
            default:
              message = g_strdup_printf (_("Storage %" PRId64 ": lazy clone copied %s "
                                           "eagerly (%s)"),
                                         a, size,
                                         c == COW_EAGER_FOREIGN_DATA_PTR ? _("foreign data pointer")
                                                : _("allocator cannot share"));
              break;
            }
          item = cowscope_warning_item_new ((CowscopeWarningKind) key->kind, key->seq,
                                            cowscope_format_column_int (stmt, 0, 0),
                                            (guint32) cowscope_format_column_int (stmt, 1, 0),
                                            cowscope_format_column_int (stmt, 2, 0), message);
        }
      sqlite3_finalize (stmt);
    }
  cowscope_session_document_release_db (self->document, db);
  return item;
}

static void
list_model_iface_init (GListModelInterface *iface)
{
  iface->get_item_type = get_item_type;
  iface->get_n_items = get_n_items;
  iface->get_item = get_item;
}

static void
cowscope_warning_list_finalize (GObject *object)
{
  CowscopeWarningList *self = COWSCOPE_WARNING_LIST (object);
  g_clear_object (&self->document);
  g_clear_pointer (&self->keys, g_array_unref);
  G_OBJECT_CLASS (cowscope_warning_list_parent_class)->finalize (object);
}

static void
cowscope_warning_list_class_init (CowscopeWarningListClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = cowscope_warning_list_finalize;
}

static void
cowscope_warning_list_init (CowscopeWarningList *self)
{
  self->keys = g_array_new (FALSE, FALSE, sizeof (Key));
}

/* Reads the warnings' seqs in order. */
CowscopeWarningList *
cowscope_warning_list_new (CowscopeSessionDocument *document, GError **error)
{
  g_return_val_if_fail (COWSCOPE_IS_SESSION_DOCUMENT (document), NULL);
  const char *path = cowscope_session_document_get_path (document);
  sqlite3 *db = cowscope_session_document_acquire_db (document, error);
  if (db == NULL)
    return NULL;
  g_autoptr (CowscopeWarningList) self = g_object_new (COWSCOPE_TYPE_WARNING_LIST, NULL);
  self->document = g_object_ref (document);
  sqlite3_stmt *stmt = cowscope_format_statement (
    db, path,
    "SELECT seq, 0 FROM violations"
    " UNION ALL SELECT seq, 1 FROM materializations"
    "  WHERE (kind & :materialize_kind_mask) = :materialize_failed"
    " UNION ALL SELECT seq, 2 FROM lazy_clones WHERE eager_reason IS NOT NULL"
    " ORDER BY 1",
    error);
  gboolean ok = stmt != NULL;
  if (ok)
    {
      int rc;
      while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
        {
          Key key = { sqlite3_column_int64 (stmt, 0), sqlite3_column_int64 (stmt, 1) };
          g_array_append_val (self->keys, key);
        }
      if (rc != SQLITE_DONE)
        {
          cowscope_format_set_error (error, db, rc, path, "warnings");
          ok = FALSE;
        }
      sqlite3_finalize (stmt);
    }
  cowscope_session_document_release_db (document, db);
  return ok ? g_steal_pointer (&self) : NULL;
}
