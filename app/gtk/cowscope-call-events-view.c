/* cowscope-call-events-view.c — see cowscope-call-events-view.h. */
#include "cowscope-config.h"

#include <glib/gi18n.h>

#include "cowscope-call-event-item.h"
#include "cowscope-call-events-view.h"
#include "cowscope-timeline-format.h"

/* The events listed under a node: enough to pick from, little to read. */
#define EVENT_LIMIT 1000

struct _CowscopeCallEventsView {
  GtkWidget parent_instance;

  /* Template children */
  GtkWidget *box;
  GtkLabel *label;
  GtkColumnView *column_view;

  CowscopeViewState *state;
  CowscopeCallTree *tree;
  guint node;                 /* whose events these are */
  GListStore *events;         /* CowscopeCallEventItem */
  GtkSingleSelection *selection;
  guint64 n_events;
  gint64 largest_seq;         /* of all the node's events */
  GCancellable *cancellable;  /* the listing under way */
};

G_DEFINE_FINAL_TYPE (CowscopeCallEventsView, cowscope_call_events_view, GTK_TYPE_WIDGET)

enum { PROP_0, PROP_READY, N_PROPS };
static GParamSpec *properties[N_PROPS];

enum { LISTED, EVENT_ACTIVATED, N_SIGNALS };
static guint signals[N_SIGNALS];

enum { EVENT_TIME, EVENT_KIND, EVENT_BYTES, EVENT_OP, EVENT_TENSOR, EVENT_THREAD };

static void
setup_cb (GtkSignalListItemFactory *factory, GtkListItem *item, gpointer data)
{
  guint column = GPOINTER_TO_UINT (g_object_get_data (G_OBJECT (factory), "column"));
  GtkWidget *label = gtk_inscription_new (NULL);
  gtk_inscription_set_text_overflow (GTK_INSCRIPTION (label), GTK_INSCRIPTION_OVERFLOW_ELLIPSIZE_END);
  if (column == EVENT_TIME || column == EVENT_BYTES)
    {
      gtk_inscription_set_xalign (GTK_INSCRIPTION (label), 1.0f);
      gtk_widget_add_css_class (label, "numeric");
    }
  gtk_list_item_set_child (item, label);
}

static void
bind_cb (GtkSignalListItemFactory *factory, GtkListItem *item, CowscopeCallEventsView *self)
{
  guint column = GPOINTER_TO_UINT (g_object_get_data (G_OBJECT (factory), "column"));
  const CowscopeCallEvent *e = cowscope_call_event_item_get_event (gtk_list_item_get_item (item));
  CowscopeSessionDocument *doc = self->state != NULL ? cowscope_view_state_get_document (self->state)
                                                     : cowscope_call_tree_get_document (self->tree);
  g_autofree char *text = NULL;
  switch (column)
    {
    case EVENT_TIME:
      {
        gint64 origin = cowscope_session_document_get_start_ns (doc);
        g_autofree char *d = cowscope_timeline_format_duration (MAX (e->ts_ns - origin, 0));
        text = g_strdup_printf ("+%s", d);
        break;
      }
    case EVENT_KIND:
      text = g_strdup (e->kind == COWSCOPE_CALL_EVENT_COPY ? _("Copy")
                       : e->kind == COWSCOPE_CALL_EVENT_STEAL ? _("Steal") : _("Eager copy"));
      break;
    case EVENT_BYTES:
      text = g_format_size_full (e->nbytes, G_FORMAT_SIZE_IEC_UNITS);
      break;
    case EVENT_OP:
      text = g_strdup (cowscope_session_document_op_name (doc, e->op));
      break;
    case EVENT_TENSOR:
      /* Names, as the graph shows them; the number only without one. */
      text = cowscope_tensor_label (e->tensor_name, e->tensor_id);
      break;
    case EVENT_THREAD:
    default:
      {
        const char *name = cowscope_session_document_thread_name (doc, e->pid, e->tid);
        text = name != NULL ? g_strdup_printf ("%s (%" G_GINT64_FORMAT ")", name, e->tid)
                            : g_strdup_printf ("%" G_GINT64_FORMAT, e->tid);
        break;
      }
    }
  gtk_inscription_set_text (GTK_INSCRIPTION (gtk_list_item_get_child (item)), text);
}

