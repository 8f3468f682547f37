/* cowscope-session-tables-private.h — session tables over a connection
 * opened elsewhere (tests and fuzzers: an in-memory copy of a file). */
#pragma once

#include "cowscope-session-tables.h"

G_BEGIN_DECLS

/* Tables over @db, a finalized session already validated with
 * cowscope_format_adopt(), named @path in messages; takes @db (closed
 * with the tables, also on failure).  NULL with @error. */
CowscopeSessionTables *cowscope_session_tables_new_for_db (sqlite3 *db, const char *path,
                                                           GError **error);

G_END_DECLS
