/* bench-timeline.c — the copy timeline on generated sessions (meson
 * benchmark `timeline-frame`, under Xvfb):
 *
 *   open to first frame   cowscope_window_open() in a fresh window until
 *                         the frame clock's after-paint of the first frame
 *                         in which the timeline drew the session (target
 *                         <= 1 s at 10 M events), and until the first frame
 *                         whose lanes are all exact (the first one shows
 *                         estimates for the chunks not decoded yet), the
 *                         model's load, and the heap the process grew by;
 *                         medians and maxima of several opens, at 1 M, 10 M
 *                         and 50 M events (showing that opening does not
 *                         grow with the session), beside the same for a
 *                         session of a few thousand events (the baseline,
 *                         same run: what any open costs);
 *   snapshot while zooming and panning
 *                         the timeline's snapshot (GtkWidgetPaintable into a
 *                         fresh GtkSnapshot, to a render node) after each of
 *                         100 zoom/pan steps at 10 M events, median (target
 *                         <= 8 ms), next to the same measure on an empty
 *                         widget of the same size (the baseline, same run).
 *
 * The 10 M session is generated once and cached at $COWSCOPE_BENCH_SESSION
 * (events: $COWSCOPE_BENCH_EVENTS, default 10,000,000); the 1 M and 50 M
 * ones beside it, the 50 M one only when the disk has room for it
 * (COWSCOPE_BENCH_50M=0 skips it; COWSCOPE_BENCH_OPENS sets the opens per
 * size, 5 by default).
 */
#include <adwaita.h>
#include <glib/gstdio.h>
#include <malloc.h>
#include <math.h>
#include <stdio.h>
#include <sys/statvfs.h>
#include <time.h>

#include "cowscope-application.h"
#include "cowscope-timeline-view.h"
#include "cowscope-window.h"
#include "session-fixture.h"

#define N_FRAMES 100

static double heap_mb (void);

static double
now_ms (void)
{
  return g_get_monotonic_time () / 1000.0;
}

/* Iterates the main context until @done (@data) or @seconds pass. */
static gboolean
wait_until (gboolean (*done) (gpointer), gpointer data, int seconds)
{
  gint64 deadline = g_get_monotonic_time () + seconds * G_USEC_PER_SEC;
  while (!done (data))
    {
      if (g_get_monotonic_time () > deadline)
        return FALSE;
      g_main_context_iteration (NULL, TRUE);
    }
  return TRUE;
}

static gboolean
is_drawn (gpointer data)
{
  return gtk_widget_get_mapped (data) && gtk_widget_get_width (data) > 100;
}

typedef struct {
  CowscopeWindow *window;
  double painted_at;   /* after-paint of the first frame with the session */
  double exact_at;     /* after-paint of the first one with exact lanes */
  double heap_first;   /* heap in use then */
} OpenWait;

/* Frame clock after-paint: the first one after the timeline drew the
 * session marks the end of "open to first frame". */
static void
after_paint_cb (GdkFrameClock *clock, OpenWait *wait)
{
  CowscopeTimelineView *view = cowscope_window_get_timeline_view (wait->window);
  if (cowscope_timeline_view_get_frame_count (view) == 0)
    return;
  if (wait->painted_at == 0)
    {
      wait->painted_at = now_ms ();
      wait->heap_first = heap_mb ();
    }
  if (wait->exact_at == 0 && cowscope_timeline_view_is_exact (view))
    wait->exact_at = now_ms ();
}

static gboolean
exact_frame_painted (gpointer data)
{
  return ((OpenWait *) data)->exact_at > 0;
}

