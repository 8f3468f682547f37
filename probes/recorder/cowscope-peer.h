/* cowscope-peer.h — one connection to the recorder's socket: a probed
 * process, or something pretending to be one.
 *
 * Everything a peer sends is untrusted.  Who a peer is comes from the
 * kernel: its pid and uid from SO_PEERCRED when it connects, its parent,
 * executable and command line from /proc/PID when it says HELLO (or, for
 * the target the recorder started itself and whose /proc entry is
 * already gone, from what the recorder started).  What the peer says
 * about itself is kept apart, marked as claimed.  A peer of another user
 * that is not a descendant of the target is refused at once.  A
 * malformed message, an unexpected file descriptor or a ring that does
 * not map is refused and counted (the session's peer_faults table); the
 * peer's other messages, and every other peer, go on.  A peer that keeps
 * sending faults is disconnected after COWSCOPE_PEER_MAX_FAULTS of them.
 */
#pragma once

#include <glib.h>
#include <stdint.h>
#include <sys/types.h>

#include "cowscope-collector.h"

G_BEGIN_DECLS

#define COWSCOPE_PEER_MAX_FAULTS 100

/* What every peer of one recording shares. */
typedef struct {
  CowscopeCollector *collector;
  pid_t target;                /* the process the recorder started */
  const char *target_program;  /* its resolved path */
  char *const *target_argv;
  GHashTable *seen_pids;       /* pids that said HELLO (the recorder's) */
  char *gpu_status;            /* the target's GPU status, or the first one reported */
} CowscopePeerContext;

typedef struct _CowscopePeer CowscopePeer;

/* Accepts one pending connection on @listen_fd.  Returns the new peer,
 * or NULL when none is pending; a refused connection is closed and
 * counted, and *@refused set (the caller then tries again). */
CowscopePeer *cowscope_peer_accept (CowscopePeerContext *context, int listen_fd,
                                    gboolean *refused);

/* The connection's fd, for poll(). */
int cowscope_peer_get_fd (const CowscopePeer *peer);

/* The kernel's pid of the peer. */
uint32_t cowscope_peer_get_pid (const CowscopePeer *peer);

/* Reads and handles what the peer has queued, without blocking.  FALSE
 * when the connection is over (the peer hung up, or sent too many
 * faults). */
gboolean cowscope_peer_service (CowscopePeer *peer);

/* Closes the connection.  A peer that said HELLO and is not the target
 * (whose end the recorder learns from waitpid) gets its process's end
 * recorded: @reason, or "exited" after a BYE and "unknown" without one. */
void cowscope_peer_close (CowscopePeer *peer, int64_t end_ns, const char *reason);

G_END_DECLS
