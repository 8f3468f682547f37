/* cowscope-export.c — a session in other formats (see header). */
#include "cowscope-export.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gio/gio.h>

#include "cowscope-format-counters.h"
#include "cowscope-format-open.h"
#include "cowscope-format-output.h"
#include "cowscope-output.h"

/* User-visible strings (untranslated for now), in one place. */
#define MSG_EXISTS         "%s already exists (use --force to replace it)"
#define MSG_NOT_DIR        "%s exists and is not a directory"
#define MSG_IS_DIR         "%s is a directory"
#define MSG_NOT_REGULAR    "%s exists and is not a regular file"
#define MSG_CREATE         "cannot create %s: %s"
#define MSG_MOVE           "cannot move the output into place as %s: %s"
#define MSG_SQLITE_WRITE   "cannot write %s: %s"
#define MSG_CANCELLED      "the export was cancelled"
#define MSG_ROLE_SESSION   "the session"

/* FALSE with @error when writing @path would overwrite the session that
 * @session reads (cowscope-format-output.h). */
static gboolean
check_not_input (CowscopeSessionTables *session, const char *path, GError **error)
{
  return cowscope_format_check_output (path, cowscope_session_tables_get_path (session),
                                       MSG_ROLE_SESSION, error);
}

/* Every export reads (or copies) the whole session: the whole file is
 * checked first, structure and values (cowscope-format-check.h), so that a
 * damaged session is refused, never half written out. */
static gboolean
check_session (CowscopeSessionTables *session, const char *path, GError **error)
{
  return check_not_input (session, path, error)
         && cowscope_session_tables_check (session, NULL, error);
}

/* ---- progress ------------------------------------------------------------ */

typedef struct {
  CowscopeExportProgressFunc func;
  gpointer user_data;
  gint64 total, done;
  gboolean cancelled;
} Progress;

/* Reports progress to @sink's function (may be NULL: silent). */
static void
progress_init (Progress *progress, const CowscopeExportProgress *sink, gint64 total)
{
  progress->func = sink != NULL ? sink->func : NULL;
  progress->user_data = sink != NULL ? sink->user_data : NULL;
  progress->total = MAX (total, 1);
  progress->done = 0;
  progress->cancelled = FALSE;
}

/* One more row written; FALSE once the progress function cancelled. */
static gboolean
progress_step (Progress *progress)
{
  progress->done++;
  if ((progress->done & 4095) != 0 || progress->cancelled)
    return !progress->cancelled;
  double fraction = MIN (0.99, (double) progress->done / (double) progress->total);
  if (progress->func != NULL && !progress->func (fraction, progress->user_data))
    progress->cancelled = TRUE;
  return !progress->cancelled;
}

/* FALSE with G_IO_ERROR_CANCELLED when the progress function cancelled. */
static gboolean
progress_check (Progress *progress, GError **error)
{
  if (!progress->cancelled)
    return TRUE;
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED, MSG_CANCELLED);
  return FALSE;
}

/* ---- chrome trace -------------------------------------------------------- */

/* A slice that a flow arrow starts or ends in lasts at least this long
 * (ns), so that the arrow's point lies strictly inside it: viewers bind a
 * flow event to the slice open at its time, and at a slice's first or
 * last instant that depends on how they order events of equal time. */
#define FLOW_SLICE_MIN_NS 2

/* Tracks of CUDA streams: one per (process, device, stream), numbered
 * from here under their device's pid, far from any real thread id. */
#define GPU_STREAM_TID_BASE 1000000000

/* Flow categories: ids are unique within each. */
#define FLOW_CAT_LAZY "lazy_copy_flow" /* lazy clone → the copy or steal it caused */
#define FLOW_CAT_CUDA "cuda_flow"      /* engine operation → the CUDA work it issued */

/* A call stack as slice arguments. */
typedef struct {
  char *call_site;
  GPtrArray *frames; /* char *, innermost first */
} StackArgs;

typedef struct {
  CowscopeSessionTables *session;
  CowscopeOutput *out;
  Progress progress;
  gint64 base;      /* ns of ts 0 */
  gint64 end;       /* the session's last timestamp */
  gboolean first;   /* no event written yet */
  GHashTable *lazy_sources;  /* lazy_clones.seq (gint64 *) that a materialization names */
  GHashTable *stream_tids;   /* "pid/device/stream" → the track's tid (gint64 *) */
  GHashTable *process_names; /* pid (gint64 *) → name */
  GHashTable *stacks;        /* stack id (gint64 *) → StackArgs, read once */
  sqlite3_stmt *stack_frames;
} Trace;

/* Also the destroy function of Trace.stacks, whose value for a stack
 * without frames is NULL. */
static void
stack_args_free (StackArgs *args)
{
  if (args == NULL)
    return;
  g_free (args->call_site);
  g_ptr_array_unref (args->frames);
  g_free (args);
}

static gint64 *
int64_key (gint64 value)
{
  return g_memdup2 (&value, sizeof value);
}

/* Writes @ns as µs relative to the base, with exactly three decimals. */
static void
write_ts (Trace *trace, gint64 ns)
{
  gint64 rel = ns - trace->base;
  guint64 mag = rel < 0 ? (guint64) -(rel + 1) + 1 : (guint64) rel;

  cowscope_output_printf (trace->out, "%s%" PRIu64 ".%03u", rel < 0 ? "-" : "",
                          mag / 1000, (unsigned) (mag % 1000));
}

/* Writes a duration of @ns as µs with three decimals. */
static void
write_dur (Trace *trace, gint64 ns)
{
  if (ns < 0)
    ns = 0;
  cowscope_output_printf (trace->out, "%" PRId64 ".%03u", ns / 1000,
                          (unsigned) (ns % 1000));
}

/* The point of a flow arrow in the slice [@begin, @begin + @dur] (@dur at
 * least FLOW_SLICE_MIN_NS): @wanted, moved strictly inside. */
static gint64
flow_point (gint64 begin, gint64 dur, gint64 wanted)
{
  g_assert (dur >= FLOW_SLICE_MIN_NS);
  return CLAMP (wanted, begin + 1, begin + dur - 1);
}

/* Opens one event object: {"ph":PH,"name":NAME,"cat":CAT,"pid":..,"tid":..,"ts":..
 * (the caller adds members and closes it with end_event). */
static void
begin_event (Trace *trace, const char *ph, const char *name, const char *cat,
             gint64 pid, gint64 tid, gint64 ts)
{
  cowscope_output_puts (trace->out, trace->first ? "\n" : ",\n");
  trace->first = FALSE;
  cowscope_output_printf (trace->out, "{\"ph\":\"%s\",\"name\":", ph);
  cowscope_output_json_string (trace->out, name);
  cowscope_output_puts (trace->out, ",\"cat\":");
  cowscope_output_json_string (trace->out, cat);
  cowscope_output_printf (trace->out, ",\"pid\":%" PRId64 ",\"tid\":%" PRId64 ",\"ts\":",
                          pid, tid);
  write_ts (trace, ts);
}

static void
end_event (Trace *trace)
{
  cowscope_output_puts (trace->out, "}");
}

/* One end of a flow arrow: "s" (start) or "f" (end, bound to the slice
 * around it) of flow @id in @cat, at @ts on thread (@pid, @tid). */
static void
write_flow (Trace *trace, const char *ph, const char *cat, gint64 id, gint64 pid, gint64 tid,
            gint64 ts)
{
  begin_event (trace, ph, cat, cat, pid, tid, ts);
  cowscope_output_printf (trace->out, ",\"id\":%" PRId64 "%s", id,
                          ph[0] == 'f' ? ",\"bp\":\"e\"" : "");
  end_event (trace);
}

/* An "M" metadata event naming a process or thread. */
static void
write_metadata (Trace *trace, const char *what, gint64 pid, gint64 tid,
                const char *name)
{
  cowscope_output_puts (trace->out, trace->first ? "\n" : ",\n");
  trace->first = FALSE;
  cowscope_output_printf (trace->out,
                          "{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%" PRId64
                          ",\"tid\":%" PRId64 ",\"args\":{\"name\":",
                          what, pid, tid);
  cowscope_output_json_string (trace->out, name);
  cowscope_output_puts (trace->out, "}}");
}

