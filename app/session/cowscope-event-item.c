/* cowscope-event-item.c — one events row. */
#include "cowscope-event-item.h"

#include <string.h>

struct _CowscopeEventItem {
  GObject parent_instance;
  gint64 seq, ts, tid, type, aux, v[5], stack_id;
  guint32 pid;
  char *type_name, *op_name;
  gboolean loaded;    /* FALSE: a placeholder, only its seq known yet */
};

enum { PROP_0, PROP_SEQ, PROP_TS, PROP_TID, PROP_TYPE_NAME, PROP_OP_NAME, PROP_LOADED, N_PROPS };
static GParamSpec *properties[N_PROPS];

G_DEFINE_FINAL_TYPE (CowscopeEventItem, cowscope_event_item, G_TYPE_OBJECT)

static void
cowscope_event_item_finalize (GObject *object)
{
  CowscopeEventItem *self = COWSCOPE_EVENT_ITEM (object);
  g_free (self->type_name);
  g_free (self->op_name);
  G_OBJECT_CLASS (cowscope_event_item_parent_class)->finalize (object);
}

static void
cowscope_event_item_get_property (GObject *object, guint prop_id, GValue *value,
                                  GParamSpec *pspec)
{
  CowscopeEventItem *self = COWSCOPE_EVENT_ITEM (object);
  switch (prop_id)
    {
    case PROP_SEQ: g_value_set_int64 (value, self->seq); break;
    case PROP_TS: g_value_set_int64 (value, self->ts); break;
    case PROP_TID: g_value_set_int64 (value, self->tid); break;
    case PROP_TYPE_NAME: g_value_set_string (value, self->type_name); break;
    case PROP_OP_NAME: g_value_set_string (value, self->op_name); break;
    case PROP_LOADED: g_value_set_boolean (value, self->loaded); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
cowscope_event_item_class_init (CowscopeEventItemClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  object_class->finalize = cowscope_event_item_finalize;
  object_class->get_property = cowscope_event_item_get_property;
  properties[PROP_SEQ] = g_param_spec_int64 ("seq", NULL, NULL, G_MININT64, G_MAXINT64, 0,
                                             G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  properties[PROP_TS] = g_param_spec_int64 ("ts", NULL, NULL, G_MININT64, G_MAXINT64, 0,
                                            G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  properties[PROP_TID] = g_param_spec_int64 ("tid", NULL, NULL, G_MININT64, G_MAXINT64, 0,
                                             G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  properties[PROP_TYPE_NAME] = g_param_spec_string ("type-name", NULL, NULL, NULL,
                                                    G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  properties[PROP_OP_NAME] = g_param_spec_string ("op-name", NULL, NULL, NULL,
                                                  G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  properties[PROP_LOADED] = g_param_spec_boolean ("loaded", NULL, NULL, FALSE,
                                                  G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY |
                                                    G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
cowscope_event_item_init (CowscopeEventItem *self)
{
  (void) self;
}

/* A detached copy of one row. */
CowscopeEventItem *
cowscope_event_item_new (gint64 seq, gint64 ts, guint32 pid, gint64 tid, gint64 type,
                         const char *type_name, const char *op_name, gint64 aux,
                         const gint64 v[5], gint64 stack_id)
{
  CowscopeEventItem *self = g_object_new (COWSCOPE_TYPE_EVENT_ITEM, NULL);
  self->seq = seq;
  self->ts = ts;
  self->pid = pid;
  self->tid = tid;
  self->type = type;
  self->type_name = g_strdup (type_name);
  self->op_name = g_strdup (op_name);
  self->aux = aux;
  memcpy (self->v, v, sizeof self->v);
  self->stack_id = stack_id;
  self->loaded = TRUE;
  return self;
}

/* A row whose values are still being read: only @seq is known. */
CowscopeEventItem *
cowscope_event_item_new_placeholder (gint64 seq)
{
  CowscopeEventItem *self = g_object_new (COWSCOPE_TYPE_EVENT_ITEM, NULL);
  self->seq = seq;
  self->ts = -1;
  return self;
}

/* Fills placeholder @self with the values of @row (read for the same
 * seq) and notifies "loaded": the object stays, so a list that holds it
 * (and a selection of it) keeps it. */
void
cowscope_event_item_fill (CowscopeEventItem *self, CowscopeEventItem *row)
{
  g_return_if_fail (COWSCOPE_IS_EVENT_ITEM (self));
  g_return_if_fail (COWSCOPE_IS_EVENT_ITEM (row));
  if (self->loaded)
    return;
  self->seq = row->seq;
  self->ts = row->ts;
  self->pid = row->pid;
  self->tid = row->tid;
  self->type = row->type;
  g_free (self->type_name);
  self->type_name = g_strdup (row->type_name);
  g_free (self->op_name);
  self->op_name = g_strdup (row->op_name);
  self->aux = row->aux;
  memcpy (self->v, row->v, sizeof self->v);
  self->stack_id = row->stack_id;
  self->loaded = TRUE;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_LOADED]);
}

/* Makes @self a placeholder for @seq again (its table's order changed)
 * and notifies "loaded". */
void
cowscope_event_item_reset (CowscopeEventItem *self, gint64 seq)
{
  g_return_if_fail (COWSCOPE_IS_EVENT_ITEM (self));
  gboolean was_loaded = self->loaded;
  self->seq = seq;
  self->ts = -1;
  self->loaded = FALSE;
  if (was_loaded)
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_LOADED]);
}

gboolean cowscope_event_item_get_loaded (CowscopeEventItem *self) { return self->loaded; }

gint64 cowscope_event_item_get_seq (CowscopeEventItem *self) { return self->seq; }
gint64 cowscope_event_item_get_ts (CowscopeEventItem *self) { return self->ts; }
guint32 cowscope_event_item_get_pid (CowscopeEventItem *self) { return self->pid; }
gint64 cowscope_event_item_get_tid (CowscopeEventItem *self) { return self->tid; }
gint64 cowscope_event_item_get_event_type (CowscopeEventItem *self) { return self->type; }
const char *cowscope_event_item_get_type_name (CowscopeEventItem *self) { return self->type_name; }
const char *cowscope_event_item_get_op_name (CowscopeEventItem *self) { return self->op_name; }
gint64 cowscope_event_item_get_aux (CowscopeEventItem *self) { return self->aux; }
gint64 cowscope_event_item_get_stack_id (CowscopeEventItem *self) { return self->stack_id; }

/* Payload value @i, 0 past the end. */
gint64
cowscope_event_item_get_value (CowscopeEventItem *self, guint i)
{
  g_return_val_if_fail (COWSCOPE_IS_EVENT_ITEM (self), 0);
  return i < 5 ? self->v[i] : 0;
}
