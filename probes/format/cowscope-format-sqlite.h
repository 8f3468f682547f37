/* cowscope-format-sqlite.h — the SQL a session needs beyond SQLite's
 * own: the `cowscope_events` module behind the `events` table
 * (cowscope-events-vtab.h).  Every connection the format library opens
 * gets it; so does every connection a process opens once it called
 * cowscope_format_register_everywhere() (tests and tools that open
 * sessions with plain sqlite3_open()).  The sqlite3 shell gets it from
 * the loadable extension (README, "Session database"). */
#pragma once

#include <glib.h>
#include <sqlite3.h>

G_BEGIN_DECLS

/* Registers the session's modules on @db; an SQLite result code. */
int cowscope_format_register_sqlite (sqlite3 *db);

/* Registers them on every connection this process opens from now on
 * (sqlite3_auto_extension); idempotent. */
void cowscope_format_register_everywhere (void);

G_END_DECLS
