/* cowscope-session-document.h — one recorded session, opened read-only.
 *
 * Loading (in a GTask thread, with progress reported through the caller's
 * main context) opens the file through the session format
 * (cowscope-format-open.h says what is refused; an older session is read
 * from a finalized copy, its own file untouched), then reads the
 * finalizer's packed timeline lanes (Sysprof's "index, don't parse into
 * objects"): per lane its chunks' times and counts, decoded lazily
 * (cowscope-packed-lane.h), its spans and the counter tracks.  Everything
 * else (the sharing graph, copy explanations, table rows) is read on
 * demand with indexed queries.
 *
 * Thread-safety: a loaded document is immutable; every method may be
 * called from any thread.  SQLite connections come from a small pool
 * (one connection per thread at a time, SQLITE_OPEN_NOMUTEX), so a graph
 * rebuild in a worker thread never blocks a table row read on the main
 * thread.
 */
#pragma once

#include <gio/gio.h>

#include "cowscope-format-error.h" /* the errors a document reports: COWSCOPE_SESSION_ERROR */
#include "cowscope-session-types.h"
#include "cowscope-timeline-lane.h"

G_BEGIN_DECLS

#define COWSCOPE_TYPE_SESSION_DOCUMENT (cowscope_session_document_get_type ())
G_DECLARE_FINAL_TYPE (CowscopeSessionDocument, cowscope_session_document, COWSCOPE,
                      SESSION_DOCUMENT, GObject)

/* Called in the main context of whoever started the load, with the
 * fraction done (0..1); calls are coalesced, so some values are skipped. */
typedef void (*CowscopeLoadProgressFunc) (double fraction, gpointer user_data);

/* One process of the session (processes table). */
typedef struct {
  guint32 pid;
  guint32 ppid;
  char *exe;
  char *cmdline;
  gint64 start_ns;
  gint64 end_ns;        /* -1 when unknown */
  char *end_reason;     /* 'exited', 'crashed', ..., or NULL */
  gint64 exit_status;   /* -1 when none */
  gint64 exit_signal;   /* -1 when none */
  char *gpu_status;
  /* A merged session's (cowscope-session-merge.h): the label of the
   * member the process came from ("rank 3") and its pid there; NULL and
   * pid otherwise. */
  char *group;
  guint32 original_pid;
} CowscopeProcessInfo;

/* Opens @path in a worker thread.  @progress (may be NULL) runs in the
 * thread-default main context of the caller; @callback too. */
void cowscope_session_document_load_async (const char *path,
                                           GCancellable *cancellable,
                                           CowscopeLoadProgressFunc progress,
                                           gpointer progress_data,
                                           GDestroyNotify progress_notify,
                                           GAsyncReadyCallback callback,
                                           gpointer user_data);
CowscopeSessionDocument *cowscope_session_document_load_finish (GAsyncResult *result,
                                                                GError **error);

/* The same, synchronously (for the CLI, tests and worker threads). */
CowscopeSessionDocument *cowscope_session_document_load (const char *path,
                                                         GCancellable *cancellable,
                                                         GError **error);

const char *cowscope_session_document_get_path (CowscopeSessionDocument *self);

/* Time bounds of every event and CUDA record (ns, CLOCK_MONOTONIC). */
gint64 cowscope_session_document_get_start_ns (CowscopeSessionDocument *self);
gint64 cowscope_session_document_get_end_ns (CowscopeSessionDocument *self);

/* Engine events; their seq runs from first_seq to last_seq. */
guint64 cowscope_session_document_get_n_events (CowscopeSessionDocument *self);
gint64 cowscope_session_document_get_first_seq (CowscopeSessionDocument *self);
gint64 cowscope_session_document_get_last_seq (CowscopeSessionDocument *self);

/* A meta value as text, or NULL. */
const char *cowscope_session_document_get_meta (CowscopeSessionDocument *self,
                                                const char *key);

/* The processes, ordered by pid. */
guint cowscope_session_document_get_n_processes (CowscopeSessionDocument *self);
const CowscopeProcessInfo *cowscope_session_document_get_process (CowscopeSessionDocument *self,
                                                                  guint position);

/* The lanes (CowscopeTimelineLane): threads by (pid, tid), then CUDA
 * streams, then the three counter tracks. */
GListModel *cowscope_session_document_get_lanes (CowscopeSessionDocument *self);

/* A schema-2 session's lanes decode their instants when a query first
 * needs them, so a damaged chunk shows only then: the lane's answers leave
 * it out (the timeline draws what it can).  This returns the first such
 * error (COWSCOPE_SESSION_ERROR_DAMAGED, or ..._FAILED when the file
 * could not be read) once, for the application to report; later calls
 * return NULL.  Thread-safe. */
GError *cowscope_session_document_take_query_error (CowscopeSessionDocument *self);

/* The lane of counter @counter. */
CowscopeTimelineLane *cowscope_session_document_get_counter_lane (CowscopeSessionDocument *self,
                                                                  CowscopeCounterKind counter);

/* The seq of the last event at or before @t (by time, then seq), or
 * first_seq - 1 when none is.  The sharing graph "at instant t" is the
 * state after that event. */
gint64 cowscope_session_document_seq_at_time (CowscopeSessionDocument *self, gint64 t,
                                              GError **error);

/* Names from the lookup tables ("add_", "materialize_end", ...); never
 * NULL ("unknown" / "op N" style fallbacks).  */
const char *cowscope_session_document_op_name (CowscopeSessionDocument *self, gint64 op);
const char *cowscope_session_document_event_type_name (CowscopeSessionDocument *self,
                                                       gint64 type);
/* The thread's name, or NULL. */
const char *cowscope_session_document_thread_name (CowscopeSessionDocument *self,
                                                   guint32 pid, gint64 tid);

G_END_DECLS
