/* test-graph.c — the storage sharing graph view, the copy explanation
 * panel and the tables under a virtual display, on generated sessions:
 * node and edge counts against the model and the session's own tables,
 * layout off the main thread, search, the size filter, grouping, export
 * re-read, explanations, table sorting and selection, and a screenshot.
 */
#include <adwaita.h>
#include <glib/gstdio.h>
#include <math.h>
#include <sqlite3.h>
#include <string.h>

#include "gui-test-support.h"
#include "cowscope-event-item.h"
#include "cowscope-event-list.h"
#include "cowscope-graph-layout.h"
#include "cowscope-graph-render.h"
#include "cowscope-explanation-panel.h"
#include "cowscope-graph-view.h"
#include "cowscope-object-item.h"
#include "cowscope-tables-view.h"
#include "cowscope-warning-item.h"
#include "cowscope-warning-list.h"
#include "cowscope-window.h"
#include "cowscope-sharing-graph-private.h"
#include "cowscope-view-state.h"
#include "session-fixture.h"

static char *fixture_path;
static SessionFixtureInfo info;
static CowscopeSessionDocument *doc;

/* A path in the test's scratch folder. */
static char *
scratch (const char *name)
{
  const char *dir = g_getenv ("COWSCOPE_SCREENSHOT_DIR");
  g_autofree char *base = g_strdup_printf ("test-graph-%d-%s", (int) getpid (), name);
  return g_build_filename (dir ? dir : g_get_tmp_dir (), base, NULL);
}



static gboolean
view_ready (gpointer data)
{
  return cowscope_graph_view_get_ready (data);
}

/* The time of event @seq. */
static gint64
ts_of (gint64 seq)
{
  g_autoptr (CowscopeEventList) list = cowscope_event_list_new (doc);
  gint64 pos = cowscope_event_list_position_of (list, seq);
  g_assert_cmpint (pos, >=, 0);
  g_autoptr (CowscopeEventItem) item = g_list_model_get_item (G_LIST_MODEL (list), (guint) pos);
  return cowscope_event_item_get_ts (item);
}

