/* test-cli-finalize.c — `cowscope-cli finalize` on damaged sessions
 * (item 5 of issue 11: after a few flipped bytes in an index page it
 * exited 0 and left a file that failed integrity_check).  It checks
 * before and after, rebuilds what is derived from the recorded tables,
 * refuses damage in what was recorded, and never exits 0 on a file that
 * fails integrity_check. */
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <string.h>
#include <unistd.h>

#include "cli-fixture.h"
#include "cowscope-cli-commands.h"

typedef struct {
  char *dir;
  char *path;
  char *kept; /* PATH.damaged */
} Fixture;

static int finalize (const char *path, char **err);

/* The known session (cli-fixture.h); a finalized one as `finalize` makes
 * it, its indexes and packed summaries included. */
static void
write_session (const char *path, gboolean finalized)
{
  g_autofree char *err = NULL;
  g_unlink (path);
  cli_fixture_write_session (path, FALSE, 2000);
  if (!finalized)
    return;
  g_assert_cmpint (finalize (path, &err), ==, 0);
  g_assert_null (strstr (err, "repair"));
}

static void
fixture_set_up (Fixture *f, gconstpointer data)
{
  f->dir = cli_fixture_tmpdir ();
  f->path = g_build_filename (f->dir, "s.cowscope", NULL);
  f->kept = g_strconcat (f->path, ".damaged", NULL);
  write_session (f->path, GPOINTER_TO_INT (data) == 1);
}

static void
fixture_tear_down (Fixture *f, gconstpointer data)
{
  (void) data;
  cli_fixture_remove_tree (f->dir);
  g_free (f->dir);
  g_free (f->path);
  g_free (f->kept);
}

#define FINALIZED GINT_TO_POINTER (1)
#define NOT_FINALIZED GINT_TO_POINTER (2)

