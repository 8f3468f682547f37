/* cowscope-application.c — the Cowscope application.
 *
 * One instance per session (G_APPLICATION_HANDLES_OPEN): `cowscope FILE…`
 * hands the files to the running instance, which opens each in a window.
 * Application-wide actions (open, record, preferences, about, quit) and
 * every accelerator are set up here; window actions live in
 * cowscope-window.c.  Dark mode follows the system: AdwStyleManager's
 * default color scheme (ADW_COLOR_SCHEME_DEFAULT) is left as it is.
 */
#include "cowscope-config.h"

#include <glib/gi18n.h>

#include "cowscope-application.h"
#include "cowscope-preferences-window.h"
#include "cowscope-record-dialog.h"
#include "cowscope-recording-page.h"
#include "cowscope-window.h"

struct _CowscopeApplication
{
  AdwApplication  parent_instance;

  GSettings      *settings;
};

G_DEFINE_FINAL_TYPE (CowscopeApplication, cowscope_application, ADW_TYPE_APPLICATION)

/* Returns the Cowscope GSettings schema: the installed one, else the one
 * compiled in the build tree (running uninstalled), else NULL. */
static GSettingsSchema *
lookup_schema (void)
{
  GSettingsSchemaSource *source = g_settings_schema_source_get_default ();
  GSettingsSchema *schema = NULL;

  if (source != NULL)
    schema = g_settings_schema_source_lookup (source, APP_ID, TRUE);

  if (schema == NULL)
    {
      g_autoptr(GSettingsSchemaSource) build_source =
        g_settings_schema_source_new_from_directory (COWSCOPE_BUILD_SCHEMA_DIR, source, FALSE, NULL);

      if (build_source != NULL)
        schema = g_settings_schema_source_lookup (build_source, APP_ID, TRUE);
    }

  return schema;
}

/* Returns the window that new dialogs should be transient for, or NULL. */
static GtkWindow *
get_parent_window (CowscopeApplication *self)
{
  return gtk_application_get_active_window (GTK_APPLICATION (self));
}

/* Guarantees: a file chooser for *.cowscope files is shown; the files
 * chosen open through cowscope_application_open_files(). */
static void
open_response_cb (GtkNativeDialog     *dialog,
                  int                  response,
                  CowscopeApplication *self)
{
  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr(GListModel) files = gtk_file_chooser_get_files (GTK_FILE_CHOOSER (dialog));
      g_autoptr(GPtrArray) array = g_ptr_array_new_with_free_func (g_object_unref);
      guint n = g_list_model_get_n_items (files);

      for (guint i = 0; i < n; i++)
        g_ptr_array_add (array, g_list_model_get_item (files, i));

      cowscope_application_open_files (self, (GFile **) array->pdata, array->len,
                                       gtk_native_dialog_get_transient_for (dialog));
    }

  g_object_unref (dialog);
  g_application_release (G_APPLICATION (self));
}

/* app.open: asks for session files with the platform's file chooser. */
static void
open_activated (GSimpleAction *action,
                GVariant      *parameter,
                gpointer       user_data)
{
  CowscopeApplication *self = user_data;
  GtkFileChooserNative *chooser;
  g_autoptr(GtkFileFilter) sessions = gtk_file_filter_new ();
  g_autoptr(GtkFileFilter) all = gtk_file_filter_new ();

  chooser = gtk_file_chooser_native_new (_("Open a Session"), get_parent_window (self),
                                         GTK_FILE_CHOOSER_ACTION_OPEN,
                                         _("_Open"), _("_Cancel"));
  gtk_native_dialog_set_modal (GTK_NATIVE_DIALOG (chooser), TRUE);
  gtk_file_chooser_set_select_multiple (GTK_FILE_CHOOSER (chooser), TRUE);

  gtk_file_filter_set_name (sessions, _("Cowscope Sessions"));
  gtk_file_filter_add_pattern (sessions, "*.cowscope");
  gtk_file_filter_add_mime_type (sessions, "application/x-cowscope-session");
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (chooser), sessions);

  gtk_file_filter_set_name (all, _("All Files"));
  gtk_file_filter_add_pattern (all, "*");
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (chooser), all);
  gtk_file_chooser_set_filter (GTK_FILE_CHOOSER (chooser), sessions);

  /* Held until the response: the app must not quit under the chooser. */
  g_application_hold (G_APPLICATION (self));
  g_signal_connect (chooser, "response", G_CALLBACK (open_response_cb), self);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (chooser));
}

