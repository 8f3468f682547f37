/* test-cli-report.c — `cowscope-cli report`: numbers, text, budgets, errors. */
#include <json-glib/json-glib.h>
#include <glib/gstdio.h>
#include <string.h>

#include "cli-fixture.h"
#include "cowscope-budget.h"
#include "cowscope-cli-commands.h"
#include "cowscope-report.h"

typedef struct {
  char *dir;
  char *path;
} Fixture;

static void
fixture_set_up (Fixture *f, gconstpointer data)
{
  f->dir = cli_fixture_tmpdir ();
  f->path = g_build_filename (f->dir, "s.cowscope", NULL);
  if (data != NULL)
    cli_fixture_write_session (f->path, GPOINTER_TO_INT (data) == 1, 0);
}

static void
fixture_tear_down (Fixture *f, gconstpointer data)
{
  (void) data;
  cli_fixture_remove_tree (f->dir);
  g_free (f->dir);
  g_free (f->path);
}

#define FINALIZED GINT_TO_POINTER (1)
#define NOT_FINALIZED GINT_TO_POINTER (2)

/* Runs `report --json FILE` and parses its output. */
static JsonObject *
report_json (const char *path)
{
  g_autofree char *out = NULL;
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GError) error = NULL;

  g_assert_cmpint (cli_fixture_run (cowscope_report_run, &out, NULL, "report",
                                    "--json", path, NULL), ==, 0);
  json_parser_load_from_data (parser, out, -1, &error);
  g_assert_no_error (error);
  return json_object_ref (json_node_get_object (json_parser_get_root (parser)));
}

/* The workload's numbers, whichever way they were derived. */
static void
assert_workload_metrics (JsonObject *report)
{
  JsonObject *m = json_object_get_object_member (report, "metrics");

  g_assert_cmpint (json_object_get_int_member (m, "lazy_clones"), ==, 3);
  g_assert_cmpint (json_object_get_int_member (m, "shared_bytes"), ==, 12 * MiB);
  g_assert_cmpint (json_object_get_int_member (m, "eager_fallbacks"), ==, 1);
  g_assert_cmpint (json_object_get_int_member (m, "eager_bytes"), ==, MiB);
  g_assert_cmpint (json_object_get_int_member (m, "copies"), ==, 2);
  g_assert_cmpint (json_object_get_int_member (m, "copied_bytes"), ==, 8 * MiB);
  g_assert_cmpint (json_object_get_int_member (m, "steals"), ==, 1);
  g_assert_cmpint (json_object_get_int_member (m, "stolen_bytes"), ==, 4 * MiB);
  g_assert_cmpint (json_object_get_int_member (m, "saved_bytes"), ==, 4 * MiB);
  g_assert_cmpint (json_object_get_int_member (m, "lock_wait_ns"), ==, 500);
  g_assert_cmpint (json_object_get_int_member (m, "violations"), ==, 1);
  g_assert_cmpint (json_object_get_int_member (m, "cuda_copies"), ==, 1);
  g_assert_cmpint (json_object_get_int_member (m, "cuda_copy_bytes"), ==, 4 * MiB);
  g_assert_cmpint (json_object_get_int_member (m, "cuda_kernels"), ==, 1);
  g_assert_cmpint (json_object_get_int_member (m, "processes"), ==, 1);
  g_assert_cmpint (json_object_get_int_member (m, "threads"), ==, 2);
  g_assert_cmpint (json_object_get_int_member (m, "dropped_events"), ==, 0);
  g_assert_cmpint (json_object_get_int_member (m, "stored_events"), ==, 31);
  g_assert_cmpint (json_object_get_int_member (m, "duration_ns"), ==, 10000);

  /* Every documented metric is in the object, and nothing else. */
  for (const char *const *name = cowscope_budget_metrics (); *name != NULL; name++)
    g_assert_true (json_object_has_member (m, *name));
  g_assert_cmpuint (json_object_get_size (m), ==,
                    g_strv_length ((char **) cowscope_budget_metrics ()));
}

