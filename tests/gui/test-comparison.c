/* test-comparison.c — the comparison window on two generated sessions,
 * the second without one of the first's copies: the summary shows both
 * sides, the call site that copies less is listed with its change in the
 * colour of better and a minus sign, the bytes saved that grew too; a session compared with itself says
 * nothing changed; a missing file gives the error page.  Screenshots at
 * the default and the minimum size, light and dark. */
#include <adwaita.h>
#include <glib/gstdio.h>
#include <sqlite3.h>
#include <string.h>

#include "gui-test-support.h"
#include "cowscope-application.h"
#include "cowscope-comparison-window.h"
#include "session-fixture.h"

static char *before_path, *after_path;
static SessionFixtureInfo info;

static gboolean
loaded (gpointer data)
{
  const char *page = cowscope_comparison_window_get_visible_page (data);
  return g_strcmp0 (page, "loading") != 0;
}

static CowscopeComparisonWindow *
open_comparison (const char *before, const char *after)
{
  g_autoptr (GFile) b = g_file_new_for_path (before);
  g_autoptr (GFile) a = g_file_new_for_path (after);
  CowscopeComparisonWindow *window = cowscope_comparison_window_new (NULL, b, a);

  gtk_window_present (GTK_WINDOW (window));
  g_assert_true (gui_test_wait_until (loaded, window, 60));
  return window;
}

/* Labels under @root that carry the CSS class @css_class. */
static void
collect_labels (GtkWidget *root, const char *css_class, GPtrArray *found)
{
  if (GTK_IS_LABEL (root) && gtk_widget_has_css_class (root, css_class)
      && gtk_widget_get_mapped (root))
    g_ptr_array_add (found, root);
  for (GtkWidget *c = gtk_widget_get_first_child (root); c != NULL;
       c = gtk_widget_get_next_sibling (c))
    collect_labels (c, css_class, found);
}

static void
test_removed_copy (void)
{
  CowscopeComparisonWindow *window = open_comparison (before_path, after_path);
  CowscopeComparison *comparison = cowscope_comparison_window_get_comparison (window);
  GListModel *totals, *sites;
  g_autoptr (CowscopeComparisonRow) copies = NULL;
  g_autoptr (CowscopeComparisonRow) site = NULL;
  g_autoptr (GPtrArray) better = g_ptr_array_new ();
  g_autoptr (GPtrArray) worse = g_ptr_array_new ();
  AdwStyleManager *style = adw_style_manager_get_default ();

  g_assert_cmpstr (cowscope_comparison_window_get_visible_page (window), ==, "comparison");
  g_assert_nonnull (comparison);
  g_assert_false (cowscope_comparison_is_unchanged (comparison));

  /* Both sides of the summary, the copies one fewer. */
  totals = cowscope_comparison_get_totals (comparison);
  g_assert_cmpuint (g_list_model_get_n_items (totals), ==, 9);
  copies = g_list_model_get_item (totals, 0);
  g_assert_cmpstr (cowscope_comparison_row_get_label (copies), ==, "Copies");
  g_assert_cmpint (cowscope_comparison_row_get_change (copies), ==, -1);
  g_assert_cmpint (cowscope_comparison_row_get_before (copies), >, 0);

  /* The call site that lost the copy, by exactly its bytes. */
  sites = cowscope_comparison_get_call_sites (comparison);
  g_assert_cmpuint (g_list_model_get_n_items (sites), ==, 1);
  site = g_list_model_get_item (sites, 0);
  g_assert_cmpint (cowscope_comparison_row_get_change (site), ==, -(gint64) info.copy_nbytes);
  g_assert_cmpint (cowscope_comparison_row_get_after_count (site) + 1, ==,
                   cowscope_comparison_row_get_before_count (site));

  /* What a person sees: fewer copies and bytes copied, at the call site
   * too, with a minus sign, and more bytes saved with a plus, all in the
   * colour of better; nothing worse. */
  gtk_window_set_default_size (GTK_WINDOW (window), 900, 640);
  gui_test_spin (300);
  collect_labels (GTK_WIDGET (window), "comparison-better", better);
  collect_labels (GTK_WIDGET (window), "comparison-worse", worse);
  g_assert_cmpuint (better->len, ==, 4);
  g_assert_cmpuint (worse->len, ==, 0);
  {
    guint minus = 0, plus = 0;
    for (guint i = 0; i < better->len; i++)
      {
        const char *text = gtk_label_get_text (better->pdata[i]);
        minus += g_str_has_prefix (text, "−");
        plus += g_str_has_prefix (text, "+");
      }
    g_assert_cmpuint (minus, ==, 3);
    g_assert_cmpuint (plus, ==, 1);
  }

  gui_test_write_screenshot (GTK_WIDGET (window), "comparison-light.png");
  adw_style_manager_set_color_scheme (style, ADW_COLOR_SCHEME_FORCE_DARK);
  gui_test_spin (300);
  gui_test_write_screenshot (GTK_WIDGET (window), "comparison-dark.png");
  gtk_window_set_default_size (GTK_WINDOW (window), 360, 360);
  gui_test_spin (500);
  gui_test_write_screenshot (GTK_WIDGET (window), "comparison-dark-minimum.png");
  adw_style_manager_set_color_scheme (style, ADW_COLOR_SCHEME_FORCE_LIGHT);
  gui_test_spin (300);
  gui_test_write_screenshot (GTK_WIDGET (window), "comparison-light-minimum.png");
  gtk_window_destroy (GTK_WINDOW (window));
}

