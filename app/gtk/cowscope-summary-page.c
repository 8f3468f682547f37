/* cowscope-summary-page.c — see cowscope-summary-page.h. */
#include "cowscope-config.h"

#include <adwaita.h>
#include <glib/gi18n.h>

#include "cowscope-call-site.h"
#include "cowscope-report-reader.h"
#include "cowscope-summary-page.h"
#include "cowscope-timeline-format.h"

/* The call sites and operations the report lists; the warnings shown. */
#define TOP 10
#define WARNINGS_SHOWN 10

struct _CowscopeSummaryPage {
  GtkWidget parent_instance;

  /* Template children */
  GtkStack *stack;
  GtkSpinner *spinner;
  AdwStatusPage *error_page;
  GtkLabel *title_label, *subtitle_label;
  GtkFlowBox *tiles;
  GtkWidget *recording_group, *sites_group, *ops_group, *warnings_group;
  GtkListBox *recording_list, *sites_list, *ops_list, *warnings_list;

  CowscopeViewState *state;
  GCancellable *cancellable;
  CowscopeReportReader *report;
  gboolean wanted;   /* a report to build once the page is shown */
  guint start_source;
};

G_DEFINE_FINAL_TYPE (CowscopeSummaryPage, cowscope_summary_page, GTK_TYPE_WIDGET)

enum { PROP_0, PROP_VIEW_STATE, PROP_READY, N_PROPS };
static GParamSpec *properties[N_PROPS];

enum { CALL_SITE_ACTIVATED, N_SIGNALS };
static guint signals[N_SIGNALS];

/* ---- reading the report ---------------------------------------------------- */

static gint64
int_of (const CowscopeReportItem *item, const char *member)
{
  return cowscope_report_item_get_int (item, member);
}

static const char *
text_of (const CowscopeReportItem *item, const char *member)
{
  return cowscope_report_item_get_text (item, member);
}

static gint64
metric (CowscopeSummaryPage *self, const char *name)
{
  return cowscope_report_reader_get_metric (self->report, name);
}

static char *
bytes (gint64 n)
{
  return g_format_size_full ((guint64) MAX (n, 0), G_FORMAT_SIZE_IEC_UNITS);
}

/* A tensor as the graph names it: its name, or "tensor N". */
static char *
tensor_label (const CowscopeReportItem *violation, const char *name_member, const char *id_member)
{
  const char *name = text_of (violation, name_member);
  if (name != NULL)
    return g_strdup_printf ("“%s”", name);
  return g_strdup_printf (_("tensor %" G_GINT64_FORMAT), int_of (violation, id_member));
}

/* ---- building the page ----------------------------------------------------- */

static void
clear_list (GtkListBox *list)
{
  GtkWidget *child;
  while ((child = gtk_widget_get_first_child (GTK_WIDGET (list))) != NULL)
    gtk_list_box_remove (list, child);
}

/* A row of @list; activatable (with an arrow) when @activated is set. */
static GtkWidget *
add_row (CowscopeSummaryPage *self, GtkListBox *list, const char *title, const char *subtitle,
         GCallback activated)
{
  GtkWidget *row = adw_action_row_new ();
  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), title);
  adw_preferences_row_set_use_markup (ADW_PREFERENCES_ROW (row), FALSE);
  if (subtitle != NULL)
    adw_action_row_set_subtitle (ADW_ACTION_ROW (row), subtitle);
  adw_action_row_set_title_lines (ADW_ACTION_ROW (row), 2);
  adw_action_row_set_subtitle_lines (ADW_ACTION_ROW (row), 2);
  if (activated != NULL)
    {
      gtk_list_box_row_set_activatable (GTK_LIST_BOX_ROW (row), TRUE);
      adw_action_row_add_suffix (ADW_ACTION_ROW (row), gtk_image_new_from_icon_name ("go-next-symbolic"));
      g_signal_connect (row, "activated", activated, self);
    }
  gtk_list_box_append (list, row);
  return row;
}

/* A tile: a big value over what it counts, and a second line; a button
 * when @activated is set. */
