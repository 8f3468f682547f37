/* cowscope-graph-view.c — see cowscope-graph-view.h. */
#include "cowscope-config.h"

#include <adwaita.h>
#include <glib/gi18n.h>
#include <inttypes.h>
#include <string.h>

#include "cowscope-graph-canvas.h"
#include "cowscope-graph-layout.h"
#include "cowscope-graph-legend.h"
#include "cowscope-graph-view.h"

#define MAX_FOCUS 32
/* Until the user shows or hides the legend, it is shown when the view is
 * at least this wide, so that the canvas keeps room for the graph. */
#define LEGEND_MIN_VIEW_WIDTH 600

struct _CowscopeGraphView {
  GtkWidget parent_instance;

  /* template children */
  GtkWidget *box;
  GtkSearchEntry *search_entry;
  GtkDropDown *size_filter;
  GtkLabel *status_label;
  GtkSpinner *spinner;
  GtkStack *stack;
  AdwStatusPage *empty_page;
  CowscopeGraphCanvas *canvas;
  GtkProgressBar *export_progress;
  GtkRevealer *details_revealer;
  GtkLabel *details_title;
  GtkLabel *details_body;
  GtkButton *expand_button;
  GtkWidget *legend;
  GtkLabel *search_message;

  CowscopeViewState *state;
  gulong cursor_handler, highlights_handler;
  GCancellable *cancellable;   /* the newest layout request */
  gboolean ready;
  CowscopeGraphScene *scene;
  guint64 min_bytes;
  GArray *expanded;            /* CowscopeObjectRef: storages shown ungrouped */
  GArray *search_focus;        /* CowscopeObjectRef: matches kept by the layout */
  char *search;                /* the current search text, or NULL */
  gboolean search_pending;     /* run the search again when the next scene lands */
  GArray *matches;             /* guint: scene node indices */
  guint match_cursor;
  gint selected;
  guint exports;               /* exports running */
  CowscopeSharingGraph *live_graph; /* shown instead of a view state's (show_graph) */
  gboolean live_pending;       /* a newer live_graph waits for the layout in flight */
  gboolean legend_auto;        /* the legend follows the width (the user has not chosen) */
  guint legend_idle;           /* applies the width's choice after an allocation */
};

G_DEFINE_FINAL_TYPE (CowscopeGraphView, cowscope_graph_view, GTK_TYPE_WIDGET)

enum { PROP_0, PROP_VIEW_STATE, PROP_READY, PROP_SCENE, PROP_MIN_BYTES, PROP_LEGEND_VISIBLE, N_PROPS };
static GParamSpec *properties[N_PROPS];

/* The size filter's steps (the toolbar's items, in order) and their
 * nicks in the settings (org.cowscope.Cowscope.SizeFilter). */
static const guint64 size_steps[] = { 0, 1024, 64 * 1024, 1024 * 1024, 16 * 1024 * 1024 };
static const char *const size_step_nicks[G_N_ELEMENTS (size_steps)] = { "all", "1k", "64k", "1m", "16m" };

static void request_layout (CowscopeGraphView *self, gboolean rebuild);

/* Shows @message as a toast when the view sits in a toast overlay. */
static void
toast (CowscopeGraphView *self, const char *message)
{
  GtkWidget *overlay = gtk_widget_get_ancestor (GTK_WIDGET (self), ADW_TYPE_TOAST_OVERLAY);
  if (overlay != NULL)
    adw_toast_overlay_add_toast (ADW_TOAST_OVERLAY (overlay), adw_toast_new (message));
  else
    g_message ("%s", message);
}

/* Recomputes the per-node marks from highlights, matches and selection. */
static void
update_marks (CowscopeGraphView *self)
{
  if (self->scene == NULL)
    return;
  guint n = cowscope_graph_scene_get_n_nodes (self->scene);
  g_autofree guint8 *marks = g_new0 (guint8, MAX (n, 1));
  gboolean any = FALSE;
  if (self->state != NULL)
    {
      guint n_refs;
      const CowscopeObjectRef *refs = cowscope_view_state_get_highlights (self->state, &n_refs);
      for (guint i = 0; i < n_refs; i++)
        {
          gint k = cowscope_graph_scene_find_object (self->scene, refs[i].kind, refs[i].pid,
                                                     refs[i].id);
          if (k >= 0)
            marks[k] |= COWSCOPE_GRAPH_MARK_HIGHLIGHT, any = TRUE;
        }
    }
  for (guint i = 0; i < self->matches->len; i++)
    marks[g_array_index (self->matches, guint, i)] |= COWSCOPE_GRAPH_MARK_MATCH, any = TRUE;
  if (self->selected >= 0 && (guint) self->selected < n)
    marks[self->selected] |= COWSCOPE_GRAPH_MARK_SELECTED, any = TRUE;
  cowscope_graph_canvas_set_marks (self->canvas, any ? marks : NULL, any ? n : 0);
}

/* Words for a node state. */
static const char *
state_name (const CowscopeSceneNode *n)
{
  switch (n->state)
    {
    case COWSCOPE_NODE_STATE_SHARED: return _("Shared through a CoW context");
    case COWSCOPE_NODE_STATE_MATERIALIZED: return _("Materialized: owns a copy");
    case COWSCOPE_NODE_STATE_STOLEN:
      return _("Materialized by a steal: owns the bytes it shared, nothing was copied");
    case COWSCOPE_NODE_STATE_LIMBO:
      return _("In the limbo: its producer dropped it, a consumer keeps it alive");
    default: return _("Owns its bytes");
    }
}

/* Whether storage (@pid, @id) is in the expanded set; its index or -1. */
static gint
expanded_index (CowscopeGraphView *self, guint32 pid, guint64 id)
{
  for (guint i = 0; i < self->expanded->len; i++)
    {
      CowscopeObjectRef *r = &g_array_index (self->expanded, CowscopeObjectRef, i);
      if (r->pid == pid && r->id == id)
        return (gint) i;
    }
  return -1;
}

/* The storage whose group the selected node belongs to or would fold
 * back into; FALSE when there is none. */
