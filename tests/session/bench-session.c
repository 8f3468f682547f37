/* bench-session.c — the session model on a generated session of ten
 * million events:
 *   open -> first frame data (load + lanes + every lane queried at 1500 px),
 *   timeline window queries while zooming/panning (100 random windows),
 *   graph rebuild at random instants with ~100,000 live objects (jumps:
 *   median and p95, wall time and the building thread's CPU time, which
 *   on a loaded machine says what the work costs), the cursor dragged a
 *   pixel at a time at the whole-session zoom, forward and back, and
 *   scrubbing,
 * each beside a baseline measured in the same run (a bare SQL count over
 * the same index range); and the memory the document holds after open,
 * after the first frame and after zooming and panning (heap bytes in use,
 * mallinfo2, and resident size, /proc/self/statm), beside the design
 * before lazy lanes (cowscope_session_document_load_eager(), measured in
 * the same run) and the events' own size.  The session is generated once
 * into the build folder (COWSCOPE_BENCH_SESSION) and reused. */
#include <glib/gstdio.h>
#include <malloc.h>
#include <unistd.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cowscope-session-document-private.h"
#include "cowscope-sharing-graph.h"
#include "session-fixture.h"

/* Heap bytes in use (malloc'd and mmapped blocks). */
static double
heap_mb (void)
{
  struct mallinfo2 m = mallinfo2 ();
  return (double) (m.uordblks + m.hblkhd) / (1 << 20);
}

/* Resident set size. */
static double
rss_mb (void)
{
  unsigned long size = 0, resident = 0;
  FILE *f = fopen ("/proc/self/statm", "r");
  if (f != NULL)
    {
      if (fscanf (f, "%lu %lu", &size, &resident) != 2)
        resident = 0;
      fclose (f);
    }
  return (double) resident * (double) sysconf (_SC_PAGESIZE) / (1 << 20);
}

/* Every lane of @doc queried over [a, b) at 1500 px; returns the items. */
static guint64
query_all (CowscopeSessionDocument *doc, gint64 a, gint64 b)
{
  GListModel *lanes = cowscope_session_document_get_lanes (doc);
  guint64 items = 0;
  for (guint i = 0; i < g_list_model_get_n_items (lanes); i++)
    {
      g_autoptr (CowscopeTimelineLane) lane = g_list_model_get_item (lanes, i);
      g_autoptr (CowscopeTimelineWindow) w = cowscope_timeline_lane_query (lane, a, b, 1500);
      guint n;
      cowscope_timeline_window_get_items (w, &n);
      items += n;
    }
  return items;
}

static double
now_ms (void)
{
  return (double) g_get_monotonic_time () / 1000.0;
}

/* The calling thread's CPU time. */
static double
cpu_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double) ts.tv_sec * 1e3 + (double) ts.tv_nsec / 1e6;
}

/* The machine's load average over the last minute (-1: unknown). */
static double
load_average (void)
{
  double load = -1;
  FILE *f = fopen ("/proc/loadavg", "r");
  if (f != NULL)
    {
      if (fscanf (f, "%lf", &load) != 1)
        load = -1;
      fclose (f);
    }
  return load;
}

