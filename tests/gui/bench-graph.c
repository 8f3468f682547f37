/* bench-graph.c — the sharing graph with 100,000 live objects (the
 * benchmark "graph rebuild when moving the cursor"):
 *   the cursor put at a random instant of the session's second half ->
 *   model graph rebuild (median of 50; what this benchmark has always
 *   measured as a cursor move, though each is a jump to another instant);
 *   the cursor dragged along the timeline a pixel at a time (the
 *   session's events over 1,500 pixels), median of 60 steps forward and
 *   60 back (target <= 16 ms: one frame); both with the building thread's
 *   CPU time;
 *   and separately aggregation and Graphviz layout of what the view draws,
 * each beside a baseline measured in the same run (a bare SQL count of the
 * nearest checkpoint's objects; Graphviz on a 2,000-node chain).  The
 * session is generated once into the build folder and reused. */
#include <glib/gstdio.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cowscope-graph-layout.h"
#include "cowscope-sharing-graph-private.h"
#include "session-fixture.h"

static double
now_ms (void)
{
  return (double) g_get_monotonic_time () / 1000.0;
}

static int
cmp (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

/* The calling thread's CPU time. */
static double
cpu_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double) ts.tv_sec * 1e3 + (double) ts.tv_nsec / 1e6;
}

/* The 95th percentile of @n values (sorts them). */
static double
p95 (double *v, guint n)
{
  qsort (v, n, sizeof *v, cmp);
  return v[MIN (n - 1, (guint) (0.95 * n + 0.999) - 1)];
}

