/* demo-ipc.c — the ipc scenario: tensors shared with consumer processes
 * outlive the producer's references; their blocks wait in the limbo until
 * every consumer has released them, and the next collect frees them. */
#include "demo-scenarios.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define IPC_CONSUMERS 3
#define IPC_TENSORS 4
#define IPC_ELEMS 4096

/* The consumer's side, run as `cowscope-demo --ipc-consumer FD` (fork +
 * exec of the demo itself): receives tensors and answers each with its
 * sum; on an empty handle releases them all, answers, and exits. */
int
ipc_consumer_main (int sock)
{
  CowTensor *held[IPC_TENSORS] = { 0 };
  int n_held = 0;
  for (;;)
    {
      CowIpcHandle handle;
      CowError err;
      int fd = -1, n_fds = 0;
      if (cow_ipc_recv_fds (sock, &handle, sizeof handle, &fd, 1, &n_fds, &err) != COW_OK)
        {
          fprintf (stderr, PROGRAM " (ipc consumer): %s\n", err.message);
          return 1;
        }
      double answer = 0;
      if (handle.magic == 0)
        {
          for (int i = 0; i < n_held; i++)
            cow_tensor_unref (held[i]);
          n_held = 0;
          answer = -1;
        }
      else
        {
          CowTensor *t = cow_ipc_receive (&handle, n_fds > 0 ? fd : -1, &err);
          if (t == NULL || n_held == IPC_TENSORS)
            {
              fprintf (stderr, PROGRAM " (ipc consumer): %s\n",
                       t == NULL ? err.message : "too many tensors");
              cow_tensor_unref (t);
              return 1;
            }
          const float *data = cow_tensor_const_data (t);
          for (int64_t i = 0; i < cow_tensor_numel (t); i++)
            answer += data[i];
          held[n_held++] = t;
        }
      if (send (sock, &answer, sizeof answer, MSG_NOSIGNAL) != (ssize_t) sizeof answer)
        return 1;
      if (answer < 0)
        return 0;
    }
}

/* The consumer processes, and the producer's end of their sockets. */
typedef struct {
  pid_t pids[IPC_CONSUMERS];
  int socks[IPC_CONSUMERS];
  int n_started;
} Consumers;

/* Starts the next consumer: fork + exec of the demo itself with the
 * other end of a socket pair.  False after failing @run's check. */
static bool
ipc_start_consumer (Run *run, Consumers *consumers)
{
  int sv[2];
  if (socketpair (AF_UNIX, SOCK_SEQPACKET, 0, sv) != 0)
    {
      check_failed (run, "socketpair: %s", strerror (errno));
      return false;
    }
  fflush (stdout);
  pid_t pid = fork ();
  if (pid < 0)
    {
      close (sv[0]);
      close (sv[1]);
      check_failed (run, "fork: %s", strerror (errno));
      return false;
    }
  if (pid == 0)
    {
      /* The child keeps only its own end. */
      close (sv[0]);
      for (int j = 0; j < consumers->n_started; j++)
        close (consumers->socks[j]);
      char fd_text[16];
      snprintf (fd_text, sizeof fd_text, "%d", sv[1]);
      execl ("/proc/self/exe", PROGRAM, "--ipc-consumer", fd_text, (char *) NULL);
      _exit (127);
    }
  close (sv[1]);
  fcntl (sv[0], F_SETFD, FD_CLOEXEC);
  consumers->pids[consumers->n_started] = pid;
  consumers->socks[consumers->n_started++] = sv[0];
  return true;
}

/* Closes the sockets, which ends the consumers, and reaps them. */
static void
ipc_stop_consumers (Run *run, Consumers *consumers)
{
  for (int c = 0; c < consumers->n_started; c++)
    {
      close (consumers->socks[c]);
      int status = 0;
      if (waitpid (consumers->pids[c], &status, 0) != consumers->pids[c] || !WIFEXITED (status)
          || WEXITSTATUS (status) != 0)
        check_failed (run, "consumer process %d did not exit cleanly", c);
    }
}

/* Makes the producer's shareable tensors, filled with distinct values,
 * and sends each to its consumer, which must answer with the right sum. */
