/* cowscope-report.h — `cowscope-cli report`: a session's summary.
 *
 *   cowscope-cli report [--json] [--top N] [--fail-if EXPR]... FILE
 *
 * The report is built once as a JSON object (the `--json` output, format
 * "cowscope-report" version 1) and the human summary is rendered from
 * it, so both always agree.  Its "metrics" object holds the numbers that
 * `--fail-if` budgets test (cowscope-budget.h lists them).
 */
#pragma once

#include <json-glib/json-glib.h>
#include <stdio.h>

#include "cowscope-session.h"

G_BEGIN_DECLS

/* Entry point for cowscope-cli: @argv[0] is the subcommand name.  Prints
 * on stdout/stderr; returns a CowscopeExitStatus. */
int cowscope_cli_report (int argc, char **argv);

/* The same, printing the report on @out and messages on @err. */
int cowscope_report_run (int argc, char **argv, FILE *out, FILE *err);

/* Builds the report of @session, listing at most @top operations and call
 * sites.  NULL with @error when the session cannot be read. */
JsonObject *cowscope_report_build (CowscopeSession *session, guint top,
                                   GError **error);

/* Renders @report (from cowscope_report_build()) as the human summary. */
char *cowscope_report_format_text (JsonObject *report);

/* "64.0 MiB", "512 bytes", "-1.0 KiB". */
char *cowscope_report_format_bytes (gint64 bytes);

G_END_DECLS
