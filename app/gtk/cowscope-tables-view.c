/* cowscope-tables-view.c — see cowscope-tables-view.h. */
#include "cowscope-config.h"

#include <glib/gi18n.h>
#include <inttypes.h>
#include <string.h>

#include "cowscope-event-item.h"
#include "cowscope-event-list.h"
#include "cowscope-event-pages.h"
#include "cowscope-object-item.h"
#include "cowscope-object-list.h"
#include "cowscope-tables-view.h"
#include "cowscope-warning-item.h"
#include "cowscope-warning-list.h"

#define MAX_SCAN 200000 /* rows searched for a selected seq in a sorted table */

typedef struct _CowscopeTablesView CowscopeTablesView;

/* One column: a number or a text per row. */
typedef struct {
  const char *id;
  const char *title;
  gint64 (*number) (gpointer item);                       /* numeric columns */
  char *(*text) (CowscopeTablesView *self, gpointer item); /* every column */
  const char *property;                                   /* string property for a GtkStringSorter */
  gboolean expand;
  guint min_chars;  /* the narrowest the column gets: a typical value whole */
} ColumnDef;

struct _CowscopeTablesView {
  GtkWidget parent_instance;
  GtkWidget *box;
  GtkSearchEntry *filter_entry;
  GtkLabel *count_label;
  GtkScrolledWindow *scroller;
  GtkColumnView *column_view;

  CowscopeTablesKind kind;
  const ColumnDef *columns;
  guint n_columns;
  CowscopeViewState *state;
  gulong selected_handler;
  GCancellable *cancellable;
  GListModel *source;             /* the model's rows */
  CowscopeEventPages *pages;      /* events: the source read a page at a time, or NULL */
  GtkFilterListModel *filter_model;
  GtkSortListModel *sort_model;
  GtkSingleSelection *selection;
  GtkCustomFilter *filter;
  char *filter_text;              /* casefolded, or NULL */
  gboolean syncing;               /* selection being set from the view state */
  gboolean loaded;
  GCancellable *query_cancellable; /* events: the SQL sort/filter running, or NULL */
  guint pending_scroll;           /* row to scroll to once the list has a size */
  guint scroll_tick;              /* tick callback waiting for that, or 0 */
};

G_DEFINE_FINAL_TYPE (CowscopeTablesView, cowscope_tables_view, GTK_TYPE_WIDGET)

enum { PROP_0, PROP_KIND, PROP_VIEW_STATE, PROP_READY, N_PROPS };
static GParamSpec *properties[N_PROPS];

/* ---- cell values ---- */

/* Session-relative time for people ("12.345678 ms"), or "—". */
static char *
format_ts (CowscopeTablesView *self, gint64 ts)
{
  if (ts < 0 || self->state == NULL)
    return g_strdup ("—");
  gint64 start = cowscope_session_document_get_start_ns (cowscope_view_state_get_document (self->state));
  return g_strdup_printf (_("%.6f ms"), (double) (ts - start) / 1e6);
}

static gint64 ev_seq (gpointer i) { return cowscope_event_item_get_seq (i); }
static gint64 ev_ts (gpointer i) { return cowscope_event_item_get_ts (i); }
static gint64 ev_tid (gpointer i) { return cowscope_event_item_get_tid (i); }
static gint64 ev_pid (gpointer i) { return cowscope_event_item_get_pid (i); }
static char *ev_seq_text (CowscopeTablesView *s, gpointer i) { return g_strdup_printf ("%" G_GINT64_FORMAT, ev_seq (i)); }
static char *ev_ts_text (CowscopeTablesView *s, gpointer i) { return format_ts (s, ev_ts (i)); }
static char *ev_pid_text (CowscopeTablesView *s, gpointer i) { return g_strdup_printf ("%" G_GINT64_FORMAT, ev_pid (i)); }
static char *ev_tid_text (CowscopeTablesView *s, gpointer i)
{
  const char *name = s->state ? cowscope_session_document_thread_name (
    cowscope_view_state_get_document (s->state), cowscope_event_item_get_pid (i), ev_tid (i)) : NULL;
  return name ? g_strdup_printf ("%s (%" G_GINT64_FORMAT ")", name, ev_tid (i))
              : g_strdup_printf ("%" G_GINT64_FORMAT, ev_tid (i));
}
static char *ev_type_text (CowscopeTablesView *s, gpointer i) { return g_strdup (cowscope_event_item_get_type_name (i)); }
static char *ev_op_text (CowscopeTablesView *s, gpointer i) { return g_strdup (cowscope_event_item_get_op_name (i)); }
static char *ev_values_text (CowscopeTablesView *s, gpointer i)
{
  return g_strdup_printf ("%" G_GINT64_FORMAT " %" G_GINT64_FORMAT " %" G_GINT64_FORMAT " %"
                          G_GINT64_FORMAT, cowscope_event_item_get_value (i, 0),
                          cowscope_event_item_get_value (i, 1), cowscope_event_item_get_value (i, 2),
                          cowscope_event_item_get_value (i, 3));
}

static const ColumnDef event_columns[] = {
  { "seq", N_("Seq"), ev_seq, ev_seq_text, NULL, FALSE, 8 },
  { "time", N_("Time"), ev_ts, ev_ts_text, NULL, FALSE, 13 },
  { "pid", N_("Process"), ev_pid, ev_pid_text, NULL, FALSE, 7 },
  { "thread", N_("Thread"), ev_tid, ev_tid_text, NULL, FALSE, 14 },
  { "event", N_("Event"), NULL, ev_type_text, "type-name", FALSE, 14 },
  { "op", N_("Operation"), NULL, ev_op_text, "op-name", FALSE, 12 },
  { "values", N_("Values"), NULL, ev_values_text, NULL, TRUE, 16 },
};

static const char *
object_kind_name (CowscopeNodeKind kind)
{
  switch (kind)
    {
    case COWSCOPE_NODE_ALLOCATION: return _("Allocation");
    case COWSCOPE_NODE_CONTEXT: return _("CoW context");
    case COWSCOPE_NODE_STORAGE: return _("Storage");
    default: return _("Tensor");
    }
}

