/* cowscope-session.c — opens a session database read-only, defensively. */
#include "cowscope-session.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* User-visible messages (untranslated for now), in one place. */
#define MSG_MISSING        "cannot open %s: %s"
#define MSG_DIRECTORY      "cannot open %s: it is a directory, not a session file"
#define MSG_NOT_REGULAR    "not a Cowscope session: %s is not a regular file"
#define MSG_EMPTY          "not a Cowscope session: %s is empty"
#define MSG_NOT_SQLITE     "not a Cowscope session: %s is not an SQLite database"
#define MSG_NO_META        "not a Cowscope session: %s is an SQLite database without Cowscope metadata"
#define MSG_WRONG_FORMAT   "not a Cowscope session: %s has format '%s'"
#define MSG_NO_VERSION     "%s is damaged: it has no schema version"
#define MSG_NEWER          "%s was written by a newer Cowscope (schema %" G_GINT64_FORMAT "; this build reads up to %d)"
#define MSG_MISSING_TABLE  "%s is damaged: table '%s' is missing"
#define MSG_DAMAGED        "%s is damaged: %s"
#define MSG_SQLITE         "cannot read %s: %s (%s)"
#define MSG_OPEN_FAILED    "cannot open %s: %s"

struct _CowscopeSession {
  sqlite3 *db;
  char *path;
  int schema_version;
  gboolean finalized;
  GHashTable *meta;  /* key → text value */
  GHashTable *enums; /* table name → GHashTable (gint64* id → name) */
  GHashTable *fallback_names; /* "table #id" strings handed out */
};

G_DEFINE_QUARK (cowscope-cli-session-error-quark, cowscope_cli_session_error)

/* Tables every schema-1 session has, finalized or not. */
static const char *const required_tables[] = {
  "meta", "events", "processes", "threads", "strings", "frames", "stacks",
  "stack_frames", "cuda_activity", "lazy_clones", "materializations",
  "violations", "ranges", "marks", "tensors",
};

/* The engine's names for its enums (engine/cow-trace.h), used when a
 * session's lookup table lacks a value (e.g. it was never finalized). */
typedef struct {
  const char *table;
  gint64 id;
  const char *name;
} BuiltinName;

static const BuiltinName builtin_names[] = {
  { "materialize_kinds", 1, "copy" },
  { "materialize_kinds", 2, "steal" },
  { "materialize_kinds", 3, "failed" },
  { "eager_reasons", 1, "foreign_data_ptr" },
  { "eager_reasons", 2, "not_simple" },
  { "access_kinds", 1, "read" },
  { "access_kinds", 2, "write" },
  { "allocation_kinds", 0, "cpu" },
  { "allocation_kinds", 1, "cuda" },
  { "allocation_kinds", 2, "foreign" },
  { "cuda_kinds", 1, "memcpy" },
  { "cuda_kinds", 2, "memset" },
  { "cuda_kinds", 3, "kernel" },
  { "cuda_kinds", 4, "memory_alloc" },
  { "cuda_kinds", 5, "memory_free" },
  { "cuda_kinds", 6, "external_correlation" },
  { "cuda_kinds", 7, "runtime_api" },
  /* CUpti_ActivityMemcpyKind, for cuda_activity.subkind of a memcpy. */
  { "memcpy_kinds", 0, "unknown" },
  { "memcpy_kinds", 1, "HtoD" },
  { "memcpy_kinds", 2, "DtoH" },
  { "memcpy_kinds", 3, "HtoA" },
  { "memcpy_kinds", 4, "AtoH" },
  { "memcpy_kinds", 5, "AtoA" },
  { "memcpy_kinds", 6, "AtoD" },
  { "memcpy_kinds", 7, "DtoA" },
  { "memcpy_kinds", 8, "DtoD" },
  { "memcpy_kinds", 9, "HtoH" },
  { "memcpy_kinds", 10, "PtoP" },
};

