/* test-probe.c — libcowscope-probe.so in a real target, against a fake
 * recorder: HELLO, MAPS, one RING per emitting thread, the events and
 * call stacks read back from the rings, forked children as their own
 * processes, and the probe staying out of the way when the recorder is
 * absent, unreachable, or the GPU is.
 *
 * The target (probe-target) is spawned with LD_PRELOAD=<the built probe>
 * and COWSCOPE_SOCKET=<a socket this test listens on>.  Paths come from
 * the environment: COWSCOPE_TEST_PROBE and COWSCOPE_TEST_TARGET. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "cow-trace.h"
#include "cowscope-protocol.h"
#include "cowscope-ring.h"

/* ------------------------------------------------------------------ */
/* A fake recorder                                                     */
/* ------------------------------------------------------------------ */

typedef struct {
  uint32_t kind;
  GBytes *payload;
} Record;

typedef struct {
  uint32_t tid;
  char name[17];
  CowscopeRing *ring;
  GArray *records; /* Record, filled by drain_rings() */
  CowscopeRingStats stats;
} Ring;

typedef struct {
  int fd;
  gboolean eof;
  gboolean hello;
  CowscopeHello hello_msg;
  char *exe;
  GByteArray *cmdline;
  GString *maps_building;
  uint32_t maps_generation;
  char *maps; /* newest complete copy */
  guint n_maps_copies;
  GPtrArray *rings; /* Ring */
  guint n_hello, n_gpu_status, n_bye;
  uint32_t gpu_available;
  char *gpu_reason;
  guint bad_messages;
} Conn;

typedef struct {
  char *dir;
  char *socket_path;
  int listen_fd;
  int stop_pipe[2];
  GThread *thread;
  GPtrArray *conns; /* Conn; owned by the thread until it is joined */
} Recorder;

static void
record_clear (Record *r)
{
  g_bytes_unref (r->payload);
}

static void
ring_free (Ring *r)
{
  if (r->records != NULL)
    g_array_unref (r->records);
  cowscope_ring_free (r->ring);
  g_free (r);
}

static void
conn_free (Conn *c)
{
  if (c->fd >= 0)
    close (c->fd);
  g_free (c->exe);
  g_byte_array_unref (c->cmdline);
  g_string_free (c->maps_building, TRUE);
  g_free (c->maps);
  g_ptr_array_unref (c->rings);
  g_free (c->gpu_reason);
  g_free (c);
}

/* Handles one datagram of @c (@fd_passed: an SCM_RIGHTS fd or -1). */
static void
conn_handle (Conn *c, const guint8 *data, gsize size, int fd_passed)
{
  CowscopeMessageHeader h;
  if (size < sizeof h)
    {
      c->bad_messages++;
      goto out;
    }
  memcpy (&h, data, sizeof h);
  const guint8 *p = data + sizeof h;
  gsize n = size - sizeof h;
  if (h.size != n)
    {
      c->bad_messages++;
      goto out;
    }
  switch (h.type)
    {
    case COWSCOPE_MESSAGE_HELLO:
      g_assert_cmpuint (n, >=, sizeof (CowscopeHello));
      memcpy (&c->hello_msg, p, sizeof c->hello_msg);
      g_assert_cmpuint (n, ==, sizeof (CowscopeHello) + c->hello_msg.exe_length
                                 + c->hello_msg.cmdline_length);
      c->exe = g_strndup ((const char *) p + sizeof (CowscopeHello), c->hello_msg.exe_length);
      g_byte_array_append (c->cmdline,
                           p + sizeof (CowscopeHello) + c->hello_msg.exe_length,
                           c->hello_msg.cmdline_length);
      c->hello = TRUE;
      c->n_hello++;
      break;
    case COWSCOPE_MESSAGE_MAPS:
      {
        CowscopeMapsChunk chunk;
        g_assert_cmpuint (n, >=, sizeof chunk);
        memcpy (&chunk, p, sizeof chunk);
        if (chunk.generation != c->maps_generation)
          {
            g_string_truncate (c->maps_building, 0);
            c->maps_generation = chunk.generation;
          }
        g_assert_cmpuint (chunk.offset, ==, c->maps_building->len);
        g_string_append_len (c->maps_building, (const char *) p + sizeof chunk,
                             (gssize) (n - sizeof chunk));
        if (chunk.final)
          {
            g_free (c->maps);
            c->maps = g_strdup (c->maps_building->str);
            c->n_maps_copies++;
          }
        break;
      }
    case COWSCOPE_MESSAGE_RING:
      {
        CowscopeRingMessage m;
        g_assert_cmpuint (n, ==, sizeof m);
        g_assert_cmpint (fd_passed, >=, 0);
        memcpy (&m, p, sizeof m);
        CowError error = { 0 };
        Ring *r = g_new0 (Ring, 1);
        r->tid = m.tid;
        memcpy (r->name, m.thread_name, 16);
        r->ring = cowscope_ring_map_fd (fd_passed, &error);
        if (r->ring == NULL)
          g_error ("cannot map a ring: %s", error.message);
        g_ptr_array_add (c->rings, r);
        break;
      }
    case COWSCOPE_MESSAGE_GPU_STATUS:
      {
        CowscopeGpuStatus s;
        g_assert_cmpuint (n, >=, sizeof s);
        memcpy (&s, p, sizeof s);
        g_assert_cmpuint (n, ==, sizeof s + s.reason_length);
        c->gpu_available = s.available;
        g_free (c->gpu_reason);
        c->gpu_reason = g_strndup ((const char *) p + sizeof s, s.reason_length);
        c->n_gpu_status++;
        break;
      }
    case COWSCOPE_MESSAGE_BYE:
      g_assert_cmpuint (n, ==, sizeof (CowscopeBye));
      c->n_bye++;
      break;
    default:
      c->bad_messages++;
    }
out:
  if (fd_passed >= 0)
    close (fd_passed);
}

