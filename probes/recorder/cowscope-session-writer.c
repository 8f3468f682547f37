/* cowscope-session-writer.c — appends a recording to a session database. */
#include "cowscope-session-writer.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cowscope-event-store.h"
#include "cowscope-format-schema.h"
#include "cowscope-format-vocabulary.h"
#include "cowscope-recorder-error.h"
#include "cowscope-wal-checkpointer.h"


enum {
  STMT_STRING,
  STMT_CUDA,
  STMT_FRAME,
  STMT_STACK,
  STMT_STACK_FRAME,
  STMT_PROCESS,
  STMT_PROCESS_END,
  STMT_PROCESS_GPU,
  STMT_PROCESS_MAPS,
  STMT_THREAD,
  STMT_THREAD_EVENTS,
  STMT_PROCESS_IDENTITY,
  STMT_PEER_FAULT,
  STMT_META,
  N_STMTS
};

static const char *const stmt_sql[N_STMTS] = {
  [STMT_STRING] = "INSERT OR REPLACE INTO strings (pid, id, value) VALUES (?, ?, ?)",
  [STMT_CUDA] = "INSERT INTO cuda_activity (pid, kind, subkind, start_ns, end_ns, bytes,"
                " correlation_id, device_id, context_id, stream_id, address, external_id, name_id)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
  [STMT_FRAME] = "INSERT INTO frames (id, pid, address) VALUES (?, ?, ?)",
  [STMT_STACK] = "INSERT INTO stacks (id, depth) VALUES (?, ?)",
  [STMT_STACK_FRAME] = "INSERT INTO stack_frames (stack_id, position, frame_id) VALUES (?, ?, ?)",
  [STMT_PROCESS] = "INSERT INTO processes (pid, ppid, exe, cmdline, start_ns, end_reason)"
                   " VALUES (?1, ?2, ?3, ?4, ?5, 'running') ON CONFLICT (pid) DO UPDATE SET"
                   " ppid = ?2, exe = ?3, cmdline = ?4, start_ns = ?5",
  [STMT_PROCESS_IDENTITY] = "INSERT OR REPLACE INTO process_identity (pid, identity, claimed_pid,"
                            " claimed_ppid, claimed_exe, claimed_cmdline) VALUES (?, ?, ?, ?, ?, ?)",
  [STMT_PROCESS_END] = "INSERT INTO processes (pid, end_ns, end_reason, exit_status, exit_signal)"
                       " VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (pid) DO UPDATE SET"
                       " end_ns = ?2, end_reason = ?3, exit_status = ?4, exit_signal = ?5",
  [STMT_PROCESS_GPU] = "INSERT INTO processes (pid, gpu_status) VALUES (?1, ?2)"
                       " ON CONFLICT (pid) DO UPDATE SET gpu_status = ?2",
  [STMT_PROCESS_MAPS] = "INSERT OR REPLACE INTO process_maps (pid, generation, maps) VALUES (?, ?, ?)",
  [STMT_THREAD] = "INSERT OR REPLACE INTO threads (pid, tid, name, ring_capacity, produced, stored, dropped)"
                  " VALUES (?, ?, ?, ?, ?, ?, ?)",
  [STMT_THREAD_EVENTS] = "INSERT OR REPLACE INTO thread_events (pid, tid, produced, stored, dropped,"
                         " stopped_waiting) VALUES (?, ?, ?, ?, ?, ?)",
  [STMT_PEER_FAULT] = "INSERT INTO peer_faults (pid, uid, fault, count, detail)"
                      " VALUES (?1, ?2, ?3, ?4, ?5)"
                      " ON CONFLICT (pid, fault) DO UPDATE SET count = count + ?4",
  [STMT_META] = "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
};

struct _CowscopeSessionWriter {
  char *path;
  sqlite3 *db;
  sqlite3_stmt *stmts[N_STMTS];
  CowscopeEventStore *events; /* events go into packed chunks */
  gboolean in_transaction;
  uint64_t batch_rows;
  int64_t batch_start_ns;
  uint64_t rows;
  GHashTable *stacks; /* GBytes (pid, frames) → stack id */
  GHashTable *frames; /* GBytes (pid, address) → frame id */
  int64_t next_stack_id;
  int64_t next_frame_id;
  CowscopeWalCheckpointer *checkpointer; /* NULL: SQLite's own checkpoints */
};

