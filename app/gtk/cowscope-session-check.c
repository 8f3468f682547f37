/* cowscope-session-check.c — is this file a Cowscope session we can read?
 *
 * TEMPORARY until the session model (app/session/) lands: see the header.
 * Opens the file read-only with SQLite's defensive settings, reads only
 * the header bytes, PRAGMA user_version and the `meta` table, and never
 * writes.  Files are untrusted: every failure becomes a GError whose
 * message can be shown to a person as is.
 */
#include "cowscope-config.h"

#include <glib/gi18n.h>
#include <sqlite3.h>
#include <string.h>

#include "cowscope-session-check.h"

#define SQLITE_HEADER_SIZE 100

G_DEFINE_QUARK (cowscope-session-check-error-quark, cowscope_session_check_error)

/* Returns the big-endian unsigned integer of @len bytes at @p. */
static guint64
read_be (const guint8 *p,
         gsize         len)
{
  guint64 v = 0;

  for (gsize i = 0; i < len; i++)
    v = (v << 8) | p[i];
  return v;
}

/* Sets @error to a DAMAGED error naming @name and SQLite's @detail. */
static void
set_damaged (GError     **error,
             const char  *name,
             const char  *detail)
{
  g_set_error (error, COWSCOPE_SESSION_CHECK_ERROR, COWSCOPE_SESSION_CHECK_ERROR_DAMAGED,
               /* Translators: the first %s is a file name, the second SQLite's explanation */
               _("“%s” is damaged and cannot be read (%s)."), name, detail);
}

/* Reads the 100-byte SQLite header of @file into @header and its size into
 * @size.  Guarantees: on FALSE, @error is a NOT_FOUND, UNREADABLE or
 * NOT_SESSION error with a message for people. */
static gboolean
read_header (GFile         *file,
             const char    *name,
             guint8         header[SQLITE_HEADER_SIZE],
             goffset       *size,
             GCancellable  *cancellable,
             GError       **error)
{
  g_autoptr(GError) local_error = NULL;
  g_autoptr(GFileInfo) info = NULL;
  g_autoptr(GFileInputStream) stream = NULL;
  gsize n_read = 0;

  info = g_file_query_info (file,
                            G_FILE_ATTRIBUTE_STANDARD_TYPE "," G_FILE_ATTRIBUTE_STANDARD_SIZE,
                            G_FILE_QUERY_INFO_NONE, cancellable, &local_error);
  if (info == NULL)
    {
      if (g_error_matches (local_error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND))
        g_set_error (error, COWSCOPE_SESSION_CHECK_ERROR, COWSCOPE_SESSION_CHECK_ERROR_NOT_FOUND,
                     _("“%s” does not exist. It may have been moved or deleted."), name);
      else
        g_set_error (error, COWSCOPE_SESSION_CHECK_ERROR, COWSCOPE_SESSION_CHECK_ERROR_UNREADABLE,
                     _("“%s” cannot be read: %s"), name, local_error->message);
      return FALSE;
    }

  if (g_file_info_get_file_type (info) == G_FILE_TYPE_DIRECTORY)
    {
      g_set_error (error, COWSCOPE_SESSION_CHECK_ERROR, COWSCOPE_SESSION_CHECK_ERROR_NOT_SESSION,
                   _("“%s” is a folder, not a Cowscope session file."), name);
      return FALSE;
    }

  *size = g_file_info_get_size (info);

  stream = g_file_read (file, cancellable, &local_error);
  if (stream == NULL ||
      !g_input_stream_read_all (G_INPUT_STREAM (stream), header, SQLITE_HEADER_SIZE,
                                &n_read, cancellable, &local_error))
    {
      g_set_error (error, COWSCOPE_SESSION_CHECK_ERROR, COWSCOPE_SESSION_CHECK_ERROR_UNREADABLE,
                   _("“%s” cannot be read: %s"), name, local_error->message);
      return FALSE;
    }

  if (n_read < SQLITE_HEADER_SIZE || memcmp (header, "SQLite format 3", 16) != 0)
    {
      g_set_error (error, COWSCOPE_SESSION_CHECK_ERROR, COWSCOPE_SESSION_CHECK_ERROR_NOT_SESSION,
                   _("“%s” is not a Cowscope session: it is not a database at all."), name);
      return FALSE;
    }

  return TRUE;
}

/* Guarantees: FALSE with a DAMAGED @error when the header's own page
 * count says the file should be longer than @size (a truncated copy). */