static gboolean
selected_group_storage (CowscopeGraphView *self, guint32 *pid, guint64 *id, gboolean *expanded)
{
  if (self->scene == NULL || self->selected < 0)
    return FALSE;
  const CowscopeSceneNode *n = cowscope_graph_scene_get_node (self->scene, (guint) self->selected);
  if (n->type == COWSCOPE_SCENE_NODE_GROUP)
    {
      *pid = n->pid, *id = n->id, *expanded = FALSE;
      return TRUE;
    }
  if (n->type != COWSCOPE_SCENE_NODE_OBJECT)
    return FALSE;
  guint64 storage = n->id;
  if (n->kind == COWSCOPE_NODE_TENSOR)
    storage = cowscope_sharing_graph_get_node (cowscope_graph_scene_get_graph (self->scene),
                                               (guint) n->graph_index)->storage_id;
  else if (n->kind != COWSCOPE_NODE_STORAGE)
    return FALSE;
  if (expanded_index (self, n->pid, storage) < 0)
    return FALSE;
  *pid = n->pid, *id = storage, *expanded = TRUE;
  return TRUE;
}

/* Fills the details card for the selected node (hidden with none). */
static void
update_details (CowscopeGraphView *self)
{
  guint32 gpid;
  guint64 gid;
  gboolean gexpanded = FALSE;
  gboolean group = selected_group_storage (self, &gpid, &gid, &gexpanded);

  gtk_widget_action_set_enabled (GTK_WIDGET (self), "graph.toggle-group", group);
  gtk_widget_set_visible (GTK_WIDGET (self->expand_button), group);
  gtk_button_set_label (self->expand_button, gexpanded ? _("_Group the Views Again")
                                                       : _("_Expand Group"));
  if (self->scene == NULL || self->selected < 0)
    {
      gtk_revealer_set_reveal_child (self->details_revealer, FALSE);
      return;
    }
  const CowscopeSceneNode *n = cowscope_graph_scene_get_node (self->scene, (guint) self->selected);
  g_autofree char *size = g_format_size_full (n->nbytes, G_FORMAT_SIZE_LONG_FORMAT);
  GString *body = g_string_new (NULL);
  g_string_append_printf (body, "%s\n", n->detail);
  if (n->type == COWSCOPE_SCENE_NODE_OBJECT)
    {
      const CowscopeGraphNode *g =
        cowscope_sharing_graph_get_node (cowscope_graph_scene_get_graph (self->scene),
                                         (guint) n->graph_index);
      g_string_append_printf (body, _("Process %u, id %" PRIu64 "\n"), n->pid, n->id);
      g_string_append_printf (body, "%s\n", state_name (n));
      g_string_append_printf (body, _("Size: %s"), size);
      if (g->free_ts >= 0)
        {
          g_string_append_c (body, '\n');
          if (n->freed_soon)
            g_string_append (body, _("Freed soon after this instant"));
          else
            g_string_append (body, _("Freed later"));
        }
    }
  else
    {
      g_string_append_printf (body, g_dngettext (GETTEXT_PACKAGE, "%u object", "%u objects",
                                                 n->n_members), n->n_members);
      g_string_append_printf (body, "\n%s", size);
      if (n->type == COWSCOPE_SCENE_NODE_OVERFLOW)
        g_string_append_printf (body, "\n%s", _("Not drawn to keep the graph readable: "
                                                "filter by size or search by name to see them."));
    }
  gtk_label_set_text (self->details_title, n->label);
  gtk_label_set_text (self->details_body, body->str);
  g_string_free (body, TRUE);
  gtk_revealer_set_reveal_child (self->details_revealer, TRUE);
}

/* The status line: what is drawn, and what was grouped, hidden or
 * aggregated. */
static void
update_status (CowscopeGraphView *self, const GError *error)
{
  if (error != NULL)
    {
      g_autofree char *text = g_strdup_printf (_("Cannot show the graph: %s"), error->message);
      gtk_label_set_text (self->status_label, text);
      return;
    }
  if (self->scene == NULL)
    {
      gtk_label_set_text (self->status_label, "");
      return;
    }
  const CowscopeSceneStats *st = cowscope_graph_scene_get_stats (self->scene);
  GString *s = g_string_new (NULL);
  g_string_append_printf (s, g_dngettext (GETTEXT_PACKAGE, "%u object", "%u objects",
                                          st->n_graph_nodes), st->n_graph_nodes);
  if (st->n_groups > 0)
    {
      g_string_append (s, " · ");
      g_string_append_printf (s, g_dngettext (GETTEXT_PACKAGE, "%u group", "%u groups",
                                              st->n_groups), st->n_groups);
    }
  if (st->n_filtered > 0)
    {
      g_string_append (s, " · ");
      g_string_append_printf (s, g_dngettext (GETTEXT_PACKAGE, "%u hidden by size",
                                              "%u hidden by size", st->n_filtered), st->n_filtered);
    }
  if (st->n_aggregated > 0)
    {
      g_string_append (s, " · ");
      g_string_append_printf (s, g_dngettext (GETTEXT_PACKAGE, "%u not drawn", "%u not drawn",
                                              st->n_aggregated), st->n_aggregated);
    }
  gtk_label_set_text (self->status_label, s->str);
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->status_label), s->str);
  g_string_free (s, TRUE);
}

/* Sets "ready" and notifies on change. */
static void
set_ready (CowscopeGraphView *self, gboolean ready)
{
  if (self->ready == ready)
    return;
  self->ready = ready;
  gtk_spinner_set_spinning (self->spinner, !ready);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_READY]);
}

/* Case-insensitive substring test. */
static gboolean
name_matches (const char *name, const char *folded)
{
  if (name == NULL)
    return FALSE;
  g_autofree char *n = g_utf8_casefold (name, -1);
  return strstr (n, folded) != NULL;
}

/* Says so under the toolbar when the search matches no tensor of the
 * graph shown (and no layout that may show one is on its way). */