static gint64 ob_kind (gpointer i) { return cowscope_object_item_get_kind (i); }
static gint64 ob_pid (gpointer i) { return cowscope_object_item_get_pid (i); }
static gint64 ob_id (gpointer i) { return (gint64) cowscope_object_item_get_id (i); }
static gint64 ob_bytes (gpointer i) { return (gint64) cowscope_object_item_get_nbytes (i); }
static gint64 ob_new (gpointer i) { return cowscope_object_item_get_new_ts (i); }
static gint64 ob_free (gpointer i)
{
  gint64 t = cowscope_object_item_get_free_ts (i);
  return t < 0 ? G_MAXINT64 : t; /* never freed sorts last */
}
static char *ob_kind_text (CowscopeTablesView *s, gpointer i) { return g_strdup (object_kind_name (cowscope_object_item_get_kind (i))); }
static char *ob_pid_text (CowscopeTablesView *s, gpointer i) { return g_strdup_printf ("%" G_GINT64_FORMAT, ob_pid (i)); }
static char *ob_id_text (CowscopeTablesView *s, gpointer i) { return g_strdup_printf ("%" G_GINT64_FORMAT, ob_id (i)); }
static char *ob_name_text (CowscopeTablesView *s, gpointer i) { return g_strdup (cowscope_object_item_get_name (i) ? cowscope_object_item_get_name (i) : ""); }
static char *ob_bytes_text (CowscopeTablesView *s, gpointer i)
{
  if (cowscope_object_item_get_kind (i) == COWSCOPE_NODE_TENSOR)
    return g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "%" PRIu64 " element",
                                         "%" PRIu64 " elements",
                                         cowscope_object_item_get_nbytes (i)),
                            cowscope_object_item_get_nbytes (i));
  return g_format_size (cowscope_object_item_get_nbytes (i));
}
static char *ob_new_text (CowscopeTablesView *s, gpointer i) { return format_ts (s, ob_new (i)); }
static char *ob_free_text (CowscopeTablesView *s, gpointer i) { return format_ts (s, cowscope_object_item_get_free_ts (i)); }
static char *ob_op_text (CowscopeTablesView *s, gpointer i) { return g_strdup (cowscope_object_item_get_op (i) ? cowscope_object_item_get_op (i) : ""); }

static const ColumnDef object_columns[] = {
  { "kind", N_("Kind"), ob_kind, ob_kind_text, NULL, FALSE, 10 },
  { "pid", N_("Process"), ob_pid, ob_pid_text, NULL, FALSE, 7 },
  { "id", N_("Id"), ob_id, ob_id_text, NULL, FALSE, 6 },
  { "name", N_("Name"), NULL, ob_name_text, "name", TRUE, 12 },
  { "bytes", N_("Size"), ob_bytes, ob_bytes_text, NULL, FALSE, 12 },
  { "created", N_("Created"), ob_new, ob_new_text, NULL, FALSE, 13 },
  { "freed", N_("Freed"), ob_free, ob_free_text, NULL, FALSE, 13 },
  { "op", N_("Made by"), NULL, ob_op_text, NULL, FALSE, 12 },
};

static gint64 wa_seq (gpointer i) { return cowscope_warning_item_get_seq (i); }
static gint64 wa_ts (gpointer i) { return cowscope_warning_item_get_ts (i); }
static gint64 wa_kind (gpointer i) { return cowscope_warning_item_get_kind (i); }
static gint64 wa_tid (gpointer i) { return cowscope_warning_item_get_tid (i); }
static char *wa_seq_text (CowscopeTablesView *s, gpointer i) { return g_strdup_printf ("%" G_GINT64_FORMAT, wa_seq (i)); }
static char *wa_ts_text (CowscopeTablesView *s, gpointer i) { return format_ts (s, wa_ts (i)); }
static char *wa_kind_text (CowscopeTablesView *s, gpointer i)
{
  switch (cowscope_warning_item_get_kind (i))
    {
    case COWSCOPE_WARNING_VIOLATION: return g_strdup (_("Simulate-mode violation"));
    case COWSCOPE_WARNING_FAILED_COPY: return g_strdup (_("Failed copy"));
    default: return g_strdup (_("Eager copy"));
    }
}
static char *wa_tid_text (CowscopeTablesView *s, gpointer i)
{
  const char *name = s->state ? cowscope_session_document_thread_name (
    cowscope_view_state_get_document (s->state), cowscope_warning_item_get_pid (i), wa_tid (i)) : NULL;
  return name ? g_strdup (name) : g_strdup_printf ("%" G_GINT64_FORMAT, wa_tid (i));
}
static char *wa_message_text (CowscopeTablesView *s, gpointer i) { return g_strdup (cowscope_warning_item_get_message (i)); }

static const ColumnDef warning_columns[] = {
  { "seq", N_("Seq"), wa_seq, wa_seq_text, NULL, FALSE, 8 },
  { "time", N_("Time"), wa_ts, wa_ts_text, NULL, FALSE, 13 },
  { "kind", N_("Kind"), wa_kind, wa_kind_text, NULL, FALSE, 22 },
  { "thread", N_("Thread"), wa_tid, wa_tid_text, NULL, FALSE, 14 },
  { "message", N_("Message"), NULL, wa_message_text, "message", TRUE, 24 },
};

/* The event seq a row stands for, or -1 (objects). */
static gint64
row_seq (CowscopeTablesView *self, gpointer item)
{
  switch (self->kind)
    {
    case COWSCOPE_TABLES_EVENTS: return cowscope_event_item_get_seq (item);
    case COWSCOPE_TABLES_WARNINGS: return cowscope_warning_item_get_seq (item);
    default: return -1;
    }
}

/* ---- cells, sorters, filter ---- */

/* The whole value on hover, for a cell that had to shorten it.  (Not
 * gtk_widget_set_tooltip_text() per bind: under X11 each call asks the
 * server where the pointer is, a round trip per cell.) */
