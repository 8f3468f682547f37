/* test-ipc.c — cross-process reference counting over the CPU transport.
 *
 * Each test forks consumer processes that talk to the producer (this
 * process) over a SOCK_SEQPACKET socketpair: the producer sends commands
 * with a handle and the block's memfd; the consumer receives, releases
 * and answers with what it saw.  Consumers never return into GLib: they
 * _exit().  At exit the suite checks that /dev/shm holds no counter file
 * of this process.
 */
#include "test-support.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

enum { CMD_RECEIVE = 1, CMD_RELEASE, CMD_WRITE, CMD_EXIT };

typedef struct {
  int cmd;
  int index; /* RECEIVE: where to keep the tensor; RELEASE/WRITE: which */
  double value;
  CowIpcHandle handle;
} Command;

typedef struct {
  int status;      /* CowStatus */
  double first;    /* first element after the command */
  uint64_t address;
  char message[COW_ERROR_MESSAGE_MAX];
} Reply;

typedef struct {
  pid_t pid;
  int sock;
} Consumer;

#define MAX_HELD 64

static void
consumer_main (int sock)
{
  CowTensor *held[MAX_HELD] = { 0 };
  for (;;)
    {
      Command cmd;
      int fd = -1, n_fds = 0;
      if (cow_ipc_recv_fds (sock, &cmd, sizeof cmd, &fd, 1, &n_fds, NULL) != COW_OK)
        _exit (0);
      Reply reply = { 0 };
      CowError error = { 0 };
      int i = cmd.index >= 0 && cmd.index < MAX_HELD ? cmd.index : 0;
      switch (cmd.cmd)
        {
        case CMD_RECEIVE:
          held[i] = cow_ipc_receive (&cmd.handle, n_fds > 0 ? fd : -1, &error);
          reply.status = error.code;
          memcpy (reply.message, error.message, sizeof reply.message);
          break;
        case CMD_RELEASE:
          cow_tensor_unref (held[i]);
          held[i] = NULL;
          break;
        case CMD_WRITE:
          {
            float *data = cow_tensor_mutable_data (held[i], &error);
            if (data != NULL)
              data[0] = (float) cmd.value;
            reply.status = error.code;
          }
          break;
        case CMD_EXIT:
        default:
          _exit (0);
        }
      if (cmd.cmd != CMD_RELEASE && held[i] != NULL)
        {
          reply.first = ((const float *) cow_tensor_const_data (held[i]))[0];
          reply.address = (uint64_t) cow_tensor_data_address (held[i]);
        }
      if (send (sock, &reply, sizeof reply, MSG_NOSIGNAL) != (ssize_t) sizeof reply)
        _exit (1);
    }
}

static Consumer
consumer_start (void)
{
  int sv[2];
  g_assert_cmpint (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), ==, 0);
  pid_t pid = fork ();
  g_assert_cmpint (pid, >=, 0);
  if (pid == 0)
    {
      close (sv[0]);
      consumer_main (sv[1]);
      _exit (0);
    }
  close (sv[1]);
  return (Consumer) { .pid = pid, .sock = sv[0] };
}

static Reply
consumer_command (Consumer *c, int cmd, int index, const CowIpcHandle *handle,
                  int fd, double value)
{
  Command command = { .cmd = cmd, .index = index, .value = value };
  if (handle != NULL)
    command.handle = *handle;
  CowError error = { 0 };
  cow_ipc_send_fds (c->sock, &command, sizeof command, &fd, fd >= 0 ? 1 : 0, &error);
  test_assert_cow_ok (&error);
  Reply reply = { 0 };
  g_assert_cmpint (recv (c->sock, &reply, sizeof reply, 0), ==, sizeof reply);
  return reply;
}

static Reply
consumer_receive (Consumer *c, int index, const CowIpcHandle *handle, int fd)
{
  Reply reply = consumer_command (c, CMD_RECEIVE, index, handle, fd, 0);
  if (reply.status != COW_OK)
    g_error ("consumer could not receive: %s", reply.message);
  return reply;
}

static void
consumer_release (Consumer *c, int index)
{
  consumer_command (c, CMD_RELEASE, index, NULL, -1, 0);
}

static void
consumer_stop (Consumer *c)
{
  Command command = { .cmd = CMD_EXIT };
  send (c->sock, &command, sizeof command, MSG_NOSIGNAL); /* may already be gone */
  close (c->sock);
  int status = 0;
  g_assert_cmpint (waitpid (c->pid, &status, 0), ==, c->pid);
}