static void
write_sort_index (Trace *trace, gint64 pid, gint64 index)
{
  cowscope_output_puts (trace->out, ",\n");
  cowscope_output_printf (trace->out,
                          "{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":%" PRId64
                          ",\"tid\":0,\"args\":{\"sort_index\":%" PRId64 "}}",
                          pid, index);
}

/* Argument helpers: each writes ,"KEY":VALUE (or "KEY":VALUE first). */
static void
arg_int (Trace *trace, gboolean *first, const char *key, sqlite3_stmt *stmt, int col)
{
  cowscope_output_printf (trace->out, "%s\"%s\":", *first ? "" : ",", key);
  *first = FALSE;
  if (sqlite3_column_type (stmt, col) == SQLITE_NULL)
    cowscope_output_puts (trace->out, "null");
  else
    cowscope_output_printf (trace->out, "%" PRId64,
                            (gint64) sqlite3_column_int64 (stmt, col));
}

static void
arg_text (Trace *trace, gboolean *first, const char *key, const char *value)
{
  cowscope_output_printf (trace->out, "%s\"%s\":", *first ? "" : ",", key);
  *first = FALSE;
  cowscope_output_json_string (trace->out, value);
}

/* The call stack @stack_id (NULL: none or empty), read once. */
static StackArgs *
lookup_stack (Trace *trace, gint64 stack_id, GError **error)
{
  StackArgs *args = g_hash_table_lookup (trace->stacks, &stack_id);
  int rc;

  if (args != NULL || g_hash_table_contains (trace->stacks, &stack_id))
    return args;
  if (trace->stack_frames == NULL)
    {
      trace->stack_frames = cowscope_session_tables_prepare (trace->session,
        "SELECT frame, (SELECT call_site FROM call_sites WHERE stack_id = ?1)"
        " FROM call_stacks WHERE stack_id = ?1 ORDER BY position", error);
      if (trace->stack_frames == NULL)
        return NULL;
    }
  sqlite3_reset (trace->stack_frames);
  sqlite3_bind_int64 (trace->stack_frames, 1, stack_id);
  while ((rc = cowscope_session_tables_step (trace->session, trace->stack_frames, error))
         == SQLITE_ROW)
    {
      const char *frame = (const char *) sqlite3_column_text (trace->stack_frames, 0);
      if (args == NULL)
        {
          const char *site = (const char *) sqlite3_column_text (trace->stack_frames, 1);
          args = g_new0 (StackArgs, 1);
          args->call_site = g_strdup (site);
          args->frames = g_ptr_array_new_with_free_func (g_free);
        }
      g_ptr_array_add (args->frames, g_strdup (frame != NULL ? frame : "?"));
    }
  if (rc < 0)
    {
      g_clear_pointer (&args, stack_args_free);
      return NULL;
    }
  g_hash_table_insert (trace->stacks, int64_key (stack_id), args);
  return args;
}

/* ,"call_site":"…","stack":["…",…] for the stack in column @col of
 * @stmt, innermost frame first; nothing when it has none.  FALSE on a
 * read error. */
static gboolean
arg_stack (Trace *trace, gboolean *first, sqlite3_stmt *stmt, int col, GError **error)
{
  if (sqlite3_column_type (stmt, col) == SQLITE_NULL)
    return TRUE;
  g_autoptr (GError) local = NULL;
  StackArgs *args = lookup_stack (trace, sqlite3_column_int64 (stmt, col), &local);
  if (local != NULL)
    {
      g_propagate_error (error, g_steal_pointer (&local));
      return FALSE;
    }
  if (args == NULL)
    return TRUE;
  if (args->call_site != NULL)
    arg_text (trace, first, "call_site", args->call_site);
  cowscope_output_printf (trace->out, "%s\"stack\":[", *first ? "" : ",");
  *first = FALSE;
  for (guint i = 0; i < args->frames->len; i++)
    {
      if (i > 0)
        cowscope_output_puts (trace->out, ",");
      cowscope_output_json_string (trace->out, args->frames->pdata[i]);
    }
  cowscope_output_puts (trace->out, "]");
  return TRUE;
}

/* Runs @sql and hands each row to @row (FALSE: a read error, in @error);
 * FALSE on a read or write error. */
static gboolean
for_each_row (Trace *trace, const char *sql,
              gboolean (*row) (Trace *trace, sqlite3_stmt *stmt, GError **error), GError **error)
{
  sqlite3_stmt *stmt = cowscope_session_tables_prepare (trace->session, sql, error);
  int rc;

  if (stmt == NULL)
    return FALSE;
  while ((rc = cowscope_session_tables_step (trace->session, stmt, error)) == SQLITE_ROW
         && cowscope_output_ok (trace->out))
    {
      if (!row (trace, stmt, error))
        {
          rc = -1;
          break;
        }
      if (!progress_step (&trace->progress))
        break;
    }
  sqlite3_finalize (stmt);
  return rc >= 0 && progress_check (&trace->progress, error);
}

static gboolean
process_row (Trace *trace, sqlite3_stmt *stmt, GError **error)
{
  gint64 pid = sqlite3_column_int64 (stmt, 0);
  const char *exe = (const char *) sqlite3_column_text (stmt, 1);
  const char *cmdline = (const char *) sqlite3_column_text (stmt, 2);
  g_autofree char *base = NULL;

  (void) error;
  if (exe != NULL && *exe != '\0')
    base = g_path_get_basename (exe);
  else if (cmdline != NULL && *cmdline != '\0')
    {
      g_auto (GStrv) words = g_strsplit (cmdline, " ", 2);
      base = g_path_get_basename (words[0]);
    }
  if (base == NULL)
    base = g_strdup ("process");
  write_metadata (trace, "process_name", pid, 0, base);
  g_hash_table_replace (trace->process_names, int64_key (pid), g_steal_pointer (&base));
  return TRUE;
}

static gboolean
thread_row (Trace *trace, sqlite3_stmt *stmt, GError **error)
{
  gint64 tid = sqlite3_column_int64 (stmt, 1);
  const char *name = (const char *) sqlite3_column_text (stmt, 2);
  g_autofree char *fallback = g_strdup_printf ("thread %" PRId64, tid);

  (void) error;
  write_metadata (trace, "thread_name", sqlite3_column_int64 (stmt, 0), tid,
                  name != NULL && *name != '\0' ? name : fallback);
  return TRUE;
}

/* One process per GPU device, named once. */
static gboolean
gpu_row (Trace *trace, sqlite3_stmt *stmt, GError **error)
{
  gint64 device = sqlite3_column_int64 (stmt, 0);
  g_autofree char *gpu = g_strdup_printf ("GPU %" PRId64, device);
  gint64 pid = COWSCOPE_EXPORT_GPU_PID_BASE + device;

  (void) error;
  write_metadata (trace, "process_name", pid, 0, gpu);
  write_sort_index (trace, pid, 1000 + device);
  return TRUE;
}

static char *
stream_key (gint64 pid, gint64 device, gint64 stream)
{
  return g_strdup_printf ("%" PRId64 "/%" PRId64 "/%" PRId64, pid, device, stream);
}

/* The track of @stream of process @pid on @device: one per (process,
 * device, stream), named when first used, so that streams of different
 * processes never share one. */
static gint64
stream_tid (Trace *trace, gint64 pid, gint64 device, gint64 stream)
{
  g_autofree char *key = stream_key (pid, device, stream);
  const gint64 *known = g_hash_table_lookup (trace->stream_tids, key);
  if (known != NULL)
    return *known;

  gint64 tid = GPU_STREAM_TID_BASE + g_hash_table_size (trace->stream_tids);
  const char *process = g_hash_table_lookup (trace->process_names, &pid);
  g_autofree char *name = g_strdup_printf ("stream %" PRId64 " (%s %" PRId64 ")", stream,
                                           process != NULL ? process : "process", pid);
  g_hash_table_insert (trace->stream_tids, g_steal_pointer (&key), int64_key (tid));
  write_metadata (trace, "thread_name", COWSCOPE_EXPORT_GPU_PID_BASE + device, tid, name);
  return tid;
}

