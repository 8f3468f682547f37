/* cowscope-graph-canvas.h — the drawing surface of the graph view.
 *
 * Draws a CowscopeGraphScene with zoom and pan: ctrl+scroll and pinch
 * zoom around the pointer, scrolling and dragging pan, a click picks a
 * node.  The scene is rendered in 512 px tiles at the current zoom, each
 * kept as a GskRenderNode until the scene, the zoom or the colour scheme
 * changes, and only tiles meeting the viewport are made or drawn; marks
 * (selection, highlights, search matches) are drawn on top each frame.
 * Nothing else is drawn over the graph: its legend sits beside it
 * (cowscope-graph-legend.h).
 */
#pragma once

#include <gtk/gtk.h>

#include "cowscope-graph-scene.h"

G_BEGIN_DECLS

#define COWSCOPE_TYPE_GRAPH_CANVAS (cowscope_graph_canvas_get_type ())
G_DECLARE_FINAL_TYPE (CowscopeGraphCanvas, cowscope_graph_canvas, COWSCOPE, GRAPH_CANVAS, GtkWidget)

GtkWidget *cowscope_graph_canvas_new (void);

/* Shows @scene (NULL: nothing).  The first scene is fitted to the view
 * (at a zoom where labels still read), and so are later scenes and sizes
 * until the user zooms or pans; from then on scenes keep the zoom and
 * the pan, so scrubbing does not jump. */
void cowscope_graph_canvas_set_scene (CowscopeGraphCanvas *self, CowscopeGraphScene *scene);
CowscopeGraphScene *cowscope_graph_canvas_get_scene (CowscopeGraphCanvas *self);

/* Per-node marks (COWSCOPE_GRAPH_MARK_*), copied; @n must be the scene's
 * node count (or 0 to clear). */
void cowscope_graph_canvas_set_marks (CowscopeGraphCanvas *self, const guint8 *marks, guint n);

double cowscope_graph_canvas_get_zoom (CowscopeGraphCanvas *self);
/* Zooms by @factor around widget point (@x, @y) (the centre when x < 0). */
void cowscope_graph_canvas_zoom_by (CowscopeGraphCanvas *self, double factor, double x, double y);
/* Fits the whole scene in the widget (zoom at most 1), however small that
 * makes it; it stays fitted through new scenes and resizes until zoomed
 * or panned. */
void cowscope_graph_canvas_zoom_to_fit (CowscopeGraphCanvas *self);
/* Pans so node @index is in the centre, zooming in to at least @min_zoom. */
void cowscope_graph_canvas_center_on (CowscopeGraphCanvas *self, guint index, double min_zoom);
/* The scene point under widget point (@x, @y). */
void cowscope_graph_canvas_to_scene (CowscopeGraphCanvas *self, double x, double y,
                                     double *sx, double *sy);
/* The widget point of scene point (@sx, @sy). */
void cowscope_graph_canvas_to_widget (CowscopeGraphCanvas *self, double sx, double sy,
                                      double *x, double *y);
/* How many tiles are cached (tests: rendering is cached). */
guint cowscope_graph_canvas_get_n_cached_tiles (CowscopeGraphCanvas *self);

G_END_DECLS
