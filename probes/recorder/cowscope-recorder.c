/* cowscope-recorder.c — records a target into a session database. */
#include "cowscope-recorder.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cowscope-format-output.h"
#include "cowscope-probe-path.h"
#include "cowscope-protocol.h"
#include "cowscope-session-finalize.h"
#include "cowscope-target.h"

/* After the target (the direct child) exited: how long its children may
 * keep their connections open before the session is closed. */
#define CHILDREN_GRACE_NS ((int64_t) 1000 * 1000 * 1000)
#define POLL_MS 10
#define MESSAGE_BYTES (COWSCOPE_MAPS_CHUNK_BYTES + 4096)

typedef struct {
  int fd;
  uint32_t pid;
  gboolean hello;
  gboolean bye;
  uint32_t maps_generation;
  GString *maps;
} Connection;

typedef struct {
  const CowscopeRecordOptions *options;
  CowscopeCollector *collector;
  GPtrArray *connections; /* Connection* */
  GHashTable *seen_pids;  /* pids that said HELLO */
  pid_t child;
  char *gpu_status;       /* of the target (or its first process that reported) */
  uint8_t *buffer;
} Loop;

/* Signal delivery to the loop: the handler only writes a byte. */
static int signal_pipe[2] = { -1, -1 };
static volatile sig_atomic_t signal_count;

static void
on_signal (int sig)
{
  (void) sig;
  int saved = errno;
  signal_count++;
  if (signal_pipe[1] >= 0)
    {
      char c = 1;
      ssize_t r = write (signal_pipe[1], &c, 1);
      (void) r;
    }
  errno = saved;
}

void
cowscope_record_interrupt (void)
{
  on_signal (SIGINT);
}

static int64_t
now_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void
cowscope_record_options_init (CowscopeRecordOptions *options)
{
  memset (options, 0, sizeof *options);
  options->stacks = TRUE;
  options->cuda = TRUE;
  options->policy = COWSCOPE_RING_DROP;
}

void
cowscope_record_result_clear (CowscopeRecordResult *result)
{
  g_clear_pointer (&result->session_path, g_free);
  g_clear_pointer (&result->target_end, g_free);
}

static void
connection_free (Connection *c)
{
  if (c->fd >= 0)
    close (c->fd);
  if (c->maps)
    g_string_free (c->maps, TRUE);
  g_free (c);
}

/* A private directory for the socket: $XDG_RUNTIME_DIR when it is ours
 * and writable, else the temporary directory; mode 0700 either way. */
static char *
make_socket_dir (GError **error)
{
  const char *runtime = g_getenv ("XDG_RUNTIME_DIR");
  struct stat st;
  const char *parent = g_get_tmp_dir ();
  if (runtime && g_path_is_absolute (runtime) && stat (runtime, &st) == 0 && S_ISDIR (st.st_mode)
      && st.st_uid == getuid () && access (runtime, W_OK | X_OK) == 0)
    parent = runtime;
  char *tmpl = g_build_filename (parent, "cowscope-XXXXXX", NULL);
  if (!g_mkdtemp_full (tmpl, 0700))
    {
      int saved = errno;
      g_set_error (error, COWSCOPE_RECORDER_ERROR, COWSCOPE_RECORDER_ERROR_FAILED,
                   "cannot create a socket directory in '%s': %s", parent, g_strerror (saved));
      g_free (tmpl);
      return NULL;
    }
  return tmpl;
}

static int
listen_socket (const char *path, GError **error)
{
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  if (strlen (path) >= sizeof addr.sun_path)
    {
      g_set_error (error, COWSCOPE_RECORDER_ERROR, COWSCOPE_RECORDER_ERROR_FAILED,
                   "socket path '%s' is too long", path);
      return -1;
    }
  strcpy (addr.sun_path, path);
  int fd = socket (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0)
    goto fail;
  mode_t old = umask (0177); /* the socket is created 0600 */
  int rc = bind (fd, (struct sockaddr *) &addr, sizeof addr);
  umask (old);
  if (rc != 0 || chmod (path, 0600) != 0 || listen (fd, 64) != 0)
    goto fail;
  return fd;
fail:;
  int saved = errno;
  if (fd >= 0)
    close (fd);
  g_set_error (error, COWSCOPE_RECORDER_ERROR, COWSCOPE_RECORDER_ERROR_FAILED,
               "cannot listen on '%s': %s", path, g_strerror (saved));
  return -1;
}

/* The target's environment: ours, plus the probe's settings, plus
 * --env K=V (which win). */
