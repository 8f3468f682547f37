/* cowscope-session-document-private.h — the connection pool, live
 * snapshots and the decoded-chunk store's knobs. */
#pragma once

#include <sqlite3.h>

#include "cowscope-packed-lane.h"
#include "cowscope-session-document.h"

G_BEGIN_DECLS

/* A connection for the calling thread's exclusive use until released
 * (opened and validated on demand); NULL with @error when the file can no
 * longer be opened. */
sqlite3 *cowscope_session_document_acquire_db (CowscopeSessionDocument *self,
                                               GError **error);
void cowscope_session_document_release_db (CowscopeSessionDocument *self, sqlite3 *db);

/* An in-memory document of @lanes (CowscopeTimelineLane, referenced) and
 * the COWSCOPE_N_COUNTERS @counters, for a session still being recorded
 * (cowscope-live-session.c); meta.finalized reads "0". */
CowscopeSessionDocument *cowscope_session_document_new_snapshot (const char *path,
                                                                 gint64 start_ns,
                                                                 gint64 end_ns,
                                                                 guint64 n_events,
                                                                 GPtrArray *lanes,
                                                                 CowscopeTimelineLane *const *counters);

/* Loads @path as the model did before lazy lanes: every lane's instants
 * decoded into memory at open (for benchmarks and tests that compare the
 * two designs). */
CowscopeSessionDocument *cowscope_session_document_load_eager (const char *path,
                                                               GError **error);

/* The most bytes of decoded timeline chunks the document keeps (64 MiB by
 * default; at least one chunk is kept whatever the budget).  Queries give
 * the same answers whatever it is. */
void cowscope_session_document_set_chunk_budget (CowscopeSessionDocument *self, gsize bytes);
void cowscope_session_document_get_chunk_stats (CowscopeSessionDocument *self,
                                                CowscopeChunkStoreStats *stats);

G_END_DECLS
