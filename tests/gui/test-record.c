/* test-record.c — recording from the launch dialog to an open session,
 * and exporting that session in every format, driven through actions.
 *
 * Needs $COWSCOPE_DEMO (the demo target) and $COWSCOPE_PROBE_PATH (set
 * by meson).  Writes screenshots of the launch dialog and the recording
 * page to $COWSCOPE_SCREENSHOT_DIR. */
#include <adwaita.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <string.h>
#include <utime.h>

#include "gui-test-support.h"
#include "cowscope-application.h"
#include "cowscope-export-dialog.h"
#include "cowscope-record-dialog.h"
#include "cowscope-recording-page.h"
#include "cowscope-session-tables.h"
#include "cowscope-sharing-graph.h"
#include "cowscope-window.h"

static CowscopeApplication *app;
static char *session_path;  /* the recorded session, for the export tests */
static char *tmp_dir;



/* The first descendant of @widget (itself included) of @type, or NULL. */
static GtkWidget *
find_widget (GtkWidget *widget,
             GType      type)
{
  if (G_TYPE_CHECK_INSTANCE_TYPE (widget, type))
    return widget;
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    {
      GtkWidget *found = find_widget (child, type);

      if (found != NULL)
        return found;
    }
  return NULL;
}

/* The toplevel of @type, or NULL. */
static GtkWidget *
find_toplevel (GType type)
{
  GListModel *toplevels = gtk_window_get_toplevels ();
  guint n = g_list_model_get_n_items (toplevels);

  for (guint i = 0; i < n; i++)
    {
      g_autoptr(GObject) window = g_list_model_get_item (toplevels, i);

      if (G_TYPE_CHECK_INSTANCE_TYPE (window, type))
        return GTK_WIDGET (window);
    }
  return NULL;
}


/* Renders @widget to NAME.png in $COWSCOPE_SCREENSHOT_DIR (or here),
 * once it has drawn.  Returns FALSE (writing nothing) without a node. */
static gboolean
screenshot (GtkWidget  *widget,
            const char *name)
{
  /* Under load a window can lag behind: snapshot it once it has drawn. */
  g_assert_true (gui_test_wait_until (gui_test_widget_drawn, widget, 10));
  g_object_set_data (G_OBJECT (widget), "test-first-frame", NULL);

  int width = gtk_widget_get_width (widget);
  int height = gtk_widget_get_height (widget);
  g_autoptr(GdkPaintable) paintable = gtk_widget_paintable_new (widget);
  GtkSnapshot *snapshot = gtk_snapshot_new ();
  g_autoptr(GskRenderNode) node = NULL;
  const char *dir = g_getenv ("COWSCOPE_SCREENSHOT_DIR");
  g_autofree char *file = g_strdup_printf ("%s.png", name);
  g_autofree char *path = g_build_filename (dir != NULL ? dir : ".", file, NULL);
  cairo_surface_t *surface;
  cairo_t *cr;

  gdk_paintable_snapshot (paintable, GDK_SNAPSHOT (snapshot), width, height);
  node = gtk_snapshot_free_to_node (snapshot);
  if (node == NULL || width <= 0 || height <= 0)
    return FALSE;
  surface = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, width, height);
  cr = cairo_create (surface);
  cairo_set_source_rgb (cr, 1, 1, 1);
  cairo_paint (cr);
  gsk_render_node_draw (node, cr);
  cairo_destroy (cr);
  g_assert_cmpint (cairo_surface_write_to_png (surface, path), ==, CAIRO_STATUS_SUCCESS);
  g_test_message ("screenshot: %s (%dx%d)", path, width, height);
  cairo_surface_destroy (surface);
  return TRUE;
}

/* Activates app.record from @window and returns the dialog it shows. */
static CowscopeRecordDialog *
open_record_dialog (CowscopeWindow *window)
{
  GtkWidget *dialog;

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "app.record", NULL));
  dialog = find_toplevel (COWSCOPE_TYPE_RECORD_DIALOG);
  g_assert_nonnull (dialog);
  g_assert_true (gtk_window_get_transient_for (GTK_WINDOW (dialog)) == GTK_WINDOW (window));
  return COWSCOPE_RECORD_DIALOG (dialog);
}

static gboolean
no_record_dialog (gpointer data)
{
  return find_toplevel (COWSCOPE_TYPE_RECORD_DIALOG) == NULL;
}

/* A program that does not exist gets an inline error; nothing records. */
static void
test_missing_program (void)
{
  CowscopeWindow *window = cowscope_window_new (app);
  CowscopeRecordDialog *dialog;

  gtk_window_present (GTK_WINDOW (window));
  dialog = open_record_dialog (window);
  cowscope_record_dialog_set_program (dialog, "/nonexistent/cowscope-no-such-program");
  cowscope_record_dialog_set_arguments (dialog, "--flag");
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (dialog), "record-dialog.record", NULL));
  gui_test_spin (100);

  g_assert_nonnull (cowscope_record_dialog_get_error (dialog));
  g_assert_nonnull (strstr (cowscope_record_dialog_get_error (dialog), "does not exist"));
  g_assert_true (find_toplevel (COWSCOPE_TYPE_RECORD_DIALOG) == GTK_WIDGET (dialog));
  g_assert_cmpstr (cowscope_window_get_visible_page (window), ==, "start");
  g_assert_null (find_widget (GTK_WIDGET (window), COWSCOPE_TYPE_RECORDING_PAGE));

  /* A bad quote in the arguments is refused the same way. */
  cowscope_record_dialog_set_program (dialog, g_getenv ("COWSCOPE_DEMO"));
  cowscope_record_dialog_set_arguments (dialog, "--steps 'unterminated");
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (dialog), "record-dialog.record", NULL));
  g_assert_nonnull (cowscope_record_dialog_get_error (dialog));
  g_assert_null (find_widget (GTK_WIDGET (window), COWSCOPE_TYPE_RECORDING_PAGE));

  gtk_window_destroy (GTK_WINDOW (dialog));
  gtk_window_destroy (GTK_WINDOW (window));
  gui_test_spin (50);
}

