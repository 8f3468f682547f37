/* cowscope-format-error.c — the session error domain (see header). */
#include "cowscope-format-error.h"

#include <errno.h>
#include <glib/gi18n-lib.h>
#include <string.h>

#include "cowscope-format-check.h"

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
  /* A schema entry SQLite cannot parse: "malformed database schema (X) -
   * unrecognized token: ..." quotes raw bytes of the schema; say which
   * entry instead. */
  const char *schema = strstr (message, "malformed database schema (");
  if (schema != NULL)
    {
      const char *name = schema + strlen ("malformed database schema (");
      const char *end = strchr (name, ')');
      g_autofree char *entry = end != NULL ? g_utf8_make_valid (name, end - name) : NULL;
      g_set_error (error, COWSCOPE_SESSION_ERROR, COWSCOPE_SESSION_ERROR_DAMAGED,
                   _("%s is damaged: its schema cannot be read (the definition of '%s')"),
                   path, entry != NULL ? entry : "?");
      return;
    }
  /* The events module found a damaged chunk and named it itself. */
  const char *module_prefix = "the session is damaged: ";
  if (primary == SQLITE_CORRUPT && g_str_has_prefix (message, module_prefix))
    {
      g_set_error (error, COWSCOPE_SESSION_ERROR, COWSCOPE_SESSION_ERROR_DAMAGED,
                   _("%s is damaged: %s"), path, message + strlen (module_prefix));
      return;
    }
  if (primary == SQLITE_CORRUPT || primary == SQLITE_IOERR)
    {
      /* quick_check, table by table, names the damage better than the
       * query that met it. */
      g_autofree char *finding = db != NULL ? cowscope_format_diagnose (db) : NULL;
      g_set_error (error, COWSCOPE_SESSION_ERROR, COWSCOPE_SESSION_ERROR_DAMAGED,
                   _("%s is damaged: %s"), path, finding != NULL ? finding : message);
      return;
    }
  if (primary == SQLITE_ERROR)
    {
      /* A query that lacks a table or column, or a sum that overflowed:
       * SQLite's message says what. */
      g_set_error (error, COWSCOPE_SESSION_ERROR, COWSCOPE_SESSION_ERROR_DAMAGED,
                   _("%s is damaged: %s (%s)"), path, message, what);
      return;
    }
  g_set_error (error, COWSCOPE_SESSION_ERROR, COWSCOPE_SESSION_ERROR_FAILED,
               _("cannot read %s: %s (%s)"), path, message, what);
}

void
cowscope_format_set_write_error (GError **error, sqlite3 *db, const char *path, const char *what)
{
  /* A write that failed because the file is damaged says so. */
  int code = db != NULL ? sqlite3_extended_errcode (db) : SQLITE_NOMEM;
  if ((code & 0xff) == SQLITE_CORRUPT || (code & 0xff) == SQLITE_NOTADB
      || (db != NULL && strstr (sqlite3_errmsg (db), "malformed database schema") != NULL))
    {
      cowscope_format_set_error (error, db, code, path, what);
      return;
    }
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
