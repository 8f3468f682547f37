/* cowscope-report.c — a session's summary (see header). */
#include "cowscope-report.h"

#include "cowscope-call-site.h"

#include <inttypes.h>
#include <string.h>

#include "cowscope-format-check.h"
#include "cowscope-text.h"

/* User-visible strings (untranslated for now), in one place. */
#define MSG_NOT_FINALIZED    "%s was not finalized (the recorder stopped before the end of the recording): figures come from the raw events and may be incomplete; run 'cowscope-cli finalize %s' to finish it"
#define MSG_DROPPED          "WARNING: %" G_GINT64_FORMAT " events were DROPPED (ring full): every figure below undercounts; record with --block to lose nothing"
#define MSG_INTERRUPTED      "the recording was interrupted (Ctrl-C on the recorder)"
#define MSG_RECORDER_KILLED  "the recorder was killed; the session was finalized later"
#define MSG_MALFORMED        "%" G_GINT64_FORMAT " records could not be read by the recorder"
#define MSG_NO_STACK         "(no call stack)"
#define MSG_BAD_TIMES        "%s is damaged: its first and last times (tables events, processes, cuda_activity) are not times in ns"

static const char *const metric_names[] = {
  "lazy_clones",     /* lazy clones that shared storage */
  "eager_fallbacks", /* lazy clones that copied eagerly instead */
  "eager_bytes",     /* bytes those eager fallbacks copied */
  "copies",          /* materializations that copied */
  "steals",          /* materializations that took over the bytes */
  "failed_materializations",
  "discarded_copies",/* steals whose copy was thrown away */
  "copied_bytes",
  "stolen_bytes",
  "shared_bytes",    /* bytes shared lazily */
  "saved_bytes",     /* shared_bytes - copied_bytes */
  "lock_wait_ns",
  "violations",
  "produced_events",
  "stored_events",
  "dropped_events",
  "cuda_copies",
  "cuda_copy_bytes",
  "cuda_memsets",
  "cuda_kernels",
  "processes",
  "threads",
  "duration_ns",
  NULL,
};

/* The tables the report reads whole, checked before their numbers are
 * summed (cowscope-format-check.h), with the lookup tables its names come
 * from.  `events` is read only for its first and last times, which
 * build_time() checks itself. */
static const char *const report_tables[] = {
  "processes", "threads", "thread_events", "cuda_activity", "lazy_clones", "materializations",
  "stacks", "stack_frames", "frames", "violations", "tensors", "ops", "eager_reasons",
  "access_kinds", "materialize_kinds", "cuda_kinds", NULL,
};

typedef struct {
  CowscopeSessionTables *session;
  JsonBuilder *builder;
  GHashTable *metrics; /* name → gint64* */
  GPtrArray *warnings;
  guint top;
} Report;

/* ---- helpers ---------------------------------------------------------- */

const char *const *
cowscope_report_metrics (void)
{
  return metric_names;
}

char *
cowscope_report_not_finalized_warning (const char *path)
{
  return g_strdup_printf (MSG_NOT_FINALIZED, path, path);
}

/* Replaces the no-break spaces of g_format_size() by plain ones, so that
 * reports can be searched with grep. */
static char *
plain_spaces (char *text)
{
  GString *s = g_string_new (text);

  g_free (text);
  g_string_replace (s, "\xc2\xa0", " ", 0);
  return g_string_free (s, FALSE);
}

char *
cowscope_report_format_bytes (gint64 bytes)
{
  g_autofree char *size = NULL;

  if (bytes < 0)
    {
      size = plain_spaces (g_format_size_full ((guint64) -(bytes + 1) + 1,
                                               G_FORMAT_SIZE_IEC_UNITS));
      return g_strconcat ("-", size, NULL);
    }
  return plain_spaces (g_format_size_full ((guint64) bytes,
                                           G_FORMAT_SIZE_IEC_UNITS));
}

/* "1.234 s", "12.3 ms", "45.6 µs", "789 ns". */
static char *
format_duration (gint64 ns)
{
  if (ns >= 1000000000)
    return g_strdup_printf ("%.3f s", ns / 1e9);
  if (ns >= 1000000)
    return g_strdup_printf ("%.1f ms", ns / 1e6);
  if (ns >= 1000)
    return g_strdup_printf ("%.1f µs", ns / 1e3);
  return g_strdup_printf ("%" G_GINT64_FORMAT " ns", ns);
}

static void
set_metric (Report *report, const char *name, gint64 value)
{
  gint64 *slot = g_new (gint64, 1);

  *slot = value;
  g_hash_table_replace (report->metrics, (gpointer) name, slot);
}

static gint64
get_metric (Report *report, const char *name)
{
  gint64 *slot = g_hash_table_lookup (report->metrics, name);
  return slot != NULL ? *slot : 0;
}

static void
add_text (JsonBuilder *builder, const char *member, const char *value)
{
  json_builder_set_member_name (builder, member);
  if (value == NULL)
    json_builder_add_null_value (builder);
  else if (g_utf8_validate (value, -1, NULL))
    json_builder_add_string_value (builder, value);
  else
    {
      g_autofree char *valid = g_utf8_make_valid (value, -1);
      json_builder_add_string_value (builder, valid);
    }
}

static void
add_int (JsonBuilder *builder, const char *member, gint64 value)
{
  json_builder_set_member_name (builder, member);
  json_builder_add_int_value (builder, value);
}

/* Adds an array element { @key: @name, "count": @count, "bytes": @bytes }. */
static void
add_named_total (JsonBuilder *builder, const char *key, const char *name, gint64 count,
                 gint64 bytes)
{
  json_builder_begin_object (builder);
  add_text (builder, key, name);
  add_int (builder, "count", count);
  add_int (builder, "bytes", bytes);
  json_builder_end_object (builder);
}

/* Adds column @col of @stmt as an integer, or null when NULL. */
static void
add_column_int (JsonBuilder *builder, const char *member, sqlite3_stmt *stmt,
                int col)
{
  json_builder_set_member_name (builder, member);
  if (sqlite3_column_type (stmt, col) == SQLITE_NULL)
    json_builder_add_null_value (builder);
  else
    json_builder_add_int_value (builder, sqlite3_column_int64 (stmt, col));
}

static void
add_column_text (JsonBuilder *builder, const char *member, sqlite3_stmt *stmt,
                 int col)
{
  add_text (builder, member, (const char *) sqlite3_column_text (stmt, col));
}

