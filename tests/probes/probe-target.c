/* probe-target.c — a small libcowtensor program for the probe tests.
 *
 *   probe-target [--clones N] [--thread N] [--threads T] [--fork N]
 *                [--print-sink] [--inject PATH]
 *
 * Does N lazy clones of a named tensor, each written once (so each
 * materializes with a copy), inside a user range with a mark; optionally
 * the same in a second thread ("probe-worker"), in T threads at once
 * ("probe-worker" too, --threads: each does --thread N clones, default
 * 1), and in a forked child.
 * Prints "sink=null|set" (with --print-sink, before any engine call) and
 * "result=SUM", the sum of every written clone, so a test can check that
 * the target's results are unchanged by the probe.  --inject dlopens PATH
 * and calls its InitializeInjection() twice, as the CUDA driver would.
 * --signals calls the installed sink from a SIGPROF handler while the
 * main thread works (re-entering the probe) and prints "signals=N", the
 * number of events the handler emitted.
 * --first-materialize T starts T threads ("probe-writer") whose first
 * engine event is the materialization of a lazy clone of 8,000 bytes
 * made by the main thread; a sink wrapped around the probe's holds each
 * writer after its materialize_begin until every writer has begun, so
 * the writers' copies are in flight together; prints "lazy_setups=N"
 * (cowscope_probe_lazy_setups()).  --fork-materialize forks a child
 * whose first engine event is the materialization of such a clone (a
 * forked child sets its ring up on its first event).
 * --dlopen LIB dlopens LIB (a library the target does not use) first. */
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cowtensor.h"

static volatile sig_atomic_t signal_events;

/* SIGPROF: one MARK event straight into the installed sink, as a trace
 * point in a signal handler would. */
static void
on_sigprof (int signo)
{
  (void) signo;
  const CowTraceSink *sink = cow_trace_get_sink ();
  if (sink == NULL || sink->event == NULL)
    return;
  CowTraceEvent event = { .type = COW_EVENT_MARK, .pid = (uint32_t) getpid (),
                          .tid = (uint32_t) getpid (), .time_ns = 1 };
  sink->event (&event, sink->user_data);
  signal_events = signal_events + 1;
}

/* Lazily clones @base @n times, writes @n+i into clone i and returns the
 * sum of the clones' elements; -1 on an engine error. */
static double __attribute__ ((noinline))
clone_and_write (CowTensor *base, int n)
{
  CowError error = { 0 };
  double total = 0;

  for (int i = 0; i < n; i++)
    {
      CowTensor *clone = cow_tensor_lazy_clone (base, &error);
      if (clone == NULL)
        return -1;
      if (cow_tensor_fill_ (clone, (double) (i + 1), &error) != COW_OK)
        return -1;
      CowTensor *sum = cow_tensor_sum (clone, &error);
      double value = 0;
      if (sum == NULL || cow_tensor_item (sum, &value, &error) != COW_OK)
        return -1;
      total += value;
      cow_tensor_unref (sum);
      cow_tensor_unref (clone);
    }
  return total;
}

/* One round of work: a named base tensor, a range, a mark, @n clones. */
static double
work (int n)
{
  CowError error = { 0 };
  int64_t sizes[1] = { 16 };
  CowTensor *base = cow_tensor_zeros (1, sizes, COW_DTYPE_F32, &error);
  if (base == NULL)
    return -1;
  cow_tensor_set_name (base, "weights");
  cow_range_push ("step");
  cow_mark ("clones");
  double total = clone_and_write (base, n);
  cow_range_pop ();
  cow_tensor_unref (base);
  return total;
}

typedef struct {
  int n;
  double result;
} ThreadWork;

static void *
thread_main (void *data)
{
  ThreadWork *w = data;
  prctl (PR_SET_NAME, "probe-worker", 0, 0, 0);
  w->result = work (w->n);
  return NULL;
}

/* ---- --first-materialize ------------------------------------------ */

#define WRITER_ELEMENTS 2000 /* 8,000 bytes of f32 */

