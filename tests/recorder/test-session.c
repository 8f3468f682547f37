/* test-session.c — the recorder's writer, collector and finalizer, in
 * process: the test is its own target.  A trace sink writes the engine's
 * events (and a call stack after each stack-carrying one) into a ring
 * exactly as the probe does; the collector drains it into a session,
 * which is then finalized and checked row by row. */
#include <execinfo.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <sqlite3.h>
#include <string.h>
#include <unistd.h>

#include "cowscope-collector.h"
#include "cowscope-protocol.h"
#include "cowscope-ring.h"
#include "cowscope-session-finalize.h"
#include "cowscope-format-schema.h"
#include "cowscope-session-writer.h"
#include "cowtensor.h"

static CowscopeRing *sink_ring;
static gboolean sink_stacks;

static void
sink_event (const CowTraceEvent *event, void *user_data)
{
  (void) user_data;
  cowscope_ring_write_event (sink_ring, event);
  if (!sink_stacks)
    return;
  switch (event->type)
    {
    case COW_EVENT_LAZY_CLONE:
    case COW_EVENT_MATERIALIZE_BEGIN:
    case COW_EVENT_MATERIALIZE_END:
      {
        void *frames[COWSCOPE_MAX_STACK_DEPTH];
        int n = backtrace (frames, COWSCOPE_MAX_STACK_DEPTH);
        size_t size = sizeof (CowscopeRingBlobHeader) + sizeof (CowscopeStackBlob)
                      + (size_t) n * sizeof (uint64_t);
        uint8_t *p = cowscope_ring_reserve (sink_ring, COWSCOPE_RING_KIND_BLOB, size);
        if (!p)
          return;
        CowscopeRingBlobHeader bh = { COWSCOPE_RING_BLOB_STACK, 0 };
        CowscopeStackBlob sb = { event->time_ns, event->type, (uint32_t) n };
        memcpy (p, &bh, sizeof bh);
        memcpy (p + sizeof bh, &sb, sizeof sb);
        for (int i = 0; i < n; i++)
          {
            uint64_t a = (uint64_t) (uintptr_t) frames[i];
            memcpy (p + sizeof bh + sizeof sb + (size_t) i * 8, &a, 8);
          }
        cowscope_ring_commit (sink_ring);
      }
      break;
    default:
      break;
    }
}

static void
sink_string (uint64_t id, const char *text, size_t length, void *user_data)
{
  (void) user_data;
  cowscope_ring_write_string (sink_ring, id, text, length);
}

static const CowTraceSink test_sink = { sink_event, sink_string, NULL };

static int64_t
query_int (sqlite3 *db, const char *sql)
{
  sqlite3_stmt *s;
  int64_t v = -1;
  g_assert_cmpint (sqlite3_prepare_v2 (db, sql, -1, &s, NULL), ==, SQLITE_OK);
  if (sqlite3_step (s) == SQLITE_ROW)
    v = sqlite3_column_int64 (s, 0);
  sqlite3_finalize (s);
  return v;
}

static char *
query_text (sqlite3 *db, const char *sql)
{
  sqlite3_stmt *s;
  char *v = NULL;
  g_assert_cmpint (sqlite3_prepare_v2 (db, sql, -1, &s, NULL), ==, SQLITE_OK);
  if (sqlite3_step (s) == SQLITE_ROW && sqlite3_column_type (s, 0) != SQLITE_NULL)
    v = g_strdup ((const char *) sqlite3_column_text (s, 0));
  sqlite3_finalize (s);
  return v;
}

/* The workload: one lazy clone, written through (copy), then the source
 * written (it is alone by then: no copy), named tensors, a range, marks. */
__attribute__ ((noinline)) static void
workload_lazy_then_write (int marks)
{
  CowError err = { 0 };
  int64_t n = 1024;
  uint64_t r = cow_range_push ("workload");
  CowTensor *a = cow_tensor_zeros (1, &n, COW_DTYPE_F32, &err);
  g_assert_nonnull (a);
  cow_tensor_set_name (a, "weights");
  CowTensor *b = cow_tensor_lazy_clone (a, &err);
  g_assert_nonnull (b);
  cow_tensor_set_name (b, "checkpoint");
  g_assert_cmpint (cow_tensor_fill_ (b, 1.0, &err), ==, COW_OK);
  g_assert_cmpint (cow_tensor_fill_ (a, 2.0, &err), ==, COW_OK);
  for (int i = 0; i < marks; i++)
    cow_mark ("tick");
  cow_tensor_unref (b);
  cow_tensor_unref (a);
  cow_range_pop ();
  (void) r;
}

