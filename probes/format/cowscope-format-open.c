/* cowscope-format-open.c — the defensive opener (see header). */
#include "cowscope-format-open.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gi18n-lib.h>
#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cowscope-format-schema.h"
#include "cowscope-format-sqlite.h"
#include "cowscope-format-vocabulary.h"

gint64
cowscope_format_column_int (sqlite3_stmt *stmt, int col, gint64 fallback)
{
  if (sqlite3_column_type (stmt, col) != SQLITE_INTEGER)
    return fallback;
  return sqlite3_column_int64 (stmt, col);
}

char *
cowscope_format_column_text (sqlite3_stmt *stmt, int col)
{
  if (sqlite3_column_type (stmt, col) == SQLITE_NULL)
    return NULL;
  const char *text = (const char *) sqlite3_column_text (stmt, col);
  if (text == NULL)
    return NULL;
  return g_utf8_make_valid (text, sqlite3_column_bytes (stmt, col));
}

sqlite3_stmt *
cowscope_format_statement (sqlite3 *db, const char *path, const char *sql, GError **error)
{
  sqlite3_stmt *stmt = NULL;
  int rc = cowscope_format_prepare (db, sql, &stmt);
  if (rc != SQLITE_OK)
    {
      cowscope_format_set_error (error, db, rc, path, "preparing a query");
      sqlite3_finalize (stmt);
      return NULL;
    }
  return stmt;
}

char *
cowscope_format_meta_text (sqlite3 *db, const char *key)
{
  sqlite3_stmt *stmt = NULL;
  char *value = NULL;
  if (sqlite3_prepare_v2 (db, "SELECT value FROM meta WHERE key = ?1", -1, &stmt, NULL)
      != SQLITE_OK)
    return NULL;
  sqlite3_bind_text (stmt, 1, key, -1, SQLITE_STATIC);
  if (sqlite3_step (stmt) == SQLITE_ROW)
    value = cowscope_format_column_text (stmt, 0);
  sqlite3_finalize (stmt);
  return value;
}

/* Sets @error for a session that is not a regular file (@st). */
static void
set_not_regular (GError **error, const char *path, const struct stat *st)
{
  if (S_ISDIR (st->st_mode))
    g_set_error (error, COWSCOPE_SESSION_ERROR, COWSCOPE_SESSION_ERROR_NOT_FOUND,
                 _("cannot open %s: it is a directory, not a session file"), path);
  else
    g_set_error (error, COWSCOPE_SESSION_ERROR, COWSCOPE_SESSION_ERROR_NOT_SESSION,
                 _("not a Cowscope session: %s is not a regular file (%s)"), path,
                 S_ISFIFO (st->st_mode)  ? _("a named pipe")
                 : S_ISSOCK (st->st_mode) ? _("a socket")
                 : S_ISCHR (st->st_mode)  ? _("a character device")
                 : S_ISBLK (st->st_mode)  ? _("a block device")
                                          : _("not a file"));
}

/* Checks that @path is a regular file that starts like an SQLite
 * database and is not shorter than the page count its header promises,
 * before SQLite sees it.  A FIFO, socket or device is refused from its
 * stat() alone: opening one can block (a FIFO waits for a writer) or act
 * (some devices do something when opened).  The open itself does not
 * block (O_NONBLOCK) and is checked again with fstat(), should the path
 * have been replaced in between. */
