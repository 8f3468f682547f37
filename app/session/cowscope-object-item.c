/* cowscope-object-item.c — one object row. */
#include "cowscope-object-item.h"

struct _CowscopeObjectItem {
  GObject parent_instance;
  CowscopeNodeKind kind;
  guint32 pid;
  guint64 id, nbytes;
  gint64 new_ts, free_ts;
  char *name, *op;
};

enum { PROP_0, PROP_ID, PROP_NAME, PROP_NBYTES, N_PROPS };
static GParamSpec *properties[N_PROPS];

G_DEFINE_FINAL_TYPE (CowscopeObjectItem, cowscope_object_item, G_TYPE_OBJECT)

static void
cowscope_object_item_finalize (GObject *object)
{
  CowscopeObjectItem *self = COWSCOPE_OBJECT_ITEM (object);
  g_free (self->name);
  g_free (self->op);
  G_OBJECT_CLASS (cowscope_object_item_parent_class)->finalize (object);
}

static void
cowscope_object_item_get_property (GObject *object, guint prop_id, GValue *value,
                                   GParamSpec *pspec)
{
  CowscopeObjectItem *self = COWSCOPE_OBJECT_ITEM (object);
  switch (prop_id)
    {
    case PROP_ID: g_value_set_uint64 (value, self->id); break;
    case PROP_NAME: g_value_set_string (value, self->name); break;
    case PROP_NBYTES: g_value_set_uint64 (value, self->nbytes); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
cowscope_object_item_class_init (CowscopeObjectItemClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  object_class->finalize = cowscope_object_item_finalize;
  object_class->get_property = cowscope_object_item_get_property;
  properties[PROP_ID] = g_param_spec_uint64 ("id", NULL, NULL, 0, G_MAXUINT64, 0,
                                             G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  properties[PROP_NAME] = g_param_spec_string ("name", NULL, NULL, NULL,
                                               G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  properties[PROP_NBYTES] = g_param_spec_uint64 ("nbytes", NULL, NULL, 0, G_MAXUINT64, 0,
                                                 G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
cowscope_object_item_init (CowscopeObjectItem *self)
{
  (void) self;
}

/* A detached copy of one object row. */
CowscopeObjectItem *
cowscope_object_item_new (CowscopeNodeKind kind, guint32 pid, guint64 id, guint64 nbytes,
                          gint64 new_ts, gint64 free_ts, const char *name, const char *op)
{
  CowscopeObjectItem *self = g_object_new (COWSCOPE_TYPE_OBJECT_ITEM, NULL);
  self->kind = kind;
  self->pid = pid;
  self->id = id;
  self->nbytes = nbytes;
  self->new_ts = new_ts;
  self->free_ts = free_ts;
  self->name = g_strdup (name);
  self->op = g_strdup (op);
  return self;
}

CowscopeNodeKind cowscope_object_item_get_kind (CowscopeObjectItem *self) { return self->kind; }
guint32 cowscope_object_item_get_pid (CowscopeObjectItem *self) { return self->pid; }
guint64 cowscope_object_item_get_id (CowscopeObjectItem *self) { return self->id; }
guint64 cowscope_object_item_get_nbytes (CowscopeObjectItem *self) { return self->nbytes; }
gint64 cowscope_object_item_get_new_ts (CowscopeObjectItem *self) { return self->new_ts; }
gint64 cowscope_object_item_get_free_ts (CowscopeObjectItem *self) { return self->free_ts; }
const char *cowscope_object_item_get_name (CowscopeObjectItem *self) { return self->name; }
const char *cowscope_object_item_get_op (CowscopeObjectItem *self) { return self->op; }