static gboolean
cell_query_tooltip (GtkWidget *label, int x, int y, gboolean keyboard, GtkTooltip *tooltip)
{
  if (!pango_layout_is_ellipsized (gtk_label_get_layout (GTK_LABEL (label))))
    return FALSE;
  gtk_tooltip_set_text (tooltip, gtk_label_get_text (GTK_LABEL (label)));
  return TRUE;
}

/* Whether the column's cells read as numbers (right-aligned, tabular). */
static gboolean
shows_number (const ColumnDef *col)
{
  return col->number != NULL && strcmp (col->id, "kind") != 0 && strcmp (col->id, "thread") != 0;
}

/* A cell is a label that ellipsizes at its end: a value too wide for its
 * column keeps its start ("0.2144…"), never a tail that reads as another
 * number ("4489 ms", as a right-aligned clipped inscription showed).  The
 * column is at least @min_chars wide, so a typical value shows whole. */
static void
setup_cell (GtkSignalListItemFactory *factory, GtkListItem *item, const ColumnDef *col)
{
  GtkWidget *label = gtk_label_new (NULL);
  gtk_label_set_ellipsize (GTK_LABEL (label), PANGO_ELLIPSIZE_END);
  gtk_label_set_single_line_mode (GTK_LABEL (label), TRUE);
  gtk_label_set_width_chars (GTK_LABEL (label), (int) col->min_chars);
  gtk_label_set_max_width_chars (GTK_LABEL (label), col->expand ? 48 : (int) col->min_chars + 4);
  gtk_label_set_xalign (GTK_LABEL (label), shows_number (col) ? 1.0f : 0.0f);
  if (shows_number (col))
    gtk_widget_add_css_class (label, "numeric");
  gtk_widget_set_has_tooltip (label, TRUE);
  g_signal_connect (label, "query-tooltip", G_CALLBACK (cell_query_tooltip), NULL);
  gtk_list_item_set_child (item, label);
}

/* Shows @item's value for @col in @label; a placeholder row (its page
 * being read) shows an ellipsis. */
static void
show_cell (GtkWidget *label, const ColumnDef *col, gpointer item)
{
  CowscopeTablesView *self = g_object_get_data (G_OBJECT (label), "cowscope-view");
  if (COWSCOPE_IS_EVENT_ITEM (item) && !cowscope_event_item_get_loaded (item))
    {
      gtk_label_set_text (GTK_LABEL (label), "…");
      return;
    }
  g_autofree char *text = col->text (self, item);
  gtk_label_set_text (GTK_LABEL (label), text);
}


/* A row's page arrived, or the order changed and it waits again. */
static void
item_loaded_cb (GObject *item, GParamSpec *pspec, GtkWidget *label)
{
  show_cell (label, g_object_get_data (G_OBJECT (label), "cowscope-column"), item);
}

static void
bind_cell (GtkSignalListItemFactory *factory, GtkListItem *item, const ColumnDef *col)
{
  GtkWidget *label = gtk_list_item_get_child (item);
  gpointer row = gtk_list_item_get_item (item);
  g_object_set_data (G_OBJECT (label), "cowscope-view", g_object_get_data (G_OBJECT (factory), "view"));
  g_object_set_data (G_OBJECT (label), "cowscope-column", (gpointer) col);
  show_cell (label, col, row);
  if (COWSCOPE_IS_EVENT_ITEM (row))
    {
      gulong *handler = g_new (gulong, 1);
      *handler = g_signal_connect (row, "notify::loaded", G_CALLBACK (item_loaded_cb), label);
      g_object_set_data_full (G_OBJECT (label), "cowscope-loaded-handler", handler, g_free);
      g_object_set_data_full (G_OBJECT (label), "cowscope-loaded-item", g_object_ref (row), g_object_unref);
    }
}

static void
unbind_cell (GtkSignalListItemFactory *factory, GtkListItem *item, const ColumnDef *col)
{
  GtkWidget *label = gtk_list_item_get_child (item);
  gulong *handler = g_object_get_data (G_OBJECT (label), "cowscope-loaded-handler");
  GObject *row = g_object_get_data (G_OBJECT (label), "cowscope-loaded-item");
  if (handler != NULL && row != NULL)
    g_clear_signal_handler (handler, row);
  g_object_set_data (G_OBJECT (label), "cowscope-loaded-handler", NULL);
  g_object_set_data (G_OBJECT (label), "cowscope-loaded-item", NULL);
}

/* The widest minimum of column @index's cells now made (label and
 * padding), or 0 when no row is made yet. */
static int
column_min_width (CowscopeTablesView *self, guint index)
{
  int min = 0;
  for (GtkWidget *row = gtk_widget_get_first_child (GTK_WIDGET (self->column_view)); row != NULL;
       row = gtk_widget_get_next_sibling (row))
    {
      if (!GTK_IS_LIST_VIEW (row))
        continue;
      for (GtkWidget *r = gtk_widget_get_first_child (row); r != NULL; r = gtk_widget_get_next_sibling (r))
        {
          if (g_strcmp0 (gtk_widget_get_css_name (r), "row") != 0)
            continue;
          GtkWidget *cell = gtk_widget_get_first_child (r);
          for (guint i = 0; cell != NULL && i < index; i++)
            cell = gtk_widget_get_next_sibling (cell);
          GtkWidget *label = cell != NULL ? gtk_widget_get_first_child (cell) : NULL;
          if (label == NULL)
            continue;
          /* The cell reports the column's fixed width: measure its label
           * and add the cell's own padding and border. */
          int m = 0;
          GtkBorder padding, border;
          GtkStyleContext *style = gtk_widget_get_style_context (cell);
          gtk_widget_measure (label, GTK_ORIENTATION_HORIZONTAL, -1, &m, NULL, NULL, NULL);
          gtk_style_context_get_padding (style, &padding);
          gtk_style_context_get_border (style, &border);
          m += gtk_widget_get_margin_start (label) + gtk_widget_get_margin_end (label) + padding.left
               + padding.right + border.left + border.right;
          min = MAX (min, m);
        }
    }
  return min;
}

