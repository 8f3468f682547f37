/* cowscope-call-tree-view.c — see cowscope-call-tree-view.h. */
#include "cowscope-config.h"

#include <adwaita.h>
#include <glib/gi18n.h>
#include <inttypes.h>

#include "cowscope-call-event-item.h"
#include "cowscope-call-events-view.h"
#include "cowscope-call-node.h"
#include "cowscope-call-tree-view.h"
#include "cowscope-flame-graph.h"
#include "cowscope-timeline-format.h"

/* Range drags change the range at every motion: rebuild once it rests. */
#define REBUILD_DELAY_MS 150
/* The storages highlighted for a node, at most (of its events listed). */
#define HIGHLIGHT_LIMIT 256

struct _CowscopeCallTreeView {
  GtkWidget parent_instance;

  /* Template children */
  GtkWidget *box;
  GtkToggleButton *top_down_button, *bottom_up_button, *tree_button, *flame_button;
  GtkDropDown *metric_dropdown, *grouping_dropdown;
  GtkCheckButton *internal_check;
  GtkSpinner *spinner;
  GtkLabel *range_label;
  GtkWidget *clear_range_button;
  GtkStack *stack;
  GtkColumnView *column_view;
  CowscopeFlameGraph *flame_graph;
  AdwStatusPage *empty_page;
  CowscopeCallEventsView *events_view;

  CowscopeViewState *state;
  gulong range_start_handler, range_end_handler;
  guint rebuild_source;
  gboolean stale;                   /* to build again once shown */
  GCancellable *build_cancellable;
  CowscopeCallTree *tree;
  CowscopeCallTreeDirection direction;
  CowscopeCallMetric metric;
  GtkColumnViewColumn *columns[5]; /* site, bytes, share, events, time */
  GtkSortListModel *sort_model;
  GtkSingleSelection *selection;
  gboolean syncing;                 /* selection changes made here */
  guint selected;
  GPtrArray *selected_path;         /* keys from the root, kept across rebuilds */
  CowscopeCallTreeDirection selected_direction;
  CowscopeFrameRef *pending_site;   /* to show once the tree is built */
  char *pending_strings[3];

  gboolean activate_when_listed;    /* go to the node's largest event once listed */
};

G_DEFINE_FINAL_TYPE (CowscopeCallTreeView, cowscope_call_tree_view, GTK_TYPE_WIDGET)

enum { PROP_0, PROP_VIEW_STATE, PROP_READY, N_PROPS };
static GParamSpec *properties[N_PROPS];

enum { COLUMN_SITE, COLUMN_BYTES, COLUMN_SHARE, COLUMN_EVENTS, COLUMN_TIME };

static void rebuild (CowscopeCallTreeView *self);

/* ---- formatting ------------------------------------------------------------ */

static CowscopeCallNode *
row_node (gpointer item)
{
  if (GTK_IS_TREE_LIST_ROW (item))
    return COWSCOPE_CALL_NODE (gtk_tree_list_row_get_item (item)); /* a new reference */
  return g_object_ref (item);
}

static char *
format_bytes (guint64 bytes)
{
  return g_format_size_full (bytes, G_FORMAT_SIZE_IEC_UNITS);
}

/* "+12.5 ms" from the session's start. */
static char *
format_instant (CowscopeCallTreeView *self, gint64 ns)
{
  gint64 origin = cowscope_session_document_get_start_ns (cowscope_view_state_get_document (self->state));
  g_autofree char *d = cowscope_timeline_format_duration (MAX (ns - origin, 0));
  return g_strdup_printf ("+%s", d);
}

/* ---- the tree table -------------------------------------------------------- */

static void
setup_site_cb (GtkSignalListItemFactory *factory, GtkListItem *item, gpointer data)
{
  GtkWidget *expander = gtk_tree_expander_new ();
  GtkWidget *label = gtk_inscription_new (NULL);
  gtk_inscription_set_text_overflow (GTK_INSCRIPTION (label), GTK_INSCRIPTION_OVERFLOW_ELLIPSIZE_END);
  gtk_widget_set_hexpand (label, TRUE);
  gtk_tree_expander_set_child (GTK_TREE_EXPANDER (expander), label);
  gtk_list_item_set_child (item, expander);
}

static void
bind_site_cb (GtkSignalListItemFactory *factory, GtkListItem *item, CowscopeCallTreeView *self)
{
  GtkTreeListRow *row = gtk_list_item_get_item (item);
  GtkWidget *expander = gtk_list_item_get_child (item);
  g_autoptr (CowscopeCallNode) node = row_node (row);
  GtkWidget *label = gtk_tree_expander_get_child (GTK_TREE_EXPANDER (expander));
  const CowscopeCallFrame *frame =
    cowscope_call_tree_get_frame (cowscope_call_node_get_tree (node), cowscope_call_node_get_node (node));

  gtk_tree_expander_set_list_row (GTK_TREE_EXPANDER (expander), row);
  gtk_inscription_set_text (GTK_INSCRIPTION (label), cowscope_call_node_get_display (node));
  if (frame != NULL)
    {
      g_autofree char *tip = frame->ref.file != NULL
                               ? g_strdup_printf ("%s\n%s", frame->site, frame->ref.file)
                               : g_strdup_printf ("%s\n%s", frame->site,
                                                  frame->ref.module != NULL ? frame->ref.module : "");
      gtk_widget_set_tooltip_text (label, tip);
    }
  else
    gtk_widget_set_tooltip_text (label, NULL);
  if (frame != NULL && (frame->internal || frame->no_stack))
    gtk_widget_add_css_class (label, "dim-label");
  else
    gtk_widget_remove_css_class (label, "dim-label");
}

