/* bench-overhead.c — what recording costs a target, beside LTTng-UST.
 *
 * Runs, in one process and one run, and prints side by side:
 *   1. a trace point's cost: off = cow_mark() minus an empty call; on =
 *      the extra cost per event of a view + unref (two events) under the
 *      recorder, and cow_mark() under the recorder (which also interns);
 *   2. a burst of 2 M events at full speed, in interleaved pairs: a
 *      recorded cow_mark() (Cowscope's defaults) against an LTTng-UST
 *      tracepoint with the same payload (tests/bench/lttng/), each in the
 *      same loop of burst-target.c: per-event cost, first event, events
 *      kept, bytes on disk per kept event, and their ratios.  Where LTTng
 *      cannot run it prints "skipped: <reason>" and shows Cowscope alone;
 *   3. the demo's training loop plain and under `cowscope-cli record`, in
 *      interleaved pairs (order alternating): the median of the per-pair
 *      slowdowns, with their quartiles to show the noise; and, where
 *      valgrind is installed, the target's instructions counted by
 *      callgrind, plain, recorded and recorded without call stacks,
 *      which do not depend on the machine's load (one run each: they
 *      repeat to within a few hundred instructions);
 *   4. bytes per stored event of the last demo session.
 * Wall times on a busy machine move by tens of percent from run to run:
 * read the medians and ratios, which each come from the same run.
 *
 * Paths come from the environment meson sets: COWSCOPE_CLI,
 * COWSCOPE_DEMO, COWSCOPE_TRACEPOINT_TARGET, COWSCOPE_PROBE_PATH,
 * COWSCOPE_BURST_TARGET, COWSCOPE_LTTNG_TARGET (empty: not built).
 * Sizes: COWSCOPE_BENCH_BURST_EVENTS (2000000), COWSCOPE_BENCH_PAIRS (5),
 * COWSCOPE_BENCH_DEMO_PAIRS (21), COWSCOPE_BENCH_CALLGRIND (1; 0 skips it).
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench-burst.h"

#define DEMO_STEPS "1500"
/* Fewer steps under callgrind (about 50 times slower): every step does
 * the same work, so the ratio does not depend on the count. */
#define CALLGRIND_STEPS "200"
#define MAX_PAIRS 1000

static const char *
require_env (const char *name)
{
  const char *value = g_getenv (name);
  if (value == NULL || *value == '\0')
    {
      g_printerr ("bench-overhead: %s is not set (run it through meson)\n", name);
      exit (1);
    }
  return value;
}

/* Runs @argv, returns its stdout (NULL and a message on failure). */
static char *
run (const char *const *argv)
{
  g_autoptr (GError) error = NULL;
  char *out = NULL;
  int status;
  if (!g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_STDERR_TO_DEV_NULL,
                     NULL, NULL, &out, NULL, &status, &error) ||
      !g_spawn_check_wait_status (status, &error))
    {
      g_printerr ("bench-overhead: %s: %s\n", argv[0], error->message);
      g_free (out);
      return NULL;
    }
  return out;
}

/* Runs @argv, returns its stderr (NULL and a message on failure). */
static char *
run_stderr (const char *const *argv)
{
  g_autoptr (GError) error = NULL;
  char *err = NULL;
  int status;
  if (!g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL,
                     NULL, NULL, NULL, &err, &status, &error) ||
      !g_spawn_check_wait_status (status, &error))
    {
      g_printerr ("bench-overhead: %s: %s\n", argv[0], error->message);
      g_free (err);
      return NULL;
    }
  return err;
}

/* The argv of `cowscope-cli record [--no-stacks] -o @session -- @program`. */
static GPtrArray *
recorded_argv (const char *session, gboolean stacks, const char *const *program)
{
  GPtrArray *argv = g_ptr_array_new ();
  g_ptr_array_add (argv, (char *) require_env ("COWSCOPE_CLI"));
  g_ptr_array_add (argv, "record");
  if (!stacks)
    g_ptr_array_add (argv, "--no-stacks");
  g_ptr_array_add (argv, "--force");
  g_ptr_array_add (argv, "-o");
  g_ptr_array_add (argv, (char *) session);
  g_ptr_array_add (argv, "--");
  for (int i = 0; program[i] != NULL; i++)
    g_ptr_array_add (argv, (char *) program[i]);
  g_ptr_array_add (argv, NULL);
  return argv;
}