static const char *const builtin_ops[] = {
  "none", "empty", "from_data", "from_foreign", "view", "reshape", "slice",
  "select", "narrow", "transpose", "permute", "expand", "as_strided",
  "contiguous", "clone", "lazy_clone", "mutable_data", "fill_", "add",
  "add_", "mul", "mul_", "matmul", "sum", "copy_", "to_device", "ipc",
  "scale_",
};

/* Views over the raw events for a session that was never finalized; they
 * shadow the (empty) derived tables of the same names.  Payload columns
 * follow engine/cow-trace.h. */
static const char raw_views_sql[] =
  "CREATE TEMP VIEW lazy_clones AS SELECT e.seq AS seq, e.pid AS pid,"
  " e.tid AS tid, e.ts AS ts, e.op AS op, e.v0 AS source_tensor_id,"
  " e.v1 AS result_tensor_id, e.v2 AS source_storage_id,"
  " e.v3 AS result_storage_id,"
  " CASE e.type WHEN 12 THEN e.v4 END AS context_id,"
  " CASE e.type WHEN 13 THEN e.aux END AS eager_reason,"
  " CASE e.type WHEN 13 THEN e.v4 ELSE COALESCE("
  "  (SELECT s.v2 FROM main.events s WHERE s.type = 3 AND s.pid = e.pid"
  "   AND s.v0 = e.v3 AND s.seq < e.seq ORDER BY s.seq DESC LIMIT 1),"
  "  (SELECT s.v2 FROM main.events s WHERE s.type = 3 AND s.pid = e.pid"
  "   AND s.v0 = e.v2 AND s.seq < e.seq ORDER BY s.seq DESC LIMIT 1)) END"
  " AS nbytes, e.stack_id AS stack_id"
  " FROM main.events e WHERE e.type IN (12, 13);"
  "CREATE TEMP VIEW materializations AS SELECT COALESCE(b.seq, e.seq) AS seq,"
  " e.pid AS pid, e.tid AS tid, COALESCE(b.ts, e.ts) AS begin_ts,"
  " e.ts AS end_ts, e.op AS op, e.v0 AS storage_id, e.v1 AS context_id,"
  " b.v2 AS tensor_id, e.v3 AS nbytes, (e.aux & 255) AS kind,"
  " ((e.aux >> 8) & 1) AS copy_discarded, e.v4 AS lock_wait_ns,"
  " e.v2 AS allocation_id, NULL AS lazy_clone_seq,"
  " COALESCE(b.stack_id, e.stack_id) AS stack_id"
  " FROM main.events e LEFT JOIN main.events b ON b.seq ="
  "  (SELECT x.seq FROM main.events x WHERE x.type = 14 AND x.pid = e.pid"
  "   AND x.tid = e.tid AND x.v0 = e.v0 AND x.seq < e.seq"
  "   ORDER BY x.seq DESC LIMIT 1)"
  " WHERE e.type = 15;"
  "CREATE TEMP VIEW violations AS SELECT seq, pid, tid, ts, op,"
  " aux AS access, v0 AS storage_id, v1 AS writer_tensor_id,"
  " v2 AS accessor_tensor_id, v3 AS writer_generation,"
  " v4 AS accessor_generation, stack_id"
  " FROM main.events WHERE type = 16;"
  "CREATE TEMP VIEW ranges AS SELECT b.pid AS pid, b.v0 AS id, b.tid AS tid,"
  " (SELECT s.value FROM main.strings s WHERE s.pid = b.pid AND s.id = b.v1)"
  " AS name, NULLIF (b.v2, 0) AS parent_id, b.ts AS begin_ts,"
  " (SELECT MIN (x.ts) FROM main.events x WHERE x.type = 18"
  "  AND x.pid = b.pid AND x.v0 = b.v0 AND x.seq > b.seq) AS end_ts"
  " FROM main.events b WHERE b.type = 17;"
  "CREATE TEMP VIEW marks AS SELECT e.seq AS seq, e.pid AS pid, e.tid AS tid,"
  " e.ts AS ts,"
  " (SELECT s.value FROM main.strings s WHERE s.pid = e.pid AND s.id = e.v1)"
  " AS name, NULLIF (e.v2, 0) AS range_id"
  " FROM main.events e WHERE e.type = 19;"
  "CREATE TEMP VIEW tensors AS SELECT e.pid AS pid, e.v0 AS id,"
  " e.v1 AS storage_id, NULLIF (e.v2, 0) AS base_tensor_id,"
  " (e.aux & 255) AS dtype, ((e.aux >> 8) & 255) AS ndim, e.v3 AS numel,"
  " e.v4 AS storage_offset, e.op AS op,"
  " (SELECT s.value FROM main.events n JOIN main.strings s"
  "  ON s.pid = n.pid AND s.id = n.v1 WHERE n.type = 7 AND n.pid = e.pid"
  "  AND n.v0 = e.v0 ORDER BY n.seq DESC LIMIT 1) AS name,"
  " e.tid AS tid, e.ts AS new_ts, NULL AS free_ts"
  " FROM main.events e WHERE e.type = 5;";