static void
unbind_site_cb (GtkSignalListItemFactory *factory, GtkListItem *item, gpointer data)
{
  gtk_tree_expander_set_list_row (GTK_TREE_EXPANDER (gtk_list_item_get_child (item)), NULL);
}

static void
setup_number_cb (GtkSignalListItemFactory *factory, GtkListItem *item, gpointer data)
{
  GtkWidget *label = gtk_inscription_new (NULL);
  gtk_inscription_set_xalign (GTK_INSCRIPTION (label), 1.0f);
  gtk_inscription_set_text_overflow (GTK_INSCRIPTION (label), GTK_INSCRIPTION_OVERFLOW_ELLIPSIZE_END);
  gtk_widget_add_css_class (label, "numeric");
  gtk_list_item_set_child (item, label);
}

static void
bind_number_cb (GtkSignalListItemFactory *factory, GtkListItem *item, CowscopeCallTreeView *self)
{
  g_autoptr (CowscopeCallNode) node = row_node (gtk_list_item_get_item (item));
  CowscopeCallTree *tree = cowscope_call_node_get_tree (node);
  const CowscopeCallWeights *w = cowscope_call_tree_get_total (tree, cowscope_call_node_get_node (node));
  guint column = GPOINTER_TO_UINT (g_object_get_data (G_OBJECT (factory), "column"));
  g_autofree char *text = NULL;

  switch (column)
    {
    case COLUMN_BYTES:
      text = format_bytes (w->copy_bytes + w->eager_bytes);
      break;
    case COLUMN_SHARE:
      {
        guint root = cowscope_call_tree_get_root (tree, self->direction);
        guint64 all = cowscope_call_weights_get (cowscope_call_tree_get_total (tree, root), self->metric);
        double share = all > 0 ? 100.0 * (double) cowscope_call_weights_get (w, self->metric) / (double) all
                               : 0.0;
        text = g_strdup_printf ("%.1f %%", share);
        break;
      }
    case COLUMN_EVENTS:
      text = cowscope_timeline_format_number (cowscope_call_weights_get (w, COWSCOPE_CALL_METRIC_EVENTS));
      break;
    case COLUMN_TIME:
    default:
      text = cowscope_timeline_format_duration ((gint64) w->time_ns);
      break;
    }
  gtk_inscription_set_text (GTK_INSCRIPTION (gtk_list_item_get_child (item)), text);
}

/* A column of node property @property (NULL: no sorter). */
static GtkColumnViewColumn *
add_column (CowscopeCallTreeView *self, guint column, const char *title, const char *property,
            gboolean expand)
{
  GtkListItemFactory *factory = gtk_signal_list_item_factory_new ();
  g_object_set_data (G_OBJECT (factory), "column", GUINT_TO_POINTER (column));
  if (column == COLUMN_SITE)
    {
      g_signal_connect (factory, "setup", G_CALLBACK (setup_site_cb), self);
      g_signal_connect (factory, "bind", G_CALLBACK (bind_site_cb), self);
      g_signal_connect (factory, "unbind", G_CALLBACK (unbind_site_cb), self);
    }
  else
    {
      g_signal_connect (factory, "setup", G_CALLBACK (setup_number_cb), self);
      g_signal_connect (factory, "bind", G_CALLBACK (bind_number_cb), self);
    }
  GtkColumnViewColumn *c = gtk_column_view_column_new (title, factory);
  gtk_column_view_column_set_expand (c, expand);
  gtk_column_view_column_set_resizable (c, TRUE);
  if (column != COLUMN_SITE)
    gtk_column_view_column_set_fixed_width (c, column == COLUMN_SHARE ? 72 : 96);
  if (property != NULL)
    {
      GtkExpression *e = gtk_property_expression_new (COWSCOPE_TYPE_CALL_NODE, NULL, property);
      GtkSorter *sorter = GTK_SORTER (gtk_numeric_sorter_new (e));
      gtk_column_view_column_set_sorter (c, sorter);
      g_object_unref (sorter);
    }
  gtk_column_view_append_column (self->column_view, c);
  self->columns[column] = c;
  g_object_unref (c);
  return c;
}

static GListModel *
create_children_cb (gpointer item, gpointer data)
{
  return cowscope_call_node_list_children (item);
}

/* The metric's column, for sorting. */
static GtkColumnViewColumn *
metric_column (CowscopeCallTreeView *self)
{
  switch (self->metric)
    {
    case COWSCOPE_CALL_METRIC_EVENTS: return self->columns[COLUMN_EVENTS];
    case COWSCOPE_CALL_METRIC_TIME: return self->columns[COLUMN_TIME];
    case COWSCOPE_CALL_METRIC_BYTES:
    default: return self->columns[COLUMN_BYTES];
    }
}

/* The position of the row of @node in the shown rows, expanding its
 * ancestors; GTK_INVALID_LIST_POSITION when it is not in this tree. */