static void
add_meta_int (Report *report, const char *member, const char *key)
{
  gint64 value;

  json_builder_set_member_name (report->builder, member);
  if (cowscope_session_tables_get_meta_int (report->session, key, &value))
    json_builder_add_int_value (report->builder, value);
  else
    json_builder_add_null_value (report->builder);
}

static gboolean
meta_flag (Report *report, const char *key)
{
  gint64 value = 0;
  return cowscope_session_tables_get_meta_int (report->session, key, &value)
         && value != 0;
}

/* ---- call sites --------------------------------------------------------- */

typedef struct {
  char *key;      /* identifies the location */
  char *text;     /* "train.c:88 in update_weights()" */
  char *function, *file, *module;
  gint64 line, address;
  gint64 count, bytes;
} CallSite;

/* "at FILE:LINE in f()" for a call site's text, or "in f()" when the
 * frame has no file (a build without debug information). */
static char *
located (const char *site_text)
{
  return g_str_has_prefix (site_text, "in ") ? g_strdup (site_text)
                                             : g_strdup_printf ("at %s", site_text);
}

static void
call_site_free (CallSite *site)
{
  g_free (site->key);
  g_free (site->text);
  g_free (site->function);
  g_free (site->file);
  g_free (site->module);
  g_free (site);
}

/* The call site of stack @stack_id: the call_sites view chooses the
 * frame (its innermost symbolized frame outside Cowscope, else its
 * innermost frame outside Cowscope, else its innermost frame), and
 * cowscope-call-site.h writes it as the call tree does ("FILE:LINE in
 * f()", "in f()" without a file, "0x… in module" unsymbolized).  A
 * stack_id <= 0 or one without frames gives "(no call stack)".  Returns a
 * new CallSite with count and bytes zero, or NULL on error. */
static CallSite *
resolve_call_site (CowscopeSessionTables *session, sqlite3_stmt *call_site,
                   gint64 stack_id, GError **error)
{
  CallSite *site = g_new0 (CallSite, 1);
  int rc = SQLITE_DONE;

  sqlite3_reset (call_site);
  sqlite3_bind_int64 (call_site, 1, stack_id);
  if (stack_id > 0 && (rc = cowscope_session_tables_step (session, call_site, error)) < 0)
    {
      call_site_free (site);
      return NULL;
    }
  if (rc != SQLITE_ROW)
    {
      site->text = g_strdup (MSG_NO_STACK);
      site->key = g_strdup_printf ("%s\x1f\x1f" "0\x1f\x1f" "0", site->text);
      return site;
    }
  site->function = g_strdup ((const char *) sqlite3_column_text (call_site, 1));
  site->file = g_strdup ((const char *) sqlite3_column_text (call_site, 2));
  site->line = sqlite3_column_int64 (call_site, 3);
  site->module = g_strdup ((const char *) sqlite3_column_text (call_site, 4));
  site->address = sqlite3_column_int64 (call_site, 5);
  {
    const CowscopeFrameRef ref = {
      site->function, site->file, site->module, site->line, (guint64) site->address,
    };
    site->text = cowscope_call_site_format (&ref);
    site->key = cowscope_call_site_key (&ref);
  }
  return site;
}

static const char call_site_sql[] =
  "SELECT call_site, function, file, line, module, address FROM call_sites WHERE stack_id = ?";

static gint
compare_sites (gconstpointer a, gconstpointer b)
{
  const CallSite *x = *(CallSite *const *) a, *y = *(CallSite *const *) b;

  if (x->bytes != y->bytes)
    return x->bytes > y->bytes ? -1 : 1;
  if (x->count != y->count)
    return x->count > y->count ? -1 : 1;
  return g_strcmp0 (x->text, y->text);
}

static void
add_site_members (JsonBuilder *builder, const CallSite *site)
{
  add_text (builder, "location", site->text);
  add_text (builder, "function", site->function);
  add_text (builder, "file", site->file);
  json_builder_set_member_name (builder, "line");
  if (site->line > 0)
    json_builder_add_int_value (builder, site->line);
  else
    json_builder_add_null_value (builder);
  add_text (builder, "module", site->module);
  json_builder_set_member_name (builder, "address");
  if (site->address != 0)
    json_builder_add_int_value (builder, site->address);
  else
    json_builder_add_null_value (builder);
}

/* "top_call_sites": copies grouped by call site, by bytes. */
static gboolean
build_call_sites (Report *report, GError **error)
{
  g_autoptr (GHashTable) by_key =
    g_hash_table_new_full (g_str_hash, g_str_equal, NULL,
                           (GDestroyNotify) call_site_free);
  g_autoptr (GPtrArray) sites = g_ptr_array_new ();
  sqlite3_stmt *stmt, *call_site;
  int rc;

  stmt = cowscope_session_tables_prepare (report->session,
    "SELECT stack_id, count(*), SUM (nbytes) FROM materializations"
    " WHERE (kind & :materialize_kind_mask) = :materialize_copy GROUP BY stack_id", error);
  if (stmt == NULL)
    return FALSE;
  call_site = cowscope_session_tables_prepare (report->session, call_site_sql, error);
  if (call_site == NULL)
    {
      sqlite3_finalize (stmt);
      return FALSE;
    }
  while ((rc = cowscope_session_tables_step (report->session, stmt, error)) == SQLITE_ROW)
    {
      gint64 stack_id = sqlite3_column_int64 (stmt, 0);
      CallSite *site = resolve_call_site (report->session, call_site, stack_id, error);
      CallSite *existing;

      if (site == NULL)
        {
          rc = -1;
          break;
        }
      existing = g_hash_table_lookup (by_key, site->key);
      if (existing == NULL)
        {
          g_hash_table_insert (by_key, site->key, site);
          existing = site;
        }
      else
        call_site_free (site);
      existing->count += sqlite3_column_int64 (stmt, 1);
      existing->bytes += sqlite3_column_int64 (stmt, 2);
    }
  sqlite3_finalize (stmt);
  sqlite3_finalize (call_site);
  if (rc < 0)
    return FALSE;

  {
    GHashTableIter iter;
    gpointer value;
    g_hash_table_iter_init (&iter, by_key);
    while (g_hash_table_iter_next (&iter, NULL, &value))
      g_ptr_array_add (sites, value);
  }
  g_ptr_array_sort (sites, compare_sites);

  json_builder_set_member_name (report->builder, "top_call_sites");
  json_builder_begin_array (report->builder);
  for (guint i = 0; i < sites->len && i < report->top; i++)
    {
      const CallSite *site = sites->pdata[i];
      g_autofree char *bytes = cowscope_report_format_bytes (site->bytes);
      g_autofree char *where = located (site->text);
      g_autofree char *text = g_strdup_printf ("%s copied %s", bytes, where);

      json_builder_begin_object (report->builder);
      add_site_members (report->builder, site);
      add_int (report->builder, "copies", site->count);
      add_int (report->builder, "bytes", site->bytes);
      add_text (report->builder, "text", text);
      json_builder_end_object (report->builder);
    }
  json_builder_end_array (report->builder);
  return TRUE;
}

