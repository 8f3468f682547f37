/* test-cli-diff.c — `cowscope-cli diff`: what changed between two
 * sessions, matched by call site through line shifts; budgets on change;
 * bad input; and two recordings of a target whose second version
 * removed one copy (diff-target.c). */
#include <json-glib/json-glib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli-fixture.h"
#include "cowscope-budget.h"
#include "cowscope-cli-commands.h"
#include "cowscope-format-schema.h"
#include "cowscope-format-vocabulary.h"
#include "cowscope-session-diff.h"

typedef struct {
  char *dir;
  char *before, *after;
} Fixture;

/* The fixture session (cli-fixture.h), finalized, with the lookup tables
 * the session views name kinds and operations by. */
static void
write_session (const char *path)
{
  sqlite3 *db = NULL;

  cli_fixture_write_session (path, TRUE, 0);
  g_assert_cmpint (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READWRITE, NULL), ==, SQLITE_OK);
  g_assert_true (cowscope_format_fill_lookup_tables (db));
  sqlite3_close (db);
}

static void
fixture_set_up (Fixture *f, gconstpointer data)
{
  (void) data;
  f->dir = cli_fixture_tmpdir ();
  f->before = g_build_filename (f->dir, "before.cowscope", NULL);
  f->after = g_build_filename (f->dir, "after.cowscope", NULL);
  write_session (f->before);
  write_session (f->after);
}

static void
fixture_tear_down (Fixture *f, gconstpointer data)
{
  (void) data;
  cli_fixture_remove_tree (f->dir);
  g_free (f->dir);
  g_free (f->before);
  g_free (f->after);
}

/* Runs `diff --json BEFORE AFTER` (exit 0) and parses its output. */
static JsonObject *
diff_json (const char *before, const char *after)
{
  g_autofree char *out = NULL;
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GError) error = NULL;

  g_assert_cmpint (cli_fixture_run (cowscope_diff_run, &out, NULL, "diff", "--json", before, after,
                                    NULL), ==, 0);
  json_parser_load_from_data (parser, out, -1, &error);
  g_assert_no_error (error);
  return json_object_ref (json_node_get_object (json_parser_get_root (parser)));
}

static JsonArray *
rows_of (JsonObject *diff, const char *dimension)
{
  return json_object_get_array_member (json_object_get_object_member (diff, dimension), "rows");
}

static gint64
figure (JsonObject *row, const char *side, const char *name)
{
  return json_object_get_int_member (json_object_get_object_member (row, side), name);
}

static gint64
metric (JsonObject *diff, const char *name, const char *field)
{
  JsonObject *metrics = json_object_get_object_member (diff, "metrics");
  if (field == NULL)
    return json_object_get_int_member (metrics, name);
  return json_object_get_int_member (json_object_get_object_member (metrics, name), field);
}

/* The change of total @name, or 0 when it is not listed (unchanged). */
static gint64
total_change (JsonObject *diff, const char *name)
{
  JsonArray *totals = json_object_get_array_member (diff, "totals");
  for (guint i = 0; i < json_array_get_length (totals); i++)
    {
      JsonObject *t = json_array_get_object_element (totals, i);
      if (g_strcmp0 (json_object_get_string_member (t, "metric"), name) == 0)
        return json_object_get_int_member (t, "change");
    }
  return 0;
}

static void
assert_no_rows (JsonObject *diff)
{
  for (int d = 0; d < COWSCOPE_DIFF_N_DIMENSIONS; d++)
    {
      const char *name = cowscope_diff_dimension_name (d);
      g_assert_cmpuint (json_array_get_length (rows_of (diff, name)), ==, 0);
      g_assert_cmpint (json_object_get_int_member (json_object_get_object_member (diff, name),
                                                   "more"), ==, 0);
    }
}

/* A session compared with a copy of itself, and the model given the
 * same tables twice: nothing changed. */
