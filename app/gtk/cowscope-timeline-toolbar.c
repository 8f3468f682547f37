/* cowscope-timeline-toolbar.c — see cowscope-timeline-toolbar.h. */
#include "cowscope-config.h"

#include <glib/gi18n.h>

#include "cowscope-timeline-toolbar.h"

#include "cowscope-event-steps.h"
#include "cowscope-lane-order.h"
#include "cowscope-tensor-search.h"
#include "cowscope-timeline-format.h"
#include "cowscope-timeline-legend.h"

/* Highlighting more tensors than this for one name would only slow the
 * graph down: the steps still go through all of their events. */
#define MAX_HIGHLIGHTED_TENSORS 256

struct _CowscopeTimelineToolbar {
  GtkWidget parent_instance;

  GtkEntry *search_entry;
  GtkWidget *previous_button;
  GtkWidget *next_button;
  GtkLabel *match_label;
  GtkWidget *lanes_button;
  GtkPopover *lanes_popover;
  GtkSearchEntry *lane_filter_entry;
  GtkListBox *lane_list;
  GtkWidget *show_all_button;
  GtkWidget *legend_button;
  GtkWidget *jump_button;

  CowscopeTimelineView *timeline;
  CowscopeViewState *state;
  GBinding *jump_binding;
  GtkEventController *shortcuts;   /* "/" on the timeline */

  GCancellable *names_cancellable;
  GStrv names;
  GtkListStore *completion_store;

  GCancellable *search_cancellable;
  CowscopeTensorMatches *matches;  /* of the entry's text; NULL: none yet */
  int pending_direction;           /* the step to take once the search answers */

  gboolean syncing_lanes;          /* updating the lane rows from the filter */
};

enum { PROP_0, PROP_TIMELINE, N_PROPS };
static GParamSpec *properties[N_PROPS];

G_DEFINE_FINAL_TYPE (CowscopeTimelineToolbar, cowscope_timeline_toolbar, GTK_TYPE_WIDGET)

/* ---- the search ------------------------------------------------------------------ */

static void
set_status (CowscopeTimelineToolbar *self, const char *text)
{
  gtk_label_set_text (self->match_label, text != NULL ? text : "");
}

/* "3 of 12 events of t7" after a step. */
static void
show_position (CowscopeTimelineToolbar *self)
{
  CowscopeTensorMatches *m = self->matches;
  gint64 selected = cowscope_view_state_get_selected_seq (self->state);
  guint at = 0;
  for (guint i = 0; i < m->events->len; i++)
    if (g_array_index (m->events, CowscopeObjectEvent, i).seq == selected)
      at = i + 1;
  g_autofree char *status = NULL;
  if (at > 0)
    /* Translators: stepping through a tensor's events: 3 of 12 */
    status = g_strdup_printf (ngettext ("%u of %u event", "%u of %u events", m->events->len), at,
                              m->events->len);
  else
    status = g_strdup_printf (ngettext ("%u event", "%u events", m->events->len),
                              m->events->len);
  set_status (self, status);
}

/* Steps through the matches' events; says so when there is none that
 * way. */
static void
step_matches (CowscopeTimelineToolbar *self, int direction)
{
  CowscopeTensorMatches *m = self->matches;
  if (m->tensors->len == 0)
    {
      g_autofree char *status = g_strdup_printf (_("No tensor named “%s”"), m->text);
      set_status (self, status);
      return;
    }
  if (m->events->len == 0)
    {
      g_autofree char *status =
        g_strdup_printf (ngettext ("%u tensor, no copy events", "%u tensors, no copy events",
                                   m->tensors->len),
                         m->tensors->len);
      set_status (self, status);
      return;
    }
  if (!cowscope_timeline_view_step_through (self->timeline, m->events, direction,
                                            COWSCOPE_STEP_ANY))
    {
      set_status (self, direction > 0 ? _("No later event") : _("No earlier event"));
      gtk_widget_error_bell (GTK_WIDGET (self));
      return;
    }
  show_position (self);
}

