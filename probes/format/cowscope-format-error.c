/* cowscope-format-error.c — the session error domain (see header). */
#include "cowscope-format-error.h"

#include <errno.h>
#include <glib/gi18n-lib.h>
#include <string.h>

G_DEFINE_QUARK (cowscope-session-error-quark, cowscope_session_error)

void
cowscope_format_set_error (GError **error, sqlite3 *db, int rc, const char *path,
                           const char *what)
{
  int code = rc;
  g_autofree char *message = g_strdup (sqlite3_errstr (rc));
  if (db != NULL && sqlite3_errcode (db) != SQLITE_OK)
    {
      code = sqlite3_extended_errcode (db);
      g_free (message);
      message = g_strdup (sqlite3_errmsg (db));
    }
  int primary = code & 0xff;
  if (primary == SQLITE_NOTADB)
    {
      g_set_error (error, COWSCOPE_SESSION_ERROR, COWSCOPE_SESSION_ERROR_NOT_SQLITE,
                   _("not a Cowscope session: %s is not an SQLite database"), path);
      return;
    }
  if (primary == SQLITE_CORRUPT || primary == SQLITE_IOERR || primary == SQLITE_ERROR)
    {
      g_autofree char *finding = NULL;
      sqlite3_stmt *stmt = NULL;
      /* quick_check names the damage better than the failed query; a
       * query that merely lacks a table or column (SQLITE_ERROR) says
       * enough itself. */
      if (db != NULL && primary != SQLITE_ERROR
          && sqlite3_prepare_v2 (db, "PRAGMA quick_check (1)", -1, &stmt, NULL) == SQLITE_OK
          && sqlite3_step (stmt) == SQLITE_ROW)
        {
          const char *text = (const char *) sqlite3_column_text (stmt, 0);
          if (text != NULL && strcmp (text, "ok") != 0)
            finding = g_strdup (text);
        }
      sqlite3_finalize (stmt);
      g_set_error (error, COWSCOPE_SESSION_ERROR, COWSCOPE_SESSION_ERROR_DAMAGED,
                   _("%s is damaged: %s"), path, finding != NULL ? finding : message);
      return;
    }
  g_set_error (error, COWSCOPE_SESSION_ERROR, COWSCOPE_SESSION_ERROR_FAILED,
               _("cannot read %s: %s (%s)"), path, message, what);
}

void
cowscope_format_set_write_error (GError **error, sqlite3 *db, const char *path, const char *what)
{
  int sys = db ? sqlite3_system_errno (db) : 0;
  const char *message = db ? sqlite3_errmsg (db) : sqlite3_errstr (SQLITE_NOMEM);
  if (db != NULL && sqlite3_errcode (db) == SQLITE_FULL && sys == 0)
    sys = ENOSPC;
  if (sys != 0)
    g_set_error (error, COWSCOPE_SESSION_ERROR, COWSCOPE_SESSION_ERROR_FAILED,
                 "cannot %s session '%s': %s (%s)", what, path, g_strerror (sys), message);
  else
    g_set_error (error, COWSCOPE_SESSION_ERROR, COWSCOPE_SESSION_ERROR_FAILED,
                 "cannot %s session '%s': %s", what, path, message);
}
