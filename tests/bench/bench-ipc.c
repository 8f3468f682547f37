/* bench-ipc.c — cross-process sharing over the CPU transport: ns per
 * send → receive in another process → release round trip, beside a
 * plain socketpair message round trip of the same size (the floor) and
 * one that also passes a descriptor.  Plain C over the engine. */
#include "cowtensor.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { MODE_PLAIN = 1, MODE_FD, MODE_IPC };

static double
now_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (double) ts.tv_sec * 1e9 + (double) ts.tv_nsec;
}

static void
consumer (int sock, int mode)
{
  for (;;)
    {
      CowIpcHandle h;
      int fd = -1, n = 0;
      if (cow_ipc_recv_fds (sock, &h, sizeof h, &fd, 1, &n, NULL) != COW_OK)
        _exit (0);
      if (mode == MODE_IPC)
        cow_tensor_unref (cow_ipc_receive (&h, n > 0 ? fd : -1, NULL));
      else if (n > 0)
        close (fd);
      char ack = 1;
      if (send (sock, &ack, 1, MSG_NOSIGNAL) != 1)
        _exit (1);
    }
}

/* ns per round trip over @iters iterations, or a negative value on error. */
static double
run (int mode, int iters)
{
  int sv[2];
  if (socketpair (AF_UNIX, SOCK_SEQPACKET, 0, sv) != 0)
    return -1;
  pid_t pid = fork ();
  if (pid == 0)
    {
      close (sv[0]);
      consumer (sv[1], mode);
      _exit (0);
    }
  close (sv[1]);
  int64_t n = 1024;
  CowError err;
  CowTensor *t = cow_tensor_empty_with_allocator (1, &n, COW_DTYPE_F32,
                                                  cow_ipc_shareable_cpu_allocator (), &err);
  CowIpcHandle h;
  memset (&h, 0, sizeof h);
  int fd = -1;
  if (t == NULL)
    return -1;
  /* The floors pass the same bytes (and a descriptor) without a send:
   * a handle that is never received would keep its slot counted. */
  FILE *tmp = mode == MODE_IPC ? NULL : tmpfile ();
  fd = tmp != NULL ? fileno (tmp) : -1;
  if (mode == MODE_FD && fd < 0)
    return -1;
  double start = 0;
  for (int i = -iters / 10; i < iters; i++) /* the first tenth warms up */
    {
      if (i == 0)
        start = now_ns ();
      if (mode == MODE_IPC && cow_ipc_send (t, &h, &fd, &err) != COW_OK)
        return -1;
      if (cow_ipc_send_fds (sv[0], &h, sizeof h, &fd, mode == MODE_PLAIN ? 0 : 1, &err) != COW_OK)
        return -1;
      char ack;
      if (recv (sv[0], &ack, 1, 0) != 1)
        return -1;
    }
  double per = (now_ns () - start) / iters;
  close (sv[0]);
  waitpid (pid, NULL, 0);
  if (tmp != NULL)
    fclose (tmp);
  cow_tensor_unref (t);
  cow_ipc_collect ();
  return per;
}

int
main (void)
{
  int iters = getenv ("COWTENSOR_BENCH_QUICK") ? 2000 : 20000;
  double plain = run (MODE_PLAIN, iters);
  double with_fd = run (MODE_FD, iters);
  double ipc = run (MODE_IPC, iters);
  if (plain < 0 || with_fd < 0 || ipc < 0)
    {
      fprintf (stderr, "bench-ipc: a round trip failed\n");
      return 1;
    }
  printf ("IPC round trip over the CPU transport (%d iterations, %zu-byte handle)\n",
          iters, sizeof (CowIpcHandle));
  printf ("  socketpair message round trip (floor)      %10.0f ns\n", plain);
  printf ("  + passing the memfd (SCM_RIGHTS)           %10.0f ns\n", with_fd);
  printf ("  send -> receive (mmap) -> release (munmap)  %10.0f ns  (%.2fx the floor)\n",
          ipc, ipc / plain);
  return 0;
}
