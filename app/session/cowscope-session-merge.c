/* cowscope-session-merge.c — several recorded sessions into one (see
 * header). */
#include "cowscope-session-merge.h"

#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cowscope-format-events.h"
#include "cowscope-format-finalize.h"
#include "cowscope-session-tables.h"
#include "cowscope-session-writer.h" /* and the CUDA records of cowscope-protocol.h */

/* User-visible strings (untranslated for now), in one place. */
#define MSG_TOO_FEW       "give at least two sessions to merge"
#define MSG_TOO_MANY      "cannot merge more than %d sessions at once (pids would not stay apart); merge them in groups, or query them together (README, \"Many sessions in one query\")"
#define MSG_LABELS        "%u labels for %u sessions: give one --label per session, or none"
#define MSG_SAME_FILE     "'%s' and '%s' are the same file: each session can be merged once"
#define MSG_SAME_SESSION  "'%s' and '%s' are copies of one recording (same host, boot and start): each session can be merged once"
#define MSG_OUTPUT_INPUT  "the output '%s' is the session '%s' to be merged: choose another output (it is never overwritten)"
#define MSG_ALREADY       "'%s' is already a merged session (%" G_GINT64_FORMAT " members): merge its members instead"
#define MSG_MEMBER        "session %u of %u: "

/* Events copied at a time: what the merge holds in memory. */
#define CHUNK_EVENTS 4096

#define PID_SHIFT 22
#define PID_MASK ((1u << PID_SHIFT) - 1)

/* What the merge knows about one member before copying it. */
typedef struct {
  char *path;
  char *label;
  char *hostname, *boot_id, *created_utc, *command, *program, *gpu_tracing;
  gint64 stacks;
  gboolean has_rank, has_local_rank, has_world_size;
  gint64 rank, local_rank, world_size;
  gboolean has_clock;
  gint64 clock_realtime_ns, clock_monotonic_ns;
  gint64 target_pid;
  gint64 offset_ns;
  const char *alignment;
  dev_t dev;
  ino_t ino;
  guint given; /* its position on the command line */
} Member;

static void
member_free (Member *m)
{
  g_free (m->path);
  g_free (m->label);
  g_free (m->hostname);
  g_free (m->boot_id);
  g_free (m->created_utc);
  g_free (m->command);
  g_free (m->program);
  g_free (m->gpu_tracing);
  g_free (m);
}

static char *
meta_dup (CowscopeSessionTables *tables, const char *key)
{
  return g_strdup (cowscope_session_tables_get_meta (tables, key));
}

/* Prefixes @error's message with which member it is about. */
static void
prefix_member (GError **error, guint index, guint n)
{
  if (error != NULL && *error != NULL)
    g_prefix_error (error, MSG_MEMBER, index + 1, n);
}

/* Reads what the merge needs of @path; refuses a merged session. */
static Member *
probe_member (const char *path, guint given, guint n, GError **error)
{
  g_autoptr (CowscopeSessionTables) tables = cowscope_session_tables_open (path, error);
  Member *m;
  struct stat st;
  gint64 members = 0;

  if (tables == NULL)
    {
      prefix_member (error, given, n);
      return NULL;
    }
  if (cowscope_session_tables_has_table (tables, "merged_sessions")
      && cowscope_session_tables_query_int (tables, "SELECT count (*) FROM merged_sessions",
                                            &members, NULL)
      && members > 0)
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, MSG_ALREADY, path, members);
      return NULL;
    }
  m = g_new0 (Member, 1);
  m->path = g_strdup (path);
  m->given = given;
  m->hostname = meta_dup (tables, "hostname");
  m->boot_id = meta_dup (tables, "boot_id");
  m->created_utc = meta_dup (tables, "created_utc");
  m->command = meta_dup (tables, "command");
  m->program = meta_dup (tables, "program");
  m->gpu_tracing = meta_dup (tables, "gpu_tracing");
  if (!cowscope_session_tables_get_meta_int (tables, "stacks", &m->stacks))
    m->stacks = 0;
  m->has_rank = cowscope_session_tables_get_meta_int (tables, "rank", &m->rank);
  m->has_local_rank = cowscope_session_tables_get_meta_int (tables, "local_rank", &m->local_rank);
  m->has_world_size = cowscope_session_tables_get_meta_int (tables, "world_size", &m->world_size);
  m->has_clock = cowscope_session_tables_get_meta_int (tables, "clock_realtime_ns",
                                                       &m->clock_realtime_ns)
                 && cowscope_session_tables_get_meta_int (tables, "clock_monotonic_ns",
                                                          &m->clock_monotonic_ns);
  if (!cowscope_session_tables_get_meta_int (tables, "target_pid", &m->target_pid))
    m->target_pid = 0;
  if (stat (path, &st) == 0)
    {
      m->dev = st.st_dev;
      m->ino = st.st_ino;
    }
  return m;
}