static void
test_json_numbers (Fixture *f, gconstpointer data)
{
  g_autoptr (JsonObject) report = report_json (f->path);
  JsonObject *target = json_object_get_object_member (report, "target");
  JsonObject *cuda = json_object_get_object_member (report, "cuda");
  JsonArray *ops = json_object_get_array_member (report, "top_ops");
  JsonArray *sites = json_object_get_array_member (report, "top_call_sites");
  JsonArray *violations = json_object_get_array_member (report, "violations");
  JsonArray *eager = json_object_get_array_member (report, "eager_fallbacks");
  JsonObject *o, *s, *v;

  (void) data;
  g_assert_cmpstr (json_object_get_string_member (report, "format"), ==, "cowscope-report");
  assert_workload_metrics (report);
  g_assert_cmpstr (json_object_get_string_member (target, "command"), ==, "train --epochs 1");
  g_assert_cmpstr (json_object_get_string_member (target, "end"), ==, "exited");
  g_assert_cmpint (json_object_get_int_member (target, "exit_status"), ==, 0);
  g_assert_true (json_object_get_null_member (target, "exit_signal"));

  g_assert_cmpuint (json_array_get_length (eager), ==, 1);
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (eager, 0), "reason"),
                   ==, "foreign_data_ptr");

  /* add_: one copy and one steal; mul_: one copy. */
  g_assert_cmpuint (json_array_get_length (ops), ==, 2);
  o = json_array_get_object_element (ops, 0);
  g_assert_cmpstr (json_object_get_string_member (o, "op"), ==, "add_");
  g_assert_cmpint (json_object_get_int_member (o, "copied_bytes"), ==, 4 * MiB);
  g_assert_cmpint (json_object_get_int_member (o, "steals"), ==, 1);
  /* Each operation names its largest materialization, for a viewer. */
  o = json_array_get_object_element (ops, 1);
  g_assert_cmpstr (json_object_get_string_member (o, "op"), ==, "mul_");
  g_assert_cmpint (json_object_get_int_member (o, "largest_seq"), ==, 17);

  /* Both copies happened at train.c:88, under Cowscope's own frame. */
  g_assert_cmpuint (json_array_get_length (sites), ==, 1);
  s = json_array_get_object_element (sites, 0);
  g_assert_cmpstr (json_object_get_string_member (s, "function"), ==, "update_weights");
  g_assert_cmpstr (json_object_get_string_member (s, "file"), ==, "/src/train.c");
  g_assert_cmpint (json_object_get_int_member (s, "line"), ==, 88);
  g_assert_cmpint (json_object_get_int_member (s, "bytes"), ==, 8 * MiB);
  g_assert_cmpint (json_object_get_int_member (s, "copies"), ==, 2);
  g_assert_cmpstr (json_object_get_string_member (s, "text"), ==,
                   "8.0 MiB copied at train.c:88 in update_weights()");

  g_assert_cmpuint (json_array_get_length (violations), ==, 1);
  v = json_array_get_object_element (violations, 0);
  g_assert_cmpstr (json_object_get_string_member (v, "writer_name"), ==, "weights");
  g_assert_cmpstr (json_object_get_string_member (v, "accessor_name"), ==, "snapshot");
  g_assert_cmpstr (json_object_get_string_member (v, "access"), ==, "read");
  /* An unsymbolized stack falls back to address and module. */
  g_assert_cmpstr (json_object_get_string_member (v, "location"), ==, "0xdeadbeef in train");

  g_assert_cmpstr (json_object_get_string_member (cuda, "gpu_tracing"), ==, "available");
  o = json_array_get_object_element (json_object_get_array_member (cuda, "copies_by_kind"), 0);
  g_assert_cmpstr (json_object_get_string_member (o, "kind"), ==, "HtoD");
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (report, "warnings")), ==, 0);
}

