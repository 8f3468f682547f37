/* test-format-check.c — the format's rules on a session's structure and
 * values (cowscope-format-check.h), and the messages for a damaged file:
 * each names the file, the table and the row and says what is wrong
 * (items 6 and 8 of issue 11). */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>

#include "cli-fixture.h"
#include "cowscope-event-chunk.h"
#include "cowscope-format-check.h"
#include "cowscope-format-open.h"

typedef struct {
  char *dir;
  char *path;
} Fixture;

static void
fixture_set_up (Fixture *f, gconstpointer data)
{
  (void) data;
  f->dir = cli_fixture_tmpdir ();
  f->path = g_build_filename (f->dir, "s.cowscope", NULL);
  cli_fixture_write_session (f->path, TRUE, 0);
}

static void
fixture_tear_down (Fixture *f, gconstpointer data)
{
  (void) data;
  cli_fixture_remove_tree (f->dir);
  g_free (f->dir);
  g_free (f->path);
}

/* Checks the whole session at @path: FALSE, with the error. */
static GError *
check_file (const char *path)
{
  GError *error = NULL;
  g_autoptr (sqlite3) db = cowscope_format_open (path, COWSCOPE_FORMAT_OPEN_READ_ONLY, NULL,
                                                 &error);
  if (db == NULL)
    return error;
  if (cowscope_format_check_file (db, path, COWSCOPE_FORMAT_CHECK_ALL, &error))
    return NULL;
  g_assert_nonnull (error);
  return error;
}

/* The session after @sql fails its check with a DAMAGED message that
 * names the file and contains @fragment. */
static void
assert_damaged (Fixture *f, const char *sql, const char *fragment)
{
  g_autoptr (GError) error = NULL;

  g_unlink (f->path);
  cli_fixture_write_session (f->path, TRUE, 0);
  cli_fixture_exec (f->path, sql);
  error = check_file (f->path);
  g_test_message ("%s -> %s", sql, error != NULL ? error->message : "(sound)");
  g_assert_error (error, COWSCOPE_SESSION_ERROR, COWSCOPE_SESSION_ERROR_DAMAGED);
  g_assert_true (g_str_has_prefix (error->message, f->path));
  g_assert_nonnull (strstr (error->message, " is damaged: "));
  g_assert_nonnull (strstr (error->message, fragment));
}

static void
test_sound (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;

  (void) data;
  error = check_file (f->path);
  g_assert_no_error (error);
  g_unlink (f->path);
  cli_fixture_write_session (f->path, FALSE, 200);
  error = check_file (f->path);
  g_assert_no_error (error);
}

/* Issue 11's example: nbytes stored as REAL gave saved_bytes =
 * -9223372036584808351.  Wrong types, ranges and NULLs are named. */
static void
test_column_values (Fixture *f, gconstpointer data)
{
  (void) data;
  assert_damaged (f, "UPDATE materializations SET nbytes = 1e19 WHERE seq = 14",
                  "table 'materializations', row seq 14: nbytes is 1.0e+19, a real number, "
                  "not a count or byte count");
  assert_damaged (f, "UPDATE materializations SET nbytes = 4194304.5 WHERE seq = 17",
                  "row seq 17: nbytes is 4194304.5, a real number");
  assert_damaged (f, "UPDATE materializations SET nbytes = 'lots' WHERE seq = 19",
                  "row seq 19: nbytes is 'lots', text, not a count or byte count");
  assert_damaged (f, "UPDATE materializations SET nbytes = x'00ff' WHERE seq = 19",
                  "row seq 19: nbytes is 2 bytes, a BLOB");
  /* A key that is bytes is written as SQL writes them. */
  assert_damaged (f, "UPDATE stack_frames SET stack_id = x'00ff' WHERE stack_id = 1 AND position = 0",
                  "table 'stack_frames', row stack_id x'00ff', position 0: stack_id is 2 bytes,"
                  " a BLOB, not an integer");
  assert_damaged (f, "UPDATE lazy_clones SET nbytes = -4096 WHERE seq = 9",
                  "table 'lazy_clones', row seq 9: nbytes is -4096, not a count or byte count "
                  "(0 to 281474976710656)");
  assert_damaged (f, "UPDATE lazy_clones SET nbytes = 9223372036854775807 WHERE seq = 6",
                  "row seq 6: nbytes is 9223372036854775807, not a count");
  assert_damaged (f, "UPDATE materializations SET lock_wait_ns = -1 WHERE seq = 14",
                  "row seq 14: lock_wait_ns is -1, not a time in ns");
  assert_damaged (f, "UPDATE materializations SET copy_discarded = 7 WHERE seq = 14",
                  "copy_discarded is 7, not a flag (0 or 1)");
  assert_damaged (f, "UPDATE threads SET dropped = -3 WHERE tid = 101",
                  "table 'threads', row pid 100, tid 101: dropped is -3");
  assert_damaged (f, "UPDATE cuda_activity SET end_ns = 'soon' WHERE id = 1",
                  "table 'cuda_activity', row id 1: end_ns is 'soon', text");
}

