/* cowscope-tensor-search.h — finding tensors by name across a session's
 * time, for the timeline's search: the names to complete from, and the
 * copy events of the tensors a name matches (their materializations, the
 * lazy clones from or into them and the simulate-mode warnings on them),
 * in time order, so the timeline can step through them.
 *
 * Both run in a worker thread over the derived tables (tensors,
 * materializations, lazy_clones, violations), one pass over each. */
#pragma once

#include <gio/gio.h>

#include "cowscope-copy-explanation.h"
#include "cowscope-session-document.h"

G_BEGIN_DECLS

/* At most this many names are offered for completion (the most common
 * first when there are more). */
#define COWSCOPE_TENSOR_SEARCH_MAX_NAMES 20000

/* The distinct tensor names of @document, sorted (a NULL-terminated
 * array), or NULL with @error. */
void cowscope_tensor_search_names_async (CowscopeSessionDocument *document,
                                         GCancellable *cancellable, GAsyncReadyCallback callback,
                                         gpointer user_data);
GStrv cowscope_tensor_search_names_finish (GAsyncResult *result, GError **error);

typedef struct {
  char *text;       /* what was searched for */
  gboolean exact;   /* tensors named exactly @text (else: whose name
                     * contains it, ignoring ASCII case) */
  GArray *tensors;  /* CowscopeObjectRef (COWSCOPE_NODE_TENSOR) */
  GArray *events;   /* CowscopeObjectEvent, by time (cowscope-event-steps.h) */
} CowscopeTensorMatches;

void cowscope_tensor_matches_free (CowscopeTensorMatches *matches);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (CowscopeTensorMatches, cowscope_tensor_matches_free)

/* The tensors named @text, or, when none is, those whose name contains
 * it, and their events; in the calling thread.  NULL with @error when the
 * file cannot be read. */
CowscopeTensorMatches *cowscope_tensor_search_find (CowscopeSessionDocument *document,
                                                    const char *text,
                                                    GCancellable *cancellable, GError **error);

void cowscope_tensor_search_find_async (CowscopeSessionDocument *document, const char *text,
                                        GCancellable *cancellable, GAsyncReadyCallback callback,
                                        gpointer user_data);
CowscopeTensorMatches *cowscope_tensor_search_find_finish (GAsyncResult *result, GError **error);

G_END_DECLS
