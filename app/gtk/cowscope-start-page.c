/* cowscope-start-page.c — the welcome page of an empty window.
 *
 * Three buttons bound to actions (app.record, app.open, app.open-demo)
 * and the recent sessions from the "recent-sessions" setting, each row
 * activating win.open-uri.  The list follows the setting as it changes.
 */
#include "cowscope-config.h"

#include <glib/gi18n.h>
#include <string.h>

#include "cowscope-start-page.h"

struct _CowscopeStartPage
{
  AdwBin       parent_instance;

  /* Template children */
  AdwStatusPage *status_page;
  GtkWidget    *recent_group;
  GtkListBox   *recent_list;

  GSettings    *settings;
  guint         n_recent;
};

G_DEFINE_FINAL_TYPE (CowscopeStartPage, cowscope_start_page, ADW_TYPE_BIN)

enum {
  PROP_0,
  PROP_SETTINGS,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

/* Returns @path with the home directory shown as "~" (for row subtitles). */
static char *
pretty_dir (const char *path)
{
  const char *home = g_get_home_dir ();
  gsize len = strlen (home);

  if (g_str_has_prefix (path, home) && (path[len] == '/' || path[len] == '\0') && len > 1)
    return g_strconcat ("~", path + len, NULL);
  return g_strdup (path);
}

/* Returns a new row for the recent session @uri: name, folder, and the
 * win.open-uri action. */
static GtkWidget *
create_recent_row (const char *uri)
{
  g_autoptr(GFile) file = g_file_new_for_uri (uri);
  g_autoptr(GFile) parent = g_file_get_parent (file);
  g_autofree char *name = g_file_get_basename (file);
  g_autofree char *parent_path = parent != NULL ? g_file_get_path (parent) : NULL;
  g_autofree char *dir = parent_path != NULL ? pretty_dir (parent_path) : g_file_get_parse_name (file);
  GtkWidget *row = adw_action_row_new ();

  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), name != NULL ? name : uri);
  adw_preferences_row_set_use_underline (ADW_PREFERENCES_ROW (row), FALSE);
  adw_action_row_set_subtitle (ADW_ACTION_ROW (row), dir);
  adw_action_row_add_suffix (ADW_ACTION_ROW (row), gtk_image_new_from_icon_name ("go-next-symbolic"));
  gtk_list_box_row_set_activatable (GTK_LIST_BOX_ROW (row), TRUE);
  gtk_actionable_set_action_name (GTK_ACTIONABLE (row), "win.open-uri");
  gtk_actionable_set_action_target_value (GTK_ACTIONABLE (row), g_variant_new_string (uri));
  gtk_widget_set_tooltip_text (row, dir);
  return row;
}

/* Rebuilds the recent list from the setting; hides it when empty. */
static void
reload_recent (CowscopeStartPage *self)
{
  g_auto(GStrv) uris = NULL;
  GtkWidget *child;

  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self->recent_list))) != NULL)
    gtk_list_box_remove (self->recent_list, child);
  self->n_recent = 0;

  if (self->settings != NULL)
    {
      uris = g_settings_get_strv (self->settings, "recent-sessions");
      for (guint i = 0; uris[i] != NULL; i++)
        {
          if (!g_utf8_validate (uris[i], -1, NULL) || uris[i][0] == '\0')
            continue;
          gtk_list_box_append (self->recent_list, create_recent_row (uris[i]));
          self->n_recent++;
        }
    }

  gtk_widget_set_visible (self->recent_group, self->n_recent > 0);
}

static void
cowscope_start_page_dispose (GObject *object)
{
  CowscopeStartPage *self = COWSCOPE_START_PAGE (object);

  if (self->settings != NULL)
    g_signal_handlers_disconnect_by_data (self->settings, self);
  g_clear_object (&self->settings);

  /* No gtk_widget_dispose_template(): the template's root is AdwBin's
   * child, which AdwBin unparents itself. */

  G_OBJECT_CLASS (cowscope_start_page_parent_class)->dispose (object);
}

static void
cowscope_start_page_get_property (GObject    *object,
                                  guint       prop_id,
                                  GValue     *value,
                                  GParamSpec *pspec)
{
  CowscopeStartPage *self = COWSCOPE_START_PAGE (object);

  switch (prop_id)
    {
    case PROP_SETTINGS:
      g_value_set_object (value, self->settings);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
cowscope_start_page_set_property (GObject      *object,
                                  guint         prop_id,
                                  const GValue *value,
                                  GParamSpec   *pspec)
{
  CowscopeStartPage *self = COWSCOPE_START_PAGE (object);

  switch (prop_id)
    {
    case PROP_SETTINGS:
      cowscope_start_page_set_settings (self, g_value_get_object (value));
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
cowscope_start_page_class_init (CowscopeStartPageClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = cowscope_start_page_dispose;
  object_class->get_property = cowscope_start_page_get_property;
  object_class->set_property = cowscope_start_page_set_property;

  /**
   * CowscopeStartPage:settings:
   *
   * The application settings whose "recent-sessions" the page lists.
   */
  properties[PROP_SETTINGS] =
    g_param_spec_object ("settings", NULL, NULL, G_TYPE_SETTINGS,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  gtk_widget_class_set_template_from_resource (widget_class, "/org/cowscope/Cowscope/cowscope-start-page.ui");
  gtk_widget_class_bind_template_child (widget_class, CowscopeStartPage, status_page);
  gtk_widget_class_bind_template_child (widget_class, CowscopeStartPage, recent_group);
  gtk_widget_class_bind_template_child (widget_class, CowscopeStartPage, recent_list);
}

static void
cowscope_start_page_init (CowscopeStartPage *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
}

/**
 * cowscope_start_page_get_settings:
 *
 * Returns: (transfer none) (nullable): the settings listed.
 */
GSettings *
cowscope_start_page_get_settings (CowscopeStartPage *self)
{
  g_return_val_if_fail (COWSCOPE_IS_START_PAGE (self), NULL);

  return self->settings;
}

/**
 * cowscope_start_page_set_settings:
 *
 * Lists @settings' recent sessions from now on, following its changes.
 */
void
cowscope_start_page_set_settings (CowscopeStartPage *self,
                                  GSettings         *settings)
{
  g_return_if_fail (COWSCOPE_IS_START_PAGE (self));
  g_return_if_fail (settings == NULL || G_IS_SETTINGS (settings));

  if (self->settings == settings)
    return;

  if (self->settings != NULL)
    g_signal_handlers_disconnect_by_data (self->settings, self);
  g_set_object (&self->settings, settings);
  if (settings != NULL)
    g_signal_connect_swapped (settings, "changed::recent-sessions",
                              G_CALLBACK (reload_recent), self);

  reload_recent (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SETTINGS]);
}

/**
 * cowscope_start_page_get_n_recent:
 *
 * Returns: the number of recent sessions listed.
 */
guint
cowscope_start_page_get_n_recent (CowscopeStartPage *self)
{
  g_return_val_if_fail (COWSCOPE_IS_START_PAGE (self), 0);

  return self->n_recent;
}
