/* cowscope-format-schema.h — the session schema: session-schema.sql (in
 * this folder, embedded in the library at build time and installed for
 * people who query sessions with the sqlite3 shell), its version and the
 * tables each version promises.
 *
 * The version is the schema file's own `PRAGMA user_version`; a session
 * also stores it as meta.schema_version.  Version 1 lacked the packed
 * timeline and graph-state tables that version 2 added; version 3 added
 * thread_events, process_identity and peer_faults; version 4 stores the
 * raw events in packed chunks behind the `events` virtual table.  The
 * README's "Session database" has the policy.
 */
#pragma once

#include <glib.h>
#include <sqlite3.h>

G_BEGIN_DECLS

/* meta.format of every session. */
#define COWSCOPE_FORMAT_NAME "cowscope-session"

/* meta.index_format: the layout of the packed BLOBs
 * (cowscope-packed-records.h) a finalized session of this build holds. */
#define COWSCOPE_FORMAT_INDEX_VERSION 1

/* The schema version this build writes and reads up to. */
int cowscope_format_schema_version (void);

/* The schema's SQL text. */
const char *cowscope_format_schema_sql (void);

/* The tables a session of schema @version holds from the moment it is
 * created (NULL-terminated), or NULL for a version this build does not
 * know. */
const char *const *cowscope_format_required_tables (int version);

/* Creates the schema in the empty database @db; FALSE with @db's error.
 * Its lookup tables are empty (cowscope_format_fill_lookup_tables()). */
gboolean cowscope_format_create_schema (sqlite3 *db);

/* Brings @db, a session of an older or the current version, to the
 * current one: creates the tables it lacks and sets PRAGMA user_version
 * and meta.schema_version.  FALSE with @db's error. */
gboolean cowscope_format_upgrade_schema (sqlite3 *db);

G_END_DECLS
