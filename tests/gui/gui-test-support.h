/* gui-test-support.h — main-loop helpers shared by the GUI tests. */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

/* Iterates the default main context until @done (@data) holds or
 * @seconds pass; returns whether it holds. */
gboolean gui_test_wait_until (gboolean (*done) (gpointer data), gpointer data,
                              guint seconds);

/* Lets pending events, layout and frames run for about @ms. */
void gui_test_spin (guint ms);

/* For gui_test_wait_until(): TRUE once the widget @data is mapped, has a
 * size and its frame clock has painted a frame since the first call, so
 * a snapshot of it shows what is on screen (windows lag under load). */
gboolean gui_test_widget_drawn (gpointer data);

/* Writes @widget's rendering, once a frame is painted after this call,
 * to @name in $COWSCOPE_SCREENSHOT_DIR (or "."), for a person to look at:
 * the assertions measure, they do not look. */
void gui_test_write_screenshot (GtkWidget *widget, const char *name);

G_END_DECLS
