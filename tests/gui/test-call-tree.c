/* test-call-tree.c — the summary page a session opens on, the copy call
 * tree and flame graph, and tensor names in the explanation, under a
 * virtual display, on a generated session given several call stacks:
 * the summary's figures against the report's, a call site from the
 * summary to the call tree, a node to the timeline (its largest copy
 * selected, its storages highlighted), the selected range followed, the
 * flame graph's widths against the tree's weights, the pages' minimum
 * widths, and screenshots (light and dark, default and minimum size). */
#include <adwaita.h>
#include <glib/gstdio.h>
#include <math.h>
#include <sqlite3.h>
#include <string.h>

#include "gui-test-support.h"
#include "cowscope-application.h"
#include "cowscope-call-event-item.h"
#include "cowscope-call-node.h"
#include "cowscope-call-tree-view.h"
#include "cowscope-explanation-panel.h"
#include "cowscope-flame-graph.h"
#include "cowscope-report.h"
#include "cowscope-session-tables.h"
#include "cowscope-summary-page.h"
#include "cowscope-window.h"
#include "session-fixture.h"

static CowscopeApplication *app;
static char *session_path;
static SessionFixtureInfo info;
static CowscopeWindow *window;

static char *
scratch (const char *name)
{
  const char *dir = g_getenv ("COWSCOPE_SCREENSHOT_DIR");
  g_autofree char *base = g_strdup_printf ("test-call-tree-%d-%s", (int) getpid (), name);
  return g_build_filename (dir ? dir : g_get_tmp_dir (), base, NULL);
}

static void
exec_ok (sqlite3 *db, const char *sql)
{
  char *message = NULL;
  if (sqlite3_exec (db, sql, NULL, NULL, &message) != SQLITE_OK)
    g_error ("%s: %s", sql, message);
}

/* The fixture session, its copies spread over five stacks (those of
 * tests/session/test-call-tree.c) and one lazy clone in fifty made an
 * eager fallback. */
static void
make_session (void)
{
  SessionFixtureOptions o;
  session_fixture_options_small (&o);
  o.n_events = 20000;
  session_path = scratch ("session.cowscope");
  g_autoptr (GError) error = NULL;
  g_assert_true (session_fixture_generate (session_path, &o, &info, &error));
  g_assert_no_error (error);
  sqlite3 *db = NULL;
  g_assert_cmpint (sqlite3_open (session_path, &db), ==, SQLITE_OK);
  exec_ok (db,
    "BEGIN; DELETE FROM frames; DELETE FROM stacks; DELETE FROM stack_frames;"
    "INSERT INTO frames (id, pid, address, module, function, file, line) VALUES"
    " (1, 1000, 4096, '/usr/lib/libcowtensor.so.0', 'cow_storage_materialize', '/src/engine/cow-storage.c', 300),"
    " (2, 1000, 8192, '/usr/lib/libcowtensor.so.0', 'cow_tensor_add_', '/src/engine/cow-ops.c', 210),"
    " (3, 1000, 100, '/bin/train', 'update_weights', '/src/train.c', 88),"
    " (4, 1000, 200, '/bin/train', 'train_step', '/src/train.c', 120),"
    " (5, 1000, 300, '/bin/train', 'main', '/src/train.c', 200),"
    " (6, 1000, 400, '/bin/train', 'load_batch', '/src/data.c', 40),"
    " (8, 1000, 4000, '/usr/lib/libcowtensor.so.0', 'cow_tensor_lazy_clone', '/src/engine/cow-lazy.c', 50),"
    " (12, 1000, 104, '/bin/train', 'update_weights', '/src/train.c', 91);"
    "INSERT INTO stacks VALUES (1, 5), (2, 5), (3, 3), (5, 3), (9, 3);"
    "INSERT INTO stack_frames VALUES (1, 0, 1), (1, 1, 2), (1, 2, 3), (1, 3, 4), (1, 4, 5),"
    " (2, 0, 1), (2, 1, 2), (2, 2, 6), (2, 3, 4), (2, 4, 5),"
    " (3, 0, 1), (3, 1, 12), (3, 2, 5),"
    " (5, 0, 8), (5, 1, 3), (5, 2, 5),"
    " (9, 0, 8), (9, 1, 4), (9, 2, 5);"
    /* Most bytes at update_weights:88, then load_batch, then line 91. */
    "UPDATE materializations SET stack_id = CASE WHEN seq % 10 < 5 THEN 1 WHEN seq % 10 < 8 THEN 2"
    " ELSE 3 END;"
    "UPDATE lazy_clones SET stack_id = 9;"
    "UPDATE lazy_clones SET eager_reason = 1, context_id = NULL, stack_id = 5 WHERE seq % 50 = 0;"
    "COMMIT;");
  sqlite3_close (db);
}

