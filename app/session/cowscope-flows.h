/* cowscope-flows.h — the causal links of a selected event, as Perfetto's
 * flow arrows: from a lazy clone to each copy it later caused (a
 * materialization's lazy_clone_seq), and from an engine operation to the
 * CUDA record it issued (cuda_activity.external_id, as the copy
 * explanation finds it).
 *
 * For a materialization: the lazy clone that made the sharing, and the
 * CUDA copy it issued.  For a lazy clone: the materializations it caused.
 * Anything else has none.  The timeline draws the arrows between lanes:
 * each end says which lane (a thread, or a CUDA stream) and when. */
#pragma once

#include <gio/gio.h>

#include "cowscope-session-document.h"

G_BEGIN_DECLS

typedef enum {
  COWSCOPE_FLOW_LAZY_CLONE_TO_COPY,  /* lazy clone -> the materialization it caused */
  COWSCOPE_FLOW_OPERATION_TO_CUDA,   /* engine operation -> the CUDA record it issued */
} CowscopeFlowKind;

/* One end: thread @tid of @pid (device -1), or CUDA stream @tid on
 * device @device of @pid; at @ns.  @id: the event's seq, or the CUDA
 * record's cuda_activity.id. */
typedef struct {
  guint32 pid;
  gint64 tid;
  gint64 device;
  gint64 ns;
  gint64 id;
} CowscopeFlowEnd;

typedef struct {
  CowscopeFlowKind kind;
  CowscopeFlowEnd from;
  CowscopeFlowEnd to;
} CowscopeFlow;

/* The flows of event @seq (a GArray of CowscopeFlow, maybe empty), in the
 * calling thread; NULL with @error when the file cannot be read. */
GArray *cowscope_flows_find (CowscopeSessionDocument *document, gint64 seq,
                             GCancellable *cancellable, GError **error);

void cowscope_flows_find_async (CowscopeSessionDocument *document, gint64 seq,
                                GCancellable *cancellable, GAsyncReadyCallback callback,
                                gpointer user_data);
GArray *cowscope_flows_find_finish (GAsyncResult *result, GError **error);

G_END_DECLS
