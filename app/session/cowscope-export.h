/* cowscope-export.h — a session in other formats (`cowscope-cli export`,
 * the application's Export dialog).
 *
 * chrome: Trace Event JSON for the Perfetto UI (ui.perfetto.dev) and
 *   other viewers of the format, written as it is read (never held in
 *   memory): ts/dur in µs with three decimals relative to
 *   otherData.baseTimeNanoseconds (the session's first timestamp, as on
 *   the timeline).  One track per thread (pid, tid); per GPU one process
 *   (pid COWSCOPE_EXPORT_GPU_PID_BASE + device, named "GPU n" once) with a
 *   track per stream of each process ("stream 7 (train 1234)").  Slice
 *   and instant names are stable strings, so that viewers can aggregate
 *   by name: "copy", "steal", "lazy clone", "eager clone", "simulate-mode
 *   warning", the operation that issued CUDA work, the CUDA record
 *   ("memcpy HtoD", the kernel), the program's own range and mark names;
 *   ids and details go in args, with the call site and the symbolized
 *   call stack (innermost frame first).  IPC: "ipc send", "ipc receive",
 *   "ipc release" as process instants, "ipc held" (consumer) and "ipc
 *   limbo" (producer) as async slices.  Flow arrows (s → f, bp "e") go
 *   from a lazy clone to the copy or steal it caused and from an engine
 *   operation to each CUDA record it issued; each end lies strictly
 *   inside a slice of its track (such slices last at least 2 ns).
 *   Counters for allocated bytes, lazily shared bytes and live storages
 *   per process (the session format's counter rules, as the timeline's
 *   tracks).
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
