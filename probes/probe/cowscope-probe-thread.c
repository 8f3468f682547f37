/* cowscope-probe-thread.c — one ring per target thread.
 *
 * A thread gets its ring on its first record (the cold path below): a
 * memfd ring created by the thread itself, announced to the recorder with
 * a fresh copy of the maps and a RING message carrying the fd.  The ring
 * is reached afterwards through initial-exec TLS, so writing a record
 * takes no lock.  A thread that ends marks its ring finished; exit marks
 * every ring finished; a forked child forgets the parent's rings (their
 * memory is shared with the parent's) and makes its own.
 */
#include "cowscope-probe-private.h"

#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

__thread _Atomic unsigned char cowscope_probe_tls_busy PROBE_TLS;
__thread CowscopeProbeThread *cowscope_probe_tls_thread PROBE_TLS;
/* Set once this thread's ring is gone (thread exit, or it could not get
 * one): its later records are dropped instead of making a new ring. */
static __thread bool tls_retired PROBE_TLS;

/* Every ring of this process, newest first; under cowscope_probe_lock. */
static CowscopeProbeThread *threads;
static pthread_key_t exit_key;

/* Counts @n records as produced and dropped in @t's ring.  The ring API
 * counts a write of an invalid kind exactly so. */
void
cowscope_probe_thread_count_drops (CowscopeProbeThread *t, uint64_t n)
{
  for (uint64_t i = 0; i < n; i++)
    cowscope_ring_write (t->ring, COWSCOPE_RING_KIND_INVALID, NULL, 0);
}

/* Moves the re-entry drop count into the ring's counters. */
void
cowscope_probe_thread_flush_drops (CowscopeProbeThread *t)
{
  /* Relaxed: only this thread and its signal handlers use the counter. */
  uint32_t n = atomic_exchange_explicit (&t->reentered_drops, 0,
                                         memory_order_relaxed);
  cowscope_probe_thread_count_drops (t, n);
}

/* Unlinks @t from the ring list; caller holds the lock. */
static void
unlink_locked (CowscopeProbeThread *t)
{
  for (CowscopeProbeThread **p = &threads; *p != NULL; p = &(*p)->next)
    if (*p == t)
      {
        *p = t->next;
        return;
      }
}

/* Thread exit (pthread key destructor): the ring is finished and this
 * process's mapping of it released; the recorder keeps its own. */
static void
thread_exit (void *data)
{
  CowscopeProbeThread *t = data;

  if (t == NULL || t != cowscope_probe_tls_thread)
    return;
  pthread_mutex_lock (&cowscope_probe_lock);
  unlink_locked (t);
  pthread_mutex_unlock (&cowscope_probe_lock);
  cowscope_probe_tls_thread = NULL;
  tls_retired = true;
  cowscope_ring_finish (t->ring);
  cowscope_ring_free (t->ring);
  free (t->announced_names);
  free (t);
}

/* The calling thread's name as prctl gives it, NUL-padded. */
static void
thread_name (char name[16])
{
  memset (name, 0, 16);
  prctl (PR_GET_NAME, name, 0, 0, 0);
  name[15] = '\0';
}

/* The engine's sink is ours and this process lost the recorder: stop
 * calling into the probe at all. */
static void
tracing_off (void)
{
  /* Relaxed: a hint; cold paths re-check under the lock. */
  atomic_store_explicit (&cowscope_probe_tracing, false, memory_order_relaxed);
  cowscope_probe_sink_uninstall ();
}

/* Gives the calling thread its ring: (re)connects if this process has no
 * connection (a forked child), creates the ring, sends MAPS and RING and
 * publishes it in TLS.  NULL when records of this thread must be dropped;
 * never fails the target. */