typedef struct {
  CowscopeRecordingPage *page;
  CowscopeWindow        *window;
  guint64                max_live_events;
  guint                  updates;
  gboolean               screenshot_taken;
} Recording;

/* events-stored changed while the page is still recording. */
static void
events_changed_cb (CowscopeRecordingPage *page,
                   GParamSpec            *pspec,
                   Recording             *rec)
{
  if (cowscope_recording_page_is_running (page))
    rec->updates++;
  if (cowscope_recording_page_is_running (page))
    rec->max_live_events = MAX (rec->max_live_events,
                                cowscope_recording_page_get_events_stored (page));
}

static gboolean
session_open (gpointer data)
{
  Recording *rec = data;

  if (!rec->screenshot_taken && rec->page != NULL && cowscope_recording_page_is_running (rec->page)
      && gtk_widget_get_mapped (GTK_WIDGET (rec->page))
      && cowscope_recording_page_get_events_stored (rec->page) > 0)
    rec->screenshot_taken = screenshot (GTK_WIDGET (rec->window), "cowscope-recording-page");
  return g_strcmp0 (cowscope_window_get_visible_page (rec->window), "session") == 0
         && !cowscope_window_is_loading (rec->window);
}

/* The launch dialog records the demo to its end; the recording page
 * shows live counters and the demo's output; the session then opens in
 * the same window and says the demo exited with 0. */
static void
test_record_demo (void)
{
  const char *demo = g_getenv ("COWSCOPE_DEMO");
  GSettings *settings = cowscope_application_get_settings (app);
  Recording rec = { 0 };
  CowscopeRecordDialog *dialog;
  g_autoptr(CowscopeSessionTables) session = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *output = NULL;
  g_auto(GStrv) saved_args = NULL;
  gint64 exit_status = -1;

  g_assert_nonnull (demo);
  /* The recorded session must open without a GPU. */
  g_settings_set_boolean (settings, "launch-cuda-tracing", FALSE);

  rec.window = cowscope_window_new (app);
  gtk_window_set_default_size (GTK_WINDOW (rec.window), 1100, 720);
  gtk_window_present (GTK_WINDOW (rec.window));
  dialog = open_record_dialog (rec.window);
  cowscope_record_dialog_set_program (dialog, demo);
  cowscope_record_dialog_set_arguments (dialog, "--quiet --steps 3 training");
  g_assert_true (gui_test_wait_until (gui_test_widget_drawn, dialog, 10));
  gui_test_spin (300);
  g_assert_true (screenshot (GTK_WIDGET (dialog), "cowscope-record-dialog"));

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (dialog), "record-dialog.record", NULL));
  g_assert_true (gui_test_wait_until (no_record_dialog, NULL, 5));

  /* The choices are remembered. */
  g_autofree char *saved_program = g_settings_get_string (settings, "launch-program");
  g_assert_cmpstr (saved_program, ==, demo);
  saved_args = g_settings_get_strv (settings, "launch-arguments");
  g_assert_cmpuint (g_strv_length (saved_args), ==, 4);
  g_assert_cmpstr (saved_args[2], ==, "3");

  g_assert_cmpstr (cowscope_window_get_visible_page (rec.window), ==, "recording");
  rec.page = COWSCOPE_RECORDING_PAGE (find_widget (GTK_WIDGET (rec.window),
                                                   COWSCOPE_TYPE_RECORDING_PAGE));
  g_assert_nonnull (rec.page);
  g_object_ref (rec.page);
  g_signal_connect (rec.page, "notify::events-stored", G_CALLBACK (events_changed_cb), &rec);
  g_assert_true (cowscope_recording_page_is_running (rec.page));
  g_assert_false (cowscope_window_is_empty (rec.window));

  g_assert_true (gui_test_wait_until (session_open, &rec, 60));

  g_assert_false (cowscope_recording_page_is_running (rec.page));
  g_test_message ("counter updates on the page: %u, largest: %" G_GUINT64_FORMAT,
                  rec.updates, rec.max_live_events);
  g_assert_cmpuint (rec.max_live_events, >, 0);
  output = cowscope_recording_page_get_output (rec.page);
  g_test_message ("demo output: %s", output);
  /* --quiet still prints the demo's summary line. */
  g_assert_cmpuint (strlen (output), >, 0);
  g_assert_nonnull (strstr (output, "training"));

  session_path = g_file_get_path (cowscope_window_get_file (rec.window));
  g_assert_nonnull (session_path);
  session = cowscope_session_tables_open (session_path, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (cowscope_session_tables_get_meta (session, "target_end"), ==, "exited");
  g_assert_true (cowscope_session_tables_get_meta_int (session, "exit_status", &exit_status));
  g_assert_cmpint (exit_status, ==, 0);
  g_assert_true (cowscope_session_tables_is_finalized (session));

  g_signal_handlers_disconnect_by_data (rec.page, &rec);
  g_object_unref (rec.page);
  gtk_window_destroy (GTK_WINDOW (rec.window));
  gui_test_spin (50);
}

/* What a person sees from the end of a short recording to its session. */
typedef struct {
  CowscopeWindow *window;
  GString *pages;        /* the window's pages, in the order shown */
  GString *phases;       /* the page's phases, each with the window's page then */
  char *finalizing_title, *opening_title;
  double finalizing_progress, opening_progress;
  guint live_updates_when_opening;
  int min_width_when_opening;  /* the window's, with the recording page */
} Watch;