static void
update_buttons (CowscopeTimelineToolbar *self)
{
  gboolean any = self->state != NULL
                 && gtk_entry_get_text_length (self->search_entry) > 0;
  gtk_widget_set_sensitive (self->previous_button, any);
  gtk_widget_set_sensitive (self->next_button, any);
}

static void
found_cb (GObject *source, GAsyncResult *result, gpointer data)
{
  g_autoptr (GError) error = NULL;
  CowscopeTensorMatches *m = cowscope_tensor_search_find_finish (result, &error);
  if (m == NULL && g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;
  CowscopeTimelineToolbar *self = data;
  g_clear_object (&self->search_cancellable);
  if (m == NULL)
    {
      set_status (self, error->message);
      return;
    }
  g_clear_pointer (&self->matches, cowscope_tensor_matches_free);
  self->matches = m;
  if (m->tensors->len > 0)
    cowscope_view_state_set_highlights (self->state, (const CowscopeObjectRef *) m->tensors->data,
                                        MIN (m->tensors->len, MAX_HIGHLIGHTED_TENSORS));
  step_matches (self, self->pending_direction);
}

static void ensure_names (CowscopeTimelineToolbar *self);

void
cowscope_timeline_toolbar_search (CowscopeTimelineToolbar *self, const char *text, int direction)
{
  g_return_if_fail (COWSCOPE_IS_TIMELINE_TOOLBAR (self));
  g_return_if_fail (text != NULL);
  if (self->state == NULL)
    return;
  ensure_names (self);
  if (g_strcmp0 (gtk_editable_get_text (GTK_EDITABLE (self->search_entry)), text) != 0)
    gtk_editable_set_text (GTK_EDITABLE (self->search_entry), text);
  if (text[0] == '\0')
    return;
  if (self->matches != NULL && g_str_equal (self->matches->text, text))
    {
      step_matches (self, direction);
      return;
    }
  g_cancellable_cancel (self->search_cancellable);
  g_clear_object (&self->search_cancellable);
  self->search_cancellable = g_cancellable_new ();
  self->pending_direction = direction;
  set_status (self, _("Searching…"));
  cowscope_tensor_search_find_async (cowscope_view_state_get_document (self->state), text,
                                     self->search_cancellable, found_cb, self);
}

gboolean
cowscope_timeline_toolbar_get_matches (CowscopeTimelineToolbar *self, guint *n_tensors,
                                       guint *n_events, const char **status)
{
  g_return_val_if_fail (COWSCOPE_IS_TIMELINE_TOOLBAR (self), FALSE);
  if (self->matches == NULL || self->search_cancellable != NULL)
    return FALSE;
  if (n_tensors != NULL)
    *n_tensors = self->matches->tensors->len;
  if (n_events != NULL)
    *n_events = self->matches->events->len;
  if (status != NULL)
    *status = gtk_label_get_text (self->match_label);
  return TRUE;
}

static void
search_step (CowscopeTimelineToolbar *self, int direction)
{
  cowscope_timeline_toolbar_search (self,
                                    gtk_editable_get_text (GTK_EDITABLE (self->search_entry)),
                                    direction);
}

static void
search_activate_cb (GtkEntry *entry, CowscopeTimelineToolbar *self)
{
  search_step (self, 1);
}

static void
previous_clicked_cb (GtkButton *button, CowscopeTimelineToolbar *self)
{
  search_step (self, -1);
}

static void
next_clicked_cb (GtkButton *button, CowscopeTimelineToolbar *self)
{
  search_step (self, 1);
}

/* Shift+Enter: the previous event; Escape: back to the timeline. */
static gboolean
search_key_cb (GtkEventControllerKey *controller, guint keyval, guint keycode,
               GdkModifierType state, CowscopeTimelineToolbar *self)
{
  if ((keyval == GDK_KEY_Return || keyval == GDK_KEY_KP_Enter) && (state & GDK_SHIFT_MASK))
    {
      search_step (self, -1);
      return TRUE;
    }
  if (keyval == GDK_KEY_Escape && self->timeline != NULL)
    {
      gtk_widget_grab_focus (GTK_WIDGET (self->timeline));
      return TRUE;
    }
  return FALSE;
}

static void
search_changed_cb (GtkEditable *editable, CowscopeTimelineToolbar *self)
{
  if (self->matches != NULL && !g_str_equal (self->matches->text, gtk_editable_get_text (editable)))
    {
      g_clear_pointer (&self->matches, cowscope_tensor_matches_free);
      set_status (self, NULL);
    }
  update_buttons (self);
}

/* Completion: names that contain the typed text, ignoring case. */
static gboolean
completion_match (GtkEntryCompletion *completion, const char *key, GtkTreeIter *iter,
                  gpointer data)
{
  CowscopeTimelineToolbar *self = data;
  g_autofree char *name = NULL;
  gtk_tree_model_get (GTK_TREE_MODEL (self->completion_store), iter, 0, &name, -1);
  if (name == NULL)
    return FALSE;
  g_autofree char *folded = g_utf8_casefold (name, -1);
  return strstr (folded, key) != NULL; /* @key is normalized and casefolded */
}

static void
names_cb (GObject *source, GAsyncResult *result, gpointer data)
{
  g_autoptr (GError) error = NULL;
  GStrv names = cowscope_tensor_search_names_finish (result, &error);
  if (names == NULL && g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;
  CowscopeTimelineToolbar *self = data;
  g_clear_object (&self->names_cancellable);
  if (names == NULL)
    {
      g_warning ("Could not read the tensor names: %s", error->message);
      return;
    }
  g_strfreev (self->names);
  self->names = names;
  gtk_list_store_clear (self->completion_store);
  for (guint i = 0; names[i] != NULL; i++)
    gtk_list_store_insert_with_values (self->completion_store, NULL, -1, 0, names[i], -1);
}

GStrv
cowscope_timeline_toolbar_get_names (CowscopeTimelineToolbar *self)
{
  g_return_val_if_fail (COWSCOPE_IS_TIMELINE_TOOLBAR (self), NULL);
  return self->names;
}

/* ---- the lanes popover ------------------------------------------------------------ */

/* The lane a row of the lanes list stands for. */
static CowscopeTimelineLane *
row_lane (GtkListBoxRow *row)
{
  return g_object_get_data (G_OBJECT (row), "cowscope-lane");
}

/* Sets each row's check and pin from the lane filter. */
static void
sync_lane_rows (CowscopeTimelineToolbar *self)
{
  if (self->timeline == NULL)
    return;
  CowscopeLaneFilter *filter = cowscope_timeline_view_get_lane_filter (self->timeline);
  self->syncing_lanes = TRUE;
  for (GtkWidget *row = gtk_widget_get_first_child (GTK_WIDGET (self->lane_list)); row != NULL;
       row = gtk_widget_get_next_sibling (row))
    {
      CowscopeTimelineLane *lane = row_lane (GTK_LIST_BOX_ROW (row));
      GtkWidget *check = g_object_get_data (G_OBJECT (row), "cowscope-check");
      GtkWidget *pin = g_object_get_data (G_OBJECT (row), "cowscope-pin");
      if (lane == NULL)
        continue;
      gtk_check_button_set_active (GTK_CHECK_BUTTON (check),
                                   !cowscope_lane_filter_get_hidden (filter, lane));
      gtk_toggle_button_set_active (GTK_TOGGLE_BUTTON (pin),
                                    cowscope_lane_filter_get_pinned (filter, lane));
    }
  self->syncing_lanes = FALSE;
  gtk_list_box_invalidate_filter (self->lane_list);
}

static void
lane_check_toggled_cb (GtkCheckButton *check, GtkListBoxRow *row)
{
  CowscopeTimelineToolbar *self = g_object_get_data (G_OBJECT (row), "cowscope-toolbar");
  if (self->syncing_lanes || self->timeline == NULL)
    return;
  cowscope_lane_filter_set_hidden (cowscope_timeline_view_get_lane_filter (self->timeline),
                                   row_lane (row), !gtk_check_button_get_active (check));
}

static void
lane_pin_toggled_cb (GtkToggleButton *pin, GtkListBoxRow *row)
{
  CowscopeTimelineToolbar *self = g_object_get_data (G_OBJECT (row), "cowscope-toolbar");
  if (self->syncing_lanes || self->timeline == NULL)
    return;
  cowscope_lane_filter_set_pinned (cowscope_timeline_view_get_lane_filter (self->timeline),
                                   row_lane (row), gtk_toggle_button_get_active (pin));
}

/* A row for @lane: a check (shown) with its name and detail, and a pin. */
static GtkWidget *
lane_row_new (CowscopeTimelineToolbar *self, CowscopeTimelineLane *lane,
              CowscopeSessionDocument *doc)
{
  g_autofree char *name = NULL, *detail = NULL;
  cowscope_timeline_format_lane_label (lane, doc, &name, &detail);
  g_autofree char *text = g_strdup_printf ("%s — %s", name, detail);
  GtkWidget *row = gtk_list_box_row_new ();
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
  GtkWidget *check = gtk_check_button_new_with_label (text);
  gtk_widget_set_hexpand (check, TRUE);
  if (cowscope_timeline_lane_get_kind (lane) == COWSCOPE_LANE_THREAD)
    gtk_widget_set_margin_start (check, 18);
  GtkWidget *pin = gtk_toggle_button_new ();
  gtk_button_set_icon_name (GTK_BUTTON (pin), "view-pin-symbolic");
  gtk_widget_add_css_class (pin, "flat");
  gtk_widget_set_tooltip_text (pin, _("Pin to the top of the timeline"));
  gtk_box_append (GTK_BOX (box), check);
  gtk_box_append (GTK_BOX (box), pin);
  gtk_list_box_row_set_child (GTK_LIST_BOX_ROW (row), box);
  gtk_list_box_row_set_activatable (GTK_LIST_BOX_ROW (row), FALSE);
  g_object_set_data_full (G_OBJECT (row), "cowscope-lane", g_object_ref (lane), g_object_unref);
  g_object_set_data (G_OBJECT (row), "cowscope-toolbar", self);
  g_object_set_data (G_OBJECT (row), "cowscope-check", check);
  g_object_set_data (G_OBJECT (row), "cowscope-pin", pin);
  g_signal_connect (check, "toggled", G_CALLBACK (lane_check_toggled_cb), row);
  g_signal_connect (pin, "toggled", G_CALLBACK (lane_pin_toggled_cb), row);
  return row;
}

/* Fills the lanes list with every lane of the session, in display
 * order. */
static void
fill_lane_list (CowscopeTimelineToolbar *self)
{
  GtkWidget *child;
  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self->lane_list))) != NULL)
    gtk_list_box_remove (self->lane_list, child);
  if (self->state == NULL)
    return;
  CowscopeSessionDocument *doc = cowscope_view_state_get_document (self->state);
  g_autoptr (GPtrArray) lanes =
    cowscope_lane_order_for_display (cowscope_session_document_get_lanes (doc));
  for (guint i = 0; i < lanes->len; i++)
    gtk_list_box_append (self->lane_list, lane_row_new (self, lanes->pdata[i], doc));
  sync_lane_rows (self);
}

