/* first-event-target.c — threads that time their first and their
 * hundredth engine event, for bench-first-event.
 *
 *   first-event-target THREADS [lazy]
 *
 * Starts THREADS threads one after another; each times (CLOCK_MONOTONIC
 * around the call) its first cow_mark() and its hundredth, and the main
 * thread prints one line "FIRST_NS HUNDREDTH_NS" per thread.  "lazy"
 * starts the threads with libc's own pthread_create, behind the probe's
 * back, so that their rings are set up inside their first event (the
 * probe's fallback, and what every thread got before the probe set
 * threads up in advance): the same run's baseline.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cowtensor.h"

typedef struct {
  int64_t first_ns, hundredth_ns;
} Timing;

typedef int (*PthreadCreate) (pthread_t *, const pthread_attr_t *, void *(*) (void *), void *);

static int64_t
now_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void *
thread_main (void *data)
{
  Timing *t = data;
  int64_t start = now_ns ();
  cow_mark ("tick");
  t->first_ns = now_ns () - start;
  for (int i = 2; i < 100; i++)
    cow_mark ("tick");
  start = now_ns ();
  cow_mark ("tick");
  t->hundredth_ns = now_ns () - start;
  return NULL;
}

int
main (int argc, char **argv)
{
  int threads = argc > 1 ? atoi (argv[1]) : 0;
  int lazy = argc > 2 && strcmp (argv[2], "lazy") == 0;
  if (threads < 1)
    {
      fprintf (stderr, "usage: first-event-target THREADS [lazy]\n");
      return 2;
    }
  PthreadCreate create = pthread_create;
  if (lazy)
    {
      void *libc = dlopen ("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
      create = libc != NULL ? (PthreadCreate) dlsym (libc, "pthread_create") : NULL;
      if (create == NULL)
        {
          fprintf (stderr, "first-event-target: libc's pthread_create not found\n");
          return 1;
        }
    }
  /* The string is interned (and announced) once, before any thread. */
  cow_mark ("tick");
  for (int i = 0; i < threads; i++)
    {
      Timing t = { 0 };
      pthread_t thread;
      if (create (&thread, NULL, thread_main, &t) != 0)
        return 1;
      pthread_join (thread, NULL);
      printf ("%lld %lld\n", (long long) t.first_ns, (long long) t.hundredth_ns);
    }
  return 0;
}