static gboolean
range_row (Trace *trace, sqlite3_stmt *stmt, GError **error)
{
  gint64 begin = sqlite3_column_int64 (stmt, 5);
  gboolean open = sqlite3_column_type (stmt, 6) == SQLITE_NULL;
  gint64 end = open ? trace->end : sqlite3_column_int64 (stmt, 6);
  const char *name = (const char *) sqlite3_column_text (stmt, 2);
  gboolean first = TRUE;

  (void) error;
  /* The program's own name for it: stable across runs and steps alike. */
  begin_event (trace, "X", name != NULL ? name : "range", "range",
               sqlite3_column_int64 (stmt, 0), sqlite3_column_int64 (stmt, 1), begin);
  cowscope_output_puts (trace->out, ",\"dur\":");
  write_dur (trace, end - begin);
  cowscope_output_puts (trace->out, ",\"args\":{");
  arg_int (trace, &first, "range_id", stmt, 3);
  arg_int (trace, &first, "parent_id", stmt, 4);
  if (open)
    cowscope_output_puts (trace->out, ",\"unclosed\":true");
  cowscope_output_puts (trace->out, "}");
  end_event (trace);
  return TRUE;
}

/* The slice name of a materialization of @kind (materialize_kinds). */
static const char *
materialization_name (const char *kind)
{
  if (g_strcmp0 (kind, "copy") == 0)
    return "copy";
  if (g_strcmp0 (kind, "steal") == 0)
    return "steal";
  if (g_strcmp0 (kind, "failed") == 0)
    return "failed copy";
  return "materialization";
}

/* Columns: 0 seq, 1 pid, 2 tid, 3 begin, 4 end, 5 op, 6 kind,
 * 7 copy_discarded, 8 bytes, 9 storage, 10 context, 11 tensor,
 * 12 tensor name, 13 lock wait, 14 allocation, 15 stack, 16 lazy clone
 * seq, 17 its pid, 18 its tid, 19 its ts. */
static gboolean
materialization_row (Trace *trace, sqlite3_stmt *stmt, GError **error)
{
  gint64 seq = sqlite3_column_int64 (stmt, 0);
  gint64 pid = sqlite3_column_int64 (stmt, 1);
  gint64 tid = sqlite3_column_int64 (stmt, 2);
  gint64 begin = sqlite3_column_int64 (stmt, 3);
  gint64 end = sqlite3_column_type (stmt, 4) == SQLITE_NULL ? begin
                                                            : sqlite3_column_int64 (stmt, 4);
  gint64 dur = MAX (end - begin, FLOW_SLICE_MIN_NS);
  const char *kind = sqlite3_column_type (stmt, 6) == SQLITE_NULL
                       ? NULL
                       : cowscope_session_tables_enum_name (trace->session, "materialize_kinds",
                                                            sqlite3_column_int64 (stmt, 6) & 255);
  const char *op = cowscope_session_tables_enum_name (trace->session, "ops",
                                                      sqlite3_column_int64 (stmt, 5));
  gboolean first = TRUE;

  begin_event (trace, "X", materialization_name (kind), "materialize", pid, tid, begin);
  cowscope_output_puts (trace->out, ",\"dur\":");
  write_dur (trace, dur);
  cowscope_output_puts (trace->out, ",\"args\":{");
  arg_text (trace, &first, "op", op);
  arg_text (trace, &first, "kind", kind != NULL ? kind : "unfinished");
  arg_int (trace, &first, "bytes", stmt, 8);
  arg_text (trace, &first, "tensor", (const char *) sqlite3_column_text (stmt, 12));
  arg_int (trace, &first, "tensor_id", stmt, 11);
  arg_int (trace, &first, "storage_id", stmt, 9);
  arg_int (trace, &first, "context_id", stmt, 10);
  arg_int (trace, &first, "lock_wait_ns", stmt, 13);
  arg_int (trace, &first, "allocation_id", stmt, 14);
  arg_int (trace, &first, "copy_discarded", stmt, 7);
  arg_int (trace, &first, "lazy_clone_seq", stmt, 16);
  arg_int (trace, &first, "seq", stmt, 0);
  if (!arg_stack (trace, &first, stmt, 15, error))
    return FALSE;
  cowscope_output_puts (trace->out, "}");
  end_event (trace);

  /* The arrow from the lazy clone that created the sharing (its slice
   * lasts FLOW_SLICE_MIN_NS: lazy_clone_row). */
  if (sqlite3_column_type (stmt, 19) != SQLITE_NULL)
    {
      gint64 from = sqlite3_column_int64 (stmt, 19);
      write_flow (trace, "s", FLOW_CAT_LAZY, seq, sqlite3_column_int64 (stmt, 17),
                  sqlite3_column_int64 (stmt, 18), flow_point (from, FLOW_SLICE_MIN_NS, from));
      write_flow (trace, "f", FLOW_CAT_LAZY, seq, pid, tid, flow_point (begin, dur, begin));
    }
  return TRUE;
}

/* Columns: 0 seq, 1 pid, 2 tid, 3 ts, 4 op, 5 source tensor, 6 result
 * tensor, 7 source storage, 8 result storage, 9 context, 10 eager reason,
 * 11 bytes, 12 source name, 13 result name, 14 stack. */
static gboolean
lazy_clone_row (Trace *trace, sqlite3_stmt *stmt, GError **error)
{
  gint64 seq = sqlite3_column_int64 (stmt, 0);
  gboolean eager = sqlite3_column_type (stmt, 10) != SQLITE_NULL;
  /* A clone whose sharing a copy or steal ends gets a slice for the flow
   * arrow to leave from; the others stay instants. */
  gboolean source = g_hash_table_contains (trace->lazy_sources, &seq);
  gboolean first = TRUE;

  begin_event (trace, source ? "X" : "i", eager ? "eager clone" : "lazy clone", "lazy_clone",
               sqlite3_column_int64 (stmt, 1), sqlite3_column_int64 (stmt, 2),
               sqlite3_column_int64 (stmt, 3));
  if (source)
    {
      cowscope_output_puts (trace->out, ",\"dur\":");
      write_dur (trace, FLOW_SLICE_MIN_NS);
    }
  else
    cowscope_output_puts (trace->out, ",\"s\":\"t\"");
  cowscope_output_puts (trace->out, ",\"args\":{");
  arg_text (trace, &first, "op", cowscope_session_tables_enum_name (trace->session, "ops",
                                                                    sqlite3_column_int64 (stmt, 4)));
  arg_int (trace, &first, "bytes", stmt, 11);
  if (eager)
    arg_text (trace, &first, "eager_reason",
              cowscope_session_tables_enum_name (trace->session, "eager_reasons",
                                                 sqlite3_column_int64 (stmt, 10)));
  arg_text (trace, &first, "source_tensor", (const char *) sqlite3_column_text (stmt, 12));
  arg_int (trace, &first, "source_tensor_id", stmt, 5);
  arg_text (trace, &first, "result_tensor", (const char *) sqlite3_column_text (stmt, 13));
  arg_int (trace, &first, "result_tensor_id", stmt, 6);
  arg_int (trace, &first, "source_storage_id", stmt, 7);
  arg_int (trace, &first, "result_storage_id", stmt, 8);
  arg_int (trace, &first, "context_id", stmt, 9);
  arg_int (trace, &first, "seq", stmt, 0);
  if (!arg_stack (trace, &first, stmt, 14, error))
    return FALSE;
  cowscope_output_puts (trace->out, "}");
  end_event (trace);
  return TRUE;
}