static void
add_tile (CowscopeSummaryPage *self, const char *name, const char *value, const char *detail,
          const char *tooltip, GCallback activated)
{
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 2);
  GtkWidget *v = gtk_label_new (value);
  GtkWidget *n = gtk_label_new (name);
  gtk_widget_add_css_class (v, "title-2");
  gtk_widget_add_css_class (v, "numeric");
  gtk_label_set_xalign (GTK_LABEL (v), 0);
  gtk_label_set_xalign (GTK_LABEL (n), 0);
  gtk_label_set_wrap (GTK_LABEL (n), TRUE);
  /* Short lines, so that three tiles share a row at usual widths. */
  gtk_label_set_max_width_chars (GTK_LABEL (n), 16);
  gtk_widget_add_css_class (n, "heading");
  gtk_box_append (GTK_BOX (box), v);
  gtk_box_append (GTK_BOX (box), n);
  if (detail != NULL)
    {
      GtkWidget *d = gtk_label_new (detail);
      gtk_label_set_xalign (GTK_LABEL (d), 0);
      gtk_label_set_wrap (GTK_LABEL (d), TRUE);
      gtk_label_set_max_width_chars (GTK_LABEL (d), 20);
      gtk_widget_add_css_class (d, "dim-label");
      gtk_widget_add_css_class (d, "caption");
      gtk_box_append (GTK_BOX (box), d);
    }
  gtk_widget_set_margin_start (box, 12);
  gtk_widget_set_margin_end (box, 12);
  gtk_widget_set_margin_top (box, 10);
  gtk_widget_set_margin_bottom (box, 10);

  GtkWidget *tile;
  if (activated != NULL)
    {
      tile = gtk_button_new ();
      gtk_button_set_child (GTK_BUTTON (tile), box);
      g_signal_connect (tile, "clicked", activated, self);
    }
  else
    {
      tile = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);
      gtk_box_append (GTK_BOX (tile), box);
    }
  gtk_widget_add_css_class (tile, "card");
  gtk_widget_add_css_class (tile, "cowscope-summary-tile");
  gtk_widget_set_name (tile, name);
  if (tooltip != NULL)
    gtk_widget_set_tooltip_text (tile, tooltip);
  gtk_flow_box_append (self->tiles, tile);
}

static void
show_view (CowscopeSummaryPage *self, const char *view)
{
  gtk_widget_activate_action (GTK_WIDGET (self), "win.show-view", "s", view);
}

/* Selects event @seq and shows it in the timeline, with its explanation. */
static void
show_event (CowscopeSummaryPage *self, gint64 seq)
{
  if (self->state == NULL || seq < 0)
    return;
  cowscope_view_state_set_selected_seq (self->state, seq);
  show_view (self, "timeline");
}

static void
call_tree_tile_cb (GtkButton *button, CowscopeSummaryPage *self)
{
  show_view (self, "calltree");
}

static void
timeline_tile_cb (GtkButton *button, CowscopeSummaryPage *self)
{
  show_view (self, "timeline");
}

static void
warnings_tile_cb (GtkButton *button, CowscopeSummaryPage *self)
{
  const CowscopeReportItem *first = cowscope_report_reader_get_item (self->report, "violations", 0);
  if (first != NULL)
    show_event (self, int_of (first, "seq"));
}

static void
site_activated_cb (AdwActionRow *row, CowscopeSummaryPage *self)
{
  const CowscopeReportItem *site = g_object_get_data (G_OBJECT (row), "site");
  CowscopeFrameRef ref = {
    text_of (site, "function"), text_of (site, "file"), text_of (site, "module"),
    int_of (site, "line"), (guint64) int_of (site, "address"),
  };
  g_signal_emit (self, signals[CALL_SITE_ACTIVATED], 0, &ref);
}

static void
event_row_activated_cb (AdwActionRow *row, CowscopeSummaryPage *self)
{
  show_event (self, GPOINTER_TO_SIZE (g_object_get_data (G_OBJECT (row), "seq")) - 1);
}

static void
set_row_seq (GtkWidget *row, gint64 seq)
{
  g_object_set_data (G_OBJECT (row), "seq", GSIZE_TO_POINTER ((gsize) seq + 1));
}