static void
stack_page_cb (GtkStack   *stack,
               GParamSpec *pspec,
               Watch      *w)
{
  g_string_append_printf (w->pages, "%s%s", w->pages->len > 0 ? "," : "",
                          gtk_stack_get_visible_child_name (stack));
}

static void
phase_cb (CowscopeRecordingPage *page,
          GParamSpec            *pspec,
          Watch                 *w)
{
  CowscopeRecordingPhase phase = cowscope_recording_page_get_phase (page);
  GEnumClass *klass = g_type_class_ref (COWSCOPE_TYPE_RECORDING_PHASE);

  g_string_append_printf (w->phases, "%s%s@%s", w->phases->len > 0 ? "," : "",
                          g_enum_get_value (klass, (int) phase)->value_nick,
                          cowscope_window_get_visible_page (w->window));
  g_type_class_unref (klass);
  if (phase == COWSCOPE_RECORDING_PHASE_FINALIZING)
    {
      w->finalizing_title = g_strdup (cowscope_recording_page_get_title (page));
      w->finalizing_progress = cowscope_recording_page_get_progress (page);
    }
  else if (phase == COWSCOPE_RECORDING_PHASE_OPENING)
    {
      w->opening_title = g_strdup (cowscope_recording_page_get_title (page));
      w->opening_progress = cowscope_recording_page_get_progress (page);
      w->live_updates_when_opening = cowscope_recording_page_get_live_updates (page);
      gtk_widget_measure (GTK_WIDGET (w->window), GTK_ORIENTATION_HORIZONTAL, -1,
                          &w->min_width_when_opening, NULL, NULL, NULL);
    }
}

/* The window's own page stack (the one with a "start" page). */
static GtkStack *
window_stack (GtkWidget *widget)
{
  if (GTK_IS_STACK (widget) && gtk_stack_get_child_by_name (GTK_STACK (widget), "start") != NULL)
    return GTK_STACK (widget);
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    {
      GtkStack *found = window_stack (child);

      if (found != NULL)
        return found;
    }
  return NULL;
}

static gboolean
no_recording_page (gpointer data)
{
  return find_widget (GTK_WIDGET (data), COWSCOPE_TYPE_RECORDING_PAGE) == NULL;
}

static gboolean
page_finished (gpointer data)
{
  return !cowscope_recording_page_is_running (data);
}

/* After a recording the recording page stays, saying it finalizes (with
 * a bar) and then opens the session (with a bar), until the session is
 * shown in its place: the window never goes back to the start page or
 * to a loading page in between, and a program too short for a live
 * snapshot is still shown live before it ends. */
static void
test_recording_page_stays (void)
{
  const char *demo = g_getenv ("COWSCOPE_DEMO");
  const char *argv[] = { demo, "--quiet", "--steps", "1", "training", NULL };
  Watch w = { .pages = g_string_new (NULL), .phases = g_string_new (NULL),
              .finalizing_progress = -1, .opening_progress = -1 };
  CowscopeRecordingPage *page;
  GtkStack *stack;

  w.window = cowscope_window_new (app);
  gtk_window_set_default_size (GTK_WINDOW (w.window), 1100, 720);
  gtk_window_present (GTK_WINDOW (w.window));
  stack = window_stack (GTK_WIDGET (w.window));
  g_assert_nonnull (stack);
  g_signal_connect (stack, "notify::visible-child-name", G_CALLBACK (stack_page_cb), &w);

  page = cowscope_recording_page_record (GTK_WINDOW (w.window), argv, NULL, NULL, FALSE, TRUE, FALSE);
  g_object_ref (page);
  g_signal_connect (page, "notify::phase", G_CALLBACK (phase_cb), &w);
  g_assert_cmpint (cowscope_recording_page_get_phase (page), ==, COWSCOPE_RECORDING_PHASE_RECORDING);
  g_assert_cmpfloat (cowscope_recording_page_get_progress (page), <, 0);

  g_assert_true (gui_test_wait_until (page_finished, page, 60));
  g_test_message ("pages: %s; phases: %s", w.pages->str, w.phases->str);
  g_assert_cmpstr (w.pages->str, ==, "recording,session");
  g_assert_cmpstr (w.phases->str, ==, "finalizing@recording,opening@recording,done@session");
  g_assert_cmpstr (w.finalizing_title, ==, "Finalizing the Session…");
  g_assert_cmpfloat (w.finalizing_progress, >=, 0);
  /* Shown live before it is replaced, however short the program. */
  g_assert_cmpuint (w.live_updates_when_opening, >=, 1);
  /* The page fits a window as narrow as the session does (600 px). */
  g_test_message ("minimum window width with the recording page: %d px", w.min_width_when_opening);
  g_assert_cmpint (w.min_width_when_opening, <=, 600);
  g_assert_cmpstr (w.opening_title, ==, "Opening the Session…");
  g_assert_cmpfloat (w.opening_progress, >=, 0);
  g_assert_nonnull (cowscope_window_get_file (w.window));
  /* The page fades into the session, then goes. */
  g_assert_true (gui_test_wait_until (no_recording_page, w.window, 10));

  g_signal_handlers_disconnect_by_data (stack, &w);
  g_signal_handlers_disconnect_by_data (page, &w);
  g_object_unref (page);
  g_string_free (w.pages, TRUE);
  g_string_free (w.phases, TRUE);
  g_free (w.finalizing_title);
  g_free (w.opening_title);
  gtk_window_destroy (GTK_WINDOW (w.window));
  gui_test_spin (50);
}

/* A character the target writes in two pieces (a pipe read may end
 * inside it) is shown whole in the output panel, not as two
 * replacement characters. */
