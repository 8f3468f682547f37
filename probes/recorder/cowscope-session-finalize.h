/* cowscope-session-finalize.h — completes a recorded session: the
 * format's finalizer (cowscope-format-finalize.h says what it derives)
 * with the recorder's symbolizer, which fills in the stack frames from
 * each process's saved memory map. */
#pragma once

#include <glib.h>
#include <sqlite3.h>

#include "cowscope-format-finalize.h"

G_BEGIN_DECLS

/* Finalizes the session open in @db (no transaction open); @path names
 * it in messages. */
gboolean cowscope_session_finalize (sqlite3 *db, const char *path, GError **error);

/* Opens the session file @path read-write (refusing files that are not
 * sessions or have a newer schema), checks it (quick_check, and the
 * format's rules on what was recorded), marks a session whose recorder
 * died (meta.recorder_killed = 1, target_end 'unknown' when missing; its
 * counts reconciled, cowscope_format_reconcile_counts()) and finalizes it
 * in place, upgrading an older schema; then checks it again
 * (integrity_check and every value).  A file found damaged, before or
 * after, whose recorded tables are sound is rebuilt from them into a new
 * file that replaces it, the damaged one kept as PATH.damaged; *@repaired
 * (may be NULL) then says what was damaged and where the damaged file
 * is, else it is NULL.  Damage in what was recorded is refused (FALSE,
 * COWSCOPE_SESSION_ERROR_DAMAGED) and @path is left as it was.  Never
 * TRUE for a file that fails integrity_check. */
gboolean cowscope_session_finalize_file (const char *path, char **repaired, GError **error);

G_END_DECLS
