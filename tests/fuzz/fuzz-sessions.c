/* fuzz-sessions.c — hostile session files through every command (issue
 * 11, "Hostile files").
 *
 * Records the demo's scenarios once into a temporary directory, then
 * makes mutants of those sessions, deterministically from a seed: bytes
 * flipped in a page of a table or index, files cut short, pages zeroed,
 * values of the wrong type, huge or negative values, NULLs where the
 * schema says NOT NULL, parent links that loop, missing and extra tables,
 * a newer schema version, damaged packed BLOBs; and special files (FIFO,
 * socket, directory, device, symbolic link loop, dangling link, empty
 * file, text, an unreadable file).  Each goes through `report`, `report
 * --json`, `export` in every format, `finalize` (on a copy) and the
 * application's open (the session model's document load, then its lanes
 * queried and its sharing graph built), each in a process of its own with
 * a timeout and GLib criticals fatal.
 *
 * Each command must give a clear refusal (exit 1, one line that names the
 * file in the format's words) or a correct result (exit 0; a report whose
 * numbers pass the oracle, fuzz-oracle.h; an export that parses; a
 * finalized file that passes integrity_check); never a crash, a hang, a
 * GLib critical, a garbage number, SQLite's raw parser messages, or exit
 * 0 on a file that had to be refused — one that the session format's own
 * checks (cowscope-format-check.h) find damaged in a table the command
 * reads.  Prints the outcomes by category and command; exits 1 on any
 * failure.
 *
 *   fuzz-sessions [--cases N] [--seed S] [--timeout SECONDS] [--full]
 *                 [--keep DIR] [--verbose]
 *
 * CI runs ~100 cases on three small scenarios (meson test, suite fuzz);
 * run-full.sh runs 1,000 or more on every scenario.  Needs $COWSCOPE_CLI
 * and $COWSCOPE_DEMO (and the probe, as `record` finds it) to record.
 */
#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cowscope-cli-commands.h"
#include "cowscope-events-vtab.h"
#include "cowscope-format-check.h"
#include "cowscope-format-finalize.h"
#include "cowscope-format-open.h"
#include "cowscope-format-schema.h"
#include "cowscope-session-document.h"
#include "cowscope-sharing-graph.h"
#include "cowscope-timeline-lane.h"
#include "cowscope-timeline-window.h"
#include "fuzz-oracle.h"

/* ---- categories, commands, outcomes ------------------------------------- */

typedef enum {
  CAT_FLIP,
  CAT_TRUNCATE,
  CAT_ZERO_PAGES,
  CAT_WRONG_TYPE,
  CAT_OUT_OF_RANGE,
  CAT_NULL,
  CAT_CYCLE,
  CAT_MISSING_TABLE,
  CAT_EXTRA_TABLE,
  CAT_NEWER_SCHEMA,
  CAT_PACKED,
  CAT_SPECIAL,
  N_CATS
} Category;

static const char *const cat_names[N_CATS] = {
  "byte flips", "truncations", "zeroed pages", "wrong column types", "huge/negative values",
  "NULL in NOT NULL", "parent cycles", "missing tables", "extra tables", "newer schema",
  "damaged packed BLOBs", "special files",
};

typedef enum {
  CMD_REPORT,
  CMD_REPORT_JSON,
  CMD_CHROME,
  CMD_CSV,
  CMD_SQLITE,
  CMD_FINALIZE,
  CMD_OPEN,
  N_CMDS
} Command;

static const char *const cmd_names[N_CMDS] = {
  "report", "report --json", "export chrome", "export csv", "export sqlite", "finalize",
  "app open",
};

typedef enum {
  OUT_REFUSED,   /* a clear refusal */
  OUT_SAME,      /* exit 0, the same result as the undamaged session */
  OUT_DIFFERENT, /* exit 0, another result that passes the oracle */
  OUT_FAIL,      /* anything else */
  N_OUTS
} Outcome;

static const char *const out_names[N_OUTS] = { "refused", "same", "different", "FAIL" };

/* The tables each command reads, whose damage it must refuse: what the
 * report checks (app/session/cowscope-report.c) with meta (every reader
 * checks it); the application's load (its values); the exports and
 * `finalize` read everything. */
static const char *const report_tables[] = {
  "meta", "processes", "threads", "thread_events", "cuda_activity", "lazy_clones",
  "materializations", "stacks", "stack_frames", "frames", "violations", "tensors", "ops",
  "eager_reasons", "access_kinds", "materialize_kinds", "cuda_kinds", NULL,
};
static const char *const open_tables[] = {
  "meta", "processes", "threads", "timeline_lanes", "timeline_chunks", "timeline_spans",
  "timeline_counters", "ipc_refs", "ipc_blocks", NULL,
};

/* ---- options and state ---------------------------------------------------- */

static struct {
  int cases;
  guint32 seed;
  int timeout;
  gboolean full;
  gboolean verbose;
  char *keep;
} opt = { 100, 1, 60, FALSE, FALSE, NULL };

typedef struct {
  char *name;
  char *path;                 /* the undamaged session */
  char *expected[N_CMDS];     /* what each command gives on it */
  GPtrArray *btrees;          /* names with pages (dbstat) */
  GArray *pages;              /* per btree index: GArray of page numbers */
  GPtrArray *int_columns;     /* "table\tcolumn" of INTEGER columns with rows */
  gint64 page_size, n_pages;
} Base;

typedef struct {
  Category cat;
  char *path;
  char *what;
  gboolean must_refuse[N_CMDS];
  const Base *base;
} Mutant;

static guint counts[N_CATS][N_CMDS][N_OUTS];
static guint n_cases[N_CATS];
static guint failures;

/* ---- small helpers ---------------------------------------------------------- */

static void
fail_setup (const char *format, ...) G_GNUC_PRINTF (1, 2) G_GNUC_NORETURN;

static void
fail_setup (const char *format, ...)
{
  va_list args;
  va_start (args, format);
  g_autofree char *message = g_strdup_vprintf (format, args);
  va_end (args);
  fprintf (stderr, "fuzz-sessions: %s\n", message);
  exit (2);
}

static void
remove_tree (const char *path)
{
  struct stat st;
  if (lstat (path, &st) != 0)
    return;
  if (S_ISDIR (st.st_mode))
    {
      g_chmod (path, 0755);
      GDir *dir = g_dir_open (path, 0, NULL);
      const char *name;
      while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
        {
          g_autofree char *child = g_build_filename (path, name, NULL);
          remove_tree (child);
        }
      if (dir != NULL)
        g_dir_close (dir);
      g_rmdir (path);
    }
  else
    g_unlink (path);
}

static gboolean
copy_file (const char *from, const char *to)
{
  g_autofree char *contents = NULL;
  gsize length = 0;
  return g_file_get_contents (from, &contents, &length, NULL)
         && g_file_set_contents (to, contents, length, NULL);
}

/* Runs @sql on the file @path with SQLite alone (no checks); FALSE when
 * SQLite refuses it. */