static char **
target_environment (const CowscopeRecordOptions *o, const char *probe, const char *socket_path)
{
  char **env = g_get_environ ();
  if (o->cuda_only)
    {
      env = g_environ_setenv (env, "CUDA_INJECTION64_PATH", probe, TRUE);
      env = g_environ_setenv (env, COWSCOPE_ENV_CUDA_ONLY, "1", TRUE);
    }
  else
    {
      const char *old = g_environ_getenv (env, "LD_PRELOAD");
      g_autofree char *preload = old && *old ? g_strconcat (probe, ":", old, NULL) : g_strdup (probe);
      env = g_environ_setenv (env, "LD_PRELOAD", preload, TRUE);
    }
  env = g_environ_setenv (env, COWSCOPE_ENV_SOCKET, socket_path, TRUE);
  env = g_environ_setenv (env, COWSCOPE_ENV_STACKS, o->stacks ? "1" : "0", TRUE);
  env = g_environ_setenv (env, COWSCOPE_ENV_RING_POLICY,
                          o->policy == COWSCOPE_RING_BLOCK ? "block" : "drop", TRUE);
  env = g_environ_setenv (env, COWSCOPE_ENV_CUDA, o->cuda || o->cuda_only ? "1" : "0", TRUE);
  if (o->ring_capacity)
    {
      g_autofree char *cap = g_strdup_printf ("%" G_GUINT64_FORMAT, o->ring_capacity);
      env = g_environ_setenv (env, COWSCOPE_ENV_RING_CAPACITY, cap, TRUE);
    }
  for (char **kv = o->env; kv && *kv; kv++)
    {
      const char *eq = strchr (*kv, '=');
      if (!eq || eq == *kv)
        continue;
      g_autofree char *key = g_strndup (*kv, (gsize) (eq - *kv));
      env = g_environ_setenv (env, key, eq + 1, TRUE);
    }
  return env;
}

static char *
default_output (const char *program)
{
  g_autofree char *base = g_path_get_basename (program);
  g_autoptr (GDateTime) now = g_date_time_new_now_local ();
  g_autofree char *stamp = g_date_time_format (now, "%Y%m%d-%H%M%S");
  return g_strdup_printf ("cowscope-%s-%s.cowscope", base, stamp);
}

/* The NUL-separated @cmdline as one space-joined string. */
static char *
join_cmdline (const char *cmdline, size_t length)
{
  GString *s = g_string_sized_new (length);
  for (size_t i = 0; i < length; i++)
    g_string_append_c (s, cmdline[i] ? cmdline[i] : ' ');
  while (s->len && s->str[s->len - 1] == ' ')
    g_string_truncate (s, s->len - 1);
  return g_string_free (s, FALSE);
}

