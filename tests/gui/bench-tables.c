/* bench-tables.c — sorting the Events table of a ten-million-event
 * session (meson benchmark `tables-sort`, under Xvfb), one column after
 * another, with a row selected (GtkSingleSelection once searched all ten
 * million rows for it):
 *
 *   first visible page   from the header click (cowscope_tables_view_sort_by)
 *                        until the rows in view show their values;
 *   longest stall        the longest gap between two runs of a 1 ms
 *                        G_PRIORITY_HIGH timeout meanwhile: how long the
 *                        main loop was blocked (target: one frame, 16 ms),
 *                        in wall time and in the main thread's CPU time
 *                        (the wall gap also counts waits for a core: see
 *                        the idle window's, measured first);
 *   SQL alone            the baseline, same run: the ORDER BY through
 *                        SQLite on its own connection, every seq stepped
 *                        (joined to the type and op names for every column).
 *
 * Then a filter set and cleared: the rows' number changes, which GTK's
 * list models hear of (a new order of the same rows they do not).
 *
 * The session is generated once and cached at $COWSCOPE_BENCH_SESSION
 * (shared with the timeline benchmark; events: $COWSCOPE_BENCH_EVENTS,
 * default 10,000,000).  Wall times on a machine shared with other work:
 * read the ratio, not the absolute time.
 */
#include <adwaita.h>
#include <glib/gstdio.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cowscope-tables-view.h"
#include "session-fixture.h"

static double
now_ms (void)
{
  return g_get_monotonic_time () / 1000.0;
}

/* CPU time of the calling thread. */
static double
thread_cpu_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Main-loop stalls: gaps between runs of a high-priority timeout, in
 * wall time and in the main thread's own CPU time (on a loaded machine
 * the wall gap also counts time the thread waited for a core). */
typedef struct {
  double last, last_cpu, longest, longest_cpu;
} Stalls;

static gboolean
stall_tick (gpointer data)
{
  Stalls *s = data;
  double t = now_ms (), cpu = thread_cpu_ms ();
  if (s->last > 0)
    {
      s->longest = MAX (s->longest, t - s->last);
      s->longest_cpu = MAX (s->longest_cpu, cpu - s->last_cpu);
    }
  s->last = t;
  s->last_cpu = cpu;
  return G_SOURCE_CONTINUE;
}

static void
collect_css (GtkWidget *root, const char *css_name, GPtrArray *out)
{
  if (g_strcmp0 (gtk_widget_get_css_name (root), css_name) == 0)
    g_ptr_array_add (out, root);
  for (GtkWidget *c = gtk_widget_get_first_child (root); c != NULL; c = gtk_widget_get_next_sibling (c))
    collect_css (c, css_name, out);
}

/* The rows in view show values: the sort is done, at least a few rows
 * are made, and no cell label still shows the placeholder. */
static gboolean
page_shown (gpointer data)
{
  CowscopeTablesView *table = data;
  if (!cowscope_tables_view_get_ready (table))
    return FALSE;
  g_autoptr (GPtrArray) rows = g_ptr_array_new ();
  collect_css (GTK_WIDGET (table), "row", rows);
  guint shown = 0;
  for (guint i = 0; i < rows->len; i++)
    {
      if (!gtk_widget_get_mapped (rows->pdata[i]))
        continue;
      g_autoptr (GPtrArray) labels = g_ptr_array_new ();
      collect_css (rows->pdata[i], "label", labels);
      for (guint k = 0; k < labels->len; k++)
        if (strcmp (gtk_label_get_text (labels->pdata[k]), "…") == 0)
          return FALSE;
      shown++;
    }
  return shown >= 5;
}

static gboolean
wait_until (gboolean (*done) (gpointer), gpointer data, int seconds)
{
  gint64 deadline = g_get_monotonic_time () + (gint64) seconds * G_USEC_PER_SEC;
  while (!done (data))
    {
      if (g_get_monotonic_time () > deadline)
        return FALSE;
      g_main_context_iteration (NULL, TRUE);
    }
  return TRUE;
}