/* ---- sections ----------------------------------------------------------- */

static void
build_session (Report *report)
{
  JsonBuilder *b = report->builder;
  CowscopeSessionTables *s = report->session;

  json_builder_set_member_name (b, "session");
  json_builder_begin_object (b);
  add_text (b, "path", cowscope_session_tables_get_path (s));
  add_int (b, "schema_version", cowscope_session_tables_get_schema_version (s));
  json_builder_set_member_name (b, "finalized");
  json_builder_add_boolean_value (b, cowscope_session_tables_is_finalized (s));
  add_text (b, "source", cowscope_session_tables_is_finalized (s) ? "derived tables" : "raw events");
  add_text (b, "created_utc", cowscope_session_tables_get_meta (s, "created_utc"));
  add_text (b, "recorder_version", cowscope_session_tables_get_meta (s, "recorder_version"));
  json_builder_end_object (b);

  json_builder_set_member_name (b, "target");
  json_builder_begin_object (b);
  add_text (b, "command", cowscope_session_tables_get_meta (s, "command"));
  add_text (b, "program", cowscope_session_tables_get_meta (s, "program"));
  add_meta_int (report, "pid", "target_pid");
  add_text (b, "end", cowscope_session_tables_get_meta (s, "target_end"));
  add_meta_int (report, "exit_status", "exit_status");
  add_meta_int (report, "exit_signal", "exit_signal");
  json_builder_set_member_name (b, "interrupted");
  json_builder_add_boolean_value (b, meta_flag (report, "interrupted"));
  json_builder_set_member_name (b, "recorder_killed");
  json_builder_add_boolean_value (b, meta_flag (report, "recorder_killed"));
  json_builder_end_object (b);
}

static gboolean
build_time (Report *report, GError **error)
{
  sqlite3_stmt *stmt = cowscope_session_tables_prepare (report->session,
    "SELECT MIN (t), MAX (t) FROM ("
    " SELECT MIN (ts) AS t FROM events UNION ALL SELECT MAX (ts) FROM events"
    " UNION ALL SELECT MIN (start_ns) FROM processes"
    " UNION ALL SELECT MAX (end_ns) FROM processes"
    " UNION ALL SELECT MIN (start_ns) FROM cuda_activity"
    " UNION ALL SELECT MAX (end_ns) FROM cuda_activity)", error);
  gint64 start = 0, end = 0;
  gboolean known = FALSE;
  int rc;

  if (stmt == NULL)
    return FALSE;
  rc = cowscope_session_tables_step (report->session, stmt, error);
  if (rc == SQLITE_ROW && sqlite3_column_type (stmt, 0) != SQLITE_NULL)
    {
      known = TRUE;
      start = sqlite3_column_int64 (stmt, 0);
      end = sqlite3_column_int64 (stmt, 1);
      /* events is not checked whole (it is the largest table): its first
       * and last times must be times. */
      if (sqlite3_column_type (stmt, 0) != SQLITE_INTEGER
          || sqlite3_column_type (stmt, 1) != SQLITE_INTEGER || start < 0 || end < start
          || end > COWSCOPE_FORMAT_MAX_TIME)
        {
          g_set_error (error, COWSCOPE_SESSION_ERROR, COWSCOPE_SESSION_ERROR_DAMAGED,
                       MSG_BAD_TIMES, cowscope_session_tables_get_path (report->session));
          rc = -1;
        }
    }
  sqlite3_finalize (stmt);
  if (rc < 0)
    return FALSE;
  json_builder_set_member_name (report->builder, "start_ns");
  if (known)
    json_builder_add_int_value (report->builder, start);
  else
    json_builder_add_null_value (report->builder);
  json_builder_set_member_name (report->builder, "end_ns");
  if (known)
    json_builder_add_int_value (report->builder, end);
  else
    json_builder_add_null_value (report->builder);
  set_metric (report, "duration_ns", known ? end - start : 0);
  return TRUE;
}

static gboolean
build_processes (Report *report, GError **error)
{
  JsonBuilder *b = report->builder;
  sqlite3_stmt *stmt;
  gint64 n = 0, threads = 0;
  int rc;
  /* A merged session (cowscope-session-merge.h): each process with the
   * member it came from and its pid there, member by member. */
  gboolean merged = cowscope_session_tables_has_table (report->session, "merged_processes")
                    && cowscope_session_tables_has_table (report->session, "merged_sessions");

  stmt = cowscope_session_tables_prepare (report->session,
    merged ? "SELECT p.pid, p.ppid, p.exe, p.cmdline, p.end_reason, p.exit_status,"
             " p.exit_signal, p.gpu_status,"
             " (SELECT count(*) FROM threads t WHERE t.pid = p.pid), s.label, m.original_pid"
             " FROM processes p LEFT JOIN merged_processes m ON m.pid = p.pid"
             " LEFT JOIN merged_sessions s ON s.id = m.session_id"
             " ORDER BY m.session_id, p.start_ns, p.pid"
           : "SELECT p.pid, p.ppid, p.exe, p.cmdline, p.end_reason, p.exit_status,"
             " p.exit_signal, p.gpu_status,"
             " (SELECT count(*) FROM threads t WHERE t.pid = p.pid), NULL, NULL"
             " FROM processes p ORDER BY p.start_ns, p.pid", error);
  if (stmt == NULL)
    return FALSE;
  json_builder_set_member_name (b, "processes");
  json_builder_begin_array (b);
  while ((rc = cowscope_session_tables_step (report->session, stmt, error)) == SQLITE_ROW)
    {
      json_builder_begin_object (b);
      add_column_int (b, "pid", stmt, 0);
      add_column_int (b, "ppid", stmt, 1);
      add_column_text (b, "exe", stmt, 2);
      add_column_text (b, "cmdline", stmt, 3);
      add_column_text (b, "end", stmt, 4);
      add_column_int (b, "exit_status", stmt, 5);
      add_column_int (b, "exit_signal", stmt, 6);
      add_column_text (b, "gpu_status", stmt, 7);
      add_column_int (b, "threads", stmt, 8);
      if (sqlite3_column_type (stmt, 9) != SQLITE_NULL)
        {
          add_column_text (b, "group", stmt, 9);
          add_column_int (b, "original_pid", stmt, 10);
        }
      json_builder_end_object (b);
      n++;
    }
  json_builder_end_array (b);
  sqlite3_finalize (stmt);
  if (rc < 0)
    return FALSE;
  if (n == 0 && !cowscope_session_tables_query_int (report->session,
                  "SELECT count(DISTINCT pid) FROM events", &n, error))
    return FALSE;
  if (!cowscope_session_tables_query_int (report->session,
                                   "SELECT count(*) FROM threads", &threads,
                                   error))
    return FALSE;
  if (threads == 0 && !cowscope_session_tables_query_int (report->session,
                  "SELECT count(*) FROM (SELECT DISTINCT pid, tid FROM events)",
                  &threads, error))
    return FALSE;
  set_metric (report, "processes", n);
  set_metric (report, "threads", threads);
  return TRUE;
}

