/* cowscope-record-dialog.c — the launch dialog.
 *
 * Program (with a file chooser), arguments (shell-like quoting, parsed
 * with g_shell_parse_argv: the program itself is still started directly,
 * never through a shell), working directory, extra environment variables
 * (an editable list of NAME = VALUE rows), the session file (empty: a new
 * file in the user's recordings; an existing file is replaced only when
 * chosen in the file chooser, which asks first), CUDA tracing, call
 * stacks and the full-ring policy.  Everything is read from and, on Record, written
 * back to the launch-* GSettings keys, so the next recording starts from
 * the last one.  Problems are shown inline under the fields; nothing is
 * started until they are fixed.  A valid request starts recording in the
 * parent window (cowscope_recording_page_record) and closes the dialog.
 */
#include "cowscope-config.h"

#include <glib/gi18n.h>
#include <string.h>

#include "cowscope-record-dialog.h"
#include "cowscope-recording-page.h"

struct _CowscopeRecordDialog
{
  AdwWindow     parent_instance;

  /* Template children */
  AdwEntryRow  *program_row;
  AdwEntryRow  *arguments_row;
  AdwEntryRow  *directory_row;
  AdwEntryRow  *output_row;
  GtkLabel     *error_label;
  GtkListBox   *environment_list;
  GtkSwitch    *cuda_switch;
  GtkSwitch    *stacks_switch;
  AdwComboRow  *policy_row;

  GSettings    *settings;
  char         *error;        /* the inline error shown, or NULL */
  char         *replace_output; /* chosen in the file chooser, which asked to replace it */
};

G_DEFINE_FINAL_TYPE (CowscopeRecordDialog, cowscope_record_dialog, ADW_TYPE_WINDOW)

