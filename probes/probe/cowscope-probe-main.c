/* cowscope-probe-main.c — start-up and shut-down of the probe in a target.
 *
 * Loaded with LD_PRELOAD, the probe starts from its constructor; loaded
 * by the CUDA driver for `record --cuda-only` (COWSCOPE_CUDA_ONLY=1), it
 * starts from InitializeInjection().  Either way it starts once.  Without
 * COWSCOPE_SOCKET it does nothing at all: no sink is installed, so the
 * engine's trace points cost one branch.
 */
#include "cowscope-probe.h"
#include "cowscope-probe-private.h"

#include <stdlib.h>

/* 0: not started, 1: starting or started.  acq_rel on the exchange: the
 * loser of a race (a constructor and the driver's InitializeInjection on
 * two threads) sees nothing it needs from the winner, only that it won. */
static _Atomic int started;

/* atexit: CUDA records flushed into the rings, every ring marked
 * finished, then BYE, so a recorder that reads BYE finds everything. */
static void
probe_exit (void)
{
  cowscope_probe_cupti_stop ();
  cowscope_probe_thread_finish_all ();
  cowscope_probe_connection_send_bye ();
}

/* Connects to the recorder, installs the engine sink (unless CUDA only)
 * and starts CUPTI when asked.  A recorder that cannot be reached gets
 * one warning line and the target runs on untraced. */
static void
probe_start (void)
{
  const CowscopeProbeConfig *c = &cowscope_probe_config;
  char reason[256];

  if (atomic_exchange_explicit (&started, 1, memory_order_acq_rel) != 0)
    return;
  if (!cowscope_probe_thread_init ())
    {
      cowscope_probe_warn ("cannot set up thread tracking; tracing is off");
      return;
    }

  /* Stacks first: backtrace()'s warm-up loads libgcc_s, which the first
   * copy of the maps then covers. */
  if (!c->cuda_only && c->stacks)
    cowscope_probe_stack_init ();

  pthread_mutex_lock (&cowscope_probe_lock);
  bool connected = cowscope_probe_connection_open_locked (reason, sizeof reason);
  pthread_mutex_unlock (&cowscope_probe_lock);
  if (!connected)
    {
      cowscope_probe_warn ("cannot reach the recorder at %s: %s; tracing is off",
                           c->socket_path, reason);
      return;
    }
  /* Release: a thread that sees tracing on also sees the configuration
   * and the connection set up above (cold paths re-check under the lock
   * anyway). */
  atomic_store_explicit (&cowscope_probe_tracing, true, memory_order_release);
  atexit (probe_exit);

  if (!c->cuda_only)
    {
      /* The main thread's ring now, before main() records anything. */
      cowscope_probe_thread_prepare ();
      cowscope_probe_sink_install ();
    }
  if (c->cuda)
    cowscope_probe_cupti_start ();
}

/* Runs when the library is loaded.  With LD_PRELOAD that is before the
 * target's main(); for --cuda-only it is inside cuInit(), and
 * InitializeInjection() follows. */
__attribute__ ((constructor)) static void
probe_constructor (void)
{
  cowscope_probe_config_load ();
  if (!cowscope_probe_config.present || cowscope_probe_config.cuda_only)
    return;
  probe_start ();
}

int
InitializeInjection (void)
{
  /* The constructor ran first and loaded the configuration. */
  if (!cowscope_probe_config.present)
    return 1;
  probe_start ();
  return 1;
}