static gboolean
build_events (Report *report, GError **error)
{
  sqlite3_stmt *stmt = cowscope_session_tables_prepare (report->session,
    "SELECT count(*), SUM (produced), SUM (stored), SUM (dropped) FROM threads",
    error);
  gint64 produced = 0, stored = 0, dropped = 0, malformed = 0, value;
  gboolean from_threads = FALSE;
  int rc;

  if (stmt == NULL)
    return FALSE;
  rc = cowscope_session_tables_step (report->session, stmt, error);
  if (rc == SQLITE_ROW && sqlite3_column_int64 (stmt, 0) > 0)
    {
      from_threads = TRUE;
      produced = sqlite3_column_int64 (stmt, 1);
      stored = sqlite3_column_int64 (stmt, 2);
      dropped = sqlite3_column_int64 (stmt, 3);
    }
  sqlite3_finalize (stmt);
  if (rc < 0)
    return FALSE;
  /* meta holds the recorder's totals; trust whichever saw more. */
  if (cowscope_session_tables_get_meta_int (report->session, "produced", &value)
      && (!from_threads || value > produced))
    produced = value;
  if (cowscope_session_tables_get_meta_int (report->session, "stored", &value)
      && (!from_threads || value > stored))
    stored = value;
  if (cowscope_session_tables_get_meta_int (report->session, "dropped", &value)
      && (!from_threads || value > dropped))
    dropped = value;
  cowscope_session_tables_get_meta_int (report->session, "malformed_records", &malformed);
  if (produced == 0 && stored == 0
      && !cowscope_session_tables_query_int (report->session,
                                      "SELECT count(*) FROM events", &stored,
                                      error))
    return FALSE;
  if (produced == 0)
    produced = stored + dropped;

  /* The figures above count records (events, strings, stacks, CUDA
   * records); sessions since schema 3 also count the events among them.
   * Older ones cannot tell: their records stand for the events. */
  gint64 events_produced = produced, events_stored = stored, events_dropped = dropped;
  gboolean has_event_counts
    = cowscope_session_tables_get_meta_int (report->session, "events_produced", &events_produced)
      && cowscope_session_tables_get_meta_int (report->session, "events_stored", &events_stored)
      && cowscope_session_tables_get_meta_int (report->session, "events_dropped", &events_dropped);
  if (!has_event_counts)
    {
      events_produced = produced;
      events_stored = stored;
      events_dropped = dropped;
    }

  set_metric (report, "produced_events", events_produced);
  set_metric (report, "stored_events", events_stored);
  set_metric (report, "dropped_events", events_dropped);
  json_builder_set_member_name (report->builder, "events");
  json_builder_begin_object (report->builder);
  add_int (report->builder, "produced", events_produced);
  add_int (report->builder, "stored", events_stored);
  add_int (report->builder, "dropped", events_dropped);
  add_int (report->builder, "malformed_records", malformed);
  if (has_event_counts)
    {
      json_builder_set_member_name (report->builder, "records");
      json_builder_begin_object (report->builder);
      add_int (report->builder, "produced", produced);
      add_int (report->builder, "stored", stored);
      add_int (report->builder, "dropped", dropped);
      json_builder_end_object (report->builder);
    }
  json_builder_end_object (report->builder);
  if (events_dropped > 0)
    g_ptr_array_add (report->warnings, g_strdup_printf (MSG_DROPPED, events_dropped));
  if (malformed > 0)
    g_ptr_array_add (report->warnings, g_strdup_printf (MSG_MALFORMED, malformed));
  return TRUE;
}

static gboolean
build_clones (Report *report, GError **error)
{
  JsonBuilder *b = report->builder;
  sqlite3_stmt *stmt;
  gint64 lazy = 0, shared = 0, eager = 0, eager_bytes = 0;
  int rc;

  stmt = cowscope_session_tables_prepare (report->session,
    "SELECT eager_reason, count(*), SUM (nbytes) FROM lazy_clones"
    " GROUP BY eager_reason ORDER BY 2 DESC", error);
  if (stmt == NULL)
    return FALSE;
  json_builder_set_member_name (b, "eager_fallbacks");
  json_builder_begin_array (b);
  while ((rc = cowscope_session_tables_step (report->session, stmt, error)) == SQLITE_ROW)
    {
      gint64 count = sqlite3_column_int64 (stmt, 1);
      gint64 bytes = sqlite3_column_int64 (stmt, 2);
      if (sqlite3_column_type (stmt, 0) == SQLITE_NULL)
        {
          lazy += count;
          shared += bytes;
          continue;
        }
      eager += count;
      eager_bytes += bytes;
      add_named_total (b, "reason", cowscope_session_tables_enum_name (report->session, "eager_reasons",
                                                                sqlite3_column_int64 (stmt, 0)),
                       count, bytes);
    }
  json_builder_end_array (b);
  sqlite3_finalize (stmt);
  if (rc < 0)
    return FALSE;
  set_metric (report, "lazy_clones", lazy);
  set_metric (report, "shared_bytes", shared);
  set_metric (report, "eager_fallbacks", eager);
  set_metric (report, "eager_bytes", eager_bytes);
  return TRUE;
}

