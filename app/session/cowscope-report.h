/* cowscope-report.h — a session's summary, as `cowscope-cli report`
 * prints it.
 *
 * The report is built once as a JSON object (the `--json` output, format
 * "cowscope-report" version 1) and the human summary is rendered from
 * it, so both always agree.  Its "metrics" object holds the numbers that
 * the CLI's `--fail-if` budgets test (cowscope_report_metrics()).  It is
 * read from the session's derived tables (cowscope-session-tables.h); a
 * session that was never finalized is read from a finalized copy, and
 * the report warns about it.
 */
#pragma once

#include <gio/gio.h>
#include <json-glib/json-glib.h>

#include "cowscope-session-tables.h"

G_BEGIN_DECLS

/* The names of the "metrics" object's members (NULL-terminated, static). */
const char *const *cowscope_report_metrics (void);

/* Builds the report of @tables, listing at most @top operations and call
 * sites.  NULL with @error when the session cannot be read. */
JsonObject *cowscope_report_build (CowscopeSessionTables *tables, guint top, GError **error);

/* Renders @report (from cowscope_report_build()) as the human summary. */
char *cowscope_report_format_text (JsonObject *report);

/* The warning that the session @path was not finalized (a new string). */
char *cowscope_report_not_finalized_warning (const char *path);

/* "64.0 MiB", "512 bytes", "-1.0 KiB". */
char *cowscope_report_format_bytes (gint64 bytes);

G_END_DECLS