static void
update_search_message (CowscopeGraphView *self)
{
  gboolean nothing = self->search != NULL && self->search[0] != '\0' && self->scene != NULL
                     && self->matches->len == 0 && !self->search_pending;
  if (nothing)
    {
      /* Translators: the search in the sharing graph found nothing; %s is what was typed */
      g_autofree char *text = g_strdup_printf (_("No tensor named “%s” at this instant"),
                                               self->search);
      gtk_label_set_text (self->search_message, text);
      gtk_widget_add_css_class (GTK_WIDGET (self->search_entry), "error");
    }
  else
    gtk_widget_remove_css_class (GTK_WIDGET (self->search_entry), "error");
  gtk_widget_set_visible (GTK_WIDGET (self->search_message), nothing);
}

/* Runs the search on the current scene (see cowscope_graph_view_search). */
static guint
run_search (CowscopeGraphView *self, gboolean allow_layout)
{
  g_array_set_size (self->matches, 0);
  self->match_cursor = 0;
  if (allow_layout)
    self->search_pending = FALSE;
  if (self->search == NULL || self->search[0] == '\0' || self->scene == NULL)
    {
      update_marks (self);
      update_search_message (self);
      return 0;
    }
  g_autofree char *folded = g_utf8_casefold (self->search, -1);
  for (guint i = 0; i < cowscope_graph_scene_get_n_nodes (self->scene); i++)
    {
      const CowscopeSceneNode *n = cowscope_graph_scene_get_node (self->scene, i);
      if (n->type == COWSCOPE_SCENE_NODE_OBJECT && n->kind == COWSCOPE_NODE_TENSOR &&
          name_matches (n->label, folded))
        g_array_append_val (self->matches, i);
    }
  if (self->matches->len == 0 && allow_layout)
    {
      /* Maybe in a group, filtered or aggregated: lay out keeping them. */
      CowscopeSharingGraph *graph = cowscope_graph_scene_get_graph (self->scene);
      g_array_set_size (self->search_focus, 0);
      for (guint i = 0; i < cowscope_sharing_graph_get_n_nodes (graph) &&
                        self->search_focus->len < MAX_FOCUS; i++)
        {
          const CowscopeGraphNode *g = cowscope_sharing_graph_get_node (graph, i);
          if (g->kind == COWSCOPE_NODE_TENSOR && name_matches (g->label, folded))
            {
              CowscopeObjectRef r = { COWSCOPE_NODE_TENSOR, g->pid, g->id };
              g_array_append_val (self->search_focus, r);
              /* Its group must open for it to be drawn on its own. */
              if (expanded_index (self, g->pid, g->storage_id) < 0)
                {
                  CowscopeObjectRef s = { COWSCOPE_NODE_STORAGE, g->pid, g->storage_id };
                  g_array_append_val (self->expanded, s);
                }
            }
        }
      if (self->search_focus->len > 0)
        {
          self->search_pending = TRUE;
          request_layout (self, FALSE);
        }
    }
  if (self->matches->len > 0)
    cowscope_graph_canvas_center_on (self->canvas, g_array_index (self->matches, guint, 0), 0.8);
  update_marks (self);
  update_search_message (self);
  return self->matches->len;
}

/* Lays out the live graph that arrived while the previous one was being
 * laid out (see cowscope_graph_view_show_graph). */
static void
take_pending_live_graph (CowscopeGraphView *self)
{
  if (!self->live_pending || self->state != NULL || self->live_graph == NULL)
    return;
  self->live_pending = FALSE;
  request_layout (self, TRUE);
}

/* Shows the canvas, or, when the scene has no node, says why rather than
 * showing an empty canvas: nothing is alive, or the size filter hides it
 * all. */
static void
show_scene_or_why_empty (CowscopeGraphView *self)
{
  const CowscopeSceneStats *st = cowscope_graph_scene_get_stats (self->scene);

  if (cowscope_graph_scene_get_n_nodes (self->scene) > 0)
    {
      gtk_stack_set_visible_child_name (self->stack, "graph");
      return;
    }
  if (st->n_graph_nodes > 0 && st->n_filtered > 0)
    {
      adw_status_page_set_title (self->empty_page, _("Every Object Is Smaller Than the Filter"));
      adw_status_page_set_description (self->empty_page,
                                       _("Choose a smaller size in the toolbar to see them."));
    }
  else
    {
      adw_status_page_set_title (self->empty_page, _("Nothing Is Alive Here"));
      adw_status_page_set_description (self->empty_page,
                                       _("No allocation, storage or tensor is alive at this instant."));
    }
  gtk_stack_set_visible_child_name (self->stack, "empty");
}

/* Completion of a layout request; ignores all but the newest. */
static void
layout_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr (CowscopeGraphView) self = user_data;
  g_autoptr (GError) error = NULL;
  g_autoptr (CowscopeGraphScene) scene = cowscope_graph_layout_finish (result, &error);

  if (g_task_get_cancellable (G_TASK (result)) != self->cancellable)
    return; /* stale: a newer request was made */
  if (scene == NULL)
    {
      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        return;
      adw_status_page_set_title (self->empty_page, _("Cannot Show the Graph"));
      adw_status_page_set_description (self->empty_page, error->message);
      gtk_stack_set_visible_child_name (self->stack, "empty");
      update_status (self, error);
      set_ready (self, TRUE);
      take_pending_live_graph (self);
      return;
    }

  /* Keep the selection on the same object when it is still there. */
  gint selected = -1;
  if (self->scene != NULL && self->selected >= 0)
    {
      const CowscopeSceneNode *old = cowscope_graph_scene_get_node (self->scene, (guint) self->selected);
      selected = old->type == COWSCOPE_SCENE_NODE_OVERFLOW ? -1
                 : cowscope_graph_scene_find_object (scene, old->type == COWSCOPE_SCENE_NODE_GROUP
                                                              ? COWSCOPE_NODE_STORAGE : old->kind,
                                                     old->pid, old->id);
      if (selected >= 0 && old->type == COWSCOPE_SCENE_NODE_GROUP)
        selected = -1;
    }
  g_set_object (&self->scene, scene);
  self->selected = selected;
  cowscope_graph_canvas_set_scene (self->canvas, scene);
  show_scene_or_why_empty (self);
  update_status (self, NULL);
  g_array_set_size (self->matches, 0);
  if (self->search != NULL && self->search[0] != '\0')
    {
      self->search_pending = FALSE;
      run_search (self, FALSE);
    }
  update_marks (self);
  update_details (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SCENE]);
  set_ready (self, TRUE);
  take_pending_live_graph (self);
}