/* Fills @error for the failure of a plain system call on @path. */
static void
set_errno_error (GError **error, const char *path, int saved_errno)
{
  g_set_error (error, COWSCOPE_SESSION_ERROR,
               COWSCOPE_SESSION_ERROR_NOT_FOUND, MSG_MISSING, path,
               g_strerror (saved_errno));
}

/* Checks that @path is a readable regular file that starts like an SQLite
 * database, before SQLite sees it. */
static gboolean
check_file (const char *path, GError **error)
{
  static const char magic[16] = "SQLite format 3";
  char header[16];
  struct stat st;
  ssize_t n;
  int fd;

  if (stat (path, &st) != 0)
    {
      set_errno_error (error, path, errno);
      return FALSE;
    }
  if (S_ISDIR (st.st_mode))
    {
      g_set_error (error, COWSCOPE_SESSION_ERROR,
                   COWSCOPE_SESSION_ERROR_NOT_FOUND, MSG_DIRECTORY, path);
      return FALSE;
    }
  if (!S_ISREG (st.st_mode))
    {
      g_set_error (error, COWSCOPE_SESSION_ERROR,
                   COWSCOPE_SESSION_ERROR_NOT_SESSION, MSG_NOT_REGULAR, path);
      return FALSE;
    }
  fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    {
      set_errno_error (error, path, errno);
      return FALSE;
    }
  do
    n = read (fd, header, sizeof header);
  while (n < 0 && errno == EINTR);
  int saved_errno = errno;
  close (fd);
  if (n < 0)
    {
      set_errno_error (error, path, saved_errno);
      return FALSE;
    }
  if (n == 0)
    {
      g_set_error (error, COWSCOPE_SESSION_ERROR,
                   COWSCOPE_SESSION_ERROR_NOT_SESSION, MSG_EMPTY, path);
      return FALSE;
    }
  if (n < (ssize_t) sizeof header || memcmp (header, magic, sizeof magic) != 0)
    {
      g_set_error (error, COWSCOPE_SESSION_ERROR,
                   COWSCOPE_SESSION_ERROR_NOT_SESSION, MSG_NOT_SQLITE, path);
      return FALSE;
    }
  return TRUE;
}

void
cowscope_session_set_error (CowscopeSession *session, GError **error, int rc,
                            const char *what)
{
  const char *message = sqlite3_errmsg (session->db);
  int primary = rc & 0xff;

  if (primary == SQLITE_NOTADB)
    {
      g_set_error (error, COWSCOPE_SESSION_ERROR,
                   COWSCOPE_SESSION_ERROR_NOT_SESSION, MSG_NOT_SQLITE,
                   session->path);
      return;
    }
  if (primary == SQLITE_CORRUPT || primary == SQLITE_IOERR
      || primary == SQLITE_ERROR)
    {
      g_autofree char *saved = g_strdup (message);
      g_autofree char *finding = NULL;
      sqlite3_stmt *stmt = NULL;

      /* quick_check names the damage better than the failed query. */
      if (primary != SQLITE_ERROR
          && sqlite3_prepare_v2 (session->db, "PRAGMA quick_check (1)", -1,
                                 &stmt, NULL) == SQLITE_OK
          && sqlite3_step (stmt) == SQLITE_ROW)
        {
          const char *text = (const char *) sqlite3_column_text (stmt, 0);
          if (text != NULL && strcmp (text, "ok") != 0)
            finding = g_strdup (text);
        }
      sqlite3_finalize (stmt);
      g_set_error (error, COWSCOPE_SESSION_ERROR,
                   COWSCOPE_SESSION_ERROR_DAMAGED, MSG_DAMAGED, session->path,
                   finding != NULL ? finding : saved);
      return;
    }
  g_set_error (error, COWSCOPE_SESSION_ERROR, COWSCOPE_SESSION_ERROR_FAILED,
               MSG_SQLITE, session->path, message, what);
}