enum {
  PROP_0,
  PROP_SETTINGS,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

/* Shows @message under the fields (NULL hides it) and marks @row, if
 * any, as the one in error. */
static void
set_error (CowscopeRecordDialog *self,
           GtkWidget            *row,
           const char           *message)
{
  GtkWidget *rows[] = { GTK_WIDGET (self->program_row), GTK_WIDGET (self->arguments_row),
                        GTK_WIDGET (self->directory_row), GTK_WIDGET (self->output_row) };

  g_free (self->error);
  self->error = g_strdup (message);
  gtk_label_set_text (self->error_label, message != NULL ? message : "");
  gtk_widget_set_visible (GTK_WIDGET (self->error_label), message != NULL);
  for (guint i = 0; i < G_N_ELEMENTS (rows); i++)
    {
      if (rows[i] == row && message != NULL)
        gtk_widget_add_css_class (rows[i], "error");
      else
        gtk_widget_remove_css_class (rows[i], "error");
    }
}

/* Editing any field clears the error it may have caused. */
static void
field_changed_cb (CowscopeRecordDialog *self)
{
  if (self->error != NULL)
    set_error (self, NULL, NULL);
}

/* Editing the session file: the chooser's permission to replace a file
 * holds only for the path it chose. */
static void
output_changed_cb (CowscopeRecordDialog *self)
{
  field_changed_cb (self);
  if (self->replace_output != NULL
      && g_strcmp0 (gtk_editable_get_text (GTK_EDITABLE (self->output_row)), self->replace_output) != 0)
    g_clear_pointer (&self->replace_output, g_free);
}

/* Resolves the session file field: NULL with @path NULL for an empty
 * field (a new file in the recordings folder); else the absolute path
 * (relative to the home folder), with *force when the file chooser was
 * told to replace it.  FALSE with the inline error set for a path that
 * cannot be written: its folder is missing, it is a folder, or it exists
 * and was not chosen to be replaced. */
static gboolean
resolve_output (CowscopeRecordDialog  *self,
                char                 **path,
                gboolean              *force)
{
  g_autofree char *text = g_strstrip (g_strdup (gtk_editable_get_text (GTK_EDITABLE (self->output_row))));
  g_autofree char *resolved = NULL;
  g_autofree char *folder = NULL;
  g_autofree char *message = NULL;

  *path = NULL;
  *force = FALSE;
  if (*text == '\0')
    return TRUE;
  resolved = g_canonicalize_filename (text, g_get_home_dir ());
  folder = g_path_get_dirname (resolved);
  if (!g_file_test (folder, G_FILE_TEST_IS_DIR))
    message = g_strdup_printf (_("The folder “%s” does not exist."), folder);
  else if (g_file_test (resolved, G_FILE_TEST_IS_DIR))
    message = g_strdup_printf (_("“%s” is a folder: give the session file a name."), text);
  else if (g_file_test (resolved, G_FILE_TEST_EXISTS))
    {
      if (g_strcmp0 (self->replace_output, text) != 0)
        message = g_strdup_printf (_("“%s” already exists. Choose another name, or choose it "
                                     "with the file chooser to replace it."), text);
      *force = TRUE;
    }
  if (message != NULL)
    {
      set_error (self, GTK_WIDGET (self->output_row), message);
      *force = FALSE;
      return FALSE;
    }
  *path = g_steal_pointer (&resolved);
  return TRUE;
}

/* The remove button of a variable row: removes that row. */
static void
remove_variable_cb (GtkButton            *button,
                    CowscopeRecordDialog *self)
{
  GtkWidget *row = g_object_get_data (G_OBJECT (button), "cowscope-row");

  if (row != NULL)
    gtk_list_box_remove (self->environment_list, row);
}

/* Adds an editable NAME = VALUE row (with a remove button) to the
 * environment list.  Guarantees the row's entries are named "name" and
 * "value" for environment_from_rows(). */
static GtkWidget *
add_variable_row (CowscopeRecordDialog *self,
                  const char           *name,
                  const char           *value)
{
  GtkWidget *row = gtk_list_box_row_new ();
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
  GtkWidget *name_entry = gtk_entry_new ();
  GtkWidget *equals = gtk_label_new ("=");
  GtkWidget *value_entry = gtk_entry_new ();
  GtkWidget *remove = gtk_button_new_from_icon_name ("user-trash-symbolic");

  gtk_widget_set_margin_top (box, 6);
  gtk_widget_set_margin_bottom (box, 6);
  gtk_widget_set_margin_start (box, 6);
  gtk_widget_set_margin_end (box, 6);
  gtk_widget_set_name (name_entry, "name");
  gtk_widget_set_name (value_entry, "value");
  gtk_entry_set_placeholder_text (GTK_ENTRY (name_entry), _("NAME"));
  gtk_entry_set_placeholder_text (GTK_ENTRY (value_entry), _("value"));
  gtk_editable_set_text (GTK_EDITABLE (name_entry), name != NULL ? name : "");
  gtk_editable_set_text (GTK_EDITABLE (value_entry), value != NULL ? value : "");
  gtk_editable_set_width_chars (GTK_EDITABLE (name_entry), 12);
  gtk_widget_set_hexpand (value_entry, TRUE);
  gtk_widget_add_css_class (name_entry, "monospace");
  gtk_widget_add_css_class (value_entry, "monospace");
  gtk_widget_add_css_class (equals, "dim-label");
  gtk_widget_set_tooltip_text (remove, _("Remove the Variable"));
  gtk_widget_add_css_class (remove, "flat");
  gtk_widget_set_valign (remove, GTK_ALIGN_CENTER);
  g_signal_connect_object (name_entry, "changed", G_CALLBACK (field_changed_cb), self,
                           G_CONNECT_SWAPPED);
  g_object_set_data (G_OBJECT (remove), "cowscope-row", row);
  g_signal_connect (remove, "clicked", G_CALLBACK (remove_variable_cb), self);

  gtk_box_append (GTK_BOX (box), name_entry);
  gtk_box_append (GTK_BOX (box), equals);
  gtk_box_append (GTK_BOX (box), value_entry);
  gtk_box_append (GTK_BOX (box), remove);
  gtk_list_box_row_set_child (GTK_LIST_BOX_ROW (row), box);
  gtk_list_box_row_set_activatable (GTK_LIST_BOX_ROW (row), FALSE);
  gtk_list_box_append (self->environment_list, row);
  return remove;
}

/* record-dialog.add-variable: a new empty row, its name focused. */
static void
add_variable_activated (GtkWidget  *widget,
                        const char *action_name,
                        GVariant   *parameter)
{
  CowscopeRecordDialog *self = COWSCOPE_RECORD_DIALOG (widget);
  GtkWidget *remove = add_variable_row (self, NULL, NULL);

  gtk_widget_grab_focus (gtk_widget_get_first_child (gtk_widget_get_parent (remove)));
}

/* The text of the child named @name of a variable row's box. */
static const char *
row_entry_text (GtkWidget  *row,
                const char *name)
{
  GtkWidget *box = gtk_list_box_row_get_child (GTK_LIST_BOX_ROW (row));

  for (GtkWidget *child = gtk_widget_get_first_child (box); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    if (g_strcmp0 (gtk_widget_get_name (child), name) == 0)
      return gtk_editable_get_text (GTK_EDITABLE (child));
  return "";
}

/* Reads the variable rows into @environment (NAME=VALUE strings) and
 * @dict (a{ss} for GSettings).  Rows with no name and no value are
 * skipped.  Returns FALSE with the inline error set for a bad name. */
static gboolean
environment_from_rows (CowscopeRecordDialog *self,
                       GPtrArray            *environment,
                       GVariantBuilder      *dict)
{
  for (GtkWidget *row = gtk_widget_get_first_child (GTK_WIDGET (self->environment_list));
       row != NULL; row = gtk_widget_get_next_sibling (row))
    {
      g_autofree char *name = NULL;
      const char *value;

      if (!GTK_IS_LIST_BOX_ROW (row) || gtk_list_box_row_get_child (GTK_LIST_BOX_ROW (row)) == NULL
          || !GTK_IS_BOX (gtk_list_box_row_get_child (GTK_LIST_BOX_ROW (row))))
        continue;
      name = g_strstrip (g_strdup (row_entry_text (row, "name")));
      value = row_entry_text (row, "value");
      if (*name == '\0' && *value == '\0')
        continue;
      if (*name == '\0' || strchr (name, '=') != NULL)
        {
          g_autofree char *message =
            g_strdup_printf (_("“%s” is not a valid environment variable name: a name must not be empty or contain “=”."),
                             name);
          set_error (self, NULL, message);
          return FALSE;
        }
      g_ptr_array_add (environment, g_strdup_printf ("%s=%s", name, value));
      g_variant_builder_add (dict, "{ss}", name, value);
    }
  return TRUE;
}

/* Resolves the program the way the recorder will (a name without '/' is
 * looked up in $PATH).  Returns an absolute path of an executable file,
 * or NULL with the inline error set. */
static char *
resolve_program (CowscopeRecordDialog *self,
                 const char           *program)
{
  g_autofree char *path = NULL;
  g_autofree char *message = NULL;

  if (*program == '\0')
    {
      set_error (self, GTK_WIDGET (self->program_row), _("Choose the program to record."));
      return NULL;
    }

  if (strchr (program, '/') == NULL)
    {
      path = g_find_program_in_path (program);
      if (path == NULL)
        message = g_strdup_printf (_("No program named “%s” was found in the folders of PATH."),
                                   program);
    }
  else
    {
      path = g_path_is_absolute (program) ? g_strdup (program)
                                          : g_canonicalize_filename (program, NULL);
      if (!g_file_test (path, G_FILE_TEST_EXISTS))
        message = g_strdup_printf (_("The program “%s” does not exist."), program);
      else if (g_file_test (path, G_FILE_TEST_IS_DIR))
        message = g_strdup_printf (_("“%s” is a folder, not a program."), program);
      else if (!g_file_test (path, G_FILE_TEST_IS_EXECUTABLE))
        message = g_strdup_printf (_("“%s” is not executable. Make it executable (chmod +x) or choose another program."),
                                   program);
    }

  if (message != NULL)
    {
      set_error (self, GTK_WIDGET (self->program_row), message);
      return NULL;
    }
  return g_steal_pointer (&path);
}

/* record-dialog.record: validates every field; when all are good, saves
 * them in GSettings, starts recording in the parent window and closes
 * the dialog.  Otherwise the first problem is shown inline and nothing
 * starts. */
static void
record_activated (GtkWidget  *widget,
                  const char *action_name,
                  GVariant   *parameter)
{
  CowscopeRecordDialog *self = COWSCOPE_RECORD_DIALOG (widget);
  g_autofree char *program_text = g_strstrip (g_strdup (gtk_editable_get_text (GTK_EDITABLE (self->program_row))));
  const char *arguments = gtk_editable_get_text (GTK_EDITABLE (self->arguments_row));
  g_autofree char *directory = g_strstrip (g_strdup (gtk_editable_get_text (GTK_EDITABLE (self->directory_row))));
  g_autofree char *program = NULL;
  g_auto(GStrv) args = NULL;
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_autoptr(GPtrArray) environment = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GError) error = NULL;
  g_autofree char *output = NULL;
  GVariantBuilder dict;
  gboolean block, force;

  program = resolve_program (self, program_text);
  if (program == NULL)
    return;

  if (*arguments != '\0' && strspn (arguments, " \t\n") != strlen (arguments)
      && !g_shell_parse_argv (arguments, NULL, &args, &error))
    {
      g_autofree char *message = g_strdup_printf (_("The arguments cannot be read: %s"),
                                                  error->message);
      set_error (self, GTK_WIDGET (self->arguments_row), message);
      return;
    }

  if (*directory != '\0' && !g_file_test (directory, G_FILE_TEST_IS_DIR))
    {
      g_autofree char *message = g_strdup_printf (_("The working directory “%s” does not exist."),
                                                  directory);
      set_error (self, GTK_WIDGET (self->directory_row), message);
      return;
    }

  if (!resolve_output (self, &output, &force))
    return;

  g_variant_builder_init (&dict, G_VARIANT_TYPE ("a{ss}"));
  if (!environment_from_rows (self, environment, &dict))
    {
      g_variant_builder_clear (&dict);
      return;
    }
  g_ptr_array_add (environment, NULL);

  set_error (self, NULL, NULL);
  block = adw_combo_row_get_selected (self->policy_row) == 1;

  if (self->settings != NULL)
    {
      const char *const empty[] = { NULL };

      g_settings_delay (self->settings);
      g_settings_set_string (self->settings, "launch-program", program_text);
      g_settings_set_strv (self->settings, "launch-arguments",
                           args != NULL ? (const char *const *) args : empty);
      g_settings_set_string (self->settings, "launch-working-directory", directory);
      g_settings_set_value (self->settings, "launch-environment", g_variant_builder_end (&dict));
      g_settings_set_boolean (self->settings, "launch-cuda-tracing",
                              gtk_switch_get_active (self->cuda_switch));
      g_settings_set_boolean (self->settings, "launch-call-stacks",
                              gtk_switch_get_active (self->stacks_switch));
      g_settings_set_string (self->settings, "launch-ring-policy", block ? "block" : "drop");
      g_settings_apply (self->settings);
    }
  else
    g_variant_builder_clear (&dict);

  g_ptr_array_add (argv, program);
  for (char **a = args; a != NULL && *a != NULL; a++)
    g_ptr_array_add (argv, *a);
  g_ptr_array_add (argv, NULL);

  /* An empty working directory means the home folder (the schema's word). */
  cowscope_recording_page_record_to (gtk_window_get_transient_for (GTK_WINDOW (self)),
                                     (const char *const *) argv->pdata,
                                     *directory != '\0' ? directory : g_get_home_dir (),
                                     (const char *const *) environment->pdata, output, force,
                                     gtk_switch_get_active (self->cuda_switch),
                                     gtk_switch_get_active (self->stacks_switch), block);
  gtk_window_destroy (GTK_WINDOW (self));
}

/* Response of a chooser: puts the chosen path into the row it was for. */
static void
chooser_response_cb (GtkNativeDialog *chooser,
                     int              response,
                     AdwEntryRow     *row)
{
  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr(GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (chooser));
      g_autofree char *path = file != NULL ? g_file_get_path (file) : NULL;

      if (path != NULL)
        gtk_editable_set_text (GTK_EDITABLE (row), path);
    }
  g_object_unref (row);
  g_object_unref (chooser);
}

