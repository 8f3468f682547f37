/* cowscope-window.h — one Cowscope window: the start page or one session. */
#pragma once

#include <adwaita.h>

#include "cowscope-application.h"

G_BEGIN_DECLS

#define COWSCOPE_TYPE_WINDOW (cowscope_window_get_type ())

G_DECLARE_FINAL_TYPE (CowscopeWindow, cowscope_window, COWSCOPE, WINDOW, AdwApplicationWindow)

CowscopeWindow *cowscope_window_new              (CowscopeApplication *application);
void            cowscope_window_open             (CowscopeWindow      *self,
                                                  GFile               *file);
GFile          *cowscope_window_get_file         (CowscopeWindow      *self);
gboolean        cowscope_window_is_empty         (CowscopeWindow      *self);
void            cowscope_window_add_toast        (CowscopeWindow      *self,
                                                  const char          *message);
const char     *cowscope_window_get_visible_page (CowscopeWindow      *self);
const char     *cowscope_window_get_error_title  (CowscopeWindow      *self);

G_END_DECLS