static void
test_self_is_empty (Fixture *f, gconstpointer data)
{
  g_autoptr (JsonObject) diff = diff_json (f->before, f->after);
  g_autofree char *out = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (CowscopeSessionTables) tables = cowscope_session_tables_open (f->before, &error);
  g_autoptr (CowscopeSessionDiff) model = NULL;

  (void) data;
  g_assert_cmpstr (json_object_get_string_member (diff, "format"), ==, "cowscope-diff");
  g_assert_true (json_object_get_boolean_member (diff, "unchanged"));
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (diff, "totals")), ==, 0);
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (diff, "notes")), ==, 0);
  assert_no_rows (diff);
  g_assert_cmpint (metric (diff, "copied_bytes", "before"), ==, 8 * MiB);
  g_assert_cmpint (metric (diff, "copied_bytes", "after"), ==, 8 * MiB);
  g_assert_cmpint (metric (diff, "copied_bytes", "change"), ==, 0);
  g_assert_cmpint (metric (diff, "new_warnings", NULL), ==, 0);

  g_assert_cmpint (cli_fixture_run (cowscope_diff_run, &out, NULL, "diff", f->before, f->after,
                                    NULL), ==, 0);
  g_assert_nonnull (strstr (out, "No change"));
  g_assert_null (strstr (out, "Call sites"));

  g_assert_no_error (error);
  model = cowscope_session_diff_build (tables, tables, &error);
  g_assert_no_error (error);
  g_assert_true (cowscope_session_diff_is_empty (model));
}

/* AFTER dropped the mul_ copy and its call site moved from line 88 to
 * 91 (code added above it): one call site row, matched across the shift,
 * with exactly that copy's bytes; the operation is gone. */
static void
test_line_shift_matches (Fixture *f, gconstpointer data)
{
  g_autoptr (JsonObject) diff = NULL;
  JsonArray *sites, *ops, *ranges;
  JsonObject *row;
  g_autofree char *out = NULL;

  (void) data;
  cli_fixture_exec (f->after,
                    "UPDATE frames SET line = 91 WHERE function = 'update_weights';"
                    "UPDATE frames SET file = '/elsewhere/checkout/train.c' WHERE file = '/src/train.c';"
                    "DELETE FROM materializations WHERE op = (SELECT id FROM ops WHERE name = 'mul_')");
  diff = diff_json (f->before, f->after);
  g_assert_false (json_object_get_boolean_member (diff, "unchanged"));

  sites = rows_of (diff, "call_sites");
  g_assert_cmpuint (json_array_get_length (sites), ==, 1);
  row = json_array_get_object_element (sites, 0);
  g_assert_cmpstr (json_object_get_string_member (row, "status"), ==, "changed");
  g_assert_cmpstr (json_object_get_string_member (row, "function"), ==, "update_weights");
  g_assert_cmpstr (json_object_get_string_member (row, "call_site"), ==, "update_weights (train.c:91)");
  g_assert_cmpint (json_object_get_int_member (row, "before_line"), ==, 88);
  g_assert_cmpint (json_object_get_int_member (row, "after_line"), ==, 91);
  g_assert_cmpint (figure (row, "before", "copies"), ==, 2);
  g_assert_cmpint (figure (row, "after", "copies"), ==, 1);
  g_assert_cmpint (figure (row, "change", "copied_bytes"), ==, -4 * MiB);
  g_assert_cmpint (figure (row, "change", "steals"), ==, 0);

  ops = rows_of (diff, "operations");
  g_assert_cmpuint (json_array_get_length (ops), ==, 1);
  row = json_array_get_object_element (ops, 0);
  g_assert_cmpstr (json_object_get_string_member (row, "operation"), ==, "mul_");
  g_assert_cmpstr (json_object_get_string_member (row, "status"), ==, "gone");
  g_assert_cmpint (figure (row, "change", "copied_bytes"), ==, -4 * MiB);

  /* The copy was made on the worker thread inside its "never closed" range. */
  ranges = rows_of (diff, "ranges");
  g_assert_cmpuint (json_array_get_length (ranges), ==, 1);
  row = json_array_get_object_element (ranges, 0);
  g_assert_cmpstr (json_object_get_string_member (row, "range"), ==, "never closed");
  g_assert_cmpint (figure (row, "change", "copies"), ==, -1);

  g_assert_cmpint (total_change (diff, "copies"), ==, -1);
  g_assert_cmpint (total_change (diff, "copied_bytes"), ==, -4 * MiB);
  g_assert_cmpint (total_change (diff, "saved_bytes"), ==, 4 * MiB);
  g_assert_cmpint (total_change (diff, "steals"), ==, 0);
  g_assert_cmpuint (json_array_get_length (rows_of (diff, "warnings")), ==, 0);

  g_assert_cmpint (cli_fixture_run (cowscope_diff_run, &out, NULL, "diff", f->before, f->after,
                                    NULL), ==, 0);
  g_assert_nonnull (strstr (out, "changed update_weights (train.c:91) (was line 88): copies 2 → 1"
                                 " (-4.0 MiB: 8.0 MiB → 4.0 MiB)\n"));
  g_assert_nonnull (strstr (out, "  gone    mul_: copies 1 → 0"));
}