static void
handle_message (Loop *loop, Connection *c, const uint8_t *data, size_t n, int *fds, int n_fds)
{
  CowscopeMessageHeader h;
  if (n < sizeof h)
    return;
  memcpy (&h, data, sizeof h);
  const uint8_t *p = data + sizeof h;
  size_t size = n - sizeof h;
  if (h.size != size)
    return;

  switch (h.type)
    {
    case COWSCOPE_MESSAGE_HELLO:
      {
        CowscopeHello hello;
        if (size < sizeof hello)
          return;
        memcpy (&hello, p, sizeof hello);
        if ((uint64_t) hello.exe_length + hello.cmdline_length > size - sizeof hello)
          return;
        g_autofree char *exe_raw = g_strndup ((const char *) p + sizeof hello, hello.exe_length);
        g_autofree char *exe = g_utf8_make_valid (exe_raw, -1);
        g_autofree char *cmd_raw = join_cmdline ((const char *) p + sizeof hello + hello.exe_length,
                                                 hello.cmdline_length);
        g_autofree char *cmdline = g_utf8_make_valid (cmd_raw, -1);
        c->pid = hello.pid;
        c->hello = TRUE;
        g_hash_table_add (loop->seen_pids, GUINT_TO_POINTER (hello.pid));
        cowscope_collector_add_process (loop->collector, hello.pid, hello.ppid, exe, cmdline,
                                        hello.monotonic_ns);
        break;
      }
    case COWSCOPE_MESSAGE_MAPS:
      {
        CowscopeMapsChunk chunk;
        if (!c->hello || size < sizeof chunk)
          return;
        memcpy (&chunk, p, sizeof chunk);
        if (!c->maps || chunk.generation != c->maps_generation || chunk.offset == 0)
          {
            if (!c->maps)
              c->maps = g_string_new (NULL);
            g_string_truncate (c->maps, 0);
            c->maps_generation = chunk.generation;
          }
        if (chunk.offset != c->maps->len)
          return; /* a chunk went missing: wait for the next copy */
        g_string_append_len (c->maps, (const char *) p + sizeof chunk,
                             (gssize) (size - sizeof chunk));
        if (chunk.final)
          {
            cowscope_collector_add_maps (loop->collector, c->pid, chunk.generation, c->maps->str);
            g_string_truncate (c->maps, 0);
          }
        break;
      }
    case COWSCOPE_MESSAGE_RING:
      {
        CowscopeRingMessage rm;
        if (!c->hello || size < sizeof rm || n_fds < 1)
          return;
        memcpy (&rm, p, sizeof rm);
        char name[sizeof rm.thread_name + 1];
        memcpy (name, rm.thread_name, sizeof rm.thread_name);
        name[sizeof rm.thread_name] = '\0';
        g_autofree char *valid_name = g_utf8_make_valid (name, -1);
        CowError err = { 0 };
        CowscopeRing *ring = cowscope_ring_map_fd (fds[0], &err);
        if (!ring)
          {
            g_printerr ("cowscope-cli: ignoring a ring from process %u: %s\n", c->pid,
                        err.message);
            return;
          }
        cowscope_collector_add_ring (loop->collector, c->pid, rm.tid, valid_name, ring);
        break;
      }
    case COWSCOPE_MESSAGE_GPU_STATUS:
      {
        CowscopeGpuStatus gs;
        if (!c->hello || size < sizeof gs)
          return;
        memcpy (&gs, p, sizeof gs);
        if (gs.reason_length > size - sizeof gs)
          return;
        g_autofree char *raw = g_strndup ((const char *) p + sizeof gs, gs.reason_length);
        g_autofree char *reason = g_utf8_make_valid (raw, -1);
        g_autofree char *status = gs.available ? g_strdup ("available")
                                               : g_strdup_printf ("unavailable: %s", reason);
        cowscope_collector_gpu_status (loop->collector, c->pid, status);
        if (!loop->gpu_status || (pid_t) c->pid == loop->child)
          {
            g_free (loop->gpu_status);
            loop->gpu_status = g_strdup (status);
          }
        break;
      }
    case COWSCOPE_MESSAGE_BYE:
      c->bye = TRUE;
      break;
    default:
      break;
    }
}

