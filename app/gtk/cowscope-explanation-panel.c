/* cowscope-explanation-panel.c — see cowscope-explanation-panel.h. */
#include "cowscope-config.h"

#include <adwaita.h>
#include <glib/gi18n.h>
#include <inttypes.h>

#include "cowscope-explanation-panel.h"
#include "cowscope-stack-frame.h"

struct _CowscopeExplanationPanel {
  GtkWidget parent_instance;
  GtkStack *stack;
  AdwStatusPage *empty_page;
  GtkBox *story;

  CowscopeViewState *state;
  gulong selected_handler;
  GCancellable *cancellable;
  CowscopeCopyExplanation *explanation;
  GString *text; /* the story as plain text */
  gboolean ready;
};

G_DEFINE_FINAL_TYPE (CowscopeExplanationPanel, cowscope_explanation_panel, GTK_TYPE_WIDGET)

enum { PROP_0, PROP_VIEW_STATE, PROP_EXPLANATION, PROP_READY, N_PROPS };
static GParamSpec *properties[N_PROPS];

/* "+12.345 ms" from the session's start. */
static char *
format_time (CowscopeExplanationPanel *self, gint64 ns)
{
  gint64 rel = ns - cowscope_session_document_get_start_ns (cowscope_view_state_get_document (self->state));
  if (rel < 1000000)
    return g_strdup_printf (_("+%.1f µs"), (double) rel / 1e3);
  if (rel < 1000000000)
    return g_strdup_printf (_("+%.3f ms"), (double) rel / 1e6);
  return g_strdup_printf (_("+%.3f s"), (double) rel / 1e9);
}

/* "1.2 ms" for a duration. */
static char *
format_duration (gint64 ns)
{
  if (ns < 1000)
    return g_strdup_printf (_("%" PRId64 " ns"), ns);
  if (ns < 1000000)
    return g_strdup_printf (_("%.1f µs"), (double) ns / 1e3);
  return g_strdup_printf (_("%.2f ms"), (double) ns / 1e6);
}

/* The thread's name, or "thread N". */
static char *
thread_label (CowscopeExplanationPanel *self, guint32 pid, gint64 tid)
{
  const char *name = cowscope_session_document_thread_name (
    cowscope_view_state_get_document (self->state), pid, tid);
  if (name != NULL)
    return g_strdup (name);
  return g_strdup_printf (_("thread %" PRId64), tid);
}

/* A tensor as the graph names it: “name”, or "tensor N" without one. */
static char *
tensor_text (const char *name, guint64 id)
{
  g_autofree char *label = cowscope_tensor_label (name, id);
  return name != NULL ? g_strdup_printf ("“%s”", label) : g_steal_pointer (&label);
}

/* Shows a toast when the panel sits in a toast overlay. */
static void
toast (CowscopeExplanationPanel *self, const char *message)
{
  GtkWidget *overlay = gtk_widget_get_ancestor (GTK_WIDGET (self), ADW_TYPE_TOAST_OVERLAY);
  if (overlay != NULL)
    adw_toast_overlay_add_toast (ADW_TOAST_OVERLAY (overlay), adw_toast_new (message));
}

/* A frame row was activated: "file:line" to the clipboard, and the file
 * opened (asynchronously) when it exists on this machine. */
static void
frame_activated_cb (GtkListBox *list, GtkListBoxRow *row, CowscopeExplanationPanel *self)
{
  CowscopeStackFrame *frame = g_object_get_data (G_OBJECT (row), "frame");
  const char *file = cowscope_stack_frame_get_file (frame);
  g_autofree char *where = NULL;
  if (file == NULL)
    {
      where = g_strdup (cowscope_stack_frame_get_display (frame));
      gdk_clipboard_set_text (gtk_widget_get_clipboard (GTK_WIDGET (self)), where);
      toast (self, _("Copied the frame (no source file recorded)"));
      return;
    }
  where = g_strdup_printf ("%s:%" G_GINT64_FORMAT, file, cowscope_stack_frame_get_line (frame));
  gdk_clipboard_set_text (gtk_widget_get_clipboard (GTK_WIDGET (self)), where);
  g_autofree char *text = g_strdup_printf (_("Copied “%s”"), where);
  toast (self, text);
  if (g_path_is_absolute (file) && g_file_test (file, G_FILE_TEST_IS_REGULAR))
    {
      g_autoptr (GFile) gfile = g_file_new_for_path (file);
      g_autofree char *uri = g_file_get_uri (gfile);
      g_app_info_launch_default_for_uri_async (uri, NULL, NULL, NULL, NULL);
    }
}

