/* cowscope-export.h — `cowscope-cli export`: a session in other formats.
 *
 *   cowscope-cli export FILE --format chrome|csv|sqlite -o OUT [--force]
 *
 * chrome: Trace Event JSON for chrome://tracing and ui.perfetto.dev,
 *   written as it is read (never held in memory): ts/dur in µs with three
 *   decimals relative to otherData.baseTimeNanoseconds (the session's
 *   first timestamp); one track per thread (pid, tid) and per CUDA stream
 *   (pid COWSCOPE_EXPORT_GPU_PID_BASE + device, named "GPU n"; tid = the
 *   stream); materializations and user ranges as X slices, lazy clones,
 *   violations and marks as instants, flow arrows (s → f, bp "e") from
 *   the engine operation to each CUDA record it issued, counters for
 *   allocated bytes, lazily shared bytes and live storages per process.
 * csv: OUT is a directory with one RFC 4180 file per table (TABLE.csv,
 *   header row, CRLF, NULL as an empty field, blobs as hex).
 * sqlite: a compacted copy (VACUUM INTO).
 *
 * Outputs appear complete or not at all (cowscope-output.h).
 */
#pragma once

#include <stdio.h>

#include "cowscope-session.h"

G_BEGIN_DECLS

#define COWSCOPE_EXPORT_GPU_PID_BASE 1000000000

/* Entry point for cowscope-cli: @argv[0] is the subcommand name.  Returns
 * a CowscopeExitStatus. */
int cowscope_cli_export (int argc, char **argv);

/* The same, printing help on @out and messages and progress on @err. */
int cowscope_export_run (int argc, char **argv, FILE *out, FILE *err);

/* Each writes @session to @path; FALSE with @error on failure, in which
 * case nothing is left at @path that was not there before.  @progress may
 * be NULL; otherwise progress is drawn on it when it is a terminal. */
gboolean cowscope_export_chrome (CowscopeSession *session, const char *path,
                                 gboolean force, FILE *progress,
                                 GError **error);
gboolean cowscope_export_csv (CowscopeSession *session, const char *path,
                              gboolean force, FILE *progress, GError **error);
gboolean cowscope_export_sqlite (CowscopeSession *session, const char *path,
                                 gboolean force, GError **error);

G_END_DECLS
