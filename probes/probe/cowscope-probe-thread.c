/* cowscope-probe-thread.c — one ring per target thread.
 *
 * A thread gets its ring before it emits anything: the main thread from
 * the probe's constructor, every other thread from the pthread_create
 * trampoline (cowscope-probe-spawn.c) before the user's start routine
 * runs.  So the set-up (a memfd ring created by the thread itself, a
 * fresh copy of the maps when libraries changed, a RING message carrying
 * the fd) is never inside a recorded span: the thread's first timestamp
 * is taken after it.  Threads set up at once do not wait for each other
 * except around the socket sends; the ring itself is created outside the
 * lock.
 *
 * A thread that reaches the sink without a ring (a forked child, a
 * thread created behind the probe's back) gets one there, the way
 * Sysprof does it, with the TLS busy flag as the recursion guard; the
 * sink then stamps that first event after the set-up (see
 * cowscope-probe-sink.c), so the set-up is still outside its span.
 *
 * The ring is reached afterwards through initial-exec TLS, so writing a
 * record takes no lock.  Its fd is closed once the recorder has its own
 * copy, so a thread costs the target no file descriptor.  The first ring
 * of a process also carries the process's orphan counters: records of
 * threads that could not get a ring, counted as produced and dropped so
 * the recorder's totals still cover everything the target emitted.  A
 * thread that ends marks its ring finished (with its final name); exit
 * marks every ring finished; a forked child forgets the parent's rings
 * (their memory is shared with the parent's) and makes its own.
 */
#include "cowscope-probe-private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "cowscope-probe.h"

__thread _Atomic unsigned char cowscope_probe_tls_busy PROBE_TLS;
__thread CowscopeProbeThread *cowscope_probe_tls_thread PROBE_TLS;
/* Set once this thread's ring is gone (thread exit, or it could not get
 * one): its later records are dropped (and counted) instead of making a
 * new ring. */
static __thread bool tls_retired PROBE_TLS;

_Atomic uint64_t cowscope_probe_lazy_setup_count;

/* Ring bytes faulted in at set-up: a few hundred events' worth, so that
 * no early record pays for a page fault (later pages fault one per ~56
 * events, spread over the steady state). */
#define PREFAULT_BYTES (16 * 1024)

/* Every ring of this process, newest first; under cowscope_probe_lock. */
static CowscopeProbeThread *threads;
static pthread_key_t exit_key;
/* The ring that carries this process's orphan counters (its first); set
 * under the lock, read by any thread (acquire).  Never unmapped while
 * the process lives, whichever thread created it. */
static _Atomic (CowscopeRing *) process_ring;
/* Records lost because the recorder went away, summed over the rings of
 * threads that already ended (reported at exit). */
static _Atomic uint64_t lost_to_gone_recorder;

/* Counts @n records, @n_events of them events, as produced and dropped
 * in @t's ring.  The ring API counts a write of an invalid kind exactly
 * so (and an EVENT-sized write of an invalid kind cannot be an event),
 * hence the EVENT writes of an oversized payload for the events. */
void
cowscope_probe_thread_count_drops (CowscopeProbeThread *t, uint64_t n, uint64_t n_events)
{
  if (n_events > n)
    n_events = n;
  size_t too_big = cowscope_ring_get_max_payload (t->ring) + 1;
  for (uint64_t i = 0; i < n_events; i++)
    cowscope_ring_write (t->ring, COWSCOPE_RING_KIND_EVENT, NULL, too_big);
  for (uint64_t i = n_events; i < n; i++)
    cowscope_ring_write (t->ring, COWSCOPE_RING_KIND_INVALID, NULL, 0);
}

/* Moves the re-entry drop counts into the ring's counters. */
void
cowscope_probe_thread_flush_drops (CowscopeProbeThread *t)
{
  /* Relaxed: only this thread and its signal handlers use the counters. */
  uint32_t n = atomic_exchange_explicit (&t->reentered_drops, 0, memory_order_relaxed);
  uint32_t events = atomic_exchange_explicit (&t->reentered_event_drops, 0,
                                              memory_order_relaxed);
  cowscope_probe_thread_count_drops (t, n, events);
}

