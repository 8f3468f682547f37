/* cowscope-probe-private.h — what the probe's files share.
 *
 * The probe has one process-wide state (configuration, the connection to
 * the recorder, the list of rings) guarded by cowscope_probe_lock, and
 * one per-thread state (its ring) reached through initial-exec TLS.  Only
 * the cold paths (handing a new ring over, a fork, exit) take the lock,
 * and only around the socket sends and the list; writing an event takes
 * nothing.
 */
#pragma once

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cow-trace.h"
#include "cowscope-protocol.h"
#include "cowscope-ring.h"

#define PROBE_INTERNAL __attribute__ ((visibility ("hidden")))
#define PROBE_LIKELY(x) __builtin_expect (!!(x), 1)
#define PROBE_UNLIKELY(x) __builtin_expect (!!(x), 0)
#define PROBE_COLD __attribute__ ((cold, noinline))
#define PROBE_TLS __attribute__ ((tls_model ("initial-exec")))
#define PROBE_PRINTF(f, a) __attribute__ ((format (printf, f, a)))

/* ---- Configuration (cowscope-probe-config.c) ----------------------- */

typedef struct {
  bool present;       /* COWSCOPE_SOCKET is set: the recorder wants us */
  bool stacks;        /* COWSCOPE_STACKS != "0" */
  bool cuda;          /* COWSCOPE_CUDA == "1" (or --cuda-only) */
  bool cuda_only;     /* COWSCOPE_CUDA_ONLY == "1": loaded by the driver */
  uint64_t ring_capacity;         /* 0: the ring's default */
  CowscopeRingPolicy ring_policy; /* DROP unless "block" */
  char socket_path[108];          /* sizeof sockaddr_un.sun_path */
  bool socket_path_too_long;      /* then socket_path is truncated */
} CowscopeProbeConfig;

/* Written once by cowscope_probe_config_load() before any other thread
 * of the probe runs; read-only afterwards. */
PROBE_INTERNAL extern CowscopeProbeConfig cowscope_probe_config;

PROBE_INTERNAL void cowscope_probe_config_load (void);

/* One line on stderr, prefixed "cowscope: ". */
PROBE_INTERNAL void cowscope_probe_warn (const char *format, ...) PROBE_PRINTF (1, 2);

/* ---- Connection to the recorder (cowscope-probe-connection.c) ------ */

/* Protects the connection, the ring list and the static message buffers.
 * Taken on cold paths only; held across fork by the atfork handlers. */
PROBE_INTERNAL extern pthread_mutex_t cowscope_probe_lock;

/* True while this process traces: it reached the recorder and the
 * connection has not failed since. */
PROBE_INTERNAL extern _Atomic bool cowscope_probe_tracing;

/* How a send to the recorder ended. */
typedef enum {
  PROBE_SENT = 0,       /* the datagram is in the recorder's queue */
  PROBE_SEND_FAILED,    /* this message was not sent (the recorder is
                         * alive but did not take it in time) */
  PROBE_RECORDER_GONE,  /* the connection is gone for good */
} ProbeSendResult;

/* Connects (if this process has no connection yet) and says HELLO and
 * MAPS.  Caller holds the lock.  On failure fills @reason. */
PROBE_INTERNAL bool cowscope_probe_connection_open_locked (char *reason,
                                                           size_t reason_size);
/* Sends a fresh copy of /proc/self/maps unless the loaded objects are
 * the same as when the last copy was sent.  Caller holds the lock. */
PROBE_INTERNAL ProbeSendResult cowscope_probe_connection_send_maps_locked (void);
/* Sends RING with @ring_fd as SCM_RIGHTS.  Caller holds the lock. */
PROBE_INTERNAL ProbeSendResult cowscope_probe_connection_send_ring_locked (int ring_fd,
                                                                           uint32_t tid,
                                                                           const char name[16]);
/* BLOCK mode's liveness check (CowscopeRingLivenessFunc): false once the
 * recorder's end of the socket hung up.  Any thread, no lock. */
PROBE_INTERNAL bool cowscope_probe_connection_alive (void *unused);
/* Sends GPU_STATUS; takes the lock. */
PROBE_INTERNAL void cowscope_probe_connection_send_gpu_status (bool available,
                                                               const char *reason);
/* Sends BYE if this process has a connection; takes the lock. */
PROBE_INTERNAL void cowscope_probe_connection_send_bye (void);
/* Fork child: closes the inherited connection.  Caller holds the lock. */
PROBE_INTERNAL void cowscope_probe_connection_forget_locked (void);

/* ---- Per-thread rings (cowscope-probe-thread.c) -------------------- */

typedef struct _CowscopeProbeThread CowscopeProbeThread;
struct _CowscopeProbeThread {
  CowscopeRing *ring;
  CowscopeProbeThread *next; /* the process's ring list, under the lock */
  uint32_t tid;
  /* Records (and of them events) dropped because the sink was re-entered
   * (a signal handler); counted into the ring as drops by the next outer
   * write. */
  _Atomic uint32_t reentered_drops;
  _Atomic uint32_t reentered_event_drops;
  /* CUPTI kernel names already announced on this ring (a small cache of
   * string ids); allocated by the CUPTI code on first use. */
  uint64_t *announced_names;
};

/* Nonzero while this thread is inside the probe: a nested entry (a
 * signal handler) drops its record instead of corrupting the ring. */
PROBE_INTERNAL extern __thread _Atomic unsigned char cowscope_probe_tls_busy PROBE_TLS;
PROBE_INTERNAL extern __thread CowscopeProbeThread *cowscope_probe_tls_thread PROBE_TLS;

