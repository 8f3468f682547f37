/* cowscope-window.h — one Cowscope window: the start page or one session. */
#pragma once

#include <adwaita.h>

#include "cowscope-application.h"
#include "cowscope-call-tree-view.h"
#include "cowscope-session-document.h"
#include "cowscope-summary-page.h"
#include "cowscope-timeline-view.h"
#include "cowscope-view-state.h"

G_BEGIN_DECLS

#define COWSCOPE_TYPE_WINDOW (cowscope_window_get_type ())

G_DECLARE_FINAL_TYPE (CowscopeWindow, cowscope_window, COWSCOPE, WINDOW, AdwApplicationWindow)

CowscopeWindow *cowscope_window_new              (CowscopeApplication *application);
void            cowscope_window_open             (CowscopeWindow      *self,
                                                  GFile               *file);
GFile          *cowscope_window_get_file         (CowscopeWindow      *self);
gboolean        cowscope_window_is_empty         (CowscopeWindow      *self);
void            cowscope_window_set_recording_page (CowscopeWindow    *self,
                                                    GtkWidget         *page);
void            cowscope_window_show_recorded    (CowscopeWindow      *self,
                                                  GFile               *file,
                                                  CowscopeSessionDocument *document,
                                                  const GError        *error);
void            cowscope_window_add_toast        (CowscopeWindow      *self,
                                                  const char          *message);
const char     *cowscope_window_get_visible_page (CowscopeWindow      *self);
const char     *cowscope_window_get_error_title  (CowscopeWindow      *self);
const char     *cowscope_window_get_error_description (CowscopeWindow *self);
void            cowscope_window_show_error_page  (CowscopeWindow      *self,
                                                  const char          *title,
                                                  const char          *description);
gboolean        cowscope_window_is_loading       (CowscopeWindow      *self);
CowscopeViewState *cowscope_window_get_view_state (CowscopeWindow     *self);
CowscopeTimelineView *cowscope_window_get_timeline_view (CowscopeWindow *self);
const char     *cowscope_window_get_visible_view (CowscopeWindow      *self);
CowscopeSummaryPage *cowscope_window_get_summary_page (CowscopeWindow *self);
CowscopeCallTreeView *cowscope_window_get_call_tree_view (CowscopeWindow *self);

G_END_DECLS