static void
test_text_report (Fixture *f, gconstpointer data)
{
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;

  (void) data;
  g_assert_cmpint (cli_fixture_run (cowscope_report_run, &out, &err, "report", f->path, NULL), ==, 0);
  g_assert_cmpstr (err, ==, "");
  g_assert_nonnull (strstr (out, "8.0 MiB copied at train.c:88 in update_weights() (2 copies)"));
  g_assert_nonnull (strstr (out, "Target:     train --epochs 1 — exited with status 0"));

  /* A build without debug information: the frame has a function but no
   * file, and the call site reads "in f()", not "at  in f()". */
  cli_fixture_exec (f->path, "UPDATE frames SET file = NULL, line = NULL WHERE id = 2");
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (cli_fixture_run (cowscope_report_run, &out, &err, "report", f->path, NULL), ==, 0);
  g_assert_nonnull (strstr (out, "8.0 MiB copied in update_weights() (2 copies)"));
  g_assert_null (strstr (out, "at in"));
  g_assert_nonnull (strstr (out, "3 lazy clones sharing 12.0 MiB"));
  g_assert_nonnull (strstr (out, "1 eager fallback copying 1.0 MiB (foreign_data_ptr: 1)"));
  g_assert_nonnull (strstr (out, "2 copies, 8.0 MiB copied"));
  g_assert_nonnull (strstr (out, "1 steal, 4.0 MiB taken over"));
  g_assert_nonnull (strstr (out, "Saved by lazy copies: 4.0 MiB"));
  g_assert_nonnull (strstr (out, "Waiting for locks: 500 ns"));
  g_assert_nonnull (strstr (out, "\"snapshot\" after a write through tensor 2 \"weights\""));
  g_assert_nonnull (strstr (out, "GPU tracing: available"));
  g_assert_nonnull (strstr (out, "1 copy, 4.0 MiB: HtoD 1 (4.0 MiB)"));
  g_assert_nonnull (strstr (out, "31 produced, 31 stored, 0 dropped"));
  g_assert_null (strstr (out, "DROPPED"));
}

static void
test_dropped_is_loud (Fixture *f, gconstpointer data)
{
  g_autofree char *out = NULL;
  g_autoptr (JsonObject) report = NULL;

  (void) data;
  cli_fixture_exec (f->path, "UPDATE threads SET produced = produced + 5, dropped = 5 WHERE tid = 101");
  g_assert_cmpint (cli_fixture_run (cowscope_report_run, &out, NULL, "report", f->path, NULL), ==, 0);
  g_assert_nonnull (strstr (out, "WARNING: 5 events were DROPPED"));
  g_assert_nonnull (strstr (out, "36 produced, 31 stored, 5 dropped"));
  report = report_json (f->path);
  g_assert_cmpint (json_object_get_int_member (json_object_get_object_member (report, "metrics"),
                                               "dropped_events"), ==, 5);
  g_assert_cmpint (cli_fixture_run (cowscope_report_run, NULL, NULL, "report",
                                    "--fail-if", "dropped_events > 0", f->path, NULL), ==, 3);
}

static void
test_not_finalized (Fixture *f, gconstpointer data)
{
  g_autofree char *err = NULL;
  g_autofree char *out = NULL;
  g_autoptr (JsonObject) report = report_json (f->path);
  JsonArray *sites = json_object_get_array_member (report, "top_call_sites");

  (void) data;
  /* The same numbers, read from the raw events. */
  assert_workload_metrics (report);
  g_assert_false (json_object_get_boolean_member (json_object_get_object_member (report, "session"),
                                                  "finalized"));
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (sites, 0), "text"),
                   ==, "8.0 MiB copied at train.c:88 in update_weights()");
  g_assert_cmpint (cli_fixture_run (cowscope_report_run, &out, &err, "report", f->path, NULL), ==, 0);
  g_assert_nonnull (strstr (err, "was not finalized"));
  g_assert_nonnull (strstr (err, "cowscope-cli finalize"));
  g_assert_nonnull (strstr (out, "was not finalized"));
}

static void
test_budgets (Fixture *f, gconstpointer data)
{
  g_autofree char *err = NULL;

  (void) data;
  g_assert_cmpint (cli_fixture_run (cowscope_report_run, NULL, &err, "report",
                                    "--fail-if", "copied_bytes > 8Mi",
                                    "--fail-if", "violations >= 2",
                                    "--fail-if", "steals != 1", f->path, NULL), ==, 0);
  g_assert_cmpstr (err, ==, "");
  g_clear_pointer (&err, g_free);

  g_assert_cmpint (cli_fixture_run (cowscope_report_run, NULL, &err, "report", "--json",
                                    "--fail-if", "copied_bytes > 1Mi",
                                    "--fail-if", "lazy_clones < 5",
                                    "--fail-if", "cuda_copies == 0", f->path, NULL), ==, 3);
  g_assert_nonnull (strstr (err, "budget exceeded: copied_bytes = 8388608 > 1048576\n"));
  g_assert_nonnull (strstr (err, "budget exceeded: lazy_clones = 3 < 5\n"));
  g_assert_null (strstr (err, "cuda_copies"));
}