/* The objects the layout must keep: highlights and search matches. */
static GArray *
collect_focus (CowscopeGraphView *self)
{
  GArray *focus = g_array_new (FALSE, FALSE, sizeof (CowscopeObjectRef));
  if (self->state != NULL)
    {
      guint n;
      const CowscopeObjectRef *refs = cowscope_view_state_get_highlights (self->state, &n);
      g_array_append_vals (focus, refs, MIN (n, MAX_FOCUS));
    }
  g_array_append_vals (focus, self->search_focus->data, self->search_focus->len);
  return focus;
}

/* Asks for a new layout (of a new graph at the cursor when @rebuild, else
 * of the graph shown), cancelling the previous request. */
static void
request_layout (CowscopeGraphView *self, gboolean rebuild)
{
  if (self->state == NULL && self->live_graph == NULL)
    return;
  if (!rebuild && self->scene == NULL)
    rebuild = TRUE;
  g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  self->cancellable = g_cancellable_new ();
  set_ready (self, FALSE);

  g_autoptr (GArray) focus = collect_focus (self);
  CowscopeGraphLayoutOptions options = {
    .min_bytes = self->min_bytes,
    .expanded = (const CowscopeObjectRef *) (gpointer) self->expanded->data,
    .n_expanded = self->expanded->len,
    .focus = (const CowscopeObjectRef *) (gpointer) focus->data,
    .n_focus = focus->len,
  };
  if (self->state == NULL)
    cowscope_graph_layout_async (NULL, 0, self->live_graph, &options, self->cancellable,
                                 layout_done, g_object_ref (self));
  else
    cowscope_graph_layout_async (cowscope_view_state_get_document (self->state),
                                 cowscope_view_state_get_cursor (self->state),
                                 rebuild ? NULL : cowscope_graph_scene_get_graph (self->scene),
                                 &options, self->cancellable, layout_done, g_object_ref (self));
}

static void
cursor_changed_cb (CowscopeViewState *state, GParamSpec *pspec, CowscopeGraphView *self)
{
  request_layout (self, TRUE);
}

/* New highlights: outline them, laying out again when one is not drawn. */
static void
highlights_changed_cb (CowscopeViewState *state, CowscopeGraphView *self)
{
  guint n;
  const CowscopeObjectRef *refs = cowscope_view_state_get_highlights (state, &n);
  gboolean missing = FALSE;
  if (self->scene != NULL)
    for (guint i = 0; i < n && !missing; i++)
      {
        gint k = cowscope_graph_scene_find_object (self->scene, refs[i].kind, refs[i].pid, refs[i].id);
        missing = cowscope_sharing_graph_lookup (cowscope_graph_scene_get_graph (self->scene),
                                                 refs[i].kind, refs[i].pid, refs[i].id) >= 0 &&
                  (k < 0 || cowscope_graph_scene_get_node (self->scene, (guint) k)->type !=
                              COWSCOPE_SCENE_NODE_OBJECT);
      }
  if (missing)
    request_layout (self, FALSE);
  update_marks (self);
}

static void
node_clicked_cb (CowscopeGraphCanvas *canvas, int index, int n_press, CowscopeGraphView *self)
{
  cowscope_graph_view_select_node (self, index);
  if (n_press == 2 && index >= 0 &&
      cowscope_graph_scene_get_node (self->scene, (guint) index)->type == COWSCOPE_SCENE_NODE_GROUP)
    gtk_widget_activate_action (GTK_WIDGET (self), "graph.toggle-group", NULL);
}

static void
search_changed_cb (GtkSearchEntry *entry, CowscopeGraphView *self)
{
  cowscope_graph_view_search (self, gtk_editable_get_text (GTK_EDITABLE (entry)));
}

/* Enter in the search: the next match. */
static void
search_activate_cb (GtkSearchEntry *entry, CowscopeGraphView *self)
{
  if (self->matches->len == 0)
    return;
  self->match_cursor = (self->match_cursor + 1) % self->matches->len;
  cowscope_graph_canvas_center_on (self->canvas,
                                   g_array_index (self->matches, guint, self->match_cursor), 0.8);
}

static void
size_filter_cb (GtkDropDown *dropdown, GParamSpec *pspec, CowscopeGraphView *self)
{
  guint i = gtk_drop_down_get_selected (dropdown);
  cowscope_graph_view_set_min_bytes (self, i < G_N_ELEMENTS (size_steps) ? size_steps[i] : 0);
}

static void
zoom_action (GtkWidget *widget, const char *name, GVariant *param)
{
  CowscopeGraphView *self = COWSCOPE_GRAPH_VIEW (widget);
  if (g_str_equal (name, "graph.zoom-in"))
    cowscope_graph_canvas_zoom_by (self->canvas, 1.25, -1, -1);
  else if (g_str_equal (name, "graph.zoom-out"))
    cowscope_graph_canvas_zoom_by (self->canvas, 0.8, -1, -1);
  else
    cowscope_graph_canvas_zoom_to_fit (self->canvas);
}

static void
toggle_group_action (GtkWidget *widget, const char *name, GVariant *param)
{
  CowscopeGraphView *self = COWSCOPE_GRAPH_VIEW (widget);
  guint32 pid;
  guint64 id;
  gboolean expanded;
  if (selected_group_storage (self, &pid, &id, &expanded))
    cowscope_graph_view_set_group_expanded (self, pid, id, !expanded);
}

/* Progress of an export: the bar over the graph. */
static void
export_progress_cb (double fraction, gpointer user_data)
{
  CowscopeGraphView *self = user_data;
  if (self->exports > 0)
    gtk_progress_bar_set_fraction (self->export_progress, fraction);
}

/* Completion of an export: hides the bar and completes the caller's task. */
static void
export_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr (GTask) task = user_data;
  CowscopeGraphView *self = g_task_get_source_object (task);
  GError *error = NULL;
  if (--self->exports == 0)
    gtk_widget_set_visible (GTK_WIDGET (self->export_progress), FALSE);
  if (cowscope_graph_export_finish (result, &error))
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_error (task, error);
}