/* "train --steps 3 — exited with status 0" and the times and counts. */
static void
fill_header (CowscopeSummaryPage *self)
{
  const CowscopeReportItem *target = cowscope_report_reader_get_object (self->report, "target");
  const char *command = text_of (target, "command");
  const char *end = text_of (target, "end");
  g_autofree char *duration = cowscope_timeline_format_duration (metric (self, "duration_ns"));
  g_autofree char *how = NULL;

  gtk_label_set_text (self->title_label, command != NULL ? command : _("Session Summary"));
  if (g_strcmp0 (end, "exited") == 0)
    how = g_strdup_printf (_("Exited with status %" G_GINT64_FORMAT), int_of (target, "exit_status"));
  else if (end != NULL && cowscope_report_item_has (target, "exit_signal"))
    how = g_strdup_printf (_("Ended by signal %" G_GINT64_FORMAT), int_of (target, "exit_signal"));
  else if (end != NULL)
    how = g_strdup (end);
  /* Translators: "1.25 s, 2 processes, 8 threads" */
  g_autofree char *processes = g_strdup_printf (
    g_dngettext (GETTEXT_PACKAGE, "%" G_GINT64_FORMAT " process", "%" G_GINT64_FORMAT " processes",
                 metric (self, "processes")), metric (self, "processes"));
  g_autofree char *threads = g_strdup_printf (
    g_dngettext (GETTEXT_PACKAGE, "%" G_GINT64_FORMAT " thread", "%" G_GINT64_FORMAT " threads",
                 metric (self, "threads")), metric (self, "threads"));
  g_autofree char *text = how != NULL
                            ? g_strdup_printf ("%s · %s · %s, %s", how, duration, processes, threads)
                            : g_strdup_printf ("%s · %s, %s", duration, processes, threads);
  gtk_label_set_text (self->subtitle_label, text);
}

static void
fill_tiles (CowscopeSummaryPage *self)
{
  GtkWidget *child;
  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self->tiles))) != NULL)
    gtk_flow_box_remove (self->tiles, child);

  gint64 copies = metric (self, "copies"), steals = metric (self, "steals");
  gint64 clones = metric (self, "lazy_clones"), eager = metric (self, "eager_fallbacks");
  gint64 violations = metric (self, "violations");
  g_autofree char *copied = bytes (metric (self, "copied_bytes"));
  g_autofree char *stolen = bytes (metric (self, "stolen_bytes"));
  g_autofree char *shared = bytes (metric (self, "shared_bytes"));
  g_autofree char *eager_bytes = bytes (metric (self, "eager_bytes"));
  gint64 saved_n = metric (self, "saved_bytes");
  g_autofree char *saved_abs = bytes (saved_n < 0 ? -saved_n : saved_n);
  g_autofree char *saved = saved_n < 0 ? g_strdup_printf ("−%s", saved_abs) : g_strdup (saved_abs);
  g_autofree char *n_copies = cowscope_timeline_format_number ((guint64) copies);
  g_autofree char *n_steals = cowscope_timeline_format_number ((guint64) steals);
  g_autofree char *n_clones = cowscope_timeline_format_number ((guint64) clones);
  g_autofree char *n_eager = cowscope_timeline_format_number ((guint64) eager);
  g_autofree char *n_violations = cowscope_timeline_format_number ((guint64) violations);
  g_autofree char *copies_detail = g_strdup_printf (
    g_dngettext (GETTEXT_PACKAGE, "in %s copy", "in %s copies", copies), n_copies);
  g_autofree char *stolen_detail = g_strdup_printf (_("%s taken over without copying"), stolen);
  g_autofree char *shared_detail = g_strdup_printf (_("sharing %s"), shared);
  g_autofree char *eager_detail = g_strdup_printf (_("%s copied at once"), eager_bytes);
  g_autofree char *saved_detail = g_strdup_printf (_("%s shared lazily − %s copied"), shared, copied);

  add_tile (self, _("Bytes Copied"), copied, copies_detail,
            _("Open the call tree: where the copies come from"), G_CALLBACK (call_tree_tile_cb));
  add_tile (self, _("Saved by Lazy Copies"), saved, saved_detail, NULL, NULL);
  add_tile (self, _("Lazy Clones"), n_clones, shared_detail, _("Open the timeline"),
            G_CALLBACK (timeline_tile_cb));
  add_tile (self, _("Steals"), n_steals, stolen_detail,
            _("Open the call tree: where the copies come from"), G_CALLBACK (call_tree_tile_cb));
  add_tile (self, _("Eager Fallbacks"), n_eager, eager_detail,
            _("Open the call tree: where the copies come from"), G_CALLBACK (call_tree_tile_cb));
  add_tile (self, _("Warnings"), n_violations, _("simulate-mode"),
            violations > 0 ? _("Explain the first warning") : NULL,
            violations > 0 ? G_CALLBACK (warnings_tile_cb) : NULL);
}