static gboolean
raw_exec (const char *path, const char *sql)
{
  sqlite3 *db = NULL;
  /* With the events module, as in the sqlite3 shell with Cowscope's
   * extension: mutations may read `events`. */
  gboolean ok = sqlite3_open_v2 (path, &db, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK
                && cowscope_events_vtab_register (db) == SQLITE_OK
                && sqlite3_exec (db, "PRAGMA synchronous = OFF", NULL, NULL, NULL) == SQLITE_OK
                && sqlite3_exec (db, sql, NULL, NULL, NULL) == SQLITE_OK;
  if (!ok && opt.verbose)
    fprintf (stderr, "  (sql refused: %s: %s)\n", db ? sqlite3_errmsg (db) : "?", sql);
  sqlite3_close (db);
  return ok;
}

/* ---- running one command in a process of its own ------------------------------- */

/* Runs @command's in-process entry point with the arguments after it,
 * capturing stdout and stderr. */
static int
run_cli (int (*command) (int, char **, FILE *, FILE *), char **out, char **err, ...)
{
  g_autoptr (GPtrArray) args = g_ptr_array_new ();
  va_list ap;
  const char *arg;
  va_start (ap, err);
  while ((arg = va_arg (ap, const char *)) != NULL)
    g_ptr_array_add (args, (gpointer) arg);
  va_end (ap);
  g_ptr_array_add (args, NULL);
  size_t out_len = 0, err_len = 0;
  FILE *out_stream = open_memstream (out, &out_len);
  FILE *err_stream = open_memstream (err, &err_len);
  int status = command ((int) args->len - 1, (char **) args->pdata, out_stream, err_stream);
  fclose (out_stream);
  fclose (err_stream);
  return status;
}

/* A report (JSON) without what differs between two copies of a session. */
static char *
normalized_report (const char *json, char **why)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GError) error = NULL;
  if (!json_parser_load_from_data (parser, json, -1, &error))
    {
      *why = g_strdup_printf ("report --json is not JSON: %s", error->message);
      return NULL;
    }
  JsonNode *root = json_parser_get_root (parser);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    {
      *why = g_strdup ("report --json is not an object");
      return NULL;
    }
  JsonObject *report = json_node_get_object (root);
  *why = fuzz_oracle_check_report (report);
  if (*why != NULL)
    return NULL;
  json_object_remove_member (report, "session");
  json_object_remove_member (report, "warnings");
  g_autoptr (JsonGenerator) generator = json_generator_new ();
  json_generator_set_root (generator, root);
  return json_generator_to_data (generator, NULL);
}

/* The text of every file under @dir, for comparing exports. */
static void
append_tree (GString *out, const char *dir)
{
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  const char *name;
  while (d != NULL && (name = g_dir_read_name (d)) != NULL)
    g_ptr_array_add (names, g_strdup (name));
  g_ptr_array_sort (names, (GCompareFunc) g_strcmp0);
  for (guint i = 0; i < names->len; i++)
    {
      g_autofree char *path = g_build_filename (dir, names->pdata[i], NULL);
      g_autofree char *contents = NULL;
      g_file_get_contents (path, &contents, NULL, NULL);
      g_string_append_printf (out, "%s\n%s\n", (char *) names->pdata[i],
                              contents != NULL ? contents : "");
    }
}

static char *
pragma_text (const char *path, const char *pragma)
{
  sqlite3 *db = NULL;
  sqlite3_stmt *stmt = NULL;
  char *text = NULL;
  if (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK
      && sqlite3_prepare_v2 (db, pragma, -1, &stmt, NULL) == SQLITE_OK
      && sqlite3_step (stmt) == SQLITE_ROW)
    text = g_strdup ((const char *) sqlite3_column_text (stmt, 0));
  else
    text = g_strdup (db != NULL ? sqlite3_errmsg (db) : "cannot open");
  sqlite3_finalize (stmt);
  sqlite3_close (db);
  return text;
}

/* The application's open: the document, every lane queried over the
 * whole session and half of it, the sharing graph at the end and in the
 * middle, the first damaged chunk's error.  A summary to compare, or
 * NULL with *@error (a refusal) or *@why (a wrong result). */
static char *
app_open (const char *path, GError **error, char **why)
{
  g_autoptr (CowscopeSessionDocument) doc = cowscope_session_document_load (path, NULL, error);
  if (doc == NULL)
    return NULL;
  gint64 start = cowscope_session_document_get_start_ns (doc);
  gint64 end = cowscope_session_document_get_end_ns (doc);
  if (start < 0 || end < start)
    {
      *why = g_strdup_printf ("the document spans %" G_GINT64_FORMAT " to %" G_GINT64_FORMAT,
                              start, end);
      return NULL;
    }
  GString *summary = g_string_new (NULL);
  g_string_append_printf (summary, "events %" G_GUINT64_FORMAT " span %" G_GINT64_FORMAT "\n",
                          cowscope_session_document_get_n_events (doc), end - start);
  GListModel *lanes = cowscope_session_document_get_lanes (doc);
  for (guint i = 0; i < g_list_model_get_n_items (lanes); i++)
    {
      g_autoptr (CowscopeTimelineLane) lane = g_list_model_get_item (lanes, i);
      guint64 n = cowscope_timeline_lane_get_n_events (lane);
      gint64 windows[][2] = { { start, end + 1 }, { start + (end - start) / 4, end - (end - start) / 4 } };
      for (gsize w = 0; w < G_N_ELEMENTS (windows); w++)
        {
          g_autoptr (CowscopeTimelineWindow) window =
            cowscope_timeline_lane_query (lane, windows[w][0], windows[w][1], 317);
          guint64 total = cowscope_timeline_window_get_total_count (window);
          guint64 counted = cowscope_timeline_lane_count (lane, windows[w][0], windows[w][1]);
          if (total > n || counted > n)
            {
              *why = g_strdup_printf ("lane %u shows %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT
                                      " events", i, MAX (total, counted), n);
              g_string_free (summary, TRUE);
              return NULL;
            }
          g_string_append_printf (summary, "lane %u: %" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT "\n",
                                  i, total, n);
        }
    }
  gint64 seqs[] = { cowscope_session_document_get_last_seq (doc),
                    (cowscope_session_document_get_first_seq (doc)
                     + cowscope_session_document_get_last_seq (doc)) / 2 };
  for (gsize i = 0; i < G_N_ELEMENTS (seqs); i++)
    {
      g_autoptr (GError) graph_error = NULL;
      g_autoptr (CowscopeSharingGraph) graph =
        cowscope_sharing_graph_build (doc, seqs[i], 0, NULL, &graph_error);
      if (graph != NULL)
        g_string_append_printf (summary, "graph %u nodes %u edges\n",
                                cowscope_sharing_graph_get_n_nodes (graph),
                                cowscope_sharing_graph_get_n_edges (graph));
      else if ((*why = fuzz_oracle_check_refusal (graph_error, path)) != NULL)
        {
          g_string_free (summary, TRUE);
          return NULL;
        }
      else
        g_string_append (summary, "graph refused\n");
    }
  g_autoptr (GError) query_error = cowscope_session_document_take_query_error (doc);
  if (query_error != NULL && (*why = fuzz_oracle_check_refusal (query_error, path)) != NULL)
    {
      g_string_free (summary, TRUE);
      return NULL;
    }
  g_string_append_printf (summary, "damaged chunks: %s\n", query_error != NULL ? "yes" : "no");
  return g_string_free (summary, FALSE);
}

/* A refusal on stderr: one line, the file named, the format's words, no
 * control character.  NULL when so, else why not. */