static int
compare_doubles (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

static double
median (double *v, guint n)
{
  qsort (v, n, sizeof *v, compare_doubles);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double
percentile (double *v, guint n, double p)
{
  qsort (v, n, sizeof *v, compare_doubles);
  return v[MIN (n - 1, (guint) ceil (p * n) - 1)];
}

int
main (void)
{
  const char *path = g_getenv ("COWSCOPE_BENCH_SESSION");
  g_autofree char *fallback = g_build_filename (g_get_tmp_dir (), "cowscope-bench-10m.cowscope", NULL);
  if (path == NULL)
    path = fallback;
  guint64 n_events = 10000000;
  const char *n_env = g_getenv ("COWSCOPE_BENCH_EVENTS");
  if (n_env != NULL)
    n_events = g_ascii_strtoull (n_env, NULL, 10);
  g_autoptr (GError) error = NULL;

  if (!session_fixture_is_current (path))
    {
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

  /* ---- open to first frame ---- */
  double heap0 = heap_mb (), rss0 = rss_mb ();
  double t0 = now_ms ();
  g_autoptr (CowscopeSessionDocument) doc = cowscope_session_document_load (path, NULL, &error);
  if (doc == NULL)
    {
      fprintf (stderr, "%s\n", error->message);
      return 1;
    }
  double t_loaded = now_ms ();
  double heap_open = heap_mb () - heap0, rss_open = rss_mb () - rss0;
  gint64 start = cowscope_session_document_get_start_ns (doc);
  gint64 end = cowscope_session_document_get_end_ns (doc) + 1;
  GListModel *lanes = cowscope_session_document_get_lanes (doc);
  guint n_lanes = g_list_model_get_n_items (lanes);
  guint64 items = 0;
  for (guint i = 0; i < n_lanes; i++)
    {
      g_autoptr (CowscopeTimelineLane) lane = g_list_model_get_item (lanes, i);
      g_autoptr (CowscopeTimelineWindow) w = cowscope_timeline_lane_query (lane, start, end, 1500);
      guint n;
      cowscope_timeline_window_get_items (w, &n);
      items += n;
    }
  double t_first = now_ms ();
  double heap_first = heap_mb () - heap0, rss_first = rss_mb () - rss0;
  CowscopeChunkStoreStats first_stats;
  cowscope_session_document_get_chunk_stats (doc, &first_stats);

  sqlite3 *db = NULL;
  sqlite3_open_v2 (path, &db, SQLITE_OPEN_READONLY, NULL);
  sqlite3_stmt *count = NULL;
  sqlite3_prepare_v2 (db, "SELECT count(*) FROM events WHERE ts >= ?1 AND ts < ?2", -1, &count, NULL);
  double b0 = now_ms ();
  sqlite3_bind_int64 (count, 1, start);
  sqlite3_bind_int64 (count, 2, end);
  sqlite3_step (count);
  gint64 total = sqlite3_column_int64 (count, 0);
  sqlite3_reset (count);
  double b_open = now_ms () - b0;

  printf ("\n%-52s %12s %14s\n", "measure", "model", "baseline");
  printf ("%-52s %9.1f ms %11.1f ms   (SQL count(*) of all %" G_GINT64_FORMAT " events by ts index)\n",
          "open -> first frame data (load+lanes+1500px query)", t_first - t0, b_open, total);
  printf ("%-52s %9.1f ms\n", "  of which: load and index", t_loaded - t0);
  printf ("%-52s %9.1f ms   (%u lanes, %" G_GUINT64_FORMAT " items)\n", "  of which: first window, all lanes",
          t_first - t_loaded, n_lanes, items);

  /* ---- zoom/pan: 100 random windows, every lane ---- */
  g_autoptr (GRand) rand = g_rand_new_with_seed (3);
  double frame[100], lane_q[100], base[100];
  for (int k = 0; k < 100; k++)
    {
      double zoom = pow (10, -g_rand_double_range (rand, 0, 4)); /* 1 .. 1e-4 of the session */
      gint64 width = MAX ((gint64) ((double) (end - start) * zoom), 1500);
      gint64 a = start + (gint64) (g_rand_double (rand) * (double) MAX (end - start - width, 1));
      gint64 b = a + width;
      double f0 = now_ms ();
      double slowest = 0;
      for (guint i = 0; i < n_lanes; i++)
        {
          g_autoptr (CowscopeTimelineLane) lane = g_list_model_get_item (lanes, i);
          double l0 = now_ms ();
          g_autoptr (CowscopeTimelineWindow) w = cowscope_timeline_lane_query (lane, a, b, 1500);
          slowest = MAX (slowest, now_ms () - l0);
        }
      frame[k] = now_ms () - f0;
      lane_q[k] = slowest;
      double c0 = now_ms ();
      sqlite3_bind_int64 (count, 1, a);
      sqlite3_bind_int64 (count, 2, b);
      sqlite3_step (count);
      sqlite3_reset (count);
      base[k] = now_ms () - c0;
    }
  double median_lazy = median (frame, 100);
  printf ("%-52s %9.2f ms %11.2f ms   (SQL count(*) over the window, ts index)\n",
          "timeline window, all lanes, median of 100", median_lazy, median (base, 100));
  printf ("%-52s %9.2f ms %11.2f ms\n", "timeline window, all lanes, p95", percentile (frame, 100, 0.95),
          percentile (base, 100, 0.95));
  printf ("%-52s %9.2f ms   (target <= 8 ms)\n", "slowest single lane, median", median (lane_q, 100));
  double heap_zoom = heap_mb () - heap0, rss_zoom = rss_mb () - rss0;
  CowscopeChunkStoreStats zoom_stats;
  cowscope_session_document_get_chunk_stats (doc, &zoom_stats);

  /* ---- graph rebuild at random instants ---- */
  sqlite3_stmt *cp = NULL;
  sqlite3_prepare_v2 (db,
                      "SELECT count(*) FROM checkpoint_objects WHERE checkpoint_id ="
                      " (SELECT id FROM checkpoints WHERE seq <= ?1 ORDER BY seq DESC LIMIT 1)",
                      -1, &cp, NULL);
  gint64 last_seq = cowscope_session_document_get_last_seq (doc);
  enum { N_GRAPHS = 40 };
  enum { N_BACK = 8 };
  double build[N_GRAPHS], build_cpu[N_GRAPHS], cpbase[N_GRAPHS], scrub[N_GRAPHS];
  double back[N_GRAPHS * N_BACK];
  guint64 nodes = 0, replayed = 0;
  double load_before = load_average ();
  for (int k = 0; k < N_GRAPHS; k++)
    {
      gint64 seq = 1 + (gint64) (g_rand_double (rand) * (double) (last_seq - 1));
      double g0 = now_ms (), c0 = cpu_ms ();
      g_autoptr (CowscopeSharingGraph) graph = cowscope_sharing_graph_build (doc, seq, 1000000, NULL, &error);
      build[k] = now_ms () - g0;
      build_cpu[k] = cpu_ms () - c0;
      if (graph == NULL)
        {
          fprintf (stderr, "%s\n", error->message);
          return 1;
        }
      nodes += cowscope_sharing_graph_get_n_nodes (graph);
      replayed += cowscope_sharing_graph_get_n_replayed (graph);
      /* Scrubbing: the cursor moves a little (same checkpoint, warm cache). */
      double s0 = now_ms ();
      g_autoptr (CowscopeSharingGraph) next = cowscope_sharing_graph_build (doc, MIN (seq + 500, last_seq),
                                                                           1000000, NULL, NULL);
      scrub[k] = now_ms () - s0;
      /* Then back, 125 events a step, to 500 events before the first instant. */
      for (int j = 0; j < N_BACK; j++)
        {
          double p0 = now_ms ();
          g_autoptr (CowscopeSharingGraph) prev =
            cowscope_sharing_graph_build (doc, CLAMP (seq + 375 - 125 * j, 1, last_seq), 1000000,
                                          NULL, NULL);
          back[k * N_BACK + j] = now_ms () - p0;
        }
      double c1 = now_ms ();
      sqlite3_bind_int64 (cp, 1, seq);
      sqlite3_step (cp);
      sqlite3_reset (cp);
      cpbase[k] = now_ms () - c1;
    }
  double load_after = load_average ();
  printf ("%-52s %9.1f ms %11.1f ms   (SQL count(*) of the checkpoint's objects)\n",
          "graph rebuild at a random instant (a jump), median of 40", median (build, N_GRAPHS),
          median (cpbase, N_GRAPHS));
  printf ("%-52s %9.1f ms   (target <= 50 ms)\n", "graph rebuild, p95", percentile (build, N_GRAPHS, 0.95));
  printf ("%-52s %9.1f ms   (p95 %.1f ms; load average %.1f, then %.1f)\n",
          "  the building thread's CPU time, median", median (build_cpu, N_GRAPHS),
          percentile (build_cpu, N_GRAPHS, 0.95), load_before, load_after);
  printf ("%-52s %9.1f ms\n", "graph rebuild 500 events later (scrubbing)", median (scrub, N_GRAPHS));
  printf ("%-52s %9.1f ms\n", "graph rebuild 125 events earlier (scrubbing back)",
          median (back, N_GRAPHS * N_BACK));
  printf ("%-52s %9.1f ms\n", "  scrubbing back, p95", percentile (back, N_GRAPHS * N_BACK, 0.95));
  printf ("%-52s %9" G_GUINT64_FORMAT "   (target <= 50 ms at 100,000)\n", "  live objects per graph (mean)",
          nodes / N_GRAPHS);
  printf ("%-52s %9" G_GUINT64_FORMAT "\n", "  events replayed after the checkpoint (mean)",
          replayed / N_GRAPHS);

  /* ---- the cursor dragged: a pixel a step at the whole-session zoom ---- */
  enum { N_DRAG = 60 };
  double drag[N_DRAG], drag_cpu[N_DRAG], drag_back[N_DRAG], drag_back_cpu[N_DRAG];
  gint64 pixel = MAX ((last_seq - 1) / 1500, 1); /* events a pixel covers, about */
  gint64 from = last_seq / 3 + (gint64) (g_rand_double (rand) * (double) (last_seq / 3));
  g_autoptr (CowscopeSharingGraph) drag_start =
    cowscope_sharing_graph_build (doc, from, 1000000, NULL, NULL);
  for (int k = 0; k < N_DRAG; k++)
    {
      double d0 = now_ms (), c0 = cpu_ms ();
      g_autoptr (CowscopeSharingGraph) g =
        cowscope_sharing_graph_build (doc, from + pixel * (k + 1), 1000000, NULL, NULL);
      drag[k] = now_ms () - d0;
      drag_cpu[k] = cpu_ms () - c0;
    }
  for (int k = 0; k < N_DRAG; k++)
    {
      double d0 = now_ms (), c0 = cpu_ms ();
      g_autoptr (CowscopeSharingGraph) g =
        cowscope_sharing_graph_build (doc, from + pixel * (N_DRAG - 1 - k), 1000000, NULL, NULL);
      drag_back[k] = now_ms () - d0;
      drag_back_cpu[k] = cpu_ms () - c0;
    }
  printf ("%-52s %9.1f ms   (p95 %.1f ms; CPU %.1f ms; %" G_GINT64_FORMAT " events a step)\n",
          "cursor dragged a pixel a step, forward, median", median (drag, N_DRAG),
          percentile (drag, N_DRAG, 0.95), median (drag_cpu, N_DRAG), pixel);
  printf ("%-52s %9.1f ms   (p95 %.1f ms; CPU %.1f ms)\n", "cursor dragged a pixel a step, back, median",
          median (drag_back, N_DRAG), percentile (drag_back, N_DRAG, 0.95),
          median (drag_back_cpu, N_DRAG));
  sqlite3_finalize (cp);
  sqlite3_finalize (count);
  sqlite3_close (db);

  /* ---- memory: lazy lanes against the previous design, same run ---- */
  g_clear_object (&doc);
  malloc_trim (0);
  double heap1 = heap_mb (), rss1 = rss_mb ();
  double e0 = now_ms ();
  g_autoptr (CowscopeSessionDocument) eager = cowscope_session_document_load_eager (path, &error);
  if (eager == NULL)
    {
      fprintf (stderr, "%s\n", error->message);
      return 1;
    }
  double e_loaded = now_ms ();
  query_all (eager, start, end);
  double e_first = now_ms ();
  double eager_heap = heap_mb () - heap1, eager_rss = rss_mb () - rss1;
  g_rand_set_seed (rand, 3);
  for (int k = 0; k < 100; k++)
    {
      double zoom = pow (10, -g_rand_double_range (rand, 0, 4));
      gint64 width = MAX ((gint64) ((double) (end - start) * zoom), 1500);
      gint64 a = start + (gint64) (g_rand_double (rand) * (double) MAX (end - start - width, 1));
      double f0 = now_ms ();
      query_all (eager, a, a + width);
      frame[k] = now_ms () - f0;
    }
  GStatBuf st;
  double file_mb = g_stat (path, &st) == 0 ? (double) st.st_size / (1 << 20) : 0;
  printf ("\n%-52s %12s %14s\n", "memory held by the document (heap / resident)", "lazy lanes",
          "before (eager)");
  printf ("%-52s %6.1f / %4.0f MB %6.1f / %4.0f MB\n", "after open", heap_open, rss_open,
          eager_heap, eager_rss);
  printf ("%-52s %6.1f / %4.0f MB   (%u chunks decoded, %.1f MB of them)\n",
          "after the first frame (whole session, 1500 px)", heap_first, rss_first,
          first_stats.n_chunks, (double) first_stats.used / (1 << 20));
  printf ("%-52s %6.1f / %4.0f MB   (%u chunks held, %.1f MB; %" G_GUINT64_FORMAT
          " loads, %" G_GUINT64_FORMAT " evictions; budget %.0f MB)\n",
          "after 100 zoom/pan windows", heap_zoom, rss_zoom, zoom_stats.n_chunks,
          (double) zoom_stats.used / (1 << 20), zoom_stats.loads, zoom_stats.evictions,
          (double) zoom_stats.budget / (1 << 20));
  printf ("%-52s %6.0f MB   (64-byte trace events); the session file: %.0f MB\n",
          "the events themselves", (double) total * 64 / (1 << 20), file_mb);
  printf ("%-52s %9.1f ms   (lazy: %.1f ms)\n", "before (eager): open -> first frame data",
          e_first - e0, t_first - t0);
  printf ("%-52s %9.1f ms\n", "  of which: load and decode every lane", e_loaded - e0);
  printf ("%-52s %9.2f ms   (lazy: %.2f ms)\n", "before (eager): timeline window, median of 100",
          median (frame, 100), median_lazy);
  return 0;
}