static const CowTraceSink *probe_sink;
static atomic_int writers_begun;
static int n_writers;
static __thread bool is_writer;

/* The wrapped sink: the probe's, then for a writer's materialize_begin a
 * wait until every writer has begun, so all the copies overlap. */
static void
barrier_event (const CowTraceEvent *event, void *user_data)
{
  (void) user_data;
  probe_sink->event (event, probe_sink->user_data);
  if (is_writer && event->type == COW_EVENT_MATERIALIZE_BEGIN)
    {
      atomic_fetch_add (&writers_begun, 1);
      while (atomic_load (&writers_begun) < n_writers)
        sched_yield ();
    }
}

static void
barrier_string (uint64_t id, const char *text, size_t length, void *user_data)
{
  (void) user_data;
  probe_sink->string (id, text, length, probe_sink->user_data);
}

static const CowTraceSink barrier_sink = {
  .event = barrier_event,
  .string = barrier_string,
  .user_data = NULL,
};

static void *
writer_main (void *data)
{
  CowTensor *clone = data;
  CowError error = { 0 };
  is_writer = true;
  prctl (PR_SET_NAME, "probe-writer", 0, 0, 0);
  /* The thread's first engine event: materialize_begin. */
  if (cow_tensor_fill_ (clone, 1.0, &error) != COW_OK)
    return (void *) 1;
  return NULL;
}

/* --first-materialize: returns false on an engine error. */
static bool
first_materialize (int n)
{
  CowError error = { 0 };
  int64_t sizes[1] = { WRITER_ELEMENTS };
  CowTensor *base = cow_tensor_zeros (1, sizes, COW_DTYPE_F32, &error);
  CowTensor *clones[64];
  pthread_t threads[64];
  if (base == NULL || n < 1 || n > 64)
    return false;
  for (int i = 0; i < n; i++)
    if ((clones[i] = cow_tensor_lazy_clone (base, &error)) == NULL)
      return false;
  probe_sink = cow_trace_get_sink ();
  if (probe_sink == NULL)
    return false;
  n_writers = n;
  cow_trace_set_sink (&barrier_sink);
  for (int i = 0; i < n; i++)
    pthread_create (&threads[i], NULL, writer_main, clones[i]);
  bool ok = true;
  for (int i = 0; i < n; i++)
    {
      void *failed = NULL;
      pthread_join (threads[i], &failed);
      ok = ok && failed == NULL;
    }
  cow_trace_set_sink (probe_sink);
  for (int i = 0; i < n; i++)
    cow_tensor_unref (clones[i]);
  cow_tensor_unref (base);
  uint64_t (*lazy_setups) (void) = (uint64_t (*) (void)) dlsym (RTLD_DEFAULT,
                                                                "cowscope_probe_lazy_setups");
  printf ("lazy_setups=%llu\n", lazy_setups != NULL ? (unsigned long long) lazy_setups () : 0ull);
  return ok;
}

/* --fork-materialize: false on an engine error or a failed child. */
static bool
fork_materialize (void)
{
  CowError error = { 0 };
  int64_t sizes[1] = { WRITER_ELEMENTS };
  CowTensor *base = cow_tensor_zeros (1, sizes, COW_DTYPE_F32, &error);
  CowTensor *clone = base != NULL ? cow_tensor_lazy_clone (base, &error) : NULL;
  if (clone == NULL)
    return false;
  fflush (stdout);
  pid_t child = fork ();
  if (child == 0)
    _exit (cow_tensor_fill_ (clone, 2.0, &error) == COW_OK ? 0 : 1);
  int status = 0;
  waitpid (child, &status, 0);
  printf ("materialize_child=%d\n", (int) child);
  cow_tensor_unref (clone);
  cow_tensor_unref (base);
  return WIFEXITED (status) && WEXITSTATUS (status) == 0;
}

/* The sum work(@n) computes: 16 elements × (1 + … + n). */
static double
expected (int n)
{
  return 16.0 * n * (n + 1) / 2.0;
}