static void
fill_sites (CowscopeSummaryPage *self)
{
  guint n = cowscope_report_reader_get_n_items (self->report, "top_call_sites");
  clear_list (self->sites_list);
  for (guint i = 0; i < n; i++)
    {
      const CowscopeReportItem *site = cowscope_report_reader_get_item (self->report, "top_call_sites", i);
      gint64 count = int_of (site, "copies");
      g_autofree char *size = bytes (int_of (site, "bytes"));
      g_autofree char *subtitle = g_strdup_printf (
        g_dngettext (GETTEXT_PACKAGE, "%s copied in %" G_GINT64_FORMAT " copy",
                     "%s copied in %" G_GINT64_FORMAT " copies", count), size, count);
      GtkWidget *row = add_row (self, self->sites_list, text_of (site, "location"), subtitle,
                                G_CALLBACK (site_activated_cb));
      /* The row keeps the report its site belongs to. */
      g_object_set_data_full (G_OBJECT (row), "report", cowscope_report_reader_ref (self->report),
                              (GDestroyNotify) cowscope_report_reader_unref);
      g_object_set_data (G_OBJECT (row), "site", (gpointer) site);
      gtk_widget_set_tooltip_text (row, _("Show this call site in the call tree"));
    }
  if (n == 0)
    add_row (self, self->sites_list, _("Nothing was copied"), NULL, NULL);
}

static void
fill_ops (CowscopeSummaryPage *self)
{
  guint n = cowscope_report_reader_get_n_items (self->report, "top_ops");
  clear_list (self->ops_list);
  for (guint i = 0; i < n; i++)
    {
      const CowscopeReportItem *op = cowscope_report_reader_get_item (self->report, "top_ops", i);
      gint64 copies = int_of (op, "copies"), steals = int_of (op, "steals");
      g_autofree char *copied = bytes (int_of (op, "copied_bytes"));
      g_autofree char *stolen = bytes (int_of (op, "stolen_bytes"));
      g_autofree char *c = g_strdup_printf (
        g_dngettext (GETTEXT_PACKAGE, "%s copied in %" G_GINT64_FORMAT " copy",
                     "%s copied in %" G_GINT64_FORMAT " copies", copies), copied, copies);
      g_autofree char *s = g_strdup_printf (
        g_dngettext (GETTEXT_PACKAGE, "%" G_GINT64_FORMAT " steal (%s)",
                     "%" G_GINT64_FORMAT " steals (%s)", steals), steals, stolen);
      /* What it did, leaving out a kind it never did. */
      g_autofree char *subtitle = copies > 0 && steals > 0 ? g_strdup_printf ("%s · %s", c, s)
                                  : copies > 0 ? g_strdup (c) : g_strdup (s);
      g_autofree char *title = g_strdup_printf ("%s()", text_of (op, "op"));
      GCallback activated = cowscope_report_item_has (op, "largest_seq") ? G_CALLBACK (event_row_activated_cb)
                                                                         : NULL;
      GtkWidget *row = add_row (self, self->ops_list, title, subtitle, activated);
      set_row_seq (row, int_of (op, "largest_seq"));
      if (activated != NULL)
        gtk_widget_set_tooltip_text (row, _("Show its largest copy in the timeline"));
    }
  gtk_widget_set_visible (self->ops_group, n > 0);
}

static void
fill_warnings (CowscopeSummaryPage *self)
{
  guint n = cowscope_report_reader_get_n_items (self->report, "violations");
  gint64 total = metric (self, "violations");
  clear_list (self->warnings_list);
  for (guint i = 0; i < n && i < WARNINGS_SHOWN; i++)
    {
      const CowscopeReportItem *w = cowscope_report_reader_get_item (self->report, "violations", i);
      g_autofree char *accessor = tensor_label (w, "accessor_name", "accessor_tensor_id");
      g_autofree char *writer = tensor_label (w, "writer_name", "writer_tensor_id");
      gboolean write = g_strcmp0 (text_of (w, "access"), "write") == 0;
      /* Translators: "Read of “snapshot” after a write to “weights”" */
      g_autofree char *title = g_strdup_printf (write ? _("Write to %s after a write to %s")
                                                      : _("Read of %s after a write to %s"),
                                                accessor, writer);
      g_autofree char *subtitle = g_strdup_printf (_("In %s() at %s"), text_of (w, "op"),
                                                   text_of (w, "location"));
      GtkWidget *row = add_row (self, self->warnings_list, title, subtitle,
                                G_CALLBACK (event_row_activated_cb));
      set_row_seq (row, int_of (w, "seq"));
      gtk_widget_set_tooltip_text (row, _("Explain this warning"));
    }
  if (total > WARNINGS_SHOWN)
    {
      g_autofree char *more = g_strdup_printf (_("%" G_GINT64_FORMAT " more in the Warnings table"),
                                               total - MIN (n, WARNINGS_SHOWN));
      add_row (self, self->warnings_list, more, NULL, NULL);
    }
  gtk_widget_set_visible (self->warnings_group, total > 0);
}

