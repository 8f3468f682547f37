/* cowscope-format-repair.c — rebuilding a session from what was
 * recorded (see header). */
#include "cowscope-format-repair.h"

#include <glib/gi18n-lib.h>
#include <glib/gstdio.h>
#include <string.h>

#include "cowscope-format-check.h"
#include "cowscope-format-error.h"
#include "cowscope-format-open.h"
#include "cowscope-format-schema.h"

/* The recorded tables of @db's main schema: every table but the derived
 * ones (and SQLite's own). */
static GPtrArray *
recorded_tables (sqlite3 *db, const char *path, GError **error)
{
  g_autoptr (GPtrArray) tables = g_ptr_array_new_with_free_func (g_free);
  const char *const *derived = cowscope_format_derived_tables ();
  sqlite3_stmt *stmt = NULL;
  int rc = sqlite3_prepare_v2 (db, "SELECT name FROM main.sqlite_master WHERE type = 'table'"
                               " AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name", -1,
                               &stmt, NULL);
  while (rc == SQLITE_OK && (rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      rc = SQLITE_OK;
      const char *name = (const char *) sqlite3_column_text (stmt, 0);
      if (name != NULL && !g_strv_contains (derived, name))
        g_ptr_array_add (tables, g_strdup (name));
    }
  sqlite3_finalize (stmt);
  if (rc != SQLITE_DONE)
    {
      cowscope_format_set_error (error, db, rc, path, _("its schema"));
      return NULL;
    }
  g_ptr_array_add (tables, NULL);
  return g_steal_pointer (&tables);
}

gboolean
cowscope_format_check_recorded (sqlite3 *db, const char *path, gboolean structure,
                                GError **error)
{
  g_autoptr (GPtrArray) tables = recorded_tables (db, path, error);
  return tables != NULL
         && cowscope_format_check_tables (db, path, (const char *const *) tables->pdata,
                                          structure ? COWSCOPE_FORMAT_CHECK_ALL
                                                    : COWSCOPE_FORMAT_CHECK_VALUES,
                                          error);
}

/* "a, b, c": the columns of @table in @schema (attached name) that
 * @other also has, quoted. */
static char *
common_columns (sqlite3 *db, const char *table, const char *schema, const char *other)
{
  g_autoptr (GString) columns = g_string_new (NULL);
  sqlite3_stmt *stmt = NULL;
  if (sqlite3_prepare_v2 (db,
                          "SELECT a.name FROM pragma_table_info (?1, ?2) a"
                          " JOIN pragma_table_info (?1, ?3) b ON b.name = a.name ORDER BY a.cid",
                          -1, &stmt, NULL) != SQLITE_OK)
    return NULL;
  sqlite3_bind_text (stmt, 1, table, -1, SQLITE_STATIC);
  sqlite3_bind_text (stmt, 2, schema, -1, SQLITE_STATIC);
  sqlite3_bind_text (stmt, 3, other, -1, SQLITE_STATIC);
  while (sqlite3_step (stmt) == SQLITE_ROW)
    {
      const char *name = (const char *) sqlite3_column_text (stmt, 0);
      if (name == NULL || strchr (name, '"') != NULL)
        continue;
      g_string_append_printf (columns, "%s\"%s\"", columns->len > 0 ? ", " : "", name);
    }
  sqlite3_finalize (stmt);
  return columns->len > 0 ? g_string_free (g_steal_pointer (&columns), FALSE) : NULL;
}

/* TRUE when @table of the main schema is a virtual table. */
static gboolean
is_virtual_table (sqlite3 *db, const char *table)
{
  sqlite3_stmt *stmt = NULL;
  gboolean found = FALSE;
  if (sqlite3_prepare_v2 (db, "SELECT 1 FROM main.sqlite_master WHERE type = 'table' AND name = ?1"
                          " AND sql LIKE 'CREATE VIRTUAL TABLE%'", -1, &stmt, NULL) == SQLITE_OK)
    {
      sqlite3_bind_text (stmt, 1, table, -1, SQLITE_STATIC);
      found = sqlite3_step (stmt) == SQLITE_ROW;
    }
  sqlite3_finalize (stmt);
  return found;
}

gboolean
cowscope_format_copy_recorded (sqlite3 *db, const char *path, const char *target, GError **error)
{
  g_return_val_if_fail (db != NULL && path != NULL && target != NULL, FALSE);

  /* The fresh schema, in a file of its own. */
  sqlite3 *out = NULL;
  if (sqlite3_open_v2 (target, &out, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK
      || sqlite3_exec (out, "PRAGMA synchronous = OFF; PRAGMA journal_mode = OFF", NULL, NULL,
                       NULL) != SQLITE_OK
      || !cowscope_format_create_schema (out))
    {
      cowscope_format_set_write_error (error, out, target, "repair");
      sqlite3_close (out);
      g_unlink (target);
      return FALSE;
    }
  sqlite3_close (out);

  g_autoptr (GPtrArray) tables = recorded_tables (db, path, error);
  if (tables == NULL)
    {
      g_unlink (target);
      return FALSE;
    }
  sqlite3_stmt *attach = NULL;
  int rc = sqlite3_prepare_v2 (db, "ATTACH ?1 AS repaired", -1, &attach, NULL);
  if (rc == SQLITE_OK)
    {
      sqlite3_bind_text (attach, 1, target, -1, SQLITE_STATIC);
      rc = sqlite3_step (attach);
    }
  sqlite3_finalize (attach);
  if (rc != SQLITE_DONE)
    {
      cowscope_format_set_write_error (error, db, target, "repair");
      g_unlink (target);
      return FALSE;
    }

  gboolean ok = sqlite3_exec (db, "BEGIN", NULL, NULL, NULL) == SQLITE_OK;
  if (!ok)
    cowscope_format_set_write_error (error, db, target, "repair");
  for (guint i = 0; ok && tables->pdata[i] != NULL; i++)
    {
      const char *table = tables->pdata[i];
      /* `events` reads event_chunks, which is copied as it is: its rows
       * would be appended a second time. */
      if (is_virtual_table (db, table))
        continue;
      g_autofree char *columns = common_columns (db, table, "main", "repaired");
      if (columns == NULL)
        continue; /* a table this build does not know: not a session's */
      /* meta's rows replace the fresh schema's defaults; other tables
       * start empty.  NOT INDEXED: a damaged index must not hide rows. */
      g_autofree char *sql = g_strdup_printf (
        "INSERT OR REPLACE INTO repaired.\"%s\" (%s) SELECT %s FROM main.\"%s\" NOT INDEXED",
        table, columns, columns, table);
      rc = sqlite3_exec (db, sql, NULL, NULL, NULL);
      if (rc != SQLITE_OK)
        {
          int code = sqlite3_extended_errcode (db);
          if ((code & 0xff) == SQLITE_FULL || (code & 0xff) == SQLITE_CANTOPEN)
            cowscope_format_set_write_error (error, db, target, "repair");
          else if ((code & 0xff) == SQLITE_CONSTRAINT)
            /* A recorded row the schema forbids (a NULL key, a key
             * twice): damaged bytes read back as values. */
            g_set_error (error, COWSCOPE_SESSION_ERROR, COWSCOPE_SESSION_ERROR_DAMAGED,
                         _("%s is damaged: table '%s': a row breaks the schema (%s); its "
                           "recorded table '%s' cannot be read whole"),
                         path, table, sqlite3_errmsg (db), table);
          else
            {
              g_autofree char *where = g_strdup_printf (_("table '%s'"), table);
              g_autoptr (GError) reason = NULL;
              cowscope_format_set_error (&reason, db, code, path, where);
              g_set_error (error, COWSCOPE_SESSION_ERROR, COWSCOPE_SESSION_ERROR_DAMAGED,
                           _("%s; its recorded table '%s' cannot be read whole"),
                           reason->message, table);
            }
          ok = FALSE;
        }
    }
  if (ok && sqlite3_exec (db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
    {
      cowscope_format_set_write_error (error, db, target, "repair");
      ok = FALSE;
    }
  if (!ok)
    sqlite3_exec (db, "ROLLBACK", NULL, NULL, NULL);
  sqlite3_exec (db, "DETACH repaired", NULL, NULL, NULL);
  if (!ok)
    g_unlink (target);
  return ok;
}
