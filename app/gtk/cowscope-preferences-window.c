/* cowscope-preferences-window.c — preferences, each bound to a GSettings
 * key: changes apply at once and persist; there is no Apply button. */
#include "cowscope-config.h"

#include <glib/gi18n.h>

#include "cowscope-preferences-window.h"

struct _CowscopePreferencesWindow
{
  AdwPreferencesWindow  parent_instance;

  /* Template children */
  GtkWidget            *cuda_switch;
  AdwComboRow          *ring_policy_row;
  GtkWidget            *counters_switch;
  GtkWidget            *lane_height_spin;
  GtkWidget            *recent_limit_spin;

  GSettings            *settings;
};

G_DEFINE_FINAL_TYPE (CowscopePreferencesWindow, cowscope_preferences_window, ADW_TYPE_PREFERENCES_WINDOW)

enum {
  PROP_0,
  PROP_SETTINGS,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

/* The ring policy nicks, in the combo row's order. */
static const char * const ring_policies[] = { "drop", "block" };

/* GSettings → combo row: the enum nick's index (0 for unknown nicks). */
static gboolean
ring_policy_get_mapping (GValue   *value,
                         GVariant *variant,
                         gpointer  user_data)
{
  const char *nick = g_variant_get_string (variant, NULL);

  for (guint i = 0; i < G_N_ELEMENTS (ring_policies); i++)
    {
      if (g_strcmp0 (nick, ring_policies[i]) == 0)
        {
          g_value_set_uint (value, i);
          return TRUE;
        }
    }
  g_value_set_uint (value, 0);
  return TRUE;
}

/* Combo row → GSettings: the nick at the selected index (NULL: refused). */
static GVariant *
ring_policy_set_mapping (const GValue       *value,
                         const GVariantType *expected_type,
                         gpointer            user_data)
{
  guint index = g_value_get_uint (value);

  if (index >= G_N_ELEMENTS (ring_policies))
    return NULL;
  return g_variant_new_string (ring_policies[index]);
}

/* prefs.clear-recent: empties the recent sessions list. */
static void
clear_recent_activated (GtkWidget  *widget,
                        const char *action_name,
                        GVariant   *parameter)
{
  CowscopePreferencesWindow *self = COWSCOPE_PREFERENCES_WINDOW (widget);

  g_settings_reset (self->settings, "recent-sessions");
  adw_preferences_window_add_toast (ADW_PREFERENCES_WINDOW (self),
                                    adw_toast_new (_("Recent sessions forgotten")));
}

/* Binds every control to its key (called once, when settings is set). */
static void
bind_settings (CowscopePreferencesWindow *self)
{
  g_settings_bind (self->settings, "launch-cuda-tracing", self->cuda_switch, "active",
                   G_SETTINGS_BIND_DEFAULT);
  g_settings_bind_with_mapping (self->settings, "launch-ring-policy", self->ring_policy_row, "selected",
                                G_SETTINGS_BIND_DEFAULT, ring_policy_get_mapping,
                                ring_policy_set_mapping, NULL, NULL);
  g_settings_bind (self->settings, "timeline-show-counters", self->counters_switch, "active",
                   G_SETTINGS_BIND_DEFAULT);
  g_settings_bind (self->settings, "timeline-lane-height", self->lane_height_spin, "value",
                   G_SETTINGS_BIND_DEFAULT);
  g_settings_bind (self->settings, "recent-sessions-limit", self->recent_limit_spin, "value",
                   G_SETTINGS_BIND_DEFAULT);
}

static void
cowscope_preferences_window_dispose (GObject *object)
{
  CowscopePreferencesWindow *self = COWSCOPE_PREFERENCES_WINDOW (object);

  gtk_widget_dispose_template (GTK_WIDGET (self), COWSCOPE_TYPE_PREFERENCES_WINDOW);
  g_clear_object (&self->settings);

  G_OBJECT_CLASS (cowscope_preferences_window_parent_class)->dispose (object);
}

static void
cowscope_preferences_window_get_property (GObject    *object,
                                          guint       prop_id,
                                          GValue     *value,
                                          GParamSpec *pspec)
{
  CowscopePreferencesWindow *self = COWSCOPE_PREFERENCES_WINDOW (object);

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
cowscope_preferences_window_set_property (GObject      *object,
                                          guint         prop_id,
                                          const GValue *value,
                                          GParamSpec   *pspec)
{
  CowscopePreferencesWindow *self = COWSCOPE_PREFERENCES_WINDOW (object);

  switch (prop_id)
    {
    case PROP_SETTINGS:
      self->settings = g_value_dup_object (value);
      if (self->settings != NULL)
        bind_settings (self);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
cowscope_preferences_window_class_init (CowscopePreferencesWindowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = cowscope_preferences_window_dispose;
  object_class->get_property = cowscope_preferences_window_get_property;
  object_class->set_property = cowscope_preferences_window_set_property;

  /**
   * CowscopePreferencesWindow:settings:
   *
   * The application settings the controls are bound to (construct-only).
   */
  properties[PROP_SETTINGS] =
    g_param_spec_object ("settings", NULL, NULL, G_TYPE_SETTINGS,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/org/cowscope/Cowscope/cowscope-preferences-window.ui");
  gtk_widget_class_bind_template_child (widget_class, CowscopePreferencesWindow, cuda_switch);
  gtk_widget_class_bind_template_child (widget_class, CowscopePreferencesWindow, ring_policy_row);
  gtk_widget_class_bind_template_child (widget_class, CowscopePreferencesWindow, counters_switch);
  gtk_widget_class_bind_template_child (widget_class, CowscopePreferencesWindow, lane_height_spin);
  gtk_widget_class_bind_template_child (widget_class, CowscopePreferencesWindow, recent_limit_spin);

  gtk_widget_class_install_action (widget_class, "prefs.clear-recent", NULL, clear_recent_activated);
}

static void
cowscope_preferences_window_init (CowscopePreferencesWindow *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
}

/**
 * cowscope_preferences_window_new:
 * @transient_for: (nullable): the window it belongs to
 * @settings: the application settings
 *
 * Returns: (transfer none): a new modal preferences window, bound to
 *   @settings; present it.
 */
GtkWidget *
cowscope_preferences_window_new (GtkWindow *transient_for,
                                 GSettings *settings)
{
  g_return_val_if_fail (G_IS_SETTINGS (settings), NULL);

  return g_object_new (COWSCOPE_TYPE_PREFERENCES_WINDOW,
                       "transient-for", transient_for,
                       "modal", TRUE,
                       "settings", settings,
                       NULL);
}