/* A column the user narrows stops at its cells' minimum: a fixed width
 * below it would clip the labels on the right with no ellipsis. */
static void
fixed_width_cb (GtkColumnViewColumn *column, GParamSpec *pspec, CowscopeTablesView *self)
{
  int fixed = gtk_column_view_column_get_fixed_width (column);
  if (fixed < 0)
    return;
  guint index = GPOINTER_TO_UINT (g_object_get_data (G_OBJECT (column), "cowscope-index"));
  int min = column_min_width (self, index);
  if (fixed < min)
    gtk_column_view_column_set_fixed_width (column, min);
}

/* GtkCClosureExpression callback: the column's number for @item. */
static gint64
column_number (GObject *item, gpointer data)
{
  const ColumnDef *col = data;
  return item != NULL ? col->number (item) : 0;
}

/* GtkCustomSorter for text columns without a string property. */
static int
compare_text (gconstpointer a, gconstpointer b, gpointer data)
{
  const ColumnDef *col = data;
  CowscopeTablesView *self = g_object_get_data (G_OBJECT (a), "cowscope-view");
  g_autofree char *x = col->text (self, (gpointer) a);
  g_autofree char *y = col->text (self, (gpointer) b);
  int r = g_utf8_collate (x, y);
  return r < 0 ? GTK_ORDERING_SMALLER : r > 0 ? GTK_ORDERING_LARGER : GTK_ORDERING_EQUAL;
}

/* A sorter for column @col: numeric on the column's number, a string
 * sorter on the item's string property, else the text collated. */
static GtkSorter *
column_sorter (const ColumnDef *col, GType item_type)
{
  if (col->number == NULL && col->property != NULL)
    return GTK_SORTER (gtk_string_sorter_new (
      gtk_property_expression_new (item_type, NULL, col->property)));
  if (col->number != NULL)
    return GTK_SORTER (gtk_numeric_sorter_new (
      gtk_cclosure_expression_new (G_TYPE_INT64, NULL, 0, NULL, G_CALLBACK (column_number),
                                   (gpointer) col, NULL)));
  return GTK_SORTER (gtk_custom_sorter_new (compare_text, (gpointer) col, NULL));
}

/* ---- events: sorted and filtered in SQL ---- */

/* The events column @col sorts by. */
static CowscopeEventOrder
event_order_of (const ColumnDef *col)
{
  static const struct { const char *id; CowscopeEventOrder order; } orders[] = {
    { "time", COWSCOPE_EVENT_ORDER_TIME },   { "pid", COWSCOPE_EVENT_ORDER_PROCESS },
    { "thread", COWSCOPE_EVENT_ORDER_THREAD }, { "event", COWSCOPE_EVENT_ORDER_TYPE },
    { "op", COWSCOPE_EVENT_ORDER_OP },       { "values", COWSCOPE_EVENT_ORDER_VALUES },
  };
  for (guint i = 0; i < G_N_ELEMENTS (orders); i++)
    if (strcmp (col->id, orders[i].id) == 0)
      return orders[i].order;
  return COWSCOPE_EVENT_ORDER_SEQ;
}

/* GTK 4.8 cannot say which column a person sorted by (4.10 added
 * gtk_column_view_sorter_get_primary_sort_column()).  So each events
 * column gets this probe as its sorter: comparing two marker objects
 * through the column view's sorter reaches the primary column's probe
 * first, and the sign of the result is the order. */
static int
probe_compare (gconstpointer a, gconstpointer b, gpointer data)
{
  const ColumnDef **probed = g_object_get_data (G_OBJECT (a), "cowscope-probed");
  if (probed != NULL && *probed == NULL)
    *probed = data;
  return GTK_ORDERING_SMALLER;
}

static void update_count (CowscopeTablesView *self);
static void state_selected_cb (CowscopeViewState *state, GParamSpec *pspec,
                               CowscopeTablesView *self);

static void
events_queried_cb (GObject *source, GAsyncResult *result, gpointer data)
{
  g_autoptr (GError) error = NULL;
  if (g_cancellable_is_cancelled (g_task_get_cancellable (G_TASK (result))))
    {
      cowscope_event_list_query_finish (COWSCOPE_EVENT_LIST (source), result, NULL);
      return; /* a newer query replaced it, or the view went away */
    }
  CowscopeTablesView *self = data;
  /* The new rows replace every row in one change.  GtkSingleSelection
   * then looks for its selected item among all the added rows (ten
   * million get_item() calls); with no selection it looks at none.  The
   * selected seq is selected again below, at its new position. */
  self->syncing = TRUE;
  gtk_single_selection_set_selected (self->selection, GTK_INVALID_LIST_POSITION);
  self->syncing = FALSE;
  cowscope_event_list_query_finish (COWSCOPE_EVENT_LIST (source), result, &error);
  g_clear_object (&self->query_cancellable);
  update_count (self);
  if (error != NULL)
    gtk_label_set_text (self->count_label, error->message);
  else if (self->state != NULL)
    state_selected_cb (self->state, NULL, self);
}

/* Asks the event list for the order and filter now chosen. */
static void
requery_events (CowscopeTablesView *self)
{
  if (self->kind != COWSCOPE_TABLES_EVENTS || self->source == NULL)
    return;
  const ColumnDef *primary = NULL;
  g_autoptr (GObject) a = g_object_new (G_TYPE_OBJECT, NULL);
  g_autoptr (GObject) b = g_object_new (G_TYPE_OBJECT, NULL);
  g_object_set_data (a, "cowscope-probed", &primary);
  GtkOrdering ordering = gtk_sorter_compare (gtk_column_view_get_sorter (self->column_view), a, b);
  CowscopeEventOrder order = primary != NULL ? event_order_of (primary) : COWSCOPE_EVENT_ORDER_SEQ;

  g_cancellable_cancel (self->query_cancellable);
  g_clear_object (&self->query_cancellable);
  self->query_cancellable = g_cancellable_new ();
  /* The task does not hold the view: dispose cancels the query, and the
   * callback touches the view only for a query that was not cancelled. */
  cowscope_event_list_query_async (COWSCOPE_EVENT_LIST (self->source), order,
                                   ordering == GTK_ORDERING_LARGER, self->filter_text,
                                   self->query_cancellable, events_queried_cb, self);
  update_count (self);
}

