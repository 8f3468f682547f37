/* cowscope-probe-connection.c — the SOCK_SEQPACKET connection to the
 * recorder and the messages the probe sends on it (cowscope-protocol.h).
 *
 * One connection per process, opened by the process that uses it (a
 * forked child opens its own).  Everything here runs on cold paths under
 * cowscope_probe_lock; sends never raise SIGPIPE.  In DROP mode a send
 * waits at most a few seconds for a recorder that does not read (the
 * message is then lost, not the connection); in BLOCK mode it waits for
 * as long as the recorder is alive, like the rings do.  A dead recorder
 * fails every send at once (the kernel wakes blocked senders when the
 * other end closes).
 *
 * The connection's fd stays open until the process ends (or forks), even
 * after the recorder is gone, so that BLOCK-mode writers on any thread
 * can poll it for the hang-up without a lock.
 */
#include "cowscope-probe-private.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

pthread_mutex_t cowscope_probe_lock = PTHREAD_MUTEX_INITIALIZER;
_Atomic bool cowscope_probe_tracing = false;

/* Written under cowscope_probe_lock; read without it by the liveness
 * check.  Never closed while other threads may poll it (see above). */
static _Atomic int conn_fd = -1;
/* The recorder is gone for this process (a send failed for good or the
 * socket hung up); set once, any thread. */
static _Atomic bool conn_lost;
static _Atomic bool hangup_reported;

/* The rest is under cowscope_probe_lock. */
static bool opening; /* inside open: failures are reported by the caller */
static uint32_t maps_generation;
/* dl_iterate_phdr's load and unload counts when the last copy of the
 * maps was sent: equal counts mean no object was loaded or unloaded
 * since, so the copy is still good. */
static unsigned long long maps_sent_adds, maps_sent_subs;
static bool maps_sent;
/* Message buffers: static so that threads with small stacks can send. */
static char maps_chunk[COWSCOPE_MAPS_CHUNK_BYTES];
#define CMDLINE_MAX 32768
static char hello_exe[PATH_MAX];
static char hello_cmdline[CMDLINE_MAX];

/* How long one send may wait for a recorder that does not read. */
#define SEND_TIMEOUT_S 10

/* The recorder is gone (a send failed for good): turns tracing off, so
 * nothing new is set up; the fd stays open (see the file comment). */
static void
connection_lost_locked (int saved_errno)
{
  /* Relaxed: flags read as hints; cold paths re-check under the lock. */
  if (!opening && !atomic_exchange_explicit (&conn_lost, true, memory_order_relaxed))
    cowscope_probe_warn ("lost the connection to the recorder: %s; tracing is off",
                         strerror (saved_errno));
  atomic_store_explicit (&conn_lost, true, memory_order_relaxed);
  atomic_store_explicit (&cowscope_probe_tracing, false, memory_order_relaxed);
}

/* Sends one datagram: a header of @type then @n_parts payload parts, and
 * @pass_fd as SCM_RIGHTS when it is >= 0.  errno is set unless SENT. */