/* A column @title, @width wide (0: taking the rest). */
static void
add_column (CowscopeCallEventsView *self, guint column, const char *title, int width)
{
  GtkListItemFactory *factory = gtk_signal_list_item_factory_new ();
  g_object_set_data (G_OBJECT (factory), "column", GUINT_TO_POINTER (column));
  g_signal_connect (factory, "setup", G_CALLBACK (setup_cb), self);
  g_signal_connect (factory, "bind", G_CALLBACK (bind_cb), self);
  GtkColumnViewColumn *c = gtk_column_view_column_new (title, factory);
  gtk_column_view_column_set_resizable (c, TRUE);
  if (width > 0)
    gtk_column_view_column_set_fixed_width (c, width);
  else
    gtk_column_view_column_set_expand (c, TRUE);
  gtk_column_view_append_column (self->column_view, c);
  g_object_unref (c);
}

/* "1,234 events at update_weights (train.c:88)", or what is going on. */
static void
update_label (CowscopeCallEventsView *self)
{
  if (self->tree == NULL || self->node == COWSCOPE_CALL_TREE_NO_NODE)
    {
      gtk_label_set_text (self->label, _("Select a call site to list its copies"));
      return;
    }
  const CowscopeCallFrame *f = cowscope_call_tree_get_frame (self->tree, self->node);
  const char *where = f != NULL ? f->display : _("all call sites");
  guint shown = g_list_model_get_n_items (G_LIST_MODEL (self->events));
  g_autofree char *text = NULL;
  if (self->cancellable != NULL)
    text = g_strdup_printf (_("Finding the events at %s…"), where);
  else if (shown < self->n_events)
    /* Translators: "The first 1000 of 5321 events at update_weights (train.c:88)" */
    text = g_strdup_printf (_("The first %u of %" G_GUINT64_FORMAT " events at %s"), shown,
                            self->n_events, where);
  else
    text = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "%" G_GUINT64_FORMAT " event at %s",
                                         "%" G_GUINT64_FORMAT " events at %s", self->n_events),
                            self->n_events, where);
  gtk_label_set_text (self->label, text);
}

static void
listed_cb (GObject *source, GAsyncResult *result, gpointer data)
{
  g_autoptr (CowscopeCallEventsView) self = data;
  g_autoptr (GError) error = NULL;
  guint64 total = 0;
  gint64 largest = -1;
  g_autoptr (GArray) events = cowscope_call_tree_list_events_finish (COWSCOPE_CALL_TREE (source),
                                                                     result, &total, &largest,
                                                                     &error);
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;
  g_clear_object (&self->cancellable);
  if (events == NULL)
    {
      /* The table stays empty; the label says nothing was found. */
      g_warning ("Cannot list the events of a call site: %s", error->message);
      events = g_array_new (FALSE, FALSE, sizeof (CowscopeCallEvent));
    }
  g_autoptr (GPtrArray) items = g_ptr_array_new_with_free_func (g_object_unref);
  for (guint i = 0; i < events->len; i++)
    g_ptr_array_add (items, cowscope_call_event_item_new (&g_array_index (events, CowscopeCallEvent, i)));
  g_list_store_splice (self->events, 0, g_list_model_get_n_items (G_LIST_MODEL (self->events)),
                       items->pdata, items->len);
  self->n_events = total;
  self->largest_seq = largest;
  update_label (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_READY]);
  g_signal_emit (self, signals[LISTED], 0);
}

static void
activate_cb (GtkColumnView *view, guint position, CowscopeCallEventsView *self)
{
  g_autoptr (CowscopeCallEventItem) item = g_list_model_get_item (G_LIST_MODEL (self->events), position);
  if (item != NULL)
    g_signal_emit (self, signals[EVENT_ACTIVATED], 0, cowscope_call_event_item_get_event (item)->seq);
}

static void
cowscope_call_events_view_dispose (GObject *object)
{
  CowscopeCallEventsView *self = COWSCOPE_CALL_EVENTS_VIEW (object);
  g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  g_clear_object (&self->state);
  g_clear_object (&self->tree);
  g_clear_object (&self->selection);
  g_clear_object (&self->events);
  gtk_widget_dispose_template (GTK_WIDGET (self), COWSCOPE_TYPE_CALL_EVENTS_VIEW);
  G_OBJECT_CLASS (cowscope_call_events_view_parent_class)->dispose (object);
}