/* Runs @program (with @args) under the recorder into @session. */
static char *
run_recorded (const char *session, const char *const *program)
{
  g_autoptr (GPtrArray) argv = recorded_argv (session, TRUE, program);
  return run ((const char *const *) argv->pdata);
}

/* The target's instructions as callgrind counts them: the demo's
 * training scenario run plainly, or under the recorder (with or without
 * call stacks); -1 with a message when it could not be read. */
static double
callgrind_instructions (const char *valgrind, const char *session,
                        gboolean recorded, gboolean stacks)
{
  const char *const program[] = { valgrind,
                                  "--tool=callgrind",
                                  "--callgrind-out-file=/dev/null",
                                  require_env ("COWSCOPE_DEMO"),
                                  "--quiet",
                                  "--steps",
                                  CALLGRIND_STEPS,
                                  "training",
                                  NULL };
  g_autoptr (GPtrArray) argv =
    recorded ? recorded_argv (session, stacks, program) : NULL;
  g_autofree char *err =
    run_stderr (argv ? (const char *const *) argv->pdata : program);
  const char *collected = err ? strstr (err, "Collected : ") : NULL;
  if (collected == NULL)
    {
      g_printerr ("bench-overhead: callgrind reported no instruction count\n");
      return -1;
    }
  return g_ascii_strtod (collected + strlen ("Collected : "), NULL);
}

static double
field (const char *text, const char *key)
{
  const char *p = text ? strstr (text, key) : NULL;
  return p ? g_ascii_strtod (p + strlen (key), NULL) : -1;
}

/* The demo's own time for its training scenario ("training — ok (0.185 s)"). */
static double
training_seconds (const char *text)
{
  const char *p = text ? strstr (text, "training \xe2\x80\x94 ok (") : NULL;
  return p ? g_ascii_strtod (p + strlen ("training \xe2\x80\x94 ok ("), NULL)
           : -1;
}