/* app.record: presents the launch dialog over the active window; a
 * recording starts in that window when it is empty, else in a new one. */
static void
record_activated (GSimpleAction *action,
                  GVariant      *parameter,
                  gpointer       user_data)
{
  CowscopeApplication *self = user_data;
  CowscopeRecordDialog *dialog;

  dialog = cowscope_record_dialog_new (get_parent_window (self),
                                       cowscope_application_get_settings (self));
  gtk_window_present (GTK_WINDOW (dialog));
}

/* app.open-demo: opens the bundled demo session; when none is installed,
 * records the bundled demo target (cowscope-demo) and opens that; when
 * neither exists, says so in the active window, which keeps running. */
static void
open_demo_activated (GSimpleAction *action,
                     GVariant      *parameter,
                     gpointer       user_data)
{
  CowscopeApplication *self = user_data;
  const char *candidates[] = {
    g_getenv ("COWSCOPE_DEMO_SESSION"),
    PKGDATADIR "/demo.cowscope",
    COWSCOPE_BUILD_SCHEMA_DIR "/demo.cowscope",
  };
  GtkWindow *parent = get_parent_window (self);
  g_autofree char *demo = NULL;

  for (guint i = 0; i < G_N_ELEMENTS (candidates); i++)
    {
      if (candidates[i] != NULL && g_file_test (candidates[i], G_FILE_TEST_IS_REGULAR))
        {
          g_autoptr(GFile) file = g_file_new_for_path (candidates[i]);

          cowscope_application_open_files (self, &file, 1, parent);
          return;
        }
    }

  /* No demo session: record the bundled demo target and open that. */
  demo = cowscope_recording_page_find_demo ();
  if (demo != NULL)
    {
      const char *argv[] = { demo, "--steps", "4", "all", NULL };
      GSettings *settings = cowscope_application_get_settings (self);

      cowscope_recording_page_record (parent, argv, NULL, NULL,
                                      g_settings_get_boolean (settings, "launch-cuda-tracing"),
                                      g_settings_get_boolean (settings, "launch-call-stacks"),
                                      FALSE);
      return;
    }

  if (COWSCOPE_IS_WINDOW (parent))
    cowscope_window_add_toast (COWSCOPE_WINDOW (parent),
                               _("Neither the demo session nor the demo program (cowscope-demo) is installed."));
}

/* app.new-window: presents a new window showing the start page. */
static void
new_window_activated (GSimpleAction *action,
                      GVariant      *parameter,
                      gpointer       user_data)
{
  gtk_window_present (GTK_WINDOW (cowscope_window_new (user_data)));
}

/* app.help: shows the keyboard shortcuts of the active window (F1). */
static void
help_activated (GSimpleAction *action,
                GVariant      *parameter,
                gpointer       user_data)
{
  GtkWindow *parent = get_parent_window (user_data);

  if (parent != NULL)
    gtk_widget_activate_action (GTK_WIDGET (parent), "win.show-help-overlay", NULL);
}

/* app.preferences: presents the preferences window over the active one. */
static void
preferences_activated (GSimpleAction *action,
                       GVariant      *parameter,
                       gpointer       user_data)
{
  CowscopeApplication *self = user_data;
  GtkWidget *window;

  window = cowscope_preferences_window_new (get_parent_window (self),
                                            cowscope_application_get_settings (self));
  gtk_window_present (GTK_WINDOW (window));
}

/* app.about: presents the about window. */
static void
about_activated (GSimpleAction *action,
                 GVariant      *parameter,
                 gpointer       user_data)
{
  CowscopeApplication *self = user_data;
  const char *developers[] = { _("The Cowscope developers"), NULL };

  adw_show_about_window (get_parent_window (self),
                         "application-name", _("Cowscope"),
                         "application-icon", APP_ID,
                         "developer-name", _("The Cowscope developers"),
                         "developers", developers,
                         "version", PACKAGE_VERSION,
                         "comments", _("Profile copy-on-write tensor storage: see which tensors share "
                                       "storage, and when and why a lazy copy becomes a real one."),
                         "copyright", _("© 2026 The Cowscope developers"),
                         "license-type", GTK_LICENSE_MIT_X11,
                         /* Translators: your names and e-mail addresses, one per line */
                         "translator-credits", _("translator-credits"),
                         NULL);
}

