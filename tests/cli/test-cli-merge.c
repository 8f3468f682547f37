/* test-cli-merge.c — `cowscope-cli merge`: three recorded sessions (the
 * ranks of one run) into one that keeps every event and each session's
 * counts, whose report is the sum of theirs, with times aligned and pids
 * kept apart; and bad input (an output that is an input, a session twice,
 * a merged session, a damaged or newer member, an older schema). */
#include <glib.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <sqlite3.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli-fixture.h"
#include "cowscope-cli-commands.h"
#include "cowscope-session-document.h"
#include "cowscope-timeline-lane.h"

#define N_RANKS 3
#define SECOND G_GINT64_CONSTANT (1000000000)

typedef struct {
  char *dir;
  char *ranks[N_RANKS]; /* rank-N.cowscope */
  char *merged;
} Fixture;

static const char *cli, *target;

/* ---- reading sessions --------------------------------------------------- */

static sqlite3 *
open_db (const char *path)
{
  sqlite3 *db = NULL;
  g_assert_cmpint (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  return db;
}

static gint64
query_int (const char *path, const char *sql)
{
  sqlite3 *db = open_db (path);
  sqlite3_stmt *stmt = NULL;
  gint64 value = G_MININT64;

  if (sqlite3_prepare_v2 (db, sql, -1, &stmt, NULL) != SQLITE_OK)
    g_error ("%s: %s", sql, sqlite3_errmsg (db));
  if (sqlite3_step (stmt) == SQLITE_ROW)
    value = sqlite3_column_int64 (stmt, 0);
  sqlite3_finalize (stmt);
  sqlite3_close (db);
  return value;
}

static char *
query_text (const char *path, const char *sql)
{
  sqlite3 *db = open_db (path);
  sqlite3_stmt *stmt = NULL;
  char *value = NULL;

  if (sqlite3_prepare_v2 (db, sql, -1, &stmt, NULL) != SQLITE_OK)
    g_error ("%s: %s", sql, sqlite3_errmsg (db));
  if (sqlite3_step (stmt) == SQLITE_ROW && sqlite3_column_type (stmt, 0) != SQLITE_NULL)
    value = g_strdup ((const char *) sqlite3_column_text (stmt, 0));
  sqlite3_finalize (stmt);
  sqlite3_close (db);
  return value;
}

/* The report's "metrics" object of @path. */
static JsonObject *
report_metrics (const char *path)
{
  g_autofree char *out = NULL;
  g_autoptr (JsonParser) parser = json_parser_new ();

  g_assert_cmpint (cli_fixture_run (cowscope_report_run, &out, NULL, "report", "--json", path,
                                    NULL), ==, 0);
  g_assert_true (json_parser_load_from_data (parser, out, -1, NULL));
  return json_object_ref (json_object_get_object_member (
    json_node_get_object (json_parser_get_root (parser)), "metrics"));
}

/* ---- recording the ranks ------------------------------------------------ */

static void
record_ranks (Fixture *f)
{
  GPid pids[N_RANKS];

  for (int rank = 0; rank < N_RANKS; rank++)
    {
      g_auto (GStrv) envp = g_get_environ ();
      g_autofree char *value = g_strdup_printf ("%d", rank);
      const char *argv[] = { cli, "record", "-o", "rank-%q{RANK}.cowscope", "--", target, NULL };
      g_autoptr (GError) error = NULL;

      envp = g_environ_setenv (envp, "RANK", value, TRUE);
      envp = g_environ_setenv (envp, "WORLD_SIZE", "3", TRUE);
      g_assert_true (g_spawn_async (f->dir, (char **) argv, envp,
                                    G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL
                                      | G_SPAWN_STDERR_TO_DEV_NULL,
                                    NULL, NULL, &pids[rank], &error));
      g_assert_no_error (error);
    }
  for (int rank = 0; rank < N_RANKS; rank++)
    {
      int status = 0;
      g_assert_cmpint (waitpid (pids[rank], &status, 0), ==, pids[rank]);
      g_assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 0);
      g_spawn_close_pid (pids[rank]);
    }
}