static void
test_budget_parse (void)
{
  static const struct { const char *text; const char *metric; CowscopeBudgetOp op; gint64 limit; } good[] = {
    { "copied_bytes > 1048576", "copied_bytes", COWSCOPE_BUDGET_GT, 1048576 },
    { "  copied_bytes>64Mi ", "copied_bytes", COWSCOPE_BUDGET_GT, 64 * MiB },
    { "copied_bytes >= 2GiB", "copied_bytes", COWSCOPE_BUDGET_GE, G_GINT64_CONSTANT (2) << 30 },
    { "lock_wait_ns < 1.5M", "lock_wait_ns", COWSCOPE_BUDGET_LT, 1500000 },
    { "violations <= 0", "violations", COWSCOPE_BUDGET_LE, 0 },
    { "steals == 3K", "steals", COWSCOPE_BUDGET_EQ, 3000 },
    { "saved_bytes != -4Ki", "saved_bytes", COWSCOPE_BUDGET_NE, -4096 },
    { "processes > 2G", "processes", COWSCOPE_BUDGET_GT, 2000000000 },
  };
  static const struct { const char *text; const char *fragment; } bad[] = {
    { "", "empty" },
    { "   ", "empty" },
    { "copied_bytes", "expected an operator" },
    { "copied_bytes 5", "expected an operator" },
    { "copied_bytes >", "expected a number" },
    { "copied_bytes > lots", "expected a number" },
    { "copied_bytes >> 5", "expected a number" },
    { "copied_bytes > 5Q", "unknown unit 'Q'" },
    { "copied_bytes > 5 6", "unknown unit '6'" },
    { "copied_bytes > 0x10", "expected a number" },
    { "copied_bytes > 1e999", "expected a number" },
    { "copied_bytes > 99999999999Ti", "out of range" },
    { "nonsense > 1", "unknown metric 'nonsense'" },
    { "> 1", "expected a metric name" },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (good); i++)
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (CowscopeBudget) budget = cowscope_budget_parse (good[i].text, &error);
      g_assert_no_error (error);
      g_assert_cmpstr (budget->metric, ==, good[i].metric);
      g_assert_cmpint (budget->op, ==, good[i].op);
      g_assert_cmpint (budget->limit, ==, good[i].limit);
    }
  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (CowscopeBudget) budget = cowscope_budget_parse (bad[i].text, &error);
      g_assert_null (budget);
      g_assert_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE);
      g_test_message ("%s → %s", bad[i].text, error->message);
      g_assert_nonnull (strstr (error->message, bad[i].fragment));
    }
}

static void
test_bad_fail_if_is_usage (Fixture *f, gconstpointer data)
{
  g_autofree char *err = NULL;
  g_autofree char *out = NULL;

  (void) data;
  g_assert_cmpint (cli_fixture_run (cowscope_report_run, &out, &err, "report",
                                    "--fail-if", "copied_bytes >> 5", f->path, NULL), ==, 2);
  g_assert_nonnull (strstr (err, "expected a number"));
  g_assert_cmpstr (out, ==, "");
}

static void
test_usage_errors (Fixture *f, gconstpointer data)
{
  g_autofree char *err = NULL;

  (void) data;
  g_assert_cmpint (cli_fixture_run (cowscope_report_run, NULL, &err, "report", NULL), ==, 2);
  g_assert_nonnull (strstr (err, "no session file given"));
  g_assert_cmpint (cli_fixture_run (cowscope_report_run, NULL, NULL, "report", f->path, f->path, NULL), ==, 2);
  g_assert_cmpint (cli_fixture_run (cowscope_report_run, NULL, NULL, "report", "--bogus", f->path, NULL), ==, 2);
  g_assert_cmpint (cli_fixture_run (cowscope_report_run, NULL, NULL, "report", "--top", "x", f->path, NULL), ==, 2);
  g_assert_cmpint (cli_fixture_run (cowscope_report_run, NULL, NULL, "report", "--help", NULL), ==, 0);
}