static gboolean
violation_row (Trace *trace, sqlite3_stmt *stmt, GError **error)
{
  gboolean first = TRUE;

  begin_event (trace, "i", "simulate-mode warning", "violation", sqlite3_column_int64 (stmt, 1),
               sqlite3_column_int64 (stmt, 2), sqlite3_column_int64 (stmt, 3));
  cowscope_output_puts (trace->out, ",\"s\":\"t\",\"args\":{");
  arg_text (trace, &first, "op", cowscope_session_tables_enum_name (trace->session, "ops",
                                                                    sqlite3_column_int64 (stmt, 4)));
  arg_text (trace, &first, "access", cowscope_session_tables_enum_name (trace->session,
                                       "access_kinds", sqlite3_column_int64 (stmt, 5)));
  arg_int (trace, &first, "storage_id", stmt, 6);
  arg_text (trace, &first, "writer", (const char *) sqlite3_column_text (stmt, 8));
  arg_int (trace, &first, "writer_tensor_id", stmt, 7);
  arg_text (trace, &first, "accessor", (const char *) sqlite3_column_text (stmt, 10));
  arg_int (trace, &first, "accessor_tensor_id", stmt, 9);
  arg_int (trace, &first, "writer_generation", stmt, 11);
  arg_int (trace, &first, "accessor_generation", stmt, 12);
  arg_int (trace, &first, "seq", stmt, 0);
  if (!arg_stack (trace, &first, stmt, 13, error))
    return FALSE;
  cowscope_output_puts (trace->out, "}");
  end_event (trace);
  return TRUE;
}

static gboolean
mark_row (Trace *trace, sqlite3_stmt *stmt, GError **error)
{
  const char *name = (const char *) sqlite3_column_text (stmt, 4);
  gboolean first = TRUE;

  (void) error;
  begin_event (trace, "i", name != NULL ? name : "mark", "mark",
               sqlite3_column_int64 (stmt, 1), sqlite3_column_int64 (stmt, 2),
               sqlite3_column_int64 (stmt, 3));
  cowscope_output_puts (trace->out, ",\"s\":\"t\",\"args\":{");
  arg_int (trace, &first, "range_id", stmt, 5);
  arg_int (trace, &first, "seq", stmt, 0);
  cowscope_output_puts (trace->out, "}");
  end_event (trace);
  return TRUE;
}

/* An engine event that issued CUDA work but is no materialization: a
 * slice named after its operation, FLOW_SLICE_MIN_NS long (the event
 * itself has no duration), for the flow arrow to leave from. */
static gboolean
issuer_row (Trace *trace, sqlite3_stmt *stmt, GError **error)
{
  gboolean first = TRUE;

  (void) error;
  begin_event (trace, "X", cowscope_session_tables_enum_name (trace->session, "ops",
                                                              sqlite3_column_int64 (stmt, 5)),
               "engine", sqlite3_column_int64 (stmt, 1), sqlite3_column_int64 (stmt, 2),
               sqlite3_column_int64 (stmt, 3));
  cowscope_output_puts (trace->out, ",\"dur\":");
  write_dur (trace, FLOW_SLICE_MIN_NS);
  cowscope_output_puts (trace->out, ",\"args\":{");
  arg_text (trace, &first, "event", cowscope_session_tables_enum_name (trace->session,
                                      "event_types", sqlite3_column_int64 (stmt, 4)));
  arg_int (trace, &first, "seq", stmt, 0);
  cowscope_output_puts (trace->out, "}");
  end_event (trace);
  return TRUE;
}

/* Columns: 0 id, 1 pid, 2 kind, 3 subkind, 4 start, 5 end, 6 bytes,
 * 7 correlation_id, 8 device, 9 stream, 10 external_id, 11 name,
 * 12 issuer pid, 13 issuer tid, 14 issuer ts, 15 mat begin, 16 mat end,
 * 17 an instant (memory alloc or free), 18 a memcpy, 19 a kernel. */
static gboolean
cuda_row (Trace *trace, sqlite3_stmt *stmt, GError **error)
{
  gint64 id = sqlite3_column_int64 (stmt, 0);
  gint64 process = sqlite3_column_int64 (stmt, 1);
  gint64 kind = sqlite3_column_int64 (stmt, 2);
  gint64 start = sqlite3_column_int64 (stmt, 4);
  gint64 end = sqlite3_column_int64 (stmt, 5);
  gint64 dur = MAX (end - start, FLOW_SLICE_MIN_NS);
  gint64 device = sqlite3_column_int64 (stmt, 8);
  gint64 pid = COWSCOPE_EXPORT_GPU_PID_BASE + device;
  gint64 tid = stream_tid (trace, process, device, sqlite3_column_int64 (stmt, 9));
  const char *kind_name = cowscope_session_tables_enum_name (trace->session, "cuda_kinds", kind);
  const char *kernel = (const char *) sqlite3_column_text (stmt, 11);
  g_autofree char *name = NULL;
  gboolean instant = sqlite3_column_int (stmt, 17);
  gboolean first = TRUE;

  (void) error;
  if (sqlite3_column_int (stmt, 18))
    name = g_strdup_printf ("memcpy %s", cowscope_session_tables_enum_name (trace->session,
                              "memcpy_kinds", sqlite3_column_int64 (stmt, 3)));
  else if (sqlite3_column_int (stmt, 19) && kernel != NULL)
    name = g_strdup (kernel);
  else
    name = g_strdup (kind_name);

  begin_event (trace, instant ? "i" : "X", name, "cuda", pid, tid, start);
  if (instant)
    cowscope_output_puts (trace->out, ",\"s\":\"t\"");
  else
    {
      cowscope_output_puts (trace->out, ",\"dur\":");
      write_dur (trace, dur);
    }
  cowscope_output_puts (trace->out, ",\"args\":{");
  arg_text (trace, &first, "kind", kind_name);
  arg_int (trace, &first, "bytes", stmt, 6);
  arg_int (trace, &first, "correlation_id", stmt, 7);
  arg_int (trace, &first, "external_id", stmt, 10);
  arg_int (trace, &first, "process", stmt, 1);
  arg_int (trace, &first, "device", stmt, 8);
  arg_int (trace, &first, "stream", stmt, 9);
  arg_int (trace, &first, "id", stmt, 0);
  cowscope_output_puts (trace->out, "}");
  end_event (trace);

  /* The arrow from the engine operation that issued it: from inside the
   * materialization's slice, where the copy was issued, or from the
   * issuer's slice (issuer_row). */
  if (!instant && sqlite3_column_type (stmt, 12) != SQLITE_NULL)
    {
      gint64 from_begin = sqlite3_column_int64 (stmt, 14), from_dur = FLOW_SLICE_MIN_NS;
      if (sqlite3_column_type (stmt, 15) != SQLITE_NULL)
        {
          from_begin = sqlite3_column_int64 (stmt, 15);
          if (sqlite3_column_type (stmt, 16) != SQLITE_NULL)
            from_dur = MAX (sqlite3_column_int64 (stmt, 16) - from_begin, FLOW_SLICE_MIN_NS);
        }
      write_flow (trace, "s", FLOW_CAT_CUDA, id, sqlite3_column_int64 (stmt, 12),
                  sqlite3_column_int64 (stmt, 13), flow_point (from_begin, from_dur, start));
      write_flow (trace, "f", FLOW_CAT_CUDA, id, pid, tid, flow_point (start, dur, start));
    }
  return TRUE;
}

/* ---- IPC ------------------------------------------------------------------ */

/* A process-wide instant (the IPC tables know the process, not the thread). */
static void
begin_process_instant (Trace *trace, const char *name, gint64 pid, gint64 ts)
{
  begin_event (trace, "i", name, "ipc", pid, pid, ts);
  cowscope_output_puts (trace->out, ",\"s\":\"p\",\"args\":{");
}

/* A slice on a process-wide async track of its own (@ph "b" or "e"): IPC
 * spans of one process overlap freely. */
static void
begin_async (Trace *trace, const char *ph, const char *name, gint64 pid, gint64 id, gint64 ts)
{
  begin_event (trace, ph, name, "ipc", pid, pid, ts);
  cowscope_output_printf (trace->out, ",\"id\":\"0x%" PRIx64 "\"", (guint64) id);
}