/* Rows of lanes the filter text leaves out are not listed. */
static gboolean
lane_row_visible (GtkListBoxRow *row, gpointer data)
{
  CowscopeTimelineToolbar *self = data;
  if (self->timeline == NULL || self->state == NULL)
    return TRUE;
  CowscopeTimelineLane *lane = row_lane (row);
  return cowscope_timeline_lane_get_kind (lane) == COWSCOPE_LANE_COUNTER
         || cowscope_lane_filter_matches_text (cowscope_timeline_view_get_lane_filter (self->timeline),
                                               cowscope_view_state_get_document (self->state),
                                               lane);
}

static void
lanes_popover_show_cb (GtkWidget *popover, CowscopeTimelineToolbar *self)
{
  fill_lane_list (self);
}

static void
lane_filter_changed_cb (GtkSearchEntry *entry, CowscopeTimelineToolbar *self)
{
  if (self->timeline != NULL)
    cowscope_lane_filter_set_text (cowscope_timeline_view_get_lane_filter (self->timeline),
                                   gtk_editable_get_text (GTK_EDITABLE (entry)));
}

static void
show_all_clicked_cb (GtkButton *button, CowscopeTimelineToolbar *self)
{
  gtk_editable_set_text (GTK_EDITABLE (self->lane_filter_entry), "");
  if (self->timeline != NULL)
    cowscope_lane_filter_reset (cowscope_timeline_view_get_lane_filter (self->timeline));
}

