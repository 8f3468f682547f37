/* cowscope-range-summary-view.c — see cowscope-range-summary-view.h. */
#include "cowscope-config.h"

#include <glib/gi18n.h>
#include <inttypes.h>

#include "cowscope-range-summary-view.h"
#include "cowscope-timeline-format.h"

struct _CowscopeRangeSummaryView {
  GtkWidget parent_instance;
  GtkWidget *box;
  GtkLabel *status;
  GtkToggleButton *toggles[COWSCOPE_N_RANGE_GROUPINGS];
  GtkColumnView *column_view;
  GtkSortListModel *sorted;
  CowscopeRangeGrouping grouping;
  CowscopeViewState *state;
  GCancellable *cancellable;   /* the computation running, or NULL */
  char *status_text;
};

G_DEFINE_FINAL_TYPE (CowscopeRangeSummaryView, cowscope_range_summary_view, GTK_TYPE_WIDGET)

enum { PROP_0, PROP_READY, N_PROPS };
static GParamSpec *properties[N_PROPS];

/* ---- columns ---- */

typedef struct {
  const char *title;
  gint64 (*number) (CowscopeRangeRow *row); /* NULL: the name */
  char *(*text) (CowscopeRangeRow *row);
  guint min_chars;
} Column;

static gint64 row_copies (CowscopeRangeRow *r) { return (gint64) cowscope_range_row_get_copies (r); }
static gint64 row_steals (CowscopeRangeRow *r) { return (gint64) cowscope_range_row_get_steals (r); }
static gint64 row_bytes (CowscopeRangeRow *r) { return (gint64) cowscope_range_row_get_bytes_copied (r); }
static gint64 row_time (CowscopeRangeRow *r) { return cowscope_range_row_get_time_ns (r); }
static char *row_name_text (CowscopeRangeRow *r) { return g_strdup (cowscope_range_row_get_name (r)); }
static char *row_copies_text (CowscopeRangeRow *r) { return cowscope_timeline_format_number (cowscope_range_row_get_copies (r)); }
static char *row_steals_text (CowscopeRangeRow *r) { return cowscope_timeline_format_number (cowscope_range_row_get_steals (r)); }
static char *row_bytes_text (CowscopeRangeRow *r) { return g_format_size (cowscope_range_row_get_bytes_copied (r)); }
static char *row_time_text (CowscopeRangeRow *r) { return cowscope_timeline_format_duration (cowscope_range_row_get_time_ns (r)); }

static const Column columns[] = {
  { N_("Name"), NULL, row_name_text, 16 },
  { N_("Bytes copied"), row_bytes, row_bytes_text, 10 },
  { N_("Copies"), row_copies, row_copies_text, 7 },
  { N_("Steals"), row_steals, row_steals_text, 7 },
  { N_("Time"), row_time, row_time_text, 10 },
};

static void
setup_cell (GtkSignalListItemFactory *factory, GtkListItem *item, const Column *col)
{
  GtkWidget *label = gtk_label_new (NULL);
  gtk_label_set_ellipsize (GTK_LABEL (label), PANGO_ELLIPSIZE_END);
  gtk_label_set_single_line_mode (GTK_LABEL (label), TRUE);
  gtk_label_set_width_chars (GTK_LABEL (label), (int) col->min_chars);
  gtk_label_set_xalign (GTK_LABEL (label), col->number != NULL ? 1.0f : 0.0f);
  if (col->number != NULL)
    gtk_widget_add_css_class (label, "numeric");
  gtk_list_item_set_child (item, label);
}

static void
bind_cell (GtkSignalListItemFactory *factory, GtkListItem *item, const Column *col)
{
  g_autofree char *text = col->text (gtk_list_item_get_item (item));
  gtk_label_set_text (GTK_LABEL (gtk_list_item_get_child (item)), text);
  if (col->number == NULL)
    gtk_widget_set_tooltip_text (gtk_list_item_get_child (item), text);
}