/* Columns: 0 send seq, 1 producer, 2 block (allocation), 3 storage,
 * 4 bytes, 5 send ts, 6 consumer, 7 receive ts, 8 cached, 9 release ts,
 * 10 consumer died, 11 slot, 12 counter file. */
static gboolean
ipc_ref_row (Trace *trace, sqlite3_stmt *stmt, GError **error)
{
  gint64 producer = sqlite3_column_int64 (stmt, 1);
  gboolean received = sqlite3_column_type (stmt, 7) != SQLITE_NULL;
  gboolean cached = sqlite3_column_int (stmt, 8) != 0;
  gboolean released = sqlite3_column_type (stmt, 9) != SQLITE_NULL;
  gint64 consumer = sqlite3_column_int64 (stmt, 6);
  gboolean first = TRUE;

  (void) error;
  begin_process_instant (trace, "ipc send", producer, sqlite3_column_int64 (stmt, 5));
  arg_int (trace, &first, "block", stmt, 2);
  arg_int (trace, &first, "storage_id", stmt, 3);
  arg_int (trace, &first, "bytes", stmt, 4);
  arg_int (trace, &first, "consumer_pid", stmt, 6);
  arg_int (trace, &first, "counter_file_id", stmt, 12);
  arg_int (trace, &first, "slot", stmt, 11);
  arg_int (trace, &first, "send_seq", stmt, 0);
  cowscope_output_puts (trace->out, "}");
  end_event (trace);
  if (!received)
    return TRUE;

  first = TRUE;
  begin_process_instant (trace, "ipc receive", consumer, sqlite3_column_int64 (stmt, 7));
  arg_int (trace, &first, "producer_pid", stmt, 1);
  arg_int (trace, &first, "block", stmt, 2);
  arg_int (trace, &first, "bytes", stmt, 4);
  cowscope_output_printf (trace->out, ",\"cached\":%s", cached ? "true" : "false");
  arg_int (trace, &first, "send_seq", stmt, 0);
  cowscope_output_puts (trace->out, "}");
  end_event (trace);
  if (cached)
    return TRUE; /* its slot went back at the receive itself */

  /* Held from the receive to the release (or the session's end). */
  begin_async (trace, "b", "ipc held", consumer, sqlite3_column_int64 (stmt, 0),
               sqlite3_column_int64 (stmt, 7));
  cowscope_output_puts (trace->out, ",\"args\":{");
  first = TRUE;
  arg_int (trace, &first, "producer_pid", stmt, 1);
  arg_int (trace, &first, "block", stmt, 2);
  arg_int (trace, &first, "bytes", stmt, 4);
  arg_int (trace, &first, "send_seq", stmt, 0);
  if (!released)
    cowscope_output_puts (trace->out, ",\"unreleased\":true");
  cowscope_output_puts (trace->out, "}");
  end_event (trace);
  begin_async (trace, "e", "ipc held", consumer, sqlite3_column_int64 (stmt, 0),
               released ? sqlite3_column_int64 (stmt, 9) : trace->end);
  end_event (trace);
  if (!released)
    return TRUE;

  first = TRUE;
  begin_process_instant (trace, "ipc release", consumer, sqlite3_column_int64 (stmt, 9));
  arg_int (trace, &first, "producer_pid", stmt, 1);
  arg_int (trace, &first, "block", stmt, 2);
  arg_int (trace, &first, "send_seq", stmt, 0);
  cowscope_output_puts (trace->out, "}");
  end_event (trace);
  return TRUE;
}

/* Columns: 0 producer, 1 block, 2 bytes, 3 limbo enter, 4 limbo free,
 * 5 consumers, 6 sends. */
static gboolean
ipc_limbo_row (Trace *trace, sqlite3_stmt *stmt, GError **error)
{
  gint64 producer = sqlite3_column_int64 (stmt, 0);
  gint64 block = sqlite3_column_int64 (stmt, 1);
  gboolean freed = sqlite3_column_type (stmt, 4) != SQLITE_NULL;
  gboolean first = TRUE;

  (void) error;
  /* The producer dropped the block while consumers held it. */
  begin_async (trace, "b", "ipc limbo", producer, block, sqlite3_column_int64 (stmt, 3));
  cowscope_output_puts (trace->out, ",\"args\":{");
  arg_int (trace, &first, "block", stmt, 1);
  arg_int (trace, &first, "bytes", stmt, 2);
  arg_int (trace, &first, "consumers", stmt, 5);
  arg_int (trace, &first, "sends", stmt, 6);
  if (!freed)
    cowscope_output_puts (trace->out, ",\"never_freed\":true");
  cowscope_output_puts (trace->out, "}");
  end_event (trace);
  begin_async (trace, "e", "ipc limbo", producer, block,
               freed ? sqlite3_column_int64 (stmt, 4) : trace->end);
  end_event (trace);
  return TRUE;
}

/* ---- counters ------------------------------------------------------------ */

/* One process's counters: the session format's rules, and the values
 * last written. */
typedef struct {
  CowscopeCounterRules rules;
  double shown[COWSCOPE_N_COUNTERS];
} ProcessCounters;

static const char *const counter_names[COWSCOPE_N_COUNTERS] = {
  [COWSCOPE_COUNTER_BYTES_ALLOCATED] = "allocated bytes",
  [COWSCOPE_COUNTER_BYTES_SHARED] = "lazily shared bytes",
  [COWSCOPE_COUNTER_LIVE_STORAGES] = "live storages",
};
static const char *const counter_keys[COWSCOPE_N_COUNTERS] = {
  [COWSCOPE_COUNTER_BYTES_ALLOCATED] = "bytes",
  [COWSCOPE_COUNTER_BYTES_SHARED] = "bytes",
  [COWSCOPE_COUNTER_LIVE_STORAGES] = "storages",
};

static void
process_counters_free (ProcessCounters *counters)
{
  cowscope_counter_rules_clear (&counters->rules);
  g_free (counters);
}

/* Walks the allocation, storage and context events in time order and
 * writes a "C" event for each change of a process's counters (the same
 * counters as the application's timeline: cowscope-format-counters.h). */
static gboolean
write_counters (Trace *trace, GError **error)
{
  g_autoptr (GHashTable) processes =
    g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free,
                           (GDestroyNotify) process_counters_free);
  sqlite3_stmt *stmt = cowscope_session_tables_prepare (trace->session,
    "SELECT ts, pid, type, v0, v1, v2, v3 FROM main.events"
    " WHERE type IN (:ev_allocation_new, :ev_allocation_free, :ev_storage_new,"
    "  :ev_storage_free, :ev_context_unref, :ev_context_free) ORDER BY ts, seq", error);
  int rc;

  if (stmt == NULL)
    return FALSE;
  while ((rc = cowscope_session_tables_step (trace->session, stmt, error)) == SQLITE_ROW
         && cowscope_output_ok (trace->out))
    {
      gint64 ts = sqlite3_column_int64 (stmt, 0);
      gint64 pid = sqlite3_column_int64 (stmt, 1);
      gint64 v[4];
      for (int k = 0; k < 4; k++)
        v[k] = sqlite3_column_int64 (stmt, 3 + k);
      ProcessCounters *c = g_hash_table_lookup (processes, &pid);

      if (!progress_step (&trace->progress))
        break;
      if (c == NULL)
        {
          c = g_new0 (ProcessCounters, 1);
          cowscope_counter_rules_init (&c->rules);
          for (int i = 0; i < COWSCOPE_N_COUNTERS; i++)
            c->shown[i] = -1;
          g_hash_table_insert (processes, g_memdup2 (&pid, sizeof pid), c);
        }
      guint changed = cowscope_counter_rules_apply (&c->rules, (guint32) pid,
                                                    sqlite3_column_int64 (stmt, 2), v);
      for (int i = 0; i < COWSCOPE_N_COUNTERS; i++)
        if ((changed & (1u << i)) && c->rules.value[i] != c->shown[i])
          {
            begin_event (trace, "C", counter_names[i], "memory", pid, 0, ts);
            cowscope_output_printf (trace->out, ",\"args\":{\"%s\":%" PRId64 "}",
                                    counter_keys[i], (gint64) c->rules.value[i]);
            end_event (trace);
            c->shown[i] = c->rules.value[i];
          }
    }
  sqlite3_finalize (stmt);
  return rc >= 0 && progress_check (&trace->progress, error);
}

