/* bench-burst.c — bursts through Cowscope's embedded recorder and
 * through LTTng-UST, side by side (bench-burst.h). */
#include "bench-burst.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cowscope-recorder.h"

static gint64
process_cpu_ns (void)
{
  struct rusage ru;
  getrusage (RUSAGE_SELF, &ru);
  return ((gint64) ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) *
           G_GINT64_CONSTANT (1000000000) +
         ((gint64) ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000;
}

typedef struct {
  gint64 wall_ns; /* when the last event was committed */
  gint64 cpu_ns;
} FinalizeMark;

static void
note_finalizing (const char *session_path, void *user_data)
{
  (void) session_path;
  FinalizeMark *mark = user_data;
  mark->wall_ns = burst_report_now_ns ();
  mark->cpu_ns = process_cpu_ns ();
}

static guint64
file_size (const char *path)
{
  GStatBuf st;
  return g_stat (path, &st) == 0 ? (guint64) st.st_size : 0;
}

gboolean
bench_burst_record (const char *target, guint64 events,
                    const char *session_path, BenchBurstRun *run, GError **error)
{
  memset (run, 0, sizeof *run);
  g_autofree char *out_path = NULL;
  int out_fd = g_file_open_tmp ("cowscope-burst-XXXXXX.out", &out_path, error);
  if (out_fd < 0)
    return FALSE;
  g_unlink (out_path);

  g_autofree char *count = g_strdup_printf ("%" G_GUINT64_FORMAT, events);
  char *argv[] = { (char *) target, count, NULL };
  CowscopeRecordOptions options;
  cowscope_record_options_init (&options);
  options.argv = argv;
  options.output = session_path;
  options.force = TRUE;
  options.probe_path = g_getenv ("COWSCOPE_PROBE_PATH");
  options.stdout_fd = out_fd;
  FinalizeMark mark = { 0 };
  options.finalizing = note_finalizing;
  options.finalizing_data = &mark;

  CowscopeRecordResult result;
  gint64 cpu0 = process_cpu_ns ();
  gboolean recorded = cowscope_record (&options, &result, error);
  gint64 ready = burst_report_now_ns ();
  gint64 cpu1 = process_cpu_ns ();

  g_autofree char *out = NULL;
  if (recorded)
    {
      off_t length = lseek (out_fd, 0, SEEK_END);
      out = g_malloc0 ((gsize) MAX (length, 0) + 1);
      if (length < 0 || pread (out_fd, out, (size_t) length, 0) != length)
        {
          g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (errno),
                       "cannot read the burst target's output: %s",
                       g_strerror (errno));
          recorded = FALSE;
        }
    }
  close (out_fd);
  if (recorded &&
      (result.exit_status != 0 || g_strcmp0 (result.target_end, "exited") != 0))
    {
      g_set_error (error, G_SPAWN_ERROR, G_SPAWN_ERROR_FAILED,
                   "the burst target %s (status %d, signal %d)",
                   result.target_end, result.exit_status, result.exit_signal);
      recorded = FALSE;
    }
  if (recorded && !burst_report_parse (out, &run->target, error))
    recorded = FALSE;
  if (recorded && !run->target.enabled)
    {
      g_set_error (
        error, G_SPAWN_ERROR, G_SPAWN_ERROR_FAILED,
        "the burst target saw no trace sink: the probe was not loaded");
      recorded = FALSE;
    }
  if (recorded)
    {
      run->totals = result.totals;
      run->recorder_cpu_ns = cpu1 - cpu0;
      run->finalize_cpu_ns = mark.cpu_ns > 0 ? cpu1 - mark.cpu_ns : 0;
      run->drained_ns =
        mark.wall_ns > 0 ? mark.wall_ns - run->target.loop_end_ns : 0;
      run->ready_ns = ready - run->target.loop_end_ns;
      g_autofree char *wal = g_strconcat (session_path, "-wal", NULL);
      g_autofree char *shm = g_strconcat (session_path, "-shm", NULL);
      run->bytes_on_disk =
        file_size (session_path) + file_size (wal) + file_size (shm);
    }
  cowscope_record_result_clear (&result);
  return recorded;
}

