/* test-session-model.c — the session model without a display: opening
 * and refusing files, time bounds and lanes, timeline aggregation, the
 * sharing graph against a brute-force replay, copy explanations, list
 * models, and asynchronous work reporting through the main context. */
#include <glib/gstdio.h>
#include <sqlite3.h>
#include <string.h>

#include "cowscope-copy-explanation.h"
#include "cowscope-event-item.h"
#include "cowscope-event-list.h"
#include "cowscope-event-pages.h"
#include "cowscope-object-list.h"
#include "cowscope-session-document-private.h"
#include "cowscope-format-error.h"
#include "cowscope-sharing-graph-private.h"
#include "cowscope-stack-frame.h"
#include "cowscope-warning-list.h"
#include "session-fixture.h"

static char *fixture_path;
static SessionFixtureInfo fixture_info;
static CowscopeSessionDocument *fixture_doc;

/* A path in the test's scratch folder. */
static char *
scratch (const char *name)
{
  const char *dir = g_getenv ("COWSCOPE_TEST_TMPDIR");
  g_autofree char *base = g_strdup_printf ("test-session-%d-%s", (int) getpid (), name);
  return g_build_filename (dir ? dir : g_get_tmp_dir (), base, NULL);
}

/* One integer from @sql on the fixture, through a separate connection. */
static gint64
sql_int (const char *path, const char *sql)
{
  sqlite3 *db = NULL;
  g_assert_cmpint (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  sqlite3_stmt *stmt = NULL;
  g_assert_cmpint (sqlite3_prepare_v2 (db, sql, -1, &stmt, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_step (stmt), ==, SQLITE_ROW);
  gint64 value = sqlite3_column_int64 (stmt, 0);
  sqlite3_finalize (stmt);
  sqlite3_close (db);
  return value;
}

/* One text (NULL for SQL NULL or no row) from @sql on the fixture. */
static char *
sql_text (const char *path, const char *sql)
{
  sqlite3 *db = NULL;
  g_assert_cmpint (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  sqlite3_stmt *stmt = NULL;
  g_assert_cmpint (sqlite3_prepare_v2 (db, sql, -1, &stmt, NULL), ==, SQLITE_OK);
  char *value = sqlite3_step (stmt) == SQLITE_ROW && sqlite3_column_type (stmt, 0) != SQLITE_NULL
                  ? g_strdup ((const char *) sqlite3_column_text (stmt, 0)) : NULL;
  sqlite3_finalize (stmt);
  sqlite3_close (db);
  return value;
}

/* ---- opening ---------------------------------------------------------- */

static void
test_bounds_and_lanes (void)
{
  CowscopeSessionDocument *doc = fixture_doc;
  g_assert_cmpint (cowscope_session_document_get_start_ns (doc), ==, fixture_info.start_ns);
  g_assert_cmpint (cowscope_session_document_get_end_ns (doc), ==, fixture_info.end_ns);
  g_assert_cmpuint (cowscope_session_document_get_n_events (doc), ==, fixture_info.n_events);
  g_assert_cmpint (cowscope_session_document_get_first_seq (doc), ==, 1);
  g_assert_cmpint (cowscope_session_document_get_last_seq (doc), ==, (gint64) fixture_info.n_events);
  g_assert_cmpuint (cowscope_session_document_get_n_processes (doc), ==, 2);
  g_assert_cmpuint (cowscope_session_document_get_process (doc, 0)->pid, ==, 1000);
  g_assert_cmpstr (cowscope_session_document_get_meta (doc, "format"), ==, "cowscope-session");

  GListModel *lanes = cowscope_session_document_get_lanes (doc);
  guint threads = 0, cuda = 0, counters = 0, processes = 0;
  guint64 events = 0;
  for (guint i = 0; i < g_list_model_get_n_items (lanes); i++)
    {
      g_autoptr (CowscopeTimelineLane) lane = g_list_model_get_item (lanes, i);
      switch (cowscope_timeline_lane_get_kind (lane))
        {
        case COWSCOPE_LANE_THREAD:
          g_assert_cmpuint (cuda + counters, ==, 0); /* threads come first */
          threads++;
          events += cowscope_timeline_lane_get_n_events (lane);
          {
            g_autofree char *sql = g_strdup_printf (
              "SELECT count(*) FROM events WHERE pid = %u AND tid = %" G_GINT64_FORMAT,
              cowscope_timeline_lane_get_pid (lane), cowscope_timeline_lane_get_tid (lane));
            g_assert_cmpint (cowscope_timeline_lane_get_n_events (lane), ==,
                             sql_int (fixture_path, sql));
          }
          g_assert_nonnull (strstr (cowscope_timeline_lane_get_title (lane), "worker-"));
          break;
        case COWSCOPE_LANE_CUDA_STREAM:
          g_assert_cmpuint (counters, ==, 0);
          cuda++;
          break;
        case COWSCOPE_LANE_COUNTER:
          counters++;
          break;
        case COWSCOPE_LANE_PROCESS:
          g_assert_cmpuint (counters, ==, COWSCOPE_N_COUNTERS); /* process lanes come last */
          processes++;
          break;
        }
    }
  /* Two processes: one process lane each. */
  g_assert_cmpuint (processes, ==, cowscope_session_document_get_n_processes (doc));
  g_assert_cmpuint (threads, ==, fixture_info.n_thread_lanes);
  g_assert_cmpuint (cuda, ==, fixture_info.n_cuda_lanes);
  g_assert_cmpuint (counters, ==, COWSCOPE_N_COUNTERS);
  g_assert_cmpuint (events, ==, fixture_info.n_events);
}

typedef struct {
  GMainLoop *loop;
  GThread *main_thread;
  guint progress_calls;
  double last_fraction;
  gboolean progress_off_thread;
  CowscopeSessionDocument *doc;
  GError *error;
  CowscopeSharingGraph *graph;
  CowscopeCopyExplanation *explanation;
} AsyncState;

static void
on_progress (double fraction, gpointer data)
{
  AsyncState *st = data;
  if (g_thread_self () != st->main_thread)
    st->progress_off_thread = TRUE;
  g_assert_cmpfloat (fraction, >=, st->last_fraction);
  st->last_fraction = fraction;
  st->progress_calls++;
}

static void
on_loaded (GObject *source, GAsyncResult *result, gpointer data)
{
  (void) source;
  AsyncState *st = data;
  g_assert_true (g_thread_self () == st->main_thread);
  st->doc = cowscope_session_document_load_finish (result, &st->error);
  g_main_loop_quit (st->loop);
}

static void
test_load_async (void)
{
  AsyncState st = { .main_thread = g_thread_self () };
  st.loop = g_main_loop_new (NULL, FALSE);
  cowscope_session_document_load_async (fixture_path, NULL, on_progress, &st, NULL, on_loaded,
                                        &st);
  g_main_loop_run (st.loop);
  g_assert_no_error (st.error);
  g_assert_nonnull (st.doc);
  /* Progress is coalesced; the last report may land after the result. */
  while (g_main_context_iteration (NULL, FALSE))
    ;
  g_assert_false (st.progress_off_thread);
  g_assert_cmpuint (st.progress_calls, >=, 1);
  g_assert_cmpfloat (st.last_fraction, ==, 1.0);
  g_assert_cmpuint (cowscope_session_document_get_n_events (st.doc), ==, fixture_info.n_events);
  g_object_unref (st.doc);
  g_main_loop_unref (st.loop);
}

/* Expects @path to be refused with @code, synchronously and async. */
static void
expect_refused (const char *path, int code, const char *fragment)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (CowscopeSessionDocument) doc = cowscope_session_document_load (path, NULL, &error);
  g_assert_null (doc);
  g_assert_error (error, COWSCOPE_SESSION_ERROR, code);
  g_assert_nonnull (strstr (error->message, fragment));

  AsyncState st = { .main_thread = g_thread_self () };
  st.loop = g_main_loop_new (NULL, FALSE);
  cowscope_session_document_load_async (path, NULL, NULL, NULL, NULL, on_loaded, &st);
  g_main_loop_run (st.loop);
  g_assert_null (st.doc);
  g_assert_error (st.error, COWSCOPE_SESSION_ERROR, code);
  g_clear_error (&st.error);
  g_main_loop_unref (st.loop);
}

static void
exec_on (const char *path, const char *sql)
{
  sqlite3 *db = NULL;
  g_assert_cmpint (sqlite3_open (path, &db), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_exec (db, sql, NULL, NULL, NULL), ==, SQLITE_OK);
  sqlite3_close (db);
}

static void
test_bad_files (void)
{
  g_autofree char *missing = scratch ("missing.cowscope");
  expect_refused (missing, COWSCOPE_SESSION_ERROR_NOT_FOUND, "missing.cowscope");

  g_autofree char *text = scratch ("text.cowscope");
  g_assert_true (g_file_set_contents (text, "hello, not a database\n", -1, NULL));
  expect_refused (text, COWSCOPE_SESSION_ERROR_NOT_SQLITE, "not an SQLite database");

  g_autofree char *empty = scratch ("empty.cowscope");
  g_assert_true (g_file_set_contents (empty, "", 0, NULL));
  expect_refused (empty, COWSCOPE_SESSION_ERROR_NOT_SQLITE, "is empty");

  g_autofree char *other = scratch ("other.sqlite");
  g_unlink (other);
  exec_on (other, "CREATE TABLE songs (title TEXT); INSERT INTO songs VALUES ('x');");
  expect_refused (other, COWSCOPE_SESSION_ERROR_NOT_SESSION, "not a Cowscope session");

  /* Truncated: the first half of a real session. */
  g_autofree char *contents = NULL;
  gsize length = 0;
  g_assert_true (g_file_get_contents (fixture_path, &contents, &length, NULL));
  g_autofree char *truncated = scratch ("truncated.cowscope");
  g_assert_true (g_file_set_contents (truncated, contents, (gssize) (length / 2), NULL));
  expect_refused (truncated, COWSCOPE_SESSION_ERROR_DAMAGED, "damaged");

  /* Newer schema. */
  g_autofree char *newer = scratch ("newer.cowscope");
  g_assert_true (g_file_set_contents (newer, contents, (gssize) length, NULL));
  exec_on (newer, "PRAGMA user_version = 5; UPDATE meta SET value = '5' WHERE key = 'schema_version';");
  expect_refused (newer, COWSCOPE_SESSION_ERROR_NEWER, "schema 5; this build reads up to 4");

  /* A missing table. */
  g_autofree char *broken = scratch ("broken.cowscope");
  g_assert_true (g_file_set_contents (broken, contents, (gssize) length, NULL));
  exec_on (broken, "DROP TABLE checkpoints;");
  expect_refused (broken, COWSCOPE_SESSION_ERROR_DAMAGED, "checkpoints");

  /* Not finalized. */
  g_autofree char *unfinished = scratch ("unfinished.cowscope");
  g_assert_true (g_file_set_contents (unfinished, contents, (gssize) length, NULL));
  exec_on (unfinished, "UPDATE meta SET value = 0 WHERE key = 'finalized';");
  expect_refused (unfinished, COWSCOPE_SESSION_ERROR_NOT_FINALIZED, "finalize");

  /* Garbage pages after a valid header: damaged, never a crash. */
  g_autofree char *garbled = scratch ("garbled.cowscope");
  for (gsize i = 4096; i < length; i += 7)
    contents[i] = (char) (contents[i] ^ 0x5a);
  g_assert_true (g_file_set_contents (garbled, contents, (gssize) length, NULL));
  {
    g_autoptr (GError) error = NULL;
    g_autoptr (CowscopeSessionDocument) doc = cowscope_session_document_load (garbled, NULL, &error);
    g_assert_null (doc);
    g_assert_true (error->domain == COWSCOPE_SESSION_ERROR);
    g_assert_true (error->code == COWSCOPE_SESSION_ERROR_DAMAGED
                   || error->code == COWSCOPE_SESSION_ERROR_NOT_SESSION);
  }

  const char *files[] = { missing, text, empty, other, truncated, newer, broken, unfinished, garbled };
  for (guint i = 0; i < G_N_ELEMENTS (files); i++)
    g_unlink (files[i]);
}

/* ---- timeline --------------------------------------------------------- */

static void
check_window_in (const char *path, CowscopeTimelineLane *lane, gint64 t0, gint64 t1, guint width)
{
  g_autoptr (CowscopeTimelineWindow) window = cowscope_timeline_lane_query (lane, t0, t1, width);
  guint n = 0;
  const CowscopeTimelineItem *items = cowscope_timeline_window_get_items (window, &n);
  guint64 total = 0;
  gint64 max_px = (t1 - t0 + width - 1) / width;
  gint last_pixel = -1;
  for (guint i = 0; i < n; i++)
    {
      const CowscopeTimelineItem *it = &items[i];
      g_assert_cmpuint (it->count, >=, 1);
      g_assert_cmpint ((gint) it->pixel, >, last_pixel); /* one item per pixel, in order */
      last_pixel = it->pixel;
      g_assert_cmpint (it->start_ns, >=, t0);
      g_assert_cmpint (it->start_ns, <, t1);
      if (it->count > 1)
        {
          g_assert_cmpint (it->id, ==, -1);
          g_assert_cmpint (it->end_ns - it->start_ns, <=, max_px);
          g_assert_cmpint (it->end_ns, <=, t1);
        }
      else
        g_assert_cmpint (it->id, >, 0);
      total += it->count;
    }
  g_assert_cmpuint (total, ==, cowscope_timeline_lane_count (lane, t0, t1));
  g_assert_cmpuint (total, ==, cowscope_timeline_window_get_total_count (window));
  if (cowscope_timeline_lane_get_kind (lane) == COWSCOPE_LANE_THREAD)
    {
      g_autofree char *sql = g_strdup_printf (
        "SELECT count(*) FROM events WHERE pid = %u AND tid = %" G_GINT64_FORMAT
        " AND ts >= %" G_GINT64_FORMAT " AND ts < %" G_GINT64_FORMAT,
        cowscope_timeline_lane_get_pid (lane), cowscope_timeline_lane_get_tid (lane), t0, t1);
      g_assert_cmpint ((gint64) total, ==, sql_int (path, sql));
    }
  /* Spans are at least a pixel wide and overlap the window. */
  const CowscopeTimelineItem *spans = cowscope_timeline_window_get_spans (window, &n);
  for (guint i = 0; i < n; i++)
    {
      g_assert_cmpfloat ((double) (spans[i].end_ns - spans[i].start_ns), >=,
                         (double) (t1 - t0) / width);
      g_assert_cmpint (spans[i].start_ns, <, t1);
      g_assert_cmpint (spans[i].end_ns, >, t0);
    }
}

static void
check_window (CowscopeTimelineLane *lane, gint64 t0, gint64 t1, guint width)
{
  check_window_in (fixture_path, lane, t0, t1, width);
}

static void
test_timeline_aggregation (void)
{
  CowscopeSessionDocument *doc = fixture_doc;
  gint64 start = cowscope_session_document_get_start_ns (doc);
  gint64 end = cowscope_session_document_get_end_ns (doc) + 1;
  GListModel *lanes = cowscope_session_document_get_lanes (doc);
  g_autoptr (GRand) rand = g_rand_new_with_seed (7);
  guint merged = 0;
  for (guint i = 0; i < g_list_model_get_n_items (lanes); i++)
    {
      g_autoptr (CowscopeTimelineLane) lane = g_list_model_get_item (lanes, i);
      if (cowscope_timeline_lane_get_kind (lane) == COWSCOPE_LANE_COUNTER)
        continue;
      check_window (lane, start, end, 1500);
      check_window (lane, start, end, 7);
      check_window (lane, start, end, 1);
      for (int k = 0; k < 20; k++)
        {
          gint64 a = start + (gint64) (g_rand_double (rand) * (double) (end - start));
          gint64 b = a + 1 + (gint64) (g_rand_double (rand) * (double) (end - a));
          check_window (lane, a, b, (guint) g_rand_int_range (rand, 1, 2000));
        }
      g_autoptr (CowscopeTimelineWindow) all = cowscope_timeline_lane_query (lane, start, end, 10);
      guint n;
      const CowscopeTimelineItem *items = cowscope_timeline_window_get_items (all, &n);
      for (guint k = 0; k < n; k++)
        merged += items[k].count > 1;
      g_assert_cmpuint (n, <=, 10);

      /* A bucket names every kind under it (its drawing shows the copies
       * among them): the whole lane in one pixel has the kinds of the
       * lane's single items seen one by one. */
      g_autoptr (CowscopeTimelineWindow) one = cowscope_timeline_lane_query (lane, start, end, 1);
      g_autoptr (CowscopeTimelineWindow) fine = cowscope_timeline_lane_query (lane, start, end, 60000);
      guint n_one, n_fine;
      const CowscopeTimelineItem *bucket = cowscope_timeline_window_get_items (one, &n_one);
      const CowscopeTimelineItem *fine_items = cowscope_timeline_window_get_items (fine, &n_fine);
      guint32 kinds = 0;
      for (guint k = 0; k < n_fine; k++)
        kinds |= fine_items[k].kinds;
      g_assert_cmpuint (n_one, ==, n_fine > 0 ? 1 : 0); /* a process lane may hold spans only */
      if (n_one == 1)
        {
          g_assert_cmphex (bucket[0].kinds, ==, kinds);
          g_assert_cmphex (bucket[0].kinds & (1u << bucket[0].kind), !=, 0);
        }
    }
  g_assert_cmpuint (merged, >, 0); /* items under a pixel were merged */

  /* Counters: one sample per pixel; at the end, the live storages equal
   * the storages never freed. */
  CowscopeTimelineLane *live = cowscope_session_document_get_counter_lane (doc,
                                                                           COWSCOPE_COUNTER_LIVE_STORAGES);
  g_autoptr (CowscopeTimelineWindow) w = cowscope_timeline_lane_query (live, start, end, 300);
  guint n;
  const CowscopeCounterSample *samples = cowscope_timeline_window_get_samples (w, &n);
  g_assert_cmpuint (n, ==, 300);
  g_assert_cmpfloat (samples[n - 1].last, ==,
                     (double) sql_int (fixture_path,
                                       "SELECT count(*) FROM storages WHERE free_ts IS NULL"));
  CowscopeTimelineLane *bytes = cowscope_session_document_get_counter_lane (doc,
                                                                            COWSCOPE_COUNTER_BYTES_ALLOCATED);
  g_autoptr (CowscopeTimelineWindow) wb = cowscope_timeline_lane_query (bytes, start, end, 50);
  samples = cowscope_timeline_window_get_samples (wb, &n);
  g_assert_cmpfloat (samples[n - 1].last, ==,
                     (double) sql_int (fixture_path, "SELECT sum(nbytes) FROM allocations"
                                                     " WHERE free_ts IS NULL"));
  CowscopeTimelineLane *shared = cowscope_session_document_get_counter_lane (doc,
                                                                             COWSCOPE_COUNTER_BYTES_SHARED);
  g_autoptr (CowscopeTimelineWindow) ws = cowscope_timeline_lane_query (shared, start, end, 50);
  samples = cowscope_timeline_window_get_samples (ws, &n);
  double max_shared = 0;
  for (guint k = 0; k < n; k++)
    max_shared = MAX (max_shared, samples[k].max);
  g_assert_cmpfloat (max_shared, >, 0);
}

/* ---- sharing graph vs. brute-force replay ----------------------------- */

typedef struct {
  gint64 alloc, ctx, left, src, storage, base, kind;
  gboolean stolen; /* left its context by a steal, not a copy */
} Obj;

/* An independent replay of events 1..@seq: the expected node and edge
 * descriptions, as sorted strings. */
static void
brute_force (gint64 seq, GPtrArray *nodes_out, GPtrArray *edges_out)
{
  GHashTable *objs[4];
  for (int k = 0; k < 4; k++)
    objs[k] = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  sqlite3 *db = NULL;
  g_assert_cmpint (sqlite3_open_v2 (fixture_path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  sqlite3_stmt *q = NULL;
  g_assert_cmpint (sqlite3_prepare_v2 (db,
                                       "SELECT type, aux, pid, v0, v1, v2, v3, v4 FROM events"
                                       " WHERE seq <= ?1 ORDER BY seq",
                                       -1, &q, NULL),
                   ==, SQLITE_OK);
  sqlite3_bind_int64 (q, 1, seq);
  while (sqlite3_step (q) == SQLITE_ROW)
    {
      gint64 type = sqlite3_column_int64 (q, 0), aux = sqlite3_column_int64 (q, 1);
      gint64 pid = sqlite3_column_int64 (q, 2), v[5];
      for (int k = 0; k < 5; k++)
        v[k] = sqlite3_column_int64 (q, 3 + k);
#define KEY(id) g_strdup_printf ("%" G_GINT64_FORMAT ":%" G_GINT64_FORMAT, pid, (gint64) (id))
#define NEW(k) ({ Obj *o_ = g_new0 (Obj, 1); g_hash_table_insert (objs[k], KEY (v[0]), o_); o_; })
#define GET(k, id) ({ g_autofree char *k_ = KEY (id); (Obj *) g_hash_table_lookup (objs[k], k_); })
#define DEL(k, id) do { g_autofree char *k_ = KEY (id); g_hash_table_remove (objs[k], k_); } while (0)
      Obj *o;
      switch (type)
        {
        case 1: o = NEW (0); (void) o; break;
        case 2: DEL (0, v[0]); break;
        case 3: o = NEW (2); o->alloc = v[1]; o->ctx = v[3]; o->src = v[4]; break;
        case 4: DEL (2, v[0]); break;
        case 5: o = NEW (3); o->storage = v[1]; o->base = v[2]; break;
        case 6: DEL (3, v[0]); break;
        case 8:
          o = NEW (1); o->alloc = v[3];
          if ((o = GET (2, v[1])) != NULL) { o->ctx = v[0]; o->left = 0; }
          break;
        case 10:
          if ((o = GET (2, v[1])) != NULL && o->ctx == v[0]) o->ctx = 0;
          break;
        case 11: DEL (1, v[0]); break;
        case 15:
          if ((aux & 0xff) == 1 || (aux & 0xff) == 2)
            if ((o = GET (2, v[0])) != NULL)
              {
                o->ctx = 0;
                o->left = v[1];
                o->alloc = v[2];
                o->stolen = (aux & 0xff) == 2;
              }
          break;
        default: break;
        }
    }
  sqlite3_finalize (q);
  sqlite3_close (db);

  static const char *const kn[] = { "allocation", "context", "storage", "tensor" };
  static const char *const states[] = { "owned", "shared", "materialized", "limbo", "stolen" };
  /* storage states, then allocation states */
  GHashTable *alloc_state = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  GHashTableIter it;
  gpointer key, value;
  g_hash_table_iter_init (&it, objs[1]);
  while (g_hash_table_iter_next (&it, &key, &value))
    {
      Obj *c = value;
      gint64 pid = g_ascii_strtoll (key, NULL, 10);
      g_autofree char *ak = KEY (c->alloc);
      if (g_hash_table_contains (objs[0], ak))
        {
          g_hash_table_insert (alloc_state, g_strdup (ak), GINT_TO_POINTER (1));
          g_ptr_array_add (edges_out, g_strdup_printf ("owns context:%s -> allocation:%s",
                                                       (char *) key, ak));
        }
      g_ptr_array_add (nodes_out, g_strdup_printf ("context:%s shared", (char *) key));
    }
  g_hash_table_iter_init (&it, objs[2]);
  while (g_hash_table_iter_next (&it, &key, &value))
    {
      Obj *s = value;
      gint64 pid = g_ascii_strtoll (key, NULL, 10);
      int state = s->ctx ? 1 : s->left ? (s->stolen ? 4 : 2) : 0;
      s->kind = state;
      g_ptr_array_add (nodes_out, g_strdup_printf ("storage:%s %s", (char *) key, states[state]));
      g_autofree char *ck = KEY (s->ctx);
      g_autofree char *lk = KEY (s->left);
      g_autofree char *sk = KEY (s->src);
      g_autofree char *ak = KEY (s->alloc);
      if (s->ctx)
        {
          if (g_hash_table_contains (objs[1], ck))
            g_ptr_array_add (edges_out, g_strdup_printf ("lazy-copy-of storage:%s -> context:%s",
                                                         (char *) key, ck));
          Obj *src = s->src ? g_hash_table_lookup (objs[2], sk) : NULL;
          if (src != NULL && src->ctx == s->ctx)
            g_ptr_array_add (edges_out, g_strdup_printf ("lazy-copy-of storage:%s -> storage:%s",
                                                         (char *) key, sk));
        }
      else
        {
          if (g_hash_table_contains (objs[0], ak))
            {
              g_ptr_array_add (edges_out, g_strdup_printf ("owns storage:%s -> allocation:%s",
                                                           (char *) key, ak));
              if ((state == 2 || state == 4) && !g_hash_table_contains (alloc_state, ak))
                g_hash_table_insert (alloc_state, g_strdup (ak), GINT_TO_POINTER (state));
            }
          if (s->left && g_hash_table_contains (objs[1], lk))
            g_ptr_array_add (edges_out, g_strdup_printf ("materialized-from storage:%s -> context:%s",
                                                         (char *) key, lk));
          if (s->left && s->src && g_hash_table_contains (objs[2], sk))
            g_ptr_array_add (edges_out, g_strdup_printf ("materialized-from storage:%s -> storage:%s",
                                                         (char *) key, sk));
        }
    }
  g_hash_table_iter_init (&it, objs[0]);
  while (g_hash_table_iter_next (&it, &key, &value))
    g_ptr_array_add (nodes_out,
                     g_strdup_printf ("allocation:%s %s", (char *) key,
                                      states[GPOINTER_TO_INT (g_hash_table_lookup (alloc_state, key))]));
  g_hash_table_iter_init (&it, objs[3]);
  while (g_hash_table_iter_next (&it, &key, &value))
    {
      Obj *t = value;
      gint64 pid = g_ascii_strtoll (key, NULL, 10);
      g_autofree char *sk = KEY (t->storage);
      g_autofree char *bk = KEY (t->base);
      Obj *s = g_hash_table_lookup (objs[2], sk);
      g_ptr_array_add (nodes_out, g_strdup_printf ("tensor:%s %s", (char *) key,
                                                   states[s ? s->kind : 0]));
      if (s != NULL)
        g_ptr_array_add (edges_out, g_strdup_printf ("view-of tensor:%s -> storage:%s",
                                                     (char *) key, sk));
      Obj *b = t->base ? g_hash_table_lookup (objs[3], bk) : NULL;
      if (b != NULL && b->storage == t->storage)
        g_ptr_array_add (edges_out, g_strdup_printf ("view-of tensor:%s -> tensor:%s",
                                                     (char *) key, bk));
    }
  (void) kn;
  g_hash_table_unref (alloc_state);
  for (int k = 0; k < 4; k++)
    g_hash_table_unref (objs[k]);
#undef KEY
#undef NEW
#undef GET
#undef DEL
}

static int
compare_strings (gconstpointer a, gconstpointer b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

/* The graph's nodes and edges in the brute force's words. */
static void
describe (CowscopeSharingGraph *graph, GPtrArray *nodes_out, GPtrArray *edges_out)
{
  static const char *const kn[] = { "allocation", "context", "storage", "tensor" };
  static const char *const states[] = { "owned", "shared", "materialized", "limbo", "stolen" };
  static const char *const en[] = { "view-of", "lazy-copy-of", "materialized-from", "owns" };
  for (guint i = 0; i < cowscope_sharing_graph_get_n_nodes (graph); i++)
    {
      const CowscopeGraphNode *n = cowscope_sharing_graph_get_node (graph, i);
      g_ptr_array_add (nodes_out, g_strdup_printf ("%s:%u:%" G_GUINT64_FORMAT " %s", kn[n->kind],
                                                   n->pid, n->id, states[n->state]));
    }
  for (guint i = 0; i < cowscope_sharing_graph_get_n_edges (graph); i++)
    {
      const CowscopeGraphEdge *e = cowscope_sharing_graph_get_edge (graph, i);
      const CowscopeGraphNode *a = cowscope_sharing_graph_get_node (graph, e->from);
      const CowscopeGraphNode *b = cowscope_sharing_graph_get_node (graph, e->to);
      g_ptr_array_add (edges_out,
                       g_strdup_printf ("%s %s:%u:%" G_GUINT64_FORMAT " -> %s:%u:%" G_GUINT64_FORMAT,
                                        en[e->kind], kn[a->kind], a->pid, a->id, kn[b->kind],
                                        b->pid, b->id));
    }
}

static void
assert_same (GPtrArray *expected, GPtrArray *actual, const char *what, gint64 seq)
{
  g_ptr_array_sort (expected, compare_strings);
  g_ptr_array_sort (actual, compare_strings);
  for (guint i = 0; i < MIN (expected->len, actual->len); i++)
    if (strcmp (expected->pdata[i], actual->pdata[i]) != 0)
      g_error ("%s at seq %" G_GINT64_FORMAT ": expected “%s”, got “%s”", what, seq,
               (char *) expected->pdata[i], (char *) actual->pdata[i]);
  g_assert_cmpuint (expected->len, ==, actual->len);
}

static void
check_graph_at (gint64 seq)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (CowscopeSharingGraph) graph =
    cowscope_sharing_graph_build (fixture_doc, seq, 1000, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (cowscope_sharing_graph_get_seq (graph), ==, seq);
  /* Never a replay from the start once a checkpoint precedes. */
  gint64 cp = cowscope_sharing_graph_get_checkpoint_seq (graph);
  g_assert_cmpuint (cowscope_sharing_graph_get_n_replayed (graph), <=,
                    (guint64) (seq - MAX (cp, 0)));
  if (seq >= 600)
    g_assert_cmpint (cp, >, 0);
  g_autoptr (GPtrArray) en = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GPtrArray) ee = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GPtrArray) an = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GPtrArray) ae = g_ptr_array_new_with_free_func (g_free);
  brute_force (seq, en, ee);
  describe (graph, an, ae);
  assert_same (en, an, "nodes", seq);
  assert_same (ee, ae, "edges", seq);
  /* Context refcounts are the storages sharing them. */
  for (guint i = 0; i < cowscope_sharing_graph_get_n_nodes (graph); i++)
    {
      const CowscopeGraphNode *n = cowscope_sharing_graph_get_node (graph, i);
      if (n->kind == COWSCOPE_NODE_TENSOR && n->label != NULL)
        g_assert_true (g_str_has_prefix (n->label, "t"));
      g_assert_cmpint (cowscope_sharing_graph_lookup (graph, n->kind, n->pid, n->id), ==, (gint) i);
    }
}

static void
test_graph_matches_replay (void)
{
  sqlite3 *db = NULL;
  g_assert_cmpint (sqlite3_open_v2 (fixture_path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  sqlite3_stmt *q = NULL;
  g_assert_cmpint (sqlite3_prepare_v2 (db, "SELECT seq FROM checkpoints ORDER BY seq", -1, &q, NULL),
                   ==, SQLITE_OK);
  g_autoptr (GArray) seqs = g_array_new (FALSE, FALSE, sizeof (gint64));
  guint n_cp = 0;
  while (sqlite3_step (q) == SQLITE_ROW)
    {
      gint64 s = sqlite3_column_int64 (q, 0);
      if (n_cp++ % 3 != 0)
        continue;
      for (gint64 d = -1; d <= 1; d++)
        g_array_append_val (seqs, ((gint64) { s + d }));
    }
  sqlite3_finalize (q);
  sqlite3_close (db);
  g_assert_cmpuint (n_cp, >=, 5);
  gint64 extra[] = { 0, 1, 2, 57, 499, (gint64) fixture_info.n_events,
                     (gint64) fixture_info.n_events / 2 + 13 };
  g_array_append_vals (seqs, extra, G_N_ELEMENTS (extra));
  for (guint i = 0; i < seqs->len; i++)
    check_graph_at (g_array_index (seqs, gint64, i));

  /* Something interesting is in there. */
  g_autoptr (CowscopeSharingGraph) g =
    cowscope_sharing_graph_build (fixture_doc, (gint64) fixture_info.n_events / 2, 0, NULL, NULL);
  g_assert_cmpuint (cowscope_sharing_graph_count_nodes (g, COWSCOPE_NODE_CONTEXT), >, 0);
  g_assert_cmpuint (cowscope_sharing_graph_count_nodes (g, COWSCOPE_NODE_TENSOR), >, 0);
}

/* @a and @b are the same graph, node for node and edge for edge, every
 * field and label included. */
static void
assert_same_graph (CowscopeSharingGraph *a, CowscopeSharingGraph *b, gboolean same_replay,
                   const char *what)
{
  gint64 seq = cowscope_sharing_graph_get_seq (a);
  g_assert_cmpint (seq, ==, cowscope_sharing_graph_get_seq (b));
  g_assert_cmpint (cowscope_sharing_graph_get_time (a), ==, cowscope_sharing_graph_get_time (b));
  if (same_replay)
    {
      g_assert_cmpint (cowscope_sharing_graph_get_checkpoint_seq (a), ==,
                       cowscope_sharing_graph_get_checkpoint_seq (b));
      g_assert_cmpuint (cowscope_sharing_graph_get_n_replayed (a), ==,
                        cowscope_sharing_graph_get_n_replayed (b));
    }
  guint n = cowscope_sharing_graph_get_n_nodes (a);
  if (n != cowscope_sharing_graph_get_n_nodes (b))
    g_error ("%s at seq %" G_GINT64_FORMAT ": %u nodes, expected %u", what, seq, n,
             cowscope_sharing_graph_get_n_nodes (b));
  for (guint i = 0; i < n; i++)
    {
      const CowscopeGraphNode *x = cowscope_sharing_graph_get_node (a, i);
      const CowscopeGraphNode *y = cowscope_sharing_graph_get_node (b, i);
      gboolean same = x->pid == y->pid && x->kind == y->kind && x->state == y->state
                      && x->freed_soon == y->freed_soon && x->alloc_kind == y->alloc_kind
                      && x->id == y->id && x->nbytes == y->nbytes && x->free_ts == y->free_ts
                      && x->allocation_id == y->allocation_id && x->context_id == y->context_id
                      && x->left_context_id == y->left_context_id
                      && x->storage_id == y->storage_id && x->source_id == y->source_id
                      && x->numel == y->numel && x->dtype == y->dtype && x->ndim == y->ndim
                      && x->refcount == y->refcount && x->device == y->device
                      && x->peer_pid == y->peer_pid && g_strcmp0 (x->label, y->label) == 0;
      if (!same)
        g_error ("%s at seq %" G_GINT64_FORMAT ": node %u (kind %u, pid %u, id %" G_GUINT64_FORMAT
                 ") differs from (kind %u, pid %u, id %" G_GUINT64_FORMAT ")",
                 what, seq, i, x->kind, x->pid, x->id, y->kind, y->pid, y->id);
    }
  g_assert_cmpuint (cowscope_sharing_graph_get_n_edges (a), ==, cowscope_sharing_graph_get_n_edges (b));
  for (guint i = 0; i < cowscope_sharing_graph_get_n_edges (a); i++)
    {
      const CowscopeGraphEdge *x = cowscope_sharing_graph_get_edge (a, i);
      const CowscopeGraphEdge *y = cowscope_sharing_graph_get_edge (b, i);
      if (x->from != y->from || x->to != y->to || x->kind != y->kind)
        g_error ("%s at seq %" G_GINT64_FORMAT ": edge %u differs", what, seq, i);
    }
}

/* The checkpoints' (id, seq), in seq order. */
static GArray *
checkpoints (void)
{
  sqlite3 *db = NULL;
  g_assert_cmpint (sqlite3_open_v2 (fixture_path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  sqlite3_stmt *q = NULL;
  g_assert_cmpint (sqlite3_prepare_v2 (db, "SELECT id, seq FROM checkpoints ORDER BY seq", -1, &q,
                                       NULL),
                   ==, SQLITE_OK);
  GArray *cps = g_array_new (FALSE, FALSE, sizeof (gint64) * 2);
  while (sqlite3_step (q) == SQLITE_ROW)
    {
      gint64 row[2] = { sqlite3_column_int64 (q, 0), sqlite3_column_int64 (q, 1) };
      g_array_append_val (cps, row);
    }
  sqlite3_finalize (q);
  sqlite3_close (db);
  return cps;
}

/* Cursor moves through the builder's cache (decoded checkpoints, the
 * last state carried forward by the events in between) give the graph a
 * cold build gives: forward in small and large steps, backward, across
 * checkpoints and back, on the same instant twice. */
static void
test_graph_cache_matches_cold (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (CowscopeSessionDocument) doc = cowscope_session_document_load (fixture_path, NULL,
                                                                            &error);
  g_assert_no_error (error);
  g_autoptr (CowscopeSessionDocument) cold_doc =
    cowscope_session_document_load (fixture_path, NULL, &error);
  g_assert_no_error (error);
  g_autoptr (GArray) cps = checkpoints ();
  g_assert_cmpuint (cps->len, >=, 5);
  gint64 last = (gint64) fixture_info.n_events;
  gint64 cp2 = g_array_index (cps, gint64, 2 * 2 + 1);
  gint64 cp3 = g_array_index (cps, gint64, 3 * 2 + 1);
  g_autoptr (GArray) seqs = g_array_new (FALSE, FALSE, sizeof (gint64));
  /* Forward through an interval, one event, then a few, then many. */
  for (gint64 s = cp2 - 3; s <= cp2 + 40; s += (s < cp2 + 5 ? 1 : 7))
    g_array_append_val (seqs, s);
  gint64 more[] = {
    cp2 + 40,           /* the same instant again */
    cp3 - 1, cp3, cp3 + 1, /* across a checkpoint */
    cp2 + 41,           /* back into the previous interval, later than before */
    cp2 + 10,           /* back, earlier than before */
    cp2 + 11, cp2 + (cp3 - cp2) / 2, cp3 - 1,
    0, 1, 2, 57,        /* before the first checkpoint */
    last, last - 1, last / 2, last / 2 + 500, last / 3, last / 2 + 1000, 1,
  };
  g_array_append_vals (seqs, more, G_N_ELEMENTS (more));
  /* Back through an interval in small steps (anchors), then forward. */
  for (gint64 s = cp3 - 1; s > cp2; s -= 7)
    g_array_append_val (seqs, s);
  for (gint64 s = cp2 + 3; s < cp3; s += 50)
    g_array_append_val (seqs, s);
  /* And a random walk, mostly small steps either way. */
  g_autoptr (GRand) rand = g_rand_new_with_seed (3);
  gint64 at = last / 4;
  for (int k = 0; k < 60; k++)
    {
      gint64 step = g_rand_int_range (rand, 0, 4) == 0 ? g_rand_int_range (rand, -3000, 3000)
                                                       : g_rand_int_range (rand, -20, 200);
      at = CLAMP (at + step, 0, last);
      g_array_append_val (seqs, at);
    }

  /* With room for many decoded checkpoints, then for one (evicted ones
   * lend their memory to the next decode). */
  for (int pass = 0; pass < 2; pass++)
    {
      if (pass == 1)
        {
          cowscope_graph_builder_clear_cache (doc);
          cowscope_graph_builder_set_cache_size (doc, 1);
        }
      for (guint i = 0; i < seqs->len; i++)
        {
          gint64 seq = g_array_index (seqs, gint64, i);
          g_autoptr (CowscopeSharingGraph) warm =
            cowscope_sharing_graph_build (doc, seq, 1000, NULL, &error);
          g_assert_no_error (error);
          cowscope_graph_builder_clear_cache (cold_doc);
          g_autoptr (CowscopeSharingGraph) cold =
            cowscope_sharing_graph_build (cold_doc, seq, 1000, NULL, &error);
          g_assert_no_error (error);
          assert_same_graph (warm, cold, TRUE, pass == 0 ? "cached build" : "small cache");
        }
    }
}

/* A graph assembled by two threads, in small tasks, is the graph the
 * calling thread assembles alone, node for node and edge for edge, at
 * checkpoints and between them (and the brute force's). */
static void
test_graph_parallel_assembly (void)
{
  g_autoptr (GArray) cps = checkpoints ();
  g_autoptr (GArray) seqs = g_array_new (FALSE, FALSE, sizeof (gint64));
  for (guint k = 0; k < cps->len; k += 2)
    {
      gint64 s = g_array_index (cps, gint64, 2 * k + 1);
      gint64 more[] = { s, s + 7, s + 301 };
      g_array_append_vals (seqs, more, G_N_ELEMENTS (more));
    }
  gint64 last = (gint64) fixture_info.n_events;
  gint64 extra[] = { 1, 57, last / 2, last };
  g_array_append_vals (seqs, extra, G_N_ELEMENTS (extra));
  for (guint i = 0; i < seqs->len; i++)
    {
      gint64 seq = MIN (g_array_index (seqs, gint64, i), last);
      g_autoptr (GError) error = NULL;
      cowscope_graph_assembly_set_parallel (G_MAXUINT, 4096);
      g_autoptr (CowscopeSharingGraph) alone =
        cowscope_graph_builder_run_from (fixture_doc, seq, -1, 1000, &error);
      g_assert_no_error (error);
      for (guint task = 1; task <= 64; task *= 8)
        {
          cowscope_graph_assembly_set_parallel (1, task);
          g_autoptr (CowscopeSharingGraph) shared =
            cowscope_graph_builder_run_from (fixture_doc, seq, -1, 1000, &error);
          g_assert_no_error (error);
          assert_same_graph (shared, alone, TRUE, "two threads");
        }
      /* The counts per kind are the nodes'. */
      guint counts[COWSCOPE_N_NODE_KINDS] = { 0 };
      for (guint k = 0; k < cowscope_sharing_graph_get_n_nodes (alone); k++)
        counts[cowscope_sharing_graph_get_node (alone, k)->kind]++;
      for (guint kind = 0; kind < COWSCOPE_N_NODE_KINDS; kind++)
        g_assert_cmpuint (cowscope_sharing_graph_count_nodes (alone, kind), ==, counts[kind]);
      if (i % 4 == 0)
        {
          cowscope_graph_assembly_set_parallel (1, 16);
          check_graph_at (seq);
        }
    }
  cowscope_graph_assembly_set_parallel (16384, 4096);
}

/* The finalizer writes each checkpoint's packed state (the format's
 * cowscope-format-index.c); the model replays the packed events after a
 * checkpoint.  At every checkpoint, its packed state equals the previous
 * one (or the start) plus the model's replay of the interval in between:
 * the state record and the replay record agree. */
static void
test_graph_packed_state_matches_replay (void)
{
  g_autoptr (GArray) cps = checkpoints ();
  g_assert_cmpuint (cps->len, >=, 5);
  for (guint k = 0; k < cps->len; k++)
    {
      gint64 id = g_array_index (cps, gint64, 2 * k);
      gint64 seq = g_array_index (cps, gint64, 2 * k + 1);
      gint64 prev = k > 0 ? g_array_index (cps, gint64, 2 * (k - 1)) : -1;
      g_autoptr (GError) error = NULL;
      g_autoptr (CowscopeSharingGraph) packed =
        cowscope_graph_builder_run_from (fixture_doc, seq, id, 1000, &error);
      g_assert_no_error (error);
      g_assert_cmpint (cowscope_sharing_graph_get_checkpoint_seq (packed), ==, seq);
      g_assert_cmpuint (cowscope_sharing_graph_get_n_replayed (packed), ==, 0);
      g_autoptr (CowscopeSharingGraph) replayed =
        cowscope_graph_builder_run_from (fixture_doc, seq, prev, 1000, &error);
      g_assert_no_error (error);
      g_assert_cmpuint (cowscope_sharing_graph_get_n_replayed (replayed), >, 0);
      assert_same_graph (replayed, packed, FALSE, "replay to a checkpoint");
    }
}

static void
on_graph (GObject *source, GAsyncResult *result, gpointer data)
{
  (void) source;
  AsyncState *st = data;
  g_assert_true (g_thread_self () == st->main_thread);
  st->graph = cowscope_sharing_graph_build_finish (result, &st->error);
  g_main_loop_quit (st->loop);
}

static void
test_graph_at_time_async (void)
{
  gint64 t = (fixture_info.start_ns + fixture_info.end_ns) / 2;
  AsyncState st = { .main_thread = g_thread_self () };
  st.loop = g_main_loop_new (NULL, FALSE);
  cowscope_sharing_graph_build_at_time_async (fixture_doc, t, 0, NULL, on_graph, &st);
  g_main_loop_run (st.loop);
  g_assert_no_error (st.error);
  g_autofree char *sql = g_strdup_printf (
    "SELECT seq FROM events WHERE ts <= %" G_GINT64_FORMAT " ORDER BY ts DESC, seq DESC LIMIT 1", t);
  gint64 seq = sql_int (fixture_path, sql);
  g_assert_cmpint (cowscope_sharing_graph_get_seq (st.graph), ==, seq);
  g_assert_cmpint (cowscope_sharing_graph_get_time (st.graph), <=, t);
  check_graph_at (seq);
  g_object_unref (st.graph);
  g_main_loop_unref (st.loop);
}

/* ---- explanations ------------------------------------------------------ */

static gboolean
stack_has (GListModel *stack, const char *function)
{
  for (guint i = 0; i < g_list_model_get_n_items (stack); i++)
    {
      g_autoptr (CowscopeStackFrame) f = g_list_model_get_item (stack, i);
      if (g_strcmp0 (cowscope_stack_frame_get_function (f), function) == 0)
        return TRUE;
    }
  return FALSE;
}

static void
on_explained (GObject *source, GAsyncResult *result, gpointer data)
{
  (void) source;
  AsyncState *st = data;
  g_assert_true (g_thread_self () == st->main_thread);
  st->explanation = cowscope_copy_explanation_new_finish (result, &st->error);
  g_main_loop_quit (st->loop);
}

static void
test_explain_copy (void)
{
  g_assert_cmpint (fixture_info.copy_seq, >, 0);
  AsyncState st = { .main_thread = g_thread_self () };
  st.loop = g_main_loop_new (NULL, FALSE);
  cowscope_copy_explanation_new_async (fixture_doc, fixture_info.copy_seq, NULL, on_explained, &st);
  g_main_loop_run (st.loop);
  g_assert_no_error (st.error);
  CowscopeCopyExplanation *e = st.explanation;
  g_assert_cmpint (cowscope_copy_explanation_get_kind (e), ==, COWSCOPE_EXPLANATION_MATERIALIZATION);
  g_assert_cmpstr (cowscope_copy_explanation_get_mode (e), ==, "copy");
  g_assert_cmpint (cowscope_copy_explanation_get_lazy_clone_seq (e), ==,
                   fixture_info.copy_lazy_clone_seq);
  g_assert_cmpuint (cowscope_copy_explanation_get_nbytes (e), ==, fixture_info.copy_nbytes);
  g_assert_cmpint (cowscope_copy_explanation_get_cuda_id (e), ==, fixture_info.copy_cuda_id);
  g_assert_cmpstr (cowscope_copy_explanation_get_cuda_kind (e), ==, "memcpy");
  g_autofree char *op_sql = g_strdup_printf (
    "SELECT op FROM events WHERE seq = %" G_GINT64_FORMAT, fixture_info.copy_seq);
  gint64 op = sql_int (fixture_path, op_sql);
  g_assert_cmpstr (cowscope_copy_explanation_get_op (e), ==, op == 19 ? "add_" : "mul_");
  g_assert_cmpstr (cowscope_copy_explanation_get_lazy_clone_op (e), ==, "lazy_clone");
  g_assert_true (stack_has (cowscope_copy_explanation_get_stack (e), "cow_add_"));
  g_assert_true (stack_has (cowscope_copy_explanation_get_lazy_clone_stack (e), "cow_lazy_clone"));
  g_assert_nonnull (cowscope_copy_explanation_get_thread_name (e));
  g_assert_cmpuint (cowscope_copy_explanation_get_storage_id (e), ==, fixture_info.copy_storage_id);
  guint n = 0;
  const CowscopeObjectRef *refs = cowscope_copy_explanation_get_highlights (e, &n);
  gboolean has_storage = FALSE;
  for (guint i = 0; i < n; i++)
    has_storage |= refs[i].kind == COWSCOPE_NODE_STORAGE && refs[i].id == fixture_info.copy_storage_id;
  g_assert_true (has_storage);
  g_assert_nonnull (cowscope_copy_explanation_get_summary (e));
  /* The tensors go by their names, as the graph shows them: the one
   * written is named in the summary (its number only without a name). */
  guint32 pid = cowscope_copy_explanation_get_pid (e);
  guint64 tensor = cowscope_copy_explanation_get_tensor_id (e);
  g_autofree char *name_sql = g_strdup_printf (
    "SELECT name FROM tensors WHERE pid = %u AND id = %" G_GUINT64_FORMAT, pid, tensor);
  g_autofree char *name = sql_text (fixture_path, name_sql);
  g_assert_cmpstr (cowscope_copy_explanation_get_tensor_name (e), ==, name);
  g_autofree char *label = name != NULL ? g_strdup_printf ("the write to “%s”", name)
                                        : g_strdup_printf ("the write to tensor %" G_GUINT64_FORMAT, tensor);
  g_test_message ("%s", cowscope_copy_explanation_get_summary (e));
  g_assert_nonnull (strstr (cowscope_copy_explanation_get_summary (e), label));
  g_autofree char *result_sql = g_strdup_printf (
    "SELECT name FROM tensors WHERE pid = %u AND id = %" G_GUINT64_FORMAT, pid,
    cowscope_copy_explanation_get_lazy_clone_result_tensor (e));
  g_autofree char *result_name = sql_text (fixture_path, result_sql);
  g_assert_cmpstr (cowscope_copy_explanation_get_lazy_clone_result_name (e), ==, result_name);
  g_autofree char *unnamed = cowscope_tensor_label (NULL, 7);
  g_assert_cmpstr (unnamed, ==, "tensor 7");
  g_autofree char *named = cowscope_tensor_label ("weights", 7);
  g_assert_cmpstr (named, ==, "weights");
  gint64 end_seq = cowscope_copy_explanation_get_end_seq (e);
  g_assert_cmpint (end_seq, >, fixture_info.copy_seq);
  g_object_unref (e);

  /* Selecting the END event explains the same copy. */
  g_autoptr (GError) error = NULL;
  g_autoptr (CowscopeCopyExplanation) by_end = cowscope_copy_explanation_new (fixture_doc, end_seq, &error);
  g_assert_no_error (error);
  g_assert_cmpint (cowscope_copy_explanation_get_seq (by_end), ==, fixture_info.copy_seq);

  g_autoptr (CowscopeCopyExplanation) steal =
    cowscope_copy_explanation_new (fixture_doc, fixture_info.steal_seq, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (cowscope_copy_explanation_get_mode (steal), ==, "steal");
  g_assert_cmpint (cowscope_copy_explanation_get_cuda_id (steal), ==, -1);

  g_autoptr (CowscopeCopyExplanation) viol =
    cowscope_copy_explanation_new (fixture_doc, fixture_info.violation_seq, &error);
  g_assert_no_error (error);
  g_assert_cmpint (cowscope_copy_explanation_get_kind (viol), ==, COWSCOPE_EXPLANATION_VIOLATION);
  g_assert_cmpstr (cowscope_copy_explanation_get_access (viol), ==, "read");
  g_assert_cmpint (cowscope_copy_explanation_get_writer_generation (viol), ==, 3);
  g_assert_true (stack_has (cowscope_copy_explanation_get_stack (viol), "step"));

  g_autoptr (CowscopeCopyExplanation) none = cowscope_copy_explanation_new (fixture_doc, 1, &error);
  g_assert_null (none);
  g_assert_error (error, COWSCOPE_SESSION_ERROR,
                  COWSCOPE_SESSION_ERROR_NO_SUCH_OBJECT);
  g_main_loop_unref (st.loop);
}

/* ---- list models -------------------------------------------------------- */

static void
test_lists (void)
{
  g_autoptr (CowscopeEventList) events = cowscope_event_list_new (fixture_doc);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (events)), ==, fixture_info.n_events);
  g_autoptr (CowscopeEventItem) first = g_list_model_get_item (G_LIST_MODEL (events), 0);
  g_assert_cmpint (cowscope_event_item_get_seq (first), ==, 1);
  g_assert_cmpstr (cowscope_event_item_get_type_name (first), ==, "allocation_new");
  g_autoptr (CowscopeEventItem) last =
    g_list_model_get_item (G_LIST_MODEL (events), (guint) fixture_info.n_events - 1);
  g_assert_cmpint (cowscope_event_item_get_seq (last), ==, (gint64) fixture_info.n_events);
  g_assert_null (g_list_model_get_item (G_LIST_MODEL (events), (guint) fixture_info.n_events));

  g_autoptr (GError) error = NULL;
  g_autoptr (CowscopeWarningList) warnings = cowscope_warning_list_new (fixture_doc, &error);
  g_assert_no_error (error);
  g_assert_cmpint (g_list_model_get_n_items (G_LIST_MODEL (warnings)), ==,
                   sql_int (fixture_path, "SELECT count(*) FROM violations"));
  g_autoptr (GObject) w = g_list_model_get_item (G_LIST_MODEL (warnings), 0);
  g_assert_nonnull (w);

  g_autoptr (CowscopeObjectList) tensors =
    cowscope_object_list_new (fixture_doc, COWSCOPE_NODE_TENSOR, &error);
  g_assert_no_error (error);
  g_assert_cmpint (g_list_model_get_n_items (G_LIST_MODEL (tensors)), ==,
                   sql_int (fixture_path, "SELECT count(*) FROM tensors"));
  g_autoptr (GObject) t = g_list_model_get_item (G_LIST_MODEL (tensors), 3);
  g_assert_nonnull (t);
}

/* ---- events sorted and filtered in SQL ---------------------------------- */

typedef struct {
  GMainLoop *loop;
  gboolean ok;
  GError *error;
  guint changes;
} QueryWait;

static void
query_done (GObject *source, GAsyncResult *result, gpointer data)
{
  QueryWait *w = data;
  w->ok = cowscope_event_list_query_finish (COWSCOPE_EVENT_LIST (source), result, &w->error);
  g_main_loop_quit (w->loop);
}

static void
count_change (GListModel *list, guint position, guint removed, guint added, QueryWait *w)
{
  (void) list, (void) position, (void) removed, (void) added;
  w->changes++;
}

/* Runs one query to its end; FALSE with w->error set when it failed. */
static gboolean
query_events (CowscopeEventList *list, QueryWait *w, CowscopeEventOrder order,
              gboolean descending, const char *filter, GCancellable *cancellable)
{
  g_clear_error (&w->error);
  w->changes = 0;
  cowscope_event_list_query_async (list, order, descending, filter, cancellable, query_done, w);
  g_main_loop_run (w->loop);
  return w->ok;
}

static gint64
item_ts (CowscopeEventList *list, guint i)
{
  g_autoptr (CowscopeEventItem) item = g_list_model_get_item (G_LIST_MODEL (list), i);
  g_assert_nonnull (item);
  return cowscope_event_item_get_ts (item);
}

static gboolean
pages_done (gpointer data)
{
  return cowscope_event_pages_get_n_pending (data) == 0;
}

/* Iterates the default main context until the pages have no read pending. */
static void
wait_pages (CowscopeEventPages *pages)
{
  gint64 deadline = g_get_monotonic_time () + 30 * G_USEC_PER_SEC;
  while (!pages_done (pages) && g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, TRUE);
  g_assert_true (pages_done (pages));
}

/* The page cache a view shows events through: get_item() answers at once
 * with placeholders (seq known, nothing read), a worker fills them in
 * place, a new order drops them. */
static void
test_event_pages (void)
{
  g_autoptr (CowscopeEventList) events = cowscope_event_list_new (fixture_doc);
  g_autoptr (CowscopeEventPages) pages = cowscope_event_pages_new (events);
  GListModel *rows = G_LIST_MODEL (pages);
  QueryWait w = { g_main_loop_new (NULL, FALSE), FALSE, NULL, 0 };
  guint n = (guint) fixture_info.n_events;
  g_assert_cmpuint (n, >, 3 * COWSCOPE_EVENT_PAGE_ROWS);
  g_assert_cmpuint (g_list_model_get_n_items (rows), ==, n);
  g_assert_true (g_list_model_get_item_type (rows) == COWSCOPE_TYPE_EVENT_ITEM);
  g_assert_null (g_list_model_get_item (rows, n));

  /* Rows of two pages: placeholders that know their seq. */
  guint asked[] = { 0, 5, COWSCOPE_EVENT_PAGE_ROWS - 1, 2 * COWSCOPE_EVENT_PAGE_ROWS + 3, n - 1 };
  CowscopeEventItem *items[G_N_ELEMENTS (asked)];
  for (guint i = 0; i < G_N_ELEMENTS (asked); i++)
    {
      items[i] = g_list_model_get_item (rows, asked[i]);
      g_assert_false (cowscope_event_item_get_loaded (items[i]));
      g_assert_cmpint (cowscope_event_item_get_seq (items[i]), ==, cowscope_event_list_get_seq (events, asked[i]));
    }
  g_assert_cmpuint (cowscope_event_pages_get_n_pending (pages), >=, 1);
  wait_pages (pages);
  /* Filled in place with the file's row; asked again, the same object. */
  for (guint i = 0; i < G_N_ELEMENTS (asked); i++)
    {
      g_autoptr (CowscopeEventItem) row = g_list_model_get_item (G_LIST_MODEL (events), asked[i]);
      g_assert_true (cowscope_event_item_get_loaded (items[i]));
      g_assert_cmpint (cowscope_event_item_get_seq (items[i]), ==, cowscope_event_item_get_seq (row));
      g_assert_cmpint (cowscope_event_item_get_ts (items[i]), ==, cowscope_event_item_get_ts (row));
      g_assert_cmpstr (cowscope_event_item_get_type_name (items[i]), ==, cowscope_event_item_get_type_name (row));
      g_assert_cmpint (cowscope_event_item_get_value (items[i], 1), ==, cowscope_event_item_get_value (row, 1));
      g_autoptr (CowscopeEventItem) again = g_list_model_get_item (rows, asked[i]);
      g_assert_true (again == items[i]);
    }

  /* A new order of the same rows changes no position (no items-changed:
   * GTK 4.8's list view pays a node per row for one): row 0's object
   * becomes a placeholder for the newest event, then holds it. */
  g_signal_connect (pages, "items-changed", G_CALLBACK (count_change), &w);
  g_assert_true (query_events (events, &w, COWSCOPE_EVENT_ORDER_TIME, TRUE, NULL, NULL));
  g_assert_cmpuint (w.changes, ==, 0);
  g_assert_cmpint (cowscope_event_item_get_seq (items[0]), ==,
                   sql_int (fixture_path, "SELECT seq FROM events ORDER BY ts DESC, seq DESC LIMIT 1"));
  g_assert_false (cowscope_event_item_get_loaded (items[0]));
  wait_pages (pages);
  g_autoptr (CowscopeEventItem) newest = g_list_model_get_item (rows, 0);
  g_assert_true (newest == items[0]);
  g_assert_true (cowscope_event_item_get_loaded (newest));
  g_assert_cmpint (cowscope_event_item_get_ts (newest), ==, sql_int (fixture_path, "SELECT max(ts) FROM events"));
  g_assert_cmpint (cowscope_event_item_get_ts (items[G_N_ELEMENTS (asked) - 1]), ==,
                   sql_int (fixture_path, "SELECT min(ts) FROM events"));

  /* A filter changes the rows: told as a removal and an addition. */
  g_assert_true (query_events (events, &w, COWSCOPE_EVENT_ORDER_SEQ, FALSE, "materialize_end", NULL));
  g_assert_cmpuint (w.changes, ==, 2);
  guint n_end = g_list_model_get_n_items (G_LIST_MODEL (events));
  g_assert_cmpuint (g_list_model_get_n_items (rows), ==, n_end);
  g_autoptr (CowscopeEventItem) end0 = g_list_model_get_item (rows, 0);
  wait_pages (pages);
  g_assert_cmpstr (cowscope_event_item_get_type_name (end0), ==, "materialize_end");
  g_assert_true (query_events (events, &w, COWSCOPE_EVENT_ORDER_TIME, TRUE, NULL, NULL));
  g_assert_cmpuint (g_list_model_get_n_items (rows), ==, n);

  /* Far more pages than the cache holds: each read, in any order. */
  for (guint p = 0; p < n / COWSCOPE_EVENT_PAGE_ROWS; p++)
    {
      g_autoptr (CowscopeEventItem) item = g_list_model_get_item (rows, p * COWSCOPE_EVENT_PAGE_ROWS);
      wait_pages (pages);
      g_assert_true (cowscope_event_item_get_loaded (item));
    }

  for (guint i = 0; i < G_N_ELEMENTS (asked); i++)
    g_object_unref (items[i]);
  g_clear_error (&w.error);
  g_main_loop_unref (w.loop);
}

static void
test_event_query (void)
{
  g_autoptr (CowscopeEventList) events = cowscope_event_list_new (fixture_doc);
  GListModel *rows = G_LIST_MODEL (events);
  QueryWait w = { g_main_loop_new (NULL, FALSE), FALSE, NULL, 0 };
  g_signal_connect (events, "items-changed", G_CALLBACK (count_change), &w);
  guint n = (guint) fixture_info.n_events;

  /* Newest first: every row, times never increasing, the SQL's first row. */
  g_assert_true (query_events (events, &w, COWSCOPE_EVENT_ORDER_TIME, TRUE, NULL, NULL));
  g_assert_cmpuint (w.changes, ==, 1);
  g_assert_cmpuint (g_list_model_get_n_items (rows), ==, n);
  for (guint i = 1; i < n; i += 1 + n / 500)
    g_assert_cmpint (item_ts (events, i - 1), >=, item_ts (events, i));
  g_autoptr (CowscopeEventItem) newest = g_list_model_get_item (rows, 0);
  g_assert_cmpint (cowscope_event_item_get_seq (newest), ==,
                   sql_int (fixture_path, "SELECT seq FROM events ORDER BY ts DESC, seq DESC LIMIT 1"));
  g_assert_cmpint (cowscope_event_list_position_of (events, cowscope_event_item_get_seq (newest)),
                   ==, 0);

  /* By event type: names in order. */
  g_assert_true (query_events (events, &w, COWSCOPE_EVENT_ORDER_TYPE, FALSE, NULL, NULL));
  for (guint i = 1; i < n; i += 1 + n / 500)
    {
      g_autoptr (CowscopeEventItem) a = g_list_model_get_item (rows, i - 1);
      g_autoptr (CowscopeEventItem) b = g_list_model_get_item (rows, i);
      g_assert_cmpint (strcmp (cowscope_event_item_get_type_name (a),
                               cowscope_event_item_get_type_name (b)), <=, 0);
    }

  /* A filter keeps exactly the matching rows, case-insensitively. */
  gint64 n_end = sql_int (fixture_path,
                          "SELECT count(*) FROM events e JOIN event_types t ON t.id = e.type"
                          " WHERE t.name = 'materialize_end'");
  g_assert_cmpint (n_end, >, 0);
  g_assert_true (query_events (events, &w, COWSCOPE_EVENT_ORDER_SEQ, FALSE, "Materialize_END", NULL));
  g_assert_cmpint (g_list_model_get_n_items (rows), ==, n_end);
  g_autoptr (CowscopeEventItem) first_end = g_list_model_get_item (rows, 0);
  g_assert_cmpstr (cowscope_event_item_get_type_name (first_end), ==, "materialize_end");
  g_assert_cmpint (cowscope_event_list_position_of (events, 1), ==, -1); /* filtered out */

  /* A filter nothing matches empties the list; a cancelled query changes nothing. */
  g_assert_true (query_events (events, &w, COWSCOPE_EVENT_ORDER_SEQ, FALSE, "no such text", NULL));
  g_assert_cmpuint (g_list_model_get_n_items (rows), ==, 0);
  g_autoptr (GCancellable) cancelled = g_cancellable_new ();
  g_cancellable_cancel (cancelled);
  g_assert_false (query_events (events, &w, COWSCOPE_EVENT_ORDER_TIME, FALSE, NULL, cancelled));
  g_assert_error (w.error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_assert_cmpuint (w.changes, ==, 0);
  g_assert_cmpuint (g_list_model_get_n_items (rows), ==, 0);

  /* Back to the natural order: position i is seq first + i again. */
  g_assert_true (query_events (events, &w, COWSCOPE_EVENT_ORDER_SEQ, FALSE, "", NULL));
  g_assert_cmpuint (g_list_model_get_n_items (rows), ==, n);
  g_autoptr (CowscopeEventItem) first = g_list_model_get_item (rows, 0);
  g_assert_cmpint (cowscope_event_item_get_seq (first), ==, 1);
  g_assert_cmpint (cowscope_event_list_position_of (events, 7), ==, 6);

  g_clear_error (&w.error);
  g_main_loop_unref (w.loop);
}

/* ---- schema 1 (no packed tables) ------------------------------------------ */

/* A copy of the fixture as schema 1 wrote it: no timeline_* tables, no
 * checkpoint_states or checkpoint_replays. */
static char *
schema1_copy (void)
{
  g_autofree char *contents = NULL;
  gsize length = 0;
  g_assert_true (g_file_get_contents (fixture_path, &contents, &length, NULL));
  char *old = scratch ("schema1.cowscope");
  g_assert_true (g_file_set_contents (old, contents, (gssize) length, NULL));
  exec_on (old,
           "DROP TABLE timeline_lanes; DROP TABLE timeline_chunks; DROP TABLE timeline_spans;"
           "DROP TABLE timeline_counters; DROP TABLE checkpoint_states;"
           "DROP TABLE checkpoint_replays; DELETE FROM meta WHERE key = 'index_format';"
           "UPDATE meta SET value = '1' WHERE key = 'schema_version'; PRAGMA user_version = 1;");
  return old;
}

/* Every item and span of every lane in a few windows, as text. */
static void
describe_timeline (CowscopeSessionDocument *doc, GPtrArray *out)
{
  gint64 start = cowscope_session_document_get_start_ns (doc);
  gint64 end = cowscope_session_document_get_end_ns (doc) + 1;
  GListModel *lanes = cowscope_session_document_get_lanes (doc);
  for (guint i = 0; i < g_list_model_get_n_items (lanes); i++)
    {
      g_autoptr (CowscopeTimelineLane) lane = g_list_model_get_item (lanes, i);
      g_ptr_array_add (out, g_strdup_printf ("lane %u %s %" G_GUINT64_FORMAT, i,
                                             cowscope_timeline_lane_get_title (lane),
                                             cowscope_timeline_lane_get_n_events (lane)));
      gint64 windows[][2] = { { start, end }, { start + (end - start) / 3, start + (end - start) / 2 },
                              { end - 20000, end } };
      guint widths[] = { 1500, 333, 7 };
      for (guint w = 0; w < G_N_ELEMENTS (windows); w++)
        {
          g_autoptr (CowscopeTimelineWindow) win =
            cowscope_timeline_lane_query (lane, windows[w][0], windows[w][1], widths[w]);
          guint n;
          const CowscopeTimelineItem *items = cowscope_timeline_window_get_items (win, &n);
          for (guint k = 0; k < n; k++)
            g_ptr_array_add (out, g_strdup_printf (
              "item %u %u %" G_GINT64_FORMAT " %" G_GINT64_FORMAT " %" G_GINT64_FORMAT
              " %" G_GUINT64_FORMAT " %u %u", i, w, items[k].start_ns, items[k].end_ns,
              items[k].id, items[k].bytes, items[k].count, items[k].kind));
          const CowscopeTimelineItem *spans = cowscope_timeline_window_get_spans (win, &n);
          for (guint k = 0; k < n; k++)
            g_ptr_array_add (out, g_strdup_printf (
              "span %u %u %" G_GINT64_FORMAT " %" G_GINT64_FORMAT " %" G_GINT64_FORMAT
              " %" G_GUINT64_FORMAT " %u", i, w, spans[k].start_ns, spans[k].end_ns,
              spans[k].id, spans[k].bytes, spans[k].kind));
          const CowscopeCounterSample *samples = cowscope_timeline_window_get_samples (win, &n);
          for (guint k = 0; k < n; k++)
            g_ptr_array_add (out, g_strdup_printf ("sample %u %u %u %.0f %.0f %.0f", i, w, k,
                                                   samples[k].min, samples[k].max,
                                                   samples[k].last));
        }
    }
}

/* A schema-1 session still opens (from a finalized copy: its own file is
 * not written), and its lanes, counter tracks and graphs equal those the
 * packed tables give. */
static void
test_schema1_matches_packed (void)
{
  g_autofree char *old = schema1_copy ();
  g_autoptr (GError) error = NULL;
  g_autoptr (CowscopeSessionDocument) doc = cowscope_session_document_load (old, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (cowscope_session_document_get_n_events (doc), ==, fixture_info.n_events);
  g_assert_cmpint (cowscope_session_document_get_start_ns (doc), ==,
                   cowscope_session_document_get_start_ns (fixture_doc));
  g_assert_cmpint (cowscope_session_document_get_end_ns (doc), ==,
                   cowscope_session_document_get_end_ns (fixture_doc));

  g_autoptr (GPtrArray) from_rows = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GPtrArray) packed = g_ptr_array_new_with_free_func (g_free);
  describe_timeline (doc, from_rows);
  describe_timeline (fixture_doc, packed);
  g_assert_cmpuint (from_rows->len, >, 100);
  for (guint i = 0; i < MIN (from_rows->len, packed->len); i++)
    g_assert_cmpstr (packed->pdata[i], ==, from_rows->pdata[i]);
  g_assert_cmpuint (packed->len, ==, from_rows->len);

  gint64 seqs[] = { 1, 499, 500, 501, 2222, (gint64) fixture_info.n_events - 3,
                    (gint64) fixture_info.n_events };
  for (guint i = 0; i < G_N_ELEMENTS (seqs); i++)
    {
      g_autoptr (CowscopeSharingGraph) a =
        cowscope_sharing_graph_build (doc, seqs[i], 1000, NULL, &error);
      g_assert_no_error (error);
      g_autoptr (CowscopeSharingGraph) b =
        cowscope_sharing_graph_build (fixture_doc, seqs[i], 1000, NULL, &error);
      g_assert_no_error (error);
      g_assert_cmpuint (cowscope_sharing_graph_get_n_nodes (a), ==,
                        cowscope_sharing_graph_get_n_nodes (b));
      g_assert_cmpuint (cowscope_sharing_graph_get_n_edges (a), ==,
                        cowscope_sharing_graph_get_n_edges (b));
      g_assert_cmpint (cowscope_sharing_graph_get_time (a), ==, cowscope_sharing_graph_get_time (b));
      for (guint k = 0; k < cowscope_sharing_graph_get_n_nodes (a); k++)
        {
          const CowscopeGraphNode *x = cowscope_sharing_graph_get_node (a, k);
          const CowscopeGraphNode *y = cowscope_sharing_graph_get_node (b, k);
          g_assert_cmpuint (x->kind, ==, y->kind);
          g_assert_cmpuint (x->id, ==, y->id);
          g_assert_cmpuint (x->state, ==, y->state);
          g_assert_cmpint (x->free_ts, ==, y->free_ts);
          g_assert_cmpuint (x->freed_soon, ==, y->freed_soon);
          g_assert_cmpuint (x->nbytes, ==, y->nbytes);
          g_assert_cmpstr (x->label, ==, y->label);
        }
    }
  /* The file that was opened is still the schema-1 file it was. */
  g_assert_cmpint (sql_int (old, "PRAGMA user_version"), ==, 1);
  g_assert_cmpint (sql_int (old, "SELECT count(*) FROM sqlite_master WHERE name = 'timeline_lanes'"),
                   ==, 0);
  g_unlink (old);
}

/* The packed tables agree with a recount from the raw rows. */
static void
test_packed_tables_recount (void)
{
  g_assert_cmpint (sql_int (fixture_path, "SELECT value FROM meta WHERE key = 'index_format'"), ==, 1);
  g_assert_cmpint (sql_int (fixture_path,
                            "SELECT sum (n_instants) FROM timeline_lanes WHERE device IS NULL"),
                   ==, sql_int (fixture_path, "SELECT count(*) FROM events"));
  g_assert_cmpint (sql_int (fixture_path,
                            "SELECT sum (n_instants) FROM timeline_lanes WHERE device IS NOT NULL"),
                   ==, sql_int (fixture_path, "SELECT count(*) FROM cuda_activity"));
  g_assert_cmpint (sql_int (fixture_path, "SELECT sum (n) FROM timeline_chunks"), ==,
                   sql_int (fixture_path, "SELECT sum (n_instants) FROM timeline_lanes"));
  g_assert_cmpint (sql_int (fixture_path, "SELECT sum (n_spans) FROM timeline_lanes"), ==,
                   sql_int (fixture_path,
                            "SELECT (SELECT count(*) FROM materializations WHERE begin_ts IS NOT NULL)"
                            " + (SELECT count(*) FROM ranges) + (SELECT count(*) FROM cuda_activity)"));
  /* A lane's count is its (pid, tid)'s events. */
  g_assert_cmpint (sql_int (fixture_path,
                            "SELECT count(*) FROM timeline_lanes l WHERE device IS NULL AND n_instants !="
                            " (SELECT count(*) FROM events e WHERE e.pid = l.pid AND e.tid = l.tid)"),
                   ==, 0);
  /* One state per checkpoint, with as many objects as checkpoint_objects;
   * replays cover every event once. */
  g_assert_cmpint (sql_int (fixture_path, "SELECT count(*) FROM checkpoint_states"), ==,
                   (gint64) fixture_info.n_checkpoints);
  g_assert_cmpint (sql_int (fixture_path,
                            "SELECT count(*) FROM checkpoint_states s WHERE n_objects !="
                            " (SELECT count(*) FROM checkpoint_objects o"
                            "  WHERE o.checkpoint_id = s.checkpoint_id)"),
                   ==, 0);
  g_assert_cmpint (sql_int (fixture_path, "SELECT sum (last_seq - first_seq + 1) FROM checkpoint_replays"),
                   ==, (gint64) fixture_info.n_events);
  g_assert_cmpint (sql_int (fixture_path, "SELECT count(*) FROM checkpoint_replays"), ==,
                   (gint64) fixture_info.n_checkpoints + 1);
}

/* A damaged packed BLOB is reported, never a crash: graph states when the
 * graph is built, timeline chunks when a query first decodes them (the
 * lane then leaves them out), the latter once. */
static void
test_packed_damaged (void)
{
  g_autofree char *contents = NULL;
  gsize length = 0;
  g_assert_true (g_file_get_contents (fixture_path, &contents, &length, NULL));
  g_autofree char *bad = scratch ("badblob.cowscope");
  g_assert_true (g_file_set_contents (bad, contents, (gssize) length, NULL));
  exec_on (bad, "UPDATE checkpoint_states SET objects = x'ffffffffffffffffffffff';"
                "UPDATE checkpoint_replays SET events = x'0102ff';"
                "UPDATE timeline_chunks SET instants = x'02ffffffffffffffffffff' WHERE chunk = 0;");
  g_autoptr (GError) error = NULL;
  g_autoptr (CowscopeSessionDocument) doc = cowscope_session_document_load (bad, NULL, &error);
  g_assert_no_error (error);
  g_assert_null (cowscope_session_document_take_query_error (doc)); /* nothing read yet */
  gint64 start = cowscope_session_document_get_start_ns (doc);
  gint64 end = cowscope_session_document_get_end_ns (doc) + 1;
  GListModel *lanes = cowscope_session_document_get_lanes (doc);
  guint damaged_lanes = 0;
  for (guint i = 0; i < g_list_model_get_n_items (lanes); i++)
    {
      g_autoptr (CowscopeTimelineLane) lane = g_list_model_get_item (lanes, i);
      CowscopeLaneKind kind = cowscope_timeline_lane_get_kind (lane);
      if (kind != COWSCOPE_LANE_THREAD && kind != COWSCOPE_LANE_CUDA_STREAM)
        continue;
      /* One chunk per lane here: all of it is gone, but its spans stay. */
      g_assert_cmpuint (cowscope_timeline_lane_get_n_events (lane), >, 0);
      for (int again = 0; again < 2; again++)
        {
          g_autoptr (CowscopeTimelineWindow) w = cowscope_timeline_lane_query (lane, start, end, 800);
          g_assert_cmpuint (cowscope_timeline_window_get_total_count (w), ==, 0);
          g_assert_cmpuint (cowscope_timeline_lane_count (lane, start, end), ==, 0);
        }
      damaged_lanes++;
    }
  g_assert_cmpuint (damaged_lanes, >, 1);
  error = cowscope_session_document_take_query_error (doc);
  g_assert_error (error, COWSCOPE_SESSION_ERROR, COWSCOPE_SESSION_ERROR_DAMAGED);
  g_assert_nonnull (strstr (error->message, "damaged"));
  g_assert_nonnull (strstr (error->message, "chunk 0"));
  g_clear_error (&error);
  g_assert_null (cowscope_session_document_take_query_error (doc)); /* reported once */

  g_autoptr (CowscopeSharingGraph) graph =
    cowscope_sharing_graph_build (doc, (gint64) fixture_info.n_events / 2, 0, NULL, &error);
  g_assert_null (graph);
  g_assert_error (error, COWSCOPE_SESSION_ERROR, COWSCOPE_SESSION_ERROR_DAMAGED);
  g_clear_error (&error);

  /* Rows that contradict each other are refused at open. */
  g_clear_object (&doc);
  exec_on (bad, "UPDATE timeline_chunks SET last_ts = first_ts - 1 WHERE chunk = 0;");
  doc = cowscope_session_document_load (bad, NULL, &error);
  g_assert_null (doc);
  g_assert_error (error, COWSCOPE_SESSION_ERROR, COWSCOPE_SESSION_ERROR_DAMAGED);
  g_unlink (bad);
}

/* ---- lazy lanes ---------------------------------------------------------- */

static char *chunked_path;

/* A session whose lanes have many small chunks (700 instants: blocks of
 * 64 do not divide them), generated once. */
static const char *
chunked_fixture (void)
{
  if (chunked_path != NULL)
    return chunked_path;
  chunked_path = scratch ("chunked.cowscope");
  SessionFixtureOptions o;
  session_fixture_options_small (&o);
  o.n_events = 24000;
  o.timeline_chunk = 700;
  o.seed = 9;
  g_autoptr (GError) error = NULL;
  g_assert_true (session_fixture_generate (chunked_path, &o, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (sql_int (chunked_path, "SELECT max (chunk) FROM timeline_chunks"), >=, 4);
  return chunked_path;
}

/* The windows a lane is checked at: the whole session, windows from one
 * chunk's edge to another's, or just inside or past them, and random
 * windows and widths (many split chunks and blocks). */
static GArray *
lane_windows (const char *path, CowscopeSessionDocument *doc, guint seed)
{
  typedef struct { gint64 t0, t1; guint width; } Win;
  GArray *windows = g_array_new (FALSE, FALSE, sizeof (Win));
  gint64 start = cowscope_session_document_get_start_ns (doc);
  gint64 end = cowscope_session_document_get_end_ns (doc) + 1;
  guint widths[] = { 1, 2, 7, 333, 1500, 4000 };
  for (guint w = 0; w < G_N_ELEMENTS (widths); w++)
    g_array_append_val (windows, ((Win) { start, end, widths[w] }));
  sqlite3 *db = NULL;
  g_assert_cmpint (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  sqlite3_stmt *q = NULL;
  g_assert_cmpint (sqlite3_prepare_v2 (db, "SELECT first_ts, last_ts FROM timeline_chunks"
                                           " ORDER BY random () LIMIT 12", -1, &q, NULL),
                   ==, SQLITE_OK);
  while (sqlite3_step (q) == SQLITE_ROW)
    {
      gint64 first = sqlite3_column_int64 (q, 0), last = sqlite3_column_int64 (q, 1);
      g_array_append_val (windows, ((Win) { first, last + 1, 50 }));
      g_array_append_val (windows, ((Win) { first + 1, last, 3 }));
      g_array_append_val (windows, ((Win) { first - (last - first), last + 1, 2 }));
      g_array_append_val (windows, ((Win) { (first + last) / 2, last + (last - first), 997 }));
    }
  sqlite3_finalize (q);
  sqlite3_close (db);
  g_autoptr (GRand) rand = g_rand_new_with_seed (seed);
  for (int k = 0; k < 40; k++)
    {
      gint64 a = start + (gint64) (g_rand_double (rand) * (double) (end - start));
      gint64 b = a + 1 + (gint64) (g_rand_double (rand) * g_rand_double (rand)
                                   * (double) (end - a));
      g_array_append_val (windows, ((Win) { a, b, (guint) g_rand_int_range (rand, 1, 3000) }));
    }
  return windows;
}

/* Every item of @lane in @windows, as text. */
static void
describe_lane (CowscopeTimelineLane *lane, GArray *windows, GPtrArray *out)
{
  typedef struct { gint64 t0, t1; guint width; } Win;
  for (guint w = 0; w < windows->len; w++)
    {
      const Win *win = &g_array_index (windows, Win, w);
      g_autoptr (CowscopeTimelineWindow) result =
        cowscope_timeline_lane_query (lane, win->t0, win->t1, win->width);
      guint n;
      const CowscopeTimelineItem *items = cowscope_timeline_window_get_items (result, &n);
      for (guint k = 0; k < n; k++)
        g_ptr_array_add (out, g_strdup_printf (
          "%u item %u %" G_GINT64_FORMAT " %" G_GINT64_FORMAT " %" G_GINT64_FORMAT
          " %" G_GUINT64_FORMAT " %u %u %x", w, items[k].pixel, items[k].start_ns,
          items[k].end_ns, items[k].id, items[k].bytes, items[k].count, items[k].kind,
          items[k].kinds));
      const CowscopeTimelineItem *spans = cowscope_timeline_window_get_spans (result, &n);
      for (guint k = 0; k < n; k++)
        g_ptr_array_add (out, g_strdup_printf ("%u span %" G_GINT64_FORMAT " %" G_GINT64_FORMAT
                                               " %" G_GINT64_FORMAT, w, spans[k].start_ns,
                                               spans[k].end_ns, spans[k].id));
      g_ptr_array_add (out, g_strdup_printf ("%u count %" G_GUINT64_FORMAT, w,
                                             cowscope_timeline_lane_count (lane, win->t0,
                                                                           win->t1)));
    }
}

static void
assert_same_lines (GPtrArray *a, GPtrArray *b)
{
  for (guint i = 0; i < MIN (a->len, b->len); i++)
    g_assert_cmpstr (a->pdata[i], ==, b->pdata[i]);
  g_assert_cmpuint (a->len, ==, b->len);
}

/* Lanes read lazily give exactly the items of the in-memory design, at
 * windows and widths that split chunks and blocks, and counts that equal
 * SQL recounts; whatever the cache holds (a budget of one chunk makes it
 * evict on nearly every chunk) the answers are the same. */
static void
test_lazy_matches_eager (void)
{
  const char *path = chunked_fixture ();
  g_autoptr (GError) error = NULL;
  g_autoptr (CowscopeSessionDocument) lazy = cowscope_session_document_load (path, NULL, &error);
  g_assert_no_error (error);
  g_autoptr (CowscopeSessionDocument) eager = cowscope_session_document_load_eager (path, &error);
  g_assert_no_error (error);
  CowscopeChunkStoreStats stats;
  cowscope_session_document_get_chunk_stats (lazy, &stats);
  g_assert_cmpuint (stats.loads, ==, 0); /* nothing decoded at open */
  g_assert_cmpuint (stats.budget, ==, 64u << 20);

  GListModel *lazy_lanes = cowscope_session_document_get_lanes (lazy);
  GListModel *eager_lanes = cowscope_session_document_get_lanes (eager);
  g_assert_cmpuint (g_list_model_get_n_items (lazy_lanes), ==, g_list_model_get_n_items (eager_lanes));
  g_autoptr (GArray) windows = lane_windows (path, lazy, 11);
  guint checked = 0;
  for (guint i = 0; i < g_list_model_get_n_items (lazy_lanes); i++)
    {
      g_autoptr (CowscopeTimelineLane) a = g_list_model_get_item (lazy_lanes, i);
      g_autoptr (CowscopeTimelineLane) b = g_list_model_get_item (eager_lanes, i);
      g_assert_cmpstr (cowscope_timeline_lane_get_title (a), ==, cowscope_timeline_lane_get_title (b));
      g_assert_cmpuint (cowscope_timeline_lane_get_n_events (a), ==,
                        cowscope_timeline_lane_get_n_events (b));
      CowscopeLaneKind kind = cowscope_timeline_lane_get_kind (a);
      if (kind != COWSCOPE_LANE_THREAD && kind != COWSCOPE_LANE_CUDA_STREAM)
        continue;
      g_autoptr (GPtrArray) from_lazy = g_ptr_array_new_with_free_func (g_free);
      g_autoptr (GPtrArray) from_eager = g_ptr_array_new_with_free_func (g_free);
      g_autoptr (GPtrArray) tiny = g_ptr_array_new_with_free_func (g_free);
      cowscope_session_document_set_chunk_budget (lazy, 64u << 20);
      describe_lane (a, windows, from_lazy);
      describe_lane (b, windows, from_eager);
      assert_same_lines (from_lazy, from_eager);
      cowscope_session_document_set_chunk_budget (lazy, 1);
      describe_lane (a, windows, tiny);
      assert_same_lines (tiny, from_eager);
      typedef struct { gint64 t0, t1; guint width; } Win;
      for (guint w = 0; w < windows->len; w++)
        {
          const Win *win = &g_array_index (windows, Win, w);
          if (win->t1 > win->t0)
            check_window_in (path, a, win->t0, win->t1, win->width); /* SQL recount */
        }
      checked++;
    }
  g_assert_cmpuint (checked, >=, 6);
  cowscope_session_document_get_chunk_stats (lazy, &stats);
  g_assert_cmpuint (stats.loads, >, 0);
  g_assert_cmpuint (stats.evictions, >, 0);
  g_assert_cmpuint (stats.n_chunks, ==, 1); /* the budget keeps one chunk */
  g_assert_null (cowscope_session_document_take_query_error (lazy));
}

typedef struct {
  CowscopeTimelineLane *lane;
  GArray *windows;
  GPtrArray *lines;
} QueryJob;

static gpointer
query_thread (gpointer data)
{
  QueryJob *job = data;
  for (int round = 0; round < 3; round++)
    {
      g_ptr_array_set_size (job->lines, 0);
      describe_lane (job->lane, job->windows, job->lines);
    }
  return NULL;
}

/* One query result as lines (items, spans, their count). */
static void
describe_window (CowscopeTimelineWindow *result, GPtrArray *out)
{
  guint n;
  const CowscopeTimelineItem *items = cowscope_timeline_window_get_items (result, &n);
  for (guint k = 0; k < n; k++)
    g_ptr_array_add (out, g_strdup_printf (
      "item %u %" G_GINT64_FORMAT " %" G_GINT64_FORMAT " %" G_GINT64_FORMAT " %" G_GUINT64_FORMAT
      " %u %u %x", items[k].pixel, items[k].start_ns, items[k].end_ns, items[k].id,
      items[k].bytes, items[k].count, items[k].kind, items[k].kinds));
  const CowscopeTimelineItem *spans = cowscope_timeline_window_get_spans (result, &n);
  for (guint k = 0; k < n; k++)
    g_ptr_array_add (out, g_strdup_printf ("span %" G_GINT64_FORMAT " %" G_GINT64_FORMAT
                                           " %" G_GINT64_FORMAT, spans[k].start_ns,
                                           spans[k].end_ns, spans[k].id));
  g_ptr_array_add (out, g_strdup_printf ("total %" G_GUINT64_FORMAT,
                                         cowscope_timeline_window_get_total_count (result)));
}

static void
on_lane_query (GObject *source, GAsyncResult *result, gpointer data)
{
  CowscopeTimelineWindow **out = data;
  g_autoptr (GError) error = NULL;
  *out = cowscope_timeline_lane_query_finish (COWSCOPE_TIMELINE_LANE (source), result, &error);
  g_assert_no_error (error);
}

/* A query that may not read the file (a first frame's) reads nothing:
 * on a fresh document it estimates each chunk from its row (buckets of
 * kind "other" only, the window's count within one instant a chunk,
 * spans exact) and says so; once the chunks are decoded its answer is
 * the query's, exactly.  The query in a worker thread answers as the
 * query does. */
static void
test_lazy_query_cached (void)
{
  const char *path = chunked_fixture ();
  g_autoptr (GError) error = NULL;
  g_autoptr (CowscopeSessionDocument) doc = cowscope_session_document_load (path, NULL, &error);
  g_assert_no_error (error);
  gint64 start = cowscope_session_document_get_start_ns (doc);
  gint64 end = cowscope_session_document_get_end_ns (doc) + 1;
  GListModel *lanes = cowscope_session_document_get_lanes (doc);
  guint estimated = 0;
  for (guint i = 0; i < g_list_model_get_n_items (lanes); i++)
    {
      g_autoptr (CowscopeTimelineLane) lane = g_list_model_get_item (lanes, i);
      CowscopeLaneKind kind = cowscope_timeline_lane_get_kind (lane);
      gboolean complete = FALSE;
      g_autoptr (CowscopeTimelineWindow) guess =
        cowscope_timeline_lane_query_cached (lane, start, end, 1500, &complete);
      if (kind != COWSCOPE_LANE_THREAD && kind != COWSCOPE_LANE_CUDA_STREAM)
        {
          g_assert_true (complete); /* in memory: exact at once */
          continue;
        }
      if (cowscope_timeline_lane_get_n_events (lane) < 2)
        continue;
      g_assert_false (complete);
      guint n;
      const CowscopeTimelineItem *items = cowscope_timeline_window_get_items (guess, &n);
      g_assert_cmpuint (n, >, 0);
      for (guint k = 0; k < n; k++)
        {
          g_assert_cmpuint (items[k].kind, ==, COWSCOPE_ITEM_OTHER);
          g_assert_cmpuint (items[k].kinds, ==, 1u << COWSCOPE_ITEM_OTHER);
          g_assert_cmpuint (items[k].count, >=, 2);
        }
      g_autofree char *chunks_sql = g_strdup_printf (
        "SELECT count(*) FROM timeline_chunks c JOIN timeline_lanes l ON c.lane = l.id"
        " WHERE l.pid = %u AND l.tid = %" G_GINT64_FORMAT " AND l.device %s",
        cowscope_timeline_lane_get_pid (lane), cowscope_timeline_lane_get_tid (lane),
        kind == COWSCOPE_LANE_CUDA_STREAM ? ">= 0" : "IS NULL");
      guint64 total = cowscope_timeline_window_get_total_count (guess);
      guint64 exact = cowscope_timeline_lane_get_n_events (lane);
      g_assert_cmpuint (total, <=, exact);
      g_assert_cmpuint (total + (guint64) sql_int (path, chunks_sql), >=, exact);
      /* The spans (in memory) are exact already. */
      g_autoptr (CowscopeTimelineWindow) real = cowscope_timeline_lane_query (lane, start, end, 1500);
      guint n_guess, n_real;
      cowscope_timeline_window_get_spans (guess, &n_guess);
      cowscope_timeline_window_get_spans (real, &n_real);
      g_assert_cmpuint (n_guess, ==, n_real);
      /* Decoded now (the budget holds them): the same answer. */
      g_autoptr (CowscopeTimelineWindow) again =
        cowscope_timeline_lane_query_cached (lane, start, end, 1500, &complete);
      g_assert_true (complete);
      g_autoptr (GPtrArray) a = g_ptr_array_new_with_free_func (g_free);
      g_autoptr (GPtrArray) b = g_ptr_array_new_with_free_func (g_free);
      describe_window (again, a);
      describe_window (real, b);
      assert_same_lines (a, b);
      /* In a worker thread. */
      CowscopeTimelineWindow *async = NULL;
      cowscope_timeline_lane_query_async (lane, start + 1, end - 1, 333, NULL, on_lane_query,
                                          &async);
      while (async == NULL)
        g_main_context_iteration (NULL, TRUE);
      g_autoptr (CowscopeTimelineWindow) sync = cowscope_timeline_lane_query (lane, start + 1,
                                                                              end - 1, 333);
      g_ptr_array_set_size (a, 0);
      g_ptr_array_set_size (b, 0);
      describe_window (async, a);
      describe_window (sync, b);
      assert_same_lines (a, b);
      g_object_unref (async);
      estimated++;
    }
  g_assert_cmpuint (estimated, >=, 6);
}

/* Two threads querying lanes of one document through a small shared
 * cache (the UI thread draws while a worker counts a range) get the
 * answers one thread gets. */
static void
test_lazy_threads (void)
{
  const char *path = chunked_fixture ();
  g_autoptr (GError) error = NULL;
  g_autoptr (CowscopeSessionDocument) doc = cowscope_session_document_load (path, NULL, &error);
  g_assert_no_error (error);
  g_autoptr (CowscopeSessionDocument) eager = cowscope_session_document_load_eager (path, &error);
  g_assert_no_error (error);
  cowscope_session_document_set_chunk_budget (doc, 3 * 700 * 6);
  g_autoptr (GArray) windows = lane_windows (path, doc, 5);
  g_autoptr (CowscopeTimelineLane) lane0 = g_list_model_get_item (cowscope_session_document_get_lanes (doc), 0);
  g_autoptr (CowscopeTimelineLane) lane1 = g_list_model_get_item (cowscope_session_document_get_lanes (doc), 1);
  QueryJob jobs[2] = {
    { lane0, windows, g_ptr_array_new_with_free_func (g_free) },
    { lane1, windows, g_ptr_array_new_with_free_func (g_free) },
  };
  GThread *threads[2];
  for (int i = 0; i < 2; i++)
    threads[i] = g_thread_new ("query", query_thread, &jobs[i]);
  for (int i = 0; i < 2; i++)
    {
      g_thread_join (threads[i]);
      g_autoptr (CowscopeTimelineLane) e = g_list_model_get_item (cowscope_session_document_get_lanes (eager), (guint) i);
      g_autoptr (GPtrArray) expected = g_ptr_array_new_with_free_func (g_free);
      describe_lane (e, windows, expected);
      assert_same_lines (jobs[i].lines, expected);
      g_ptr_array_unref (jobs[i].lines);
    }
}

/* A damaged chunk in the middle of a lane: the lane answers without it
 * (and exactly with every other chunk), and the error is reported once. */
static void
test_lazy_damaged_chunk (void)
{
  const char *path = chunked_fixture ();
  g_autofree char *contents = NULL;
  gsize length = 0;
  g_assert_true (g_file_get_contents (path, &contents, &length, NULL));
  g_autofree char *bad = scratch ("chunked-bad.cowscope");
  g_assert_true (g_file_set_contents (bad, contents, (gssize) length, NULL));
  /* Lane 1's chunk 2 cut in half (decodes, but too few instants), lane 2's
   * chunk 1 garbage. */
  exec_on (bad, "UPDATE timeline_chunks SET instants = substr (instants, 1, length (instants) / 2)"
                " WHERE lane = (SELECT min (id) FROM timeline_lanes) AND chunk = 2;"
                "UPDATE timeline_chunks SET instants = x'00ff' WHERE lane ="
                " (SELECT min (id) + 1 FROM timeline_lanes) AND chunk = 1;");
  g_autoptr (GError) error = NULL;
  g_autoptr (CowscopeSessionDocument) doc = cowscope_session_document_load (bad, NULL, &error);
  g_assert_no_error (error);
  gint64 start = cowscope_session_document_get_start_ns (doc);
  gint64 end = cowscope_session_document_get_end_ns (doc) + 1;
  GListModel *lanes = cowscope_session_document_get_lanes (doc);
  for (guint i = 0; i < 2; i++)
    {
      g_autoptr (CowscopeTimelineLane) lane = g_list_model_get_item (lanes, i);
      gint64 lane_id = sql_int (bad, i == 0 ? "SELECT min (id) FROM timeline_lanes"
                                            : "SELECT min (id) + 1 FROM timeline_lanes");
      g_autofree char *lost_sql = g_strdup_printf (
        "SELECT n FROM timeline_chunks WHERE lane = %" G_GINT64_FORMAT " AND chunk = %u",
        lane_id, i == 0 ? 2 : 1);
      guint64 lost = (guint64) sql_int (bad, lost_sql);
      for (guint width = 1; width < 5000; width *= 7)
        {
          g_autoptr (CowscopeTimelineWindow) w = cowscope_timeline_lane_query (lane, start, end, width);
          g_assert_cmpuint (cowscope_timeline_window_get_total_count (w) + lost, ==,
                            cowscope_timeline_lane_get_n_events (lane));
        }
      g_assert_cmpuint (cowscope_timeline_lane_count (lane, start, end) + lost, ==,
                        cowscope_timeline_lane_get_n_events (lane));
    }
  error = cowscope_session_document_take_query_error (doc);
  g_assert_error (error, COWSCOPE_SESSION_ERROR, COWSCOPE_SESSION_ERROR_DAMAGED);
  g_assert_nonnull (strstr (error->message, "chunked-bad.cowscope"));
  g_clear_error (&error);
  g_assert_null (cowscope_session_document_take_query_error (doc));
  g_unlink (bad);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  fixture_path = scratch ("fixture.cowscope");
  SessionFixtureOptions options;
  session_fixture_options_small (&options);
  g_autoptr (GError) error = NULL;
  if (!session_fixture_generate (fixture_path, &options, &fixture_info, &error))
    g_error ("fixture: %s", error->message);
  fixture_doc = cowscope_session_document_load (fixture_path, NULL, &error);
  if (fixture_doc == NULL)
    g_error ("load: %s", error->message);

  g_test_add_func ("/session/document/bounds-and-lanes", test_bounds_and_lanes);
  g_test_add_func ("/session/document/load-async-progress", test_load_async);
  g_test_add_func ("/session/document/bad-files", test_bad_files);
  g_test_add_func ("/session/timeline/aggregation", test_timeline_aggregation);
  g_test_add_func ("/session/graph/matches-replay", test_graph_matches_replay);
  g_test_add_func ("/session/graph/at-time-async", test_graph_at_time_async);
  g_test_add_func ("/session/graph/cache-matches-cold", test_graph_cache_matches_cold);
  g_test_add_func ("/session/graph/parallel-assembly", test_graph_parallel_assembly);
  g_test_add_func ("/session/graph/packed-state-matches-replay",
                   test_graph_packed_state_matches_replay);
  g_test_add_func ("/session/explain/copy-steal-violation", test_explain_copy);
  g_test_add_func ("/session/lists/events-warnings-objects", test_lists);
  g_test_add_func ("/session/lists/events-sorted-filtered-in-sql", test_event_query);
  g_test_add_func ("/session/lists/event-pages-read-off-main-thread", test_event_pages);
  g_test_add_func ("/session/packed/recount", test_packed_tables_recount);
  g_test_add_func ("/session/packed/schema1-matches-packed", test_schema1_matches_packed);
  g_test_add_func ("/session/packed/damaged", test_packed_damaged);
  g_test_add_func ("/session/lazy/matches-eager", test_lazy_matches_eager);
  g_test_add_func ("/session/lazy/threads", test_lazy_threads);
  g_test_add_func ("/session/lazy/query-cached", test_lazy_query_cached);
  g_test_add_func ("/session/lazy/damaged-chunk", test_lazy_damaged_chunk);
  int status = g_test_run ();
  g_object_unref (fixture_doc);
  g_unlink (fixture_path);
  g_free (fixture_path);
  if (chunked_path != NULL)
    g_unlink (chunked_path);
  g_free (chunked_path);
  return status;
}