/* Two call sites in one function whose lines both moved: each pairs
 * with its nearest, and only the one whose bytes changed is listed. */
static void
test_nearest_line (Fixture *f, gconstpointer data)
{
  static const char split[] =
    /* The mul_ copy's stack now goes through update_weights at line 120. */
    "INSERT INTO frames VALUES (6, 100, 8200, '/usr/bin/train', 'update_weights',"
    " '/src/train.c', 120);"
    "UPDATE stack_frames SET frame_id = 6 WHERE stack_id = 2 AND position = 1;";
  g_autoptr (JsonObject) diff = NULL;
  JsonArray *sites;
  JsonObject *row;

  (void) data;
  cli_fixture_exec (f->before, split);
  cli_fixture_exec (f->after, split);
  cli_fixture_exec (f->after,
                    "UPDATE frames SET line = 90 WHERE id = 2;"
                    "UPDATE frames SET line = 125 WHERE id = 6;"
                    "UPDATE materializations SET nbytes = 1048576"
                    " WHERE op = (SELECT id FROM ops WHERE name = 'mul_')");
  diff = diff_json (f->before, f->after);
  sites = rows_of (diff, "call_sites");
  g_assert_cmpuint (json_array_get_length (sites), ==, 1);
  row = json_array_get_object_element (sites, 0);
  g_assert_cmpstr (json_object_get_string_member (row, "status"), ==, "changed");
  g_assert_cmpint (json_object_get_int_member (row, "before_line"), ==, 120);
  g_assert_cmpint (json_object_get_int_member (row, "after_line"), ==, 125);
  g_assert_cmpint (figure (row, "change", "copied_bytes"), ==, -3 * MiB);
  g_assert_cmpint (figure (row, "change", "copies"), ==, 0);
}

/* Rows are listed largest change first, and --top leaves the rest out
 * with their number. */
static void
test_sorted_and_top (Fixture *f, gconstpointer data)
{
  g_autoptr (JsonObject) diff = NULL;
  g_autofree char *out = NULL;
  g_autoptr (JsonParser) parser = json_parser_new ();
  JsonArray *ops;
  JsonObject *top;

  (void) data;
  /* add_ loses its copy (4 MiB) and mul_ gains 1 MiB. */
  cli_fixture_exec (f->after,
                    "DELETE FROM materializations WHERE op = (SELECT id FROM ops WHERE name = 'add_')"
                    " AND kind = (SELECT id FROM materialize_kinds WHERE name = 'copy');"
                    "UPDATE materializations SET nbytes = 5242880"
                    " WHERE op = (SELECT id FROM ops WHERE name = 'mul_')");
  diff = diff_json (f->before, f->after);
  ops = rows_of (diff, "operations");
  g_assert_cmpuint (json_array_get_length (ops), ==, 2);
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (ops, 0),
                                                  "operation"), ==, "add_");
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (ops, 1),
                                                  "operation"), ==, "mul_");

  g_assert_cmpint (cli_fixture_run (cowscope_diff_run, &out, NULL, "diff", "--json", "--top", "1",
                                    f->before, f->after, NULL), ==, 0);
  g_assert_true (json_parser_load_from_data (parser, out, -1, NULL));
  top = json_node_get_object (json_parser_get_root (parser));
  g_assert_cmpuint (json_array_get_length (rows_of (top, "operations")), ==, 1);
  g_assert_cmpint (json_object_get_int_member (json_object_get_object_member (top, "operations"),
                                               "more"), ==, 1);
}