/* TRUE when @a and @b are the same recording: the same file, or copies
 * of it (one host's boot and the same instant on its monotonic clock). */
static gboolean
same_recording (const Member *a, const Member *b, GError **error)
{
  if (a->ino != 0 && a->dev == b->dev && a->ino == b->ino)
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, MSG_SAME_FILE, a->path,
                   b->path);
      return TRUE;
    }
  if (a->has_clock && b->has_clock && a->clock_monotonic_ns == b->clock_monotonic_ns
      && a->clock_realtime_ns == b->clock_realtime_ns
      && g_strcmp0 (a->boot_id, b->boot_id) == 0 && g_strcmp0 (a->hostname, b->hostname) == 0)
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, MSG_SAME_SESSION, a->path,
                   b->path);
      return TRUE;
    }
  if (!a->has_clock && !b->has_clock && a->created_utc != NULL
      && g_strcmp0 (a->created_utc, b->created_utc) == 0
      && g_strcmp0 (a->command, b->command) == 0 && a->target_pid == b->target_pid)
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, MSG_SAME_SESSION, a->path,
                   b->path);
      return TRUE;
    }
  return FALSE;
}

static gint
compare_by_rank (gconstpointer a, gconstpointer b)
{
  const Member *x = *(Member *const *) a, *y = *(Member *const *) b;

  if (x->rank != y->rank)
    return x->rank < y->rank ? -1 : 1;
  return x->given < y->given ? -1 : x->given > y->given;
}

/* Orders the members (by rank when all have one), labels them and works
 * out each one's clock offset onto the first one's clock. */
static void
arrange (GPtrArray *members, const char *const *labels)
{
  gboolean all_ranked = TRUE, several_hosts = FALSE;
  const Member *first;

  for (guint i = 0; i < members->len; i++)
    {
      const Member *m = members->pdata[i];
      all_ranked = all_ranked && m->has_rank;
      several_hosts = several_hosts
                      || g_strcmp0 (m->hostname, ((Member *) members->pdata[0])->hostname) != 0;
    }
  if (all_ranked)
    g_ptr_array_sort (members, compare_by_rank);

  first = members->pdata[0];
  for (guint i = 0; i < members->len; i++)
    {
      Member *m = members->pdata[i];

      if (labels != NULL)
        m->label = g_strdup (labels[m->given]);
      else if (m->has_rank && several_hosts && m->hostname != NULL)
        m->label = g_strdup_printf ("rank %" G_GINT64_FORMAT " (%s)", m->rank, m->hostname);
      else if (m->has_rank)
        m->label = g_strdup_printf ("rank %" G_GINT64_FORMAT, m->rank);
      else
        {
          g_autofree char *base = g_path_get_basename (m->path);
          if (g_str_has_suffix (base, ".cowscope"))
            base[strlen (base) - strlen (".cowscope")] = '\0';
          m->label = g_steal_pointer (&base);
        }

      if (m == first || (m->boot_id != NULL && g_strcmp0 (m->boot_id, first->boot_id) == 0))
        {
          /* One boot: one CLOCK_MONOTONIC, nothing to move. */
          m->offset_ns = 0;
          m->alignment = "same boot";
        }
      else if (m->has_clock && first->has_clock)
        {
          m->offset_ns = (m->clock_realtime_ns - m->clock_monotonic_ns)
                         - (first->clock_realtime_ns - first->clock_monotonic_ns);
          m->alignment = "wall clock";
        }
      else
        {
          m->offset_ns = 0;
          m->alignment = "none";
        }
    }
}