static void
fixture_set_up (Fixture *f, gconstpointer data)
{
  (void) data;
  f->dir = cli_fixture_tmpdir ();
  for (int rank = 0; rank < N_RANKS; rank++)
    {
      g_autofree char *name = g_strdup_printf ("rank-%d.cowscope", rank);
      f->ranks[rank] = g_build_filename (f->dir, name, NULL);
    }
  f->merged = g_build_filename (f->dir, "merged.cowscope", NULL);
  if (cli != NULL && target != NULL)
    record_ranks (f);
}

static void
fixture_tear_down (Fixture *f, gconstpointer data)
{
  (void) data;
  cli_fixture_remove_tree (f->dir);
  g_free (f->dir);
  for (int rank = 0; rank < N_RANKS; rank++)
    g_free (f->ranks[rank]);
  g_free (f->merged);
}

static gboolean
need_recorder (void)
{
  if (cli == NULL || target == NULL)
    {
      g_test_skip ("cowscope-cli or its target is not built");
      return FALSE;
    }
  return TRUE;
}

/* ---- tests -------------------------------------------------------------- */

/* Given out of order, merged in rank order: every event of every rank,
 * each rank's counts in its own process group, the report the sum of
 * the three, pids remapped with the originals kept, times unchanged (one
 * boot: one clock). */