/* Warnings that appeared and went away, by what they say and where. */
static void
test_warnings (Fixture *f, gconstpointer data)
{
  g_autoptr (JsonObject) appeared = NULL, gone = NULL;
  JsonArray *rows;
  JsonObject *row;

  (void) data;
  cli_fixture_exec (f->before, "DELETE FROM violations");
  appeared = diff_json (f->before, f->after);
  rows = rows_of (appeared, "warnings");
  g_assert_cmpuint (json_array_get_length (rows), ==, 1);
  row = json_array_get_object_element (rows, 0);
  g_assert_cmpstr (json_object_get_string_member (row, "status"), ==, "new");
  g_assert_cmpstr (json_object_get_string_member (row, "message"), ==,
                   "read through 'snapshot' after a write through 'weights'");
  g_assert_cmpint (figure (row, "after", "warnings"), ==, 1);
  g_assert_cmpint (metric (appeared, "new_warnings", NULL), ==, 1);
  g_assert_cmpint (metric (appeared, "gone_warnings", NULL), ==, 0);

  gone = diff_json (f->after, f->before);
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (
                     rows_of (gone, "warnings"), 0), "status"), ==, "gone");
  g_assert_cmpint (metric (gone, "new_warnings", NULL), ==, 0);
  g_assert_cmpint (metric (gone, "gone_warnings", NULL), ==, 1);
}

/* An eager fallback that went away, by reason and call site. */
static void
test_eager_fallbacks (Fixture *f, gconstpointer data)
{
  g_autoptr (JsonObject) diff = NULL;
  JsonArray *rows;
  JsonObject *row;

  (void) data;
  cli_fixture_exec (f->after, "DELETE FROM lazy_clones WHERE context_id IS NULL");
  diff = diff_json (f->before, f->after);
  rows = rows_of (diff, "eager_fallbacks");
  g_assert_cmpuint (json_array_get_length (rows), ==, 1);
  row = json_array_get_object_element (rows, 0);
  g_assert_cmpstr (json_object_get_string_member (row, "status"), ==, "gone");
  g_assert_cmpstr (json_object_get_string_member (row, "label"), ==,
                   "foreign_data_ptr at (no call stack)");
  g_assert_cmpint (figure (row, "change", "eager_bytes"), ==, -MiB);
  g_assert_cmpint (total_change (diff, "eager_fallbacks"), ==, -1);
}

/* Budgets on change: the report's grammar and exit status 3, and
 * percentages of the BEFORE value. */
