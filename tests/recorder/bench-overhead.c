/* bench-overhead.c — what recording costs a target, beside LTTng-UST.
 *
 * Runs, in one process and one run, and prints side by side:
 *   1. a trace point's cost (the target's thread CPU time, in batches
 *      the recorder keeps up with; tracepoint-target.c): off = cow_mark()
 *      minus an empty call; on = the extra cost per event of a view +
 *      unref (two events) under the recorder, and cow_mark() under the
 *      recorder (which also interns); and a call stack's cost at a lazy
 *      clone with libunwind beside glibc's backtrace() in the same run;
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
 *      callgrind, plain, recorded, recorded with backtrace() for the
 *      stacks and recorded without call stacks, which do not depend on
 *      the machine's load (one run each: they repeat to within a few
 *      hundred instructions); and the CPU time of the whole recording
 *      (target and recorder) beside the plain run's;
 *   4. bytes per stored event of the last demo session.
 * Wall times on a busy machine move by tens of percent from run to run:
 * read the medians and ratios, which each come from the same run.
 *
 * Paths come from the environment meson sets: COWSCOPE_CLI,
 * COWSCOPE_DEMO, COWSCOPE_TRACEPOINT_TARGET, COWSCOPE_PROBE_PATH,
 * COWSCOPE_BURST_TARGET, COWSCOPE_LTTNG_TARGET (empty: not built).
 * Sizes: COWSCOPE_BENCH_BURST_EVENTS (2000000), COWSCOPE_BENCH_PAIRS (5),
 * COWSCOPE_BENCH_DEMO_PAIRS (21), COWSCOPE_BENCH_TRACEPOINT_RUNS (3),
 * COWSCOPE_BENCH_CALLGRIND (1; 0 skips it).
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <sqlite3.h>
#include <sys/resource.h>
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

/* Runs @argv with @env_extra (NAME=VALUE, may be NULL) added to the
 * environment; returns its stdout and stores its stderr in *@err (both
 * NULL and a message on failure). */