static void
test_output_split_character (void)
{
  const char *argv[] = { "/bin/sh", "-c", "printf '\\342\\200'; sleep 0.3; printf '\\226 done\\n'", NULL };
  CowscopeWindow *window = cowscope_window_new (app);
  CowscopeRecordingPage *page;
  g_autofree char *output = NULL;

  gtk_window_present (GTK_WINDOW (window));
  page = cowscope_recording_page_record (GTK_WINDOW (window), argv, NULL, NULL, FALSE, FALSE, FALSE);
  g_object_ref (page);
  g_assert_true (gui_test_wait_until (page_finished, page, 60));
  output = cowscope_recording_page_get_output (page);
  g_assert_cmpstr (output, ==, "\xe2\x80\x96 done\n");

  g_object_unref (page);
  gtk_window_destroy (GTK_WINDOW (window));
  gui_test_spin (50);
}

/* How many windows show a recording page. */
static guint
count_recording_windows (void)
{
  GListModel *toplevels = gtk_window_get_toplevels ();
  guint n = 0;

  for (guint i = 0; i < g_list_model_get_n_items (toplevels); i++)
    {
      g_autoptr(GObject) window = g_list_model_get_item (toplevels, i);

      if (COWSCOPE_IS_WINDOW (window)
          && find_widget (GTK_WIDGET (window), COWSCOPE_TYPE_RECORDING_PAGE) != NULL)
        n++;
    }
  return n;
}

static gboolean
shows_session_not_recording (gpointer data)
{
  return g_strcmp0 (cowscope_window_get_visible_page (data), "session") == 0
         && !cowscope_window_is_loading (data)
         && find_widget (GTK_WIDGET (data), COWSCOPE_TYPE_RECORDING_PAGE) == NULL;
}

/* A new window, presented (so it is the one actions open things in). */
static CowscopeWindow *
new_window (void)
{
  CowscopeWindow *window = cowscope_window_new (app);

  gtk_window_present (GTK_WINDOW (window));
  gui_test_spin (50);
  return window;
}

/* "Open the Demo Session" records the demo once and then opens that
 * session again while it is current; app.record-demo, or a demo program
 * newer than the session, records it again; a second click while it
 * records shows the recording instead of starting another. */
static void
test_demo_session_reused (void)
{
  GSettings *settings = cowscope_application_get_settings (app);
  g_autofree char *path = NULL;
  g_autoptr(GFile) file = NULL;
  CowscopeWindow *window;
  GStatBuf before, after;

  g_settings_set_boolean (settings, "launch-cuda-tracing", FALSE);
  g_settings_reset (settings, "demo-session");

  /* The first time: recorded, then shown. */
  window = new_window ();
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "app.open-demo", NULL));
  g_assert_nonnull (find_widget (GTK_WIDGET (window), COWSCOPE_TYPE_RECORDING_PAGE));
  g_assert_true (gui_test_wait_until (shows_session_not_recording, window, 120));
  path = g_settings_get_string (settings, "demo-session");
  file = g_file_new_for_path (path);
  g_assert_true (g_file_equal (cowscope_window_get_file (window), file));
  g_assert_cmpint (g_stat (path, &before), ==, 0);
  gtk_window_destroy (GTK_WINDOW (window));

  /* Again: the same session opens, nothing records. */
  window = new_window ();
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "app.open-demo", NULL));
  g_assert_cmpuint (count_recording_windows (), ==, 0);
  g_assert_true (gui_test_wait_until (shows_session_not_recording, window, 60));
  g_assert_true (g_file_equal (cowscope_window_get_file (window), file));
  g_assert_cmpint (g_stat (path, &after), ==, 0);
  g_assert_cmpint (after.st_mtime, ==, before.st_mtime);
  g_assert_cmpint (after.st_size, ==, before.st_size);
  gtk_window_destroy (GTK_WINDOW (window));

  /* Asked for explicitly: recorded again, into a new file (the one
   * shown before is never replaced under a window that may show it). */
  window = new_window ();
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "app.record-demo", NULL));
  g_assert_nonnull (find_widget (GTK_WIDGET (window), COWSCOPE_TYPE_RECORDING_PAGE));
  g_assert_true (gui_test_wait_until (shows_session_not_recording, window, 120));
  {
    g_autofree char *again = g_settings_get_string (settings, "demo-session");

    g_assert_cmpstr (again, !=, path);
    g_clear_object (&file);
    file = g_file_new_for_path (again);
    g_assert_true (g_file_equal (cowscope_window_get_file (window), file));
    g_assert_cmpint (g_stat (path, &after), ==, 0);
    g_assert_cmpint (after.st_mtime, ==, before.st_mtime);
    g_free (path);
    path = g_steal_pointer (&again);
  }
  gtk_window_destroy (GTK_WINDOW (window));

  /* Older than the demo program: not current, recorded again; a second
   * click meanwhile shows that recording. */
  {
    struct utimbuf old = { 1000000, 1000000 };
    g_assert_cmpint (g_utime (path, &old), ==, 0);
  }
  window = new_window ();
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "app.open-demo", NULL));
  g_assert_nonnull (find_widget (GTK_WIDGET (window), COWSCOPE_TYPE_RECORDING_PAGE));
  {
    CowscopeWindow *other = new_window ();

    g_assert_true (gtk_widget_activate_action (GTK_WIDGET (other), "app.open-demo", NULL));
    g_assert_cmpuint (count_recording_windows (), ==, 1);
    g_assert_cmpstr (cowscope_window_get_visible_page (other), ==, "start");
    gtk_window_destroy (GTK_WINDOW (other));
  }
  g_assert_true (gui_test_wait_until (shows_session_not_recording, window, 120));
  {
    g_autofree char *fresh = g_settings_get_string (settings, "demo-session");

    g_assert_cmpstr (fresh, !=, path);
    g_assert_cmpint (g_stat (fresh, &after), ==, 0);
    g_assert_cmpint (after.st_mtime, >, 1000000);
  }
  gtk_window_destroy (GTK_WINDOW (window));
  gui_test_spin (50);
}

