/* cowscope-events-vtab.h — `events` as SQL: the virtual table module
 * `cowscope_events` that serves the rows of the packed event chunks
 * (cowscope-event-store.h), so that every query over `events` — the
 * application's, `cowscope-cli`'s, a user's in the sqlite3 shell with the
 * extension loaded — reads them as if they were a table.
 *
 * Reading: a constraint on seq, and on ts when the session is in time
 * order, picks the chunks to decode; a constraint on type skips chunks
 * that hold no such event without decoding them; ORDER BY seq (and ts,
 * when in time order), ascending or descending, costs nothing.  A damaged
 * chunk fails the query with SQLITE_CORRUPT and a message saying so.
 *
 * Writing: INSERT appends (seq, when given, must be greater than every
 * event's so far; ts, pid, tid, type, op and aux must be integers); the
 * events of a transaction are written as chunks when it commits.  UPDATE
 * and DELETE are refused: events are a log.
 */
#pragma once

#include "cowscope-sqlite-api.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The module's name, as session schemas declare it. */
#define COWSCOPE_EVENTS_MODULE "cowscope_events"

/* Registers the module on @db; an SQLite result code. */
int cowscope_events_vtab_register (sqlite3 *db);

#ifdef __cplusplus
}
#endif
