/* cowscope-window.c — one Cowscope window.
 *
 * A window shows one of three pages: "start" (the welcome page),
 * "loading" (a first session being opened, with its progress), "session"
 * (one open session: the copy timeline, graph and side panel slots) or
 * "error" (why the file asked for could not be opened).  Sessions load
 * through the session model (CowscopeSessionDocument) in a worker thread;
 * the main loop never waits for the disk.  Errors while a session is
 * shown become toasts and keep the session.
 */
#include "cowscope-config.h"

#include <glib/gi18n.h>

#include "cowscope-comparison-window.h"
#include "cowscope-call-tree-view.h"
#include "cowscope-export-dialog.h"
#include "cowscope-session-document.h"
#include "cowscope-start-page.h"
#include "cowscope-summary-page.h"
#include "cowscope-explanation-panel.h"
#include "cowscope-graph-view.h"
#include "cowscope-range-summary-view.h"
#include "cowscope-tables-view.h"
#include "cowscope-timeline-view.h"
#include "cowscope-view-state.h"
#include "cowscope-window.h"

struct _CowscopeWindow
{
  AdwApplicationWindow  parent_instance;

  /* Template children */
  AdwWindowTitle       *window_title;
  GtkWidget            *export_button;
  AdwToastOverlay      *toast_overlay;
  GtkStack             *stack;
  CowscopeStartPage    *start_page;
  GtkWidget            *session_page;
  GtkPaned             *session_paned;
  GtkWidget            *timeline_slot;
  GtkPaned             *lower_paned;
  GtkWidget            *graph_slot;
  GtkWidget            *side_panel_slot;
  GtkListBox           *details_list;
  AdwStatusPage        *error_page;
  CowscopeTimelineView *timeline_view;
  CowscopeGraphView    *graph_view;
  CowscopeExplanationPanel *explanation_panel;
  CowscopeTablesView   *events_table;
  CowscopeRangeSummaryView *range_summary;
  CowscopeTablesView   *objects_table;
  CowscopeTablesView   *warnings_table;
  AdwViewStack         *side_stack;
  AdwStatusPage        *loading_page;
  GtkProgressBar       *loading_progress;
  GtkProgressBar       *session_progress;
  AdwViewStack         *session_views;
  CowscopeSummaryPage  *summary_page;
  CowscopeCallTreeView *call_tree_view;

  GFile                *file;         /* the session shown, or NULL */
  GFile                *loading;      /* the file being loaded, or NULL */
  GCancellable         *cancellable;  /* cancels the load of `loading` */
  CowscopeSessionDocument *document;  /* the session shown, or NULL */
  CowscopeViewState    *view_state;   /* what the views show, or NULL */
  GdkFrameClock        *panels_clock; /* waits for the first frame, or NULL */
  gulong                panels_handler;
  gulong                panels_unmap_handler;
};

G_DEFINE_FINAL_TYPE (CowscopeWindow, cowscope_window, ADW_TYPE_APPLICATION_WINDOW)

enum {
  PROP_0,
  PROP_FILE,
  PROP_VIEW_STATE,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void set_action_enabled (CowscopeWindow *self,
                                const char     *name,
                                gboolean        enabled);

/* Returns the window's application settings. */
static GSettings *
get_settings (CowscopeWindow *self)
{
  GtkApplication *app = gtk_window_get_application (GTK_WINDOW (self));

  return cowscope_application_get_settings (COWSCOPE_APPLICATION (app));
}

/* Appends a "title: value" row to the session details; skips empty values. */
static void
add_detail (CowscopeWindow *self,
            const char     *title,
            const char     *value)
{
  GtkWidget *row;

  if (value == NULL || value[0] == '\0')
    return;

  row = adw_action_row_new ();
  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), title);
  adw_action_row_set_subtitle (ADW_ACTION_ROW (row), value);
  adw_action_row_set_subtitle_lines (ADW_ACTION_ROW (row), 3);
  gtk_list_box_append (self->details_list, row);
}

/* Returns the meta value @key of @document, or NULL. */
static const char *
meta (CowscopeSessionDocument *document,
      const char              *key)
{
  return cowscope_session_document_get_meta (document, key);
}

/* Returns a person's words for how the target ended, from the meta table. */
static char *
describe_end (CowscopeSessionDocument *document)
{
  const char *end = meta (document, "target_end");
  const char *status = meta (document, "exit_status");
  const char *sig = meta (document, "exit_signal");

  if (g_strcmp0 (end, "exited") == 0)
    return g_strdup_printf (_("Exited with status %s"), status != NULL ? status : "?");
  if (g_strcmp0 (end, "signaled") == 0 || g_strcmp0 (end, "crashed") == 0)
    return g_strdup_printf (_("Ended by signal %s"), sig != NULL ? sig : "?");
  if (g_strcmp0 (end, "killed") == 0)
    return g_strdup (_("Killed"));
  if (g_strcmp0 (meta (document, "finalized"), "0") == 0)
    return g_strdup (_("Still recording, or the recorder stopped early"));
  return NULL;
}

/* Returns @iso8601 (meta.created_utc) in local time for people, or a
 * copy of it when it does not parse. */
