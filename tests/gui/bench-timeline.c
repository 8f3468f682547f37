/* bench-timeline.c — the copy timeline on a generated session of ten
 * million events (meson benchmark `timeline-frame`, under Xvfb):
 *
 *   open to first frame   cowscope_window_open() until the frame clock's
 *                         after-paint of the first frame in which the
 *                         timeline drew the session (target <= 1 s);
 *   snapshot while zooming and panning
 *                         the timeline's snapshot (GtkWidgetPaintable into a
 *                         fresh GtkSnapshot, to a render node) after each of
 *                         100 zoom/pan steps, median (target <= 8 ms), next
 *                         to the same measure on an empty widget of the same
 *                         size (the baseline, same run).
 *
 * The session is generated once and cached at $COWSCOPE_BENCH_SESSION
 * (events: $COWSCOPE_BENCH_EVENTS, default 10,000,000).
 */
#include <adwaita.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>

#include "cowscope-application.h"
#include "cowscope-timeline-view.h"
#include "cowscope-window.h"
#include "session-fixture.h"

#define N_FRAMES 100

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
} OpenWait;

/* Frame clock after-paint: the first one after the timeline drew the
 * session marks the end of "open to first frame". */
static void
after_paint_cb (GdkFrameClock *clock, OpenWait *wait)
{
  if (wait->painted_at == 0
      && cowscope_timeline_view_get_frame_count (cowscope_window_get_timeline_view (wait->window)) > 0)
    wait->painted_at = now_ms ();
}

static gboolean
first_frame_painted (gpointer data)
{
  return ((OpenWait *) data)->painted_at > 0;
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
  if (!g_file_test (path, G_FILE_TEST_EXISTS))
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

  CowscopeApplication *app = cowscope_application_new ();
  g_application_set_flags (G_APPLICATION (app), G_APPLICATION_HANDLES_OPEN | G_APPLICATION_NON_UNIQUE);
  if (!g_application_register (G_APPLICATION (app), NULL, &error))
    {
      fprintf (stderr, "cannot register: %s\n", error->message);
      return 1;
    }

  /* ---- open to first frame ---- */
  CowscopeWindow *window = cowscope_window_new (app);
  gtk_window_set_default_size (GTK_WINDOW (window), 1280, 800);
  gtk_window_present (GTK_WINDOW (window));
  wait_until (is_drawn, window, 10);
  OpenWait wait = { window, 0 };
  GdkFrameClock *clock = gtk_widget_get_frame_clock (GTK_WIDGET (window));
  g_signal_connect (clock, "after-paint", G_CALLBACK (after_paint_cb), &wait);
  g_autoptr (GFile) file = g_file_new_for_path (path);
  double loaded_at = 0;
  g_signal_connect (window, "notify::view-state", G_CALLBACK (view_state_cb), &loaded_at);
  double t_open = now_ms ();
  cowscope_window_open (window, file);
  if (!wait_until (first_frame_painted, &wait, 120))
    {
      fprintf (stderr, "the session did not open: page %s\n",
               cowscope_window_get_visible_page (window));
      return 1;
    }
  double open_ms = wait.painted_at - t_open;
  double load_ms = loaded_at - t_open;
  g_signal_handlers_disconnect_by_func (clock, after_paint_cb, &wait);

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
  printf ("  %-40s %9.1f ms   (target <= 1000 ms)\n", "open to first frame", open_ms);
  printf ("  %-40s %9.1f ms\n", "  of which the session model's load", load_ms);
  printf ("  %-40s %9s %9s   %s\n", "snapshot over 100 frames", "median", "p95", "");
  printf ("  %-40s %6.2f ms %6.2f ms   (target <= 8 ms)\n", "timeline, zooming and panning", zm, zp);
  printf ("  %-40s %6.2f ms %6.2f ms\n", "timeline, same window (cached lanes)", hm, hp);
  printf ("  %-40s %6.2f ms %6.2f ms\n", "baseline: empty widget, same size", bm, bp);
  printf ("  %-40s %6.2f ms %6.2f ms\n", "cairo rendering of the timeline's node", rm, rp);

  gtk_window_destroy (GTK_WINDOW (empty_window));
  gtk_window_destroy (GTK_WINDOW (window));
  g_object_unref (app);
  return 0;
}
