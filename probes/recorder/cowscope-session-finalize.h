/* cowscope-session-finalize.h — completes a recorded session.
 *
 * Finalization turns the raw event log into what the app queries: the
 * enum lookup tables, the derived object tables (allocations, storages,
 * tensors, contexts, lazy_clones, materializations, violations, ranges,
 * marks), symbolized frames, indexes, checkpoints of live objects and the
 * meta totals, in one transaction, then sets meta.finalized = 1 and
 * leaves the database as a single file (journal_mode = DELETE).  Running
 * it again rebuilds the same result.
 */
#pragma once

#include <glib.h>
#include <sqlite3.h>

G_BEGIN_DECLS

/* Events between two checkpoints of live objects. */
#define COWSCOPE_CHECKPOINT_INTERVAL 65536

/* Finalizes the session open in @db (no transaction open); @path names
 * it in messages. */
gboolean cowscope_session_finalize (sqlite3 *db, const char *path, GError **error);

/* Opens the session file @path (refusing files that are not sessions or
 * have a newer schema), marks a session whose recorder died
 * (meta.recorder_killed = 1, target_end 'unknown' when missing) and
 * finalizes it. */
gboolean cowscope_session_finalize_file (const char *path, GError **error);

G_END_DECLS
