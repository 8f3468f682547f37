/* gui-test-support.c — see gui-test-support.h. */
#include "gui-test-support.h"

gboolean
gui_test_wait_until (gboolean (*done) (gpointer data), gpointer data, guint seconds)
{
  gint64 deadline = g_get_monotonic_time () + (gint64) seconds * G_USEC_PER_SEC;

  while (!done (data))
    {
      if (g_get_monotonic_time () > deadline)
        return FALSE;
      if (!g_main_context_iteration (NULL, FALSE))
        g_usleep (1000);
    }
  return TRUE;
}

void
gui_test_spin (guint ms)
{
  gint64 end = g_get_monotonic_time () + (gint64) ms * 1000;

  while (g_get_monotonic_time () < end)
    if (!g_main_context_iteration (NULL, FALSE))
      g_usleep (1000);
}

gboolean
gui_test_widget_drawn (gpointer data)
{
  GtkWidget *widget = data;
  GdkFrameClock *clock = gtk_widget_get_frame_clock (widget);
  gint64 *first = g_object_get_data (G_OBJECT (widget), "gui-test-first-frame");

  if (!gtk_widget_get_mapped (widget) || gtk_widget_get_width (widget) <= 0
      || gtk_widget_get_height (widget) <= 0 || clock == NULL)
    return FALSE;
  if (first == NULL)
    {
      first = g_new (gint64, 1);
      *first = gdk_frame_clock_get_frame_counter (clock);
      g_object_set_data_full (G_OBJECT (widget), "gui-test-first-frame", first, g_free);
      gtk_widget_queue_draw (widget);
      return FALSE;
    }
  if (gdk_frame_clock_get_frame_counter (clock) <= *first)
    return FALSE;
  /* Reset, so that the next wait asks for a fresh frame again. */
  g_object_set_data (G_OBJECT (widget), "gui-test-first-frame", NULL);
  return TRUE;
}

void
gui_test_write_screenshot (GtkWidget *widget, const char *name)
{
  g_assert_true (gui_test_wait_until (gui_test_widget_drawn, widget, 10));
  int width = gtk_widget_get_width (widget), height = gtk_widget_get_height (widget);
  GdkPaintable *paintable = gtk_widget_paintable_new (widget);
  GtkSnapshot *snapshot = gtk_snapshot_new ();
  gdk_paintable_snapshot (paintable, snapshot, width, height);
  GskRenderNode *node = gtk_snapshot_free_to_node (snapshot);
  g_assert_nonnull (node);
  cairo_surface_t *surface = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, width, height);
  cairo_t *cr = cairo_create (surface);
  gsk_render_node_draw (node, cr);
  cairo_destroy (cr);
  const char *dir = g_getenv ("COWSCOPE_SCREENSHOT_DIR");
  g_autofree char *path = g_build_filename (dir ? dir : ".", name, NULL);
  g_assert_cmpint (cairo_surface_write_to_png (surface, path), ==, CAIRO_STATUS_SUCCESS);
  g_test_message ("screenshot: %s (%dx%d)", path, width, height);
  cairo_surface_destroy (surface);
  gsk_render_node_unref (node);
  g_object_unref (paintable);
}