static gboolean
window_idle (gpointer data)
{
  return !cowscope_window_is_loading (data);
}

static gboolean
summary_ready (gpointer data)
{
  return cowscope_summary_page_get_ready (data) && cowscope_summary_page_get_report (data) != NULL;
}

static gboolean
tree_ready (gpointer data)
{
  return cowscope_call_tree_view_get_ready (data) && cowscope_call_tree_view_get_tree (data) != NULL;
}

static CowscopeSummaryPage *
summary (void)
{
  return cowscope_window_get_summary_page (window);
}

static CowscopeCallTreeView *
tree_view (void)
{
  return cowscope_window_get_call_tree_view (window);
}

static CowscopeViewState *
state (void)
{
  return cowscope_window_get_view_state (window);
}

static void
collect (GtkWidget *widget, GPtrArray *out)
{
  g_ptr_array_add (out, widget);
  for (GtkWidget *c = gtk_widget_get_first_child (widget); c != NULL; c = gtk_widget_get_next_sibling (c))
    collect (c, out);
}

/* The widgets of @type under @root, depth first. */
static GPtrArray *
find_all (GtkWidget *root, GType type)
{
  g_autoptr (GPtrArray) all = g_ptr_array_new ();
  GPtrArray *found = g_ptr_array_new ();
  collect (root, all);
  for (guint i = 0; i < all->len; i++)
    if (G_TYPE_CHECK_INSTANCE_TYPE (all->pdata[i], type))
      g_ptr_array_add (found, all->pdata[i]);
  return found;
}

/* The texts of the labels under @root, joined by newlines. */
static char *
label_texts (GtkWidget *root)
{
  g_autoptr (GPtrArray) labels = find_all (root, GTK_TYPE_LABEL);
  GString *s = g_string_new (NULL);
  for (guint i = 0; i < labels->len; i++)
    g_string_append_printf (s, "%s\n", gtk_label_get_text (labels->pdata[i]));
  return g_string_free (s, FALSE);
}

/* The summary's tile named @name (its widget name). */
static GtkWidget *
tile (const char *name)
{
  g_autoptr (GPtrArray) all = g_ptr_array_new ();
  collect (GTK_WIDGET (summary ()), all);
  for (guint i = 0; i < all->len; i++)
    if (gtk_widget_has_css_class (all->pdata[i], "cowscope-summary-tile")
        && g_strcmp0 (gtk_widget_get_name (all->pdata[i]), name) == 0)
      return all->pdata[i];
  return NULL;
}

/* The activatable rows (AdwActionRow) of the summary's group titled @title. */
static GPtrArray *
rows_of (const char *title)
{
  g_autoptr (GPtrArray) groups = find_all (GTK_WIDGET (summary ()), ADW_TYPE_PREFERENCES_GROUP);
  for (guint i = 0; i < groups->len; i++)
    if (g_strcmp0 (adw_preferences_group_get_title (groups->pdata[i]), title) == 0)
      return find_all (groups->pdata[i], ADW_TYPE_ACTION_ROW);
  g_assert_not_reached ();
}

static JsonObject *
report (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (CowscopeSessionTables) tables = cowscope_session_tables_open (session_path, &error);
  g_assert_no_error (error);
  JsonObject *r = cowscope_report_build (tables, 10, &error);
  g_assert_no_error (error);
  return r;
}

/* The session opens on its summary (not on an instant of the timeline
 * with "No Copy Selected"), whose figures are the report's. */
