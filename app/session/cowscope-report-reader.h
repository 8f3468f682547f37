/* cowscope-report-reader.h — a session's report (cowscope-report.h), built
 * off the main thread and read member by member, for the application's
 * summary page.
 *
 * The summary shows the figures `cowscope-cli report` prints, so it reads
 * the same report rather than computing them again; this reader lets the
 * UI do so without json-glib, which its layer does not use (HACKING.md,
 * "Layering").  Members are named as in the report's JSON ("metrics",
 * "top_call_sites", "top_ops", "violations", "warnings", "target"; the
 * CLI's `report --json` shows them all). */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

typedef struct _CowscopeReportReader CowscopeReportReader;

/* One object of the report (an entry of a list, or "target"), borrowed
 * from its reader and valid while the reader is. */
typedef struct _CowscopeReportItem CowscopeReportItem;

/* Opens the session file @path (cowscope_session_tables_open()) and builds
 * its report in a GTask thread, listing at most @top operations and call
 * sites. */
void cowscope_report_reader_load_async (const char *path, guint top, GCancellable *cancellable,
                                        GAsyncReadyCallback callback, gpointer user_data);
/* The reader of the report built (a new reference), or NULL with @error. */
CowscopeReportReader *cowscope_report_reader_load_finish (GAsyncResult *result, GError **error);

CowscopeReportReader *cowscope_report_reader_ref (CowscopeReportReader *self);
void cowscope_report_reader_unref (CowscopeReportReader *self);

/* The metric @name (cowscope_report_metrics()); 0 when absent. */
gint64 cowscope_report_reader_get_metric (CowscopeReportReader *self, const char *name);

/* How many entries the list @list has (0 when it has none). */
guint cowscope_report_reader_get_n_items (CowscopeReportReader *self, const char *list);

/* Entry @index of the list of objects @list, or NULL. */
const CowscopeReportItem *cowscope_report_reader_get_item (CowscopeReportReader *self,
                                                           const char *list, guint index);

/* Entry @index of the list of strings @list ("warnings"), or NULL. */
const char *cowscope_report_reader_get_text (CowscopeReportReader *self, const char *list,
                                             guint index);

/* The object member @name ("target"), or NULL. */
const CowscopeReportItem *cowscope_report_reader_get_object (CowscopeReportReader *self,
                                                             const char *name);

/* TRUE when @item (may be NULL) has the member @member, not null. */
gboolean cowscope_report_item_has (const CowscopeReportItem *item, const char *member);

/* The integer member @member of @item (may be NULL); 0 when absent or null. */
gint64 cowscope_report_item_get_int (const CowscopeReportItem *item, const char *member);

/* The string member @member of @item (may be NULL); NULL when absent or null. */
const char *cowscope_report_item_get_text (const CowscopeReportItem *item, const char *member);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (CowscopeReportReader, cowscope_report_reader_unref)

G_END_DECLS
