/* cowscope-peer.c — one connection to the recorder's socket, checked. */
#include "cowscope-peer.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "cowscope-protocol.h"

/* The largest datagram a probe sends (a MAPS chunk) with room to spare;
 * anything longer is refused as oversized. */
#define MESSAGE_BYTES (COWSCOPE_MAPS_CHUNK_BYTES + 4096)
/* File descriptors one datagram may carry before the rest are cut. */
#define MAX_FDS 8
/* Messages read from one peer per visit, so one busy peer cannot starve
 * the others or the recorder's loop. */
#define MESSAGES_PER_VISIT 256

struct _CowscopePeer {
  CowscopePeerContext *context;
  int fd;
  uint32_t pid;      /* the kernel's (SO_PEERCRED) */
  int64_t uid;
  gboolean hello;
  gboolean bye;
  uint32_t maps_generation;
  GString *maps;
  guint faults;
  uint8_t buffer[MESSAGE_BYTES];
};

static int64_t
now_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The parent of @pid from /proc/PID/stat (0 when it cannot be read).
 * The command name may hold any byte, ')' included: the fields after
 * the last ')' are the kernel's. */
static uint32_t
proc_ppid (uint32_t pid)
{
  g_autofree char *path = g_strdup_printf ("/proc/%u/stat", pid);
  g_autofree char *text = NULL;
  if (!g_file_get_contents (path, &text, NULL, NULL))
    return 0;
  const char *paren = strrchr (text, ')');
  unsigned ppid = 0;
  char state;
  if (paren == NULL || sscanf (paren + 1, " %c %u", &state, &ppid) != 2)
    return 0;
  return ppid;
}

/* Whether @pid descends from @ancestor (walking /proc parents). */
static gboolean
descends_from (uint32_t pid, pid_t ancestor)
{
  for (int depth = 0; depth < 64 && pid > 1; depth++)
    {
      if ((pid_t) pid == ancestor)
        return TRUE;
      pid = proc_ppid (pid);
    }
  return FALSE;
}

/* NUL-separated @text (@length bytes) as one space-joined string. */
static char *
join_cmdline (const char *text, size_t length)
{
  GString *s = g_string_sized_new (length);
  for (size_t i = 0; i < length; i++)
    g_string_append_c (s, text[i] ? text[i] : ' ');
  while (s->len && s->str[s->len - 1] == ' ')
    g_string_truncate (s, s->len - 1);
  return g_string_free (s, FALSE);
}

/* Counts a fault of @peer (see the header); the connection is dropped
 * once there are too many. */
static void G_GNUC_PRINTF (3, 4)
peer_fault (CowscopePeer *peer, const char *fault, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  g_autofree char *detail = g_strdup_vprintf (format, args);
  va_end (args);
  peer->faults++;
  cowscope_collector_peer_fault (peer->context->collector, peer->pid, peer->uid, fault, detail);
}

