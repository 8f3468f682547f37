/* test-graph-view.c — what the sharing graph's toolbar and colours tell
 * a person, on a generated session: a search that finds nothing says so
 * under the toolbar; the size filter is the remembered setting
 * "graph-size-filter" (both ways, in every graph); a storage that stole
 * its bytes has its own state, colour and legend entry, whether the graph
 * was replayed past the steal or decoded from a later checkpoint; an
 * empty graph says why (nothing alive, or everything filtered out).
 */
#include <adwaita.h>
#include <glib/gstdio.h>
#include <sqlite3.h>
#include <string.h>

#include "gui-test-support.h"
#include "cowscope-graph-view.h"
#include "cowscope-sharing-graph-private.h"
#include "cowscope-view-state.h"
#include "session-fixture.h"

static char *fixture_path;
static SessionFixtureInfo info;
static CowscopeSessionDocument *doc;

typedef struct {
  GtkWindow *window;
  CowscopeGraphView *view;
  CowscopeViewState *state;
} Fixture;

/* The first widget of @type under @root, depth first. */
static GtkWidget *
find_child (GtkWidget *root, GType type)
{
  if (G_TYPE_CHECK_INSTANCE_TYPE (root, type))
    return root;
  for (GtkWidget *c = gtk_widget_get_first_child (root); c != NULL; c = gtk_widget_get_next_sibling (c))
    {
      GtkWidget *found = find_child (c, type);
      if (found != NULL)
        return found;
    }
  return NULL;
}

static gboolean
view_ready (gpointer data)
{
  return cowscope_graph_view_get_ready (data);
}

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

/* Shows the graph at @t and waits for its layout. */
static CowscopeGraphScene *
show_at (Fixture *f, gint64 t)
{
  cowscope_view_state_set_cursor (f->state, t);
  if (cowscope_graph_view_get_view_state (f->view) == NULL)
    cowscope_graph_view_set_view_state (f->view, f->state);
  g_assert_true (gui_test_wait_until (view_ready, f->view, 30));
  g_assert_nonnull (cowscope_graph_view_get_scene (f->view));
  return cowscope_graph_view_get_scene (f->view);
}

/* A name no tensor has is said so, inline, in words that name it; a name
 * that matches clears the words. */
static void
test_search_says_nothing_found (Fixture *f, gconstpointer data)
{
  CowscopeGraphScene *scene = show_at (f, info.end_ns);
  CowscopeSharingGraph *graph = cowscope_graph_scene_get_graph (scene);
  const char *name = NULL;

  g_assert_null (cowscope_graph_view_get_search_message (f->view));
  g_assert_cmpuint (cowscope_graph_view_search (f->view, "no-such-tensor-name"), ==, 0);
  gui_test_spin (50);
  g_assert_cmpstr (cowscope_graph_view_get_search_message (f->view), ==,
                   "No tensor named “no-such-tensor-name” at this instant");
  g_assert_true (gui_test_wait_until (gui_test_widget_drawn, f->view, 10));

  /* A real name: found (maybe after a layout that opens its group), and
   * nothing is said. */
  for (guint i = 0; i < cowscope_sharing_graph_get_n_nodes (graph) && name == NULL; i++)
    name = cowscope_sharing_graph_get_node (graph, i)->label;
  g_assert_nonnull (name);
  g_autofree char *wanted = g_strdup (name);
  if (cowscope_graph_view_search (f->view, wanted) == 0)
    {
      g_assert_null (cowscope_graph_view_get_search_message (f->view));
      g_assert_true (gui_test_wait_until (view_ready, f->view, 30));
    }
  g_assert_cmpuint (cowscope_graph_view_get_n_matches (f->view), >=, 1);
  g_assert_null (cowscope_graph_view_get_search_message (f->view));

  /* An empty search says nothing either. */
  cowscope_graph_view_search (f->view, "");
  g_assert_null (cowscope_graph_view_get_search_message (f->view));
}

/* The size filter is the setting: changing the key filters the graph
 * (the toolbar shows it), and the toolbar's choice is stored. */