static gboolean
check_length (const guint8  header[SQLITE_HEADER_SIZE],
              goffset        size,
              const char    *name,
              GError       **error)
{
  guint64 page_size = read_be (header + 16, 2);
  guint64 page_count = read_be (header + 28, 4);
  guint64 change_counter = read_be (header + 24, 4);
  guint64 valid_for = read_be (header + 92, 4);

  if (page_size == 1)
    page_size = 65536;
  if (page_size < 512 || page_size > 65536 || (page_size & (page_size - 1)) != 0)
    {
      set_damaged (error, name, _("invalid page size"));
      return FALSE;
    }

  /* The in-header size is trustworthy only when the change counter
   * matches "version-valid-for" (SQLite file format, section 1.3.7). */
  if (page_count > 0 && change_counter == valid_for &&
      (guint64) size < page_count * page_size)
    {
      set_damaged (error, name, _("the file is shorter than its header says; it may be truncated"));
      return FALSE;
    }

  return TRUE;
}

/* Reads `meta` into a new key → value (text) table.  Guarantees: NULL
 * with NOT_SESSION when there is no `meta` table, DAMAGED on any
 * SQLite read error. */
static GHashTable *
read_meta (sqlite3     *db,
           const char  *name,
           GError     **error)
{
  g_autoptr(GHashTable) meta = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  sqlite3_stmt *stmt = NULL;
  int rc;

  rc = sqlite3_prepare_v2 (db, "SELECT key, value FROM meta", -1, &stmt, NULL);
  if (rc != SQLITE_OK)
    {
      if (rc == SQLITE_ERROR && strstr (sqlite3_errmsg (db), "no such table") != NULL)
        g_set_error (error, COWSCOPE_SESSION_CHECK_ERROR, COWSCOPE_SESSION_CHECK_ERROR_NOT_SESSION,
                     _("“%s” is a database, but not a Cowscope session."), name);
      else
        set_damaged (error, name, sqlite3_errmsg (db));
      return NULL;
    }

  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      const char *key = (const char *) sqlite3_column_text (stmt, 0);
      const char *value = (const char *) sqlite3_column_text (stmt, 1);

      if (key != NULL && g_utf8_validate (key, -1, NULL))
        g_hash_table_replace (meta, g_strdup (key),
                              g_strdup (value != NULL && g_utf8_validate (value, -1, NULL) ? value : ""));
    }

  if (rc != SQLITE_DONE)
    {
      set_damaged (error, name, sqlite3_errmsg (db));
      sqlite3_finalize (stmt);
      return NULL;
    }

  sqlite3_finalize (stmt);
  return g_steal_pointer (&meta);
}

/* Returns PRAGMA user_version of @db, or -1 when it cannot be read. */
static gint64
read_user_version (sqlite3 *db)
{
  sqlite3_stmt *stmt = NULL;
  gint64 version = -1;

  if (sqlite3_prepare_v2 (db, "PRAGMA user_version", -1, &stmt, NULL) != SQLITE_OK)
    return -1;
  if (sqlite3_step (stmt) == SQLITE_ROW)
    version = sqlite3_column_int64 (stmt, 0);
  sqlite3_finalize (stmt);
  return version;
}

/**
 * cowscope_session_check:
 * @file: the file to check
 * @cancellable: (nullable): cancels the file reads
 * @error: where a reason for people goes
 *
 * Checks, without writing anything, that @file is a Cowscope session in a
 * format this build reads.  Blocks on disk I/O: call it from a worker
 * thread (cowscope_session_check_async()).
 *
 * Returns: (transfer full) (nullable): the session's `meta` table as a
 *   key → text value #GHashTable, or %NULL with @error set in the
 *   %COWSCOPE_SESSION_CHECK_ERROR domain.
 */
