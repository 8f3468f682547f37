/* cowscope-comparison-window.c — two sessions compared (see header). */
#include "cowscope-comparison-window.h"

#include <glib/gi18n.h>

#include "cowscope-report.h"

struct _CowscopeComparisonWindow {
  AdwWindow parent_instance;

  AdwWindowTitle *window_title;
  GtkStack *stack;
  AdwStatusPage *error_page;
  GtkColumnView *totals_view;
  GtkColumnView *call_sites_view;
  GtkLabel *no_change_label;

  GCancellable *cancellable;
  CowscopeComparison *comparison;
};

G_DEFINE_FINAL_TYPE (CowscopeComparisonWindow, cowscope_comparison_window, ADW_TYPE_WINDOW)

/* What a column shows of a row. */
typedef enum {
  COLUMN_LABEL,
  COLUMN_BEFORE,
  COLUMN_AFTER,
  COLUMN_CHANGE,
  COLUMN_COUNTS,
} ColumnKind;

static char *
format_value (CowscopeComparisonRow *row, gint64 value)
{
  if (cowscope_comparison_row_is_bytes (row))
    return cowscope_report_format_bytes (value);
  return g_strdup_printf ("%" G_GINT64_FORMAT, value);
}

/* "+16.0 KiB (+25%)", "−1", "0": the change, signed, with its share of
 * the value before when there was one. */
static char *
format_change (CowscopeComparisonRow *row)
{
  gint64 change = cowscope_comparison_row_get_change (row);
  gint64 before = cowscope_comparison_row_get_before (row);
  g_autofree char *magnitude = format_value (row, ABS (change));
  const char *sign = change > 0 ? "+" : change < 0 ? "−" : "";

  double percent = before != 0 ? ABS (change) * 100.0 / (double) before : 0.0;

  if (change == 0)
    return g_strdup ("0");
  /* A share under 0.1% says nothing the magnitude does not. */
  if (before == 0 || percent < 0.1)
    return g_strdup_printf ("%s%s", sign, magnitude);
  return g_strdup_printf (percent < 10 ? "%s%s (%s%.1f%%)" : "%s%s (%s%.0f%%)", sign, magnitude,
                          sign, percent);
}

static char *
format_label (CowscopeComparisonRow *row)
{
  const char *status = cowscope_comparison_row_get_status (row);
  const char *label = cowscope_comparison_row_get_label (row);

  if (g_strcmp0 (status, "new") == 0)
    /* Translators: a call site that copies only in the second session. */
    return g_strdup_printf (_("%s (new)"), label);
  if (g_strcmp0 (status, "gone") == 0)
    /* Translators: a call site that copies only in the first session. */
    return g_strdup_printf (_("%s (gone)"), label);
  return g_strdup (label);
}

static void
setup_cell (GtkSignalListItemFactory *factory, GtkListItem *item, gpointer data)
{
  ColumnKind kind = GPOINTER_TO_INT (data);
  GtkWidget *label = gtk_label_new (NULL);

  gtk_label_set_xalign (GTK_LABEL (label), kind == COLUMN_LABEL ? 0.0f : 1.0f);
  if (kind == COLUMN_LABEL)
    {
      gtk_label_set_ellipsize (GTK_LABEL (label), PANGO_ELLIPSIZE_MIDDLE);
      gtk_widget_set_hexpand (label, TRUE);
    }
  else
    gtk_widget_add_css_class (label, "numeric");
  gtk_list_item_set_child (item, label);
}

static void
bind_cell (GtkSignalListItemFactory *factory, GtkListItem *item, gpointer data)
{
  ColumnKind kind = GPOINTER_TO_INT (data);
  CowscopeComparisonRow *row = gtk_list_item_get_item (item);
  GtkWidget *label = gtk_list_item_get_child (item);
  g_autofree char *text = NULL;
  gint64 change = cowscope_comparison_row_get_change (row);

  gtk_widget_remove_css_class (label, "comparison-worse");
  gtk_widget_remove_css_class (label, "comparison-better");
  switch (kind)
    {
    case COLUMN_LABEL:
      text = format_label (row);
      gtk_widget_set_tooltip_text (label, text);
      break;
    case COLUMN_BEFORE:
      text = format_value (row, cowscope_comparison_row_get_before (row));
      break;
    case COLUMN_AFTER:
      text = format_value (row, cowscope_comparison_row_get_after (row));
      break;
    case COLUMN_CHANGE:
      text = format_change (row);
      /* More copying is worse, less is better (bytes saved the other way
       * round): red and green, and the sign says which way without
       * colour. */
      if (change != 0)
        gtk_widget_add_css_class (label, (change > 0) != cowscope_comparison_row_more_is_better (row)
                                           ? "comparison-worse" : "comparison-better");
      break;
    case COLUMN_COUNTS:
    default:
      text = g_strdup_printf ("%" G_GINT64_FORMAT " → %" G_GINT64_FORMAT,
                              cowscope_comparison_row_get_before_count (row),
                              cowscope_comparison_row_get_after_count (row));
      break;
    }
  gtk_label_set_text (GTK_LABEL (label), text);
}