static gboolean
check_file (const char *path, GError **error)
{
  struct stat st, opened = { 0 };
  if (stat (path, &st) != 0)
    {
      int saved = errno;
      g_set_error (error, COWSCOPE_SESSION_ERROR, COWSCOPE_SESSION_ERROR_NOT_FOUND,
                   _("cannot open %s: %s"), path, g_strerror (saved));
      return FALSE;
    }
  if (!S_ISREG (st.st_mode))
    {
      set_not_regular (error, path, &st);
      return FALSE;
    }
  int fd = open (path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0)
    {
      int saved = errno;
      g_set_error (error, COWSCOPE_SESSION_ERROR, COWSCOPE_SESSION_ERROR_NOT_FOUND,
                   _("cannot open %s: %s"), path, g_strerror (saved));
      return FALSE;
    }
  if (fstat (fd, &opened) != 0 || !S_ISREG (opened.st_mode))
    {
      set_not_regular (error, path, &opened);
      close (fd);
      return FALSE;
    }
  st = opened;
  unsigned char header[100];
  ssize_t n;
  do
    n = read (fd, header, sizeof header);
  while (n < 0 && errno == EINTR);
  int saved = errno;
  close (fd);
  if (n < 0)
    {
      g_set_error (error, COWSCOPE_SESSION_ERROR, COWSCOPE_SESSION_ERROR_NOT_FOUND,
                   _("cannot open %s: %s"), path, g_strerror (saved));
      return FALSE;
    }
  if (n == 0)
    {
      g_set_error (error, COWSCOPE_SESSION_ERROR, COWSCOPE_SESSION_ERROR_NOT_SQLITE,
                   _("not a Cowscope session: %s is empty"), path);
      return FALSE;
    }
  if (n < 16 || memcmp (header, "SQLite format 3", 16) != 0)
    {
      g_set_error (error, COWSCOPE_SESSION_ERROR, COWSCOPE_SESSION_ERROR_NOT_SQLITE,
                   _("not a Cowscope session: %s is not an SQLite database"), path);
      return FALSE;
    }
  if (n < (ssize_t) sizeof header)
    {
      g_set_error (error, COWSCOPE_SESSION_ERROR, COWSCOPE_SESSION_ERROR_DAMAGED,
                   _("%s is damaged: its header is truncated"), path);
      return FALSE;
    }
  /* Page size at offset 16 (1 means 65536), page count at 28 (valid when
   * the version-valid-for number at 92 matches the change counter at 24). */
  guint32 page_size = ((guint32) header[16] << 8) | header[17];
  if (page_size == 1)
    page_size = 65536;
  guint32 pages = ((guint32) header[28] << 24) | ((guint32) header[29] << 16)
                  | ((guint32) header[30] << 8) | header[31];
  gboolean count_valid = memcmp (header + 24, header + 92, 4) == 0;
  if (count_valid && pages > 0 && (guint64) st.st_size < (guint64) page_size * pages)
    {
      g_set_error (error, COWSCOPE_SESSION_ERROR, COWSCOPE_SESSION_ERROR_DAMAGED,
                   _("%s is damaged: it is truncated (%" PRIu64 " of %" PRIu64 " bytes)"),
                   path, (guint64) st.st_size, (guint64) page_size * pages);
      return FALSE;
    }
  return TRUE;
}

/* Runs a one-integer query into @out (no row or NULL: 0). */
static gboolean
query_int (sqlite3 *db, const char *path, const char *sql, gint64 *out, GError **error)
{
  sqlite3_stmt *stmt = NULL;
  int rc = sqlite3_prepare_v2 (db, sql, -1, &stmt, NULL);
  if (rc == SQLITE_OK)
    {
      rc = sqlite3_step (stmt);
      *out = rc == SQLITE_ROW ? cowscope_format_column_int (stmt, 0, 0) : 0;
    }
  sqlite3_finalize (stmt);
  if (rc != SQLITE_ROW && rc != SQLITE_DONE && rc != SQLITE_OK)
    {
      cowscope_format_set_error (error, db, rc, path, "reading the schema");
      return FALSE;
    }
  return TRUE;
}

gboolean
cowscope_format_has_table (sqlite3 *db, const char *name)
{
  sqlite3_stmt *stmt = NULL;
  gboolean found = FALSE;
  if (sqlite3_prepare_v2 (db, "SELECT 1 FROM main.sqlite_master WHERE type = 'table' AND name = ?1",
                          -1, &stmt, NULL) == SQLITE_OK)
    {
      sqlite3_bind_text (stmt, 1, name, -1, SQLITE_STATIC);
      found = sqlite3_step (stmt) == SQLITE_ROW;
    }
  sqlite3_finalize (stmt);
  return found;
}

/* TRUE when @db has a table or a view named @name (what a version
 * promises: `marks` became a view in version 4). */
static gboolean
has_relation (sqlite3 *db, const char *name)
{
  sqlite3_stmt *stmt = NULL;
  gboolean found = FALSE;
  if (sqlite3_prepare_v2 (db, "SELECT 1 FROM main.sqlite_master WHERE type IN ('table', 'view')"
                              " AND name = ?1", -1, &stmt, NULL) == SQLITE_OK)
    {
      sqlite3_bind_text (stmt, 1, name, -1, SQLITE_STATIC);
      found = sqlite3_step (stmt) == SQLITE_ROW;
    }
  sqlite3_finalize (stmt);
  return found;
}