static void
filter_changed_cb (CowscopeLaneFilter *filter, CowscopeTimelineToolbar *self)
{
  sync_lane_rows (self);
}

/* ---- following the timeline ---------------------------------------------------------- */

static void
jump_clicked_cb (GtkButton *button, CowscopeTimelineToolbar *self)
{
  if (self->timeline != NULL)
    gtk_widget_activate_action (GTK_WIDGET (self->timeline), "timeline.jump-to-cursor", NULL);
}

/* A new view state (a session opened): new names, no matches. */
static void
set_state (CowscopeTimelineToolbar *self, CowscopeViewState *state)
{
  if (self->state == state)
    return;
  CowscopeSessionDocument *old_doc =
    self->state != NULL ? cowscope_view_state_get_document (self->state) : NULL;
  g_set_object (&self->state, state);
  g_cancellable_cancel (self->search_cancellable);
  g_clear_object (&self->search_cancellable);
  g_clear_pointer (&self->matches, cowscope_tensor_matches_free);
  set_status (self, NULL);
  update_buttons (self);
  if (state != NULL && cowscope_view_state_get_document (state) == old_doc)
    return;
  g_cancellable_cancel (self->names_cancellable);
  g_clear_object (&self->names_cancellable);
  g_clear_pointer (&self->names, g_strfreev);
  gtk_list_store_clear (self->completion_store);
}

