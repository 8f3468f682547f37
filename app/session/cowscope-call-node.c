/* cowscope-call-node.c — a call tree node as a GObject (see header). */
#include "cowscope-call-node.h"

#include <glib/gi18n-lib.h>

struct _CowscopeCallNode {
  GObject parent_instance;
  CowscopeCallTree *tree;
  guint node;
};

G_DEFINE_FINAL_TYPE (CowscopeCallNode, cowscope_call_node, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_DISPLAY,     /* the frame, or "All copies" for a root */
  PROP_BYTES,       /* bytes copied under the node */
  PROP_EVENTS,      /* copies, steals and eager fallbacks under it */
  PROP_TIME,        /* ns spent materializing under it */
  PROP_COPIES,
  PROP_STEALS,
  PROP_SELF_BYTES,  /* bytes copied by the paths ending at it */
  PROP_SELF_EVENTS,
  N_PROPS
};
static GParamSpec *properties[N_PROPS];

static void
cowscope_call_node_finalize (GObject *object)
{
  g_clear_object (&COWSCOPE_CALL_NODE (object)->tree);
  G_OBJECT_CLASS (cowscope_call_node_parent_class)->finalize (object);
}

static void
cowscope_call_node_get_property (GObject *object, guint prop_id, GValue *value,
                                 GParamSpec *pspec)
{
  CowscopeCallNode *self = COWSCOPE_CALL_NODE (object);
  const CowscopeCallWeights *total = cowscope_call_tree_get_total (self->tree, self->node);
  const CowscopeCallWeights *own = cowscope_call_tree_get_self (self->tree, self->node);

  switch (prop_id)
    {
    case PROP_DISPLAY:
      g_value_set_string (value, cowscope_call_node_get_display (self));
      break;
    case PROP_BYTES:
      g_value_set_uint64 (value, cowscope_call_weights_get (total, COWSCOPE_CALL_METRIC_BYTES));
      break;
    case PROP_EVENTS:
      g_value_set_uint64 (value, cowscope_call_weights_get (total, COWSCOPE_CALL_METRIC_EVENTS));
      break;
    case PROP_TIME:
      g_value_set_uint64 (value, cowscope_call_weights_get (total, COWSCOPE_CALL_METRIC_TIME));
      break;
    case PROP_COPIES:
      g_value_set_uint64 (value, total->copies + total->eager);
      break;
    case PROP_STEALS:
      g_value_set_uint64 (value, total->steals);
      break;
    case PROP_SELF_BYTES:
      g_value_set_uint64 (value, cowscope_call_weights_get (own, COWSCOPE_CALL_METRIC_BYTES));
      break;
    case PROP_SELF_EVENTS:
      g_value_set_uint64 (value, cowscope_call_weights_get (own, COWSCOPE_CALL_METRIC_EVENTS));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
cowscope_call_node_class_init (CowscopeCallNodeClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  object_class->finalize = cowscope_call_node_finalize;
  object_class->get_property = cowscope_call_node_get_property;

  properties[PROP_DISPLAY] = g_param_spec_string ("display", NULL, NULL, NULL,
                                                  G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
#define U64(id, name)                                                                         \
  properties[id] = g_param_spec_uint64 (name, NULL, NULL, 0, G_MAXUINT64, 0,                  \
                                        G_PARAM_READABLE | G_PARAM_STATIC_STRINGS)
  U64 (PROP_BYTES, "bytes");
  U64 (PROP_EVENTS, "events");
  U64 (PROP_TIME, "time");
  U64 (PROP_COPIES, "copies");
  U64 (PROP_STEALS, "steals");
  U64 (PROP_SELF_BYTES, "self-bytes");
  U64 (PROP_SELF_EVENTS, "self-events");
#undef U64
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
cowscope_call_node_init (CowscopeCallNode *self)
{
  (void) self;
}

CowscopeCallNode *
cowscope_call_node_new (CowscopeCallTree *tree, guint node)
{
  g_return_val_if_fail (COWSCOPE_IS_CALL_TREE (tree), NULL);
  g_return_val_if_fail (node < cowscope_call_tree_get_n_nodes (tree), NULL);

  CowscopeCallNode *self = g_object_new (COWSCOPE_TYPE_CALL_NODE, NULL);
  self->tree = g_object_ref (tree);
  self->node = node;
  return self;
}

CowscopeCallTree *
cowscope_call_node_get_tree (CowscopeCallNode *self)
{
  g_return_val_if_fail (COWSCOPE_IS_CALL_NODE (self), NULL);
  return self->tree;
}

guint
cowscope_call_node_get_node (CowscopeCallNode *self)
{
  g_return_val_if_fail (COWSCOPE_IS_CALL_NODE (self), COWSCOPE_CALL_TREE_NO_NODE);
  return self->node;
}

const char *
cowscope_call_node_get_display (CowscopeCallNode *self)
{
  g_return_val_if_fail (COWSCOPE_IS_CALL_NODE (self), NULL);
  const CowscopeCallFrame *frame = cowscope_call_tree_get_frame (self->tree, self->node);
  return frame != NULL ? frame->display : _("All copies");
}

GListModel *
cowscope_call_node_list_children (CowscopeCallNode *self)
{
  g_return_val_if_fail (COWSCOPE_IS_CALL_NODE (self), NULL);
  guint n = cowscope_call_tree_get_n_children (self->tree, self->node);
  if (n == 0)
    return NULL;

  GListStore *store = g_list_store_new (COWSCOPE_TYPE_CALL_NODE);
  g_autoptr (GPtrArray) items = g_ptr_array_new_full (n, g_object_unref);
  for (guint i = 0; i < n; i++)
    g_ptr_array_add (items, cowscope_call_node_new (self->tree,
                                                    cowscope_call_tree_get_child (self->tree,
                                                                                  self->node, i)));
  g_list_store_splice (store, 0, 0, items->pdata, n);
  return G_LIST_MODEL (store);
}