/* A shareable f32 tensor of @n elements holding 1, 2, … */
static CowTensor *
shareable_tensor (int64_t n)
{
  CowError error = { 0 };
  CowTensor *t = cow_tensor_empty_with_allocator (1, &n, COW_DTYPE_F32,
                                                  cow_ipc_shareable_cpu_allocator (), &error);
  test_assert_cow_ok (&error);
  float *data = cow_tensor_mutable_data (t, &error);
  for (int64_t i = 0; i < n; i++)
    data[i] = (float) (i + 1);
  return t;
}

static void
send_tensor (CowTensor *t, CowIpcHandle *handle, int *fd)
{
  CowError error = { 0 };
  cow_ipc_send (t, handle, fd, &error);
  test_assert_cow_ok (&error);
}

/* Counts, shared writes and the direct free when no consumer counts. */
static void
test_ipc_counts_through_processes (void)
{
  TestRecorder *rec = test_recorder_new ();
  test_recorder_start (rec);
  Consumer c = consumer_start ();
  CowTensor *t = shareable_tensor (1024);
  CowIpcHandle h;
  int fd;
  send_tensor (t, &h, &fd);
  g_assert_cmpint (cow_ipc_handle_count (&h), ==, 1);
  Reply r = consumer_receive (&c, 0, &h, fd);
  g_assert_cmpfloat (r.first, ==, 1.0);
  g_assert_cmpint (cow_ipc_handle_count (&h), ==, 1);
  /* A consumer's write reaches the producer's bytes: shared memory. */
  r = consumer_command (&c, CMD_WRITE, 0, NULL, -1, 42.0);
  g_assert_cmpint (r.status, ==, COW_OK);
  g_assert_cmpfloat (((const float *) cow_tensor_const_data (t))[0], ==, 42.0f);
  consumer_release (&c, 0);
  g_assert_cmpint (cow_ipc_handle_count (&h), ==, 0);
  cow_tensor_unref (t);
  g_assert_cmpuint (cow_ipc_limbo_size (), ==, 0);
  g_assert_cmpuint (test_recorder_count (rec, COW_EVENT_IPC_SEND), ==, 1);
  g_assert_cmpuint (test_recorder_count (rec, COW_EVENT_IPC_LIMBO_ENTER), ==, 0);
  g_assert_cmpuint (cow_ipc_shareable_live_bytes (), ==, 0);
  consumer_stop (&c);
  test_recorder_free (rec);
}

/* The producer drops early: limbo, then an explicit collect frees it. */
static void
test_ipc_limbo_and_explicit_collect (void)
{
  TestRecorder *rec = test_recorder_new ();
  test_recorder_start (rec);
  Consumer c = consumer_start ();
  CowTensor *t = shareable_tensor (256);
  uint64_t allocation = cow_storage_allocation_id (cow_tensor_storage (t));
  CowIpcHandle h;
  int fd;
  send_tensor (t, &h, &fd);
  consumer_receive (&c, 0, &h, fd);
  cow_tensor_unref (t);
  g_assert_cmpuint (cow_ipc_limbo_size (), ==, 1);
  g_assert_cmpuint (cow_ipc_shareable_live_bytes (), ==, 256 * sizeof (float));
  const CowTraceEvent *enter = test_recorder_find (rec, COW_EVENT_IPC_LIMBO_ENTER, 0);
  g_assert_nonnull (enter);
  g_assert_cmpuint (enter->ipc.allocation_id, ==, allocation);
  g_assert_cmpuint (enter->ipc.count, ==, 1);
  g_assert_cmpuint (enter->ipc.peer_pid, ==, (guint64) c.pid);
  g_assert_cmpuint (enter->ipc.counter_offset, ==, h.counter_offset);
  g_assert_cmpuint (cow_ipc_collect (), ==, 0); /* still counted */
  consumer_release (&c, 0);
  g_assert_cmpuint (cow_ipc_collect (), ==, 1);
  g_assert_cmpuint (cow_ipc_limbo_size (), ==, 0);
  g_assert_cmpuint (cow_ipc_shareable_live_bytes (), ==, 0);
  const CowTraceEvent *freed = test_recorder_find (rec, COW_EVENT_IPC_LIMBO_FREE, 0);
  g_assert_nonnull (freed);
  g_assert_cmpuint (freed->ipc.allocation_id, ==, allocation);
  g_assert_cmpuint (freed->aux, ==, 0);
  guint n = test_recorder_count (rec, COW_EVENT_IPC_COLLECT);
  const CowTraceEvent *last = test_recorder_find (rec, COW_EVENT_IPC_COLLECT, n - 1);
  g_assert_cmpuint (last->aux, ==, COW_IPC_COLLECT_EXPLICIT);
  g_assert_cmpuint (last->ipc.counter_offset, ==, 1); /* freed */
  g_assert_cmpuint (last->ipc.count, ==, 0);          /* left */
  consumer_stop (&c);
  test_recorder_free (rec);
}

