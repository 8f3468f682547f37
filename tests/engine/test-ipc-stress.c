/* test-ipc-stress.c — cross-process reference counting under concurrency:
 * producer threads send, drop and collect while consumer processes
 * receive and release, and threads of one process receive the same
 * block concurrently.  Run alone under ThreadSanitizer (concurrency
 * suite).  Consumers are forked before any thread starts and _exit(). */
#include "test-support.h"

#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define N_THREADS 4
#define ROUNDS 200
#define N_ELEMS 256

typedef struct {
  pid_t pid;
  int sock;
  int index;
} Worker;

static void
consumer_main (int sock)
{
  for (;;)
    {
      CowIpcHandle h;
      int fd = -1, n_fds = 0;
      if (cow_ipc_recv_fds (sock, &h, sizeof h, &fd, 1, &n_fds, NULL) != COW_OK)
        _exit (0);
      CowTensor *t = cow_ipc_receive (&h, n_fds > 0 ? fd : -1, NULL);
      float first = t != NULL ? ((const float *) cow_tensor_const_data (t))[0] : -1.0f;
      cow_tensor_unref (t);
      if (send (sock, &first, sizeof first, MSG_NOSIGNAL) != (ssize_t) sizeof first)
        _exit (1);
    }
}

static gpointer
producer_thread (gpointer data)
{
  Worker *w = data;
  CowError error = { 0 };
  int64_t n = N_ELEMS;
  for (int round = 0; round < ROUNDS; round++)
    {
      CowTensor *t = cow_tensor_empty_with_allocator (1, &n, COW_DTYPE_F32,
                                                      cow_ipc_shareable_cpu_allocator (),
                                                      &error);
      test_assert_cow_ok (&error);
      float *p = cow_tensor_mutable_data (t, &error);
      p[0] = (float) (w->index * 1000 + round);
      CowIpcHandle h;
      int fd;
      cow_ipc_send (t, &h, &fd, &error);
      test_assert_cow_ok (&error);
      cow_ipc_send_fds (w->sock, &h, sizeof h, &fd, 1, &error);
      test_assert_cow_ok (&error);
      gboolean early = round % 2 == 0;
      if (early)
        cow_tensor_unref (t); /* limbo unless the consumer was quick */
      float first = 0;
      g_assert_cmpint (recv (w->sock, &first, sizeof first, 0), ==, sizeof first);
      g_assert_cmpfloat (first, ==, (float) (w->index * 1000 + round));
      if (!early)
        cow_tensor_unref (t);
      if (round % 16 == 0)
        cow_ipc_collect ();
    }
  return NULL;
}

typedef struct {
  CowIpcHandle handles[ROUNDS];
  int fds[ROUNDS];
  int base;
} LoopbackJob;

static gpointer
loopback_thread (gpointer data)
{
  LoopbackJob *job = data;
  CowError error = { 0 };
  for (int i = job->base; i < ROUNDS; i += N_THREADS)
    {
      CowTensor *t = cow_ipc_receive (&job->handles[i], dup (job->fds[i]), &error);
      test_assert_cow_ok (&error);
      g_assert_cmpfloat (((const float *) cow_tensor_const_data (t))[0], ==, 7.0f);
      cow_tensor_unref (t);
    }
  return NULL;
}

static void
test_ipc_stress_processes_and_threads (void)
{
  Worker workers[N_THREADS];
  for (int i = 0; i < N_THREADS; i++)
    {
      int sv[2];
      g_assert_cmpint (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), ==, 0);
      pid_t pid = fork ();
      g_assert_cmpint (pid, >=, 0);
      if (pid == 0)
        {
          close (sv[0]);
          for (int j = 0; j < i; j++) /* else their consumers never see EOF */
            close (workers[j].sock);
          consumer_main (sv[1]);
          _exit (0);
        }
      close (sv[1]);
      workers[i] = (Worker) { .pid = pid, .sock = sv[0], .index = i };
    }
  GThread *threads[N_THREADS];
  for (int i = 0; i < N_THREADS; i++)
    threads[i] = g_thread_new ("producer", producer_thread, &workers[i]);
  for (int i = 0; i < N_THREADS; i++)
    g_thread_join (threads[i]);
  for (int i = 0; i < N_THREADS; i++)
    {
      close (workers[i].sock);
      g_assert_cmpint (waitpid (workers[i].pid, NULL, 0), ==, workers[i].pid);
    }
  cow_ipc_collect ();
  g_assert_cmpuint (cow_ipc_limbo_size (), ==, 0);
  g_assert_cmpuint (cow_ipc_shareable_live_bytes (), ==, 0);
}

/* Many handles of one block received concurrently in one process: the
 * cache keeps one mapping and every slot ends at zero. */
static void
test_ipc_stress_concurrent_receive (void)
{
  CowError error = { 0 };
  int64_t n = N_ELEMS;
  CowTensor *t = cow_tensor_empty_with_allocator (1, &n, COW_DTYPE_F32,
                                                  cow_ipc_shareable_cpu_allocator (), &error);
  test_assert_cow_ok (&error);
  ((float *) cow_tensor_mutable_data (t, &error))[0] = 7.0f;
  LoopbackJob *jobs = g_new0 (LoopbackJob, N_THREADS);
  for (int i = 0; i < ROUNDS; i++)
    {
      int fd;
      cow_ipc_send (t, &jobs[0].handles[i], &fd, &error);
      test_assert_cow_ok (&error);
      jobs[0].fds[i] = fd;
    }
  GThread *threads[N_THREADS];
  for (int i = 0; i < N_THREADS; i++)
    {
      if (i > 0)
        memcpy (&jobs[i], &jobs[0], sizeof jobs[0]);
      jobs[i].base = i;
      threads[i] = g_thread_new ("receiver", loopback_thread, &jobs[i]);
    }
  for (int i = 0; i < N_THREADS; i++)
    g_thread_join (threads[i]);
  for (int i = 0; i < ROUNDS; i++)
    g_assert_cmpint (cow_ipc_handle_count (&jobs[0].handles[i]), ==, 0);
  cow_tensor_unref (t);
  g_assert_cmpuint (cow_ipc_limbo_size (), ==, 0);
  g_assert_cmpuint (cow_ipc_shareable_live_bytes (), ==, 0);
  g_free (jobs);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/ipc-stress/processes-and-threads", test_ipc_stress_processes_and_threads);
  g_test_add_func ("/ipc-stress/concurrent-receive", test_ipc_stress_concurrent_receive);
  return g_test_run ();
}
