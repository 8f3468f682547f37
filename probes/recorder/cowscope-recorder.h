/* cowscope-recorder.h — records a target into a session database.
 *
 * cowscope_record() creates the session file, opens a private socket,
 * spawns the target under the probe, maps every ring the target's
 * processes hand over, drains them into the session from one writer
 * thread while the target runs, and when the target ends (or the
 * recorder is interrupted with SIGINT/SIGTERM, which stops the target)
 * drains everything once more and finalizes the session.
 */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "cowscope-collector.h"
#include "cowscope-recorder-error.h"
#include "cowscope-ring.h"

G_BEGIN_DECLS

/* What a recording has collected so far (cowscope_record()'s progress). */
typedef struct {
  int64_t elapsed_ns;  /* since the target was started */
  int target_pid;
  uint64_t processes;  /* probed processes that said hello */
  uint64_t rings;      /* threads (rings) handed over */
  uint64_t produced;   /* engine events */
  uint64_t stored;     /* consumed from the rings, on their way to disk */
  uint64_t dropped;
  uint64_t records_produced; /* records: the events, strings, stacks and */
  uint64_t records_stored;   /* CUDA records around them */
  uint64_t records_dropped;
} CowscopeRecordProgress;

/* Called on the thread running cowscope_record(); must not block long. */
typedef void (*CowscopeRecordProgressFunc) (const CowscopeRecordProgress *progress,
                                            void *user_data);

/* Called on the thread running cowscope_record() once the target has
 * ended and every event is committed, just before the session is
 * finalized (which renumbers events and leaves WAL mode): whoever reads
 * the session while it records must close its connections before this
 * returns. */
typedef void (*CowscopeRecordFinalizingFunc) (const char *session_path, void *user_data);

typedef struct {
  char **argv;          /* the target: PROGRAM ARGS (NULL-terminated) */
  char **env;           /* extra K=V for the target, or NULL */
  const char *output;   /* session path; NULL: cowscope-PROGRAM-DATE.cowscope */
  gboolean force;       /* replace an existing output */
  gboolean stacks;      /* capture call stacks */
  gboolean cuda;        /* CUPTI tracing in the probe */
  gboolean cuda_only;   /* load the probe as a CUDA injection, no LD_PRELOAD */
  CowscopeRingPolicy policy;
  uint64_t ring_capacity; /* 0: the probe's default */
  const char *probe_path; /* NULL: cowscope_probe_path_find() */
  int64_t interrupt_grace_ms; /* after SIGINT to the target, before SIGKILL; 0: 3000 */
  /* For embedding the recorder (the app).  Zero (as _init leaves them)
   * keeps the command-line behaviour. */
  const char *working_directory; /* the target starts there; NULL: ours */
  int stdout_fd;       /* > 0: the target's stdout is a duplicate of it; 0: inherited */
  int stderr_fd;       /* > 0: likewise for its stderr */
  CowscopeRecordProgressFunc progress; /* NULL: none; else every progress_interval_ms,
                                        * and once more with the final totals */
  void *progress_data;
  int64_t progress_interval_ms; /* 0: 100 */
  CowscopeRecordFinalizingFunc finalizing; /* NULL: none */
  void *finalizing_data;
} CowscopeRecordOptions;

typedef struct {
  char *session_path;
  CowscopeCollectorTotals totals;
  char *target_end;   /* "exited", "signaled", "crashed", "killed", "unknown" */
  int exit_status;    /* -1 unless exited */
  int exit_signal;    /* -1 unless signaled */
  gboolean interrupted;
  int target_pid;
  uint64_t processes;
  /* BLOCK mode: why some threads stopped waiting for room ("recorder
   * hung up", "recorder detached"), NULL when none had to. */
  char *block_stopped_waiting;
} CowscopeRecordResult;

/* Defaults: stacks and CUDA on, DROP policy, default ring size. */
void cowscope_record_options_init (CowscopeRecordOptions *options);

/* Records a session.  Returns FALSE with a clear message when the
 * recorder itself failed (no probe, output exists, cannot create or
 * write the session, target cannot be started); the target's own
 * failure is a successful recording and is described in @result.  When
 * the target could not be started no session file is left behind. */
gboolean cowscope_record (const CowscopeRecordOptions *options,
                          CowscopeRecordResult *result, GError **error);

/* Stops the recording in progress in this process (on any thread) as a
 * SIGINT to the recorder would: the target gets SIGINT, then SIGKILL
 * after the grace period if it is called again or the target lingers,
 * and the session is finalized as usual (result->interrupted is TRUE).
 * Async-signal-safe; does nothing when no recording runs.  One recording
 * at a time per process: the stop channel is process-wide. */
void cowscope_record_interrupt (void);

void cowscope_record_result_clear (CowscopeRecordResult *result);

G_END_DECLS
