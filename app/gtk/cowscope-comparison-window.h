/* cowscope-comparison-window.h — two sessions compared: both sides of the
 * summary and the copy call sites with their change, more copying in red
 * and less in green (the model is app/session/cowscope-comparison.h).
 *
 * A page of its own for now: when the application has a copy call tree,
 * the call sites belong in it, coloured the same way. */
#pragma once

#include <adwaita.h>

#include "cowscope-comparison.h"

G_BEGIN_DECLS

#define COWSCOPE_TYPE_COMPARISON_WINDOW (cowscope_comparison_window_get_type ())
G_DECLARE_FINAL_TYPE (CowscopeComparisonWindow, cowscope_comparison_window, COWSCOPE,
                      COMPARISON_WINDOW, AdwWindow)

/* A window comparing the session @before with @after, loading both in a
 * worker thread; transient for @parent (may be NULL). */
CowscopeComparisonWindow *cowscope_comparison_window_new (GtkWindow *parent, GFile *before,
                                                          GFile *after);

/* The comparison once loaded, else NULL. */
CowscopeComparison *cowscope_comparison_window_get_comparison (CowscopeComparisonWindow *self);

/* "loading", "comparison" or "error": the page shown. */
const char *cowscope_comparison_window_get_visible_page (CowscopeComparisonWindow *self);

G_END_DECLS