static void
test_budgets (Fixture *f, gconstpointer data)
{
  g_autofree char *err = NULL;

  (void) data;
  /* AFTER copies 4 MiB more: the mul_ copy is now 8 MiB (+50%). */
  cli_fixture_exec (f->after, "UPDATE materializations SET nbytes = 8388608"
                              " WHERE op = (SELECT id FROM ops WHERE name = 'mul_')");
  g_assert_cmpint (cli_fixture_run (cowscope_diff_run, NULL, &err, "diff",
                                    "--fail-if", "copied_bytes.increase > 5%",
                                    "--fail-if", "copied_bytes.increase > 4Mi",
                                    "--fail-if", "copies.change != 0",
                                    "--fail-if", "new_warnings > 0",
                                    f->before, f->after, NULL), ==, 3);
  g_assert_nonnull (strstr (err, "budget exceeded: copied_bytes.increase = 4194304 (50.0% of"
                                 " 8388608) > 5%\n"));
  g_assert_null (strstr (err, "4194304 > 4194304"));
  g_assert_null (strstr (err, "copies.change"));
  g_assert_null (strstr (err, "new_warnings"));
  g_clear_pointer (&err, g_free);

  g_assert_cmpint (cli_fixture_run (cowscope_diff_run, NULL, &err, "diff",
                                    "--fail-if", "copied_bytes.increase > 50%",
                                    "--fail-if", "copied_bytes.decrease > 0",
                                    "--fail-if", "copied_bytes.after > 12Mi",
                                    f->before, f->after, NULL), ==, 0);
  g_assert_cmpstr (err, ==, "");
  g_clear_pointer (&err, g_free);

  /* The other way: a decrease passes an increase budget. */
  g_assert_cmpint (cli_fixture_run (cowscope_diff_run, NULL, NULL, "diff",
                                    "--fail-if", "copied_bytes.increase > 0",
                                    f->after, f->before, NULL), ==, 0);
  g_assert_cmpint (cli_fixture_run (cowscope_diff_run, NULL, NULL, "diff",
                                    "--fail-if", "copied_bytes.decrease >= 33%",
                                    f->after, f->before, NULL), ==, 3);

  /* new_warnings; and a percentage of nothing is unbounded. */
  cli_fixture_exec (f->before, "DELETE FROM violations");
  g_assert_cmpint (cli_fixture_run (cowscope_diff_run, NULL, &err, "diff",
                                    "--fail-if", "new_warnings > 0",
                                    "--fail-if", "violations.increase > 1000%",
                                    f->before, f->after, NULL), ==, 3);
  g_assert_nonnull (strstr (err, "budget exceeded: new_warnings = 1 > 0\n"));
  g_assert_nonnull (strstr (err, "budget exceeded: violations.increase = 1 (of 0: unbounded)"
                                 " > 1000%\n"));
  g_assert_cmpint (cli_fixture_run (cowscope_diff_run, NULL, NULL, "diff",
                                    "--fail-if", "new_warnings > 0",
                                    f->after, f->before, NULL), ==, 0);
}

static void
test_bad_budgets (Fixture *f, gconstpointer data)
{
  static const struct { const char *expression, *fragment; } bad[] = {
    { "copied_bytes > 5%", "unknown metric 'copied_bytes'" },
    { "copied_bytes.sideways > 1", "unknown metric 'copied_bytes.sideways'" },
    { "bogus.increase > 1", "unknown metric 'bogus.increase'" },
    { "copied_bytes.increase > 5Mi%", "a percentage takes no other unit" },
    { "copied_bytes.increase >", "expected a number" },
  };

  (void) data;
  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autofree char *out = NULL, *err = NULL;
      g_assert_cmpint (cli_fixture_run (cowscope_diff_run, &out, &err, "diff", "--fail-if",
                                        bad[i].expression, f->before, f->after, NULL), ==, 2);
      g_assert_nonnull (strstr (err, bad[i].fragment));
      g_assert_cmpstr (out, ==, "");
    }
  {
    /* The report has no base to take a percentage of. */
    g_autofree char *err = NULL;
    g_assert_cmpint (cli_fixture_run (cowscope_report_run, NULL, &err, "report", "--fail-if",
                                      "copied_bytes > 5%", f->before, NULL), ==, 2);
    g_assert_nonnull (strstr (err, "a percentage needs a base"));
  }
}

