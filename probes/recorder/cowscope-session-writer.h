/* cowscope-session-writer.h — appends a recording to a session database.
 *
 * One writer per session, used by one thread at a time.  Writes go into
 * a transaction that is committed in batches (every ~50 ms or
 * COWSCOPE_WRITER_BATCH_ROWS rows), so a recorder killed mid-run leaves
 * every committed batch in a valid WAL database.  No indexes exist while
 * recording (they are built by cowscope_session_finalize()).
 */
#pragma once

#include <glib.h>
#include <sqlite3.h>
#include <stdint.h>

#include "cow-trace.h"
#include "cowscope-protocol.h"

G_BEGIN_DECLS

#define COWSCOPE_WRITER_BATCH_ROWS 32768
#define COWSCOPE_WRITER_BATCH_NS ((int64_t) 50 * 1000 * 1000)

typedef struct _CowscopeSessionWriter CowscopeSessionWriter;

/* Creates the session file at @path with the schema and opens it for
 * writing (WAL, synchronous=NORMAL).  An existing file is an error unless
 * @force, which replaces it (and its -wal/-shm files).  On failure returns
 * NULL with a message naming the file and the OS error, and leaves no
 * file behind. */
CowscopeSessionWriter *cowscope_session_writer_create (const char *path,
                                                       gboolean force,
                                                       GError **error);

/* The open database (for meta and finalization by the same thread). */
sqlite3 *cowscope_session_writer_get_db (CowscopeSessionWriter *writer);
const char *cowscope_session_writer_get_path (CowscopeSessionWriter *writer);

/* Every write below fails with COWSCOPE_RECORDER_ERROR_BAD_RECORD when
 * the database refused that one record for its content (a constraint, a
 * value too big): the caller counts it and goes on, the writer stays
 * usable.  Any other error is the session's (disk full, I/O). */

/* Appends one event of process @pid, thread @tid; @stack_id 0 means none. */
gboolean cowscope_session_writer_event (CowscopeSessionWriter *writer,
                                        uint32_t pid, uint32_t tid,
                                        const CowTraceEvent *event,
                                        int64_t stack_id, GError **error);

/* Records interned string @id of @pid (a later copy replaces it). */
gboolean cowscope_session_writer_string (CowscopeSessionWriter *writer,
                                         uint32_t pid, uint64_t id,
                                         const char *text, size_t length,
                                         GError **error);

/* Appends one normalized CUDA activity record. */
gboolean cowscope_session_writer_cuda (CowscopeSessionWriter *writer,
                                       uint32_t pid,
                                       const CowscopeCudaRecord *record,
                                       GError **error);

/* Interns the call stack @frames[0..n_frames) (innermost first) of @pid:
 * returns its stacks.id (> 0), inserting the stack and any frame not seen
 * before, or 0 with @error set. */
int64_t cowscope_session_writer_intern_stack (CowscopeSessionWriter *writer,
                                              uint32_t pid,
                                              const uint64_t *frames,
                                              uint32_t n_frames,
                                              GError **error);

/* Who a process is: what the recorder found out (from the kernel, or
 * because it started the process itself) and what the process claimed
 * in its HELLO, kept apart. */
typedef struct {
  uint32_t pid;          /* the kernel's (SO_PEERCRED) */
  uint32_t ppid;
  const char *exe;       /* NULL: unknown */
  const char *cmdline;
  const char *identity;  /* "kernel", "spawned" or "claimed" */
  uint32_t claimed_pid;
  uint32_t claimed_ppid;
  const char *claimed_exe;
  const char *claimed_cmdline;
  gboolean has_claims;   /* FALSE: the claimed_* values stay NULL */
} CowscopeProcessIdentity;

/* Inserts or replaces the processes and process_identity rows of
 * @identity->pid. */
gboolean cowscope_session_writer_process (CowscopeSessionWriter *writer,
                                          const CowscopeProcessIdentity *identity,
                                          int64_t start_ns, GError **error);

/* Records how process @pid ended (@exit_status/@exit_signal < 0: NULL). */
gboolean cowscope_session_writer_process_end (CowscopeSessionWriter *writer,
                                              uint32_t pid, int64_t end_ns,
                                              const char *reason,
                                              int exit_status, int exit_signal,
                                              GError **error);

/* Sets processes.gpu_status of @pid. */
gboolean cowscope_session_writer_process_gpu (CowscopeSessionWriter *writer,
                                              uint32_t pid, const char *status,
                                              GError **error);

/* Stores @pid's newest complete memory map. */
gboolean cowscope_session_writer_process_maps (CowscopeSessionWriter *writer,
                                               uint32_t pid,
                                               uint32_t generation,
                                               const char *maps,
                                               GError **error);

/* One thread's counters: records (the threads row) and, of them, engine
 * events (the thread_events row). */
typedef struct {
  uint32_t pid, tid;
  const char *name;
  uint64_t ring_capacity;
  uint64_t produced, stored, dropped;
  uint64_t events_produced, events_stored, events_dropped;
  const char *stopped_waiting; /* NULL, or why a BLOCK writer gave up */
} CowscopeThreadRow;

/* Inserts or replaces the threads and thread_events rows of
 * (@row->pid, @row->tid). */
gboolean cowscope_session_writer_thread (CowscopeSessionWriter *writer,
                                         const CowscopeThreadRow *row,
                                         GError **error);

/* Adds @count to the peer_faults row of (@pid, @fault), creating it with
 * @uid and @detail (the first occurrence) when new. */
gboolean cowscope_session_writer_peer_fault (CowscopeSessionWriter *writer,
                                             uint32_t pid, int64_t uid,
                                             const char *fault, uint64_t count,
                                             const char *detail, GError **error);

/* Sets meta.@key to a text or an integer value. */
gboolean cowscope_session_writer_meta_text (CowscopeSessionWriter *writer,
                                            const char *key, const char *value,
                                            GError **error);
gboolean cowscope_session_writer_meta_int (CowscopeSessionWriter *writer,
                                           const char *key, int64_t value,
                                           GError **error);

/* Commits when the batch is old or large enough (see above); otherwise
 * does nothing.  @now_ns is CLOCK_MONOTONIC. */
gboolean cowscope_session_writer_maybe_commit (CowscopeSessionWriter *writer,
                                               int64_t now_ns,
                                               GError **error);

/* Commits the open batch now; the next write begins a new one.  After a
 * commit no transaction is open, so the caller may use the database
 * directly (meta, finalization). */
gboolean cowscope_session_writer_commit (CowscopeSessionWriter *writer,
                                         GError **error);

/* Ends the recording phase: stops the background WAL checkpoints (call
 * before finalizing on this connection). */
void cowscope_session_writer_end_recording (CowscopeSessionWriter *writer);

/* Rows appended since the writer was created. */
uint64_t cowscope_session_writer_get_rows (CowscopeSessionWriter *writer);

/* Commits what is pending (errors ignored: call commit first to see them)
 * and closes the database.  NULL is ignored. */
void cowscope_session_writer_close (CowscopeSessionWriter *writer);

/* Closes the database and deletes the session file and its -wal/-shm
 * companions (used when the target could not be started). */
void cowscope_session_writer_discard (CowscopeSessionWriter *writer);

/* Formats a failed SQLite call on @db for @path as a GError:
 * "cannot write session 'PATH': MESSAGE (OS error)". */
void cowscope_session_set_sqlite_error (GError **error, sqlite3 *db,
                                        const char *path, const char *what);

G_END_DECLS