static int64_t
now_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* CLOCK_REALTIME and CLOCK_MONOTONIC at one instant: the realtime clock
 * read on both sides of the monotonic one, its midpoint kept (the error
 * is half the gap, well under a microsecond).  A session's events are on
 * CLOCK_MONOTONIC; the pair puts them on the wall clock, so that sessions
 * of different machines can be laid side by side. */
static void
clock_pair (int64_t *realtime_ns, int64_t *monotonic_ns)
{
  struct timespec before, mono, after;

  clock_gettime (CLOCK_REALTIME, &before);
  clock_gettime (CLOCK_MONOTONIC, &mono);
  clock_gettime (CLOCK_REALTIME, &after);
  int64_t b = (int64_t) before.tv_sec * 1000000000 + before.tv_nsec;
  int64_t a = (int64_t) after.tv_sec * 1000000000 + after.tv_nsec;
  *realtime_ns = b + (a - b) / 2;
  *monotonic_ns = (int64_t) mono.tv_sec * 1000000000 + mono.tv_nsec;
}

/* This boot's id: two sessions with the same one share CLOCK_MONOTONIC
 * exactly.  NULL when the kernel does not say. */
static char *
boot_id (void)
{
  g_autofree char *text = NULL;

  if (!g_file_get_contents ("/proc/sys/kernel/random/boot_id", &text, NULL, NULL))
    return NULL;
  return g_strstrip (g_steal_pointer (&text));
}

/* Fills @error from the last failed call on @db; the OS error is named
 * when SQLite saw one (full disk, read-only directory). */
void
cowscope_session_set_sqlite_error (GError **error, sqlite3 *db,
                                   const char *path, const char *what)
{
  int sys = db ? sqlite3_system_errno (db) : 0;
  const char *msg = db ? sqlite3_errmsg (db) : "out of memory";
  int code = db ? sqlite3_errcode (db) : SQLITE_NOMEM;

  if (code == SQLITE_FULL && sys == 0)
    sys = ENOSPC;
  if (sys != 0)
    g_set_error (error, COWSCOPE_RECORDER_ERROR, COWSCOPE_RECORDER_ERROR_IO,
                 "cannot %s session '%s': %s (%s)", what, path, g_strerror (sys), msg);
  else
    g_set_error (error, COWSCOPE_RECORDER_ERROR, COWSCOPE_RECORDER_ERROR_IO,
                 "cannot %s session '%s': %s", what, path, msg);
}

static gboolean
exec_sql (CowscopeSessionWriter *writer, const char *sql, GError **error)
{
  if (sqlite3_exec (writer->db, sql, NULL, NULL, NULL) != SQLITE_OK)
    {
      cowscope_session_set_sqlite_error (error, writer->db, writer->path, "write");
      return FALSE;
    }
  return TRUE;
}

/* The format's schema, in the open transaction. */
static gboolean
create_schema (CowscopeSessionWriter *writer, GError **error)
{
  if (!cowscope_format_create_schema (writer->db))
    {
      cowscope_session_set_sqlite_error (error, writer->db, writer->path, "write");
      return FALSE;
    }
  return TRUE;
}

/* Removes @path and its WAL companions; missing files are fine. */
static gboolean
unlink_session_files (const char *path, GError **error)
{
  static const char *const suffixes[] = { "", "-wal", "-shm", "-journal" };
  for (size_t i = 0; i < G_N_ELEMENTS (suffixes); i++)
    {
      g_autofree char *p = g_strconcat (path, suffixes[i], NULL);
      if (unlink (p) != 0 && errno != ENOENT)
        {
          int saved = errno;
          g_set_error (error, COWSCOPE_RECORDER_ERROR, COWSCOPE_RECORDER_ERROR_IO,
                       "cannot replace '%s': %s", p, g_strerror (saved));
          return FALSE;
        }
    }
  return TRUE;
}

static void
writer_free (CowscopeSessionWriter *writer)
{
  cowscope_wal_checkpointer_stop (writer->checkpointer);
  for (int i = 0; i < N_STMTS; i++)
    sqlite3_finalize (writer->stmts[i]);
  cowscope_event_store_free (writer->events);
  if (writer->db)
    sqlite3_close (writer->db);
  g_clear_pointer (&writer->stacks, g_hash_table_unref);
  g_clear_pointer (&writer->frames, g_hash_table_unref);
  g_free (writer->path);
  g_free (writer);
}

