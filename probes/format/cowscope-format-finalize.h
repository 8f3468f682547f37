/* cowscope-format-finalize.h — completing a session: everything the
 * readers of a finalized session rely on.
 *
 * cowscope_format_finalize() does it from the stored events, in one
 * transaction: the schema brought to the current version, the lookup
 * tables, `events` renumbered in time order if they are not, every
 * derived table (one pass of a session builder over the events,
 * cowscope-session-builder.h), the caller's symbolization of stack
 * frames, the session's span (meta.start_ns, end_ns), the views
 * (cowscope-format-views.h) and the meta totals; then meta.finalized = 1
 * and a single file (journal_mode = DELETE).  Running it again rebuilds
 * the same result, which is how `cowscope-cli finalize` completes a
 * session whose recorder died and upgrades an older one in place;
 * readers upgrade a copy (cowscope_format_finalized_copy()).
 */
#pragma once

#include <glib.h>
#include <sqlite3.h>

G_BEGIN_DECLS

/* Events between two checkpoints of live objects. */
#define COWSCOPE_CHECKPOINT_INTERVAL 65536

/* Fills in the stack frames of @db that have no module yet (frames.module
 * IS NULL), inside the finalizer's transaction; FALSE with @error. */
typedef gboolean (*CowscopeSymbolizeFunc) (sqlite3 *db, const char *path, GError **error);

/* Finalizes the session open (read-write, no transaction) in @db; @path
 * names it in messages.  @symbolize may be NULL: frames stay as they are
 * (a session finalized before keeps its symbols).  FALSE with @error
 * (COWSCOPE_SESSION_ERROR) and nothing changed on failure. */
gboolean cowscope_format_finalize (sqlite3 *db, const char *path, CowscopeSymbolizeFunc symbolize,
                                   GError **error);

/* A finalized copy of the session @path, made in a new temporary file
 * whose name it returns (the caller deletes it); @path itself is only
 * read.  For readers of a session that is not current: one never
 * finalized is finalized (its frames stay unsymbolized); one finalized by
 * an older version gets what this version derives and that one did not
 * (the packed summaries, the IPC tables, the span and the views), its
 * derived tables kept.  NULL
 * with @error when @path cannot be opened or the copy cannot be written. */
char *cowscope_format_finalized_copy (const char *path, GError **error);

/* For a session whose recorder died before finalizing it: brings the
 * schema to the current version and makes each thread's counters agree
 * with what the database holds.  Its events are counted from `events`;
 * records it had produced that never reached the database (in flight
 * when the recorder died) count as dropped, so produced = stored +
 * dropped holds again.  In the caller's transaction, if any. */
gboolean cowscope_format_reconcile_counts (sqlite3 *db, const char *path, GError **error);

G_END_DECLS