/* ---- the chrome document -------------------------------------------------- */

static const char processes_sql[] =
  "SELECT pid, exe, cmdline FROM processes"
  " UNION SELECT DISTINCT pid, NULL, NULL FROM main.events"
  "  WHERE pid NOT IN (SELECT pid FROM processes) ORDER BY 1";
static const char threads_sql[] = "SELECT pid, tid, name FROM threads";
static const char gpus_sql[] =
  "SELECT DISTINCT COALESCE (device_id, 0) FROM cuda_activity"
  " WHERE kind IN (:cuda_memcpy, :cuda_memset, :cuda_kernel, :cuda_memory_alloc,"
  "  :cuda_memory_free) ORDER BY 1";
static const char ranges_sql[] =
  "SELECT pid, tid, name, id, parent_id, begin_ts, end_ts FROM ranges"
  " WHERE begin_ts IS NOT NULL";
/* The lazy clones whose sharing an exported materialization ends. */
static const char lazy_sources_sql[] =
  "SELECT DISTINCT m.lazy_clone_seq FROM materializations m"
  " JOIN lazy_clones l ON l.seq = m.lazy_clone_seq"
  " WHERE m.begin_ts IS NOT NULL AND l.ts IS NOT NULL";
static const char materializations_sql[] =
  "SELECT m.seq, m.pid, m.tid, m.begin_ts, m.end_ts, m.op, m.kind,"
  " m.copy_discarded, m.nbytes, m.storage_id, m.context_id, m.tensor_id,"
  " (SELECT t.name FROM tensors t WHERE t.pid = m.pid AND t.id = m.tensor_id),"
  " m.lock_wait_ns, m.allocation_id, m.stack_id, m.lazy_clone_seq, l.pid, l.tid, l.ts"
  " FROM materializations m LEFT JOIN lazy_clones l ON l.seq = m.lazy_clone_seq"
  " WHERE m.begin_ts IS NOT NULL";
static const char lazy_clones_sql[] =
  "SELECT l.seq, l.pid, l.tid, l.ts, l.op, l.source_tensor_id,"
  " l.result_tensor_id, l.source_storage_id, l.result_storage_id,"
  " l.context_id, l.eager_reason, l.nbytes,"
  " (SELECT t.name FROM tensors t WHERE t.pid = l.pid AND t.id = l.source_tensor_id),"
  " (SELECT t.name FROM tensors t WHERE t.pid = l.pid AND t.id = l.result_tensor_id),"
  " l.stack_id FROM lazy_clones l WHERE l.ts IS NOT NULL";
static const char violations_sql[] =
  "SELECT v.seq, v.pid, v.tid, v.ts, v.op, v.access, v.storage_id,"
  " v.writer_tensor_id,"
  " (SELECT t.name FROM tensors t WHERE t.pid = v.pid AND t.id = v.writer_tensor_id),"
  " v.accessor_tensor_id,"
  " (SELECT t.name FROM tensors t WHERE t.pid = v.pid AND t.id = v.accessor_tensor_id),"
  " v.writer_generation, v.accessor_generation, v.stack_id FROM violations v"
  " WHERE v.ts IS NOT NULL";
static const char marks_sql[] =
  "SELECT seq, pid, tid, ts, name, range_id FROM marks WHERE ts IS NOT NULL";
static const char issuers_sql[] =
  "SELECT DISTINCT e.seq, e.pid, e.tid, e.ts, e.type, e.op FROM cuda_activity c"
  " JOIN main.events e ON e.seq = c.external_id"
  " WHERE c.kind IN (:cuda_memcpy, :cuda_memset, :cuda_kernel)"
  " AND NOT EXISTS (SELECT 1 FROM materializations m WHERE m.seq = e.seq)";
/* %s: the kernel-name expression (name_id is newer than some files). */
static const char cuda_sql_format[] =
  "SELECT c.id, c.pid, c.kind, c.subkind, c.start_ns, c.end_ns, c.bytes,"
  " c.correlation_id, COALESCE (c.device_id, 0), COALESCE (c.stream_id, 0),"
  " c.external_id, %s, e.pid, e.tid, e.ts, m.begin_ts, m.end_ts,"
  " c.kind IN (:cuda_memory_alloc, :cuda_memory_free), c.kind = :cuda_memcpy,"
  " c.kind = :cuda_kernel"
  " FROM cuda_activity c LEFT JOIN main.events e ON e.seq = c.external_id"
  " LEFT JOIN materializations m ON m.seq = c.external_id"
  " WHERE c.kind IN (:cuda_memcpy, :cuda_memset, :cuda_kernel, :cuda_memory_alloc,"
  "  :cuda_memory_free) AND c.start_ns IS NOT NULL";
static const char ipc_refs_sql[] =
  "SELECT send_seq, producer_pid, allocation_id, storage_id, nbytes, send_ts, consumer_pid,"
  " receive_ts, cached, release_ts, consumer_died, slot, counter_file_id FROM ipc_refs"
  " WHERE send_ts IS NOT NULL";
static const char ipc_limbo_sql[] =
  "SELECT producer_pid, allocation_id, nbytes, limbo_enter_ts, limbo_free_ts, consumers, sends"
  " FROM ipc_blocks WHERE limbo_enter_ts IS NOT NULL";

/* Reads @sql's one column of ids into @set. */
static gboolean
read_id_set (Trace *trace, const char *sql, GHashTable *set, GError **error)
{
  sqlite3_stmt *stmt = cowscope_session_tables_prepare (trace->session, sql, error);
  int rc;

  if (stmt == NULL)
    return FALSE;
  while ((rc = cowscope_session_tables_step (trace->session, stmt, error)) == SQLITE_ROW)
    g_hash_table_add (set, int64_key (sqlite3_column_int64 (stmt, 0)));
  sqlite3_finalize (stmt);
  return rc >= 0;
}

/* Estimated rows to write, for the progress line. */
static gint64
estimate_rows (CowscopeSessionTables *session)
{
  gint64 n = 0, total = 0;
  static const char *const counts[] = {
    "SELECT MAX (seq) FROM main.events",
    "SELECT count(*) FROM cuda_activity",
    "SELECT count(*) FROM main.materializations",
    "SELECT count(*) FROM main.lazy_clones",
  };

  for (gsize i = 0; i < G_N_ELEMENTS (counts); i++)
    if (cowscope_session_tables_query_int (session, counts[i], &n, NULL))
      total += n;
  return total;
}

static void
trace_clear (Trace *trace)
{
  g_clear_pointer (&trace->lazy_sources, g_hash_table_unref);
  g_clear_pointer (&trace->stream_tids, g_hash_table_unref);
  g_clear_pointer (&trace->process_names, g_hash_table_unref);
  g_clear_pointer (&trace->stacks, g_hash_table_unref);
  g_clear_pointer (&trace->stack_frames, sqlite3_finalize);
}

