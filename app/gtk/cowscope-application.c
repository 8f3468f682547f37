/* cowscope-application.c — the Cowscope application.
 *
 * One instance per session (G_APPLICATION_HANDLES_OPEN): `cowscope FILE…`
 * hands the files to the running instance, which opens each in a window.
 * `cowscope --record [--cuda] [--output FILE] [--force] -- PROGRAM
 * [ARGUMENT…]` is parsed in the launching process (the program and the
 * file resolved against its folder) and handed to the running instance
 * as the app.record-program action, which records in a window exactly as
 * the launch dialog does.
 * Application-wide actions (open, record, preferences, about, quit) and
 * every accelerator are set up here; window actions live in
 * cowscope-window.c.  Dark mode follows the system: AdwStyleManager's
 * default color scheme (ADW_COLOR_SCHEME_DEFAULT) is left as it is.
 */
#include "cowscope-config.h"

#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <string.h>

#include "cowscope-application.h"
#include "cowscope-install-dirs.h"
#include "cowscope-preferences-window.h"
#include "cowscope-record-dialog.h"
#include "cowscope-recording-page.h"
#include "cowscope-window.h"

struct _CowscopeApplication
{
  AdwApplication  parent_instance;

  GSettings      *settings;
  CowscopeRecordingPage *demo_page; /* the demo being recorded (weak), or NULL */
};

G_DEFINE_FINAL_TYPE (CowscopeApplication, cowscope_application, ADW_TYPE_APPLICATION)

#define RECORD_USAGE N_("Usage: cowscope --record [--cuda] [--output FILE] [--force] -- PROGRAM [ARGUMENT…]")

/* --record's options, for --help (cowscope_application_parse_record_command_line
 * parses them). */
static const GOptionEntry record_entries[] = {
  { "record", 0, 0, G_OPTION_ARG_NONE, NULL,
    N_("Record PROGRAM (after “--”) in a window and open its session"), NULL },
  { "cuda", 0, 0, G_OPTION_ARG_NONE, NULL, N_("With --record: trace CUDA with CUPTI"), NULL },
  { "output", 'o', 0, G_OPTION_ARG_FILENAME, NULL,
    N_("With --record: the session file to write"), N_("FILE") },
  { "force", 0, 0, G_OPTION_ARG_NONE, NULL, N_("With --record: replace the session file"), NULL },
  { NULL }
};

/* Returns the Cowscope GSettings schema: one GLib finds (XDG_DATA_DIRS,
 * GSETTINGS_SCHEMA_DIR), else the one installed with the running binary
 * (a prefix outside XDG_DATA_DIRS), else the one compiled in the build
 * tree it runs from, else NULL. */