PROBE_COLD CowscopeProbeThread *
cowscope_probe_thread_attach (void)
{
  const CowscopeProbeConfig *c = &cowscope_probe_config;
  char reason[256];

  /* Relaxed: a hint to skip the lock once tracing stopped for good. */
  if (tls_retired || !atomic_load_explicit (&cowscope_probe_tracing,
                                            memory_order_relaxed))
    return NULL;

  pthread_mutex_lock (&cowscope_probe_lock);
  if (!cowscope_probe_connection_open_locked (reason, sizeof reason))
    {
      pthread_mutex_unlock (&cowscope_probe_lock);
      cowscope_probe_warn ("cannot reach the recorder at %s: %s; tracing is off",
                           c->socket_path, reason);
      tracing_off ();
      return NULL;
    }

  CowError error = { 0 };
  CowscopeProbeThread *t = calloc (1, sizeof *t);
  CowscopeRing *ring = t != NULL ? cowscope_ring_new (c->ring_capacity,
                                                      c->ring_policy, &error)
                                 : NULL;
  if (ring == NULL)
    {
      pthread_mutex_unlock (&cowscope_probe_lock);
      cowscope_probe_warn ("cannot create a ring for thread %d: %s; its events are not recorded",
                           gettid (), t != NULL ? error.message : "out of memory");
      free (t);
      tls_retired = true;
      return NULL;
    }
  t->ring = ring;
  t->tid = (uint32_t) gettid ();
  cowscope_ring_set_producer (ring, (uint32_t) getpid (), t->tid);

  char name[16];
  thread_name (name);
  /* Maps first: libraries loaded since the last copy are covered before
   * any address of this thread reaches the recorder. */
  if (!cowscope_probe_connection_send_maps_locked ()
      || !cowscope_probe_connection_send_ring_locked (cowscope_ring_get_fd (ring),
                                                      t->tid, name))
    {
      pthread_mutex_unlock (&cowscope_probe_lock);
      cowscope_ring_free (ring);
      free (t);
      tracing_off ();
      return NULL;
    }
  t->next = threads;
  threads = t;
  pthread_mutex_unlock (&cowscope_probe_lock);

  pthread_setspecific (exit_key, t);
  cowscope_probe_tls_thread = t;
  return t;
}

/* Marks every ring of this process finished (exit: no thread will write
 * again once exit_group runs). */
void
cowscope_probe_thread_finish_all (void)
{
  pthread_mutex_lock (&cowscope_probe_lock);
  for (CowscopeProbeThread *t = threads; t != NULL; t = t->next)
    cowscope_ring_finish (t->ring);
  pthread_mutex_unlock (&cowscope_probe_lock);
}

/* fork: hold the lock across it so the child never inherits it taken
 * half-way through a message or a list change. */
static void
atfork_prepare (void)
{
  pthread_mutex_lock (&cowscope_probe_lock);
}

static void
atfork_parent (void)
{
  pthread_mutex_unlock (&cowscope_probe_lock);
}

/* The child: its mappings of the parent's rings are shared memory, so
 * writing there would corrupt the parent's records.  Unmap them, close
 * the connection, and let the next record reconnect with our own HELLO. */
static void
atfork_child (void)
{
  CowscopeProbeThread *t = threads;
  while (t != NULL)
    {
      CowscopeProbeThread *next = t->next;
      cowscope_ring_free (t->ring);
      free (t->announced_names);
      free (t);
      t = next;
    }
  threads = NULL;
  cowscope_probe_tls_thread = NULL;
  tls_retired = false;
  pthread_setspecific (exit_key, NULL);
  cowscope_probe_connection_forget_locked ();
  cowscope_probe_cupti_forget ();
  cowscope_probe_sink_reannounce ();
  pthread_mutex_unlock (&cowscope_probe_lock);
}

/* Creates the thread-exit key and registers the fork handlers.  False
 * when the system refuses either (the probe then stays off). */
bool
cowscope_probe_thread_init (void)
{
  if (pthread_key_create (&exit_key, thread_exit) != 0)
    return false;
  if (pthread_atfork (atfork_prepare, atfork_parent, atfork_child) != 0)
    return false;
  return true;
}