static char *
check_refusal_text (const char *err, const char *path)
{
  static const char *const phrasings[] = {
    " is damaged: ", "not a Cowscope session: ", " was written by a newer Cowscope",
    "cannot open ", " was not finalized",
  };
  static const char *const raw[] = {
    "unrecognized token", "syntax error", "malformed database schema", "incomplete input",
  };
  char *why = fuzz_oracle_check_text (err);
  if (why != NULL)
    return why;
  const char *newline = strchr (err, '\n');
  if (newline == NULL || newline[1] != '\0')
    return g_strdup_printf ("not one line: %s", err);
  if (strstr (err, path) == NULL)
    return g_strdup_printf ("the file is not named: %s", err);
  for (gsize i = 0; i < G_N_ELEMENTS (raw); i++)
    if (strstr (err, raw[i]) != NULL)
      return g_strdup_printf ("SQLite's raw message: %s", err);
  for (gsize i = 0; i < G_N_ELEMENTS (phrasings); i++)
    if (strstr (err, phrasings[i]) != NULL)
      return NULL;
  return g_strdup_printf ("the message does not say what is wrong: %s", err);
}

/* Runs @cmd on @path (writing into @dir) in this process; returns the
 * result to compare (exit 0), or NULL with *@refusal (a refusal, checked)
 * or *@why (a failure). */
static char *
run_command (Command cmd, const char *path, const char *dir, char **refusal, char **why)
{
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_autofree char *target = g_build_filename (dir, "out", NULL);
  int status = 0;

  switch (cmd)
    {
    case CMD_REPORT:
      status = run_cli (cowscope_report_run, &out, &err, "report", path, NULL);
      break;
    case CMD_REPORT_JSON:
      status = run_cli (cowscope_report_run, &out, &err, "report", "--json", path, NULL);
      break;
    case CMD_CHROME:
      status = run_cli (cowscope_export_run, &out, &err, "export", path, "--format", "chrome",
                        "-o", target, NULL);
      break;
    case CMD_CSV:
      status = run_cli (cowscope_export_run, &out, &err, "export", path, "--format", "csv", "-o",
                        target, NULL);
      break;
    case CMD_SQLITE:
      status = run_cli (cowscope_export_run, &out, &err, "export", path, "--format", "sqlite",
                        "-o", target, NULL);
      break;
    case CMD_FINALIZE:
      {
        struct stat st;
        /* On a copy: what finalize does to the file is the result. */
        if (lstat (path, &st) == 0 && S_ISREG (st.st_mode) && access (path, R_OK) == 0)
          {
            if (!copy_file (path, target))
              {
                *why = g_strdup ("cannot copy the mutant");
                return NULL;
              }
            status = run_cli (cowscope_finalize_run, &out, &err, "finalize", target, NULL);
          }
        else
          status = run_cli (cowscope_finalize_run, &out, &err, "finalize", path, NULL);
        break;
      }
    case CMD_OPEN:
    default:
      {
        g_autoptr (GError) error = NULL;
        char *summary = app_open (path, &error, why);
        if (summary != NULL || *why != NULL)
          return summary;
        *why = fuzz_oracle_check_refusal (error, path);
        if (*why == NULL)
          *refusal = g_strdup (error->message);
        return NULL;
      }
    }

  if (status != 0)
    {
      if (status != 1)
        *why = g_strdup_printf ("exit status %d: %s", status, err);
      else if (cmd == CMD_FINALIZE && strstr (err, path) == NULL && strstr (err, target) != NULL)
        {
          /* It named the copy it ran on. */
          g_autoptr (GString) renamed = g_string_new (err);
          g_string_replace (renamed, target, path, 0);
          *why = check_refusal_text (renamed->str, path);
        }
      else
        *why = check_refusal_text (err, path);
      if (*why == NULL)
        *refusal = g_strdup (err);
      return NULL;
    }
  switch (cmd)
    {
    case CMD_REPORT:
      if ((*why = fuzz_oracle_check_text (out)) != NULL)
        return NULL;
      return g_strdup (out);
    case CMD_REPORT_JSON:
      return normalized_report (out, why);
    case CMD_CHROME:
      {
        g_autoptr (JsonParser) parser = json_parser_new ();
        g_autoptr (GError) error = NULL;
        if (!json_parser_load_from_file (parser, target, &error))
          {
            *why = g_strdup_printf ("the trace is not JSON: %s", error->message);
            return NULL;
          }
        g_autofree char *text = NULL;
        g_file_get_contents (target, &text, NULL, NULL);
        return g_strdup (text);
      }
    case CMD_CSV:
      {
        GString *all = g_string_new (NULL);
        append_tree (all, target);
        return g_string_free (all, FALSE);
      }
    case CMD_SQLITE:
    case CMD_FINALIZE:
      {
        g_autofree char *check = pragma_text (target, "PRAGMA integrity_check");
        if (g_strcmp0 (check, "ok") != 0)
          {
            *why = g_strdup_printf ("exit 0, but the result fails integrity_check: %s", check);
            return NULL;
          }
        /* What the result reports is the result. */
        g_autofree char *json = NULL;
        g_autofree char *json_err = NULL;
        if (run_cli (cowscope_report_run, &json, &json_err, "report", "--json", target, NULL) != 0)
          {
            *why = g_strdup_printf ("exit 0, but its result cannot be reported: %s", json_err);
            return NULL;
          }
        return normalized_report (json, why);
      }
    default:
      return NULL;
    }
}

/* Runs @cmd in a child process (a crash or a hang fails only it): the
 * outcome, with *@detail. */
static Outcome
run_isolated (Command cmd, const char *path, const char *dir, const char *expected,
              char **result, char **detail)
{
  g_autofree char *result_path = g_build_filename (dir, "result", NULL);
  g_autofree char *work = g_build_filename (dir, "work", NULL);
  remove_tree (work);
  g_mkdir (work, 0755);
  g_unlink (result_path);
  fflush (stdout);
  fflush (stderr);
  pid_t pid = fork ();
  if (pid < 0)
    fail_setup ("fork: %s", g_strerror (errno));
  if (pid == 0)
    {
      /* A hang ends with SIGALRM; a GLib critical or warning aborts. */
      alarm ((unsigned) opt.timeout);
      g_log_set_always_fatal (G_LOG_LEVEL_CRITICAL);
      char *refusal = NULL, *why = NULL;
      char *got = run_command (cmd, path, work, &refusal, &why);
      GString *record = g_string_new (NULL);
      if (why != NULL)
        g_string_append_printf (record, "F%s", why);
      else if (refusal != NULL)
        g_string_append_printf (record, "R%s", refusal);
      else
        {
          /* The mutant's name is not part of the result. */
          g_autoptr (GString) text = g_string_new (got != NULL ? got : "");
          g_string_replace (text, path, "SESSION", 0);
          g_string_append_printf (record, "O%s", text->str);
        }
      g_file_set_contents (result_path, record->str, (gssize) record->len, NULL);
      g_string_free (record, TRUE);
      g_free (got);
      g_free (refusal);
      g_free (why);
      /* exit(), not _exit(): under ASan, LeakSanitizer then checks what
       * the command left allocated (a leak fails the command). */
      exit (0);
    }
  int status = 0;
  while (waitpid (pid, &status, 0) < 0 && errno == EINTR)
    ;
  g_autofree char *record = NULL;
  if (!WIFEXITED (status) || WEXITSTATUS (status) != 0
      || !g_file_get_contents (result_path, &record, NULL, NULL) || record[0] == '\0')
    {
      if (WIFSIGNALED (status) && WTERMSIG (status) == SIGALRM)
        *detail = g_strdup_printf ("hang: no end after %d s", opt.timeout);
      else if (WIFSIGNALED (status))
        *detail = g_strdup_printf ("crash: signal %d (%s)", WTERMSIG (status),
                                   g_strsignal (WTERMSIG (status)));
      else
        *detail = g_strdup_printf ("the child exited %d without a result",
                                   WIFEXITED (status) ? WEXITSTATUS (status) : -1);
      return OUT_FAIL;
    }
  *detail = g_strdup (record + 1);
  switch (record[0])
    {
    case 'F':
      return OUT_FAIL;
    case 'R':
      return OUT_REFUSED;
    default:
      if (result != NULL)
        *result = g_strdup (record + 1);
      return expected != NULL && strcmp (record + 1, expected) == 0 ? OUT_SAME : OUT_DIFFERENT;
    }
}