static GSettingsSchema *
lookup_schema (void)
{
  GSettingsSchemaSource *source = g_settings_schema_source_get_default ();
  GSettingsSchema *schema = NULL;
  g_autofree char *build_root = cowscope_install_dirs_build_root ();
  char *dirs[] = {
    cowscope_install_dirs_find (COWSCOPE_INSTALL_DIR_DATA, "glib-2.0/schemas"),
    build_root != NULL ? g_build_filename (build_root, "data", NULL) : NULL,
  };

  if (source != NULL)
    schema = g_settings_schema_source_lookup (source, APP_ID, TRUE);

  for (guint i = 0; i < G_N_ELEMENTS (dirs); i++)
    {
      if (schema == NULL && dirs[i] != NULL)
        {
          g_autoptr(GSettingsSchemaSource) dir_source =
            g_settings_schema_source_new_from_directory (dirs[i], source, FALSE, NULL);

          if (dir_source != NULL)
            schema = g_settings_schema_source_lookup (dir_source, APP_ID, TRUE);
        }
      g_free (dirs[i]);
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

/* The modification time of @path in seconds, or -1. */
static gint64
modified (const char *path)
{
  GStatBuf st;

  return path != NULL && g_stat (path, &st) == 0 ? (gint64) st.st_mtime : -1;
}

/* Whether the demo session recorded last, @path, can be shown again: it
 * exists, its recording ended (one that did not leaves its write-ahead
 * log behind), and it is newer than both the demo program @demo and this
 * Cowscope (a rebuilt or upgraded one may record more). */
static gboolean
demo_session_is_current (const char *path,
                         const char *demo)
{
  g_autofree char *wal = NULL;
  g_autofree char *self_exe = g_file_read_link ("/proc/self/exe", NULL);
  gint64 session = modified (path);

  if (session < 0)
    return FALSE;
  wal = g_strconcat (path, "-wal", NULL);
  return !g_file_test (wal, G_FILE_TEST_EXISTS)
         && (demo == NULL || session >= modified (demo))
         && (self_exe == NULL || session >= modified (self_exe));
}

/* Presents the window recording the demo, if one is; TRUE then. */
static gboolean
present_demo_recording (CowscopeApplication *self)
{
  GtkRoot *root;

  if (self->demo_page == NULL || !cowscope_recording_page_is_running (self->demo_page))
    return FALSE;
  root = gtk_widget_get_root (GTK_WIDGET (self->demo_page));
  if (GTK_IS_WINDOW (root))
    gtk_window_present (GTK_WINDOW (root));
  return TRUE;
}

/* Records the bundled demo target @demo as any program is recorded (a
 * new file: a session shown elsewhere is never replaced under it) and
 * remembers that file as the demo session ("demo-session"). */
static void
record_demo (CowscopeApplication *self,
             const char          *demo)
{
  const char *argv[] = { demo, "--steps", "4", "all", NULL };
  const char *path;

  g_clear_weak_pointer (&self->demo_page);
  self->demo_page = cowscope_recording_page_record (
    get_parent_window (self), argv, NULL, NULL,
    g_settings_get_boolean (self->settings, "launch-cuda-tracing"),
    g_settings_get_boolean (self->settings, "launch-call-stacks"), FALSE);
  g_object_add_weak_pointer (G_OBJECT (self->demo_page), (gpointer *) &self->demo_page);
  path = cowscope_recording_page_get_session_path (self->demo_page);
  if (path != NULL)
    g_settings_set_string (self->settings, "demo-session", path);
}

/* app.open-demo: opens a demo session without recording when one is
 * there: $COWSCOPE_DEMO_SESSION, the one recorded last ("demo-session",
 * while current), the one installed or built with Cowscope.  Otherwise records
 * the bundled demo target (cowscope-demo) and opens that; while it
 * records, presents that window.  With neither, says so in the active
 * window, which keeps running. */
static void
open_demo_activated (GSimpleAction *action,
                     GVariant      *parameter,
                     gpointer       user_data)
{
  CowscopeApplication *self = user_data;
  g_autofree char *build_root = cowscope_install_dirs_build_root ();
  g_autofree char *installed = cowscope_install_dirs_find (COWSCOPE_INSTALL_DIR_DATA,
                                                           "cowscope/demo.cowscope");
  g_autofree char *built = build_root != NULL
                           ? g_build_filename (build_root, "data", "demo.cowscope", NULL)
                           : NULL;
  g_autofree char *demo = cowscope_recording_page_find_demo ();
  g_autofree char *recorded = g_settings_get_string (self->settings, "demo-session");
  const char *candidates[] = { g_getenv ("COWSCOPE_DEMO_SESSION"),
                               recorded[0] != '\0' && demo_session_is_current (recorded, demo)
                                 ? recorded : NULL,
                               installed, built };
  GtkWindow *parent = get_parent_window (self);

  if (present_demo_recording (self))
    return;

  for (guint i = 0; i < G_N_ELEMENTS (candidates); i++)
    {
      if (candidates[i] != NULL && g_file_test (candidates[i], G_FILE_TEST_IS_REGULAR))
        {
          g_autoptr(GFile) file = g_file_new_for_path (candidates[i]);

          cowscope_application_open_files (self, &file, 1, parent);
          return;
        }
    }

  if (demo != NULL)
    {
      record_demo (self, demo);
      return;
    }

  if (COWSCOPE_IS_WINDOW (parent))
    cowscope_window_add_toast (COWSCOPE_WINDOW (parent),
                               _("Neither the demo session nor the demo program (cowscope-demo) is installed."));
}

/* app.record-demo: records the demo session again (the explicit way to
 * replace the one open-demo reuses), unless it is being recorded. */
static void
record_demo_activated (GSimpleAction *action,
                       GVariant      *parameter,
                       gpointer       user_data)
{
  CowscopeApplication *self = user_data;
  g_autofree char *demo = cowscope_recording_page_find_demo ();
  GtkWindow *parent = get_parent_window (self);

  if (present_demo_recording (self))
    return;
  if (demo != NULL)
    record_demo (self, demo);
  else if (COWSCOPE_IS_WINDOW (parent))
    cowscope_window_add_toast (COWSCOPE_WINDOW (parent),
                               _("The demo program (cowscope-demo) is not installed."));
}

/* app.record-program ((asbbss): argv, CUDA tracing, force, output file
 * or "", working directory or ""): records argv in a window (the active
 * one when it is empty) as the launch dialog does, then opens the
 * session.  A program that does not exist is said so on the window's
 * error page; the application keeps running. */
static void
record_program_activated (GSimpleAction *action,
                          GVariant      *parameter,
                          gpointer       user_data)
{
  CowscopeApplication *self = user_data;
  GSettings *settings = cowscope_application_get_settings (self);
  GtkWindow *parent = get_parent_window (self);
  g_autofree const char **argv = NULL;
  const char *output, *cwd;
  gboolean cuda, force;

  g_variant_get (parameter, "(^a&sbb&s&s)", &argv, &cuda, &force, &output, &cwd);
  if (argv == NULL || argv[0] == NULL)
    return;

  if (!g_file_test (argv[0], G_FILE_TEST_IS_EXECUTABLE) || g_file_test (argv[0], G_FILE_TEST_IS_DIR))
    {
      CowscopeWindow *window;
      g_autofree char *text = g_strdup_printf (_("“%s” does not exist or is not an executable "
                                                 "program."), argv[0]);

      if (COWSCOPE_IS_WINDOW (parent) && cowscope_window_is_empty (COWSCOPE_WINDOW (parent)))
        window = COWSCOPE_WINDOW (parent);
      else
        window = cowscope_window_new (self);
      gtk_window_present (GTK_WINDOW (window));
      cowscope_window_show_error_page (window, _("Cannot Record the Program"), text);
      return;
    }

  cowscope_recording_page_record_to (parent, argv, cwd[0] != '\0' ? cwd : NULL, NULL,
                                     output[0] != '\0' ? output : NULL, force, cuda,
                                     g_settings_get_boolean (settings, "launch-call-stacks"),
                                     FALSE);
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
  { .name = "record-demo", .activate = record_demo_activated },
  { .name = "record-program", .activate = record_program_activated, .parameter_type = "(asbbss)" },
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
  { "win.show-view::summary", { "<Alt>1", NULL } },
  { "win.show-view::timeline", { "<Alt>2", NULL } },
  { "win.show-view::calltree", { "<Alt>3", NULL } },
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

/* A clear message instead of a GSettings abort when the schema is not
 * installed; FALSE then. */
static gboolean
check_schema (void)
{
  g_autoptr(GSettingsSchema) schema = lookup_schema ();

  if (schema != NULL)
    return TRUE;
  g_printerr (_("cowscope: the settings schema %s is not installed. Install Cowscope "
                "(meson install), or run it from the build tree with “meson devenv”.\n"),
              APP_ID);
  return FALSE;
}

/* Runs in the launching process: --version, the schema check, and
 * --record's options given without --record. */
static int
cowscope_application_handle_local_options (GApplication *app,
                                           GVariantDict *options)
{
  if (g_variant_dict_contains (options, "version"))
    {
      g_print ("cowscope %s\n", PACKAGE_VERSION);
      return 0;
    }

  if (g_variant_dict_contains (options, "cuda") || g_variant_dict_contains (options, "output")
      || g_variant_dict_contains (options, "force"))
    {
      g_printerr (_("cowscope: --cuda, --output and --force go with --record\n"));
      g_printerr ("%s\n", _(RECORD_USAGE));
      return 2;
    }

  if (!check_schema ())
    return 1;

  return -1;
}

/* `cowscope --record …` (any "--record" before "--"): parsed here, then
 * app.record-program is activated in the running instance (this one, or
 * the one this process hands it to).  Anything else: GApplication's own
 * handling (options, files to open). */
static gboolean
cowscope_application_local_command_line (GApplication   *app,
                                         char         ***arguments,
                                         int            *exit_status)
{
  char **argv = *arguments;
  gboolean record = FALSE;
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) parameter = NULL;

  for (guint i = 1; argv[i] != NULL && !g_str_equal (argv[i], "--"); i++)
    if (g_str_equal (argv[i], "--record"))
      record = TRUE;
  if (!record)
    return G_APPLICATION_CLASS (cowscope_application_parent_class)->local_command_line (app, arguments,
                                                                                      exit_status);

  parameter = cowscope_application_parse_record_command_line ((const char * const *) argv, &error);
  if (parameter == NULL)
    {
      g_printerr ("cowscope: %s\n%s\n", error->message, _(RECORD_USAGE));
      *exit_status = 2;
      return TRUE;
    }
  if (!check_schema ())
    {
      *exit_status = 1;
      return TRUE;
    }
  if (!g_application_register (app, NULL, &error))
    {
      g_printerr ("cowscope: %s\n", error->message);
      *exit_status = 1;
      return TRUE;
    }
  g_action_group_activate_action (G_ACTION_GROUP (app), "record-program", parameter);
  *exit_status = 0;
  return TRUE;
}

static void
cowscope_application_finalize (GObject *object)
{
  CowscopeApplication *self = COWSCOPE_APPLICATION (object);

  g_clear_weak_pointer (&self->demo_page);
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
  app_class->local_command_line = cowscope_application_local_command_line;
}

static void
cowscope_application_init (CowscopeApplication *self)
{
  g_application_add_main_option (G_APPLICATION (self), "version", 0, G_OPTION_FLAG_NONE,
                                 G_OPTION_ARG_NONE, _("Show the version and exit"), NULL);
  g_application_add_main_option_entries (G_APPLICATION (self), record_entries);
  g_application_set_option_context_parameter_string (G_APPLICATION (self),
                                                     _("[FILE…] | --record [--cuda] [--output FILE] "
                                                       "[--force] -- PROGRAM [ARGUMENT…]"));
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

/**
 * cowscope_application_parse_record_command_line:
 * @argv: a `cowscope --record [--cuda] [--output FILE] [--force] --
 *   PROGRAM [ARGUMENT…]` command line (argv[0] is cowscope)
 *
 * Parses @argv in the launching process: a PROGRAM without "/" is looked
 * up in $PATH, a relative PROGRAM or FILE is made absolute against the
 * current folder (the running instance may have another one), which is
 * also where the program will start.
 *
 * Returns: (transfer full): the app.record-program parameter, or NULL
 *   with @error (G_OPTION_ERROR) saying what is wrong.
 */
GVariant *
cowscope_application_parse_record_command_line (const char * const  *argv,
                                                GError             **error)
{
  gboolean record = FALSE, cuda = FALSE, force = FALSE;
  g_autofree char *output = NULL;
  g_autofree char *cwd = g_get_current_dir ();
  g_autoptr(GOptionContext) context = g_option_context_new (NULL);
  g_autoptr(GPtrArray) options = g_ptr_array_new ();
  g_autoptr(GStrvBuilder) program = g_strv_builder_new ();
  g_auto(GStrv) program_argv = NULL;
  g_autofree char *resolved = NULL;
  char **parse_argv;
  int parse_argc;
  guint i;
  const GOptionEntry entries[] = {
    { "record", 0, 0, G_OPTION_ARG_NONE, &record, NULL, NULL },
    { "cuda", 0, 0, G_OPTION_ARG_NONE, &cuda, NULL, NULL },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output, NULL, NULL },
    { "force", 0, 0, G_OPTION_ARG_NONE, &force, NULL, NULL },
    { NULL }
  };

  g_return_val_if_fail (argv != NULL && argv[0] != NULL, NULL);

  /* Options before "--", the program and its arguments after it. */
  for (i = 0; argv[i] != NULL && !g_str_equal (argv[i], "--"); i++)
    g_ptr_array_add (options, (gpointer) argv[i]);
  if (argv[i] != NULL)
    for (i++; argv[i] != NULL; i++)
      g_strv_builder_add (program, argv[i]);
  program_argv = g_strv_builder_end (program);
  g_ptr_array_add (options, NULL);

  g_option_context_set_help_enabled (context, FALSE);
  g_option_context_add_main_entries (context, entries, GETTEXT_PACKAGE);
  parse_argc = (int) options->len - 1;
  parse_argv = (char **) options->pdata;
  if (!g_option_context_parse (context, &parse_argc, &parse_argv, error))
    return NULL;
  if (parse_argc > 1)
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   _("Unexpected argument “%s”: put “--” before the program to record"),
                   parse_argv[1]);
      return NULL;
    }
  if (program_argv[0] == NULL || program_argv[0][0] == '\0')
    {
      g_set_error_literal (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                           _("--record needs the program to record after “--”"));
      return NULL;
    }

  if (strchr (program_argv[0], '/') != NULL)
    resolved = g_canonicalize_filename (program_argv[0], cwd);
  else
    resolved = g_find_program_in_path (program_argv[0]);
  if (resolved != NULL)
    {
      g_free (program_argv[0]);
      program_argv[0] = g_steal_pointer (&resolved);
    }
  if (output != NULL)
    {
      char *absolute = g_canonicalize_filename (output, cwd);

      g_free (output);
      output = absolute;
    }

  return g_variant_ref_sink (g_variant_new ("(^asbbss)", program_argv, cuda, force,
                                            output != NULL ? output : "", cwd));
}