/* Gives the calling thread its ring before it emits anything (the
 * constructor for the main thread, the pthread_create trampoline for
 * every other): creation and hand-over happen before the thread's first
 * timestamp is taken.  Does nothing when the thread has a ring, tracing
 * is off, or the probe is already busy on this thread. */
PROBE_INTERNAL void cowscope_probe_thread_prepare (void);
/* Cold path of cowscope_probe_enter(), the fallback for threads that
 * did not go through the trampoline (a forked child, a thread created
 * behind the probe's back): gives the thread its ring, or NULL (the
 * record is then counted as an orphan). */
PROBE_INTERNAL CowscopeProbeThread *cowscope_probe_thread_attach (void);
/* Counts @t's re-entry drops into its ring. */
PROBE_INTERNAL void cowscope_probe_thread_flush_drops (CowscopeProbeThread *t);
/* Counts @n dropped records, @n_events of them events, into @t's ring
 * (produced and dropped). */
PROBE_INTERNAL void cowscope_probe_thread_count_drops (CowscopeProbeThread *t,
                                                       uint64_t n, uint64_t n_events);
/* Counts one record of a thread that has no ring into the process's
 * counter ring (produced and dropped), so that the recorder's totals
 * still cover what the target emitted. */
PROBE_INTERNAL void cowscope_probe_thread_count_orphan (bool is_event);
/* Sets up the thread-exit key and the fork handlers; once per process. */
PROBE_INTERNAL bool cowscope_probe_thread_init (void);
/* At exit: marks every ring of this process finished (with each thread's
 * final name) and says how many records were lost to a recorder that
 * went away. */
PROBE_INTERNAL void cowscope_probe_thread_finish_all (void);

/* Threads of this process whose ring was set up inside a sink call (the
 * fallback path) rather than before their first event. */
PROBE_INTERNAL extern _Atomic uint64_t cowscope_probe_lazy_setup_count;

/* Enters the probe on this thread for a record (@is_event: an engine
 * event): returns its ring state, or NULL when the record must be
 * dropped (re-entered, tracing off, no ring), in which case it is
 * counted.  *@set_up_now (may be NULL) tells whether this call had to
 * set the thread's ring up first.  Every non-NULL return is paired with
 * cowscope_probe_leave(). */
static inline CowscopeProbeThread *
cowscope_probe_enter (bool is_event, bool *set_up_now)
{
  CowscopeProbeThread *t = cowscope_probe_tls_thread;

  /* Relaxed plus signal fences: only this thread and its own signal
   * handlers touch the flag, so ordering against the compiler suffices. */
  if (PROBE_UNLIKELY (atomic_load_explicit (&cowscope_probe_tls_busy,
                                            memory_order_relaxed)))
    {
      if (t != NULL)
        {
          atomic_fetch_add_explicit (&t->reentered_drops, 1, memory_order_relaxed);
          if (is_event)
            atomic_fetch_add_explicit (&t->reentered_event_drops, 1,
                                       memory_order_relaxed);
        }
      else
        cowscope_probe_thread_count_orphan (is_event);
      return NULL;
    }
  atomic_store_explicit (&cowscope_probe_tls_busy, 1, memory_order_relaxed);
  atomic_signal_fence (memory_order_seq_cst);

  if (PROBE_UNLIKELY (t == NULL))
    {
      t = cowscope_probe_thread_attach ();
      if (t == NULL)
        {
          cowscope_probe_thread_count_orphan (is_event);
          atomic_signal_fence (memory_order_seq_cst);
          atomic_store_explicit (&cowscope_probe_tls_busy, 0, memory_order_relaxed);
          return NULL;
        }
      if (set_up_now != NULL)
        *set_up_now = true;
    }
  /* Relaxed: same-thread counter (see above). */
  if (PROBE_UNLIKELY (atomic_load_explicit (&t->reentered_drops,
                                            memory_order_relaxed) != 0))
    cowscope_probe_thread_flush_drops (t);
  return t;
}

/* Leaves the probe (pairs with a non-NULL cowscope_probe_enter()). */
static inline void
cowscope_probe_leave (void)
{
  atomic_signal_fence (memory_order_seq_cst);
  atomic_store_explicit (&cowscope_probe_tls_busy, 0, memory_order_relaxed);
}

/* ---- Call stacks (cowscope-probe-stack.c) -------------------------- */

/* Finds the probe's and the engine's code and warms up backtrace() so
 * that later captures do not allocate.  Call before the sink is live. */
PROBE_INTERNAL void cowscope_probe_stack_init (void);

/* Fills @frames with up to @max return addresses of the caller's stack,
 * innermost first, without the probe's and the engine's frames.  Returns
 * how many. */
PROBE_INTERNAL uint32_t cowscope_probe_stack_capture (uint64_t *frames, uint32_t max);

/* ---- The engine sink (cowscope-probe-sink.c) ----------------------- */

/* Installs the probe's sink unless the engine already has one. */
PROBE_INTERNAL void cowscope_probe_sink_install (void);
/* Fork child: has the engine announce its interned strings again. */
PROBE_INTERNAL void cowscope_probe_sink_reannounce (void);
/* Removes the probe's sink if it is the installed one. */
PROBE_INTERNAL void cowscope_probe_sink_uninstall (void);

/* ---- CUPTI (cowscope-probe-cupti.c) -------------------------------- */

/* Starts CUPTI activity tracing once per process and reports the outcome
 * to the recorder (GPU_STATUS).  Never fails the target. */
PROBE_INTERNAL void cowscope_probe_cupti_start (void);
/* At exit: flushes every record into the rings and disables tracing. */
PROBE_INTERNAL void cowscope_probe_cupti_stop (void);
/* Fork child: CUPTI does not follow a fork; stop using it. */
PROBE_INTERNAL void cowscope_probe_cupti_forget (void);
