/* cowscope-sqlite-api.h — the SQLite API for the files that the format
 * library and the loadable SQLite extension share (the event chunks and
 * the `events` virtual table): compiled into the extension
 * (COWSCOPE_SQLITE_EXTENSION defined), every sqlite3_* call goes through
 * the routines the loading SQLite hands over, as sqlite3ext.h arranges;
 * in the library they are plain calls. */
#pragma once

#ifdef COWSCOPE_SQLITE_EXTENSION
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT3
#else
#include <sqlite3.h>
#endif