/* Exit 1 and a message naming the bad file; nothing on stdout. */
static void
assert_bad_input (const char *before, const char *after, const char *named, const char *fragment)
{
  g_autofree char *out = NULL, *err = NULL;

  g_assert_cmpint (cli_fixture_run (cowscope_diff_run, &out, &err, "diff", before, after, NULL),
                   ==, 1);
  g_assert_cmpstr (out, ==, "");
  g_assert_nonnull (strstr (err, fragment));
  g_assert_nonnull (strstr (err, named));
}

static void
test_bad_input (Fixture *f, gconstpointer data)
{
  g_autofree char *out = NULL, *err = NULL;
  g_autofree char *missing = g_build_filename (f->dir, "missing.cowscope", NULL);
  g_autofree char *damaged = g_build_filename (f->dir, "damaged.cowscope", NULL);
  g_autofree char *link = g_build_filename (f->dir, "link.cowscope", NULL);
  g_autofree char *contents = NULL;
  gsize length = 0;

  (void) data;
  /* The same file twice, by name or through a link: nothing to compare. */
  g_assert_cmpint (cli_fixture_run (cowscope_diff_run, &out, &err, "diff", f->before, f->before,
                                    NULL), ==, 2);
  g_assert_nonnull (strstr (err, "BEFORE and AFTER are the same file"));
  g_assert_cmpstr (out, ==, "");
  g_assert_cmpint (symlink (f->before, link), ==, 0);
  g_assert_cmpint (cli_fixture_run (cowscope_diff_run, NULL, NULL, "diff", link, f->before, NULL),
                   ==, 2);

  /* One file, three, none. */
  g_assert_cmpint (cli_fixture_run (cowscope_diff_run, NULL, NULL, "diff", f->before, NULL), ==, 2);
  g_assert_cmpint (cli_fixture_run (cowscope_diff_run, NULL, NULL, "diff", f->before, f->after,
                                    f->after, NULL), ==, 2);
  g_assert_cmpint (cli_fixture_run (cowscope_diff_run, NULL, NULL, "diff", NULL), ==, 2);

  assert_bad_input (missing, f->after, missing, "No such file");
  assert_bad_input (f->before, missing, missing, "No such file");
  {
    /* A name that holds control characters is quoted escaped: no forged
     * line, no escape sequence reaching the terminal. */
    g_autofree char *forged = g_build_filename (f->dir, "gone\x1b[2J\nforged.cowscope", NULL);
    g_clear_pointer (&err, g_free);
    g_assert_cmpint (cli_fixture_run (cowscope_diff_run, NULL, &err, "diff", f->before, forged,
                                      NULL), ==, 1);
    g_assert_nonnull (strstr (err, "gone\\x1b[2J\\nforged.cowscope"));
    g_assert_null (strchr (err, '\x1b'));
    g_assert_cmpstr (strchr (err, '\n') + 1, ==, "");
  }

  /* A session cut in half. */
  cli_fixture_write_session (damaged, TRUE, 4000);
  g_assert_true (g_file_get_contents (damaged, &contents, &length, NULL));
  g_assert_true (g_file_set_contents (damaged, contents, length / 2, NULL));
  assert_bad_input (f->before, damaged, damaged, "is damaged");

  /* An event chunk whose data lies about its events (sound pages):
   * named by its row, on either side. */
  {
    g_autofree char *chunk = g_build_filename (f->dir, "chunk.cowscope", NULL);
    cli_fixture_write_session (chunk, TRUE, 4000);
    cli_fixture_exec (chunk, "UPDATE event_chunks SET data = substr (data, 1, length (data) / 2)"
                             " WHERE first_seq = (SELECT max (first_seq) FROM event_chunks)");
    assert_bad_input (f->before, chunk, chunk, " is damaged: table 'event_chunks', row first_seq ");
    assert_bad_input (chunk, f->before, chunk, " is damaged: table 'event_chunks', row first_seq ");
  }

  /* A newer schema than this build reads. */
  cli_fixture_exec (f->after, "PRAGMA user_version = 99");
  assert_bad_input (f->before, f->after, f->after, "newer Cowscope");
}