static guint
reveal (CowscopeCallTreeView *self, guint node)
{
  if (self->sort_model == NULL || node == COWSCOPE_CALL_TREE_NO_NODE)
    return GTK_INVALID_LIST_POSITION;
  g_autoptr (GArray) chain = g_array_new (FALSE, FALSE, sizeof (guint));
  for (guint n = node; n != COWSCOPE_CALL_TREE_NO_NODE; n = cowscope_call_tree_get_parent (self->tree, n))
    g_array_prepend_val (chain, n);
  if (g_array_index (chain, guint, 0) != cowscope_call_tree_get_root (self->tree, self->direction))
    return GTK_INVALID_LIST_POSITION;
  GListModel *rows = G_LIST_MODEL (self->sort_model);
  guint pos = 0;
  for (guint level = 1; level < chain->len; level++)
    {
      g_autoptr (GtkTreeListRow) parent = g_list_model_get_item (rows, pos);
      gtk_tree_list_row_set_expanded (parent, TRUE);
      guint depth = gtk_tree_list_row_get_depth (parent);
      guint want = g_array_index (chain, guint, level), found = GTK_INVALID_LIST_POSITION;
      for (guint p = pos + 1; p < g_list_model_get_n_items (rows); p++)
        {
          g_autoptr (GtkTreeListRow) row = g_list_model_get_item (rows, p);
          if (gtk_tree_list_row_get_depth (row) <= depth)
            break;
          if (gtk_tree_list_row_get_depth (row) != depth + 1)
            continue;
          g_autoptr (CowscopeCallNode) item = row_node (row);
          if (cowscope_call_node_get_node (item) == want)
            {
              found = p;
              break;
            }
        }
      if (found == GTK_INVALID_LIST_POSITION)
        return GTK_INVALID_LIST_POSITION;
      pos = found;
    }
  return pos;
}

static void
scroll_to_row (GtkColumnView *view, guint position)
{
  for (GtkWidget *child = gtk_widget_get_first_child (GTK_WIDGET (view)); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    if (GTK_IS_LIST_VIEW (child))
      {
        gtk_widget_activate_action (child, "list.scroll-to-item", "u", position);
        return;
      }
}

/* Expands the root, then the heaviest child while it holds most of its
 * parent (the path most copies take), as profilers open a call tree. */
static void
expand_heaviest (CowscopeCallTreeView *self)
{
  guint node = cowscope_call_tree_get_root (self->tree, self->direction);
  for (guint depth = 0; depth < 12; depth++)
    {
      if (cowscope_call_tree_get_n_children (self->tree, node) == 0)
        break;
      guint child = cowscope_call_tree_get_child (self->tree, node, 0);
      guint64 parent_w = cowscope_call_weights_get (cowscope_call_tree_get_total (self->tree, node), self->metric);
      guint64 child_w = cowscope_call_weights_get (cowscope_call_tree_get_total (self->tree, child), self->metric);
      reveal (self, child);
      if (child_w * 2 < parent_w)
        break;
      node = child;
    }
}

static void set_selected (CowscopeCallTreeView *self, guint node, gboolean from_table);

/* Shows the tree of the current direction in the table and the flame graph. */
static void
show_tree (CowscopeCallTreeView *self)
{
  GtkSorter *sorter = gtk_column_view_get_sorter (self->column_view);
  g_autoptr (GListStore) roots = g_list_store_new (COWSCOPE_TYPE_CALL_NODE);
  guint root = cowscope_call_tree_get_root (self->tree, self->direction);
  g_autoptr (CowscopeCallNode) root_item = cowscope_call_node_new (self->tree, root);
  g_list_store_append (roots, root_item);
  GtkTreeListModel *tree_model = gtk_tree_list_model_new (G_LIST_MODEL (g_steal_pointer (&roots)),
                                                          FALSE, FALSE, create_children_cb, NULL, NULL);
  GtkTreeListRowSorter *row_sorter = gtk_tree_list_row_sorter_new (g_object_ref (sorter));
  g_clear_object (&self->sort_model);
  self->sort_model = gtk_sort_list_model_new (G_LIST_MODEL (tree_model), GTK_SORTER (row_sorter));
  self->syncing = TRUE;
  gtk_single_selection_set_model (self->selection, G_LIST_MODEL (self->sort_model));
  gtk_single_selection_set_selected (self->selection, GTK_INVALID_LIST_POSITION);
  self->syncing = FALSE;

  cowscope_flame_graph_set_tree (self->flame_graph, self->tree, self->direction);
  cowscope_flame_graph_set_metric (self->flame_graph, self->metric);

  const CowscopeCallWeights *all = cowscope_call_tree_get_total (self->tree, root);
  gboolean empty = cowscope_call_weights_get (all, COWSCOPE_CALL_METRIC_EVENTS) == 0;
  if (empty)
    gtk_stack_set_visible_child_name (self->stack, "empty");
  else
    gtk_stack_set_visible_child_name (self->stack,
                                      gtk_toggle_button_get_active (self->flame_button) ? "flame" : "tree");
  expand_heaviest (self);
}

/* ---- selection and going to the events ----------------------------------- */

/* The keys from the root to @node. */
static GPtrArray *
key_path (CowscopeCallTree *tree, guint node)
{
  GPtrArray *keys = g_ptr_array_new_with_free_func (g_free);
  for (guint n = node; cowscope_call_tree_get_parent (tree, n) != COWSCOPE_CALL_TREE_NO_NODE;
       n = cowscope_call_tree_get_parent (tree, n))
    g_ptr_array_insert (keys, 0, g_strdup (cowscope_call_tree_get_frame (tree, n)->key));
  return keys;
}

/* The node at @keys under @direction's root, or NO_NODE. */
static guint
find_path (CowscopeCallTree *tree, CowscopeCallTreeDirection direction, GPtrArray *keys)
{
  guint node = cowscope_call_tree_get_root (tree, direction);
  for (guint i = 0; i < keys->len && node != COWSCOPE_CALL_TREE_NO_NODE; i++)
    node = cowscope_call_tree_find_child (tree, node, keys->pdata[i]);
  return node;
}

static void
set_ready_changed (CowscopeCallTreeView *self)
{
  gboolean busy = self->build_cancellable != NULL
                  || !cowscope_call_events_view_get_ready (self->events_view);
  gtk_spinner_set_spinning (self->spinner, busy);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_READY]);
}