/* Completion of an export started from the menu: a toast either way. */
static void
export_menu_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  CowscopeGraphView *self = COWSCOPE_GRAPH_VIEW (source);
  g_autoptr (GError) error = NULL;
  if (cowscope_graph_view_export_finish (self, result, &error))
    toast (self, _("Graph exported"));
  else if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      g_autofree char *text = g_strdup_printf (_("Could not export the graph: %s"), error->message);
      toast (self, text);
    }
}

/* Response of the export chooser. */
static void
export_response_cb (GtkNativeDialog *dialog, int response, CowscopeGraphView *self)
{
  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr (GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));
      gboolean png = GPOINTER_TO_INT (g_object_get_data (G_OBJECT (dialog), "png"));
      if (file != NULL)
        cowscope_graph_view_export_async (self, file,
                                          png ? COWSCOPE_GRAPH_EXPORT_PNG : COWSCOPE_GRAPH_EXPORT_SVG,
                                          NULL, export_menu_done, NULL);
    }
  g_object_unref (dialog);
  g_object_unref (self);
}

/* graph.export (s "svg" | "png"): asks where, then exports. */
static void
export_action (GtkWidget *widget, const char *name, GVariant *param)
{
  CowscopeGraphView *self = COWSCOPE_GRAPH_VIEW (widget);
  gboolean png = g_str_equal (g_variant_get_string (param, NULL), "png");
  if (self->scene == NULL)
    return;
  GtkRoot *root = gtk_widget_get_root (widget);
  GtkFileChooserNative *chooser = gtk_file_chooser_native_new (
    png ? _("Export the Graph as PNG") : _("Export the Graph as SVG"),
    GTK_IS_WINDOW (root) ? GTK_WINDOW (root) : NULL, GTK_FILE_CHOOSER_ACTION_SAVE, _("_Export"),
    _("_Cancel"));
  gtk_native_dialog_set_modal (GTK_NATIVE_DIALOG (chooser), TRUE);
  gtk_file_chooser_set_current_name (GTK_FILE_CHOOSER (chooser),
                                     png ? "sharing-graph.png" : "sharing-graph.svg");
  g_object_set_data (G_OBJECT (chooser), "png", GINT_TO_POINTER (png));
  g_signal_connect (chooser, "response", G_CALLBACK (export_response_cb), g_object_ref (self));
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (chooser));
}

/* Shows or hides the legend (the canvas gets the rest of the width). */
static void
apply_legend_visible (CowscopeGraphView *self, gboolean visible)
{
  if (gtk_widget_get_visible (self->legend) == visible)
    return;
  gtk_widget_set_visible (self->legend, visible);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_LEGEND_VISIBLE]);
}

/* After an allocation: the width's choice of legend, while the user has
 * made none. */
static gboolean
legend_idle_cb (gpointer data)
{
  CowscopeGraphView *self = data;
  self->legend_idle = 0;
  if (self->legend_auto)
    apply_legend_visible (self, gtk_widget_get_width (GTK_WIDGET (self)) >= LEGEND_MIN_VIEW_WIDTH);
  return G_SOURCE_REMOVE;
}

static GtkSizeRequestMode
cowscope_graph_view_get_request_mode (GtkWidget *widget)
{
  return gtk_widget_get_request_mode (COWSCOPE_GRAPH_VIEW (widget)->box);
}

static void
cowscope_graph_view_measure (GtkWidget *widget, GtkOrientation orientation, int for_size,
                             int *minimum, int *natural, int *minimum_baseline,
                             int *natural_baseline)
{
  gtk_widget_measure (COWSCOPE_GRAPH_VIEW (widget)->box, orientation, for_size, minimum, natural,
                      minimum_baseline, natural_baseline);
}

/* Allocates the one child (no layout manager: this is where the width
 * is seen). */
static void
cowscope_graph_view_size_allocate (GtkWidget *widget, int width, int height, int baseline)
{
  CowscopeGraphView *self = COWSCOPE_GRAPH_VIEW (widget);
  gtk_widget_allocate (self->box, width, height, baseline, NULL);
  /* Not now: showing a child in the middle of an allocation re-queues it. */
  if (self->legend_auto && self->legend_idle == 0
      && (width >= LEGEND_MIN_VIEW_WIDTH) != gtk_widget_get_visible (self->legend))
    /* Before the next frame's layout, so the graph is fitted once. */
    self->legend_idle = g_idle_add_full (G_PRIORITY_HIGH_IDLE, legend_idle_cb, self, NULL);
}

static void
cowscope_graph_view_dispose (GObject *object)
{
  CowscopeGraphView *self = COWSCOPE_GRAPH_VIEW (object);
  g_clear_handle_id (&self->legend_idle, g_source_remove);
  cowscope_graph_view_set_view_state (self, NULL);
  g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  g_clear_object (&self->scene);
  g_clear_object (&self->live_graph);
  gtk_widget_dispose_template (GTK_WIDGET (self), COWSCOPE_TYPE_GRAPH_VIEW);
  G_OBJECT_CLASS (cowscope_graph_view_parent_class)->dispose (object);
}

static void
cowscope_graph_view_finalize (GObject *object)
{
  CowscopeGraphView *self = COWSCOPE_GRAPH_VIEW (object);
  g_clear_pointer (&self->expanded, g_array_unref);
  g_clear_pointer (&self->search_focus, g_array_unref);
  g_clear_pointer (&self->matches, g_array_unref);
  g_clear_pointer (&self->search, g_free);
  G_OBJECT_CLASS (cowscope_graph_view_parent_class)->finalize (object);
}

