/* cowscope-object-list.c — objects as a lazily read list model. */
#include "cowscope-object-list.h"

#include "cowscope-object-item.h"
#include "cowscope-format-open.h"
#include "cowscope-session-document-private.h"

typedef struct {
  gint64 pid, id;
} Key;

struct _CowscopeObjectList {
  GObject parent_instance;
  CowscopeSessionDocument *document;
  CowscopeNodeKind kind;
  GArray *keys;
};

static void list_model_iface_init (GListModelInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (CowscopeObjectList, cowscope_object_list, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (G_TYPE_LIST_MODEL, list_model_iface_init))

static const char *const tables[COWSCOPE_N_OBJECT_KINDS] = {
  "allocations", "contexts", "storages", "tensors",
};

static GType
get_item_type (GListModel *model)
{
  (void) model;
  return COWSCOPE_TYPE_OBJECT_ITEM;
}

static guint
get_n_items (GListModel *model)
{
  return COWSCOPE_OBJECT_LIST (model)->keys->len;
}

/* Reads one object by primary key; NULL past the end or on failure. */
static gpointer
get_item (GListModel *model, guint position)
{
  CowscopeObjectList *self = COWSCOPE_OBJECT_LIST (model);
  if (position >= self->keys->len)
    return NULL;
  static const char *const sql[COWSCOPE_N_OBJECT_KINDS] = {
    "SELECT nbytes, new_ts, free_ts, NULL, op FROM allocations WHERE pid = ?1 AND id = ?2",
    "SELECT NULL, new_ts, free_ts, NULL, NULL FROM contexts WHERE pid = ?1 AND id = ?2",
    "SELECT nbytes, new_ts, free_ts, NULL, op FROM storages WHERE pid = ?1 AND id = ?2",
    "SELECT numel, new_ts, free_ts, name, op FROM tensors WHERE pid = ?1 AND id = ?2",
  };
  const Key *key = &g_array_index (self->keys, Key, position);
  sqlite3 *db = cowscope_session_document_acquire_db (self->document, NULL);
  if (db == NULL)
    return NULL;
  CowscopeObjectItem *item = NULL;
  sqlite3_stmt *stmt = cowscope_format_statement (
    db, cowscope_session_document_get_path (self->document), sql[self->kind], NULL);
  if (stmt != NULL)
    {
      sqlite3_bind_int64 (stmt, 1, key->pid);
      sqlite3_bind_int64 (stmt, 2, key->id);
      if (sqlite3_step (stmt) == SQLITE_ROW)
        {
          g_autofree char *name = cowscope_format_column_text (stmt, 3);
          gint64 op = cowscope_format_column_int (stmt, 4, -1);
          item = cowscope_object_item_new (
            self->kind, (guint32) key->pid, (guint64) key->id,
            (guint64) cowscope_format_column_int (stmt, 0, 0),
            cowscope_format_column_int (stmt, 1, -1),
            cowscope_format_column_int (stmt, 2, -1), name,
            op >= 0 ? cowscope_session_document_op_name (self->document, op) : NULL);
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
cowscope_object_list_finalize (GObject *object)
{
  CowscopeObjectList *self = COWSCOPE_OBJECT_LIST (object);
  g_clear_object (&self->document);
  g_clear_pointer (&self->keys, g_array_unref);
  G_OBJECT_CLASS (cowscope_object_list_parent_class)->finalize (object);
}

static void
cowscope_object_list_class_init (CowscopeObjectListClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = cowscope_object_list_finalize;
}

static void
cowscope_object_list_init (CowscopeObjectList *self)
{
  self->keys = g_array_new (FALSE, FALSE, sizeof (Key));
}

/* Reads every (pid, id) of the table in key order. */
CowscopeObjectList *
cowscope_object_list_new (CowscopeSessionDocument *document, CowscopeNodeKind kind,
                          GError **error)
{
  g_return_val_if_fail (COWSCOPE_IS_SESSION_DOCUMENT (document), NULL);
  g_return_val_if_fail ((int) kind < (int) COWSCOPE_N_OBJECT_KINDS, NULL);
  const char *path = cowscope_session_document_get_path (document);
  sqlite3 *db = cowscope_session_document_acquire_db (document, error);
  if (db == NULL)
    return NULL;
  g_autoptr (CowscopeObjectList) self = g_object_new (COWSCOPE_TYPE_OBJECT_LIST, NULL);
  self->document = g_object_ref (document);
  self->kind = kind;
  g_autofree char *sql = g_strdup_printf ("SELECT pid, id FROM %s ORDER BY pid, id", tables[kind]);
  sqlite3_stmt *stmt = cowscope_format_statement (db, path, sql, error);
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
          cowscope_format_set_error (error, db, rc, path, tables[kind]);
          ok = FALSE;
        }
      sqlite3_finalize (stmt);
    }
  cowscope_session_document_release_db (document, db);
  return ok ? g_steal_pointer (&self) : NULL;
}
