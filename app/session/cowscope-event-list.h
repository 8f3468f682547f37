/* cowscope-event-list.h — the events table as a GListModel.  Position i
 * is events.seq = first_seq + i (seq is a rowid: dense); get_item() reads
 * that one row and builds a small CowscopeEventItem (Sysprof's pattern),
 * so a list of ten million events costs nothing until rows are shown. */
#pragma once

#include <gio/gio.h>

#include "cowscope-session-document.h"

G_BEGIN_DECLS

#define COWSCOPE_TYPE_EVENT_LIST (cowscope_event_list_get_type ())
G_DECLARE_FINAL_TYPE (CowscopeEventList, cowscope_event_list, COWSCOPE, EVENT_LIST, GObject)

CowscopeEventList *cowscope_event_list_new (CowscopeSessionDocument *document);

/* The position of event @seq, or -1. */
gint64 cowscope_event_list_position_of (CowscopeEventList *self, gint64 seq);

G_END_DECLS