/* app.quit: closes every window and ends the application.  Sessions are
 * opened read-only, so nothing can be lost. */
static void
quit_activated (GSimpleAction *action,
                GVariant      *parameter,
                gpointer       user_data)
{
  g_application_quit (G_APPLICATION (user_data));
}

static const GActionEntry app_actions[] = {
  { .name = "open", .activate = open_activated },
  { .name = "record", .activate = record_activated },
  { .name = "open-demo", .activate = open_demo_activated },
  { .name = "new-window", .activate = new_window_activated },
  { .name = "help", .activate = help_activated },
  { .name = "preferences", .activate = preferences_activated },
  { .name = "about", .activate = about_activated },
  { .name = "quit", .activate = quit_activated },
};

static const struct
{
  const char *action;
  const char *accels[3];
} app_accels[] = {
  { "app.open", { "<Control>o", NULL } },
  { "app.record", { "<Control>r", NULL } },
  { "app.new-window", { "<Control>n", NULL } },
  { "app.help", { "F1", NULL } },
  { "app.preferences", { "<Control>comma", NULL } },
  { "app.quit", { "<Control>q", NULL } },
  { "win.export", { "<Control>e", NULL } },
  { "win.close", { "<Control>w", NULL } },
  { "win.show-help-overlay", { "<Control>question", NULL } },
};

/* Guarantees: actions and accelerators exist before any window. */
static void
cowscope_application_startup (GApplication *app)
{
  CowscopeApplication *self = COWSCOPE_APPLICATION (app);

  G_APPLICATION_CLASS (cowscope_application_parent_class)->startup (app);

  g_action_map_add_action_entries (G_ACTION_MAP (self), app_actions,
                                   G_N_ELEMENTS (app_actions), self);
  for (guint i = 0; i < G_N_ELEMENTS (app_accels); i++)
    gtk_application_set_accels_for_action (GTK_APPLICATION (self), app_accels[i].action,
                                           app_accels[i].accels);

  gtk_window_set_default_icon_name (APP_ID);
}

/* Guarantees: a window is presented (the active one, or a new one). */
static void
cowscope_application_activate (GApplication *app)
{
  GtkWindow *window = gtk_application_get_active_window (GTK_APPLICATION (app));

  if (window == NULL)
    window = GTK_WINDOW (cowscope_window_new (COWSCOPE_APPLICATION (app)));
  gtk_window_present (window);
}

/* `cowscope FILE…` and files from other instances or the desktop. */
static void
cowscope_application_open (GApplication  *app,
                           GFile        **files,
                           int            n_files,
                           const char    *hint)
{
  cowscope_application_open_files (COWSCOPE_APPLICATION (app), files, (guint) n_files,
                                   gtk_application_get_active_window (GTK_APPLICATION (app)));
}

/* Runs in the launching process: --version, and a clear message instead
 * of a GSettings abort when the schema is not installed. */
static int
cowscope_application_handle_local_options (GApplication *app,
                                           GVariantDict *options)
{
  g_autoptr(GSettingsSchema) schema = NULL;

  if (g_variant_dict_contains (options, "version"))
    {
      g_print ("cowscope %s\n", PACKAGE_VERSION);
      return 0;
    }

  schema = lookup_schema ();
  if (schema == NULL)
    {
      g_printerr (_("cowscope: the settings schema %s is not installed. Install Cowscope "
                    "(meson install), or run it from the build tree with “meson devenv”.\n"),
                  APP_ID);
      return 1;
    }

  return -1;
}

static void
cowscope_application_finalize (GObject *object)
{
  CowscopeApplication *self = COWSCOPE_APPLICATION (object);

  g_clear_object (&self->settings);

  G_OBJECT_CLASS (cowscope_application_parent_class)->finalize (object);
}