static void
fill_recording (CowscopeSummaryPage *self)
{
  guint n = cowscope_report_reader_get_n_items (self->report, "warnings");
  clear_list (self->recording_list);
  for (guint i = 0; i < n; i++)
    {
      GtkWidget *row = add_row (self, self->recording_list,
                                cowscope_report_reader_get_text (self->report, "warnings", i),
                                NULL, NULL);
      adw_action_row_add_prefix (ADW_ACTION_ROW (row),
                                 gtk_image_new_from_icon_name ("dialog-warning-symbolic"));
    }
  gtk_widget_set_visible (self->recording_group, n > 0);
}

static void
set_ready (CowscopeSummaryPage *self)
{
  /* Spinning from the session's arrival to its report's (a report of
   * ten million events takes seconds). */
  gtk_spinner_set_spinning (self->spinner, self->cancellable != NULL || self->wanted);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_READY]);
}

static void
report_cb (GObject *source, GAsyncResult *result, gpointer data)
{
  g_autoptr (CowscopeSummaryPage) self = data;
  g_autoptr (GError) error = NULL;
  g_autoptr (CowscopeReportReader) report = cowscope_report_reader_load_finish (result, &error);
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED) || self->state == NULL)
    return;
  g_clear_object (&self->cancellable);
  if (report == NULL)
    {
      adw_status_page_set_description (self->error_page, error->message);
      gtk_stack_set_visible_child_name (self->stack, "error");
      set_ready (self);
      return;
    }
  g_clear_pointer (&self->report, cowscope_report_reader_unref);
  self->report = g_steal_pointer (&report);
  fill_header (self);
  fill_tiles (self);
  fill_recording (self);
  fill_sites (self);
  fill_ops (self);
  fill_warnings (self);
  gtk_stack_set_visible_child_name (self->stack, "report");
  set_ready (self);
}

/* Builds the report of the view state's session, off the main thread. */
static void
start_report (CowscopeSummaryPage *self)
{
  CowscopeSessionDocument *doc = cowscope_view_state_get_document (self->state);
  self->wanted = FALSE;
  self->cancellable = g_cancellable_new ();
  cowscope_report_reader_load_async (cowscope_session_document_get_path (doc), TOP, self->cancellable,
                                     report_cb, g_object_ref (self));
  set_ready (self);
}

static gboolean
start_if_shown_cb (gpointer data)
{
  CowscopeSummaryPage *self = data;
  self->start_source = 0;
  if (self->wanted && self->state != NULL && gtk_widget_get_mapped (GTK_WIDGET (self)))
    start_report (self);
  return G_SOURCE_REMOVE;
}

/* The report is built when the page is shown, and still shown once the
 * event that showed it is handled: a window that goes straight to
 * another view (or the timeline benchmark) does not build it beside its
 * first frame.  Default priority, not an idle one: where frames take
 * longer than the frame interval (software GL on a busy machine) the
 * frame clock is always due and an idle below it would never run. */
static void
start_when_shown (CowscopeSummaryPage *self)
{
  if (self->start_source == 0)
    self->start_source = g_idle_add_full (G_PRIORITY_DEFAULT, start_if_shown_cb, self, NULL);
}

static void
cowscope_summary_page_map (GtkWidget *widget)
{
  CowscopeSummaryPage *self = COWSCOPE_SUMMARY_PAGE (widget);
  GTK_WIDGET_CLASS (cowscope_summary_page_parent_class)->map (widget);
  if (self->wanted)
    start_when_shown (self);
}

/* ---- GObject --------------------------------------------------------------- */