GHashTable *
cowscope_session_check (GFile         *file,
                        GCancellable  *cancellable,
                        GError       **error)
{
  g_autoptr(GHashTable) meta = NULL;
  g_autofree char *name = NULL;
  g_autofree char *path = NULL;
  guint8 header[SQLITE_HEADER_SIZE];
  goffset size = 0;
  sqlite3 *db = NULL;
  const char *format;
  const char *version_text;
  gint64 user_version;
  gint64 version;
  int rc;

  g_return_val_if_fail (G_IS_FILE (file), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  name = g_file_get_basename (file);
  if (name == NULL)
    name = g_file_get_parse_name (file);

  path = g_file_get_path (file);
  if (path == NULL)
    {
      g_set_error (error, COWSCOPE_SESSION_CHECK_ERROR, COWSCOPE_SESSION_CHECK_ERROR_UNREADABLE,
                   _("“%s” is not a local file. Copy it to this computer first."), name);
      return NULL;
    }

  if (!read_header (file, name, header, &size, cancellable, error) ||
      !check_length (header, size, name, error))
    return NULL;

  rc = sqlite3_open_v2 (path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL);
  if (rc != SQLITE_OK)
    {
      g_set_error (error, COWSCOPE_SESSION_CHECK_ERROR, COWSCOPE_SESSION_CHECK_ERROR_UNREADABLE,
                   _("“%s” cannot be read: %s"), name,
                   db != NULL ? sqlite3_errmsg (db) : sqlite3_errstr (rc));
      sqlite3_close (db);
      return NULL;
    }

  /* Untrusted file: no schema-defined functions or views with side
   * effects, no writable schema, wait briefly for a live recorder. */
  sqlite3_db_config (db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
  sqlite3_db_config (db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
  sqlite3_db_config (db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, NULL);
  sqlite3_busy_timeout (db, 1000);

  user_version = read_user_version (db);
  if (user_version < 0)
    {
      set_damaged (error, name, sqlite3_errmsg (db));
      sqlite3_close (db);
      return NULL;
    }

  meta = read_meta (db, name, error);
  sqlite3_close (db);
  if (meta == NULL)
    return NULL;

  format = g_hash_table_lookup (meta, "format");
  if (g_strcmp0 (format, "cowscope-session") != 0)
    {
      g_set_error (error, COWSCOPE_SESSION_CHECK_ERROR, COWSCOPE_SESSION_CHECK_ERROR_NOT_SESSION,
                   _("“%s” is a database, but not a Cowscope session."), name);
      return NULL;
    }

  version_text = g_hash_table_lookup (meta, "schema_version");
  version = user_version;
  if (version_text != NULL && !g_ascii_string_to_signed (version_text, 10, 0, G_MAXINT32, &version, NULL))
    {
      set_damaged (error, name, _("invalid format version"));
      return NULL;
    }

  if (version > COWSCOPE_SESSION_FORMAT_VERSION || user_version > COWSCOPE_SESSION_FORMAT_VERSION)
    {
      g_set_error (error, COWSCOPE_SESSION_CHECK_ERROR, COWSCOPE_SESSION_CHECK_ERROR_NEWER,
                   /* Translators: %s is a file name, the numbers are format versions */
                   _("“%s” was recorded by a newer version of Cowscope (session format %d; "
                     "this version reads up to format %d). Update Cowscope to open it."),
                   name, (int) MAX (version, user_version), COWSCOPE_SESSION_FORMAT_VERSION);
      return NULL;
    }

  if (version < 1)
    {
      set_damaged (error, name, _("invalid format version"));
      return NULL;
    }

  return g_steal_pointer (&meta);
}

/* GTask worker: runs the check on a thread. */
static void
check_thread (GTask        *task,
              gpointer      source_object,
              gpointer      task_data,
              GCancellable *cancellable)
{
  GError *error = NULL;
  GHashTable *meta = cowscope_session_check (G_FILE (task_data), cancellable, &error);

  if (meta == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, meta, (GDestroyNotify) g_hash_table_unref);
}

/**
 * cowscope_session_check_async:
 *
 * Runs cowscope_session_check() on a worker thread; @callback runs on the
 * calling thread's main context.  Never blocks the caller.
 */
void
cowscope_session_check_async (GFile               *file,
                              GCancellable        *cancellable,
                              GAsyncReadyCallback  callback,
                              gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;

  g_return_if_fail (G_IS_FILE (file));

  task = g_task_new (NULL, cancellable, callback, user_data);
  g_task_set_source_tag (task, cowscope_session_check_async);
  g_task_set_task_data (task, g_object_ref (file), g_object_unref);
  g_task_run_in_thread (task, check_thread);
}

/**
 * cowscope_session_check_finish:
 *
 * Returns: (transfer full) (nullable): what cowscope_session_check()
 *   returned, or %NULL with @error set (also G_IO_ERROR_CANCELLED).
 */
GHashTable *
cowscope_session_check_finish (GAsyncResult  *result,
                               GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, NULL), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}