/* Events are append-only rows read from packed chunks: what a hostile
 * file damages is the chunk table.  Each damaged chunk is named by its
 * row, with what is wrong with it. */
static void
test_damaged_event_chunks (Fixture *f, gconstpointer data)
{
  static const char *const cases[][2] = {
    { "UPDATE event_chunks SET data = substr (data, 1, length (data) - 3)",
      "compressed data is damaged" },
    { "UPDATE event_chunks SET data = x'00'", "is truncated" },
    { "UPDATE event_chunks SET data = CAST (x'07' || substr (data, 2) AS BLOB)", "has an unknown encoding" },
    /* A raw body whose length byte lies. */
    { "UPDATE event_chunks SET data = x'0005010203'", "has the wrong length" },
    /* A length varint that never ends (ten 0xff bytes and more). */
    { "UPDATE event_chunks SET data = x'00ffffffffffffffffffffffff01'", "event chunk" },
    { "UPDATE event_chunks SET data = x'012028b52ffd0000000000000000000000000000'",
      "compressed data" },
    /* A raw body that claims 60000 events but holds three bytes. */
    { "UPDATE event_chunks SET data = x'000501e0d40300'", "do not add up" },
    { "UPDATE event_chunks SET n = n + 1", "does not hold the events its row names" },
    { "UPDATE event_chunks SET last_seq = last_seq + 7", "does not hold the events its row names" },
    { "UPDATE event_chunks SET data = 'text'", "row first_seq 1: data is not packed data" },
    /* What readers skip chunks by, without decoding them. */
    { "UPDATE event_chunks SET types = 0", "times or types are not what its row says" },
    { "UPDATE event_chunks SET max_ts = max_ts + 1", "times or types are not what its row says" },
    { "UPDATE event_chunks SET sorted = 1 - sorted", "times or types are not what its row says" },
    /* Two chunks with the same events (the second a copy, its seqs
     * overlapping the first's). */
    { "INSERT INTO event_chunks SELECT first_seq + 1, last_seq + 1, n, min_ts, max_ts, sorted,"
      " types, data FROM event_chunks", "table 'event_chunks'" },
  };

  (void) data;
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    assert_damaged (f, cases[i][0], cases[i][1]);
  /* Values of the chunk table's own columns. */
  assert_damaged (f, "UPDATE event_chunks SET sorted = 281474976710657",
                  "table 'event_chunks', row first_seq 1: sorted is 281474976710657, not a flag");
  assert_damaged (f, "UPDATE event_chunks SET n = 'many'",
                  "table 'event_chunks', row first_seq 1: n is 'many', text");
  /* The row is named as the other tables' rows are. */
  assert_damaged (f, "UPDATE event_chunks SET data = x'00'",
                  "table 'event_chunks', row first_seq 1 (events 1 to ");
}

/* A second chunk, sound in itself and true to its row, whose events
 * overlap the first's (seqs 20 to 25 again): the events would be read
 * twice. */
