/* cowscope-object-item.h — one allocation, context, storage or tensor row. */
#pragma once

#include <glib-object.h>

#include "cowscope-sharing-graph.h"

G_BEGIN_DECLS

#define COWSCOPE_TYPE_OBJECT_ITEM (cowscope_object_item_get_type ())
G_DECLARE_FINAL_TYPE (CowscopeObjectItem, cowscope_object_item, COWSCOPE, OBJECT_ITEM, GObject)

/* Copies @name and @op. */
CowscopeObjectItem *cowscope_object_item_new (CowscopeNodeKind kind, guint32 pid, guint64 id,
                                              guint64 nbytes, gint64 new_ts, gint64 free_ts,
                                              const char *name, const char *op);
CowscopeNodeKind cowscope_object_item_get_kind (CowscopeObjectItem *self);
guint32 cowscope_object_item_get_pid (CowscopeObjectItem *self);
guint64 cowscope_object_item_get_id (CowscopeObjectItem *self);
guint64 cowscope_object_item_get_nbytes (CowscopeObjectItem *self);   /* tensors: numel */
gint64 cowscope_object_item_get_new_ts (CowscopeObjectItem *self);
gint64 cowscope_object_item_get_free_ts (CowscopeObjectItem *self);   /* -1: never */
const char *cowscope_object_item_get_name (CowscopeObjectItem *self); /* tensors, or NULL */
const char *cowscope_object_item_get_op (CowscopeObjectItem *self);

G_END_DECLS