/* ---- copying one member ------------------------------------------------- */

typedef struct {
  CowscopeSessionWriter *writer;
  CowscopeSessionTables *tables;
  const Member *member;
  guint id; /* 1, 2, ... */
  GHashTable *stacks; /* "stack_id pid" → new stack id (gint64 in a pointer) */
  guint64 events;
} Copy;

static guint32
remap_pid (const Copy *c, gint64 pid)
{
  return ((guint32) c->id << PID_SHIFT) | ((guint32) pid & PID_MASK);
}

/* Runs @sql over the member, handing each row to @row; FALSE with
 * @error. */
typedef gboolean (*RowFunc) (Copy *c, sqlite3_stmt *stmt, GError **error);

static gboolean
each_row (Copy *c, const char *sql, RowFunc row, GError **error)
{
  sqlite3_stmt *stmt = cowscope_session_tables_prepare (c->tables, sql, error);
  int rc;
  gboolean ok = TRUE;

  if (stmt == NULL)
    return FALSE;
  while (ok && (rc = cowscope_session_tables_step (c->tables, stmt, error)) == SQLITE_ROW)
    ok = row (c, stmt, error);
  sqlite3_finalize (stmt);
  return ok && rc == SQLITE_DONE;
}

static const char *
text_at (sqlite3_stmt *stmt, int column)
{
  return (const char *) sqlite3_column_text (stmt, column);
}

static int
int_or (sqlite3_stmt *stmt, int column, int otherwise)
{
  return sqlite3_column_type (stmt, column) == SQLITE_NULL ? otherwise
                                                           : sqlite3_column_int (stmt, column);
}

static gboolean
copy_string (Copy *c, sqlite3_stmt *s, GError **error)
{
  const char *text = text_at (s, 2);
  return cowscope_session_writer_string (c->writer, remap_pid (c, sqlite3_column_int64 (s, 0)),
                                         (uint64_t) sqlite3_column_int64 (s, 1),
                                         text != NULL ? text : "",
                                         text != NULL ? strlen (text) : 0, error);
}

/* Columns: processes.*, then process_identity's (NULL when absent). */
static gboolean
copy_process (Copy *c, sqlite3_stmt *s, GError **error)
{
  gint64 pid = sqlite3_column_int64 (s, 0);
  const char *end_reason = text_at (s, 6);
  CowscopeProcessIdentity identity = {
    .pid = remap_pid (c, pid),
    /* A parent in the member (a fork) is remapped with it; the target's
     * parent (the recorder) is outside every member. */
    .ppid = sqlite3_column_int (s, 15) ? remap_pid (c, sqlite3_column_int64 (s, 1))
                                       : (uint32_t) sqlite3_column_int64 (s, 1),
    .exe = text_at (s, 2),
    .cmdline = text_at (s, 3),
    .identity = text_at (s, 10) != NULL ? text_at (s, 10) : "kernel",
    .claimed_pid = (uint32_t) sqlite3_column_int64 (s, 11),
    .claimed_ppid = (uint32_t) sqlite3_column_int64 (s, 12),
    .claimed_exe = text_at (s, 13),
    .claimed_cmdline = text_at (s, 14),
    .has_claims = sqlite3_column_type (s, 11) != SQLITE_NULL,
  };
  sqlite3 *out = cowscope_session_writer_get_db (c->writer);
  sqlite3_stmt *original = NULL;
  gboolean ok;

  ok = cowscope_session_writer_process (c->writer, &identity,
                                        sqlite3_column_int64 (s, 4) + c->member->offset_ns, error);
  if (ok && end_reason != NULL && strcmp (end_reason, "running") != 0)
    ok = cowscope_session_writer_process_end (
      c->writer, identity.pid,
      sqlite3_column_type (s, 5) == SQLITE_NULL ? 0
                                                 : sqlite3_column_int64 (s, 5) + c->member->offset_ns,
      end_reason, int_or (s, 7, -1), int_or (s, 8, -1), error);
  if (ok && text_at (s, 9) != NULL)
    ok = cowscope_session_writer_process_gpu (c->writer, identity.pid, text_at (s, 9), error);
  if (!ok)
    return FALSE;

  if (sqlite3_prepare_v2 (out, "INSERT OR REPLACE INTO merged_processes (pid, session_id,"
                               " original_pid) VALUES (?, ?, ?)", -1, &original, NULL)
      != SQLITE_OK)
    {
      cowscope_session_set_sqlite_error (error, out, cowscope_session_writer_get_path (c->writer),
                                         "write");
      return FALSE;
    }
  sqlite3_bind_int64 (original, 1, identity.pid);
  sqlite3_bind_int64 (original, 2, c->id);
  sqlite3_bind_int64 (original, 3, pid);
  ok = sqlite3_step (original) == SQLITE_DONE;
  if (!ok)
    cowscope_session_set_sqlite_error (error, out, cowscope_session_writer_get_path (c->writer),
                                       "write");
  sqlite3_finalize (original);
  return ok;
}