/* Shows a platform file chooser (@action) whose answer goes into @row. */
static void
choose_into_row (CowscopeRecordDialog *self,
                 AdwEntryRow          *row,
                 GtkFileChooserAction  action,
                 const char           *title)
{
  GtkFileChooserNative *chooser;
  const char *current = gtk_editable_get_text (GTK_EDITABLE (row));

  chooser = gtk_file_chooser_native_new (title, GTK_WINDOW (self), action,
                                         _("_Select"), _("_Cancel"));
  gtk_native_dialog_set_modal (GTK_NATIVE_DIALOG (chooser), TRUE);
  if (*current != '\0' && g_path_is_absolute (current))
    {
      g_autoptr(GFile) file = g_file_new_for_path (current);
      g_autoptr(GFile) folder = action == GTK_FILE_CHOOSER_ACTION_SELECT_FOLDER
                                  ? g_object_ref (file) : g_file_get_parent (file);

      if (folder != NULL)
        gtk_file_chooser_set_current_folder (GTK_FILE_CHOOSER (chooser), folder, NULL);
    }
  g_signal_connect (chooser, "response", G_CALLBACK (chooser_response_cb), g_object_ref (row));
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (chooser));
}

/* record-dialog.choose-program: picks the program with a file chooser. */
static void
choose_program_activated (GtkWidget  *widget,
                          const char *action_name,
                          GVariant   *parameter)
{
  CowscopeRecordDialog *self = COWSCOPE_RECORD_DIALOG (widget);

  choose_into_row (self, self->program_row, GTK_FILE_CHOOSER_ACTION_OPEN,
                   _("Choose the Program to Record"));
}