/* ---- the undamaged sessions ------------------------------------------------------ */

static void
load_layout (Base *base)
{
  sqlite3 *db = NULL;
  sqlite3_stmt *stmt = NULL;
  if (sqlite3_open_v2 (base->path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK
      || cowscope_events_vtab_register (db) != SQLITE_OK)
    fail_setup ("cannot open %s", base->path);
  base->btrees = g_ptr_array_new_with_free_func (g_free);
  base->pages = g_array_new (FALSE, FALSE, sizeof (GArray *));
  sqlite3_prepare_v2 (db, "SELECT name, pageno FROM dbstat ORDER BY name, pageno", -1, &stmt,
                      NULL);
  while (stmt != NULL && sqlite3_step (stmt) == SQLITE_ROW)
    {
      const char *name = (const char *) sqlite3_column_text (stmt, 0);
      gint64 page = sqlite3_column_int64 (stmt, 1);
      if (base->btrees->len == 0
          || strcmp (g_ptr_array_index (base->btrees, base->btrees->len - 1), name) != 0)
        {
          g_ptr_array_add (base->btrees, g_strdup (name));
          GArray *pages = g_array_new (FALSE, FALSE, sizeof (gint64));
          g_array_append_val (base->pages, pages);
        }
      g_array_append_val (g_array_index (base->pages, GArray *, base->pages->len - 1), page);
    }
  sqlite3_finalize (stmt);
  if (base->btrees->len == 0)
    fail_setup ("%s: dbstat gives no page (SQLite without SQLITE_ENABLE_DBSTAT_VTAB?)",
                base->path);
  base->int_columns = g_ptr_array_new_with_free_func (g_free);
  /* Plain tables only: `events` is append-only rows of event_chunks,
   * whose own columns are among these. */
  sqlite3_prepare_v2 (db,
                      "SELECT m.name, c.name FROM sqlite_master m, pragma_table_info (m.name) c"
                      " WHERE m.type = 'table' AND m.sql NOT LIKE 'CREATE VIRTUAL TABLE%'"
                      " AND c.type = 'INTEGER' ORDER BY 1, 2",
                      -1, &stmt, NULL);
  while (stmt != NULL && sqlite3_step (stmt) == SQLITE_ROW)
    {
      const char *table = (const char *) sqlite3_column_text (stmt, 0);
      const char *column = (const char *) sqlite3_column_text (stmt, 1);
      g_autofree char *count_sql = g_strdup_printf ("SELECT count(*) FROM \"%s\"", table);
      sqlite3_stmt *count = NULL;
      if (sqlite3_prepare_v2 (db, count_sql, -1, &count, NULL) == SQLITE_OK
          && sqlite3_step (count) == SQLITE_ROW && sqlite3_column_int64 (count, 0) > 0)
        g_ptr_array_add (base->int_columns, g_strdup_printf ("%s\t%s", table, column));
      sqlite3_finalize (count);
    }
  sqlite3_finalize (stmt);
  if (base->int_columns->len == 0)
    fail_setup ("%s: no table with INTEGER columns and rows", base->path);
  sqlite3_prepare_v2 (db, "SELECT (SELECT page_size FROM pragma_page_size),"
                      " (SELECT page_count FROM pragma_page_count)", -1, &stmt, NULL);
  if (stmt != NULL && sqlite3_step (stmt) == SQLITE_ROW)
    {
      base->page_size = sqlite3_column_int64 (stmt, 0);
      base->n_pages = sqlite3_column_int64 (stmt, 1);
    }
  sqlite3_finalize (stmt);
  sqlite3_close (db);
}

/* Records @args into DIR/NAME.cowscope; with @raw, it becomes what a
 * killed recorder leaves (derived rows gone, not finalized); with @small,
 * its counter tracks are cut to 64 bins (the 65,536 bins of three tracks
 * are most of a small session's pages). */
static Base *
record_base (const char *dir, const char *name, const char *const *args, gboolean raw,
             gboolean small)
{
  static char *recorded[16];
  static guint n_recorded;
  const char *cli = g_getenv ("COWSCOPE_CLI");
  const char *demo = g_getenv ("COWSCOPE_DEMO");
  Base *base = g_new0 (Base, 1);
  base->name = g_strdup (name);
  base->path = g_strdup_printf ("%s/%s.cowscope", dir, name);

  /* One recording per scenario, shared by its variants. */
  g_autofree char *key = g_strjoinv (" ", (char **) args);
  g_autofree char *source = g_strdup_printf ("%s/rec-%s.cowscope", dir, args[0]);
  gboolean have = FALSE;
  for (guint i = 0; i < n_recorded; i++)
    have = have || strcmp (recorded[i], source) == 0;
  if (!have)
    {
      g_autoptr (GPtrArray) argv = g_ptr_array_new ();
      g_ptr_array_add (argv, (gpointer) cli);
      g_ptr_array_add (argv, "record");
      g_ptr_array_add (argv, "-o");
      g_ptr_array_add (argv, source);
      g_ptr_array_add (argv, "--");
      g_ptr_array_add (argv, (gpointer) demo);
      g_ptr_array_add (argv, "--quiet");
      for (const char *const *a = args + 1; *a != NULL; a++)
        g_ptr_array_add (argv, (gpointer) *a);
      g_ptr_array_add (argv, (gpointer) args[0]);
      g_ptr_array_add (argv, NULL);
      g_autoptr (GError) error = NULL;
      g_autofree char *err = NULL;
      int status = 0;
      if (!g_spawn_sync (NULL, (char **) argv->pdata, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL,
                         NULL, NULL, &err, &status, &error)
          || !g_spawn_check_wait_status (status, &error))
        fail_setup ("recording %s failed: %s\n%s", key, error->message, err ? err : "");
      if (n_recorded < G_N_ELEMENTS (recorded))
        recorded[n_recorded++] = g_strdup (source);
    }
  if (!copy_file (source, base->path))
    fail_setup ("cannot copy %s", source);
  if (small)
    raw_exec (base->path, "UPDATE timeline_counters SET n_bins = 64, bins = substr (bins, 1, 64 * 24);"
                          "VACUUM;");
  if (raw)
    {
      GString *sql = g_string_new ("BEGIN;");
      for (const char *const *t = cowscope_format_derived_tables (); *t != NULL; t++)
        if (!g_str_has_suffix (*t, "_kinds") && strcmp (*t, "ops") != 0
            && strcmp (*t, "event_types") != 0 && strcmp (*t, "dtypes") != 0
            && strcmp (*t, "eager_reasons") != 0)
          g_string_append_printf (sql, "DELETE FROM \"%s\";", *t);
      g_string_append (sql, "UPDATE meta SET value = 0 WHERE key = 'finalized'; COMMIT;");
      raw_exec (base->path, sql->str);
      g_string_free (sql, TRUE);
    }
  load_layout (base);

  /* What each command gives on the undamaged session: a refusal here is
   * a failure of the harness (or of the commands). */
  g_autofree char *work = g_strdup_printf ("%s/expect-%s", dir, name);
  g_mkdir (work, 0755);
  for (int c = 0; c < N_CMDS; c++)
    {
      g_autofree char *detail = NULL;
      char *result = NULL;
      Outcome o = run_isolated ((Command) c, base->path, work, NULL, &result, &detail);
      /* The application opens finalized sessions only (it says to run
       * `finalize` first). */
      if (o == OUT_REFUSED && c == CMD_OPEN && raw && strstr (detail, "was not finalized") != NULL)
        continue;
      if (o == OUT_FAIL || o == OUT_REFUSED)
        fail_setup ("%s on the undamaged %s: %s", cmd_names[c], name, detail);
      base->expected[c] = result;
    }
  remove_tree (work);
  printf ("# base %s: %" G_GINT64_FORMAT " pages of %" G_GINT64_FORMAT " bytes, %u b-trees\n",
          name, base->n_pages, base->page_size, base->btrees->len);
  return base;
}

static void
base_free (Base *base)
{
  g_free (base->name);
  g_free (base->path);
  for (int c = 0; c < N_CMDS; c++)
    g_free (base->expected[c]);
  for (guint i = 0; i < base->pages->len; i++)
    g_array_free (g_array_index (base->pages, GArray *, i), TRUE);
  g_array_free (base->pages, TRUE);
  g_ptr_array_free (base->btrees, TRUE);
  g_ptr_array_free (base->int_columns, TRUE);
  g_free (base);
}

/* ---- mutations -------------------------------------------------------------------- */

/* A random page of a random b-tree of @base (named in *@btree). */
static gint64
random_page (const Base *base, GRand *rand, const char **btree)
{
  guint i = (guint) g_rand_int_range (rand, 0, (gint32) base->btrees->len);
  GArray *pages = g_array_index (base->pages, GArray *, i);
  *btree = g_ptr_array_index (base->btrees, i);
  return g_array_index (pages, gint64, g_rand_int_range (rand, 0, (gint32) pages->len));
}

static gboolean
rewrite_bytes (const char *path, gint64 offset, gint64 length, int byte, GRand *rand)
{
  g_autofree char *contents = NULL;
  gsize size = 0;
  if (!g_file_get_contents (path, &contents, &size, NULL) || offset < 0
      || offset + length > (gint64) size)
    return FALSE;
  for (gint64 i = 0; i < length; i++)
    contents[offset + i] = byte >= 0 ? (char) byte
                                     : (char) (contents[offset + i]
                                               ^ (1 << g_rand_int_range (rand, 0, 8)));
  return g_file_set_contents (path, contents, size, NULL);
}

/* "table\tcolumn" of an INTEGER column of @base with rows. */
static void
random_column (const Base *base, GRand *rand, char **table, char **column)
{
  const char *pick = g_ptr_array_index (base->int_columns,
                                        g_rand_int_range (rand, 0, (gint32) base->int_columns->len));
  const char *tab = strchr (pick, '\t');
  *table = g_strndup (pick, tab - pick);
  *column = g_strdup (tab + 1);
}

/* Damages a random chunk of event_chunks (each row holds up to 4096
 * events, packed and compressed): its BLOB edited as the other packed
 * BLOBs are, or re-packed uncompressed with a body that lies (a varint
 * that never ends, a count the body cannot hold), or its row made to
 * disagree with its data (counts, seq ranges, another chunk's events:
 * seqs out of order). */
static gboolean
mutate_event_chunks (Mutant *m, GRand *rand)
{
  static const char *const edits[] = {
    "data = CAST (substr (data, 1, AT) || x'ff' || substr (data, AT + 2) AS BLOB)",
    "data = substr (data, 1, AT)",
    "data = CAST (data || randomblob (AT + 1) AS BLOB)",
    "data = zeroblob (length (data))",
    /* Raw bodies: version 1, then a count whose varint never ends. */
    "data = x'000d01ffffffffffffffffffffff01'",
    /* Raw: version 1, 60000 events, no flags, and 2 bytes of columns. */
    "data = x'000701e0d403000000'",
    /* Raw: the body's length says more than there is. */
    "data = CAST (x'00' || x'ff7f' || randomblob (AT) AS BLOB)",
    "n = n + 1 + AT",
    "n = -AT",
    "last_seq = first_seq - 1",
    "first_seq = first_seq + 1",
    "data = (SELECT data FROM event_chunks ORDER BY first_seq DESC LIMIT 1)",
    "sorted = 1, min_ts = 0, max_ts = 0",
    "types = 0",
  };
  int e = g_rand_int_range (rand, 0, G_N_ELEMENTS (edits));
  int at = g_rand_int_range (rand, 0, 64);
  g_autofree char *at_text = g_strdup_printf ("%d", at);
  g_autoptr (GString) edit_text = g_string_new (edits[e]);
  g_string_replace (edit_text, "AT", at_text, 0);
  const char *edit = edit_text->str;
  g_autofree char *sql = g_strdup_printf ("UPDATE event_chunks SET %s WHERE first_seq IN"
                                          " (SELECT first_seq FROM event_chunks"
                                          " ORDER BY random () LIMIT 1)", edit);
  if (!raw_exec (m->path, sql))
    return FALSE;
  m->what = g_strdup_printf ("event_chunks: edit %d (%s)", e, edit);
  return TRUE;
}

/* Makes mutant @m of category @cat from @base at m->path; FALSE when this
 * draw does not apply (tried again with another draw). */
static gboolean
mutate (Mutant *m, const Base *base, GRand *rand)
{
  const char *btree = NULL;
  if (m->cat != CAT_SPECIAL && !copy_file (base->path, m->path))
    fail_setup ("cannot copy %s", base->path);
  switch (m->cat)
    {
    case CAT_FLIP:
      {
        gint64 page = random_page (base, rand, &btree);
        int n = g_rand_int_range (rand, 1, 17);
        g_autoptr (GString) where = g_string_new (NULL);
        for (int i = 0; i < n; i++)
          {
            gint64 offset = (page - 1) * base->page_size + g_rand_int_range (rand, 0, (gint32) base->page_size);
            if (page == 1 && offset < 100)
              offset = 100 + g_rand_int_range (rand, 0, (gint32) base->page_size - 100);
            rewrite_bytes (m->path, offset, 1, -1, rand);
          }
        m->what = g_strdup_printf ("%d bits flipped in page %" G_GINT64_FORMAT " (%s)", n, page,
                                   btree);
        return TRUE;
      }
    case CAT_TRUNCATE:
      {
        gint64 size = base->n_pages * base->page_size;
        gint64 cut = g_rand_boolean (rand) ? g_rand_int_range (rand, 0, 200)
                                           : g_rand_int_range (rand, 1, (gint32) base->n_pages)
                                               * base->page_size
                                             - (g_rand_boolean (rand) ? 0 : g_rand_int_range (rand, 1, 100));
        cut = CLAMP (cut, 0, size - 1);
        g_autofree char *contents = NULL;
        gsize length;
        g_file_get_contents (m->path, &contents, &length, NULL);
        g_file_set_contents (m->path, contents, cut, NULL);
        m->what = g_strdup_printf ("cut to %" G_GINT64_FORMAT " of %" G_GINT64_FORMAT " bytes", cut,
                                   size);
        return TRUE;
      }
    case CAT_ZERO_PAGES:
      {
        int n = g_rand_int_range (rand, 1, 4);
        g_autoptr (GString) what = g_string_new ("zeroed");
        for (int i = 0; i < n; i++)
          {
            gint64 page = random_page (base, rand, &btree);
            if (page == 1)
              rewrite_bytes (m->path, 100, base->page_size - 100, 0, rand);
            else
              rewrite_bytes (m->path, (page - 1) * base->page_size, base->page_size, 0, rand);
            g_string_append_printf (what, " page %" G_GINT64_FORMAT " (%s)", page, btree);
          }
        m->what = g_string_free (g_steal_pointer (&what), FALSE);
        return TRUE;
      }
    case CAT_WRONG_TYPE:
    case CAT_OUT_OF_RANGE:
      {
        g_autofree char *table = NULL;
        g_autofree char *column = NULL;
        random_column (base, rand, &table, &column);
        static const char *const wrong_types[] = { "4096.5", "1e19", "'many'", "x'00ff'", "'12abc'" };
        static const char *const out_of_range[] = {
          "-1", "-9223372036854775808", "9223372036854775807", "4611686018427387905",
          "281474976710657",
        };
        const char *value = m->cat == CAT_WRONG_TYPE
                              ? wrong_types[g_rand_int_range (rand, 0, G_N_ELEMENTS (wrong_types))]
                              : out_of_range[g_rand_int_range (rand, 0, G_N_ELEMENTS (out_of_range))];
        g_autofree char *sql = g_strdup_printf (
          "UPDATE \"%s\" SET \"%s\" = %s WHERE rowid IN (SELECT rowid FROM \"%s\""
          " ORDER BY random () LIMIT 1)", table, column, value, table);
        if (!raw_exec (m->path, sql))
          {
            /* WITHOUT ROWID tables: any one row. */
            g_free (sql);
            sql = g_strdup_printf ("UPDATE \"%s\" SET \"%s\" = %s WHERE \"%s\" ="
                                   " (SELECT \"%s\" FROM \"%s\" LIMIT 1 OFFSET %d)", table,
                                   column, value, column, column, table,
                                   g_rand_int_range (rand, 0, 3));
            if (!raw_exec (m->path, sql))
              return FALSE;
          }
        m->what = g_strdup_printf ("%s.%s = %s", table, column, value);
        return TRUE;
      }
    case CAT_NULL:
      {
        g_autofree char *table = NULL;
        g_autofree char *column = NULL;
        random_column (base, rand, &table, &column);
        g_autofree char *sql = g_strdup_printf (
          "PRAGMA writable_schema = ON;"
          "UPDATE sqlite_master SET sql = replace (sql, 'NOT NULL', '') WHERE name = '%s';",
          table);
        g_autofree char *update = g_strdup_printf ("UPDATE \"%s\" SET \"%s\" = NULL WHERE rowid ="
                                                   " (SELECT min (rowid) FROM \"%s\")",
                                                   table, column, table);
        if (!raw_exec (m->path, sql))
          return FALSE;
        if (!raw_exec (m->path, update))
          {
            g_free (update);
            update = g_strdup_printf ("UPDATE \"%s\" SET \"%s\" = NULL WHERE \"%s\" ="
                                      " (SELECT \"%s\" FROM \"%s\" LIMIT 1)",
                                      table, column, column, column, table);
            if (!raw_exec (m->path, update))
              return FALSE;
          }
        m->what = g_strdup_printf ("%s.%s = NULL", table, column);
        return TRUE;
      }
    case CAT_CYCLE:
      {
        gboolean ranges = g_rand_boolean (rand);
        const char *table = ranges ? "ranges" : "tensors";
        const char *link = ranges ? "parent_id" : "base_tensor_id";
        int length = g_rand_int_range (rand, 1, 5);
        /* Rows pid, id .. id + length - 1 (added when missing), each
         * pointing at the next, the last at the first. */
        g_autofree char *sql = g_strdup_printf (
          "WITH RECURSIVE s (v) AS (SELECT 0 UNION ALL SELECT v + 1 FROM s WHERE v < %3$d)"
          " INSERT OR IGNORE INTO %1$s (pid, id)"
          " SELECT coalesce ((SELECT pid FROM %1$s LIMIT 1), 1), 900000 + v FROM s;"
          "UPDATE %1$s SET %2$s = CASE WHEN id = 900000 + %3$d THEN 900000 ELSE id + 1 END"
          " WHERE id BETWEEN 900000 AND 900000 + %3$d"
          " AND pid = coalesce ((SELECT pid FROM %1$s ORDER BY id LIMIT 1), 1);",
          table, link, length - 1);
        if (!raw_exec (m->path, sql))
          return FALSE;
        m->what = g_strdup_printf ("a %s cycle of %d", link, length);
        return TRUE;
      }
    case CAT_MISSING_TABLE:
      {
        const char *const *required = cowscope_format_required_tables (cowscope_format_schema_version ());
        guint n = g_strv_length ((char **) required);
        const char *drop = g_rand_boolean (rand) ? required[g_rand_int_range (rand, 0, (gint32) n)]
                                                 : "process_maps";
        g_autofree char *sql = g_strdup_printf ("DROP TABLE \"%s\"", drop);
        if (!raw_exec (m->path, sql))
          return FALSE;
        m->what = g_strdup_printf ("table %s dropped", drop);
        return TRUE;
      }
    case CAT_EXTRA_TABLE:
      {
        static const char *const extras[] = {
          "CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT);"
          " INSERT INTO notes (text) VALUES ('kept by hand');",
          "CREATE TABLE events_copy AS SELECT * FROM events LIMIT 10;"
          " CREATE INDEX events_copy_ts ON events_copy (ts);",
          "CREATE VIEW busy AS SELECT * FROM materializations WHERE nbytes > 1000;",
          "CREATE TABLE \"odd \"\"name\"\"\n\x1b[31m\" (x);",
          "CREATE TRIGGER meta_touch AFTER UPDATE ON meta BEGIN SELECT 1; END;",
        };
        int i = g_rand_int_range (rand, 0, G_N_ELEMENTS (extras));
        if (!raw_exec (m->path, extras[i]))
          return FALSE;
        m->what = g_strdup_printf ("extra schema object %d", i);
        return TRUE;
      }
    case CAT_NEWER_SCHEMA:
      {
        int newer = cowscope_format_schema_version () + g_rand_int_range (rand, 1, 100);
        g_autofree char *sql = g_rand_boolean (rand)
          ? g_strdup_printf ("PRAGMA user_version = %d", newer)
          : g_strdup_printf ("INSERT OR REPLACE INTO meta VALUES ('schema_version', %d)", newer);
        raw_exec (m->path, sql);
        m->what = g_strdup_printf ("schema %d", newer);
        return TRUE;
      }
    case CAT_PACKED:
      {
        static const char *const blobs[][2] = {
          { "timeline_chunks", "instants" }, { "timeline_spans", "spans" },
          { "checkpoint_states", "objects" }, { "checkpoint_replays", "events" },
          { "timeline_counters", "bins" },
        };
        /* Half the draws damage the event chunks, where the events are. */
        if (g_rand_boolean (rand))
          return mutate_event_chunks (m, rand);
        int b = g_rand_int_range (rand, 0, G_N_ELEMENTS (blobs));
        const char *table = blobs[b][0], *column = blobs[b][1];
        /* A byte changed, the BLOB cut, junk appended, all zeros. */
        int e = g_rand_int_range (rand, 0, 4);
        int at = g_rand_int_range (rand, 0, 64);
        g_autofree char *edit = NULL;
        switch (e)
          {
          case 0:
            edit = g_strdup_printf ("UPDATE %1$s SET %2$s = CAST (substr (%2$s, 1, %3$d) || x'ff'"
                                    " || substr (%2$s, %3$d + 2) AS BLOB)", table, column, at);
            break;
          case 1:
            edit = g_strdup_printf ("UPDATE %1$s SET %2$s = substr (%2$s, 1, %3$d)", table, column,
                                    at);
            break;
          case 2:
            edit = g_strdup_printf ("UPDATE %1$s SET %2$s = CAST (%2$s || randomblob (%3$d + 1)"
                                    " AS BLOB)", table, column, at);
            break;
          default:
            edit = g_strdup_printf ("UPDATE %1$s SET %2$s = zeroblob (length (%2$s))", table,
                                    column);
            break;
          }
        g_autofree char *sql = g_strdup_printf ("%s WHERE rowid IN (SELECT rowid FROM %s"
                                                " ORDER BY random () LIMIT 1)", edit, table);
        if (!raw_exec (m->path, sql))
          return FALSE;
        m->what = g_strdup_printf ("%s.%s: edit %d", table, column, e);
        return TRUE;
      }
    case CAT_SPECIAL:
    default:
      return FALSE;
    }
}

/* The special files, one per case number. */
static gboolean
make_special (Mutant *m, const Base *base, int which, const char *dir)
{
  g_unlink (m->path);
  switch (which % 10)
    {
    case 0:
      m->what = g_strdup ("a FIFO");
      return mkfifo (m->path, 0600) == 0;
    case 1:
      m->what = g_strdup ("a directory");
      return g_mkdir (m->path, 0755) == 0;
    case 2:
      g_free (m->path);
      m->path = g_strdup ("/dev/null");
      m->what = g_strdup ("a character device");
      return TRUE;
    case 3:
      {
        m->what = g_strdup ("a symbolic link loop");
        g_autofree char *other = g_strconcat (m->path, ".loop", NULL);
        g_unlink (other);
        return symlink (other, m->path) == 0 && symlink (m->path, other) == 0;
      }
    case 4:
      m->what = g_strdup ("a dangling symbolic link");
      return symlink ("/nonexistent/cowscope.session", m->path) == 0;
    case 5:
      {
        m->what = g_strdup ("a socket");
        struct sockaddr_un addr = { .sun_family = AF_UNIX };
        g_autofree char *short_path = g_strdup_printf ("%s/sock%d", dir, which);
        if (strlen (short_path) >= sizeof addr.sun_path)
          return FALSE;
        strcpy (addr.sun_path, short_path);
        int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        gboolean ok = fd >= 0 && bind (fd, (struct sockaddr *) &addr, sizeof addr) == 0;
        if (fd >= 0)
          close (fd);
        g_free (m->path);
        m->path = g_steal_pointer (&short_path);
        return ok;
      }
    case 6:
      m->what = g_strdup ("an empty file");
      return g_file_set_contents (m->path, "", 0, NULL);
    case 7:
      m->what = g_strdup ("a text file");
      return g_file_set_contents (m->path, "cowscope session\n\x1b[2J", -1, NULL);
    case 8:
      {
        /* Root reads any file whatever its mode: no mode makes a file
         * unreadable to root, so that case is skipped there. */
        if (geteuid () == 0)
          {
            m->what = g_strdup ("an unreadable file (skipped: root reads a file whatever its"
                                " mode)");
            return FALSE;
          }
        m->what = g_strdup ("an unreadable file");
        return copy_file (base->path, m->path) && g_chmod (m->path, 0) == 0;
      }
    default:
      m->what = g_strdup ("a session's first 100 bytes only");
      {
        g_autofree char *contents = NULL;
        gsize length;
        return g_file_get_contents (base->path, &contents, &length, NULL)
               && g_file_set_contents (m->path, contents, MIN (length, 100), NULL);
      }
    }
}

/* What the format's checks find in the session open in @db: damage in
 * any table (structure or values) or the file, in a table the report or
 * the application reads, in the values of what was recorded. */
typedef struct {
  gboolean any, report, open, recorded_values;
} Damage;

static Damage
find_damage (sqlite3 *db, const char *path)
{
  Damage d = { FALSE, FALSE, FALSE, FALSE };
  const char *const *derived = cowscope_format_derived_tables ();
  sqlite3_stmt *stmt = NULL;
  g_autoptr (GPtrArray) tables = g_ptr_array_new_with_free_func (g_free);
  if (sqlite3_prepare_v2 (db, "SELECT name FROM main.sqlite_master WHERE type = 'table'", -1,
                          &stmt, NULL) == SQLITE_OK)
    while (sqlite3_step (stmt) == SQLITE_ROW)
      g_ptr_array_add (tables, g_strdup ((const char *) sqlite3_column_text (stmt, 0)));
  else
    d.any = d.report = d.open = d.recorded_values = TRUE;
  sqlite3_finalize (stmt);
  for (guint i = 0; i < tables->len; i++)
    {
      const char *one[] = { tables->pdata[i], NULL };
      g_autoptr (GError) structure = NULL;
      g_autoptr (GError) values = NULL;
      gboolean s_bad = !cowscope_format_check_tables (db, path, one,
                                                      COWSCOPE_FORMAT_CHECK_STRUCTURE, &structure);
      gboolean v_bad = !cowscope_format_check_tables (db, path, one,
                                                      COWSCOPE_FORMAT_CHECK_VALUES, &values);
      d.any = d.any || s_bad || v_bad;
      if ((s_bad || v_bad) && g_strv_contains (report_tables, one[0]))
        d.report = TRUE;
      if (v_bad && g_strv_contains (open_tables, one[0]))
        d.open = TRUE;
      if (v_bad && !g_strv_contains (derived, one[0]))
        d.recorded_values = TRUE;
    }
  if (!d.any)
    {
      g_autoptr (GError) whole = NULL;
      d.any = !cowscope_format_check_file (db, path, COWSCOPE_FORMAT_CHECK_STRUCTURE, &whole);
    }
  return d;
}

/* Which commands must refuse @m: those reading a table the format finds
 * damaged, everything for a file the opener refuses.  Readers of a
 * session that was never finalized read a finalized copy of it (the
 * same copy, cowscope-format-finalize.h): what they must refuse is what
 * is damaged in that copy; `finalize` itself must refuse damaged values
 * in what was recorded, and the application opens finalized sessions
 * only. */
static void
decide_must_refuse (Mutant *m)
{
  g_autoptr (GError) error = NULL;
  CowscopeFormatInfo info;
  sqlite3 *db = cowscope_format_open (m->path, COWSCOPE_FORMAT_OPEN_READ_ONLY, &info, &error);
  for (int c = 0; c < N_CMDS; c++)
    m->must_refuse[c] = TRUE;
  if (db == NULL)
    return;
  Damage d = find_damage (db, m->path);
  sqlite3_close (db);
  m->must_refuse[CMD_FINALIZE] = d.recorded_values;
  if (!info.finalized)
    {
      g_autofree char *copy = cowscope_format_finalized_copy (m->path, NULL);
      if (copy == NULL)
        return;
      db = cowscope_format_open (copy, COWSCOPE_FORMAT_OPEN_READ_ONLY, NULL, NULL);
      if (db != NULL)
        {
          d = find_damage (db, copy);
          sqlite3_close (db);
          d.open = TRUE;
        }
      g_unlink (copy);
      if (db == NULL)
        return;
    }
  m->must_refuse[CMD_REPORT] = m->must_refuse[CMD_REPORT_JSON] = d.report;
  m->must_refuse[CMD_CHROME] = m->must_refuse[CMD_CSV] = m->must_refuse[CMD_SQLITE] = d.any;
  m->must_refuse[CMD_OPEN] = d.open;
}

/* ---- the run -------------------------------------------------------------------------- */

static void
run_case (int index, Category cat, Base *const *bases, guint n_bases, const char *dir)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (opt.seed * 1000003u + (guint32) index);
  const Base *base = bases[g_rand_int_range (rand, 0, (gint32) n_bases)];
  g_autofree char *case_dir = g_strdup_printf ("%s/case-%d", dir, index);
  g_mkdir (case_dir, 0755);
  Mutant m = { .cat = cat, .base = base };
  m.path = g_strdup_printf ("%s/mutant.cowscope", case_dir);
  gboolean made = FALSE;
  if (cat == CAT_SPECIAL)
    made = make_special (&m, base, index, case_dir);
  else
    for (int attempt = 0; attempt < 8 && !made; attempt++)
      {
        g_clear_pointer (&m.what, g_free);
        made = mutate (&m, base, rand);
      }
  if (!made)
    {
      printf ("# case %d (%s): %s not made, skipped\n", index, cat_names[cat],
              m.what != NULL ? m.what : "mutant");
      g_free (m.what);
      g_free (m.path);
      remove_tree (case_dir);
      return;
    }
  decide_must_refuse (&m);
  n_cases[cat]++;

  for (int c = 0; c < N_CMDS; c++)
    {
      g_autofree char *detail = NULL;
      Outcome o = run_isolated ((Command) c, m.path, case_dir, base->expected[c], NULL, &detail);
      if ((o == OUT_SAME || o == OUT_DIFFERENT) && m.must_refuse[c])
        {
          g_free (detail);
          detail = g_strdup ("exit 0 on a file the format finds damaged in what it reads");
          o = OUT_FAIL;
        }
      counts[cat][c][o]++;
      if (o == OUT_FAIL)
        {
          failures++;
          printf ("FAIL case %d (%s, %s, base %s): %s: %s\n", index, cat_names[cat], m.what,
                  base->name, cmd_names[c], detail);
          if (opt.keep != NULL)
            {
              g_autofree char *kept = g_strdup_printf ("%s/case-%d-%s.cowscope", opt.keep, index,
                                                       base->name);
              copy_file (m.path, kept);
            }
        }
      else if (opt.verbose)
        printf ("# case %d (%s, %s): %s: %s%s%s\n", index, cat_names[cat], m.what, cmd_names[c],
                out_names[o], o == OUT_REFUSED ? ": " : "",
                o == OUT_REFUSED ? detail : "");
    }
  if (g_str_has_prefix (m.path, case_dir))
    remove_tree (case_dir);
  else
    remove_tree (case_dir), g_unlink (m.path);
  g_free (m.what);
  g_free (m.path);
}

