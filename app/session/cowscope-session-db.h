/* cowscope-session-db.h — read-only SQLite connections to a session
 * database, opened defensively (private to the session model).
 *
 * Thread-safety: an sqlite3 connection opened here is used by one thread
 * at a time (SQLITE_OPEN_NOMUTEX).  CowscopeSessionDocument owns one
 * connection behind a mutex for short queries; bulk work (loading the lane
 * index) opens its own connection per worker thread.
 */
#pragma once

#include <glib.h>
#include <sqlite3.h>

G_BEGIN_DECLS

/* The newest session schema this build reads. */
#define COWSCOPE_SESSION_MODEL_SCHEMA_VERSION 3

typedef struct {
  gint64 schema_version;
  gboolean finalized;
  gint64 checkpoint_interval; /* 0 when unknown */
} CowscopeSessionDbInfo;

/* Opens @path read-only and validates it before any other query: it must
 * be an SQLite file (header), carry PRAGMA user_version and meta.format =
 * 'cowscope-session' with a schema version this build reads, hold every
 * table that version promises, not be truncated, and (when
 * @require_finalized) have meta.finalized = 1.  On success returns the
 * connection and fills @info (may be NULL); on failure returns NULL with a
 * COWSCOPE_SESSION_MODEL_ERROR naming the file and the problem. */
sqlite3 *cowscope_session_db_open (const char *path,
                                   gboolean require_finalized,
                                   CowscopeSessionDbInfo *info,
                                   GError **error);

/* Sets @error from the last failure on @db (or @rc): SQLITE_CORRUPT and
 * SQLITE_NOTADB become ..._DAMAGED, anything else ..._FAILED.  The
 * message names @path and @what (the operation). */
void cowscope_session_db_set_error (GError **error, sqlite3 *db, int rc,
                                    const char *path, const char *what);

/* Prepares @sql on @db; NULL with @error set on failure. */
sqlite3_stmt *cowscope_session_db_prepare (sqlite3 *db, const char *path,
                                           const char *sql, GError **error);

/* Returns the integer in column @col of @stmt, or @fallback when it is
 * NULL or not an integer (files are untrusted: NULLs are handled). */
gint64 cowscope_session_db_column_int (sqlite3_stmt *stmt, int col,
                                       gint64 fallback);

/* Returns column @col as a newly allocated UTF-8 string, or NULL when it
 * is NULL; invalid UTF-8 is replaced, so the result is always valid. */
char *cowscope_session_db_column_text (sqlite3_stmt *stmt, int col);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (sqlite3, sqlite3_close)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (sqlite3_stmt, sqlite3_finalize)

/* Whether @db carries the packed timeline lanes and graph checkpoints of
 * schema 2 (meta.index_format this model reads, and the tables); a
 * schema-1 session does not, and is read from its rows. */
gboolean cowscope_session_db_has_packed_index (sqlite3 *db);

G_END_DECLS