static char *
format_time (const char *iso8601)
{
  g_autoptr(GDateTime) utc = NULL;
  g_autoptr(GDateTime) local = NULL;

  if (iso8601 == NULL)
    return NULL;
  utc = g_date_time_new_from_iso8601 (iso8601, NULL);
  if (utc == NULL)
    return g_strdup (iso8601);
  local = g_date_time_to_local (utc);
  /* Translators: a date and time, see g_date_time_format() */
  return g_date_time_format (local, _("%Y-%m-%d %H:%M:%S"));
}

/* Returns the integer @text with the locale's digit grouping ("48,211"),
 * or a copy of @text when it is not an integer. */
static char *
format_count (const char *text)
{
  gint64 value;

  if (text == NULL)
    return NULL;
  if (!g_ascii_string_to_signed (text, 10, G_MININT64, G_MAXINT64, &value, NULL))
    return g_strdup (text);
  return g_strdup_printf ("%'" G_GINT64_FORMAT, value);
}

/* Points the graph, the explanation and the tables at @state (or NULL). */
static void
set_panels_view_state (CowscopeWindow    *self,
                       CowscopeViewState *state)
{
  cowscope_graph_view_set_view_state (self->graph_view, state);
  cowscope_explanation_panel_set_view_state (self->explanation_panel, state);
  cowscope_tables_view_set_view_state (self->events_table, state);
  cowscope_tables_view_set_view_state (self->objects_table, state);
  cowscope_tables_view_set_view_state (self->warnings_table, state);
  cowscope_range_summary_view_set_view_state (self->range_summary, state);
  cowscope_summary_page_set_view_state (self->summary_page, state);
  cowscope_call_tree_view_set_view_state (self->call_tree_view, state);
}

/* Stops waiting for the first frame of a session to show the panels. */
static void
cancel_panels (CowscopeWindow *self)
{
  /* The clock drops its handlers when its surface goes away. */
  if (self->panels_clock != NULL
      && g_signal_handler_is_connected (self->panels_clock, self->panels_handler))
    g_signal_handler_disconnect (self->panels_clock, self->panels_handler);
  self->panels_handler = 0;
  g_clear_object (&self->panels_clock);
  g_clear_signal_handler (&self->panels_unmap_handler, self);
}

/* A frame was painted after a session was shown: once the timeline in
 * it is exact (its first frame may show estimates while worker threads
 * decode), the panels get the view state. */
static void
frame_painted_cb (GdkFrameClock  *clock,
                  CowscopeWindow *self)
{
  GtkWidget *timeline = GTK_WIDGET (self->timeline_view);

  /* A timeline too small to draw lanes never becomes exact. */
  if (!cowscope_timeline_view_is_exact (self->timeline_view) && gtk_widget_get_mapped (timeline)
      && gtk_widget_get_width (timeline) > 200 && gtk_widget_get_height (timeline) > 40)
    return;
  cancel_panels (self);
  set_panels_view_state (self, self->view_state);
}

/* The window left the screen before the timeline's first exact frame: no
 * frame will come, the panels get the view state now. */
static void
unmapped_cb (GtkWidget      *widget,
             CowscopeWindow *self)
{
  cancel_panels (self);
  set_panels_view_state (self, self->view_state);
}

/* Points the panels at the new view state once the timeline has painted
 * an exact frame of the session (at once when the window is not on
 * screen): the graph, the explanation and the tables each start work of
 * their own (a graph build and layout, table queries in worker threads,
 * rows bound on this thread), which on a big session would compete with
 * the timeline's first frames for the processor. */
static void
show_panels_after_first_frame (CowscopeWindow *self)
{
  GdkFrameClock *clock;

  cancel_panels (self);
  clock = gtk_widget_get_mapped (GTK_WIDGET (self)) ? gtk_widget_get_frame_clock (GTK_WIDGET (self))
                                                     : NULL;
  if (clock == NULL)
    {
      set_panels_view_state (self, self->view_state);
      return;
    }
  set_panels_view_state (self, NULL);
  self->panels_clock = g_object_ref (clock);
  self->panels_handler = g_signal_connect (clock, "after-paint", G_CALLBACK (frame_painted_cb),
                                           self);
  self->panels_unmap_handler = g_signal_connect (self, "unmap", G_CALLBACK (unmapped_cb), self);
  gtk_widget_queue_draw (GTK_WIDGET (self->timeline_view));
}

/* Shows the session page for @file, loaded as @document: a new view
 * state for the views, the session details; enables export and remembers
 * the file as recent. */
