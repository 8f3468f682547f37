/* cowscope-summary-page.h — what a session window opens on: the session's
 * totals, its top call sites and operations, and its warnings.
 *
 * The figures are the report's (cowscope-report.h, built off the main
 * thread), so the page and `cowscope-cli report` always agree.  Each item
 * leads somewhere: a call site to the call tree ("call-site-activated",
 * which the window routes), an operation to its largest copy and a
 * warning to its explanation (selected in the view state, then the
 * timeline shown through the win.show-view action). */
#pragma once

#include <gtk/gtk.h>

#include "cowscope-report-reader.h"
#include "cowscope-view-state.h"

G_BEGIN_DECLS

#define COWSCOPE_TYPE_SUMMARY_PAGE (cowscope_summary_page_get_type ())
G_DECLARE_FINAL_TYPE (CowscopeSummaryPage, cowscope_summary_page, COWSCOPE, SUMMARY_PAGE, GtkWidget)

GtkWidget *cowscope_summary_page_new (void);

void cowscope_summary_page_set_view_state (CowscopeSummaryPage *self, CowscopeViewState *state);
CowscopeViewState *cowscope_summary_page_get_view_state (CowscopeSummaryPage *self);

/* The report shown, or NULL while it is built (or when it failed). */
CowscopeReportReader *cowscope_summary_page_get_report (CowscopeSummaryPage *self);
/* TRUE once the report is shown or failed ("ready" notifies).  The
 * report is built when the page is first shown. */
gboolean cowscope_summary_page_get_ready (CowscopeSummaryPage *self);

G_END_DECLS