/* Live objects of @table at time @t, counted by SQL on the file. */
static gint64
sql_live (const char *table, gint64 t)
{
  sqlite3 *db = NULL;
  g_assert_cmpint (sqlite3_open_v2 (fixture_path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  g_autofree char *sql = g_strdup_printf (
    "SELECT count(*) FROM %s WHERE new_ts <= ?1 AND (free_ts IS NULL OR free_ts > ?1)", table);
  sqlite3_stmt *stmt = NULL;
  g_assert_cmpint (sqlite3_prepare_v2 (db, sql, -1, &stmt, NULL), ==, SQLITE_OK);
  sqlite3_bind_int64 (stmt, 1, t);
  g_assert_cmpint (sqlite3_step (stmt), ==, SQLITE_ROW);
  gint64 n = sqlite3_column_int64 (stmt, 0);
  sqlite3_finalize (stmt);
  sqlite3_close (db);
  return n;
}

/* One integer from @sql (with ?1 = @arg) on the fixture. */
static gint64
sql_int (const char *sql, gint64 arg)
{
  sqlite3 *db = NULL;
  g_assert_cmpint (sqlite3_open_v2 (fixture_path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  sqlite3_stmt *stmt = NULL;
  g_assert_cmpint (sqlite3_prepare_v2 (db, sql, -1, &stmt, NULL), ==, SQLITE_OK);
  sqlite3_bind_int64 (stmt, 1, arg);
  g_assert_cmpint (sqlite3_step (stmt), ==, SQLITE_ROW);
  gint64 n = sqlite3_column_int64 (stmt, 0);
  sqlite3_finalize (stmt);
  sqlite3_close (db);
  return n;
}

typedef struct {
  GtkWindow *window;
  CowscopeGraphView *view;
  CowscopeViewState *state;
} Fixture;

/* A window holding a graph view that follows a fresh view state. */
static void
fixture_set_up (Fixture *f, gconstpointer data)
{
  f->state = cowscope_view_state_new (doc);
  f->window = GTK_WINDOW (gtk_window_new ());
  gtk_window_set_default_size (f->window, 1000, 700);
  f->view = COWSCOPE_GRAPH_VIEW (cowscope_graph_view_new ());
  gtk_window_set_child (f->window, GTK_WIDGET (f->view));
  gtk_window_present (f->window);
}

static void
fixture_tear_down (Fixture *f, gconstpointer data)
{
  gtk_window_destroy (f->window);
  gui_test_spin (20);
  g_clear_object (&f->state);
}

/* Moves the cursor to @t and waits for the graph; checks it is never
 * ready synchronously. */
static CowscopeGraphScene *
show_at (Fixture *f, gint64 t)
{
  if (cowscope_graph_view_get_view_state (f->view) == NULL)
    {
      cowscope_view_state_set_cursor (f->state, t);
      cowscope_graph_view_set_view_state (f->view, f->state);
    }
  else
    cowscope_view_state_set_cursor (f->state, t);
  g_assert_false (cowscope_graph_view_get_ready (f->view));
  g_assert_true (gui_test_wait_until (view_ready, f->view, 30));
  CowscopeGraphScene *scene = cowscope_graph_view_get_scene (f->view);
  g_assert_nonnull (scene);
  return scene;
}

/* The scene at @t shows exactly the model's graph at @t, whose per-kind
 * counts are the session's live objects at @t. */
static CowscopeGraphScene *
check_counts_at (Fixture *f, gint64 t)
{
  CowscopeGraphScene *scene = show_at (f, t);
  CowscopeSharingGraph *graph = cowscope_graph_scene_get_graph (scene);
  const CowscopeSceneStats *st = cowscope_graph_scene_get_stats (scene);
  g_assert_cmpint (cowscope_sharing_graph_get_seq (graph), ==,
                   cowscope_session_document_seq_at_time (doc, t, NULL));
  g_assert_cmpuint (st->n_groups + st->n_filtered + st->n_aggregated, ==, 0);
  g_assert_cmpuint (cowscope_graph_scene_get_n_nodes (scene), ==, cowscope_sharing_graph_get_n_nodes (graph));
  g_assert_cmpuint (cowscope_graph_scene_get_n_edges (scene), ==, cowscope_sharing_graph_get_n_edges (graph));
  g_assert_cmpint (cowscope_sharing_graph_count_nodes (graph, COWSCOPE_NODE_TENSOR), ==, sql_live ("tensors", t));
  g_assert_cmpint (cowscope_sharing_graph_count_nodes (graph, COWSCOPE_NODE_STORAGE), ==, sql_live ("storages", t));
  g_assert_cmpint (cowscope_sharing_graph_count_nodes (graph, COWSCOPE_NODE_ALLOCATION), ==, sql_live ("allocations", t));
  g_assert_cmpint (cowscope_sharing_graph_count_nodes (graph, COWSCOPE_NODE_CONTEXT), ==, sql_live ("contexts", t));
  /* Every node has a place and a size inside the scene. */
  for (guint i = 0; i < cowscope_graph_scene_get_n_nodes (scene); i++)
    {
      const CowscopeSceneNode *n = cowscope_graph_scene_get_node (scene, i);
      g_assert_cmpfloat (n->width, >, 10);
      g_assert_cmpfloat (n->x, >=, 0);
      g_assert_cmpfloat (n->x + n->width, <=, cowscope_graph_scene_get_width (scene) + 1);
    }
  return scene;
}

/* Counts scene edges of @kind from the scene node showing @storage. */
static guint
edges_from (CowscopeGraphScene *scene, guint32 pid, guint64 storage, CowscopeEdgeKind kind)
{
  gint from = cowscope_graph_scene_find_object (scene, COWSCOPE_NODE_STORAGE, pid, storage);
  guint n = 0;
  for (guint i = 0; i < cowscope_graph_scene_get_n_edges (scene); i++)
    {
      const CowscopeSceneEdge *e = cowscope_graph_scene_get_edge (scene, i);
      if ((gint) e->from == from && e->kind == kind)
        n++;
    }
  return n;
}

static void
test_counts_around_copy (Fixture *f, gconstpointer data)
{
  gint64 clone_ts = ts_of (info.copy_lazy_clone_seq);
  g_autoptr (CowscopeCopyExplanation) ex = cowscope_copy_explanation_new (doc, info.copy_seq, NULL);
  g_assert_nonnull (ex);
  gint64 end_ts = cowscope_copy_explanation_get_end_ns (ex);
  guint32 pid = cowscope_copy_explanation_get_pid (ex);
  guint64 storage = info.copy_storage_id;

  /* Before the lazy clone (its events start with the new storage): the
   * clone's storage does not exist yet. */
  gint64 born = sql_int ("SELECT min(new_ts) FROM storages WHERE id = ?1", (gint64) storage);
  g_assert_cmpint (born, <=, clone_ts);
  CowscopeGraphScene *scene = check_counts_at (f, born - 1);
  g_assert_cmpint (cowscope_graph_scene_find_object (scene, COWSCOPE_NODE_STORAGE, pid, storage), <, 0);

  /* After it: shared, a lazy copy of its context. */
  scene = check_counts_at (f, clone_ts);
  gint k = cowscope_graph_scene_find_object (scene, COWSCOPE_NODE_STORAGE, pid, storage);
  g_assert_cmpint (k, >=, 0);
  g_assert_cmpint (cowscope_graph_scene_get_node (scene, (guint) k)->state, ==, COWSCOPE_NODE_STATE_SHARED);
  g_assert_cmpuint (edges_from (scene, pid, storage, COWSCOPE_EDGE_LAZY_COPY_OF), >=, 1);

  /* After the materialization: it owns a copy. */
  scene = check_counts_at (f, end_ts);
  k = cowscope_graph_scene_find_object (scene, COWSCOPE_NODE_STORAGE, pid, storage);
  g_assert_cmpint (k, >=, 0);
  g_assert_cmpint (cowscope_graph_scene_get_node (scene, (guint) k)->state, ==, COWSCOPE_NODE_STATE_MATERIALIZED);
  g_assert_cmpuint (edges_from (scene, pid, storage, COWSCOPE_EDGE_LAZY_COPY_OF), ==, 0);
  g_assert_cmpuint (edges_from (scene, pid, storage, COWSCOPE_EDGE_MATERIALIZED_FROM), >=, 1);
}

static void
test_layout_off_main_thread (Fixture *f, gconstpointer data)
{
  gint64 t = (info.start_ns + info.end_ns) / 2;
  show_at (f, t);
  g_assert_false (cowscope_graph_layout_is_layout_thread ());
  /* Scrub: three moves without iterating; only the main loop delivers. */
  cowscope_view_state_set_cursor (f->state, t + 1000);
  cowscope_view_state_set_cursor (f->state, t + 2000);
  cowscope_view_state_set_cursor (f->state, t + 3000);
  g_usleep (300 * 1000);
  g_assert_false (cowscope_graph_view_get_ready (f->view));
  g_assert_true (gui_test_wait_until (view_ready, f->view, 30));
  CowscopeGraphScene *scene = cowscope_graph_view_get_scene (f->view);
  g_assert_cmpint (cowscope_sharing_graph_get_seq (cowscope_graph_scene_get_graph (scene)), ==,
                   cowscope_session_document_seq_at_time (doc, t + 3000, NULL));
  /* Drawing is cached: a second frame makes no new tiles. */
  gui_test_spin (100);
}

static void
test_search (Fixture *f, gconstpointer data)
{
  CowscopeGraphScene *scene = show_at (f, info.end_ns);
  CowscopeSharingGraph *graph = cowscope_graph_scene_get_graph (scene);
  const char *name = NULL;
  for (guint i = 0; i < cowscope_sharing_graph_get_n_nodes (graph) && name == NULL; i++)
    name = cowscope_sharing_graph_get_node (graph, i)->label;
  g_assert_nonnull (name);
  g_autofree char *wanted = g_strdup (name);
  guint n = cowscope_graph_view_search (f->view, wanted);
  if (n == 0)
    {
      g_assert_true (gui_test_wait_until (view_ready, f->view, 30));
      n = cowscope_graph_view_get_n_matches (f->view);
    }
  g_assert_cmpuint (n, >=, 1);
  g_assert_cmpuint (cowscope_graph_view_search (f->view, "no-such-tensor-name"), ==, 0);
}

static void
test_size_filter (Fixture *f, gconstpointer data)
{
  CowscopeGraphScene *scene = show_at (f, info.end_ns);
  guint all = cowscope_graph_scene_get_n_nodes (scene);
  cowscope_graph_view_set_min_bytes (f->view, 64 * 1024);
  g_assert_false (cowscope_graph_view_get_ready (f->view));
  g_assert_true (gui_test_wait_until (view_ready, f->view, 30));
  scene = cowscope_graph_view_get_scene (f->view);
  const CowscopeSceneStats *st = cowscope_graph_scene_get_stats (scene);
  g_assert_cmpuint (st->n_filtered, >, 0);
  g_assert_cmpuint (cowscope_graph_scene_get_n_nodes (scene), ==, all - st->n_filtered);
  for (guint i = 0; i < cowscope_graph_scene_get_n_nodes (scene); i++)
    g_assert_cmpuint (cowscope_graph_scene_get_node (scene, i)->nbytes, >=, 64 * 1024);
  /* The model's graph was not rebuilt for a filter. */
  g_assert_cmpfloat (st->build_ms, ==, 0);
}

/* A graph with one allocation, one storage and @n tensors viewing it,
 * plus @n_alone unrelated owned storages. */
static CowscopeSharingGraph *
synthetic_graph (guint n, guint n_alone)
{
  GArray *nodes = g_array_new (FALSE, TRUE, sizeof (CowscopeGraphNode));
  GArray *edges = g_array_new (FALSE, TRUE, sizeof (CowscopeGraphEdge));
  GStringChunk *labels = g_string_chunk_new (1024);
  CowscopeGraphNode a = { .pid = 1, .kind = COWSCOPE_NODE_ALLOCATION, .id = 1, .nbytes = 1 << 20, .free_ts = -1 };
  CowscopeGraphNode s = { .pid = 1, .kind = COWSCOPE_NODE_STORAGE, .id = 2, .nbytes = 1 << 20,
                          .allocation_id = 1, .free_ts = -1 };
  g_array_append_val (nodes, a);
  g_array_append_val (nodes, s);
  for (guint i = 0; i < n; i++)
    {
      g_autofree char *name = g_strdup_printf ("view%u", i);
      CowscopeGraphNode t = { .pid = 1, .kind = COWSCOPE_NODE_TENSOR, .id = 100 + i, .nbytes = 4096,
                              .storage_id = 2, .free_ts = -1,
                              .label = g_string_chunk_insert (labels, name) };
      g_array_append_val (nodes, t);
      CowscopeGraphEdge e = { 2 + i, 1, COWSCOPE_EDGE_VIEW_OF };
      g_array_append_val (edges, e);
    }
  CowscopeGraphEdge owns = { 1, 0, COWSCOPE_EDGE_OWNS };
  g_array_append_val (edges, owns);
  for (guint i = 0; i < n_alone; i++)
    {
      CowscopeGraphNode x = { .pid = 1, .kind = COWSCOPE_NODE_STORAGE, .id = 1000000 + i,
                              .nbytes = 1024, .free_ts = -1 };
      g_array_append_val (nodes, x);
    }
  return cowscope_sharing_graph_new_take (nodes, edges, labels, 1, 1, -1, 0);
}

static void
test_group_collapses (void)
{
  g_autoptr (CowscopeSharingGraph) graph = synthetic_graph (60, 0);
  g_autoptr (GError) error = NULL;
  CowscopeGraphLayoutOptions options = { 0 };
  g_autoptr (CowscopeGraphScene) scene = cowscope_graph_layout_sync (graph, &options, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (cowscope_graph_scene_get_n_nodes (scene), ==, 3);
  g_assert_cmpuint (cowscope_graph_scene_get_n_edges (scene), ==, 2);
  guint groups = 0;
  for (guint i = 0; i < 3; i++)
    {
      const CowscopeSceneNode *n = cowscope_graph_scene_get_node (scene, i);
      if (n->type == COWSCOPE_SCENE_NODE_GROUP)
        {
          groups++;
          g_assert_cmpuint (n->n_members, ==, 60);
          g_assert_nonnull (strstr (n->label, "60"));
        }
    }
  g_assert_cmpuint (groups, ==, 1);
  /* A grouped tensor is found through its group. */
  g_assert_cmpint (cowscope_graph_scene_find_object (scene, COWSCOPE_NODE_TENSOR, 1, 130), >=, 0);

  /* Expanded: every view on its own. */
  CowscopeObjectRef storage = { COWSCOPE_NODE_STORAGE, 1, 2 };
  options.expanded = &storage;
  options.n_expanded = 1;
  g_autoptr (CowscopeGraphScene) open = cowscope_graph_layout_sync (graph, &options, &error);
  g_assert_cmpuint (cowscope_graph_scene_get_n_nodes (open), ==, 62);
  g_assert_cmpuint (cowscope_graph_scene_get_n_edges (open), ==, 61);

  /* 50 views stay apart. */
  g_autoptr (CowscopeSharingGraph) fifty = synthetic_graph (50, 0);
  options.n_expanded = 0;
  g_autoptr (CowscopeGraphScene) s50 = cowscope_graph_layout_sync (fifty, &options, &error);
  g_assert_cmpuint (cowscope_graph_scene_get_n_nodes (s50), ==, 52);
}

static void
test_aggregation_budget (void)
{
  g_autoptr (CowscopeSharingGraph) graph = synthetic_graph (10, 6000);
  g_autoptr (GError) error = NULL;
  CowscopeGraphLayoutOptions options = { .max_nodes = 500 };
  g_autoptr (CowscopeGraphScene) scene = cowscope_graph_layout_sync (graph, &options, &error);
  g_assert_no_error (error);
  const CowscopeSceneStats *st = cowscope_graph_scene_get_stats (scene);
  g_assert_cmpuint (cowscope_graph_scene_get_n_nodes (scene), <=, 500);
  g_assert_cmpuint (st->n_aggregated, >, 0);
  /* Everything is accounted for: drawn objects plus aggregated ones. */
  guint drawn = 0, overflow = 0;
  for (guint i = 0; i < cowscope_graph_scene_get_n_nodes (scene); i++)
    {
      const CowscopeSceneNode *n = cowscope_graph_scene_get_node (scene, i);
      if (n->type == COWSCOPE_SCENE_NODE_OVERFLOW)
        overflow += n->n_members;
      else
        drawn += n->n_members;
    }
  g_assert_cmpuint (overflow, ==, st->n_aggregated);
  g_assert_cmpuint (drawn + overflow, ==, 6012);
  /* The component with the views (the most bytes) is kept. */
  g_assert_cmpint (cowscope_graph_scene_find_object (scene, COWSCOPE_NODE_STORAGE, 1, 2), >=, 0);
}

typedef struct {
  gboolean done;
  gboolean ok;
  GError *error;
} ExportWait;

static void
export_cb (GObject *source, GAsyncResult *result, gpointer data)
{
  ExportWait *w = data;
  w->ok = cowscope_graph_view_export_finish (COWSCOPE_GRAPH_VIEW (source), result, &w->error);
  w->done = TRUE;
}

static gboolean
export_done (gpointer data)
{
  return ((ExportWait *) data)->done;
}

typedef struct {
  guint filled;
  guint elements;
} SvgCount;

/* Counts filled paths (node shapes, legend swatches, background). */
static void
svg_start (GMarkupParseContext *context, const char *element, const char **names,
           const char **values, gpointer data, GError **error)
{
  SvgCount *c = data;
  c->elements++;
  if (!g_str_equal (element, "path") && !g_str_equal (element, "rect"))
    return;
  /* Glyph outlines live in <symbol>s; only shapes drawn in place count. */
  const GSList *stack = g_markup_parse_context_get_element_stack (context);
  for (const GSList *l = stack; l != NULL; l = l->next)
    if (g_str_equal (l->data, "symbol"))
      return;
  for (guint i = 0; names[i] != NULL; i++)
    if (g_str_equal (names[i], "style") && strstr (values[i], "fill:rgb") != NULL)
      c->filled++;
}

static void
export_and_check (Fixture *f, CowscopeGraphExportFormat format, const char *name)
{
  CowscopeGraphScene *scene = cowscope_graph_view_get_scene (f->view);
  g_autofree char *path = scratch (name);
  g_autoptr (GFile) file = g_file_new_for_path (path);
  ExportWait w = { 0 };
  cowscope_graph_view_export_async (f->view, file, format, NULL, export_cb, &w);
  g_assert_false (w.done);
  g_assert_true (gui_test_wait_until (export_done, &w, 30));
  g_assert_no_error (w.error);
  g_assert_true (w.ok);
  int width, height;
  cowscope_graph_export_size (scene, &width, &height, NULL);
  if (format == COWSCOPE_GRAPH_EXPORT_PNG)
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (GdkTexture) texture = gdk_texture_new_from_filename (path, &error);
      g_assert_no_error (error);
      g_assert_cmpint (gdk_texture_get_width (texture), ==, width);
      g_assert_cmpint (gdk_texture_get_height (texture), ==, height);
    }
  else
    {
      g_autofree char *text = NULL;
      gsize len;
      g_assert_true (g_file_get_contents (path, &text, &len, NULL));
      SvgCount count = { 0 };
      GMarkupParser parser = { .start_element = svg_start };
      g_autoptr (GMarkupParseContext) ctx = g_markup_parse_context_new (&parser, 0, &count, NULL);
      g_autoptr (GError) error = NULL;
      g_assert_true (g_markup_parse_context_parse (ctx, text, (gssize) len, &error));
      g_assert_true (g_markup_parse_context_end_parse (ctx, &error));
      /* Process boxes and cross-process edge labels are filled too. */
      guint expected = COWSCOPE_GRAPH_EXPORT_EXTRA_FILLS + cowscope_graph_scene_get_n_clusters (scene)
                       + cowscope_graph_scene_count_cross_process_edges (scene);
      for (guint i = 0; i < cowscope_graph_scene_get_n_nodes (scene); i++)
        expected += cowscope_graph_scene_get_node (scene, i)->type == COWSCOPE_SCENE_NODE_GROUP ? 3 : 1;
      g_assert_cmpuint (count.filled, ==, expected);
    }
  g_unlink (path);
}

static void
test_export (Fixture *f, gconstpointer data)
{
  show_at (f, info.end_ns);
  export_and_check (f, COWSCOPE_GRAPH_EXPORT_SVG, "graph.svg");
  export_and_check (f, COWSCOPE_GRAPH_EXPORT_PNG, "graph.png");
}

static gboolean
panel_ready (gpointer data)
{
  return cowscope_explanation_panel_get_ready (data) &&
         cowscope_explanation_panel_get_explanation (data) != NULL;
}

static void
test_explanation (void)
{
  g_autoptr (CowscopeViewState) state = cowscope_view_state_new (doc);
  GtkWindow *window = GTK_WINDOW (gtk_window_new ());
  CowscopeExplanationPanel *panel = COWSCOPE_EXPLANATION_PANEL (cowscope_explanation_panel_new ());
  gtk_window_set_child (window, GTK_WIDGET (panel));
  gtk_window_present (window);
  cowscope_explanation_panel_set_view_state (panel, state);
  cowscope_view_state_set_selected_seq (state, info.copy_seq);
  g_assert_false (cowscope_explanation_panel_get_ready (panel));
  g_assert_true (gui_test_wait_until (panel_ready, panel, 30));
  CowscopeCopyExplanation *ex = cowscope_explanation_panel_get_explanation (panel);
  g_autofree char *text = cowscope_explanation_panel_dup_text (panel);
  g_test_message ("%s", text);
  /* The lazy clone's op and the bytes copied are told. */
  g_autofree char *clone = g_strdup_printf ("Lazy clone by %s()", cowscope_copy_explanation_get_lazy_clone_op (ex));
  g_assert_nonnull (strstr (text, clone));
  g_autofree char *size = g_format_size (info.copy_nbytes);
  g_autofree char *copied = g_strdup_printf ("Copied %s", size);
  g_assert_nonnull (strstr (text, copied));
  g_assert_nonnull (strstr (text, "CUDA memcpy"));
  /* Its objects are highlighted and the cursor shows the copy's end. */
  guint n;
  cowscope_view_state_get_highlights (state, &n);
  g_assert_cmpuint (n, >, 0);
  g_assert_true (cowscope_view_state_is_highlighted (state, cowscope_copy_explanation_get_pid (ex),
                                                     info.copy_storage_id));
  g_assert_cmpint (cowscope_view_state_get_cursor (state), ==, cowscope_copy_explanation_get_end_ns (ex));

  /* A steal says so. */
  cowscope_view_state_set_selected_seq (state, info.steal_seq);
  g_assert_true (gui_test_wait_until (panel_ready, panel, 30));
  g_free (text);
  text = cowscope_explanation_panel_dup_text (panel);
  g_assert_nonnull (strstr (text, "Stole the bytes"));

  /* Objects highlighted while an explanation loads (an objects table
   * row, say) are a newer choice than the selection it explains: they
   * stay when it arrives.  The highlight is set before the main loop
   * runs again, so always before the explanation's completion. */
  const CowscopeObjectRef *stolen =
    cowscope_copy_explanation_get_highlights (cowscope_explanation_panel_get_explanation (panel), &n);
  g_assert_cmpuint (n, >, 0);
  CowscopeObjectRef chosen = stolen[0];
  cowscope_view_state_set_selected_seq (state, info.copy_seq);
  cowscope_view_state_set_highlights (state, &chosen, 1);
  g_assert_false (cowscope_explanation_panel_get_ready (panel));
  g_assert_true (gui_test_wait_until (panel_ready, panel, 30));
  g_assert_cmpint (cowscope_copy_explanation_get_seq (cowscope_explanation_panel_get_explanation (panel)),
                   ==, info.copy_seq);
  const CowscopeObjectRef *shown = cowscope_view_state_get_highlights (state, &n);
  g_assert_cmpuint (n, ==, 1);
  g_assert_true (shown[0].kind == chosen.kind && shown[0].pid == chosen.pid && shown[0].id == chosen.id);
  gtk_window_destroy (window);
}

static gboolean
table_ready (gpointer data)
{
  return cowscope_tables_view_get_ready (data);
}

static void
test_tables (void)
{
  g_autoptr (CowscopeViewState) state = cowscope_view_state_new (doc);
  GtkWindow *window = GTK_WINDOW (gtk_window_new ());
  gtk_window_set_default_size (window, 900, 600);
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 0);
  CowscopeTablesView *events = COWSCOPE_TABLES_VIEW (cowscope_tables_view_new (COWSCOPE_TABLES_EVENTS));
  CowscopeTablesView *objects = COWSCOPE_TABLES_VIEW (cowscope_tables_view_new (COWSCOPE_TABLES_OBJECTS));
  CowscopeTablesView *warnings = COWSCOPE_TABLES_VIEW (cowscope_tables_view_new (COWSCOPE_TABLES_WARNINGS));
  gtk_box_append (GTK_BOX (box), GTK_WIDGET (events));
  gtk_box_append (GTK_BOX (box), GTK_WIDGET (objects));
  gtk_box_append (GTK_BOX (box), GTK_WIDGET (warnings));
  gtk_window_set_child (window, box);
  gtk_window_present (window);
  cowscope_tables_view_set_view_state (events, state);
  cowscope_tables_view_set_view_state (objects, state);
  cowscope_tables_view_set_view_state (warnings, state);
  g_assert_false (cowscope_tables_view_get_ready (objects));
  g_assert_true (gui_test_wait_until (table_ready, events, 30));
  g_assert_true (gui_test_wait_until (table_ready, objects, 30));
  g_assert_true (gui_test_wait_until (table_ready, warnings, 30));

  /* Row counts are the session's. */
  g_assert_cmpuint (g_list_model_get_n_items (cowscope_tables_view_get_rows (events)), ==, info.n_events);
  gint64 all_objects = sql_int ("SELECT (SELECT count(*) FROM allocations) + (SELECT count(*) FROM contexts)"
                                " + (SELECT count(*) FROM storages) + (SELECT count(*) FROM tensors) + ?1", 0);
  g_assert_cmpint (g_list_model_get_n_items (cowscope_tables_view_get_rows (objects)), ==, all_objects);
  g_autoptr (CowscopeWarningList) wl = cowscope_warning_list_new (doc, NULL);
  g_assert_cmpuint (g_list_model_get_n_items (cowscope_tables_view_get_rows (warnings)), ==,
                    g_list_model_get_n_items (G_LIST_MODEL (wl)));
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (wl)), >=, 1);

  /* Sorting by bytes orders the rows, both ways. */
  GListModel *rows = cowscope_tables_view_get_rows (objects);
  for (int pass = 0; pass < 2; pass++)
    {
      cowscope_tables_view_sort_by (objects, "bytes", pass ? GTK_SORT_DESCENDING : GTK_SORT_ASCENDING);
      g_assert_true (gui_test_wait_until (table_ready, objects, 30));
      guint64 prev = pass ? G_MAXUINT64 : 0;
      for (guint i = 0; i < g_list_model_get_n_items (rows); i++)
        {
          g_autoptr (CowscopeObjectItem) item = g_list_model_get_item (rows, i);
          guint64 b = cowscope_object_item_get_nbytes (item);
          if (pass)
            g_assert_cmpuint (b, <=, prev);
          else
            g_assert_cmpuint (b, >=, prev);
          prev = b;
        }
    }

  /* The filter keeps matching rows only. */
  cowscope_tables_view_set_filter_text (events, "materialize_end");
  g_assert_true (gui_test_wait_until (table_ready, events, 30));
  guint n_mat = g_list_model_get_n_items (cowscope_tables_view_get_rows (events));
  g_assert_cmpuint (n_mat, >, 0);
  g_assert_cmpuint (n_mat, <, info.n_events);

  /* Sorting the events by a column header keeps the filter: newest first. */
  cowscope_tables_view_sort_by (events, "time", GTK_SORT_DESCENDING);
  g_assert_false (cowscope_tables_view_get_ready (events));
  g_assert_true (gui_test_wait_until (table_ready, events, 30));
  GListModel *event_rows = cowscope_tables_view_get_rows (events);
  g_assert_cmpuint (g_list_model_get_n_items (event_rows), ==, n_mat);
  gint64 prev_ts = G_MAXINT64;
  for (guint i = 0; i < n_mat; i++)
    {
      g_autoptr (CowscopeEventItem) item = g_list_model_get_item (event_rows, i);
      g_assert_cmpstr (cowscope_event_item_get_type_name (item), ==, "materialize_end");
      g_assert_cmpint (cowscope_event_item_get_ts (item), <=, prev_ts);
      prev_ts = cowscope_event_item_get_ts (item);
    }

  /* Selecting a row sets the selected seq... */
  cowscope_tables_view_select_row (warnings, 0);
  g_autoptr (CowscopeWarningItem) w0 = g_list_model_get_item (cowscope_tables_view_get_rows (warnings), 0);
  g_assert_cmpint (cowscope_view_state_get_selected_seq (state), ==, cowscope_warning_item_get_seq (w0));
  /* ...and the events table follows (within its filter, or after clearing it). */
  cowscope_tables_view_set_filter_text (events, NULL);
  g_assert_true (gui_test_wait_until (table_ready, events, 30));
  cowscope_view_state_set_selected_seq (state, info.copy_seq);
  guint pos = cowscope_tables_view_get_selected_row (events);
  g_assert_cmpuint (pos, !=, GTK_INVALID_LIST_POSITION);
  g_autoptr (CowscopeEventItem) e = g_list_model_get_item (cowscope_tables_view_get_rows (events), pos);
  g_assert_cmpint (cowscope_event_item_get_seq (e), ==, info.copy_seq);
  g_autoptr (CowscopeEventItem) top = g_list_model_get_item (cowscope_tables_view_get_rows (events), 0);
  g_assert_cmpint (cowscope_event_item_get_ts (top), ==,
                   sql_int ("SELECT max(ts) + ?1 FROM events", 0)); /* still newest first */
  /* Choosing an object highlights it. */
  cowscope_tables_view_select_row (objects, 0);
  guint n;
  cowscope_view_state_get_highlights (state, &n);
  g_assert_cmpuint (n, ==, 1);
  gtk_window_destroy (window);
}

static gboolean
window_shows_graph (gpointer data)
{
  CowscopeWindow *window = data;
  CowscopeViewState *state = cowscope_window_get_view_state (window);
  return state != NULL && g_strcmp0 (cowscope_window_get_visible_page (window), "session") == 0;
}

/* Finds the first descendant of @widget of @type. */
static GtkWidget *
find_child (GtkWidget *widget, GType type)
{
  if (G_TYPE_CHECK_INSTANCE_TYPE (widget, type))
    return widget;
  for (GtkWidget *c = gtk_widget_get_first_child (widget); c != NULL; c = gtk_widget_get_next_sibling (c))
    {
      GtkWidget *found = find_child (c, type);
      if (found != NULL)
        return found;
    }
  return NULL;
}

static void
test_window_screenshot (void)
{
  g_autoptr (CowscopeApplication) app = cowscope_application_new ();
  g_application_register (G_APPLICATION (app), NULL, NULL);
  CowscopeWindow *window = cowscope_window_new (app);
  gtk_window_set_default_size (GTK_WINDOW (window), 1280, 800);
  gtk_window_present (GTK_WINDOW (window));
  /* No crossfade: the screenshot shows the page, not half of it. */
  gtk_stack_set_transition_type (GTK_STACK (find_child (GTK_WIDGET (window), GTK_TYPE_STACK)),
                                 GTK_STACK_TRANSITION_TYPE_NONE);
  g_autoptr (GFile) file = g_file_new_for_path (fixture_path);
  cowscope_window_open (window, file);
  g_assert_true (gui_test_wait_until (window_shows_graph, window, 30));
  /* A session opens on its summary: show the timeline and the graph. */
  gtk_widget_activate_action (GTK_WIDGET (window), "win.show-view", "s", "timeline");
  CowscopeViewState *state = cowscope_window_get_view_state (window);
  CowscopeGraphView *graph = COWSCOPE_GRAPH_VIEW (find_child (GTK_WIDGET (window), COWSCOPE_TYPE_GRAPH_VIEW));
  CowscopeExplanationPanel *panel =
    COWSCOPE_EXPLANATION_PANEL (find_child (GTK_WIDGET (window), COWSCOPE_TYPE_EXPLANATION_PANEL));
  g_assert_nonnull (graph);
  g_assert_nonnull (panel);
  /* Explain the known copy: the panel tells it, the graph moves to it. */
  cowscope_view_state_set_selected_seq (state, info.copy_seq);
  g_assert_true (gui_test_wait_until (panel_ready, panel, 30));
  g_assert_true (gui_test_wait_until (view_ready, graph, 30));
  /* The scene at the cursor has the counts of the model's graph there. */
  CowscopeGraphScene *scene = cowscope_graph_view_get_scene (graph);
  g_assert_cmpint (cowscope_sharing_graph_get_seq (cowscope_graph_scene_get_graph (scene)), ==,
                   cowscope_session_document_seq_at_time (doc, cowscope_view_state_get_cursor (state), NULL));
  /* Centre the copied storage and select it, as a person would. */
  gint k = cowscope_graph_scene_find_object (scene, COWSCOPE_NODE_STORAGE,
                                             cowscope_copy_explanation_get_pid (cowscope_explanation_panel_get_explanation (panel)),
                                             info.copy_storage_id);
  g_assert_cmpint (k, >=, 0);
  cowscope_graph_view_select_node (graph, k);
  gui_test_spin (800);
  g_test_message ("page %s, graph mapped %d, size %dx%d", cowscope_window_get_visible_page (window),
                  gtk_widget_get_mapped (GTK_WIDGET (graph)), gtk_widget_get_width (GTK_WIDGET (graph)),
                  gtk_widget_get_height (GTK_WIDGET (graph)));
  gui_test_write_screenshot (GTK_WIDGET (window), "cowscope-graph.png");
  /* What the X server shows, when asked for (COWSCOPE_IMPORT=path). */
  if (g_getenv ("COWSCOPE_IMPORT") != NULL)
    {
      g_autofree char *cmd = g_strdup_printf ("import -window root %s", g_getenv ("COWSCOPE_IMPORT"));
      g_autofree char *err = NULL;
      gui_test_spin (1500);
      g_spawn_command_line_sync (cmd, NULL, &err, NULL, NULL);
      g_test_message ("%s: %s", cmd, err ? err : "");
    }
  gtk_window_destroy (GTK_WINDOW (window));
  gui_test_spin (50);
}

int
main (int argc, char **argv)
{
  gtk_test_init (&argc, &argv, NULL);
  adw_init ();

  fixture_path = scratch ("session.cowscope");
  SessionFixtureOptions options;
  session_fixture_options_small (&options);
  g_autoptr (GError) error = NULL;
  if (!session_fixture_generate (fixture_path, &options, &info, &error))
    g_error ("cannot generate the fixture: %s", error->message);
  doc = cowscope_session_document_load (fixture_path, NULL, &error);
  if (doc == NULL)
    g_error ("cannot load the fixture: %s", error->message);

  g_test_add ("/cowscope/graph/counts-around-a-copy", Fixture, NULL, fixture_set_up,
              test_counts_around_copy, fixture_tear_down);
  g_test_add ("/cowscope/graph/layout-off-main-thread", Fixture, NULL, fixture_set_up,
              test_layout_off_main_thread, fixture_tear_down);
  g_test_add ("/cowscope/graph/search", Fixture, NULL, fixture_set_up, test_search,
              fixture_tear_down);
  g_test_add ("/cowscope/graph/size-filter", Fixture, NULL, fixture_set_up, test_size_filter,
              fixture_tear_down);
  g_test_add_func ("/cowscope/graph/group-collapses", test_group_collapses);
  g_test_add_func ("/cowscope/graph/aggregation-budget", test_aggregation_budget);
  g_test_add ("/cowscope/graph/export", Fixture, NULL, fixture_set_up, test_export,
              fixture_tear_down);

  g_test_add_func ("/cowscope/explanation/copy-and-steal", test_explanation);
  g_test_add_func ("/cowscope/tables/counts-sort-filter-selection", test_tables);
  g_test_add_func ("/cowscope/window/graph-screenshot", test_window_screenshot);

  int status = g_test_run ();
  g_clear_object (&doc);
  g_unlink (fixture_path);
  return status;
}
