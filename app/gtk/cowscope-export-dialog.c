/* cowscope-export-dialog.c — the window's export action.
 *
 * A small modal window: the format (a compacted copy of the session, a
 * Chrome / Perfetto trace JSON, or a folder of CSV files), then the
 * platform's file chooser for where it goes.  The export itself is the
 * session model's, as the command-line tool's (cowscope-export.h, which
 * writes complete outputs or nothing) and runs in a GTask thread; a progress bar shows how far
 * it got (it pulses for the database copy, whose total SQLite does not
 * tell) and Cancel stops it, leaving nothing behind.  The outcome, good or
 * bad, is a toast in the window the dialog belongs to.
 */
#include "cowscope-config.h"

#include <glib/gi18n.h>

#include "cowscope-export.h"
#include "cowscope-export-dialog.h"
#include "cowscope-window.h"

struct _CowscopeExportDialog
{
  AdwWindow             parent_instance;

  GtkCheckButton       *format_buttons[3];
  GtkWidget            *export_button;
  GtkWidget            *cancel_button;
  GtkProgressBar       *progress;
  GtkWidget            *format_group;

  GFile                *session;
  gboolean              busy;
  guint                 progress_id;
  struct _ExportJob    *job;          /* the export running, or NULL */
};

G_DEFINE_FINAL_TYPE (CowscopeExportDialog, cowscope_export_dialog, ADW_TYPE_WINDOW)

enum {
  PROP_0,
  PROP_SESSION,
  PROP_BUSY,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

/* What the export thread needs; owned by the task. */
typedef struct _ExportJob
{
  CowscopeExportFormat  format;
  char                 *session_path;
  char                 *destination;
  GCancellable         *cancellable;
  int                   permille;     /* atomic: done in 1/1000, -1 unknown */
} ExportJob;

static void
export_job_free (ExportJob *job)
{
  g_free (job->session_path);
  g_free (job->destination);
  g_object_unref (job->cancellable);
  g_free (job);
}

/* Export thread: records how far it got; FALSE stops the export. */
static gboolean
export_progress_cb (double   fraction,
                    gpointer user_data)
{
  ExportJob *job = user_data;

  g_atomic_int_set (&job->permille, fraction < 0 ? -1 : (int) (fraction * 1000));
  return !g_cancellable_is_cancelled (job->cancellable);
}

/* The export thread: opens the session read-only (defensively) and
 * writes @job->destination in its format, replacing what the user chose
 * to overwrite.  Returns TRUE or the error. */
static void
export_thread (GTask        *task,
               gpointer      source_object,
               gpointer      task_data,
               GCancellable *cancellable)
{
  ExportJob *job = task_data;
  g_autoptr(CowscopeSessionTables) session = NULL;
  GError *error = NULL;
  gboolean ok = FALSE;
  CowscopeExportProgress progress = { .func = export_progress_cb, .user_data = job };

  session = cowscope_session_tables_open (job->session_path, &error);
  if (session != NULL)
    {
      switch (job->format)
        {
        case COWSCOPE_EXPORT_FORMAT_SESSION:
          ok = cowscope_export_sqlite (session, job->destination, TRUE, &progress, &error);
          break;
        case COWSCOPE_EXPORT_FORMAT_CHROME:
          ok = cowscope_export_chrome (session, job->destination, TRUE, &progress, &error);
          break;
        case COWSCOPE_EXPORT_FORMAT_CSV:
          ok = cowscope_export_csv (session, job->destination, TRUE, &progress, &error);
          break;
        default:
          g_assert_not_reached ();
        }
    }

  if (ok)
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_error (task, error);
}

/* Shows @message as a toast in the window this dialog belongs to. */
static void
toast_in_parent (CowscopeExportDialog *self,
                 const char           *message)
{
  GtkWindow *parent = gtk_window_get_transient_for (GTK_WINDOW (self));

  if (COWSCOPE_IS_WINDOW (parent))
    cowscope_window_add_toast (COWSCOPE_WINDOW (parent), message);
  else
    g_message ("%s", message);
}

/* Shows how far the export got: a fraction, or a pulse while unknown. */
static gboolean
progress_cb (gpointer user_data)
{
  CowscopeExportDialog *self = user_data;
  int permille = self->job != NULL ? g_atomic_int_get (&self->job->permille) : -1;

  if (permille < 0)
    {
      gtk_progress_bar_set_text (self->progress, _("Exporting…"));
      gtk_progress_bar_pulse (self->progress);
    }
  else
    {
      g_autofree char *text = g_strdup_printf (_("Exporting… %d %%"), permille / 10);

      gtk_progress_bar_set_text (self->progress, text);
      gtk_progress_bar_set_fraction (self->progress, permille / 1000.0);
    }
  return G_SOURCE_CONTINUE;
}

/* Sets busy: the progress bar shows and nothing can be changed or closed. */
static void
set_busy (CowscopeExportDialog *self,
          gboolean              busy)
{
  if (self->busy == busy)
    return;
  self->busy = busy;
  gtk_widget_set_visible (GTK_WIDGET (self->progress), busy);
  gtk_widget_set_sensitive (self->format_group, !busy);
  gtk_widget_set_sensitive (self->export_button, !busy);
  gtk_window_set_deletable (GTK_WINDOW (self), !busy);
  if (busy)
    self->progress_id = g_timeout_add (100, progress_cb, self);
  else
    g_clear_handle_id (&self->progress_id, g_source_remove);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_BUSY]);
}