sqlite3_stmt *
cowscope_session_prepare (CowscopeSession *session, const char *sql,
                          GError **error)
{
  sqlite3_stmt *stmt = NULL;
  int rc = sqlite3_prepare_v2 (session->db, sql, -1, &stmt, NULL);

  if (rc != SQLITE_OK)
    {
      sqlite3_finalize (stmt);
      cowscope_session_set_error (session, error, rc, "preparing a query");
      return NULL;
    }
  return stmt;
}

int
cowscope_session_step (CowscopeSession *session, sqlite3_stmt *stmt,
                       GError **error)
{
  int rc = sqlite3_step (stmt);

  if (rc == SQLITE_ROW || rc == SQLITE_DONE)
    return rc;
  cowscope_session_set_error (session, error, rc, "reading");
  return -1;
}

gboolean
cowscope_session_query_int (CowscopeSession *session, const char *sql,
                            gint64 *value, GError **error)
{
  sqlite3_stmt *stmt = cowscope_session_prepare (session, sql, error);
  int rc;

  *value = 0;
  if (stmt == NULL)
    return FALSE;
  rc = cowscope_session_step (session, stmt, error);
  if (rc == SQLITE_ROW)
    *value = sqlite3_column_int64 (stmt, 0);
  sqlite3_finalize (stmt);
  return rc >= 0;
}

gboolean
cowscope_session_has_table (CowscopeSession *session, const char *name)
{
  sqlite3_stmt *stmt = NULL;
  gboolean found = FALSE;

  if (sqlite3_prepare_v2 (session->db,
                          "SELECT 1 FROM main.sqlite_master"
                          " WHERE type = 'table' AND name = ?",
                          -1, &stmt, NULL) == SQLITE_OK)
    {
      sqlite3_bind_text (stmt, 1, name, -1, SQLITE_STATIC);
      found = sqlite3_step (stmt) == SQLITE_ROW;
    }
  sqlite3_finalize (stmt);
  return found;
}

gboolean
cowscope_session_has_column (CowscopeSession *session, const char *table,
                             const char *column)
{
  sqlite3_stmt *stmt = NULL;
  gboolean found = FALSE;

  if (sqlite3_prepare_v2 (session->db,
                          "SELECT 1 FROM pragma_table_info (?1, 'main')"
                          " WHERE name = ?2",
                          -1, &stmt, NULL) == SQLITE_OK)
    {
      sqlite3_bind_text (stmt, 1, table, -1, SQLITE_STATIC);
      sqlite3_bind_text (stmt, 2, column, -1, SQLITE_STATIC);
      found = sqlite3_step (stmt) == SQLITE_ROW;
    }
  sqlite3_finalize (stmt);
  return found;
}

/* Reads the meta table into session->meta. */
static gboolean
load_meta (CowscopeSession *session, GError **error)
{
  sqlite3_stmt *stmt =
    cowscope_session_prepare (session, "SELECT key, value FROM main.meta", error);
  int rc;

  if (stmt == NULL)
    return FALSE;
  while ((rc = cowscope_session_step (session, stmt, error)) == SQLITE_ROW)
    {
      const char *key = (const char *) sqlite3_column_text (stmt, 0);
      const char *value = (const char *) sqlite3_column_text (stmt, 1);
      if (key != NULL && value != NULL)
        g_hash_table_replace (session->meta, g_strdup (key), g_strdup (value));
    }
  sqlite3_finalize (stmt);
  return rc == SQLITE_DONE;
}