/* Freeing another shared block scans the limbo. */
static void
test_ipc_producer_free_scans (void)
{
  TestRecorder *rec = test_recorder_new ();
  test_recorder_start (rec);
  Consumer c = consumer_start ();
  CowTensor *a = shareable_tensor (64), *b = shareable_tensor (64);
  CowIpcHandle ha, hb;
  int fa, fb;
  send_tensor (a, &ha, &fa);
  send_tensor (b, &hb, &fb);
  consumer_receive (&c, 0, &ha, fa);
  consumer_receive (&c, 1, &hb, fb);
  cow_tensor_unref (a);
  g_assert_cmpuint (cow_ipc_limbo_size (), ==, 1);
  consumer_release (&c, 0);
  consumer_release (&c, 1);
  test_recorder_clear (rec);
  cow_tensor_unref (b); /* b goes at once, and the scan frees a */
  g_assert_cmpuint (cow_ipc_limbo_size (), ==, 0);
  g_assert_cmpuint (test_recorder_count (rec, COW_EVENT_IPC_LIMBO_FREE), ==, 1);
  const CowTraceEvent *collect = test_recorder_find (rec, COW_EVENT_IPC_COLLECT, 0);
  g_assert_nonnull (collect);
  g_assert_cmpuint (collect->aux, ==, COW_IPC_COLLECT_PRODUCER_FREE);
  g_assert_cmpuint (collect->ipc.counter_offset, ==, 1);
  g_assert_cmpuint (cow_ipc_shareable_live_bytes (), ==, 0);
  consumer_stop (&c);
  test_recorder_free (rec);
}

/* An allocation that finds no room scans the limbo and retries once. */
static void
test_ipc_allocation_miss_scans (void)
{
  TestRecorder *rec = test_recorder_new ();
  test_recorder_start (rec);
  Consumer c = consumer_start ();
  CowTensor *a = shareable_tensor (1024); /* 4 KiB */
  cow_ipc_shareable_set_limit (4096);
  CowIpcHandle h;
  int fd;
  send_tensor (a, &h, &fd);
  consumer_receive (&c, 0, &h, fd);
  cow_tensor_unref (a);
  g_assert_cmpuint (cow_ipc_limbo_size (), ==, 1);

  /* Still counted: the miss scans, frees nothing, and fails. */
  CowError error = { 0 };
  int64_t n = 1024;
  CowTensor *b = cow_tensor_empty_with_allocator (1, &n, COW_DTYPE_F32,
                                                  cow_ipc_shareable_cpu_allocator (), &error);
  g_assert_null (b);
  test_assert_cow_error (&error, COW_ERROR_NO_MEMORY);
  g_assert_nonnull (strstr (error.message, "limit"));

  consumer_release (&c, 0);
  test_recorder_clear (rec);
  cow_error_clear (&error);
  b = cow_tensor_empty_with_allocator (1, &n, COW_DTYPE_F32,
                                       cow_ipc_shareable_cpu_allocator (), &error);
  test_assert_cow_ok (&error);
  g_assert_nonnull (b);
  const CowTraceEvent *collect = test_recorder_find (rec, COW_EVENT_IPC_COLLECT, 0);
  g_assert_nonnull (collect);
  g_assert_cmpuint (collect->aux, ==, COW_IPC_COLLECT_ALLOCATION_MISS);
  g_assert_cmpuint (collect->ipc.counter_offset, ==, 1);
  g_assert_cmpint (test_recorder_position (rec, COW_EVENT_IPC_LIMBO_FREE, 0), <,
                   test_recorder_position (rec, COW_EVENT_ALLOCATION_NEW, 0));
  cow_tensor_unref (b);
  cow_ipc_shareable_set_limit (0);
  consumer_stop (&c);
  test_recorder_free (rec);
}

/* A consumer killed with SIGKILL never releases; its slot stops counting
 * once it is gone (here still a zombie: not yet reaped). */