/* The median of @n values (sorts them). */
static double
median (double *v, guint n)
{
  qsort (v, n, sizeof *v, cmp);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int
main (void)
{
  const char *path = g_getenv ("COWSCOPE_BENCH_SESSION");
  g_autofree char *fallback = g_build_filename (g_get_tmp_dir (), "cowscope-bench-graph.cowscope", NULL);
  g_autoptr (GError) error = NULL;
  if (path == NULL)
    path = fallback;
  if (!session_fixture_is_current (path))
    {
      SessionFixtureOptions o = {
        .n_events = 3000000, .n_processes = 2, .n_threads = 4, .target_live = 100000,
        .checkpoint_interval = 131072, .finalized = TRUE, .seed = 7,
      };
      g_autofree char *tmp = g_strconcat (path, ".part", NULL);
      double t = now_ms ();
      if (!session_fixture_generate (tmp, &o, NULL, &error) || g_rename (tmp, path) != 0)
        {
          fprintf (stderr, "cannot generate %s: %s\n", path, error ? error->message : "rename");
          return 1;
        }
      printf ("generated %s in %.1f s\n", path, (now_ms () - t) / 1000);
    }
  g_autoptr (CowscopeSessionDocument) doc = cowscope_session_document_load (path, NULL, &error);
  if (doc == NULL)
    {
      fprintf (stderr, "%s\n", error->message);
      return 1;
    }
  sqlite3 *db = NULL;
  sqlite3_open_v2 (path, &db, SQLITE_OPEN_READONLY, NULL);
  sqlite3_stmt *cp = NULL;
  sqlite3_prepare_v2 (db,
                      "SELECT count(*) FROM checkpoint_objects WHERE checkpoint_id ="
                      " (SELECT id FROM checkpoints WHERE seq <= ?1 ORDER BY seq DESC LIMIT 1)",
                      -1, &cp, NULL);

  /* Cursor moves in the second half of the session (steady state). */
  enum { N = 50, N_LAYOUT = 5 };
  g_autoptr (GRand) rand = g_rand_new_with_seed (11);
  gint64 start = cowscope_session_document_get_start_ns (doc);
  gint64 end = cowscope_session_document_get_end_ns (doc);
  gint64 freed_soon = cowscope_graph_layout_freed_soon_ns (doc);
  double build[N], build_cpu[N], base[N], aggregate[N_LAYOUT], layout[N_LAYOUT];
  guint64 nodes = 0, scene_nodes = 0;
  CowscopeSharingGraph *graphs[N_LAYOUT] = { NULL };
  for (int k = 0; k < N; k++)
    {
      gint64 t = start + (end - start) / 2 + (gint64) (g_rand_double (rand) * (double) (end - start) / 2);
      double t0 = now_ms (), c0 = cpu_ms ();
      gint64 seq = cowscope_session_document_seq_at_time (doc, t, NULL);
      CowscopeSharingGraph *graph = cowscope_sharing_graph_build (doc, seq, freed_soon, NULL, &error);
      build[k] = now_ms () - t0;
      build_cpu[k] = cpu_ms () - c0;
      if (graph == NULL)
        {
          fprintf (stderr, "%s\n", error->message);
          return 1;
        }
      nodes += cowscope_sharing_graph_get_n_nodes (graph);
      double b0 = now_ms ();
      sqlite3_bind_int64 (cp, 1, seq);
      sqlite3_step (cp);
      sqlite3_reset (cp);
      base[k] = now_ms () - b0;
      if (k < N_LAYOUT)
        graphs[k] = graph;
      else
        g_object_unref (graph);
    }
  /* The cursor dragged a pixel a step, from a random instant of the
   * second half, forward then back. */
  enum { N_DRAG = 60 };
  double drag[2 * N_DRAG], drag_cpu[2 * N_DRAG];
  gint64 step = MAX ((end - start) / 1500, 1);
  gint64 from = start + (end - start) / 2 + (gint64) (g_rand_double (rand) * (double) (end - start) / 4);
  guint64 drag_nodes = 0;
  {
    g_autoptr (CowscopeSharingGraph) first = cowscope_sharing_graph_build (
      doc, cowscope_session_document_seq_at_time (doc, from, NULL), freed_soon, NULL, NULL);
  }
  for (int k = 0; k < 2 * N_DRAG; k++)
    {
      gint64 t = from + step * (k < N_DRAG ? k + 1 : 2 * N_DRAG - 1 - k);
      double t0 = now_ms (), c0 = cpu_ms ();
      gint64 seq = cowscope_session_document_seq_at_time (doc, t, NULL);
      g_autoptr (CowscopeSharingGraph) graph =
        cowscope_sharing_graph_build (doc, seq, freed_soon, NULL, &error);
      drag[k] = now_ms () - t0;
      drag_cpu[k] = cpu_ms () - c0;
      if (graph == NULL)
        {
          fprintf (stderr, "%s\n", error->message);
          return 1;
        }
      drag_nodes += cowscope_sharing_graph_get_n_nodes (graph);
    }

  for (int k = 0; k < N_LAYOUT; k++)
    {
      CowscopeGraphLayoutOptions options = { 0 };
      g_autoptr (CowscopeGraphScene) scene = cowscope_graph_layout_sync (graphs[k], &options, &error);
      if (scene == NULL)
        {
          fprintf (stderr, "%s\n", error->message);
          return 1;
        }
      aggregate[k] = cowscope_graph_scene_get_stats (scene)->aggregate_ms;
      layout[k] = cowscope_graph_scene_get_stats (scene)->layout_ms;
      scene_nodes += cowscope_graph_scene_get_n_nodes (scene);
      g_object_unref (graphs[k]);
    }

  /* Baseline for Graphviz: a plain chain of 2,000 objects. */
  double chain_ms = 0;
  {
    GArray *n = g_array_new (FALSE, TRUE, sizeof (CowscopeGraphNode));
    GArray *e = g_array_new (FALSE, TRUE, sizeof (CowscopeGraphEdge));
    for (guint i = 0; i < 2000; i++)
      {
        CowscopeGraphNode x = { .pid = 1, .kind = COWSCOPE_NODE_STORAGE, .id = i + 1, .nbytes = 4096, .free_ts = -1 };
        g_array_append_val (n, x);
        if (i > 0 && i % 4 != 0)
          {
            CowscopeGraphEdge y = { i, i - 1, COWSCOPE_EDGE_LAZY_COPY_OF };
            g_array_append_val (e, y);
          }
      }
    g_autoptr (CowscopeSharingGraph) chain =
      cowscope_sharing_graph_new_take (n, e, g_string_chunk_new (64), 1, 1, -1, 0);
    CowscopeGraphLayoutOptions options = { 0 };
    g_autoptr (CowscopeGraphScene) s = cowscope_graph_layout_sync (chain, &options, NULL);
    chain_ms = cowscope_graph_scene_get_stats (s)->layout_ms;
  }

  printf ("\n%-56s %12s %14s\n", "measure", "value", "baseline");
  printf ("%-56s %9.1f ms %11.2f ms   (SQL count(*) of the checkpoint's objects)\n",
          "cursor to a random instant -> graph rebuild, median of 50", median (build, N),
          median (base, N));
  printf ("%-56s %9.1f ms   (CPU median %.1f ms)\n", "  p95", p95 (build, N), median (build_cpu, N));
  printf ("%-56s %9" G_GUINT64_FORMAT "\n", "  live objects per graph (mean)", nodes / N);
  printf ("%-56s %9.1f ms   (p95 %.1f ms; CPU median %.1f ms; target <= 16 ms)\n",
          "cursor dragged a pixel a step -> rebuild, median of 120", median (drag, 2 * N_DRAG),
          p95 (drag, 2 * N_DRAG), median (drag_cpu, 2 * N_DRAG));
  printf ("%-56s %9" G_GINT64_FORMAT " ns   (%" G_GUINT64_FORMAT " live objects, mean)\n",
          "  a pixel (the session over 1,500)", step, drag_nodes / (2 * N_DRAG));
  printf ("%-56s %9.1f ms\n", "aggregation (filter, groups, budget), median of 5",
          median (aggregate, N_LAYOUT));
  printf ("%-56s %9.1f ms %11.1f ms   (dot on a 2,000-node chain)\n",
          "Graphviz dot layout of what is drawn, median of 5", median (layout, N_LAYOUT), chain_ms);
  printf ("%-56s %9" G_GUINT64_FORMAT "\n", "  nodes laid out (mean, incl. overflow nodes)",
          scene_nodes / N_LAYOUT);
  sqlite3_finalize (cp);
  sqlite3_close (db);
  return 0;
}
