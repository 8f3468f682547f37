/* cowscope-event-item.h — one row of the events table, built on demand. */
#pragma once

#include <glib-object.h>

G_BEGIN_DECLS

#define COWSCOPE_TYPE_EVENT_ITEM (cowscope_event_item_get_type ())
G_DECLARE_FINAL_TYPE (CowscopeEventItem, cowscope_event_item, COWSCOPE, EVENT_ITEM, GObject)

/* Copies @type_name and @op_name; @v holds v0..v4. */
CowscopeEventItem *cowscope_event_item_new (gint64 seq, gint64 ts, guint32 pid, gint64 tid,
                                            gint64 type, const char *type_name,
                                            const char *op_name, gint64 aux,
                                            const gint64 v[5], gint64 stack_id);
/* A row not read yet (the table's page cache): only @seq is known,
 * "loaded" is FALSE until cowscope_event_item_fill(). */
CowscopeEventItem *cowscope_event_item_new_placeholder (gint64 seq);
void cowscope_event_item_fill (CowscopeEventItem *self, CowscopeEventItem *row);
void cowscope_event_item_reset (CowscopeEventItem *self, gint64 seq);
gboolean cowscope_event_item_get_loaded (CowscopeEventItem *self);
gint64 cowscope_event_item_get_seq (CowscopeEventItem *self);
gint64 cowscope_event_item_get_ts (CowscopeEventItem *self);
guint32 cowscope_event_item_get_pid (CowscopeEventItem *self);
gint64 cowscope_event_item_get_tid (CowscopeEventItem *self);
gint64 cowscope_event_item_get_event_type (CowscopeEventItem *self);
const char *cowscope_event_item_get_type_name (CowscopeEventItem *self);
const char *cowscope_event_item_get_op_name (CowscopeEventItem *self);
gint64 cowscope_event_item_get_aux (CowscopeEventItem *self);
/* Payload value @i (0..4). */
gint64 cowscope_event_item_get_value (CowscopeEventItem *self, guint i);
gint64 cowscope_event_item_get_stack_id (CowscopeEventItem *self);

G_END_DECLS