static void
show_session (CowscopeWindow          *self,
              GFile                   *file,
              CowscopeSessionDocument *document)
{
  g_autofree char *name = g_file_get_basename (file);
  g_autofree char *ended = describe_end (document);
  g_autofree char *recorded = format_time (meta (document, "created_utc"));
  g_autofree char *events = format_count (meta (document, "events"));
  g_autofree char *dropped = format_count (meta (document, "dropped"));
  GtkWidget *child;

  g_set_object (&self->file, file);
  g_set_object (&self->document, document);
  g_clear_object (&self->view_state);
  self->view_state = cowscope_view_state_new (document);
  cowscope_timeline_view_set_view_state (self->timeline_view, self->view_state);
  show_panels_after_first_frame (self);

  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self->details_list))) != NULL)
    gtk_list_box_remove (self->details_list, child);

  add_detail (self, _("File"), name);
  add_detail (self, _("Command"), meta (document, "command"));
  add_detail (self, _("Recorded"), recorded);
  add_detail (self, _("Target"), ended);
  add_detail (self, _("Events"), events);
  add_detail (self, _("Dropped Events"), dropped);
  add_detail (self, _("GPU Tracing"), meta (document, "gpu_tracing"));

  adw_window_title_set_subtitle (self->window_title, name);
  gtk_window_set_title (GTK_WINDOW (self), name);
  gtk_widget_set_visible (self->export_button, TRUE);
  set_action_enabled (self, "export", TRUE);
  set_action_enabled (self, "compare", TRUE);
  gtk_stack_set_visible_child_name (self->stack, "session");
  /* A session opens on its summary, as Sysprof opens on its callgraph. */
  adw_view_stack_set_visible_child_name (self->session_views, "summary");

  cowscope_application_add_recent (COWSCOPE_APPLICATION (gtk_window_get_application (GTK_WINDOW (self))),
                                   file);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_FILE]);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_VIEW_STATE]);
}

/* Returns the error page title for @error (translated). */
static const char *
error_title (const GError *error)
{
  if (error->domain == COWSCOPE_SESSION_ERROR)
    {
      switch ((CowscopeSessionError) error->code)
        {
        case COWSCOPE_SESSION_ERROR_NOT_FOUND:
          return _("File Not Found");
        case COWSCOPE_SESSION_ERROR_NOT_SQLITE:
        case COWSCOPE_SESSION_ERROR_NOT_SESSION:
          return _("Not a Cowscope Session");
        case COWSCOPE_SESSION_ERROR_NEWER:
          return _("Recorded by a Newer Cowscope");
        case COWSCOPE_SESSION_ERROR_DAMAGED:
          return _("Damaged Session");
        case COWSCOPE_SESSION_ERROR_NOT_FINALIZED:
          return _("Unfinished Session");
        case COWSCOPE_SESSION_ERROR_NO_SUCH_OBJECT:
        case COWSCOPE_SESSION_ERROR_FAILED:
        default:
          break;
        }
    }
  return _("Cannot Open the File");
}

/* Returns a one-line toast text for @error about the file @name. */
static char *
error_toast (const GError *error,
             const char   *name)
{
  if (error->domain == COWSCOPE_SESSION_ERROR)
    {
      switch ((CowscopeSessionError) error->code)
        {
        case COWSCOPE_SESSION_ERROR_NOT_FOUND:
          return g_strdup_printf (_("“%s” does not exist"), name);
        case COWSCOPE_SESSION_ERROR_NOT_SQLITE:
        case COWSCOPE_SESSION_ERROR_NOT_SESSION:
          return g_strdup_printf (_("“%s” is not a Cowscope session"), name);
        case COWSCOPE_SESSION_ERROR_NEWER:
          return g_strdup_printf (_("“%s” needs a newer Cowscope"), name);
        case COWSCOPE_SESSION_ERROR_DAMAGED:
          return g_strdup_printf (_("“%s” is damaged"), name);
        case COWSCOPE_SESSION_ERROR_NOT_FINALIZED:
          return g_strdup_printf (_("“%s” was not finished by the recorder"), name);
        case COWSCOPE_SESSION_ERROR_NO_SUCH_OBJECT:
        case COWSCOPE_SESSION_ERROR_FAILED:
        default:
          break;
        }
    }
  return g_strdup_printf (_("“%s” cannot be opened"), name);
}

/* Shows why @file could not be opened: a toast over the session when one
 * is shown (it stays), else the error page. */
static void
show_error (CowscopeWindow *self,
            GFile          *file,
            const GError   *error)
{
  g_autofree char *name = g_file_get_basename (file);

  if (self->file != NULL)
    {
      g_autofree char *text = error_toast (error, name);

      gtk_stack_set_visible_child_name (self->stack, "session");
      cowscope_window_add_toast (self, text);
      return;
    }

  adw_status_page_set_title (self->error_page, error_title (error));
  adw_status_page_set_description (self->error_page, error->message);
  adw_window_title_set_subtitle (self->window_title, NULL);
  gtk_stack_set_visible_child_name (self->stack, "error");
}

/* Load progress (coalesced, main thread): fills the progress bars. */
static void
load_progress_cb (double   fraction,
                  gpointer user_data)
{
  CowscopeWindow *self = user_data;

  gtk_progress_bar_set_fraction (self->loading_progress, fraction);
  gtk_progress_bar_set_fraction (self->session_progress, fraction);
}

/* Shows that @file is being loaded: the loading page in an empty window,
 * a progress bar over the session otherwise. */
static void
show_loading (CowscopeWindow *self,
              GFile          *file)
{
  g_autofree char *name = g_file_get_basename (file);
  g_autofree char *description = g_strdup_printf (_("Reading “%s”"), name);

  gtk_progress_bar_set_fraction (self->loading_progress, 0);
  gtk_progress_bar_set_fraction (self->session_progress, 0);
  if (self->file != NULL)
    {
      gtk_widget_set_visible (GTK_WIDGET (self->session_progress), TRUE);
      return;
    }
  adw_status_page_set_description (self->loading_page, description);
  gtk_stack_set_visible_child_name (self->stack, "loading");
}