static ProbeSendResult
send_message_locked (uint32_t type, const struct iovec *parts, int n_parts,
                     int pass_fd)
{
  int fd = atomic_load_explicit (&conn_fd, memory_order_relaxed);
  CowscopeMessageHeader header = { .type = type, .size = 0 };
  struct iovec iov[4];
  union {
    struct cmsghdr align;
    char bytes[CMSG_SPACE (sizeof (int))];
  } control;
  struct msghdr msg = { 0 };

  if (fd < 0 || atomic_load_explicit (&conn_lost, memory_order_relaxed) || n_parts > 3)
    {
      errno = ENOTCONN;
      return PROBE_RECORDER_GONE;
    }
  iov[0].iov_base = &header;
  iov[0].iov_len = sizeof header;
  for (int i = 0; i < n_parts; i++)
    {
      iov[i + 1] = parts[i];
      header.size += (uint32_t) parts[i].iov_len;
    }
  msg.msg_iov = iov;
  msg.msg_iovlen = (size_t) n_parts + 1;
  if (pass_fd >= 0)
    {
      memset (&control, 0, sizeof control);
      msg.msg_control = control.bytes;
      msg.msg_controllen = sizeof control.bytes;
      struct cmsghdr *cmsg = CMSG_FIRSTHDR (&msg);
      cmsg->cmsg_level = SOL_SOCKET;
      cmsg->cmsg_type = SCM_RIGHTS;
      cmsg->cmsg_len = CMSG_LEN (sizeof (int));
      memcpy (CMSG_DATA (cmsg), &pass_fd, sizeof pass_fd);
    }

  ssize_t sent;
  do
    sent = sendmsg (fd, &msg, MSG_NOSIGNAL);
  while (sent < 0 && errno == EINTR);
  if (sent < 0)
    {
      int saved = errno;
      /* A timed-out send (DROP mode) loses this message only: the
       * recorder is alive and the rings it has keep working. */
      if (saved == EAGAIN || saved == EWOULDBLOCK || saved == ENOBUFS
          || saved == ENOMEM)
        return PROBE_SEND_FAILED;
      connection_lost_locked (saved);
      errno = saved;
      return PROBE_RECORDER_GONE;
    }
  return PROBE_SENT;
}

/* Reads a whole small file (a /proc one) into @buffer, up to @size bytes
 * (the rest is cut).  Returns the length, or -1 with errno. */
static ssize_t
read_small_file (const char *path, char *buffer, size_t size)
{
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  size_t length = 0;
  while (length < size)
    {
      ssize_t n = read (fd, buffer + length, size - length);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break;
      length += (size_t) n;
    }
  close (fd);
  return (ssize_t) length;
}

