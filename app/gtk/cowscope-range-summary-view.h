/* cowscope-range-summary-view.h — the side panel's Range page: what the
 * timeline's selected range copied, as a table (Perfetto's area
 * selection): one row per operation, tensor or call site (a linked
 * toggle chooses), with its copies, steals, bytes copied and time,
 * sortable by each column.  The rows are computed in a worker thread
 * (CowscopeRangeSummary) whenever the range or the grouping changes; a
 * newer request cancels the one running.
 */
#pragma once

#include <gtk/gtk.h>

#include "cowscope-range-summary.h"
#include "cowscope-view-state.h"

G_BEGIN_DECLS

#define COWSCOPE_TYPE_RANGE_SUMMARY_VIEW (cowscope_range_summary_view_get_type ())
G_DECLARE_FINAL_TYPE (CowscopeRangeSummaryView, cowscope_range_summary_view, COWSCOPE,
                      RANGE_SUMMARY_VIEW, GtkWidget)

GtkWidget *cowscope_range_summary_view_new (void);
void cowscope_range_summary_view_set_view_state (CowscopeRangeSummaryView *self,
                                                 CowscopeViewState *state);
void cowscope_range_summary_view_set_grouping (CowscopeRangeSummaryView *self,
                                               CowscopeRangeGrouping grouping);
CowscopeRangeGrouping cowscope_range_summary_view_get_grouping (CowscopeRangeSummaryView *self);
/* TRUE when no computation is running (property "ready"). */
gboolean cowscope_range_summary_view_get_ready (CowscopeRangeSummaryView *self);
/* The rows as shown (sorted by the chosen column). */
GListModel *cowscope_range_summary_view_get_rows (CowscopeRangeSummaryView *self);
/* What the page says above the table ("Select a range…", totals). */
const char *cowscope_range_summary_view_get_status (CowscopeRangeSummaryView *self);

G_END_DECLS
