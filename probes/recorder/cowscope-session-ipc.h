/* cowscope-session-ipc.h — the cross-process sharing tables derived when
 * a session is finalized.
 *
 * From the IPC trace events (send, receive, release, limbo enter, limbo
 * free) of every process in the session: `ipc_refs`, one row per send
 * (one counter slot: the producer, the block, the consumer that received
 * it and when each step happened), and `ipc_blocks`, one row per sent
 * block.  Columns: README, "Session database".  Creates the tables when
 * the session predates them; running it again rebuilds the same rows.
 */
#pragma once

#include <glib.h>
#include <sqlite3.h>

G_BEGIN_DECLS

/* Fills ipc_refs and ipc_blocks from `events` and the derived object
 * tables (allocations, storages), inside the caller's transaction. */
gboolean cowscope_session_derive_ipc (sqlite3 *db, const char *path, GError **error);

G_END_DECLS
