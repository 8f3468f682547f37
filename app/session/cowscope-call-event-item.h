/* cowscope-call-event-item.h — one event under a call tree node (a copy,
 * a steal or an eager fallback) as a GObject, for list widgets. */
#pragma once

#include <glib-object.h>

#include "cowscope-call-tree.h"

G_BEGIN_DECLS

#define COWSCOPE_TYPE_CALL_EVENT_ITEM (cowscope_call_event_item_get_type ())
G_DECLARE_FINAL_TYPE (CowscopeCallEventItem, cowscope_call_event_item, COWSCOPE,
                      CALL_EVENT_ITEM, GObject)

/* Copies @event (its tensor name too). */
CowscopeCallEventItem *cowscope_call_event_item_new (const CowscopeCallEvent *event);

/* The event; valid as long as the item. */
const CowscopeCallEvent *cowscope_call_event_item_get_event (CowscopeCallEventItem *self);

G_END_DECLS