static void
events_sorter_changed_cb (GtkSorter *sorter, GtkSorterChange change, CowscopeTablesView *self)
{
  requery_events (self);
}

/* The filter: any column's text contains the search text. */
static gboolean
filter_row (gpointer item, gpointer data)
{
  CowscopeTablesView *self = data;
  if (self->filter_text == NULL)
    return TRUE;
  for (guint c = 0; c < self->n_columns; c++)
    {
      g_autofree char *text = self->columns[c].text (self, item);
      g_autofree char *folded = g_utf8_casefold (text ? text : "", -1);
      if (strstr (folded, self->filter_text) != NULL)
        return TRUE;
    }
  return FALSE;
}

/* ---- state ---- */

static gboolean
compute_ready (CowscopeTablesView *self)
{
  return self->loaded && self->query_cancellable == NULL &&
         (self->pages == NULL || cowscope_event_pages_get_n_pending (self->pages) == 0) &&
         gtk_sort_list_model_get_pending (self->sort_model) == 0 &&
         gtk_filter_list_model_get_pending (self->filter_model) == 0;
}

/* Updates the row count and notifies "ready". */
static void
update_count (CowscopeTablesView *self)
{
  guint shown = g_list_model_get_n_items (G_LIST_MODEL (self->sort_model));
  guint all = self->source ? g_list_model_get_n_items (self->source) : 0;
  g_autofree char *text = shown == all
    ? g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "%u row", "%u rows", all), all)
    : g_strdup_printf (_("%u of %u rows"), shown, all);
  gtk_label_set_text (self->count_label, !self->loaded                   ? _("Loading…")
                                         : self->query_cancellable != NULL ? _("Sorting and filtering…")
                                                                           : text);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_READY]);
}

static void
pending_cb (GObject *model, GParamSpec *pspec, CowscopeTablesView *self)
{
  update_count (self);
}

/* Frame clock tick while a scroll waits for the list's size. */
static gboolean
pending_scroll_tick (GtkWidget *list, GdkFrameClock *clock, gpointer data)
{
  CowscopeTablesView *self = data;
  if (gtk_widget_get_height (list) <= 0)
    return G_SOURCE_CONTINUE;
  self->scroll_tick = 0;
  guint position = self->pending_scroll;
  self->pending_scroll = GTK_INVALID_LIST_POSITION;
  if (position != GTK_INVALID_LIST_POSITION &&
      position < g_list_model_get_n_items (G_LIST_MODEL (self->selection)))
    gtk_widget_activate_action (list, "list.scroll-to-item", "u", position);
  return G_SOURCE_REMOVE;
}

/* The column view's inner GtkListView. */
static GtkWidget *
inner_list (CowscopeTablesView *self)
{
  for (GtkWidget *child = gtk_widget_get_first_child (GTK_WIDGET (self->column_view));
       child != NULL; child = gtk_widget_get_next_sibling (child))
    if (GTK_IS_LIST_VIEW (child))
      return child;
  return NULL;
}

/* Scrolls so row @position is in view.  GTK 4.8 has no
 * gtk_column_view_scroll_to(); the column view's inner GtkListView has
 * the documented "list.scroll-to-item" action, which scrolls by anchor and
 * so also works right after the rows changed, before a new layout (setting
 * the adjustment then makes GtkListBase warn and ignore it).
 *
 * A list that has no height yet (a tab not shown) would set its anchor
 * for a zero-height view and make a widget for that one row only: the
 * rest stayed blank until a scroll.  So there the scroll waits for the
 * first frame after the list has its size. */
static void
scroll_to_row (CowscopeTablesView *self, guint position)
{
  GtkWidget *list = inner_list (self);
  if (list == NULL)
    return;
  if (gtk_widget_get_mapped (list) && gtk_widget_get_height (list) > 0)
    {
      self->pending_scroll = GTK_INVALID_LIST_POSITION;
      gtk_widget_activate_action (list, "list.scroll-to-item", "u", position);
      return;
    }
  self->pending_scroll = position;
  if (self->scroll_tick == 0)
    self->scroll_tick = gtk_widget_add_tick_callback (list, pending_scroll_tick, self, NULL);
}

/* The shown position of event @seq, or GTK_INVALID_LIST_POSITION. */
static guint
position_of_seq (CowscopeTablesView *self, gint64 seq)
{
  GListModel *rows = G_LIST_MODEL (self->sort_model);
  guint n = g_list_model_get_n_items (rows);
  if (seq < 0 || n == 0)
    return GTK_INVALID_LIST_POSITION;
  if (self->kind == COWSCOPE_TABLES_EVENTS) /* sorted and filtered by the list itself */
    {
      gint64 pos = cowscope_event_list_position_of (COWSCOPE_EVENT_LIST (self->source), seq);
      return pos >= 0 && pos < n ? (guint) pos : GTK_INVALID_LIST_POSITION;
    }
  for (guint i = 0; i < n && i < MAX_SCAN; i++)
    {
      g_autoptr (GObject) item = g_list_model_get_item (rows, i);
      if (row_seq (self, item) == seq)
        return i;
    }
  return GTK_INVALID_LIST_POSITION;
}

/* The view state's selected seq changed: select (and show) its row. */
static void
state_selected_cb (CowscopeViewState *state, GParamSpec *pspec, CowscopeTablesView *self)
{
  if (self->syncing || !self->loaded || self->kind == COWSCOPE_TABLES_OBJECTS)
    return;
  guint pos = position_of_seq (self, cowscope_view_state_get_selected_seq (state));
  self->syncing = TRUE;
  gtk_single_selection_set_selected (self->selection, pos);
  self->syncing = FALSE;
  if (pos != GTK_INVALID_LIST_POSITION)
    scroll_to_row (self, pos);
}