CowscopePeer *
cowscope_peer_accept (CowscopePeerContext *context, int listen_fd, gboolean *refused)
{
  *refused = FALSE;
  int fd = accept4 (listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
  if (fd < 0)
    return NULL;
  struct ucred cred = { 0 };
  socklen_t length = sizeof cred;
  if (getsockopt (fd, SOL_SOCKET, SO_PEERCRED, &cred, &length) != 0)
    {
      close (fd);
      *refused = TRUE;
      cowscope_collector_peer_fault (context->collector, 0, -1, "no credentials",
                                     "the kernel gave no credentials for a connection");
      return NULL;
    }
  /* The socket is private (0600 in a 0700 directory), but root reaches
   * it anyway: another user's process gets in only if it descends from
   * the target (a target that changed its user). */
  if (cred.uid != geteuid () && !descends_from ((uint32_t) cred.pid, context->target))
    {
      close (fd);
      *refused = TRUE;
      g_autofree char *detail = g_strdup_printf ("user %u is not the recorder's and the process "
                                                 "does not descend from the target",
                                                 (unsigned) cred.uid);
      cowscope_collector_peer_fault (context->collector, (uint32_t) cred.pid, cred.uid,
                                     "foreign user", detail);
      return NULL;
    }
  CowscopePeer *peer = g_new0 (CowscopePeer, 1);
  peer->context = context;
  peer->fd = fd;
  peer->pid = (uint32_t) cred.pid;
  peer->uid = cred.uid;
  return peer;
}

int
cowscope_peer_get_fd (const CowscopePeer *peer)
{
  return peer->fd;
}

uint32_t
cowscope_peer_get_pid (const CowscopePeer *peer)
{
  return peer->pid;
}

/* Who the peer is, from the kernel (/proc/PID) when the process is still
 * there, else from what the recorder started (the target), else only
 * from its claims; the claims are kept either way. */
static void
find_identity (CowscopePeer *peer, const CowscopeHello *hello, const char *claimed_exe,
               const char *claimed_cmdline, CowscopeProcessIdentity *id, char **exe,
               char **cmdline)
{
  const CowscopePeerContext *ctx = peer->context;
  *id = (CowscopeProcessIdentity) {
    .pid = peer->pid,
    .has_claims = TRUE,
    .claimed_pid = hello->pid,
    .claimed_ppid = hello->ppid,
    .claimed_exe = claimed_exe,
    .claimed_cmdline = claimed_cmdline,
  };
  g_autofree char *exe_link = g_strdup_printf ("/proc/%u/exe", peer->pid);
  g_autofree char *cmdline_path = g_strdup_printf ("/proc/%u/cmdline", peer->pid);
  g_autofree char *raw_exe = g_file_read_link (exe_link, NULL);
  g_autofree char *raw_cmdline = NULL;
  gsize cmdline_length = 0;
  uint32_t ppid = proc_ppid (peer->pid);
  if (peer->pid > 0 && raw_exe != NULL && ppid != 0
      && g_file_get_contents (cmdline_path, &raw_cmdline, &cmdline_length, NULL))
    {
      g_autofree char *joined = join_cmdline (raw_cmdline, cmdline_length);
      *exe = g_utf8_make_valid (raw_exe, -1);
      *cmdline = g_utf8_make_valid (joined, -1);
      id->ppid = ppid;
      id->identity = "kernel";
    }
  else if (peer->pid > 0 && (pid_t) peer->pid == ctx->target)
    {
      g_autofree char *joined = g_strjoinv (" ", (char **) ctx->target_argv);
      *exe = g_utf8_make_valid (ctx->target_program, -1);
      *cmdline = g_utf8_make_valid (joined, -1);
      id->ppid = (uint32_t) getpid ();
      id->identity = "spawned";
    }
  else
    {
      *exe = g_strdup (claimed_exe);
      *cmdline = g_strdup (claimed_cmdline);
      id->ppid = hello->ppid;
      id->identity = "claimed";
    }
  id->exe = *exe;
  id->cmdline = *cmdline;
}

static void
handle_hello (CowscopePeer *peer, const uint8_t *p, size_t size)
{
  CowscopeHello hello;
  if (peer->hello)
    {
      peer_fault (peer, "repeated hello", "a second HELLO on one connection");
      return;
    }
  if (size < sizeof hello)
    {
      peer_fault (peer, "malformed message", "HELLO of %zu bytes", size);
      return;
    }
  memcpy (&hello, p, sizeof hello);
  if ((uint64_t) hello.exe_length + hello.cmdline_length > size - sizeof hello)
    {
      peer_fault (peer, "malformed message", "HELLO with lengths %u + %u beyond its %zu bytes",
                  hello.exe_length, hello.cmdline_length, size);
      return;
    }
  g_autofree char *exe_raw = g_strndup ((const char *) p + sizeof hello, hello.exe_length);
  g_autofree char *claimed_exe = g_utf8_make_valid (exe_raw, -1);
  g_autofree char *cmd_raw = join_cmdline ((const char *) p + sizeof hello + hello.exe_length,
                                           hello.cmdline_length);
  g_autofree char *claimed_cmdline = g_utf8_make_valid (cmd_raw, -1);

  CowscopeProcessIdentity id;
  g_autofree char *exe = NULL, *cmdline = NULL;
  find_identity (peer, &hello, claimed_exe, claimed_cmdline, &id, &exe, &cmdline);
  peer->hello = TRUE;
  g_hash_table_add (peer->context->seen_pids, GUINT_TO_POINTER (peer->pid));
  cowscope_collector_add_process (peer->context->collector, &id, hello.monotonic_ns);
}

static void
handle_maps (CowscopePeer *peer, const uint8_t *p, size_t size)
{
  CowscopeMapsChunk chunk;
  if (size < sizeof chunk)
    {
      peer_fault (peer, "malformed message", "MAPS of %zu bytes", size);
      return;
    }
  memcpy (&chunk, p, sizeof chunk);
  if (!peer->maps || chunk.generation != peer->maps_generation || chunk.offset == 0)
    {
      if (!peer->maps)
        peer->maps = g_string_new (NULL);
      g_string_truncate (peer->maps, 0);
      peer->maps_generation = chunk.generation;
    }
  if (chunk.offset != peer->maps->len)
    return; /* a chunk went missing (a send timed out): wait for the next copy */
  g_string_append_len (peer->maps, (const char *) p + sizeof chunk, (gssize) (size - sizeof chunk));
  if (chunk.final)
    {
      cowscope_collector_add_maps (peer->context->collector, peer->pid, chunk.generation,
                                   peer->maps->str);
      g_string_truncate (peer->maps, 0);
    }
}

/* RING: the memfd is mapped (and checked by the ring code) and handed to
 * the collector; the received fd is closed by the caller either way. */
static void
handle_ring (CowscopePeer *peer, const uint8_t *p, size_t size, const int *fds, int n_fds)
{
  CowscopeRingMessage rm;
  if (size < sizeof rm || n_fds != 1)
    {
      peer_fault (peer, "malformed message", "RING of %zu bytes with %d file descriptors",
                  size, n_fds);
      return;
    }
  memcpy (&rm, p, sizeof rm);
  char name[sizeof rm.thread_name + 1];
  memcpy (name, rm.thread_name, sizeof rm.thread_name);
  name[sizeof rm.thread_name] = '\0';
  g_autofree char *valid_name = g_utf8_make_valid (name, -1);
  CowError err = { 0 };
  CowscopeRing *ring = cowscope_ring_map_fd (fds[0], &err);
  if (!ring)
    {
      peer_fault (peer, "bad ring", "thread %u: %s", rm.tid, err.message);
      return;
    }
  cowscope_collector_add_ring (peer->context->collector, peer->pid, rm.tid, valid_name, ring);
}

static void
handle_gpu_status (CowscopePeer *peer, const uint8_t *p, size_t size)
{
  CowscopeGpuStatus gs;
  if (size < sizeof gs)
    {
      peer_fault (peer, "malformed message", "GPU_STATUS of %zu bytes", size);
      return;
    }
  memcpy (&gs, p, sizeof gs);
  if (gs.reason_length > size - sizeof gs)
    {
      peer_fault (peer, "malformed message", "GPU_STATUS reason of %u bytes beyond its %zu",
                  gs.reason_length, size);
      return;
    }
  g_autofree char *raw = g_strndup ((const char *) p + sizeof gs, gs.reason_length);
  g_autofree char *reason = g_utf8_make_valid (raw, -1);
  g_autofree char *status = gs.available ? g_strdup ("available")
                                         : g_strdup_printf ("unavailable: %s", reason);
  CowscopePeerContext *ctx = peer->context;
  cowscope_collector_gpu_status (ctx->collector, peer->pid, status);
  if (!ctx->gpu_status || (pid_t) peer->pid == ctx->target)
    {
      g_free (ctx->gpu_status);
      ctx->gpu_status = g_strdup (status);
    }
}

/* One datagram of @n bytes with @n_fds received descriptors. */
static void
handle_message (CowscopePeer *peer, const uint8_t *data, size_t n, const int *fds, int n_fds)
{
  CowscopeMessageHeader h;
  if (n < sizeof h)
    {
      peer_fault (peer, "malformed message", "a datagram of %zu bytes", n);
      return;
    }
  memcpy (&h, data, sizeof h);
  const uint8_t *p = data + sizeof h;
  size_t size = n - sizeof h;
  if (h.size != size)
    {
      peer_fault (peer, "malformed message", "type %u says %u bytes but carries %zu",
                  h.type, h.size, size);
      return;
    }
  if (n_fds > 0 && h.type != COWSCOPE_MESSAGE_RING)
    peer_fault (peer, "unexpected file descriptors", "%d with a message of type %u", n_fds,
                h.type);
  if (!peer->hello && h.type != COWSCOPE_MESSAGE_HELLO)
    {
      peer_fault (peer, "message before hello", "type %u", h.type);
      return;
    }

  switch (h.type)
    {
    case COWSCOPE_MESSAGE_HELLO:
      handle_hello (peer, p, size);
      break;
    case COWSCOPE_MESSAGE_MAPS:
      handle_maps (peer, p, size);
      break;
    case COWSCOPE_MESSAGE_RING:
      handle_ring (peer, p, size, fds, n_fds);
      break;
    case COWSCOPE_MESSAGE_GPU_STATUS:
      handle_gpu_status (peer, p, size);
      break;
    case COWSCOPE_MESSAGE_BYE:
      peer->bye = TRUE;
      break;
    default:
      peer_fault (peer, "unknown message", "type %u", h.type);
      break;
    }
}

/* Collects the SCM_RIGHTS descriptors of @msg into @fds (all of them
 * are received: the kernel installed them); returns how many. */
static int
received_fds (struct msghdr *msg, int fds[MAX_FDS])
{
  int n = 0;
  for (struct cmsghdr *cm = CMSG_FIRSTHDR (msg); cm; cm = CMSG_NXTHDR (msg, cm))
    if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
      {
        size_t k = (cm->cmsg_len - CMSG_LEN (0)) / sizeof (int);
        for (size_t i = 0; i < k && n < MAX_FDS; i++)
          memcpy (&fds[n++], CMSG_DATA (cm) + i * sizeof (int), sizeof (int));
      }
  return n;
}

gboolean
cowscope_peer_service (CowscopePeer *peer)
{
  for (int round = 0; round < MESSAGES_PER_VISIT; round++)
    {
      if (peer->faults >= COWSCOPE_PEER_MAX_FAULTS)
        {
          peer_fault (peer, "too many faults", "the connection was closed after %u faults",
                      peer->faults);
          return FALSE;
        }
      union {
        struct cmsghdr align;
        char buf[CMSG_SPACE (sizeof (int) * MAX_FDS)];
      } control;
      struct iovec iov = { peer->buffer, sizeof peer->buffer };
      struct msghdr msg = {
        .msg_iov = &iov,
        .msg_iovlen = 1,
        .msg_control = control.buf,
        .msg_controllen = sizeof control.buf,
      };
      ssize_t n = recvmsg (peer->fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
      if (n < 0)
        {
          if (errno == EINTR)
            continue;
          return errno == EAGAIN || errno == EWOULDBLOCK;
        }
      int fds[MAX_FDS];
      int n_fds = received_fds (&msg, fds);
      if (n == 0 && n_fds == 0)
        return FALSE;
      if (msg.msg_flags & MSG_CTRUNC)
        peer_fault (peer, "file descriptors lost",
                    "a message carried more descriptors than the recorder could take");
      if (msg.msg_flags & MSG_TRUNC)
        peer_fault (peer, "oversized message", "a datagram longer than %zu bytes",
                    sizeof peer->buffer);
      else
        handle_message (peer, peer->buffer, (size_t) n, fds, n_fds);
      for (int i = 0; i < n_fds; i++)
        close (fds[i]);
    }
  return TRUE;
}

void
cowscope_peer_close (CowscopePeer *peer, int64_t end_ns, const char *reason)
{
  if (peer == NULL)
    return;
  if (peer->hello && (pid_t) peer->pid != peer->context->target)
    cowscope_collector_process_end (peer->context->collector, peer->pid,
                                    end_ns ? end_ns : now_ns (),
                                    reason ? reason : (peer->bye ? "exited" : "unknown"), -1, -1);
  close (peer->fd);
  if (peer->maps)
    g_string_free (peer->maps, TRUE);
  g_free (peer);
}
