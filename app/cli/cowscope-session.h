/* cowscope-session.h — a recorded session database, opened read-only.
 *
 * Session files are untrusted input: cowscope_session_open() checks that
 * the file exists, is an SQLite database, carries Cowscope's metadata and
 * a schema this build understands, and holds the tables that schema
 * promises, before any caller runs a query.  Every later query failure
 * is turned into one readable message (a damaged file is named as such,
 * with what `PRAGMA quick_check` found).
 *
 * A session whose recorder died before finalizing it (meta.finalized is
 * not 1) is still opened: TEMP views named like the derived tables
 * (lazy_clones, materializations, violations, ranges, marks) are laid over
 * the raw `events`, so reports and exports work from what was committed,
 * and cowscope_session_is_finalized() says so for the caller to warn.
 */
#pragma once

#include <glib.h>
#include <sqlite3.h>

G_BEGIN_DECLS

/* The newest session schema this build reads. */
#define COWSCOPE_SESSION_READ_SCHEMA_VERSION 3

/* Exit statuses of the command-line tools. */
typedef enum {
  COWSCOPE_EXIT_OK = 0,
  COWSCOPE_EXIT_ERROR = 1,  /* a bad file, an I/O error */
  COWSCOPE_EXIT_USAGE = 2,  /* bad arguments */
  COWSCOPE_EXIT_BUDGET = 3, /* a --fail-if budget was exceeded */
} CowscopeExitStatus;

#define COWSCOPE_SESSION_ERROR (cowscope_session_error_quark ())

typedef enum {
  COWSCOPE_SESSION_ERROR_NOT_FOUND,   /* missing or unreadable file */
  COWSCOPE_SESSION_ERROR_NOT_SESSION, /* not SQLite, or SQLite but not ours */
  COWSCOPE_SESSION_ERROR_NEWER,       /* a schema newer than this build */
  COWSCOPE_SESSION_ERROR_DAMAGED,     /* corrupt or incomplete */
  COWSCOPE_SESSION_ERROR_FAILED,      /* any other SQLite failure */
} CowscopeSessionError;

GQuark cowscope_session_error_quark (void);

typedef struct _CowscopeSession CowscopeSession;

/* Opens @path read-only and validates it (see above).  Returns NULL with
 * @error set to one message that names the file and the problem. */
CowscopeSession *cowscope_session_open (const char *path, GError **error);

/* Closes the database.  NULL is ignored. */
void cowscope_session_free (CowscopeSession *session);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (CowscopeSession, cowscope_session_free)

/* The open connection (read-only; valid until the session is freed). */
sqlite3 *cowscope_session_get_db (CowscopeSession *session);
const char *cowscope_session_get_path (CowscopeSession *session);
int cowscope_session_get_schema_version (CowscopeSession *session);

/* TRUE when the recorder finished the session (meta.finalized = 1). */
gboolean cowscope_session_is_finalized (CowscopeSession *session);

/* meta.@key as text, or NULL when absent or NULL. */
const char *cowscope_session_get_meta (CowscopeSession *session,
                                       const char *key);

/* meta.@key as an integer: TRUE and *@value when present and numeric. */
gboolean cowscope_session_get_meta_int (CowscopeSession *session,
                                        const char *key, gint64 *value);

/* TRUE when the main schema has a table named @name. */
gboolean cowscope_session_has_table (CowscopeSession *session,
                                     const char *name);

/* TRUE when table @table of the main schema has a column @column. */
gboolean cowscope_session_has_column (CowscopeSession *session,
                                      const char *table, const char *column);

/* The name of @id in the lookup table @table (ops, materialize_kinds,
 * eager_reasons, access_kinds, cuda_kinds, event_types, ...), or the
 * engine's own name for it when the table lacks it, or "TABLE #ID".
 * Never NULL; valid until the session is freed. */
const char *cowscope_session_enum_name (CowscopeSession *session,
                                        const char *table, gint64 id);

/* Prepares @sql; on failure NULL with @error set (see set_error). */
sqlite3_stmt *cowscope_session_prepare (CowscopeSession *session,
                                        const char *sql, GError **error);

/* Steps @stmt: SQLITE_ROW or SQLITE_DONE, or -1 with @error set. */
int cowscope_session_step (CowscopeSession *session, sqlite3_stmt *stmt,
                           GError **error);

/* Runs @sql, which yields one integer (NULL reads as 0), into *@value. */
gboolean cowscope_session_query_int (CowscopeSession *session,
                                     const char *sql, gint64 *value,
                                     GError **error);

/* Sets @error for SQLite result @rc while doing @what: a corrupt file
 * becomes "FILE is damaged: <quick_check's first finding>". */
void cowscope_session_set_error (CowscopeSession *session, GError **error,
                                 int rc, const char *what);

G_END_DECLS