static void
test_keeps_everything (Fixture *f, gconstpointer data)
{
  g_autofree char *out = NULL, *err = NULL;
  g_autoptr (JsonObject) merged = NULL;
  static const char *const summed[] = {
    "copies", "copied_bytes", "steals", "stolen_bytes", "lazy_clones", "shared_bytes",
    "eager_fallbacks", "violations", "stored_events", "produced_events", "processes", "threads",
  };
  gint64 total_events = 0;

  (void) data;
  if (!need_recorder ())
    return;
  g_assert_cmpint (cli_fixture_run (cowscope_merge_run, &out, &err, "merge", f->ranks[2],
                                    f->ranks[0], f->ranks[1], "-o", f->merged, NULL), ==, 0);
  g_assert_nonnull (strstr (out, "merged 3 sessions"));
  g_assert_cmpstr (err, ==, "");
  g_assert_cmpint (query_int (f->merged, "PRAGMA quick_check") , !=, G_MININT64);
  g_assert_cmpint (query_int (f->merged, "SELECT value FROM meta WHERE key = 'finalized'"), ==, 1);
  g_assert_cmpint (query_int (f->merged, "SELECT count (*) FROM merged_sessions"), ==, N_RANKS);

  for (int rank = 0; rank < N_RANKS; rank++)
    {
      const char *member = f->ranks[rank];
      gint64 id = rank + 1; /* ordered by rank, not as given */
      gint64 events = query_int (member, "SELECT count (*) FROM events");
      gint64 target_pid = query_int (member, "SELECT value FROM meta WHERE key = 'target_pid'");
      g_autofree char *sql = NULL, *label = NULL;

      g_assert_cmpint (events, >, 0);
      total_events += events;
      sql = g_strdup_printf ("SELECT label FROM merged_sessions WHERE id = %" G_GINT64_FORMAT, id);
      label = query_text (f->merged, sql);
      {
        g_autofree char *expected = g_strdup_printf ("rank %d", rank);
        g_assert_cmpstr (label, ==, expected);
      }
      g_clear_pointer (&sql, g_free);

      /* Every event of the member, in its group, at the same times. */
      sql = g_strdup_printf ("SELECT events FROM merged_sessions WHERE id = %" G_GINT64_FORMAT, id);
      g_assert_cmpint (query_int (f->merged, sql), ==, events);
      g_clear_pointer (&sql, g_free);
      sql = g_strdup_printf ("SELECT count (*) FROM events e JOIN merged_processes p"
                             " ON p.pid = e.pid WHERE p.session_id = %" G_GINT64_FORMAT, id);
      g_assert_cmpint (query_int (f->merged, sql), ==, events);
      g_clear_pointer (&sql, g_free);
      sql = g_strdup_printf ("SELECT sum (e.ts) FROM events e JOIN merged_processes p"
                             " ON p.pid = e.pid WHERE p.session_id = %" G_GINT64_FORMAT, id);
      g_assert_cmpint (query_int (f->merged, sql), ==,
                       query_int (member, "SELECT sum (ts) FROM events"));
      g_clear_pointer (&sql, g_free);
      sql = g_strdup_printf ("SELECT count (*) FROM materializations m JOIN merged_processes p"
                             " ON p.pid = m.pid WHERE p.session_id = %" G_GINT64_FORMAT, id);
      g_assert_cmpint (query_int (f->merged, sql), ==,
                       query_int (member, "SELECT count (*) FROM materializations"));
      g_clear_pointer (&sql, g_free);

      /* The pid remapped, the original kept. */
      sql = g_strdup_printf ("SELECT pid FROM merged_processes WHERE session_id = %" G_GINT64_FORMAT
                             " AND original_pid = %" G_GINT64_FORMAT, id, target_pid);
      g_assert_cmpint (query_int (f->merged, sql), ==, (id << 22) | target_pid);
      g_clear_pointer (&sql, g_free);
      sql = g_strdup_printf ("SELECT clock_offset_ns FROM merged_sessions WHERE id = %"
                             G_GINT64_FORMAT, id);
      g_assert_cmpint (query_int (f->merged, sql), ==, 0);
    }
  g_assert_cmpint (query_int (f->merged, "SELECT count (*) FROM events"), ==, total_events);
  g_assert_cmpint (query_int (f->merged, "SELECT count (DISTINCT pid) FROM processes"), ==,
                   N_RANKS);

  /* The report of the merged session is the sum of the three. */
  merged = report_metrics (f->merged);
  for (gsize i = 0; i < G_N_ELEMENTS (summed); i++)
    {
      gint64 sum = 0;
      for (int rank = 0; rank < N_RANKS; rank++)
        {
          g_autoptr (JsonObject) metrics = report_metrics (f->ranks[rank]);
          sum += json_object_get_int_member (metrics, summed[i]);
        }
      if (json_object_get_int_member (merged, summed[i]) != sum)
        g_error ("%s: merged %" G_GINT64_FORMAT ", sum %" G_GINT64_FORMAT, summed[i],
                 json_object_get_int_member (merged, summed[i]), sum);
    }
  g_assert_cmpint (json_object_get_int_member (merged, "copies"), >, 0);

  /* The report lists each process under its member, with its own pid. */
  {
    g_autofree char *text = NULL;
    g_assert_cmpint (cli_fixture_run (cowscope_report_run, &text, NULL, "report", f->merged,
                                      NULL), ==, 0);
    for (int rank = 0; rank < N_RANKS; rank++)
      {
        gint64 pid = query_int (f->ranks[rank], "SELECT value FROM meta WHERE key = 'target_pid'");
        g_autofree char *line = g_strdup_printf ("  rank %d: pid %" G_GINT64_FORMAT " (%"
                                                 G_GINT64_FORMAT " here) ", rank, pid,
                                                 ((gint64) (rank + 1) << 22) | pid);
        if (strstr (text, line) == NULL)
          g_error ("no '%s' in the report:\n%s", line, text);
      }
  }

  /* Call sites keep their symbols. */
  {
    g_autofree char *site = query_text (f->merged, "SELECT call_site FROM call_sites_by_bytes"
                                                   " LIMIT 1");
    g_assert_nonnull (site);
    g_assert_nonnull (strstr (site, "update_weights"));
  }
}

/* The application's model of a merged session: each process knows its
 * member, and each rank's process lane heads its lanes, labelled. */
