/* test-format-events.c — reading a session's events back
 * (cowscope-format-events.h): every row once, in seq order, chunk after
 * chunk, each field where the writer put it. */
#include <glib.h>
#include <sqlite3.h>
#include <string.h>

#include "cowscope-format-error.h"
#include "cowscope-format-events.h"
#include "cowscope-format-schema.h"

static sqlite3 *
session_with_events (void)
{
  sqlite3 *db = NULL;

  g_assert_cmpint (sqlite3_open (":memory:", &db), ==, SQLITE_OK);
  g_assert_true (cowscope_format_create_schema (db));
  /* seq 5 is earlier in time than seq 2: the reader follows seq. */
  g_assert_cmpint (sqlite3_exec (db,
    "INSERT INTO events (seq, ts, pid, tid, type, op, aux, v0, v1, v2, v3, v4, stack_id) VALUES"
    " (2, 2000, 100, 101, 7, 3, 1, 11, 12, 13, 14, 15, 9),"
    " (5, 1000, 100, 102, 8, 4, 0, 21, NULL, 23, 0, 25, NULL),"
    " (7, 3000, 200, 201, 1, 0, 2, -1, 0, 0, 0, 0, NULL)",
    NULL, NULL, NULL), ==, SQLITE_OK);
  return db;
}

static void
test_chunks_in_seq_order (void)
{
  sqlite3 *db = session_with_events ();
  g_autoptr (GError) error = NULL;
  g_autoptr (CowscopeFormatEventReader) reader =
    cowscope_format_event_reader_new (db, "test.cowscope", &error);
  CowscopeFormatEventRow rows[2];
  gssize n;

  g_assert_no_error (error);
  n = cowscope_format_event_reader_next (reader, rows, 2, &error);
  g_assert_no_error (error);
  g_assert_cmpint (n, ==, 2);
  g_assert_cmpint (rows[0].event.time_ns, ==, 2000);
  g_assert_cmpuint (rows[0].event.pid, ==, 100);
  g_assert_cmpuint (rows[0].event.tid, ==, 101);
  g_assert_cmpuint (rows[0].event.type, ==, 7);
  g_assert_cmpuint (rows[0].event.op, ==, 3);
  g_assert_cmpuint (rows[0].event.aux, ==, 1);
  for (int i = 0; i < 5; i++)
    g_assert_cmpuint (rows[0].event.v[i], ==, 11 + i);
  g_assert_cmpint (rows[0].stack_id, ==, 9);
  g_assert_cmpint (rows[1].event.time_ns, ==, 1000);
  g_assert_cmpuint (rows[1].event.v[1], ==, 0);
  g_assert_cmpint (rows[1].stack_id, ==, 0);

  n = cowscope_format_event_reader_next (reader, rows, 2, &error);
  g_assert_cmpint (n, ==, 1);
  g_assert_cmpuint (rows[0].event.pid, ==, 200);
  /* A 64-bit value round-trips through SQLite's signed integers. */
  g_assert_cmpuint (rows[0].event.v[0], ==, G_MAXUINT64);

  g_assert_cmpint (cowscope_format_event_reader_next (reader, rows, 2, &error), ==, 0);
  g_assert_cmpint (cowscope_format_event_reader_next (reader, rows, 2, &error), ==, 0);
  g_assert_no_error (error);
  g_clear_pointer (&reader, cowscope_format_event_reader_free);
  sqlite3_close (db);
}

static void
test_no_events_table (void)
{
  sqlite3 *db = NULL;
  g_autoptr (GError) error = NULL;

  g_assert_cmpint (sqlite3_open (":memory:", &db), ==, SQLITE_OK);
  g_assert_null (cowscope_format_event_reader_new (db, "empty.cowscope", &error));
  g_assert_error (error, COWSCOPE_SESSION_ERROR, COWSCOPE_SESSION_ERROR_DAMAGED);
  g_assert_nonnull (strstr (error->message, "empty.cowscope"));
  sqlite3_close (db);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/format/events/chunks-in-seq-order", test_chunks_in_seq_order);
  g_test_add_func ("/format/events/no-events-table", test_no_events_table);
  return g_test_run ();
}