/* Reads the tensor names to complete from, once per session, when the
 * search is first used (not while the session opens: on a big session
 * that is a scan of its tensors). */
static void
ensure_names (CowscopeTimelineToolbar *self)
{
  if (self->state == NULL || self->names != NULL || self->names_cancellable != NULL)
    return;
  /* A session still being recorded has no tensors table yet. */
  CowscopeSessionDocument *doc = cowscope_view_state_get_document (self->state);
  if (g_strcmp0 (cowscope_session_document_get_meta (doc, "finalized"), "0") == 0)
    return;
  self->names_cancellable = g_cancellable_new ();
  cowscope_tensor_search_names_async (cowscope_view_state_get_document (self->state),
                                      self->names_cancellable, names_cb, self);
}

static void
search_focus_cb (GtkEventControllerFocus *focus, CowscopeTimelineToolbar *self)
{
  ensure_names (self);
}

static void
timeline_state_cb (CowscopeTimelineView *timeline, GParamSpec *pspec,
                   CowscopeTimelineToolbar *self)
{
  set_state (self, cowscope_timeline_view_get_view_state (timeline));
}

/* "/" on the timeline: to the search. */
static gboolean
focus_search_cb (GtkWidget *widget, GVariant *args, gpointer data)
{
  CowscopeTimelineToolbar *self = data;
  gtk_widget_grab_focus (GTK_WIDGET (self->search_entry));
  return TRUE;
}

CowscopeTimelineView *
cowscope_timeline_toolbar_get_timeline (CowscopeTimelineToolbar *self)
{
  g_return_val_if_fail (COWSCOPE_IS_TIMELINE_TOOLBAR (self), NULL);
  return self->timeline;
}