/* Appends one step: an icon, a title, an optional body and stack. */
static void
add_step (CowscopeExplanationPanel *self, const char *icon, const char *title, const char *body,
          GListModel *stack)
{
  GtkWidget *card = gtk_box_new (GTK_ORIENTATION_VERTICAL, 4);
  gtk_widget_add_css_class (card, "card");
  gtk_widget_add_css_class (card, "cowscope-story-step");
  GtkWidget *head = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 8);
  gtk_widget_set_margin_start (head, 12);
  gtk_widget_set_margin_end (head, 12);
  gtk_widget_set_margin_top (head, 10);
  gtk_widget_set_margin_bottom (head, body != NULL || stack != NULL ? 0 : 10);
  GtkWidget *image = gtk_image_new_from_icon_name (icon);
  gtk_widget_set_valign (image, GTK_ALIGN_START);
  gtk_box_append (GTK_BOX (head), image);
  GtkWidget *label = gtk_label_new (title);
  gtk_label_set_wrap (GTK_LABEL (label), TRUE);
  gtk_label_set_xalign (GTK_LABEL (label), 0);
  gtk_widget_add_css_class (label, "heading");
  gtk_box_append (GTK_BOX (head), label);
  gtk_box_append (GTK_BOX (card), head);
  g_string_append_printf (self->text, "%s\n", title);

  if (body != NULL)
    {
      GtkWidget *b = gtk_label_new (body);
      gtk_label_set_wrap (GTK_LABEL (b), TRUE);
      gtk_label_set_xalign (GTK_LABEL (b), 0);
      gtk_label_set_selectable (GTK_LABEL (b), TRUE);
      gtk_widget_set_margin_start (b, 36);
      gtk_widget_set_margin_end (b, 12);
      gtk_widget_set_margin_bottom (b, stack != NULL ? 2 : 10);
      gtk_widget_add_css_class (b, "dim-label");
      gtk_box_append (GTK_BOX (card), b);
      g_string_append_printf (self->text, "%s\n", body);
    }
  if (stack != NULL && g_list_model_get_n_items (stack) > 0)
    {
      GtkWidget *list = gtk_list_box_new ();
      gtk_list_box_set_selection_mode (GTK_LIST_BOX (list), GTK_SELECTION_NONE);
      gtk_widget_add_css_class (list, "cowscope-stack");
      gtk_widget_set_margin_start (list, 30);
      gtk_widget_set_margin_end (list, 8);
      gtk_widget_set_margin_bottom (list, 8);
      for (guint i = 0; i < g_list_model_get_n_items (stack) && i < 16; i++)
        {
          g_autoptr (CowscopeStackFrame) frame = g_list_model_get_item (stack, i);
          GtkWidget *row = gtk_list_box_row_new ();
          GtkWidget *fl = gtk_label_new (cowscope_stack_frame_get_display (frame));
          gtk_label_set_xalign (GTK_LABEL (fl), 0);
          gtk_label_set_ellipsize (GTK_LABEL (fl), PANGO_ELLIPSIZE_MIDDLE);
          gtk_widget_add_css_class (fl, "monospace");
          gtk_widget_add_css_class (fl, "caption");
          gtk_widget_set_margin_start (fl, 6);
          gtk_widget_set_margin_top (fl, 3);
          gtk_widget_set_margin_bottom (fl, 3);
          gtk_list_box_row_set_child (GTK_LIST_BOX_ROW (row), fl);
          gtk_widget_set_tooltip_text (row, _("Copy file:line; open the file when it is here"));
          g_object_set_data_full (G_OBJECT (row), "frame", g_object_ref (frame), g_object_unref);
          gtk_list_box_append (GTK_LIST_BOX (list), row);
          g_string_append_printf (self->text, "  %s\n", cowscope_stack_frame_get_display (frame));
        }
      g_signal_connect (list, "row-activated", G_CALLBACK (frame_activated_cb), self);
      gtk_box_append (GTK_BOX (card), list);
    }
  gtk_box_append (self->story, card);
}

