/* cowscope-session-finalize.c — completes a recorded session: the
 * format's finalizer (probes/format/cowscope-format-finalize.c) with the
 * recorder's symbolizer. */
#include "cowscope-session-finalize.h"

#include <errno.h>
#include <string.h>

#include "cowscope-format-open.h"
#include "cowscope-recorder-error.h"
#include "cowscope-session-writer.h"
#include "cowscope-symbolizer.h"

static gboolean
prepare (sqlite3 *db, const char *path, const char *sql, sqlite3_stmt **stmt, GError **error)
{
  if (sqlite3_prepare_v2 (db, sql, -1, stmt, NULL) != SQLITE_OK)
    {
      cowscope_session_set_sqlite_error (error, db, path, "finalize");
      return FALSE;
    }
  return TRUE;
}

static gboolean
exec (sqlite3 *db, const char *path, const char *sql, GError **error)
{
  if (sqlite3_exec (db, sql, NULL, NULL, NULL) != SQLITE_OK)
    {
      cowscope_session_set_sqlite_error (error, db, path, "finalize");
      return FALSE;
    }
  return TRUE;
}

/* Symbolizes every frame that has no module yet, process by process. */
static gboolean
symbolize_frames (sqlite3 *db, const char *path, GError **error)
{
  sqlite3_stmt *pids = NULL, *frames = NULL, *update = NULL;
  gboolean ok = FALSE;

  if (!prepare (db, path,
                "SELECT DISTINCT f.pid, m.maps FROM frames f"
                " LEFT JOIN process_maps m ON m.pid = f.pid WHERE f.module IS NULL",
                &pids, error)
      || !prepare (db, path, "SELECT id, address FROM frames WHERE pid = ? AND module IS NULL",
                   &frames, error)
      || !prepare (db, path,
                   "UPDATE frames SET module = ?, function = ?, file = ?, line = ? WHERE id = ?",
                   &update, error))
    goto out;

  int rc;
  while ((rc = sqlite3_step (pids)) == SQLITE_ROW)
    {
      sqlite3_int64 pid = sqlite3_column_int64 (pids, 0);
      const char *maps = (const char *) sqlite3_column_text (pids, 1);
      CowscopeSymbolizer *sym = cowscope_symbolizer_new (maps);
      sqlite3_bind_int64 (frames, 1, pid);
      while ((rc = sqlite3_step (frames)) == SQLITE_ROW)
        {
          CowscopeSymbol s;
          sqlite3_int64 id = sqlite3_column_int64 (frames, 0);
          uint64_t address = (uint64_t) sqlite3_column_int64 (frames, 1);
          cowscope_symbolizer_lookup (sym, address, &s);
          /* '' marks "looked up, no module", so a re-run skips it. */
          sqlite3_bind_text (update, 1, s.module ? s.module : "", -1, SQLITE_TRANSIENT);
          if (s.function)
            sqlite3_bind_text (update, 2, s.function, -1, SQLITE_TRANSIENT);
          else
            sqlite3_bind_null (update, 2);
          if (s.file)
            sqlite3_bind_text (update, 3, s.file, -1, SQLITE_TRANSIENT);
          else
            sqlite3_bind_null (update, 3);
          if (s.line > 0)
            sqlite3_bind_int (update, 4, s.line);
          else
            sqlite3_bind_null (update, 4);
          sqlite3_bind_int64 (update, 5, id);
          if (sqlite3_step (update) != SQLITE_DONE)
            {
              cowscope_symbolizer_free (sym);
              cowscope_session_set_sqlite_error (error, db, path, "finalize");
              goto out;
            }
          sqlite3_reset (update);
        }
      sqlite3_reset (frames);
      cowscope_symbolizer_free (sym);
      if (rc != SQLITE_DONE)
        {
          cowscope_session_set_sqlite_error (error, db, path, "finalize");
          goto out;
        }
    }
  if (rc != SQLITE_DONE)
    {
      cowscope_session_set_sqlite_error (error, db, path, "finalize");
      goto out;
    }
  ok = TRUE;

out:
  sqlite3_finalize (pids);
  sqlite3_finalize (frames);
  sqlite3_finalize (update);
  return ok;
}

gboolean
cowscope_session_finalize (sqlite3 *db, const char *path, GError **error)
{
  return cowscope_format_finalize (db, path, symbolize_frames, error);
}

gboolean
cowscope_session_finalize_file (const char *path, GError **error)
{
  g_autoptr (sqlite3) db = cowscope_format_open (path, COWSCOPE_FORMAT_OPEN_READ_WRITE, NULL,
                                                 error);
  if (db == NULL)
    return FALSE;
  g_autofree char *finalized = cowscope_format_meta_text (db, "finalized");
  if (g_strcmp0 (finalized, "1") != 0)
    {
      g_autofree char *end = cowscope_format_meta_text (db, "target_end");
      if (!exec (db, path,
                 "INSERT OR REPLACE INTO meta (key, value) VALUES ('recorder_killed', 1)", error))
        return FALSE;
      if (!end && !exec (db, path,
                         "INSERT OR REPLACE INTO meta (key, value) VALUES ('target_end', 'unknown')",
                         error))
        return FALSE;
      /* Counts the recorder had no chance to write: what `events` holds
       * was stored, the rest of what was produced is lost. */
      if (!cowscope_format_reconcile_counts (db, path, error))
        return FALSE;
    }
  return cowscope_session_finalize (db, path, error);
}