static gboolean
copy_maps (Copy *c, sqlite3_stmt *s, GError **error)
{
  const char *maps = text_at (s, 2);
  return maps == NULL
         || cowscope_session_writer_process_maps (c->writer,
                                                  remap_pid (c, sqlite3_column_int64 (s, 0)),
                                                  (uint32_t) sqlite3_column_int64 (s, 1), maps,
                                                  error);
}

/* Columns: threads.*, then thread_events' (NULL when absent). */
static gboolean
copy_thread (Copy *c, sqlite3_stmt *s, GError **error)
{
  CowscopeThreadRow row = {
    .pid = remap_pid (c, sqlite3_column_int64 (s, 0)),
    .tid = (uint32_t) sqlite3_column_int64 (s, 1),
    .name = text_at (s, 2),
    .ring_capacity = (uint64_t) sqlite3_column_int64 (s, 3),
    .produced = (uint64_t) sqlite3_column_int64 (s, 4),
    .stored = (uint64_t) sqlite3_column_int64 (s, 5),
    .dropped = (uint64_t) sqlite3_column_int64 (s, 6),
    .events_produced = (uint64_t) sqlite3_column_int64 (s, 7),
    .events_stored = (uint64_t) sqlite3_column_int64 (s, 8),
    .events_dropped = (uint64_t) sqlite3_column_int64 (s, 9),
    .stopped_waiting = text_at (s, 10),
  };
  return cowscope_session_writer_thread (c->writer, &row, error);
}

static gboolean
copy_peer_fault (Copy *c, sqlite3_stmt *s, GError **error)
{
  return cowscope_session_writer_peer_fault (c->writer, remap_pid (c, sqlite3_column_int64 (s, 0)),
                                             sqlite3_column_int64 (s, 1), text_at (s, 2),
                                             (uint64_t) sqlite3_column_int64 (s, 3),
                                             text_at (s, 4), error);
}

static gboolean
copy_cuda (Copy *c, sqlite3_stmt *s, GError **error)
{
  CowscopeCudaRecord record = {
    .kind = (uint32_t) sqlite3_column_int64 (s, 1),
    .subkind = (uint32_t) sqlite3_column_int64 (s, 2),
    .start_ns = sqlite3_column_int64 (s, 3) + c->member->offset_ns,
    .end_ns = sqlite3_column_int64 (s, 4) + c->member->offset_ns,
    .bytes = (uint64_t) sqlite3_column_int64 (s, 5),
    .correlation_id = (uint32_t) sqlite3_column_int64 (s, 6),
    .device_id = (uint32_t) sqlite3_column_int64 (s, 7),
    .context_id = (uint32_t) sqlite3_column_int64 (s, 8),
    .stream_id = (uint32_t) sqlite3_column_int64 (s, 9),
    .name_string_id = (uint64_t) sqlite3_column_int64 (s, 12),
  };

  /* An external correlation holds its engine event's time, which moves
   * with the events; the other records' external ids are derived again
   * when the merged session is finalized. */
  if (record.kind == COWSCOPE_CUDA_EXTERNAL_CORRELATION)
    record.a = (uint64_t) (sqlite3_column_int64 (s, 11) + c->member->offset_ns);
  else
    record.a = (uint64_t) sqlite3_column_int64 (s, 10);
  return cowscope_session_writer_cuda (c->writer, remap_pid (c, sqlite3_column_int64 (s, 0)),
                                       &record, error);
}

