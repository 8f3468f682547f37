/* cowscope-graph-legend.h — the sharing graph's legend, beside its canvas.
 *
 * One row per node colour and edge kind (cowscope-graph-render.h owns
 * the entries, their words and their samples), as labels a screen reader
 * can read, in a scrolled column.  The graph view docks it next to the
 * canvas rather than over it, so it never hides a node and Fit fits the
 * graph in what is left.
 */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define COWSCOPE_TYPE_GRAPH_LEGEND (cowscope_graph_legend_get_type ())
G_DECLARE_FINAL_TYPE (CowscopeGraphLegend, cowscope_graph_legend, COWSCOPE, GRAPH_LEGEND, GtkWidget)

GtkWidget *cowscope_graph_legend_new (void);

G_END_DECLS
