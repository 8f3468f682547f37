/* crash-target.c — a small target for the recorder's tests.
 *
 *   crash-target marks N            N marks, exit 0
 *   crash-target crash N HOW        N marks, then HOW: kill (SIGKILL),
 *                                   abort, segv (a real NULL write), exit3
 *   crash-target flood N THREADS    THREADS threads, N marks each, flat out
 *   crash-target fork N             a child and the parent each make N marks
 *   crash-target slow N USEC        N marks, sleeping USEC between them
 *
 * Every mark is one MARK event, so the tests know exactly how many events
 * each thread wrote before it ended.  Exit 2 for bad arguments.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
  fprintf (stderr, "usage: crash-target marks|crash|flood|fork|slow N [ARG]\n");
  return 2;
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