/* Removes the story's steps. */
static void
clear_story (CowscopeExplanationPanel *self)
{
  GtkWidget *child;
  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self->story))) != NULL)
    gtk_box_remove (self->story, child);
  g_string_truncate (self->text, 0);
}

/* The lazy clone step, common to copies and violations. */
static void
add_lazy_clone_step (CowscopeExplanationPanel *self, CowscopeCopyExplanation *ex)
{
  if (cowscope_copy_explanation_get_lazy_clone_seq (ex) < 0)
    {
      add_step (self, "edit-copy-symbolic", _("The lazy clone that made the sharing was not recorded"),
                NULL, NULL);
      return;
    }
  g_autofree char *when = format_time (self, cowscope_copy_explanation_get_lazy_clone_ns (ex));
  g_autofree char *thread = thread_label (self, cowscope_copy_explanation_get_pid (ex),
                                          cowscope_copy_explanation_get_lazy_clone_tid (ex));
  /* Translators: "Lazy clone by reshape() at +1.2 ms on thread main" */
  g_autofree char *title = g_strdup_printf (_("Lazy clone by %s() at %s on thread %s"),
                                            cowscope_copy_explanation_get_lazy_clone_op (ex), when,
                                            thread);
  g_autofree char *result = tensor_text (cowscope_copy_explanation_get_lazy_clone_result_name (ex),
                                         cowscope_copy_explanation_get_lazy_clone_result_tensor (ex));
  g_autofree char *source = tensor_text (cowscope_copy_explanation_get_lazy_clone_source_name (ex),
                                         cowscope_copy_explanation_get_lazy_clone_source_tensor (ex));
  /* Translators: the tensors are “name” or "tensor N", as the graph shows them */
  g_autofree char *body = g_strdup_printf (
    _("It made %s (storage %" PRIu64 ") a lazy copy of %s (storage %" PRIu64 "): both "
      "shared the same bytes."),
    result, cowscope_copy_explanation_get_lazy_clone_result_storage (ex), source,
    cowscope_copy_explanation_get_lazy_clone_source_storage (ex));
  add_step (self, "edit-copy-symbolic", title, body,
            cowscope_copy_explanation_get_lazy_clone_stack (ex));
}

/* Builds the story of a materialization. */
static void
tell_materialization (CowscopeExplanationPanel *self, CowscopeCopyExplanation *ex)
{
  add_lazy_clone_step (self, ex);

  g_autofree char *when = format_time (self, cowscope_copy_explanation_get_begin_ns (ex));
  g_autofree char *thread = thread_label (self, cowscope_copy_explanation_get_pid (ex),
                                          cowscope_copy_explanation_get_tid (ex));
  g_autofree char *write = g_strdup_printf (_("Write by %s() at %s on thread %s"),
                                            cowscope_copy_explanation_get_op (ex), when, thread);
  g_autofree char *written = tensor_text (cowscope_copy_explanation_get_tensor_name (ex),
                                          cowscope_copy_explanation_get_tensor_id (ex));
  g_autofree char *write_body = g_strdup_printf (
    /* Translators: the tensor is “name” or "tensor N" */
    _("Writing to %s needs storage %" PRIu64 " to own its bytes."), written,
    cowscope_copy_explanation_get_storage_id (ex));
  add_step (self, "document-edit-symbolic", write, write_body,
            cowscope_copy_explanation_get_stack (ex));

  const char *mode = cowscope_copy_explanation_get_mode (ex);
  g_autofree char *size = g_format_size (cowscope_copy_explanation_get_nbytes (ex));
  g_autofree char *title = NULL;
  const char *icon = "emblem-documents-symbolic";
  if (g_strcmp0 (mode, "steal") == 0)
    {
      title = g_strdup (_("Stole the bytes — last reference"));
      icon = "emblem-ok-symbolic";
    }
  else if (g_strcmp0 (mode, "failed") == 0)
    {
      title = g_strdup_printf (_("The copy of %s failed"), size);
      icon = "dialog-error-symbolic";
    }
  else if (cowscope_copy_explanation_get_copy_discarded (ex))
    title = g_strdup_printf (_("Copied %s, then discarded the copy — another thread finished first"),
                             size);
  else
    title = g_strdup_printf (_("Copied %s — other storages still shared the bytes"), size);
  add_step (self, icon, title, cowscope_copy_explanation_get_reason (ex), NULL);

  gint64 wait = cowscope_copy_explanation_get_lock_wait_ns (ex);
  g_autofree char *wait_text = format_duration (wait);
  g_autofree char *lock = wait > 0
                            ? g_strdup_printf (_("Waited %s for the context’s exclusive lock"), wait_text)
                            : g_strdup (_("No wait for the context’s exclusive lock"));
  g_autofree char *total = format_duration (cowscope_copy_explanation_get_end_ns (ex) -
                                            cowscope_copy_explanation_get_begin_ns (ex));
  g_autofree char *lock_body = g_strdup_printf (_("The whole materialization took %s."), total);
  add_step (self, "system-lock-screen-symbolic", lock, lock_body, NULL);

  if (cowscope_copy_explanation_get_cuda_id (ex) >= 0)
    {
      g_autofree char *cuda_size = g_format_size (cowscope_copy_explanation_get_cuda_bytes (ex));
      g_autofree char *took = format_duration (cowscope_copy_explanation_get_cuda_end_ns (ex) -
                                               cowscope_copy_explanation_get_cuda_start_ns (ex));
      g_autofree char *cuda = g_strdup_printf (_("CUDA %s of %s took %s"),
                                               cowscope_copy_explanation_get_cuda_kind (ex),
                                               cuda_size, took);
      g_autofree char *cuda_body = g_strdup_printf (
        _("Device %" PRId64 ", stream %" PRId64),
        cowscope_copy_explanation_get_cuda_device (ex), cowscope_copy_explanation_get_cuda_stream (ex));
      add_step (self, "video-display-symbolic", cuda, cuda_body, NULL);
    }
}

