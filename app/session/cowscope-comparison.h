/* cowscope-comparison.h — two sessions compared, as the application
 * shows them: both sides of the summary and the copy call sites with
 * their change, as list models of rows (cowscope-session-diff.h does the
 * comparing; this is its form for list views).
 */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

#define COWSCOPE_TYPE_COMPARISON_ROW (cowscope_comparison_row_get_type ())
G_DECLARE_FINAL_TYPE (CowscopeComparisonRow, cowscope_comparison_row, COWSCOPE,
                      COMPARISON_ROW, GObject)

/* What the row is: a total ("Bytes copied") or a call site
 * ("update_weights (train.c:91)"). */
const char *cowscope_comparison_row_get_label (CowscopeComparisonRow *self);
/* A call site's "new", "gone" or "changed"; NULL for totals. */
const char *cowscope_comparison_row_get_status (CowscopeComparisonRow *self);
gint64 cowscope_comparison_row_get_before (CowscopeComparisonRow *self);
gint64 cowscope_comparison_row_get_after (CowscopeComparisonRow *self);
/* After − before. */
gint64 cowscope_comparison_row_get_change (CowscopeComparisonRow *self);
/* TRUE when more is better (bytes saved); for everything else more
 * copying is worse. */
gboolean cowscope_comparison_row_more_is_better (CowscopeComparisonRow *self);
/* TRUE when the values are bytes (else counts). */
gboolean cowscope_comparison_row_is_bytes (CowscopeComparisonRow *self);
/* Call sites: copies before and after (the values are their bytes). */
gint64 cowscope_comparison_row_get_before_count (CowscopeComparisonRow *self);
gint64 cowscope_comparison_row_get_after_count (CowscopeComparisonRow *self);

#define COWSCOPE_TYPE_COMPARISON (cowscope_comparison_get_type ())
G_DECLARE_FINAL_TYPE (CowscopeComparison, cowscope_comparison, COWSCOPE, COMPARISON, GObject)

/* Opens and compares @before and @after (cowscope_session_diff_build()).
 * NULL with @error (COWSCOPE_SESSION_ERROR, naming the file) when either
 * cannot be read.  Reads both files: call it off the main thread, or use
 * the async form. */
CowscopeComparison *cowscope_comparison_load (const char *before, const char *after,
                                              GCancellable *cancellable, GError **error);
void cowscope_comparison_load_async (const char *before, const char *after,
                                     GCancellable *cancellable, GAsyncReadyCallback callback,
                                     gpointer user_data);
CowscopeComparison *cowscope_comparison_load_finish (GAsyncResult *result, GError **error);

const char *cowscope_comparison_get_before_path (CowscopeComparison *self);
const char *cowscope_comparison_get_after_path (CowscopeComparison *self);

/* Both sides of the summary: copies, bytes copied, steals, bytes stolen,
 * lazy clones, bytes shared, bytes saved, eager fallbacks, warnings, every
 * one whether it changed or not (CowscopeComparisonRow). */
GListModel *cowscope_comparison_get_totals (CowscopeComparison *self);

/* The call sites whose copies or steals changed, largest change of bytes
 * first (CowscopeComparisonRow: bytes copied and stolen before and
 * after, copies and steals as the counts). */
GListModel *cowscope_comparison_get_call_sites (CowscopeComparison *self);

/* TRUE when nothing the comparison looks at changed. */
gboolean cowscope_comparison_is_unchanged (CowscopeComparison *self);

G_END_DECLS