/* CLOCK_@id in ns. */
static int64_t
clock_ns (clockid_t id)
{
  struct timespec ts;
  clock_gettime (id, &ts);
  return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Sends HELLO: ids, clocks, executable and command line. */
static ProbeSendResult
send_hello_locked (void)
{
  CowscopeHello hello = {
    .protocol_version = COWSCOPE_PROTOCOL_VERSION,
    .pid = (uint32_t) getpid (),
    .ppid = (uint32_t) getppid (),
    .trace_abi_version = COW_TRACE_ABI_VERSION,
  };
  hello.monotonic_ns = clock_ns (CLOCK_MONOTONIC);
  hello.realtime_ns = clock_ns (CLOCK_REALTIME);

  ssize_t exe = readlink ("/proc/self/exe", hello_exe, sizeof hello_exe);
  if (exe < 0)
    exe = 0;
  ssize_t cmdline = read_small_file ("/proc/self/cmdline", hello_cmdline,
                                     sizeof hello_cmdline);
  if (cmdline < 0)
    cmdline = 0;
  /* Arguments are separated by NUL; drop the terminator of the last. */
  if (cmdline > 0 && hello_cmdline[cmdline - 1] == '\0')
    cmdline--;
  hello.exe_length = (uint32_t) exe;
  hello.cmdline_length = (uint32_t) cmdline;

  struct iovec parts[3] = {
    { &hello, sizeof hello },
    { hello_exe, (size_t) exe },
    { hello_cmdline, (size_t) cmdline },
  };
  return send_message_locked (COWSCOPE_MESSAGE_HELLO, parts, 3, -1);
}

/* dl_iterate_phdr callback: the loader's load and unload counts (the
 * same in every entry), then stop. */
static int
loaded_objects (struct dl_phdr_info *info, size_t size, void *data)
{
  unsigned long long *counts = data;
  if (size < offsetof (struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs)
    return 1; /* an old loader: counts unknown, always send */
  counts[0] = info->dlpi_adds;
  counts[1] = info->dlpi_subs;
  return 1;
}

/* Sends /proc/self/maps as a new generation of MAPS chunks, unless no
 * object was loaded or unloaded since the last copy (a new thread alone
 * changes nothing a symbolizer needs, and a big map costs every thread's
 * set-up).  The text is read chunk by chunk; the last chunk (possibly
 * empty) says final = 1. */
ProbeSendResult
cowscope_probe_connection_send_maps_locked (void)
{
  unsigned long long counts[2] = { ~0ull, ~0ull };
  dl_iterate_phdr (loaded_objects, counts);
  if (maps_sent && counts[0] != ~0ull && counts[0] == maps_sent_adds
      && counts[1] == maps_sent_subs)
    return PROBE_SENT;

  int fd = open ("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return PROBE_SENT; /* nothing to say; the recorder copes without maps */

  CowscopeMapsChunk chunk = { .generation = ++maps_generation, .final = 0, .offset = 0 };
  ProbeSendResult result = PROBE_SENT;
  bool eof = false;
  while (result == PROBE_SENT && !eof)
    {
      size_t length = 0;
      while (length < sizeof maps_chunk)
        {
          ssize_t n = read (fd, maps_chunk + length, sizeof maps_chunk - length);
          if (n < 0 && errno == EINTR)
            continue;
          if (n <= 0)
            {
              eof = true;
              break;
            }
          length += (size_t) n;
        }
      chunk.final = eof ? 1 : 0;
      struct iovec parts[2] = { { &chunk, sizeof chunk }, { maps_chunk, length } };
      result = send_message_locked (COWSCOPE_MESSAGE_MAPS, parts, 2, -1);
      chunk.offset += length;
    }
  close (fd);
  if (result == PROBE_SENT)
    {
      maps_sent = true;
      maps_sent_adds = counts[0];
      maps_sent_subs = counts[1];
    }
  return result;
}

/* Opens this process's connection if it has none: socket, connect,
 * HELLO, MAPS.  On failure @reason says why and nothing stays open. */
bool
cowscope_probe_connection_open_locked (char *reason, size_t reason_size)
{
  const CowscopeProbeConfig *c = &cowscope_probe_config;
  struct sockaddr_un address = { .sun_family = AF_UNIX };

  if (atomic_load_explicit (&conn_fd, memory_order_relaxed) >= 0
      && !atomic_load_explicit (&conn_lost, memory_order_relaxed))
    return true;
  if (atomic_load_explicit (&conn_lost, memory_order_relaxed))
    {
      snprintf (reason, reason_size, "the recorder is gone");
      return false;
    }
  if (c->socket_path_too_long)
    {
      snprintf (reason, reason_size, "the path is longer than %zu bytes",
                sizeof address.sun_path - 1);
      return false;
    }
  memcpy (address.sun_path, c->socket_path, sizeof address.sun_path);

  int fd = socket (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (fd < 0)
    {
      snprintf (reason, reason_size, "cannot create a socket: %s", strerror (errno));
      return false;
    }
  int rc;
  do
    rc = connect (fd, (const struct sockaddr *) &address, sizeof address);
  while (rc < 0 && errno == EINTR);
  if (rc < 0)
    {
      snprintf (reason, reason_size, "%s", strerror (errno));
      close (fd);
      return false;
    }
  /* BLOCK mode waits for the recorder like the rings do (a dead one
   * fails the send at once); DROP mode gives a message up after a while. */
  if (c->ring_policy != COWSCOPE_RING_BLOCK)
    {
      struct timeval timeout = { .tv_sec = SEND_TIMEOUT_S };
      setsockopt (fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
    }

  atomic_store_explicit (&conn_fd, fd, memory_order_relaxed);
  opening = true;
  maps_sent = false;
  bool said = send_hello_locked () == PROBE_SENT
              && cowscope_probe_connection_send_maps_locked () == PROBE_SENT;
  opening = false;
  if (!said)
    {
      snprintf (reason, reason_size, "the recorder closed the connection");
      /* No thread polls it yet: the process had no connection. */
      atomic_store_explicit (&conn_fd, -1, memory_order_relaxed);
      atomic_store_explicit (&conn_lost, false, memory_order_relaxed);
      close (fd);
      return false;
    }
  return true;
}

/* Polls the connection for the recorder's hang-up, without blocking. */
bool
cowscope_probe_connection_alive (void *unused)
{
  (void) unused;
  /* Relaxed: the fd number is stable for the process's life. */
  if (atomic_load_explicit (&conn_lost, memory_order_relaxed))
    return false;
  int fd = atomic_load_explicit (&conn_fd, memory_order_relaxed);
  if (fd < 0)
    return true; /* not connected yet: nothing says the recorder is gone */
  struct pollfd p = { .fd = fd, .events = POLLRDHUP };
  if (poll (&p, 1, 0) <= 0 || (p.revents & (POLLHUP | POLLRDHUP | POLLERR)) == 0)
    return true;
  atomic_store_explicit (&conn_lost, true, memory_order_relaxed);
  atomic_store_explicit (&cowscope_probe_tracing, false, memory_order_relaxed);
  if (!atomic_exchange_explicit (&hangup_reported, true, memory_order_relaxed))
    cowscope_probe_warn ("the recorder is gone (its socket hung up); events that "
                         "find a full ring are dropped and counted from now on");
  return false;
}

/* Sends RING for a new ring; the fd is duplicated into the recorder by
 * the kernel, the caller keeps its own. */
ProbeSendResult
cowscope_probe_connection_send_ring_locked (int ring_fd, uint32_t tid,
                                            const char name[16])
{
  CowscopeRingMessage message = { .tid = tid, .reserved = 0 };
  memcpy (message.thread_name, name, sizeof message.thread_name);
  struct iovec parts[1] = { { &message, sizeof message } };
  return send_message_locked (COWSCOPE_MESSAGE_RING, parts, 1, ring_fd);
}

/* Sends GPU_STATUS with its reason text (may be NULL or empty). */
void
cowscope_probe_connection_send_gpu_status (bool available, const char *reason)
{
  size_t length = reason != NULL ? strlen (reason) : 0;
  CowscopeGpuStatus status = { .available = available ? 1 : 0,
                               .reason_length = (uint32_t) length };
  struct iovec parts[2] = { { &status, sizeof status }, { (void *) reason, length } };

  pthread_mutex_lock (&cowscope_probe_lock);
  send_message_locked (COWSCOPE_MESSAGE_GPU_STATUS, parts, 2, -1);
  pthread_mutex_unlock (&cowscope_probe_lock);
}

/* Sends BYE if this process is connected.  The connection stays open
 * (other threads may still run until the process ends). */
void
cowscope_probe_connection_send_bye (void)
{
  CowscopeBye bye = { .pid = (uint32_t) getpid (), .reserved = 0 };
  struct iovec parts[1] = { { &bye, sizeof bye } };

  pthread_mutex_lock (&cowscope_probe_lock);
  if (atomic_load_explicit (&conn_fd, memory_order_relaxed) >= 0)
    send_message_locked (COWSCOPE_MESSAGE_BYE, parts, 1, -1);
  pthread_mutex_unlock (&cowscope_probe_lock);
}

/* Fork child: the inherited connection is the parent's; close our copy
 * so the child opens its own (and says its own HELLO) when it needs one. */
void
cowscope_probe_connection_forget_locked (void)
{
  /* The child has one thread: nobody else polls the fd. */
  int fd = atomic_exchange_explicit (&conn_fd, -1, memory_order_relaxed);
  if (fd >= 0)
    close (fd);
  atomic_store_explicit (&conn_lost, false, memory_order_relaxed);
  atomic_store_explicit (&hangup_reported, false, memory_order_relaxed);
  maps_generation = 0;
  maps_sent = false;
}