static void
test_size_filter_setting (Fixture *f, gconstpointer data)
{
  g_autoptr (GSettings) settings = g_settings_new ("org.cowscope.Cowscope");
  CowscopeGraphScene *scene;
  GtkDropDown *dropdown;

  g_settings_reset (settings, "graph-size-filter");
  cowscope_graph_view_bind_size_filter (f->view, settings);
  scene = show_at (f, info.end_ns);
  g_assert_cmpuint (cowscope_graph_view_get_min_bytes (f->view), ==, 0);
  g_assert_cmpuint (cowscope_graph_scene_get_stats (scene)->n_filtered, ==, 0);

  g_settings_set_string (settings, "graph-size-filter", "64k");
  g_assert_cmpuint (cowscope_graph_view_get_min_bytes (f->view), ==, 64 * 1024);
  g_assert_true (gui_test_wait_until (view_ready, f->view, 30));
  scene = cowscope_graph_view_get_scene (f->view);
  g_assert_cmpuint (cowscope_graph_scene_get_stats (scene)->n_filtered, >, 0);
  for (guint i = 0; i < cowscope_graph_scene_get_n_nodes (scene); i++)
    g_assert_cmpuint (cowscope_graph_scene_get_node (scene, i)->nbytes, >=, 64 * 1024);

  /* The toolbar shows the setting and writes it back. */
  dropdown = GTK_DROP_DOWN (find_child (GTK_WIDGET (f->view), GTK_TYPE_DROP_DOWN));
  g_assert_nonnull (dropdown);
  g_assert_cmpuint (gtk_drop_down_get_selected (dropdown), ==, 2);
  gtk_drop_down_set_selected (dropdown, 3);
  g_autofree char *stored = g_settings_get_string (settings, "graph-size-filter");
  g_assert_cmpstr (stored, ==, "1m");
  g_assert_cmpuint (cowscope_graph_view_get_min_bytes (f->view), ==, 1024 * 1024);

  /* Another graph starts with it. */
  CowscopeGraphView *other = COWSCOPE_GRAPH_VIEW (g_object_ref_sink (cowscope_graph_view_new ()));
  cowscope_graph_view_bind_size_filter (other, settings);
  g_assert_cmpuint (cowscope_graph_view_get_min_bytes (other), ==, 1024 * 1024);
  g_object_unref (other);
  g_settings_reset (settings, "graph-size-filter");
}

/* One row of @sql (?1 = @arg) on the fixture: up to three integers;
 * FALSE when there is none. */