/* record-dialog.choose-directory: picks the working directory. */
static void
choose_directory_activated (GtkWidget  *widget,
                            const char *action_name,
                            GVariant   *parameter)
{
  CowscopeRecordDialog *self = COWSCOPE_RECORD_DIALOG (widget);

  choose_into_row (self, self->directory_row, GTK_FILE_CHOOSER_ACTION_SELECT_FOLDER,
                   _("Choose the Working Directory"));
}

/* Response of the session file chooser: the path goes into the row, and
 * the chooser (which asked before replacing a file) allows replacing it. */
static void
output_chooser_response_cb (GtkNativeDialog      *chooser,
                            int                   response,
                            CowscopeRecordDialog *self)
{
  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr(GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (chooser));
      g_autofree char *path = file != NULL ? g_file_get_path (file) : NULL;

      if (path != NULL)
        {
          gtk_editable_set_text (GTK_EDITABLE (self->output_row), path);
          g_free (self->replace_output);
          self->replace_output = g_steal_pointer (&path);
        }
    }
  g_object_unref (self);
  g_object_unref (chooser);
}

/* record-dialog.choose-output: where to save the session, with the
 * platform's save dialog (named after the program, in the folder of
 * the file typed, if any). */
static void
choose_output_activated (GtkWidget  *widget,
                         const char *action_name,
                         GVariant   *parameter)
{
  CowscopeRecordDialog *self = COWSCOPE_RECORD_DIALOG (widget);
  const char *current = gtk_editable_get_text (GTK_EDITABLE (self->output_row));
  const char *program = gtk_editable_get_text (GTK_EDITABLE (self->program_row));
  g_autofree char *base = *program != '\0' ? g_path_get_basename (program) : g_strdup ("program");
  g_autofree char *name = g_strdup_printf ("%s.cowscope", base);
  GtkFileChooserNative *chooser;
  g_autoptr(GtkFileFilter) sessions = gtk_file_filter_new ();

  chooser = gtk_file_chooser_native_new (_("Save the Session As"), GTK_WINDOW (self),
                                         GTK_FILE_CHOOSER_ACTION_SAVE, _("_Save"), _("_Cancel"));
  gtk_native_dialog_set_modal (GTK_NATIVE_DIALOG (chooser), TRUE);
  gtk_file_filter_set_name (sessions, _("Cowscope Sessions"));
  gtk_file_filter_add_pattern (sessions, "*.cowscope");
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (chooser), sessions);
  if (*current != '\0')
    {
      g_autofree char *resolved = g_canonicalize_filename (current, g_get_home_dir ());
      g_autoptr(GFile) file = g_file_new_for_path (resolved);
      g_autoptr(GFile) folder = g_file_get_parent (file);
      g_autofree char *file_name = g_file_get_basename (file);

      if (folder != NULL)
        gtk_file_chooser_set_current_folder (GTK_FILE_CHOOSER (chooser), folder, NULL);
      gtk_file_chooser_set_current_name (GTK_FILE_CHOOSER (chooser), file_name);
    }
  else
    gtk_file_chooser_set_current_name (GTK_FILE_CHOOSER (chooser), name);
  g_signal_connect (chooser, "response", G_CALLBACK (output_chooser_response_cb),
                    g_object_ref (self));
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (chooser));
}