static void
test_ipc_killed_consumer (void)
{
  TestRecorder *rec = test_recorder_new ();
  test_recorder_start (rec);
  Consumer c = consumer_start ();
  CowTensor *t = shareable_tensor (128);
  CowIpcHandle h;
  int fd;
  send_tensor (t, &h, &fd);
  consumer_receive (&c, 0, &h, fd);
  cow_tensor_unref (t);
  g_assert_cmpuint (cow_ipc_limbo_size (), ==, 1);
  g_assert_cmpuint (cow_ipc_collect (), ==, 0); /* alive: still counts */

  g_assert_cmpint (kill (c.pid, SIGKILL), ==, 0);
  siginfo_t info;
  g_assert_cmpint (waitid (P_PID, (id_t) c.pid, &info, WEXITED | WNOWAIT), ==, 0);
  g_assert_cmpint (cow_ipc_handle_count (&h), ==, 1); /* it never decremented */
  g_assert_cmpuint (cow_ipc_collect (), ==, 1);       /* zombie counts as dead */
  g_assert_cmpuint (cow_ipc_limbo_size (), ==, 0);
  const CowTraceEvent *freed = test_recorder_find (rec, COW_EVENT_IPC_LIMBO_FREE, 0);
  g_assert_nonnull (freed);
  g_assert_cmpuint (freed->aux, ==, 1); /* released for a dead consumer */
  g_assert_cmpuint (freed->ipc.peer_pid, ==, (guint64) c.pid);
  g_assert_cmpuint (cow_ipc_shareable_live_bytes (), ==, 0);
  close (c.sock);
  g_assert_cmpint (waitpid (c.pid, NULL, 0), ==, c.pid);
  test_recorder_free (rec);
}

/* Two handles of one block, received by one process: one mapping, and
 * the second slot is released at once. */
static void
test_ipc_receive_twice (void)
{
  Consumer c = consumer_start ();
  CowTensor *t = shareable_tensor (32);
  CowIpcHandle h1, h2;
  int f1, f2;
  send_tensor (t, &h1, &f1);
  send_tensor (t, &h2, &f2);
  g_assert_cmpuint (h1.block_id, ==, h2.block_id);
  g_assert_cmpuint (h1.counter_offset, !=, h2.counter_offset);
  Reply r1 = consumer_receive (&c, 0, &h1, f1);
  Reply r2 = consumer_receive (&c, 1, &h2, f2);
  g_assert_cmpuint (r1.address, ==, r2.address); /* the cached mapping */
  g_assert_cmpint (cow_ipc_handle_count (&h1), ==, 1);
  g_assert_cmpint (cow_ipc_handle_count (&h2), ==, 0);
  cow_tensor_unref (t);
  g_assert_cmpuint (cow_ipc_limbo_size (), ==, 1);
  consumer_release (&c, 0);
  g_assert_cmpint (cow_ipc_handle_count (&h1), ==, 1); /* tensor 1 still maps it */
  g_assert_cmpuint (cow_ipc_collect (), ==, 0);
  consumer_release (&c, 1);
  g_assert_cmpint (cow_ipc_handle_count (&h1), ==, 0);
  g_assert_cmpuint (cow_ipc_collect (), ==, 1);
  consumer_stop (&c);
}

/* Files of @nslots slots: a new file when one is full; a full file goes
 * from /dev/shm once none of its slots is in use. */
static gboolean
shm_name_exists (const char *name)
{
  char path[128];
  g_snprintf (path, sizeof path, "/dev/shm%s", name);
  return access (path, F_OK) == 0;
}

static void
test_ipc_counter_file_rollover (void)
{
  CowError error = { 0 };
  cow_ipc_set_counter_file_slots (3, &error);
  test_assert_cow_ok (&error);
  size_t files_before = cow_ipc_counter_files_open ();
  CowTensor *t = shareable_tensor (16);
  CowIpcHandle h[7];
  CowTensor *got[7];
  for (int i = 0; i < 7; i++)
    {
      int fd;
      send_tensor (t, &h[i], &fd);
      g_assert_cmpuint (h[i].counter_offset, ==, (guint64) (i % 3));
      /* Loopback: this process is its own consumer. */
      got[i] = cow_ipc_receive (&h[i], dup (fd), &error);
      test_assert_cow_ok (&error);
    }
  g_assert_cmpuint (cow_ipc_counter_files_open (), ==, files_before + 3);
  g_assert_cmpuint (h[0].counter_file_id, !=, h[3].counter_file_id);
  g_assert_cmpuint (h[3].counter_file_id, !=, h[6].counter_file_id);
  g_assert_true (shm_name_exists (h[0].counter_file));
  for (int i = 0; i < 7; i++)
    cow_tensor_unref (got[i]);
  cow_tensor_unref (t);
  /* Files 1 and 2 are full and unused: gone.  File 3 still has free
   * slots: it stays (unlinked at exit). */
  g_assert_false (shm_name_exists (h[0].counter_file));
  g_assert_false (shm_name_exists (h[3].counter_file));
  g_assert_true (shm_name_exists (h[6].counter_file));
  g_assert_cmpuint (cow_ipc_counter_files_open (), ==, files_before + 1);
  cow_ipc_set_counter_file_slots (COW_IPC_COUNTER_FILE_SLOTS, &error);
  g_assert_cmpuint (cow_ipc_limbo_size (), ==, 0);
  g_assert_cmpint (cow_ipc_set_counter_file_slots (0, &error), ==, COW_ERROR_INVALID_ARGUMENT);
}