static gboolean
build_materializations (Report *report, GError **error)
{
  sqlite3_stmt *stmt;
  int rc;

  stmt = cowscope_session_tables_prepare (report->session,
    "SELECT SUM (k = :materialize_copy), SUM (CASE WHEN k = :materialize_copy THEN nbytes END),"
    " SUM (k = :materialize_steal), SUM (CASE WHEN k = :materialize_steal THEN nbytes END),"
    " SUM (k = :materialize_failed), SUM (copy_discarded), SUM (lock_wait_ns)"
    " FROM (SELECT kind & :materialize_kind_mask AS k, nbytes, copy_discarded, lock_wait_ns"
    "  FROM materializations)", error);
  if (stmt == NULL)
    return FALSE;
  rc = cowscope_session_tables_step (report->session, stmt, error);
  if (rc == SQLITE_ROW)
    {
      /* SUM over no row is NULL, which reads as 0. */
      set_metric (report, "copies", sqlite3_column_int64 (stmt, 0));
      set_metric (report, "copied_bytes", sqlite3_column_int64 (stmt, 1));
      set_metric (report, "steals", sqlite3_column_int64 (stmt, 2));
      set_metric (report, "stolen_bytes", sqlite3_column_int64 (stmt, 3));
      set_metric (report, "failed_materializations", sqlite3_column_int64 (stmt, 4));
      set_metric (report, "discarded_copies", sqlite3_column_int64 (stmt, 5));
      set_metric (report, "lock_wait_ns", sqlite3_column_int64 (stmt, 6));
    }
  sqlite3_finalize (stmt);
  if (rc < 0)
    return FALSE;
  set_metric (report, "saved_bytes",
              get_metric (report, "shared_bytes") - get_metric (report, "copied_bytes"));

  /* The operations whose writes triggered materializations, with the seq
   * of each one's largest (SQLite takes a bare column from the row of the
   * query's only MAX()), for a viewer to show it. */
  stmt = cowscope_session_tables_prepare (report->session,
    "SELECT op, SUM ((kind & :materialize_kind_mask) = :materialize_copy),"
    " SUM (CASE WHEN (kind & :materialize_kind_mask) = :materialize_copy THEN nbytes ELSE 0 END),"
    " SUM ((kind & :materialize_kind_mask) = :materialize_steal),"
    " SUM (CASE WHEN (kind & :materialize_kind_mask) = :materialize_steal THEN nbytes ELSE 0 END),"
    " SUM (lock_wait_ns), MAX (nbytes), seq"
    " FROM materializations GROUP BY op ORDER BY 3 DESC, 2 DESC, 5 DESC", error);
  if (stmt == NULL)
    return FALSE;
  json_builder_set_member_name (report->builder, "top_ops");
  json_builder_begin_array (report->builder);
  for (guint i = 0;
       (rc = cowscope_session_tables_step (report->session, stmt, error)) == SQLITE_ROW;
       i++)
    {
      JsonBuilder *b = report->builder;
      if (i >= report->top)
        continue;
      json_builder_begin_object (b);
      add_text (b, "op", cowscope_session_tables_enum_name (report->session, "ops",
                                                     sqlite3_column_int64 (stmt, 0)));
      add_int (b, "copies", sqlite3_column_int64 (stmt, 1));
      add_int (b, "copied_bytes", sqlite3_column_int64 (stmt, 2));
      add_int (b, "steals", sqlite3_column_int64 (stmt, 3));
      add_int (b, "stolen_bytes", sqlite3_column_int64 (stmt, 4));
      add_int (b, "lock_wait_ns", sqlite3_column_int64 (stmt, 5));
      add_int (b, "largest_seq", sqlite3_column_int64 (stmt, 7));
      json_builder_end_object (b);
    }
  json_builder_end_array (report->builder);
  sqlite3_finalize (stmt);
  return rc >= 0;
}

static gboolean
build_violations (Report *report, GError **error)
{
  JsonBuilder *b = report->builder;
  sqlite3_stmt *stmt, *call_site;
  gint64 count = 0;
  int rc;

  if (!cowscope_session_tables_query_int (report->session,
                                   "SELECT count(*) FROM violations", &count,
                                   error))
    return FALSE;
  set_metric (report, "violations", count);

  stmt = cowscope_session_tables_prepare (report->session,
    "SELECT v.seq, v.pid, v.tid, v.ts, v.op, v.access, v.storage_id,"
    " v.writer_tensor_id, (SELECT t.name FROM tensors t"
    "  WHERE t.pid = v.pid AND t.id = v.writer_tensor_id),"
    " v.accessor_tensor_id, (SELECT t.name FROM tensors t"
    "  WHERE t.pid = v.pid AND t.id = v.accessor_tensor_id),"
    " v.writer_generation, v.accessor_generation, v.stack_id"
    " FROM violations v ORDER BY v.ts, v.seq LIMIT 100", error);
  if (stmt == NULL)
    return FALSE;
  call_site = cowscope_session_tables_prepare (report->session, call_site_sql, error);
  if (call_site == NULL)
    {
      sqlite3_finalize (stmt);
      return FALSE;
    }
  json_builder_set_member_name (b, "violations");
  json_builder_begin_array (b);
  while ((rc = cowscope_session_tables_step (report->session, stmt, error)) == SQLITE_ROW)
    {
      CallSite *site = resolve_call_site (report->session, call_site,
                                          sqlite3_column_int64 (stmt, 13), error);
      if (site == NULL)
        {
          rc = -1;
          break;
        }
      json_builder_begin_object (b);
      add_column_int (b, "seq", stmt, 0);
      add_column_int (b, "pid", stmt, 1);
      add_column_int (b, "tid", stmt, 2);
      add_column_int (b, "ts_ns", stmt, 3);
      add_text (b, "op", cowscope_session_tables_enum_name (report->session, "ops",
                                                     sqlite3_column_int64 (stmt, 4)));
      add_text (b, "access", cowscope_session_tables_enum_name (report->session,
                  "access_kinds", sqlite3_column_int64 (stmt, 5)));
      add_column_int (b, "storage_id", stmt, 6);
      add_column_int (b, "writer_tensor_id", stmt, 7);
      add_column_text (b, "writer_name", stmt, 8);
      add_column_int (b, "accessor_tensor_id", stmt, 9);
      add_column_text (b, "accessor_name", stmt, 10);
      add_column_int (b, "writer_generation", stmt, 11);
      add_column_int (b, "accessor_generation", stmt, 12);
      add_text (b, "location", site->text);
      json_builder_end_object (b);
      call_site_free (site);
    }
  json_builder_end_array (b);
  sqlite3_finalize (stmt);
  sqlite3_finalize (call_site);
  return rc >= 0;
}

