/* cowscope-format-events.h — reading a session's engine events back, in
 * order and in chunks: the inverse of the recorder's writer, for code
 * that copies events from one session into another (`cowscope-cli
 * merge`).  The one place that knows how events are stored, beside the
 * writer, so that a change of storage changes both together.
 */
#pragma once

#include <glib.h>
#include <sqlite3.h>

#include "cow-trace.h"

G_BEGIN_DECLS

/* One event as the recorder received it: the engine's event (pid and tid
 * included) and its call stack in this session (stacks.id, 0: none). */
typedef struct {
  CowTraceEvent event;
  gint64 stack_id;
} CowscopeFormatEventRow;

typedef struct _CowscopeFormatEventReader CowscopeFormatEventReader;

/* Reads the events of the session open in @db (named @path in messages)
 * in their order (time order once finalized).  NULL with @error
 * (COWSCOPE_SESSION_ERROR) when they cannot be read. */
CowscopeFormatEventReader *cowscope_format_event_reader_new (sqlite3 *db, const char *path,
                                                             GError **error);

/* Fills @rows with the next events, at most @capacity: how many (0 at
 * the end), or -1 with @error.  Memory does not grow with the session:
 * each call reads one chunk. */
gssize cowscope_format_event_reader_next (CowscopeFormatEventReader *reader,
                                          CowscopeFormatEventRow *rows, gsize capacity,
                                          GError **error);

void cowscope_format_event_reader_free (CowscopeFormatEventReader *reader);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (CowscopeFormatEventReader, cowscope_format_event_reader_free)

G_END_DECLS