static void
test_opens_on_summary (void)
{
  g_autoptr (GFile) file = g_file_new_for_path (session_path);
  window = cowscope_window_new (app);
  gtk_window_set_default_size (GTK_WINDOW (window), 1100, 720);
  gtk_window_present (GTK_WINDOW (window));
  cowscope_window_open (window, file);
  g_assert_true (gui_test_wait_until (window_idle, window, 20));
  g_assert_cmpstr (cowscope_window_get_visible_page (window), ==, "session");
  g_assert_cmpstr (cowscope_window_get_visible_view (window), ==, "summary");
  g_assert_true (gtk_widget_get_mapped (GTK_WIDGET (summary ())));
  g_assert_false (gtk_widget_get_mapped (GTK_WIDGET (cowscope_window_get_timeline_view (window))));
  g_assert_true (gui_test_wait_until (summary_ready, summary (), 30));
  /* The call tree is built when first shown, not at open. */
  g_assert_null (cowscope_call_tree_view_get_tree (tree_view ()));
  /* Alt+1, 2, 3 go to the views. */
  static const char *const views[] = { "summary", "timeline", "calltree" };
  for (guint i = 0; i < G_N_ELEMENTS (views); i++)
    {
      g_autofree char *action = g_strdup_printf ("win.show-view::%s", views[i]);
      g_autofree char *accel = g_strdup_printf ("<Alt>%u", i + 1);
      g_auto (GStrv) set = gtk_application_get_accels_for_action (GTK_APPLICATION (app), action);
      g_assert_true (g_strv_contains ((const char *const *) set, accel));
    }

  g_autoptr (JsonObject) r = report ();
  JsonObject *m = json_object_get_object_member (r, "metrics");
  g_autofree char *copied = g_format_size_full ((guint64) json_object_get_int_member (m, "copied_bytes"),
                                                G_FORMAT_SIZE_IEC_UNITS);
  g_autofree char *bytes_tile = label_texts (tile ("Bytes Copied"));
  g_test_message ("%s", bytes_tile);
  g_assert_nonnull (strstr (bytes_tile, copied));
  g_autofree char *steals = g_strdup_printf ("%" G_GINT64_FORMAT "\n", json_object_get_int_member (m, "steals"));
  g_autofree char *steals_tile = label_texts (tile ("Steals"));
  g_assert_true (g_str_has_prefix (steals_tile, steals));
  g_autofree char *eager = g_strdup_printf ("%" G_GINT64_FORMAT "\n",
                                            json_object_get_int_member (m, "eager_fallbacks"));
  g_autofree char *eager_tile = label_texts (tile ("Eager Fallbacks"));
  g_assert_true (g_str_has_prefix (eager_tile, eager));
  g_assert_cmpint (json_object_get_int_member (m, "eager_fallbacks"), >, 0);

  /* The top call sites, in the report's order and words. */
  JsonArray *sites = json_object_get_array_member (r, "top_call_sites");
  g_autoptr (GPtrArray) rows = rows_of ("Top Call Sites");
  g_assert_cmpuint (rows->len, ==, json_array_get_length (sites));
  g_assert_cmpuint (rows->len, ==, 3);
  for (guint i = 0; i < rows->len; i++)
    g_assert_cmpstr (adw_preferences_row_get_title (rows->pdata[i]), ==,
                     json_object_get_string_member (json_array_get_object_element (sites, i), "location"));
  g_assert_cmpstr (adw_preferences_row_get_title (rows->pdata[0]), ==, "train.c:88 in update_weights()");
  /* And the warnings, by the tensors' names. */
  g_autoptr (GPtrArray) warnings = rows_of ("Simulate-Mode Warnings");
  g_assert_cmpuint (warnings->len, >, 0);
}

/* A call site of the summary opens the call tree, bottom-up, on it, with
 * its copies listed. */