/* The file chooser's question before it replaces a file, or NULL. */
static GtkWidget *
replace_question (void)
{
  GListModel *toplevels = gtk_window_get_toplevels ();

  for (guint i = 0; i < g_list_model_get_n_items (toplevels); i++)
    {
      g_autoptr(GObject) window = g_list_model_get_item (toplevels, i);
      g_autofree char *text = NULL;

      if (!GTK_IS_MESSAGE_DIALOG (window))
        continue;
      g_object_get (window, "text", &text, NULL);
      if (text != NULL && strstr (text, "already exists") != NULL)
        return GTK_WIDGET (window);
    }
  return NULL;
}

static gboolean
has_replace_question (gpointer data)
{
  return replace_question () != NULL;
}

static gboolean
no_file_chooser (gpointer data)
{
  return find_toplevel (GTK_TYPE_FILE_CHOOSER_DIALOG) == NULL;
}

static gboolean
has_file_chooser (gpointer data)
{
  return find_toplevel (GTK_TYPE_FILE_CHOOSER_DIALOG) != NULL;
}

/* Fills the launch dialog of a new window for a one-step demo run into
 * the session file @output (NULL: the field left empty); returns it. */
static CowscopeRecordDialog *
demo_dialog (CowscopeWindow *window,
             const char     *output)
{
  CowscopeRecordDialog *dialog = open_record_dialog (window);

  cowscope_record_dialog_set_program (dialog, g_getenv ("COWSCOPE_DEMO"));
  cowscope_record_dialog_set_arguments (dialog, "--quiet --steps 1 training");
  if (output != NULL)
    cowscope_record_dialog_set_output (dialog, output);
  return dialog;
}

/* The launch dialog's session file: a new file is recorded there and
 * opened; an existing one is refused inline unless the file chooser
 * chose it (it asks before replacing); a missing folder is refused. */
static void
test_record_dialog_output (void)
{
  g_autofree char *output = g_build_filename (tmp_dir, "chosen.cowscope", NULL);
  g_autofree char *missing = g_build_filename (tmp_dir, "no-such-folder", "x.cowscope", NULL);
  g_autoptr(GFile) file = g_file_new_for_path (output);
  CowscopeRecordDialog *dialog;
  CowscopeWindow *window;
  GtkWidget *chooser;
  GStatBuf first, again;

  g_settings_set_boolean (cowscope_application_get_settings (app), "launch-cuda-tracing", FALSE);

  /* A new file: recorded there, and shown. */
  window = new_window ();
  dialog = demo_dialog (window, output);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (dialog), "record-dialog.record", NULL));
  g_assert_true (gui_test_wait_until (no_record_dialog, NULL, 5));
  g_assert_true (gui_test_wait_until (shows_session_not_recording, window, 60));
  g_assert_true (g_file_equal (cowscope_window_get_file (window), file));
  g_assert_cmpint (g_stat (output, &first), ==, 0);
  gtk_window_destroy (GTK_WINDOW (window));

  /* Typed again: it exists, so nothing records and the file stays. */
  window = new_window ();
  dialog = demo_dialog (window, output);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (dialog), "record-dialog.record", NULL));
  g_assert_nonnull (cowscope_record_dialog_get_error (dialog));
  g_assert_nonnull (strstr (cowscope_record_dialog_get_error (dialog), "already exists"));
  g_assert_null (find_widget (GTK_WIDGET (window), COWSCOPE_TYPE_RECORDING_PAGE));

  /* A folder that does not exist is refused too. */
  cowscope_record_dialog_set_output (dialog, missing);
  g_assert_null (cowscope_record_dialog_get_error (dialog));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (dialog), "record-dialog.record", NULL));
  g_assert_nonnull (strstr (cowscope_record_dialog_get_error (dialog), "does not exist"));
  g_assert_null (find_widget (GTK_WIDGET (window), COWSCOPE_TYPE_RECORDING_PAGE));

  /* Chosen in the file chooser (which asks before replacing): replaced.
   * The chooser opens on the file typed, in its folder. */
  cowscope_record_dialog_set_output (dialog, output);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (dialog), "record-dialog.choose-output", NULL));
  g_assert_true (gui_test_wait_until (has_file_chooser, NULL, 10));
  chooser = find_toplevel (GTK_TYPE_FILE_CHOOSER_DIALOG);
  g_assert_cmpint (gtk_file_chooser_get_action (GTK_FILE_CHOOSER (chooser)), ==,
                   GTK_FILE_CHOOSER_ACTION_SAVE);
  gui_test_spin (1000);
  {
    g_autoptr(GFile) chosen = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (chooser));

    g_assert_nonnull (chosen);
    g_assert_true (g_file_equal (chosen, file));
  }
  gtk_dialog_response (GTK_DIALOG (chooser), GTK_RESPONSE_ACCEPT);
  /* GTK asks before replacing the file: "Replace". */
  g_assert_true (gui_test_wait_until (has_replace_question, NULL, 10));
  gtk_dialog_response (GTK_DIALOG (replace_question ()), GTK_RESPONSE_ACCEPT);
  g_assert_true (gui_test_wait_until (no_file_chooser, NULL, 10));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (dialog), "record-dialog.record", NULL));
  g_assert_true (gui_test_wait_until (no_record_dialog, NULL, 5));
  g_assert_true (gui_test_wait_until (shows_session_not_recording, window, 60));
  g_assert_true (g_file_equal (cowscope_window_get_file (window), file));
  g_assert_cmpint (g_stat (output, &again), ==, 0);
  g_assert_true (again.st_ino != first.st_ino || again.st_mtime != first.st_mtime
                 || again.st_size != first.st_size);
  gtk_window_destroy (GTK_WINDOW (window));
  gui_test_spin (50);
}

