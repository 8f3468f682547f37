/* cowscope-session-finalize.c — completes a recorded session: the
 * format's finalizer (probes/format/cowscope-format-finalize.c) with the
 * recorder's symbolizer. */
#include "cowscope-session-finalize.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

#include "cowscope-format-check.h"
#include "cowscope-format-open.h"
#include "cowscope-format-repair.h"
#include "cowscope-recorder-error.h"
#include "cowscope-session-writer.h"
#include "cowscope-symbolizer.h"

static gboolean
prepare (sqlite3 *db, const char *path, const char *sql, sqlite3_stmt **stmt, GError **error)
{
  if (sqlite3_prepare_v2 (db, sql, -1, stmt, NULL) != SQLITE_OK)
    {
      cowscope_format_set_write_error (error, db, path, "finalize");
      return FALSE;
    }
  return TRUE;
}

static gboolean
exec (sqlite3 *db, const char *path, const char *sql, GError **error)
{
  if (sqlite3_exec (db, sql, NULL, NULL, NULL) != SQLITE_OK)
    {
      cowscope_format_set_write_error (error, db, path, "finalize");
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
              cowscope_format_set_write_error (error, db, path, "finalize");
              goto out;
            }
          sqlite3_reset (update);
        }
      sqlite3_reset (frames);
      cowscope_symbolizer_free (sym);
      if (rc != SQLITE_DONE)
        {
          cowscope_format_set_write_error (error, db, path, "finalize");
          goto out;
        }
    }
  if (rc != SQLITE_DONE)
    {
      cowscope_format_set_write_error (error, db, path, "finalize");
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

/* Marks a session whose recorder died before finishing it
 * (meta.recorder_killed = 1, target_end 'unknown' when missing) and
 * reconciles its counts. */
static gboolean
mark_killed (sqlite3 *db, const char *path, GError **error)
{
  g_autofree char *finalized = cowscope_format_meta_text (db, "finalized");
  if (g_strcmp0 (finalized, "1") == 0)
    return TRUE;
  g_autofree char *end = cowscope_format_meta_text (db, "target_end");
  return exec (db, path, "INSERT OR REPLACE INTO meta (key, value) VALUES ('recorder_killed', 1)",
               error)
         && (end != NULL
             || exec (db, path,
                      "INSERT OR REPLACE INTO meta (key, value) VALUES ('target_end', 'unknown')",
                      error))
         /* Counts the recorder had no chance to write: what `events`
          * holds was stored, the rest of what was produced is lost. */
         && cowscope_format_reconcile_counts (db, path, error);
}

/* What `finalize` promises of the file it completed: sound by
 * integrity_check, every value as the format's rules say. */
static gboolean
check_after (sqlite3 *db, const char *path, GError **error)
{
  return cowscope_format_check_integrity (db, path, error)
         && cowscope_format_check_file (db, path, COWSCOPE_FORMAT_CHECK_VALUES, error);
}

/* A name beside @path that is free: PATH.damaged, else PATH.damaged.N. */
static char *
free_name (const char *path, const char *suffix)
{
  for (int n = 0; n < 1000; n++)
    {
      g_autofree char *name = n == 0 ? g_strconcat (path, suffix, NULL)
                                     : g_strdup_printf ("%s%s.%d", path, suffix, n);
      if (!g_file_test (name, G_FILE_TEST_EXISTS) && !g_file_test (name, G_FILE_TEST_IS_SYMLINK))
        return g_steal_pointer (&name);
    }
  return NULL;
}

/* Rebuilds the session @path (open in *@db, found damaged: @damage) from
 * its recorded tables in a new file beside it, finalizes and checks that,
 * then puts it in @path's place and keeps the damaged file as
 * PATH.damaged (*@db is closed).  FALSE with @error, @path untouched,
 * when what was recorded is damaged too. */
static gboolean
repair (sqlite3 **db, const char *path, const GError *damage, char **note, GError **error)
{
  g_autoptr (GError) recorded = NULL;
  if (!cowscope_format_check_recorded (*db, path, FALSE, &recorded))
    {
      g_set_error (error, COWSCOPE_SESSION_ERROR, COWSCOPE_SESSION_ERROR_DAMAGED,
                   "%s; finalize cannot repair it: the damage is in what was recorded",
                   recorded->message);
      return FALSE;
    }
  g_autofree char *dir = g_path_get_dirname (path);
  g_autofree char *base = g_path_get_basename (path);
  g_autofree char *tmpl = g_strdup_printf (".%s.XXXXXX.repair", base);
  g_autofree char *target = g_build_filename (dir, tmpl, NULL);
  int fd = g_mkstemp_full (target, O_RDWR | O_CLOEXEC, 0644);
  if (fd < 0)
    {
      int saved = errno;
      g_set_error (error, COWSCOPE_SESSION_ERROR, COWSCOPE_SESSION_ERROR_FAILED,
                   "cannot repair '%s': cannot create a file beside it: %s", path,
                   g_strerror (saved));
      return FALSE;
    }
  close (fd);
  g_unlink (target);
  /* Every recorded row must be read back, or the repair is refused. */
  g_autoptr (GError) unreadable = NULL;
  if (!cowscope_format_copy_recorded (*db, path, target, &unreadable))
    {
      if (g_error_matches (unreadable, COWSCOPE_SESSION_ERROR, COWSCOPE_SESSION_ERROR_DAMAGED))
        g_set_error (error, COWSCOPE_SESSION_ERROR, COWSCOPE_SESSION_ERROR_DAMAGED,
                     "%s; finalize cannot repair it: the damage is in what was recorded",
                     unreadable->message);
      else
        g_propagate_error (error, g_steal_pointer (&unreadable));
      return FALSE;
    }

  g_autoptr (sqlite3) copy = NULL;
  gboolean ok = sqlite3_open_v2 (target, &copy, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK;
  if (!ok)
    cowscope_format_set_write_error (error, copy, target, "repair");
  ok = ok && mark_killed (copy, path, error) && cowscope_session_finalize (copy, path, error)
       && check_after (copy, path, error);
  g_clear_pointer (&copy, sqlite3_close);
  if (!ok)
    {
      g_unlink (target);
      return FALSE;
    }

  /* The damaged file and its write-ahead log (a killed recorder leaves
   * one) go aside together: a log left at @path would be replayed over
   * the repaired file. */
  g_clear_pointer (db, sqlite3_close);
  g_autofree char *kept = free_name (path, ".damaged");
  g_autofree char *wal = g_strconcat (path, "-wal", NULL);
  g_autofree char *shm = g_strconcat (path, "-shm", NULL);
  g_autofree char *kept_wal = kept != NULL ? g_strconcat (kept, "-wal", NULL) : NULL;
  if (kept == NULL || g_rename (path, kept) != 0
      || (g_file_test (wal, G_FILE_TEST_EXISTS) && g_rename (wal, kept_wal) != 0))
    {
      int saved = errno;
      g_set_error (error, COWSCOPE_SESSION_ERROR, COWSCOPE_SESSION_ERROR_FAILED,
                   "cannot repair '%s': cannot keep the damaged file aside: %s", path,
                   g_strerror (saved));
      g_unlink (target);
      return FALSE;
    }
  g_unlink (shm);
  if (g_rename (target, path) != 0)
    {
      int saved = errno;
      g_set_error (error, COWSCOPE_SESSION_ERROR, COWSCOPE_SESSION_ERROR_FAILED,
                   "cannot repair '%s': cannot move the repaired file into place (it is %s; "
                   "the damaged file is %s): %s", path, target, kept, g_strerror (saved));
      return FALSE;
    }
  if (note != NULL)
    *note = g_strdup_printf ("%s; rebuilt from its recorded tables (the damaged file is kept "
                             "as %s)", damage->message, kept);
  return TRUE;
}

gboolean
cowscope_session_finalize_file (const char *path, char **repaired, GError **error)
{
  if (repaired != NULL)
    *repaired = NULL;
  g_autoptr (sqlite3) db = cowscope_format_open (path, COWSCOPE_FORMAT_OPEN_READ_WRITE, NULL,
                                                 error);
  if (db == NULL)
    return FALSE;

  /* Before: the whole file's structure.  A damaged one is rebuilt from
   * what was recorded, never finalized in place. */
  g_autoptr (GError) damage = NULL;
  if (!cowscope_format_check_file (db, path, COWSCOPE_FORMAT_CHECK_STRUCTURE, &damage)
      || !cowscope_format_check_recorded (db, path, FALSE, &damage))
    {
      if (!g_error_matches (damage, COWSCOPE_SESSION_ERROR, COWSCOPE_SESSION_ERROR_DAMAGED))
        {
          g_propagate_error (error, g_steal_pointer (&damage));
          return FALSE;
        }
      return repair (&db, path, damage, repaired, error);
    }

  if (!mark_killed (db, path, error))
    return FALSE;
  if (!cowscope_session_finalize (db, path, &damage))
    {
      if (!g_error_matches (damage, COWSCOPE_SESSION_ERROR, COWSCOPE_SESSION_ERROR_DAMAGED))
        {
          g_propagate_error (error, g_steal_pointer (&damage));
          return FALSE;
        }
      return repair (&db, path, damage, repaired, error);
    }
  /* After: what quick_check before could not see (an index that
   * disagrees with its table) shows now; the derived part is rebuilt. */
  if (!check_after (db, path, &damage))
    return repair (&db, path, damage, repaired, error);
  return TRUE;
}
