/* cowscope-probe-spawn.c — every new thread gets its ring before its
 * start routine runs.
 *
 * The probe interposes pthread_create (it is LD_PRELOADed, so its
 * definition comes first), as IgProf does: the new thread starts in a
 * trampoline that sets up its ring, then calls the user's start routine.
 * The set-up is therefore never inside a span the thread records, and a
 * thread's first event costs what its hundredth does.  Without tracing
 * the wrapper only forwards.  Threads created some other way (raw clone,
 * a library that calls the real symbol directly) still get their ring on
 * their first record (cowscope-probe-thread.c).
 */
#include "cowscope-probe-private.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>

typedef int (*PthreadCreateFunc) (pthread_t *, const pthread_attr_t *,
                                  void *(*) (void *), void *);

/* The next pthread_create (libc's, or a sanitizer's interceptor). */
static _Atomic (PthreadCreateFunc) next_pthread_create;

typedef struct {
  void *(*start) (void *);
  void *arg;
} Trampoline;

/* Runs in the new thread: its ring first, then the user's code. */
static void *
trampoline (void *data)
{
  Trampoline t = *(Trampoline *) data;
  free (data);
  cowscope_probe_thread_prepare ();
  return t.start (t.arg);
}

/* Finds the real pthread_create once (idempotent; races are harmless:
 * every thread finds the same function). */
static PthreadCreateFunc
real_pthread_create (void)
{
  /* Relaxed: a function pointer that dlsym returns the same to all. */
  PthreadCreateFunc f = atomic_load_explicit (&next_pthread_create, memory_order_relaxed);
  if (f == NULL)
    {
      f = (PthreadCreateFunc) dlsym (RTLD_NEXT, "pthread_create");
      atomic_store_explicit (&next_pthread_create, f, memory_order_relaxed);
    }
  return f;
}

__attribute__ ((visibility ("default"))) int
pthread_create (pthread_t *thread, const pthread_attr_t *attr,
                void *(*start) (void *), void *arg)
{
  PthreadCreateFunc real = real_pthread_create ();
  if (real == NULL)
    return EAGAIN;
  /* Relaxed: a hint; the trampoline re-checks. */
  if (!atomic_load_explicit (&cowscope_probe_tracing, memory_order_relaxed))
    return real (thread, attr, start, arg);
  Trampoline *t = malloc (sizeof *t);
  if (t == NULL)
    return real (thread, attr, start, arg);
  t->start = start;
  t->arg = arg;
  int rc = real (thread, attr, trampoline, t);
  if (rc != 0)
    free (t);
  return rc;
}
