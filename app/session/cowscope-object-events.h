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

#include "cowscope-copy-explanation.h"
#include "cowscope-session-document.h"

G_BEGIN_DECLS

/* One event to outline: where (thread) and when. */
typedef struct {
  gint64 seq;
  guint32 pid;
  gint64 tid;
  gint64 start_ns, end_ns;  /* equal for an instant */
} CowscopeObjectEvent;

/* Finds the materializations, lazy clones and violations that involve any
 * of @refs (copied; @n_refs may be 0), each once. */
void cowscope_object_events_find_async (CowscopeSessionDocument *document,
                                        const CowscopeObjectRef *refs, guint n_refs,
                                        GCancellable *cancellable,
                                        GAsyncReadyCallback callback, gpointer user_data);

/* A GArray of CowscopeObjectEvent in seq order, or NULL with @error. */
GArray *cowscope_object_events_find_finish (GAsyncResult *result, GError **error);

G_END_DECLS