/* Hides the load progress (the load ended or was cancelled). */
static void
hide_loading (CowscopeWindow *self)
{
  gtk_widget_set_visible (GTK_WIDGET (self->session_progress), FALSE);
  if (g_strcmp0 (gtk_stack_get_visible_child_name (self->stack), "loading") == 0)
    gtk_stack_set_visible_child_name (self->stack, self->file != NULL ? "session" : "start");
}

/* Completion of cowscope_window_open()'s load; holds a window reference.
 * A cancelled load (superseded by a newer open) changes nothing. */
static void
load_cb (GObject      *source,
         GAsyncResult *result,
         gpointer      user_data)
{
  g_autoptr(CowscopeWindow) self = user_data;
  g_autoptr(CowscopeSessionDocument) document = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GFile) file = NULL;

  document = cowscope_session_document_load_finish (result, &error);
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;

  file = g_steal_pointer (&self->loading);
  g_clear_object (&self->cancellable);
  if (file == NULL)
    return;

  hide_loading (self);
  if (document != NULL)
    show_session (self, file, document);
  else
    show_error (self, file, error);
}

/* win.export: the export dialog (formats, file chooser, progress) for
 * the open session (enabled only with one). */
static void
export_activated (GSimpleAction *action,
                  GVariant      *parameter,
                  gpointer       user_data)
{
  CowscopeWindow *self = user_data;

  if (self->file == NULL)
    return;

  gtk_window_present (GTK_WINDOW (cowscope_export_dialog_new (GTK_WINDOW (self), self->file)));
}

/* The session chosen to compare the open one with: it is BEFORE, the
 * open one AFTER (a change is looked at against what came before). */
static void
compare_chosen_cb (GtkNativeDialog *dialog,
                   int              response,
                   gpointer         user_data)
{
  CowscopeWindow *self = user_data;

  if (response == GTK_RESPONSE_ACCEPT && self->file != NULL)
    {
      g_autoptr (GFile) before = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));
      if (before != NULL)
        gtk_window_present (GTK_WINDOW (cowscope_comparison_window_new (GTK_WINDOW (self), before,
                                                                        self->file)));
    }
  gtk_native_dialog_destroy (dialog);
  g_object_unref (dialog);
}

/* win.compare: compares the open session with one chosen (enabled only
 * with a session). */
static void
compare_activated (GSimpleAction *action,
                   GVariant      *parameter,
                   gpointer       user_data)
{
  CowscopeWindow *self = user_data;
  GtkFileChooserNative *chooser;

  if (self->file == NULL)
    return;
  chooser = gtk_file_chooser_native_new (_("Compare With an Earlier Session"), GTK_WINDOW (self),
                                         GTK_FILE_CHOOSER_ACTION_OPEN, _("_Compare"), NULL);
  gtk_native_dialog_set_modal (GTK_NATIVE_DIALOG (chooser), TRUE);
  g_signal_connect (chooser, "response", G_CALLBACK (compare_chosen_cb), self);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (chooser));
}

/* win.close: closes this window (the app ends with its last window). */
static void
close_activated (GSimpleAction *action,
                GVariant      *parameter,
                gpointer       user_data)
{
  gtk_window_close (GTK_WINDOW (user_data));
}

/* The timeline met a damaged chunk (once per session): it shows the
 * rest; say why parts are missing. */
static void
timeline_query_error_cb (CowscopeWindow *self,
                         const char     *message)
{
  /* Translators: the rest is the reason, e.g. "The session “x” is damaged (…)" */
  g_autofree char *text = g_strdup_printf (_("Part of the timeline cannot be shown. %s"), message);
  cowscope_window_add_toast (self, text);
}

/* win.show-start: back to the start page from the error page. */
static void
show_start_activated (GSimpleAction *action,
                     GVariant      *parameter,
                     gpointer       user_data)
{
  CowscopeWindow *self = user_data;

  if (self->file == NULL)
    gtk_stack_set_visible_child_name (self->stack, "start");
}

/* win.open-uri (s): opens a session by URI (the start page's recents) in
 * this window when it is empty, else in a new one. */
static void
open_uri_activated (GSimpleAction *action,
                   GVariant      *parameter,
                   gpointer       user_data)
{
  g_autoptr(GFile) file = g_file_new_for_uri (g_variant_get_string (parameter, NULL));
  GtkApplication *app = gtk_window_get_application (GTK_WINDOW (user_data));

  cowscope_application_open_files (COWSCOPE_APPLICATION (app), &file, 1, GTK_WINDOW (user_data));
}

/* win.cancel-open: stops loading the session being opened. */
static void
cancel_open_activated (GSimpleAction *action,
                       GVariant      *parameter,
                       gpointer       user_data)
{
  CowscopeWindow *self = user_data;

  g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  g_clear_object (&self->loading);
  hide_loading (self);
}

/* win.show-view (s): shows the session's "summary", "timeline" or
 * "calltree" view (the views ask for each other through it). */