static void
test_overlapping_event_chunks (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (CowscopeEventBlock) block = cowscope_event_block_new (6);
  g_autoptr (CowscopeEventEncoder) encoder = cowscope_event_encoder_new ();
  sqlite3 *db = NULL;
  sqlite3_stmt *stmt = NULL;
  CowscopeEventSummary sum;
  gsize len = 0;

  (void) data;
  for (gint64 seq = 20; seq <= 25; seq++)
    {
      CowscopeEventRow row = { { 0 }, COWSCOPE_EVENT_NULL_STACK };
      row.col[COWSCOPE_EVENT_COL_SEQ] = seq;
      row.col[COWSCOPE_EVENT_COL_TS] = 1000 + seq;
      row.col[COWSCOPE_EVENT_COL_PID] = 100;
      row.col[COWSCOPE_EVENT_COL_TID] = 100;
      cowscope_event_block_append (block, &row);
    }
  cowscope_event_block_summary (block, block->n, &sum);
  const guint8 *blob = cowscope_event_encode (encoder, block, block->n, &len);
  g_assert_cmpint (sqlite3_open (f->path, &db), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_prepare_v2 (db, "INSERT INTO event_chunks VALUES (20, 25, 6, ?1, ?2, ?3,"
                                           " ?4, ?5)", -1, &stmt, NULL), ==, SQLITE_OK);
  sqlite3_bind_int64 (stmt, 1, sum.min_ts);
  sqlite3_bind_int64 (stmt, 2, sum.max_ts);
  sqlite3_bind_int (stmt, 3, sum.sorted);
  sqlite3_bind_int64 (stmt, 4, (sqlite3_int64) sum.types);
  sqlite3_bind_blob (stmt, 5, blob, (int) len, SQLITE_STATIC);
  g_assert_cmpint (sqlite3_step (stmt), ==, SQLITE_DONE);
  sqlite3_finalize (stmt);
  sqlite3_close (db);

  error = check_file (f->path);
  g_test_message ("%s", error != NULL ? error->message : "(sound)");
  g_assert_error (error, COWSCOPE_SESSION_ERROR, COWSCOPE_SESSION_ERROR_DAMAGED);
  g_assert_nonnull (strstr (error->message,
                            " is damaged: table 'event_chunks', row first_seq 20 (events 20 to 25): "
                            "its events overlap the chunk before"));
}

/* NULL where the schema says NOT NULL, written by a tool that changed
 * the schema (a hostile file can hold anything). */
static void
test_null_value (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;

  (void) data;
  cli_fixture_exec (f->path,
                    "PRAGMA writable_schema = ON;"
                    "UPDATE sqlite_master SET sql = replace (sql, 'NOT NULL DEFAULT 0', '')"
                    " WHERE name = 'threads';");
  cli_fixture_exec (f->path, "UPDATE threads SET produced = NULL WHERE tid = 100");
  error = check_file (f->path);
  g_assert_error (error, COWSCOPE_SESSION_ERROR, COWSCOPE_SESSION_ERROR_DAMAGED);
  g_assert_nonnull (strstr (error->message,
                            "table 'threads', row pid 100, tid 100: produced is NULL, not a count"));
}

static void
test_meta_counts (Fixture *f, gconstpointer data)
{
  (void) data;
  assert_damaged (f, "INSERT OR REPLACE INTO meta VALUES ('dropped', -5)",
                  "table 'meta', key dropped: '-5' is not a count");
  assert_damaged (f, "INSERT OR REPLACE INTO meta VALUES ('produced', 1.5)",
                  "table 'meta', key produced: '1.5' is not a count");
}

/* Parent links that loop: no reader follows them, and the check itself
 * ends (bounded depth). */
static void
test_parent_cycles (Fixture *f, gconstpointer data)
{
  (void) data;
  assert_damaged (f, "UPDATE ranges SET parent_id = 2 WHERE id = 1;"
                     "UPDATE ranges SET parent_id = 1 WHERE id = 2;",
                  "table 'ranges', row pid 100, id 1: its parent_id chain leads back to itself");
  assert_damaged (f, "UPDATE tensors SET base_tensor_id = id",
                  "table 'tensors', row pid 100, id 1: its base_tensor_id chain leads back");
  assert_damaged (f, "UPDATE tensors SET base_tensor_id = (id % 4) + 1",
                  "its base_tensor_id chain leads back to itself");
}