/* The export finished: a toast says where it went or why not; the
 * dialog closes. */
static void
export_done_cb (GObject      *source,
                GAsyncResult *result,
                gpointer      user_data)
{
  CowscopeExportDialog *self = COWSCOPE_EXPORT_DIALOG (source);
  ExportJob *job = g_task_get_task_data (G_TASK (result));
  g_autoptr(GError) error = NULL;
  g_autofree char *text = NULL;

  if (g_task_propagate_boolean (G_TASK (result), &error))
    {
      g_autofree char *name = g_filename_display_basename (job->destination);

      text = g_strdup_printf (_("Exported to “%s”"), name);
    }
  else if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    text = g_strdup (_("Export cancelled"));
  else
    text = g_strdup_printf (_("Could not export the session: %s"), error->message);

  self->job = NULL;
  set_busy (self, FALSE);
  toast_in_parent (self, text);
  gtk_window_destroy (GTK_WINDOW (self));
}

/* A file name for @format next to the session's own name. */
static char *
suggested_name (CowscopeExportDialog *self,
                CowscopeExportFormat  format)
{
  g_autofree char *base = g_file_get_basename (self->session);
  char *dot = strrchr (base, '.');

  if (dot != NULL && dot != base)
    *dot = '\0';
  switch (format)
    {
    case COWSCOPE_EXPORT_FORMAT_CHROME:
      return g_strdup_printf ("%s.json", base);
    case COWSCOPE_EXPORT_FORMAT_CSV:
      /* Translators: the folder name of a CSV export; %s is the session's name */
      return g_strdup_printf (_("%s-csv"), base);
    case COWSCOPE_EXPORT_FORMAT_SESSION:
    default:
      /* Translators: the file name of an exported copy; %s is the session's name */
      return g_strdup_printf (_("%s-copy.cowscope"), base);
    }
}

/* Response of the file chooser: exports there. */
static void
chooser_response_cb (GtkNativeDialog      *chooser,
                     int                   response,
                     CowscopeExportDialog *self)
{
  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr(GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (chooser));

      if (file != NULL)
        cowscope_export_dialog_export_to (self, file);
    }
  g_object_unref (chooser);
  g_object_unref (self);
}

/* export.choose: asks where to write, with the platform's file chooser
 * (a new file name; for CSV, the name of the folder to create). */
