/* cowscope-ipc-private.h — the session model's cross-process (IPC)
 * helpers shared by the sharing graph and the timeline's process lanes. */
#pragma once

#include <gio/gio.h>
#include <sqlite3.h>

#include "cowscope-session-document.h"

G_BEGIN_DECLS

/* The program's name (exe, else the first word of its command line), or
 * NULL when the session does not know it. */
char *cowscope_ipc_process_program (const CowscopeProcessInfo *process);

/* "cowscope-demo (pid 1234)", from the program's name (exe, else the
 * first word of its command line), or "Process 1234". */
char *cowscope_ipc_process_label (const CowscopeProcessInfo *process);

/* Whether @db has table @name (sessions finalized before the IPC tables
 * existed lack them). */
gboolean cowscope_ipc_has_table (sqlite3 *db, const char *path, const char *name,
                                 gboolean *has, GError **error);

/* Appends one COWSCOPE_LANE_PROCESS lane per process to @lanes when the
 * session has more than one process or any IPC event: the process's IPC
 * events as instants, the limbo spans of the blocks it produced (limbo
 * enter to limbo free) and the spans during which it held a received
 * block (receive to release), from ipc_refs.  Titles are the program's
 * name (or "Process 1234").  Called by the loader once
 * the other lanes exist; @end_ns closes spans that never ended. */
gboolean cowscope_ipc_lanes_load (CowscopeSessionDocument *document, sqlite3 *db,
                                  const char *path, gint64 end_ns, GListStore *lanes,
                                  GError **error);

G_END_DECLS
