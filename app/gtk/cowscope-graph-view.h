/* cowscope-graph-view.h — the storage sharing graph at the cursor.
 *
 * Follows a CowscopeViewState: each cursor move asks the layout thread
 * for the graph at that instant (cancelling the previous request, so
 * only the newest cursor is laid out), and shows the result when it
 * arrives; the main loop never waits for the model or Graphviz.  A
 * toolbar offers search by name (saying so when nothing matches), a
 * "hide smaller than" filter, zoom, export as SVG or PNG and the legend
 * (docked beside the canvas, never over it); clicking a node shows its
 * details, and a group
 * ("×N tensors") can be expanded.  The view state's highlights are
 * outlined.
 */
#pragma once

#include <gtk/gtk.h>

#include "cowscope-graph-canvas.h"
#include "cowscope-graph-render.h"
#include "cowscope-graph-scene.h"
#include "cowscope-view-state.h"

G_BEGIN_DECLS

#define COWSCOPE_TYPE_GRAPH_VIEW (cowscope_graph_view_get_type ())
G_DECLARE_FINAL_TYPE (CowscopeGraphView, cowscope_graph_view, COWSCOPE, GRAPH_VIEW, GtkWidget)

GtkWidget *cowscope_graph_view_new (void);

CowscopeViewState *cowscope_graph_view_get_view_state (CowscopeGraphView *self);
/* Follows @state (NULL: none); starts laying out its cursor's graph. */
void cowscope_graph_view_set_view_state (CowscopeGraphView *self, CowscopeViewState *state);

/* Shows @graph (NULL: nothing) instead of a view state's graph at its
 * cursor: for the live graph of a recording.  Only the newest graph
 * waits while a layout runs. */
void cowscope_graph_view_show_graph (CowscopeGraphView *self, CowscopeSharingGraph *graph);

/* TRUE once the newest request has been laid out and shown (or failed);
 * FALSE from the moment a new one is made.  Never becomes TRUE inside the
 * call that made the request: only the main loop delivers the result. */
gboolean cowscope_graph_view_get_ready (CowscopeGraphView *self);
/* The scene shown, or NULL. */
CowscopeGraphScene *cowscope_graph_view_get_scene (CowscopeGraphView *self);

/* Hides objects smaller than @min_bytes (0: none) and lays out again
 * (without rebuilding the graph). */
void cowscope_graph_view_set_min_bytes (CowscopeGraphView *self, guint64 min_bytes);
guint64 cowscope_graph_view_get_min_bytes (CowscopeGraphView *self);
/* Keeps the size filter in the settings' "graph-size-filter" key, both
 * ways, so that every graph starts with the last one chosen. */
void cowscope_graph_view_bind_size_filter (CowscopeGraphView *self, GSettings *settings);

/* Shows (or again groups) the individual views of storage (@pid, @id). */
void cowscope_graph_view_set_group_expanded (CowscopeGraphView *self, guint32 pid, guint64 id,
                                             gboolean expanded);

/* Finds objects whose name contains @text (case-insensitive), marks them
 * and centres the first; returns how many the scene shows now.  A name
 * only in an aggregated part of the graph triggers a layout that keeps it,
 * and the search runs again when that layout is shown. */
guint cowscope_graph_view_search (CowscopeGraphView *self, const char *text);
guint cowscope_graph_view_get_n_matches (CowscopeGraphView *self);

/* Selects scene node @index (-1: none) and shows its details. */
void cowscope_graph_view_select_node (CowscopeGraphView *self, gint index);
gint cowscope_graph_view_get_selected_node (CowscopeGraphView *self);

/* The legend beside the canvas (see the "legend-visible" property): a
 * call is the user's choice, after which the width no longer decides. */
void cowscope_graph_view_set_legend_visible (CowscopeGraphView *self, gboolean visible);
gboolean cowscope_graph_view_get_legend_visible (CowscopeGraphView *self);
GtkWidget *cowscope_graph_view_get_legend (CowscopeGraphView *self);
CowscopeGraphCanvas *cowscope_graph_view_get_canvas (CowscopeGraphView *self);

/* The title of what is shown instead of the canvas (laying out, an
 * error, nothing alive, everything filtered out), or NULL. */
const char *cowscope_graph_view_get_empty_title (CowscopeGraphView *self);

/* What the view says under its toolbar when a search found no tensor at
 * this instant, or NULL when it says nothing. */
const char *cowscope_graph_view_get_search_message (CowscopeGraphView *self);

/* Exports the scene shown to @file (a GTask thread; progress in the view). */
void cowscope_graph_view_export_async (CowscopeGraphView *self, GFile *file,
                                       CowscopeGraphExportFormat format,
                                       GCancellable *cancellable, GAsyncReadyCallback callback,
                                       gpointer user_data);
gboolean cowscope_graph_view_export_finish (CowscopeGraphView *self, GAsyncResult *result,
                                            GError **error);

G_END_DECLS