static void
choose_activated (GtkWidget  *widget,
                  const char *action_name,
                  GVariant   *parameter)
{
  CowscopeExportDialog *self = COWSCOPE_EXPORT_DIALOG (widget);
  CowscopeExportFormat format = cowscope_export_dialog_get_format (self);
  g_autofree char *name = suggested_name (self, format);
  g_autoptr(GFile) folder = g_file_get_parent (self->session);
  g_autoptr(GtkFileFilter) filter = gtk_file_filter_new ();
  GtkFileChooserNative *chooser;
  const char *title;

  switch (format)
    {
    case COWSCOPE_EXPORT_FORMAT_CHROME:
      title = _("Export a Chrome / Perfetto Trace");
      gtk_file_filter_set_name (filter, _("Trace Event JSON"));
      gtk_file_filter_add_pattern (filter, "*.json");
      break;
    case COWSCOPE_EXPORT_FORMAT_CSV:
      title = _("Export CSV Tables to a New Folder");
      gtk_file_filter_set_name (filter, _("Folders"));
      gtk_file_filter_add_mime_type (filter, "inode/directory");
      break;
    case COWSCOPE_EXPORT_FORMAT_SESSION:
    default:
      title = _("Export a Copy of the Session");
      gtk_file_filter_set_name (filter, _("Cowscope Sessions"));
      gtk_file_filter_add_pattern (filter, "*.cowscope");
      break;
    }

  chooser = gtk_file_chooser_native_new (title, GTK_WINDOW (self), GTK_FILE_CHOOSER_ACTION_SAVE,
                                         _("_Export"), _("_Cancel"));
  gtk_native_dialog_set_modal (GTK_NATIVE_DIALOG (chooser), TRUE);
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (chooser), filter);
  if (folder != NULL)
    gtk_file_chooser_set_current_folder (GTK_FILE_CHOOSER (chooser), folder, NULL);
  gtk_file_chooser_set_current_name (GTK_FILE_CHOOSER (chooser), name);
  g_signal_connect (chooser, "response", G_CALLBACK (chooser_response_cb), g_object_ref (self));
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (chooser));
}

/* export.cancel: stops the export running (its end closes the dialog),
 * or closes the dialog. */
static void
cancel_activated (GtkWidget  *widget,
                  const char *action_name,
                  GVariant   *parameter)
{
  CowscopeExportDialog *self = COWSCOPE_EXPORT_DIALOG (widget);

  if (self->job != NULL)
    g_cancellable_cancel (self->job->cancellable);
  else
    gtk_window_close (GTK_WINDOW (self));
}

/* One format row: a radio button as prefix, activating the row selects it. */
static GtkWidget *
format_row (CowscopeExportDialog *self,
            guint                 index,
            const char           *title,
            const char           *subtitle)
{
  GtkWidget *row = adw_action_row_new ();
  GtkWidget *check = gtk_check_button_new ();

  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), title);
  adw_preferences_row_set_use_underline (ADW_PREFERENCES_ROW (row), TRUE);
  adw_action_row_set_subtitle (ADW_ACTION_ROW (row), subtitle);
  gtk_widget_set_valign (check, GTK_ALIGN_CENTER);
  adw_action_row_add_prefix (ADW_ACTION_ROW (row), check);
  adw_action_row_set_activatable_widget (ADW_ACTION_ROW (row), check);
  if (index > 0)
    gtk_check_button_set_group (GTK_CHECK_BUTTON (check), self->format_buttons[0]);
  self->format_buttons[index] = GTK_CHECK_BUTTON (check);
  return row;
}