static bool
ipc_share (Run *run, const Consumers *consumers,
           CowTensor *tensors[IPC_CONSUMERS][IPC_TENSORS])
{
  CowError err;
  const int64_t numel = IPC_ELEMS;

  for (int c = 0; c < IPC_CONSUMERS; c++)
    for (int k = 0; k < IPC_TENSORS; k++)
      {
        TRY_TENSOR (tensors[c][k],
                    cow_tensor_empty_with_allocator (1, &numel, COW_DTYPE_F32,
                                                     cow_ipc_shareable_cpu_allocator (), &err),
                    "empty (shareable)");
        TRY_STATUS (cow_tensor_fill_ (tensors[c][k], (double) (c * IPC_TENSORS + k + 1), &err),
                    "fill_");
        CowIpcHandle handle;
        int fd = -1;
        TRY_STATUS (cow_ipc_send (tensors[c][k], &handle, &fd, &err), "ipc_send");
        TRY_STATUS (cow_ipc_send_fds (consumers->socks[c], &handle, sizeof handle, &fd, 1, &err),
                    "ipc_send_fds");
        double sum = 0;
        if (recv (consumers->socks[c], &sum, sizeof sum, 0) != (ssize_t) sizeof sum)
          {
            check_failed (run, "consumer %d did not answer", c);
            return false;
          }
        double expected = (double) (c * IPC_TENSORS + k + 1) * IPC_ELEMS;
        if (sum != expected)
          check_failed (run, "consumer %d summed %g, expected %g", c, sum, expected);
      }
  return true;

out:
  return false;
}

/* Asks every consumer to release what it holds (an empty handle) and
 * waits for each to confirm. */
static bool
ipc_release (Run *run, const Consumers *consumers)
{
  CowError err;

  for (int c = 0; c < IPC_CONSUMERS; c++)
    {
      CowIpcHandle done = { 0 };
      double answer = 0;
      TRY_STATUS (cow_ipc_send_fds (consumers->socks[c], &done, sizeof done, NULL, 0, &err),
                  "ipc_send_fds");
      if (recv (consumers->socks[c], &answer, sizeof answer, 0) != (ssize_t) sizeof answer
          || answer >= 0)
        check_failed (run, "consumer %d did not confirm its release", c);
    }
  return true;

out:
  return false;
}

/* The producer shares tensors with consumer processes, then drops its
 * own references first: every block must wait in the limbo until the
 * consumers release theirs, and the next collect frees them all. */
void
scenario_ipc (Run *run)
{
  CowTensor *tensors[IPC_CONSUMERS][IPC_TENSORS] = { { 0 } };
  Consumers consumers = { .n_started = 0 };

  say (run, "ipc: %d consumer processes, %d tensors each; the producer drops its"
       " tensors before the consumers release them\n", IPC_CONSUMERS, IPC_TENSORS);
  for (int c = 0; c < IPC_CONSUMERS; c++)
    if (!ipc_start_consumer (run, &consumers))
      goto out;
  if (!ipc_share (run, &consumers, tensors))
    goto out;

  /* The producer lets go first: every block moves to the limbo. */
  for (int c = 0; c < IPC_CONSUMERS; c++)
    for (int k = 0; k < IPC_TENSORS; k++)
      {
        cow_tensor_unref (tensors[c][k]);
        tensors[c][k] = NULL;
      }
  size_t in_limbo = cow_ipc_limbo_size ();
  say (run, "ipc: producer dropped its tensors: %zu blocks in the limbo\n", in_limbo);
  if (in_limbo != IPC_CONSUMERS * IPC_TENSORS)
    check_failed (run, "%zu blocks in the limbo, expected %d", in_limbo,
                  IPC_CONSUMERS * IPC_TENSORS);

  /* The consumers release; the next collect frees the blocks. */
  if (!ipc_release (run, &consumers))
    goto out;
  size_t freed = cow_ipc_collect ();
  say (run, "ipc: consumers released; collect freed %zu blocks, %zu left\n", freed,
       cow_ipc_limbo_size ());
  if (cow_ipc_limbo_size () != 0)
    check_failed (run, "%zu blocks still in the limbo", cow_ipc_limbo_size ());
  snprintf (run->headline, sizeof run->headline,
            "%d consumers x %d tensors: %zu blocks through the limbo, %zu freed by collect",
            IPC_CONSUMERS, IPC_TENSORS, in_limbo, freed);

out:
  for (int c = 0; c < IPC_CONSUMERS; c++)
    for (int k = 0; k < IPC_TENSORS; k++)
      cow_tensor_unref (tensors[c][k]);
  ipc_stop_consumers (run, &consumers);
  cow_ipc_collect ();
}