/* Validates metadata, schema version and tables; fills the session. */
static gboolean
validate (CowscopeSession *session, GError **error)
{
  const char *format;
  gint64 user_version = 0, meta_version = 0, version;

  if (!cowscope_session_query_int (session, "PRAGMA user_version",
                                   &user_version, error)
      /* Reading the schema catches a damaged first page early. */
      || !cowscope_session_query_int (session,
                                      "SELECT count(*) FROM main.sqlite_master",
                                      &version, error))
    return FALSE;
  if (!cowscope_session_has_table (session, "meta"))
    {
      g_set_error (error, COWSCOPE_SESSION_ERROR,
                   COWSCOPE_SESSION_ERROR_NOT_SESSION, MSG_NO_META,
                   session->path);
      return FALSE;
    }
  if (!load_meta (session, error))
    return FALSE;
  format = cowscope_session_get_meta (session, "format");
  if (format == NULL)
    {
      g_set_error (error, COWSCOPE_SESSION_ERROR,
                   COWSCOPE_SESSION_ERROR_NOT_SESSION, MSG_NO_META,
                   session->path);
      return FALSE;
    }
  if (strcmp (format, "cowscope-session") != 0)
    {
      g_set_error (error, COWSCOPE_SESSION_ERROR,
                   COWSCOPE_SESSION_ERROR_NOT_SESSION, MSG_WRONG_FORMAT,
                   session->path, format);
      return FALSE;
    }
  cowscope_session_get_meta_int (session, "schema_version", &meta_version);
  version = MAX (user_version, meta_version);
  if (version <= 0)
    {
      g_set_error (error, COWSCOPE_SESSION_ERROR,
                   COWSCOPE_SESSION_ERROR_DAMAGED, MSG_NO_VERSION,
                   session->path);
      return FALSE;
    }
  if (version > COWSCOPE_SESSION_READ_SCHEMA_VERSION)
    {
      g_set_error (error, COWSCOPE_SESSION_ERROR,
                   COWSCOPE_SESSION_ERROR_NEWER, MSG_NEWER, session->path,
                   version, COWSCOPE_SESSION_READ_SCHEMA_VERSION);
      return FALSE;
    }
  session->schema_version = (int) version;
  for (gsize i = 0; i < G_N_ELEMENTS (required_tables); i++)
    if (!cowscope_session_has_table (session, required_tables[i]))
      {
        g_set_error (error, COWSCOPE_SESSION_ERROR,
                     COWSCOPE_SESSION_ERROR_DAMAGED, MSG_MISSING_TABLE,
                     session->path, required_tables[i]);
        return FALSE;
      }
  {
    gint64 finalized = 0;
    session->finalized =
      cowscope_session_get_meta_int (session, "finalized", &finalized)
      && finalized == 1;
  }
  if (!session->finalized)
    {
      char *message = NULL;
      int rc = sqlite3_exec (session->db, raw_views_sql, NULL, NULL, &message);
      sqlite3_free (message);
      if (rc != SQLITE_OK)
        {
          cowscope_session_set_error (session, error, rc,
                                      "reading the raw events");
          return FALSE;
        }
    }
  return TRUE;
}