gboolean
bench_burst_pairs_run (BenchBurstPairs *pairs, guint64 events, guint n_pairs,
                       const char *dir, GError **error)
{
  memset (pairs, 0, sizeof *pairs);
  pairs->events = events;
  pairs->pairs = n_pairs;
  pairs->cowscope = g_new0 (BenchBurstRun, n_pairs);
  pairs->lttng = g_new0 (LttngPeerRun, n_pairs);
  const char *target = g_getenv ("COWSCOPE_BURST_TARGET");
  if (target == NULL || *target == '\0')
    {
      g_set_error (
        error, G_SPAWN_ERROR, G_SPAWN_ERROR_NOENT,
        "COWSCOPE_BURST_TARGET is not set (run the benchmark through meson)");
      return FALSE;
    }
  g_autofree char *session = g_build_filename (dir, "burst.cowscope", NULL);

  LttngPeerOptions options;
  lttng_peer_options_init (&options);
  pairs->lttng_channel = lttng_peer_describe (&options);
  /* LTTng allocates per-user buffers for every possible CPU. */
  pairs->lttng_cpus = sysconf (_SC_NPROCESSORS_CONF);
  pairs->lttng_buffer_bytes = options.subbuf_size * options.n_subbufs *
                              (guint64) MAX (pairs->lttng_cpus, 1);
  g_autoptr (LttngPeer) peer = lttng_peer_start (
    g_getenv ("COWSCOPE_LTTNG_TARGET"), &options, &pairs->lttng_skipped);
  for (guint i = 0; i < n_pairs; i++)
    for (int side = 0; side < 2; side++)
      {
        gboolean lttng_turn = (side == 0) == (i % 2 == 1);
        if (lttng_turn && peer)
          {
            g_autoptr (GError) lttng_error = NULL;
            if (!lttng_peer_run (peer, events, &pairs->lttng[i], &lttng_error))
              {
                pairs->lttng_skipped = g_strdup_printf (
                  "failed in pair %u: %s", i + 1, lttng_error->message);
                g_clear_pointer (&peer, lttng_peer_free);
              }
          }
        else if (!lttng_turn)
          {
            gboolean ok = bench_burst_record (target, events, session,
                                              &pairs->cowscope[i], error);
            g_unlink (session);
            if (!ok)
              return FALSE;
          }
      }
  /* A peer that failed part-way leaves no LTTng column: a median over
   * fewer pairs would not come from the same rounds. */
  if (peer == NULL)
    g_clear_pointer (&pairs->lttng, g_free);
  return TRUE;
}

void
bench_burst_pairs_clear (BenchBurstPairs *pairs)
{
  g_clear_pointer (&pairs->cowscope, g_free);
  g_clear_pointer (&pairs->lttng, g_free);
  g_clear_pointer (&pairs->lttng_channel, g_free);
  g_clear_pointer (&pairs->lttng_skipped, g_free);
}

void
bench_print_burst_setup (const BenchBurstPairs *pairs)
{
  printf ("   Cowscope: the recorder embedded, its defaults: drop mode, a "
          "%" G_GUINT64_FORMAT " KiB ring per thread, stacks on\n",
          (guint64) COWSCOPE_RING_DEFAULT_CAPACITY / 1024);
  if (pairs->lttng)
    printf ("   LTTng-UST: %s (%" G_GUINT64_FORMAT
            " MiB for %ld CPUs), a private session daemon\n",
            pairs->lttng_channel, pairs->lttng_buffer_bytes >> 20,
            pairs->lttng_cpus);
  else
    printf ("   LTTng-UST: skipped: %s\n", pairs->lttng_skipped);
}

void
bench_print_peer_header (void)
{
  printf ("   %-44s %12s %12s %10s\n", "", "Cowscope", "LTTng-UST", "ratio");
}

double
bench_print_peer_row (const char *label, int decimals, const double *cowscope,
                      const double *lttng, guint pairs)
{
  g_autofree double *c = g_memdup2 (cowscope, pairs * sizeof *c);
  g_autofree double *l = lttng ? g_memdup2 (lttng, pairs * sizeof *l) : NULL;
  g_autofree double *ratios = g_new0 (double, pairs);
  guint n_ratios = 0;
  for (guint i = 0; l && i < pairs; i++)
    if (l[i] > 0)
      ratios[n_ratios++] = c[i] / l[i];
  char c_text[32], l_text[32] = "-", r_text[32] = "-";
  double ratio = bench_median (ratios, n_ratios);
  g_snprintf (c_text, sizeof c_text, "%.*f", decimals, bench_median (c, pairs));
  if (l)
    g_snprintf (l_text, sizeof l_text, "%.*f", decimals, bench_median (l, pairs));
  if (n_ratios > 0)
    g_snprintf (r_text, sizeof r_text, "%.2f\xc3\x97", ratio);
  printf ("   %-44s %12s %12s %10s\n", label, c_text, l_text, r_text);
  return ratio;
}

static int
compare_doubles (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

double
bench_median (double *values, guint n)
{
  if (n == 0)
    return 0;
  qsort (values, n, sizeof *values, compare_doubles);
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

guint64
bench_env_count (const char *name, guint64 fallback, guint64 min, guint64 max)
{
  const char *text = g_getenv (name);
  if (text == NULL || *text == '\0')
    return fallback;
  guint64 value;
  g_autoptr (GError) error = NULL;
  if (!g_ascii_string_to_unsigned (text, 10, min, max, &value, &error))
    {
      g_printerr ("%s=%s: %s\n", name, text, error->message);
      exit (2);
    }
  return value;
}

char *
bench_machine_load (void)
{
  g_autofree char *loadavg = NULL;
  double load = -1;
  if (g_file_get_contents ("/proc/loadavg", &loadavg, NULL, NULL))
    load = g_ascii_strtod (loadavg, NULL);
  return g_strdup_printf ("load average %.2f (%ld CPUs online)", load,
                          sysconf (_SC_NPROCESSORS_ONLN));
}
