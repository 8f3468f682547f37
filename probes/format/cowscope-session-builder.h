/* cowscope-session-builder.h — the tables a session derives from its
 * events, derived in one pass as the events arrive in time order, with
 * memory for what is still open only: finalizing costs what reading the
 * events costs.
 *
 * Each event goes at once into the tables it decides: an object's row
 * (allocations, storages, tensors, contexts) is written when the object
 * is freed, with the name its tensor was last given and the greatest
 * reference count its context reached; a lazy clone, a violation, a user
 * range (when it ends) and a materialization (when its end event comes:
 * the first of the same thread and storage) get their rows, a
 * materialization the lazy clone that made the sharing it ended.  The
 * builder holds only what is still open: live objects, unfinished
 * materializations, open ranges, the sharing of live contexts; the
 * timeline's instants and counters go to an index writer
 * (cowscope-format-index.h) as they come.  When the events are over,
 * cowscope_session_builder_finish() writes what is still open (never
 * freed, never ended), the IPC tables, the CUDA links and the packed
 * summaries with their checkpoints.
 *
 * These are the only derivation rules in the tree.
 * cowscope_format_finalize() runs a builder over the stored events, in
 * time order (cowscope_session_builder_run()).  The builder takes one
 * event at a time so that a recorder can derive while it records, once
 * it stores events in time order; the recorder does not do that yet.
 */
#pragma once

#include <glib.h>
#include <sqlite3.h>

#include "cowscope-event-chunk.h"

G_BEGIN_DECLS

typedef struct _CowscopeSessionBuilder CowscopeSessionBuilder;

/* A builder writing @db's derived tables (emptied now, with the packed
 * summaries), in the caller's transactions.  The strings already in
 * @db are known to it.  NULL with @error naming @path. */
CowscopeSessionBuilder *cowscope_session_builder_new (sqlite3 *db, const char *path,
                                                      GError **error);

/* Interned string @id of @pid (tensor and range names), before the first
 * event that names it. */
void cowscope_session_builder_string (CowscopeSessionBuilder *builder, guint32 pid, gint64 id,
                                      const char *value);

/* The next event, in seq order (which is time order).  FALSE with @error. */
gboolean cowscope_session_builder_event (CowscopeSessionBuilder *builder,
                                         const CowscopeEventRow *event, GError **error);

/* Writes what is left (see above).  @events_in_chunks: every event is in
 * event_chunks (else the checkpoints read them through `events`).  FALSE
 * with @error; the caller rolls back. */
gboolean cowscope_session_builder_finish (CowscopeSessionBuilder *builder,
                                          gboolean events_in_chunks, GError **error);

void cowscope_session_builder_free (CowscopeSessionBuilder *builder);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (CowscopeSessionBuilder, cowscope_session_builder_free)

/* Derives every table of @db from its stored events, all in event_chunks
 * and in time order, in the caller's transaction.  FALSE with @error. */
gboolean cowscope_session_builder_run (sqlite3 *db, const char *path, GError **error);

/* Creates the indexes of the derived tables that @db lacks (a session
 * finalized by an older version).  FALSE with @error. */
gboolean cowscope_session_builder_create_indexes (sqlite3 *db, const char *path, GError **error);

/* Derives only the IPC tables (empty, as an upgrade created them) from
 * @db's stored events: a session finalized before they existed. */
gboolean cowscope_session_builder_run_ipc (sqlite3 *db, const char *path, GError **error);

G_END_DECLS
