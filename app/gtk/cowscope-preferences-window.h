/* cowscope-preferences-window.h — preferences bound to GSettings. */
#pragma once

#include <adwaita.h>

G_BEGIN_DECLS

#define COWSCOPE_TYPE_PREFERENCES_WINDOW (cowscope_preferences_window_get_type ())

G_DECLARE_FINAL_TYPE (CowscopePreferencesWindow, cowscope_preferences_window, COWSCOPE, PREFERENCES_WINDOW, AdwPreferencesWindow)

GtkWidget *cowscope_preferences_window_new (GtkWindow *transient_for,
                                            GSettings *settings);

G_END_DECLS
