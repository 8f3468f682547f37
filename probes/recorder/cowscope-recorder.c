/* cowscope-recorder.c — records a target into a session database.
 *
 * cowscope_record() reads top to bottom as the recording's phases:
 * check the options, prepare (program, probe, session file, socket),
 * start the target, run the loop (peers, signals, the target's end),
 * then finish the session (totals, meta, finalization) and clean up.
 * The peers' messages are cowscope-peer.c's, the rings' records the
 * collector's.
 */
#include "cowscope-recorder.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cowscope-format-output.h"
#include "cowscope-peer.h"
#include "cowscope-probe-path.h"
#include "cowscope-protocol.h"
#include "cowscope-session-finalize.h"
#include "cowscope-socket-dir.h"
#include "cowscope-target.h"

/* After the target (the direct child) exited: how long its children may
 * keep their connections open before the session is closed. */
#define CHILDREN_GRACE_NS ((int64_t) 1000 * 1000 * 1000)
#define POLL_MS 10

/* One recording in progress. */
typedef struct {
  const CowscopeRecordOptions *options;
  CowscopeRecordResult *result;
  char *program;               /* the resolved target */
  char *probe;
  char *socket_dir;
  char *socket_path;
  int listen_fd;
  CowscopeSessionWriter *writer; /* until the collector takes it */
  CowscopePeerContext peers_context;
  GPtrArray *peers;            /* CowscopePeer*, open connections */
  pid_t child;
  /* The loop's state. */
  int wait_status;
  gboolean child_done;
  gboolean killed_for_error;
  int64_t start_ns;
  int64_t spawn_ns;            /* CLOCK_MONOTONIC when the target was started */
  int64_t child_end_ns;
  int64_t kill_deadline_ns;
  int64_t next_progress_ns;
  int handled_signals;
  /* Signal handlers and the file limit to put back. */
  gboolean handlers;
  struct sigaction old_int, old_term, old_pipe;
  gboolean file_limit_raised;
  struct rlimit old_file_limit;
} Recording;

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
  g_clear_pointer (&result->block_stopped_waiting, g_free);
}

/* ---- Preparing ---------------------------------------------------- */

