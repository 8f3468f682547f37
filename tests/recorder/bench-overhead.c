/* bench-overhead.c — what recording costs a target.
 *
 * Runs, in one process and one run, each program twice: plainly (probes
 * off) and under `cowscope-cli record` (probes on), and prints side by
 * side:
 *   1. a trace point's cost: off = cow_mark() minus an empty call; on =
 *      the extra cost per event of a view + unref (two events) under the
 *      recorder, and cow_mark() under the recorder (which also interns);
 *   2. the demo's training loop: its own reported time, plain vs recorded;
 *   3. bytes per stored event in the finished session.
 * Paths come from the environment meson sets: COWSCOPE_CLI,
 * COWSCOPE_DEMO, COWSCOPE_TRACEPOINT_TARGET, COWSCOPE_PROBE_PATH.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEMO_STEPS "1500"
#define DEMO_RUNS 5

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
  g_autoptr(GError) error = NULL;
  char *out = NULL;
  int status;
  if (!g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_STDERR_TO_DEV_NULL, NULL,
                     NULL, &out, NULL, &status, &error)
      || !g_spawn_check_wait_status (status, &error))
    {
      g_printerr ("bench-overhead: %s: %s\n", argv[0], error->message);
      g_free (out);
      return NULL;
    }
  return out;
}

/* Runs @program (with @args) under the recorder into @session. */
static char *
run_recorded (const char *session, const char *const *program)
{
  GPtrArray *argv = g_ptr_array_new ();
  g_ptr_array_add (argv, (char *) require_env ("COWSCOPE_CLI"));
  g_ptr_array_add (argv, "record");
  g_ptr_array_add (argv, "--force");
  g_ptr_array_add (argv, "-o");
  g_ptr_array_add (argv, (char *) session);
  g_ptr_array_add (argv, "--");
  for (int i = 0; program[i] != NULL; i++)
    g_ptr_array_add (argv, (char *) program[i]);
  g_ptr_array_add (argv, NULL);
  char *out = run ((const char *const *) argv->pdata);
  g_ptr_array_unref (argv);
  return out;
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
  return p ? g_ascii_strtod (p + strlen ("training \xe2\x80\x94 ok ("), NULL) : -1;
}

static int
compare (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

static gint64
stored_events (const char *session)
{
  sqlite3 *db = NULL;
  sqlite3_stmt *stmt = NULL;
  gint64 n = -1;
  if (sqlite3_open_v2 (session, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK
      && sqlite3_prepare_v2 (db, "SELECT count(*) FROM events", -1, &stmt, NULL) == SQLITE_OK
      && sqlite3_step (stmt) == SQLITE_ROW)
    n = sqlite3_column_int64 (stmt, 0);
  sqlite3_finalize (stmt);
  sqlite3_close (db);
  return n;
}

int
main (void)
{
  const char *target = require_env ("COWSCOPE_TRACEPOINT_TARGET");
  const char *demo = require_env ("COWSCOPE_DEMO");
  require_env ("COWSCOPE_PROBE_PATH");
  g_autofree char *dir = g_dir_make_tmp ("cowscope-bench-XXXXXX", NULL);
  g_autofree char *session = g_build_filename (dir, "overhead.cowscope", NULL);
  int failed = 0;

  /* 1. Trace points. */
  const char *const tp_argv[] = { target, NULL };
  g_autofree char *off = run (tp_argv);
  g_autofree char *on = run_recorded (session, tp_argv);
  if (off == NULL || on == NULL || strstr (on, "sink=on") == NULL)
    {
      g_printerr ("bench-overhead: the trace-point target did not run with probes %s\n",
                  on == NULL || strstr (on, "sink=on") == NULL ? "on" : "off");
      return 1;
    }
  double empty = field (off, "empty_ns="), mark_off = field (off, "mark_ns=");
  double view_off = field (off, "view_ns="), view_on = field (on, "view_ns=");
  double mark_on = field (on, "mark_ns=");
  double point_off = mark_off - empty, point_on = (view_on - view_off) / 2;
  printf ("cowscope recording overhead (one run, medians)\n\n");
  printf ("1. Trace point cost, ns per event, single thread\n");
  printf ("   %-52s %9s %9s  %s\n", "", "ns", "baseline", "target");
  printf ("   %-52s %9.2f %9s\n", "empty out-of-line call (baseline)", empty, "-");
  printf ("   %-52s %9.2f %9.2f  < 1 ns: %s\n", "probes off: cow_mark() minus the empty call",
          point_off, empty, point_off < 1 ? "PASS" : "MISS");
  printf ("   %-52s %9.2f %9.2f  < 50 ns: %s\n",
          "probes on: extra per event (view+unref, 2 events)", point_on, view_off / 2,
          point_on < 50 ? "PASS" : "MISS");
  printf ("   %-52s %9.2f %9.2f  (info: interns the name too)\n",
          "probes on: cow_mark()", mark_on, mark_off);

  /* 2. The demo's training loop. */
  double plain[DEMO_RUNS], recorded[DEMO_RUNS];
  const char *const demo_argv[] = { demo, "--quiet", "--steps", DEMO_STEPS, "training", NULL };
  for (int i = 0; i < DEMO_RUNS; i++)
    {
      g_autofree char *a = run (demo_argv);
      g_autofree char *b = run_recorded (session, demo_argv);
      plain[i] = training_seconds (a);
      recorded[i] = training_seconds (b);
      if (plain[i] <= 0 || recorded[i] <= 0)
        failed = 1;
    }
  if (failed)
    {
      g_printerr ("bench-overhead: the demo's training time could not be read\n");
      return 1;
    }
  qsort (plain, DEMO_RUNS, sizeof *plain, compare);
  qsort (recorded, DEMO_RUNS, sizeof *recorded, compare);
  double slowdown = recorded[DEMO_RUNS / 2] / plain[DEMO_RUNS / 2] - 1;
  printf ("\n2. Demo training loop (%s steps), median of %d runs each, interleaved\n",
          DEMO_STEPS, DEMO_RUNS);
  printf ("   %-52s %9.3f s\n", "without the recorder (baseline)", plain[DEMO_RUNS / 2]);
  printf ("   %-52s %9.3f s  slowdown %+.1f%%  < 10%%: %s\n", "under cowscope-cli record",
          recorded[DEMO_RUNS / 2], slowdown * 100, slowdown < 0.10 ? "PASS" : "MISS");

  /* 3. Bytes per event of the last (finalized) demo session. */
  GStatBuf st;
  gint64 events = stored_events (session);
  if (g_stat (session, &st) == 0 && events > 0)
    printf ("\n3. Finished session: %" G_GINT64_FORMAT " events in %.1f MiB = %.1f bytes per event\n"
            "   (events plus derived tables, indexes, symbols and checkpoints)\n",
            events, st.st_size / 1048576.0, (double) st.st_size / (double) events);
  g_unlink (session);
  g_rmdir (dir);
  return 0;
}
