/* cowscope-wal-checkpointer.h — WAL checkpoints off the writer's thread.
 *
 * A checkpoint copies the WAL back into the database and fsyncs it; on
 * the writer's thread that stalls draining for tens of milliseconds,
 * long enough for BLOCK-mode producers to time out and drop.  The
 * session's writer connection therefore runs with wal_autocheckpoint = 0
 * and this thread, on a connection of its own, runs PASSIVE checkpoints
 * (which never block the writer) whenever the WAL has grown, keeping the
 * WAL file bounded.
 */
#pragma once

#include <glib.h>
#include <sqlite3.h>

G_BEGIN_DECLS

typedef struct _CowscopeWalCheckpointer CowscopeWalCheckpointer;

/* Starts checkpointing the WAL database at @path, triggered by the
 * commits of @writer_db (whose WAL hook it takes over).  Returns NULL
 * (the writer then keeps SQLite's automatic checkpoints) when the second
 * connection cannot be opened. */
CowscopeWalCheckpointer *cowscope_wal_checkpointer_start (const char *path,
                                                          sqlite3 *writer_db);

/* Stops the thread, closes its connection and gives the writer its
 * automatic checkpoints back.  Call from the writer's thread (or once it
 * is idle).  NULL is ignored. */
void cowscope_wal_checkpointer_stop (CowscopeWalCheckpointer *checkpointer);

G_END_DECLS
