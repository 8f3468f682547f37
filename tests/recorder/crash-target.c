/* crash-target.c — a small target for the recorder's tests.
 *
 *   crash-target marks N            N marks, exit 0
 *   crash-target crash N HOW        N marks, then HOW: kill (SIGKILL),
 *                                   abort, segv (a real NULL write), exit3
 *   crash-target flood N THREADS    THREADS threads, N marks each, flat out
 *   crash-target fork N             a child and the parent each make N marks
 *   crash-target slow N USEC        N marks, sleeping USEC between them
 *   crash-target threads N M        N short-lived threads (8 at a time),
 *                                   M marks each
 *   crash-target lock-wait N        a steal that waits for a copy in flight
 *                                   (N: the bytes shared), see lock_wait()
 *
 * Every mark is one MARK event, so the tests know exactly how many events
 * each thread wrote before it ended.  Exit 2 for bad arguments.
 */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cowtensor.h"

static long marks_per_thread;

static void
make_marks (long n)
{
  for (long i = 0; i < n; i++)
    cow_mark ("tick");
}

static void *
flood_thread (void *data)
{
  (void) data;
  make_marks (marks_per_thread);
  return NULL;
}

static int
usage (void)
{
  fprintf (stderr, "usage: crash-target marks|crash|flood|fork|slow|threads|lock-wait N [ARG]\n");
  return 2;
}

/* threads: @n threads, 8 alive at a time, each making marks_per_thread
 * marks and ending. */
static int
short_lived_threads (long n)
{
  for (long done = 0; done < n;)
    {
      pthread_t t[8];
      int wave = n - done < 8 ? (int) (n - done) : 8;
      for (int i = 0; i < wave; i++)
        if (pthread_create (&t[i], NULL, flood_thread, NULL) != 0)
          return 1;
      for (int i = 0; i < wave; i++)
        pthread_join (t[i], NULL);
      done += wave;
    }
  return 0;
}

/* ---- lock-wait ------------------------------------------------------
 *
 * A copier A and a stealer C share one context.  A's copy runs under
 * the context's shared lock and drops A's reference before releasing it
 * (the engine emits context_unref there, refcount 1).  A sink wrapped
 * around the probe's holds A at that event until C, which then writes
 * the other sharer, is the last sharer, steals, and sleeps in the futex
 * of the context's exclusive lock.  Only then does A go on and release
 * the lock: C's steal has really waited for a copy in flight, and its
 * materialize_end must say so (lock_wait_ns > 0).  No timing is
 * involved: each step waits for the previous one to be observed. */

static const CowTraceSink *probe_sink;
static __thread int role; /* 1: copier A, 2: stealer C */
static atomic_bool copier_in_window, stealer_unref_done;
static atomic_int stealer_tid;

/* Whether thread @tid of this process sleeps in the futex system call
 * (its /proc syscall file starts with the futex number). */
static bool
sleeps_in_futex (int tid)
{
  char path[64], text[64] = "";
  snprintf (path, sizeof path, "/proc/self/task/%d/syscall", tid);
  FILE *f = fopen (path, "re");
  if (f == NULL)
    return false;
  bool ok = fgets (text, sizeof text, f) != NULL && atol (text) == SYS_futex
            && text[0] >= '0' && text[0] <= '9';
  fclose (f);
  return ok;
}

static void
lock_wait_event (const CowTraceEvent *event, void *user_data)
{
  (void) user_data;
  probe_sink->event (event, probe_sink->user_data);
  if (role == 2 && event->type == COW_EVENT_CONTEXT_UNREF && event->context.refcount == 0)
    atomic_store (&stealer_unref_done, true);
  if (role == 1 && event->type == COW_EVENT_CONTEXT_UNREF && event->context.refcount == 1)
    {
      /* Still under the shared lock: let C steal, and wait until it is
       * asleep on the exclusive lock. */
      atomic_store (&copier_in_window, true);
      while (!atomic_load (&stealer_unref_done) || !sleeps_in_futex (atomic_load (&stealer_tid)))
        sched_yield ();
    }
}

static void
lock_wait_string (uint64_t id, const char *text, size_t length, void *user_data)
{
  (void) user_data;
  probe_sink->string (id, text, length, probe_sink->user_data);
}