/* Reads one datagram from @c; FALSE at end of stream. */
static gboolean
conn_read (Conn *c)
{
  static guint8 buffer[256 * 1024];
  union {
    struct cmsghdr align;
    char bytes[CMSG_SPACE (sizeof (int) * 4)];
  } control;
  struct iovec iov = { buffer, sizeof buffer };
  struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
                        .msg_control = control.bytes,
                        .msg_controllen = sizeof control.bytes };
  ssize_t got;
  do
    got = recvmsg (c->fd, &msg, MSG_CMSG_CLOEXEC);
  while (got < 0 && errno == EINTR);
  if (got <= 0)
    return FALSE;
  g_assert_false (msg.msg_flags & MSG_TRUNC);
  int fd = -1;
  for (struct cmsghdr *cm = CMSG_FIRSTHDR (&msg); cm != NULL; cm = CMSG_NXTHDR (&msg, cm))
    if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
      memcpy (&fd, CMSG_DATA (cm), sizeof fd);
  conn_handle (c, buffer, (gsize) got, fd);
  return TRUE;
}

/* The recorder thread: accepts and reads until told to stop and every
 * connection has ended. */
static gpointer
recorder_thread (gpointer data)
{
  Recorder *rec = data;
  gboolean stopping = FALSE;

  for (;;)
    {
      GArray *fds = g_array_new (FALSE, FALSE, sizeof (struct pollfd));
      struct pollfd pfd = { .fd = rec->listen_fd, .events = POLLIN };
      g_array_append_val (fds, pfd);
      pfd.fd = rec->stop_pipe[0];
      g_array_append_val (fds, pfd);
      guint open_conns = 0;
      for (guint i = 0; i < rec->conns->len; i++)
        {
          Conn *c = g_ptr_array_index (rec->conns, i);
          pfd.fd = c->eof ? -1 : c->fd;
          g_array_append_val (fds, pfd);
          open_conns += !c->eof;
        }
      if (stopping && open_conns == 0)
        {
          /* Connections still queued in the backlog? */
          struct pollfd l = { .fd = rec->listen_fd, .events = POLLIN };
          if (poll (&l, 1, 0) <= 0)
            {
              g_array_unref (fds);
              break;
            }
        }
      int rc = poll ((struct pollfd *) fds->data, fds->len, stopping ? 100 : 5000);
      if (rc < 0 && errno == EINTR)
        {
          g_array_unref (fds);
          continue;
        }
      struct pollfd *all = (struct pollfd *) fds->data;
      if (all[1].revents)
        stopping = TRUE;
      if (all[0].revents & POLLIN)
        {
          int fd = accept4 (rec->listen_fd, NULL, NULL, SOCK_CLOEXEC);
          if (fd >= 0)
            {
              Conn *c = g_new0 (Conn, 1);
              c->fd = fd;
              c->cmdline = g_byte_array_new ();
              c->maps_building = g_string_new (NULL);
              c->rings = g_ptr_array_new_with_free_func ((GDestroyNotify) ring_free);
              g_ptr_array_add (rec->conns, c);
            }
        }
      for (guint i = 0; i + 2 < fds->len; i++)
        {
          Conn *c = g_ptr_array_index (rec->conns, i);
          if (all[i + 2].revents & (POLLIN | POLLHUP | POLLERR))
            if (!conn_read (c))
              c->eof = TRUE;
        }
      g_array_unref (fds);
    }
  return NULL;
}

