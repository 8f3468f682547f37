/* cowscope-warning-item.h — one warning: a simulate-mode violation, a
 * failed copy or a lazy clone that had to copy eagerly. */
#pragma once

#include <glib-object.h>

G_BEGIN_DECLS

typedef enum {
  COWSCOPE_WARNING_VIOLATION,
  COWSCOPE_WARNING_FAILED_COPY,
  COWSCOPE_WARNING_EAGER_COPY,
} CowscopeWarningKind;

#define COWSCOPE_TYPE_WARNING_ITEM (cowscope_warning_item_get_type ())
G_DECLARE_FINAL_TYPE (CowscopeWarningItem, cowscope_warning_item, COWSCOPE, WARNING_ITEM, GObject)

/* Copies @message. */
CowscopeWarningItem *cowscope_warning_item_new (CowscopeWarningKind kind, gint64 seq, gint64 ts,
                                                guint32 pid, gint64 tid, const char *message);
CowscopeWarningKind cowscope_warning_item_get_kind (CowscopeWarningItem *self);
gint64 cowscope_warning_item_get_seq (CowscopeWarningItem *self);
gint64 cowscope_warning_item_get_ts (CowscopeWarningItem *self);
guint32 cowscope_warning_item_get_pid (CowscopeWarningItem *self);
gint64 cowscope_warning_item_get_tid (CowscopeWarningItem *self);
/* A translated one-line description. */
const char *cowscope_warning_item_get_message (CowscopeWarningItem *self);

G_END_DECLS