/* Reads what @c has queued.  Returns FALSE when the peer hung up. */
static gboolean
read_connection (Loop *loop, Connection *c)
{
  for (int round = 0; round < 256; round++)
    {
      union {
        struct cmsghdr align;
        char buf[CMSG_SPACE (sizeof (int) * 8)];
      } control;
      struct iovec iov = { loop->buffer, MESSAGE_BYTES };
      struct msghdr msg = {
        .msg_iov = &iov,
        .msg_iovlen = 1,
        .msg_control = control.buf,
        .msg_controllen = sizeof control.buf,
      };
      ssize_t n = recvmsg (c->fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
      if (n < 0)
        {
          if (errno == EINTR)
            continue;
          return errno == EAGAIN || errno == EWOULDBLOCK;
        }
      int fds[8];
      int n_fds = 0;
      for (struct cmsghdr *cm = CMSG_FIRSTHDR (&msg); cm; cm = CMSG_NXTHDR (&msg, cm))
        if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
          {
            size_t k = (cm->cmsg_len - CMSG_LEN (0)) / sizeof (int);
            for (size_t i = 0; i < k && n_fds < 8; i++)
              memcpy (&fds[n_fds++], CMSG_DATA (cm) + i * sizeof (int), sizeof (int));
          }
      if (n == 0 && n_fds == 0)
        return FALSE;
      if (!(msg.msg_flags & MSG_TRUNC))
        handle_message (loop, c, loop->buffer, (size_t) n, fds, n_fds);
      for (int i = 0; i < n_fds; i++)
        close (fds[i]);
    }
  return TRUE;
}

static void
close_connection (Loop *loop, guint index, const char *reason)
{
  Connection *c = g_ptr_array_index (loop->connections, index);
  if (c->hello && (pid_t) c->pid != loop->child)
    cowscope_collector_process_end (loop->collector, c->pid, now_ns (),
                                    reason ? reason : (c->bye ? "exited" : "unknown"), -1, -1);
  g_ptr_array_remove_index_fast (loop->connections, index);
}

static void
accept_connections (Loop *loop, int listen_fd)
{
  for (;;)
    {
      int fd = accept4 (listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (fd < 0)
        return;
      Connection *c = g_new0 (Connection, 1);
      c->fd = fd;
      g_ptr_array_add (loop->connections, c);
    }
}

/* Reads every connection; closes those whose process hung up. */
static void
service_connections (Loop *loop)
{
  for (guint i = 0; i < loop->connections->len;)
    {
      Connection *c = g_ptr_array_index (loop->connections, i);
      if (!read_connection (loop, c))
        close_connection (loop, i, NULL);
      else
        i++;
    }
}

static gboolean
write_meta (CowscopeSessionWriter *w, const CowscopeRecordOptions *o, const char *program,
            const CowscopeRecordResult *r, const char *gpu, GError **error)
{
  g_autofree char *command = g_strjoinv (" ", o->argv);
  return cowscope_session_writer_meta_text (w, "command", command, error)
         && cowscope_session_writer_meta_text (w, "program", program, error)
         && cowscope_session_writer_meta_int (w, "stacks", o->stacks && !o->cuda_only, error)
         && cowscope_session_writer_meta_text (w, "ring_policy",
                                               o->policy == COWSCOPE_RING_BLOCK ? "block" : "drop",
                                               error)
         && cowscope_session_writer_meta_int (w, "ring_capacity",
                                              (int64_t) (o->ring_capacity ? o->ring_capacity
                                                                          : COWSCOPE_RING_DEFAULT_CAPACITY),
                                              error)
         && cowscope_session_writer_meta_text (w, "gpu_tracing", gpu, error)
         && cowscope_session_writer_meta_int (w, "target_pid", r->target_pid, error)
         && cowscope_session_writer_meta_text (w, "target_end", r->target_end, error)
         && (r->exit_status >= 0
               ? cowscope_session_writer_meta_int (w, "exit_status", r->exit_status, error)
               : cowscope_session_writer_meta_text (w, "exit_status", NULL, error))
         && (r->exit_signal >= 0
               ? cowscope_session_writer_meta_int (w, "exit_signal", r->exit_signal, error)
               : cowscope_session_writer_meta_text (w, "exit_signal", NULL, error))
         && cowscope_session_writer_meta_int (w, "interrupted", r->interrupted, error)
         && cowscope_session_writer_meta_int (w, "malformed_records", (int64_t) r->totals.malformed,
                                              error)
         && cowscope_session_writer_commit (w, error);
}

/* Hands @totals to the caller's progress callback. */
static void
report_progress (const CowscopeRecordOptions *o, pid_t target, int64_t elapsed_ns,
                 guint processes, const CowscopeCollectorTotals *totals)
{
  CowscopeRecordProgress p = {
    .elapsed_ns = elapsed_ns,
    .target_pid = target,
    .processes = processes,
    .rings = totals->rings,
    .produced = totals->produced,
    .stored = totals->stored,
    .dropped = totals->dropped,
  };
  o->progress (&p, o->progress_data);
}

gboolean
cowscope_record (const CowscopeRecordOptions *o, CowscopeRecordResult *result, GError **error)
{
  gboolean ok = FALSE;
  g_autofree char *probe = NULL;
  g_autofree char *program = NULL;
  g_autofree char *socket_dir = NULL;
  g_autofree char *socket_path = NULL;
  g_auto (GStrv) envp = NULL;
  CowscopeSessionWriter *writer = NULL;
  int listen_fd = -1;
  struct sigaction old_int, old_term, old_pipe;
  gboolean handlers = FALSE;
  Loop loop = { .options = o, .child = -1 };

  memset (result, 0, sizeof *result);
  result->exit_status = result->exit_signal = -1;
  result->target_pid = -1;

  if (!o->argv || !o->argv[0])
    {
      g_set_error (error, COWSCOPE_RECORDER_ERROR, COWSCOPE_RECORDER_ERROR_FAILED,
                   "no program to record");
      return FALSE;
    }
  if (o->ring_capacity
      && (o->ring_capacity < 4096 || o->ring_capacity > COWSCOPE_RING_MAX_CAPACITY
          || (o->ring_capacity & (o->ring_capacity - 1)) != 0))
    {
      g_set_error (error, COWSCOPE_RECORDER_ERROR, COWSCOPE_RECORDER_ERROR_FAILED,
                   "ring size %" G_GUINT64_FORMAT " is not a power of two from 4096 to %"
                   G_GUINT64_FORMAT, o->ring_capacity, (guint64) COWSCOPE_RING_MAX_CAPACITY);
      return FALSE;
    }

  /* Everything that can fail without side effects comes first: no
   * session file is created for a program that cannot run. */
  program = cowscope_target_resolve (o->argv[0], error);
  if (!program)
    return FALSE;
  probe = o->probe_path ? g_strdup (o->probe_path) : cowscope_probe_path_find (error);
  if (!probe)
    return FALSE;

  result->session_path = o->output ? g_strdup (o->output) : default_output (o->argv[0]);
  /* `record -o PROGRAM --force -- PROGRAM` would delete the program. */
  if (!cowscope_format_check_output (result->session_path, program, "the program to record",
                                     error)
      || !cowscope_format_check_output (result->session_path, probe, "the probe library", error))
    return FALSE;
  writer = cowscope_session_writer_create (result->session_path, o->force, error);
  if (!writer)
    return FALSE;

  socket_dir = make_socket_dir (error);
  if (!socket_dir)
    goto out_discard;
  socket_path = g_build_filename (socket_dir, "socket", NULL);
  listen_fd = listen_socket (socket_path, error);
  if (listen_fd < 0)
    goto out_discard;

  if (pipe2 (signal_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
    {
      g_set_error (error, COWSCOPE_RECORDER_ERROR, COWSCOPE_RECORDER_ERROR_FAILED,
                   "cannot create a pipe: %s", g_strerror (errno));
      goto out_discard;
    }
  signal_count = 0;
  struct sigaction sa = { .sa_handler = on_signal };
  sigemptyset (&sa.sa_mask);
  sigaction (SIGINT, &sa, &old_int);
  sigaction (SIGTERM, &sa, &old_term);
  struct sigaction ign = { .sa_handler = SIG_IGN };
  sigemptyset (&ign.sa_mask);
  sigaction (SIGPIPE, &ign, &old_pipe);
  handlers = TRUE;

  envp = target_environment (o, probe, socket_path);
  loop.collector = cowscope_collector_new (writer, o->stacks && !o->cuda_only);
  writer = NULL; /* the collector's now */
  loop.connections = g_ptr_array_new_with_free_func ((GDestroyNotify) connection_free);
  loop.seen_pids = g_hash_table_new (NULL, NULL);
  loop.buffer = g_malloc (MESSAGE_BYTES);

  loop.child = cowscope_target_spawn_full (program, o->argv, envp, o->working_directory,
                                           o->stdout_fd, o->stderr_fd, error);
  if (loop.child < 0)
    {
      cowscope_collector_finish (loop.collector, NULL, NULL);
      writer = cowscope_collector_steal_writer (loop.collector);
      goto out_discard;
    }
  result->target_pid = loop.child;

  /* The loop: connections, signals, the child's end. */
  int wait_status = 0;
  gboolean child_done = FALSE, killed_for_error = FALSE;
  int64_t child_end_ns = 0, kill_deadline = 0;
  int handled_signals = 0;
  int64_t grace_ns = (o->interrupt_grace_ms > 0 ? o->interrupt_grace_ms : 3000) * 1000000;
  int64_t start_ns = now_ns (), next_progress_ns = start_ns;
  int64_t progress_ns = (o->progress_interval_ms > 0 ? o->progress_interval_ms : 100) * 1000000;
  for (;;)
    {
      guint n_conn = loop.connections->len;
      g_autofree struct pollfd *pfds = g_new0 (struct pollfd, n_conn + 2);
      pfds[0] = (struct pollfd) { .fd = signal_pipe[0], .events = POLLIN };
      pfds[1] = (struct pollfd) { .fd = listen_fd, .events = POLLIN };
      for (guint i = 0; i < n_conn; i++)
        pfds[i + 2] = (struct pollfd) {
          .fd = ((Connection *) g_ptr_array_index (loop.connections, i))->fd, .events = POLLIN
        };
      poll (pfds, n_conn + 2, POLL_MS);

      char drain[64];
      while (read (signal_pipe[0], drain, sizeof drain) > 0)
        ;
      int64_t now = now_ns ();
      while (handled_signals < signal_count)
        {
          handled_signals++;
          result->interrupted = TRUE;
          if (child_done)
            continue;
          if (handled_signals == 1)
            {
              kill (-loop.child, SIGINT);
              kill_deadline = now + grace_ns;
            }
          else
            kill (-loop.child, SIGKILL);
        }

      accept_connections (&loop, listen_fd);
      service_connections (&loop);

      if (!child_done)
        {
          pid_t r = waitpid (loop.child, &wait_status, WNOHANG);
          if (r == loop.child || (r < 0 && errno == ECHILD))
            {
              child_done = TRUE;
              child_end_ns = now_ns ();
            }
        }
      if (!child_done && kill_deadline && now > kill_deadline)
        {
          kill (-loop.child, SIGKILL);
          kill_deadline = 0;
        }
      if (o->progress && now >= next_progress_ns)
        {
          CowscopeCollectorTotals live;
          cowscope_collector_get_live_totals (loop.collector, &live);
          report_progress (o, loop.child, now - start_ns, g_hash_table_size (loop.seen_pids),
                           &live);
          next_progress_ns = now + progress_ns;
        }
      if (!killed_for_error && cowscope_collector_has_failed (loop.collector))
        {
          killed_for_error = TRUE;
          if (!child_done)
            kill (-loop.child, SIGKILL);
        }
      if (child_done
          && (loop.connections->len == 0 || killed_for_error
              || now_ns () - child_end_ns > (result->interrupted ? CHILDREN_GRACE_NS / 4
                                                                   : CHILDREN_GRACE_NS)))
        break;
    }

  /* Connections that arrived at the very end, then whoever is left. */
  accept_connections (&loop, listen_fd);
  service_connections (&loop);
  while (loop.connections->len)
    close_connection (&loop, loop.connections->len - 1, "running");

  const char *end = cowscope_target_describe_status (wait_status, &result->exit_status,
                                                     &result->exit_signal);
  result->target_end = g_strdup (end);
  result->processes = g_hash_table_size (loop.seen_pids);
  if (!g_hash_table_contains (loop.seen_pids, GINT_TO_POINTER (loop.child)))
    {
      g_autofree char *cmdline = g_strjoinv (" ", o->argv);
      cowscope_collector_add_process (loop.collector, (uint32_t) loop.child, (uint32_t) getpid (),
                                      program, cmdline, 0);
      result->processes++;
    }
  cowscope_collector_process_end (loop.collector, (uint32_t) loop.child, child_end_ns, end,
                                  result->exit_status, result->exit_signal);

  if (!cowscope_collector_finish (loop.collector, &result->totals, error))
    goto out;
  /* The last report carries the final totals, however short the run. */
  if (o->progress)
    report_progress (o, loop.child, now_ns () - start_ns, result->processes, &result->totals);

  /* Live readers of the session (the app) let go before finalizing. */
  if (o->finalizing)
    o->finalizing (result->session_path, o->finalizing_data);

  CowscopeSessionWriter *w = cowscope_collector_get_writer (loop.collector);
  const char *gpu;
  if (!o->cuda && !o->cuda_only)
    gpu = "off";
  else if (loop.gpu_status != NULL)
    gpu = loop.gpu_status;
  else if (o->cuda_only)
    /* The CUDA driver loads the probe from CUDA_INJECTION64_PATH when
     * the program initialises CUDA: nothing connected, so it never did. */
    gpu = "unavailable: the CUDA driver never loaded the probe (no CUDA driver "
          "on this machine, or the program made no CUDA call)";
  else
    gpu = "unknown";
  if (!write_meta (w, o, program, result, gpu, error)
      || !cowscope_session_finalize (cowscope_session_writer_get_db (w), result->session_path,
                                     error))
    goto out;
  ok = TRUE;
  goto out;

out_discard:
  cowscope_session_writer_discard (writer);
  writer = NULL;
out:
  if (loop.collector)
    cowscope_collector_free (loop.collector);
  cowscope_session_writer_close (writer);
  if (loop.connections)
    g_ptr_array_unref (loop.connections);
  if (loop.seen_pids)
    g_hash_table_unref (loop.seen_pids);
  g_free (loop.buffer);
  g_free (loop.gpu_status);
  if (listen_fd >= 0)
    close (listen_fd);
  if (socket_path)
    unlink (socket_path);
  if (socket_dir)
    rmdir (socket_dir);
  if (handlers)
    {
      sigaction (SIGINT, &old_int, NULL);
      sigaction (SIGTERM, &old_term, NULL);
      sigaction (SIGPIPE, &old_pipe, NULL);
    }
  for (int i = 0; i < 2; i++)
    if (signal_pipe[i] >= 0)
      {
        close (signal_pipe[i]);
        signal_pipe[i] = -1;
      }
  return ok;
}
