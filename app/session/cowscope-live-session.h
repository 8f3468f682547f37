/* cowscope-live-session.h — a session followed while it is recorded.
 *
 * The recorder writes the session in WAL mode, so a read-only connection
 * can read it concurrently.  A reader thread polls `events` for rows
 * after the last one it saw (seq > last: while recording seq is the
 * order the recorder read the rings, so each batch is put in time order
 * first), applies them to a running state — per-thread lanes with their
 * instants and spans, the counter tracks, the live objects of the
 * storage sharing graph — and publishes, at most every @interval_ms, an
 * immutable snapshot: a CowscopeSessionDocument whose lanes the timeline
 * view draws as for any session, and the CowscopeSharingGraph of the
 * newest state ("now").  The main loop only swaps pointers.
 *
 * The snapshot document has lanes and bounds only: its database is not
 * finalized, so what needs the derived tables (graph at an instant,
 * explanations, tables) is not available on it.  Before the recorder
 * finalizes the session (it renumbers events and leaves WAL mode) the
 * reader must stop: cowscope_live_session_stop() closes its connection
 * and may be called from the recorder's thread.
 */
#pragma once

#include <gio/gio.h>

#include "cowscope-session-document.h"
#include "cowscope-sharing-graph.h"

G_BEGIN_DECLS

#define COWSCOPE_TYPE_LIVE_SESSION (cowscope_live_session_get_type ())
G_DECLARE_FINAL_TYPE (CowscopeLiveSession, cowscope_live_session, COWSCOPE, LIVE_SESSION,
                      GObject)

/* Per-type counts of what has been read so far. */
typedef struct {
  guint64 events;
  guint64 lazy_clones;   /* lazy clones that shared (not eager copies) */
  guint64 eager_copies;  /* lazy clones that copied at once */
  guint64 copies;        /* materializations that copied */
  guint64 steals;        /* materializations that stole */
  guint64 bytes_copied;  /* by copies and eager copies */
} CowscopeLiveTotals;

CowscopeLiveSession *cowscope_live_session_new (const char *path);

/* Starts the reader thread (once).  Snapshots are delivered in the
 * calling thread's thread-default main context, each followed by the
 * "updated" signal; at most one every @interval_ms (0: 200). */
void cowscope_live_session_start (CowscopeLiveSession *self, guint interval_ms);

/* Stops the reader and closes its database connection; returns once it
 * has.  Any thread; idempotent.  No snapshot is delivered afterwards. */
void cowscope_live_session_stop (CowscopeLiveSession *self);

/* As cowscope_live_session_stop(), after reading what the recorder has
 * written that the reader has not (within half a second) and delivering
 * one last snapshot of it, even if the reader was never started: so
 * that a program too short for a first snapshot is still shown.  For
 * the recorder's thread, just before it finalizes; nothing when already
 * stopped. */
void cowscope_live_session_finish (CowscopeLiveSession *self);

/* The newest snapshot delivered (NULL before the first). */
CowscopeSessionDocument *cowscope_live_session_get_document (CowscopeLiveSession *self);
CowscopeSharingGraph *cowscope_live_session_get_graph (CowscopeLiveSession *self);
void cowscope_live_session_get_totals (CowscopeLiveSession *self, CowscopeLiveTotals *totals);
/* Snapshots delivered so far. */
guint cowscope_live_session_get_n_updates (CowscopeLiveSession *self);

G_END_DECLS
