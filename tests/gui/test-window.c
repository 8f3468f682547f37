/* test-window.c — the cowscope window under a virtual display, driven
 * through its actions: start page, primary menu and accelerators, every
 * kind of bad file, a valid session, and a screenshot of the start page.
 */
#include <adwaita.h>
#include <glib/gstdio.h>
#include <math.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include "gui-test-support.h"
#include "cowscope-application.h"
#include "cowscope-start-page.h"
#include "cowscope-window.h"

#include "cowscope-format-schema.h"
#include "cowscope-format-sqlite.h"

static CowscopeApplication *app;
static char *tmp_dir;



/* True once the window no longer loads a file. */
static gboolean
window_idle (gpointer data)
{
  return !cowscope_window_is_loading (data);
}

/* Returns the path of a file named @name in the test's directory. */
static char *
fixture_path (const char *name)
{
  return g_build_filename (tmp_dir, name, NULL);
}

/* Runs @sql on a new SQLite database at @name; returns its path. */
static char *
make_database (const char *name,
               const char *sql)
{
  char *path = fixture_path (name);
  sqlite3 *db = NULL;
  char *errmsg = NULL;

  g_unlink (path);
  g_assert_cmpint (sqlite3_open (path, &db), ==, SQLITE_OK);
  if (sqlite3_exec (db, sql, NULL, NULL, &errmsg) != SQLITE_OK)
    g_error ("%s: %s", name, errmsg);
  sqlite3_close (db);
  return path;
}

/* Returns the path of a valid, finalized session (real schema). */
static char *
make_session (const char *name)
{
  /* This build's schema, and meta saying so: a session that opens as it
   * is, not through an upgraded copy (which derives meta again). */
  g_autofree char *versions = g_strdup_printf ("('schema_version', '%d'), ('index_format', '%d')",
                                               cowscope_format_schema_version (),
                                               COWSCOPE_FORMAT_INDEX_VERSION);
  g_autofree char *sql =
    g_strconcat (cowscope_format_schema_sql (),
                 "INSERT OR REPLACE INTO meta (key, value) VALUES"
                 " ('format', 'cowscope-session'), ", versions, ","
                 " ('command', 'cowscope-demo all'), ('program', 'cowscope-demo'),"
                 " ('created_utc', '2026-11-22T03:00:00Z'), ('events', '1234'),"
                 " ('target_end', 'exited'), ('exit_status', '0'), ('dropped', '0'),"
                 " ('gpu_tracing', 'off'), ('finalized', '1');",
                 NULL);

  return make_database (name, sql);
}

/* Opens @path in @window through the win.open-uri action. */
static void
open_through_action (CowscopeWindow *window,
                     const char     *path)
{
  g_autoptr(GFile) file = g_file_new_for_path (path);
  g_autofree char *uri = g_file_get_uri (file);

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.open-uri", "s", uri));
}

/* Collects every widget under @widget (depth first) into @out. */
static void
collect_widgets (GtkWidget *widget,
                 GPtrArray *out)
{
  g_ptr_array_add (out, widget);
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    collect_widgets (child, out);
}

/* Returns the first button under @root whose action is @action_name. */
static GtkWidget *
find_button (GtkWidget  *root,
             const char *action_name)
{
  g_autoptr(GPtrArray) all = g_ptr_array_new ();

  collect_widgets (root, all);
  for (guint i = 0; i < all->len; i++)
    {
      GtkWidget *w = all->pdata[i];

      if (GTK_IS_BUTTON (w) && g_strcmp0 (gtk_actionable_get_action_name (GTK_ACTIONABLE (w)), action_name) == 0)
        return w;
    }
  return NULL;
}

/* Returns the first widget of @type under @root. */
static GtkWidget *
find_widget (GtkWidget *root,
             GType      type)
{
  g_autoptr(GPtrArray) all = g_ptr_array_new ();

  collect_widgets (root, all);
  for (guint i = 0; i < all->len; i++)
    if (G_TYPE_CHECK_INSTANCE_TYPE (all->pdata[i], type))
      return all->pdata[i];
  return NULL;
}

/* Adds the "action" attribute of every item of @model (and sections) to @out. */
static void
collect_menu_actions (GMenuModel *model,
                      GPtrArray  *out)
{
  for (int i = 0; i < g_menu_model_get_n_items (model); i++)
    {
      g_autoptr(GMenuModel) section = g_menu_model_get_item_link (model, i, G_MENU_LINK_SECTION);
      char *action = NULL;

      if (g_menu_model_get_item_attribute (model, i, G_MENU_ATTRIBUTE_ACTION, "s", &action))
        g_ptr_array_add (out, action);
      if (section != NULL)
        collect_menu_actions (section, out);
    }
}