static gboolean
sql_row (const char *sql, gint64 arg, gint64 *a, gint64 *b, gint64 *c)
{
  sqlite3 *db = NULL;
  sqlite3_stmt *stmt = NULL;
  gboolean found;

  g_assert_cmpint (sqlite3_open_v2 (fixture_path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_prepare_v2 (db, sql, -1, &stmt, NULL), ==, SQLITE_OK);
  sqlite3_bind_int64 (stmt, 1, arg);
  found = sqlite3_step (stmt) == SQLITE_ROW;
  if (found)
    {
      *a = sqlite3_column_int64 (stmt, 0);
      *b = sqlite3_column_int64 (stmt, 1);
      *c = sqlite3_column_int64 (stmt, 2);
    }
  sqlite3_finalize (stmt);
  sqlite3_close (db);
  return found;
}

/* The state of storage (@pid, @id) in the graph at @t. */
static CowscopeNodeState
storage_state_at (Fixture *f, gint64 t, gint64 pid, gint64 id)
{
  CowscopeGraphScene *scene = show_at (f, t);
  CowscopeSharingGraph *graph = cowscope_graph_scene_get_graph (scene);
  gint i = cowscope_sharing_graph_lookup (graph, COWSCOPE_NODE_STORAGE, (guint32) pid, (guint64) id);
  gint k = cowscope_graph_scene_find_object (scene, COWSCOPE_NODE_STORAGE, (guint32) pid, (guint64) id);

  g_assert_cmpint (i, >=, 0);
  /* The scene (what is drawn) says the same as the model. */
  if (k >= 0 && cowscope_graph_scene_get_node (scene, (guint) k)->type == COWSCOPE_SCENE_NODE_OBJECT)
    g_assert_cmpint (cowscope_graph_scene_get_node (scene, (guint) k)->state, ==,
                     cowscope_sharing_graph_get_node (graph, (guint) i)->state);
  return cowscope_sharing_graph_get_node (graph, (guint) i)->state;
}

/* A steal is not a copy: the storage that stole its bytes is STOLEN (its
 * own colour and legend entry) right after the steal (replayed) and at a
 * later checkpoint (decoded), while a copied one is MATERIALIZED. */
static void
test_stolen_storage (Fixture *f, gconstpointer data)
{
  gint64 pid, storage, end_ts, t;
  gboolean legend_has_it = FALSE;

  g_assert_true (sql_row ("SELECT pid, storage_id, end_ts FROM materializations WHERE seq = ?1",
                          info.steal_seq, &pid, &storage, &end_ts));
  g_assert_cmpint (storage_state_at (f, end_ts, pid, storage), ==, COWSCOPE_NODE_STATE_STOLEN);

  /* Decoded from a checkpoint taken after a steal, the storage still
   * alive and not shared again by then. */
  g_assert_true (sql_row (
    "SELECT m.pid, m.storage_id, c.ts FROM materializations m"
    " JOIN storages s ON s.pid = m.pid AND s.id = m.storage_id"
    " JOIN checkpoints c ON c.ts > m.end_ts AND (s.free_ts IS NULL OR c.ts < s.free_ts)"
    " WHERE (m.kind & 255) = 2 AND m.seq >= ?1"
    " AND NOT EXISTS (SELECT 1 FROM lazy_clones l WHERE l.pid = m.pid"
    "   AND l.source_storage_id = m.storage_id AND l.ts BETWEEN m.end_ts AND c.ts)"
    " ORDER BY c.ts LIMIT 1",
    0, &pid, &storage, &t));
  g_assert_cmpint (storage_state_at (f, t, pid, storage), ==, COWSCOPE_NODE_STATE_STOLEN);

  /* A copy stays a copy. */
  g_assert_true (sql_row ("SELECT pid, storage_id, end_ts FROM materializations WHERE seq = ?1",
                          info.copy_seq, &pid, &storage, &end_ts));
  g_assert_cmpint (storage_state_at (f, end_ts, pid, storage), ==, COWSCOPE_NODE_STATE_MATERIALIZED);

  for (guint i = 0; i < cowscope_graph_legend_get_n_entries (); i++)
    legend_has_it |= g_strcmp0 (cowscope_graph_legend_get_entry_name (i),
                                "Materialized (stolen, no copy)") == 0;
  g_assert_true (legend_has_it);
}

/* An empty graph says why instead of showing an empty canvas: before
 * the first object nothing is alive; a filter above every size hides
 * everything. */
static void
test_empty_graph_says_why (Fixture *f, gconstpointer data)
{
  CowscopeGraphScene *scene = show_at (f, info.end_ns);
  g_autoptr (CowscopeSharingGraph) empty = NULL;

  g_assert_cmpuint (cowscope_graph_scene_get_n_nodes (scene), >, 0);
  g_assert_null (cowscope_graph_view_get_empty_title (f->view));
  cowscope_graph_view_set_min_bytes (f->view, G_GUINT64_CONSTANT (1) << 50);
  g_assert_true (gui_test_wait_until (view_ready, f->view, 30));
  g_assert_cmpuint (cowscope_graph_scene_get_n_nodes (cowscope_graph_view_get_scene (f->view)), ==, 0);
  g_assert_cmpstr (cowscope_graph_view_get_empty_title (f->view), ==,
                   "Every Object Is Smaller Than the Filter");
  cowscope_graph_view_set_min_bytes (f->view, 0);

  /* A recording whose objects are all freed: its live graph is empty. */
  empty = cowscope_sharing_graph_new_take (g_array_new (FALSE, TRUE, sizeof (CowscopeGraphNode)),
                                           g_array_new (FALSE, TRUE, sizeof (CowscopeGraphEdge)),
                                           g_string_chunk_new (64), 1, 1, -1, 0);
  cowscope_graph_view_show_graph (f->view, empty);
  g_assert_true (gui_test_wait_until (view_ready, f->view, 30));
  g_assert_cmpstr (cowscope_graph_view_get_empty_title (f->view), ==, "Nothing Is Alive Here");
}

int
main (int argc, char **argv)
{
  g_autoptr (GError) error = NULL;
  SessionFixtureOptions options;
  const char *dir = g_getenv ("COWSCOPE_SCREENSHOT_DIR");
  g_autofree char *base = g_strdup_printf ("test-graph-view-%d.cowscope", (int) getpid ());
  int status;

  gtk_test_init (&argc, &argv, NULL);
  adw_init ();

  fixture_path = g_build_filename (dir != NULL ? dir : g_get_tmp_dir (), base, NULL);
  session_fixture_options_small (&options);
  if (!session_fixture_generate (fixture_path, &options, &info, &error))
    g_error ("cannot generate the fixture: %s", error->message);
  doc = cowscope_session_document_load (fixture_path, NULL, &error);
  if (doc == NULL)
    g_error ("cannot load the fixture: %s", error->message);

  g_test_add ("/cowscope/graph-view/search-says-nothing-found", Fixture, NULL, fixture_set_up,
              test_search_says_nothing_found, fixture_tear_down);
  g_test_add ("/cowscope/graph-view/size-filter-setting", Fixture, NULL, fixture_set_up,
              test_size_filter_setting, fixture_tear_down);
  g_test_add ("/cowscope/graph-view/stolen-storage", Fixture, NULL, fixture_set_up,
              test_stolen_storage, fixture_tear_down);
  g_test_add ("/cowscope/graph-view/empty-graph-says-why", Fixture, NULL, fixture_set_up,
              test_empty_graph_says_why, fixture_tear_down);

  status = g_test_run ();
  g_clear_object (&doc);
  g_unlink (fixture_path);
  g_free (fixture_path);
  return status;
}
