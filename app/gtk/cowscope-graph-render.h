/* cowscope-graph-render.h — drawing a laid-out sharing graph with cairo.
 *
 * One drawing routine serves the on-screen tiles of the graph view and
 * the SVG and PNG export, so what is exported is what is shown.  Colours
 * follow the GNOME palette, with a light and a dark set: shared bytes are
 * blue, materialized (copied) ones orange, bytes a storage stole (took
 * over without a copy) green, owned ones neutral, objects freed soon
 * purple with a dashed outline.  Node shapes say the kind:
 * tensors are pills, storages rounded boxes, contexts hexagons and
 * allocations square boxes; a group looks like a stack of cards.
 * Everything here is thread-safe (no GTK): export runs in a GTask thread.
 */
#pragma once

#include <cairo.h>
#include <gio/gio.h>

#include "cowscope-graph-scene.h"

G_BEGIN_DECLS

/* Per-node marks drawn by cowscope_graph_render_marks(). */
enum {
  COWSCOPE_GRAPH_MARK_HIGHLIGHT = 1 << 0, /* an explanation's object */
  COWSCOPE_GRAPH_MARK_SELECTED = 1 << 1,
  COWSCOPE_GRAPH_MARK_MATCH = 1 << 2,     /* matches the search */
};

/* The filled shapes an export adds besides the nodes (the background and
 * the legend's swatches); a group node fills 3 shapes, any other node 1. */
#define COWSCOPE_GRAPH_LEGEND_N_FILLS 7
#define COWSCOPE_GRAPH_EXPORT_EXTRA_FILLS (1 + COWSCOPE_GRAPH_LEGEND_N_FILLS)

typedef enum {
  COWSCOPE_GRAPH_EXPORT_SVG,
  COWSCOPE_GRAPH_EXPORT_PNG,
} CowscopeGraphExportFormat;

/* Draws the nodes and edges of @scene that meet @clip (scene units; NULL:
 * all) onto @cr, whose user space is scene units.  Labels are left out
 * when @zoom makes them smaller than 5 px. */
void cowscope_graph_render_scene (CowscopeGraphScene *scene, cairo_t *cr,
                                  const cairo_rectangle_t *clip, double zoom, gboolean dark);

/* Draws the outlines of marked nodes (@marks[i] for node i; NULL draws
 * nothing) that meet @clip. */
void cowscope_graph_render_marks (CowscopeGraphScene *scene, cairo_t *cr,
                                  const cairo_rectangle_t *clip, const guint8 *marks,
                                  gboolean dark);

/* The legend's entries: the node colours (states), then the edge kinds.
 * The graph view lists them beside the canvas; an export draws them all
 * with cowscope_graph_render_legend(). */
guint cowscope_graph_legend_get_n_entries (void);
gboolean cowscope_graph_legend_entry_is_edge (guint entry);
/* The entry's words for people (translated). */
const char *cowscope_graph_legend_get_entry_name (guint entry);
/* Draws entry @entry's sample (a filled shape or an edge with its arrow)
 * in the box (@x, @y, @width, @height). */
void cowscope_graph_render_legend_swatch (cairo_t *cr, guint entry, double x, double y,
                                          double width, double height, gboolean dark);

/* Draws the legend with its top-left corner at (@x, @y); returns its size
 * through @width and @height (either may be NULL).  With @cr NULL only
 * measures. */
void cowscope_graph_render_legend (cairo_t *cr, double x, double y, gboolean dark,
                                   double *width, double *height);

/* The pixel size of an export of @scene (legend above the graph), scaled
 * down by @scale (<= 1) when a side would exceed 16,384 px or the
 * image 40 million pixels. */
void cowscope_graph_export_size (CowscopeGraphScene *scene, int *width, int *height,
                                 double *scale);

/* Called in the caller's main context with the fraction done. */
typedef void (*CowscopeGraphExportProgress) (double fraction, gpointer user_data);

/* Writes @scene to @file as SVG or PNG in a GTask thread (light colours).
 * @progress (may be NULL) gets @progress_object, which each pending report
 * keeps alive; it and @callback run in the caller's thread-default main
 * context. */
void cowscope_graph_export_async (CowscopeGraphScene *scene, GFile *file,
                                  CowscopeGraphExportFormat format,
                                  CowscopeGraphExportProgress progress,
                                  GObject *progress_object, GCancellable *cancellable, GAsyncReadyCallback callback,
                                  gpointer user_data);
gboolean cowscope_graph_export_finish (GAsyncResult *result, GError **error);

G_END_DECLS