/* Bad options fail before anything is created. */
static gboolean
check_options (const CowscopeRecordOptions *o, GError **error)
{
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
  return TRUE;
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

static const char *target_env (const CowscopeRecordOptions *o, const char *variable);

/* cowscope-PROGRAM-DATE.cowscope; with -rankN before the extension when
 * a launcher set RANK, so that the ranks of one run, started in the same
 * second, write different files. */
static char *
default_output (const CowscopeRecordOptions *o)
{
  g_autofree char *base = g_path_get_basename (o->argv[0]);
  g_autoptr (GDateTime) now = g_date_time_new_now_local ();
  g_autofree char *stamp = g_date_time_format (now, "%Y%m%d-%H%M%S");
  const char *rank = target_env (o, "RANK");

  if (rank != NULL && *rank != '\0')
    return g_strdup_printf ("cowscope-%s-%s-rank%s.cowscope", base, stamp, rank);
  return g_strdup_printf ("cowscope-%s-%s.cowscope", base, stamp);
}

/* -o FILE with %q{NAME} replaced by the target's environment variable
 * NAME (empty when unset) and %% by %, as nsys does: a launcher that
 * runs one command line per rank gives each its own file
 * (-o 'train-%q{RANK}.cowscope').  Any other % stays as it is. */
static char *
expand_output (const CowscopeRecordOptions *o)
{
  GString *path = g_string_new (NULL);

  for (const char *p = o->output; *p != '\0'; p++)
    {
      const char *close;
      if (p[0] == '%' && p[1] == '%')
        {
          g_string_append_c (path, '%');
          p++;
        }
      else if (p[0] == '%' && p[1] == 'q' && p[2] == '{' && (close = strchr (p + 3, '}')) != NULL)
        {
          g_autofree char *name = g_strndup (p + 3, close - (p + 3));
          const char *value = target_env (o, name);
          g_string_append (path, value != NULL ? value : "");
          p = close;
        }
      else
        g_string_append_c (path, *p);
    }
  return g_string_free (path, FALSE);
}

/* Program and probe first (nothing is created for a program that cannot
 * run), then the session file, then the private socket. */
static gboolean
prepare (Recording *r, GError **error)
{
  const CowscopeRecordOptions *o = r->options;
  r->program = cowscope_target_resolve (o->argv[0], error);
  if (!r->program)
    return FALSE;
  r->probe = o->probe_path ? g_strdup (o->probe_path) : cowscope_probe_path_find (error);
  if (!r->probe)
    return FALSE;

  r->result->session_path = o->output ? expand_output (o) : default_output (o);
  /* `record -o PROGRAM --force -- PROGRAM` would delete the program. */
  if (!cowscope_format_check_output (r->result->session_path, r->program,
                                     "the program to record", error)
      || !cowscope_format_check_output (r->result->session_path, r->probe, "the probe library",
                                        error))
    return FALSE;
  r->writer = cowscope_session_writer_create (r->result->session_path, o->force, error);
  if (!r->writer)
    return FALSE;

  r->socket_dir = cowscope_socket_dir_create (error);
  if (!r->socket_dir)
    return FALSE;
  r->socket_path = g_build_filename (r->socket_dir, "socket", NULL);
  r->listen_fd = listen_socket (r->socket_path, error);
  return r->listen_fd >= 0;
}

/* SIGINT and SIGTERM stop the target through the loop; SIGPIPE is
 * ignored (a peer that hangs up must not kill the recorder). */
static gboolean
install_signal_handlers (Recording *r, GError **error)
{
  if (pipe2 (signal_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
    {
      g_set_error (error, COWSCOPE_RECORDER_ERROR, COWSCOPE_RECORDER_ERROR_FAILED,
                   "cannot create a pipe: %s", g_strerror (errno));
      return FALSE;
    }
  signal_count = 0;
  struct sigaction sa = { .sa_handler = on_signal };
  sigemptyset (&sa.sa_mask);
  sigaction (SIGINT, &sa, &r->old_int);
  sigaction (SIGTERM, &sa, &r->old_term);
  struct sigaction ign = { .sa_handler = SIG_IGN };
  sigemptyset (&ign.sa_mask);
  sigaction (SIGPIPE, &ign, &r->old_pipe);
  r->handlers = TRUE;
  return TRUE;
}

static void
restore_signal_handlers (Recording *r)
{
  if (r->handlers)
    {
      sigaction (SIGINT, &r->old_int, NULL);
      sigaction (SIGTERM, &r->old_term, NULL);
      sigaction (SIGPIPE, &r->old_pipe, NULL);
      r->handlers = FALSE;
    }
  for (int i = 0; i < 2; i++)
    if (signal_pipe[i] >= 0)
      {
        close (signal_pipe[i]);
        signal_pipe[i] = -1;
      }
}

/* ---- Starting the target ------------------------------------------ */

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

/* Raises the recorder's soft limit on open files to the hard limit: a
 * ring costs the recorder no descriptor once mapped, but every process
 * holds a connection and each ring passes through one while it arrives.
 * Called after the target started, which keeps the limit it had; put
 * back when the recording ends (an embedding application starts other
 * programs, which should not inherit it). */
static void
raise_file_limit (Recording *r)
{
  struct rlimit limit;
  if (getrlimit (RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max)
    {
      r->old_file_limit = limit;
      limit.rlim_cur = limit.rlim_max;
      r->file_limit_raised = setrlimit (RLIMIT_NOFILE, &limit) == 0;
    }
}

/* The collector (which takes the writer) and the target under the
 * probe.  A target that cannot start leaves no session file. */
static gboolean
start_target (Recording *r, GError **error)
{
  const CowscopeRecordOptions *o = r->options;
  g_auto (GStrv) envp = target_environment (o, r->probe, r->socket_path);
  CowscopeCollector *collector = cowscope_collector_new (r->writer, o->stacks && !o->cuda_only);
  r->writer = NULL;
  r->peers_context = (CowscopePeerContext) {
    .collector = collector,
    .target = -1,
    .target_program = r->program,
    .target_argv = o->argv,
    .seen_pids = g_hash_table_new (NULL, NULL),
  };
  r->peers = g_ptr_array_new ();

  r->spawn_ns = now_ns ();
  r->child = cowscope_target_spawn_full (r->program, o->argv, envp, o->working_directory,
                                         o->stdout_fd, o->stderr_fd, error);
  if (r->child < 0)
    return FALSE;
  r->peers_context.target = r->child;
  r->result->target_pid = r->child;
  raise_file_limit (r);
  return TRUE;
}

/* ---- The loop ----------------------------------------------------- */

static void
close_peer (Recording *r, guint index, const char *reason)
{
  cowscope_peer_close (g_ptr_array_index (r->peers, index), now_ns (), reason);
  g_ptr_array_remove_index_fast (r->peers, index);
}

static void
accept_peers (Recording *r)
{
  for (;;)
    {
      gboolean refused = FALSE;
      CowscopePeer *peer = cowscope_peer_accept (&r->peers_context, r->listen_fd, &refused);
      if (peer)
        g_ptr_array_add (r->peers, peer);
      else if (!refused)
        return;
    }
}

/* Reads every peer; closes those that hung up or misbehaved too often. */
static void
service_peers (Recording *r)
{
  for (guint i = 0; i < r->peers->len;)
    {
      if (!cowscope_peer_service (g_ptr_array_index (r->peers, i)))
        close_peer (r, i, NULL);
      else
        i++;
    }
}

/* Waits up to POLL_MS for a signal, a connection or a message. */
static void
wait_for_activity (Recording *r)
{
  guint n = r->peers->len;
  g_autofree struct pollfd *pfds = g_new0 (struct pollfd, n + 2);
  pfds[0] = (struct pollfd) { .fd = signal_pipe[0], .events = POLLIN };
  pfds[1] = (struct pollfd) { .fd = r->listen_fd, .events = POLLIN };
  for (guint i = 0; i < n; i++)
    pfds[i + 2] = (struct pollfd) { .fd = cowscope_peer_get_fd (g_ptr_array_index (r->peers, i)),
                                    .events = POLLIN };
  poll (pfds, n + 2, POLL_MS);
  char drain[64];
  while (read (signal_pipe[0], drain, sizeof drain) > 0)
    ;
}

/* Ctrl-C (or cowscope_record_interrupt()): the first stops the target's
 * process group with SIGINT and starts the grace period, the next kills
 * it. */
static void
handle_signals (Recording *r, int64_t now)
{
  while (r->handled_signals < signal_count)
    {
      r->handled_signals++;
      r->result->interrupted = TRUE;
      if (r->child_done)
        continue;
      if (r->handled_signals == 1)
        {
          int64_t grace_ms = r->options->interrupt_grace_ms > 0 ? r->options->interrupt_grace_ms
                                                                : 3000;
          kill (-r->child, SIGINT);
          r->kill_deadline_ns = now + grace_ms * 1000000;
        }
      else
        kill (-r->child, SIGKILL);
    }
}

/* The target's end (waitpid), the grace period's, and a collector that
 * failed (the target is then killed: there is no point in running it). */
static void
watch_target (Recording *r, int64_t now)
{
  if (!r->child_done)
    {
      pid_t w = waitpid (r->child, &r->wait_status, WNOHANG);
      if (w == r->child || (w < 0 && errno == ECHILD))
        {
          r->child_done = TRUE;
          r->child_end_ns = now_ns ();
        }
    }
  if (!r->child_done && r->kill_deadline_ns && now > r->kill_deadline_ns)
    {
      kill (-r->child, SIGKILL);
      r->kill_deadline_ns = 0;
    }
  if (!r->killed_for_error && cowscope_collector_has_failed (r->peers_context.collector))
    {
      r->killed_for_error = TRUE;
      if (!r->child_done)
        kill (-r->child, SIGKILL);
    }
}

/* Hands @totals to the caller's progress callback. */
static void
report_progress (Recording *r, const CowscopeCollectorTotals *totals)
{
  CowscopeRecordProgress p = {
    .elapsed_ns = now_ns () - r->start_ns,
    .target_pid = r->child,
    .processes = g_hash_table_size (r->peers_context.seen_pids),
    .rings = totals->rings,
    .produced = totals->events_produced,
    .stored = totals->events_stored,
    .dropped = totals->events_dropped,
    .records_produced = totals->produced,
    .records_stored = totals->stored,
    .records_dropped = totals->dropped,
  };
  r->options->progress (&p, r->options->progress_data);
}

static void
maybe_report_progress (Recording *r, int64_t now)
{
  if (!r->options->progress || now < r->next_progress_ns)
    return;
  int64_t interval_ms = r->options->progress_interval_ms > 0 ? r->options->progress_interval_ms
                                                            : 100;
  CowscopeCollectorTotals live;
  cowscope_collector_get_live_totals (r->peers_context.collector, &live);
  report_progress (r, &live);
  r->next_progress_ns = now + interval_ms * 1000000;
}

/* Over once the target ended and its children hung up (or had their
 * grace period), or at once after a write error. */
static gboolean
recording_over (Recording *r)
{
  if (!r->child_done)
    return FALSE;
  int64_t grace = r->result->interrupted ? CHILDREN_GRACE_NS / 4 : CHILDREN_GRACE_NS;
  return r->peers->len == 0 || r->killed_for_error || now_ns () - r->child_end_ns > grace;
}

static void
run_loop (Recording *r)
{
  r->start_ns = r->next_progress_ns = now_ns ();
  for (;;)
    {
      wait_for_activity (r);
      int64_t now = now_ns ();
      handle_signals (r, now);
      accept_peers (r);
      service_peers (r);
      watch_target (r, now);
      maybe_report_progress (r, now);
      if (recording_over (r))
        break;
    }
  /* Connections that arrived at the very end, then whoever is left. */
  accept_peers (r);
  service_peers (r);
  while (r->peers->len)
    close_peer (r, r->peers->len - 1, "running");
}

/* ---- Finishing the session ----------------------------------------- */

/* The environment variables a distributed launcher (torchrun, mpirun
 * through its wrappers, Slurm scripts) sets in each rank's environment,
 * and the meta keys they are kept as: with them, the sessions of one
 * run's ranks merge without further flags. */
static const struct {
  const char *variable, *key;
} launcher_variables[] = {
  { "RANK", "rank" },
  { "LOCAL_RANK", "local_rank" },
  { "WORLD_SIZE", "world_size" },
  { "LOCAL_WORLD_SIZE", "local_world_size" },
  { "MASTER_ADDR", "master_addr" },
};

/* The target's value of @variable: the last --env that sets it, else the
 * recorder's own environment, which the target inherits. */
static const char *
target_env (const CowscopeRecordOptions *o, const char *variable)
{
  const char *value = g_getenv (variable);
  gsize length = strlen (variable);

  for (gsize i = 0; o->env != NULL && o->env[i] != NULL; i++)
    if (strncmp (o->env[i], variable, length) == 0 && o->env[i][length] == '=')
      value = o->env[i] + length + 1;
  return value;
}

static gboolean
write_launcher_meta (CowscopeSessionWriter *w, const CowscopeRecordOptions *o, GError **error)
{
  for (gsize i = 0; i < G_N_ELEMENTS (launcher_variables); i++)
    {
      const char *value = target_env (o, launcher_variables[i].variable);
      gint64 number;
      gboolean ok;

      if (value == NULL || *value == '\0')
        continue;
      /* A number as a number, so that SQL compares ranks as numbers. */
      if (g_ascii_string_to_signed (value, 10, 0, G_MAXINT64, &number, NULL))
        ok = cowscope_session_writer_meta_int (w, launcher_variables[i].key, number, error);
      else
        ok = cowscope_session_writer_meta_text (w, launcher_variables[i].key, value, error);
      if (!ok)
        return FALSE;
    }
  return TRUE;
}

static gboolean
write_meta (CowscopeSessionWriter *w, const CowscopeRecordOptions *o, const char *program,
            const CowscopeRecordResult *r, const char *gpu, const char *unwinder,
            GError **error)
{
  g_autofree char *command = g_strjoinv (" ", o->argv);
  return cowscope_session_writer_meta_text (w, "command", command, error)
         && write_launcher_meta (w, o, error)
         && cowscope_session_writer_meta_text (w, "program", program, error)
         && cowscope_session_writer_meta_int (w, "stacks", o->stacks && !o->cuda_only, error)
         && cowscope_session_writer_meta_text (w, "stack_unwinder", unwinder, error)
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
         && cowscope_session_writer_meta_int (w, "peer_faults", (int64_t) r->totals.peer_faults,
                                              error)
         && cowscope_session_writer_meta_text (w, "block_stopped_waiting",
                                               r->block_stopped_waiting, error)
         && cowscope_session_writer_commit (w, error);
}

/* What the session says about the call stacks' unwinder: NULL without
 * stacks, what the target's probe said (STACKS), or "unknown" when no
 * probe said anything. */
static const char *
stack_unwinder (const Recording *r)
{
  const CowscopeRecordOptions *o = r->options;
  if (!o->stacks || o->cuda_only)
    return NULL;
  return r->peers_context.stack_unwinder != NULL ? r->peers_context.stack_unwinder : "unknown";
}

/* What the session says about GPU tracing. */
static const char *
gpu_tracing (const Recording *r)
{
  const CowscopeRecordOptions *o = r->options;
  if (!o->cuda && !o->cuda_only)
    return "off";
  if (r->peers_context.gpu_status != NULL)
    return r->peers_context.gpu_status;
  if (o->cuda_only)
    /* The CUDA driver loads the probe from CUDA_INJECTION64_PATH when
     * the program initialises CUDA: nothing connected, so it never did. */
    return "unavailable: the CUDA driver never loaded the probe (no CUDA driver "
           "on this machine, or the program made no CUDA call)";
  return "unknown";
}

/* How the target ended, into the result and its process row (the
 * target's row from the recorder itself when its probe never said
 * HELLO). */
static void
record_target_end (Recording *r)
{
  CowscopeRecordResult *result = r->result;
  CowscopeCollector *collector = r->peers_context.collector;
  const char *end = cowscope_target_describe_status (r->wait_status, &result->exit_status,
                                                     &result->exit_signal);
  result->target_end = g_strdup (end);
  result->processes = g_hash_table_size (r->peers_context.seen_pids);
  if (!g_hash_table_contains (r->peers_context.seen_pids, GINT_TO_POINTER (r->child)))
    {
      g_autofree char *cmdline = g_strjoinv (" ", r->options->argv);
      CowscopeProcessIdentity id = {
        .pid = (uint32_t) r->child,
        .ppid = (uint32_t) getpid (),
        .exe = r->program,
        .cmdline = cmdline,
        .identity = "spawned",
      };
      /* It never said HELLO: it started when the recorder started it. */
      cowscope_collector_add_process (collector, &id, r->spawn_ns);
      result->processes++;
    }
  cowscope_collector_process_end (collector, (uint32_t) r->child, r->child_end_ns, end,
                                  result->exit_status, result->exit_signal);
}

/* Why BLOCK-mode threads stopped waiting, if any did. */
static char *
describe_stopped_waiting (const CowscopeCollectorTotals *t)
{
  if (t->stopped_hung_up && t->stopped_detached)
    return g_strdup ("recorder hung up, recorder detached");
  if (t->stopped_hung_up)
    return g_strdup ("recorder hung up");
  if (t->stopped_detached)
    return g_strdup ("recorder detached");
  return NULL;
}

/* Drains and writes everything, then meta, then finalization. */
static gboolean
finish_session (Recording *r, GError **error)
{
  const CowscopeRecordOptions *o = r->options;
  CowscopeRecordResult *result = r->result;
  CowscopeCollector *collector = r->peers_context.collector;

  record_target_end (r);
  if (!cowscope_collector_finish (collector, &result->totals, error))
    return FALSE;
  result->block_stopped_waiting = describe_stopped_waiting (&result->totals);
  /* The last report carries the final totals, however short the run. */
  if (o->progress)
    report_progress (r, &result->totals);

  /* Live readers of the session (the app) let go before finalizing. */
  if (o->finalizing)
    o->finalizing (result->session_path, o->finalizing_data);

  CowscopeSessionWriter *w = cowscope_collector_get_writer (collector);
  return write_meta (w, o, r->program, result, gpu_tracing (r), stack_unwinder (r), error)
         && cowscope_session_finalize (cowscope_session_writer_get_db (w), result->session_path,
                                       error);
}

/* Frees what the recording holds; with @discard the session file goes
 * too (nothing worth keeping was recorded). */
static void
clean_up (Recording *r, gboolean discard)
{
  CowscopeCollector *collector = r->peers_context.collector;
  if (discard && collector)
    {
      /* The collector holds the writer: take it back to discard it. */
      cowscope_collector_finish (collector, NULL, NULL);
      r->writer = cowscope_collector_steal_writer (collector);
    }
  if (discard)
    cowscope_session_writer_discard (r->writer);
  else
    cowscope_session_writer_close (r->writer);
  r->writer = NULL;
  if (collector)
    cowscope_collector_free (collector);
  if (r->peers)
    {
      while (r->peers->len)
        close_peer (r, r->peers->len - 1, "running");
      g_ptr_array_unref (r->peers);
    }
  if (r->peers_context.seen_pids)
    g_hash_table_unref (r->peers_context.seen_pids);
  g_free (r->peers_context.gpu_status);
  g_free (r->peers_context.stack_unwinder);
  if (r->listen_fd >= 0)
    close (r->listen_fd);
  cowscope_socket_dir_remove (r->socket_dir);
  restore_signal_handlers (r);
  if (r->file_limit_raised)
    setrlimit (RLIMIT_NOFILE, &r->old_file_limit);
  g_free (r->program);
  g_free (r->probe);
  g_free (r->socket_dir);
  g_free (r->socket_path);
}

gboolean
cowscope_record (const CowscopeRecordOptions *o, CowscopeRecordResult *result, GError **error)
{
  Recording r = { .options = o, .result = result, .listen_fd = -1, .child = -1 };

  memset (result, 0, sizeof *result);
  result->exit_status = result->exit_signal = -1;
  result->target_pid = -1;
  if (!check_options (o, error))
    return FALSE;

  if (!prepare (&r, error) || !install_signal_handlers (&r, error) || !start_target (&r, error))
    {
      clean_up (&r, TRUE);
      return FALSE;
    }
  run_loop (&r);
  gboolean ok = finish_session (&r, error);
  clean_up (&r, FALSE);
  return ok;
}