static gboolean
no_export_dialog (gpointer data)
{
  return find_toplevel (COWSCOPE_TYPE_EXPORT_DIALOG) == NULL;
}

/* Exports the open session of @window as @format to @name in tmp_dir
 * through win.export and the dialog; returns the output path. */
static char *
export_as (CowscopeWindow       *window,
           CowscopeExportFormat  format,
           const char           *name)
{
  char *path = g_build_filename (tmp_dir, name, NULL);
  g_autoptr(GFile) file = g_file_new_for_path (path);
  GtkWidget *dialog;

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.export", NULL));
  dialog = find_toplevel (COWSCOPE_TYPE_EXPORT_DIALOG);
  g_assert_nonnull (dialog);
  cowscope_export_dialog_set_format (COWSCOPE_EXPORT_DIALOG (dialog), format);
  g_assert_cmpint (cowscope_export_dialog_get_format (COWSCOPE_EXPORT_DIALOG (dialog)), ==, format);
  cowscope_export_dialog_export_to (COWSCOPE_EXPORT_DIALOG (dialog), file);
  g_assert_true (cowscope_export_dialog_is_busy (COWSCOPE_EXPORT_DIALOG (dialog)));
  g_assert_true (gui_test_wait_until (no_export_dialog, NULL, 60));
  return path;
}

static gboolean
window_shows_session (gpointer data)
{
  return g_strcmp0 (cowscope_window_get_visible_page (data), "session") == 0
         && !cowscope_window_is_loading (data);
}

/* The recorded session in every format, each read back. */
static void
test_export_formats (void)
{
  CowscopeWindow *window;
  g_autoptr(GFile) file = NULL;
  g_autoptr(CowscopeSessionTables) original = NULL;
  g_autoptr(CowscopeSessionTables) copy = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;
  g_autofree char *copy_path = NULL;
  g_autofree char *json_path = NULL;
  g_autofree char *csv_path = NULL;
  g_autofree char *events_csv = NULL;
  g_autofree char *csv_text = NULL;
  gint64 n_original = -1, n_copy = -2;
  JsonObject *root;

  if (session_path == NULL)
    {
      g_test_skip ("no recorded session (the recording test failed)");
      return;
    }

  window = cowscope_window_new (app);
  gtk_window_present (GTK_WINDOW (window));
  file = g_file_new_for_path (session_path);
  cowscope_window_open (window, file);
  g_assert_true (gui_test_wait_until (window_shows_session, window, 30));

  copy_path = export_as (window, COWSCOPE_EXPORT_FORMAT_SESSION, "copy.cowscope");
  json_path = export_as (window, COWSCOPE_EXPORT_FORMAT_CHROME, "trace.json");
  csv_path = export_as (window, COWSCOPE_EXPORT_FORMAT_CSV, "tables");

  /* The copy opens with the same number of events. */
  original = cowscope_session_tables_open (session_path, &error);
  g_assert_no_error (error);
  copy = cowscope_session_tables_open (copy_path, &error);
  g_assert_no_error (error);
  g_assert_true (cowscope_session_tables_query_int (original, "SELECT count(*) FROM events", &n_original, &error));
  g_assert_true (cowscope_session_tables_query_int (copy, "SELECT count(*) FROM events", &n_copy, &error));
  g_assert_cmpint (n_original, >, 0);
  g_assert_cmpint (n_copy, ==, n_original);

  /* The trace parses and has events. */
  g_assert_true (json_parser_load_from_file (parser, json_path, &error));
  g_assert_no_error (error);
  root = json_node_get_object (json_parser_get_root (parser));
  g_assert_true (json_object_has_member (root, "traceEvents"));
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (root, "traceEvents")), >, 0);

  /* The CSV folder has events.csv with a header. */
  events_csv = g_build_filename (csv_path, "events.csv", NULL);
  g_assert_true (g_file_get_contents (events_csv, &csv_text, NULL, &error));
  g_assert_no_error (error);
  g_assert_nonnull (strstr (csv_text, "\r\n"));
  g_assert_true (g_ascii_isalpha (csv_text[0]));

  gtk_window_destroy (GTK_WINDOW (window));
  gui_test_spin (50);
}


static gboolean
page_has_live_events (gpointer data)
{
  CowscopeRecordingPage *page = data;

  return cowscope_recording_page_is_running (page)
         && cowscope_recording_page_get_events_stored (page) > 0;
}

static gboolean
page_done (gpointer data)
{
  return !cowscope_recording_page_is_running (data);
}

/* What the live views of a recording page show. */
typedef struct {
  CowscopeRecordingPage *page;
  guint   thread_lanes;
  guint   counter_lanes;
  guint64 events;       /* in the thread lanes */
  guint   nodes;        /* of the graph laid out */
  gint64  graph_seq;    /* events the graph was built from */
  guint64 min_events;   /* live_views_grew: more than these */
  gint64  min_graph_seq;
} LiveViews;

/* Reads the live timeline's lanes and the live graph's scene. */
static void
read_live_views (LiveViews *live)
{
  CowscopeTimelineView *timeline = cowscope_recording_page_get_timeline_view (live->page);
  CowscopeGraphScene *scene = cowscope_graph_view_get_scene (cowscope_recording_page_get_graph_view (live->page));

  live->thread_lanes = live->counter_lanes = 0;
  live->events = 0;
  for (guint i = 0; i < cowscope_timeline_view_get_n_lanes (timeline); i++)
    {
      CowscopeTimelineLane *lane = cowscope_timeline_view_get_lane (timeline, i);

      if (cowscope_timeline_lane_get_kind (lane) == COWSCOPE_LANE_THREAD)
        {
          live->thread_lanes++;
          live->events += cowscope_timeline_lane_get_n_events (lane);
        }
      else if (cowscope_timeline_lane_get_kind (lane) == COWSCOPE_LANE_COUNTER)
        live->counter_lanes++;
    }
  live->nodes = 0;
  live->graph_seq = -1;
  if (scene != NULL)
    {
      CowscopeSharingGraph *graph = cowscope_graph_scene_get_graph (scene);

      live->nodes = cowscope_sharing_graph_get_n_nodes (graph);
      live->graph_seq = cowscope_sharing_graph_get_seq (graph);
    }
}