static void
add_column (GtkColumnView *view, const char *title, ColumnKind kind)
{
  GtkListItemFactory *factory = gtk_signal_list_item_factory_new ();
  GtkColumnViewColumn *column;

  g_signal_connect (factory, "setup", G_CALLBACK (setup_cell), GINT_TO_POINTER (kind));
  g_signal_connect (factory, "bind", G_CALLBACK (bind_cell), GINT_TO_POINTER (kind));
  column = gtk_column_view_column_new (title, factory);
  gtk_column_view_column_set_expand (column, kind == COLUMN_LABEL);
  gtk_column_view_append_column (view, column);
  g_object_unref (column);
}

static void
loaded_cb (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr (CowscopeComparisonWindow) self = user_data;
  g_autoptr (GError) error = NULL;
  CowscopeComparison *comparison = cowscope_comparison_load_finish (result, &error);
  GListModel *call_sites;

  if (comparison == NULL)
    {
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        {
          adw_status_page_set_description (self->error_page, error->message);
          gtk_stack_set_visible_child_name (self->stack, "error");
        }
      return;
    }
  self->comparison = comparison;
  call_sites = cowscope_comparison_get_call_sites (comparison);
  gtk_column_view_set_model (
    self->totals_view,
    GTK_SELECTION_MODEL (gtk_no_selection_new (g_object_ref (cowscope_comparison_get_totals (comparison)))));
  gtk_column_view_set_model (self->call_sites_view,
                             GTK_SELECTION_MODEL (gtk_no_selection_new (g_object_ref (call_sites))));
  gtk_widget_set_visible (GTK_WIDGET (self->no_change_label),
                          g_list_model_get_n_items (call_sites) == 0);
  gtk_widget_set_visible (GTK_WIDGET (self->call_sites_view),
                          g_list_model_get_n_items (call_sites) > 0);
  gtk_stack_set_visible_child_name (self->stack, "comparison");
}

static void
cowscope_comparison_window_dispose (GObject *object)
{
  CowscopeComparisonWindow *self = COWSCOPE_COMPARISON_WINDOW (object);

  g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  g_clear_object (&self->comparison);
  G_OBJECT_CLASS (cowscope_comparison_window_parent_class)->dispose (object);
}

static void
cowscope_comparison_window_class_init (CowscopeComparisonWindowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = cowscope_comparison_window_dispose;
  gtk_widget_class_set_template_from_resource (
    widget_class, "/org/cowscope/Cowscope/cowscope-comparison-window.ui");
  gtk_widget_class_bind_template_child (widget_class, CowscopeComparisonWindow, window_title);
  gtk_widget_class_bind_template_child (widget_class, CowscopeComparisonWindow, stack);
  gtk_widget_class_bind_template_child (widget_class, CowscopeComparisonWindow, error_page);
  gtk_widget_class_bind_template_child (widget_class, CowscopeComparisonWindow, totals_view);
  gtk_widget_class_bind_template_child (widget_class, CowscopeComparisonWindow, call_sites_view);
  gtk_widget_class_bind_template_child (widget_class, CowscopeComparisonWindow, no_change_label);
}

static void
cowscope_comparison_window_init (CowscopeComparisonWindow *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  self->cancellable = g_cancellable_new ();

  add_column (self->totals_view, _("What"), COLUMN_LABEL);
  add_column (self->totals_view, _("Before"), COLUMN_BEFORE);
  add_column (self->totals_view, _("After"), COLUMN_AFTER);
  add_column (self->totals_view, _("Change"), COLUMN_CHANGE);
  add_column (self->call_sites_view, _("Call site"), COLUMN_LABEL);
  add_column (self->call_sites_view, _("Before"), COLUMN_BEFORE);
  add_column (self->call_sites_view, _("After"), COLUMN_AFTER);
  add_column (self->call_sites_view, _("Change"), COLUMN_CHANGE);
  add_column (self->call_sites_view, _("Copies and steals"), COLUMN_COUNTS);
}

CowscopeComparisonWindow *
cowscope_comparison_window_new (GtkWindow *parent, GFile *before, GFile *after)
{
  CowscopeComparisonWindow *self;
  g_autofree char *before_path = NULL, *after_path = NULL;
  g_autofree char *before_name = NULL, *after_name = NULL, *subtitle = NULL;

  g_return_val_if_fail (G_IS_FILE (before) && G_IS_FILE (after), NULL);

  self = g_object_new (COWSCOPE_TYPE_COMPARISON_WINDOW, "transient-for", parent, NULL);
  before_path = g_file_get_path (before);
  after_path = g_file_get_path (after);
  before_name = g_file_get_basename (before);
  after_name = g_file_get_basename (after);
  /* Translators: the sessions compared, "before.cowscope → after.cowscope". */
  subtitle = g_strdup_printf (_("%s → %s"), before_name, after_name);
  adw_window_title_set_subtitle (self->window_title, subtitle);
  gtk_stack_set_visible_child_name (self->stack, "loading");
  cowscope_comparison_load_async (before_path, after_path, self->cancellable, loaded_cb,
                                  g_object_ref (self));
  return self;
}

CowscopeComparison *
cowscope_comparison_window_get_comparison (CowscopeComparisonWindow *self)
{
  g_return_val_if_fail (COWSCOPE_IS_COMPARISON_WINDOW (self), NULL);
  return self->comparison;
}

const char *
cowscope_comparison_window_get_visible_page (CowscopeComparisonWindow *self)
{
  g_return_val_if_fail (COWSCOPE_IS_COMPARISON_WINDOW (self), NULL);
  return gtk_stack_get_visible_child_name (self->stack);
}