static void
cowscope_call_events_view_get_property (GObject *object, guint prop_id, GValue *value,
                                        GParamSpec *pspec)
{
  switch (prop_id)
    {
    case PROP_READY:
      g_value_set_boolean (value, cowscope_call_events_view_get_ready (COWSCOPE_CALL_EVENTS_VIEW (object)));
      break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
cowscope_call_events_view_class_init (CowscopeCallEventsViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  object_class->dispose = cowscope_call_events_view_dispose;
  object_class->get_property = cowscope_call_events_view_get_property;

  properties[PROP_READY] = g_param_spec_boolean ("ready", NULL, NULL, TRUE,
                                                 G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  /* The node's events are in. */
  signals[LISTED] = g_signal_new ("listed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                                  NULL, NULL, NULL, G_TYPE_NONE, 0);
  /* A row was activated: the event's seq. */
  signals[EVENT_ACTIVATED] = g_signal_new ("event-activated", G_TYPE_FROM_CLASS (klass),
                                           G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL, G_TYPE_NONE,
                                           1, G_TYPE_INT64);

  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/org/cowscope/Cowscope/cowscope-call-events-view.ui");
  gtk_widget_class_bind_template_child (widget_class, CowscopeCallEventsView, box);
  gtk_widget_class_bind_template_child (widget_class, CowscopeCallEventsView, label);
  gtk_widget_class_bind_template_child (widget_class, CowscopeCallEventsView, column_view);
  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_css_name (widget_class, "cowscope-call-events-view");
}

static void
cowscope_call_events_view_init (CowscopeCallEventsView *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  self->node = COWSCOPE_CALL_TREE_NO_NODE;
  self->largest_seq = -1;
  self->events = g_list_store_new (COWSCOPE_TYPE_CALL_EVENT_ITEM);
  self->selection = gtk_single_selection_new (g_object_ref (G_LIST_MODEL (self->events)));
  gtk_single_selection_set_autoselect (self->selection, FALSE);
  gtk_single_selection_set_can_unselect (self->selection, TRUE);
  gtk_column_view_set_model (self->column_view, GTK_SELECTION_MODEL (self->selection));
  add_column (self, EVENT_TIME, _("Time"), 96);
  add_column (self, EVENT_KIND, _("Kind"), 88);
  add_column (self, EVENT_BYTES, _("Bytes"), 88);
  add_column (self, EVENT_OP, _("Operation"), 96);
  add_column (self, EVENT_TENSOR, _("Tensor"), 0);
  add_column (self, EVENT_THREAD, _("Thread"), 140);
  g_signal_connect (self->column_view, "activate", G_CALLBACK (activate_cb), self);
  update_label (self);
}

GtkWidget *
cowscope_call_events_view_new (void)
{
  return g_object_new (COWSCOPE_TYPE_CALL_EVENTS_VIEW, NULL);
}

void
cowscope_call_events_view_set_view_state (CowscopeCallEventsView *self, CowscopeViewState *state)
{
  g_return_if_fail (COWSCOPE_IS_CALL_EVENTS_VIEW (self));
  g_set_object (&self->state, state);
}

void
cowscope_call_events_view_show (CowscopeCallEventsView *self, CowscopeCallTree *tree, guint node)
{
  g_return_if_fail (COWSCOPE_IS_CALL_EVENTS_VIEW (self));
  g_return_if_fail (tree == NULL || COWSCOPE_IS_CALL_TREE (tree));
  g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  g_list_store_remove_all (self->events);
  g_set_object (&self->tree, tree);
  self->node = tree != NULL ? node : COWSCOPE_CALL_TREE_NO_NODE;
  self->n_events = 0;
  self->largest_seq = -1;
  if (self->node != COWSCOPE_CALL_TREE_NO_NODE)
    {
      self->cancellable = g_cancellable_new ();
      cowscope_call_tree_list_events_async (tree, node, EVENT_LIMIT, self->cancellable, listed_cb,
                                            g_object_ref (self));
    }
  update_label (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_READY]);
}

guint
cowscope_call_events_view_get_node (CowscopeCallEventsView *self)
{
  g_return_val_if_fail (COWSCOPE_IS_CALL_EVENTS_VIEW (self), COWSCOPE_CALL_TREE_NO_NODE);
  return self->node;
}

gboolean
cowscope_call_events_view_get_ready (CowscopeCallEventsView *self)
{
  g_return_val_if_fail (COWSCOPE_IS_CALL_EVENTS_VIEW (self), TRUE);
  return self->cancellable == NULL;
}

GListModel *
cowscope_call_events_view_get_events (CowscopeCallEventsView *self)
{
  g_return_val_if_fail (COWSCOPE_IS_CALL_EVENTS_VIEW (self), NULL);
  return G_LIST_MODEL (self->events);
}

guint64
cowscope_call_events_view_get_n_events (CowscopeCallEventsView *self)
{
  g_return_val_if_fail (COWSCOPE_IS_CALL_EVENTS_VIEW (self), 0);
  return self->n_events;
}

gint64
cowscope_call_events_view_get_largest_seq (CowscopeCallEventsView *self)
{
  g_return_val_if_fail (COWSCOPE_IS_CALL_EVENTS_VIEW (self), -1);
  return self->largest_seq;
}