static void
show_view_activated (GSimpleAction *action,
                     GVariant      *parameter,
                     gpointer       user_data)
{
  CowscopeWindow *self = user_data;
  const char *name = g_variant_get_string (parameter, NULL);

  if (self->file == NULL || adw_view_stack_get_child_by_name (self->session_views, name) == NULL)
    return;
  adw_view_stack_set_visible_child_name (self->session_views, name);
}

/* A top call site of the summary was activated: show it in the call tree. */
static void
summary_call_site_cb (CowscopeWindow         *self,
                      const CowscopeFrameRef *site)
{
  cowscope_call_tree_view_show_site (self->call_tree_view, site);
  adw_view_stack_set_visible_child_name (self->session_views, "calltree");
}

static const GActionEntry win_actions[] = {
  { .name = "export", .activate = export_activated },
  { .name = "compare", .activate = compare_activated },
  { .name = "close", .activate = close_activated },
  { .name = "show-start", .activate = show_start_activated },
  { .name = "open-uri", .activate = open_uri_activated, .parameter_type = "s" },
  { .name = "cancel-open", .activate = cancel_open_activated },
  { .name = "show-view", .activate = show_view_activated, .parameter_type = "s" },
};

/* Enables or disables the window action @name. */
static void
set_action_enabled (CowscopeWindow *self,
                    const char     *name,
                    gboolean        enabled)
{
  GAction *action = g_action_map_lookup_action (G_ACTION_MAP (self), name);

  g_simple_action_set_enabled (G_SIMPLE_ACTION (action), enabled);
}

/* A file list dropped on the window: opened like `cowscope FILE…`. */
static gboolean
drop_cb (GtkDropTarget  *target,
         const GValue   *value,
         double          x,
         double          y,
         CowscopeWindow *self)
{
  GdkFileList *list = g_value_get_boxed (value);
  GSList *files = list != NULL ? gdk_file_list_get_files (list) : NULL;
  g_autoptr(GPtrArray) array = g_ptr_array_new ();
  GtkApplication *app = gtk_window_get_application (GTK_WINDOW (self));

  for (GSList *l = files; l != NULL; l = l->next)
    g_ptr_array_add (array, l->data);
  g_slist_free (files);

  if (array->len == 0 || app == NULL)
    return FALSE;

  cowscope_application_open_files (COWSCOPE_APPLICATION (app), (GFile **) array->pdata,
                                   array->len, GTK_WINDOW (self));
  return TRUE;
}

/* Remembers the window size for the next window. */
static gboolean
cowscope_window_close_request (GtkWindow *window)
{
  GtkApplication *app = gtk_window_get_application (window);

  if (app != NULL)
    {
      GSettings *settings = cowscope_application_get_settings (COWSCOPE_APPLICATION (app));
      int width, height;

      gtk_window_get_default_size (window, &width, &height);
      g_settings_set_boolean (settings, "window-maximized", gtk_window_is_maximized (window));
      if (!gtk_window_is_maximized (window) && width > 0 && height > 0)
        {
          g_settings_set_int (settings, "window-width", width);
          g_settings_set_int (settings, "window-height", height);
        }
    }

  if (GTK_WINDOW_CLASS (cowscope_window_parent_class)->close_request != NULL)
    return GTK_WINDOW_CLASS (cowscope_window_parent_class)->close_request (window);
  return FALSE;
}

/* Once the window belongs to the application (the "application"
 * property is set after construction): restores the size and gives the
 * start page the settings.  Runs once. */
static void
application_set_cb (CowscopeWindow *self,
                    GParamSpec     *pspec,
                    gpointer        user_data)
{
  GSettings *settings;

  if (gtk_window_get_application (GTK_WINDOW (self)) == NULL ||
      cowscope_start_page_get_settings (self->start_page) != NULL)
    return;

  settings = get_settings (self);
  gtk_window_set_default_size (GTK_WINDOW (self),
                               MAX (360, g_settings_get_int (settings, "window-width")),
                               MAX (360, g_settings_get_int (settings, "window-height")));
  if (g_settings_get_boolean (settings, "window-maximized"))
    gtk_window_maximize (GTK_WINDOW (self));

  cowscope_start_page_set_settings (self->start_page, settings);
  cowscope_graph_view_bind_size_filter (self->graph_view, settings);
}

static void
cowscope_window_dispose (GObject *object)
{
  CowscopeWindow *self = COWSCOPE_WINDOW (object);

  g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  g_clear_object (&self->loading);
  g_clear_object (&self->file);
  cancel_panels (self);
  if (self->timeline_view != NULL)
    cowscope_timeline_view_set_view_state (self->timeline_view, NULL);
  if (self->graph_view != NULL)
    set_panels_view_state (self, NULL);
  g_clear_object (&self->view_state);
  g_clear_object (&self->document);

  gtk_widget_dispose_template (GTK_WIDGET (self), COWSCOPE_TYPE_WINDOW);

  G_OBJECT_CLASS (cowscope_window_parent_class)->dispose (object);
}