/* BEFORE of schema 2 (without the tables version 3 added), AFTER of
 * this build's: compared through this version's views, with a note
 * that says so. */
static void
test_older_schema (Fixture *f, gconstpointer data)
{
  g_autoptr (JsonObject) diff = NULL;
  JsonArray *notes;

  (void) data;
  cli_fixture_exec (f->before,
                    "DROP TABLE thread_events; DROP TABLE process_identity; DROP TABLE peer_faults;"
                    "PRAGMA user_version = 2;"
                    "UPDATE meta SET value = 2 WHERE key = 'schema_version'");
  cli_fixture_exec (f->after, "DELETE FROM materializations WHERE op = (SELECT id FROM ops WHERE name = 'mul_')");
  diff = diff_json (f->before, f->after);
  g_assert_cmpint (json_object_get_int_member (json_object_get_object_member (diff, "before"),
                                               "schema_version"), ==, 2);
  g_assert_cmpint (json_object_get_int_member (json_object_get_object_member (diff, "after"),
                                               "schema_version"), ==, cowscope_format_schema_version ());
  notes = json_object_get_array_member (diff, "notes");
  g_assert_cmpuint (json_array_get_length (notes), ==, 1);
  g_assert_nonnull (strstr (json_array_get_string_element (notes, 0), "BEFORE is schema 2"));
  g_assert_cmpint (total_change (diff, "copied_bytes"), ==, -4 * MiB);
  g_assert_cmpuint (json_array_get_length (rows_of (diff, "call_sites")), ==, 1);
}

/* ---- two recordings of diff-target ------------------------------------ */

/* The line of the first line of @source holding @marker. */
static gint64
marker_line (const char *source, const char *marker)
{
  g_autofree char *text = NULL;
  g_auto (GStrv) lines = NULL;

  g_assert_true (g_file_get_contents (source, &text, NULL, NULL));
  lines = g_strsplit (text, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    if (strstr (lines[i], marker) != NULL)
      return i + 1;
  g_error ("no '%s' in %s", marker, source);
}

static void
record (const char *cli, const char *target, const char *path)
{
  const char *argv[] = { cli, "record", "-o", path, "--", target, NULL };
  g_autofree char *out = NULL, *err = NULL;
  g_autoptr (GError) error = NULL;
  int status = 0;

  g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out,
                               &err, &status, &error));
  g_assert_no_error (error);
  if (!WIFEXITED (status) || WEXITSTATUS (status) != 0)
    g_error ("cowscope-cli record %s failed (%d): %s%s", target, status, out, err);
}