static void
test_site_to_call_tree (void)
{
  g_autoptr (GPtrArray) rows = rows_of ("Top Call Sites");
  g_signal_emit_by_name (rows->pdata[1], "activated");
  g_assert_cmpstr (cowscope_window_get_visible_view (window), ==, "calltree");
  g_assert_true (gui_test_wait_until (tree_ready, tree_view (), 30));
  g_assert_cmpint (cowscope_call_tree_view_get_direction (tree_view ()), ==, COWSCOPE_CALL_TREE_BOTTOM_UP);
  CowscopeCallTree *tree = cowscope_call_tree_view_get_tree (tree_view ());
  guint node = cowscope_call_tree_view_get_selected (tree_view ());
  g_assert_cmpuint (node, !=, COWSCOPE_CALL_TREE_NO_NODE);
  g_assert_cmpstr (cowscope_call_tree_get_frame (tree, node)->site, ==, "data.c:40 in load_batch()");
  g_assert_cmpuint (cowscope_call_tree_get_parent (tree, node), ==,
                    cowscope_call_tree_get_root (tree, COWSCOPE_CALL_TREE_BOTTOM_UP));
  const CowscopeCallWeights *w = cowscope_call_tree_get_total (tree, node);
  guint64 events = cowscope_call_weights_get (w, COWSCOPE_CALL_METRIC_EVENTS);
  g_assert_cmpuint (cowscope_call_tree_view_get_n_events (tree_view ()), ==, events);
  g_assert_cmpuint (g_list_model_get_n_items (cowscope_call_tree_view_get_events (tree_view ())), ==,
                    MIN (events, 1000));
  /* Shown in the table: the selected row is that node. */
  g_autoptr (GPtrArray) views = find_all (GTK_WIDGET (tree_view ()), GTK_TYPE_COLUMN_VIEW);
  GtkSelectionModel *selection = gtk_column_view_get_model (views->pdata[0]);
  gpointer row = gtk_single_selection_get_selected_item (GTK_SINGLE_SELECTION (selection));
  g_assert_true (GTK_IS_TREE_LIST_ROW (row));
  g_autoptr (CowscopeCallNode) item = gtk_tree_list_row_get_item (row);
  g_assert_cmpuint (cowscope_call_node_get_node (item), ==, node);
}

static gboolean
timeline_shown (gpointer data)
{
  return g_strcmp0 (cowscope_window_get_visible_view (window), "timeline") == 0;
}

/* Activating a node goes to its copies: the largest one selected (the
 * explanation explains it), the storages they copied highlighted, the
 * timeline shown. */