static gint64
stored_events (const char *session)
{
  sqlite3 *db = NULL;
  sqlite3_stmt *stmt = NULL;
  gint64 n = -1;
  if (sqlite3_open_v2 (session, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
      sqlite3_prepare_v2 (db, "SELECT count(*) FROM events", -1, &stmt, NULL) ==
        SQLITE_OK &&
      sqlite3_step (stmt) == SQLITE_ROW)
    n = sqlite3_column_int64 (stmt, 0);
  sqlite3_finalize (stmt);
  sqlite3_close (db);
  return n;
}

/* 1. Trace points, probes off and on. */
static gboolean
bench_trace_points (const char *session)
{
  const char *const tp_argv[] = { require_env ("COWSCOPE_TRACEPOINT_TARGET"),
                                  NULL };
  g_autofree char *off = run (tp_argv);
  g_autofree char *on = run_recorded (session, tp_argv);
  if (off == NULL || on == NULL || strstr (on, "sink=on") == NULL)
    {
      g_printerr (
        "bench-overhead: the trace-point target did not run with probes %s\n",
        on == NULL || strstr (on, "sink=on") == NULL ? "on" : "off");
      return FALSE;
    }
  double empty = field (off, "empty_ns="), mark_off = field (off, "mark_ns=");
  double view_off = field (off, "view_ns="), view_on = field (on, "view_ns=");
  double mark_on = field (on, "mark_ns=");
  double point_off = mark_off - empty, point_on = (view_on - view_off) / 2;
  printf ("1. Trace point cost, ns per event, single thread (medians of 9 "
          "repeats)\n");
  printf ("   %-52s %9s %9s  %s\n", "", "ns", "baseline", "target");
  printf ("   %-52s %9.2f %9s\n", "empty out-of-line call (baseline)", empty,
          "-");
  printf ("   %-52s %9.2f %9.2f  < 1 ns: %s\n",
          "probes off: cow_mark() minus the empty call", point_off, empty,
          point_off < 1 ? "PASS" : "MISS");
  printf ("   %-52s %9.2f %9.2f  <= 15 ns: %s\n",
          "probes on: extra per event (view+unref, 2 events)", point_on,
          view_off / 2, point_on <= 15 ? "PASS" : "MISS");
  printf ("   %-52s %9.2f %9.2f  (info: interns the name too)\n",
          "probes on: cow_mark()", mark_on, mark_off);
  return TRUE;
}

/* 2. The same burst through both tracers, interleaved. */
static void
bench_burst_peer (const char *dir)
{
  guint64 events =
    bench_env_count ("COWSCOPE_BENCH_BURST_EVENTS", 2000000, 1000, 100000000);
  guint n = (guint) bench_env_count ("COWSCOPE_BENCH_PAIRS", 5, 1, MAX_PAIRS);
  BenchBurstPairs pairs;
  g_autoptr (GError) error = NULL;
  if (!bench_burst_pairs_run (&pairs, events, n, dir, &error))
    {
      g_printerr ("bench-overhead: the Cowscope burst failed: %s\n",
                  error->message);
      exit (1);
    }

  printf ("\n2. A burst of %" G_GUINT64_FORMAT
          " events at full speed, one thread: a recorded "
          "cow_mark() beside an LTTng-UST tracepoint with the same payload\n"
          "   (medians of %u interleaved pairs; ratio: median of the per-pair "
          "Cowscope/LTTng)\n",
          events, n);
  bench_print_burst_setup (&pairs);

  static double c_first[MAX_PAIRS], c_warm[MAX_PAIRS], c_mean[MAX_PAIRS],
    c_kept[MAX_PAIRS], c_bytes[MAX_PAIRS];
  static double l_first[MAX_PAIRS], l_warm[MAX_PAIRS], l_mean[MAX_PAIRS],
    l_kept[MAX_PAIRS], l_bytes[MAX_PAIRS];
  for (guint i = 0; i < n; i++)
    {
      const BenchBurstRun *c = &pairs.cowscope[i];
      c_first[i] = c->target.first_ns / 1e3;
      c_warm[i] = c->target.warm_ns;
      c_mean[i] = c->target.mean_ns;
      c_kept[i] =
        100.0 * (double) c->totals.stored / (double) MAX (c->totals.produced, 1);
      c_bytes[i] = (double) c->bytes_on_disk / (double) MAX (c->totals.stored, 1);
      if (pairs.lttng == NULL)
        continue;
      const LttngPeerRun *l = &pairs.lttng[i];
      l_first[i] = l->target.first_ns / 1e3;
      l_warm[i] = l->target.warm_ns;
      l_mean[i] = l->target.mean_ns;
      l_kept[i] = 100.0 * (double) l->kept / (double) MAX (l->target.events, 1);
      l_bytes[i] = (double) l->bytes_on_disk / (double) MAX (l->kept, 1);
    }
  gboolean with = pairs.lttng != NULL;
  bench_print_peer_header ();
  bench_print_peer_row ("first event, \xc2\xb5s", 1, c_first,
                        with ? l_first : NULL, n);
  bench_print_peer_row ("per event, warm (median 16 K chunk), ns", 1, c_warm,
                        with ? l_warm : NULL, n);
  bench_print_peer_row ("per event, loop mean, ns", 1, c_mean,
                        with ? l_mean : NULL, n);
  bench_print_peer_row ("events kept, %", 1, c_kept, with ? l_kept : NULL, n);
  bench_print_peer_row ("bytes on disk per kept event", 1, c_bytes,
                        with ? l_bytes : NULL, n);
  printf ("   (A dropped event costs Cowscope less than a stored one: read "
          "ns/event with the\n"
          "    kept share.  Cowscope's bytes: the finished session, derived "
          "tables and indexes\n"
          "    included; LTTng's: its CTF streams, index and metadata.  "
          "LTTng's first event is\n"
          "    cheap because LTTNG_UST_REGISTER_TIMEOUT=-1 sets it up before "
          "main.)\n");
  bench_burst_pairs_clear (&pairs);
}

/* 3. The demo's training loop, plain and recorded. */
static void
bench_demo (const char *session, const char *dir)
{
  guint pairs =
    (guint) bench_env_count ("COWSCOPE_BENCH_DEMO_PAIRS", 21, 1, MAX_PAIRS);
  static double plain[MAX_PAIRS], recorded[MAX_PAIRS], slowdown[MAX_PAIRS];
  const char *const demo_argv[] = {
    require_env ("COWSCOPE_DEMO"), "--quiet", "--steps", DEMO_STEPS, "training", NULL
  };
  for (guint i = 0; i < pairs; i++)
    {
      g_autofree char *a = NULL, *b = NULL;
      if (i % 2 == 0)
        {
          a = run (demo_argv);
          b = run_recorded (session, demo_argv);
        }
      else
        {
          b = run_recorded (session, demo_argv);
          a = run (demo_argv);
        }
      plain[i] = training_seconds (a);
      recorded[i] = training_seconds (b);
      if (plain[i] <= 0 || recorded[i] <= 0)
        {
          g_printerr (
            "bench-overhead: the demo's training time could not be read\n");
          exit (1);
        }
      slowdown[i] = recorded[i] / plain[i] - 1;
    }
  double median_slowdown = bench_median (slowdown, pairs); /* sorts slowdown */
  double q1 = slowdown[pairs / 4], q3 = slowdown[(3 * pairs) / 4];
  printf ("\n3. Demo training loop (%s steps, call stacks on), %u interleaved "
          "pairs\n",
          DEMO_STEPS, pairs);
  printf ("   %-52s %9.3f s\n", "without the recorder (baseline), median",
          bench_median (plain, pairs));
  printf ("   %-52s %9.3f s\n", "under cowscope-cli record, median",
          bench_median (recorded, pairs));
  printf ("   %-52s %+8.1f%%  (quartiles %+.1f%% .. %+.1f%%)  <= 3%%: %s\n",
          "slowdown, median of the per-pair slowdowns", median_slowdown * 100,
          q1 * 100, q3 * 100, median_slowdown <= 0.03 ? "PASS" : "MISS");

  g_autofree char *valgrind = g_find_program_in_path ("valgrind");
  if (bench_env_count ("COWSCOPE_BENCH_CALLGRIND", 1, 0, 1) == 0)
    g_clear_pointer (&valgrind, g_free);
  if (valgrind == NULL)
    {
      printf ("   instructions: skipped: %s\n",
              g_getenv ("COWSCOPE_BENCH_CALLGRIND")
                ? "COWSCOPE_BENCH_CALLGRIND=0"
                : "valgrind is not installed");
      return;
    }
  /* Its own session: @session stays the full demo's, for section 4. */
  g_autofree char *small = g_build_filename (dir, "callgrind.cowscope", NULL);
  double plain_i = callgrind_instructions (valgrind, small, FALSE, TRUE);
  double stacks_i = callgrind_instructions (valgrind, small, TRUE, TRUE);
  double bare_i = callgrind_instructions (valgrind, small, TRUE, FALSE);
  g_unlink (small);
  if (plain_i <= 0 || stacks_i <= 0 || bare_i <= 0)
    return;
  printf ("   The target's instructions (callgrind, %s steps, independent of "
          "load):\n",
          CALLGRIND_STEPS);
  printf ("   %-52s %9.1f M\n", "without the recorder (baseline)", plain_i / 1e6);
  printf ("   %-52s %9.1f M  %+.2f%%  <= 3%%: %s\n", "under cowscope-cli record",
          stacks_i / 1e6, (stacks_i / plain_i - 1) * 100,
          stacks_i / plain_i - 1 <= 0.03 ? "PASS" : "MISS");
  printf ("   %-52s %9.1f M  %+.2f%%  (info)\n",
          "under cowscope-cli record --no-stacks", bare_i / 1e6,
          (bare_i / plain_i - 1) * 100);
}

int
main (void)
{
  require_env ("COWSCOPE_PROBE_PATH");
  require_env ("COWSCOPE_CLI");
  g_autofree char *dir = g_dir_make_tmp ("cowscope-bench-XXXXXX", NULL);
  g_autofree char *session = g_build_filename (dir, "overhead.cowscope", NULL);
  g_autofree char *load = bench_machine_load ();

  printf ("cowscope recording overhead (one run; at the start: %s)\n\n", load);
  if (!bench_trace_points (session))
    return 1;
  bench_burst_peer (dir);
  bench_demo (session, dir);

  /* 4. Bytes per event of the last (finalized) demo session. */
  GStatBuf st;
  gint64 events = stored_events (session);
  if (g_stat (session, &st) == 0 && events > 0)
    printf ("\n4. Finished demo session: %" G_GINT64_FORMAT
            " events in %.1f MiB = %.1f bytes"
            " per event\n   (events plus derived tables, indexes, symbols and "
            "checkpoints)\n",
            events, st.st_size / 1048576.0,
            (double) st.st_size / (double) events);
  g_autofree char *load_end = bench_machine_load ();
  printf ("\n(at the end: %s)\n", load_end);
  g_unlink (session);
  g_rmdir (dir);
  return 0;
}