/* The start page shows the three buttons, bound to their actions. */
static void
test_start_page_buttons (void)
{
  CowscopeWindow *window = cowscope_window_new (app);
  struct { const char *action; const char *label; } expected[] = {
    { "app.record", "_Record a Program…" },
    { "app.open", "_Open a Session…" },
    { "app.open-demo", "Open the _Demo Session" },
  };
  GtkWidget *start_page;

  gtk_window_present (GTK_WINDOW (window));
  g_assert_cmpstr (cowscope_window_get_visible_page (window), ==, "start");

  start_page = find_widget (GTK_WIDGET (window), COWSCOPE_TYPE_START_PAGE);
  g_assert_nonnull (start_page);

  for (guint i = 0; i < G_N_ELEMENTS (expected); i++)
    {
      GtkWidget *button = find_button (start_page, expected[i].action);

      g_assert_nonnull (button);
      g_assert_cmpstr (gtk_button_get_label (GTK_BUTTON (button)), ==, expected[i].label);
      g_assert_true (gtk_widget_get_visible (button));
      g_assert_true (gtk_widget_get_sensitive (button));
    }

  gtk_window_destroy (GTK_WINDOW (window));
}

/* Application and window actions exist, with their accelerators; export
 * is disabled without a session; the primary menu offers shortcuts,
 * preferences and about. */
static void
test_actions (void)
{
  CowscopeWindow *window = cowscope_window_new (app);
  const char *app_actions[] = { "open", "record", "open-demo", "new-window", "help",
                                "preferences", "about", "quit" };
  struct { const char *action; const char *accel; } accels[] = {
    { "app.open", "<Control>o" }, { "app.record", "<Control>r" },
    { "win.export", "<Control>e" }, { "win.close", "<Control>w" },
    { "app.help", "F1" }, { "app.quit", "<Control>q" },
    { "win.show-help-overlay", "<Control>question" },
  };
  const char *menu_actions[] = { "win.show-help-overlay", "app.preferences", "app.about" };
  g_autoptr(GPtrArray) found = g_ptr_array_new_with_free_func (g_free);
  GtkWidget *menu_button;

  for (guint i = 0; i < G_N_ELEMENTS (app_actions); i++)
    {
      g_assert_true (g_action_group_has_action (G_ACTION_GROUP (app), app_actions[i]));
      g_assert_true (g_action_group_get_action_enabled (G_ACTION_GROUP (app), app_actions[i]));
    }

  g_assert_true (g_action_group_has_action (G_ACTION_GROUP (window), "export"));
  g_assert_false (g_action_group_get_action_enabled (G_ACTION_GROUP (window), "export"));
  g_assert_true (g_action_group_get_action_enabled (G_ACTION_GROUP (window), "close"));
  g_assert_true (g_action_group_get_action_enabled (G_ACTION_GROUP (window), "show-help-overlay"));
  g_assert_nonnull (gtk_application_window_get_help_overlay (GTK_APPLICATION_WINDOW (window)));

  for (guint i = 0; i < G_N_ELEMENTS (accels); i++)
    {
      g_auto(GStrv) set = gtk_application_get_accels_for_action (GTK_APPLICATION (app), accels[i].action);

      g_assert_true (g_strv_contains ((const char * const *) set, accels[i].accel));
    }

  menu_button = find_widget (GTK_WIDGET (window), GTK_TYPE_MENU_BUTTON);
  g_assert_nonnull (menu_button);
  collect_menu_actions (gtk_menu_button_get_menu_model (GTK_MENU_BUTTON (menu_button)), found);
  for (guint i = 0; i < G_N_ELEMENTS (menu_actions); i++)
    {
      gboolean present = FALSE;

      for (guint j = 0; j < found->len; j++)
        present |= g_strcmp0 (found->pdata[j], menu_actions[i]) == 0;
      g_assert_true (present);
    }

  /* Preferences open over the window and bind to the settings. */
  gtk_window_present (GTK_WINDOW (window));
  g_action_group_activate_action (G_ACTION_GROUP (app), "preferences", NULL);
  gui_test_spin (100);
  {
    GListModel *toplevels = gtk_window_get_toplevels ();
    gboolean have_prefs = FALSE;

    for (guint i = 0; i < g_list_model_get_n_items (toplevels) && !have_prefs; i++)
      {
        g_autoptr(GtkWindow) toplevel = g_list_model_get_item (toplevels, i);

        if (ADW_IS_PREFERENCES_WINDOW (toplevel))
          {
            have_prefs = TRUE;
            g_assert_true (gtk_window_get_transient_for (toplevel) == GTK_WINDOW (window));
            gtk_window_destroy (toplevel);
          }
      }
    g_assert_true (have_prefs);
  }

  gtk_window_destroy (GTK_WINDOW (window));
}