static gboolean
build_cuda (Report *report, GError **error)
{
  JsonBuilder *b = report->builder;
  const char *tracing = cowscope_session_tables_get_meta (report->session, "gpu_tracing");
  g_autofree char *process_status = NULL;
  gint64 copies = 0, copy_bytes = 0, memsets = 0, kernels = 0;
  sqlite3_stmt *stmt;
  int rc;

  if (tracing == NULL)
    {
      stmt = cowscope_session_tables_prepare (report->session,
        "SELECT gpu_status FROM processes WHERE gpu_status IS NOT NULL"
        " ORDER BY gpu_status = 'available' DESC LIMIT 1", error);
      if (stmt == NULL)
        return FALSE;
      rc = cowscope_session_tables_step (report->session, stmt, error);
      if (rc == SQLITE_ROW)
        process_status = g_strdup ((const char *) sqlite3_column_text (stmt, 0));
      sqlite3_finalize (stmt);
      if (rc < 0)
        return FALSE;
      tracing = process_status != NULL ? process_status : "unknown";
    }

  stmt = cowscope_session_tables_prepare (report->session,
    "SELECT kind = :cuda_memset, kind = :cuda_kernel, subkind, count(*), SUM (bytes)"
    " FROM cuda_activity WHERE kind IN (:cuda_memcpy, :cuda_memset, :cuda_kernel)"
    " GROUP BY kind, subkind ORDER BY 5 DESC", error);
  if (stmt == NULL)
    return FALSE;
  json_builder_set_member_name (b, "cuda");
  json_builder_begin_object (b);
  add_text (b, "gpu_tracing", tracing);
  json_builder_set_member_name (b, "copies_by_kind");
  json_builder_begin_array (b);
  while ((rc = cowscope_session_tables_step (report->session, stmt, error)) == SQLITE_ROW)
    {
      gint64 count = sqlite3_column_int64 (stmt, 3);
      gint64 bytes = sqlite3_column_int64 (stmt, 4);
      if (sqlite3_column_int (stmt, 0))
        memsets += count;
      else if (sqlite3_column_int (stmt, 1))
        kernels += count;
      else
        {
          copies += count;
          copy_bytes += bytes;
          add_named_total (b, "kind", cowscope_session_tables_enum_name (report->session, "memcpy_kinds",
                                                                  sqlite3_column_int64 (stmt, 2)),
                           count, bytes);
        }
    }
  json_builder_end_array (b);
  sqlite3_finalize (stmt);
  add_int (b, "copies", copies);
  add_int (b, "copy_bytes", copy_bytes);
  add_int (b, "memsets", memsets);
  add_int (b, "kernels", kernels);
  json_builder_end_object (b);
  set_metric (report, "cuda_copies", copies);
  set_metric (report, "cuda_copy_bytes", copy_bytes);
  set_metric (report, "cuda_memsets", memsets);
  set_metric (report, "cuda_kernels", kernels);
  return rc >= 0;
}

JsonObject *
cowscope_report_build (CowscopeSessionTables *session, guint top, GError **error)
{
  g_autoptr (JsonBuilder) builder = json_builder_new ();
  g_autoptr (GHashTable) metrics = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, g_free);
  g_autoptr (GPtrArray) warnings = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (JsonNode) root = NULL;
  Report report = { session, builder, metrics, warnings, top };
  const char *const *names = metric_names;

  g_return_val_if_fail (session != NULL, NULL);

  if (!cowscope_session_tables_check (session, report_tables, error))
    return NULL;
  if (!cowscope_session_tables_is_finalized (session))
    {
      const char *path = cowscope_session_tables_get_path (session);
      g_ptr_array_add (warnings, cowscope_report_not_finalized_warning (path));
    }
  if (meta_flag (&report, "interrupted"))
    g_ptr_array_add (warnings, g_strdup (MSG_INTERRUPTED));
  if (meta_flag (&report, "recorder_killed"))
    g_ptr_array_add (warnings, g_strdup (MSG_RECORDER_KILLED));

  json_builder_begin_object (builder);
  add_text (builder, "format", "cowscope-report");
  add_int (builder, "version", 1);
  build_session (&report);
  if (!build_time (&report, error)
      || !build_processes (&report, error)
      || !build_events (&report, error)
      || !build_clones (&report, error)
      || !build_materializations (&report, error)
      || !build_call_sites (&report, error)
      || !build_violations (&report, error)
      || !build_cuda (&report, error))
    return NULL;

  json_builder_set_member_name (builder, "metrics");
  json_builder_begin_object (builder);
  for (gsize i = 0; names[i] != NULL; i++)
    add_int (builder, names[i], get_metric (&report, names[i]));
  json_builder_end_object (builder);

  json_builder_set_member_name (builder, "warnings");
  json_builder_begin_array (builder);
  for (guint i = 0; i < warnings->len; i++)
    json_builder_add_string_value (builder, warnings->pdata[i]);
  json_builder_end_array (builder);
  json_builder_end_object (builder);

  root = json_builder_get_root (builder);
  return json_object_ref (json_node_get_object (root));
}

/* ---- the human summary -------------------------------------------------- */

/* Member @name of @object as text ("" when absent or null). */
static const char *
text_of (JsonObject *object, const char *name)
{
  JsonNode *node = object != NULL ? json_object_get_member (object, name) : NULL;
  return node != NULL && JSON_NODE_HOLDS_VALUE (node)
             && json_node_get_value_type (node) == G_TYPE_STRING
           ? json_node_get_string (node) : "";
}

static gboolean
has_int (JsonObject *object, const char *name)
{
  JsonNode *node = json_object_get_member (object, name);
  return node != NULL && JSON_NODE_HOLDS_VALUE (node);
}

static gint64
int_of (JsonObject *object, const char *name)
{
  return has_int (object, name) ? json_object_get_int_member (object, name) : 0;
}