/* A row was chosen: tell the view state. */
static void
selection_cb (GtkSingleSelection *selection, GParamSpec *pspec, CowscopeTablesView *self)
{
  if (self->syncing || self->state == NULL)
    return;
  gpointer item = gtk_single_selection_get_selected_item (selection);
  if (item == NULL)
    return;
  self->syncing = TRUE;
  if (self->kind == COWSCOPE_TABLES_OBJECTS)
    {
      CowscopeObjectRef ref = { cowscope_object_item_get_kind (item),
                                cowscope_object_item_get_pid (item),
                                cowscope_object_item_get_id (item) };
      cowscope_view_state_set_highlights (self->state, &ref, 1);
      gint64 born = cowscope_object_item_get_new_ts (item);
      gint64 freed = cowscope_object_item_get_free_ts (item);
      gint64 cursor = cowscope_view_state_get_cursor (self->state);
      if (cursor < born || (freed >= 0 && cursor >= freed))
        cowscope_view_state_set_cursor (self->state, born);
    }
  else
    cowscope_view_state_set_selected_seq (self->state, row_seq (self, item));
  self->syncing = FALSE;
}

/* Items are made by the model; the text sorter needs the view: tag them. */
static gpointer
tag_item (gpointer item, gpointer data)
{
  g_object_set_data (item, "cowscope-view", data);
  return item;
}

/* Worker thread: reads the keys of the table's rows. */
static void
load_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  CowscopeTablesView *self = source;
  CowscopeSessionDocument *doc = task_data;
  GError *error = NULL;
  GListModel *model = NULL;
  switch (self->kind)
    {
    case COWSCOPE_TABLES_EVENTS:
      model = G_LIST_MODEL (cowscope_event_list_new (doc));
      break;
    case COWSCOPE_TABLES_WARNINGS:
      model = G_LIST_MODEL (cowscope_warning_list_new (doc, &error));
      break;
    default:
      {
        GListStore *store = g_list_store_new (G_TYPE_LIST_MODEL);
        for (guint k = 0; k < COWSCOPE_N_OBJECT_KINDS && error == NULL; k++)
          {
            g_autoptr (CowscopeObjectList) list = cowscope_object_list_new (doc, k, &error);
            if (list != NULL)
              g_list_store_append (store, list);
          }
        model = error == NULL ? G_LIST_MODEL (gtk_flatten_list_model_new (G_LIST_MODEL (store)))
                              : (g_object_unref (store), NULL);
      }
      break;
    }
  if (model == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, model, g_object_unref);
}

static void
loaded_cb (GObject *source, GAsyncResult *result, gpointer data)
{
  CowscopeTablesView *self = COWSCOPE_TABLES_VIEW (source);
  g_autoptr (GError) error = NULL;
  GListModel *model = g_task_propagate_pointer (G_TASK (result), &error);
  if (model == NULL)
    {
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        gtk_label_set_text (self->count_label, error->message);
      return;
    }
  if (g_task_get_cancellable (G_TASK (result)) != self->cancellable)
    {
      g_object_unref (model);
      return;
    }
  g_clear_object (&self->source);
  self->source = model;
  GListModel *shown = model;
  if (self->kind == COWSCOPE_TABLES_EVENTS)
    {
      /* The view reads events a page at a time off the main thread. */
      self->pages = cowscope_event_pages_new (COWSCOPE_EVENT_LIST (model));
      g_signal_connect (self->pages, "notify::n-pending", G_CALLBACK (pending_cb), self);
      shown = G_LIST_MODEL (self->pages);
    }
  GtkMapListModel *tagged = gtk_map_list_model_new (g_object_ref (shown), tag_item, self, NULL);
  gtk_filter_list_model_set_model (self->filter_model, G_LIST_MODEL (tagged));
  g_object_unref (tagged);
  self->loaded = TRUE;
  update_count (self);
  if (self->state != NULL)
    state_selected_cb (self->state, NULL, self);
  GtkSorter *sorter = gtk_column_view_get_sorter (self->column_view);
  if (self->filter_text != NULL || gtk_sorter_get_order (sorter) != GTK_SORTER_ORDER_NONE)
    requery_events (self);
}

static void
filter_changed_cb (GtkSearchEntry *entry, CowscopeTablesView *self)
{
  cowscope_tables_view_set_filter_text (self, gtk_editable_get_text (GTK_EDITABLE (entry)));
}

static void
clear_pages (CowscopeTablesView *self)
{
  if (self->pages != NULL)
    g_signal_handlers_disconnect_by_func (self->pages, pending_cb, self);
  g_clear_object (&self->pages);
}

/* ---- GObject ---- */