gboolean
cowscope_export_chrome (CowscopeSessionTables *session, const char *path,
                        gboolean force, const CowscopeExportProgress *progress,
                        GError **error)
{
  Trace trace = {
    .session = session,
    .first = TRUE,
    .lazy_sources = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL),
    .stream_tids = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free),
    .process_names = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free),
    .stacks = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free,
                                     (GDestroyNotify) stack_args_free),
  };
  g_autofree char *cuda_sql = NULL;
  const char *command = cowscope_session_tables_get_meta (session, "command");
  gboolean ipc = cowscope_session_tables_has_table (session, "ipc_refs")
                 && cowscope_session_tables_has_table (session, "ipc_blocks");
  gboolean ok;

  /* The timeline's span: ts 0 is where the application's time starts. */
  if (!check_session (session, path, error)
      || !cowscope_format_query_bounds (cowscope_session_tables_get_db (session),
                                        cowscope_session_tables_get_path (session), &trace.base,
                                        &trace.end, error)
      || !read_id_set (&trace, lazy_sources_sql, trace.lazy_sources, error))
    {
      trace_clear (&trace);
      return FALSE;
    }
  cuda_sql = g_strdup_printf (cuda_sql_format,
                              cowscope_session_tables_has_column (session, "cuda_activity", "name_id")
                                ? "COALESCE (c.name, (SELECT s.value FROM strings s"
                                  " WHERE s.pid = c.pid AND s.id = c.name_id))"
                                : "c.name");
  trace.out = cowscope_output_open (path, force, error);
  if (trace.out == NULL)
    {
      trace_clear (&trace);
      return FALSE;
    }
  progress_init (&trace.progress, progress, estimate_rows (session));

  cowscope_output_printf (trace.out,
                          "{\"displayTimeUnit\":\"ns\",\"otherData\":{"
                          "\"format\":\"cowscope-trace\",\"baseTimeNanoseconds\":%" PRId64
                          ",\"clock\":\"CLOCK_MONOTONIC\",\"schema_version\":%d,\"command\":",
                          trace.base, cowscope_session_tables_get_schema_version (session));
  cowscope_output_json_string (trace.out, command);
  cowscope_output_puts (trace.out, ",\"session\":");
  cowscope_output_json_string (trace.out, cowscope_session_tables_get_path (session));
  cowscope_output_printf (trace.out, ",\"finalized\":%s},\"traceEvents\":[",
                          cowscope_session_tables_is_finalized (session) ? "true" : "false");

  ok = for_each_row (&trace, processes_sql, process_row, error)
       && for_each_row (&trace, threads_sql, thread_row, error)
       && for_each_row (&trace, gpus_sql, gpu_row, error)
       && for_each_row (&trace, ranges_sql, range_row, error)
       && for_each_row (&trace, materializations_sql, materialization_row, error)
       && for_each_row (&trace, lazy_clones_sql, lazy_clone_row, error)
       && for_each_row (&trace, violations_sql, violation_row, error)
       && for_each_row (&trace, marks_sql, mark_row, error)
       && (!ipc || for_each_row (&trace, ipc_refs_sql, ipc_ref_row, error))
       && (!ipc || for_each_row (&trace, ipc_limbo_sql, ipc_limbo_row, error))
       && for_each_row (&trace, issuers_sql, issuer_row, error)
       && for_each_row (&trace, cuda_sql, cuda_row, error)
       && write_counters (&trace, error);
  trace_clear (&trace);
  if (!ok)
    {
      cowscope_output_abort (trace.out);
      return FALSE;
    }
  cowscope_output_puts (trace.out, "\n]}\n");
  return cowscope_output_commit (trace.out, error);
}

/* ---- csv ----------------------------------------------------------------- */

/* Writes @text as one RFC 4180 field, quoted when it must be. */
static void
csv_field (CowscopeOutput *out, const char *text, gsize length)
{
  gboolean quote = FALSE;

  for (gsize i = 0; i < length && !quote; i++)
    quote = text[i] == ',' || text[i] == '"' || text[i] == '\n' || text[i] == '\r';
  if (!quote)
    {
      cowscope_output_write (out, text, length);
      return;
    }
  cowscope_output_puts (out, "\"");
  for (gsize i = 0, start = 0; i <= length; i++)
    if (i == length || text[i] == '"')
      {
        cowscope_output_write (out, text + start, i - start);
        if (i < length)
          cowscope_output_puts (out, "\"\"");
        start = i + 1;
      }
  cowscope_output_puts (out, "\"");
}

/* Writes table @table of @session as CSV into @out. */
static gboolean
csv_table (CowscopeSessionTables *session, const char *table, CowscopeOutput *out,
           Progress *progress, GError **error)
{
  g_autofree char *quoted = NULL;
  g_autofree char *sql = NULL;
  sqlite3_stmt *stmt;
  GString *name = g_string_new (NULL);
  int columns, rc;

  for (const char *p = table; *p != '\0'; p++)
    {
      if (*p == '"')
        g_string_append_c (name, '"');
      g_string_append_c (name, *p);
    }
  quoted = g_string_free (name, FALSE);
  sql = g_strdup_printf ("SELECT * FROM main.\"%s\"", quoted);
  stmt = cowscope_session_tables_prepare (session, sql, error);
  if (stmt == NULL)
    return FALSE;
  columns = sqlite3_column_count (stmt);
  for (int i = 0; i < columns; i++)
    {
      const char *column = sqlite3_column_name (stmt, i);
      if (i > 0)
        cowscope_output_puts (out, ",");
      csv_field (out, column != NULL ? column : "", column != NULL ? strlen (column) : 0);
    }
  cowscope_output_puts (out, "\r\n");
  while ((rc = cowscope_session_tables_step (session, stmt, error)) == SQLITE_ROW
         && cowscope_output_ok (out))
    {
      for (int i = 0; i < columns; i++)
        {
          if (i > 0)
            cowscope_output_puts (out, ",");
          switch (sqlite3_column_type (stmt, i))
            {
            case SQLITE_NULL:
              break;
            case SQLITE_INTEGER:
              cowscope_output_printf (out, "%" PRId64, (gint64) sqlite3_column_int64 (stmt, i));
              break;
            case SQLITE_FLOAT:
              {
                char buffer[G_ASCII_DTOSTR_BUF_SIZE];
                cowscope_output_puts (out, g_ascii_dtostr (buffer, sizeof buffer,
                                                           sqlite3_column_double (stmt, i)));
              }
              break;
            case SQLITE_BLOB:
              {
                const guint8 *blob = sqlite3_column_blob (stmt, i);
                int n = sqlite3_column_bytes (stmt, i);
                for (int j = 0; j < n; j++)
                  cowscope_output_printf (out, "%02x", blob[j]);
              }
              break;
            default:
              {
                const char *text = (const char *) sqlite3_column_text (stmt, i);
                csv_field (out, text != NULL ? text : "", (gsize) sqlite3_column_bytes (stmt, i));
              }
            }
        }
      cowscope_output_puts (out, "\r\n");
      if (!progress_step (progress))
        break;
    }
  sqlite3_finalize (stmt);
  return rc >= 0 && progress_check (progress, error);
}

/* "events" → "events.csv"; other bytes than [A-Za-z0-9_-] become '_'. */
static char *
csv_file_name (const char *table)
{
  GString *name = g_string_new (NULL);

  for (const char *p = table; *p != '\0'; p++)
    g_string_append_c (name, g_ascii_isalnum (*p) || *p == '_' || *p == '-' ? *p : '_');
  g_string_append (name, ".csv");
  return g_string_free (name, FALSE);
}

/* Removes the files @names in @dir and then @dir; best effort. */
static void
remove_tree (const char *dir, GPtrArray *names)
{
  for (guint i = 0; i < names->len; i++)
    {
      g_autofree char *file = g_build_filename (dir, names->pdata[i], NULL);
      unlink (file);
    }
  rmdir (dir);
}