static void
cowscope_window_get_property (GObject    *object,
                              guint       prop_id,
                              GValue     *value,
                              GParamSpec *pspec)
{
  CowscopeWindow *self = COWSCOPE_WINDOW (object);

  switch (prop_id)
    {
    case PROP_FILE:
      g_value_set_object (value, self->file);
      break;

    case PROP_VIEW_STATE:
      g_value_set_object (value, self->view_state);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
cowscope_window_class_init (CowscopeWindowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  GtkWindowClass *window_class = GTK_WINDOW_CLASS (klass);

  object_class->dispose = cowscope_window_dispose;
  object_class->get_property = cowscope_window_get_property;
  window_class->close_request = cowscope_window_close_request;

  /**
   * CowscopeWindow:file:
   *
   * The session file shown, or %NULL on the start and error pages.
   */
  properties[PROP_FILE] =
    g_param_spec_object ("file", NULL, NULL, G_TYPE_FILE,
                         G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * CowscopeWindow:view-state:
   *
   * The view state of the session shown (every view of the session page
   * binds to it), or %NULL without a session.  Replaced, with a
   * notification, each time a session loads.
   */
  properties[PROP_VIEW_STATE] =
    g_param_spec_object ("view-state", NULL, NULL, COWSCOPE_TYPE_VIEW_STATE,
                         G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  g_type_ensure (COWSCOPE_TYPE_START_PAGE);
  g_type_ensure (COWSCOPE_TYPE_TIMELINE_VIEW);

  gtk_widget_class_set_template_from_resource (widget_class, "/org/cowscope/Cowscope/cowscope-window.ui");
  gtk_widget_class_bind_template_child (widget_class, CowscopeWindow, window_title);
  gtk_widget_class_bind_template_child (widget_class, CowscopeWindow, export_button);
  gtk_widget_class_bind_template_child (widget_class, CowscopeWindow, toast_overlay);
  gtk_widget_class_bind_template_child (widget_class, CowscopeWindow, stack);
  gtk_widget_class_bind_template_child (widget_class, CowscopeWindow, start_page);
  gtk_widget_class_bind_template_child (widget_class, CowscopeWindow, session_page);
  gtk_widget_class_bind_template_child (widget_class, CowscopeWindow, session_paned);
  gtk_widget_class_bind_template_child (widget_class, CowscopeWindow, timeline_slot);
  gtk_widget_class_bind_template_child (widget_class, CowscopeWindow, lower_paned);
  gtk_widget_class_bind_template_child (widget_class, CowscopeWindow, graph_slot);
  gtk_widget_class_bind_template_child (widget_class, CowscopeWindow, side_panel_slot);
  gtk_widget_class_bind_template_child (widget_class, CowscopeWindow, details_list);
  gtk_widget_class_bind_template_child (widget_class, CowscopeWindow, error_page);
  gtk_widget_class_bind_template_child (widget_class, CowscopeWindow, timeline_view);
  gtk_widget_class_bind_template_child (widget_class, CowscopeWindow, graph_view);
  gtk_widget_class_bind_template_child (widget_class, CowscopeWindow, explanation_panel);
  gtk_widget_class_bind_template_child (widget_class, CowscopeWindow, events_table);
  gtk_widget_class_bind_template_child (widget_class, CowscopeWindow, range_summary);
  gtk_widget_class_bind_template_child (widget_class, CowscopeWindow, objects_table);
  gtk_widget_class_bind_template_child (widget_class, CowscopeWindow, warnings_table);
  gtk_widget_class_bind_template_child (widget_class, CowscopeWindow, side_stack);
  g_type_ensure (COWSCOPE_TYPE_GRAPH_VIEW);
  g_type_ensure (COWSCOPE_TYPE_EXPLANATION_PANEL);
  g_type_ensure (COWSCOPE_TYPE_RANGE_SUMMARY_VIEW);
  g_type_ensure (COWSCOPE_TYPE_TABLES_VIEW);
  gtk_widget_class_bind_template_child (widget_class, CowscopeWindow, loading_page);
  gtk_widget_class_bind_template_child (widget_class, CowscopeWindow, loading_progress);
  gtk_widget_class_bind_template_child (widget_class, CowscopeWindow, session_progress);
  gtk_widget_class_bind_template_child (widget_class, CowscopeWindow, session_views);
  gtk_widget_class_bind_template_child (widget_class, CowscopeWindow, summary_page);
  gtk_widget_class_bind_template_child (widget_class, CowscopeWindow, call_tree_view);
  g_type_ensure (COWSCOPE_TYPE_SUMMARY_PAGE);
  g_type_ensure (COWSCOPE_TYPE_CALL_TREE_VIEW);

}

static void
cowscope_window_init (CowscopeWindow *self)
{
  GtkDropTarget *drop;

  gtk_widget_init_template (GTK_WIDGET (self));

  g_action_map_add_action_entries (G_ACTION_MAP (self), win_actions,
                                   G_N_ELEMENTS (win_actions), self);
  set_action_enabled (self, "export", FALSE);
  set_action_enabled (self, "compare", FALSE);

  drop = gtk_drop_target_new (GDK_TYPE_FILE_LIST, GDK_ACTION_COPY);
  g_signal_connect (drop, "drop", G_CALLBACK (drop_cb), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (drop));

  g_signal_connect (self, "notify::application", G_CALLBACK (application_set_cb), NULL);
  g_signal_connect_swapped (self->timeline_view, "query-error",
                            G_CALLBACK (timeline_query_error_cb), self);
  g_signal_connect_swapped (self->summary_page, "call-site-activated",
                            G_CALLBACK (summary_call_site_cb), self);

#ifdef DEVELOPMENT_BUILD
  gtk_widget_add_css_class (GTK_WIDGET (self), "devel");
#endif
}

/**
 * cowscope_window_new:
 *
 * Returns: (transfer none): a new window of @application on the start
 *   page (the application holds it).
 */
CowscopeWindow *
cowscope_window_new (CowscopeApplication *application)
{
  g_return_val_if_fail (COWSCOPE_IS_APPLICATION (application), NULL);

  return g_object_new (COWSCOPE_TYPE_WINDOW, "application", application, NULL);
}

/**
 * cowscope_window_open:
 *
 * Starts opening @file in this window (read-only; loaded by the session
 * model on a worker thread, with its progress shown).  When done, the
 * session page with a new view state or, on failure, the error page or a
 * toast is shown.  Opening again cancels a load still running.
 */
void
cowscope_window_open (CowscopeWindow *self,
                      GFile          *file)
{
  g_autofree char *path = NULL;

  g_return_if_fail (COWSCOPE_IS_WINDOW (self));
  g_return_if_fail (G_IS_FILE (file));

  g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  self->cancellable = g_cancellable_new ();
  g_set_object (&self->loading, file);

  path = g_file_get_path (file);
  if (path == NULL)
    {
      g_autoptr(GError) error = g_error_new (COWSCOPE_SESSION_ERROR,
                                             COWSCOPE_SESSION_ERROR_NOT_FOUND,
                                             _("Only local files can be opened"));

      g_clear_object (&self->loading);
      g_clear_object (&self->cancellable);
      show_error (self, file, error);
      return;
    }

  show_loading (self, file);
  cowscope_session_document_load_async (path, self->cancellable,
                                        load_progress_cb, g_object_ref (self), g_object_unref,
                                        load_cb, g_object_ref (self));
}

/**
 * cowscope_window_get_file:
 *
 * Returns: (transfer none) (nullable): the session file shown.
 */
GFile *
cowscope_window_get_file (CowscopeWindow *self)
{
  g_return_val_if_fail (COWSCOPE_IS_WINDOW (self), NULL);

  return self->file;
}

/**
 * cowscope_window_is_empty:
 *
 * Returns: %TRUE when the window shows no session, loads none and
 *   records none, so a file may be opened in it instead of a new window.
 */
gboolean
cowscope_window_is_empty (CowscopeWindow *self)
{
  g_return_val_if_fail (COWSCOPE_IS_WINDOW (self), FALSE);

  return self->file == NULL && self->loading == NULL
         && gtk_stack_get_child_by_name (self->stack, "recording") == NULL;
}

/**
 * cowscope_window_set_recording_page:
 * @page: (nullable): the recording page (cowscope-recording-page.c)
 *
 * Shows @page as the window's "recording" page, replacing any other;
 * NULL removes it and shows the session, or the start page.
 */
void
cowscope_window_set_recording_page (CowscopeWindow *self,
                                    GtkWidget      *page)
{
  GtkWidget *old;

  g_return_if_fail (COWSCOPE_IS_WINDOW (self));
  g_return_if_fail (page == NULL || GTK_IS_WIDGET (page));

  old = gtk_stack_get_child_by_name (self->stack, "recording");
  if (old != NULL && old != page)
    gtk_stack_remove (self->stack, old);
  if (page != NULL)
    {
      if (old != page)
        gtk_stack_add_named (self->stack, page, "recording");
      gtk_stack_set_visible_child_name (self->stack, "recording");
    }
  else if (old != NULL)
    gtk_stack_set_visible_child_name (self->stack, self->file != NULL ? "session" : "start");
}

/* The fade from a recording page to its session ended: the page goes. */
static void
remove_recording_page_cb (GtkStack   *stack,
                          GParamSpec *pspec,
                          GtkWidget  *page)
{
  if (gtk_stack_get_transition_running (stack))
    return;
  g_signal_handlers_disconnect_by_func (stack, remove_recording_page_cb, page);
  if (gtk_widget_get_parent (page) != NULL && gtk_stack_get_visible_child (stack) != page)
    gtk_stack_remove (stack, page);
}

/**
 * cowscope_window_show_recorded:
 * @document: (nullable): @file loaded, or NULL when it could not be
 * @error: (nullable): why it could not be loaded (with @document NULL)
 *
 * Shows the session just recorded in place of the recording page, which
 * stayed on screen while the session was finalized and loaded (so that
 * nothing else flashes in between), and removes that page; or, with
 * @error, says why the session cannot be opened.
 */
void
cowscope_window_show_recorded (CowscopeWindow          *self,
                               GFile                   *file,
                               CowscopeSessionDocument *document,
                               const GError            *error)
{
  GtkWidget *page;

  g_return_if_fail (COWSCOPE_IS_WINDOW (self));
  g_return_if_fail (G_IS_FILE (file));
  g_return_if_fail (document != NULL || error != NULL);

  page = gtk_stack_get_child_by_name (self->stack, "recording");
  if (document != NULL)
    show_session (self, file, document);
  else
    show_error (self, file, error);
  if (page == NULL)
    return;
  /* Removed at once, the page could not fade into the session: the
   * stack would fade in from nothing. */
  if (gtk_stack_get_transition_running (self->stack))
    g_signal_connect_object (self->stack, "notify::transition-running",
                             G_CALLBACK (remove_recording_page_cb), page, 0);
  else
    gtk_stack_remove (self->stack, page);
}

/**
 * cowscope_window_add_toast:
 *
 * Shows @message (one line, for people) in a toast over the window.
 */
void
cowscope_window_add_toast (CowscopeWindow *self,
                           const char     *message)
{
  g_return_if_fail (COWSCOPE_IS_WINDOW (self));
  g_return_if_fail (message != NULL);

  adw_toast_overlay_add_toast (self->toast_overlay, adw_toast_new (message));
}

/**
 * cowscope_window_get_visible_page:
 *
 * Returns: "start", "session" or "error" (what tests assert on).
 */
const char *
cowscope_window_get_visible_page (CowscopeWindow *self)
{
  g_return_val_if_fail (COWSCOPE_IS_WINDOW (self), NULL);

  return gtk_stack_get_visible_child_name (self->stack);
}

/**
 * cowscope_window_get_error_title:
 *
 * Returns: (nullable): the title of the error page (meaningful when it is
 *   the visible page).
 */
const char *
cowscope_window_get_error_title (CowscopeWindow *self)
{
  g_return_val_if_fail (COWSCOPE_IS_WINDOW (self), NULL);

  return adw_status_page_get_title (self->error_page);
}

/**
 * cowscope_window_is_loading:
 *
 * Returns: %TRUE while a session is being loaded into this window.
 */
gboolean
cowscope_window_is_loading (CowscopeWindow *self)
{
  g_return_val_if_fail (COWSCOPE_IS_WINDOW (self), FALSE);

  return self->loading != NULL;
}

/**
 * cowscope_window_get_view_state:
 *
 * Returns: (transfer none) (nullable): the view state of the session
 *   shown, or %NULL without one.  See the "view-state" property.
 */
CowscopeViewState *
cowscope_window_get_view_state (CowscopeWindow *self)
{
  g_return_val_if_fail (COWSCOPE_IS_WINDOW (self), NULL);

  return self->view_state;
}

/**
 * cowscope_window_get_timeline_view:
 *
 * Returns: (transfer none): the copy timeline of the session page.
 */
CowscopeTimelineView *
cowscope_window_get_timeline_view (CowscopeWindow *self)
{
  g_return_val_if_fail (COWSCOPE_IS_WINDOW (self), NULL);

  return self->timeline_view;
}

/**
 * cowscope_window_show_error_page:
 *
 * Shows the error page with @title and @description (for people) when
 * the window shows no session, else a toast with @description: for
 * what goes wrong before any file exists (a program that cannot be
 * recorded).  The application keeps running.
 */
void
cowscope_window_show_error_page (CowscopeWindow *self,
                                 const char     *title,
                                 const char     *description)
{
  g_return_if_fail (COWSCOPE_IS_WINDOW (self));
  g_return_if_fail (title != NULL && description != NULL);

  if (self->file != NULL)
    {
      cowscope_window_add_toast (self, description);
      return;
    }
  adw_status_page_set_title (self->error_page, title);
  adw_status_page_set_description (self->error_page, description);
  adw_window_title_set_subtitle (self->window_title, NULL);
  gtk_stack_set_visible_child_name (self->stack, "error");
}

/**
 * cowscope_window_get_error_description:
 *
 * Returns: (nullable): the description of the error page.
 */
const char *
cowscope_window_get_error_description (CowscopeWindow *self)
{
  g_return_val_if_fail (COWSCOPE_IS_WINDOW (self), NULL);

  return adw_status_page_get_description (self->error_page);
}

/**
 * cowscope_window_get_visible_view:
 *
 * Returns: (nullable): the session view shown: "summary", "timeline" or
 *   "calltree" (meaningful on the session page).
 */
const char *
cowscope_window_get_visible_view (CowscopeWindow *self)
{
  g_return_val_if_fail (COWSCOPE_IS_WINDOW (self), NULL);

  return adw_view_stack_get_visible_child_name (self->session_views);
}

/**
 * cowscope_window_get_summary_page:
 *
 * Returns: (transfer none): the session's summary page.
 */
CowscopeSummaryPage *
cowscope_window_get_summary_page (CowscopeWindow *self)
{
  g_return_val_if_fail (COWSCOPE_IS_WINDOW (self), NULL);

  return self->summary_page;
}

/**
 * cowscope_window_get_call_tree_view:
 *
 * Returns: (transfer none): the session's copy call tree.
 */
CowscopeCallTreeView *
cowscope_window_get_call_tree_view (CowscopeWindow *self)
{
  g_return_val_if_fail (COWSCOPE_IS_WINDOW (self), NULL);

  return self->call_tree_view;
}