/* Fills the fields from the launch-* keys of @settings (the last run). */
static void
load_settings (CowscopeRecordDialog *self)
{
  g_autofree char *program = NULL;
  g_autofree char *directory = NULL;
  g_autofree char *policy = NULL;
  g_auto(GStrv) args = NULL;
  g_autoptr(GVariant) environment = NULL;
  g_autoptr(GString) joined = g_string_new (NULL);
  GVariantIter iter;
  const char *name, *value;

  if (self->settings == NULL)
    return;

  program = g_settings_get_string (self->settings, "launch-program");
  args = g_settings_get_strv (self->settings, "launch-arguments");
  directory = g_settings_get_string (self->settings, "launch-working-directory");
  environment = g_settings_get_value (self->settings, "launch-environment");
  policy = g_settings_get_string (self->settings, "launch-ring-policy");

  for (char **a = args; *a != NULL; a++)
    {
      g_autofree char *quoted = NULL;

      /* Plain words stay readable; anything else is quoted. */
      if (**a != '\0' && strpbrk (*a, " \t\n'\"\\$`*?[]#~=|&;<>(){}") == NULL)
        quoted = g_strdup (*a);
      else
        quoted = g_shell_quote (*a);
      if (joined->len > 0)
        g_string_append_c (joined, ' ');
      g_string_append (joined, quoted);
    }

  gtk_editable_set_text (GTK_EDITABLE (self->program_row), program);
  gtk_editable_set_text (GTK_EDITABLE (self->arguments_row), joined->str);
  gtk_editable_set_text (GTK_EDITABLE (self->directory_row), directory);
  gtk_switch_set_active (self->cuda_switch,
                         g_settings_get_boolean (self->settings, "launch-cuda-tracing"));
  gtk_switch_set_active (self->stacks_switch,
                         g_settings_get_boolean (self->settings, "launch-call-stacks"));
  adw_combo_row_set_selected (self->policy_row, g_strcmp0 (policy, "block") == 0 ? 1 : 0);

  g_variant_iter_init (&iter, environment);
  while (g_variant_iter_next (&iter, "{&s&s}", &name, &value))
    add_variable_row (self, name, value);
  set_error (self, NULL, NULL);
}