/* A bad input: exit 1, one line on stderr naming the file, nothing on stdout. */
static void
assert_bad_input (const char *path, const char *fragment)
{
  g_autofree char *err = NULL;
  g_autofree char *out = NULL;

  g_assert_cmpint (cli_fixture_run (cowscope_report_run, &out, &err, "report", path, NULL), ==, 1);
  g_assert_cmpstr (out, ==, "");
  g_assert_nonnull (strstr (err, fragment));
  g_assert_nonnull (strstr (err, path));
  g_assert_nonnull (strchr (err, '\n'));
  g_assert_cmpstr (strchr (err, '\n') + 1, ==, "");
}

static void
test_bad_inputs (Fixture *f, gconstpointer data)
{
  g_autofree char *contents = NULL;
  gsize length = 0;

  (void) data;
  assert_bad_input (f->path, "No such file");
  g_assert_true (g_file_set_contents (f->path, "just text\n", -1, NULL));
  assert_bad_input (f->path, "not an SQLite database");
  g_assert_true (g_file_set_contents (f->path, "\x89PNG\r\n\x1a\n0000000000000000", 24, NULL));
  assert_bad_input (f->path, "not an SQLite database");

  unlink (f->path);
  cli_fixture_write_session (f->path, TRUE, 0);
  cli_fixture_exec (f->path, "PRAGMA user_version = 99");
  assert_bad_input (f->path, "newer Cowscope (schema 99; this build reads up to 4)");

  /* A session cut short: the later pages (derived tables) are gone. */
  unlink (f->path);
  cli_fixture_write_session (f->path, TRUE, 4000);
  g_assert_true (g_file_get_contents (f->path, &contents, &length, NULL));
  g_assert_cmpuint (length, >, 64 * 1024);
  g_assert_true (g_file_set_contents (f->path, contents, length / 2, NULL));
  assert_bad_input (f->path, "is damaged");
}

/* Item 6 of issue 11: nbytes stored as REAL gave saved_bytes =
 * -9223372036584808351 in `report --json`.  Every command that reads the
 * numbers refuses the file, naming the table, the row and the column. */
static void
test_damaged_values (Fixture *f, gconstpointer data)
{
  const char *const *variant;
  static const char *const variants[][2] = {
    { "UPDATE materializations SET nbytes = 1e19 WHERE seq = 14",
      "table 'materializations', row seq 14: nbytes is 1.0e+19, a real number" },
    { "UPDATE materializations SET nbytes = 'many' WHERE seq = 17",
      "table 'materializations', row seq 17: nbytes is 'many', text" },
    { "UPDATE lazy_clones SET nbytes = -9223372036854775807 WHERE seq = 6",
      "table 'lazy_clones', row seq 6: nbytes is -9223372036854775807" },
    { "UPDATE threads SET produced = 9223372036854775807 WHERE tid = 100",
      "table 'threads', row pid 100, tid 100: produced is 9223372036854775807" },
    { "INSERT OR REPLACE INTO meta VALUES ('dropped', '-7')",
      "table 'meta', key dropped: '-7' is not a count" },
  };

  (void) data;
  for (gsize i = 0; i < G_N_ELEMENTS (variants); i++)
    {
      variant = variants[i];
      unlink (f->path);
      cli_fixture_write_session (f->path, TRUE, 0);
      cli_fixture_exec (f->path, variant[0]);
      g_test_message ("%s", variant[0]);
      assert_bad_input (f->path, variant[1]);
      {
        g_autofree char *out = NULL;
        g_autofree char *err = NULL;
        g_assert_cmpint (cli_fixture_run (cowscope_report_run, &out, &err, "report", "--json",
                                          f->path, NULL), ==, 1);
        g_assert_cmpstr (out, ==, "");
        g_assert_nonnull (strstr (err, " is damaged: "));
        g_assert_nonnull (strstr (err, variant[1]));
      }
    }
}

/* A session never finalized is read through a finalized copy: a recorded
 * count out of range was summed there and gave "cannot finalize session
 * …: integer overflow" (found by tests/fuzz).  The damage is named. */
