/* cowscope-event-list.c — events as a lazily read list model. */
#include "cowscope-event-list.h"

#include "cowscope-event-item.h"
#include "cowscope-session-db.h"
#include "cowscope-session-document-private.h"

struct _CowscopeEventList {
  GObject parent_instance;
  CowscopeSessionDocument *document;
  gint64 first_seq;
  guint n_items;
  gboolean dense; /* seq has no gaps */
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

/* Reads row @position; NULL past the end or when the file fails. */
static gpointer
get_item (GListModel *model, guint position)
{
  CowscopeEventList *self = COWSCOPE_EVENT_LIST (model);
  if (position >= self->n_items)
    return NULL;
  sqlite3 *db = cowscope_session_document_acquire_db (self->document, NULL);
  if (db == NULL)
    return NULL;
  const char *sql = self->dense
    ? "SELECT seq, ts, pid, tid, type, op, aux, v0, v1, v2, v3, v4, stack_id FROM events"
      " WHERE seq = ?1"
    : "SELECT seq, ts, pid, tid, type, op, aux, v0, v1, v2, v3, v4, stack_id FROM events"
      " ORDER BY seq LIMIT 1 OFFSET ?1";
  CowscopeEventItem *item = NULL;
  sqlite3_stmt *stmt = cowscope_session_db_prepare (db, cowscope_session_document_get_path (self->document), sql, NULL);
  if (stmt != NULL)
    {
      sqlite3_bind_int64 (stmt, 1, self->dense ? self->first_seq + position : position);
      if (sqlite3_step (stmt) == SQLITE_ROW)
        {
          gint64 v[5];
          for (int k = 0; k < 5; k++)
            v[k] = cowscope_session_db_column_int (stmt, 7 + k, 0);
          gint64 type = cowscope_session_db_column_int (stmt, 4, 0);
          item = cowscope_event_item_new (
            sqlite3_column_int64 (stmt, 0), cowscope_session_db_column_int (stmt, 1, 0),
            (guint32) cowscope_session_db_column_int (stmt, 2, 0),
            cowscope_session_db_column_int (stmt, 3, 0), type,
            cowscope_session_document_event_type_name (self->document, type),
            cowscope_session_document_op_name (self->document,
                                               cowscope_session_db_column_int (stmt, 5, 0)),
            cowscope_session_db_column_int (stmt, 6, 0), v,
            cowscope_session_db_column_int (stmt, 12, 0));
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
cowscope_event_list_dispose (GObject *object)
{
  g_clear_object (&COWSCOPE_EVENT_LIST (object)->document);
  G_OBJECT_CLASS (cowscope_event_list_parent_class)->dispose (object);
}

static void
cowscope_event_list_class_init (CowscopeEventListClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = cowscope_event_list_dispose;
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
  self->n_items = (guint) MIN (n, G_MAXUINT);
  self->dense = n == 0 || (guint64) (cowscope_session_document_get_last_seq (document)
                                     - self->first_seq + 1) == n;
  return self;
}

/* Position of @seq when seq is dense; -1 otherwise or out of range. */
gint64
cowscope_event_list_position_of (CowscopeEventList *self, gint64 seq)
{
  g_return_val_if_fail (COWSCOPE_IS_EVENT_LIST (self), -1);
  if (!self->dense || seq < self->first_seq || seq - self->first_seq >= self->n_items)
    return -1;
  return seq - self->first_seq;
}