CowscopeSessionWriter *
cowscope_session_writer_create (const char *path, gboolean force, GError **error)
{
  struct stat st;
  g_autoptr (GDateTime) utc = NULL;
  g_autofree char *created = NULL;
  g_autofree char *boot = NULL;
  int64_t realtime = 0, monotonic = 0;

  if (stat (path, &st) == 0)
    {
      if (S_ISDIR (st.st_mode))
        {
          g_set_error (error, COWSCOPE_RECORDER_ERROR, COWSCOPE_RECORDER_ERROR_IO,
                       "cannot create session '%s': %s", path, g_strerror (EISDIR));
          return NULL;
        }
      if (!force)
        {
          g_set_error (error, COWSCOPE_RECORDER_ERROR, COWSCOPE_RECORDER_ERROR_EXISTS,
                       "'%s' already exists (use --force to overwrite it)", path);
          return NULL;
        }
    }
  if (force && !unlink_session_files (path, error))
    return NULL;

  int fd = open (path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
  if (fd < 0)
    {
      int saved = errno;
      if (saved == EEXIST)
        g_set_error (error, COWSCOPE_RECORDER_ERROR, COWSCOPE_RECORDER_ERROR_EXISTS,
                     "'%s' already exists (use --force to overwrite it)", path);
      else
        g_set_error (error, COWSCOPE_RECORDER_ERROR, COWSCOPE_RECORDER_ERROR_IO,
                     "cannot create session '%s': %s", path, g_strerror (saved));
      return NULL;
    }
  close (fd);

  CowscopeSessionWriter *writer = g_new0 (CowscopeSessionWriter, 1);
  writer->path = g_strdup (path);
  writer->stacks = g_hash_table_new_full (g_bytes_hash, g_bytes_equal,
                                          (GDestroyNotify) g_bytes_unref, NULL);
  writer->frames = g_hash_table_new_full (g_bytes_hash, g_bytes_equal,
                                          (GDestroyNotify) g_bytes_unref, NULL);
  writer->next_stack_id = 1;
  writer->next_frame_id = 1;

  if (sqlite3_open_v2 (path, &writer->db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK)
    {
      cowscope_session_set_sqlite_error (error, writer->db, path, "open");
      goto fail;
    }
  sqlite3_extended_result_codes (writer->db, 1);

  /* WAL: readers (the app) can follow a live session, and a recorder
   * killed mid-run leaves every committed batch.  NORMAL: no fsync per
   * commit; survives a process crash, not a power loss (that is fine for
   * a profile). */
  if (!exec_sql (writer, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;", error)
      || !exec_sql (writer, "BEGIN", error)
      || !create_schema (writer, error))
    goto fail;
  /* The names of the codes from the start: the marks view reads them. */
  if (!cowscope_format_fill_lookup_tables (writer->db))
    {
      cowscope_session_set_sqlite_error (error, writer->db, path, "write");
      goto fail;
    }


  for (int i = 0; i < N_STMTS; i++)
    if (sqlite3_prepare_v3 (writer->db, stmt_sql[i], -1, SQLITE_PREPARE_PERSISTENT,
                            &writer->stmts[i], NULL) != SQLITE_OK)
      {
        cowscope_session_set_sqlite_error (error, writer->db, path, "prepare");
        goto fail;
      }
  int rc;
  if ((writer->events = cowscope_event_store_new (writer->db, &rc)) == NULL)
    {
      cowscope_session_set_sqlite_error (error, writer->db, path, "prepare");
      goto fail;
    }

  clock_pair (&realtime, &monotonic);
  boot = boot_id ();
  utc = g_date_time_new_now_utc ();
  created = g_date_time_format_iso8601 (utc);
  writer->in_transaction = TRUE;
  if (!cowscope_session_writer_meta_text (writer, "format", COWSCOPE_FORMAT_NAME, error)
      || !cowscope_session_writer_meta_int (writer, "schema_version",
                                            cowscope_format_schema_version (), error)
      || !cowscope_session_writer_meta_text (writer, "recorder_version", COWSCOPE_VERSION, error)
      || !cowscope_session_writer_meta_text (writer, "created_utc", created, error)
      || !cowscope_session_writer_meta_int (writer, "clock_realtime_ns", realtime, error)
      || !cowscope_session_writer_meta_int (writer, "clock_monotonic_ns", monotonic, error)
      || !cowscope_session_writer_meta_text (writer, "hostname", g_get_host_name (), error)
      || !cowscope_session_writer_meta_text (writer, "boot_id", boot, error)
      || !cowscope_session_writer_meta_int (writer, "finalized", 0, error)
      || !cowscope_session_writer_commit (writer, error))
    goto fail;
  writer->checkpointer = cowscope_wal_checkpointer_start (path, writer->db);
  return writer;

fail:
  writer_free (writer);
  unlink_session_files (path, NULL);
  return NULL;
}

sqlite3 *
cowscope_session_writer_get_db (CowscopeSessionWriter *writer)
{
  return writer->db;
}

const char *
cowscope_session_writer_get_path (CowscopeSessionWriter *writer)
{
  return writer->path;
}

uint64_t
cowscope_session_writer_get_rows (CowscopeSessionWriter *writer)
{
  return writer->rows;
}

/* Whether SQLite refused a statement for its content (the record's
 * fault) rather than for the database's state. */
static gboolean
is_content_error (int rc)
{
  switch (rc & 0xff)
    {
    case SQLITE_CONSTRAINT:
    case SQLITE_TOOBIG:
    case SQLITE_RANGE:
    case SQLITE_MISMATCH:
      return TRUE;
    default:
      return FALSE;
    }
}

/* Steps @stmt to completion and resets it, inside the open batch (one
 * is begun if none is open); counts one row.  A content error fails
 * with BAD_RECORD and leaves the batch intact (a failed statement rolls
 * back only itself). */
static gboolean
step (CowscopeSessionWriter *writer, sqlite3_stmt *stmt, guint n_rows, GError **error)
{
  if (!writer->in_transaction)
    {
      if (!exec_sql (writer, "BEGIN", error))
        {
          sqlite3_reset (stmt);
          return FALSE;
        }
      writer->in_transaction = TRUE;
    }
  int rc = sqlite3_step (stmt);
  sqlite3_reset (stmt);
  if (rc != SQLITE_DONE && is_content_error (rc))
    {
      g_set_error (error, COWSCOPE_RECORDER_ERROR, COWSCOPE_RECORDER_ERROR_BAD_RECORD,
                   "a record was refused: %s", sqlite3_errmsg (writer->db));
      return FALSE;
    }
  if (rc != SQLITE_DONE)
    {
      cowscope_session_set_sqlite_error (error, writer->db, writer->path, "write");
      return FALSE;
    }
  writer->rows += n_rows;
  writer->batch_rows += n_rows;
  return TRUE;
}

static void
bind_u64 (sqlite3_stmt *stmt, int i, uint64_t v)
{
  sqlite3_bind_int64 (stmt, i, (sqlite3_int64) v);
}

gboolean
cowscope_session_writer_event (CowscopeSessionWriter *writer, uint32_t pid,
                               uint32_t tid, const CowTraceEvent *event,
                               int64_t stack_id, GError **error)
{
  CowscopeEventRow row = {
    .col = {
      [COWSCOPE_EVENT_COL_SEQ] = cowscope_event_store_next_seq (writer->events),
      [COWSCOPE_EVENT_COL_TS] = event->time_ns,
      [COWSCOPE_EVENT_COL_PID] = pid,
      [COWSCOPE_EVENT_COL_TID] = tid,
      [COWSCOPE_EVENT_COL_TYPE] = event->type,
      [COWSCOPE_EVENT_COL_OP] = event->op,
      [COWSCOPE_EVENT_COL_AUX] = event->aux,
      [COWSCOPE_EVENT_COL_STACK] = stack_id,
    },
    .nulls = stack_id > 0 ? 0 : COWSCOPE_EVENT_NULL_STACK,
  };
  for (int k = 0; k < 5; k++)
    row.col[COWSCOPE_EVENT_COL_V0 + k] = (gint64) event->v[k];
  if (!writer->in_transaction)
    {
      if (!exec_sql (writer, "BEGIN", error))
        return FALSE;
      writer->in_transaction = TRUE;
    }
  if (cowscope_event_store_append (writer->events, &row) != SQLITE_OK)
    {
      cowscope_session_set_sqlite_error (error, writer->db, writer->path, "write");
      return FALSE;
    }
  writer->rows++;
  writer->batch_rows++;
  return TRUE;
}

/* Writes the events not yet in a full chunk, so that readers of the
 * committed session see them. */
static gboolean
flush_events (CowscopeSessionWriter *writer, GError **error)
{
  if (!writer->in_transaction)
    return TRUE;
  if (cowscope_event_store_flush (writer->events) != SQLITE_OK)
    {
      cowscope_session_set_sqlite_error (error, writer->db, writer->path, "write");
      return FALSE;
    }
  return TRUE;
}

gboolean
cowscope_session_writer_string (CowscopeSessionWriter *writer, uint32_t pid,
                                uint64_t id, const char *text, size_t length,
                                GError **error)
{
  sqlite3_stmt *s = writer->stmts[STMT_STRING];
  /* The target's bytes are not trusted to be UTF-8: store valid text. */
  g_autofree char *valid = length > 0 ? g_utf8_make_valid (text, (gssize) length)
                                      : g_strdup ("");
  sqlite3_bind_int64 (s, 1, pid);
  bind_u64 (s, 2, id);
  sqlite3_bind_text (s, 3, valid, -1, SQLITE_STATIC);
  gboolean ok = step (writer, s, 1, error);
  sqlite3_clear_bindings (s);
  return ok;
}

gboolean
cowscope_session_writer_cuda (CowscopeSessionWriter *writer, uint32_t pid,
                              const CowscopeCudaRecord *r, GError **error)
{
  sqlite3_stmt *s = writer->stmts[STMT_CUDA];
  sqlite3_bind_int64 (s, 1, pid);
  sqlite3_bind_int64 (s, 2, r->kind);
  sqlite3_bind_int64 (s, 3, r->subkind);
  sqlite3_bind_int64 (s, 4, r->start_ns);
  sqlite3_bind_int64 (s, 5, r->end_ns);
  bind_u64 (s, 6, r->bytes);
  sqlite3_bind_int64 (s, 7, r->correlation_id);
  sqlite3_bind_int64 (s, 8, r->device_id);
  sqlite3_bind_int64 (s, 9, r->context_id);
  sqlite3_bind_int64 (s, 10, r->stream_id);
  if (r->kind == COWSCOPE_CUDA_EXTERNAL_CORRELATION)
    {
      sqlite3_bind_null (s, 11);
      bind_u64 (s, 12, r->a);
    }
  else
    {
      bind_u64 (s, 11, r->a);
      sqlite3_bind_null (s, 12);
    }
  if (r->name_string_id != 0)
    bind_u64 (s, 13, r->name_string_id);
  else
    sqlite3_bind_null (s, 13);
  return step (writer, s, 1, error);
}

int64_t
cowscope_session_writer_intern_stack (CowscopeSessionWriter *writer, uint32_t pid,
                                      const uint64_t *frames, uint32_t n_frames,
                                      GError **error)
{
  if (n_frames > COWSCOPE_MAX_STACK_DEPTH)
    n_frames = COWSCOPE_MAX_STACK_DEPTH;

  uint64_t key[COWSCOPE_MAX_STACK_DEPTH + 1];
  key[0] = pid;
  memcpy (key + 1, frames, n_frames * sizeof (uint64_t));
  g_autoptr (GBytes) stack_key = g_bytes_new (key, (n_frames + 1) * sizeof (uint64_t));
  gpointer found;
  if (g_hash_table_lookup_extended (writer->stacks, stack_key, NULL, &found))
    return (int64_t) (uintptr_t) found;

  int64_t frame_ids[COWSCOPE_MAX_STACK_DEPTH];
  for (uint32_t i = 0; i < n_frames; i++)
    {
      uint64_t fkey[2] = { pid, frames[i] };
      g_autoptr (GBytes) frame_key = g_bytes_new (fkey, sizeof fkey);
      if (g_hash_table_lookup_extended (writer->frames, frame_key, NULL, &found))
        {
          frame_ids[i] = (int64_t) (uintptr_t) found;
          continue;
        }
      int64_t id = writer->next_frame_id++;
      sqlite3_stmt *s = writer->stmts[STMT_FRAME];
      sqlite3_bind_int64 (s, 1, id);
      sqlite3_bind_int64 (s, 2, pid);
      bind_u64 (s, 3, frames[i]);
      if (!step (writer, s, 1, error))
        return 0;
      g_hash_table_insert (writer->frames, g_bytes_ref (frame_key), (gpointer) (uintptr_t) id);
      frame_ids[i] = id;
    }

  int64_t stack_id = writer->next_stack_id++;
  sqlite3_stmt *s = writer->stmts[STMT_STACK];
  sqlite3_bind_int64 (s, 1, stack_id);
  sqlite3_bind_int64 (s, 2, n_frames);
  if (!step (writer, s, 1, error))
    return 0;
  s = writer->stmts[STMT_STACK_FRAME];
  for (uint32_t i = 0; i < n_frames; i++)
    {
      sqlite3_bind_int64 (s, 1, stack_id);
      sqlite3_bind_int64 (s, 2, i);
      sqlite3_bind_int64 (s, 3, frame_ids[i]);
      if (!step (writer, s, 1, error))
        return 0;
    }
  g_hash_table_insert (writer->stacks, g_bytes_ref (stack_key), (gpointer) (uintptr_t) stack_id);
  return stack_id;
}

static void
bind_text_or_null (sqlite3_stmt *s, int i, const char *text)
{
  if (text)
    sqlite3_bind_text (s, i, text, -1, SQLITE_TRANSIENT);
  else
    sqlite3_bind_null (s, i);
}

gboolean
cowscope_session_writer_process (CowscopeSessionWriter *writer,
                                 const CowscopeProcessIdentity *id,
                                 int64_t start_ns, GError **error)
{
  sqlite3_stmt *s = writer->stmts[STMT_PROCESS];
  sqlite3_bind_int64 (s, 1, id->pid);
  sqlite3_bind_int64 (s, 2, id->ppid);
  bind_text_or_null (s, 3, id->exe);
  bind_text_or_null (s, 4, id->cmdline);
  sqlite3_bind_int64 (s, 5, start_ns);
  if (!step (writer, s, 1, error))
    return FALSE;
  s = writer->stmts[STMT_PROCESS_IDENTITY];
  sqlite3_bind_int64 (s, 1, id->pid);
  sqlite3_bind_text (s, 2, id->identity != NULL ? id->identity : "claimed", -1, SQLITE_STATIC);
  if (id->has_claims)
    {
      sqlite3_bind_int64 (s, 3, id->claimed_pid);
      sqlite3_bind_int64 (s, 4, id->claimed_ppid);
      bind_text_or_null (s, 5, id->claimed_exe);
      bind_text_or_null (s, 6, id->claimed_cmdline);
    }
  else
    for (int i = 3; i <= 6; i++)
      sqlite3_bind_null (s, i);
  return step (writer, s, 1, error);
}

gboolean
cowscope_session_writer_process_end (CowscopeSessionWriter *writer, uint32_t pid,
                                     int64_t end_ns, const char *reason,
                                     int exit_status, int exit_signal,
                                     GError **error)
{
  sqlite3_stmt *s = writer->stmts[STMT_PROCESS_END];
  sqlite3_bind_int64 (s, 1, pid);
  sqlite3_bind_int64 (s, 2, end_ns);
  bind_text_or_null (s, 3, reason);
  if (exit_status >= 0)
    sqlite3_bind_int (s, 4, exit_status);
  else
    sqlite3_bind_null (s, 4);
  if (exit_signal >= 0)
    sqlite3_bind_int (s, 5, exit_signal);
  else
    sqlite3_bind_null (s, 5);
  return step (writer, s, 1, error);
}

gboolean
cowscope_session_writer_process_gpu (CowscopeSessionWriter *writer, uint32_t pid,
                                     const char *status, GError **error)
{
  sqlite3_stmt *s = writer->stmts[STMT_PROCESS_GPU];
  sqlite3_bind_int64 (s, 1, pid);
  bind_text_or_null (s, 2, status);
  return step (writer, s, 1, error);
}

gboolean
cowscope_session_writer_process_maps (CowscopeSessionWriter *writer, uint32_t pid,
                                      uint32_t generation, const char *maps,
                                      GError **error)
{
  sqlite3_stmt *s = writer->stmts[STMT_PROCESS_MAPS];
  g_autofree char *valid = g_utf8_make_valid (maps, -1);
  sqlite3_bind_int64 (s, 1, pid);
  sqlite3_bind_int64 (s, 2, generation);
  sqlite3_bind_text (s, 3, valid, -1, SQLITE_STATIC);
  gboolean ok = step (writer, s, 1, error);
  sqlite3_clear_bindings (s);
  return ok;
}

gboolean
cowscope_session_writer_thread (CowscopeSessionWriter *writer,
                                const CowscopeThreadRow *row, GError **error)
{
  sqlite3_stmt *s = writer->stmts[STMT_THREAD];
  sqlite3_bind_int64 (s, 1, row->pid);
  sqlite3_bind_int64 (s, 2, row->tid);
  bind_text_or_null (s, 3, row->name);
  bind_u64 (s, 4, row->ring_capacity);
  bind_u64 (s, 5, row->produced);
  bind_u64 (s, 6, row->stored);
  bind_u64 (s, 7, row->dropped);
  if (!step (writer, s, 1, error))
    return FALSE;
  s = writer->stmts[STMT_THREAD_EVENTS];
  sqlite3_bind_int64 (s, 1, row->pid);
  sqlite3_bind_int64 (s, 2, row->tid);
  bind_u64 (s, 3, row->events_produced);
  bind_u64 (s, 4, row->events_stored);
  bind_u64 (s, 5, row->events_dropped);
  bind_text_or_null (s, 6, row->stopped_waiting);
  return step (writer, s, 1, error);
}

gboolean
cowscope_session_writer_peer_fault (CowscopeSessionWriter *writer, uint32_t pid,
                                    int64_t uid, const char *fault, uint64_t count,
                                    const char *detail, GError **error)
{
  sqlite3_stmt *s = writer->stmts[STMT_PEER_FAULT];
  /* The detail may quote what a peer sent: store valid text. */
  g_autofree char *valid = detail != NULL ? g_utf8_make_valid (detail, -1) : NULL;
  sqlite3_bind_int64 (s, 1, pid);
  if (uid >= 0)
    sqlite3_bind_int64 (s, 2, uid);
  else
    sqlite3_bind_null (s, 2);
  sqlite3_bind_text (s, 3, fault, -1, SQLITE_TRANSIENT);
  bind_u64 (s, 4, count);
  bind_text_or_null (s, 5, valid);
  return step (writer, s, 1, error);
}

gboolean
cowscope_session_writer_meta_text (CowscopeSessionWriter *writer, const char *key,
                                   const char *value, GError **error)
{
  sqlite3_stmt *s = writer->stmts[STMT_META];
  sqlite3_bind_text (s, 1, key, -1, SQLITE_TRANSIENT);
  bind_text_or_null (s, 2, value);
  return step (writer, s, 1, error);
}

gboolean
cowscope_session_writer_meta_int (CowscopeSessionWriter *writer, const char *key,
                                  int64_t value, GError **error)
{
  sqlite3_stmt *s = writer->stmts[STMT_META];
  sqlite3_bind_text (s, 1, key, -1, SQLITE_TRANSIENT);
  sqlite3_bind_int64 (s, 2, value);
  return step (writer, s, 1, error);
}

gboolean
cowscope_session_writer_commit (CowscopeSessionWriter *writer, GError **error)
{
  if (!flush_events (writer, error))
    return FALSE;
  if (writer->in_transaction && !exec_sql (writer, "COMMIT", error))
    return FALSE;
  writer->in_transaction = FALSE;
  writer->batch_rows = 0;
  writer->batch_start_ns = now_ns ();
  return TRUE;
}

gboolean
cowscope_session_writer_maybe_commit (CowscopeSessionWriter *writer,
                                      int64_t now, GError **error)
{
  if (writer->batch_rows == 0)
    {
      writer->batch_start_ns = now;
      return TRUE;
    }
  if (writer->batch_rows >= COWSCOPE_WRITER_BATCH_ROWS
      || now - writer->batch_start_ns >= COWSCOPE_WRITER_BATCH_NS)
    return cowscope_session_writer_commit (writer, error);
  return TRUE;
}

void
cowscope_session_writer_end_recording (CowscopeSessionWriter *writer)
{
  cowscope_wal_checkpointer_stop (writer->checkpointer);
  writer->checkpointer = NULL;
}

void
cowscope_session_writer_close (CowscopeSessionWriter *writer)
{
  if (!writer)
    return;
  flush_events (writer, NULL); /* best effort: the session is closing */
  if (writer->in_transaction && sqlite3_get_autocommit (writer->db) == 0)
    sqlite3_exec (writer->db, "COMMIT", NULL, NULL, NULL);
  writer_free (writer);
}

void
cowscope_session_writer_discard (CowscopeSessionWriter *writer)
{
  if (!writer)
    return;
  g_autofree char *path = g_strdup (writer->path);
  if (sqlite3_get_autocommit (writer->db) == 0)
    sqlite3_exec (writer->db, "ROLLBACK", NULL, NULL, NULL);
  writer_free (writer);
  unlink_session_files (path, NULL);
}
