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
 * sessions or have a newer schema), marks a session whose recorder died
 * (meta.recorder_killed = 1, target_end 'unknown' when missing) and
 * finalizes it in place, upgrading an older schema. */
gboolean cowscope_session_finalize_file (const char *path, GError **error);

G_END_DECLS