static void
cowscope_tables_view_constructed (GObject *object)
{
  CowscopeTablesView *self = COWSCOPE_TABLES_VIEW (object);
  G_OBJECT_CLASS (cowscope_tables_view_parent_class)->constructed (object);
  switch (self->kind)
    {
    case COWSCOPE_TABLES_EVENTS:
      self->columns = event_columns, self->n_columns = G_N_ELEMENTS (event_columns);
      break;
    case COWSCOPE_TABLES_OBJECTS:
      self->columns = object_columns, self->n_columns = G_N_ELEMENTS (object_columns);
      break;
    default:
      self->columns = warning_columns, self->n_columns = G_N_ELEMENTS (warning_columns);
      break;
    }
  gboolean sql_rows = self->kind == COWSCOPE_TABLES_EVENTS;
  GType item_type = self->kind == COWSCOPE_TABLES_EVENTS    ? COWSCOPE_TYPE_EVENT_ITEM
                    : self->kind == COWSCOPE_TABLES_OBJECTS ? COWSCOPE_TYPE_OBJECT_ITEM
                                                            : COWSCOPE_TYPE_WARNING_ITEM;
  for (guint c = 0; c < self->n_columns; c++)
    {
      const ColumnDef *col = &self->columns[c];
      GtkListItemFactory *factory = gtk_signal_list_item_factory_new ();
      g_object_set_data (G_OBJECT (factory), "view", self);
      g_signal_connect (factory, "setup", G_CALLBACK (setup_cell), (gpointer) col);
      g_signal_connect (factory, "bind", G_CALLBACK (bind_cell), (gpointer) col);
      g_signal_connect (factory, "unbind", G_CALLBACK (unbind_cell), (gpointer) col);
      GtkColumnViewColumn *column = gtk_column_view_column_new (_(col->title), factory);
      /* gtk_column_view_column_set_id() is GTK 4.10. */
      g_object_set_data (G_OBJECT (column), "cowscope-id", (gpointer) col->id);
      gtk_column_view_column_set_resizable (column, TRUE);
      g_object_set_data (G_OBJECT (column), "cowscope-index", GUINT_TO_POINTER (c));
      g_signal_connect_object (column, "notify::fixed-width", G_CALLBACK (fixed_width_cb), self, 0);
      gtk_column_view_column_set_expand (column, col->expand);
      GtkSorter *sorter = sql_rows ? GTK_SORTER (gtk_custom_sorter_new (probe_compare, (gpointer) col, NULL))
                                   : column_sorter (col, item_type);
      gtk_column_view_column_set_sorter (column, sorter);
      g_object_unref (sorter);
      gtk_column_view_append_column (self->column_view, column);
      g_object_unref (column);
    }

  /* Events are sorted and filtered by their list, in SQL: the models
   * below pass them through. */
  self->filter = gtk_custom_filter_new (filter_row, self, NULL);
  self->filter_model = gtk_filter_list_model_new (
    NULL, sql_rows ? NULL : GTK_FILTER (g_object_ref (self->filter)));
  gtk_filter_list_model_set_incremental (self->filter_model, TRUE);
  GtkSorter *view_sorter = gtk_column_view_get_sorter (self->column_view);
  self->sort_model = gtk_sort_list_model_new (G_LIST_MODEL (g_object_ref (self->filter_model)),
                                              sql_rows ? NULL : g_object_ref (view_sorter));
  if (sql_rows)
    g_signal_connect (view_sorter, "changed", G_CALLBACK (events_sorter_changed_cb), self);
  gtk_sort_list_model_set_incremental (self->sort_model, TRUE);
  self->selection = gtk_single_selection_new (G_LIST_MODEL (g_object_ref (self->sort_model)));
  gtk_single_selection_set_autoselect (self->selection, FALSE);
  gtk_single_selection_set_can_unselect (self->selection, TRUE);
  gtk_column_view_set_model (self->column_view, GTK_SELECTION_MODEL (self->selection));
  g_signal_connect (self->selection, "notify::selected", G_CALLBACK (selection_cb), self);
  g_signal_connect (self->sort_model, "notify::pending", G_CALLBACK (pending_cb), self);
  g_signal_connect (self->filter_model, "notify::pending", G_CALLBACK (pending_cb), self);
  g_signal_connect_swapped (self->sort_model, "items-changed", G_CALLBACK (update_count), self);
}

static void
cowscope_tables_view_dispose (GObject *object)
{
  CowscopeTablesView *self = COWSCOPE_TABLES_VIEW (object);
  cowscope_tables_view_set_view_state (self, NULL);
  g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  g_cancellable_cancel (self->query_cancellable);
  g_clear_object (&self->query_cancellable);
  if (self->column_view != NULL)
    g_signal_handlers_disconnect_by_func (gtk_column_view_get_sorter (self->column_view),
                                          events_sorter_changed_cb, self);
  if (self->scroll_tick != 0 && self->column_view != NULL && inner_list (self) != NULL)
    gtk_widget_remove_tick_callback (inner_list (self), self->scroll_tick);
  self->scroll_tick = 0;
  if (self->column_view != NULL)
    gtk_column_view_set_model (self->column_view, NULL);
  g_clear_object (&self->selection);
  g_clear_object (&self->sort_model);
  g_clear_object (&self->filter_model);
  g_clear_object (&self->filter);
  clear_pages (self);
  g_clear_object (&self->source);
  gtk_widget_dispose_template (GTK_WIDGET (self), COWSCOPE_TYPE_TABLES_VIEW);
  G_OBJECT_CLASS (cowscope_tables_view_parent_class)->dispose (object);
}

static void
cowscope_tables_view_finalize (GObject *object)
{
  g_free (COWSCOPE_TABLES_VIEW (object)->filter_text);
  G_OBJECT_CLASS (cowscope_tables_view_parent_class)->finalize (object);
}