static void
test_recorded_removed_copy (void)
{
  const char *cli = g_getenv ("COWSCOPE_CLI");
  const char *before_target = g_getenv ("COWSCOPE_DIFF_TARGET_BEFORE");
  const char *after_target = g_getenv ("COWSCOPE_DIFF_TARGET_AFTER");
  const char *source = g_getenv ("COWSCOPE_DIFF_TARGET_SOURCE");
  g_autofree char *dir = NULL, *before = NULL, *before_again = NULL, *after = NULL;
  g_autoptr (JsonObject) diff = NULL, same = NULL;
  JsonArray *sites, *ops;
  JsonObject *row;
  gint64 removed_line;

  if (cli == NULL || before_target == NULL || after_target == NULL || source == NULL)
    {
      g_test_skip ("cowscope-cli or the diff targets are not built");
      return;
    }
  removed_line = marker_line (source, "diff-target: removed copy");
  g_assert_cmpint (marker_line (source, "diff-target: moved copy, after"), !=,
                   marker_line (source, "diff-target: moved copy, before"));
  dir = cli_fixture_tmpdir ();
  before = g_build_filename (dir, "before.cowscope", NULL);
  before_again = g_build_filename (dir, "before-again.cowscope", NULL);
  after = g_build_filename (dir, "after.cowscope", NULL);
  record (cli, before_target, before);
  record (cli, before_target, before_again);
  record (cli, after_target, after);

  /* Two recordings of one program: no change. */
  same = diff_json (before, before_again);
  g_assert_true (json_object_get_boolean_member (same, "unchanged"));
  assert_no_rows (same);

  diff = diff_json (before, after);
  sites = rows_of (diff, "call_sites");
  g_assert_cmpuint (json_array_get_length (sites), ==, 1);
  row = json_array_get_object_element (sites, 0);
  g_assert_cmpstr (json_object_get_string_member (row, "status"), ==, "gone");
  g_assert_cmpstr (json_object_get_string_member (row, "function"), ==, "take_snapshot");
  g_assert_true (g_str_has_suffix (json_object_get_string_member (row, "file"), "/diff-target.c"));
  g_assert_cmpint (json_object_get_int_member (row, "before_line"), ==, removed_line);
  g_assert_cmpint (figure (row, "before", "copies"), ==, 1);
  g_assert_cmpint (figure (row, "before", "copied_bytes"), ==, 16384);
  g_assert_cmpint (figure (row, "after", "copies"), ==, 0);
  g_assert_cmpint (figure (row, "change", "lazy_clones"), ==, 0);

  ops = rows_of (diff, "operations");
  g_assert_cmpuint (json_array_get_length (ops), ==, 1);
  row = json_array_get_object_element (ops, 0);
  g_assert_cmpstr (json_object_get_string_member (row, "operation"), ==, "scale_");
  g_assert_cmpint (figure (row, "change", "copied_bytes"), ==, -16384);

  g_assert_cmpuint (json_array_get_length (rows_of (diff, "ranges")), ==, 1);
  row = json_array_get_object_element (rows_of (diff, "ranges"), 0);
  g_assert_cmpstr (json_object_get_string_member (row, "range"), ==, "work");
  g_assert_cmpint (figure (row, "change", "copies"), ==, -1);
  g_assert_cmpint (figure (row, "change", "copied_bytes"), ==, -16384);

  g_assert_cmpint (total_change (diff, "copies"), ==, -1);
  g_assert_cmpint (total_change (diff, "copied_bytes"), ==, -16384);
  g_assert_cmpint (total_change (diff, "lazy_clones"), ==, 0);
  g_assert_cmpuint (json_array_get_length (rows_of (diff, "warnings")), ==, 0);
  g_assert_cmpuint (json_array_get_length (rows_of (diff, "eager_fallbacks")), ==, 0);

  /* The CI budget: no copied byte more. */
  g_assert_cmpint (cli_fixture_run (cowscope_diff_run, NULL, NULL, "diff", "--fail-if",
                                    "copied_bytes.increase > 0", before, after, NULL), ==, 0);
  g_assert_cmpint (cli_fixture_run (cowscope_diff_run, NULL, NULL, "diff", "--fail-if",
                                    "copied_bytes.increase > 0", after, before, NULL), ==, 3);
  cli_fixture_remove_tree (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

#define ADD(path, func) g_test_add (path, Fixture, NULL, fixture_set_up, func, fixture_tear_down)
  ADD ("/cli/diff/self-is-empty", test_self_is_empty);
  ADD ("/cli/diff/line-shift-matches", test_line_shift_matches);
  ADD ("/cli/diff/nearest-line", test_nearest_line);
  ADD ("/cli/diff/sorted-and-top", test_sorted_and_top);
  ADD ("/cli/diff/warnings", test_warnings);
  ADD ("/cli/diff/eager-fallbacks", test_eager_fallbacks);
  ADD ("/cli/diff/budgets", test_budgets);
  ADD ("/cli/diff/bad-budgets", test_bad_budgets);
  ADD ("/cli/diff/bad-input", test_bad_input);
  ADD ("/cli/diff/older-schema", test_older_schema);
#undef ADD
  g_test_add_func ("/cli/diff/recorded-removed-copy", test_recorded_removed_copy);

  return g_test_run ();
}
