/* cowscope-view-state.h — what a session window is looking at.
 *
 * One object per session window that every view binds to (Sysprof's
 * pattern): the document, the visible time window of the timeline, the
 * cursor instant the sharing graph shows, the selected time range, the
 * selected event and the objects to highlight.  Views change it through
 * the setters and follow it through property notifications; no view talks
 * to another directly.  Main thread only.
 */
#pragma once

#include <glib-object.h>

#include "cowscope-copy-explanation.h"
#include "cowscope-session-document.h"

G_BEGIN_DECLS

#define COWSCOPE_TYPE_VIEW_STATE (cowscope_view_state_get_type ())
G_DECLARE_FINAL_TYPE (CowscopeViewState, cowscope_view_state, COWSCOPE, VIEW_STATE, GObject)

CowscopeViewState *cowscope_view_state_new (CowscopeSessionDocument *document);

CowscopeSessionDocument *cowscope_view_state_get_document (CowscopeViewState *self);

/* The timeline's visible window [start, end), in session ns.  Clamped to
 * the session's bounds; at least 1 µs wide. */
gint64 cowscope_view_state_get_visible_start (CowscopeViewState *self);
gint64 cowscope_view_state_get_visible_end (CowscopeViewState *self);
void cowscope_view_state_set_visible (CowscopeViewState *self, gint64 start, gint64 end);

/* The instant the sharing graph shows (the timeline's cursor). */
gint64 cowscope_view_state_get_cursor (CowscopeViewState *self);
void cowscope_view_state_set_cursor (CowscopeViewState *self, gint64 t);

/* A selected time range, or start = end = -1 for none. */
gint64 cowscope_view_state_get_range_start (CowscopeViewState *self);
gint64 cowscope_view_state_get_range_end (CowscopeViewState *self);
void cowscope_view_state_set_range (CowscopeViewState *self, gint64 start, gint64 end);

/* The selected event (events.seq), or -1. */
gint64 cowscope_view_state_get_selected_seq (CowscopeViewState *self);
void cowscope_view_state_set_selected_seq (CowscopeViewState *self, gint64 seq);

/* Objects to highlight in every view (from an explanation); copied. */
const CowscopeObjectRef *cowscope_view_state_get_highlights (CowscopeViewState *self,
                                                            guint *n_refs);
void cowscope_view_state_set_highlights (CowscopeViewState *self,
                                         const CowscopeObjectRef *refs, guint n_refs);
gboolean cowscope_view_state_is_highlighted (CowscopeViewState *self, guint32 pid,
                                             guint64 id);

G_END_DECLS
