/* test-lanes-model.c — what the session model gives the timeline to make
 * it a daily tool, without a display: user range names and nesting, the
 * lanes a person pinned, hid, collapsed or filtered, stepping through an
 * object's events, the tensor search and flow arrows, each checked
 * against the fixture session's tables (tests/session/session-fixture.c)
 * or expected answers written out below. */
#include <glib/gstdio.h>
#include <sqlite3.h>
#include <string.h>
#include <unistd.h>

#include "cowscope-event-steps.h"
#include "cowscope-flows.h"
#include "cowscope-lane-filter.h"
#include "cowscope-lane-order.h"
#include "cowscope-range-names.h"
#include "cowscope-tensor-search.h"
#include "session-fixture.h"

static char *fixture_path;
static SessionFixtureInfo info;
static CowscopeSessionDocument *doc;

static char *
scratch (const char *name)
{
  const char *dir = g_getenv ("COWSCOPE_TEST_TMPDIR");
  g_autofree char *base = g_strdup_printf ("test-lanes-%d-%s", (int) getpid (), name);
  return g_build_filename (dir ? dir : g_get_tmp_dir (), base, NULL);
}

static gint64
sql_int (const char *sql)
{
  sqlite3 *db = NULL;
  g_assert_cmpint (sqlite3_open_v2 (fixture_path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  sqlite3_stmt *stmt = NULL;
  g_assert_cmpint (sqlite3_prepare_v2 (db, sql, -1, &stmt, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_step (stmt), ==, SQLITE_ROW);
  gint64 value = sqlite3_column_int64 (stmt, 0);
  sqlite3_finalize (stmt);
  sqlite3_close (db);
  return value;
}

/* ---- range names ---------------------------------------------------------------- */

/* The fixture's ranges plus a nested chain (epoch > forward > matmul) on
 * one thread and a chain of parents that loops, on another. */
static void
test_range_names (void)
{
  g_autofree char *path = scratch ("ranges.cowscope");
  g_autofree char *contents = NULL;
  gsize length;
  g_assert_true (g_file_get_contents (fixture_path, &contents, &length, NULL));
  g_assert_true (g_file_set_contents (path, contents, (gssize) length, NULL));
  guint32 pid = (guint32) sql_int ("SELECT min(pid) FROM processes");
  sqlite3 *db = NULL;
  g_assert_cmpint (sqlite3_open (path, &db), ==, SQLITE_OK);
  g_autofree char *sql = g_strdup_printf (
    "INSERT INTO ranges VALUES (%1$u, 900001, %2$u, 'epoch', NULL, 10, 100),"
    " (%1$u, 900002, %2$u, 'forward', 900001, 20, 50),"
    " (%1$u, 900003, %2$u, 'matmul', 900002, 30, 40),"
    " (%1$u, 900004, %2$u, '', 900001, 60, 70),"
    " (%1$u, 900010, %3$u, 'loop a', 900011, 1, 2),"
    " (%1$u, 900011, %3$u, 'loop b', 900010, 1, 2)",
    pid, pid + 1, pid + 2);
  g_assert_cmpint (sqlite3_exec (db, sql, NULL, NULL, NULL), ==, SQLITE_OK);
  sqlite3_close (db);

  g_autoptr (GError) error = NULL;
  g_autoptr (CowscopeSessionDocument) d = cowscope_session_document_load (path, NULL, &error);
  g_assert_no_error (error);
  g_autoptr (CowscopeRangeNames) names = cowscope_range_names_load (d, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (cowscope_range_names_get_n_ranges (names), ==,
                    sql_int ("SELECT count(*) FROM ranges") + 6);
  g_assert_cmpstr (cowscope_range_names_lookup (names, pid, 900001), ==, "epoch");
  g_assert_cmpstr (cowscope_range_names_lookup (names, pid, 900003), ==, "matmul");
  g_assert_null (cowscope_range_names_lookup (names, pid, 900004)); /* empty: unnamed */
  g_assert_null (cowscope_range_names_lookup (names, pid + 1, 900001)); /* other process */
  g_assert_null (cowscope_range_names_lookup (names, pid, 12345678));
  g_assert_cmpuint (cowscope_range_names_get_depth (names, pid, 900001), ==, 0);
  g_assert_cmpuint (cowscope_range_names_get_depth (names, pid, 900002), ==, 1);
  g_assert_cmpuint (cowscope_range_names_get_depth (names, pid, 900003), ==, 2);
  g_assert_cmpuint (cowscope_range_names_get_depth (names, pid, 900004), ==, 1);
  /* The fixture's own ranges ("step", no parent) are on that thread too. */
  g_assert_cmpstr (cowscope_range_names_lookup (names, pid, 1), ==, "step");
  g_assert_cmpuint (cowscope_range_names_get_thread_rows (names, pid, pid + 1), ==, 3);
  g_assert_cmpuint (cowscope_range_names_get_thread_rows (names, pid, pid + 3), ==, 0);
  /* A loop of parents ends (capped), it does not hang. */
  g_assert_cmpuint (cowscope_range_names_get_depth (names, pid, 900010), <=, 16);
  g_assert_cmpuint (cowscope_range_names_get_thread_rows (names, pid, pid + 2), <=, 17);
  g_unlink (path);
}

static void
loaded_cb (GObject *source, GAsyncResult *result, gpointer data)
{
  (void) source;
  *(CowscopeRangeNames **) data = cowscope_range_names_load_finish (result, NULL);
}

/* The asynchronous load gives the same table. */
static void
test_range_names_async (void)
{
  CowscopeRangeNames *names = NULL;
  cowscope_range_names_load_async (doc, NULL, loaded_cb, &names);
  while (names == NULL)
    g_main_context_iteration (NULL, TRUE);
  g_assert_cmpuint (cowscope_range_names_get_n_ranges (names), ==,
                    sql_int ("SELECT count(*) FROM ranges"));
  g_assert_cmpuint (cowscope_range_names_get_n_ranges (names), >, 0);
  cowscope_range_names_unref (names);
}

/* ---- the lanes shown --------------------------------------------------------------- */

/* The arranged lanes' keys, joined by spaces. */
static char *
arranged_keys (CowscopeLaneFilter *filter, guint *n_pinned)
{
  g_autoptr (GPtrArray) ordered =
    cowscope_lane_order_for_display (cowscope_session_document_get_lanes (doc));
  g_autoptr (GPtrArray) shown = cowscope_lane_filter_arrange (filter, doc, ordered, n_pinned);
  GString *s = g_string_new (NULL);
  for (guint i = 0; i < shown->len; i++)
    {
      g_autofree char *key = cowscope_lane_key (shown->pdata[i]);
      g_string_append_printf (s, "%s%s", i ? " " : "", key);
    }
  return g_string_free (s, FALSE);
}

static void
count_change (guint *changes)
{
  (*changes)++;
}

/* Pinning, hiding, collapsing, a filter text and the counters, each
 * against the lanes written out: the fixture has two processes (pids P
 * and P + 1000) of three threads each, three CUDA streams and the three
 * counters. */
static void
test_lane_filter (void)
{
  guint32 p0 = (guint32) sql_int ("SELECT min(pid) FROM processes");
  guint32 p1 = (guint32) sql_int ("SELECT max(pid) FROM processes");
  g_autoptr (CowscopeLaneFilter) filter = cowscope_lane_filter_new ();
  guint changes = 0;
  g_signal_connect_swapped (filter, "changed", G_CALLBACK (count_change), &changes);
  guint n_pinned = 99;
  g_autofree char *all = arranged_keys (filter, &n_pinned);
  g_autofree char *expected = g_strdup_printf (
    "counter/0 counter/1 counter/2 process/%1$u thread/%1$u/%2$u thread/%1$u/%3$u"
    " thread/%1$u/%4$u process/%5$u thread/%5$u/%6$u thread/%5$u/%7$u thread/%5$u/%8$u"
    " cuda/%1$u/0/7 cuda/%1$u/0/13 cuda/%5$u/0/7",
    p0, p0 + 1, p0 + 2, p0 + 3, p1, p1 + 1, p1 + 2, p1 + 3);
  g_assert_cmpstr (all, ==, expected);
  g_assert_cmpuint (n_pinned, ==, 0);

  /* Find lanes by key. */
  g_autoptr (GPtrArray) ordered =
    cowscope_lane_order_for_display (cowscope_session_document_get_lanes (doc));
  CowscopeTimelineLane *t12 = NULL, *t21 = NULL, *cuda = NULL;
  g_autofree char *k12 = g_strdup_printf ("thread/%u/%u", p0, p0 + 2);
  g_autofree char *k21 = g_strdup_printf ("thread/%u/%u", p1, p1 + 1);
  for (guint i = 0; i < ordered->len; i++)
    {
      g_autofree char *key = cowscope_lane_key (ordered->pdata[i]);
      if (g_str_equal (key, k12))
        t12 = ordered->pdata[i];
      else if (g_str_equal (key, k21))
        t21 = ordered->pdata[i];
      else if (g_str_has_prefix (key, "cuda/") && cuda == NULL)
        cuda = ordered->pdata[i];
    }
  g_assert_nonnull (t12);
  g_assert_nonnull (t21);
  g_assert_nonnull (cuda);

  /* Pinned: first, in display order, counted. */
  cowscope_lane_filter_set_pinned (filter, t21, TRUE);
  cowscope_lane_filter_set_pinned (filter, t12, TRUE);
  cowscope_lane_filter_set_pinned (filter, t12, TRUE); /* no change */
  g_assert_cmpuint (changes, ==, 2);
  g_assert_true (cowscope_lane_filter_get_pinned (filter, t12));
  g_autofree char *pinned = arranged_keys (filter, &n_pinned);
  g_assert_cmpuint (n_pinned, ==, 2);
  g_autofree char *pinned_head = g_strdup_printf ("%s %s counter/0 ", k12, k21);
  g_assert_true (g_str_has_prefix (pinned, pinned_head));
  g_assert_null (strstr (pinned + strlen (pinned_head), k12));

  /* Hidden: gone, even when pinned. */
  cowscope_lane_filter_set_hidden (filter, t21, TRUE);
  cowscope_lane_filter_set_hidden (filter, cuda, TRUE);
  g_autofree char *hidden = arranged_keys (filter, &n_pinned);
  g_assert_cmpuint (n_pinned, ==, 1);
  g_assert_null (strstr (hidden, k21));
  g_autofree char *cuda_key = g_strdup_printf ("cuda/%u/0/7 ", p0);
  g_assert_null (strstr (hidden, cuda_key));
  g_assert_nonnull (strstr (hidden, "cuda/"));

  /* Collapsed: process p0's threads fold under its lane, but a pinned one
   * stays. */
  cowscope_lane_filter_set_collapsed (filter, p0, TRUE);
  g_assert_true (cowscope_lane_filter_get_collapsed (filter, p0));
  g_autofree char *collapsed = arranged_keys (filter, &n_pinned);
  g_autofree char *expected_collapsed = g_strdup_printf (
    "%s counter/0 counter/1 counter/2 process/%u process/%u thread/%u/%u thread/%u/%u"
    " cuda/%u/0/13 cuda/%u/0/7", k12, p0, p1, p1, p1 + 2, p1, p1 + 3, p0, p1);
  g_assert_cmpstr (collapsed, ==, expected_collapsed);

  /* Reset: nothing hidden or collapsed; pins stay. */
  cowscope_lane_filter_reset (filter);
  g_autofree char *reset = arranged_keys (filter, &n_pinned);
  g_assert_cmpuint (n_pinned, ==, 2);
  g_assert_cmpuint (strlen (reset), ==, strlen (all));

  /* A filter text: a thread id keeps that thread and its process lane
   * (and the counters, which are no thread's); case is ignored in
   * names. */
  cowscope_lane_filter_set_pinned (filter, t12, FALSE);
  cowscope_lane_filter_set_pinned (filter, t21, FALSE);
  g_autofree char *tid_text = g_strdup_printf (" %u ", p1 + 3);
  cowscope_lane_filter_set_text (filter, tid_text);
  g_autofree char *by_tid = arranged_keys (filter, NULL);
  g_autofree char *expected_tid = g_strdup_printf (
    "counter/0 counter/1 counter/2 process/%u thread/%u/%u", p1, p1, p1 + 3);
  g_assert_cmpstr (by_tid, ==, expected_tid);
  cowscope_lane_filter_set_text (filter, "WORKER-1");
  g_autofree char *by_name = arranged_keys (filter, NULL);
  g_autofree char *expected_name = g_strdup_printf (
    "counter/0 counter/1 counter/2 process/%1$u thread/%1$u/%2$u process/%3$u thread/%3$u/%4$u",
    p0, p0 + 2, p1, p1 + 2);
  g_assert_cmpstr (by_name, ==, expected_name);
  /* The program's name matches every lane of its processes. */
  cowscope_lane_filter_set_text (filter, "train");
  g_autofree char *by_program = arranged_keys (filter, NULL);
  g_assert_cmpstr (by_program, ==, all);
  cowscope_lane_filter_set_text (filter, "no such lane");
  g_autofree char *none = arranged_keys (filter, NULL);
  g_assert_cmpstr (none, ==, "counter/0 counter/1 counter/2");

  /* Only one process: its lanes and the counters, in one change. */
  guint before = changes;
  cowscope_lane_filter_show_only_process (filter, cowscope_session_document_get_lanes (doc), p1);
  g_assert_cmpuint (changes, ==, before + 1);
  g_autofree char *only = arranged_keys (filter, NULL);
  g_autofree char *expected_only = g_strdup_printf (
    "counter/0 counter/1 counter/2 process/%1$u thread/%1$u/%2$u thread/%1$u/%3$u"
    " thread/%1$u/%4$u cuda/%1$u/0/7", p1, p1 + 1, p1 + 2, p1 + 3);
  g_assert_cmpstr (only, ==, expected_only);
  cowscope_lane_filter_reset (filter);

  /* Counters off. */
  cowscope_lane_filter_set_text (filter, NULL);
  cowscope_lane_filter_set_show_counters (filter, FALSE);
  g_autofree char *no_counters = arranged_keys (filter, NULL);
  g_assert_null (strstr (no_counters, "counter/"));
  g_assert_true (g_str_has_suffix (all, no_counters));
}

/* ---- stepping --------------------------------------------------------------------- */

static void
test_steps (void)
{
  /* Written out: seq, start, kind. */
  const CowscopeObjectEvent given[] = {
    { .seq = 50, .start_ns = 500, .kind = COWSCOPE_ITEM_COPY },
    { .seq = 10, .start_ns = 100, .kind = COWSCOPE_ITEM_LAZY_CLONE },
    { .seq = 30, .start_ns = 300, .kind = COWSCOPE_ITEM_VIOLATION },
    { .seq = 31, .start_ns = 300, .kind = COWSCOPE_ITEM_STEAL },
    { .seq = 70, .start_ns = 700, .kind = COWSCOPE_ITEM_EAGER_COPY },
  };
  g_autoptr (GArray) ev = g_array_new (FALSE, FALSE, sizeof (CowscopeObjectEvent));
  g_array_append_vals (ev, given, G_N_ELEMENTS (given));
  cowscope_event_steps_sort (ev);
  const gint64 order[] = { 10, 30, 31, 50, 70 };
  for (guint i = 0; i < ev->len; i++)
    g_assert_cmpint (g_array_index (ev, CowscopeObjectEvent, i).seq, ==, order[i]);
#define SEQ(i) ((i) < 0 ? -1 : g_array_index (ev, CowscopeObjectEvent, (i)).seq)
  /* From the cursor (nothing selected): an event at the cursor is next. */
  g_assert_cmpint (SEQ (cowscope_event_steps_find (ev, -1, 300, 1, COWSCOPE_STEP_ANY)), ==, 30);
  g_assert_cmpint (SEQ (cowscope_event_steps_find (ev, -1, 300, -1, COWSCOPE_STEP_ANY)), ==, 10);
  g_assert_cmpint (SEQ (cowscope_event_steps_find (ev, -1, 0, -1, COWSCOPE_STEP_ANY)), ==, -1);
  g_assert_cmpint (SEQ (cowscope_event_steps_find (ev, -1, 701, 1, COWSCOPE_STEP_ANY)), ==, -1);
  /* From the selected event: equal times ordered by seq. */
  g_assert_cmpint (SEQ (cowscope_event_steps_find (ev, 30, 0, 1, COWSCOPE_STEP_ANY)), ==, 31);
  g_assert_cmpint (SEQ (cowscope_event_steps_find (ev, 31, 0, -1, COWSCOPE_STEP_ANY)), ==, 30);
  g_assert_cmpint (SEQ (cowscope_event_steps_find (ev, 31, 0, 1, COWSCOPE_STEP_ANY)), ==, 50);
  /* A selection the list does not hold: the cursor counts. */
  g_assert_cmpint (SEQ (cowscope_event_steps_find (ev, 999, 400, 1, COWSCOPE_STEP_ANY)), ==, 50);
  /* Copies: copy, eager copy (not the steal). */
  g_assert_cmpint (SEQ (cowscope_event_steps_find (ev, 10, 0, 1, COWSCOPE_STEP_COPIES)), ==, 50);
  g_assert_cmpint (SEQ (cowscope_event_steps_find (ev, 50, 0, 1, COWSCOPE_STEP_COPIES)), ==, 70);
  g_assert_cmpint (SEQ (cowscope_event_steps_find (ev, 70, 0, 1, COWSCOPE_STEP_COPIES)), ==, -1);
  g_assert_cmpint (SEQ (cowscope_event_steps_find (ev, 70, 0, -1, COWSCOPE_STEP_COPIES)), ==, 50);
  /* Warnings. */
  g_assert_cmpint (SEQ (cowscope_event_steps_find (ev, 70, 0, -1, COWSCOPE_STEP_WARNINGS)), ==, 30);
  g_assert_cmpint (SEQ (cowscope_event_steps_find (ev, 30, 0, 1, COWSCOPE_STEP_WARNINGS)), ==, -1);
#undef SEQ
}

/* ---- tensor search --------------------------------------------------------------- */

static void
names_cb (GObject *source, GAsyncResult *result, gpointer data)
{
  (void) source;
  g_autoptr (GError) error = NULL;
  *(GStrv *) data = cowscope_tensor_search_names_finish (result, &error);
  g_assert_no_error (error);
}

/* The names offered are the distinct names, sorted; a name finds its
 * tensors and exactly the events the tables hold for them, by time; a
 * part of a name finds the tensors containing it. */
static void
test_tensor_search (void)
{
  GStrv names = NULL;
  cowscope_tensor_search_names_async (doc, NULL, names_cb, &names);
  while (names == NULL)
    g_main_context_iteration (NULL, TRUE);
  g_assert_cmpuint (g_strv_length (names), ==,
                    sql_int ("SELECT count(DISTINCT name) FROM tensors WHERE name != ''"));
  g_assert_cmpuint (g_strv_length (names), >, 1);
  for (guint i = 1; names[i] != NULL; i++)
    g_assert_cmpint (strcmp (names[i - 1], names[i]), <, 0);

  /* A named tensor that was copied, by its name. */
  gint64 copy = sql_int ("SELECT min(m.seq) FROM materializations m JOIN tensors t"
                         " ON m.pid = t.pid AND m.tensor_id = t.id"
                         " WHERE t.name IS NOT NULL AND m.kind = 1");
  g_autofree char *id_sql = g_strdup_printf (
    "SELECT tensor_id FROM materializations WHERE seq = %" G_GINT64_FORMAT, copy);
  g_autofree char *name = g_strdup_printf ("t%" G_GINT64_FORMAT, sql_int (id_sql));
  g_autoptr (GError) error = NULL;
  g_autoptr (CowscopeTensorMatches) m = cowscope_tensor_search_find (doc, name, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (m->exact);
  g_autofree char *n_tensors = g_strdup_printf ("SELECT count(*) FROM tensors WHERE name = '%s'",
                                                name);
  g_assert_cmpuint (m->tensors->len, ==, sql_int (n_tensors));
  g_autofree char *named = g_strdup_printf ("(SELECT pid, id FROM tensors WHERE name = '%s')",
                                            name);
  g_autofree char *n_events = g_strdup_printf (
    "SELECT count(*) FROM (SELECT seq FROM materializations WHERE (pid, tensor_id) IN %1$s"
    " UNION SELECT seq FROM lazy_clones WHERE (pid, source_tensor_id) IN %1$s"
    " OR (pid, result_tensor_id) IN %1$s UNION SELECT seq FROM violations"
    " WHERE (pid, writer_tensor_id) IN %1$s OR (pid, accessor_tensor_id) IN %1$s)",
    named);
  g_assert_cmpuint (m->events->len, ==, sql_int (n_events));
  gboolean has_copy = FALSE;
  for (guint i = 0; i < m->events->len; i++)
    {
      const CowscopeObjectEvent *ev = &g_array_index (m->events, CowscopeObjectEvent, i);
      has_copy |= ev->seq == copy && ev->kind == COWSCOPE_ITEM_COPY;
      if (i > 0)
        g_assert_cmpint (g_array_index (m->events, CowscopeObjectEvent, i - 1).start_ns, <=,
                         ev->start_ns);
      g_assert_cmpuint (ev->kind, !=, COWSCOPE_ITEM_OTHER);
    }
  g_assert_true (has_copy);

  /* Part of a name: "T1" (case ignored) is in t1, t10, t11, ... */
  g_autoptr (CowscopeTensorMatches) part = cowscope_tensor_search_find (doc, "T1", NULL, &error);
  g_assert_no_error (error);
  g_assert_false (part->exact);
  g_assert_cmpuint (part->tensors->len, ==,
                    sql_int ("SELECT count(*) FROM tensors WHERE name LIKE '%t1%'"));
  /* LIKE's wildcards are text here. */
  g_autoptr (CowscopeTensorMatches) none = cowscope_tensor_search_find (doc, "%", NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (none->tensors->len, ==, 0);
  g_assert_cmpuint (none->events->len, ==, 0);
  g_strfreev (names);
}

/* ---- flows ---------------------------------------------------------------------- */

/* A copy's flows: from its lazy clone, and to the CUDA memcpy it issued;
 * the lazy clone's: to each materialization it caused; an allocation
 * event has none. */
static void
test_flows (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) flows = cowscope_flows_find (doc, info.copy_seq, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (flows->len, ==, 2);
  const CowscopeFlow *lc = &g_array_index (flows, CowscopeFlow, 0);
  const CowscopeFlow *cuda = &g_array_index (flows, CowscopeFlow, 1);
  g_assert_cmpint (lc->kind, ==, COWSCOPE_FLOW_LAZY_CLONE_TO_COPY);
  g_assert_cmpint (lc->from.id, ==, info.copy_lazy_clone_seq);
  g_assert_cmpint (lc->to.id, ==, info.copy_seq);
  g_autofree char *lc_ts = g_strdup_printf ("SELECT ts FROM lazy_clones WHERE seq = %" G_GINT64_FORMAT,
                                            info.copy_lazy_clone_seq);
  g_autofree char *lc_tid = g_strdup_printf ("SELECT tid FROM lazy_clones WHERE seq = %" G_GINT64_FORMAT,
                                             info.copy_lazy_clone_seq);
  g_autofree char *m_ts = g_strdup_printf ("SELECT begin_ts FROM materializations WHERE seq = %"
                                           G_GINT64_FORMAT, info.copy_seq);
  g_assert_cmpint (lc->from.ns, ==, sql_int (lc_ts));
  g_assert_cmpint (lc->from.tid, ==, sql_int (lc_tid));
  g_assert_cmpint (lc->from.device, ==, -1);
  g_assert_cmpint (lc->to.ns, ==, sql_int (m_ts));
  g_assert_cmpint (cuda->kind, ==, COWSCOPE_FLOW_OPERATION_TO_CUDA);
  g_assert_cmpint (cuda->from.id, ==, info.copy_seq);
  g_assert_cmpint (cuda->to.id, ==, info.copy_cuda_id);
  g_autofree char *c_sql = g_strdup_printf (
    "SELECT start_ns * 1000 + stream_id FROM cuda_activity WHERE id = %" G_GINT64_FORMAT,
    info.copy_cuda_id);
  g_assert_cmpint (cuda->to.ns * 1000 + cuda->to.tid, ==, sql_int (c_sql));
  g_assert_cmpint (cuda->to.device, >=, 0);

  g_autoptr (GArray) from_lc = cowscope_flows_find (doc, info.copy_lazy_clone_seq, NULL, &error);
  g_assert_no_error (error);
  g_autofree char *n_caused = g_strdup_printf (
    "SELECT count(*) FROM materializations WHERE lazy_clone_seq = %" G_GINT64_FORMAT,
    info.copy_lazy_clone_seq);
  g_assert_cmpuint (from_lc->len, ==, sql_int (n_caused));
  gboolean to_copy = FALSE;
  for (guint i = 0; i < from_lc->len; i++)
    {
      const CowscopeFlow *f = &g_array_index (from_lc, CowscopeFlow, i);
      g_assert_cmpint (f->from.id, ==, info.copy_lazy_clone_seq);
      to_copy |= f->to.id == info.copy_seq;
    }
  g_assert_true (to_copy);

  gint64 plain = sql_int ("SELECT min(seq) FROM events WHERE type = 1");
  g_autoptr (GArray) none = cowscope_flows_find (doc, plain, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (none->len, ==, 0);
}

int
main (int argc, char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  fixture_path = scratch ("fixture.cowscope");
  SessionFixtureOptions options;
  session_fixture_options_small (&options);
  g_autoptr (GError) error = NULL;
  if (!session_fixture_generate (fixture_path, &options, &info, &error))
    g_error ("fixture: %s", error->message);
  doc = cowscope_session_document_load (fixture_path, NULL, &error);
  if (doc == NULL)
    g_error ("load: %s", error->message);

  g_test_add_func ("/lanes-model/range-names/nested", test_range_names);
  g_test_add_func ("/lanes-model/range-names/async", test_range_names_async);
  g_test_add_func ("/lanes-model/filter/pin-hide-collapse-text", test_lane_filter);
  g_test_add_func ("/lanes-model/steps", test_steps);
  g_test_add_func ("/lanes-model/tensor-search", test_tensor_search);
  g_test_add_func ("/lanes-model/flows", test_flows);
  int status = g_test_run ();
  g_object_unref (doc);
  g_unlink (fixture_path);
  g_free (fixture_path);
  return status;
}