static void
test_damaged_values_not_finalized (Fixture *f, gconstpointer data)
{
  static const char *const variants[][2] = {
    { "UPDATE thread_events SET produced = -9223372036854775807 - 1",
      "table 'thread_events', row pid 100, tid 100: produced is -9223372036854775808" },
    { "UPDATE threads SET stored = 9223372036854775807 WHERE tid = 100",
      "table 'threads', row pid 100, tid 100: stored is 9223372036854775807" },
  };

  (void) data;
  for (gsize i = 0; i < G_N_ELEMENTS (variants); i++)
    {
      g_autofree char *out = NULL;
      g_autofree char *err = NULL;
      unlink (f->path);
      cli_fixture_write_session (f->path, FALSE, 0);
      cli_fixture_exec (f->path, variants[i][0]);
      g_test_message ("%s", variants[i][0]);
      assert_bad_input (f->path, variants[i][1]);
      g_assert_cmpint (cli_fixture_run (cowscope_report_run, &out, &err, "report", "--json",
                                        f->path, NULL), ==, 1);
      g_assert_cmpstr (out, ==, "");
      g_assert_nonnull (strstr (err, " is damaged: "));
      g_assert_nonnull (strstr (err, variants[i][1]));
    }
}

/* Item 8 of issue 11: random bytes flipped gave `unrecognized token: ""`
 * and a fragment of the schema.  Over many damaged copies, every refusal
 * names the file and says what is wrong in the format's words. */
static void
test_flipped_bytes (Fixture *f, gconstpointer data)
{
  g_autofree char *contents = NULL;
  g_autofree char *damaged = g_build_filename (f->dir, "damaged.cowscope", NULL);
  gsize length = 0;
  guint refused = 0;
  static const char *const phrasings[] = {
    " is damaged: ", "not a Cowscope session: ", " was written by a newer Cowscope",
  };

  (void) data;
  unlink (f->path);
  cli_fixture_write_session (f->path, TRUE, 600);
  g_assert_true (g_file_get_contents (f->path, &contents, &length, NULL));
  for (guint seed = 1; seed <= 60; seed++)
    {
      g_autoptr (GRand) rand = g_rand_new_with_seed (seed);
      g_autofree char *copy = g_memdup2 (contents, length);
      g_autofree char *out = NULL;
      g_autofree char *err = NULL;
      /* The schema lives in the first pages: most flips land there. */
      gsize span = MIN (length, seed % 2 ? 4096 : length);
      for (guint k = 0; k < 1 + seed % 8; k++)
        copy[g_rand_int_range (rand, 100, (gint32) span)] ^= (char) (1 << g_rand_int_range (rand, 0, 8));
      g_assert_true (g_file_set_contents (damaged, copy, length, NULL));
      int status = cli_fixture_run (cowscope_report_run, &out, &err, "report", "--json", damaged,
                                    NULL);
      if (status == 0)
        continue;
      refused++;
      g_test_message ("seed %u: %s", seed, err);
      g_assert_cmpint (status, ==, 1);
      g_assert_null (strstr (err, "unrecognized token"));
      g_assert_null (strstr (err, "syntax error"));
      g_assert_null (strstr (err, "malformed database schema"));
      g_assert_nonnull (strstr (err, damaged));
      gboolean worded = FALSE;
      for (gsize i = 0; i < G_N_ELEMENTS (phrasings); i++)
        worded = worded || strstr (err, phrasings[i]) != NULL;
      g_assert_true (worded);
      g_assert_cmpstr (strchr (err, '\n') + 1, ==, "");
    }
  /* The flips in the first page must have hit something. */
  g_assert_cmpuint (refused, >=, 5);
}

/* Item 7 of issue 11: names, paths and command lines from a session reach
 * the text report and the tool's messages with their control characters
 * escaped: a newline cannot forge a line, an ESC never reaches the
 * terminal.  JSON keeps the exact strings. */
#define FORGED_NAME "weights\n!! WARNING: forged\x1b[31m\xe2\x80\xae"
#define FORGED_COMMAND "train\x1b]0;pwned\x07\r\nDuration:   forged"