static const char *
plural (gint64 n, const char *one, const char *many)
{
  return n == 1 ? one : many;
}

static void
append_target (GString *out, JsonObject *report)
{
  JsonObject *target = json_object_get_object_member (report, "target");
  const char *command = text_of (target, "command");
  const char *end = text_of (target, "end");

  g_string_append_printf (out, "Target:     %s", *command ? command : "(unknown command)");
  if (g_strcmp0 (end, "exited") == 0 && has_int (target, "exit_status"))
    g_string_append_printf (out, " — exited with status %" G_GINT64_FORMAT,
                            int_of (target, "exit_status"));
  else if (*end && has_int (target, "exit_signal"))
    g_string_append_printf (out, " — %s by signal %" G_GINT64_FORMAT " (%s)", end,
                            int_of (target, "exit_signal"),
                            g_strsignal ((int) int_of (target, "exit_signal")));
  else if (*end)
    g_string_append_printf (out, " — %s", end);
  g_string_append_c (out, '\n');
}

/* A copy of @node whose strings are escaped for a terminal
 * (cowscope-text.h): the session's names, paths and command lines reach
 * the text report only through it. */
static JsonNode *
escaped_copy (JsonNode *node)
{
  JsonNode *copy;

  switch (json_node_get_node_type (node))
    {
    case JSON_NODE_OBJECT:
      {
        JsonObject *object = json_node_get_object (node);
        JsonObject *escaped = json_object_new ();
        JsonObjectIter iter;
        const char *name;
        JsonNode *member;

        json_object_iter_init (&iter, object);
        while (json_object_iter_next (&iter, &name, &member))
          json_object_set_member (escaped, name, escaped_copy (member));
        copy = json_node_init_object (json_node_alloc (), escaped);
        json_object_unref (escaped);
        return copy;
      }
    case JSON_NODE_ARRAY:
      {
        JsonArray *array = json_node_get_array (node);
        JsonArray *escaped = json_array_sized_new (json_array_get_length (array));

        for (guint i = 0; i < json_array_get_length (array); i++)
          json_array_add_element (escaped, escaped_copy (json_array_get_element (array, i)));
        copy = json_node_init_array (json_node_alloc (), escaped);
        json_array_unref (escaped);
        return copy;
      }
    case JSON_NODE_VALUE:
      if (json_node_get_value_type (node) == G_TYPE_STRING)
        {
          g_autofree char *text = cowscope_text_escape (json_node_get_string (node));
          return json_node_init_string (json_node_alloc (), text);
        }
      return json_node_copy (node);
    case JSON_NODE_NULL:
    default:
      return json_node_copy (node);
    }
}

static char *format_safe_text (JsonObject *report);

char *
cowscope_report_format_text (JsonObject *report)
{
  g_autoptr (JsonNode) root = json_node_init_object (json_node_alloc (), report);
  g_autoptr (JsonNode) safe = escaped_copy (root);

  return format_safe_text (json_node_get_object (safe));
}