/* Each kind of bad file shows its error page; the app keeps running. */
static void
test_open_bad_files (void)
{
  g_autofree char *text = fixture_path ("notes.cowscope");
  g_autofree char *other_db = make_database ("other.cowscope", "CREATE TABLE t (x);");
  g_autofree char *newer = make_database ("newer.cowscope",
                                          "PRAGMA user_version = 5;"
                                          "CREATE TABLE meta (key TEXT PRIMARY KEY, value);"
                                          "INSERT INTO meta VALUES ('format', 'cowscope-session'),"
                                          " ('schema_version', '5');");
  g_autofree char *good = make_session ("to-truncate.cowscope");
  g_autofree char *damaged = fixture_path ("damaged.cowscope");
  g_autofree char *missing = fixture_path ("missing.cowscope");
  g_autofree char *fifo = fixture_path ("fifo.cowscope");
  g_autofree char *bad_value = make_session ("bad-value.cowscope");
  g_autofree char *contents = NULL;
  gsize length = 0;
  struct { const char *path; const char *title; } cases[] = {
    { text, "Not a Cowscope Session" },
    { other_db, "Not a Cowscope Session" },
    { newer, "Recorded by a Newer Cowscope" },
    { damaged, "Damaged Session" },
    { missing, "File Not Found" },
    /* Opening a FIFO would wait for a writer: refused from its stat. */
    { fifo, "Not a Cowscope Session" },
    /* A value no session holds (cowscope-format-check.h). */
    { bad_value, "Damaged Session" },
  };

  g_assert_true (g_file_set_contents (text, "these are my notes\n", -1, NULL));
  g_assert_true (g_file_get_contents (good, &contents, &length, NULL));
  g_assert_cmpuint (length, >, 8192);
  g_assert_true (g_file_set_contents (damaged, contents, 4096, NULL));
  g_unlink (fifo);
  g_assert_cmpint (mkfifo (fifo, 0600), ==, 0);
  {
    sqlite3 *db = NULL;
    g_assert_cmpint (sqlite3_open (bad_value, &db), ==, SQLITE_OK);
    g_assert_cmpint (sqlite3_exec (db, "UPDATE meta SET value = '-3' WHERE key = 'dropped'", NULL,
                                   NULL, NULL), ==, SQLITE_OK);
    sqlite3_close (db);
  }

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      CowscopeWindow *window = cowscope_window_new (app);

      g_test_message ("opening %s", cases[i].path);
      gtk_window_present (GTK_WINDOW (window));
      open_through_action (window, cases[i].path);
      g_assert_true (gui_test_wait_until (window_idle, window, 10));
      g_assert_cmpstr (cowscope_window_get_visible_page (window), ==, "error");
      g_assert_cmpstr (cowscope_window_get_error_title (window), ==, cases[i].title);
      g_assert_null (cowscope_window_get_file (window));
      g_assert_false (g_action_group_get_action_enabled (G_ACTION_GROUP (window), "export"));

      /* Back to the start page, ready for another file. */
      gtk_widget_activate_action (GTK_WIDGET (window), "win.show-start", NULL);
      g_assert_cmpstr (cowscope_window_get_visible_page (window), ==, "start");
      gtk_window_destroy (GTK_WINDOW (window));
    }
}

/* A valid session shows the session page, enables export, joins the
 * recent list; a bad file opened over it is a toast, the session stays. */
static void
test_open_session (void)
{
  g_autofree char *good = make_session ("good.cowscope");
  g_autofree char *text = fixture_path ("not-a-session.cowscope");
  g_autoptr(GFile) bad_file = NULL;
  g_autoptr(GFile) good_file = g_file_new_for_path (good);
  g_autofree char *good_uri = g_file_get_uri (good_file);
  g_auto(GStrv) recent = NULL;
  CowscopeWindow *window = cowscope_window_new (app);

  gtk_window_present (GTK_WINDOW (window));
  open_through_action (window, good);
  g_assert_true (gui_test_wait_until (window_idle, window, 10));
  g_assert_cmpstr (cowscope_window_get_visible_page (window), ==, "session");
  g_assert_true (g_file_equal (cowscope_window_get_file (window), good_file));
  g_assert_true (g_action_group_get_action_enabled (G_ACTION_GROUP (window), "export"));

  recent = g_settings_get_strv (cowscope_application_get_settings (app), "recent-sessions");
  g_assert_cmpstr (recent[0], ==, good_uri);

  g_assert_true (g_file_set_contents (text, "plain text", -1, NULL));
  bad_file = g_file_new_for_path (text);
  cowscope_window_open (window, bad_file);
  gui_test_spin (300);
  g_assert_cmpstr (cowscope_window_get_visible_page (window), ==, "session");
  g_assert_true (g_file_equal (cowscope_window_get_file (window), good_file));

  gtk_window_destroy (GTK_WINDOW (window));
}