/* The live timeline has events in thread lanes and the graph has nodes. */
static gboolean
live_views_filled (gpointer data)
{
  LiveViews *live = data;

  read_live_views (live);
  return live->thread_lanes > 0 && live->events > 0 && live->nodes > 0;
}

/* Both views moved on since min_events / min_graph_seq. */
static gboolean
live_views_grew (gpointer data)
{
  LiveViews *live = data;

  read_live_views (live);
  return live->events > live->min_events && live->graph_seq > live->min_graph_seq
         && live->nodes > 0;
}

/* A long recording shows live counters, the live copy timeline and the
 * live sharing graph while it runs, growing; Stop ends the target as
 * Ctrl+C would and its session opens, marked interrupted.
 * Screenshots of the recording page: a widget snapshot and, when
 * ImageMagick's `import` is installed, the whole virtual screen. */
static void
test_stop_recording (void)
{
  const char *demo = g_getenv ("COWSCOPE_DEMO");
  const char *dir = g_getenv ("COWSCOPE_SCREENSHOT_DIR");
  const char *argv[] = { demo, "--steps", "100000", "training", NULL };
  CowscopeWindow *window = cowscope_window_new (app);
  CowscopeRecordingPage *page;
  g_autoptr(CowscopeSessionTables) session = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *path = NULL;
  g_autofree char *import = g_find_program_in_path ("import");
  gint64 interrupted = 0;

  gtk_window_set_default_size (GTK_WINDOW (window), 1100, 720);
  gtk_window_present (GTK_WINDOW (window));
  page = cowscope_recording_page_record (GTK_WINDOW (window), argv, NULL, NULL, FALSE, TRUE, FALSE);
  g_object_ref (page);
  g_assert_true (gui_test_wait_until (page_has_live_events, page, 30));

  /* While the target runs, the live timeline has thread lanes with
   * events and the counter tracks, and the live graph has nodes ... */
  LiveViews live = { .page = page };
  g_assert_true (gui_test_wait_until (live_views_filled, &live, 30));
  g_assert_true (cowscope_recording_page_is_running (page));
  g_assert_cmpuint (live.thread_lanes, >=, 1);
  g_assert_cmpuint (live.counter_lanes, ==, COWSCOPE_N_COUNTERS);
  g_test_message ("live: %u thread lanes, %" G_GUINT64_FORMAT " events, %u graph nodes",
                  live.thread_lanes, live.events, live.nodes);
  guint updates = cowscope_recording_page_get_live_updates (page);

  /* ... and both grow with later snapshots, still before it ends. */
  live.min_events = live.events;
  live.min_graph_seq = live.graph_seq;
  g_assert_true (gui_test_wait_until (live_views_grew, &live, 30));
  g_assert_cmpuint (cowscope_recording_page_get_live_updates (page), >, updates);
  g_assert_true (cowscope_recording_page_is_running (page));
  g_test_message ("later: %" G_GUINT64_FORMAT " events, graph of %" G_GINT64_FORMAT " events",
                  live.events, live.graph_seq);

  g_assert_true (screenshot (GTK_WIDGET (window), "cowscope-live-recording"));
  if (import != NULL)
    {
      g_autofree char *png = g_build_filename (dir != NULL ? dir : ".", "cowscope-recording-screen.png", NULL);
      const char *import_argv[] = { import, "-window", "root", png, NULL };

      g_spawn_sync (NULL, (char **) import_argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, NULL, NULL,
                    NULL, NULL);
      g_test_message ("screen: %s", png);
    }

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (page), "recording.stop", NULL));
  g_assert_true (gui_test_wait_until (page_done, page, 30));
  g_assert_true (gui_test_wait_until (window_shows_session, window, 30));

  path = g_file_get_path (cowscope_window_get_file (window));
  session = cowscope_session_tables_open (path, &error);
  g_assert_no_error (error);
  g_assert_true (cowscope_session_tables_get_meta_int (session, "interrupted", &interrupted));
  g_assert_cmpint (interrupted, ==, 1);

  g_object_unref (page);
  gtk_window_destroy (GTK_WINDOW (window));
  gui_test_spin (50);
}

/* The first window that shows @page, or NULL. */
static CowscopeWindow *
find_window_showing (const char *page)
{
  GListModel *toplevels = gtk_window_get_toplevels ();

  for (guint i = 0; i < g_list_model_get_n_items (toplevels); i++)
    {
      g_autoptr(GObject) window = g_list_model_get_item (toplevels, i);

      if (COWSCOPE_IS_WINDOW (window)
          && g_strcmp0 (cowscope_window_get_visible_page (COWSCOPE_WINDOW (window)), page) == 0)
        return COWSCOPE_WINDOW (window);
    }
  return NULL;
}

/* Runs @args as the command line of the (registered) application, as
 * `cowscope ARGS…` does in the launching process; returns its status. */
static int
run_command_line (const char * const *args)
{
  g_auto(GStrv) argv = g_strdupv ((char **) args);
  int status = -1;

  g_assert_true (G_APPLICATION_GET_CLASS (app)->local_command_line (G_APPLICATION (app), &argv,
                                                                   &status));
  return status;
}