static char *
read_maps (void)
{
  char *maps = NULL;
  g_assert_true (g_file_get_contents ("/proc/self/maps", &maps, NULL, NULL));
  return maps;
}

/* Called on the recorded database just before it is finalized. */
typedef void (*BeforeFinalize) (sqlite3 *db);

/* Records the workload into @path; returns the collector's totals. */
static void
record_in_process (const char *path, int marks, gboolean stacks, CowscopeCollectorTotals *totals,
                   BeforeFinalize before_finalize)
{
  GError *error = NULL;
  CowError err = { 0 };
  CowscopeSessionWriter *w = cowscope_session_writer_create (path, TRUE, &error);
  g_assert_no_error (error);
  CowscopeCollector *c = cowscope_collector_new (w, stacks);

  sink_ring = cowscope_ring_new (1 << 16, COWSCOPE_RING_BLOCK, &err);
  g_assert_nonnull (sink_ring);
  sink_stacks = stacks;
  CowscopeRing *reader = cowscope_ring_map_fd (cowscope_ring_get_fd (sink_ring), &err);
  g_assert_nonnull (reader);
  uint32_t pid = (uint32_t) getpid ();
  g_autofree char *maps = read_maps ();
  CowscopeProcessIdentity id = { .pid = pid, .ppid = (uint32_t) getppid (),
                                 .exe = "/proc/self/exe", .cmdline = "test", .identity = "kernel" };
  cowscope_collector_add_process (c, &id, 0);
  cowscope_collector_add_maps (c, pid, 1, maps);
  cowscope_collector_add_ring (c, pid, (uint32_t) gettid (), "test", reader);

  cow_trace_set_sink (&test_sink);
  workload_lazy_then_write (marks);
  cow_trace_set_sink (NULL);

  cowscope_collector_process_end (c, pid, cow_trace_now_ns (), "exited", 0, -1);
  g_assert_true (cowscope_collector_finish (c, totals, &error));
  g_assert_no_error (error);
  w = cowscope_collector_get_writer (c);
  g_assert_true (cowscope_session_writer_meta_text (w, "target_end", "exited", &error));
  g_assert_true (cowscope_session_writer_commit (w, &error));
  if (before_finalize != NULL)
    before_finalize (cowscope_session_writer_get_db (w));
  gboolean finalized = cowscope_session_finalize (cowscope_session_writer_get_db (w), path, &error);
  g_assert_no_error (error);
  g_assert_true (finalized);
  cowscope_collector_free (c);
  cowscope_ring_free (sink_ring);
  sink_ring = NULL;
}