/* A table whose columns are not the schema's. */
static void
test_missing_column (Fixture *f, gconstpointer data)
{
  (void) data;
  assert_damaged (f, "ALTER TABLE materializations DROP COLUMN lock_wait_ns",
                  "table 'materializations' has no column 'lock_wait_ns'");
}

/* Item 8: a schema entry SQLite cannot parse is named, never quoted. */
static void
test_unparsable_schema (Fixture *f, gconstpointer data)
{
  GError *error = NULL;

  (void) data;
  cli_fixture_exec (f->path,
                    "PRAGMA writable_schema = ON;"
                    "UPDATE sqlite_master SET sql = 'CREATE TABLE threads (pid INTEGER, \"\x01'"
                    " WHERE name = 'threads';");
  g_autoptr (sqlite3) db = cowscope_format_open (f->path, COWSCOPE_FORMAT_OPEN_READ_ONLY, NULL,
                                                 &error);
  g_assert_null (db);
  g_assert_error (error, COWSCOPE_SESSION_ERROR, COWSCOPE_SESSION_ERROR_DAMAGED);
  g_assert_cmpstr (strstr (error->message, " is damaged: "), ==,
                   " is damaged: its schema cannot be read (the definition of 'threads')");
  g_assert_null (strstr (error->message, "unrecognized token"));
  g_assert_null (strchr (error->message, '\x01'));
  g_clear_error (&error);
}

/* Item 8: damaged pages are named by the table they belong to, with
 * what quick_check found. */
static void
test_damaged_page_names_table (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *contents = NULL;
  gsize length = 0;

  (void) data;
  g_unlink (f->path);
  cli_fixture_write_session (f->path, TRUE, 3000);
  /* The leaf pages of `event_chunks` hold the events: overwrite one's
   * cell pointers with garbage (page 1 holds the schema, so the file
   * opens). */
  g_autoptr (sqlite3) raw = NULL;
  g_assert_cmpint (sqlite3_open (f->path, &raw), ==, SQLITE_OK);
  sqlite3_stmt *stmt = NULL;
  g_assert_cmpint (sqlite3_prepare_v2 (raw,
                                       "SELECT pageno, (SELECT page_size FROM pragma_page_size)"
                                       " FROM dbstat WHERE name = 'event_chunks' AND pagetype = 'leaf'"
                                       " ORDER BY pageno LIMIT 1", -1, &stmt, NULL),
                   ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_step (stmt), ==, SQLITE_ROW);
  gint64 page = sqlite3_column_int64 (stmt, 0);
  gint64 page_size = sqlite3_column_int64 (stmt, 1);
  sqlite3_finalize (stmt);
  g_clear_pointer (&raw, sqlite3_close);
  g_assert_true (g_file_get_contents (f->path, &contents, &length, NULL));
  g_assert_cmpint ((page - 1) * page_size + 64, <, (gint64) length);
  memset (contents + (page - 1) * page_size + 8, 0xee, 32);
  g_assert_true (g_file_set_contents (f->path, contents, length, NULL));

  error = check_file (f->path);
  g_assert_error (error, COWSCOPE_SESSION_ERROR, COWSCOPE_SESSION_ERROR_DAMAGED);
  g_test_message ("%s", error->message);
  g_assert_nonnull (strstr (error->message, " is damaged: table 'event_chunks': "));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

#define ADD(path, func) g_test_add (path, Fixture, NULL, fixture_set_up, func, fixture_tear_down)
  ADD ("/format/check/sound", test_sound);
  ADD ("/format/check/column-values", test_column_values);
  ADD ("/format/check/damaged-event-chunks", test_damaged_event_chunks);
  ADD ("/format/check/overlapping-event-chunks", test_overlapping_event_chunks);
  ADD ("/format/check/null-value", test_null_value);
  ADD ("/format/check/meta-counts", test_meta_counts);
  ADD ("/format/check/parent-cycles", test_parent_cycles);
  ADD ("/format/check/missing-column", test_missing_column);
  ADD ("/format/check/unparsable-schema", test_unparsable_schema);
  ADD ("/format/check/damaged-page-names-table", test_damaged_page_names_table);
#undef ADD
  return g_test_run ();
}