CowscopeSession *
cowscope_session_open (const char *path, GError **error)
{
  g_autoptr (CowscopeSession) session = NULL;
  int rc;

  g_return_val_if_fail (path != NULL, NULL);

  if (!check_file (path, error))
    return NULL;

  session = g_new0 (CowscopeSession, 1);
  session->path = g_strdup (path);
  session->meta = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  session->enums = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                          (GDestroyNotify) g_hash_table_unref);
  session->fallback_names = g_hash_table_new_full (g_str_hash, g_str_equal,
                                                   g_free, NULL);

  /* Plain read-only open: no URI interpretation, no creation. */
  rc = sqlite3_open_v2 (path, &session->db, SQLITE_OPEN_READONLY, NULL);
  if (rc != SQLITE_OK)
    {
      g_set_error (error, COWSCOPE_SESSION_ERROR,
                   COWSCOPE_SESSION_ERROR_FAILED, MSG_OPEN_FAILED, path,
                   session->db != NULL ? sqlite3_errmsg (session->db)
                                       : sqlite3_errstr (rc));
      return NULL;
    }
  sqlite3_extended_result_codes (session->db, 1);
  sqlite3_busy_timeout (session->db, 5000);
  /* An untrusted file: no writable schema tricks, no side-effecting
   * functions in its views or triggers. */
  sqlite3_db_config (session->db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
  sqlite3_db_config (session->db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
  sqlite3_db_config (session->db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, NULL);

  if (!validate (session, error))
    return NULL;
  return g_steal_pointer (&session);
}

void
cowscope_session_free (CowscopeSession *session)
{
  if (session == NULL)
    return;
  sqlite3_close_v2 (session->db);
  g_hash_table_unref (session->meta);
  g_hash_table_unref (session->enums);
  g_hash_table_unref (session->fallback_names);
  g_free (session->path);
  g_free (session);
}

sqlite3 *
cowscope_session_get_db (CowscopeSession *session)
{
  return session->db;
}

const char *
cowscope_session_get_path (CowscopeSession *session)
{
  return session->path;
}

int
cowscope_session_get_schema_version (CowscopeSession *session)
{
  return session->schema_version;
}

gboolean
cowscope_session_is_finalized (CowscopeSession *session)
{
  return session->finalized;
}

const char *
cowscope_session_get_meta (CowscopeSession *session, const char *key)
{
  return g_hash_table_lookup (session->meta, key);
}

gboolean
cowscope_session_get_meta_int (CowscopeSession *session, const char *key,
                               gint64 *value)
{
  const char *text = cowscope_session_get_meta (session, key);
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
load_enum (CowscopeSession *session, const char *table)
{
  GHashTable *names = g_hash_table_lookup (session->enums, table);
  sqlite3_stmt *stmt = NULL;

  if (names != NULL)
    return names;
  names = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
  g_hash_table_insert (session->enums, g_strdup (table), names);
  if (!cowscope_session_has_table (session, table))
    return names;
  {
    g_autofree char *sql =
      g_strdup_printf ("SELECT id, name FROM main.\"%s\"", table);
    if (sqlite3_prepare_v2 (session->db, sql, -1, &stmt, NULL) == SQLITE_OK)
      while (sqlite3_step (stmt) == SQLITE_ROW)
        {
          const char *name = (const char *) sqlite3_column_text (stmt, 1);
          gint64 *id = g_new (gint64, 1);
          if (name == NULL)
            {
              g_free (id);
              continue;
            }
          *id = sqlite3_column_int64 (stmt, 0);
          g_hash_table_replace (names, id, g_strdup (name));
        }
    sqlite3_finalize (stmt);
  }
  return names;
}

const char *
cowscope_session_enum_name (CowscopeSession *session, const char *table,
                            gint64 id)
{
  GHashTable *names;
  const char *name;
  char *fallback;

  /* Only plain identifiers name a lookup table. */
  for (const char *p = table; *p != '\0'; p++)
    g_return_val_if_fail (g_ascii_isalnum (*p) || *p == '_', "?");

  names = load_enum (session, table);
  name = g_hash_table_lookup (names, &id);
  if (name != NULL)
    return name;
  if (strcmp (table, "ops") == 0 && id >= 0
      && id < (gint64) G_N_ELEMENTS (builtin_ops))
    return builtin_ops[id];
  for (gsize i = 0; i < G_N_ELEMENTS (builtin_names); i++)
    if (builtin_names[i].id == id && strcmp (builtin_names[i].table, table) == 0)
      return builtin_names[i].name;

  fallback = g_strdup_printf ("%s #%" G_GINT64_FORMAT, table, id);
  name = g_hash_table_lookup (session->fallback_names, fallback);
  if (name != NULL)
    {
      g_free (fallback);
      return name;
    }
  g_hash_table_add (session->fallback_names, fallback);
  return fallback;
}
