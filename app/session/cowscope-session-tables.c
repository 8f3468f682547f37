/* cowscope-session-tables.c — a session's tables for reports and exports
 * (see header). */
#include "cowscope-session-tables-private.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <string.h>

#include "cowscope-format-check.h"
#include "cowscope-format-finalize.h"
#include "cowscope-format-open.h"
#include "cowscope-format-views.h"
#include "cowscope-format-vocabulary.h"

struct _CowscopeSessionTables {
  sqlite3 *db;
  char *path;        /* the session file as named */
  char *copy_path;   /* a finalized copy read instead, or NULL */
  int schema_version;
  gboolean finalized;
  GHashTable *meta;  /* key → text value */
  GHashTable *enums; /* table name → GHashTable (gint64* id → name) */
  GHashTable *fallback_names; /* "table #id" strings handed out */
};

void
cowscope_session_tables_set_error (CowscopeSessionTables *tables, GError **error, int rc,
                                   const char *what)
{
  cowscope_format_set_error (error, tables->db, rc, tables->path, what);
}

sqlite3_stmt *
cowscope_session_tables_prepare (CowscopeSessionTables *tables, const char *sql, GError **error)
{
  return cowscope_format_statement (tables->db, tables->path, sql, error);
}

int
cowscope_session_tables_step (CowscopeSessionTables *tables, sqlite3_stmt *stmt, GError **error)
{
  int rc = sqlite3_step (stmt);

  if (rc == SQLITE_ROW || rc == SQLITE_DONE)
    return rc;
  cowscope_session_tables_set_error (tables, error, rc, "reading");
  return -1;
}

gboolean
cowscope_session_tables_query_int (CowscopeSessionTables *tables, const char *sql, gint64 *value,
                                   GError **error)
{
  sqlite3_stmt *stmt = cowscope_session_tables_prepare (tables, sql, error);
  int rc;

  *value = 0;
  if (stmt == NULL)
    return FALSE;
  rc = cowscope_session_tables_step (tables, stmt, error);
  if (rc == SQLITE_ROW)
    *value = sqlite3_column_int64 (stmt, 0);
  sqlite3_finalize (stmt);
  return rc >= 0;
}

gboolean
cowscope_session_tables_check (CowscopeSessionTables *tables, const char *const *names,
                               GError **error)
{
  if (names == NULL)
    return cowscope_format_check_file (tables->db, tables->path, COWSCOPE_FORMAT_CHECK_ALL,
                                       error);
  return cowscope_format_check_tables (tables->db, tables->path, names, COWSCOPE_FORMAT_CHECK_ALL,
                                       error);
}

gboolean
cowscope_session_tables_has_table (CowscopeSessionTables *tables, const char *name)
{
  return cowscope_format_has_table (tables->db, name);
}

gboolean
cowscope_session_tables_has_column (CowscopeSessionTables *tables, const char *table,
                                    const char *column)
{
  sqlite3_stmt *stmt = NULL;
  gboolean found = FALSE;

  if (sqlite3_prepare_v2 (tables->db, "SELECT 1 FROM pragma_table_info (?1, 'main') WHERE name = ?2",
                          -1, &stmt, NULL) == SQLITE_OK)
    {
      sqlite3_bind_text (stmt, 1, table, -1, SQLITE_STATIC);
      sqlite3_bind_text (stmt, 2, column, -1, SQLITE_STATIC);
      found = sqlite3_step (stmt) == SQLITE_ROW;
    }
  sqlite3_finalize (stmt);
  return found;
}

/* Reads the meta table into tables->meta. */
static gboolean
load_meta (CowscopeSessionTables *tables, GError **error)
{
  sqlite3_stmt *stmt =
    cowscope_session_tables_prepare (tables, "SELECT key, value FROM main.meta", error);
  int rc;

  if (stmt == NULL)
    return FALSE;
  while ((rc = cowscope_session_tables_step (tables, stmt, error)) == SQLITE_ROW)
    {
      const char *key = (const char *) sqlite3_column_text (stmt, 0);
      const char *value = (const char *) sqlite3_column_text (stmt, 1);
      if (key != NULL && value != NULL)
        g_hash_table_replace (tables->meta, g_strdup (key), g_strdup (value));
    }
  sqlite3_finalize (stmt);
  return rc == SQLITE_DONE;
}

/* The last steps of opening: `meta`, checked then loaded, and this
 * version's views, whatever the file holds (an older session has none; a
 * file's own views of those names are shadowed). */
static gboolean
load_meta_and_views (CowscopeSessionTables *tables, GError **error)
{
  static const char *const meta[] = { "meta", NULL };
  if (!cowscope_format_check_tables (tables->db, tables->path, meta, COWSCOPE_FORMAT_CHECK_ALL,
                                     error)
      || !load_meta (tables, error))
    return FALSE;
  if (!cowscope_format_create_temp_views (tables->db))
    {
      cowscope_session_tables_set_error (tables, error, sqlite3_errcode (tables->db), "opening");
      return FALSE;
    }
  return TRUE;
}