/* Only the producer shares a block; only shareable memory can be sent. */
static void
test_ipc_send_refusals (void)
{
  CowError error = { 0 };
  CowTensor *t = shareable_tensor (8);
  CowIpcHandle h;
  int fd;
  send_tensor (t, &h, &fd);
  CowTensor *got = cow_ipc_receive (&h, dup (fd), &error);
  test_assert_cow_ok (&error);
  g_assert_true (cow_ipc_is_received (got));
  CowIpcHandle h2;
  int fd2 = 7;
  g_assert_cmpint (cow_ipc_send (got, &h2, &fd2, &error), ==, COW_ERROR_NOT_SUPPORTED);
  test_assert_cow_error (&error, COW_ERROR_NOT_SUPPORTED);
  g_assert_nonnull (strstr (error.message, "received from another process"));
  g_assert_cmpint (fd2, ==, -1);

  /* A lazy clone of a received tensor copies (the bytes are shared). */
  cow_error_clear (&error);
  CowTensor *clone = cow_tensor_lazy_clone (got, &error);
  test_assert_cow_ok (&error);
  g_assert_false (cow_tensor_is_alias_of (clone, got));
  cow_tensor_unref (clone);
  cow_tensor_unref (got);
  cow_tensor_unref (t);

  int64_t n = 4;
  CowTensor *plain = cow_tensor_zeros (1, &n, COW_DTYPE_F32, &error);
  g_assert_cmpint (cow_ipc_send (plain, &h2, &fd2, &error), ==, COW_ERROR_NOT_SUPPORTED);
  g_assert_nonnull (strstr (error.message, "cow_ipc_shareable_cpu_allocator"));
  cow_tensor_unref (plain);

  g_assert_cmpint (cow_ipc_send (NULL, &h2, &fd2, &error), ==, COW_ERROR_INVALID_ARGUMENT);
  CowIpcHandle bad = { 0 };
  g_assert_null (cow_ipc_receive (&bad, -1, &error));
  test_assert_cow_error (&error, COW_ERROR_INVALID_ARGUMENT);
}

/* A lazy copy is materialized before it is sent. */
static void
test_ipc_send_lazy_copy (void)
{
  CowError error = { 0 };
  CowTensor *t = shareable_tensor (8);
  CowTensor *clone = cow_tensor_lazy_clone (t, &error);
  test_assert_cow_ok (&error);
  g_assert_true (cow_tensor_is_cow (clone));
  CowIpcHandle h;
  int fd;
  send_tensor (clone, &h, &fd);
  g_assert_false (cow_tensor_is_cow (clone));
  CowTensor *got = cow_ipc_receive (&h, dup (fd), &error);
  test_assert_cow_ok (&error);
  test_assert_tensor_values (got, 1, 2, 3, 4, 5, 6, 7, 8);
  cow_tensor_unref (got);
  cow_tensor_unref (clone);
  cow_tensor_unref (t);
  g_assert_cmpuint (cow_ipc_shareable_live_bytes (), ==, 0);
}

/* Every step's event with its payload (loopback: one recorder). */
static void
test_ipc_trace_events (void)
{
  TestRecorder *rec = test_recorder_new ();
  test_recorder_start (rec);
  CowError error = { 0 };
  CowTensor *t = shareable_tensor (8);
  uint64_t allocation = cow_storage_allocation_id (cow_tensor_storage (t));
  CowIpcHandle h;
  int fd;
  send_tensor (t, &h, &fd);
  CowTensor *got = cow_ipc_receive (&h, dup (fd), &error);
  test_assert_cow_ok (&error);
  cow_tensor_unref (t); /* limbo: still counted by ourselves */
  cow_tensor_unref (got);
  cow_ipc_collect ();
  test_recorder_stop (rec);

  const CowEventType steps[] = { COW_EVENT_IPC_SEND, COW_EVENT_IPC_RECEIVE,
                                 COW_EVENT_IPC_LIMBO_ENTER, COW_EVENT_IPC_RELEASE,
                                 COW_EVENT_IPC_LIMBO_FREE };
  const uint64_t counts[] = { 1, 1, 1, 0, 0 };
  gint last = -1;
  for (guint i = 0; i < G_N_ELEMENTS (steps); i++)
    {
      const CowTraceEvent *ev = test_recorder_find (rec, steps[i], 0);
      g_assert_nonnull (ev);
      g_assert_cmpuint (ev->op, ==, COW_OP_IPC);
      g_assert_cmpuint (ev->ipc.allocation_id, ==, allocation);
      g_assert_cmpuint (ev->ipc.counter_file_id, ==, h.counter_file_id);
      g_assert_cmpuint (ev->ipc.counter_offset, ==, h.counter_offset);
      g_assert_cmpuint (ev->ipc.count, ==, counts[i]);
      gint pos = test_recorder_position (rec, steps[i], 0);
      g_assert_cmpint (pos, >, last);
      last = pos;
    }
  g_assert_cmpuint (test_recorder_find (rec, COW_EVENT_IPC_RECEIVE, 0)->ipc.peer_pid, ==,
                    (guint64) getpid ());
  g_assert_cmpuint (test_recorder_count (rec, COW_EVENT_IPC_COLLECT), >=, 1);
  test_recorder_free (rec);
}