void
cowscope_timeline_toolbar_set_timeline (CowscopeTimelineToolbar *self,
                                        CowscopeTimelineView *timeline)
{
  g_return_if_fail (COWSCOPE_IS_TIMELINE_TOOLBAR (self));
  g_return_if_fail (timeline == NULL || COWSCOPE_IS_TIMELINE_VIEW (timeline));
  if (self->timeline == timeline)
    return;
  if (self->timeline != NULL)
    {
      g_signal_handlers_disconnect_by_data (self->timeline, self);
      g_signal_handlers_disconnect_by_data (cowscope_timeline_view_get_lane_filter (self->timeline),
                                            self);
      g_clear_pointer (&self->jump_binding, g_binding_unbind);
      gtk_widget_remove_controller (GTK_WIDGET (self->timeline), self->shortcuts);
      self->shortcuts = NULL;
    }
  g_set_object (&self->timeline, timeline);
  if (timeline != NULL)
    {
      g_signal_connect (timeline, "notify::view-state", G_CALLBACK (timeline_state_cb), self);
      g_signal_connect (cowscope_timeline_view_get_lane_filter (timeline), "changed",
                        G_CALLBACK (filter_changed_cb), self);
      self->jump_binding = g_object_bind_property (timeline, "cursor-shown", self->jump_button,
                                                   "sensitive",
                                                   G_BINDING_SYNC_CREATE | G_BINDING_INVERT_BOOLEAN);
      self->shortcuts = gtk_shortcut_controller_new ();
      gtk_shortcut_controller_add_shortcut (
        GTK_SHORTCUT_CONTROLLER (self->shortcuts),
        gtk_shortcut_new (gtk_keyval_trigger_new (GDK_KEY_slash, 0),
                          gtk_callback_action_new (focus_search_cb, self, NULL)));
      gtk_widget_add_controller (GTK_WIDGET (timeline), self->shortcuts);
    }
  set_state (self, timeline != NULL ? cowscope_timeline_view_get_view_state (timeline) : NULL);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_TIMELINE]);
}

/* ---- GObject ----------------------------------------------------------------------- */

static void
cowscope_timeline_toolbar_dispose (GObject *object)
{
  CowscopeTimelineToolbar *self = COWSCOPE_TIMELINE_TOOLBAR (object);
  cowscope_timeline_toolbar_set_timeline (self, NULL);
  g_cancellable_cancel (self->names_cancellable);
  g_clear_object (&self->names_cancellable);
  g_cancellable_cancel (self->search_cancellable);
  g_clear_object (&self->search_cancellable);
  g_clear_pointer (&self->matches, cowscope_tensor_matches_free);
  g_clear_pointer (&self->names, g_strfreev);
  g_clear_object (&self->completion_store);
  gtk_widget_dispose_template (GTK_WIDGET (self), COWSCOPE_TYPE_TIMELINE_TOOLBAR);
  G_OBJECT_CLASS (cowscope_timeline_toolbar_parent_class)->dispose (object);
}