CowscopeSessionTables *
cowscope_session_tables_open (const char *path, GError **error)
{
  g_return_val_if_fail (path != NULL, NULL);

  CowscopeFormatInfo info;
  sqlite3 *db = cowscope_format_open (path, COWSCOPE_FORMAT_OPEN_READ_ONLY, &info, error);
  if (db == NULL)
    return NULL;

  g_autoptr (CowscopeSessionTables) tables = g_new0 (CowscopeSessionTables, 1);
  tables->db = db;
  tables->path = g_strdup (path);
  tables->schema_version = info.schema_version;
  tables->finalized = info.finalized;
  tables->meta = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  tables->enums = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                         (GDestroyNotify) g_hash_table_unref);
  tables->fallback_names = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  if (!info.finalized)
    {
      /* What finalizing it would give, without writing it. */
      g_clear_pointer (&tables->db, sqlite3_close);
      tables->copy_path = cowscope_format_finalized_copy (path, error);
      if (tables->copy_path == NULL)
        return NULL;
      tables->db = cowscope_format_open (tables->copy_path, COWSCOPE_FORMAT_OPEN_FINALIZED, NULL,
                                         error);
      if (tables->db == NULL)
        return NULL;
    }
  if (!load_meta_and_views (tables, error))
    return NULL;
  return g_steal_pointer (&tables);
}

CowscopeSessionTables *
cowscope_session_tables_new_for_db (sqlite3 *db, const char *path, GError **error)
{
  g_return_val_if_fail (db != NULL && path != NULL, NULL);
  g_autoptr (CowscopeSessionTables) tables = g_new0 (CowscopeSessionTables, 1);
  tables->db = db;
  tables->path = g_strdup (path);
  tables->finalized = TRUE;
  tables->meta = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  tables->enums = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                         (GDestroyNotify) g_hash_table_unref);
  tables->fallback_names = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autofree char *version = cowscope_format_meta_text (db, "schema_version");
  tables->schema_version = version != NULL ? (int) g_ascii_strtoll (version, NULL, 10) : 0;
  if (!load_meta_and_views (tables, error))
    return NULL;
  return g_steal_pointer (&tables);
}

void
cowscope_session_tables_free (CowscopeSessionTables *tables)
{
  if (tables == NULL)
    return;
  sqlite3_close_v2 (tables->db);
  if (tables->copy_path != NULL)
    g_unlink (tables->copy_path);
  g_free (tables->copy_path);
  g_clear_pointer (&tables->meta, g_hash_table_unref);
  g_clear_pointer (&tables->enums, g_hash_table_unref);
  g_clear_pointer (&tables->fallback_names, g_hash_table_unref);
  g_free (tables->path);
  g_free (tables);
}

sqlite3 *
cowscope_session_tables_get_db (CowscopeSessionTables *tables)
{
  return tables->db;
}

const char *
cowscope_session_tables_get_path (CowscopeSessionTables *tables)
{
  return tables->path;
}

int
cowscope_session_tables_get_schema_version (CowscopeSessionTables *tables)
{
  return tables->schema_version;
}

gboolean
cowscope_session_tables_is_finalized (CowscopeSessionTables *tables)
{
  return tables->finalized;
}

const char *
cowscope_session_tables_get_meta (CowscopeSessionTables *tables, const char *key)
{
  return g_hash_table_lookup (tables->meta, key);
}

gboolean
cowscope_session_tables_get_meta_int (CowscopeSessionTables *tables, const char *key,
                                      gint64 *value)
{
  const char *text = cowscope_session_tables_get_meta (tables, key);
  char *end = NULL;
  gint64 parsed;

  if (text == NULL || *text == '\0')
    return FALSE;
  errno = 0;
  parsed = g_ascii_strtoll (text, &end, 10);
  if (errno != 0 || end == text || *end != '\0')
    return FALSE;
  *value = parsed;
  return TRUE;
}

/* Loads lookup table @table (id → name) once; an absent or unreadable
 * table yields an empty map. */
static GHashTable *
load_enum (CowscopeSessionTables *tables, const char *table)
{
  GHashTable *names = g_hash_table_lookup (tables->enums, table);
  sqlite3_stmt *stmt = NULL;

  if (names != NULL)
    return names;
  names = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
  g_hash_table_insert (tables->enums, g_strdup (table), names);
  if (!cowscope_session_tables_has_table (tables, table))
    return names;
  g_autofree char *sql = g_strdup_printf ("SELECT id, name FROM main.\"%s\"", table);
  if (sqlite3_prepare_v2 (tables->db, sql, -1, &stmt, NULL) == SQLITE_OK)
    while (sqlite3_step (stmt) == SQLITE_ROW)
      {
        const char *name = (const char *) sqlite3_column_text (stmt, 1);
        if (name == NULL)
          continue;
        gint64 *id = g_new (gint64, 1);
        *id = sqlite3_column_int64 (stmt, 0);
        g_hash_table_replace (names, id, g_strdup (name));
      }
  sqlite3_finalize (stmt);
  return names;
}

const char *
cowscope_session_tables_enum_name (CowscopeSessionTables *tables, const char *table, gint64 id)
{
  /* Only plain identifiers name a lookup table. */
  for (const char *p = table; *p != '\0'; p++)
    g_return_val_if_fail (g_ascii_isalnum (*p) || *p == '_', "?");

  const char *name = g_hash_table_lookup (load_enum (tables, table), &id);
  if (name == NULL)
    name = cowscope_format_enum_name (table, id);
  if (name != NULL)
    return name;

  char *fallback = g_strdup_printf ("%s #%" G_GINT64_FORMAT, table, id);
  name = g_hash_table_lookup (tables->fallback_names, fallback);
  if (name != NULL)
    {
      g_free (fallback);
      return name;
    }
  g_hash_table_add (tables->fallback_names, fallback);
  return fallback;
}