/* Without a device the CUDA transport says so. */
static void
test_ipc_cuda_without_device (void)
{
  CowError error = { 0 };
  CowStatus status = cow_ipc_cuda_available (&error);
  if (status == COW_ERROR_NOT_SUPPORTED)
    {
      g_test_skip ("built without the CUDA toolkit");
      return;
    }
  if (status == COW_OK)
    {
      g_test_skip ("a CUDA device is present");
      return;
    }
  test_assert_cow_error (&error, COW_ERROR_DEVICE);
  g_assert_true (g_str_has_prefix (error.message, "no CUDA device: "));
  const CowIpcTransport *cuda = cow_ipc_transport (COW_IPC_TRANSPORT_CUDA);
  g_assert_nonnull (cuda);
  CowIpcHandle h = { .transport = COW_IPC_TRANSPORT_CUDA };
  void *data = NULL, *mapping = NULL;
  cow_error_clear (&error);
  g_assert_cmpint (cuda->open (cuda, &h, -1, &data, &mapping, &error), ==, COW_ERROR_DEVICE);
  g_assert_true (g_str_has_prefix (error.message, "no CUDA device: "));
  cow_error_clear (&error);
  g_assert_null (cow_ipc_shareable_cuda_allocator (0, &error));
  g_assert_true (g_str_has_prefix (error.message, "no CUDA device: "));
}

/* Handles and descriptors over a socket: the helpers themselves. */
/* Shutdown with a block a consumer still holds: one warning, an
 * IPC_COLLECT with the shutdown trigger, and the count it returns. */
static void
test_ipc_shutdown_reports_held_blocks (void)
{
  TestRecorder *rec = test_recorder_new ();
  test_recorder_start (rec);
  Consumer c = consumer_start ();
  CowTensor *t = shareable_tensor (64);
  CowIpcHandle h;
  int fd;
  send_tensor (t, &h, &fd);
  consumer_receive (&c, 0, &h, fd);
  cow_tensor_unref (t);
  g_assert_cmpuint (cow_ipc_limbo_size (), ==, 1);
  g_assert_cmpuint (cow_ipc_shutdown (), ==, 1);
  guint n = test_recorder_count (rec, COW_EVENT_IPC_COLLECT);
  const CowTraceEvent *last = test_recorder_find (rec, COW_EVENT_IPC_COLLECT, n - 1);
  g_assert_cmpuint (last->aux, ==, COW_IPC_COLLECT_SHUTDOWN);
  g_assert_cmpuint (last->ipc.count, ==, 1);
  /* The consumer still reads valid bytes; once it releases, nothing is held. */
  consumer_release (&c, 0);
  g_assert_cmpuint (cow_ipc_shutdown (), ==, 0);
  g_assert_cmpuint (cow_ipc_limbo_size (), ==, 0);
  g_assert_cmpuint (cow_ipc_shareable_live_bytes (), ==, 0);
  consumer_stop (&c);
  test_recorder_free (rec);
}

/* A process's first counter file removes the files of producers that
 * died (and only those): a fresh process (fork) sends once. */