static Recorder *
recorder_start (void)
{
  GError *error = NULL;
  Recorder *rec = g_new0 (Recorder, 1);
  rec->dir = g_dir_make_tmp ("cowscope-probe-XXXXXX", &error);
  g_assert_no_error (error);
  rec->socket_path = g_build_filename (rec->dir, "recorder.sock", NULL);
  rec->listen_fd = socket (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  g_assert_cmpint (rec->listen_fd, >=, 0);
  struct sockaddr_un a = { .sun_family = AF_UNIX };
  g_assert_cmpuint (strlen (rec->socket_path), <, sizeof a.sun_path);
  strcpy (a.sun_path, rec->socket_path);
  g_assert_cmpint (bind (rec->listen_fd, (struct sockaddr *) &a, sizeof a), ==, 0);
  g_assert_cmpint (listen (rec->listen_fd, 16), ==, 0);
  g_assert_cmpint (pipe2 (rec->stop_pipe, O_CLOEXEC), ==, 0);
  rec->conns = g_ptr_array_new_with_free_func ((GDestroyNotify) conn_free);
  rec->thread = g_thread_new ("fake-recorder", recorder_thread, rec);
  return rec;
}

/* Reads every ring of every connection to its end. */
static void
drain_rings (Recorder *rec)
{
  for (guint i = 0; i < rec->conns->len; i++)
    {
      Conn *c = g_ptr_array_index (rec->conns, i);
      for (guint j = 0; j < c->rings->len; j++)
        {
          Ring *r = g_ptr_array_index (c->rings, j);
          r->records = g_array_new (FALSE, TRUE, sizeof (Record));
          g_array_set_clear_func (r->records, (GDestroyNotify) record_clear);
          for (;;)
            {
              CowscopeRingRecord rr;
              CowError error = { 0 };
              CowscopeRingReadResult res = cowscope_ring_peek (r->ring, &rr, &error);
              g_assert_cmpint (res, !=, COWSCOPE_RING_READ_ERROR);
              if (res == COWSCOPE_RING_READ_EMPTY)
                break;
              Record out = { rr.kind, g_bytes_new (rr.payload, rr.size) };
              g_array_append_val (r->records, out);
              cowscope_ring_advance (r->ring, &rr);
            }
          cowscope_ring_get_stats (r->ring, &r->stats);
        }
    }
}

/* Stops the thread once every target process has closed its end. */
static void
recorder_stop (Recorder *rec)
{
  char byte = 1;
  g_assert_cmpint (write (rec->stop_pipe[1], &byte, 1), ==, 1);
  g_thread_join (rec->thread);
  drain_rings (rec);
}

static void
recorder_free (Recorder *rec)
{
  close (rec->listen_fd);
  close (rec->stop_pipe[0]);
  close (rec->stop_pipe[1]);
  g_ptr_array_unref (rec->conns);
  g_unlink (rec->socket_path);
  g_rmdir (rec->dir);
  g_free (rec->socket_path);
  g_free (rec->dir);
  g_free (rec);
}

/* ------------------------------------------------------------------ */
/* Running the target                                                  */
/* ------------------------------------------------------------------ */

typedef struct {
  GPid pid;
  int status;
  char *out;
  char *err;
} Run;

static void
run_clear (Run *run)
{
  g_free (run->out);
  g_free (run->err);
}

static const char *
probe_path (void)
{
  const char *p = g_getenv ("COWSCOPE_TEST_PROBE");
  g_assert_nonnull (p);
  return p;
}

/* Runs the target with @args (NULL-terminated, after the program) and
 * the environment edits @env ("K=V" sets, "K" unsets); @preload: put the
 * probe in LD_PRELOAD; @socket: COWSCOPE_SOCKET or NULL. */
static void
run_target (Run *run, const char *const *args, const char *const *env,
            gboolean preload, const char *socket_path)
{
  const char *target = g_getenv ("COWSCOPE_TEST_TARGET");
  g_assert_nonnull (target);
  GPtrArray *argv = g_ptr_array_new ();
  g_ptr_array_add (argv, (char *) target);
  for (const char *const *a = args; a != NULL && *a != NULL; a++)
    g_ptr_array_add (argv, (char *) *a);
  g_ptr_array_add (argv, NULL);

  char **envp = g_get_environ ();
  envp = g_environ_unsetenv (envp, COWSCOPE_ENV_SOCKET);
  envp = g_environ_unsetenv (envp, COWSCOPE_ENV_STACKS);
  envp = g_environ_unsetenv (envp, COWSCOPE_ENV_CUDA);
  envp = g_environ_unsetenv (envp, COWSCOPE_ENV_CUDA_ONLY);
  if (preload)
    envp = g_environ_setenv (envp, "LD_PRELOAD", probe_path (), TRUE);
  if (socket_path != NULL)
    envp = g_environ_setenv (envp, COWSCOPE_ENV_SOCKET, socket_path, TRUE);
  /* An ASan-built probe preloaded into an ASan-built target: the runtime
   * is not first in the library list, which is fine here. */
  const char *asan = g_environ_getenv (envp, "ASAN_OPTIONS");
  char *asan_options = g_strdup_printf ("%s%sverify_asan_link_order=0",
                                        asan ? asan : "", asan && *asan ? ":" : "");
  envp = g_environ_setenv (envp, "ASAN_OPTIONS", asan_options, TRUE);
  g_free (asan_options);
  for (const char *const *e = env; e != NULL && *e != NULL; e++)
    {
      const char *eq = strchr (*e, '=');
      if (eq == NULL)
        envp = g_environ_unsetenv (envp, *e);
      else
        {
          char *key = g_strndup (*e, (gsize) (eq - *e));
          envp = g_environ_setenv (envp, key, eq + 1, TRUE);
          g_free (key);
        }
    }

  GError *error = NULL;
  int out_fd = -1, err_fd = -1;
  memset (run, 0, sizeof *run);
  g_spawn_async_with_pipes (NULL, (char **) argv->pdata, envp,
                            G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL, &run->pid,
                            NULL, &out_fd, &err_fd, &error);
  g_assert_no_error (error);

  GString *out = g_string_new (NULL), *err = g_string_new (NULL);
  struct pollfd pfds[2] = { { out_fd, POLLIN, 0 }, { err_fd, POLLIN, 0 } };
  GString *sinks[2] = { out, err };
  int open_fds = 2;
  while (open_fds > 0)
    {
      if (poll (pfds, 2, 60000) <= 0)
        g_error ("the target hangs");
      for (int i = 0; i < 2; i++)
        if (pfds[i].fd >= 0 && pfds[i].revents)
          {
            char buf[4096];
            ssize_t n = read (pfds[i].fd, buf, sizeof buf);
            if (n > 0)
              g_string_append_len (sinks[i], buf, n);
            else
              {
                close (pfds[i].fd);
                pfds[i].fd = -1;
                open_fds--;
              }
          }
    }
  g_assert_cmpint (waitpid (run->pid, &run->status, 0), ==, run->pid);
  run->out = g_string_free (out, FALSE);
  run->err = g_string_free (err, FALSE);
  if (g_test_verbose ())
    g_test_message ("target stdout:\n%s\ntarget stderr:\n%s", run->out, run->err);
  g_ptr_array_unref (argv);
  g_strfreev (envp);
}

static void
assert_exit_ok (const Run *run)
{
  if (!WIFEXITED (run->status) || WEXITSTATUS (run->status) != 0)
    g_error ("target failed (status %d)\nstdout:\n%s\nstderr:\n%s", run->status,
             run->out, run->err);
  g_assert_nonnull (strstr (run->out, "result=ok"));
}

/* ------------------------------------------------------------------ */
/* Looking at what arrived                                             */
/* ------------------------------------------------------------------ */

static Conn *
conn_for_pid (Recorder *rec, uint32_t pid)
{
  for (guint i = 0; i < rec->conns->len; i++)
    {
      Conn *c = g_ptr_array_index (rec->conns, i);
      if (c->hello && c->hello_msg.pid == pid)
        return c;
    }
  g_error ("no connection said HELLO with pid %u", pid);
  return NULL;
}

static const CowTraceEvent *
record_event (const Record *r)
{
  gsize size;
  const void *data = g_bytes_get_data (r->payload, &size);
  if (r->kind != COWSCOPE_RING_KIND_EVENT)
    return NULL;
  g_assert_cmpuint (size, ==, sizeof (CowTraceEvent));
  return data;
}

/* Events of @type in @ring. */
static guint
count_events (const Ring *ring, CowEventType type)
{
  guint n = 0;
  for (guint i = 0; i < ring->records->len; i++)
    {
      const CowTraceEvent *e = record_event (&g_array_index (ring->records, Record, i));
      n += e != NULL && e->type == type;
    }
  return n;
}

static guint
count_blobs (const Ring *ring)
{
  guint n = 0;
  for (guint i = 0; i < ring->records->len; i++)
    n += g_array_index (ring->records, Record, i).kind == COWSCOPE_RING_KIND_BLOB;
  return n;
}

/* TRUE when @ring holds a STRING record with @text. */
static gboolean
has_string (const Ring *ring, const char *text)
{
  for (guint i = 0; i < ring->records->len; i++)
    {
      const Record *r = &g_array_index (ring->records, Record, i);
      gsize size;
      const char *data = g_bytes_get_data (r->payload, &size);
      if (r->kind == COWSCOPE_RING_KIND_STRING && size == 8 + strlen (text)
          && memcmp (data + 8, text, size - 8) == 0)
        return TRUE;
    }
  return FALSE;
}

/* TRUE when @address lies in a mapping of @path in @maps. */
static gboolean
maps_contain (const char *maps, const char *path, uint64_t address)
{
  gboolean found = FALSE;
  char **lines = g_strsplit (maps, "\n", -1);
  for (char **l = lines; *l != NULL && !found; l++)
    {
      unsigned long long start, end;
      int path_at = 0;
      if (sscanf (*l, "%llx-%llx %*s %*s %*s %*s %n", &start, &end, &path_at) < 2
          || path_at == 0)
        continue;
      if (strcmp (*l + path_at, path) == 0 && address >= start && address < end)
        found = TRUE;
    }
  g_strfreev (lines);
  return found;
}

/* Every stack-taking event in @ring is followed by a STACK blob that
 * names it, with ≥ 1 frame, the innermost in the target's executable.
 * Returns how many stacks were checked. */
static guint
check_stacks (const Ring *ring, const Conn *c)
{
  guint checked = 0;
  for (guint i = 0; i < ring->records->len; i++)
    {
      const CowTraceEvent *e = record_event (&g_array_index (ring->records, Record, i));
      if (e == NULL
          || (e->type != COW_EVENT_LAZY_CLONE && e->type != COW_EVENT_MATERIALIZE_BEGIN))
        continue;
      g_assert_cmpuint (i + 1, <, ring->records->len);
      const Record *next = &g_array_index (ring->records, Record, i + 1);
      g_assert_cmpuint (next->kind, ==, COWSCOPE_RING_KIND_BLOB);
      gsize size;
      const guint8 *data = g_bytes_get_data (next->payload, &size);
      CowscopeRingBlobHeader bh;
      CowscopeStackBlob sb;
      g_assert_cmpuint (size, >=, sizeof bh + sizeof sb);
      memcpy (&bh, data, sizeof bh);
      memcpy (&sb, data + sizeof bh, sizeof sb);
      g_assert_cmpuint (bh.type, ==, COWSCOPE_RING_BLOB_STACK);
      g_assert_cmpint (sb.event_time_ns, ==, e->time_ns);
      g_assert_cmpuint (sb.event_type, ==, e->type);
      g_assert_cmpuint (sb.n_frames, >=, 1);
      g_assert_cmpuint (sb.n_frames, <=, COWSCOPE_MAX_STACK_DEPTH);
      g_assert_cmpuint (size, ==, sizeof bh + sizeof sb + sb.n_frames * sizeof (uint64_t));
      uint64_t innermost;
      memcpy (&innermost, data + sizeof bh + sizeof sb, sizeof innermost);
      if (!maps_contain (c->maps, c->exe, innermost))
        g_error ("innermost frame 0x%" G_GINT64_MODIFIER "x of a %s is not in %s",
                 innermost, cow_event_type_name (e->type), c->exe);
      checked++;
    }
  return checked;
}

/* Every event in @ring came from @pid on the ring's thread. */
static void
check_event_ids (const Ring *ring, uint32_t pid)
{
  for (guint i = 0; i < ring->records->len; i++)
    {
      const CowTraceEvent *e = record_event (&g_array_index (ring->records, Record, i));
      if (e == NULL)
        continue;
      g_assert_cmpuint (e->pid, ==, pid);
      g_assert_cmpuint (e->tid, ==, ring->tid);
    }
}

static Ring *
ring_named (const Conn *c, const char *name)
{
  /* The name in the ring's header: the thread's final name (a thread is
   * set up before its start routine names it). */
  for (guint i = 0; i < c->rings->len; i++)
    {
      Ring *r = g_ptr_array_index (c->rings, i);
      if (strcmp (r->stats.name, name) == 0)
        return r;
    }
  return NULL;
}

/* A ring's books balance and nothing was lost, for records and events. */
static void
check_counts (const Ring *r)
{
  g_assert_cmpuint (r->stats.dropped, ==, 0);
  g_assert_cmpuint (r->stats.produced, ==, r->records->len);
  guint events = 0;
  for (guint i = 0; i < r->records->len; i++)
    events += g_array_index (r->records, Record, i).kind == COWSCOPE_RING_KIND_EVENT;
  g_assert_cmpuint (r->stats.events_produced, ==, events);
  g_assert_cmpuint (r->stats.events_dropped, ==, 0);
}

/* The first EVENT record of @ring, or NULL. */
static const CowTraceEvent *
first_event (const Ring *ring)
{
  for (guint i = 0; i < ring->records->len; i++)
    {
      const CowTraceEvent *e = record_event (&g_array_index (ring->records, Record, i));
      if (e != NULL)
        return e;
    }
  return NULL;
}

/* The first event of @type in @ring; the test fails without one. */
static const CowTraceEvent *
find_event (const Ring *ring, CowEventType type)
{
  for (guint i = 0; i < ring->records->len; i++)
    {
      const CowTraceEvent *e = record_event (&g_array_index (ring->records, Record, i));
      if (e != NULL && e->type == type)
        return e;
    }
  g_error ("no %s event in the ring", cow_event_type_name (type));
}

/* ------------------------------------------------------------------ */
/* Tests                                                               */
/* ------------------------------------------------------------------ */

/* One process, one thread: HELLO, MAPS, one RING; the events the target
 * caused, each stack after its event, strings before use, BYE. */
static void
test_events (void)
{
  Recorder *rec = recorder_start ();
  Run run;
  const char *args[] = { "--clones", "5", "--print-sink", NULL };
  run_target (&run, args, NULL, TRUE, rec->socket_path);
  recorder_stop (rec);
  assert_exit_ok (&run);
  g_assert_nonnull (strstr (run.out, "sink=set"));
  g_assert_null (strstr (run.err, "cowscope:"));

  g_assert_cmpuint (rec->conns->len, ==, 1);
  Conn *c = conn_for_pid (rec, (uint32_t) run.pid);
  g_assert_cmpuint (c->bad_messages, ==, 0);
  g_assert_cmpuint (c->n_hello, ==, 1);
  g_assert_cmpuint (c->hello_msg.protocol_version, ==, COWSCOPE_PROTOCOL_VERSION);
  g_assert_cmpuint (c->hello_msg.ppid, ==, (uint32_t) getpid ());
  g_assert_cmpuint (c->hello_msg.trace_abi_version, ==, COW_TRACE_ABI_VERSION);
  g_assert_cmpint (c->hello_msg.monotonic_ns, >, 0);
  g_assert_cmpint (c->hello_msg.realtime_ns, >, 0);
  g_assert_true (g_str_has_suffix (c->exe, "/probe-target"));
  g_assert_cmpuint (c->cmdline->len, >, 0);
  g_assert_nonnull (memchr (c->cmdline->data, '\0', c->cmdline->len)); /* argv separated */
  g_assert_nonnull (c->maps);
  /* At HELLO; the main thread's ring needs no new copy (nothing was
   * loaded since). */
  g_assert_cmpuint (c->n_maps_copies, ==, 1);
  g_assert_nonnull (strstr (c->maps, "probe-target"));
  g_assert_nonnull (strstr (c->maps, "libcowscope-probe.so"));
  g_assert_cmpuint (c->n_gpu_status, ==, 0);
  g_assert_cmpuint (c->n_bye, ==, 1);

  g_assert_cmpuint (c->rings->len, ==, 1);
  Ring *r = g_ptr_array_index (c->rings, 0);
  g_assert_cmpuint (r->tid, ==, (uint32_t) run.pid);
  g_assert_cmpuint (r->stats.producer_pid, ==, (uint32_t) run.pid);
  g_assert_true (r->stats.flags & COWSCOPE_RING_FLAG_FINISHED);
  /* The process's first ring carries its orphan counters: none here. */
  g_assert_true (r->stats.flags & COWSCOPE_RING_FLAG_PROCESS_COUNTERS);
  g_assert_cmpuint (r->stats.orphan_produced, ==, 0);
  g_assert_cmpstr (r->stats.name, ==, "probe-target");
  check_counts (r);
  check_event_ids (r, (uint32_t) run.pid);
  g_assert_cmpuint (count_events (r, COW_EVENT_LAZY_CLONE), ==, 5);
  g_assert_cmpuint (count_events (r, COW_EVENT_LAZY_CLONE_EAGER), ==, 0);
  g_assert_cmpuint (count_events (r, COW_EVENT_MATERIALIZE_BEGIN), ==, 5);
  g_assert_cmpuint (count_events (r, COW_EVENT_MATERIALIZE_END), ==, 5);
  g_assert_cmpuint (count_events (r, COW_EVENT_RANGE_BEGIN), ==, 1);
  g_assert_cmpuint (count_events (r, COW_EVENT_RANGE_END), ==, 1);
  g_assert_cmpuint (count_events (r, COW_EVENT_MARK), ==, 1);
  g_assert_cmpuint (count_events (r, COW_EVENT_TENSOR_NAME), ==, 1);
  g_assert_true (has_string (r, "weights"));
  g_assert_true (has_string (r, "step"));
  g_assert_cmpuint (check_stacks (r, c), ==, 10);
  g_assert_cmpuint (count_blobs (r), ==, 10);

  run_clear (&run);
  recorder_free (rec);
}

/* COWSCOPE_STACKS=0: the same events, no STACK blobs. */
static void
test_no_stacks (void)
{
  Recorder *rec = recorder_start ();
  Run run;
  const char *args[] = { "--clones", "4", NULL };
  const char *env[] = { "COWSCOPE_STACKS=0", NULL };
  run_target (&run, args, env, TRUE, rec->socket_path);
  recorder_stop (rec);
  assert_exit_ok (&run);

  Conn *c = conn_for_pid (rec, (uint32_t) run.pid);
  g_assert_cmpuint (c->rings->len, ==, 1);
  Ring *r = g_ptr_array_index (c->rings, 0);
  check_counts (r);
  g_assert_cmpuint (count_events (r, COW_EVENT_LAZY_CLONE), ==, 4);
  g_assert_cmpuint (count_events (r, COW_EVENT_MATERIALIZE_BEGIN), ==, 4);
  g_assert_cmpuint (count_blobs (r), ==, 0);

  run_clear (&run);
  recorder_free (rec);
}

/* A second thread gets its own ring, named after it, holding exactly its
 * own events, marked finished when the thread ends. */
static void
test_thread (void)
{
  Recorder *rec = recorder_start ();
  Run run;
  const char *args[] = { "--clones", "3", "--thread", "4", NULL };
  run_target (&run, args, NULL, TRUE, rec->socket_path);
  recorder_stop (rec);
  assert_exit_ok (&run);

  Conn *c = conn_for_pid (rec, (uint32_t) run.pid);
  g_assert_cmpuint (c->rings->len, ==, 2);
  Ring *worker = ring_named (c, "probe-worker");
  g_assert_nonnull (worker);
  Ring *main_ring = g_ptr_array_index (c->rings, 0) == worker
                      ? g_ptr_array_index (c->rings, 1)
                      : g_ptr_array_index (c->rings, 0);
  g_assert_cmpuint (main_ring->tid, ==, (uint32_t) run.pid);
  g_assert_cmpuint (worker->tid, !=, main_ring->tid);
  g_assert_true (worker->stats.flags & COWSCOPE_RING_FLAG_FINISHED);
  g_assert_true (main_ring->stats.flags & COWSCOPE_RING_FLAG_FINISHED);
  for (guint i = 0; i < c->rings->len; i++)
    {
      Ring *r = g_ptr_array_index (c->rings, i);
      check_counts (r);
      check_event_ids (r, (uint32_t) run.pid);
      check_stacks (r, c);
    }
  g_assert_cmpuint (count_events (main_ring, COW_EVENT_LAZY_CLONE), ==, 3);
  g_assert_cmpuint (count_events (worker, COW_EVENT_LAZY_CLONE), ==, 4);
  g_assert_cmpuint (count_events (worker, COW_EVENT_MATERIALIZE_BEGIN), ==, 4);
  /* Strings are interned per process: "weights" was announced once, on
   * the ring of the thread that named a tensor first. */
  g_assert_true (has_string (main_ring, "weights"));
  g_assert_false (has_string (worker, "weights"));

  run_clear (&run);
  recorder_free (rec);
}

/* Threads that start together each get their own ring and lose
 * nothing. */
static void
test_threads_concurrent (void)
{
  Recorder *rec = recorder_start ();
  Run run;
  const char *args[] = { "--clones", "1", "--thread", "200", "--threads", "6", NULL };
  run_target (&run, args, NULL, TRUE, rec->socket_path);
  recorder_stop (rec);
  assert_exit_ok (&run);

  Conn *c = conn_for_pid (rec, (uint32_t) run.pid);
  g_assert_cmpuint (c->rings->len, ==, 7);
  guint clones = 0;
  GHashTable *tids = g_hash_table_new (NULL, NULL);
  for (guint i = 0; i < c->rings->len; i++)
    {
      Ring *r = g_ptr_array_index (c->rings, i);
      check_counts (r);
      check_event_ids (r, (uint32_t) run.pid);
      check_stacks (r, c);
      g_assert_true (r->stats.flags & COWSCOPE_RING_FLAG_FINISHED);
      g_assert_false (g_hash_table_contains (tids, GUINT_TO_POINTER (r->tid)));
      g_hash_table_add (tids, GUINT_TO_POINTER (r->tid));
      guint n = count_events (r, COW_EVENT_LAZY_CLONE);
      g_assert_cmpuint (n, ==, r->tid == (uint32_t) run.pid ? 1 : 200);
      clones += n;
    }
  g_assert_cmpuint (clones, ==, 1 + 6 * 200);
  g_hash_table_unref (tids);

  run_clear (&run);
  recorder_free (rec);
}

/* The sink re-entered from a signal handler on the same thread: nested
 * events are stored or dropped and counted, never corrupt the ring or
 * take an outer event with them. */
static void
test_signal_reentry (void)
{
  Recorder *rec = recorder_start ();
  Run run;
  const char *args[] = { "--clones", "3000", "--signals", NULL };
  /* Room for everything: the fake recorder drains only at the end. */
  const char *env[] = { "COWSCOPE_RING_CAPACITY=67108864", NULL };
  run_target (&run, args, env, TRUE, rec->socket_path);
  recorder_stop (rec);
  assert_exit_ok (&run);
  const char *line = strstr (run.out, "signals=");
  g_assert_nonnull (line);
  guint signals = (guint) g_ascii_strtoull (line + 8, NULL, 10);

  Conn *c = conn_for_pid (rec, (uint32_t) run.pid);
  g_assert_cmpuint (c->rings->len, ==, 1);
  Ring *r = g_ptr_array_index (c->rings, 0);
  g_assert_cmpuint (r->stats.produced, ==, r->records->len + r->stats.dropped);
  g_assert_cmpuint (count_events (r, COW_EVENT_LAZY_CLONE), ==, 3000);
  g_assert_cmpuint (count_events (r, COW_EVENT_MATERIALIZE_BEGIN), ==, 3000);
  /* Every handler event was stored or counted as dropped (the ring is
   * large enough that only re-entry drops). */
  g_assert_cmpuint (count_events (r, COW_EVENT_MARK) - 1 + r->stats.dropped, ==, signals);
  g_test_message ("%u signal-handler events, %" G_GUINT64_FORMAT " dropped as re-entrant",
                  signals, r->stats.dropped);

  run_clear (&run);
  recorder_free (rec);
}

/* A tiny ring that nobody drains while the target runs: the overflow is
 * dropped and counted, produced = stored + dropped exactly. */
static void
test_overflow_counted (void)
{
  Recorder *rec = recorder_start ();
  Run run;
  const char *args[] = { "--clones", "200", NULL };
  const char *env[] = { "COWSCOPE_RING_CAPACITY=4096", "COWSCOPE_RING_POLICY=drop", NULL };
  run_target (&run, args, env, TRUE, rec->socket_path);
  recorder_stop (rec);
  assert_exit_ok (&run);

  Conn *c = conn_for_pid (rec, (uint32_t) run.pid);
  Ring *r = g_ptr_array_index (c->rings, 0);
  g_assert_cmpuint (cowscope_ring_get_capacity (r->ring), ==, 4096);
  g_assert_cmpuint (r->stats.dropped, >, 0);
  g_assert_cmpuint (r->stats.produced, ==, r->records->len + r->stats.dropped);

  run_clear (&run);
  recorder_free (rec);
}

/* A forked child says its own HELLO (its pid, the target as parent) and
 * its events arrive on its own rings, not in the parent's. */
static void
test_fork (void)
{
  Recorder *rec = recorder_start ();
  Run run;
  const char *args[] = { "--clones", "3", "--fork", "2", NULL };
  run_target (&run, args, NULL, TRUE, rec->socket_path);
  recorder_stop (rec);
  assert_exit_ok (&run);

  const char *line = strstr (run.out, "child=");
  g_assert_nonnull (line);
  uint32_t child_pid = (uint32_t) g_ascii_strtoull (line + 6, NULL, 10);
  g_assert_cmpuint (child_pid, >, 0);

  g_assert_cmpuint (rec->conns->len, ==, 2);
  Conn *parent = conn_for_pid (rec, (uint32_t) run.pid);
  Conn *child = conn_for_pid (rec, child_pid);
  g_assert_cmpuint (child->n_hello, ==, 1);
  g_assert_cmpuint (child->hello_msg.ppid, ==, (uint32_t) run.pid);
  g_assert_nonnull (child->maps);
  g_assert_cmpuint (child->n_bye, ==, 1);
  g_assert_cmpuint (parent->n_bye, ==, 1);

  g_assert_cmpuint (parent->rings->len, ==, 1);
  g_assert_cmpuint (child->rings->len, ==, 1);
  Ring *pr = g_ptr_array_index (parent->rings, 0);
  Ring *cr = g_ptr_array_index (child->rings, 0);
  check_counts (pr);
  check_counts (cr);
  check_event_ids (pr, (uint32_t) run.pid);
  check_event_ids (cr, child_pid);
  g_assert_cmpuint (cr->tid, ==, child_pid);
  g_assert_cmpuint (count_events (pr, COW_EVENT_LAZY_CLONE), ==, 3);
  g_assert_cmpuint (count_events (cr, COW_EVENT_LAZY_CLONE), ==, 2);
  g_assert_cmpuint (count_events (cr, COW_EVENT_MATERIALIZE_BEGIN), ==, 2);
  g_assert_cmpuint (check_stacks (cr, child), ==, 4);
  /* The child announces again, on its own ring, the strings its parent
   * had announced before the fork (the recorder keys strings by pid). */
  g_assert_true (has_string (cr, "weights"));

  run_clear (&run);
  recorder_free (rec);
}

/* A new thread's ring is set up before its first event: a thread whose
 * first engine event is the materialization of an 8,000-byte lazy clone
 * finds its ring ready (the header's ready_ns is earlier than the
 * materialize_begin's timestamp, and no thread had to be set up inside
 * the sink), so the copy's recorded span holds the copy alone.  The
 * writers do not wait for each other's set-up either: their spans, held
 * open together by the target, all overlap.  (Before the fix the ring
 * was made and handed over inside the first sink call, after the
 * engine's timestamp, under the probe's lock: the span held the set-up
 * and the writers' set-ups ran one after the other.) */
static void
test_first_event_setup (void)
{
  Recorder *rec = recorder_start ();
  Run run;
  const char *args[] = { "--clones", "1", "--first-materialize", "4", NULL };
  run_target (&run, args, NULL, TRUE, rec->socket_path);
  recorder_stop (rec);
  assert_exit_ok (&run);
  g_assert_nonnull (strstr (run.out, "lazy_setups=0\n"));

  Conn *c = conn_for_pid (rec, (uint32_t) run.pid);
  guint writers = 0;
  int64_t last_begin = 0, first_end = G_MAXINT64;
  for (guint i = 0; i < c->rings->len; i++)
    {
      Ring *r = g_ptr_array_index (c->rings, i);
      check_counts (r);
      if (strcmp (r->stats.name, "probe-writer") != 0)
        continue;
      writers++;
      const CowTraceEvent *first = first_event (r);
      g_assert_nonnull (first);
      g_assert_cmpuint (first->type, ==, COW_EVENT_MATERIALIZE_BEGIN);
      const CowTraceEvent *end = find_event (r, COW_EVENT_MATERIALIZE_END);
      g_assert_cmpuint (end->aux & COW_MATERIALIZE_KIND_MASK, ==, COW_MATERIALIZE_COPY);
      g_assert_cmpint (r->stats.ready_ns, >, 0);
      g_assert_cmpint (r->stats.ready_ns, <, first->time_ns);
      last_begin = MAX (last_begin, first->time_ns);
      first_end = MIN (first_end, end->time_ns);
    }
  g_assert_cmpuint (writers, ==, 4);
  /* Every writer began before any finished: all four copies overlapped. */
  g_assert_cmpint (last_begin, <, first_end);

  run_clear (&run);
  recorder_free (rec);
}

/* The fallback: a forked child has no trampoline to set it up, so its
 * ring is made inside its first sink call, and that first event (here a
 * materialize_begin) is stamped after the set-up, keeping the set-up out
 * of the copy's span. */
static void
test_first_event_lazy_setup (void)
{
  Recorder *rec = recorder_start ();
  Run run;
  const char *args[] = { "--clones", "1", "--fork-materialize", NULL };
  run_target (&run, args, NULL, TRUE, rec->socket_path);
  recorder_stop (rec);
  assert_exit_ok (&run);
  const char *line = strstr (run.out, "materialize_child=");
  g_assert_nonnull (line);
  uint32_t child_pid = (uint32_t) g_ascii_strtoull (line + strlen ("materialize_child="), NULL, 10);

  Conn *child = conn_for_pid (rec, child_pid);
  g_assert_cmpuint (child->rings->len, ==, 1);
  Ring *r = g_ptr_array_index (child->rings, 0);
  const CowTraceEvent *first = first_event (r);
  g_assert_nonnull (first);
  g_assert_cmpuint (first->type, ==, COW_EVENT_MATERIALIZE_BEGIN);
  g_assert_cmpint (r->stats.ready_ns, >, 0);
  g_assert_cmpint (r->stats.ready_ns, <, first->time_ns);
  g_assert_cmpint (find_event (r, COW_EVENT_MATERIALIZE_END)->time_ns, >=, first->time_ns);

  run_clear (&run);
  recorder_free (rec);
}

/* A library loaded after the last copy of the maps makes the next new
 * thread send a fresh copy, so the recorder can symbolize its code. */
static void
test_maps_after_dlopen (void)
{
  Recorder *rec = recorder_start ();
  Run run;
  const char *args[] = { "--clones", "1", "--dlopen", "libutil.so.1", "--thread", "1", NULL };
  run_target (&run, args, NULL, TRUE, rec->socket_path);
  recorder_stop (rec);
  if (WIFEXITED (run.status) && WEXITSTATUS (run.status) == 1 && strstr (run.err, "libutil"))
    {
      g_test_skip ("libutil.so.1 cannot be loaded here");
      run_clear (&run);
      recorder_free (rec);
      return;
    }
  assert_exit_ok (&run);
  Conn *c = conn_for_pid (rec, (uint32_t) run.pid);
  g_assert_cmpuint (c->n_maps_copies, ==, 2);
  g_assert_nonnull (strstr (c->maps, "libutil"));

  run_clear (&run);
  recorder_free (rec);
}

/* Without COWSCOPE_SOCKET the probe does nothing: no sink, no output. */
static void
test_no_socket (void)
{
  Run run;
  const char *args[] = { "--clones", "2", "--print-sink", NULL };
  run_target (&run, args, NULL, TRUE, NULL);
  assert_exit_ok (&run);
  g_assert_nonnull (strstr (run.out, "sink=null"));
  g_assert_null (strstr (run.err, "cowscope"));
  run_clear (&run);
}

/* An unreachable recorder: one warning line, no sink, correct results. */
static void
test_unreachable (void)
{
  Run run;
  const char *args[] = { "--clones", "2", "--thread", "1", "--print-sink", NULL };
  run_target (&run, args, NULL, TRUE, "/nonexistent/cowscope/recorder.sock");
  assert_exit_ok (&run);
  g_assert_nonnull (strstr (run.out, "sink=null"));
  g_assert_nonnull (strstr (run.err,
                            "cowscope: cannot reach the recorder at /nonexistent/cowscope/recorder.sock: "
                            "No such file or directory; tracing is off\n"));
  /* Exactly one line. */
  g_assert_null (strstr (strstr (run.err, "cowscope:") + 1, "cowscope:"));
  run_clear (&run);
}

/* COWSCOPE_CUDA=1 without a usable GPU: GPU_STATUS says unavailable and
 * why; the engine's events and the target's results are unaffected. */
static void
test_cuda_unavailable (void)
{
#ifndef COWSCOPE_TEST_HAVE_CUPTI
  g_test_skip ("the probe was built without CUPTI headers");
  return;
#endif
  Recorder *rec = recorder_start ();
  Run run;
  const char *args[] = { "--clones", "2", NULL };
  const char *env[] = { "COWSCOPE_CUDA=1", NULL };
  run_target (&run, args, env, TRUE, rec->socket_path);
  recorder_stop (rec);
  assert_exit_ok (&run);

  Conn *c = conn_for_pid (rec, (uint32_t) run.pid);
  g_assert_cmpuint (c->n_gpu_status, ==, 1);
  g_test_message ("GPU status: available=%u reason=%s", c->gpu_available, c->gpu_reason);
  if (c->gpu_available)
    {
      g_test_message ("this machine has a working CUDA driver: nothing to check here");
    }
  else
    {
      /* The reason alone (the recorder and the report add "GPU tracing
       * unavailable"), naming what failed: a CUPTI call or the library. */
      g_assert_false (g_str_has_prefix (c->gpu_reason, "GPU tracing unavailable"));
      g_assert_cmpuint (strlen (c->gpu_reason), >, 0);
      if (g_file_test ("/usr/lib/x86_64-linux-gnu/libcuda.so.1", G_FILE_TEST_EXISTS)
          || g_file_test ("/usr/lib64/libcuda.so.1", G_FILE_TEST_EXISTS))
        g_assert_true (strstr (c->gpu_reason, "cupti") != NULL
                       || strstr (c->gpu_reason, "libcupti") != NULL);
      else /* no driver: said as such, not as a CUPTI error code */
        g_assert_true (g_str_has_prefix (c->gpu_reason,
                                         "no CUDA device: the CUDA driver is not installed"));
    }
  Ring *r = g_ptr_array_index (c->rings, 0);
  g_assert_cmpuint (count_events (r, COW_EVENT_LAZY_CLONE), ==, 2);

  run_clear (&run);
  recorder_free (rec);
}

/* --cuda-only: the driver loads the probe and calls InitializeInjection
 * (twice here): one HELLO, one GPU_STATUS, no engine sink. */
static void
test_injection (void)
{
  Recorder *rec = recorder_start ();
  Run run;
  const char *args[] = { "--inject", probe_path (), "--clones", "2", "--print-sink", NULL };
  const char *env[] = { "COWSCOPE_CUDA_ONLY=1", NULL };
  run_target (&run, args, env, FALSE, rec->socket_path);
  recorder_stop (rec);
  assert_exit_ok (&run);
  g_assert_nonnull (strstr (run.out, "inject=1,1"));

  g_assert_cmpuint (rec->conns->len, ==, 1);
  Conn *c = conn_for_pid (rec, (uint32_t) run.pid);
  g_assert_cmpuint (c->n_hello, ==, 1);
  g_assert_cmpuint (c->n_gpu_status, ==, 1);
  g_assert_cmpuint (c->n_bye, ==, 1);
  g_test_message ("GPU status: available=%u reason=%s", c->gpu_available, c->gpu_reason);
  if (!c->gpu_available)
    {
      g_assert_false (g_str_has_prefix (c->gpu_reason, "GPU tracing unavailable"));
      g_assert_cmpuint (strlen (c->gpu_reason), >, 0);
    }
  /* The engine's events are not traced in CUDA-only mode (with a GPU,
   * CUPTI's own worker thread could bring a ring). */
  if (!c->gpu_available)
    g_assert_cmpuint (c->rings->len, ==, 0);

  run_clear (&run);
  recorder_free (rec);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  signal (SIGPIPE, SIG_IGN);

  g_test_add_func ("/probe/events", test_events);
  g_test_add_func ("/probe/no-stacks", test_no_stacks);
  g_test_add_func ("/probe/thread", test_thread);
  g_test_add_func ("/probe/threads-concurrent", test_threads_concurrent);
  g_test_add_func ("/probe/signal-reentry", test_signal_reentry);
  g_test_add_func ("/probe/overflow-counted", test_overflow_counted);
  g_test_add_func ("/probe/fork", test_fork);
  g_test_add_func ("/probe/first-event-setup", test_first_event_setup);
  g_test_add_func ("/probe/first-event-lazy-setup", test_first_event_lazy_setup);
  g_test_add_func ("/probe/maps-after-dlopen", test_maps_after_dlopen);
  g_test_add_func ("/probe/no-socket", test_no_socket);
  g_test_add_func ("/probe/unreachable", test_unreachable);
  g_test_add_func ("/probe/cuda-unavailable", test_cuda_unavailable);
  g_test_add_func ("/probe/injection", test_injection);

  return g_test_run ();
}