static void
print_table (void)
{
  printf ("\n%-22s %6s", "category", "cases");
  for (int c = 0; c < N_CMDS; c++)
    printf (" | %-15s", cmd_names[c]);
  printf ("\n%-29s", "");
  for (int c = 0; c < N_CMDS; c++)
    printf (" | %-15s", "ref/same/dif/F");
  printf ("\n");
  guint total = 0;
  for (int k = 0; k < N_CATS; k++)
    {
      total += n_cases[k];
      printf ("%-22s %6u", cat_names[k], n_cases[k]);
      for (int c = 0; c < N_CMDS; c++)
        {
          g_autofree char *cell = g_strdup_printf ("%u/%u/%u/%u", counts[k][c][OUT_REFUSED],
                                                   counts[k][c][OUT_SAME],
                                                   counts[k][c][OUT_DIFFERENT],
                                                   counts[k][c][OUT_FAIL]);
          printf (" | %-15s", cell);
        }
      printf ("\n");
    }
  printf ("%-22s %6u\n", "total", total);
  printf ("# %u cases, %u failures (refused / same result as undamaged / another consistent"
          " result / FAIL)\n", total, failures);
}

int
main (int argc, char **argv)
{
  GOptionEntry entries[] = {
    { "cases", 0, 0, G_OPTION_ARG_INT, &opt.cases, "Mutants to try (default 100)", "N" },
    { "seed", 0, 0, G_OPTION_ARG_INT, &opt.seed, "Seed (default 1)", "S" },
    { "timeout", 0, 0, G_OPTION_ARG_INT, &opt.timeout, "Seconds a command may run (60)", "S" },
    { "full", 0, 0, G_OPTION_ARG_NONE, &opt.full, "Record every scenario, full-size", NULL },
    { "keep", 0, 0, G_OPTION_ARG_FILENAME, &opt.keep, "Keep failing mutants in DIR", "DIR" },
    { "verbose", 'v', 0, G_OPTION_ARG_NONE, &opt.verbose, "Say every outcome", NULL },
    G_OPTION_ENTRY_NULL
  };
  g_autoptr (GOptionContext) context = g_option_context_new ("— hostile session files");
  g_autoptr (GError) error = NULL;
  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    fail_setup ("%s", error->message);
  if (g_getenv ("COWSCOPE_CLI") == NULL || g_getenv ("COWSCOPE_DEMO") == NULL)
    fail_setup ("run from meson or run-full.sh: COWSCOPE_CLI and COWSCOPE_DEMO are not set");
  g_autofree char *dir = g_dir_make_tmp ("cowscope-fuzz-XXXXXX", &error);
  if (dir == NULL)
    fail_setup ("%s", error->message);
  if (opt.keep != NULL)
    g_mkdir_with_parents (opt.keep, 0755);
  signal (SIGPIPE, SIG_IGN);

  static const char *const training[] = { "training", "--steps", "2", NULL };
  static const char *const simulate[] = { "simulate", NULL };
  static const char *const foreign[] = { "foreign", NULL };
  static const char *const concurrent[] = { "concurrent", "--threads", "3", "--steps", "1", NULL };
  static const char *const ipc[] = { "ipc", NULL };
  Base *bases[8];
  guint n_bases = 0;
  bases[n_bases++] = record_base (dir, "training", training, FALSE, TRUE);
  bases[n_bases++] = record_base (dir, "training-raw", training, TRUE, TRUE);
  bases[n_bases++] = record_base (dir, "simulate", simulate, FALSE, !opt.full);
  if (opt.full)
    {
      bases[n_bases++] = record_base (dir, "training-full", training, FALSE, FALSE);
      bases[n_bases++] = record_base (dir, "foreign", foreign, FALSE, TRUE);
      bases[n_bases++] = record_base (dir, "concurrent", concurrent, FALSE, TRUE);
      bases[n_bases++] = record_base (dir, "ipc", ipc, FALSE, TRUE);
      bases[n_bases++] = record_base (dir, "ipc-raw", ipc, TRUE, TRUE);
    }

  /* Categories in turn, so that every one gets its share. */
  for (int i = 0; i < opt.cases; i++)
    {
      run_case (i, (Category) (i % N_CATS), bases, n_bases, dir);
      if (!opt.verbose && (i + 1) % 50 == 0)
        printf ("# %d of %d cases, %u failures so far\n", i + 1, opt.cases, failures);
      fflush (stdout);
    }
  print_table ();
  remove_tree (dir);
  for (guint i = 0; i < n_bases; i++)
    base_free (bases[i]);
  g_free (opt.keep);
  return failures > 0 ? 1 : 0;
}
