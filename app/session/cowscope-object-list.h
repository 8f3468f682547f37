/* cowscope-object-list.h — one object table (allocations, contexts,
 * storages or tensors) as a GListModel.  The (pid, id) keys are read once
 * (16 bytes a row); get_item() reads one row by primary key and builds a
 * small CowscopeObjectItem. */
#pragma once

#include <gio/gio.h>

#include "cowscope-session-document.h"
#include "cowscope-sharing-graph.h"

G_BEGIN_DECLS

#define COWSCOPE_TYPE_OBJECT_LIST (cowscope_object_list_get_type ())
G_DECLARE_FINAL_TYPE (CowscopeObjectList, cowscope_object_list, COWSCOPE, OBJECT_LIST, GObject)

/* Reads the keys of table @kind (in the calling thread); NULL with @error. */
CowscopeObjectList *cowscope_object_list_new (CowscopeSessionDocument *document,
                                              CowscopeNodeKind kind, GError **error);

G_END_DECLS