static void
cowscope_graph_view_get_property (GObject *object, guint prop_id, GValue *value,
                                  GParamSpec *pspec)
{
  CowscopeGraphView *self = COWSCOPE_GRAPH_VIEW (object);
  switch (prop_id)
    {
    case PROP_VIEW_STATE: g_value_set_object (value, self->state); break;
    case PROP_READY: g_value_set_boolean (value, self->ready); break;
    case PROP_SCENE: g_value_set_object (value, self->scene); break;
    case PROP_MIN_BYTES: g_value_set_uint64 (value, self->min_bytes); break;
    case PROP_LEGEND_VISIBLE: g_value_set_boolean (value, gtk_widget_get_visible (self->legend)); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
cowscope_graph_view_set_property (GObject *object, guint prop_id, const GValue *value,
                                  GParamSpec *pspec)
{
  CowscopeGraphView *self = COWSCOPE_GRAPH_VIEW (object);
  switch (prop_id)
    {
    case PROP_VIEW_STATE: cowscope_graph_view_set_view_state (self, g_value_get_object (value)); break;
    case PROP_MIN_BYTES: cowscope_graph_view_set_min_bytes (self, g_value_get_uint64 (value)); break;
    case PROP_LEGEND_VISIBLE: cowscope_graph_view_set_legend_visible (self, g_value_get_boolean (value)); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
cowscope_graph_view_class_init (CowscopeGraphViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = cowscope_graph_view_dispose;
  object_class->finalize = cowscope_graph_view_finalize;
  object_class->get_property = cowscope_graph_view_get_property;
  object_class->set_property = cowscope_graph_view_set_property;
  widget_class->get_request_mode = cowscope_graph_view_get_request_mode;
  widget_class->measure = cowscope_graph_view_measure;
  widget_class->size_allocate = cowscope_graph_view_size_allocate;

  properties[PROP_VIEW_STATE] =
    g_param_spec_object ("view-state", NULL, NULL, COWSCOPE_TYPE_VIEW_STATE,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_READY] = g_param_spec_boolean ("ready", NULL, NULL, FALSE,
                                                 G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  properties[PROP_SCENE] = g_param_spec_object ("scene", NULL, NULL, COWSCOPE_TYPE_GRAPH_SCENE,
                                                G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  properties[PROP_MIN_BYTES] =
    g_param_spec_uint64 ("min-bytes", NULL, NULL, 0, G_MAXUINT64, 0,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /* Whether the legend is shown beside the canvas.  Setting it (the
   * toolbar's toggle, graph.show-legend) is the user's choice and stays;
   * until then the legend shows only when the view is wide enough. */
  properties[PROP_LEGEND_VISIBLE] =
    g_param_spec_boolean ("legend-visible", NULL, NULL, FALSE,
                          G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  g_type_ensure (COWSCOPE_TYPE_GRAPH_CANVAS);
  g_type_ensure (COWSCOPE_TYPE_GRAPH_LEGEND);
  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/org/cowscope/Cowscope/cowscope-graph-view.ui");
  gtk_widget_class_bind_template_child (widget_class, CowscopeGraphView, box);
  gtk_widget_class_bind_template_child (widget_class, CowscopeGraphView, search_entry);
  gtk_widget_class_bind_template_child (widget_class, CowscopeGraphView, size_filter);
  gtk_widget_class_bind_template_child (widget_class, CowscopeGraphView, status_label);
  gtk_widget_class_bind_template_child (widget_class, CowscopeGraphView, spinner);
  gtk_widget_class_bind_template_child (widget_class, CowscopeGraphView, stack);
  gtk_widget_class_bind_template_child (widget_class, CowscopeGraphView, empty_page);
  gtk_widget_class_bind_template_child (widget_class, CowscopeGraphView, canvas);
  gtk_widget_class_bind_template_child (widget_class, CowscopeGraphView, export_progress);
  gtk_widget_class_bind_template_child (widget_class, CowscopeGraphView, details_revealer);
  gtk_widget_class_bind_template_child (widget_class, CowscopeGraphView, details_title);
  gtk_widget_class_bind_template_child (widget_class, CowscopeGraphView, details_body);
  gtk_widget_class_bind_template_child (widget_class, CowscopeGraphView, expand_button);
  gtk_widget_class_bind_template_child (widget_class, CowscopeGraphView, legend);
  gtk_widget_class_bind_template_child (widget_class, CowscopeGraphView, search_message);

  gtk_widget_class_install_action (widget_class, "graph.zoom-in", NULL, zoom_action);
  gtk_widget_class_install_action (widget_class, "graph.zoom-out", NULL, zoom_action);
  gtk_widget_class_install_action (widget_class, "graph.zoom-fit", NULL, zoom_action);
  gtk_widget_class_install_action (widget_class, "graph.toggle-group", NULL, toggle_group_action);
  gtk_widget_class_install_action (widget_class, "graph.export", "s", export_action);
  gtk_widget_class_install_property_action (widget_class, "graph.show-legend", "legend-visible");

  static const struct { guint key; GdkModifierType mods; const char *action; } keys[] = {
    { GDK_KEY_plus, GDK_CONTROL_MASK, "graph.zoom-in" },
    { GDK_KEY_equal, GDK_CONTROL_MASK, "graph.zoom-in" },
    { GDK_KEY_KP_Add, GDK_CONTROL_MASK, "graph.zoom-in" },
    { GDK_KEY_minus, GDK_CONTROL_MASK, "graph.zoom-out" },
    { GDK_KEY_KP_Subtract, GDK_CONTROL_MASK, "graph.zoom-out" },
    { GDK_KEY_0, GDK_CONTROL_MASK, "graph.zoom-fit" },
    { GDK_KEY_plus, 0, "graph.zoom-in" },
    { GDK_KEY_minus, 0, "graph.zoom-out" },
    { GDK_KEY_0, 0, "graph.zoom-fit" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (keys); i++)
    gtk_widget_class_add_binding_action (widget_class, keys[i].key, keys[i].mods, keys[i].action,
                                         NULL);
  gtk_widget_class_set_css_name (widget_class, "cowscope-graph-view");
}

static void
cowscope_graph_view_init (CowscopeGraphView *self)
{
  self->expanded = g_array_new (FALSE, FALSE, sizeof (CowscopeObjectRef));
  self->search_focus = g_array_new (FALSE, FALSE, sizeof (CowscopeObjectRef));
  self->matches = g_array_new (FALSE, FALSE, sizeof (guint));
  self->selected = -1;
  self->legend_auto = TRUE;
  gtk_widget_init_template (GTK_WIDGET (self));
  g_signal_connect (self->canvas, "node-clicked", G_CALLBACK (node_clicked_cb), self);
  g_signal_connect (self->search_entry, "search-changed", G_CALLBACK (search_changed_cb), self);
  g_signal_connect (self->search_entry, "activate", G_CALLBACK (search_activate_cb), self);
  g_signal_connect (self->size_filter, "notify::selected", G_CALLBACK (size_filter_cb), self);
  gtk_search_entry_set_key_capture_widget (self->search_entry, GTK_WIDGET (self->canvas));
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "graph.toggle-group", FALSE);
  gtk_widget_set_visible (GTK_WIDGET (self->expand_button), FALSE);
}

GtkWidget *
cowscope_graph_view_new (void)
{
  return g_object_new (COWSCOPE_TYPE_GRAPH_VIEW, NULL);
}

CowscopeViewState *
cowscope_graph_view_get_view_state (CowscopeGraphView *self)
{
  g_return_val_if_fail (COWSCOPE_IS_GRAPH_VIEW (self), NULL);
  return self->state;
}

void
cowscope_graph_view_set_view_state (CowscopeGraphView *self, CowscopeViewState *state)
{
  g_return_if_fail (COWSCOPE_IS_GRAPH_VIEW (self));
  g_return_if_fail (state == NULL || COWSCOPE_IS_VIEW_STATE (state));
  if (self->state == state)
    return;
  g_clear_object (&self->live_graph);
  self->live_pending = FALSE;
  if (self->state != NULL)
    {
      g_clear_signal_handler (&self->cursor_handler, self->state);
      g_clear_signal_handler (&self->highlights_handler, self->state);
      g_clear_object (&self->state);
    }
  g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->scene);
  self->selected = -1;
  g_array_set_size (self->expanded, 0);
  g_array_set_size (self->search_focus, 0);
  g_array_set_size (self->matches, 0);
  cowscope_graph_canvas_set_scene (self->canvas, NULL);
  gtk_stack_set_visible_child_name (self->stack, "empty");
  adw_status_page_set_title (self->empty_page, _("Laying Out the Graph…"));
  adw_status_page_set_description (self->empty_page, NULL);
  update_status (self, NULL);
  update_details (self);
  update_search_message (self);
  if (state != NULL)
    {
      self->state = g_object_ref (state);
      self->cursor_handler = g_signal_connect (state, "notify::cursor",
                                               G_CALLBACK (cursor_changed_cb), self);
      self->highlights_handler = g_signal_connect (state, "highlights-changed",
                                                   G_CALLBACK (highlights_changed_cb), self);
      request_layout (self, TRUE);
    }
  else
    set_ready (self, FALSE);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_VIEW_STATE]);
}

gboolean
cowscope_graph_view_get_ready (CowscopeGraphView *self)
{
  g_return_val_if_fail (COWSCOPE_IS_GRAPH_VIEW (self), FALSE);
  return self->ready;
}

CowscopeGraphScene *
cowscope_graph_view_get_scene (CowscopeGraphView *self)
{
  g_return_val_if_fail (COWSCOPE_IS_GRAPH_VIEW (self), NULL);
  return self->scene;
}

void
cowscope_graph_view_set_min_bytes (CowscopeGraphView *self, guint64 min_bytes)
{
  g_return_if_fail (COWSCOPE_IS_GRAPH_VIEW (self));
  if (self->min_bytes == min_bytes)
    return;
  self->min_bytes = min_bytes;
  for (guint i = 0; i < G_N_ELEMENTS (size_steps); i++)
    if (size_steps[i] == min_bytes)
      {
        g_signal_handlers_block_by_func (self->size_filter, size_filter_cb, self);
        gtk_drop_down_set_selected (self->size_filter, i);
        g_signal_handlers_unblock_by_func (self->size_filter, size_filter_cb, self);
      }
  request_layout (self, FALSE);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_MIN_BYTES]);
}

guint64
cowscope_graph_view_get_min_bytes (CowscopeGraphView *self)
{
  g_return_val_if_fail (COWSCOPE_IS_GRAPH_VIEW (self), 0);
  return self->min_bytes;
}

void
cowscope_graph_view_set_group_expanded (CowscopeGraphView *self, guint32 pid, guint64 id,
                                        gboolean expanded)
{
  g_return_if_fail (COWSCOPE_IS_GRAPH_VIEW (self));
  gint i = expanded_index (self, pid, id);
  if (expanded && i < 0)
    {
      CowscopeObjectRef r = { COWSCOPE_NODE_STORAGE, pid, id };
      g_array_append_val (self->expanded, r);
    }
  else if (!expanded && i >= 0)
    g_array_remove_index_fast (self->expanded, (guint) i);
  else
    return;
  request_layout (self, FALSE);
}

guint
cowscope_graph_view_search (CowscopeGraphView *self, const char *text)
{
  g_return_val_if_fail (COWSCOPE_IS_GRAPH_VIEW (self), 0);
  if (g_strcmp0 (gtk_editable_get_text (GTK_EDITABLE (self->search_entry)), text ? text : "") != 0)
    {
      g_signal_handlers_block_by_func (self->search_entry, search_changed_cb, self);
      gtk_editable_set_text (GTK_EDITABLE (self->search_entry), text ? text : "");
      g_signal_handlers_unblock_by_func (self->search_entry, search_changed_cb, self);
    }
  g_free (self->search);
  self->search = g_strdup (text);
  g_array_set_size (self->search_focus, 0);
  return run_search (self, TRUE);
}

guint
cowscope_graph_view_get_n_matches (CowscopeGraphView *self)
{
  g_return_val_if_fail (COWSCOPE_IS_GRAPH_VIEW (self), 0);
  return self->matches->len;
}

void
cowscope_graph_view_select_node (CowscopeGraphView *self, gint index)
{
  g_return_if_fail (COWSCOPE_IS_GRAPH_VIEW (self));
  if (self->scene == NULL || index < 0 || (guint) index >= cowscope_graph_scene_get_n_nodes (self->scene))
    index = -1;
  self->selected = index;
  update_marks (self);
  update_details (self);
}

gint
cowscope_graph_view_get_selected_node (CowscopeGraphView *self)
{
  g_return_val_if_fail (COWSCOPE_IS_GRAPH_VIEW (self), -1);
  return self->selected;
}

void
cowscope_graph_view_export_async (CowscopeGraphView *self, GFile *file,
                                  CowscopeGraphExportFormat format, GCancellable *cancellable,
                                  GAsyncReadyCallback callback, gpointer user_data)
{
  g_return_if_fail (COWSCOPE_IS_GRAPH_VIEW (self));
  GTask *task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, cowscope_graph_view_export_async);
  if (self->scene == NULL)
    {
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_NOT_INITIALIZED,
                               _("There is no graph to export yet"));
      g_object_unref (task);
      return;
    }
  self->exports++;
  gtk_progress_bar_set_fraction (self->export_progress, 0);
  gtk_widget_set_visible (GTK_WIDGET (self->export_progress), TRUE);
  cowscope_graph_export_async (self->scene, file, format, export_progress_cb, G_OBJECT (self),
                               cancellable, export_done, task);
}

gboolean
cowscope_graph_view_export_finish (CowscopeGraphView *self, GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);
  return g_task_propagate_boolean (G_TASK (result), error);
}