/* The merged session's id of the member's stack @stack_id, as used by
 * process @pid (already remapped): interned on first use. */
static gint64
copy_stack (Copy *c, gint64 stack_id, guint32 pid, GError **error)
{
  g_autofree char *key = g_strdup_printf ("%" G_GINT64_FORMAT " %u", stack_id, pid);
  gpointer known;
  g_autoptr (GArray) addresses = g_array_new (FALSE, FALSE, sizeof (uint64_t));
  sqlite3_stmt *stmt;
  int rc;
  gint64 id;

  if (g_hash_table_lookup_extended (c->stacks, key, NULL, &known))
    return GPOINTER_TO_SIZE (known);
  stmt = cowscope_session_tables_prepare (c->tables,
                                          "SELECT f.address FROM stack_frames sf"
                                          " JOIN frames f ON f.id = sf.frame_id"
                                          " WHERE sf.stack_id = ?1 ORDER BY sf.position",
                                          error);
  if (stmt == NULL)
    return -1;
  sqlite3_bind_int64 (stmt, 1, stack_id);
  while ((rc = cowscope_session_tables_step (c->tables, stmt, error)) == SQLITE_ROW)
    {
      uint64_t address = (uint64_t) sqlite3_column_int64 (stmt, 0);
      g_array_append_val (addresses, address);
    }
  sqlite3_finalize (stmt);
  if (rc != SQLITE_DONE)
    return -1;
  if (addresses->len == 0)
    id = 0;
  else
    {
      id = cowscope_session_writer_intern_stack (c->writer, pid, (uint64_t *) addresses->data,
                                                 addresses->len, error);
      if (id <= 0)
        return -1;
    }
  g_hash_table_insert (c->stacks, g_steal_pointer (&key), GSIZE_TO_POINTER ((gsize) id));
  return id;
}

