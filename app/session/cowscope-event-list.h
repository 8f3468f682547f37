/* cowscope-event-list.h — the events table as a GListModel.  In its
 * natural order position i is events.seq = first_seq + i (seq is a rowid:
 * dense); get_item() reads that one row and builds a small
 * CowscopeEventItem (Sysprof's pattern), so a list of ten million events
 * costs nothing until rows are shown.
 *
 * Sorting and filtering run in SQL, off the main thread
 * (cowscope_event_list_query_async()): a GtkSortListModel over ten million
 * lazily read rows would read every row through get_item(), one query
 * each.  The query keeps the matching seqs in their order (8 bytes a
 * row) and get_item() reads rows by seq from then on. */
#pragma once

#include <gio/gio.h>

#include "cowscope-session-document.h"

G_BEGIN_DECLS

#define COWSCOPE_TYPE_EVENT_LIST (cowscope_event_list_get_type ())
G_DECLARE_FINAL_TYPE (CowscopeEventList, cowscope_event_list, COWSCOPE, EVENT_LIST, GObject)

/* The column rows are ordered by; ties go by seq.  Descending is the
 * exact reverse of ascending. */
typedef enum {
  COWSCOPE_EVENT_ORDER_SEQ,
  COWSCOPE_EVENT_ORDER_TIME,
  COWSCOPE_EVENT_ORDER_PROCESS,
  COWSCOPE_EVENT_ORDER_THREAD,
  COWSCOPE_EVENT_ORDER_TYPE,      /* by event type name */
  COWSCOPE_EVENT_ORDER_OP,        /* by operation name */
  COWSCOPE_EVENT_ORDER_VALUES,    /* by v0, then v1, v2, v3 */
  COWSCOPE_N_EVENT_ORDERS
} CowscopeEventOrder;

CowscopeEventList *cowscope_event_list_new (CowscopeSessionDocument *document);

CowscopeSessionDocument *cowscope_event_list_get_document (CowscopeEventList *self);

/* The seq of the row at @position, without reading it (-1 past the end,
 * or in the natural order of a table whose seqs have gaps). */
gint64 cowscope_event_list_get_seq (CowscopeEventList *self, guint position);

/* Reads the rows of @seqs (@n of them, in that order; a seq not in the
 * table is skipped), or with @seqs NULL the @n rows from position
 * @offset in seq order.  Any thread: the list's own state is not read. */
GPtrArray *cowscope_event_list_read_rows (CowscopeSessionDocument *document, const gint64 *seqs,
                                          guint n, guint offset, GError **error);

/* The position of event @seq, or -1 when it is not in the list. */
gint64 cowscope_event_list_position_of (CowscopeEventList *self, gint64 seq);

/* Reorders and filters the list: rows whose seq, time (ms from the
 * session's start), process, thread id or name, event type, operation or
 * values contain @filter (case-insensitively; NULL or "" keeps every
 * row), ordered by @order.  The list changes (one items-changed) when the
 * query finishes; a cancelled or failed query leaves it as it was. */
void cowscope_event_list_query_async (CowscopeEventList *self, CowscopeEventOrder order,
                                      gboolean descending, const char *filter,
                                      GCancellable *cancellable, GAsyncReadyCallback callback,
                                      gpointer user_data);
gboolean cowscope_event_list_query_finish (CowscopeEventList *self, GAsyncResult *result,
                                           GError **error);

G_END_DECLS
