/* bench-first-event.c — what a thread's first event costs under the
 * recorder, beside its hundredth.
 *
 * Runs first-event-target under `cowscope-cli record` twice in one run:
 * with threads started through the probe's pthread_create (their rings
 * are set up before their start routine) and with threads started
 * behind its back (set up inside their first event: the fallback, and
 * what every thread paid before).  Each of ROUNDS runs starts THREADS
 * threads, one at a time, each timing its first and its hundredth
 * cow_mark(); the two modes alternate, so load from elsewhere (the
 * machine is shared) hits both alike.  Prints per mode the median and
 * p99 of the first and of the hundredth event, their ratio, and the p99
 * of the added latency (first minus hundredth, per thread).  Paths from
 * meson: COWSCOPE_CLI, COWSCOPE_FIRST_EVENT_TARGET.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define THREADS "200"
#define ROUNDS 5

static int
compare_i64 (const void *a, const void *b)
{
  int64_t x = *(const int64_t *) a, y = *(const int64_t *) b;
  return (x > y) - (x < y);
}

/* The @q quantile (0..1) of @values (sorted in place). */
static double
quantile (GArray *values, double q)
{
  if (values->len == 0)
    return 0;
  qsort (values->data, values->len, sizeof (int64_t), compare_i64);
  guint i = (guint) (q * (values->len - 1) + 0.5);
  return (double) g_array_index (values, int64_t, i);
}

typedef struct {
  GArray *first, *hundredth, *added; /* int64_t ns */
} Samples;

/* One recorded run of the target; appends its threads' timings. */
static gboolean
run_once (const char *dir, gboolean lazy, Samples *samples)
{
  g_autofree char *session = g_build_filename (dir, "first-event.cowscope", NULL);
  const char *argv[] = { g_getenv ("COWSCOPE_CLI"), "record", "--force", "--no-stacks",
                         "-o", session, "--", g_getenv ("COWSCOPE_FIRST_EVENT_TARGET"),
                         THREADS, lazy ? "lazy" : "probe", NULL };
  g_autofree char *out = NULL;
  g_autoptr (GError) error = NULL;
  int status;
  if (!g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, &out,
                     NULL, &status, &error)
      || !g_spawn_check_wait_status (status, &error))
    {
      g_printerr ("bench-first-event: %s\n", error->message);
      return FALSE;
    }
  g_auto (GStrv) lines = g_strsplit (out, "\n", -1);
  for (char **l = lines; *l != NULL; l++)
    {
      long long first, hundredth;
      if (sscanf (*l, "%lld %lld", &first, &hundredth) != 2)
        continue;
      int64_t f = first, h = hundredth, a = first - hundredth;
      g_array_append_val (samples->first, f);
      g_array_append_val (samples->hundredth, h);
      g_array_append_val (samples->added, a);
    }
  g_remove (session);
  return TRUE;
}

static void
print_mode (const char *name, Samples *s)
{
  double first_median = quantile (s->first, 0.5), hundredth_median = quantile (s->hundredth, 0.5);
  printf ("  %-34s first %8.0f ns (p99 %8.0f)   hundredth %5.0f ns (p99 %6.0f)   "
          "first/hundredth %6.2f   p99 added %8.0f ns\n",
          name, first_median, quantile (s->first, 0.99), hundredth_median,
          quantile (s->hundredth, 0.99), first_median / MAX (hundredth_median, 1),
          quantile (s->added, 0.99));
}

int
main (void)
{
  if (g_getenv ("COWSCOPE_CLI") == NULL || g_getenv ("COWSCOPE_FIRST_EVENT_TARGET") == NULL)
    {
      g_printerr ("bench-first-event: run it through meson\n");
      return 1;
    }
  g_autofree char *dir = g_dir_make_tmp ("cowscope-first-event-XXXXXX", NULL);
  Samples modes[2];
  for (int m = 0; m < 2; m++)
    modes[m] = (Samples) { g_array_new (FALSE, FALSE, sizeof (int64_t)),
                           g_array_new (FALSE, FALSE, sizeof (int64_t)),
                           g_array_new (FALSE, FALSE, sizeof (int64_t)) };
  for (int round = 0; round < ROUNDS; round++)
    for (int m = 0; m < 2; m++)
      if (!run_once (dir, m == 1, &modes[m]))
        return 1;
  printf ("A thread's first event beside its hundredth (cow_mark under the recorder; %d runs x %s "
          "threads per mode, alternated; medians):\n", ROUNDS, THREADS);
  print_mode ("set up before the first event", &modes[0]);
  print_mode ("set up inside it (the fallback)", &modes[1]);
  for (int m = 0; m < 2; m++)
    {
      g_array_unref (modes[m].first);
      g_array_unref (modes[m].hundredth);
      g_array_unref (modes[m].added);
    }
  g_rmdir (dir);
  return 0;
}