static void
cowscope_application_class_init (CowscopeApplicationClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GApplicationClass *app_class = G_APPLICATION_CLASS (klass);

  object_class->finalize = cowscope_application_finalize;

  app_class->startup = cowscope_application_startup;
  app_class->activate = cowscope_application_activate;
  app_class->open = cowscope_application_open;
  app_class->handle_local_options = cowscope_application_handle_local_options;
}

static void
cowscope_application_init (CowscopeApplication *self)
{
  g_application_add_main_option (G_APPLICATION (self), "version", 0, G_OPTION_FLAG_NONE,
                                 G_OPTION_ARG_NONE, _("Show the version and exit"), NULL);
}

/**
 * cowscope_application_new:
 *
 * Returns: (transfer full): the application, id APP_ID, handling files.
 */
CowscopeApplication *
cowscope_application_new (void)
{
  return g_object_new (COWSCOPE_TYPE_APPLICATION,
                       "application-id", APP_ID,
                       "flags", G_APPLICATION_HANDLES_OPEN,
                       "resource-base-path", "/org/cowscope/Cowscope",
                       NULL);
}

/**
 * cowscope_application_get_settings:
 *
 * Returns: (transfer none): the application's settings; the same object
 *   for the application's lifetime.  The schema must exist (checked by
 *   handle-local-options; tests set GSETTINGS_SCHEMA_DIR).
 */
GSettings *
cowscope_application_get_settings (CowscopeApplication *self)
{
  g_return_val_if_fail (COWSCOPE_IS_APPLICATION (self), NULL);

  if (self->settings == NULL)
    {
      g_autoptr(GSettingsSchema) schema = lookup_schema ();

      if (schema == NULL)
        g_error ("The GSettings schema %s is not installed", APP_ID);
      self->settings = g_settings_new_full (schema, NULL, NULL);
    }

  return self->settings;
}

/**
 * cowscope_application_open_files:
 * @from: (nullable): the window the request came from
 *
 * Opens each file in its own window.  The first file reuses @from when
 * that window shows the start page (no session, nothing loading), so
 * opening from the start page does not leave an empty window behind.
 * Errors are shown in the file's window; the application keeps running.
 */
void
cowscope_application_open_files (CowscopeApplication  *self,
                                 GFile               **files,
                                 guint                 n_files,
                                 GtkWindow            *from)
{
  g_return_if_fail (COWSCOPE_IS_APPLICATION (self));
  g_return_if_fail (files != NULL || n_files == 0);

  for (guint i = 0; i < n_files; i++)
    {
      CowscopeWindow *window;

      if (i == 0 && COWSCOPE_IS_WINDOW (from) && cowscope_window_is_empty (COWSCOPE_WINDOW (from)))
        window = COWSCOPE_WINDOW (from);
      else
        window = cowscope_window_new (self);

      cowscope_window_open (window, files[i]);
      gtk_window_present (GTK_WINDOW (window));
    }
}

/**
 * cowscope_application_add_recent:
 *
 * Puts @file first in the recent-sessions setting, without duplicates,
 * keeping at most recent-sessions-limit entries.
 */
void
cowscope_application_add_recent (CowscopeApplication *self,
                                 GFile               *file)
{
  GSettings *settings;
  g_auto(GStrv) old = NULL;
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();
  g_auto(GStrv) recent = NULL;
  g_autofree char *uri = NULL;
  guint limit;
  guint n = 0;

  g_return_if_fail (COWSCOPE_IS_APPLICATION (self));
  g_return_if_fail (G_IS_FILE (file));

  settings = cowscope_application_get_settings (self);
  limit = g_settings_get_uint (settings, "recent-sessions-limit");
  old = g_settings_get_strv (settings, "recent-sessions");
  uri = g_file_get_uri (file);

  if (limit > 0)
    {
      g_strv_builder_add (builder, uri);
      n++;
    }
  for (guint i = 0; old[i] != NULL && n < limit; i++)
    {
      if (g_strcmp0 (old[i], uri) == 0)
        continue;
      g_strv_builder_add (builder, old[i]);
      n++;
    }

  recent = g_strv_builder_end (builder);
  g_settings_set_strv (settings, "recent-sessions", (const char * const *) recent);
}