/* Builds the dialog's widgets (no template: it is small). */
static void
build_ui (CowscopeExportDialog *self)
{
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);
  GtkWidget *header = adw_header_bar_new ();
  GtkWidget *content = gtk_box_new (GTK_ORIENTATION_VERTICAL, 18);
  GtkWidget *group = adw_preferences_group_new ();

  adw_header_bar_set_show_end_title_buttons (ADW_HEADER_BAR (header), FALSE);
  self->cancel_button = gtk_button_new_with_mnemonic (_("_Cancel"));
  gtk_actionable_set_action_name (GTK_ACTIONABLE (self->cancel_button), "export.cancel");
  adw_header_bar_pack_start (ADW_HEADER_BAR (header), self->cancel_button);
  self->export_button = gtk_button_new_with_mnemonic (_("_Export…"));
  gtk_actionable_set_action_name (GTK_ACTIONABLE (self->export_button), "export.choose");
  gtk_widget_add_css_class (self->export_button, "suggested-action");
  adw_header_bar_pack_end (ADW_HEADER_BAR (header), self->export_button);
  gtk_box_append (GTK_BOX (box), header);

  adw_preferences_group_set_title (ADW_PREFERENCES_GROUP (group), _("Format"));
  adw_preferences_group_add (ADW_PREFERENCES_GROUP (group),
                             format_row (self, COWSCOPE_EXPORT_FORMAT_SESSION,
                                         _("_Session Copy"),
                                         _("A compacted copy of the session database, for Cowscope or the sqlite3 shell")));
  adw_preferences_group_add (ADW_PREFERENCES_GROUP (group),
                             format_row (self, COWSCOPE_EXPORT_FORMAT_CHROME,
                                         _("_Chrome / Perfetto Trace"),
                                         _("Trace Event JSON for the Perfetto UI (ui.perfetto.dev)")));
  adw_preferences_group_add (ADW_PREFERENCES_GROUP (group),
                             format_row (self, COWSCOPE_EXPORT_FORMAT_CSV,
                                         _("CSV _Tables"),
                                         _("A new folder with one CSV file per table")));
  gtk_check_button_set_active (self->format_buttons[0], TRUE);
  self->format_group = group;

  self->progress = GTK_PROGRESS_BAR (gtk_progress_bar_new ());
  gtk_progress_bar_set_text (self->progress, _("Exporting…"));
  gtk_progress_bar_set_show_text (self->progress, TRUE);
  gtk_widget_set_visible (GTK_WIDGET (self->progress), FALSE);

  gtk_widget_set_margin_top (content, 18);
  gtk_widget_set_margin_bottom (content, 18);
  gtk_widget_set_margin_start (content, 18);
  gtk_widget_set_margin_end (content, 18);
  gtk_box_append (GTK_BOX (content), group);
  gtk_box_append (GTK_BOX (content), GTK_WIDGET (self->progress));
  gtk_box_append (GTK_BOX (box), content);

  adw_window_set_content (ADW_WINDOW (self), box);
}

static void
cowscope_export_dialog_dispose (GObject *object)
{
  CowscopeExportDialog *self = COWSCOPE_EXPORT_DIALOG (object);

  g_clear_handle_id (&self->progress_id, g_source_remove);

  G_OBJECT_CLASS (cowscope_export_dialog_parent_class)->dispose (object);
}

static void
cowscope_export_dialog_finalize (GObject *object)
{
  CowscopeExportDialog *self = COWSCOPE_EXPORT_DIALOG (object);

  g_clear_object (&self->session);

  G_OBJECT_CLASS (cowscope_export_dialog_parent_class)->finalize (object);
}

