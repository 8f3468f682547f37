/* lttng-peer.h — runs LTTng-UST beside Cowscope in a benchmark: a
 * private session daemon, one recording session per burst of the LTTng
 * burst target, and what each burst cost.
 *
 * The daemon is this harness's own: `lttng-sessiond --daemonize
 * --no-kernel` with LTTNG_HOME and HOME in a fresh temporary directory,
 * so its sockets, lock and traces live there, never beside a system
 * daemon's.  A root session daemon always uses /var/run/lttng whatever
 * LTTNG_HOME says, so as root the daemon, the `lttng` client and the
 * target run as the unprivileged uid LTTNG_PEER_UID, whose per-user
 * daemon LTTNG_HOME does move.  lttng_peer_free() stops the daemon (and
 * its consumer) by pid and removes the directory.  (Like every LTTng-UST
 * application, the target also registers with a system-wide daemon if
 * one runs; nothing is recorded there unless a session of that daemon
 * enables cowscope_peer events.)
 *
 * Nothing here needs LTTng to run a test: where it cannot start (not
 * installed, target not built, daemon fails), lttng_peer_start() says
 * why, and the benchmark goes on without it.
 */
#pragma once

#include <glib.h>

#include "burst-report.h"

G_BEGIN_DECLS

/* nobody: the uid that runs LTTng when the benchmark runs as root. */
#define LTTNG_PEER_UID 65534

typedef enum {
  LTTNG_PEER_DISCARD, /* a full sub-buffer discards (and counts) events: LTTng's default */
  LTTNG_PEER_BLOCKING, /* the target waits for room (--blocking-timeout=inf) */
} LttngPeerMode;

typedef struct {
  LttngPeerMode mode;
  guint64 subbuf_size; /* bytes per sub-buffer */
  guint n_subbufs;     /* sub-buffers per CPU */
  guint timeout_s;     /* for any one command or target run */
  const char *tools_dir; /* where lttng and lttng-sessiond are; NULL: found in PATH */
} LttngPeerOptions;

/* 4 × 8 MiB sub-buffers per CPU, discard mode, 120 s per command, the
 * tools in PATH. */
void lttng_peer_options_init (LttngPeerOptions *options);

typedef struct {
  BurstReport target;    /* what the target measured in its loop */
  guint64 discarded;     /* "Discarded events" over the channel's streams */
  guint64 kept;          /* target.events - discarded */
  guint64 bytes_on_disk; /* apparent size of every file of the trace (as du -sb) */
  gint64 consumer_cpu_ns; /* lttng-consumerd and its helper, from start to destroy */
  gint64 sessiond_cpu_ns; /* lttng-sessiond and its helper, likewise */
  gint64 complete_ns; /* the loop's end to `lttng stop` returning: data on disk */
} LttngPeerRun;

typedef struct _LttngPeer LttngPeer;

/* Starts the private daemon for bursts of @target_path (the LTTng build
 * of burst-target.c; NULL when it was not built).  Returns NULL and a
 * one-line reason in @skip_reason (free it) when LTTng cannot run here. */
LttngPeer *lttng_peer_start (const char *target_path,
                             const LttngPeerOptions *options, char **skip_reason);

/* One burst of @events: create a session writing under the daemon's
 * directory, enable the channel and cowscope_peer:*, start, run the
 * target, stop, read the discarded count, destroy, measure the trace,
 * remove it.  FALSE with a message when any step fails. */
gboolean lttng_peer_run (LttngPeer *peer, guint64 events, LttngPeerRun *run,
                         GError **error);

/* Kills the daemon and its consumer (by pid), removes the directory and
 * the shared-memory files this daemon created.  NULL is allowed. */
void lttng_peer_free (LttngPeer *peer);

/* The sum of every "Discarded events: N" in `lttng list SESSION`'s
 * output; FALSE when there is none. */
gboolean lttng_peer_parse_discarded (const char *list_output, guint64 *discarded);

/* One line describing @options ("discard mode, 4 × 8 MiB sub-buffers per CPU"). */
char *lttng_peer_describe (const LttngPeerOptions *options);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (LttngPeer, lttng_peer_free)

G_END_DECLS