/* The same ORDER BY as the event list's query, stepped to its end on
 * its own connection: what SQLite alone takes. */
static double
sql_alone_ms (const char *path, const char *order)
{
  sqlite3 *db = NULL;
  if (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
    g_error ("cannot open %s", path);
  g_autofree char *sql = g_strdup_printf (
    "SELECT e.seq FROM events e LEFT JOIN event_types t ON t.id = e.type"
    " LEFT JOIN ops o ON o.id = e.op ORDER BY %s", order);
  sqlite3_stmt *stmt = NULL;
  if (sqlite3_prepare_v2 (db, sql, -1, &stmt, NULL) != SQLITE_OK)
    g_error ("%s: %s", sql, sqlite3_errmsg (db));
  double t = now_ms ();
  gint64 sum = 0;
  while (sqlite3_step (stmt) == SQLITE_ROW)
    sum += sqlite3_column_int64 (stmt, 0);
  t = now_ms () - t;
  sqlite3_finalize (stmt);
  sqlite3_close (db);
  g_assert_cmpint (sum, >, 0);
  return t;
}

int
main (int argc, char *argv[])
{
  g_autoptr (GError) error = NULL;
  gtk_init ();
  adw_init ();

  const char *path = g_getenv ("COWSCOPE_BENCH_SESSION");
  g_autofree char *fallback = g_build_filename (g_get_tmp_dir (), "cowscope-bench-timeline-10m.cowscope", NULL);
  if (path == NULL)
    path = fallback;
  guint64 n_events = 10000000;
  if (g_getenv ("COWSCOPE_BENCH_EVENTS") != NULL)
    n_events = g_ascii_strtoull (g_getenv ("COWSCOPE_BENCH_EVENTS"), NULL, 10);
  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    {
      /* The timeline benchmark's options: one cached file serves both. */
      SessionFixtureOptions o = {
        .n_events = n_events, .n_processes = 2, .n_threads = 4, .target_live = 100000,
        .checkpoint_interval = 131072, .finalized = TRUE, .seed = 1,
      };
      g_autofree char *tmp = g_strconcat (path, ".part", NULL);
      double t = now_ms ();
      if (!session_fixture_generate (tmp, &o, NULL, &error) || g_rename (tmp, path) != 0)
        {
          fprintf (stderr, "cannot generate %s: %s\n", path, error ? error->message : "rename");
          return 1;
        }
      printf ("generated %s: %" G_GUINT64_FORMAT " events in %.1f s\n", path, n_events,
              (now_ms () - t) / 1000);
    }
  else
    printf ("reusing %s\n", path);

  CowscopeSessionDocument *doc = cowscope_session_document_load (path, NULL, &error);
  if (doc == NULL)
    {
      fprintf (stderr, "cannot load %s: %s\n", path, error->message);
      return 1;
    }
  CowscopeViewState *state = cowscope_view_state_new (doc);
  GtkWindow *window = GTK_WINDOW (gtk_window_new ());
  gtk_window_set_default_size (window, 700, 800);
  CowscopeTablesView *table = COWSCOPE_TABLES_VIEW (cowscope_tables_view_new (COWSCOPE_TABLES_EVENTS));
  gtk_window_set_child (window, GTK_WIDGET (table));
  gtk_window_present (window);
  cowscope_tables_view_set_view_state (table, state);
  if (!wait_until (page_shown, table, 120))
    {
      fprintf (stderr, "the table did not show its rows\n");
      return 1;
    }
  /* A row selected, as after a click on the timeline. */
  gint64 n = (gint64) cowscope_session_document_get_n_events (doc);
  cowscope_view_state_set_selected_seq (state, cowscope_session_document_get_first_seq (doc) + n / 2);

  static const struct { const char *column; GtkSortType order; const char *sql; } sorts[] = {
    { "seq", GTK_SORT_DESCENDING, "e.seq DESC" },
    { "time", GTK_SORT_ASCENDING, "e.ts ASC, e.seq ASC" },
    { "pid", GTK_SORT_ASCENDING, "e.pid ASC, e.seq ASC" },
    { "thread", GTK_SORT_ASCENDING, "e.tid ASC, e.seq ASC" },
    { "event", GTK_SORT_ASCENDING, "t.name ASC, e.seq ASC" },
    { "op", GTK_SORT_ASCENDING, "o.name ASC, e.seq ASC" },
    { "values", GTK_SORT_ASCENDING,
      "ifnull(e.v0, 0), ifnull(e.v1, 0), ifnull(e.v2, 0), ifnull(e.v3, 0), e.seq" },
  };
  /* The stall baseline: the same timeout on the idle window for 2 s. */
  {
    Stalls idle = { 0, 0, 0, 0 };
    guint tick = g_timeout_add_full (G_PRIORITY_HIGH, 1, stall_tick, &idle, NULL);
    double end = now_ms () + 2000;
    while (now_ms () < end)
      g_main_context_iteration (NULL, TRUE);
    g_source_remove (tick);
    printf ("longest stall of the idle window over 2 s (baseline): %.1f ms wall, %.1f ms CPU\n",
            idle.longest, idle.longest_cpu);
  }
  printf ("%" G_GINT64_FORMAT " events; each column: SQL alone (baseline), then the table\n", n);
  printf ("%-8s %13s %14s %7s %22s\n", "column", "SQL alone ms", "first page ms", "ratio",
          "longest stall ms wall/CPU");
  int status = 0;
  for (guint i = 0; i < G_N_ELEMENTS (sorts); i++)
    {
      double sql_ms = sql_alone_ms (path, sorts[i].sql);
      Stalls stalls = { 0, 0, 0, 0 };
      guint tick = g_timeout_add_full (G_PRIORITY_HIGH, 1, stall_tick, &stalls, NULL);
      double t = now_ms ();
      cowscope_tables_view_sort_by (table, sorts[i].column, sorts[i].order);
      gboolean shown = wait_until (page_shown, table, 600);
      double page_ms = now_ms () - t;
      g_source_remove (tick);
      printf ("%-8s %13.0f %14.0f %7.2f %14.1f / %5.1f%s\n", sorts[i].column, sql_ms, page_ms,
              page_ms / sql_ms, stalls.longest, stalls.longest_cpu, shown ? "" : "  (never shown)");
      fflush (stdout);
      if (!shown)
        status = 1;
    }
  /* A filter changes the number of rows: GTK's list models are told of
   * the change (one removal and one addition), unlike a new order. */
  static const char *const filters[] = { "materialize_end", "" };
  for (guint i = 0; i < G_N_ELEMENTS (filters); i++)
    {
      Stalls stalls = { 0, 0, 0, 0 };
      guint tick = g_timeout_add_full (G_PRIORITY_HIGH, 1, stall_tick, &stalls, NULL);
      double t = now_ms ();
      cowscope_tables_view_set_filter_text (table, filters[i]);
      gboolean shown = wait_until (page_shown, table, 600);
      double page_ms = now_ms () - t;
      g_source_remove (tick);
      printf ("filter %-16s %14.0f ms to the first page, longest stall %.1f / %.1f ms%s\n",
              filters[i][0] ? filters[i] : "(cleared)", page_ms, stalls.longest, stalls.longest_cpu,
              shown ? "" : "  (never shown)");
      fflush (stdout);
      if (!shown)
        status = 1;
    }
  printf ("(one run per column on a shared machine; a stall counts the frames the\n"
          " table draws; wall also counts waits for a core, CPU does not)\n");
  gtk_window_destroy (window);
  g_object_unref (state);
  g_object_unref (doc);
  return status;
}
