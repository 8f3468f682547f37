/* cowscope-event-pages.h — the events table as a view shows it: a
 * GListModel over a CowscopeEventList whose rows are read a page at a
 * time in a worker thread, so the main thread never waits on SQLite.
 *
 * get_item() answers from a cache of pages.  A row whose page is not read
 * yet is a placeholder (cowscope_event_item_get_loaded() is FALSE, its
 * seq is known) and its page is queued; when the page arrives its
 * placeholders are filled in place and notify "loaded", so a view that
 * holds them redraws those cells and a selection keeps its item.  The
 * most recently asked page is read first, and a view scrolled far away
 * drops the pages it no longer waits for.  A new order of the same rows
 * changes no position: the cached rows become placeholders again, for
 * their new seqs, and are read again (no items-changed, which would cost
 * a GTK 4.8 list view a node per row).  A new filter passes through as a
 * removal and an addition and drops the cache. */
#pragma once

#include <gio/gio.h>

#include "cowscope-event-list.h"

G_BEGIN_DECLS

#define COWSCOPE_TYPE_EVENT_PAGES (cowscope_event_pages_get_type ())
G_DECLARE_FINAL_TYPE (CowscopeEventPages, cowscope_event_pages, COWSCOPE, EVENT_PAGES, GObject)

/* Rows read together by one worker task. */
#define COWSCOPE_EVENT_PAGE_ROWS 128

CowscopeEventPages *cowscope_event_pages_new (CowscopeEventList *list);
CowscopeEventList *cowscope_event_pages_get_list (CowscopeEventPages *self);
/* Pages asked for and not read yet (property "n-pending"). */
guint cowscope_event_pages_get_n_pending (CowscopeEventPages *self);

G_END_DECLS