static void
test_node_to_timeline (void)
{
  CowscopeCallTree *tree = cowscope_call_tree_view_get_tree (tree_view ());
  cowscope_call_tree_view_set_direction (tree_view (), COWSCOPE_CALL_TREE_TOP_DOWN);
  guint root = cowscope_call_tree_get_root (tree, COWSCOPE_CALL_TREE_TOP_DOWN);
  guint main_node = cowscope_call_tree_get_child (tree, root, 0);
  guint step = cowscope_call_tree_get_child (tree, main_node, 0);
  g_assert_cmpstr (cowscope_call_tree_get_frame (tree, step)->display, ==, "train_step (train.c:120)");
  cowscope_call_tree_view_activate_node (tree_view (), step);
  g_assert_true (gui_test_wait_until (timeline_shown, NULL, 30));

  /* The largest of its events, by SQL on the file. */
  sqlite3 *db = NULL;
  g_assert_cmpint (sqlite3_open_v2 (session_path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  sqlite3_stmt *q = NULL;
  g_assert_cmpint (sqlite3_prepare_v2 (db,
    "SELECT seq, pid, storage_id FROM materializations WHERE stack_id IN (1, 2) AND kind & 255 IN (1, 2)"
    " ORDER BY nbytes DESC, seq LIMIT 1", -1, &q, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_step (q), ==, SQLITE_ROW);
  gint64 seq = sqlite3_column_int64 (q, 0);
  guint32 pid = (guint32) sqlite3_column_int64 (q, 1);
  guint64 storage = (guint64) sqlite3_column_int64 (q, 2);
  sqlite3_finalize (q);
  sqlite3_close (db);
  g_assert_cmpint (cowscope_view_state_get_selected_seq (state ()), ==, seq);
  g_assert_true (cowscope_view_state_is_highlighted (state (), pid, storage));
}

/* The tree follows the selected range: rebuilt with the copies that end
 * in it (as an SQL sum on the file says), the whole session again when
 * the range is cleared. */
static void
test_range (void)
{
  gtk_widget_activate_action (GTK_WIDGET (window), "win.show-view", "s", "calltree");
  g_assert_cmpstr (cowscope_window_get_visible_view (window), ==, "calltree");
  gint64 span = info.end_ns - info.start_ns;
  gint64 r0 = info.start_ns + span / 4, r1 = info.start_ns + span / 2;
  cowscope_view_state_set_range (state (), r0, r1);
  g_assert_false (cowscope_call_tree_view_get_ready (tree_view ()));
  g_assert_true (gui_test_wait_until (tree_ready, tree_view (), 30));
  CowscopeCallTree *tree = cowscope_call_tree_view_get_tree (tree_view ());
  g_assert_cmpint (cowscope_call_tree_get_options (tree)->range_start, ==, r0);
  const CowscopeCallWeights *w =
    cowscope_call_tree_get_total (tree, cowscope_call_tree_get_root (tree, COWSCOPE_CALL_TREE_TOP_DOWN));

  sqlite3 *db = NULL;
  g_assert_cmpint (sqlite3_open_v2 (session_path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  sqlite3_stmt *q = NULL;
  g_assert_cmpint (sqlite3_prepare_v2 (db,
    "SELECT count(*), SUM (nbytes) FROM materializations WHERE kind & 255 = 1"
    " AND end_ts >= ?1 AND end_ts < ?2", -1, &q, NULL), ==, SQLITE_OK);
  sqlite3_bind_int64 (q, 1, r0);
  sqlite3_bind_int64 (q, 2, r1);
  g_assert_cmpint (sqlite3_step (q), ==, SQLITE_ROW);
  g_assert_cmpuint (w->copies, ==, (guint64) sqlite3_column_int64 (q, 0));
  g_assert_cmpuint (w->copy_bytes, ==, (guint64) sqlite3_column_int64 (q, 1));
  g_assert_cmpuint (w->copies, >, 0);
  sqlite3_finalize (q);
  sqlite3_close (db);
  g_autofree char *texts = label_texts (GTK_WIDGET (tree_view ()));
  g_assert_nonnull (strstr (texts, "Copies from +"));

  cowscope_view_state_set_range (state (), -1, -1);
  g_assert_true (gui_test_wait_until (tree_ready, tree_view (), 30));
  tree = cowscope_call_tree_view_get_tree (tree_view ());
  g_assert_cmpint (cowscope_call_tree_get_options (tree)->range_start, ==, -1);
  g_free (texts);
  texts = label_texts (GTK_WIDGET (tree_view ()));
  g_assert_nonnull (strstr (texts, "Copies in the whole session"));
}

/* The flame graph: each child of the root as wide as its share of the
 * root's bytes; a node picked there is selected in the table too. */
static void
test_flame_graph (void)
{
  cowscope_call_tree_view_set_direction (tree_view (), COWSCOPE_CALL_TREE_BOTTOM_UP);
  cowscope_call_tree_view_set_flame (tree_view (), TRUE);
  g_autoptr (GPtrArray) flames = find_all (GTK_WIDGET (tree_view ()), COWSCOPE_TYPE_FLAME_GRAPH);
  CowscopeFlameGraph *flame = flames->pdata[0];
  g_assert_true (gui_test_wait_until (gui_test_widget_drawn, flame, 10));
  CowscopeCallTree *tree = cowscope_call_tree_view_get_tree (tree_view ());
  guint root = cowscope_call_tree_get_root (tree, COWSCOPE_CALL_TREE_BOTTOM_UP);
  double width = gtk_widget_get_width (GTK_WIDGET (flame));
  guint64 all = cowscope_call_weights_get (cowscope_call_tree_get_total (tree, root), COWSCOPE_CALL_METRIC_BYTES);
  graphene_rect_t r;
  g_assert_true (cowscope_flame_graph_get_node_bounds (flame, root, &r));
  g_assert_cmpfloat (fabs (r.size.width - (width - 1)), <, 1.0);
  double x = 0;
  for (guint i = 0; i < cowscope_call_tree_get_n_children (tree, root); i++)
    {
      guint child = cowscope_call_tree_get_child (tree, root, i);
      double expected = width * (double) cowscope_call_weights_get (cowscope_call_tree_get_total (tree, child),
                                                                    COWSCOPE_CALL_METRIC_BYTES) / (double) all;
      if (expected < 1.0)
        continue;
      g_assert_true (cowscope_flame_graph_get_node_bounds (flame, child, &r));
      g_test_message ("%s: %.1f px, expected %.1f", cowscope_call_tree_get_frame (tree, child)->display,
                      r.size.width + 1, expected);
      g_assert_cmpfloat (fabs (r.size.width + 1 - expected), <, 1.0);
      g_assert_cmpfloat (fabs (r.origin.x - x), <, 1.0);
      x += expected;
      /* What is drawn there is that node. */
      g_assert_cmpuint (cowscope_flame_graph_node_at (flame, r.origin.x + r.size.width / 2,
                                                      r.origin.y + r.size.height / 2), ==, child);
    }
  guint first = cowscope_call_tree_get_child (tree, root, 0);
  /* Zoomed into a node (as a click does): it and its ancestors full width. */
  cowscope_flame_graph_zoom_to (flame, first);
  g_assert_true (cowscope_flame_graph_get_node_bounds (flame, first, &r));
  g_assert_cmpfloat (fabs (r.size.width - (width - 1)), <, 1.0);
  g_assert_true (cowscope_flame_graph_get_node_bounds (flame, root, &r));
  g_assert_cmpfloat (fabs (r.size.width - (width - 1)), <, 1.0);
  guint second = cowscope_call_tree_get_child (tree, root, 1);
  g_assert_false (cowscope_flame_graph_get_node_bounds (flame, second, &r));
  /* Selecting a node outside the zoom zooms out. */
  cowscope_flame_graph_set_selected (flame, second);
  g_assert_cmpuint (cowscope_flame_graph_get_zoom (flame), ==, root);
  g_signal_emit_by_name (flame, "node-selected", first);
  g_assert_cmpuint (cowscope_call_tree_view_get_selected (tree_view ()), ==, first);
  g_assert_true (gui_test_wait_until (tree_ready, tree_view (), 30));
  g_assert_cmpuint (cowscope_call_tree_view_get_n_events (tree_view ()), ==,
                    cowscope_call_weights_get (cowscope_call_tree_get_total (tree, first),
                                               COWSCOPE_CALL_METRIC_EVENTS));
  cowscope_call_tree_view_set_flame (tree_view (), FALSE);
}

/* An operation of the summary selects its largest copy, and a warning
 * itself, in the timeline (whose explanation then tells it). */
static void
test_summary_to_timeline (void)
{
  g_autoptr (JsonObject) r = report ();
  gtk_widget_activate_action (GTK_WIDGET (window), "win.show-view", "s", "summary");
  g_autoptr (GPtrArray) ops = rows_of ("Top Operations");
  g_assert_cmpuint (ops->len, >, 0);
  g_signal_emit_by_name (ops->pdata[0], "activated");
  g_assert_cmpstr (cowscope_window_get_visible_view (window), ==, "timeline");
  JsonObject *op = json_array_get_object_element (json_object_get_array_member (r, "top_ops"), 0);
  g_assert_cmpint (cowscope_view_state_get_selected_seq (state ()), ==,
                   json_object_get_int_member (op, "largest_seq"));

  gtk_widget_activate_action (GTK_WIDGET (window), "win.show-view", "s", "summary");
  g_autoptr (GPtrArray) warnings = rows_of ("Simulate-Mode Warnings");
  g_signal_emit_by_name (warnings->pdata[0], "activated");
  g_assert_cmpstr (cowscope_window_get_visible_view (window), ==, "timeline");
  JsonObject *v = json_array_get_object_element (json_object_get_array_member (r, "violations"), 0);
  g_assert_cmpint (cowscope_view_state_get_selected_seq (state ()), ==, json_object_get_int_member (v, "seq"));
}

/* Neither page asks for more width than the window's minimum (360 px):
 * they scroll or wrap instead. */
static void
test_minimum_widths (void)
{
  int min = 0;
  gtk_widget_measure (GTK_WIDGET (summary ()), GTK_ORIENTATION_HORIZONTAL, -1, &min, NULL, NULL, NULL);
  g_test_message ("summary page: at least %d px", min);
  g_assert_cmpint (min, <=, 360);
  gtk_widget_measure (GTK_WIDGET (tree_view ()), GTK_ORIENTATION_HORIZONTAL, -1, &min, NULL, NULL, NULL);
  g_test_message ("call tree: at least %d px", min);
  g_assert_cmpint (min, <=, 360);
}

static gboolean
panel_ready (gpointer data)
{
  return cowscope_explanation_panel_get_ready (data)
         && cowscope_explanation_panel_get_explanation (data) != NULL;
}

/* Defect 10: the explanation names tensors as the graph does, by name
 * (the number only for a tensor without one). */
static void
test_explanation_names (void)
{
  sqlite3 *db = NULL;
  g_assert_cmpint (sqlite3_open_v2 (session_path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  sqlite3_stmt *q = NULL;
  g_assert_cmpint (sqlite3_prepare_v2 (db,
    "SELECT m.seq, t.id, t.name FROM materializations m JOIN tensors t"
    " ON t.pid = m.pid AND t.id = m.tensor_id WHERE t.name IS NOT NULL AND m.kind & 255 = 1"
    " ORDER BY m.seq LIMIT 1", -1, &q, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_step (q), ==, SQLITE_ROW);
  gint64 seq = sqlite3_column_int64 (q, 0);
  gint64 id = sqlite3_column_int64 (q, 1);
  g_autofree char *name = g_strdup ((const char *) sqlite3_column_text (q, 2));
  sqlite3_finalize (q);
  sqlite3_close (db);

  g_autoptr (GPtrArray) panels = find_all (GTK_WIDGET (window), COWSCOPE_TYPE_EXPLANATION_PANEL);
  CowscopeExplanationPanel *panel = panels->pdata[0];
  cowscope_view_state_set_selected_seq (state (), seq);
  g_assert_true (gui_test_wait_until (panel_ready, panel, 30));
  g_autofree char *text = cowscope_explanation_panel_dup_text (panel);
  g_test_message ("%s", text);
  g_autofree char *by_name = g_strdup_printf ("Writing to “%s”", name);
  g_assert_nonnull (strstr (text, by_name));
  g_autofree char *by_number = g_strdup_printf ("tensor %" G_GINT64_FORMAT " ", id);
  g_assert_null (strstr (text, by_number));
  g_autofree char *by_number_capital = g_strdup_printf ("Tensor %" G_GINT64_FORMAT " ", id);
  g_assert_null (strstr (text, by_number_capital));
}

/* Renders the window to @name in $COWSCOPE_SCREENSHOT_DIR; checks that
 * it is not blank. */
static void
screenshot (const char *name)
{
  GtkWidget *w = GTK_WIDGET (window);
  g_assert_true (gui_test_wait_until (gui_test_widget_drawn, w, 10));
  gui_test_spin (200);
  int width = gtk_widget_get_width (w), height = gtk_widget_get_height (w);
  g_autoptr (GdkPaintable) paintable = gtk_widget_paintable_new (w);
  GtkSnapshot *snapshot = gtk_snapshot_new ();
  gdk_paintable_snapshot (paintable, GDK_SNAPSHOT (snapshot), width, height);
  g_autoptr (GskRenderNode) node = gtk_snapshot_free_to_node (snapshot);
  cairo_surface_t *surface = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, width, height);
  cairo_t *cr = cairo_create (surface);
  gsk_render_node_draw (node, cr);
  cairo_destroy (cr);
  cairo_surface_flush (surface);
  const char *dir = g_getenv ("COWSCOPE_SCREENSHOT_DIR");
  g_autofree char *path = g_build_filename (dir ? dir : ".", name, NULL);
  g_assert_cmpint (cairo_surface_write_to_png (surface, path), ==, CAIRO_STATUS_SUCCESS);
  g_test_message ("screenshot: %s (%dx%d)", path, width, height);
  const guint8 *pixels = cairo_image_surface_get_data (surface);
  int stride = cairo_image_surface_get_stride (surface);
  double sum = 0, sum2 = 0;
  for (int y = 0; y < height; y++)
    for (int x = 0; x < width; x++)
      {
        const guint8 *p = pixels + y * stride + x * 4;
        double lum = 0.2126 * p[2] + 0.7152 * p[1] + 0.0722 * p[0];
        sum += lum, sum2 += lum * lum;
      }
  g_assert_cmpfloat (sum2 / (width * height) - pow (sum / (width * height), 2), >, 20.0);
  cairo_surface_destroy (surface);
}

static gboolean
window_sized (gpointer data)
{
  return gtk_widget_get_width (GTK_WIDGET (window)) == GPOINTER_TO_INT (data);
}

/* The summary, the call tree and the flame graph at 1600 x 1000 and at
 * the window's minimum size, light and dark. */
static void
test_screenshots (void)
{
  static const struct { int w, h; const char *suffix; } sizes[] = {
    { 1600, 1000, "" }, { 360, 360, "-min" },
  };
  AdwStyleManager *manager = adw_style_manager_get_default ();
  cowscope_view_state_set_selected_seq (state (), -1);
  for (guint s = 0; s < G_N_ELEMENTS (sizes); s++)
    for (guint dark = 0; dark < 2; dark++)
      {
        adw_style_manager_set_color_scheme (manager, dark ? ADW_COLOR_SCHEME_FORCE_DARK
                                                          : ADW_COLOR_SCHEME_FORCE_LIGHT);
        gtk_window_set_default_size (GTK_WINDOW (window), sizes[s].w, sizes[s].h);
        gui_test_wait_until (window_sized, GINT_TO_POINTER (sizes[s].w), 5);
        static const char *const views[] = { "summary", "calltree", "flame" };
        for (guint v = 0; v < G_N_ELEMENTS (views); v++)
          {
            gboolean flame = g_str_equal (views[v], "flame");
            gtk_widget_activate_action (GTK_WIDGET (window), "win.show-view", "s",
                                        flame ? "calltree" : views[v]);
            cowscope_call_tree_view_set_flame (tree_view (), flame);
            g_autofree char *name = g_strdup_printf ("cowscope-%s%s%s.png", views[v], sizes[s].suffix,
                                                     dark ? "-dark" : "");
            screenshot (name);
          }
      }
  cowscope_call_tree_view_set_flame (tree_view (), FALSE);
  adw_style_manager_set_color_scheme (manager, ADW_COLOR_SCHEME_DEFAULT);
}

/* Always due, as a frame clock is where every frame takes longer than
 * the frame interval (software GL on a busy machine). */
static gboolean
frame_always_due_cb (gpointer data)
{
  guint *frames = data;
  (*frames)++;
  return G_SOURCE_CONTINUE;
}

/* A main loop whose drawing never catches up still builds the summary
 * and the call tree: their builds do not wait for an idle main loop. */
static void
test_busy_frame_clock (void)
{
  g_autoptr (GFile) file = g_file_new_for_path (session_path);
  CowscopeWindow *busy = cowscope_window_new (app);
  guint frames = 0;
  guint source = g_idle_add_full (GDK_PRIORITY_REDRAW, frame_always_due_cb, &frames, NULL);
  gtk_window_present (GTK_WINDOW (busy));
  cowscope_window_open (busy, file);
  g_assert_true (gui_test_wait_until (window_idle, busy, 20));
  CowscopeSummaryPage *page = cowscope_window_get_summary_page (busy);
  g_assert_true (gtk_widget_get_mapped (GTK_WIDGET (page)));
  g_assert_true (gui_test_wait_until (summary_ready, page, 30));
  gtk_widget_activate_action (GTK_WIDGET (busy), "win.show-view", "s", "calltree");
  g_assert_true (gui_test_wait_until (tree_ready, cowscope_window_get_call_tree_view (busy), 30));
  g_assert_cmpuint (frames, >, 0);
  g_source_remove (source);
  gtk_window_destroy (GTK_WINDOW (busy));
}

int
main (int argc, char *argv[])
{
  g_autoptr (GError) error = NULL;
  gtk_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  adw_init ();
  make_session ();
  app = cowscope_application_new ();
  g_application_set_flags (G_APPLICATION (app), G_APPLICATION_HANDLES_OPEN | G_APPLICATION_NON_UNIQUE);
  g_assert_true (g_application_register (G_APPLICATION (app), NULL, &error));
  g_assert_no_error (error);

  /* In order: each goes on from the window the one before left. */
  g_test_add_func ("/call-tree/opens-on-summary", test_opens_on_summary);
  g_test_add_func ("/call-tree/site-to-call-tree", test_site_to_call_tree);
  g_test_add_func ("/call-tree/node-to-timeline", test_node_to_timeline);
  g_test_add_func ("/call-tree/range", test_range);
  g_test_add_func ("/call-tree/flame-graph", test_flame_graph);
  g_test_add_func ("/call-tree/summary-to-timeline", test_summary_to_timeline);
  g_test_add_func ("/call-tree/minimum-widths", test_minimum_widths);
  g_test_add_func ("/call-tree/explanation-names", test_explanation_names);
  g_test_add_func ("/call-tree/screenshots", test_screenshots);
  g_test_add_func ("/call-tree/busy-frame-clock", test_busy_frame_clock);
  int status = g_test_run ();

  if (window != NULL)
    gtk_window_destroy (GTK_WINDOW (window));
  gui_test_spin (50);
  g_object_unref (app);
  g_unlink (session_path);
  g_free (session_path);
  return status;
}