int
main (int argc, char **argv)
{
  int clones = 3, thread_clones = 0, fork_clones = 0, threads = 1, writers = 0;
  const char *inject = NULL, *library = NULL;
  bool print_sink = false, signals = false, materialize_in_child = false;

  for (int i = 1; i < argc; i++)
    {
      if (strcmp (argv[i], "--clones") == 0 && i + 1 < argc)
        clones = atoi (argv[++i]);
      else if (strcmp (argv[i], "--thread") == 0 && i + 1 < argc)
        thread_clones = atoi (argv[++i]);
      else if (strcmp (argv[i], "--threads") == 0 && i + 1 < argc)
        threads = atoi (argv[++i]);
      else if (strcmp (argv[i], "--fork") == 0 && i + 1 < argc)
        fork_clones = atoi (argv[++i]);
      else if (strcmp (argv[i], "--inject") == 0 && i + 1 < argc)
        inject = argv[++i];
      else if (strcmp (argv[i], "--signals") == 0)
        signals = true;
      else if (strcmp (argv[i], "--first-materialize") == 0 && i + 1 < argc)
        writers = atoi (argv[++i]);
      else if (strcmp (argv[i], "--fork-materialize") == 0)
        materialize_in_child = true;
      else if (strcmp (argv[i], "--dlopen") == 0 && i + 1 < argc)
        library = argv[++i];
      else if (strcmp (argv[i], "--print-sink") == 0)
        print_sink = true;
      else
        {
          fprintf (stderr, "probe-target: unknown argument %s\n", argv[i]);
          return 2;
        }
    }

  if (print_sink)
    printf ("sink=%s\n", cow_trace_get_sink () == NULL ? "null" : "set");

  if (library != NULL && dlopen (library, RTLD_NOW | RTLD_LOCAL) == NULL)
    {
      fprintf (stderr, "probe-target: %s\n", dlerror ());
      return 1;
    }

  if (inject != NULL)
    {
      void *probe = dlopen (inject, RTLD_NOW | RTLD_LOCAL);
      if (probe == NULL)
        {
          fprintf (stderr, "probe-target: %s\n", dlerror ());
          return 1;
        }
      int (*init) (void) = (int (*) (void)) dlsym (probe, "InitializeInjection");
      if (init == NULL)
        return 1;
      printf ("inject=%d,%d\n", init (), init ());
    }

  struct itimerval timer = { { 0, 50 }, { 0, 50 } };
  if (signals)
    {
      signal (SIGPROF, on_sigprof);
      setitimer (ITIMER_PROF, &timer, NULL);
    }
  double total = work (clones);
  bool ok = total == expected (clones);
  if (writers > 0)
    ok = ok && first_materialize (writers);
  if (materialize_in_child)
    ok = ok && fork_materialize ();
  if (signals)
    {
      struct itimerval off = { { 0, 0 }, { 0, 0 } };
      setitimer (ITIMER_PROF, &off, NULL);
      signal (SIGPROF, SIG_IGN);
      printf ("signals=%d\n", (int) signal_events);
    }

  if (thread_clones > 0)
    {
      pthread_t thread[64];
      ThreadWork w[64];
      if (threads < 1 || threads > 64)
        threads = 1;
      for (int i = 0; i < threads; i++)
        {
          w[i] = (ThreadWork) { .n = thread_clones };
          pthread_create (&thread[i], NULL, thread_main, &w[i]);
        }
      for (int i = 0; i < threads; i++)
        {
          pthread_join (thread[i], NULL);
          ok = ok && w[i].result == expected (thread_clones);
        }
    }

  if (fork_clones > 0)
    {
      fflush (stdout);
      pid_t child = fork ();
      if (child == 0)
        exit (work (fork_clones) == expected (fork_clones) ? 0 : 1);
      int status = 0;
      waitpid (child, &status, 0);
      ok = ok && WIFEXITED (status) && WEXITSTATUS (status) == 0;
      printf ("child=%d\n", (int) child);
    }

  printf ("result=%s %.0f\n", ok ? "ok" : "wrong", total);
  return ok ? 0 : 1;
}