/* Builds the story of a simulate-mode violation. */
static void
tell_violation (CowscopeExplanationPanel *self, CowscopeCopyExplanation *ex)
{
  add_lazy_clone_step (self, ex);
  const char *writer = cowscope_copy_explanation_get_writer_name (ex);
  const char *accessor = cowscope_copy_explanation_get_accessor_name (ex);
  g_autofree char *writer_text = tensor_text (writer, cowscope_copy_explanation_get_writer_tensor (ex));
  g_autofree char *accessor_text = tensor_text (accessor,
                                                cowscope_copy_explanation_get_accessor_tensor (ex));
  g_autofree char *w = g_strdup_printf (_("Write to %s (generation %" PRId64 ")"),
                                        writer_text,
                                        cowscope_copy_explanation_get_writer_generation (ex));
  add_step (self, "document-edit-symbolic", w,
            _("In simulate mode the write stays visible to the lazy copies that alias it."), NULL);
  g_autofree char *when = format_time (self, cowscope_copy_explanation_get_begin_ns (ex));
  g_autofree char *thread = thread_label (self, cowscope_copy_explanation_get_pid (ex),
                                          cowscope_copy_explanation_get_tid (ex));
  gboolean is_write = g_strcmp0 (cowscope_copy_explanation_get_access (ex), "write") == 0;
  g_autofree char *a = g_strdup_printf (is_write ? _("Conflicting write to %s by %s() at %s on thread %s")
                                                 : _("Conflicting read of %s by %s() at %s on thread %s"),
                                        accessor_text,
                                        cowscope_copy_explanation_get_op (ex), when, thread);
  g_autofree char *body = g_strdup_printf (
    _("It saw generation %" PRId64 ": the program relies on aliasing that a real copy would break."),
    cowscope_copy_explanation_get_accessor_generation (ex));
  add_step (self, "dialog-warning-symbolic", a, body, cowscope_copy_explanation_get_stack (ex));
}

/* Shows the explanation: the summary, the story; highlights its objects
 * and brings it into view. */
