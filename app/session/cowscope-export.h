/* cowscope-export.h — a session in other formats (`cowscope-cli export`,
 * the application's Export dialog).
 *
 * chrome: Trace Event JSON for chrome://tracing and ui.perfetto.dev,
 *   written as it is read (never held in memory): ts/dur in µs with three
 *   decimals relative to otherData.baseTimeNanoseconds (the session's
 *   first timestamp); one track per thread (pid, tid) and per CUDA stream
 *   (pid COWSCOPE_EXPORT_GPU_PID_BASE + device, named "GPU n"; tid = the
 *   stream); materializations and user ranges as X slices, lazy clones,
 *   violations and marks as instants, flow arrows (s → f, bp "e") from
 *   the engine operation to each CUDA record it issued, counters for
 *   allocated bytes, lazily shared bytes and live storages per process
 *   (the session format's counter rules, as the timeline's tracks).
 * csv: OUT is a directory with one RFC 4180 file per table (TABLE.csv,
 *   header row, CRLF, NULL as an empty field, blobs as hex).
 * sqlite: a compacted copy (VACUUM INTO).
 *
 * A session that was never finalized is read from a finalized copy
 * (cowscope-session-tables.h).  Outputs appear complete or not at all
 * (cowscope-output.h).
 */
#pragma once

#include "cowscope-session-tables.h"

G_BEGIN_DECLS

#define COWSCOPE_EXPORT_GPU_PID_BASE 1000000000

/* Called from the exporting thread with the fraction written (0 to 1), or
 * -1 while the total is unknown (the database copy); returning FALSE
 * cancels the export. */
typedef gboolean (*CowscopeExportProgressFunc) (double fraction, gpointer user_data);

/* Where progress goes; @func may be NULL. */
typedef struct {
  CowscopeExportProgressFunc func;
  gpointer user_data;
} CowscopeExportProgress;

/* Each writes the session of @tables to @path; FALSE with @error on failure (with
 * G_IO_ERROR_CANCELLED when @progress's function cancelled), in which
 * case nothing is left at @path that was not there before.  @progress may
 * be NULL. */
gboolean cowscope_export_chrome (CowscopeSessionTables *tables, const char *path,
                                 gboolean force, const CowscopeExportProgress *progress,
                                 GError **error);
gboolean cowscope_export_csv (CowscopeSessionTables *tables, const char *path,
                              gboolean force, const CowscopeExportProgress *progress,
                              GError **error);
gboolean cowscope_export_sqlite (CowscopeSessionTables *tables, const char *path,
                                 gboolean force, const CowscopeExportProgress *progress,
                                 GError **error);

G_END_DECLS