static void
test_unchanged (void)
{
  CowscopeComparisonWindow *window = open_comparison (before_path, before_path);
  CowscopeComparison *comparison = cowscope_comparison_window_get_comparison (window);
  g_autoptr (GPtrArray) changes = g_ptr_array_new ();

  g_assert_true (cowscope_comparison_is_unchanged (comparison));
  g_assert_cmpuint (g_list_model_get_n_items (cowscope_comparison_get_call_sites (comparison)),
                    ==, 0);
  gui_test_spin (300);
  collect_labels (GTK_WIDGET (window), "comparison-better", changes);
  collect_labels (GTK_WIDGET (window), "comparison-worse", changes);
  g_assert_cmpuint (changes->len, ==, 0);
  gtk_window_destroy (GTK_WINDOW (window));
}

static void
test_missing_file (void)
{
  g_autofree char *missing = g_strconcat (before_path, ".missing", NULL);
  CowscopeComparisonWindow *window = open_comparison (missing, after_path);

  g_assert_cmpstr (cowscope_comparison_window_get_visible_page (window), ==, "error");
  g_assert_null (cowscope_comparison_window_get_comparison (window));
  gtk_window_destroy (GTK_WINDOW (window));
}

int
main (int argc, char **argv)
{
  g_autoptr (GError) error = NULL;
  SessionFixtureOptions options;
  const char *dir = g_getenv ("COWSCOPE_SCREENSHOT_DIR");
  g_autofree char *before_base = g_strdup_printf ("test-comparison-%d-before.cowscope",
                                                  (int) getpid ());
  g_autofree char *after_base = g_strdup_printf ("test-comparison-%d-after.cowscope",
                                                 (int) getpid ());
  g_autofree char *contents = NULL;
  g_autofree char *sql = NULL;
  gsize length = 0;
  sqlite3 *db = NULL;
  int status;

  gtk_test_init (&argc, &argv, NULL);
  adw_init ();
  /* The application loads the style sheet (the comparison's colours). */
  g_autoptr (CowscopeApplication) app = cowscope_application_new ();
  g_application_register (G_APPLICATION (app), NULL, NULL);

  before_path = g_build_filename (dir != NULL ? dir : g_get_tmp_dir (), before_base, NULL);
  after_path = g_build_filename (dir != NULL ? dir : g_get_tmp_dir (), after_base, NULL);
  session_fixture_options_small (&options);
  if (!session_fixture_generate (before_path, &options, &info, &error))
    g_error ("cannot generate the fixture: %s", error->message);
  /* AFTER: the same session without the known copy. */
  g_assert_true (g_file_get_contents (before_path, &contents, &length, NULL));
  g_assert_true (g_file_set_contents (after_path, contents, length, NULL));
  g_assert_cmpint (sqlite3_open (after_path, &db), ==, SQLITE_OK);
  sql = g_strdup_printf ("DELETE FROM materializations WHERE seq = %" G_GINT64_FORMAT,
                         info.copy_seq);
  g_assert_cmpint (sqlite3_exec (db, sql, NULL, NULL, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_changes (db), ==, 1);
  sqlite3_close (db);

  g_test_add_func ("/cowscope/comparison/removed-copy", test_removed_copy);
  g_test_add_func ("/cowscope/comparison/unchanged", test_unchanged);
  g_test_add_func ("/cowscope/comparison/missing-file", test_missing_file);
  status = g_test_run ();
  g_unlink (before_path);
  g_unlink (after_path);
  g_free (before_path);
  g_free (after_path);
  return status;
}