static char *
pragma_text (const char *path, const char *pragma)
{
  sqlite3 *db = NULL;
  sqlite3_stmt *stmt = NULL;
  char *text = NULL;
  g_assert_cmpint (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  if (sqlite3_prepare_v2 (db, pragma, -1, &stmt, NULL) == SQLITE_OK
      && sqlite3_step (stmt) == SQLITE_ROW)
    text = g_strdup ((const char *) sqlite3_column_text (stmt, 0));
  else
    text = g_strdup (sqlite3_errmsg (db));
  sqlite3_finalize (stmt);
  sqlite3_close (db);
  return text;
}

/* The first page of b-tree @name and the page size. */
static gint64
page_of (const char *path, const char *name, gint64 *page_size)
{
  sqlite3 *db = NULL;
  sqlite3_stmt *stmt = NULL;
  g_assert_cmpint (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_prepare_v2 (db,
                                       "SELECT max (pageno), (SELECT page_size FROM pragma_page_size)"
                                       " FROM dbstat WHERE name = ?1", -1, &stmt, NULL),
                   ==, SQLITE_OK);
  sqlite3_bind_text (stmt, 1, name, -1, SQLITE_STATIC);
  g_assert_cmpint (sqlite3_step (stmt), ==, SQLITE_ROW);
  gint64 page = sqlite3_column_int64 (stmt, 0);
  *page_size = sqlite3_column_int64 (stmt, 1);
  sqlite3_finalize (stmt);
  sqlite3_close (db);
  g_assert_cmpint (page, >, 1);
  return page;
}

/* Flips the bytes 8..40 of the last page of b-tree @name (its cell
 * pointers and first cells). */
static void
damage_btree (const char *path, const char *name)
{
  gint64 page_size;
  gint64 page = page_of (path, name, &page_size);
  g_autofree char *contents = NULL;
  gsize length = 0;
  g_assert_true (g_file_get_contents (path, &contents, &length, NULL));
  for (gint64 i = 8; i < 40; i++)
    contents[(page - 1) * page_size + i] ^= 0x5a;
  g_assert_true (g_file_set_contents (path, contents, length, NULL));
}

static int
finalize (const char *path, char **err)
{
  return cli_fixture_run (cowscope_finalize_run, NULL, err, "finalize", path, NULL);
}

static char *
report_json (const char *path)
{
  g_autofree char *out = NULL;
  g_assert_cmpint (cli_fixture_run (cowscope_report_run, &out, NULL, "report", "--json", path,
                                    NULL), ==, 0);
  /* The session's path and creation differ between copies. */
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_assert_true (json_parser_load_from_data (parser, out, -1, NULL));
  JsonObject *root = json_node_get_object (json_parser_get_root (parser));
  json_object_remove_member (root, "session");
  json_object_remove_member (root, "warnings");
  json_object_remove_member (json_object_get_object_member (root, "target"), "recorder_killed");
  json_object_remove_member (json_object_get_object_member (root, "target"), "end");
  g_autoptr (JsonGenerator) gen = json_generator_new ();
  json_generator_set_root (gen, json_parser_get_root (parser));
  return json_generator_to_data (gen, NULL);
}

/* Damage in a derived index: rebuilt, the file sound, the damaged one
 * kept aside byte for byte, the report the same as before. */
static void
test_derived_damage_is_repaired (Fixture *f, gconstpointer data)
{
  g_autofree char *before = NULL;
  g_autofree char *err = NULL;
  g_autofree char *damaged = NULL;
  g_autofree char *kept = NULL;
  g_autofree char *check = NULL;
  g_autofree char *after = NULL;
  gsize damaged_len = 0, kept_len = 0;

  (void) data;
  before = report_json (f->path);
  damage_btree (f->path, "materializations_time");
  check = pragma_text (f->path, "PRAGMA quick_check");
  g_assert_cmpstr (check, !=, "ok");
  g_assert_true (g_file_get_contents (f->path, &damaged, &damaged_len, NULL));

  g_assert_cmpint (finalize (f->path, &err), ==, 0);
  g_test_message ("%s", err);
  g_assert_nonnull (strstr (err, "after a repair: "));
  g_assert_nonnull (strstr (err, "is damaged: table 'materializations'"));
  g_assert_nonnull (strstr (err, "kept as "));
  g_clear_pointer (&check, g_free);
  check = pragma_text (f->path, "PRAGMA integrity_check");
  g_assert_cmpstr (check, ==, "ok");
  g_assert_true (g_file_get_contents (f->kept, &kept, &kept_len, NULL));
  g_assert_cmpmem (kept, kept_len, damaged, damaged_len);
  after = report_json (f->path);
  g_assert_cmpstr (after, ==, before);
  g_assert_cmpuint (cli_fixture_count_partial (f->dir), ==, 0);
}

/* An index whose pages are sound but whose entries disagree with its
 * table: quick_check passes, integrity_check does not.  The check after
 * finalizing finds it, and the repair rebuilds it. */
static void
test_index_disagreeing_with_table (Fixture *f, gconstpointer data)
{
  g_autofree char *err = NULL;
  g_autofree char *check = NULL;
  g_autofree char *before = NULL;
  g_autofree char *after = NULL;

  (void) data;
  before = report_json (f->path);
  /* The index of a recorded table (finalizing recreates the derived
   * tables' indexes, so theirs would heal without a repair). */
  cli_fixture_exec (f->path, "PRAGMA writable_schema = ON;"
                             "UPDATE sqlite_master SET sql ="
                             " 'CREATE INDEX event_chunks_catalog ON event_chunks (n)'"
                             " WHERE name = 'event_chunks_catalog';");
  check = pragma_text (f->path, "PRAGMA quick_check");
  g_assert_cmpstr (check, ==, "ok");
  g_clear_pointer (&check, g_free);
  check = pragma_text (f->path, "PRAGMA integrity_check");
  g_assert_cmpstr (check, !=, "ok");

  g_assert_cmpint (finalize (f->path, &err), ==, 0);
  g_test_message ("%s", err);
  g_assert_nonnull (strstr (err, "after a repair: "));
  g_clear_pointer (&check, g_free);
  check = pragma_text (f->path, "PRAGMA integrity_check");
  g_assert_cmpstr (check, ==, "ok");
  /* The repair copied the event chunks once: no event lost or doubled. */
  after = report_json (f->path);
  g_assert_cmpstr (after, ==, before);
}

/* Damage in what was recorded: refused, the file untouched, nothing
 * left beside it. */
static void
test_recorded_damage_is_refused (Fixture *f, gconstpointer data)
{
  g_autofree char *damaged = NULL;
  g_autofree char *after = NULL;
  gsize damaged_len = 0, after_len = 0;
  static const char *const cases[][2] = {
    { "event_chunks", NULL },
    { NULL, "UPDATE event_chunks SET data = substr (data, 1, length (data) / 2)" },
    { NULL, "UPDATE event_chunks SET n = n - 1" },
    { NULL, "UPDATE threads SET stored = -1" },
  };

  (void) data;
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *err = NULL;
      write_session (f->path, GPOINTER_TO_INT (data) == 1);
      if (cases[i][0] != NULL)
        damage_btree (f->path, cases[i][0]);
      else
        cli_fixture_exec (f->path, cases[i][1]);
      g_clear_pointer (&damaged, g_free);
      g_assert_true (g_file_get_contents (f->path, &damaged, &damaged_len, NULL));
      g_assert_cmpint (finalize (f->path, &err), ==, 1);
      g_test_message ("%s", err);
      g_assert_nonnull (strstr (err, " is damaged: "));
      g_assert_nonnull (strstr (err, "finalize cannot repair it: the damage is in what was recorded"));
      g_assert_cmpstr (strchr (err, '\n') + 1, ==, "");
      g_clear_pointer (&after, g_free);
      g_assert_true (g_file_get_contents (f->path, &after, &after_len, NULL));
      g_assert_cmpmem (after, after_len, damaged, damaged_len);
      g_assert_false (g_file_test (f->kept, G_FILE_TEST_EXISTS));
      g_assert_cmpuint (cli_fixture_count_partial (f->dir), ==, 0);
    }
}