static void
test_ipc_stale_files_removed_at_first_file (void)
{
  pid_t dead = fork ();
  g_assert_cmpint (dead, >=, 0);
  if (dead == 0)
    _exit (0);
  g_assert_cmpint (waitpid (dead, NULL, 0), ==, dead);
  g_autofree char *stale = g_strdup_printf ("/cowtensor-ipc-%ld-0", (long) dead);
  g_autofree char *alive = g_strdup_printf ("/cowtensor-ipc-%ld-999999", (long) getpid ());
  int fd = shm_open (stale, O_RDWR | O_CREAT | O_EXCL, 0600);
  g_assert_cmpint (fd, >=, 0);
  close (fd);
  fd = shm_open (alive, O_RDWR | O_CREAT | O_EXCL, 0600);
  g_assert_cmpint (fd, >=, 0);
  close (fd);

  pid_t child = fork ();
  g_assert_cmpint (child, >=, 0);
  if (child == 0)
    {
      /* A new process: no counter file yet. */
      CowTensor *t = shareable_tensor (16);
      CowIpcHandle h;
      int sfd;
      CowError error = { 0 };
      if (cow_ipc_send (t, &h, &sfd, &error) != COW_OK)
        _exit (2);
      int gone = shm_open (stale, O_RDONLY, 0) < 0 && errno == ENOENT;
      int kept = shm_open (alive, O_RDONLY, 0) >= 0;
      /* Our own slot back, then our file goes (by hand: _exit skips
       * the exit handler, and exit would run LeakSanitizer over the
       * parent's state this child inherited). */
      CowTensor *r = cow_ipc_receive (&h, dup (sfd), &error);
      cow_tensor_unref (r);
      cow_tensor_unref (t);
      shm_unlink (h.counter_file);
      _exit (gone && kept ? 0 : 1);
    }
  int status = 0;
  g_assert_cmpint (waitpid (child, &status, 0), ==, child);
  shm_unlink (stale);
  g_assert_cmpint (shm_unlink (alive), ==, 0); /* a live producer's file is kept */
  g_assert_true (WIFEXITED (status));
  g_assert_cmpint (WEXITSTATUS (status), ==, 0);
}

/* A child forked after a receive inherits the received-data record but
 * not the slot: its release unmaps without decrementing the parent's. */
static void
test_ipc_fork_does_not_double_release (void)
{
  CowTensor *t = shareable_tensor (32);
  CowIpcHandle h;
  int fd;
  send_tensor (t, &h, &fd);
  CowError error = { 0 };
  CowTensor *r = cow_ipc_receive (&h, dup (fd), &error);
  test_assert_cow_ok (&error);
  g_assert_cmpint (cow_ipc_handle_count (&h), ==, 1);
  pid_t child = fork ();
  g_assert_cmpint (child, >=, 0);
  if (child == 0)
    {
      cow_tensor_unref (r);
      _exit (0);
    }
  int status = 0;
  g_assert_cmpint (waitpid (child, &status, 0), ==, child);
  g_assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 0);
  g_assert_cmpint (cow_ipc_handle_count (&h), ==, 1); /* still ours */
  g_assert_cmpfloat (((const float *) cow_tensor_const_data (r))[0], ==, 1.0f);
  cow_tensor_unref (r);
  g_assert_cmpint (cow_ipc_handle_count (&h), ==, 0);
  cow_tensor_unref (t);
  g_assert_cmpuint (cow_ipc_limbo_size (), ==, 0);
  g_assert_cmpuint (cow_ipc_shareable_live_bytes (), ==, 0);
}

/* A child forked after a receive that receives the same block again
 * takes a mapping and a slot of its own: the producer keeps the block
 * for the child after the parent has released its own receive. */
static void
test_ipc_forked_child_receives_own_slot (void)
{
  CowTensor *t = shareable_tensor (32);
  CowIpcHandle h1, h2;
  int fd1, fd2;
  send_tensor (t, &h1, &fd1);
  CowError error = { 0 };
  CowTensor *r1 = cow_ipc_receive (&h1, dup (fd1), &error);
  test_assert_cow_ok (&error);
  send_tensor (t, &h2, &fd2);
  int ready[2], go[2];
  g_assert_cmpint (pipe (ready), ==, 0);
  g_assert_cmpint (pipe (go), ==, 0);
  pid_t child = fork ();
  g_assert_cmpint (child, >=, 0);
  if (child == 0)
    {
      close (ready[0]); /* so that each side sees EOF if the other dies */
      close (go[1]);
      CowError cerr = { 0 };
      CowTensor *r2 = cow_ipc_receive (&h2, dup (fd2), &cerr);
      char byte = r2 != NULL
                  && cow_tensor_data_address (r2) != cow_tensor_data_address (r1)
                  && ((const float *) cow_tensor_const_data (r2))[0] == 1.0f ? 'R' : 'X';
      if (write (ready[1], &byte, 1) != 1 || read (go[0], &byte, 1) != 1)
        _exit (2);
      /* Still valid after the parent let go of its own receive. */
      int ok = ((const float *) cow_tensor_const_data (r2))[0] == 1.0f;
      cow_tensor_unref (r2);
      _exit (ok ? 0 : 1);
    }
  close (ready[1]);
  close (go[0]);
  char byte = 0;
  g_assert_cmpint (read (ready[0], &byte, 1), ==, 1);
  g_assert_cmpint (byte, ==, 'R');
  g_assert_cmpint (cow_ipc_handle_count (&h2), ==, 1); /* the child's own */
  cow_tensor_unref (r1);
  g_assert_cmpint (cow_ipc_handle_count (&h1), ==, 0);
  cow_tensor_unref (t);
  g_assert_cmpuint (cow_ipc_limbo_size (), ==, 1); /* kept for the child */
  g_assert_cmpint (write (go[1], "g", 1), ==, 1);
  int status = 0;
  g_assert_cmpint (waitpid (child, &status, 0), ==, child);
  g_assert_true (WIFEXITED (status));
  g_assert_cmpint (WEXITSTATUS (status), ==, 0);
  g_assert_cmpint (cow_ipc_handle_count (&h2), ==, 0);
  cow_ipc_collect ();
  g_assert_cmpuint (cow_ipc_limbo_size (), ==, 0);
  g_assert_cmpuint (cow_ipc_shareable_live_bytes (), ==, 0);
  close (ready[0]);
  close (go[1]);
}