static int
compare_doubles (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

/* Median and 95th percentile of @v (sorted in place). */
static void
stats (double *v, guint n, double *median, double *p95)
{
  qsort (v, n, sizeof (double), compare_doubles);
  *median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  *p95 = v[MIN (n - 1, (guint) ceil (n * 0.95) - 1)];
}

/* Milliseconds to snapshot @widget into a render node (its class's
 * snapshot vfunc, what gtk_widget_snapshot() runs for a frame after a
 * queue_draw); with @render_ms, also the time cairo takes to draw that
 * node into an image of the widget's size. */
static double
time_snapshot (GtkWidget *widget, double *render_ms)
{
  double t = now_ms ();
  GtkSnapshot *snapshot = gtk_snapshot_new ();
  GTK_WIDGET_GET_CLASS (widget)->snapshot (widget, snapshot);
  GskRenderNode *node = gtk_snapshot_free_to_node (snapshot);
  t = now_ms () - t;
  if (render_ms != NULL)
    {
      cairo_surface_t *surface = cairo_image_surface_create (CAIRO_FORMAT_ARGB32,
                                                             gtk_widget_get_width (widget),
                                                             gtk_widget_get_height (widget));
      cairo_t *cr = cairo_create (surface);
      double r = now_ms ();
      if (node != NULL)
        gsk_render_node_draw (node, cr);
      cairo_destroy (cr);
      cairo_surface_flush (surface);
      *render_ms = now_ms () - r;
      cairo_surface_destroy (surface);
    }
  if (node != NULL)
    gsk_render_node_unref (node);
  return t;
}

/* The window's view state appeared: the model finished loading. */
static void
view_state_cb (CowscopeWindow *window, GParamSpec *pspec, double *loaded_at)
{
  if (*loaded_at == 0 && cowscope_window_get_view_state (window) != NULL)
    {
      *loaded_at = now_ms ();
      /* A session opens on its summary: the timeline instead, before the
       * first frame, so that the frame measured is the timeline's. */
      gtk_widget_activate_action (GTK_WIDGET (window), "win.show-view", "s", "timeline");
    }
}

/* This process's CPU time in ms (every thread). */
static double
process_cpu_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Runs the main loop until the process is idle (under 5 ms of CPU in
 * 100 ms: the windows closed before have finished their workers' graph
 * builds and table queries), or 10 s passed: each open is measured
 * alone. */
static void
wait_idle (void)
{
  gint64 deadline = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;
  double cpu = process_cpu_ms ();
  while (g_get_monotonic_time () < deadline)
    {
      gint64 until = g_get_monotonic_time () + 100 * 1000;
      while (g_get_monotonic_time () < until)
        if (!g_main_context_iteration (NULL, FALSE))
          g_usleep (2000);
      double now = process_cpu_ms ();
      if (now - cpu < 5)
        return;
      cpu = now;
    }
}

/* Heap bytes in use (malloc'd and mmapped blocks), in MB. */
static double
heap_mb (void)
{
  struct mallinfo2 m = mallinfo2 ();
  return (double) (m.uordblks + m.hblkhd) / (1 << 20);
}

/* The session of @n_events at @path, generated when missing (FALSE with a
 * message when that fails). */
static gboolean
ensure_session (const char *path, guint64 n_events)
{
  if (session_fixture_is_current (path))
    {
      printf ("reusing %s\n", path);
      return TRUE;
    }
  g_autoptr (GError) error = NULL;
  SessionFixtureOptions o = {
    .n_events = n_events, .n_processes = 2, .n_threads = 4, .target_live = 100000,
    .checkpoint_interval = 131072, .finalized = TRUE, .seed = 1,
  };
  if (n_events < 100000)
    session_fixture_options_small (&o);
  g_autofree char *tmp = g_strconcat (path, ".part", NULL);
  double t = now_ms ();
  if (!session_fixture_generate (tmp, &o, NULL, &error) || g_rename (tmp, path) != 0)
    {
      fprintf (stderr, "cannot generate %s: %s\n", path, error ? error->message : "rename");
      g_unlink (tmp);
      return FALSE;
    }
  printf ("generated %s: %" G_GUINT64_FORMAT " events in %.1f s\n", path, n_events,
          (now_ms () - t) / 1000);
  return TRUE;
}

static int
compare_doubles_for_stats (const void *a, const void *b)
{
  return compare_doubles (a, b);
}

/* What opening one session several times measured. */
typedef struct {
  const char *label;
  char *path;
  guint64 n_events;
  guint n;
  double first[16], exact[16], load[16], heap_first[16], heap[16];
} Opens;

/* Opens @o's session @o->n times, each in a fresh window (closed after),
 * timing each open to its first frame and to its first exact frame;
 * returns the last window, open, when @keep (else NULL). */
static CowscopeWindow *
measure_opens (CowscopeApplication *app, Opens *o, gboolean keep)
{
  g_autoptr (GFile) file = g_file_new_for_path (o->path);
  CowscopeWindow *window = NULL;
  for (guint k = 0; k < o->n; k++)
    {
      window = cowscope_window_new (app);
      gtk_window_set_default_size (GTK_WINDOW (window), 1280, 800);
      gtk_window_present (GTK_WINDOW (window));
      wait_until (is_drawn, window, 10);
      wait_idle ();
      malloc_trim (0);
      double heap0 = heap_mb ();
      OpenWait wait = { window, 0, 0, 0 };
      GdkFrameClock *clock = gtk_widget_get_frame_clock (GTK_WIDGET (window));
      gulong paint = g_signal_connect (clock, "after-paint", G_CALLBACK (after_paint_cb), &wait);
      double loaded_at = 0;
      gulong loaded = g_signal_connect (window, "notify::view-state", G_CALLBACK (view_state_cb),
                                        &loaded_at);
      double t_open = now_ms ();
      cowscope_window_open (window, file);
      if (!wait_until (exact_frame_painted, &wait, 300))
        {
          fprintf (stderr, "%s did not open: page %s\n", o->path,
                   cowscope_window_get_visible_page (window));
          exit (1);
        }
      o->first[k] = wait.painted_at - t_open;
      o->exact[k] = wait.exact_at - t_open;
      o->load[k] = loaded_at - t_open;
      o->heap_first[k] = wait.heap_first - heap0;
      o->heap[k] = heap_mb () - heap0;
      o->n_events = cowscope_session_document_get_n_events (
        cowscope_view_state_get_document (cowscope_window_get_view_state (window)));
      g_signal_handler_disconnect (clock, paint);
      g_signal_handler_disconnect (window, loaded);
      if (keep && k + 1 == o->n)
        break;
      gtk_window_destroy (GTK_WINDOW (window));
      window = NULL;
      wait_idle ();
    }
  return window;
}

/* Median and maximum of @v (sorted in place). */
static void
median_max (double *v, guint n, double *median, double *max)
{
  qsort (v, n, sizeof (double), compare_doubles_for_stats);
  *median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  *max = v[n - 1];
}

static void
print_opens (const Opens *o, const char *note)
{
  Opens c = *o;
  double fm, fx, em, ex, lm, lx, hfm, hfx, hm, hx;
  median_max (c.first, c.n, &fm, &fx);
  median_max (c.exact, c.n, &em, &ex);
  median_max (c.load, c.n, &lm, &lx);
  median_max (c.heap_first, c.n, &hfm, &hfx);
  median_max (c.heap, c.n, &hm, &hx);
  printf ("  %-16s %10" G_GUINT64_FORMAT " %6.0f %6.0f ms %6.0f %6.0f ms %6.0f %6.0f ms"
          " %6.1f %6.1f MB%s\n",
          o->label, o->n_events, fm, fx, em, ex, lm, lx, hfm, hm, note);
}

int
main (int argc, char *argv[])
{
  g_autoptr (GError) error = NULL;
  gtk_init ();
  adw_init ();
  g_setenv ("GSETTINGS_BACKEND", "memory", FALSE);

  const char *path = g_getenv ("COWSCOPE_BENCH_SESSION");
  g_autofree char *fallback = g_build_filename (g_get_tmp_dir (), "cowscope-bench-timeline-10m.cowscope", NULL);
  if (path == NULL)
    path = fallback;
  guint64 n_events = 10000000;
  if (g_getenv ("COWSCOPE_BENCH_EVENTS") != NULL)
    n_events = g_ascii_strtoull (g_getenv ("COWSCOPE_BENCH_EVENTS"), NULL, 10);
  guint n_opens = 5;
  if (g_getenv ("COWSCOPE_BENCH_OPENS") != NULL)
    n_opens = CLAMP (atoi (g_getenv ("COWSCOPE_BENCH_OPENS")), 1, 16);
  if (!ensure_session (path, n_events))
    return 1;
  g_autofree char *dir = g_path_get_dirname (path);
  Opens sizes[] = {
    { "small", g_build_filename (dir, "bench-timeline-small.cowscope", NULL), 3000 },
    { "1 M", g_build_filename (dir, "bench-timeline-1m.cowscope", NULL), 1000000 },
    { "10 M", g_strdup (path), n_events },
    { "50 M", g_build_filename (dir, "bench-timeline-50m.cowscope", NULL), 50000000 },
  };
  const char *skip_50m = NULL;
  for (guint i = 0; i < G_N_ELEMENTS (sizes); i++)
    {
      sizes[i].n = n_opens;
      if (i == 3 && !session_fixture_is_current (sizes[i].path))
        {
          /* About 150 bytes an event, and room to spare. */
          struct statvfs fs;
          guint64 need = sizes[i].n_events * 150 * 2;
          if (g_strcmp0 (g_getenv ("COWSCOPE_BENCH_50M"), "0") == 0)
            skip_50m = "COWSCOPE_BENCH_50M=0";
          else if (statvfs (dir, &fs) == 0 && (guint64) fs.f_bavail * fs.f_frsize < need)
            skip_50m = "not enough free disk to generate it";
          if (skip_50m != NULL)
            {
              sizes[i].n = 0;
              continue;
            }
        }
      if (i != 2 && !ensure_session (sizes[i].path, sizes[i].n_events))
        return 1;
    }

  CowscopeApplication *app = cowscope_application_new ();
  g_application_set_flags (G_APPLICATION (app), G_APPLICATION_HANDLES_OPEN | G_APPLICATION_NON_UNIQUE);
  if (!g_application_register (G_APPLICATION (app), NULL, &error))
    {
      fprintf (stderr, "cannot register: %s\n", error->message);
      return 1;
    }

  /* ---- open to first frame, at every size (interleaved) ---- */
  for (guint i = 0; i < G_N_ELEMENTS (sizes); i++)
    if (i != 2 && sizes[i].n > 0)
      measure_opens (app, &sizes[i], FALSE);
  CowscopeWindow *window = measure_opens (app, &sizes[2], TRUE);
  double open_ms, open_max, exact_ms, exact_max, load_ms, load_max;
  {
    Opens c = sizes[2];
    median_max (c.first, c.n, &open_ms, &open_max);
    median_max (c.exact, c.n, &exact_ms, &exact_max);
    median_max (c.load, c.n, &load_ms, &load_max);
  }

  CowscopeTimelineView *view = cowscope_window_get_timeline_view (window);
  CowscopeViewState *state = cowscope_window_get_view_state (window);
  CowscopeSessionDocument *doc = cowscope_view_state_get_document (state);
  GtkWidget *vw = GTK_WIDGET (view);
  int width = gtk_widget_get_width (vw), height = gtk_widget_get_height (vw);

  /* ---- the baseline: an empty widget of the same size ---- */
  GtkWidget *empty_window = gtk_window_new ();
  GtkWidget *empty = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);
  gtk_widget_set_size_request (empty, width, height);
  gtk_window_set_child (GTK_WINDOW (empty_window), empty);
  gtk_window_present (GTK_WINDOW (empty_window));
  wait_until (is_drawn, empty, 10);

  double zoom[N_FRAMES], hover[N_FRAMES], base[N_FRAMES], render[N_FRAMES];
  g_autoptr (GRand) rand = g_rand_new_with_seed (3);
  gint64 s0 = cowscope_session_document_get_start_ns (doc);
  gint64 s1 = cowscope_session_document_get_end_ns (doc);
  for (guint i = 0; i < N_FRAMES; i++)
    {
      gint64 t0 = cowscope_view_state_get_visible_start (state);
      gint64 t1 = cowscope_view_state_get_visible_end (state);
      double x = 176 + g_rand_double (rand) * (width - 176);
      switch (i % 5)
        {
        case 0: case 1: cowscope_timeline_view_zoom (view, 1.6, x); break;
        case 2: cowscope_view_state_set_visible (state, t0 + (t1 - t0) / 10, t1 + (t1 - t0) / 10); break;
        case 3: cowscope_view_state_set_visible (state, t0 - (t1 - t0) / 7, t1 - (t1 - t0) / 7); break;
        case 4: cowscope_timeline_view_zoom (view, 1.0 / 1.5, x); break;
        }
      if (i % 25 == 24)  /* back out now and then: whole-session frames too */
        cowscope_view_state_set_visible (state, s0, s1 + 1);
      zoom[i] = time_snapshot (vw, &render[i]);
      hover[i] = time_snapshot (vw, NULL);  /* same window: cached lanes */
      base[i] = time_snapshot (empty, NULL);
      g_main_context_iteration (NULL, FALSE);
    }
  double zm, zp, hm, hp, bm, bp, rm, rp;
  stats (render, N_FRAMES, &rm, &rp);
  stats (zoom, N_FRAMES, &zm, &zp);
  stats (hover, N_FRAMES, &hm, &hp);
  stats (base, N_FRAMES, &bm, &bp);

  printf ("timeline-frame: %'" G_GUINT64_FORMAT " events, %u lanes, timeline %dx%d px\n",
          cowscope_session_document_get_n_events (doc), cowscope_timeline_view_get_n_lanes (view),
          width, height);
  printf ("  %-40s %9.1f ms   (max %.1f ms over %u opens; target <= 1000 ms)\n",
          "open to first frame", open_ms, open_max, sizes[2].n);
  printf ("  %-40s %9.1f ms   (max %.1f ms)\n", "open to the first exact frame", exact_ms,
          exact_max);
  printf ("  %-40s %9.1f ms\n", "  of which the session model's load", load_ms);
  printf ("\n  opening, median and max of %u opens each, fresh windows\n", n_opens);
  printf ("  %-16s %10s %16s %16s %16s %16s\n", "session", "events", "first frame",
          "exact frame", "model load", "heap first/exact");
  for (guint i = 0; i < G_N_ELEMENTS (sizes); i++)
    {
      if (sizes[i].n > 0)
        print_opens (&sizes[i], i == 0 ? "  (baseline, same run)" : "");
      else
        printf ("  %-16s skipped: %s\n", sizes[i].label, skip_50m);
    }
  printf ("\n");
  printf ("  %-40s %9s %9s   %s\n", "snapshot over 100 frames", "median", "p95", "");
  printf ("  %-40s %6.2f ms %6.2f ms   (target <= 8 ms)\n", "timeline, zooming and panning", zm, zp);
  printf ("  %-40s %6.2f ms %6.2f ms\n", "timeline, same window (cached lanes)", hm, hp);
  printf ("  %-40s %6.2f ms %6.2f ms\n", "baseline: empty widget, same size", bm, bp);
  printf ("  %-40s %6.2f ms %6.2f ms\n", "cairo rendering of the timeline's node", rm, rp);

  gtk_window_destroy (GTK_WINDOW (empty_window));
  gtk_window_destroy (GTK_WINDOW (window));
  g_object_unref (app);
  for (guint i = 0; i < G_N_ELEMENTS (sizes); i++)
    g_free (sizes[i].path);
  return 0;
}