static char *
run_env (const char *const *argv, const char *env_extra, char **err)
{
  g_autoptr (GError) error = NULL;
  g_auto (GStrv) envp = g_get_environ ();
  if (env_extra != NULL)
    {
      g_autofree char *name = g_strndup (env_extra, strcspn (env_extra, "="));
      envp = g_environ_setenv (envp, name, env_extra + strlen (name) + 1, TRUE);
    }
  char *out = NULL;
  int status;
  *err = NULL;
  if (!g_spawn_sync (NULL, (char **) argv, envp, G_SPAWN_DEFAULT, NULL, NULL, &out, err, &status,
                     &error)
      || !g_spawn_check_wait_status (status, &error))
    {
      g_printerr ("bench-overhead: %s: %s\n", argv[0], error->message);
      g_clear_pointer (&out, g_free);
      g_clear_pointer (err, g_free);
      return NULL;
    }
  return out;
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

/* Runs @program plainly (@session NULL) or under the recorder into
 * @session; returns its stdout and stores in *@cpu_s the CPU time (user
 * and system) of everything it ran: the program, and the recorder with
 * it.  NULL on failure. */
static char *
run_timed (const char *const *program, const char *session, double *cpu_s)
{
  g_autoptr (GPtrArray) argv = session ? recorded_argv (session, TRUE, program) : NULL;
  struct rusage before, after;
  getrusage (RUSAGE_CHILDREN, &before);
  char *out = session ? run ((const char *const *) argv->pdata) : run (program);
  getrusage (RUSAGE_CHILDREN, &after);
  double b = before.ru_utime.tv_sec + before.ru_stime.tv_sec
             + (before.ru_utime.tv_usec + before.ru_stime.tv_usec) / 1e6;
  double a = after.ru_utime.tv_sec + after.ru_stime.tv_sec
             + (after.ru_utime.tv_usec + after.ru_stime.tv_usec) / 1e6;
  *cpu_s = a - b;
  return out;
}

/* meta.@key of the session at @path, or NULL. */
static char *
session_meta (const char *path, const char *key)
{
  sqlite3 *db = NULL;
  sqlite3_stmt *stmt = NULL;
  char *value = NULL;
  if (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK
      && sqlite3_prepare_v2 (db, "SELECT value FROM meta WHERE key = ?", -1, &stmt, NULL)
           == SQLITE_OK
      && sqlite3_bind_text (stmt, 1, key, -1, SQLITE_STATIC) == SQLITE_OK
      && sqlite3_step (stmt) == SQLITE_ROW && sqlite3_column_type (stmt, 0) != SQLITE_NULL)
    value = g_strdup ((const char *) sqlite3_column_text (stmt, 0));
  sqlite3_finalize (stmt);
  sqlite3_close (db);
  return value;
}

/* The target's instructions as callgrind counts them: the demo's
 * training scenario run plainly, or under the recorder (with or without
 * call stacks), with @env_extra (NAME=VALUE or NULL) in its environment;
 * -1 with a message when it could not be read. */
static double
callgrind_instructions (const char *valgrind, const char *session,
                        gboolean recorded, gboolean stacks, const char *env_extra)
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
  g_autofree char *err = NULL;
  g_autofree char *out =
    run_env (argv ? (const char *const *) argv->pdata : program, env_extra, &err);
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

/* The events the recorder kept, in percent, from `cowscope-cli record`'s
 * last line ("N events stored, M dropped (of P produced)"); -1 when it
 * is not there. */
static double
kept_percent (const char *cli_err)
{
  const char *p = cli_err ? strstr (cli_err, " events stored, ") : NULL;
  if (p == NULL)
    return -1;
  const char *line = p;
  while (line > cli_err && line[-1] != ' ')
    line--;
  double stored = g_ascii_strtod (line, NULL);
  double produced = field (p, "(of ");
  return produced > 0 ? 100.0 * stored / produced : -1;
}

/* 1. Trace points, probes off and on, and a call stack's cost. */
static gboolean
bench_trace_points (const char *session)
{
  guint runs = (guint) bench_env_count ("COWSCOPE_BENCH_TRACEPOINT_RUNS", 3, 1, MAX_PAIRS);
  const char *const tp_argv[] = { require_env ("COWSCOPE_TRACEPOINT_TARGET"), NULL };
  g_autoptr (GPtrArray) rec_argv = recorded_argv (session, TRUE, tp_argv);
  static double empty[MAX_PAIRS], mark_off[MAX_PAIRS], view_off[MAX_PAIRS], clone_off[MAX_PAIRS];
  static double mark_on[MAX_PAIRS], view_on[MAX_PAIRS], clone_on[MAX_PAIRS];
  static double clone_bt[MAX_PAIRS], kept[MAX_PAIRS], kept_bt[MAX_PAIRS];
  static double per_event[MAX_PAIRS], stack_lu[MAX_PAIRS], stack_bt[MAX_PAIRS];
  g_autofree char *clock = NULL;

  for (guint i = 0; i < runs; i++)
    {
      /* Off, on with libunwind, on with backtrace(): one round, in an
       * order that rotates so that no side always follows another. */
      g_autofree char *off = NULL, *on = NULL, *bt = NULL;
      g_autofree char *off_err = NULL, *on_err = NULL, *bt_err = NULL;
      for (guint k = 0; k < 3; k++)
        switch ((i + k) % 3)
          {
          case 0:
            off = run_env (tp_argv, NULL, &off_err);
            break;
          case 1:
            on = run_env ((const char *const *) rec_argv->pdata, NULL, &on_err);
            break;
          default:
            bt = run_env ((const char *const *) rec_argv->pdata, "COWSCOPE_UNWIND=backtrace",
                          &bt_err);
            break;
          }
      if (off == NULL || on == NULL || bt == NULL || strstr (on, "sink=on") == NULL
          || strstr (bt, "sink=on") == NULL)
        {
          g_printerr ("bench-overhead: the trace-point target did not run with probes %s\n",
                      off == NULL ? "off" : "on");
          return FALSE;
        }
      empty[i] = field (off, "empty_ns=");
      mark_off[i] = field (off, "mark_ns=");
      view_off[i] = field (off, "view_ns=");
      clone_off[i] = field (off, "clone_ns=");
      mark_on[i] = field (on, "mark_ns=");
      view_on[i] = field (on, "view_ns=");
      clone_on[i] = field (on, "clone_ns=");
      clone_bt[i] = field (bt, "clone_ns=");
      kept[i] = kept_percent (on_err);
      kept_bt[i] = kept_percent (bt_err);
      per_event[i] = (view_on[i] - view_off[i]) / 2;
      stack_lu[i] = clone_on[i] - clone_off[i];
      stack_bt[i] = clone_bt[i] - clone_off[i];
      if (clock == NULL)
        {
          const char *c = strstr (on, "clock=");
          clock = c ? g_strndup (c + 6, strcspn (c + 6, " \n")) : g_strdup ("?");
        }
    }
  double m_empty = bench_median (empty, runs), m_mark_off = bench_median (mark_off, runs);
  double point_off = m_mark_off - m_empty;
  double m_view_off = bench_median (view_off, runs);
  double point_on = bench_median (per_event, runs);
  double m_stack_lu = bench_median (stack_lu, runs), m_stack_bt = bench_median (stack_bt, runs);
  double min_kept = 100;
  for (guint i = 0; i < runs; i++)
    min_kept = MIN (min_kept, MIN (kept[i], kept_bt[i]));

  printf ("1. Trace point cost, ns, single thread: the target's thread CPU time, medians of\n"
          "   61 batches the recorder keeps up with, median of %u interleaved runs; the\n"
          "   engine's clock reads %s\n",
          runs, clock);
  printf ("   %-52s %9s %9s  %s\n", "", "ns", "baseline", "target");
  printf ("   %-52s %9.2f %9s\n", "empty out-of-line call (baseline)", m_empty, "-");
  printf ("   %-52s %9.2f %9.2f  < 1 ns: %s\n", "probes off: cow_mark() minus the empty call",
          point_off, m_empty, point_off < 1 ? "PASS" : "MISS");
  printf ("   %-52s %9.2f %9.2f  <= 15 ns: %s\n",
          "probes on: extra per event (view+unref, 2 events)", point_on, m_view_off / 2,
          point_on <= 15 ? "PASS" : "MISS");
  printf ("   %-52s %9.2f %9.2f  (info: interns the name too)\n", "probes on: cow_mark()",
          bench_median (mark_on, runs), m_mark_off);
  printf ("   %-52s %9.2f %9.2f  (baseline: backtrace(), same runs)\n",
          "probes on: lazy clone + unref, extra (its stack)", m_stack_lu, m_stack_bt);
  printf ("   %-52s %8.2fx\n", "   backtrace() / libunwind", m_stack_bt / MAX (m_stack_lu, 1e-9));
  printf ("   %-52s %8.1f%%  %s\n", "events kept (lowest of the recorded runs)", min_kept,
          min_kept >= 100 ? "" : "(drops: the recorder fell behind; figures flattered)");
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
  static double plain_cpu[MAX_PAIRS], recorded_cpu[MAX_PAIRS], cpu_ratio[MAX_PAIRS];
  const char *const demo_argv[] = {
    require_env ("COWSCOPE_DEMO"), "--quiet", "--steps", DEMO_STEPS, "training", NULL
  };
  for (guint i = 0; i < pairs; i++)
    {
      g_autofree char *a = NULL, *b = NULL;
      if (i % 2 == 0)
        {
          a = run_timed (demo_argv, NULL, &plain_cpu[i]);
          b = run_timed (demo_argv, session, &recorded_cpu[i]);
        }
      else
        {
          b = run_timed (demo_argv, session, &recorded_cpu[i]);
          a = run_timed (demo_argv, NULL, &plain_cpu[i]);
        }
      cpu_ratio[i] = recorded_cpu[i] / MAX (plain_cpu[i], 1e-9) - 1;
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
  double median_cpu = bench_median (cpu_ratio, pairs); /* sorts cpu_ratio */
  printf ("   %-52s %9.3f s\n", "CPU time, the demo alone (baseline), median",
          bench_median (plain_cpu, pairs));
  printf ("   %-52s %9.3f s  %+.1f%%  (info: the recorder's CPU too)\n",
          "CPU time, the demo and the recorder, median", bench_median (recorded_cpu, pairs),
          median_cpu * 100);
  g_autofree char *unwinder = session_meta (session, "stack_unwinder");
  printf ("   %-52s %s\n", "call stacks taken with", unwinder ? unwinder : "?");

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
  double plain_i = callgrind_instructions (valgrind, small, FALSE, TRUE, NULL);
  double stacks_i = callgrind_instructions (valgrind, small, TRUE, TRUE, NULL);
  double backtrace_i =
    callgrind_instructions (valgrind, small, TRUE, TRUE, "COWSCOPE_UNWIND=backtrace");
  double bare_i = callgrind_instructions (valgrind, small, TRUE, FALSE, NULL);
  g_unlink (small);
  if (plain_i <= 0 || stacks_i <= 0 || backtrace_i <= 0 || bare_i <= 0)
    return;
  printf ("   The target's instructions (callgrind, %s steps, independent of "
          "load):\n",
          CALLGRIND_STEPS);
  printf ("   %-52s %9.1f M\n", "without the recorder (baseline)", plain_i / 1e6);
  printf ("   %-52s %9.1f M  %+.2f%%  <= 3%%: %s\n", "under cowscope-cli record",
          stacks_i / 1e6, (stacks_i / plain_i - 1) * 100,
          stacks_i / plain_i - 1 <= 0.03 ? "PASS" : "MISS");
  printf ("   %-52s %9.1f M  %+.2f%%  (baseline: stacks by backtrace())\n",
          "under cowscope-cli record, COWSCOPE_UNWIND=backtrace", backtrace_i / 1e6,
          (backtrace_i / plain_i - 1) * 100);
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