static void
test_document_groups (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (CowscopeSessionDocument) document = NULL;
  GListModel *lanes;
  guint process_lanes = 0;

  (void) data;
  if (!need_recorder ())
    return;
  g_assert_cmpint (cli_fixture_run (cowscope_merge_run, NULL, NULL, "merge", f->ranks[0],
                                    f->ranks[1], f->ranks[2], "-o", f->merged, NULL), ==, 0);
  document = cowscope_session_document_load (f->merged, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (cowscope_session_document_get_n_processes (document), ==, N_RANKS);
  for (guint i = 0; i < N_RANKS; i++)
    {
      const CowscopeProcessInfo *p = cowscope_session_document_get_process (document, i);
      g_autofree char *label = g_strdup_printf ("rank %u", i);
      const char *sql = "SELECT value FROM meta WHERE key = 'target_pid'";
      g_assert_cmpstr (p->group, ==, label);
      g_assert_cmpuint (p->original_pid, ==, (guint32) query_int (f->ranks[i], sql));
      g_assert_cmpuint (p->pid, ==, ((i + 1) << 22) | p->original_pid);
    }
  lanes = cowscope_session_document_get_lanes (document);
  for (guint i = 0; i < g_list_model_get_n_items (lanes); i++)
    {
      g_autoptr (CowscopeTimelineLane) lane = g_list_model_get_item (lanes, i);
      if (cowscope_timeline_lane_get_kind (lane) == COWSCOPE_LANE_PROCESS)
        {
          g_autofree char *expected = g_strdup_printf ("rank %u · diff-target-before",
                                                       process_lanes);
          g_assert_cmpstr (cowscope_timeline_lane_get_title (lane), ==, expected);
          process_lanes++;
        }
    }
  g_assert_cmpuint (process_lanes, ==, N_RANKS);

  /* A recorded session's processes belong to no member. */
  g_clear_object (&document);
  document = cowscope_session_document_load (f->ranks[0], NULL, &error);
  g_assert_no_error (error);
  g_assert_null (cowscope_session_document_get_process (document, 0)->group);
  g_assert_cmpuint (cowscope_session_document_get_process (document, 0)->original_pid, ==,
                    cowscope_session_document_get_process (document, 0)->pid);
}

/* A member from another machine: moved onto the first member's clock by
 * the difference of their clock pairs, and labelled with its host. */
static void
test_aligns_clocks (Fixture *f, gconstpointer data)
{
  gint64 offset0, offset2, expected;

  (void) data;
  if (!need_recorder ())
    return;
  /* Rank 2 "ran elsewhere": another boot, a wall clock 5 s further from
   * its monotonic clock. */
  cli_fixture_exec (f->ranks[2],
                    "UPDATE meta SET value = 'another-boot' WHERE key = 'boot_id';"
                    "UPDATE meta SET value = 'node2' WHERE key = 'hostname';"
                    "UPDATE meta SET value = value + 5000000000 WHERE key = 'clock_realtime_ns'");
  offset0 = query_int (f->ranks[0], "SELECT (SELECT value FROM meta WHERE key = 'clock_realtime_ns')"
                                    " - (SELECT value FROM meta WHERE key = 'clock_monotonic_ns')");
  offset2 = query_int (f->ranks[2], "SELECT (SELECT value FROM meta WHERE key = 'clock_realtime_ns')"
                                    " - (SELECT value FROM meta WHERE key = 'clock_monotonic_ns')");
  expected = offset2 - offset0;
  g_assert_cmpint (ABS (expected - 5 * SECOND), <, SECOND);

  g_assert_cmpint (cli_fixture_run (cowscope_merge_run, NULL, NULL, "merge", f->ranks[0],
                                    f->ranks[1], f->ranks[2], "-o", f->merged, NULL), ==, 0);
  g_assert_cmpint (query_int (f->merged, "SELECT clock_offset_ns FROM merged_sessions"
                                         " WHERE id = 3"), ==, expected);
  {
    g_autofree char *alignment = query_text (f->merged, "SELECT clock_alignment FROM"
                                                        " merged_sessions WHERE id = 3");
    g_autofree char *same = query_text (f->merged, "SELECT clock_alignment FROM"
                                                   " merged_sessions WHERE id = 2");
    g_autofree char *label = query_text (f->merged, "SELECT label FROM merged_sessions"
                                                    " WHERE id = 3");
    g_assert_cmpstr (alignment, ==, "wall clock");
    g_assert_cmpstr (same, ==, "same boot");
    g_assert_cmpstr (label, ==, "rank 2 (node2)");
  }
  /* Each event of rank 2 moved by exactly the offset; the others not. */
  g_assert_cmpint (query_int (f->merged, "SELECT min (e.ts) FROM events e JOIN merged_processes p"
                                         " ON p.pid = e.pid WHERE p.session_id = 3"),
                   ==, query_int (f->ranks[2], "SELECT min (ts) FROM events") + expected);
  g_assert_cmpint (query_int (f->merged, "SELECT max (e.ts) FROM events e JOIN merged_processes p"
                                         " ON p.pid = e.pid WHERE p.session_id = 3"),
                   ==, query_int (f->ranks[2], "SELECT max (ts) FROM events") + expected);
  g_assert_cmpint (query_int (f->merged, "SELECT min (e.ts) FROM events e JOIN merged_processes p"
                                         " ON p.pid = e.pid WHERE p.session_id = 1"),
                   ==, query_int (f->ranks[0], "SELECT min (ts) FROM events"));
  /* The merged session reads on the first member's clock. */
  g_assert_cmpint (query_int (f->merged, "SELECT value FROM meta WHERE key = 'clock_monotonic_ns'"),
                   ==, query_int (f->ranks[0], "SELECT value FROM meta"
                                               " WHERE key = 'clock_monotonic_ns'"));
}

/* --label names the sessions in the order given. */
static void
test_labels (Fixture *f, gconstpointer data)
{
  g_autofree char *err = NULL;

  (void) data;
  if (!need_recorder ())
    return;
  g_assert_cmpint (cli_fixture_run (cowscope_merge_run, NULL, NULL, "merge", "--label", "second",
                                    "--label", "first", "--label", "third", f->ranks[1],
                                    f->ranks[0], f->ranks[2], "-o", f->merged, NULL), ==, 0);
  {
    g_autofree char *labels = query_text (f->merged, "SELECT group_concat (label, ',') FROM"
                                                     " (SELECT label FROM merged_sessions"
                                                     " ORDER BY id)");
    g_assert_cmpstr (labels, ==, "first,second,third");
  }
  g_assert_cmpint (cli_fixture_run (cowscope_merge_run, NULL, &err, "merge", "--label", "one",
                                    f->ranks[0], f->ranks[1], "-o", f->merged, "--force", NULL),
                   ==, 2);
  g_assert_nonnull (strstr (err, "1 labels for 2 sessions"));
}

/* @path's bytes, to see that a refusal left a file as it was. */
static GBytes *
contents (const char *path)
{
  char *data = NULL;
  gsize length = 0;
  g_assert_true (g_file_get_contents (path, &data, &length, NULL));
  return g_bytes_new_take (data, length);
}

/* Runs merge with @args (NULL-terminated after it), expects @status and
 * @fragment in its messages, and no merged session left behind. */
static void
assert_refused (Fixture *f, int status, const char *fragment, ...)
{
  const char *args[9] = { NULL }; /* at most 8, NULL after the last */
  g_autofree char *out = NULL, *err = NULL;
  va_list ap;
  const char *arg;
  guint n = 0;
  int got;

  va_start (ap, fragment);
  while ((arg = va_arg (ap, const char *)) != NULL)
    {
      g_assert_cmpuint (n, <, 8);
      args[n++] = arg;
    }
  va_end (ap);
  got = cli_fixture_run (cowscope_merge_run, &out, &err, "merge", args[0], args[1], args[2],
                         args[3], args[4], args[5], args[6], args[7], NULL);
  if (got != status || strstr (err, fragment) == NULL)
    g_error ("merge: status %d (expected %d), messages: %s (expected '%s')", got, status, err,
             fragment);
  g_assert_cmpstr (out, ==, "");
  g_assert_false (g_file_test (f->merged, G_FILE_TEST_EXISTS));
}

static void
test_bad_input (Fixture *f, gconstpointer data)
{
  g_autofree char *copy = NULL, *damaged = NULL, *link = NULL, *newer = NULL;
  g_autoptr (GBytes) before = NULL, after = NULL;
  g_autofree char *err = NULL;
  g_autofree char *text = NULL;
  gsize length = 0;

  (void) data;
  if (!need_recorder ())
    return;
  copy = g_build_filename (f->dir, "copy.cowscope", NULL);
  damaged = g_build_filename (f->dir, "damaged.cowscope", NULL);
  link = g_build_filename (f->dir, "link.cowscope", NULL);
  newer = g_build_filename (f->dir, "newer.cowscope", NULL);

  /* Usage: no output, one session. */
  assert_refused (f, 2, "no output given", f->ranks[0], f->ranks[1], NULL);
  assert_refused (f, 2, "expected at least 2 session files", f->ranks[0], "-o", f->merged, NULL);

  /* The same session twice: by name, through a link, as a copy. */
  assert_refused (f, 2, "are the same file", f->ranks[0], f->ranks[0], "-o", f->merged, NULL);
  g_assert_cmpint (symlink (f->ranks[1], link), ==, 0);
  assert_refused (f, 2, "are the same file", f->ranks[1], link, "-o", f->merged, NULL);
  g_assert_true (g_file_get_contents (f->ranks[2], &text, &length, NULL));
  g_assert_true (g_file_set_contents (copy, text, length, NULL));
  assert_refused (f, 2, "copies of one recording", f->ranks[2], f->ranks[0], copy, "-o",
                  f->merged, NULL);

  /* A damaged member (cut in half) and a newer one: named, nothing
   * written. */
  g_assert_true (g_file_set_contents (damaged, text, length / 2, NULL));
  assert_refused (f, 1, "damaged.cowscope", f->ranks[0], damaged, "-o", f->merged, NULL);
  /* A member whose event chunk is damaged (sound pages): named by its
   * row, nothing written. */
  {
    g_autofree char *chunk = g_build_filename (f->dir, "chunk.cowscope", NULL);
    g_assert_true (g_file_set_contents (chunk, text, length, NULL));
    cli_fixture_exec (chunk, "UPDATE event_chunks SET n = n + 1");
    assert_refused (f, 1, "chunk.cowscope is damaged: table 'event_chunks', row first_seq ",
                    f->ranks[0], chunk, "-o", f->merged, NULL);
  }
  g_assert_true (g_file_set_contents (newer, text, length, NULL));
  cli_fixture_exec (newer, "PRAGMA user_version = 99");
  assert_refused (f, 1, "newer Cowscope", f->ranks[0], newer, "-o", f->merged, NULL);
  g_clear_pointer (&err, g_free);
  {
    g_autofree char *out = NULL;
    cli_fixture_run (cowscope_merge_run, &out, &err, "merge", f->ranks[0], newer, "-o",
                     f->merged, NULL);
    g_assert_nonnull (strstr (err, "session 2 of 2"));
  }

  /* The output is one of the inputs: refused even with --force, the
   * input untouched. */
  before = contents (f->ranks[1]);
  {
    g_autofree char *out = NULL;
    g_clear_pointer (&err, g_free);
    g_assert_cmpint (cli_fixture_run (cowscope_merge_run, &out, &err, "merge", f->ranks[0],
                                      f->ranks[1], "-o", f->ranks[1], "--force", NULL), ==, 2);
    g_assert_nonnull (strstr (err, "is the session"));
  }
  after = contents (f->ranks[1]);
  g_assert_true (g_bytes_equal (before, after));

  /* A merged session as a member. */
  g_assert_cmpint (cli_fixture_run (cowscope_merge_run, NULL, NULL, "merge", f->ranks[0],
                                    f->ranks[1], "-o", f->merged, NULL), ==, 0);
  {
    g_autofree char *again = g_build_filename (f->dir, "again.cowscope", NULL);
    g_autofree char *out = NULL;
    g_clear_pointer (&err, g_free);
    g_assert_cmpint (cli_fixture_run (cowscope_merge_run, &out, &err, "merge", f->merged,
                                      f->ranks[2], "-o", again, NULL), ==, 2);
    g_assert_nonnull (strstr (err, "is already a merged session (2 members)"));
    g_assert_false (g_file_test (again, G_FILE_TEST_EXISTS));

    /* An existing output is kept without --force. */
    g_clear_pointer (&before, g_bytes_unref);
    before = contents (f->merged);
    g_clear_pointer (&err, g_free);
    g_assert_cmpint (cli_fixture_run (cowscope_merge_run, NULL, &err, "merge", f->ranks[0],
                                      f->ranks[2], "-o", f->merged, NULL), ==, 1);
    g_assert_nonnull (strstr (err, "already exists"));
    g_clear_pointer (&after, g_bytes_unref);
    after = contents (f->merged);
    g_assert_true (g_bytes_equal (before, after));
  }
}

/* A member of an older schema (2: without thread_events and the other
 * tables version 3 added) merges with a current one. */
static void
test_older_schema (Fixture *f, gconstpointer data)
{
  (void) data;
  if (!need_recorder ())
    return;
  cli_fixture_exec (f->ranks[1],
                    "DROP TABLE thread_events; DROP TABLE process_identity; DROP TABLE peer_faults;"
                    "DROP TABLE merged_sessions; DROP TABLE merged_processes;"
                    "DELETE FROM meta WHERE key IN ('clock_realtime_ns', 'clock_monotonic_ns',"
                    " 'boot_id', 'events_produced', 'events_stored', 'events_dropped');"
                    "PRAGMA user_version = 2;"
                    "UPDATE meta SET value = 2 WHERE key = 'schema_version'");
  g_assert_cmpint (cli_fixture_run (cowscope_merge_run, NULL, NULL, "merge", f->ranks[0],
                                    f->ranks[1], "-o", f->merged, NULL), ==, 0);
  g_assert_cmpint (query_int (f->merged, "SELECT count (*) FROM events"), ==,
                   query_int (f->ranks[0], "SELECT count (*) FROM events")
                     + query_int (f->ranks[1], "SELECT count (*) FROM events"));
  {
    g_autofree char *alignment = query_text (f->merged, "SELECT clock_alignment FROM"
                                                        " merged_sessions WHERE id = 2");
    g_assert_cmpstr (alignment, ==, "none");
  }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  cli = g_getenv ("COWSCOPE_CLI");
  target = g_getenv ("COWSCOPE_DIFF_TARGET_BEFORE");
  g_unsetenv ("RANK");
  g_unsetenv ("LOCAL_RANK");
  g_unsetenv ("WORLD_SIZE");

#define ADD(path, func) g_test_add (path, Fixture, NULL, fixture_set_up, func, fixture_tear_down)
  ADD ("/cli/merge/keeps-everything", test_keeps_everything);
  ADD ("/cli/merge/document-groups", test_document_groups);
  ADD ("/cli/merge/aligns-clocks", test_aligns_clocks);
  ADD ("/cli/merge/labels", test_labels);
  ADD ("/cli/merge/bad-input", test_bad_input);
  ADD ("/cli/merge/older-schema", test_older_schema);
#undef ADD
  return g_test_run ();
}
