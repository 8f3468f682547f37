/* bench-call-tree.c — the copy call tree of a ten-million-event session
 * (issue 15: it builds in 1 s or less, off the main thread), beside
 * baselines measured in the same run:
 *   the plain SQL aggregation of the same events by stack (what any
 *   call tree must read), and that aggregation plus every used stack's
 *   frames (the least SQL a tree needs);
 * and the longest main-loop stall while the tree is built in its GTask
 * (a 1 ms timeout records the gaps between its dispatches).
 *
 * The session is generated once (tests/session's fixture, as the session
 * benchmark's) into COWSCOPE_BENCH_CALLTREE, then given realistic stacks:
 * 20,000 random walks down a call graph of 300 functions (3,000 places),
 * 9 to 32 frames deep, two of Cowscope's frames innermost, spread over
 * every materialization, and 1 % of the lazy clones turned into eager
 * fallbacks (see add_stacks()).  Medians of interleaved rounds. */
#include <glib/gstdio.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>

#include "cowscope-call-tree.h"
#include "cowscope-session-document.h"
#include "session-fixture.h"

#define N_STACKS 20000
#define N_FUNCTIONS 300
#define LINES_PER_FUNCTION 10
#define ROUNDS 5

static double
now_ms (void)
{
  return (double) g_get_monotonic_time () / 1000.0;
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

static gboolean
exec (sqlite3 *db, const char *sql)
{
  char *message = NULL;
  if (sqlite3_exec (db, sql, NULL, NULL, &message) != SQLITE_OK)
    {
      fprintf (stderr, "%s: %s\n", sql, message);
      sqlite3_free (message);
      return FALSE;
    }
  return TRUE;
}

/* The version of the stacks below, kept in the session's meta: a file
 * generated with other stacks gets these (the events stay). */
#define STACKS_VERSION "call-graph-1"
#define LEVELS 30
#define CALLEES 4

/* Replaces the fixture's three stacks by N_STACKS realistic ones: random
 * walks down a call graph of N_FUNCTIONS functions in LEVELS levels
 * (main() alone at the top), each function calling CALLEES functions of
 * the next level, each call from one of its LINES_PER_FUNCTION lines,
 * 8 to LEVELS frames deep, with two of Cowscope's frames innermost.  So
 * stacks share their outer frames, as a program's do. */
static gboolean
add_stacks (const char *path)
{
  sqlite3 *db = NULL;
  sqlite3_stmt *frame = NULL, *stack = NULL, *sf = NULL;
  GRand *rand = g_rand_new_with_seed (15);
  const gint per_level = N_FUNCTIONS / LEVELS;
  gint callees[N_FUNCTIONS][CALLEES];
  gboolean ok = sqlite3_open (path, &db) == SQLITE_OK
                && exec (db, "PRAGMA synchronous = OFF; BEGIN;"
                             "DELETE FROM frames; DELETE FROM stacks; DELETE FROM stack_frames;")
                && sqlite3_prepare_v2 (db, "INSERT INTO frames VALUES (?1, 1000, ?2, ?3, ?4, ?5, ?6)",
                                       -1, &frame, NULL) == SQLITE_OK
                && sqlite3_prepare_v2 (db, "INSERT INTO stacks VALUES (?1, ?2)", -1, &stack,
                                       NULL) == SQLITE_OK
                && sqlite3_prepare_v2 (db, "INSERT INTO stack_frames VALUES (?1, ?2, ?3)", -1, &sf,
                                       NULL) == SQLITE_OK;
  for (gint f = 0; f < N_FUNCTIONS; f++)
    for (gint c = 0; c < CALLEES; c++)
      callees[f][c] = MIN (f / per_level + 1, LEVELS - 1) * per_level
                      + g_rand_int_range (rand, 0, per_level);
  /* Frames 1 and 2: the engine's; then N_FUNCTIONS x LINES_PER_FUNCTION. */
  for (gint64 id = 1; ok && id <= 2 + N_FUNCTIONS * LINES_PER_FUNCTION; id++)
    {
      g_autofree char *function = NULL, *file = NULL;
      const char *module = "/opt/train/bin/train";
      gint64 line;
      if (id <= 2)
        {
          function = g_strdup (id == 1 ? "cow_storage_materialize" : "cow_tensor_add_");
          file = g_strdup ("/src/engine/cow-storage.c");
          module = "/usr/lib/libcowtensor.so.0";
          line = 100 * id;
        }
      else
        {
          gint64 f = (id - 3) / LINES_PER_FUNCTION;
          function = f == 0 ? g_strdup ("main") : g_strdup_printf ("function_%03" G_GINT64_FORMAT, f);
          file = g_strdup_printf ("/src/train/file_%02" G_GINT64_FORMAT ".c", f % 30);
          line = 10 * f + (id - 3) % LINES_PER_FUNCTION + 1;
        }
      sqlite3_reset (frame);
      sqlite3_bind_int64 (frame, 1, id);
      sqlite3_bind_int64 (frame, 2, 4096 + 16 * id);
      sqlite3_bind_text (frame, 3, module, -1, SQLITE_STATIC);
      sqlite3_bind_text (frame, 4, function, -1, SQLITE_TRANSIENT);
      sqlite3_bind_text (frame, 5, file, -1, SQLITE_TRANSIENT);
      sqlite3_bind_int64 (frame, 6, line);
      ok = sqlite3_step (frame) == SQLITE_DONE;
    }
  for (gint64 s = 1; ok && s <= N_STACKS; s++)
    {
      gint calls = g_rand_int_range (rand, 6, LEVELS - 1); /* frames below main() */
      gint depth = 2 + calls + 1;
      gint64 walk[LEVELS + 3];
      gint f = 0;
      /* Outermost first: main's calling line, then each callee's. */
      for (gint i = 0; i <= calls; i++)
        {
          walk[depth - 1 - i] = 3 + (gint64) f * LINES_PER_FUNCTION
                                + g_rand_int_range (rand, 0, LINES_PER_FUNCTION);
          f = callees[f][g_rand_int_range (rand, 0, CALLEES)];
        }
      walk[0] = 1;
      walk[1] = 2;
      sqlite3_reset (stack);
      sqlite3_bind_int64 (stack, 1, s);
      sqlite3_bind_int64 (stack, 2, depth);
      ok = sqlite3_step (stack) == SQLITE_DONE;
      for (gint p = 0; ok && p < depth; p++)
        {
          sqlite3_reset (sf);
          sqlite3_bind_int64 (sf, 1, s);
          sqlite3_bind_int64 (sf, 2, p);
          sqlite3_bind_int64 (sf, 3, walk[p]);
          ok = sqlite3_step (sf) == SQLITE_DONE;
        }
    }
  g_autofree char *spread = g_strdup_printf (
    "UPDATE materializations SET stack_id = 1 + (seq * 2654435761) %% %d;"
    "UPDATE lazy_clones SET stack_id = 1 + (seq * 40503) %% %d;"
    "UPDATE lazy_clones SET eager_reason = 1, context_id = NULL WHERE seq %% 100 = 0;"
    "INSERT OR REPLACE INTO meta VALUES ('bench_stacks', '" STACKS_VERSION "');"
    "COMMIT;", N_STACKS, N_STACKS);
  ok = ok && exec (db, spread);
  if (!ok)
    fprintf (stderr, "cannot add stacks: %s\n", sqlite3_errmsg (db));
  sqlite3_finalize (frame);
  sqlite3_finalize (stack);
  sqlite3_finalize (sf);
  sqlite3_close (db);
  g_rand_free (rand);
  return ok;
}

/* TRUE when the session at @path has this benchmark's stacks. */
static gboolean
has_current_stacks (const char *path)
{
  sqlite3 *db = NULL;
  sqlite3_stmt *q = NULL;
  gboolean current = sqlite3_open_v2 (path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK
                     && sqlite3_prepare_v2 (db, "SELECT value FROM meta WHERE key = 'bench_stacks'",
                                            -1, &q, NULL) == SQLITE_OK
                     && sqlite3_step (q) == SQLITE_ROW
                     && g_strcmp0 ((const char *) sqlite3_column_text (q, 0), STACKS_VERSION) == 0;
  sqlite3_finalize (q);
  sqlite3_close (db);
  return current;
}

/* Baseline: the events summed by stack, in plain SQL; with @frames, every
 * used stack's frames read too.  Returns the rows read. */
static guint64
baseline (sqlite3 *db, gboolean frames)
{
  static const char sql[] =
    "SELECT stack_id, kind & 255, count(*), SUM (nbytes), SUM (end_ts - begin_ts)"
    " FROM materializations GROUP BY 1, 2"
    " UNION ALL SELECT stack_id, -1, count(*), SUM (nbytes), 0 FROM lazy_clones"
    " WHERE eager_reason IS NOT NULL GROUP BY 1";
  sqlite3_stmt *q = NULL, *f = NULL;
  guint64 rows = 0;
  sqlite3_prepare_v2 (db, sql, -1, &q, NULL);
  sqlite3_prepare_v2 (db, "SELECT f.function, f.file, f.line, f.module, f.address"
                          " FROM stack_frames sf JOIN frames f ON f.id = sf.frame_id"
                          " WHERE sf.stack_id = ?1 ORDER BY sf.position", -1, &f, NULL);
  g_autoptr (GHashTable) seen = g_hash_table_new (g_direct_hash, g_direct_equal);
  while (sqlite3_step (q) == SQLITE_ROW)
    {
      rows++;
      gint64 stack = sqlite3_column_int64 (q, 0);
      if (!frames || g_hash_table_contains (seen, GSIZE_TO_POINTER (stack)))
        continue;
      g_hash_table_add (seen, GSIZE_TO_POINTER (stack));
      sqlite3_reset (f);
      sqlite3_bind_int64 (f, 1, stack);
      while (sqlite3_step (f) == SQLITE_ROW)
        rows++;
    }
  sqlite3_finalize (q);
  sqlite3_finalize (f);
  return rows;
}

typedef struct {
  CowscopeCallTree *tree;
  GError *error;
  gboolean done;
  gint64 last_tick, longest_gap; /* µs */
} AsyncBuild;

static void
built (GObject *source, GAsyncResult *result, gpointer data)
{
  AsyncBuild *b = data;
  (void) source;
  b->tree = cowscope_call_tree_new_finish (result, &b->error);
  b->done = TRUE;
}

static gboolean
tick (gpointer data)
{
  AsyncBuild *b = data;
  gint64 now = g_get_monotonic_time ();
  b->longest_gap = MAX (b->longest_gap, now - b->last_tick);
  b->last_tick = now;
  return G_SOURCE_CONTINUE;
}

static gboolean
idle_done (gpointer data)
{
  *(gboolean *) data = TRUE;
  return G_SOURCE_REMOVE;
}

/* The longest gap between a 1 ms timeout's dispatches over @ms with
 * nothing else to do: what the loaded machine alone costs the main loop. */
static double
idle_stall (guint ms)
{
  AsyncBuild b = { .last_tick = g_get_monotonic_time () };
  gboolean done = FALSE;
  guint source = g_timeout_add_full (G_PRIORITY_HIGH, 1, tick, &b, NULL);
  g_timeout_add (ms, idle_done, &done);
  while (!done)
    g_main_context_iteration (NULL, TRUE);
  g_source_remove (source);
  return (double) b.longest_gap / 1000.0;
}

/* Builds the tree of [@start, @end) in its GTask while the main loop
 * ticks every ms; returns the wall time, the longest stall in @stall. */
static double
build_async (CowscopeSessionDocument *doc, gint64 start, gint64 end, double *stall,
             guint *n_nodes)
{
  CowscopeCallTreeOptions o;
  cowscope_call_tree_options_init (&o);
  o.range_start = start;
  o.range_end = end;
  AsyncBuild b = { .last_tick = g_get_monotonic_time () };
  guint source = g_timeout_add_full (G_PRIORITY_HIGH, 1, tick, &b, NULL);
  double t = now_ms ();
  cowscope_call_tree_new_async (doc, &o, NULL, built, &b);
  while (!b.done)
    g_main_context_iteration (NULL, TRUE);
  t = now_ms () - t;
  g_source_remove (source);
  if (b.tree == NULL)
    {
      fprintf (stderr, "call tree: %s\n", b.error->message);
      exit (1);
    }
  *stall = (double) b.longest_gap / 1000.0;
  *n_nodes = cowscope_call_tree_get_n_nodes (b.tree);
  g_object_unref (b.tree);
  return t;
}

int
main (void)
{
  const char *path = g_getenv ("COWSCOPE_BENCH_CALLTREE");
  g_autofree char *fallback = g_build_filename (g_get_tmp_dir (), "cowscope-bench-calltree.cowscope",
                                                NULL);
  if (path == NULL)
    path = fallback;
  guint64 n_events = 10000000;
  const char *n_env = g_getenv ("COWSCOPE_BENCH_EVENTS");
  if (n_env != NULL)
    n_events = g_ascii_strtoull (n_env, NULL, 10);
  g_autoptr (GError) error = NULL;

  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    {
      SessionFixtureOptions o = {
        .n_events = n_events, .n_processes = 2, .n_threads = 4, .target_live = 100000,
        .checkpoint_interval = 131072, .finalized = TRUE, .seed = 1,
      };
      g_autofree char *tmp = g_strconcat (path, ".part", NULL);
      double t = now_ms ();
      if (!session_fixture_generate (tmp, &o, NULL, &error) || !add_stacks (tmp)
          || g_rename (tmp, path) != 0)
        {
          fprintf (stderr, "cannot generate %s: %s\n", path, error ? error->message : "stacks");
          return 1;
        }
      printf ("generated %s: %" G_GUINT64_FORMAT " events in %.1f s\n", path, n_events,
              (now_ms () - t) / 1000);
    }
  else if (!has_current_stacks (path))
    {
      if (!add_stacks (path))
        return 1;
      printf ("gave %s this benchmark's stacks (%s)\n", path, STACKS_VERSION);
    }
  else
    printf ("reusing %s\n", path);

  g_autoptr (CowscopeSessionDocument) doc = cowscope_session_document_load (path, NULL, &error);
  if (doc == NULL)
    {
      fprintf (stderr, "%s\n", error->message);
      return 1;
    }
  sqlite3 *db = NULL;
  if (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
    return 1;
  gint64 start = cowscope_session_document_get_start_ns (doc);
  gint64 end = cowscope_session_document_get_end_ns (doc);
  gint64 m_count = 0;
  {
    sqlite3_stmt *q = NULL;
    sqlite3_prepare_v2 (db, "SELECT count(*) FROM materializations", -1, &q, NULL);
    if (sqlite3_step (q) == SQLITE_ROW)
      m_count = sqlite3_column_int64 (q, 0);
    sqlite3_finalize (q);
  }

  /* A warm-up of each, so every round reads from the page cache. */
  double stall;
  guint nodes = 0, range_nodes = 0;
  baseline (db, TRUE);
  build_async (doc, -1, -1, &stall, &nodes);

  double sql[ROUNDS], sql_frames[ROUNDS], tree[ROUNDS], stalls[ROUNDS], ranged[ROUNDS];
  double idle[ROUNDS];
  guint64 rows = 0, frame_rows = 0;
  for (guint r = 0; r < ROUNDS; r++)
    {
      double t = now_ms ();
      rows = baseline (db, FALSE);
      sql[r] = now_ms () - t;
      t = now_ms ();
      frame_rows = baseline (db, TRUE);
      sql_frames[r] = now_ms () - t;
      tree[r] = build_async (doc, -1, -1, &stalls[r], &nodes);
      /* The middle tenth of the session, as a selected range. */
      ranged[r] = build_async (doc, start + (end - start) * 45 / 100, start + (end - start) * 55 / 100,
                               &stall, &range_nodes);
      stalls[r] = MAX (stalls[r], stall);
      idle[r] = idle_stall ((guint) (tree[r] + ranged[r]));
    }
  sqlite3_close (db);

  printf ("\ncall tree of %" G_GUINT64_FORMAT " events, %" G_GINT64_FORMAT
          " materializations, %d stacks; medians of %d rounds\n",
          cowscope_session_document_get_n_events (doc), m_count, N_STACKS, ROUNDS);
  printf ("%-46s %9.1f ms   (%" G_GUINT64_FORMAT " rows)\n", "baseline: SQL sum by stack",
          median (sql, ROUNDS), rows);
  printf ("%-46s %9.1f ms   (%" G_GUINT64_FORMAT " rows)\n",
          "baseline: SQL sum by stack + the stacks' frames", median (sql_frames, ROUNDS), frame_rows);
  double whole = median (tree, ROUNDS);
  printf ("%-46s %9.1f ms   (%.2fx the SQL with frames; %u nodes; target <= 1000 ms)\n",
          "call tree, whole session, in its GTask", whole,
          whole / median (sql_frames, ROUNDS), nodes);
  printf ("%-46s %9.1f ms   (%u nodes)\n", "call tree, the middle tenth (a range)",
          median (ranged, ROUNDS), range_nodes);
  printf ("%-46s %9.1f ms   (a 1 ms timeout's longest gap while building)\n",
          "longest main-loop stall", median (stalls, ROUNDS));
  printf ("%-46s %9.1f ms   (the same, as long, with nothing building: the machine's load)\n",
          "baseline: longest stall, idle", median (idle, ROUNDS));
  return whole <= 1000 ? 0 : 1;
}