void
cowscope_probe_thread_count_orphan (bool is_event)
{
  /* Acquire: the ring's mapping is complete before we touch it. */
  CowscopeRing *ring = atomic_load_explicit (&process_ring, memory_order_acquire);
  if (ring != NULL)
    cowscope_ring_count_orphan (ring, is_event);
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

/* The calling thread's name as prctl gives it, NUL-padded. */
static void
thread_name (char name[16])
{
  memset (name, 0, 16);
  prctl (PR_GET_NAME, name, 0, 0, 0);
  name[15] = '\0';
}

/* Records dropped in @ring after its writer stopped waiting for a
 * recorder that went away (0 when it never had to). */
static uint64_t
dropped_to_gone_recorder (CowscopeRing *ring)
{
  if (cowscope_ring_get_gone_reason (ring) == COWSCOPE_RING_GONE_NONE)
    return 0;
  CowscopeRingStats stats;
  cowscope_ring_get_stats (ring, &stats);
  return stats.dropped;
}

/* Thread exit (pthread key destructor): the ring gets the thread's final
 * name (set after the ring was made, usually) and is finished, and this
 * process's mapping of it released; the recorder keeps its own.  The
 * process's counter ring stays mapped for the other threads. */
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
  char name[16];
  thread_name (name);
  cowscope_ring_set_name (t->ring, name);
  cowscope_ring_finish (t->ring);
  atomic_fetch_add_explicit (&lost_to_gone_recorder, dropped_to_gone_recorder (t->ring),
                             memory_order_relaxed);
  if (t->ring != atomic_load_explicit (&process_ring, memory_order_relaxed))
    cowscope_ring_free (t->ring);
  free (t->announced_names);
  free (t);
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

/* Creates, announces and publishes the calling thread's ring.  The caller
 * has set the TLS busy flag (the recursion guard) and checked that the
 * thread has none.  NULL when records of this thread must be dropped;
 * never fails the target. */
static CowscopeProbeThread *
thread_set_up (void)
{
  const CowscopeProbeConfig *c = &cowscope_probe_config;
  char reason[256];

  /* Relaxed: a hint to skip the work once tracing stopped for good. */
  if (tls_retired || !atomic_load_explicit (&cowscope_probe_tracing, memory_order_relaxed))
    return NULL;

  /* A forked child has no connection yet: it opens its own. */
  pthread_mutex_lock (&cowscope_probe_lock);
  bool connected = cowscope_probe_connection_open_locked (reason, sizeof reason);
  pthread_mutex_unlock (&cowscope_probe_lock);
  if (!connected)
    {
      cowscope_probe_warn ("cannot reach the recorder at %s: %s; tracing is off",
                           c->socket_path, reason);
      tracing_off ();
      return NULL;
    }

  /* The ring is made outside the lock: threads starting together do not
   * wait for each other's memfd and mappings. */
  CowError error = { 0 };
  CowscopeProbeThread *t = calloc (1, sizeof *t);
  CowscopeRing *ring = t != NULL ? cowscope_ring_new (c->ring_capacity, c->ring_policy, &error)
                                 : NULL;
  if (ring == NULL)
    {
      cowscope_probe_warn ("cannot create a ring for thread %d: %s; its events are "
                           "counted as dropped",
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
  cowscope_ring_set_name (ring, name);
  if (c->ring_policy == COWSCOPE_RING_BLOCK)
    cowscope_ring_set_liveness_check (ring, cowscope_probe_connection_alive, NULL);

  pthread_mutex_lock (&cowscope_probe_lock);
  bool first = atomic_load_explicit (&process_ring, memory_order_relaxed) == NULL;
  if (first)
    cowscope_ring_set_process_counters (ring);
  /* Maps first: libraries loaded since the last copy are covered before
   * any address of this thread reaches the recorder. */
  ProbeSendResult sent = cowscope_probe_connection_send_maps_locked ();
  if (sent == PROBE_SENT)
    sent = cowscope_probe_connection_send_ring_locked (cowscope_ring_get_fd (ring), t->tid,
                                                       name);
  if (sent != PROBE_SENT)
    {
      pthread_mutex_unlock (&cowscope_probe_lock);
      cowscope_ring_free (ring);
      free (t);
      tls_retired = true;
      if (sent == PROBE_RECORDER_GONE)
        tracing_off ();
      else
        cowscope_probe_warn ("the recorder did not take the ring of thread %d in time; "
                             "its events are counted as dropped", gettid ());
      return NULL;
    }
  /* Release: a thread that acquires the pointer sees a mapped ring. */
  if (first)
    atomic_store_explicit (&process_ring, ring, memory_order_release);
  t->next = threads;
  threads = t;
  pthread_mutex_unlock (&cowscope_probe_lock);

  /* The recorder has its own copy now.  The first pages are faulted in
   * here, not by the thread's first records. */
  cowscope_ring_close_fd (ring);
  cowscope_ring_prefault (ring, PREFAULT_BYTES);
  cowscope_ring_mark_ready (ring);
  pthread_setspecific (exit_key, t);
  cowscope_probe_tls_thread = t;
  return t;
}

void
cowscope_probe_thread_prepare (void)
{
  /* Relaxed plus signal fences: see cowscope_probe_enter(). */
  if (cowscope_probe_tls_thread != NULL
      || atomic_load_explicit (&cowscope_probe_tls_busy, memory_order_relaxed)
      || !atomic_load_explicit (&cowscope_probe_tracing, memory_order_relaxed))
    return;
  atomic_store_explicit (&cowscope_probe_tls_busy, 1, memory_order_relaxed);
  atomic_signal_fence (memory_order_seq_cst);
  thread_set_up ();
  atomic_signal_fence (memory_order_seq_cst);
  atomic_store_explicit (&cowscope_probe_tls_busy, 0, memory_order_relaxed);
}

PROBE_COLD CowscopeProbeThread *
cowscope_probe_thread_attach (void)
{
  CowscopeProbeThread *t = thread_set_up ();
  if (t != NULL)
    atomic_fetch_add_explicit (&cowscope_probe_lazy_setup_count, 1, memory_order_relaxed);
  return t;
}

uint64_t
cowscope_probe_lazy_setups (void)
{
  return atomic_load_explicit (&cowscope_probe_lazy_setup_count, memory_order_relaxed);
}

/* The name of thread @tid of this process from /proc, NUL-padded; empty
 * when it cannot be read. */
static void
other_thread_name (uint32_t tid, char name[16])
{
  char path[64];
  memset (name, 0, 16);
  snprintf (path, sizeof path, "/proc/self/task/%u/comm", tid);
  FILE *f = fopen (path, "re");
  if (f == NULL)
    return;
  if (fgets (name, 16, f) != NULL)
    name[strcspn (name, "\n")] = '\0';
  fclose (f);
}

/* Marks every ring of this process finished (exit: no thread will write
 * again once exit_group runs), each with its thread's final name, and
 * says how many records were lost to a recorder that went away. */
void
cowscope_probe_thread_finish_all (void)
{
  uint64_t lost = atomic_load_explicit (&lost_to_gone_recorder, memory_order_relaxed);
  pthread_mutex_lock (&cowscope_probe_lock);
  for (CowscopeProbeThread *t = threads; t != NULL; t = t->next)
    {
      char name[16];
      other_thread_name (t->tid, name);
      if (name[0] != '\0')
        cowscope_ring_set_name (t->ring, name);
      cowscope_ring_finish (t->ring);
      lost += dropped_to_gone_recorder (t->ring);
    }
  pthread_mutex_unlock (&cowscope_probe_lock);
  if (lost > 0)
    cowscope_probe_warn ("%llu records of process %d were not recorded: the recorder "
                         "went away", (unsigned long long) lost, getpid ());
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
  CowscopeRing *parent_counters = atomic_load_explicit (&process_ring, memory_order_relaxed);
  bool counters_freed = false;
  while (t != NULL)
    {
      CowscopeProbeThread *next = t->next;
      counters_freed |= t->ring == parent_counters;
      cowscope_ring_free (t->ring);
      free (t->announced_names);
      free (t);
      t = next;
    }
  /* The parent's counter ring, if its thread already ended. */
  if (parent_counters != NULL && !counters_freed)
    cowscope_ring_free (parent_counters);
  atomic_store_explicit (&process_ring, NULL, memory_order_relaxed);
  atomic_store_explicit (&lost_to_gone_recorder, 0, memory_order_relaxed);
  threads = NULL;
  cowscope_probe_tls_thread = NULL;
  tls_retired = false;
  pthread_setspecific (exit_key, NULL);
  cowscope_probe_connection_forget_locked ();
  cowscope_probe_cupti_forget ();
  cowscope_probe_sink_reannounce ();
  /* Tracing was on in the parent: the child reconnects on its first
   * record.  Relaxed: only this thread exists. */
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