/* Renders the start page window to cowscope-start-page.png (in
 * $COWSCOPE_SCREENSHOT_DIR, else the current directory) and checks that
 * it is not blank. */
static void
test_screenshot (void)
{
  CowscopeWindow *window = cowscope_window_new (app);
  g_autoptr(GdkPaintable) paintable = NULL;
  g_autoptr(GtkSnapshot) snapshot = NULL;
  g_autoptr(GskRenderNode) node = NULL;
  g_autofree char *path = NULL;
  const char *dir = g_getenv ("COWSCOPE_SCREENSHOT_DIR");
  cairo_surface_t *surface;
  cairo_t *cr;
  double sum = 0, sum2 = 0, variance;
  int width, height, stride;
  const guint8 *pixels;

  /* The session opened by test_open_session is listed. */
  g_assert_cmpuint (cowscope_start_page_get_n_recent (COWSCOPE_START_PAGE (
                      find_widget (GTK_WIDGET (window), COWSCOPE_TYPE_START_PAGE))), ==, 1);
  gtk_window_set_default_size (GTK_WINDOW (window), 1100, 720);
  gtk_window_present (GTK_WINDOW (window));
  g_assert_true (gui_test_wait_until (gui_test_widget_drawn, window, 10));
  gui_test_spin (500);

  width = gtk_widget_get_width (GTK_WIDGET (window));
  height = gtk_widget_get_height (GTK_WIDGET (window));
  paintable = gtk_widget_paintable_new (GTK_WIDGET (window));
  snapshot = gtk_snapshot_new ();
  gdk_paintable_snapshot (paintable, GDK_SNAPSHOT (snapshot), width, height);
  node = gtk_snapshot_free_to_node (g_steal_pointer (&snapshot));
  g_assert_nonnull (node);

  surface = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, width, height);
  cr = cairo_create (surface);
  cairo_set_source_rgb (cr, 1, 1, 1);
  cairo_paint (cr);
  gsk_render_node_draw (node, cr);
  cairo_destroy (cr);
  cairo_surface_flush (surface);

  path = g_build_filename (dir != NULL ? dir : ".", "cowscope-start-page.png", NULL);
  g_assert_cmpint (cairo_surface_write_to_png (surface, path), ==, CAIRO_STATUS_SUCCESS);
  g_test_message ("screenshot: %s (%dx%d)", path, width, height);

  /* Non-blank: the luminance varies (text, buttons, icon). */
  pixels = cairo_image_surface_get_data (surface);
  stride = cairo_image_surface_get_stride (surface);
  for (int y = 0; y < height; y++)
    for (int x = 0; x < width; x++)
      {
        const guint8 *p = pixels + y * stride + x * 4;
        double lum = 0.2126 * p[2] + 0.7152 * p[1] + 0.0722 * p[0];

        sum += lum;
        sum2 += lum * lum;
      }
  variance = sum2 / (width * height) - pow (sum / (width * height), 2);
  g_test_message ("luminance variance: %.1f", variance);
  g_assert_cmpfloat (variance, >, 20.0);

  cairo_surface_destroy (surface);
  gtk_window_destroy (GTK_WINDOW (window));
}

/* Removes the fixtures and their directory. */
static void
remove_tmp_dir (void)
{
  g_autoptr(GDir) dir = g_dir_open (tmp_dir, 0, NULL);
  const char *name;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *path = g_build_filename (tmp_dir, name, NULL);

      g_unlink (path);
    }
  g_rmdir (tmp_dir);
}

int
main (int   argc,
      char *argv[])
{
  g_autoptr(GError) error = NULL;
  int status;

  gtk_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  adw_init ();
  /* make_database() opens sessions with plain sqlite3_open(): their
   * `events` needs the format's module. */
  cowscope_format_register_everywhere ();

  tmp_dir = g_dir_make_tmp ("cowscope-gui-XXXXXX", &error);
  g_assert_no_error (error);

  app = cowscope_application_new ();
  g_application_set_flags (G_APPLICATION (app), G_APPLICATION_HANDLES_OPEN | G_APPLICATION_NON_UNIQUE);
  g_assert_true (g_application_register (G_APPLICATION (app), NULL, &error));
  g_assert_no_error (error);

  g_test_add_func ("/cowscope/window/start-page-buttons", test_start_page_buttons);
  g_test_add_func ("/cowscope/window/actions", test_actions);
  g_test_add_func ("/cowscope/window/open-bad-files", test_open_bad_files);
  g_test_add_func ("/cowscope/window/open-session", test_open_session);
  g_test_add_func ("/cowscope/window/screenshot", test_screenshot);

  status = g_test_run ();

  g_object_unref (app);
  remove_tmp_dir ();
  g_free (tmp_dir);
  return status;
}