static gint64
column_number (CowscopeRangeRow *row, gpointer data)
{
  const Column *col = data;
  return row != NULL ? col->number (row) : 0;
}

/* ---- computing ---- */

static void
set_status (CowscopeRangeSummaryView *self, const char *text)
{
  g_free (self->status_text);
  self->status_text = g_strdup (text);
  gtk_label_set_text (self->status, text);
}

static void
computed_cb (GObject *source, GAsyncResult *result, gpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GListModel) rows = cowscope_range_summary_compute_finish (result, &error);
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return; /* replaced by a newer request, or the view went away */
  CowscopeRangeSummaryView *self = data;
  g_clear_object (&self->cancellable);
  if (rows == NULL)
    set_status (self, error->message);
  else
    {
      gtk_sort_list_model_set_model (self->sorted, rows);
      guint64 copies = 0, bytes = 0;
      for (guint i = 0; i < g_list_model_get_n_items (rows); i++)
        {
          g_autoptr (CowscopeRangeRow) row = g_list_model_get_item (rows, i);
          copies += cowscope_range_row_get_copies (row);
          bytes += cowscope_range_row_get_bytes_copied (row);
        }
      g_autofree char *size = g_format_size (bytes);
      g_autofree char *shown = cowscope_timeline_format_duration (
        cowscope_view_state_get_range_end (self->state) - cowscope_view_state_get_range_start (self->state));
      g_autofree char *text = g_list_model_get_n_items (rows) == 0
        ? g_strdup_printf (_("Nothing was copied or stolen in these %s."), shown)
        : g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "%s: %" PRIu64 " copy, %s copied",
                                        "%s: %" PRIu64 " copies, %s copied", copies),
                           shown, copies, size);
      set_status (self, text);
    }
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_READY]);
}

/* Asks for the rows of the selected range in the chosen grouping. */
static void
recompute (CowscopeRangeSummaryView *self)
{
  g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  gint64 t0 = self->state ? cowscope_view_state_get_range_start (self->state) : -1;
  gint64 t1 = self->state ? cowscope_view_state_get_range_end (self->state) : -1;
  if (t0 < 0 || t1 <= t0)
    {
      gtk_sort_list_model_set_model (self->sorted, NULL);
      set_status (self, _("Drag across the timeline to select a range."));
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_READY]);
      return;
    }
  self->cancellable = g_cancellable_new ();
  set_status (self, _("Summing the range…"));
  cowscope_range_summary_compute_async (cowscope_view_state_get_document (self->state), t0, t1,
                                        self->grouping, self->cancellable, computed_cb, self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_READY]);
}

static void
range_changed_cb (CowscopeViewState *state, GParamSpec *pspec, CowscopeRangeSummaryView *self)
{
  recompute (self);
}

static void
toggled_cb (GtkToggleButton *button, CowscopeRangeSummaryView *self)
{
  if (!gtk_toggle_button_get_active (button))
    return;
  for (guint g = 0; g < COWSCOPE_N_RANGE_GROUPINGS; g++)
    if (self->toggles[g] == button && self->grouping != g)
      {
        self->grouping = g;
        recompute (self);
      }
}

/* ---- GObject ---- */

static void
cowscope_range_summary_view_dispose (GObject *object)
{
  CowscopeRangeSummaryView *self = COWSCOPE_RANGE_SUMMARY_VIEW (object);
  cowscope_range_summary_view_set_view_state (self, NULL);
  g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  if (self->column_view != NULL)
    gtk_column_view_set_model (self->column_view, NULL);
  g_clear_object (&self->sorted);
  g_clear_pointer (&self->box, gtk_widget_unparent);
  G_OBJECT_CLASS (cowscope_range_summary_view_parent_class)->dispose (object);
}

static void
cowscope_range_summary_view_finalize (GObject *object)
{
  g_free (COWSCOPE_RANGE_SUMMARY_VIEW (object)->status_text);
  G_OBJECT_CLASS (cowscope_range_summary_view_parent_class)->finalize (object);
}

