/* cowscope-copy-explanation.h — the causal chain behind one copy (a
 * materialization) or one simulate-mode warning (a violation).
 *
 * For a materialization: the lazy clone that created the sharing (with its
 * stack), the write that triggered the copy (op, thread, stack), copy or
 * steal and why, bytes, the time spent waiting for the context's lock, the
 * CUDA copy that executed it (cuda_activity.external_id within the
 * materialization's events) and the objects to highlight.  For a
 * violation: the writer and the accessor tensors, their generations, the
 * access and its stack, and the lazy clone that made them share. */
#pragma once

#include <gio/gio.h>

#include "cowscope-session-document.h"
#include "cowscope-sharing-graph.h"

G_BEGIN_DECLS

typedef enum {
  COWSCOPE_EXPLANATION_MATERIALIZATION,
  COWSCOPE_EXPLANATION_VIOLATION,
} CowscopeExplanationKind;

/* An object to highlight in the graph and the timeline. */
typedef struct {
  CowscopeNodeKind kind;
  guint32 pid;
  guint64 id;
} CowscopeObjectRef;

#define COWSCOPE_TYPE_COPY_EXPLANATION (cowscope_copy_explanation_get_type ())
G_DECLARE_FINAL_TYPE (CowscopeCopyExplanation, cowscope_copy_explanation, COWSCOPE,
                      COPY_EXPLANATION, GObject)

/* Explains the materialization or violation recorded at events.seq @seq
 * (a MATERIALIZE_BEGIN, its MATERIALIZE_END, or a SIMULATE_VIOLATION), in
 * the calling thread.  COWSCOPE_SESSION_ERROR_NO_SUCH_OBJECT
 * when @seq is neither. */
CowscopeCopyExplanation *cowscope_copy_explanation_new (CowscopeSessionDocument *document,
                                                        gint64 seq, GError **error);
/* The same in a GTask thread. */
void cowscope_copy_explanation_new_async (CowscopeSessionDocument *document, gint64 seq,
                                          GCancellable *cancellable,
                                          GAsyncReadyCallback callback, gpointer user_data);
CowscopeCopyExplanation *cowscope_copy_explanation_new_finish (GAsyncResult *result,
                                                               GError **error);

CowscopeExplanationKind cowscope_copy_explanation_get_kind (CowscopeCopyExplanation *self);
/* The materialization's begin seq, or the violation's seq. */
gint64 cowscope_copy_explanation_get_seq (CowscopeCopyExplanation *self);
/* The seq of the MATERIALIZE_END (materializations; else -1). */
gint64 cowscope_copy_explanation_get_end_seq (CowscopeCopyExplanation *self);
guint32 cowscope_copy_explanation_get_pid (CowscopeCopyExplanation *self);
gint64 cowscope_copy_explanation_get_tid (CowscopeCopyExplanation *self);
const char *cowscope_copy_explanation_get_thread_name (CowscopeCopyExplanation *self);
gint64 cowscope_copy_explanation_get_begin_ns (CowscopeCopyExplanation *self);
gint64 cowscope_copy_explanation_get_end_ns (CowscopeCopyExplanation *self);
/* The operation whose write triggered the copy (or made the access). */
const char *cowscope_copy_explanation_get_op (CowscopeCopyExplanation *self);
/* CowscopeStackFrame, innermost first (empty without stacks). */
GListModel *cowscope_copy_explanation_get_stack (CowscopeCopyExplanation *self);

/* Materializations: "copy", "steal" or "failed", the reason in words,
 * bytes moved and the lock wait. */
const char *cowscope_copy_explanation_get_mode (CowscopeCopyExplanation *self);
const char *cowscope_copy_explanation_get_reason (CowscopeCopyExplanation *self);
gboolean cowscope_copy_explanation_get_copy_discarded (CowscopeCopyExplanation *self);
guint64 cowscope_copy_explanation_get_nbytes (CowscopeCopyExplanation *self);
gint64 cowscope_copy_explanation_get_lock_wait_ns (CowscopeCopyExplanation *self);
guint64 cowscope_copy_explanation_get_storage_id (CowscopeCopyExplanation *self);
guint64 cowscope_copy_explanation_get_context_id (CowscopeCopyExplanation *self);
guint64 cowscope_copy_explanation_get_tensor_id (CowscopeCopyExplanation *self);
/* The name of the tensor written, or NULL. */
const char *cowscope_copy_explanation_get_tensor_name (CowscopeCopyExplanation *self);

