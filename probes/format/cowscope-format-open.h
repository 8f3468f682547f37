/* cowscope-format-open.h — opening a session file, defensively: the one
 * opener of the session format, for the finalizer, the session model,
 * the command-line tool and the application.
 *
 * Session files are untrusted input.  Before any other query the file
 * must exist, be a regular SQLite file that is not shorter than its
 * header promises, carry meta.format = 'cowscope-session' and a schema
 * version (PRAGMA user_version or meta.schema_version, the greater) this
 * build reads, and hold every table that version promises.  Failures are
 * COWSCOPE_SESSION_ERROR with one message that names the file.
 *
 * Thread-safety: a connection opened here is used by one thread at a
 * time (SQLITE_OPEN_NOMUTEX).
 */
#pragma once

#include <glib.h>
#include <sqlite3.h>

#include "cowscope-format-error.h"

G_BEGIN_DECLS

typedef enum {
  COWSCOPE_FORMAT_OPEN_READ_ONLY = 0,
  COWSCOPE_FORMAT_OPEN_READ_WRITE = 1 << 0,  /* to finalize it */
  COWSCOPE_FORMAT_OPEN_FINALIZED = 1 << 1,   /* refuse one that was not finalized */
} CowscopeFormatOpenFlags;

typedef struct {
  int schema_version;         /* the file's */
  gboolean finalized;         /* meta.finalized = 1 */
  /* Finalized with this build's schema and packed layout: its packed
   * tables can be read.  A session that is not current is read from a
   * finalized copy (cowscope-format-finalize.h). */
  gboolean current;
  gint64 checkpoint_interval; /* 0 when unknown */
} CowscopeFormatInfo;

/* Opens and validates @path (see above); fills @info (may be NULL). */
sqlite3 *cowscope_format_open (const char *path, CowscopeFormatOpenFlags flags,
                               CowscopeFormatInfo *info, GError **error);

/* The same checks on a connection the caller opened itself (an in-memory
 * copy of a file, as the fuzzer's), named @path in messages: configures
 * it for an untrusted file and validates it.  FALSE with @error; @db
 * stays the caller's either way. */
gboolean cowscope_format_adopt (sqlite3 *db, const char *path, CowscopeFormatOpenFlags flags,
                                CowscopeFormatInfo *info, GError **error);

/* Prepares @sql on @db, its vocabulary names replaced by their codes
 * (cowscope_format_prepare()); NULL with @error naming @path on failure. */
sqlite3_stmt *cowscope_format_statement (sqlite3 *db, const char *path, const char *sql,
                                         GError **error);

/* TRUE when the main schema of @db has a table named @name. */
gboolean cowscope_format_has_table (sqlite3 *db, const char *name);

/* The time span of a session: from its first event to its last, widened
 * by its CUDA activity (0, 0 when it has neither); what the timeline and
 * the counter tracks cover.  FALSE with @error (naming @path). */
gboolean cowscope_format_query_bounds (sqlite3 *db, const char *path, gint64 *start_ns,
                                       gint64 *end_ns, GError **error);

/* meta.@key as a new string (NULL when absent or NULL). */
char *cowscope_format_meta_text (sqlite3 *db, const char *key);

/* Column @col of @stmt as an integer, or @fallback when it is NULL or not
 * an integer (files are untrusted: NULLs are handled). */
gint64 cowscope_format_column_int (sqlite3_stmt *stmt, int col, gint64 fallback);

/* Column @col as a new valid UTF-8 string (invalid bytes replaced), or
 * NULL when it is NULL. */
char *cowscope_format_column_text (sqlite3_stmt *stmt, int col);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (sqlite3, sqlite3_close)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (sqlite3_stmt, sqlite3_finalize)

G_END_DECLS