static void
cowscope_record_dialog_finalize (GObject *object)
{
  CowscopeRecordDialog *self = COWSCOPE_RECORD_DIALOG (object);

  g_clear_object (&self->settings);
  g_clear_pointer (&self->error, g_free);
  g_clear_pointer (&self->replace_output, g_free);

  G_OBJECT_CLASS (cowscope_record_dialog_parent_class)->finalize (object);
}

static void
cowscope_record_dialog_get_property (GObject    *object,
                                     guint       prop_id,
                                     GValue     *value,
                                     GParamSpec *pspec)
{
  CowscopeRecordDialog *self = COWSCOPE_RECORD_DIALOG (object);

  switch (prop_id)
    {
    case PROP_SETTINGS:
      g_value_set_object (value, self->settings);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
cowscope_record_dialog_set_property (GObject      *object,
                                     guint         prop_id,
                                     const GValue *value,
                                     GParamSpec   *pspec)
{
  CowscopeRecordDialog *self = COWSCOPE_RECORD_DIALOG (object);

  switch (prop_id)
    {
    case PROP_SETTINGS:
      g_set_object (&self->settings, g_value_get_object (value));
      load_settings (self);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
cowscope_record_dialog_class_init (CowscopeRecordDialogClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->finalize = cowscope_record_dialog_finalize;
  object_class->get_property = cowscope_record_dialog_get_property;
  object_class->set_property = cowscope_record_dialog_set_property;

  properties[PROP_SETTINGS] =
    g_param_spec_object ("settings", NULL, NULL, G_TYPE_SETTINGS,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/org/cowscope/Cowscope/cowscope-record-dialog.ui");
  gtk_widget_class_bind_template_child (widget_class, CowscopeRecordDialog, program_row);
  gtk_widget_class_bind_template_child (widget_class, CowscopeRecordDialog, arguments_row);
  gtk_widget_class_bind_template_child (widget_class, CowscopeRecordDialog, directory_row);
  gtk_widget_class_bind_template_child (widget_class, CowscopeRecordDialog, output_row);
  gtk_widget_class_bind_template_child (widget_class, CowscopeRecordDialog, error_label);
  gtk_widget_class_bind_template_child (widget_class, CowscopeRecordDialog, environment_list);
  gtk_widget_class_bind_template_child (widget_class, CowscopeRecordDialog, cuda_switch);
  gtk_widget_class_bind_template_child (widget_class, CowscopeRecordDialog, stacks_switch);
  gtk_widget_class_bind_template_child (widget_class, CowscopeRecordDialog, policy_row);
  gtk_widget_class_bind_template_callback (widget_class, field_changed_cb);
  gtk_widget_class_bind_template_callback (widget_class, output_changed_cb);

  gtk_widget_class_install_action (widget_class, "record-dialog.record", NULL, record_activated);
  gtk_widget_class_install_action (widget_class, "record-dialog.add-variable", NULL,
                                   add_variable_activated);
  gtk_widget_class_install_action (widget_class, "record-dialog.choose-program", NULL,
                                   choose_program_activated);
  gtk_widget_class_install_action (widget_class, "record-dialog.choose-directory", NULL,
                                   choose_directory_activated);
  gtk_widget_class_install_action (widget_class, "record-dialog.choose-output", NULL,
                                   choose_output_activated);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Escape, 0, "window.close", NULL);
}

static void
cowscope_record_dialog_init (CowscopeRecordDialog *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  gtk_window_set_default_widget (GTK_WINDOW (self), NULL);
}

/**
 * cowscope_record_dialog_new:
 * @parent: (nullable): the window to record in (when it is empty) and to
 *   be transient for
 * @settings: (nullable): where the launch-* keys are read and saved
 *
 * Returns: (transfer none): a new modal dialog filled from @settings,
 *   not yet presented (it destroys itself when closed or on Record).
 */
CowscopeRecordDialog *
cowscope_record_dialog_new (GtkWindow *parent,
                            GSettings *settings)
{
  return g_object_new (COWSCOPE_TYPE_RECORD_DIALOG,
                       "transient-for", parent,
                       "application", parent != NULL ? gtk_window_get_application (parent) : NULL,
                       "settings", settings,
                       NULL);
}

/* Sets the program field (as a person would type it). */
void
cowscope_record_dialog_set_program (CowscopeRecordDialog *self,
                                    const char           *program)
{
  g_return_if_fail (COWSCOPE_IS_RECORD_DIALOG (self));

  gtk_editable_set_text (GTK_EDITABLE (self->program_row), program != NULL ? program : "");
}

/* Sets the arguments field (shell-like quoting). */
void
cowscope_record_dialog_set_arguments (CowscopeRecordDialog *self,
                                      const char           *arguments)
{
  g_return_if_fail (COWSCOPE_IS_RECORD_DIALOG (self));

  gtk_editable_set_text (GTK_EDITABLE (self->arguments_row), arguments != NULL ? arguments : "");
}

/* Sets the session file field (as a person would type it). */
void
cowscope_record_dialog_set_output (CowscopeRecordDialog *self,
                                   const char           *output)
{
  g_return_if_fail (COWSCOPE_IS_RECORD_DIALOG (self));

  gtk_editable_set_text (GTK_EDITABLE (self->output_row), output != NULL ? output : "");
}

/* Returns: (nullable): the inline error shown, or NULL when none is. */
const char *
cowscope_record_dialog_get_error (CowscopeRecordDialog *self)
{
  g_return_val_if_fail (COWSCOPE_IS_RECORD_DIALOG (self), NULL);

  return self->error;
}