/**
 * cowscope_graph_view_show_graph:
 * @graph: (nullable): a graph built elsewhere (the live graph of a
 *   recording), or NULL to show nothing
 *
 * Shows @graph instead of following a view state (which is dropped).
 * Graphs that arrive faster than they are laid out are not queued: while
 * one layout runs only the newest graph waits, so a stream of graphs is
 * shown as fast as Graphviz allows and never falls behind.  The search,
 * the size filter, groups and the selection work as for a session.
 */
void
cowscope_graph_view_show_graph (CowscopeGraphView *self, CowscopeSharingGraph *graph)
{
  g_return_if_fail (COWSCOPE_IS_GRAPH_VIEW (self));
  g_return_if_fail (graph == NULL || COWSCOPE_IS_SHARING_GRAPH (graph));
  if (self->state != NULL)
    cowscope_graph_view_set_view_state (self, NULL);
  if (graph == self->live_graph)
    return;
  g_set_object (&self->live_graph, graph);
  if (graph == NULL)
    {
      g_cancellable_cancel (self->cancellable);
      self->live_pending = FALSE;
      return;
    }
  /* A layout on its way (not one cancelled with a view state just
   * dropped) shows this graph when it lands. */
  if (self->cancellable != NULL && !g_cancellable_is_cancelled (self->cancellable) && !self->ready)
    {
      self->live_pending = TRUE;
      return;
    }
  request_layout (self, TRUE);
}