static void
show_explanation (CowscopeExplanationPanel *self, CowscopeCopyExplanation *ex)
{
  clear_story (self);
  GtkWidget *summary = gtk_label_new (cowscope_copy_explanation_get_summary (ex));
  gtk_label_set_wrap (GTK_LABEL (summary), TRUE);
  gtk_label_set_xalign (GTK_LABEL (summary), 0);
  gtk_widget_add_css_class (summary, "title-4");
  gtk_box_append (self->story, summary);
  g_string_append_printf (self->text, "%s\n", cowscope_copy_explanation_get_summary (ex));
  if (cowscope_copy_explanation_get_kind (ex) == COWSCOPE_EXPLANATION_MATERIALIZATION)
    tell_materialization (self, ex);
  else
    tell_violation (self, ex);
  gtk_stack_set_visible_child_name (self->stack, "story");

  guint n;
  const CowscopeObjectRef *refs = cowscope_copy_explanation_get_highlights (ex, &n);
  cowscope_view_state_set_highlights (self->state, refs, n);

  /* The chain from the lazy clone to the end of the copy, with margins. */
  gint64 end = cowscope_copy_explanation_get_end_ns (ex);
  gint64 begin = cowscope_copy_explanation_get_begin_ns (ex);
  if (end < begin)
    end = begin;
  gint64 first = cowscope_copy_explanation_get_lazy_clone_seq (ex) >= 0
                   ? MIN (cowscope_copy_explanation_get_lazy_clone_ns (ex), begin) : begin;
  if (first < cowscope_view_state_get_visible_start (self->state) ||
      end > cowscope_view_state_get_visible_end (self->state))
    {
      gint64 pad = MAX ((end - first) / 5, 1000);
      cowscope_view_state_set_visible (self->state, first - pad, end + pad);
    }
  cowscope_view_state_set_cursor (self->state, end);
}

/* Shows the empty state with @title and @description. */
static void
show_empty (CowscopeExplanationPanel *self, const char *title, const char *description)
{
  clear_story (self);
  adw_status_page_set_title (self->empty_page, title);
  adw_status_page_set_description (self->empty_page, description);
  gtk_stack_set_visible_child_name (self->stack, "empty");
}

static void
set_ready (CowscopeExplanationPanel *self, gboolean ready)
{
  if (self->ready == ready)
    return;
  self->ready = ready;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_READY]);
}

/* Completion of the explanation's load; ignores stale ones. */
static void
explained_cb (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr (CowscopeExplanationPanel) self = user_data;
  g_autoptr (GError) error = NULL;
  g_autoptr (CowscopeCopyExplanation) ex = cowscope_copy_explanation_new_finish (result, &error);
  if (g_task_get_cancellable (G_TASK (result)) != self->cancellable || self->state == NULL)
    return;
  if (ex == NULL)
    {
      if (g_error_matches (error, COWSCOPE_SESSION_ERROR,
                           COWSCOPE_SESSION_ERROR_NO_SUCH_OBJECT))
        show_empty (self, _("Not a Copy"),
                    _("The selected event is neither a materialization nor a warning."));
      else
        show_empty (self, _("Cannot Explain This Event"), error->message);
    }
  else
    {
      g_set_object (&self->explanation, ex);
      show_explanation (self, ex);
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_EXPLANATION]);
    }
  set_ready (self, TRUE);
}

/* The selected event changed: explain it (or show the empty state). */
static void
selected_changed_cb (CowscopeViewState *state, GParamSpec *pspec, CowscopeExplanationPanel *self)
{
  gint64 seq = cowscope_view_state_get_selected_seq (state);
  g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  if (self->explanation != NULL)
    {
      g_clear_object (&self->explanation);
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_EXPLANATION]);
    }
  if (seq < 0)
    {
      show_empty (self, _("No Copy Selected"),
                  _("Select a materialization or a warning in the timeline or the tables to see "
                    "why it happened."));
      set_ready (self, TRUE);
      return;
    }
  self->cancellable = g_cancellable_new ();
  set_ready (self, FALSE);
  cowscope_copy_explanation_new_async (cowscope_view_state_get_document (state), seq,
                                       self->cancellable, explained_cb, g_object_ref (self));
}

static void
cowscope_explanation_panel_dispose (GObject *object)
{
  CowscopeExplanationPanel *self = COWSCOPE_EXPLANATION_PANEL (object);
  cowscope_explanation_panel_set_view_state (self, NULL);
  g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  g_clear_object (&self->explanation);
  gtk_widget_dispose_template (GTK_WIDGET (self), COWSCOPE_TYPE_EXPLANATION_PANEL);
  G_OBJECT_CLASS (cowscope_explanation_panel_parent_class)->dispose (object);
}

static void
cowscope_explanation_panel_finalize (GObject *object)
{
  CowscopeExplanationPanel *self = COWSCOPE_EXPLANATION_PANEL (object);
  g_string_free (self->text, TRUE);
  G_OBJECT_CLASS (cowscope_explanation_panel_parent_class)->finalize (object);
}