static void
cowscope_export_dialog_get_property (GObject    *object,
                                     guint       prop_id,
                                     GValue     *value,
                                     GParamSpec *pspec)
{
  CowscopeExportDialog *self = COWSCOPE_EXPORT_DIALOG (object);

  switch (prop_id)
    {
    case PROP_SESSION:
      g_value_set_object (value, self->session);
      break;
    case PROP_BUSY:
      g_value_set_boolean (value, self->busy);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
cowscope_export_dialog_set_property (GObject      *object,
                                     guint         prop_id,
                                     const GValue *value,
                                     GParamSpec   *pspec)
{
  CowscopeExportDialog *self = COWSCOPE_EXPORT_DIALOG (object);

  switch (prop_id)
    {
    case PROP_SESSION:
      g_set_object (&self->session, g_value_get_object (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
cowscope_export_dialog_class_init (CowscopeExportDialogClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = cowscope_export_dialog_dispose;
  object_class->finalize = cowscope_export_dialog_finalize;
  object_class->get_property = cowscope_export_dialog_get_property;
  object_class->set_property = cowscope_export_dialog_set_property;

  properties[PROP_SESSION] =
    g_param_spec_object ("session", NULL, NULL, G_TYPE_FILE,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  properties[PROP_BUSY] =
    g_param_spec_boolean ("busy", NULL, NULL, FALSE,
                          G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  gtk_widget_class_install_action (widget_class, "export.choose", NULL, choose_activated);
  gtk_widget_class_install_action (widget_class, "export.cancel", NULL, cancel_activated);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Escape, 0, "export.cancel", NULL);
}

static void
cowscope_export_dialog_init (CowscopeExportDialog *self)
{
  gtk_window_set_title (GTK_WINDOW (self), _("Export the Session"));
  gtk_window_set_modal (GTK_WINDOW (self), TRUE);
  gtk_window_set_default_size (GTK_WINDOW (self), 520, -1);
  build_ui (self);
}

/**
 * cowscope_export_dialog_new:
 * @parent: the window showing @session (toasts go there)
 * @session: the session file to export
 *
 * Returns: (transfer none): a new modal export dialog, not yet presented;
 *   it destroys itself when closed or when an export ends.
 */
CowscopeExportDialog *
cowscope_export_dialog_new (GtkWindow *parent,
                            GFile     *session)
{
  g_return_val_if_fail (G_IS_FILE (session), NULL);

  return g_object_new (COWSCOPE_TYPE_EXPORT_DIALOG,
                       "transient-for", parent,
                       "session", session,
                       NULL);
}

/* Selects @format (as clicking its row would). */
void
cowscope_export_dialog_set_format (CowscopeExportDialog *self,
                                   CowscopeExportFormat  format)
{
  g_return_if_fail (COWSCOPE_IS_EXPORT_DIALOG (self));
  g_return_if_fail (format <= COWSCOPE_EXPORT_FORMAT_CSV);

  gtk_check_button_set_active (self->format_buttons[format], TRUE);
}

/* The selected format. */
CowscopeExportFormat
cowscope_export_dialog_get_format (CowscopeExportDialog *self)
{
  g_return_val_if_fail (COWSCOPE_IS_EXPORT_DIALOG (self), COWSCOPE_EXPORT_FORMAT_SESSION);

  for (guint i = 0; i < G_N_ELEMENTS (self->format_buttons); i++)
    if (gtk_check_button_get_active (self->format_buttons[i]))
      return (CowscopeExportFormat) i;
  return COWSCOPE_EXPORT_FORMAT_SESSION;
}

/**
 * cowscope_export_dialog_export_to:
 * @destination: a local file (for CSV, the folder to create)
 *
 * Exports the session in the selected format to @destination in a
 * worker thread (what the file chooser's answer does); @destination is
 * replaced if it exists.  The dialog is busy meanwhile, then shows a
 * toast in its window and closes.  Ignored while an export runs.
 */
void
cowscope_export_dialog_export_to (CowscopeExportDialog *self,
                                  GFile                *destination)
{
  g_autoptr(GTask) task = NULL;
  ExportJob *job;

  g_return_if_fail (COWSCOPE_IS_EXPORT_DIALOG (self));
  g_return_if_fail (G_IS_FILE (destination));

  if (self->busy)
    return;

  job = g_new0 (ExportJob, 1);
  job->format = cowscope_export_dialog_get_format (self);
  job->session_path = g_file_get_path (self->session);
  job->destination = g_file_get_path (destination);
  job->cancellable = g_cancellable_new ();
  job->permille = -1;
  if (job->session_path == NULL || job->destination == NULL)
    {
      export_job_free (job);
      toast_in_parent (self, _("Could not export the session: only local files can be used"));
      gtk_window_destroy (GTK_WINDOW (self));
      return;
    }

  self->job = job;
  set_busy (self, TRUE);
  task = g_task_new (self, NULL, export_done_cb, NULL);
  g_task_set_source_tag (task, cowscope_export_dialog_export_to);
  g_task_set_task_data (task, job, (GDestroyNotify) export_job_free);
  g_task_run_in_thread (task, export_thread);
}

/* TRUE while an export runs. */
gboolean
cowscope_export_dialog_is_busy (CowscopeExportDialog *self)
{
  g_return_val_if_fail (COWSCOPE_IS_EXPORT_DIALOG (self), FALSE);

  return self->busy;
}
