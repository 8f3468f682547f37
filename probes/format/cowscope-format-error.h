/* cowscope-format-error.h — why a session file was refused or could not
 * be read: the one error domain of the session format, used by its
 * opener, the finalizer, the session model and everything above them. */
#pragma once

#include <glib.h>
#include <sqlite3.h>

G_BEGIN_DECLS

#define COWSCOPE_SESSION_ERROR (cowscope_session_error_quark ())

typedef enum {
  COWSCOPE_SESSION_ERROR_NOT_FOUND,      /* missing or unreadable file, a directory */
  COWSCOPE_SESSION_ERROR_NOT_SQLITE,     /* not an SQLite database at all (empty included) */
  COWSCOPE_SESSION_ERROR_NOT_SESSION,    /* SQLite, but not a Cowscope session */
  COWSCOPE_SESSION_ERROR_NEWER,          /* a schema newer than this build reads */
  COWSCOPE_SESSION_ERROR_DAMAGED,        /* corrupt, truncated or inconsistent */
  COWSCOPE_SESSION_ERROR_NOT_FINALIZED,  /* its recorder did not finish it */
  COWSCOPE_SESSION_ERROR_NO_SUCH_OBJECT, /* the session has no such event or object */
  COWSCOPE_SESSION_ERROR_FAILED,         /* any other failure */
} CowscopeSessionError;

GQuark cowscope_session_error_quark (void);

/* Sets @error for SQLite result @rc (or @db's last error) while doing
 * @what on the session @path: "PATH is not an SQLite database" (NOT_SQLITE),
 * DAMAGED for a corrupt file or an I/O error ("PATH is damaged: table
 * 'events': <what quick_check finds in it>", else SQLite's message), a
 * schema entry SQLite cannot parse ("PATH is damaged: its schema cannot
 * be read (the definition of 'threads')", never the raw bytes of the
 * schema SQLite quotes) or a query the file cannot answer ("PATH is
 * damaged: no such column: nbytes (<what>)"), else FAILED: "cannot read
 * PATH: <message> (<what>)". */
void cowscope_format_set_error (GError **error, sqlite3 *db, int rc, const char *path,
                                const char *what);

/* Sets @error for a failed write to the session @path while doing @what
 * ("finalize"): "cannot finalize session 'PATH': No space left on device
 * (database or disk is full)" (FAILED); a write that failed on a damaged
 * file is reported as cowscope_format_set_error() reports it (DAMAGED). */
void cowscope_format_set_write_error (GError **error, sqlite3 *db, const char *path,
                                      const char *what);

G_END_DECLS