static void
cowscope_summary_page_dispose (GObject *object)
{
  CowscopeSummaryPage *self = COWSCOPE_SUMMARY_PAGE (object);
  g_clear_handle_id (&self->start_source, g_source_remove);
  g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  g_clear_object (&self->state);
  g_clear_pointer (&self->report, cowscope_report_reader_unref);
  gtk_widget_dispose_template (GTK_WIDGET (self), COWSCOPE_TYPE_SUMMARY_PAGE);
  G_OBJECT_CLASS (cowscope_summary_page_parent_class)->dispose (object);
}

static void
cowscope_summary_page_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  CowscopeSummaryPage *self = COWSCOPE_SUMMARY_PAGE (object);
  switch (prop_id)
    {
    case PROP_VIEW_STATE: g_value_set_object (value, self->state); break;
    case PROP_READY: g_value_set_boolean (value, cowscope_summary_page_get_ready (self)); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
cowscope_summary_page_set_property (GObject *object, guint prop_id, const GValue *value,
                                    GParamSpec *pspec)
{
  CowscopeSummaryPage *self = COWSCOPE_SUMMARY_PAGE (object);
  switch (prop_id)
    {
    case PROP_VIEW_STATE:
      cowscope_summary_page_set_view_state (self, g_value_get_object (value));
      break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
cowscope_summary_page_class_init (CowscopeSummaryPageClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  object_class->dispose = cowscope_summary_page_dispose;
  object_class->get_property = cowscope_summary_page_get_property;
  object_class->set_property = cowscope_summary_page_set_property;
  widget_class->map = cowscope_summary_page_map;

  properties[PROP_VIEW_STATE] =
    g_param_spec_object ("view-state", NULL, NULL, COWSCOPE_TYPE_VIEW_STATE,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_READY] = g_param_spec_boolean ("ready", NULL, NULL, TRUE,
                                                 G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  /* A top call site was activated: its frame (a const CowscopeFrameRef *,
   * all NULL for the events without a call stack), valid during the
   * emission. */
  signals[CALL_SITE_ACTIVATED] =
    g_signal_new ("call-site-activated", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL,
                  NULL, NULL, G_TYPE_NONE, 1, G_TYPE_POINTER);

  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/org/cowscope/Cowscope/cowscope-summary-page.ui");
#define CHILD(name) gtk_widget_class_bind_template_child (widget_class, CowscopeSummaryPage, name)
  CHILD (stack);
  CHILD (spinner);
  CHILD (error_page);
  CHILD (title_label);
  CHILD (subtitle_label);
  CHILD (tiles);
  CHILD (recording_group);
  CHILD (sites_group);
  CHILD (ops_group);
  CHILD (warnings_group);
  CHILD (recording_list);
  CHILD (sites_list);
  CHILD (ops_list);
  CHILD (warnings_list);
#undef CHILD
  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_css_name (widget_class, "cowscope-summary-page");
}

static void
cowscope_summary_page_init (CowscopeSummaryPage *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
}

GtkWidget *
cowscope_summary_page_new (void)
{
  return g_object_new (COWSCOPE_TYPE_SUMMARY_PAGE, NULL);
}

void
cowscope_summary_page_set_view_state (CowscopeSummaryPage *self, CowscopeViewState *state)
{
  g_return_if_fail (COWSCOPE_IS_SUMMARY_PAGE (self));
  g_return_if_fail (state == NULL || COWSCOPE_IS_VIEW_STATE (state));
  if (self->state == state)
    return;
  g_set_object (&self->state, state);
  g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  g_clear_pointer (&self->report, cowscope_report_reader_unref);
  gtk_stack_set_visible_child_name (self->stack, "loading");
  self->wanted = state != NULL;
  if (state != NULL && gtk_widget_get_mapped (GTK_WIDGET (self)))
    start_when_shown (self);
  set_ready (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_VIEW_STATE]);
}

CowscopeViewState *
cowscope_summary_page_get_view_state (CowscopeSummaryPage *self)
{
  g_return_val_if_fail (COWSCOPE_IS_SUMMARY_PAGE (self), NULL);
  return self->state;
}

CowscopeReportReader *
cowscope_summary_page_get_report (CowscopeSummaryPage *self)
{
  g_return_val_if_fail (COWSCOPE_IS_SUMMARY_PAGE (self), NULL);
  return self->report;
}

gboolean
cowscope_summary_page_get_ready (CowscopeSummaryPage *self)
{
  g_return_val_if_fail (COWSCOPE_IS_SUMMARY_PAGE (self), TRUE);
  return self->cancellable == NULL && !self->wanted;
}