static void
cowscope_range_summary_view_get_property (GObject *object, guint prop_id, GValue *value,
                                          GParamSpec *pspec)
{
  switch (prop_id)
    {
    case PROP_READY:
      g_value_set_boolean (value, cowscope_range_summary_view_get_ready (COWSCOPE_RANGE_SUMMARY_VIEW (object)));
      break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
cowscope_range_summary_view_class_init (CowscopeRangeSummaryViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  object_class->dispose = cowscope_range_summary_view_dispose;
  object_class->finalize = cowscope_range_summary_view_finalize;
  object_class->get_property = cowscope_range_summary_view_get_property;
  properties[PROP_READY] = g_param_spec_boolean ("ready", NULL, NULL, TRUE,
                                                 G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);
  gtk_widget_class_set_layout_manager_type (GTK_WIDGET_CLASS (klass), GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_css_name (GTK_WIDGET_CLASS (klass), "cowscope-range-summary-view");
}

static void
cowscope_range_summary_view_init (CowscopeRangeSummaryView *self)
{
  self->box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);
  gtk_widget_set_parent (self->box, GTK_WIDGET (self));

  GtkWidget *bar = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
  gtk_widget_set_margin_start (bar, 6);
  gtk_widget_set_margin_end (bar, 6);
  gtk_widget_set_margin_top (bar, 6);
  gtk_widget_set_margin_bottom (bar, 6);
  GtkWidget *linked = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 0);
  gtk_widget_add_css_class (linked, "linked");
  static const char *const names[] = { N_("Operation"), N_("Tensor"), N_("Call Site") };
  for (guint g = 0; g < COWSCOPE_N_RANGE_GROUPINGS; g++)
    {
      self->toggles[g] = GTK_TOGGLE_BUTTON (gtk_toggle_button_new_with_label (_(names[g])));
      if (g > 0)
        gtk_toggle_button_set_group (self->toggles[g], self->toggles[0]);
      g_signal_connect (self->toggles[g], "toggled", G_CALLBACK (toggled_cb), self);
      gtk_box_append (GTK_BOX (linked), GTK_WIDGET (self->toggles[g]));
    }
  gtk_toggle_button_set_active (self->toggles[0], TRUE);
  gtk_box_append (GTK_BOX (bar), linked);
  self->status = GTK_LABEL (gtk_label_new (NULL));
  gtk_label_set_ellipsize (self->status, PANGO_ELLIPSIZE_END);
  gtk_label_set_xalign (self->status, 0);
  gtk_widget_set_hexpand (GTK_WIDGET (self->status), TRUE);
  gtk_widget_add_css_class (GTK_WIDGET (self->status), "dim-label");
  gtk_widget_add_css_class (GTK_WIDGET (self->status), "caption");
  gtk_box_append (GTK_BOX (bar), GTK_WIDGET (self->status));
  gtk_box_append (GTK_BOX (self->box), bar);

  self->column_view = GTK_COLUMN_VIEW (gtk_column_view_new (NULL));
  gtk_column_view_set_show_column_separators (self->column_view, TRUE);
  gtk_widget_add_css_class (GTK_WIDGET (self->column_view), "data-table");
  for (guint c = 0; c < G_N_ELEMENTS (columns); c++)
    {
      const Column *col = &columns[c];
      GtkListItemFactory *factory = gtk_signal_list_item_factory_new ();
      g_signal_connect (factory, "setup", G_CALLBACK (setup_cell), (gpointer) col);
      g_signal_connect (factory, "bind", G_CALLBACK (bind_cell), (gpointer) col);
      GtkColumnViewColumn *column = gtk_column_view_column_new (_(col->title), factory);
      gtk_column_view_column_set_resizable (column, TRUE);
      gtk_column_view_column_set_expand (column, col->number == NULL);
      GtkSorter *sorter = col->number != NULL
        ? GTK_SORTER (gtk_numeric_sorter_new (gtk_cclosure_expression_new (
            G_TYPE_INT64, NULL, 0, NULL, G_CALLBACK (column_number), (gpointer) col, NULL)))
        : GTK_SORTER (gtk_string_sorter_new (gtk_cclosure_expression_new (
            G_TYPE_STRING, NULL, 0, NULL, G_CALLBACK (row_name_text), NULL, NULL)));
      gtk_column_view_column_set_sorter (column, sorter);
      g_object_unref (sorter);
      gtk_column_view_append_column (self->column_view, column);
      g_object_unref (column);
    }
  self->sorted = gtk_sort_list_model_new (NULL, g_object_ref (gtk_column_view_get_sorter (self->column_view)));
  GtkNoSelection *selection = gtk_no_selection_new (G_LIST_MODEL (g_object_ref (self->sorted)));
  gtk_column_view_set_model (self->column_view, GTK_SELECTION_MODEL (selection));
  g_object_unref (selection);
  GtkWidget *scroller = gtk_scrolled_window_new ();
  gtk_widget_set_vexpand (scroller, TRUE);
  gtk_scrolled_window_set_child (GTK_SCROLLED_WINDOW (scroller), GTK_WIDGET (self->column_view));
  gtk_box_append (GTK_BOX (self->box), scroller);
  recompute (self);
}

GtkWidget *
cowscope_range_summary_view_new (void)
{
  return g_object_new (COWSCOPE_TYPE_RANGE_SUMMARY_VIEW, NULL);
}

void
cowscope_range_summary_view_set_view_state (CowscopeRangeSummaryView *self, CowscopeViewState *state)
{
  g_return_if_fail (COWSCOPE_IS_RANGE_SUMMARY_VIEW (self));
  if (self->state == state)
    return;
  if (self->state != NULL)
    {
      g_signal_handlers_disconnect_by_func (self->state, range_changed_cb, self);
      g_clear_object (&self->state);
    }
  if (state != NULL)
    {
      self->state = g_object_ref (state);
      g_signal_connect (state, "notify::range-start", G_CALLBACK (range_changed_cb), self);
      g_signal_connect (state, "notify::range-end", G_CALLBACK (range_changed_cb), self);
    }
  if (self->sorted != NULL)
    recompute (self);
}

void
cowscope_range_summary_view_set_grouping (CowscopeRangeSummaryView *self, CowscopeRangeGrouping grouping)
{
  g_return_if_fail (COWSCOPE_IS_RANGE_SUMMARY_VIEW (self));
  g_return_if_fail (grouping < COWSCOPE_N_RANGE_GROUPINGS);
  gtk_toggle_button_set_active (self->toggles[grouping], TRUE);
}

CowscopeRangeGrouping
cowscope_range_summary_view_get_grouping (CowscopeRangeSummaryView *self)
{
  g_return_val_if_fail (COWSCOPE_IS_RANGE_SUMMARY_VIEW (self), COWSCOPE_RANGE_BY_OPERATION);
  return self->grouping;
}

gboolean
cowscope_range_summary_view_get_ready (CowscopeRangeSummaryView *self)
{
  g_return_val_if_fail (COWSCOPE_IS_RANGE_SUMMARY_VIEW (self), FALSE);
  return self->cancellable == NULL;
}

GListModel *
cowscope_range_summary_view_get_rows (CowscopeRangeSummaryView *self)
{
  g_return_val_if_fail (COWSCOPE_IS_RANGE_SUMMARY_VIEW (self), NULL);
  return G_LIST_MODEL (self->sorted);
}

const char *
cowscope_range_summary_view_get_status (CowscopeRangeSummaryView *self)
{
  g_return_val_if_fail (COWSCOPE_IS_RANGE_SUMMARY_VIEW (self), NULL);
  return self->status_text;
}