gboolean
cowscope_export_csv (CowscopeSessionTables *session, const char *path,
                     gboolean force, const CowscopeExportProgress *progress_sink,
                     GError **error)
{
  g_autoptr (GPtrArray) tables = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GPtrArray) files = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *parent = g_path_get_dirname (path);
  g_autofree char *base = g_path_get_basename (path);
  g_autofree char *tmpl = g_strdup_printf (".%s.XXXXXX.part", base);
  g_autofree char *tmp = g_build_filename (parent, tmpl, NULL);
  gboolean exists = FALSE;
  Progress progress;
  gint64 total = 0;
  struct stat st;
  sqlite3_stmt *stmt;
  int rc;

  if (!check_session (session, path, error))
    return FALSE;
  if (stat (path, &st) == 0)
    {
      if (!S_ISDIR (st.st_mode))
        {
          g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_NOTDIR, MSG_NOT_DIR, path);
          return FALSE;
        }
      if (!force)
        {
          g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_EXIST, MSG_EXISTS, path);
          return FALSE;
        }
      exists = TRUE;
    }

  stmt = cowscope_session_tables_prepare (session,
    "SELECT name FROM main.sqlite_master WHERE type = 'table'"
    " AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name", error);
  if (stmt == NULL)
    return FALSE;
  while ((rc = cowscope_session_tables_step (session, stmt, error)) == SQLITE_ROW)
    {
      const char *name = (const char *) sqlite3_column_text (stmt, 0);
      if (name != NULL)
        g_ptr_array_add (tables, g_strdup (name));
    }
  sqlite3_finalize (stmt);
  if (rc < 0)
    return FALSE;
  for (guint i = 0; i < tables->len; i++)
    {
      g_autofree char *sql = g_strdup_printf ("SELECT count(*) FROM main.\"%s\"",
                                              (char *) tables->pdata[i]);
      gint64 n = 0;
      if (strchr (tables->pdata[i], '"') == NULL
          && cowscope_session_tables_query_int (session, sql, &n, NULL))
        total += n;
    }
  progress_init (&progress, progress_sink, total);

  if (g_mkdtemp_full (tmp, 0755) == NULL)
    {
      int saved_errno = errno;
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (saved_errno),
                   MSG_CREATE, path, g_strerror (saved_errno));
      return FALSE;
    }

  for (guint i = 0; i < tables->len; i++)
    {
      char *name = csv_file_name (tables->pdata[i]);
      g_autofree char *file = NULL;
      CowscopeOutput *out;

      /* Two tables whose names sanitize alike: keep both. */
      for (guint j = 0; j < files->len; j++)
        if (strcmp (files->pdata[j], name) == 0)
          {
            char *unique = g_strdup_printf ("%u-%s", i, name);
            g_free (name);
            name = unique;
            break;
          }
      g_ptr_array_add (files, name);
      /* The session itself may sit in the directory under a table's name. */
      {
        g_autofree char *destination = g_build_filename (path, name, NULL);
        if (!check_not_input (session, destination, error))
          goto fail;
      }
      file = g_build_filename (tmp, name, NULL);
      out = cowscope_output_open (file, FALSE, error);
      if (out == NULL)
        goto fail;
      if (!csv_table (session, tables->pdata[i], out, &progress, error))
        {
          cowscope_output_abort (out);
          goto fail;
        }
      if (!cowscope_output_commit (out, error))
        goto fail;
    }

  if (!exists)
    {
      if (rename (tmp, path) != 0)
        {
          int saved_errno = errno;
          g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (saved_errno),
                       MSG_MOVE, path, g_strerror (saved_errno));
          remove_tree (tmp, files);
          return FALSE;
        }
      return TRUE;
    }
  for (guint i = 0; i < files->len; i++)
    {
      g_autofree char *from = g_build_filename (tmp, files->pdata[i], NULL);
      g_autofree char *to = g_build_filename (path, files->pdata[i], NULL);
      if (rename (from, to) != 0)
        {
          int saved_errno = errno;
          g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (saved_errno),
                       MSG_MOVE, to, g_strerror (saved_errno));
          remove_tree (tmp, files);
          return FALSE;
        }
    }
  rmdir (tmp);
  return TRUE;

fail:
  remove_tree (tmp, files);
  return FALSE;
}

/* ---- sqlite -------------------------------------------------------------- */

/* SQLite progress handler during VACUUM INTO: the total is unknown, so
 * the function hears -1; a non-zero return interrupts the copy. */
static int
vacuum_progress (void *data)
{
  const CowscopeExportProgress *sink = data;
  return !sink->func (-1, sink->user_data);
}

/* VACUUM INTO copies an index's entries as they are, and quick_check,
 * which the session passed, does not compare them with their table: an
 * index that disagrees with its table would be copied into a file that
 * fails integrity_check.  Every index of the copy at @tmp is rebuilt from
 * its table instead.  FALSE with @error naming @path. */
static gboolean
rebuild_indexes (const char *tmp, const char *path, GError **error)
{
  sqlite3 *copy = NULL;
  int rc = sqlite3_open_v2 (tmp, &copy, SQLITE_OPEN_READWRITE, NULL);
  if (rc == SQLITE_OK)
    rc = sqlite3_exec (copy, "REINDEX", NULL, NULL, NULL);
  if (rc != SQLITE_OK)
    g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_FAILED, MSG_SQLITE_WRITE, path,
                 (rc & 0xff) == SQLITE_FULL ? g_strerror (ENOSPC)
                                            : copy != NULL ? sqlite3_errmsg (copy)
                                                           : sqlite3_errstr (rc));
  sqlite3_close (copy);
  return rc == SQLITE_OK;
}

gboolean
cowscope_export_sqlite (CowscopeSessionTables *session, const char *path,
                        gboolean force, const CowscopeExportProgress *progress,
                        GError **error)
{
  g_autofree char *parent = g_path_get_dirname (path);
  g_autofree char *base = g_path_get_basename (path);
  g_autofree char *tmpl = g_strdup_printf (".%s.XXXXXX.part", base);
  g_autofree char *tmp = g_build_filename (parent, tmpl, NULL);
  sqlite3 *db = cowscope_session_tables_get_db (session);
  sqlite3_stmt *stmt = NULL;
  struct stat st;
  int fd, rc;

  if (!check_session (session, path, error))
    return FALSE;
  if (stat (path, &st) == 0)
    {
      if (S_ISDIR (st.st_mode))
        {
          g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_ISDIR, MSG_IS_DIR, path);
          return FALSE;
        }
      /* A database copy goes into a file it can later be renamed over,
       * never over a device. */
      if (!S_ISREG (st.st_mode))
        {
          g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_FAILED, MSG_NOT_REGULAR, path);
          return FALSE;
        }
      if (!force)
        {
          g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_EXIST, MSG_EXISTS, path);
          return FALSE;
        }
    }
  /* An empty file of our own, which VACUUM INTO accepts as its target. */
  fd = g_mkstemp_full (tmp, O_RDWR | O_CLOEXEC, 0644);
  if (fd < 0)
    {
      int saved_errno = errno;
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (saved_errno),
                   MSG_CREATE, path, g_strerror (saved_errno));
      return FALSE;
    }
  close (fd);

  rc = sqlite3_prepare_v2 (db, "VACUUM main INTO ?", -1, &stmt, NULL);
  if (rc == SQLITE_OK)
    {
      if (progress != NULL && progress->func != NULL)
        /* Often: VACUUM copies each table with a statement of its own,
         * which counts its instructions afresh, and a session's events
         * are a few packed rows (a call costs next to nothing). */
        sqlite3_progress_handler (db, 100, vacuum_progress, (void *) progress);
      sqlite3_bind_text (stmt, 1, tmp, -1, SQLITE_STATIC);
      rc = sqlite3_step (stmt);
      sqlite3_progress_handler (db, 0, NULL, NULL);
    }
  if (rc != SQLITE_DONE)
    {
      int primary = rc & 0xff;
      if (primary == SQLITE_INTERRUPT)
        g_set_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED, MSG_CANCELLED);
      else if (primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB)
        cowscope_session_tables_set_error (session, error, rc, "copying");
      else
        g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_FAILED, MSG_SQLITE_WRITE,
                     path, primary == SQLITE_FULL ? g_strerror (ENOSPC)
                                                  : sqlite3_errmsg (db));
      sqlite3_finalize (stmt);
      unlink (tmp);
      return FALSE;
    }
  sqlite3_finalize (stmt);
  if (!rebuild_indexes (tmp, path, error))
    {
      unlink (tmp);
      return FALSE;
    }
  if (rename (tmp, path) != 0)
    {
      int saved_errno = errno;
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (saved_errno),
                   MSG_MOVE, path, g_strerror (saved_errno));
      unlink (tmp);
      return FALSE;
    }
  return TRUE;
}
