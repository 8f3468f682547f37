/* cowscope-explanation-panel.h — "why was this copied?".
 *
 * Follows a CowscopeViewState: when the selected event is a
 * materialization or a simulate-mode violation, loads its explanation in
 * a worker thread and tells its causal chain as a vertical story (the lazy
 * clone and its stack, the write that triggered the copy and its stack,
 * copy or steal and why, the bytes, the lock wait, the CUDA copy), sets
 * the view state's highlights to the objects involved (unless objects
 * were highlighted while it loaded: that choice is newer) and moves the
 * cursor and the visible window to show it.  A stack frame click copies
 * "file:line" to the clipboard and opens the file when it exists here.
 */
#pragma once

#include <gtk/gtk.h>

#include "cowscope-copy-explanation.h"
#include "cowscope-view-state.h"

G_BEGIN_DECLS

#define COWSCOPE_TYPE_EXPLANATION_PANEL (cowscope_explanation_panel_get_type ())
G_DECLARE_FINAL_TYPE (CowscopeExplanationPanel, cowscope_explanation_panel, COWSCOPE,
                      EXPLANATION_PANEL, GtkWidget)

GtkWidget *cowscope_explanation_panel_new (void);

CowscopeViewState *cowscope_explanation_panel_get_view_state (CowscopeExplanationPanel *self);
void cowscope_explanation_panel_set_view_state (CowscopeExplanationPanel *self,
                                                CowscopeViewState *state);

/* The explanation shown, or NULL (none selected, not a copy, or loading). */
CowscopeCopyExplanation *cowscope_explanation_panel_get_explanation (CowscopeExplanationPanel *self);
/* FALSE while an explanation loads. */
gboolean cowscope_explanation_panel_get_ready (CowscopeExplanationPanel *self);
/* The story's text, one step a paragraph (what tests and screen readers read). */
char *cowscope_explanation_panel_dup_text (CowscopeExplanationPanel *self);

G_END_DECLS