static void
cowscope_explanation_panel_get_property (GObject *object, guint prop_id, GValue *value,
                                         GParamSpec *pspec)
{
  CowscopeExplanationPanel *self = COWSCOPE_EXPLANATION_PANEL (object);
  switch (prop_id)
    {
    case PROP_VIEW_STATE: g_value_set_object (value, self->state); break;
    case PROP_EXPLANATION: g_value_set_object (value, self->explanation); break;
    case PROP_READY: g_value_set_boolean (value, self->ready); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
cowscope_explanation_panel_set_property (GObject *object, guint prop_id, const GValue *value,
                                         GParamSpec *pspec)
{
  CowscopeExplanationPanel *self = COWSCOPE_EXPLANATION_PANEL (object);
  switch (prop_id)
    {
    case PROP_VIEW_STATE:
      cowscope_explanation_panel_set_view_state (self, g_value_get_object (value));
      break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
cowscope_explanation_panel_class_init (CowscopeExplanationPanelClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  object_class->dispose = cowscope_explanation_panel_dispose;
  object_class->finalize = cowscope_explanation_panel_finalize;
  object_class->get_property = cowscope_explanation_panel_get_property;
  object_class->set_property = cowscope_explanation_panel_set_property;

  properties[PROP_VIEW_STATE] =
    g_param_spec_object ("view-state", NULL, NULL, COWSCOPE_TYPE_VIEW_STATE,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_EXPLANATION] =
    g_param_spec_object ("explanation", NULL, NULL, COWSCOPE_TYPE_COPY_EXPLANATION,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  properties[PROP_READY] = g_param_spec_boolean ("ready", NULL, NULL, TRUE,
                                                 G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/org/cowscope/Cowscope/cowscope-explanation-panel.ui");
  gtk_widget_class_bind_template_child (widget_class, CowscopeExplanationPanel, stack);
  gtk_widget_class_bind_template_child (widget_class, CowscopeExplanationPanel, empty_page);
  gtk_widget_class_bind_template_child (widget_class, CowscopeExplanationPanel, story);
  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_css_name (widget_class, "cowscope-explanation-panel");
}

static void
cowscope_explanation_panel_init (CowscopeExplanationPanel *self)
{
  self->text = g_string_new (NULL);
  self->ready = TRUE;
  gtk_widget_init_template (GTK_WIDGET (self));
}

GtkWidget *
cowscope_explanation_panel_new (void)
{
  return g_object_new (COWSCOPE_TYPE_EXPLANATION_PANEL, NULL);
}

CowscopeViewState *
cowscope_explanation_panel_get_view_state (CowscopeExplanationPanel *self)
{
  g_return_val_if_fail (COWSCOPE_IS_EXPLANATION_PANEL (self), NULL);
  return self->state;
}

void
cowscope_explanation_panel_set_view_state (CowscopeExplanationPanel *self, CowscopeViewState *state)
{
  g_return_if_fail (COWSCOPE_IS_EXPLANATION_PANEL (self));
  g_return_if_fail (state == NULL || COWSCOPE_IS_VIEW_STATE (state));
  if (self->state == state)
    return;
  if (self->state != NULL)
    {
      g_clear_signal_handler (&self->selected_handler, self->state);
      g_clear_object (&self->state);
    }
  if (state != NULL)
    {
      self->state = g_object_ref (state);
      self->selected_handler = g_signal_connect (state, "notify::selected-seq",
                                                 G_CALLBACK (selected_changed_cb), self);
      selected_changed_cb (state, NULL, self);
    }
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_VIEW_STATE]);
}

CowscopeCopyExplanation *
cowscope_explanation_panel_get_explanation (CowscopeExplanationPanel *self)
{
  g_return_val_if_fail (COWSCOPE_IS_EXPLANATION_PANEL (self), NULL);
  return self->explanation;
}

gboolean
cowscope_explanation_panel_get_ready (CowscopeExplanationPanel *self)
{
  g_return_val_if_fail (COWSCOPE_IS_EXPLANATION_PANEL (self), TRUE);
  return self->ready;
}

char *
cowscope_explanation_panel_dup_text (CowscopeExplanationPanel *self)
{
  g_return_val_if_fail (COWSCOPE_IS_EXPLANATION_PANEL (self), NULL);
  return g_strdup (self->text->str);
}