static void
test_derived_tables (void)
{
  g_autofree char *dir = g_dir_make_tmp ("cowscope-test-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "s.cowscope", NULL);
  CowscopeCollectorTotals t;
  record_in_process (path, 3, TRUE, &t, NULL);
  g_assert_cmpuint (t.produced, ==, t.stored + t.dropped);
  g_assert_cmpuint (t.dropped, ==, 0);

  sqlite3 *db;
  g_assert_cmpint (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  g_autofree char *check = query_text (db, "PRAGMA integrity_check");
  g_assert_cmpstr (check, ==, "ok");
  g_assert_cmpint (query_int (db, "PRAGMA user_version"), ==, cowscope_format_schema_version ());
  g_assert_cmpint (query_int (db, "SELECT value FROM meta WHERE key = 'finalized'"), ==, 1);
  g_autofree char *journal = query_text (db, "PRAGMA journal_mode");
  g_assert_cmpstr (journal, ==, "delete");

  /* One lazy clone with its context; the clone's write copies. */
  g_assert_cmpint (query_int (db, "SELECT count(*) FROM lazy_clones WHERE context_id IS NOT NULL"),
                   ==, 1);
  g_assert_cmpint (query_int (db, "SELECT nbytes FROM lazy_clones"), ==, 4096);
  g_assert_cmpint (query_int (db, "SELECT count(*) FROM materializations WHERE kind = 1"), >=, 1);
  g_assert_cmpint (query_int (db, "SELECT count(*) FROM materializations m JOIN lazy_clones l"
                                  " ON l.seq = m.lazy_clone_seq"),
                   ==, query_int (db, "SELECT count(*) FROM materializations"));
  g_assert_cmpint (query_int (db, "SELECT count(*) FROM materializations WHERE end_ts IS NULL"),
                   ==, 0);
  g_autofree char *name = query_text (db, "SELECT t.name FROM tensors t JOIN lazy_clones l"
                                          " ON l.result_tensor_id = t.id");
  g_assert_cmpstr (name, ==, "checkpoint");
  g_assert_cmpint (query_int (db, "SELECT count(*) FROM tensors WHERE free_ts IS NULL"), ==, 0);
  g_assert_cmpint (query_int (db, "SELECT count(*) FROM marks WHERE name = 'tick'"), ==, 3);
  g_assert_cmpint (query_int (db, "SELECT count(*) FROM marks m JOIN ranges r ON r.id = m.range_id"
                                  " WHERE r.name = 'workload'"), ==, 3);
  g_assert_cmpint (query_int (db, "SELECT count(*) FROM ranges WHERE end_ts IS NOT NULL"), ==, 1);
  g_assert_cmpint (query_int (db, "SELECT max_refcount FROM contexts"), >=, 2);
  g_assert_cmpint (query_int (db, "SELECT count(*) FROM ops"), ==, COW_N_OPS);
  g_assert_cmpint (query_int (db, "SELECT count(*) FROM event_types"), ==, COW_N_EVENT_TYPES);

  /* Stacks: attached, interned, and symbolized to this file's function. */
  g_assert_cmpint (query_int (db, "SELECT count(*) FROM lazy_clones WHERE stack_id IS NOT NULL"),
                   ==, 1);
  g_assert_cmpint (query_int (db, "SELECT count(*) FROM frames WHERE function ="
                                  " 'workload_lazy_then_write'"), >=, 1);
  g_assert_cmpint (query_int (db, "SELECT count(*) FROM frames WHERE function ="
                                  " 'workload_lazy_then_write' AND file LIKE '%test-session.c'"
                                  " AND line > 0"), >=, 1);

  /* Threads: produced = stored + dropped, and it matches the totals. */
  g_assert_cmpint (query_int (db, "SELECT count(*) FROM threads WHERE produced != stored + dropped"),
                   ==, 0);
  g_assert_cmpint (query_int (db, "SELECT value FROM meta WHERE key = 'produced'"), ==,
                   (int64_t) t.produced);
  sqlite3_close (db);

  /* Finalizing again gives the same tables. */
  GError *error = NULL;
  g_assert_true (cowscope_session_finalize_file (path, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  g_assert_cmpint (query_int (db, "SELECT count(*) FROM lazy_clones"), ==, 1);
  g_assert_cmpint (query_int (db, "SELECT count(*) FROM marks"), ==, 3);
  sqlite3_close (db);

  g_remove (path);
  g_rmdir (dir);
}

static void
test_checkpoints (void)
{
  g_autofree char *dir = g_dir_make_tmp ("cowscope-test-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "s.cowscope", NULL);
  CowscopeCollectorTotals t;
  record_in_process (path, COWSCOPE_CHECKPOINT_INTERVAL + 100, FALSE, &t, NULL);
  g_assert_cmpuint (t.dropped, ==, 0);
  sqlite3 *db;
  g_assert_cmpint (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  g_assert_cmpint (query_int (db, "SELECT count(*) FROM checkpoints"), ==, 1);
  g_assert_cmpint (query_int (db, "SELECT seq FROM checkpoints"), ==, COWSCOPE_CHECKPOINT_INTERVAL);
  /* Both tensors are alive during the marks. */
  g_assert_cmpint (query_int (db, "SELECT count(*) FROM checkpoint_objects WHERE kind = 'tensor'"),
                   ==, 2);
  g_assert_cmpint (query_int (db, "SELECT count(*) FROM events WHERE stack_id IS NOT NULL"), ==, 0);
  sqlite3_close (db);
  g_remove (path);
  g_rmdir (dir);
}

static void
test_existing_file (void)
{
  g_autofree char *dir = g_dir_make_tmp ("cowscope-test-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "s.cowscope", NULL);
  g_assert_true (g_file_set_contents (path, "precious", -1, NULL));
  GError *error = NULL;
  CowscopeSessionWriter *w = cowscope_session_writer_create (path, FALSE, &error);
  g_assert_null (w);
  g_assert_nonnull (error);
  g_assert_nonnull (strstr (error->message, "already exists"));
  g_clear_error (&error);
  g_autofree char *contents = NULL;
  g_assert_true (g_file_get_contents (path, &contents, NULL, NULL));
  g_assert_cmpstr (contents, ==, "precious");

  /* A file that is not a session cannot be finalized. */
  g_assert_false (cowscope_session_finalize_file (path, NULL, &error));
  g_assert_nonnull (error);
  g_clear_error (&error);

  w = cowscope_session_writer_create (path, TRUE, &error);
  g_assert_no_error (error);
  cowscope_session_writer_close (w);
  g_remove (path);
  g_rmdir (dir);
}

static void
test_discard_leaves_nothing (void)
{
  g_autofree char *dir = g_dir_make_tmp ("cowscope-test-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "s.cowscope", NULL);
  GError *error = NULL;
  CowscopeSessionWriter *w = cowscope_session_writer_create (path, FALSE, &error);
  g_assert_no_error (error);
  cowscope_session_writer_discard (w);
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
  g_autofree char *wal = g_strconcat (path, "-wal", NULL);
  g_assert_false (g_file_test (wal, G_FILE_TEST_EXISTS));
  g_rmdir (dir);
}

/* What CUPTI gives for a device materialization's copy, as the probe
 * tags it: an external-correlation record (kind 6) holding the begin
 * event's timestamp, and a memcpy with the same correlation id; plus a
 * memcpy nobody tagged. */
static void
add_cuda_records (sqlite3 *db)
{
  gint64 begin_ts = query_int (db, "SELECT ts FROM events WHERE type = 14 ORDER BY ts LIMIT 1");
  g_assert_cmpint (begin_ts, >, 0);
  g_autofree char *sql = g_strdup_printf (
    "INSERT INTO cuda_activity (pid, kind, start_ns, end_ns, correlation_id, external_id)"
    " SELECT pid, 6, 0, 0, 42, %1$" G_GINT64_FORMAT " FROM events WHERE type = 14 LIMIT 1;"
    "INSERT INTO cuda_activity (pid, kind, start_ns, end_ns, bytes, correlation_id)"
    " SELECT pid, 1, %1$" G_GINT64_FORMAT " + 10, %1$" G_GINT64_FORMAT " + 20, 4096, 42"
    " FROM events WHERE type = 14 LIMIT 1;"
    "INSERT INTO cuda_activity (pid, kind, start_ns, end_ns, bytes, correlation_id)"
    " SELECT pid, 1, 5, 6, 8, 43 FROM events LIMIT 1;", begin_ts);
  g_assert_cmpint (sqlite3_exec (db, sql, NULL, NULL, NULL), ==, SQLITE_OK);
}

/* Finalize gives a tagged CUDA copy the seq of the materialization that
 * issued it (the seq the app's explanation and the trace export join on). */
static void
test_cuda_correlation (void)
{
  g_autofree char *dir = g_dir_make_tmp ("cowscope-test-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "s.cowscope", NULL);
  CowscopeCollectorTotals t;
  record_in_process (path, 0, FALSE, &t, add_cuda_records);

  sqlite3 *db;
  g_assert_cmpint (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  gint64 mat_seq = query_int (db, "SELECT seq FROM materializations ORDER BY begin_ts LIMIT 1");
  g_assert_cmpint (mat_seq, >, 0);
  g_assert_cmpint (query_int (db, "SELECT external_id FROM cuda_activity WHERE correlation_id = 42"
                                  " AND kind = 1"), ==, mat_seq);
  g_assert_cmpint (query_int (db, "SELECT external_id IS NULL FROM cuda_activity"
                                  " WHERE correlation_id = 43"), ==, 1);
  sqlite3_close (db);
  g_unlink (path);
  g_rmdir (dir);
}

/* Writes a LAZY_CLONE event at @time_ns into @ring, followed by the
 * blob @type with @body (@size bytes). */
static void
write_clone_with_blob (CowscopeRing *ring, int64_t time_ns, uint32_t type, const void *body,
                       size_t size)
{
  CowTraceEvent e = { .type = COW_EVENT_LAZY_CLONE, .pid = (uint32_t) getpid (),
                      .tid = (uint32_t) gettid (), .time_ns = time_ns };
  g_assert_true (cowscope_ring_write_event (ring, &e));
  uint8_t *p = cowscope_ring_reserve (ring, COWSCOPE_RING_KIND_BLOB,
                                      sizeof (CowscopeRingBlobHeader) + size);
  g_assert_nonnull (p);
  CowscopeRingBlobHeader bh = { type, 0 };
  memcpy (p, &bh, sizeof bh);
  memcpy (p + sizeof bh, body, size);
  cowscope_ring_commit (ring);
}

/* The probe's interned stacks: a STACK_DEF gives its key's frames, a
 * later STACK_REF with that key the same stack; a REF to a key the ring
 * never defined is malformed and leaves its event without a stack. */
static void
test_stack_keys (void)
{
  g_autofree char *dir = g_dir_make_tmp ("cowscope-test-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "s.cowscope", NULL);
  GError *error = NULL;
  CowError err = { 0 };
  CowscopeSessionWriter *w = cowscope_session_writer_create (path, TRUE, &error);
  g_assert_no_error (error);
  CowscopeCollector *c = cowscope_collector_new (w, TRUE);
  CowscopeRing *ring = cowscope_ring_new (1 << 16, COWSCOPE_RING_BLOCK, &err);
  g_assert_nonnull (ring);
  CowscopeRing *reader = cowscope_ring_map_fd (cowscope_ring_get_fd (ring), &err);
  g_assert_nonnull (reader);
  uint32_t pid = (uint32_t) getpid ();
  CowscopeProcessIdentity id = { .pid = pid, .ppid = (uint32_t) getppid (),
                                 .exe = "/proc/self/exe", .cmdline = "test", .identity = "kernel" };
  cowscope_collector_add_process (c, &id, 0);
  cowscope_collector_add_ring (c, pid, (uint32_t) gettid (), "test", reader);

  struct {
    CowscopeStackDefBlob def;
    uint64_t frames[2];
  } def = { { 100, COW_EVENT_LAZY_CLONE, 2, 7 }, { 0x1000, 0x2000 } };
  write_clone_with_blob (ring, 100, COWSCOPE_RING_BLOB_STACK_DEF, &def, sizeof def);
  CowscopeStackRefBlob ref = { 200, COW_EVENT_LAZY_CLONE, 0, 7 };
  write_clone_with_blob (ring, 200, COWSCOPE_RING_BLOB_STACK_REF, &ref, sizeof ref);
  CowscopeStackRefBlob stray = { 300, COW_EVENT_LAZY_CLONE, 0, 9 };
  write_clone_with_blob (ring, 300, COWSCOPE_RING_BLOB_STACK_REF, &stray, sizeof stray);
  cowscope_ring_finish (ring);

  CowscopeCollectorTotals t;
  cowscope_collector_process_end (c, pid, 400, "exited", 0, -1);
  g_assert_true (cowscope_collector_finish (c, &t, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (t.malformed, ==, 1);
  w = cowscope_collector_get_writer (c);
  g_assert_true (cowscope_session_writer_commit (w, &error));
  sqlite3 *db = cowscope_session_writer_get_db (w);
  g_autofree char *by_time = g_strdup_printf ("SELECT count(*) FROM events WHERE type = %d",
                                              COW_EVENT_LAZY_CLONE);
  g_assert_cmpint (query_int (db, by_time), ==, 3);
  int64_t first = query_int (db, "SELECT stack_id FROM events WHERE ts = 100");
  g_assert_cmpint (first, >, 0);
  g_assert_cmpint (query_int (db, "SELECT stack_id FROM events WHERE ts = 200"), ==, first);
  g_assert_cmpint (query_int (db, "SELECT count(*) FROM events WHERE ts = 300"
                                  " AND stack_id IS NULL"), ==, 1);
  cowscope_collector_free (c);
  cowscope_ring_free (ring);
  g_remove (path);
  g_rmdir (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/recorder/session/derived-tables", test_derived_tables);
  g_test_add_func ("/recorder/session/checkpoints", test_checkpoints);
  g_test_add_func ("/recorder/session/cuda-correlation", test_cuda_correlation);
  g_test_add_func ("/recorder/session/existing-file", test_existing_file);
  g_test_add_func ("/recorder/session/discard-leaves-nothing", test_discard_leaves_nothing);
  g_test_add_func ("/recorder/session/stack-keys", test_stack_keys);
  return g_test_run ();
}