static void
cowscope_tables_view_get_property (GObject *object, guint prop_id, GValue *value,
                                   GParamSpec *pspec)
{
  CowscopeTablesView *self = COWSCOPE_TABLES_VIEW (object);
  switch (prop_id)
    {
    case PROP_KIND: g_value_set_int (value, self->kind); break;
    case PROP_VIEW_STATE: g_value_set_object (value, self->state); break;
    case PROP_READY: g_value_set_boolean (value, compute_ready (self)); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
cowscope_tables_view_set_property (GObject *object, guint prop_id, const GValue *value,
                                   GParamSpec *pspec)
{
  CowscopeTablesView *self = COWSCOPE_TABLES_VIEW (object);
  switch (prop_id)
    {
    case PROP_KIND: self->kind = g_value_get_int (value); break;
    case PROP_VIEW_STATE: cowscope_tables_view_set_view_state (self, g_value_get_object (value)); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
cowscope_tables_view_class_init (CowscopeTablesViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  object_class->constructed = cowscope_tables_view_constructed;
  object_class->dispose = cowscope_tables_view_dispose;
  object_class->finalize = cowscope_tables_view_finalize;
  object_class->get_property = cowscope_tables_view_get_property;
  object_class->set_property = cowscope_tables_view_set_property;

  properties[PROP_KIND] = g_param_spec_int ("kind", NULL, NULL, COWSCOPE_TABLES_EVENTS,
                                            COWSCOPE_TABLES_WARNINGS, COWSCOPE_TABLES_EVENTS,
                                            G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY |
                                              G_PARAM_STATIC_STRINGS);
  properties[PROP_VIEW_STATE] =
    g_param_spec_object ("view-state", NULL, NULL, COWSCOPE_TYPE_VIEW_STATE,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_READY] = g_param_spec_boolean ("ready", NULL, NULL, FALSE,
                                                 G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/org/cowscope/Cowscope/cowscope-tables-view.ui");
  gtk_widget_class_bind_template_child (widget_class, CowscopeTablesView, box);
  gtk_widget_class_bind_template_child (widget_class, CowscopeTablesView, filter_entry);
  gtk_widget_class_bind_template_child (widget_class, CowscopeTablesView, count_label);
  gtk_widget_class_bind_template_child (widget_class, CowscopeTablesView, scroller);
  gtk_widget_class_bind_template_child (widget_class, CowscopeTablesView, column_view);
  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_css_name (widget_class, "cowscope-tables-view");
}

static void
cowscope_tables_view_init (CowscopeTablesView *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  self->pending_scroll = GTK_INVALID_LIST_POSITION;
  g_signal_connect (self->filter_entry, "search-changed", G_CALLBACK (filter_changed_cb), self);
}

GtkWidget *
cowscope_tables_view_new (CowscopeTablesKind kind)
{
  return g_object_new (COWSCOPE_TYPE_TABLES_VIEW, "kind", (int) kind, NULL);
}

CowscopeTablesKind
cowscope_tables_view_get_kind (CowscopeTablesView *self)
{
  return self->kind;
}

CowscopeViewState *
cowscope_tables_view_get_view_state (CowscopeTablesView *self)
{
  g_return_val_if_fail (COWSCOPE_IS_TABLES_VIEW (self), NULL);
  return self->state;
}

void
cowscope_tables_view_set_view_state (CowscopeTablesView *self, CowscopeViewState *state)
{
  g_return_if_fail (COWSCOPE_IS_TABLES_VIEW (self));
  g_return_if_fail (state == NULL || COWSCOPE_IS_VIEW_STATE (state));
  if (self->state == state)
    return;
  if (self->state != NULL)
    {
      g_clear_signal_handler (&self->selected_handler, self->state);
      g_clear_object (&self->state);
    }
  g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  g_cancellable_cancel (self->query_cancellable);
  g_clear_object (&self->query_cancellable);
  self->loaded = FALSE;
  if (self->filter_model != NULL)
    gtk_filter_list_model_set_model (self->filter_model, NULL);
  clear_pages (self);
  g_clear_object (&self->source);
  if (state != NULL)
    {
      self->state = g_object_ref (state);
      self->selected_handler = g_signal_connect (state, "notify::selected-seq",
                                                 G_CALLBACK (state_selected_cb), self);
      self->cancellable = g_cancellable_new ();
      GTask *task = g_task_new (self, self->cancellable, loaded_cb, NULL);
      g_task_set_task_data (task, g_object_ref (cowscope_view_state_get_document (state)),
                            g_object_unref);
      g_task_run_in_thread (task, load_thread);
      g_object_unref (task);
    }
  if (self->count_label != NULL)
    update_count (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_VIEW_STATE]);
}

gboolean
cowscope_tables_view_get_ready (CowscopeTablesView *self)
{
  g_return_val_if_fail (COWSCOPE_IS_TABLES_VIEW (self), FALSE);
  return compute_ready (self);
}

GListModel *
cowscope_tables_view_get_rows (CowscopeTablesView *self)
{
  g_return_val_if_fail (COWSCOPE_IS_TABLES_VIEW (self), NULL);
  if (!self->loaded)
    return NULL;
  /* Events: the list itself, in the same order, read when asked. */
  return self->kind == COWSCOPE_TABLES_EVENTS ? self->source : G_LIST_MODEL (self->sort_model);
}

void
cowscope_tables_view_sort_by (CowscopeTablesView *self, const char *column_id, GtkSortType order)
{
  g_return_if_fail (COWSCOPE_IS_TABLES_VIEW (self));
  GListModel *columns = gtk_column_view_get_columns (self->column_view);
  for (guint i = 0; i < g_list_model_get_n_items (columns); i++)
    {
      g_autoptr (GtkColumnViewColumn) column = g_list_model_get_item (columns, i);
      if (g_strcmp0 (g_object_get_data (G_OBJECT (column), "cowscope-id"), column_id) == 0)
        gtk_column_view_sort_by_column (self->column_view, column, order);
    }
}

void
cowscope_tables_view_set_filter_text (CowscopeTablesView *self, const char *text)
{
  g_return_if_fail (COWSCOPE_IS_TABLES_VIEW (self));
  g_clear_pointer (&self->filter_text, g_free);
  if (text != NULL && text[0] != '\0')
    self->filter_text = g_utf8_casefold (text, -1);
  if (g_strcmp0 (gtk_editable_get_text (GTK_EDITABLE (self->filter_entry)), text ? text : "") != 0)
    {
      g_signal_handlers_block_by_func (self->filter_entry, filter_changed_cb, self);
      gtk_editable_set_text (GTK_EDITABLE (self->filter_entry), text ? text : "");
      g_signal_handlers_unblock_by_func (self->filter_entry, filter_changed_cb, self);
    }
  if (self->kind == COWSCOPE_TABLES_EVENTS)
    requery_events (self);
  else
    gtk_filter_changed (GTK_FILTER (self->filter), GTK_FILTER_CHANGE_DIFFERENT);
  update_count (self);
}

void
cowscope_tables_view_select_row (CowscopeTablesView *self, guint position)
{
  g_return_if_fail (COWSCOPE_IS_TABLES_VIEW (self));
  gtk_single_selection_set_selected (self->selection, position);
}

guint
cowscope_tables_view_get_selected_row (CowscopeTablesView *self)
{
  g_return_val_if_fail (COWSCOPE_IS_TABLES_VIEW (self), GTK_INVALID_LIST_POSITION);
  return gtk_single_selection_get_selected (self->selection);
}