/* The lazy clone that created the sharing: its seq (-1: unknown), time,
 * thread, op, the tensors and storages and its stack. */
gint64 cowscope_copy_explanation_get_lazy_clone_seq (CowscopeCopyExplanation *self);
gint64 cowscope_copy_explanation_get_lazy_clone_ns (CowscopeCopyExplanation *self);
gint64 cowscope_copy_explanation_get_lazy_clone_tid (CowscopeCopyExplanation *self);
const char *cowscope_copy_explanation_get_lazy_clone_op (CowscopeCopyExplanation *self);
guint64 cowscope_copy_explanation_get_lazy_clone_source_tensor (CowscopeCopyExplanation *self);
guint64 cowscope_copy_explanation_get_lazy_clone_result_tensor (CowscopeCopyExplanation *self);
guint64 cowscope_copy_explanation_get_lazy_clone_source_storage (CowscopeCopyExplanation *self);
guint64 cowscope_copy_explanation_get_lazy_clone_result_storage (CowscopeCopyExplanation *self);
/* The names of the lazy clone's tensors, or NULL. */
const char *cowscope_copy_explanation_get_lazy_clone_source_name (CowscopeCopyExplanation *self);
const char *cowscope_copy_explanation_get_lazy_clone_result_name (CowscopeCopyExplanation *self);
GListModel *cowscope_copy_explanation_get_lazy_clone_stack (CowscopeCopyExplanation *self);

/* The CUDA record that executed the copy: its cuda_activity.id (-1: none),
 * kind name, times, bytes, device and stream. */
gint64 cowscope_copy_explanation_get_cuda_id (CowscopeCopyExplanation *self);
const char *cowscope_copy_explanation_get_cuda_kind (CowscopeCopyExplanation *self);
gint64 cowscope_copy_explanation_get_cuda_start_ns (CowscopeCopyExplanation *self);
gint64 cowscope_copy_explanation_get_cuda_end_ns (CowscopeCopyExplanation *self);
guint64 cowscope_copy_explanation_get_cuda_bytes (CowscopeCopyExplanation *self);
gint64 cowscope_copy_explanation_get_cuda_stream (CowscopeCopyExplanation *self);
gint64 cowscope_copy_explanation_get_cuda_device (CowscopeCopyExplanation *self);

/* Violations: "read" or "write", the writer and accessor tensors (names
 * may be NULL) and the generations. */
const char *cowscope_copy_explanation_get_access (CowscopeCopyExplanation *self);
guint64 cowscope_copy_explanation_get_writer_tensor (CowscopeCopyExplanation *self);
const char *cowscope_copy_explanation_get_writer_name (CowscopeCopyExplanation *self);
guint64 cowscope_copy_explanation_get_accessor_tensor (CowscopeCopyExplanation *self);
const char *cowscope_copy_explanation_get_accessor_name (CowscopeCopyExplanation *self);
gint64 cowscope_copy_explanation_get_writer_generation (CowscopeCopyExplanation *self);
gint64 cowscope_copy_explanation_get_accessor_generation (CowscopeCopyExplanation *self);

/* A tensor as the sharing graph names it: @name, or "tensor @id" when it
 * has none (a new string). */
char *cowscope_tensor_label (const char *name, guint64 id);

/* One translated sentence summing it up. */
const char *cowscope_copy_explanation_get_summary (CowscopeCopyExplanation *self);

/* The objects to highlight. */
const CowscopeObjectRef *cowscope_copy_explanation_get_highlights (CowscopeCopyExplanation *self,
                                                                   guint *n_refs);

G_END_DECLS
