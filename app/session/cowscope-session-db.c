/* cowscope-session-db.c — defensive read-only connections (see header). */
#include "cowscope-session-db.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gi18n-lib.h>
#include <glib/gstdio.h>
#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cowscope-packed-reader.h"
#include "cowscope-session-model-error.h"

/* Tables schema version 1 promises (data/session-schema.sql). */
static const char *const required_tables[] = {
  "meta", "event_types", "ops", "processes", "threads", "strings", "events",
  "frames", "stacks", "stack_frames", "cuda_activity", "allocations",
  "storages", "tensors", "contexts", "lazy_clones", "materializations",
  "violations", "ranges", "marks", "checkpoints", "checkpoint_objects",
};

void
cowscope_session_db_set_error (GError **error, sqlite3 *db, int rc,
                               const char *path, const char *what)
{
  int code = rc;
  const char *message = sqlite3_errstr (rc);
  if (db != NULL && sqlite3_errcode (db) != SQLITE_OK)
    {
      code = sqlite3_errcode (db);
      message = sqlite3_errmsg (db);
    }
  int primary = code & 0xff;
  if (primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB)
    g_set_error (error, COWSCOPE_SESSION_MODEL_ERROR,
                 COWSCOPE_SESSION_MODEL_ERROR_DAMAGED,
                 _("The session “%s” is damaged (%s: %s)"), path, what, message);
  else
    g_set_error (error, COWSCOPE_SESSION_MODEL_ERROR,
                 COWSCOPE_SESSION_MODEL_ERROR_FAILED,
                 _("Cannot read the session “%s” (%s: %s)"), path, what, message);
}

sqlite3_stmt *
cowscope_session_db_prepare (sqlite3 *db, const char *path, const char *sql,
                             GError **error)
{
  sqlite3_stmt *stmt = NULL;
  int rc = sqlite3_prepare_v2 (db, sql, -1, &stmt, NULL);
  if (rc != SQLITE_OK)
    {
      cowscope_session_db_set_error (error, db, rc, path, "prepare");
      sqlite3_finalize (stmt);
      return NULL;
    }
  return stmt;
}

gint64
cowscope_session_db_column_int (sqlite3_stmt *stmt, int col, gint64 fallback)
{
  if (sqlite3_column_type (stmt, col) != SQLITE_INTEGER)
    return fallback;
  return sqlite3_column_int64 (stmt, col);
}

char *
cowscope_session_db_column_text (sqlite3_stmt *stmt, int col)
{
  if (sqlite3_column_type (stmt, col) == SQLITE_NULL)
    return NULL;
  const char *text = (const char *) sqlite3_column_text (stmt, col);
  if (text == NULL)
    return NULL;
  return g_utf8_make_valid (text, sqlite3_column_bytes (stmt, col));
}

/* Runs a one-integer query; FALSE with @error on failure.  A query that
 * returns no row or NULL gives @fallback. */
static gboolean
query_int (sqlite3 *db, const char *path, const char *sql, gint64 fallback,
           gint64 *out, GError **error)
{
  g_autoptr (sqlite3_stmt) stmt = cowscope_session_db_prepare (db, path, sql, error);
  if (stmt == NULL)
    return FALSE;
  int rc = sqlite3_step (stmt);
  if (rc == SQLITE_ROW)
    *out = cowscope_session_db_column_int (stmt, 0, fallback);
  else if (rc == SQLITE_DONE)
    *out = fallback;
  else
    {
      cowscope_session_db_set_error (error, db, rc, path, sql);
      return FALSE;
    }
  return TRUE;
}

/* Checks the 16-byte SQLite header of @path and that the file is not
 * shorter than the page count its header promises. */
