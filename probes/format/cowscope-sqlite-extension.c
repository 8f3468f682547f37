/* cowscope-sqlite-extension.c — libcowscope-sqlite.so, the SQLite
 * extension installed with Cowscope, so that the sqlite3 shell reads a
 * session's `events` too:
 *
 *   sqlite3 s.cowscope '.load PREFIX/lib/<multiarch>/cowscope/libcowscope-sqlite' \
 *     'SELECT type, count(*) FROM events GROUP BY type'
 *
 * SQLite derives the entry point from the file name:
 * sqlite3_cowscopesqlite_init.  It carries the `cowscope_events` module (cowscope-events-vtab.c, built
 * with COWSCOPE_SQLITE_EXTENSION so that it calls SQLite through the
 * routines the shell hands over). */
#include "cowscope-sqlite-api.h"

#include "cowscope-events-vtab.h"

SQLITE_EXTENSION_INIT1

int sqlite3_cowscopesqlite_init (sqlite3 *db, char **error, const sqlite3_api_routines *api);

int
sqlite3_cowscopesqlite_init (sqlite3 *db, char **error, const sqlite3_api_routines *api)
{
  SQLITE_EXTENSION_INIT2 (api);
  (void) error;
  return cowscope_events_vtab_register (db);
}