static gint64
monotonic_now (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (gint64) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static gboolean
copy_events (Copy *c, GError **error)
{
  g_autoptr (CowscopeFormatEventReader) reader = NULL;
  g_autofree CowscopeFormatEventRow *rows = g_new (CowscopeFormatEventRow, CHUNK_EVENTS);
  gssize n;

  reader = cowscope_format_event_reader_new (cowscope_session_tables_get_db (c->tables),
                                             c->member->path, error);
  if (reader == NULL)
    return FALSE;
  while ((n = cowscope_format_event_reader_next (reader, rows, CHUNK_EVENTS, error)) > 0)
    {
      for (gssize i = 0; i < n; i++)
        {
          CowTraceEvent *event = &rows[i].event;
          gint64 stack = 0;

          event->pid = remap_pid (c, event->pid);
          event->time_ns += c->member->offset_ns;
          /* IPC events name the peer process: the same remapping. */
          if (event->type >= COW_EVENT_IPC_SEND && event->type <= COW_EVENT_IPC_COLLECT
              && event->ipc.peer_pid != 0)
            event->ipc.peer_pid = remap_pid (c, (gint64) event->ipc.peer_pid);
          if (rows[i].stack_id > 0
              && (stack = copy_stack (c, rows[i].stack_id, event->pid, error)) < 0)
            return FALSE;
          if (!cowscope_session_writer_event (c->writer, event->pid, event->tid, event, stack,
                                              error))
            return FALSE;
        }
      c->events += (guint64) n;
      if (!cowscope_session_writer_maybe_commit (c->writer, monotonic_now (), error))
        return FALSE;
    }
  return n == 0;
}

/* The member's symbols onto the merged session's frames (the writer
 * interned them by address only); the merged session is finalized
 * without symbolizing, so these are kept. */
static gboolean
copy_symbols (Copy *c, GError **error)
{
  sqlite3 *out = cowscope_session_writer_get_db (c->writer);
  const char *out_path = cowscope_session_writer_get_path (c->writer);
  sqlite3_stmt *update = NULL;
  sqlite3_stmt *stmt;
  int rc;
  gboolean ok = TRUE;

  if (!cowscope_session_writer_commit (c->writer, error))
    return FALSE;
  stmt = cowscope_session_tables_prepare (c->tables,
                                          "SELECT pid, address, module, function, file, line"
                                          " FROM frames WHERE module IS NOT NULL"
                                          " OR function IS NOT NULL",
                                          error);
  if (stmt == NULL)
    return FALSE;
  if (sqlite3_prepare_v2 (out, "UPDATE frames SET module = ?3, function = ?4, file = ?5,"
                               " line = ?6 WHERE pid = ?1 AND address = ?2", -1, &update, NULL)
        != SQLITE_OK
      || sqlite3_exec (out, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
    {
      cowscope_session_set_sqlite_error (error, out, out_path, "write");
      sqlite3_finalize (update);
      sqlite3_finalize (stmt);
      return FALSE;
    }
  while (ok && (rc = cowscope_session_tables_step (c->tables, stmt, error)) == SQLITE_ROW)
    {
      sqlite3_bind_int64 (update, 1, remap_pid (c, sqlite3_column_int64 (stmt, 0)));
      sqlite3_bind_int64 (update, 2, sqlite3_column_int64 (stmt, 1));
      for (int i = 2; i < 6; i++)
        sqlite3_bind_value (update, i + 1, sqlite3_column_value (stmt, i));
      ok = sqlite3_step (update) == SQLITE_DONE;
      sqlite3_reset (update);
      if (!ok)
        cowscope_session_set_sqlite_error (error, out, out_path, "write");
    }
  ok = ok && rc == SQLITE_DONE;
  sqlite3_finalize (stmt);
  sqlite3_finalize (update);
  if (sqlite3_exec (out, ok ? "COMMIT" : "ROLLBACK", NULL, NULL, NULL) != SQLITE_OK && ok)
    {
      cowscope_session_set_sqlite_error (error, out, out_path, "write");
      ok = FALSE;
    }
  return ok;
}

static gboolean
add_member_row (Copy *c, GError **error)
{
  sqlite3 *out = cowscope_session_writer_get_db (c->writer);
  const Member *m = c->member;
  sqlite3_stmt *stmt = NULL;
  gboolean ok;

  if (!cowscope_session_writer_commit (c->writer, error))
    return FALSE;
  if (sqlite3_prepare_v2 (out, "INSERT INTO merged_sessions (id, label, path, hostname, rank,"
                               " local_rank, world_size, created_utc, command, clock_offset_ns,"
                               " clock_alignment, events)"
                               " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", -1, &stmt, NULL)
      != SQLITE_OK)
    {
      cowscope_session_set_sqlite_error (error, out, cowscope_session_writer_get_path (c->writer),
                                         "write");
      return FALSE;
    }
  sqlite3_bind_int64 (stmt, 1, c->id);
  sqlite3_bind_text (stmt, 2, m->label, -1, SQLITE_STATIC);
  sqlite3_bind_text (stmt, 3, m->path, -1, SQLITE_STATIC);
  sqlite3_bind_text (stmt, 4, m->hostname, -1, SQLITE_STATIC);
  if (m->has_rank)
    sqlite3_bind_int64 (stmt, 5, m->rank);
  if (m->has_local_rank)
    sqlite3_bind_int64 (stmt, 6, m->local_rank);
  if (m->has_world_size)
    sqlite3_bind_int64 (stmt, 7, m->world_size);
  sqlite3_bind_text (stmt, 8, m->created_utc, -1, SQLITE_STATIC);
  sqlite3_bind_text (stmt, 9, m->command, -1, SQLITE_STATIC);
  sqlite3_bind_int64 (stmt, 10, m->offset_ns);
  sqlite3_bind_text (stmt, 11, m->alignment, -1, SQLITE_STATIC);
  sqlite3_bind_int64 (stmt, 12, (sqlite3_int64) c->events);
  ok = sqlite3_step (stmt) == SQLITE_DONE;
  if (!ok)
    cowscope_session_set_sqlite_error (error, out, cowscope_session_writer_get_path (c->writer),
                                       "write");
  sqlite3_finalize (stmt);
  return ok;
}

static gboolean
copy_member (CowscopeSessionWriter *writer, const Member *member, guint id, guint n,
             guint64 *events, GError **error)
{
  g_autoptr (CowscopeSessionTables) tables = cowscope_session_tables_open (member->path, error);
  g_autoptr (GHashTable) stacks = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  Copy c = { writer, tables, member, id, stacks, 0 };
  gboolean has_identity, has_thread_events, ok;
  g_autofree char *processes_sql = NULL, *threads_sql = NULL;

  if (tables == NULL)
    {
      prefix_member (error, member->given, n);
      return FALSE;
    }
  has_identity = cowscope_session_tables_has_table (tables, "process_identity");
  has_thread_events = cowscope_session_tables_has_table (tables, "thread_events");
  processes_sql = g_strdup_printf (
    "SELECT p.pid, p.ppid, p.exe, p.cmdline, p.start_ns, p.end_ns, p.end_reason,"
    " p.exit_status, p.exit_signal, p.gpu_status, %s,"
    " p.ppid IN (SELECT pid FROM processes) FROM processes p %s ORDER BY p.pid",
    has_identity ? "i.identity, i.claimed_pid, i.claimed_ppid, i.claimed_exe, i.claimed_cmdline"
                 : "NULL, NULL, NULL, NULL, NULL",
    has_identity ? "LEFT JOIN process_identity i ON i.pid = p.pid" : "");
  threads_sql = g_strdup_printf (
    "SELECT t.pid, t.tid, t.name, t.ring_capacity, t.produced, t.stored, t.dropped, %s"
    " FROM threads t %s ORDER BY t.pid, t.tid",
    has_thread_events ? "e.produced, e.stored, e.dropped, e.stopped_waiting"
                      : "t.produced, t.stored, t.dropped, NULL",
    has_thread_events ? "LEFT JOIN thread_events e ON e.pid = t.pid AND e.tid = t.tid" : "");

  ok = each_row (&c, "SELECT pid, id, value FROM strings", copy_string, error)
       && each_row (&c, processes_sql, copy_process, error)
       && each_row (&c, "SELECT pid, generation, maps FROM process_maps", copy_maps, error)
       && each_row (&c, threads_sql, copy_thread, error)
       && (!cowscope_session_tables_has_table (tables, "peer_faults")
           || each_row (&c, "SELECT pid, uid, fault, count, detail FROM peer_faults",
                        copy_peer_fault, error))
       && each_row (&c, "SELECT pid, kind, subkind, start_ns, end_ns, bytes, correlation_id,"
                        " device_id, context_id, stream_id, address, external_id, name_id"
                        " FROM cuda_activity ORDER BY id",
                    copy_cuda, error)
       && copy_events (&c, error)
       && copy_symbols (&c, error)
       && add_member_row (&c, error);
  if (!ok)
    prefix_member (error, member->given, n);
  *events += c.events;
  return ok;
}

/* meta of the merged session: the first member's clock, so that its
 * times read as that member's; what the members have in common. */
static gboolean
write_meta (CowscopeSessionWriter *writer, GPtrArray *members, GError **error)
{
  const Member *first = members->pdata[0];
  g_autoptr (GString) labels = g_string_new (NULL);
  g_autofree char *command = NULL;
  gint64 stacks = 0;

  /* Stacks when any member took them. */
  for (guint i = 0; i < members->len; i++)
    stacks = MAX (stacks, ((Member *) members->pdata[i])->stacks);
  for (guint i = 0; i < members->len; i++)
    g_string_append_printf (labels, "%s%s", i > 0 ? ", " : "",
                            ((Member *) members->pdata[i])->label);
  command = g_strdup_printf ("merged: %s", labels->str);
  return cowscope_session_writer_meta_text (writer, "command", command, error)
         && cowscope_session_writer_meta_text (writer, "program", first->program, error)
         && cowscope_session_writer_meta_int (writer, "merged_sessions", members->len, error)
         && (first->has_clock
               ? cowscope_session_writer_meta_int (writer, "clock_realtime_ns",
                                                   first->clock_realtime_ns, error)
                   && cowscope_session_writer_meta_int (writer, "clock_monotonic_ns",
                                                        first->clock_monotonic_ns, error)
               : cowscope_session_writer_meta_text (writer, "clock_realtime_ns", NULL, error)
                   && cowscope_session_writer_meta_text (writer, "clock_monotonic_ns", NULL,
                                                         error))
         && cowscope_session_writer_meta_text (writer, "hostname", first->hostname, error)
         && cowscope_session_writer_meta_text (writer, "boot_id", first->boot_id, error)
         && cowscope_session_writer_meta_int (writer, "stacks", stacks, error)
         && cowscope_session_writer_meta_text (writer, "gpu_tracing", first->gpu_tracing, error)
         && cowscope_session_writer_commit (writer, error);
}

gboolean
cowscope_session_merge (const char *const *paths, guint n_paths, const char *const *labels,
                        const char *output, gboolean force, CowscopeMergeResult *result,
                        GError **error)
{
  g_autoptr (GPtrArray) members = g_ptr_array_new_with_free_func ((GDestroyNotify) member_free);
  CowscopeSessionWriter *writer;
  struct stat out_st;
  gboolean output_exists;
  guint64 events = 0;
  gboolean ok = TRUE;

  g_return_val_if_fail (paths != NULL && output != NULL, FALSE);

  if (n_paths < 2)
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, MSG_TOO_FEW);
      return FALSE;
    }
  if (n_paths > COWSCOPE_MERGE_MAX_SESSIONS)
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, MSG_TOO_MANY,
                   COWSCOPE_MERGE_MAX_SESSIONS);
      return FALSE;
    }
  if (labels != NULL && g_strv_length ((char **) labels) != n_paths)
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, MSG_LABELS,
                   g_strv_length ((char **) labels), n_paths);
      return FALSE;
    }

  /* Everything is checked before the output is created. */
  output_exists = stat (output, &out_st) == 0;
  for (guint i = 0; i < n_paths; i++)
    {
      struct stat st;
      Member *m;

      if (output_exists && stat (paths[i], &st) == 0 && st.st_dev == out_st.st_dev
          && st.st_ino == out_st.st_ino)
        {
          g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, MSG_OUTPUT_INPUT, output,
                       paths[i]);
          return FALSE;
        }
      m = probe_member (paths[i], i, n_paths, error);
      if (m == NULL)
        return FALSE;
      for (guint j = 0; j < members->len; j++)
        if (same_recording (members->pdata[j], m, error))
          {
            member_free (m);
            return FALSE;
          }
      g_ptr_array_add (members, m);
    }
  arrange (members, labels);

  writer = cowscope_session_writer_create (output, force, error);
  if (writer == NULL)
    return FALSE;
  for (guint i = 0; i < members->len && ok; i++)
    ok = copy_member (writer, members->pdata[i], i + 1, n_paths, &events, error);
  ok = ok && write_meta (writer, members, error);
  if (ok)
    {
      cowscope_session_writer_end_recording (writer);
      /* Symbols came with the members: nothing to symbolize. */
      ok = cowscope_format_finalize (cowscope_session_writer_get_db (writer), output, NULL, error);
    }
  if (!ok)
    {
      cowscope_session_writer_discard (writer);
      return FALSE;
    }
  cowscope_session_writer_close (writer);

  if (result != NULL)
    {
      memset (result, 0, sizeof *result);
      result->sessions = members->len;
      result->events = events;
      for (guint i = 0; i < members->len; i++)
        {
          const Member *m = members->pdata[i];
          result->aligned_by_wall_clock |= strcmp (m->alignment, "wall clock") == 0;
          result->unaligned |= strcmp (m->alignment, "none") == 0;
        }
    }
  return TRUE;
}