/* An integer meta value; @fallback when absent or not a number. */
static gint64
meta_int (sqlite3 *db, const char *key, gint64 fallback)
{
  g_autofree char *text = cowscope_format_meta_text (db, key);
  gint64 value;
  if (text == NULL
      || !g_ascii_string_to_signed (text, 10, G_MININT64, G_MAXINT64, &value, NULL))
    return fallback;
  return value;
}

/* Checks what makes @db a session this build reads; fills @info. */
static gboolean
validate (sqlite3 *db, const char *path, CowscopeFormatOpenFlags flags, CowscopeFormatInfo *info,
          GError **error)
{
  gint64 user_version = 0, n_objects = 0;
  /* Reading the schema catches a damaged first page early. */
  if (!query_int (db, path, "PRAGMA user_version", &user_version, error)
      || !query_int (db, path, "SELECT count(*) FROM main.sqlite_master", &n_objects, error))
    return FALSE;
  g_autofree char *format = cowscope_format_has_table (db, "meta") ? cowscope_format_meta_text (db, "format")
                                                   : NULL;
  if (format == NULL)
    {
      g_set_error (error, COWSCOPE_SESSION_ERROR, COWSCOPE_SESSION_ERROR_NOT_SESSION,
                   _("not a Cowscope session: %s is an SQLite database without Cowscope metadata"),
                   path);
      return FALSE;
    }
  if (strcmp (format, COWSCOPE_FORMAT_NAME) != 0)
    {
      g_set_error (error, COWSCOPE_SESSION_ERROR, COWSCOPE_SESSION_ERROR_NOT_SESSION,
                   _("not a Cowscope session: %s has format '%s'"), path, format);
      return FALSE;
    }
  gint64 version = MAX (user_version, meta_int (db, "schema_version", 0));
  if (version <= 0)
    {
      g_set_error (error, COWSCOPE_SESSION_ERROR, COWSCOPE_SESSION_ERROR_DAMAGED,
                   _("%s is damaged: it has no schema version"), path);
      return FALSE;
    }
  int current = cowscope_format_schema_version ();
  if (version > current)
    {
      g_set_error (error, COWSCOPE_SESSION_ERROR, COWSCOPE_SESSION_ERROR_NEWER,
                   _("%s was written by a newer Cowscope (schema %" PRId64
                     "; this build reads up to %d)"),
                   path, version, current);
      return FALSE;
    }
  const char *const *tables = cowscope_format_required_tables ((int) version);
  for (gsize i = 0; tables != NULL && tables[i] != NULL; i++)
    if (!has_relation (db, tables[i]))
      {
        g_set_error (error, COWSCOPE_SESSION_ERROR, COWSCOPE_SESSION_ERROR_DAMAGED,
                     _("%s is damaged: table '%s' is missing"), path, tables[i]);
        return FALSE;
      }
  gboolean finalized = meta_int (db, "finalized", 0) == 1;
  if ((flags & COWSCOPE_FORMAT_OPEN_FINALIZED) && !finalized)
    {
      g_set_error (error, COWSCOPE_SESSION_ERROR, COWSCOPE_SESSION_ERROR_NOT_FINALIZED,
                   _("%s was not finalized: its recorder stopped before it finished; "
                     "run 'cowscope-cli finalize %s' first"),
                   path, path);
      return FALSE;
    }
  info->schema_version = (int) version;
  info->finalized = finalized;
  info->current = finalized && version == current
                  && meta_int (db, "index_format", 0) == COWSCOPE_FORMAT_INDEX_VERSION;
  info->checkpoint_interval = meta_int (db, "checkpoint_interval", 0);
  return TRUE;
}

/* Reads one row of two integers of @sql (NULL -> G_MININT64). */
static gboolean
query_pair (sqlite3 *db, const char *path, const char *sql, gint64 *a, gint64 *b, GError **error)
{
  g_autoptr (sqlite3_stmt) stmt = cowscope_format_statement (db, path, sql, error);
  if (stmt == NULL)
    return FALSE;
  int rc = sqlite3_step (stmt);
  if (rc != SQLITE_ROW)
    {
      cowscope_format_set_error (error, db, rc, path, "bounds");
      return FALSE;
    }
  *a = cowscope_format_column_int (stmt, 0, G_MININT64);
  *b = cowscope_format_column_int (stmt, 1, G_MININT64);
  return TRUE;
}

