/* cowscope-warning-list.h — the warnings (violations, failed copies,
 * eager copies) as a GListModel in seq order.  Their seqs are read once;
 * get_item() reads one row and builds a CowscopeWarningItem. */
#pragma once

#include <gio/gio.h>

#include "cowscope-session-document.h"

G_BEGIN_DECLS

#define COWSCOPE_TYPE_WARNING_LIST (cowscope_warning_list_get_type ())
G_DECLARE_FINAL_TYPE (CowscopeWarningList, cowscope_warning_list, COWSCOPE, WARNING_LIST, GObject)

/* Reads the warnings' keys (calling thread); NULL with @error. */
CowscopeWarningList *cowscope_warning_list_new (CowscopeSessionDocument *document,
                                                GError **error);

G_END_DECLS
