/* cowscope-tables-view.h — one table of a session: its events, its
 * objects (allocations, contexts, storages and tensors) or its warnings.
 *
 * A GtkColumnView over the session model's GListModels (rows are read on
 * demand), with sortable columns (GtkSortListModel, numeric and string
 * sorters, incremental so the main loop stays responsive), a filter entry
 * (GtkFilterListModel) and GtkInscription cells.  The selection follows
 * the view state both ways: choosing an event or a warning sets its
 * selected seq, and a selected seq set elsewhere selects and scrolls to
 * its row; choosing an object highlights it.  Object and warning keys are
 * read in a worker thread.
 */
#pragma once

#include <gtk/gtk.h>

#include "cowscope-view-state.h"

G_BEGIN_DECLS

typedef enum {
  COWSCOPE_TABLES_EVENTS,
  COWSCOPE_TABLES_OBJECTS,
  COWSCOPE_TABLES_WARNINGS,
} CowscopeTablesKind;

#define COWSCOPE_TYPE_TABLES_VIEW (cowscope_tables_view_get_type ())
G_DECLARE_FINAL_TYPE (CowscopeTablesView, cowscope_tables_view, COWSCOPE, TABLES_VIEW, GtkWidget)

GtkWidget *cowscope_tables_view_new (CowscopeTablesKind kind);

CowscopeTablesKind cowscope_tables_view_get_kind (CowscopeTablesView *self);
CowscopeViewState *cowscope_tables_view_get_view_state (CowscopeTablesView *self);
/* Shows the tables of @state's document (loading in a worker thread). */
void cowscope_tables_view_set_view_state (CowscopeTablesView *self, CowscopeViewState *state);

/* TRUE once the rows are loaded and no sort or filter is pending. */
gboolean cowscope_tables_view_get_ready (CowscopeTablesView *self);
/* The rows as shown (sorted and filtered); NULL before loading.  For
 * events, the event list itself (the view shows it through a page cache
 * read off the main thread; this one reads a row when asked). */
GListModel *cowscope_tables_view_get_rows (CowscopeTablesView *self);
/* Sorts by column @column_id ("seq", "time", "bytes", "name", …). */
void cowscope_tables_view_sort_by (CowscopeTablesView *self, const char *column_id,
                                   GtkSortType order);
/* Shows only rows whose text contains @text (case-insensitive). */
void cowscope_tables_view_set_filter_text (CowscopeTablesView *self, const char *text);
/* Selects shown row @position (GTK_INVALID_LIST_POSITION: none). */
void cowscope_tables_view_select_row (CowscopeTablesView *self, guint position);
guint cowscope_tables_view_get_selected_row (CowscopeTablesView *self);

G_END_DECLS