static void
assert_no_control_characters (const char *text)
{
  for (const char *p = text; *p != '\0'; p++)
    if (*p != '\n')
      g_assert_false (g_ascii_iscntrl (*p));
  g_assert_null (strstr (text, "\xe2\x80\xae"));
}

static void
test_control_characters (Fixture *f, gconstpointer data)
{
  g_autofree char *odd_path = g_build_filename (f->dir, "s\nSession:    forged\x1b[2J.cowscope",
                                                NULL);
  g_autofree char *missing = g_build_filename (f->dir, "gone\x1b[2J\nforged.cowscope", NULL);
  g_autofree char *sql = g_strdup_printf (
    "UPDATE tensors SET name = '%s' WHERE name = 'weights';"
    "UPDATE meta SET value = '%s' WHERE key = 'command';", FORGED_NAME, FORGED_COMMAND);
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_auto (GStrv) lines = NULL;

  (void) data;
  cli_fixture_exec (f->path, sql);
  g_assert_cmpint (g_rename (f->path, odd_path), ==, 0);
  g_assert_cmpint (cli_fixture_run (cowscope_report_run, &out, &err, "report", odd_path, NULL),
                   ==, 0);
  assert_no_control_characters (out);
  lines = g_strsplit (out, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      g_assert_false (g_str_has_prefix (lines[i], "!! WARNING: forged"));
      g_assert_false (g_str_has_prefix (lines[i], "Duration:   forged"));
      g_assert_false (g_str_has_prefix (lines[i], "Session:    forged"));
    }
  g_assert_nonnull (strstr (out, "\"weights\\n!! WARNING: forged\\x1b[31m\\u202e\""));
  g_assert_nonnull (strstr (out, "Target:     train\\x1b]0;pwned\\x07\\r\\nDuration:   forged"));
  g_assert_nonnull (strstr (out, "Session:    " ));
  g_assert_nonnull (strstr (out, "s\\nSession:    forged\\x1b[2J.cowscope"));

  /* JSON carries the exact strings (json-glib escapes them). */
  {
    g_autoptr (JsonObject) report = report_json (odd_path);
    JsonArray *violations = json_object_get_array_member (report, "violations");
    JsonObject *v = json_array_get_object_element (violations, 0);
    g_assert_cmpstr (json_object_get_string_member (v, "writer_name"), ==, FORGED_NAME);
    g_assert_cmpstr (json_object_get_string_member (
                       json_object_get_object_member (report, "target"), "command"),
                     ==, FORGED_COMMAND);
  }

  /* The tool's messages quote file names escaped too. */
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (cli_fixture_run (cowscope_report_run, &out, &err, "report", missing, NULL),
                   ==, 1);
  assert_no_control_characters (err);
  g_assert_nonnull (strstr (err, "gone\\x1b[2J\\nforged.cowscope"));
  g_assert_cmpstr (strchr (err, '\n') + 1, ==, "");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

#define ADD(path, data, func) \
  g_test_add (path, Fixture, data, fixture_set_up, func, fixture_tear_down)
  ADD ("/cli/report/json-numbers", FINALIZED, test_json_numbers);
  ADD ("/cli/report/text", FINALIZED, test_text_report);
  ADD ("/cli/report/dropped-is-loud", FINALIZED, test_dropped_is_loud);
  ADD ("/cli/report/not-finalized-from-raw-events", NOT_FINALIZED, test_not_finalized);
  ADD ("/cli/report/budgets", FINALIZED, test_budgets);
  ADD ("/cli/report/bad-fail-if-is-usage-error", FINALIZED, test_bad_fail_if_is_usage);
  ADD ("/cli/report/usage-errors", FINALIZED, test_usage_errors);
  ADD ("/cli/report/bad-inputs", NULL, test_bad_inputs);
  ADD ("/cli/report/control-characters", FINALIZED, test_control_characters);
  ADD ("/cli/report/damaged-values", FINALIZED, test_damaged_values);
  ADD ("/cli/report/damaged-values-not-finalized", NOT_FINALIZED,
       test_damaged_values_not_finalized);
  ADD ("/cli/report/flipped-bytes", FINALIZED, test_flipped_bytes);
#undef ADD
  g_test_add_func ("/cli/report/budget-parse", test_budget_parse);

  return g_test_run ();
}