/* min/max on an index are O(log n), but only one per SELECT (SQLite scans
 * the whole table or index for "min(x), max(x)" in one query). */
gboolean
cowscope_format_query_bounds (sqlite3 *db, const char *path, gint64 *start_ns, gint64 *end_ns,
                              GError **error)
{
  gint64 min_ts, max_ts, cuda_min, cuda_max;
  /* In time order, `events` gives its first and last row at once (from a
   * session's chunks, or an index of an older session's table). */
  if (!query_pair (db, path,
                   "SELECT (SELECT ts FROM events ORDER BY ts LIMIT 1),"
                   " (SELECT ts FROM events ORDER BY ts DESC LIMIT 1)",
                   &min_ts, &max_ts, error)
      || !query_pair (db, path,
                      "SELECT (SELECT min(start_ns) FROM cuda_activity),"
                      " (SELECT max(end_ns) FROM cuda_activity)",
                      &cuda_min, &cuda_max, error))
    return FALSE;
  if (min_ts == G_MININT64)
    min_ts = max_ts = cuda_min != G_MININT64 ? cuda_min : 0;
  if (cuda_min != G_MININT64)
    {
      min_ts = MIN (min_ts, cuda_min);
      max_ts = MAX (max_ts, cuda_max);
    }
  *start_ns = min_ts;
  *end_ns = MAX (max_ts, min_ts);
  return TRUE;
}

gboolean
cowscope_format_adopt (sqlite3 *db, const char *path, CowscopeFormatOpenFlags flags,
                       CowscopeFormatInfo *info, GError **error)
{
  g_return_val_if_fail (db != NULL && path != NULL, FALSE);
  sqlite3_extended_result_codes (db, 1);
  sqlite3_busy_timeout (db, 5000);
  /* An untrusted file: no writable schema tricks, no side-effecting
   * functions in its views or triggers, no extensions. */
  sqlite3_db_config (db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
  sqlite3_db_config (db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
  sqlite3_db_config (db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, NULL);
  /* Every page read is checked for cells that overlap or run off the
   * page (a small cost; SQLite leaves it off), so a damaged page is an
   * error, not a wrong value. */
  sqlite3_exec (db, "PRAGMA cell_size_check = ON", NULL, NULL, NULL);
  /* `events` is a virtual table of this library's module. */
  cowscope_format_register_everywhere ();
  int rc = cowscope_format_register_sqlite (db);
  if (rc != SQLITE_OK)
    {
      g_set_error (error, COWSCOPE_SESSION_ERROR, COWSCOPE_SESSION_ERROR_FAILED,
                   _("cannot open %s: %s"), path, sqlite3_errstr (rc));
      return FALSE;
    }

  CowscopeFormatInfo scratch;
  return validate (db, path, flags, info != NULL ? info : &scratch, error);
}

sqlite3 *
cowscope_format_open (const char *path, CowscopeFormatOpenFlags flags, CowscopeFormatInfo *info,
                      GError **error)
{
  g_return_val_if_fail (path != NULL, NULL);
  if (!check_file (path, error))
    return NULL;

  g_autoptr (sqlite3) db = NULL;
  int mode = (flags & COWSCOPE_FORMAT_OPEN_READ_WRITE) ? SQLITE_OPEN_READWRITE
                                                       : SQLITE_OPEN_READONLY;
  /* A plain path: no URI interpretation, no creation. */
  int rc = sqlite3_open_v2 (path, &db, mode | SQLITE_OPEN_NOMUTEX, NULL);
  if (rc != SQLITE_OK)
    {
      g_set_error (error, COWSCOPE_SESSION_ERROR, COWSCOPE_SESSION_ERROR_FAILED,
                   _("cannot open %s: %s"), path,
                   db != NULL ? sqlite3_errmsg (db) : sqlite3_errstr (rc));
      return NULL;
    }
  if (!cowscope_format_adopt (db, path, flags, info, error))
    return NULL;
  return g_steal_pointer (&db);
}