/* The text of @report, whose strings are already escaped. */
static char *
format_safe_text (JsonObject *report)
{
  GString *out = g_string_new (NULL);
  JsonObject *session = json_object_get_object_member (report, "session");
  JsonObject *m = json_object_get_object_member (report, "metrics");
  JsonObject *cuda = json_object_get_object_member (report, "cuda");
  JsonObject *events = json_object_get_object_member (report, "events");
  JsonArray *array;
  g_autofree char *duration = format_duration (int_of (m, "duration_ns"));
  g_autofree char *shared = cowscope_report_format_bytes (int_of (m, "shared_bytes"));
  g_autofree char *copied = cowscope_report_format_bytes (int_of (m, "copied_bytes"));
  g_autofree char *stolen = cowscope_report_format_bytes (int_of (m, "stolen_bytes"));
  g_autofree char *saved = cowscope_report_format_bytes (int_of (m, "saved_bytes"));
  g_autofree char *eager = cowscope_report_format_bytes (int_of (m, "eager_bytes"));
  g_autofree char *wait = format_duration (int_of (m, "lock_wait_ns"));
  g_autofree char *cuda_bytes = cowscope_report_format_bytes (int_of (m, "cuda_copy_bytes"));

  array = json_object_get_array_member (report, "warnings");
  for (guint i = 0; i < json_array_get_length (array); i++)
    g_string_append_printf (out, "!! %s\n", json_array_get_string_element (array, i));
  if (json_array_get_length (array) > 0)
    g_string_append_c (out, '\n');

  g_string_append_printf (out, "Session:    %s (schema %" G_GINT64_FORMAT "%s%s)\n",
                          text_of (session, "path"), int_of (session, "schema_version"),
                          *text_of (session, "created_utc") ? ", recorded " : "",
                          text_of (session, "created_utc"));
  append_target (out, report);
  g_string_append_printf (out, "Duration:   %s\n", duration);
  g_string_append_printf (out, "Processes:  %" G_GINT64_FORMAT ", threads: %" G_GINT64_FORMAT "\n",
                          int_of (m, "processes"), int_of (m, "threads"));
  array = json_object_get_array_member (report, "processes");
  for (guint i = 0; i < json_array_get_length (array) && json_array_get_length (array) > 1; i++)
    {
      JsonObject *p = json_array_get_object_element (array, i);
      if (json_object_has_member (p, "group"))
        g_string_append_printf (out, "  %s: pid %" G_GINT64_FORMAT " (%" G_GINT64_FORMAT
                                " here)", text_of (p, "group"), int_of (p, "original_pid"),
                                int_of (p, "pid"));
      else
        g_string_append_printf (out, "  pid %" G_GINT64_FORMAT, int_of (p, "pid"));
      g_string_append_printf (out, " %s%s%s\n",
                              *text_of (p, "cmdline") ? text_of (p, "cmdline") : text_of (p, "exe"),
                              *text_of (p, "end") ? " — " : "", text_of (p, "end"));
    }

  g_string_append (out, "\nLazy clones\n");
  g_string_append_printf (out, "  %" G_GINT64_FORMAT " lazy %s sharing %s\n",
                          int_of (m, "lazy_clones"),
                          plural (int_of (m, "lazy_clones"), "clone", "clones"), shared);
  g_string_append_printf (out, "  %" G_GINT64_FORMAT " eager %s copying %s",
                          int_of (m, "eager_fallbacks"),
                          plural (int_of (m, "eager_fallbacks"), "fallback", "fallbacks"),
                          eager);
  array = json_object_get_array_member (report, "eager_fallbacks");
  for (guint i = 0; i < json_array_get_length (array); i++)
    {
      JsonObject *e = json_array_get_object_element (array, i);
      g_string_append_printf (out, "%s%s: %" G_GINT64_FORMAT, i == 0 ? " (" : ", ",
                              text_of (e, "reason"), int_of (e, "count"));
    }
  g_string_append (out, json_array_get_length (array) > 0 ? ")\n" : "\n");

  g_string_append (out, "\nMaterializations\n");
  g_string_append_printf (out, "  %" G_GINT64_FORMAT " %s, %s copied\n",
                          int_of (m, "copies"), plural (int_of (m, "copies"), "copy", "copies"), copied);
  g_string_append_printf (out, "  %" G_GINT64_FORMAT " %s, %s taken over without copying\n",
                          int_of (m, "steals"), plural (int_of (m, "steals"), "steal", "steals"), stolen);
  if (int_of (m, "discarded_copies") > 0)
    g_string_append_printf (out, "  %" G_GINT64_FORMAT " of the steals threw away a copy already made\n",
                            int_of (m, "discarded_copies"));
  if (int_of (m, "failed_materializations") > 0)
    g_string_append_printf (out, "  %" G_GINT64_FORMAT " failed (out of memory)\n",
                            int_of (m, "failed_materializations"));
  g_string_append_printf (out, "  Saved by lazy copies: %s (%s shared lazily − %s copied)\n",
                          saved, shared, copied);
  g_string_append_printf (out, "  Waiting for locks: %s\n", wait);

  array = json_object_get_array_member (report, "top_ops");
  if (json_array_get_length (array) > 0)
    {
      g_string_append (out, "\nTop copy-triggering operations\n");
      for (guint i = 0; i < json_array_get_length (array); i++)
        {
          JsonObject *o = json_array_get_object_element (array, i);
          g_autofree char *c = cowscope_report_format_bytes (int_of (o, "copied_bytes"));
          g_autofree char *s = cowscope_report_format_bytes (int_of (o, "stolen_bytes"));
          g_string_append_printf (out, "  %-14s %" G_GINT64_FORMAT " %s (%s), %"
                                  G_GINT64_FORMAT " %s (%s)\n",
                                  text_of (o, "op"), int_of (o, "copies"),
                                  plural (int_of (o, "copies"), "copy", "copies"), c,
                                  int_of (o, "steals"),
                                  plural (int_of (o, "steals"), "steal", "steals"), s);
        }
    }
  array = json_object_get_array_member (report, "top_call_sites");
  if (json_array_get_length (array) > 0)
    {
      g_string_append (out, "\nTop call sites\n");
      for (guint i = 0; i < json_array_get_length (array); i++)
        {
          JsonObject *s = json_array_get_object_element (array, i);
          g_string_append_printf (out, "  %s (%" G_GINT64_FORMAT " %s)\n", text_of (s, "text"),
                                  int_of (s, "copies"),
                                  plural (int_of (s, "copies"), "copy", "copies"));
        }
    }

  g_string_append_printf (out, "\nSimulate-mode warnings: %" G_GINT64_FORMAT "\n",
                          int_of (m, "violations"));
  array = json_object_get_array_member (report, "violations");
  for (guint i = 0; i < json_array_get_length (array) && i < 20; i++)
    {
      JsonObject *v = json_array_get_object_element (array, i);
      g_autofree char *where = located (text_of (v, "location"));
      g_string_append_printf (out,
                              "  %s through tensor %" G_GINT64_FORMAT " \"%s\" after a write through tensor %"
                              G_GINT64_FORMAT " \"%s\" (storage %" G_GINT64_FORMAT ", op %s) %s\n",
                              text_of (v, "access"), int_of (v, "accessor_tensor_id"),
                              text_of (v, "accessor_name"), int_of (v, "writer_tensor_id"),
                              text_of (v, "writer_name"), int_of (v, "storage_id"),
                              text_of (v, "op"), where);
    }

  g_string_append (out, "\nCUDA\n");
  g_string_append_printf (out, "  GPU tracing: %s\n", text_of (cuda, "gpu_tracing"));
  g_string_append_printf (out, "  %" G_GINT64_FORMAT " %s, %s",
                          int_of (m, "cuda_copies"),
                          plural (int_of (m, "cuda_copies"), "copy", "copies"), cuda_bytes);
  array = json_object_get_array_member (cuda, "copies_by_kind");
  for (guint i = 0; i < json_array_get_length (array); i++)
    {
      JsonObject *k = json_array_get_object_element (array, i);
      g_autofree char *b = cowscope_report_format_bytes (int_of (k, "bytes"));
      g_string_append_printf (out, "%s%s %" G_GINT64_FORMAT " (%s)", i == 0 ? ": " : ", ",
                              text_of (k, "kind"), int_of (k, "count"), b);
    }
  g_string_append_printf (out, "\n  %" G_GINT64_FORMAT " %s, %" G_GINT64_FORMAT " %s\n",
                          int_of (m, "cuda_memsets"),
                          plural (int_of (m, "cuda_memsets"), "memset", "memsets"),
                          int_of (m, "cuda_kernels"),
                          plural (int_of (m, "cuda_kernels"), "kernel", "kernels"));

  g_string_append_printf (out, "\nEvents: %" G_GINT64_FORMAT " produced, %" G_GINT64_FORMAT
                          " stored, %" G_GINT64_FORMAT " dropped\n",
                          int_of (events, "produced"), int_of (events, "stored"),
                          int_of (events, "dropped"));
  if (json_object_has_member (events, "records"))
    {
      JsonObject *records = json_object_get_object_member (events, "records");
      g_string_append_printf (out, "Records (events, strings, stacks, CUDA): %" G_GINT64_FORMAT
                              " produced, %" G_GINT64_FORMAT " stored, %" G_GINT64_FORMAT
                              " dropped\n",
                              int_of (records, "produced"), int_of (records, "stored"),
                              int_of (records, "dropped"));
    }
  if (int_of (events, "dropped") > 0)
    g_string_append_printf (out, "!! " MSG_DROPPED "\n", int_of (events, "dropped"));
  return g_string_free (out, FALSE);
}