static void
cowscope_timeline_toolbar_get_property (GObject *object, guint prop_id, GValue *value,
                                        GParamSpec *pspec)
{
  CowscopeTimelineToolbar *self = COWSCOPE_TIMELINE_TOOLBAR (object);
  switch (prop_id)
    {
    case PROP_TIMELINE: g_value_set_object (value, self->timeline); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
cowscope_timeline_toolbar_set_property (GObject *object, guint prop_id, const GValue *value,
                                        GParamSpec *pspec)
{
  CowscopeTimelineToolbar *self = COWSCOPE_TIMELINE_TOOLBAR (object);
  switch (prop_id)
    {
    case PROP_TIMELINE: cowscope_timeline_toolbar_set_timeline (self, g_value_get_object (value)); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
cowscope_timeline_toolbar_class_init (CowscopeTimelineToolbarClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  object_class->dispose = cowscope_timeline_toolbar_dispose;
  object_class->get_property = cowscope_timeline_toolbar_get_property;
  object_class->set_property = cowscope_timeline_toolbar_set_property;

  /**
   * CowscopeTimelineToolbar:timeline:
   *
   * The timeline the toolbar acts on.
   */
  properties[PROP_TIMELINE] =
    g_param_spec_object ("timeline", NULL, NULL, COWSCOPE_TYPE_TIMELINE_VIEW,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  g_type_ensure (COWSCOPE_TYPE_TIMELINE_LEGEND);
  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/org/cowscope/Cowscope/cowscope-timeline-toolbar.ui");
  gtk_widget_class_bind_template_child (widget_class, CowscopeTimelineToolbar, search_entry);
  gtk_widget_class_bind_template_child (widget_class, CowscopeTimelineToolbar, previous_button);
  gtk_widget_class_bind_template_child (widget_class, CowscopeTimelineToolbar, next_button);
  gtk_widget_class_bind_template_child (widget_class, CowscopeTimelineToolbar, match_label);
  gtk_widget_class_bind_template_child (widget_class, CowscopeTimelineToolbar, lanes_button);
  gtk_widget_class_bind_template_child (widget_class, CowscopeTimelineToolbar, lanes_popover);
  gtk_widget_class_bind_template_child (widget_class, CowscopeTimelineToolbar, lane_filter_entry);
  gtk_widget_class_bind_template_child (widget_class, CowscopeTimelineToolbar, lane_list);
  gtk_widget_class_bind_template_child (widget_class, CowscopeTimelineToolbar, show_all_button);
  gtk_widget_class_bind_template_child (widget_class, CowscopeTimelineToolbar, legend_button);
  gtk_widget_class_bind_template_child (widget_class, CowscopeTimelineToolbar, jump_button);
  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BOX_LAYOUT);
  gtk_widget_class_set_css_name (widget_class, "cowscope-timeline-toolbar");
}

static void
cowscope_timeline_toolbar_init (CowscopeTimelineToolbar *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  gtk_box_layout_set_spacing (GTK_BOX_LAYOUT (gtk_widget_get_layout_manager (GTK_WIDGET (self))),
                              4);
  self->completion_store = gtk_list_store_new (1, G_TYPE_STRING);
  GtkEntryCompletion *completion = gtk_entry_completion_new ();
  gtk_entry_completion_set_model (completion, GTK_TREE_MODEL (self->completion_store));
  gtk_entry_completion_set_text_column (completion, 0);
  gtk_entry_completion_set_match_func (completion, completion_match, self, NULL);
  gtk_entry_completion_set_popup_single_match (completion, FALSE);
  gtk_entry_set_completion (self->search_entry, completion);
  g_object_unref (completion);

  g_signal_connect (self->search_entry, "activate", G_CALLBACK (search_activate_cb), self);
  g_signal_connect (self->search_entry, "changed", G_CALLBACK (search_changed_cb), self);
  GtkEventController *keys = gtk_event_controller_key_new ();
  gtk_event_controller_set_propagation_phase (keys, GTK_PHASE_CAPTURE);
  g_signal_connect (keys, "key-pressed", G_CALLBACK (search_key_cb), self);
  gtk_widget_add_controller (GTK_WIDGET (self->search_entry), keys);
  GtkEventController *focus = gtk_event_controller_focus_new ();
  g_signal_connect (focus, "enter", G_CALLBACK (search_focus_cb), self);
  gtk_widget_add_controller (GTK_WIDGET (self->search_entry), focus);
  g_signal_connect (self->previous_button, "clicked", G_CALLBACK (previous_clicked_cb), self);
  g_signal_connect (self->next_button, "clicked", G_CALLBACK (next_clicked_cb), self);
  g_signal_connect (self->jump_button, "clicked", G_CALLBACK (jump_clicked_cb), self);
  g_signal_connect (self->lanes_popover, "show", G_CALLBACK (lanes_popover_show_cb), self);
  g_signal_connect (self->lane_filter_entry, "search-changed", G_CALLBACK (lane_filter_changed_cb),
                    self);
  g_signal_connect (self->show_all_button, "clicked", G_CALLBACK (show_all_clicked_cb), self);
  gtk_list_box_set_filter_func (self->lane_list, lane_row_visible, self, NULL);
}

GtkWidget *
cowscope_timeline_toolbar_new (void)
{
  return g_object_new (COWSCOPE_TYPE_TIMELINE_TOOLBAR, NULL);
}
