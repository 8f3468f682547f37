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
