/* cowscope-call-event-item.c — a call tree event as a GObject (see
 * header). */
#include "cowscope-call-event-item.h"

struct _CowscopeCallEventItem {
  GObject parent_instance;
  CowscopeCallEvent event;
};

G_DEFINE_FINAL_TYPE (CowscopeCallEventItem, cowscope_call_event_item, G_TYPE_OBJECT)

static void
cowscope_call_event_item_finalize (GObject *object)
{
  g_free (COWSCOPE_CALL_EVENT_ITEM (object)->event.tensor_name);
  G_OBJECT_CLASS (cowscope_call_event_item_parent_class)->finalize (object);
}

static void
cowscope_call_event_item_class_init (CowscopeCallEventItemClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = cowscope_call_event_item_finalize;
}

static void
cowscope_call_event_item_init (CowscopeCallEventItem *self)
{
  (void) self;
}

CowscopeCallEventItem *
cowscope_call_event_item_new (const CowscopeCallEvent *event)
{
  g_return_val_if_fail (event != NULL, NULL);
  CowscopeCallEventItem *self = g_object_new (COWSCOPE_TYPE_CALL_EVENT_ITEM, NULL);
  self->event = *event;
  self->event.tensor_name = g_strdup (event->tensor_name);
  return self;
}

const CowscopeCallEvent *
cowscope_call_event_item_get_event (CowscopeCallEventItem *self)
{
  g_return_val_if_fail (COWSCOPE_IS_CALL_EVENT_ITEM (self), NULL);
  return &self->event;
}