/* Whatever bytes are flipped: exit 0 only with a file that passes
 * integrity_check; otherwise the file is as it was. */
static void
test_flipped_bytes (Fixture *f, gconstpointer data)
{
  g_autofree char *pristine = NULL;
  gsize length = 0;
  guint repaired = 0, refused = 0, clean = 0;

  (void) data;
  g_assert_true (g_file_get_contents (f->path, &pristine, &length, NULL));
  for (guint seed = 1; seed <= 40; seed++)
    {
      g_autoptr (GRand) rand = g_rand_new_with_seed (seed);
      g_autofree char *copy = g_memdup2 (pristine, length);
      g_autofree char *err = NULL;
      g_autofree char *after = NULL;
      gsize after_len = 0;
      for (guint k = 0; k < 1 + seed % 6; k++)
        copy[g_rand_int_range (rand, 100, (gint32) length)] ^= (char) (1 << g_rand_int_range (rand, 0, 8));
      g_unlink (f->kept);
      g_assert_true (g_file_set_contents (f->path, copy, length, NULL));
      int status = finalize (f->path, &err);
      g_test_message ("seed %u: %d %s", seed, status, err);
      if (status == 0)
        {
          g_autofree char *check = pragma_text (f->path, "PRAGMA integrity_check");
          g_assert_cmpstr (check, ==, "ok");
          if (strstr (err, "after a repair") != NULL)
            repaired++;
          else
            clean++;
          continue;
        }
      refused++;
      g_assert_cmpint (status, ==, 1);
      g_assert_true (g_file_get_contents (f->path, &after, &after_len, NULL));
      g_assert_cmpmem (after, after_len, copy, length);
      g_assert_false (g_file_test (f->kept, G_FILE_TEST_EXISTS));
    }
  g_test_message ("%u finalized, %u repaired, %u refused", clean, repaired, refused);
  g_assert_cmpuint (cli_fixture_count_partial (f->dir), ==, 0);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

#define ADD(path, data, func) \
  g_test_add (path, Fixture, data, fixture_set_up, func, fixture_tear_down)
  ADD ("/cli/finalize/derived-damage-is-repaired", FINALIZED, test_derived_damage_is_repaired);
  ADD ("/cli/finalize/index-disagreeing-with-table", FINALIZED, test_index_disagreeing_with_table);
  ADD ("/cli/finalize/recorded-damage-is-refused", FINALIZED, test_recorded_damage_is_refused);
  ADD ("/cli/finalize/recorded-damage-is-refused-not-finalized", NOT_FINALIZED,
       test_recorded_damage_is_refused);
  ADD ("/cli/finalize/flipped-bytes", FINALIZED, test_flipped_bytes);
  ADD ("/cli/finalize/flipped-bytes-not-finalized", NOT_FINALIZED, test_flipped_bytes);
#undef ADD
  return g_test_run ();
}
