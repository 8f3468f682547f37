/* cowscope-object-events.h — the copy events an object took part in.
 *
 * When objects are highlighted (the ones a copy explanation involves, or
 * a row chosen in the objects table), the timeline outlines the events
 * that concern them: the materializations of, lazy clones from or into,
 * and simulate-mode warnings on those objects, by thread and time, so an
 * event is outlined even where it shares a pixel with others.  They come
 * from the derived tables (indexed by storage and context), on a worker
 * thread. */
#pragma once

#include <gio/gio.h>
#include <sqlite3.h>

#include "cowscope-copy-explanation.h"
#include "cowscope-session-document.h"

G_BEGIN_DECLS

/* One event to outline: where (thread) and when. */
typedef struct {
  gint64 seq;
  guint32 pid;
  gint64 tid;
  gint64 start_ns, end_ns;  /* equal for an instant */
  guint16 kind;             /* CowscopeItemKind: copy, steal, failed, lazy clone,
                             * eager copy or warning */
} CowscopeObjectEvent;

/* Finds the materializations, lazy clones and violations that involve any
 * of @refs (copied; @n_refs may be 0), each once. */
void cowscope_object_events_find_async (CowscopeSessionDocument *document,
                                        const CowscopeObjectRef *refs, guint n_refs,
                                        GCancellable *cancellable,
                                        GAsyncReadyCallback callback, gpointer user_data);

/* A GArray of CowscopeObjectEvent in seq order, or NULL with @error. */
GArray *cowscope_object_events_find_finish (GAsyncResult *result, GError **error);

/* The queries (without their WHERE) that find object events in the
 * derived tables, each returning seq, pid, tid, start, end and what the
 * event is in a word: a materialize_kinds name ("copy", "steal",
 * "failed"), "lazy", "eager" (a lazy clone that copied) or "warning".
 * The tensor search (cowscope-tensor-search.h) adds its own WHERE. */
#define COWSCOPE_OBJECT_EVENTS_FROM_MATERIALIZATIONS                                        \
  "SELECT seq, pid, tid, begin_ts, end_ts,"                                                  \
  " (SELECT name FROM materialize_kinds WHERE id = kind) FROM materializations"
#define COWSCOPE_OBJECT_EVENTS_FROM_LAZY_CLONES                                             \
  "SELECT seq, pid, tid, ts, ts, CASE WHEN context_id IS NULL THEN 'eager' ELSE 'lazy' END" \
  " FROM lazy_clones"
#define COWSCOPE_OBJECT_EVENTS_FROM_VIOLATIONS                                              \
  "SELECT seq, pid, tid, ts, ts, 'warning' FROM violations"

/* The CowscopeItemKind of the word above; OTHER for anything else (NULL
 * included). */
guint16 cowscope_object_event_kind_from_word (const char *word);

/* Reads the row @stmt (one of the queries above) is on into @ev. */
void cowscope_object_event_from_row (sqlite3_stmt *stmt, CowscopeObjectEvent *ev);

G_END_DECLS