static void
test_ipc_fd_passing (void)
{
  int sv[2];
  g_assert_cmpint (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), ==, 0);
  CowError error = { 0 };
  int fds[2] = { sv[0], sv[1] };
  char msg[8] = "hello";
  cow_ipc_send_fds (sv[0], msg, sizeof msg, fds, 2, &error);
  test_assert_cow_ok (&error);
  char got[8];
  int out[1] = { -1 }, n = 0;
  cow_ipc_recv_fds (sv[1], got, sizeof got, out, 1, &n, &error);
  test_assert_cow_ok (&error);
  g_assert_cmpstr (got, ==, "hello");
  g_assert_cmpint (n, ==, 1); /* the second was closed */
  close (out[0]);
  close (sv[0]);
  g_assert_cmpint (cow_ipc_recv_fds (sv[1], got, sizeof got, out, 1, &n, &error), ==,
                   COW_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error.message, "closed"));
  close (sv[1]);
}

/* Run at exit after the engine's own handler (registered later, so run
 * earlier): no counter file of this process may be left. */
static void
check_no_leftovers (void)
{
  char prefix[64];
  g_snprintf (prefix, sizeof prefix, "cowtensor-ipc-%ld-", (long) getpid ());
  DIR *dir = opendir ("/dev/shm");
  if (dir == NULL)
    return;
  int left = 0;
  struct dirent *entry;
  while ((entry = readdir (dir)) != NULL)
    if (strncmp (entry->d_name, prefix, strlen (prefix)) == 0)
      {
        fprintf (stderr, "leftover counter file /dev/shm/%s\n", entry->d_name);
        left++;
      }
  closedir (dir);
  if (left > 0)
    _exit (1);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  atexit (check_no_leftovers);
  g_test_add_func ("/ipc/counts-through-processes", test_ipc_counts_through_processes);
  g_test_add_func ("/ipc/limbo-and-explicit-collect", test_ipc_limbo_and_explicit_collect);
  g_test_add_func ("/ipc/producer-free-scans", test_ipc_producer_free_scans);
  g_test_add_func ("/ipc/allocation-miss-scans", test_ipc_allocation_miss_scans);
  g_test_add_func ("/ipc/killed-consumer", test_ipc_killed_consumer);
  g_test_add_func ("/ipc/receive-twice", test_ipc_receive_twice);
  g_test_add_func ("/ipc/counter-file-rollover", test_ipc_counter_file_rollover);
  g_test_add_func ("/ipc/send-refusals", test_ipc_send_refusals);
  g_test_add_func ("/ipc/send-lazy-copy", test_ipc_send_lazy_copy);
  g_test_add_func ("/ipc/trace-events", test_ipc_trace_events);
  g_test_add_func ("/ipc/cuda-without-device", test_ipc_cuda_without_device);
  g_test_add_func ("/ipc/fd-passing", test_ipc_fd_passing);
  g_test_add_func ("/ipc/shutdown-reports-held-blocks", test_ipc_shutdown_reports_held_blocks);
  g_test_add_func ("/ipc/stale-files-removed-at-first-file",
                   test_ipc_stale_files_removed_at_first_file);
  g_test_add_func ("/ipc/fork-does-not-double-release", test_ipc_fork_does_not_double_release);
  g_test_add_func ("/ipc/forked-child-receives-own-slot",
                   test_ipc_forked_child_receives_own_slot);
  return g_test_run ();
}