static gboolean
check_file (const char *path, GError **error)
{
  int fd = g_open (path, O_RDONLY | O_CLOEXEC, 0);
  if (fd < 0)
    {
      int saved = errno;
      g_set_error (error, COWSCOPE_SESSION_MODEL_ERROR,
                   COWSCOPE_SESSION_MODEL_ERROR_NOT_FOUND,
                   _("Cannot open “%s”: %s"), path, g_strerror (saved));
      return FALSE;
    }
  unsigned char header[100];
  ssize_t n = read (fd, header, sizeof header);
  struct stat st;
  gboolean have_stat = fstat (fd, &st) == 0;
  close (fd);
  if (have_stat && S_ISDIR (st.st_mode))
    {
      g_set_error (error, COWSCOPE_SESSION_MODEL_ERROR,
                   COWSCOPE_SESSION_MODEL_ERROR_NOT_FOUND,
                   _("“%s” is a folder, not a session file"), path);
      return FALSE;
    }
  if (n < 16 || memcmp (header, "SQLite format 3", 16) != 0)
    {
      g_set_error (error, COWSCOPE_SESSION_MODEL_ERROR,
                   COWSCOPE_SESSION_MODEL_ERROR_NOT_SQLITE,
                   _("“%s” is not a Cowscope session (not an SQLite database)"), path);
      return FALSE;
    }
  if (n < 100)
    {
      g_set_error (error, COWSCOPE_SESSION_MODEL_ERROR,
                   COWSCOPE_SESSION_MODEL_ERROR_DAMAGED,
                   _("The session “%s” is damaged (truncated header)"), path);
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
  if (have_stat && count_valid && pages > 0
      && (guint64) st.st_size < (guint64) page_size * pages)
    {
      g_set_error (error, COWSCOPE_SESSION_MODEL_ERROR,
                   COWSCOPE_SESSION_MODEL_ERROR_DAMAGED,
                   _("The session “%s” is damaged (truncated: %" PRIu64
                     " of %" PRIu64 " bytes)"),
                   path, (guint64) st.st_size, (guint64) page_size * pages);
      return FALSE;
    }
  return TRUE;
}

/* Reads meta.@key as text into @out (NULL when absent). */
static gboolean
meta_text (sqlite3 *db, const char *path, const char *key, char **out,
           GError **error)
{
  g_autoptr (sqlite3_stmt) stmt =
    cowscope_session_db_prepare (db, path, "SELECT value FROM meta WHERE key = ?1", error);
  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_text (stmt, 1, key, -1, SQLITE_STATIC);
  int rc = sqlite3_step (stmt);
  *out = NULL;
  if (rc == SQLITE_ROW)
    *out = cowscope_session_db_column_text (stmt, 0);
  else if (rc != SQLITE_DONE)
    {
      cowscope_session_db_set_error (error, db, rc, path, "meta");
      return FALSE;
    }
  return TRUE;
}

/* Parses an integer meta value; @fallback when absent or not a number. */
static gint64
parse_int (const char *text, gint64 fallback)
{
  gint64 value;
  if (text == NULL || !g_ascii_string_to_signed (text, 10, G_MININT64, G_MAXINT64,
                                                 &value, NULL))
    return fallback;
  return value;
}

sqlite3 *
cowscope_session_db_open (const char *path, gboolean require_finalized,
                          CowscopeSessionDbInfo *info, GError **error)
{
  g_return_val_if_fail (path != NULL, NULL);

  if (!check_file (path, error))
    return NULL;

  g_autoptr (sqlite3) db = NULL;
  int rc = sqlite3_open_v2 (path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL);
  if (rc != SQLITE_OK)
    {
      cowscope_session_db_set_error (error, db, rc, path, "open");
      return NULL;
    }
  sqlite3_extended_result_codes (db, 1);
  /* Untrusted file: no triggers/views can run code, no huge allocations
   * from a hostile schema. */
  sqlite3_db_config (db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
  sqlite3_db_config (db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
  sqlite3_busy_timeout (db, 2000);

  gint64 user_version = 0;
  if (!query_int (db, path, "PRAGMA user_version", 0, &user_version, error))
    return NULL;
  if (user_version > COWSCOPE_SESSION_MODEL_SCHEMA_VERSION)
    {
      g_set_error (error, COWSCOPE_SESSION_MODEL_ERROR, COWSCOPE_SESSION_MODEL_ERROR_NEWER,
                   _("The session “%s” uses schema version %" PRId64
                     "; this version of Cowscope reads up to version %d. "
                     "Please update Cowscope."),
                   path, user_version, COWSCOPE_SESSION_MODEL_SCHEMA_VERSION);
      return NULL;
    }

  gint64 has_meta = 0;
  if (!query_int (db, path,
                  "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'meta'",
                  0, &has_meta, error))
    return NULL;
  g_autofree char *format = NULL;
  if (has_meta && !meta_text (db, path, "format", &format, error))
    return NULL;
  if (user_version < 1 || !has_meta || g_strcmp0 (format, "cowscope-session") != 0)
    {
      g_set_error (error, COWSCOPE_SESSION_MODEL_ERROR,
                   COWSCOPE_SESSION_MODEL_ERROR_NOT_SESSION,
                   _("“%s” is an SQLite database but not a Cowscope session"), path);
      return NULL;
    }

  g_autofree char *version_text = NULL;
  if (!meta_text (db, path, "schema_version", &version_text, error))
    return NULL;
  gint64 meta_version = parse_int (version_text, user_version);
  if (meta_version > COWSCOPE_SESSION_MODEL_SCHEMA_VERSION)
    {
      g_set_error (error, COWSCOPE_SESSION_MODEL_ERROR, COWSCOPE_SESSION_MODEL_ERROR_NEWER,
                   _("The session “%s” uses schema version %" PRId64
                     "; this version of Cowscope reads up to version %d. "
                     "Please update Cowscope."),
                   path, meta_version, COWSCOPE_SESSION_MODEL_SCHEMA_VERSION);
      return NULL;
    }

  for (gsize i = 0; i < G_N_ELEMENTS (required_tables); i++)
    {
      g_autoptr (sqlite3_stmt) stmt = cowscope_session_db_prepare (
        db, path, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1", error);
      if (stmt == NULL)
        return NULL;
      sqlite3_bind_text (stmt, 1, required_tables[i], -1, SQLITE_STATIC);
      rc = sqlite3_step (stmt);
      if (rc == SQLITE_DONE)
        {
          g_set_error (error, COWSCOPE_SESSION_MODEL_ERROR,
                       COWSCOPE_SESSION_MODEL_ERROR_DAMAGED,
                       _("The session “%s” is damaged (table “%s” is missing)"),
                       path, required_tables[i]);
          return NULL;
        }
      if (rc != SQLITE_ROW)
        {
          cowscope_session_db_set_error (error, db, rc, path, "schema");
          return NULL;
        }
    }

  g_autofree char *finalized_text = NULL;
  g_autofree char *interval_text = NULL;
  if (!meta_text (db, path, "finalized", &finalized_text, error)
      || !meta_text (db, path, "checkpoint_interval", &interval_text, error))
    return NULL;
  gboolean finalized = parse_int (finalized_text, 0) == 1;
  if (require_finalized && !finalized)
    {
      g_set_error (error, COWSCOPE_SESSION_MODEL_ERROR,
                   COWSCOPE_SESSION_MODEL_ERROR_NOT_FINALIZED,
                   _("The session “%s” was not finalized: its recorder stopped "
                     "before it finished. Run “cowscope-cli finalize %s” first."),
                   path, path);
      return NULL;
    }

  if (info != NULL)
    {
      info->schema_version = meta_version;
      info->finalized = finalized;
      info->checkpoint_interval = parse_int (interval_text, 0);
    }
  return g_steal_pointer (&db);
}

gboolean
cowscope_session_db_has_packed_index (sqlite3 *db)
{
  g_return_val_if_fail (db != NULL, FALSE);
  sqlite3_stmt *stmt = NULL;
  gboolean ok = FALSE;
  if (sqlite3_prepare_v2 (db,
                          "SELECT (SELECT value FROM meta WHERE key = 'index_format'),"
                          " (SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN"
                          "  ('timeline_lanes', 'timeline_chunks', 'timeline_spans',"
                          "   'timeline_counters', 'checkpoint_states', 'checkpoint_replays'))",
                          -1, &stmt, NULL) == SQLITE_OK
      && sqlite3_step (stmt) == SQLITE_ROW)
    ok = sqlite3_column_int64 (stmt, 0) == COWSCOPE_PACKED_INDEX_FORMAT
         && sqlite3_column_int64 (stmt, 1) == 6;
  sqlite3_finalize (stmt);
  return ok;
}
