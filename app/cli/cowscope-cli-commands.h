/* cowscope-cli-commands.h — the commands of cowscope-cli that take a
 * session: their options and printing only; the report and the exports
 * themselves are the session model's (app/session/cowscope-report.h,
 * cowscope-export.h), finalizing the recorder's
 * (probes/recorder/cowscope-session-finalize.h).  A library, so that
 * tests/cli and tests/fuzz run them in-process.
 *
 *   cowscope-cli report [--json] [--top N] [--fail-if EXPR]... FILE
 *   cowscope-cli export FILE --format chrome|csv|sqlite -o OUT [--force]
 *   cowscope-cli finalize FILE
 *   cowscope-cli diff [--json] [--top N] [--fail-if EXPR]... BEFORE AFTER
 *   cowscope-cli merge SESSION... -o OUT [--label NAME]... [--force]
 */
#pragma once

#include <glib.h>
#include <stdio.h>

G_BEGIN_DECLS

/* Each runs its command: @argv[0] is the subcommand name; the output goes
 * to @out, messages (and an export's percentage, on a terminal) to @err.
 * Returns a CowscopeExitStatus (cowscope-cli-args.h). */
int cowscope_report_run (int argc, char **argv, FILE *out, FILE *err);
int cowscope_export_run (int argc, char **argv, FILE *out, FILE *err);
int cowscope_finalize_run (int argc, char **argv, FILE *out, FILE *err);
int cowscope_diff_run (int argc, char **argv, FILE *out, FILE *err);
int cowscope_merge_run (int argc, char **argv, FILE *out, FILE *err);

/* The same on stdout and stderr, for cowscope-cli's main(). */
int cowscope_cli_report (int argc, char **argv);
int cowscope_cli_export (int argc, char **argv);
int cowscope_cli_finalize (int argc, char **argv);
int cowscope_cli_diff (int argc, char **argv);
int cowscope_cli_merge (int argc, char **argv);

G_END_DECLS
