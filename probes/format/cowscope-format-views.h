/* cowscope-format-views.h — the session views: session-views.sql (in this
 * folder, embedded in the library at build time and installed beside the
 * schema), readable views over the derived tables that people query with
 * the sqlite3 shell and that reports read (call sites).
 *
 * They read only what finalizing derives, never `events`, and only
 * SQLite's built-in functions.  Finalizing creates them in the session
 * (replacing older definitions); a reader creates them as TEMP views on
 * its own connection, which shadow whatever the file holds, so that a
 * session finalized by an older version, or a file that defines a view of
 * the same name, is read with this version's rules.
 */
#pragma once

#include <glib.h>
#include <sqlite3.h>

G_BEGIN_DECLS

/* The views' SQL text (CREATE VIEW statements and their documentation). */
const char *cowscope_format_views_sql (void);

/* The names of the views, in definition order (NULL-terminated, static). */
const char *const *cowscope_format_view_names (void);

/* Creates the views in the main schema of @db (writable, inside the
 * caller's transaction), dropping the views of the same names first.
 * FALSE with @db's error. */
gboolean cowscope_format_create_views (sqlite3 *db);

/* Creates the views as TEMP views of the connection @db (read-only is
 * fine); a second call on one connection does nothing.  FALSE with @db's
 * error. */
gboolean cowscope_format_create_temp_views (sqlite3 *db);

G_END_DECLS