/* `cowscope --record --output FILE -- DEMO …` records in a window and
 * ends with that file open, finalized, saying how the demo ended. */
static void
test_command_line_record (void)
{
  g_autofree char *output = g_build_filename (tmp_dir, "command-line.cowscope", NULL);
  const char *args[] = { "cowscope", "--record", "--output", output, "--",
                         g_getenv ("COWSCOPE_DEMO"), "--quiet", "--steps", "3", "training", NULL };
  CowscopeWindow *window;
  g_autoptr(CowscopeSessionTables) session = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *opened = NULL;
  gint64 exit_status = -1;

  g_assert_null (find_window_showing ("recording"));
  g_assert_cmpint (run_command_line (args), ==, 0);
  window = find_window_showing ("recording");
  g_assert_nonnull (window);
  g_assert_nonnull (find_widget (GTK_WIDGET (window), COWSCOPE_TYPE_RECORDING_PAGE));

  g_assert_true (gui_test_wait_until (window_shows_session, window, 60));
  opened = g_file_get_path (cowscope_window_get_file (window));
  g_assert_cmpstr (opened, ==, output);
  session = cowscope_session_tables_open (output, &error);
  g_assert_no_error (error);
  g_assert_true (cowscope_session_tables_is_finalized (session));
  g_assert_cmpstr (cowscope_session_tables_get_meta (session, "target_end"), ==, "exited");
  g_assert_true (cowscope_session_tables_get_meta_int (session, "exit_status", &exit_status));
  g_assert_cmpint (exit_status, ==, 0);

  gtk_window_destroy (GTK_WINDOW (window));
  gui_test_spin (50);
}

/* A program that does not exist: the window says so on its error page
 * and the application keeps running. */
static void
test_command_line_missing_program (void)
{
  const char *args[] = { "cowscope", "--record", "--", "/nonexistent/cowscope-no-such-program",
                         "--flag", NULL };
  CowscopeWindow *window;

  g_assert_null (find_window_showing ("error"));
  g_assert_cmpint (run_command_line (args), ==, 0);
  gui_test_spin (100);
  window = find_window_showing ("error");
  g_assert_nonnull (window);
  g_assert_null (find_widget (GTK_WIDGET (window), COWSCOPE_TYPE_RECORDING_PAGE));
  g_assert_nonnull (strstr (cowscope_window_get_error_description (window),
                            "/nonexistent/cowscope-no-such-program"));
  g_assert_true (g_application_get_is_registered (G_APPLICATION (app)));

  gtk_window_destroy (GTK_WINDOW (window));
  gui_test_spin (50);
}

/* Unknown options, and a program not after "--", are refused with a
 * message and exit status 2; nothing records. */
static void
test_command_line_bad_options (void)
{
  if (g_test_subprocess ())
    {
      const char *unknown[] = { "cowscope", "--record", "--bogus", "--", "/bin/true", NULL };
      const char *no_separator[] = { "cowscope", "--record", "/bin/true", NULL };
      const char *no_program[] = { "cowscope", "--record", "--cuda", "--", NULL };

      g_assert_cmpint (run_command_line (unknown), ==, 2);
      g_assert_cmpint (run_command_line (no_separator), ==, 2);
      g_assert_cmpint (run_command_line (no_program), ==, 2);
      g_assert_null (find_window_showing ("recording"));
      return;
    }
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
  /* (The quotes around "--" depend on the locale's charset.) */
  g_test_trap_assert_stderr ("*--bogus*Usage: cowscope --record*"
                             "*/bin/true*before the program to record*"
                             "*needs the program*");
}

/* Removes @path and, if it is a folder, what is in it (one level). */
static void
remove_tree (const char *path)
{
  g_autoptr(GDir) dir = g_dir_open (path, 0, NULL);
  const char *name;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *child = g_build_filename (path, name, NULL);

      remove_tree (child);
    }
  g_remove (path);
}

int
main (int   argc,
      char *argv[])
{
  g_autoptr(GError) error = NULL;
  int status;

  /* gtk_test_init() does not isolate the user's folders: recordings go
   * to the data folder, so point it here before GLib reads it. */
  tmp_dir = g_dir_make_tmp ("cowscope-record-XXXXXX", &error);
  g_assert_no_error (error);
  {
    g_autofree char *data_home = g_build_filename (tmp_dir, "data", NULL);
    g_setenv ("XDG_DATA_HOME", data_home, TRUE);
  }

  gtk_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  adw_init ();

  app = cowscope_application_new ();
  g_application_set_flags (G_APPLICATION (app), G_APPLICATION_HANDLES_OPEN | G_APPLICATION_NON_UNIQUE);
  g_assert_true (g_application_register (G_APPLICATION (app), NULL, &error));
  g_assert_no_error (error);

  g_test_add_func ("/cowscope/record/missing-program", test_missing_program);
  g_test_add_func ("/cowscope/record/demo", test_record_demo);
  g_test_add_func ("/cowscope/record/page-stays-until-shown", test_recording_page_stays);
  g_test_add_func ("/cowscope/record/output-split-character", test_output_split_character);
  g_test_add_func ("/cowscope/record/demo-session-reused", test_demo_session_reused);
  g_test_add_func ("/cowscope/record/dialog-output-file", test_record_dialog_output);
  g_test_add_func ("/cowscope/export/formats", test_export_formats);
  g_test_add_func ("/cowscope/record/stop", test_stop_recording);
  g_test_add_func ("/cowscope/command-line/record", test_command_line_record);
  g_test_add_func ("/cowscope/command-line/missing-program", test_command_line_missing_program);
  g_test_add_func ("/cowscope/command-line/bad-options", test_command_line_bad_options);

  status = g_test_run ();

  remove_tree (tmp_dir);
  g_free (tmp_dir);
  g_free (session_path);
  g_object_unref (app);
  return status;
}