/**
 * cowscope_graph_view_set_legend_visible:
 *
 * Shows or hides the legend beside the canvas; from now on the legend
 * no longer follows the view's width (see the "legend-visible" property).
 */
void
cowscope_graph_view_set_legend_visible (CowscopeGraphView *self, gboolean visible)
{
  g_return_if_fail (COWSCOPE_IS_GRAPH_VIEW (self));
  self->legend_auto = FALSE;
  apply_legend_visible (self, visible);
}

gboolean
cowscope_graph_view_get_legend_visible (CowscopeGraphView *self)
{
  g_return_val_if_fail (COWSCOPE_IS_GRAPH_VIEW (self), FALSE);
  return gtk_widget_get_visible (self->legend);
}

/* The legend widget (tests measure it against the nodes). */
GtkWidget *
cowscope_graph_view_get_legend (CowscopeGraphView *self)
{
  g_return_val_if_fail (COWSCOPE_IS_GRAPH_VIEW (self), NULL);
  return self->legend;
}

/* The canvas the scene is drawn on. */
CowscopeGraphCanvas *
cowscope_graph_view_get_canvas (CowscopeGraphView *self)
{
  g_return_val_if_fail (COWSCOPE_IS_GRAPH_VIEW (self), NULL);
  return self->canvas;
}

/* The title of the page shown instead of the canvas, or NULL while the
 * canvas is shown. */
const char *
cowscope_graph_view_get_empty_title (CowscopeGraphView *self)
{
  g_return_val_if_fail (COWSCOPE_IS_GRAPH_VIEW (self), NULL);
  return g_strcmp0 (gtk_stack_get_visible_child_name (self->stack), "empty") == 0
           ? adw_status_page_get_title (self->empty_page)
           : NULL;
}

/* The words under the toolbar when a search finds nothing, or NULL. */
const char *
cowscope_graph_view_get_search_message (CowscopeGraphView *self)
{
  g_return_val_if_fail (COWSCOPE_IS_GRAPH_VIEW (self), NULL);
  return gtk_widget_get_visible (GTK_WIDGET (self->search_message))
           ? gtk_label_get_text (self->search_message)
           : NULL;
}

/* Settings -> view: the step of the nick (none hidden for an unknown one). */
static gboolean
size_filter_get_mapping (GValue *value, GVariant *variant, gpointer user_data)
{
  const char *nick = g_variant_get_string (variant, NULL);
  g_value_set_uint64 (value, 0);
  for (guint i = 0; i < G_N_ELEMENTS (size_steps); i++)
    if (g_str_equal (nick, size_step_nicks[i]))
      g_value_set_uint64 (value, size_steps[i]);
  return TRUE;
}

/* View -> settings: the nick of the step; NULL (not stored) for a size
 * that is not one of the steps. */
static GVariant *
size_filter_set_mapping (const GValue *value, const GVariantType *expected_type,
                         gpointer user_data)
{
  for (guint i = 0; i < G_N_ELEMENTS (size_steps); i++)
    if (size_steps[i] == g_value_get_uint64 (value))
      return g_variant_new_string (size_step_nicks[i]);
  return NULL;
}

/**
 * cowscope_graph_view_bind_size_filter:
 * @settings: the application settings
 *
 * Binds the size filter to the "graph-size-filter" key both ways: the
 * view starts with the last filter chosen in any graph, and a choice in
 * its toolbar is remembered for every graph.
 */
void
cowscope_graph_view_bind_size_filter (CowscopeGraphView *self, GSettings *settings)
{
  g_return_if_fail (COWSCOPE_IS_GRAPH_VIEW (self));
  g_return_if_fail (G_IS_SETTINGS (settings));
  g_settings_bind_with_mapping (settings, "graph-size-filter", self, "min-bytes",
                                G_SETTINGS_BIND_DEFAULT, size_filter_get_mapping,
                                size_filter_set_mapping, NULL, NULL);
}