static const CowTraceSink lock_wait_sink = {
  .event = lock_wait_event,
  .string = lock_wait_string,
  .user_data = NULL,
};

static void *
copier_main (void *data)
{
  CowError error = { 0 };
  role = 1;
  return cow_tensor_fill_ (data, 1.0, &error) == COW_OK ? NULL : (void *) 1;
}

static void *
stealer_main (void *data)
{
  CowError error = { 0 };
  role = 2;
  atomic_store (&stealer_tid, (int) gettid ());
  while (!atomic_load (&copier_in_window))
    sched_yield ();
  return cow_tensor_fill_ (data, 2.0, &error) == COW_OK ? NULL : (void *) 1;
}

static int
lock_wait (long nbytes)
{
  CowError error = { 0 };
  int64_t sizes[1] = { nbytes / 4 > 0 ? nbytes / 4 : 1 };
  CowTensor *base = cow_tensor_zeros (1, sizes, COW_DTYPE_F32, &error);
  CowTensor *clone = base != NULL ? cow_tensor_lazy_clone (base, &error) : NULL;
  probe_sink = cow_trace_get_sink ();
  if (clone == NULL || probe_sink == NULL)
    return 1;
  cow_trace_set_sink (&lock_wait_sink);
  pthread_t copier, stealer;
  void *copier_failed = NULL, *stealer_failed = NULL;
  pthread_create (&stealer, NULL, stealer_main, base);
  pthread_create (&copier, NULL, copier_main, clone);
  pthread_join (copier, &copier_failed);
  pthread_join (stealer, &stealer_failed);
  cow_trace_set_sink (probe_sink);
  cow_tensor_unref (clone);
  cow_tensor_unref (base);
  return copier_failed == NULL && stealer_failed == NULL ? 0 : 1;
}

/* A real invalid write.  Not instrumented by UBSan, which would otherwise
 * report it and exit instead of letting the target die of SIGSEGV. */
__attribute__ ((noinline, no_sanitize ("undefined"))) static void
segfault (void)
{
  volatile int *volatile p = NULL;
  *p = 1;
}

int
main (int argc, char **argv)
{
  if (argc < 3)
    return usage ();
  const char *mode = argv[1];
  long n = strtol (argv[2], NULL, 10);

  if (strcmp (mode, "marks") == 0)
    {
      make_marks (n);
      return 0;
    }
  if (strcmp (mode, "crash") == 0 && argc == 4)
    {
      make_marks (n);
      if (strcmp (argv[3], "kill") == 0)
        raise (SIGKILL);
      else if (strcmp (argv[3], "abort") == 0)
        abort ();
      else if (strcmp (argv[3], "segv") == 0)
        segfault ();
      else if (strcmp (argv[3], "exit3") == 0)
        return 3;
      return usage ();
    }
  if (strcmp (mode, "flood") == 0 && argc == 4)
    {
      int threads = atoi (argv[3]);
      if (threads < 1 || threads > 64)
        return usage ();
      pthread_t t[64];
      marks_per_thread = n;
      for (int i = 0; i < threads; i++)
        pthread_create (&t[i], NULL, flood_thread, NULL);
      for (int i = 0; i < threads; i++)
        pthread_join (t[i], NULL);
      return 0;
    }
  if (strcmp (mode, "fork") == 0)
    {
      pid_t pid = fork ();
      if (pid < 0)
        return 1;
      make_marks (n);
      if (pid == 0)
        return 0;
      int status;
      waitpid (pid, &status, 0);
      return WIFEXITED (status) ? WEXITSTATUS (status) : 1;
    }
  if (strcmp (mode, "threads") == 0 && argc == 4)
    {
      marks_per_thread = strtol (argv[3], NULL, 10);
      return short_lived_threads (n);
    }
  if (strcmp (mode, "lock-wait") == 0)
    return lock_wait (n);
  if (strcmp (mode, "slow") == 0 && argc == 4)
    {
      long usec = strtol (argv[3], NULL, 10);
      for (long i = 0; i < n; i++)
        {
          cow_mark ("tick");
          usleep ((useconds_t) usec);
        }
      return 0;
    }
  return usage ();
}
