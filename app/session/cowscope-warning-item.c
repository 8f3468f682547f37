/* cowscope-warning-item.c — one warning row. */
#include "cowscope-warning-item.h"

struct _CowscopeWarningItem {
  GObject parent_instance;
  CowscopeWarningKind kind;
  gint64 seq, ts, tid;
  guint32 pid;
  char *message;
};

enum { PROP_0, PROP_SEQ, PROP_MESSAGE, N_PROPS };
static GParamSpec *properties[N_PROPS];

G_DEFINE_FINAL_TYPE (CowscopeWarningItem, cowscope_warning_item, G_TYPE_OBJECT)

static void
cowscope_warning_item_finalize (GObject *object)
{
  g_free (COWSCOPE_WARNING_ITEM (object)->message);
  G_OBJECT_CLASS (cowscope_warning_item_parent_class)->finalize (object);
}

static void
cowscope_warning_item_get_property (GObject *object, guint prop_id, GValue *value,
                                    GParamSpec *pspec)
{
  CowscopeWarningItem *self = COWSCOPE_WARNING_ITEM (object);
  switch (prop_id)
    {
    case PROP_SEQ: g_value_set_int64 (value, self->seq); break;
    case PROP_MESSAGE: g_value_set_string (value, self->message); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
cowscope_warning_item_class_init (CowscopeWarningItemClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  object_class->finalize = cowscope_warning_item_finalize;
  object_class->get_property = cowscope_warning_item_get_property;
  properties[PROP_SEQ] = g_param_spec_int64 ("seq", NULL, NULL, G_MININT64, G_MAXINT64, 0,
                                             G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  properties[PROP_MESSAGE] = g_param_spec_string ("message", NULL, NULL, NULL,
                                                  G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
cowscope_warning_item_init (CowscopeWarningItem *self)
{
  (void) self;
}

/* A detached warning. */
CowscopeWarningItem *
cowscope_warning_item_new (CowscopeWarningKind kind, gint64 seq, gint64 ts, guint32 pid,
                           gint64 tid, const char *message)
{
  CowscopeWarningItem *self = g_object_new (COWSCOPE_TYPE_WARNING_ITEM, NULL);
  self->kind = kind;
  self->seq = seq;
  self->ts = ts;
  self->pid = pid;
  self->tid = tid;
  self->message = g_strdup (message);
  return self;
}

CowscopeWarningKind cowscope_warning_item_get_kind (CowscopeWarningItem *self) { return self->kind; }
gint64 cowscope_warning_item_get_seq (CowscopeWarningItem *self) { return self->seq; }
gint64 cowscope_warning_item_get_ts (CowscopeWarningItem *self) { return self->ts; }
guint32 cowscope_warning_item_get_pid (CowscopeWarningItem *self) { return self->pid; }
gint64 cowscope_warning_item_get_tid (CowscopeWarningItem *self) { return self->tid; }
const char *cowscope_warning_item_get_message (CowscopeWarningItem *self) { return self->message; }