/* Highlights the storages of the listed events in every view. */
static void
highlight_events (CowscopeCallTreeView *self)
{
  g_autoptr (GArray) refs = g_array_new (FALSE, FALSE, sizeof (CowscopeObjectRef));
  g_autoptr (GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  GListModel *events = cowscope_call_events_view_get_events (self->events_view);
  for (guint i = 0; i < g_list_model_get_n_items (events) && refs->len < HIGHLIGHT_LIMIT; i++)
    {
      g_autoptr (CowscopeCallEventItem) item = g_list_model_get_item (events, i);
      const CowscopeCallEvent *e = cowscope_call_event_item_get_event (item);
      char *key = g_strdup_printf ("%u:%" G_GUINT64_FORMAT, e->pid, e->storage_id);
      if (!g_hash_table_add (seen, key))
        continue;
      CowscopeObjectRef ref = { COWSCOPE_NODE_STORAGE, e->pid, e->storage_id };
      g_array_append_val (refs, ref);
    }
  cowscope_view_state_set_highlights (self->state, (const CowscopeObjectRef *) refs->data, refs->len);
}

/* Selects @seq in the view state and shows the timeline. */
static void
go_to_event (CowscopeCallTreeView *self, gint64 seq)
{
  cowscope_view_state_set_selected_seq (self->state, seq);
  gtk_widget_activate_action (GTK_WIDGET (self), "win.show-view", "s", "timeline");
}

/* Goes to the largest of the listed node's events. */
static void
go_to_listed (CowscopeCallTreeView *self)
{
  gint64 largest = cowscope_call_events_view_get_largest_seq (self->events_view);
  if (largest >= 0)
    go_to_event (self, largest);
}

/* The selected node's events are in: highlight what they copied, and go
 * to the largest when the node was activated. */
static void
events_listed_cb (CowscopeCallEventsView *events, CowscopeCallTreeView *self)
{
  if (self->state != NULL)
    highlight_events (self);
  if (self->activate_when_listed)
    {
      self->activate_when_listed = FALSE;
      go_to_listed (self);
    }
  set_ready_changed (self);
}

static void
event_activated_cb (CowscopeCallEventsView *events, gint64 seq, CowscopeCallTreeView *self)
{
  if (self->state != NULL)
    go_to_event (self, seq);
}

/* Makes @node the selected one in the table and the flame graph, and
 * lists its events. */
static void
set_selected (CowscopeCallTreeView *self, guint node, gboolean from_table)
{
  self->selected = node;
  g_clear_pointer (&self->selected_path, g_ptr_array_unref);
  if (node != COWSCOPE_CALL_TREE_NO_NODE)
    {
      self->selected_path = key_path (self->tree, node);
      self->selected_direction = self->direction;
    }
  if (!from_table)
    {
      guint pos = reveal (self, node);
      self->syncing = TRUE;
      gtk_single_selection_set_selected (self->selection, pos);
      self->syncing = FALSE;
      if (pos != GTK_INVALID_LIST_POSITION)
        scroll_to_row (self->column_view, pos);
    }
  if (cowscope_flame_graph_get_selected (self->flame_graph) != node)
    cowscope_flame_graph_set_selected (self->flame_graph, node);
  cowscope_call_events_view_show (self->events_view, self->tree, node);
  set_ready_changed (self);
}

static void
selection_cb (GtkSingleSelection *selection, GParamSpec *pspec, CowscopeCallTreeView *self)
{
  if (self->syncing)
    return;
  gpointer item = gtk_single_selection_get_selected_item (selection);
  if (item == NULL)
    return;
  g_autoptr (CowscopeCallNode) node = row_node (item);
  set_selected (self, cowscope_call_node_get_node (node), TRUE);
}

static void
row_activated_cb (GtkColumnView *view, guint position, CowscopeCallTreeView *self)
{
  g_autoptr (GObject) item = g_list_model_get_item (G_LIST_MODEL (self->sort_model), position);
  if (item == NULL)
    return;
  g_autoptr (CowscopeCallNode) node = row_node (item);
  cowscope_call_tree_view_activate_node (self, cowscope_call_node_get_node (node));
}

static void
flame_selected_cb (CowscopeFlameGraph *flame, guint node, CowscopeCallTreeView *self)
{
  set_selected (self, node, FALSE);
}

static void
flame_activated_cb (CowscopeFlameGraph *flame, guint node, CowscopeCallTreeView *self)
{
  cowscope_call_tree_view_activate_node (self, node);
}

/* ---- building -------------------------------------------------------------- */

static void
update_range_label (CowscopeCallTreeView *self)
{
  gint64 r0 = self->state != NULL ? cowscope_view_state_get_range_start (self->state) : -1;
  gint64 r1 = self->state != NULL ? cowscope_view_state_get_range_end (self->state) : -1;
  gboolean ranged = r0 >= 0 && r1 > r0;
  g_autofree char *text = NULL;
  if (ranged)
    {
      g_autofree char *from = format_instant (self, r0);
      g_autofree char *to = format_instant (self, r1);
      /* Translators: the selected time range, "+1.20 ms to +3.40 ms" */
      text = g_strdup_printf (_("Copies from %s to %s"), from, to);
    }
  else
    text = g_strdup (_("Copies in the whole session"));
  gtk_label_set_text (self->range_label, text);
  gtk_widget_set_visible (self->clear_range_button, ranged);
}

/* Selects the pending call site (cowscope_call_tree_view_show_site()) in
 * the tree shown; returns its node.  A toast says when it is not there. */
static guint
take_pending_site (CowscopeCallTreeView *self)
{
  const CowscopeFrameRef *site = self->pending_site;
  gboolean no_stack = site->function == NULL && site->file == NULL && site->module == NULL;
  guint node = cowscope_call_tree_find_site (self->tree, no_stack ? NULL : site);
  g_clear_pointer (&self->pending_site, g_free);
  for (guint i = 0; i < G_N_ELEMENTS (self->pending_strings); i++)
    g_clear_pointer (&self->pending_strings[i], g_free);
  if (node == COWSCOPE_CALL_TREE_NO_NODE)
    {
      GtkWidget *overlay = gtk_widget_get_ancestor (GTK_WIDGET (self), ADW_TYPE_TOAST_OVERLAY);
      if (overlay != NULL)
        adw_toast_overlay_add_toast (ADW_TOAST_OVERLAY (overlay),
                                     adw_toast_new (_("No copies at that call site in the selected range")));
    }
  return node;
}

static void
built_cb (GObject *source, GAsyncResult *result, gpointer data)
{
  g_autoptr (CowscopeCallTreeView) self = data;
  g_autoptr (GError) error = NULL;
  g_autoptr (CowscopeCallTree) tree = cowscope_call_tree_new_finish (result, &error);
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;
  g_clear_object (&self->build_cancellable);
  if (tree == NULL)
    {
      adw_status_page_set_title (self->empty_page, _("Cannot Build the Call Tree"));
      adw_status_page_set_description (self->empty_page, error->message);
      gtk_stack_set_visible_child_name (self->stack, "empty");
      set_ready_changed (self);
      return;
    }
  adw_status_page_set_title (self->empty_page, _("No Copies"));
  adw_status_page_set_description (self->empty_page,
                                   cowscope_view_state_get_range_start (self->state) >= 0
                                     ? _("Nothing was copied or stolen in the selected range.")
                                     : _("Nothing was copied or stolen in this session."));
  g_set_object (&self->tree, tree);
  g_autoptr (GPtrArray) path = self->selected_path != NULL ? g_ptr_array_ref (self->selected_path) : NULL;
  CowscopeCallTreeDirection path_direction = self->selected_direction;
  show_tree (self);

  guint node = COWSCOPE_CALL_TREE_NO_NODE;
  if (self->pending_site != NULL)
    node = take_pending_site (self);
  else if (path != NULL && path_direction == self->direction)
    node = find_path (tree, self->direction, path);
  set_selected (self, node, FALSE);
  set_ready_changed (self);
}

static void
rebuild (CowscopeCallTreeView *self)
{
  g_clear_handle_id (&self->rebuild_source, g_source_remove);
  g_cancellable_cancel (self->build_cancellable);
  g_clear_object (&self->build_cancellable);
  update_range_label (self);
  if (self->state == NULL)
    return;
  /* Built when shown: a window opening on another view does not pay for
   * it, nor for each range while the tree is hidden. */
  if (!gtk_widget_get_mapped (GTK_WIDGET (self)))
    {
      self->stale = TRUE;
      set_ready_changed (self);
      return;
    }
  self->stale = FALSE;
  CowscopeCallTreeOptions o;
  cowscope_call_tree_options_init (&o);
  gint64 r0 = cowscope_view_state_get_range_start (self->state);
  gint64 r1 = cowscope_view_state_get_range_end (self->state);
  if (r0 >= 0 && r1 > r0)
    {
      o.range_start = r0;
      o.range_end = r1;
    }
  o.grouping = gtk_drop_down_get_selected (self->grouping_dropdown) == 1 ? COWSCOPE_CALL_TREE_BY_FUNCTION
                                                                         : COWSCOPE_CALL_TREE_BY_LINE;
  o.include_internal = gtk_check_button_get_active (self->internal_check);
  self->build_cancellable = g_cancellable_new ();
  cowscope_call_tree_new_async (cowscope_view_state_get_document (self->state), &o,
                                self->build_cancellable, built_cb, g_object_ref (self));
  set_ready_changed (self);
}

static gboolean
rebuild_timeout_cb (gpointer data)
{
  CowscopeCallTreeView *self = data;
  self->rebuild_source = 0;
  rebuild (self);
  return G_SOURCE_REMOVE;
}

static void
range_changed_cb (CowscopeViewState *state, GParamSpec *pspec, CowscopeCallTreeView *self)
{
  update_range_label (self);
  g_clear_handle_id (&self->rebuild_source, g_source_remove);
  self->rebuild_source = g_timeout_add (REBUILD_DELAY_MS, rebuild_timeout_cb, self);
}

static void
options_changed_cb (GObject *object, GParamSpec *pspec, CowscopeCallTreeView *self)
{
  rebuild (self);
}

static void
direction_toggled_cb (GtkToggleButton *button, CowscopeCallTreeView *self)
{
  if (!gtk_toggle_button_get_active (button))
    return;
  cowscope_call_tree_view_set_direction (self, button == self->bottom_up_button
                                                 ? COWSCOPE_CALL_TREE_BOTTOM_UP
                                                 : COWSCOPE_CALL_TREE_TOP_DOWN);
}

static void
view_toggled_cb (GtkToggleButton *button, CowscopeCallTreeView *self)
{
  if (gtk_toggle_button_get_active (button))
    cowscope_call_tree_view_set_flame (self, button == self->flame_button);
}

static void
metric_changed_cb (GtkDropDown *dropdown, GParamSpec *pspec, CowscopeCallTreeView *self)
{
  cowscope_call_tree_view_set_metric (self, (CowscopeCallMetric) gtk_drop_down_get_selected (dropdown));
}

static void
clear_range_cb (GtkButton *button, CowscopeCallTreeView *self)
{
  if (self->state != NULL)
    cowscope_view_state_set_range (self->state, -1, -1);
}

/* A tree due is built once the view is shown and the event that showed
 * it is handled (a view only passed through builds nothing); at default
 * priority, as the summary page does, so that a frame clock that is
 * always due cannot starve it. */
static void
cowscope_call_tree_view_map (GtkWidget *widget)
{
  CowscopeCallTreeView *self = COWSCOPE_CALL_TREE_VIEW (widget);
  GTK_WIDGET_CLASS (cowscope_call_tree_view_parent_class)->map (widget);
  if (self->stale && self->rebuild_source == 0)
    self->rebuild_source = g_idle_add_full (G_PRIORITY_DEFAULT, rebuild_timeout_cb, self, NULL);
}

/* ---- GObject --------------------------------------------------------------- */

static void
cowscope_call_tree_view_dispose (GObject *object)
{
  CowscopeCallTreeView *self = COWSCOPE_CALL_TREE_VIEW (object);
  cowscope_call_tree_view_set_view_state (self, NULL);
  g_clear_handle_id (&self->rebuild_source, g_source_remove);
  g_cancellable_cancel (self->build_cancellable);
  g_clear_object (&self->build_cancellable);
  g_clear_object (&self->tree);
  g_clear_object (&self->sort_model);
  g_clear_object (&self->selection);
  g_clear_pointer (&self->selected_path, g_ptr_array_unref);
  g_clear_pointer (&self->pending_site, g_free);
  for (guint i = 0; i < G_N_ELEMENTS (self->pending_strings); i++)
    g_clear_pointer (&self->pending_strings[i], g_free);
  gtk_widget_dispose_template (GTK_WIDGET (self), COWSCOPE_TYPE_CALL_TREE_VIEW);
  G_OBJECT_CLASS (cowscope_call_tree_view_parent_class)->dispose (object);
}

static void
cowscope_call_tree_view_get_property (GObject *object, guint prop_id, GValue *value,
                                      GParamSpec *pspec)
{
  CowscopeCallTreeView *self = COWSCOPE_CALL_TREE_VIEW (object);
  switch (prop_id)
    {
    case PROP_VIEW_STATE: g_value_set_object (value, self->state); break;
    case PROP_READY: g_value_set_boolean (value, cowscope_call_tree_view_get_ready (self)); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
cowscope_call_tree_view_set_property (GObject *object, guint prop_id, const GValue *value,
                                      GParamSpec *pspec)
{
  CowscopeCallTreeView *self = COWSCOPE_CALL_TREE_VIEW (object);
  switch (prop_id)
    {
    case PROP_VIEW_STATE:
      cowscope_call_tree_view_set_view_state (self, g_value_get_object (value));
      break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
cowscope_call_tree_view_class_init (CowscopeCallTreeViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  object_class->dispose = cowscope_call_tree_view_dispose;
  object_class->get_property = cowscope_call_tree_view_get_property;
  object_class->set_property = cowscope_call_tree_view_set_property;
  widget_class->map = cowscope_call_tree_view_map;

  properties[PROP_VIEW_STATE] =
    g_param_spec_object ("view-state", NULL, NULL, COWSCOPE_TYPE_VIEW_STATE,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_READY] = g_param_spec_boolean ("ready", NULL, NULL, TRUE,
                                                 G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  g_type_ensure (COWSCOPE_TYPE_FLAME_GRAPH);
  g_type_ensure (COWSCOPE_TYPE_CALL_EVENTS_VIEW);
  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/org/cowscope/Cowscope/cowscope-call-tree-view.ui");
#define CHILD(name) gtk_widget_class_bind_template_child (widget_class, CowscopeCallTreeView, name)
  CHILD (box);
  CHILD (top_down_button);
  CHILD (bottom_up_button);
  CHILD (tree_button);
  CHILD (flame_button);
  CHILD (metric_dropdown);
  CHILD (grouping_dropdown);
  CHILD (internal_check);
  CHILD (spinner);
  CHILD (range_label);
  CHILD (clear_range_button);
  CHILD (stack);
  CHILD (column_view);
  CHILD (flame_graph);
  CHILD (empty_page);
  CHILD (events_view);
#undef CHILD
  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_css_name (widget_class, "cowscope-call-tree-view");
}

static void
cowscope_call_tree_view_init (CowscopeCallTreeView *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  self->selected = COWSCOPE_CALL_TREE_NO_NODE;

  add_column (self, COLUMN_SITE, _("Call Site"), NULL, TRUE);
  add_column (self, COLUMN_BYTES, _("Bytes Copied"), "bytes", FALSE);
  add_column (self, COLUMN_SHARE, _("Share"), NULL, FALSE);
  add_column (self, COLUMN_EVENTS, _("Events"), "events", FALSE);
  add_column (self, COLUMN_TIME, _("Time"), "time", FALSE);
  gtk_column_view_sort_by_column (self->column_view, self->columns[COLUMN_BYTES], GTK_SORT_DESCENDING);
  self->selection = gtk_single_selection_new (NULL);
  gtk_single_selection_set_autoselect (self->selection, FALSE);
  gtk_single_selection_set_can_unselect (self->selection, TRUE);
  gtk_column_view_set_model (self->column_view, GTK_SELECTION_MODEL (self->selection));
  g_signal_connect (self->selection, "notify::selected", G_CALLBACK (selection_cb), self);
  g_signal_connect (self->column_view, "activate", G_CALLBACK (row_activated_cb), self);

  g_signal_connect (self->events_view, "listed", G_CALLBACK (events_listed_cb), self);
  g_signal_connect (self->events_view, "event-activated", G_CALLBACK (event_activated_cb), self);

  g_signal_connect (self->top_down_button, "toggled", G_CALLBACK (direction_toggled_cb), self);
  g_signal_connect (self->bottom_up_button, "toggled", G_CALLBACK (direction_toggled_cb), self);
  g_signal_connect (self->tree_button, "toggled", G_CALLBACK (view_toggled_cb), self);
  g_signal_connect (self->flame_button, "toggled", G_CALLBACK (view_toggled_cb), self);
  g_signal_connect (self->metric_dropdown, "notify::selected", G_CALLBACK (metric_changed_cb), self);
  g_signal_connect (self->grouping_dropdown, "notify::selected", G_CALLBACK (options_changed_cb), self);
  g_signal_connect (self->internal_check, "notify::active", G_CALLBACK (options_changed_cb), self);
  g_signal_connect (self->clear_range_button, "clicked", G_CALLBACK (clear_range_cb), self);
  g_signal_connect (self->flame_graph, "node-selected", G_CALLBACK (flame_selected_cb), self);
  g_signal_connect (self->flame_graph, "node-activated", G_CALLBACK (flame_activated_cb), self);
  update_range_label (self);
}

/* ---- public ---------------------------------------------------------------- */

GtkWidget *
cowscope_call_tree_view_new (void)
{
  return g_object_new (COWSCOPE_TYPE_CALL_TREE_VIEW, NULL);
}

void
cowscope_call_tree_view_set_view_state (CowscopeCallTreeView *self, CowscopeViewState *state)
{
  g_return_if_fail (COWSCOPE_IS_CALL_TREE_VIEW (self));
  g_return_if_fail (state == NULL || COWSCOPE_IS_VIEW_STATE (state));
  if (self->state == state)
    return;
  if (self->state != NULL)
    {
      g_clear_signal_handler (&self->range_start_handler, self->state);
      g_clear_signal_handler (&self->range_end_handler, self->state);
      g_clear_object (&self->state);
    }
  cowscope_call_events_view_show (self->events_view, NULL, COWSCOPE_CALL_TREE_NO_NODE);
  cowscope_call_events_view_set_view_state (self->events_view, state);
  self->selected = COWSCOPE_CALL_TREE_NO_NODE;
  g_clear_pointer (&self->selected_path, g_ptr_array_unref);
  g_clear_object (&self->tree);
  cowscope_flame_graph_set_tree (self->flame_graph, NULL, self->direction);
  if (state != NULL)
    {
      self->state = g_object_ref (state);
      self->range_start_handler = g_signal_connect (state, "notify::range-start",
                                                    G_CALLBACK (range_changed_cb), self);
      self->range_end_handler = g_signal_connect (state, "notify::range-end",
                                                  G_CALLBACK (range_changed_cb), self);
    }
  rebuild (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_VIEW_STATE]);
}

CowscopeViewState *
cowscope_call_tree_view_get_view_state (CowscopeCallTreeView *self)
{
  g_return_val_if_fail (COWSCOPE_IS_CALL_TREE_VIEW (self), NULL);
  return self->state;
}

CowscopeCallTree *
cowscope_call_tree_view_get_tree (CowscopeCallTreeView *self)
{
  g_return_val_if_fail (COWSCOPE_IS_CALL_TREE_VIEW (self), NULL);
  return self->tree;
}

gboolean
cowscope_call_tree_view_get_ready (CowscopeCallTreeView *self)
{
  g_return_val_if_fail (COWSCOPE_IS_CALL_TREE_VIEW (self), TRUE);
  return self->build_cancellable == NULL && cowscope_call_events_view_get_ready (self->events_view)
         && self->rebuild_source == 0 && !self->stale;
}

void
cowscope_call_tree_view_set_direction (CowscopeCallTreeView *self,
                                       CowscopeCallTreeDirection direction)
{
  g_return_if_fail (COWSCOPE_IS_CALL_TREE_VIEW (self));
  if (self->direction == direction)
    return;
  self->direction = direction;
  gtk_toggle_button_set_active (direction == COWSCOPE_CALL_TREE_BOTTOM_UP ? self->bottom_up_button
                                                                           : self->top_down_button,
                                TRUE);
  if (self->tree == NULL)
    return;
  show_tree (self);
  set_selected (self, COWSCOPE_CALL_TREE_NO_NODE, FALSE);
}

CowscopeCallTreeDirection
cowscope_call_tree_view_get_direction (CowscopeCallTreeView *self)
{
  g_return_val_if_fail (COWSCOPE_IS_CALL_TREE_VIEW (self), COWSCOPE_CALL_TREE_TOP_DOWN);
  return self->direction;
}

void
cowscope_call_tree_view_set_metric (CowscopeCallTreeView *self, CowscopeCallMetric metric)
{
  g_return_if_fail (COWSCOPE_IS_CALL_TREE_VIEW (self));
  if (gtk_drop_down_get_selected (self->metric_dropdown) != (guint) metric)
    gtk_drop_down_set_selected (self->metric_dropdown, metric); /* comes back here */
  if (self->metric == metric)
    return;
  self->metric = metric;
  gtk_column_view_sort_by_column (self->column_view, metric_column (self), GTK_SORT_DESCENDING);
  cowscope_flame_graph_set_metric (self->flame_graph, metric);
  /* The share column follows the metric: bind its cells again. */
  GtkListItemFactory *factory = gtk_column_view_column_get_factory (self->columns[COLUMN_SHARE]);
  g_object_ref (factory);
  gtk_column_view_column_set_factory (self->columns[COLUMN_SHARE], NULL);
  gtk_column_view_column_set_factory (self->columns[COLUMN_SHARE], factory);
  g_object_unref (factory);
  if (self->selected != COWSCOPE_CALL_TREE_NO_NODE)
    cowscope_flame_graph_set_selected (self->flame_graph, self->selected);
}

void
cowscope_call_tree_view_set_flame (CowscopeCallTreeView *self, gboolean flame)
{
  g_return_if_fail (COWSCOPE_IS_CALL_TREE_VIEW (self));
  gtk_toggle_button_set_active (flame ? self->flame_button : self->tree_button, TRUE);
  if (g_strcmp0 (gtk_stack_get_visible_child_name (self->stack), "empty") != 0)
    gtk_stack_set_visible_child_name (self->stack, flame ? "flame" : "tree");
}

guint
cowscope_call_tree_view_get_selected (CowscopeCallTreeView *self)
{
  g_return_val_if_fail (COWSCOPE_IS_CALL_TREE_VIEW (self), COWSCOPE_CALL_TREE_NO_NODE);
  return self->selected;
}

void
cowscope_call_tree_view_select (CowscopeCallTreeView *self, guint node)
{
  g_return_if_fail (COWSCOPE_IS_CALL_TREE_VIEW (self));
  if (self->tree == NULL)
    return;
  set_selected (self, node, FALSE);
}

void
cowscope_call_tree_view_show_site (CowscopeCallTreeView *self, const CowscopeFrameRef *site)
{
  g_return_if_fail (COWSCOPE_IS_CALL_TREE_VIEW (self));
  g_return_if_fail (site != NULL);
  g_clear_pointer (&self->pending_site, g_free);
  for (guint i = 0; i < G_N_ELEMENTS (self->pending_strings); i++)
    g_clear_pointer (&self->pending_strings[i], g_free);
  self->pending_strings[0] = g_strdup (site->function);
  self->pending_strings[1] = g_strdup (site->file);
  self->pending_strings[2] = g_strdup (site->module);
  self->pending_site = g_new (CowscopeFrameRef, 1);
  *self->pending_site = (CowscopeFrameRef) { self->pending_strings[0], self->pending_strings[1],
                                             self->pending_strings[2], site->line, site->address };
  g_clear_pointer (&self->selected_path, g_ptr_array_unref);
  gtk_toggle_button_set_active (self->tree_button, TRUE);
  if (self->direction != COWSCOPE_CALL_TREE_BOTTOM_UP)
    {
      self->direction = COWSCOPE_CALL_TREE_BOTTOM_UP;
      gtk_toggle_button_set_active (self->bottom_up_button, TRUE);
    }
  /* The tree shown is complete unless a build is under way: select now. */
  if (self->tree != NULL && self->build_cancellable == NULL && self->rebuild_source == 0
      && !self->stale)
    {
      show_tree (self);
      set_selected (self, take_pending_site (self), FALSE);
    }
}

void
cowscope_call_tree_view_activate_node (CowscopeCallTreeView *self, guint node)
{
  g_return_if_fail (COWSCOPE_IS_CALL_TREE_VIEW (self));
  if (self->tree == NULL || self->state == NULL || node == COWSCOPE_CALL_TREE_NO_NODE)
    return;
  if (self->selected != node)
    set_selected (self, node, FALSE);
  if (cowscope_call_events_view_get_node (self->events_view) == node
      && cowscope_call_events_view_get_ready (self->events_view))
    go_to_listed (self);
  else
    self->activate_when_listed = TRUE;
}

GListModel *
cowscope_call_tree_view_get_events (CowscopeCallTreeView *self)
{
  g_return_val_if_fail (COWSCOPE_IS_CALL_TREE_VIEW (self), NULL);
  return cowscope_call_events_view_get_events (self->events_view);
}

guint64
cowscope_call_tree_view_get_n_events (CowscopeCallTreeView *self)
{
  g_return_val_if_fail (COWSCOPE_IS_CALL_TREE_VIEW (self), 0);
  return cowscope_call_events_view_get_n_events (self->events_view);
}
