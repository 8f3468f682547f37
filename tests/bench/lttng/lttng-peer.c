/* lttng-peer.c — a private LTTng-UST session daemon and one recording
 * session per burst, for benchmarks that run LTTng beside Cowscope.
 *
 * Every LTTng process is started from here with a deadline, with HOME and
 * LTTNG_HOME in this daemon's own directory, and (as root) as
 * LTTNG_PEER_UID; lttng-peer.h says why.
 */
#include "lttng-peer.h"

#include <errno.h>
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <grp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The shared-memory files liblttng-ust and a per-user daemon create in
 * /dev/shm: the global one (made by the first traced app when no root
 * daemon made it) and the per-user one; "8" is liblttng-ust's ABI major. */
#define GLOBAL_WAIT_SHM "/dev/shm/lttng-ust-wait-8"

struct _LttngPeer {
  LttngPeerOptions options;
  char *dir;         /* everything of this daemon's: home, traces, target */
  char *home;        /* HOME and LTTNG_HOME of every LTTng process */
  char *target;      /* the burst target, where the LTTng uid can run it */
  char *client;      /* the lttng command */
  gboolean drop_uid; /* running as root: LTTng processes run as LTTNG_PEER_UID */
  char **env;        /* the environment of every LTTng process */
  GPid sessiond;     /* the daemon's pid; 0 before it started */
  guint sessions;    /* recording sessions so far (names them) */
  GPtrArray *shm_to_remove; /* /dev/shm files that did not exist before the daemon */
};

void
lttng_peer_options_init (LttngPeerOptions *options)
{
  options->mode = LTTNG_PEER_DISCARD;
  options->subbuf_size = 8 * 1024 * 1024;
  options->n_subbufs = 4;
  options->timeout_s = 120;
  options->tools_dir = NULL;
}

char *
lttng_peer_describe (const LttngPeerOptions *options)
{
  guint64 size = options->subbuf_size;
  g_autofree char *text =
    size % (1024 * 1024) == 0
      ? g_strdup_printf ("%" G_GUINT64_FORMAT " MiB", size >> 20)
    : size % 1024 == 0
      ? g_strdup_printf ("%" G_GUINT64_FORMAT " KiB", size >> 10)
      : g_strdup_printf ("%" G_GUINT64_FORMAT " B", size);
  return g_strdup_printf ("%s mode, %u \xc3\x97 %s sub-buffers per CPU",
                          options->mode == LTTNG_PEER_BLOCKING ? "blocking"
                                                               : "discard",
                          options->n_subbufs, text);
}

/* ---- Running LTTng's processes --------------------------------------- */

/* In the child, before exec: become LTTNG_PEER_UID.  Only
 * async-signal-safe calls. */
static void
become_peer_uid (gpointer user_data)
{
  (void) user_data;
  static const char message[] =
    "lttng-peer: cannot switch to the unprivileged uid\n";
  if (setgroups (0, NULL) != 0 || setgid (LTTNG_PEER_UID) != 0 ||
      setuid (LTTNG_PEER_UID) != 0)
    {
      ssize_t ignored = write (2, message, sizeof message - 1);
      (void) ignored;
      _exit (127);
    }
}

typedef struct {
  gboolean done;
  char *out;
  char *err;
  GError *error;
} Communication;

static gboolean
keep_ticking (gpointer user_data)
{
  (void) user_data;
  return G_SOURCE_CONTINUE;
}

static void
communicated (GObject *source, GAsyncResult *result, gpointer user_data)
{
  Communication *c = user_data;
  g_subprocess_communicate_utf8_finish (G_SUBPROCESS (source), result, &c->out,
                                        &c->err, &c->error);
  c->done = TRUE;
}

/* Runs @argv (with @extra_env on top of the peer's environment) to its
 * end or the peer's deadline, and returns its stdout; NULL with a
 * message naming the command, and its stderr, when it could not start,
 * timed out or exited non-zero. */
static char *
run_command (LttngPeer *peer, const char *const *argv,
             const char *const *extra_env, GError **error)
{
  g_autoptr (GSubprocessLauncher) launcher = g_subprocess_launcher_new (
    G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_subprocess_launcher_set_environ (launcher, peer->env);
  for (const char *const *kv = extra_env; kv && *kv; kv++)
    {
      g_auto (GStrv) pair = g_strsplit (*kv, "=", 2);
      g_subprocess_launcher_setenv (launcher, pair[0], pair[1] ? pair[1] : "",
                                    TRUE);
    }
  if (peer->drop_uid)
    g_subprocess_launcher_set_child_setup (launcher, become_peer_uid, NULL, NULL);
  g_subprocess_launcher_set_cwd (launcher, peer->dir);

  g_autoptr (GSubprocess) child =
    g_subprocess_launcher_spawnv (launcher, argv, error);
  if (child == NULL)
    return NULL;

  g_autoptr (GMainContext) context = g_main_context_new ();
  g_main_context_push_thread_default (context);
  g_autoptr (GCancellable) cancellable = g_cancellable_new ();
  Communication c = { 0 };
  g_subprocess_communicate_utf8_async (child, NULL, cancellable, communicated,
                                       &c);
  gint64 deadline =
    g_get_monotonic_time () + (gint64) peer->options.timeout_s * G_USEC_PER_SEC;
  gboolean timed_out = FALSE;
  /* Wakes the loop at least every 100 ms to look at the deadline. */
  GSource *tick = g_timeout_source_new (100);
  g_source_set_callback (tick, keep_ticking, NULL, NULL);
  g_source_attach (tick, context);
  while (!c.done)
    {
      if (!timed_out && g_get_monotonic_time () > deadline)
        {
          timed_out = TRUE;
          g_subprocess_force_exit (child);
          g_cancellable_cancel (cancellable);
        }
      g_main_context_iteration (context, TRUE);
    }
  g_source_destroy (tick);
  g_source_unref (tick);
  /* Communication ends with the pipes; the exit status may come after. */
  g_subprocess_wait (child, NULL, NULL);
  g_main_context_pop_thread_default (context);

  g_autofree char *out = c.out;
  g_autofree char *err = c.err;
  g_autoptr (GError) comm_error = c.error;
  g_autofree char *command = g_strjoinv (" ", (char **) argv);
  if (timed_out)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_TIMED_OUT,
                   "`%s` did not end within %u s", command,
                   peer->options.timeout_s);
      return NULL;
    }
  if (comm_error != NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "`%s`: %s", command,
                   comm_error->message);
      return NULL;
    }
  if (!g_subprocess_get_if_exited (child) ||
      g_subprocess_get_exit_status (child) != 0)
    {
      g_strstrip (err ? err : (err = g_strdup ("")));
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "`%s` failed%s%s",
                   command, *err ? ": " : "", err);
      return NULL;
    }
  return g_steal_pointer (&out);
}

/* ---- CPU time of the daemons ------------------------------------------ */

typedef struct {
  GPid pid, ppid;
  char comm[32];
  char state;
  gint64 ticks; /* utime + stime */
} ProcStat;

/* Reads /proc/@pid/stat; FALSE when the process is gone. */
static gboolean
read_proc_stat (GPid pid, ProcStat *ps)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/stat", (int) pid);
  g_autofree char *text = NULL;
  if (!g_file_get_contents (path, &text, NULL, NULL))
    return FALSE;
  /* comm may hold spaces and parentheses: it ends at the last ')'. */
  char *open = strchr (text, '('), *close = strrchr (text, ')');
  if (open == NULL || close == NULL || close < open)
    return FALSE;
  g_strlcpy (ps->comm, open + 1, MIN (sizeof ps->comm, (gsize) (close - open)));
  ps->pid = pid;
  /* After ") ": state ppid pgrp session tty_nr tpgid flags minflt
   * cminflt majflt cmajflt utime stime (fields 3 to 15 of proc(5)). */
  long long ppid = 0;
  unsigned long long utime = 0, stime = 0;
  if (sscanf (close + 2, "%c %lld %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
              &ps->state, &ppid, &utime, &stime) != 4)
    return FALSE;
  ps->ppid = (GPid) ppid;
  ps->ticks = (gint64) (utime + stime);
  return TRUE;
}

/* Every process whose parent is @parent. */
static GArray *
children_of (GPid parent)
{
  GArray *found = g_array_new (FALSE, FALSE, sizeof (ProcStat));
  g_autoptr (GDir) proc = g_dir_open ("/proc", 0, NULL);
  const char *name;
  while (proc && (name = g_dir_read_name (proc)) != NULL)
    {
      char *end = NULL;
      gint64 pid = g_ascii_strtoll (name, &end, 10);
      ProcStat ps;
      if (*end == '\0' && pid > 0 && read_proc_stat ((GPid) pid, &ps) &&
          ps.ppid == parent)
        g_array_append_val (found, ps);
    }
  return found;
}

/* The daemons' CPU time at one instant, per group (the session daemon
 * with its run-as helper; the consumer daemons with theirs): in clock
 * ticks from /proc/PID/stat, which count exited threads too, and per
 * live thread in ns from /proc/PID/task/TID/schedstat, which is exact. */
enum { SESSIOND_GROUP, CONSUMER_GROUP, N_GROUPS };

typedef struct {
  gint64 ticks[N_GROUPS];
  GHashTable *thread_ns[N_GROUPS]; /* tid -> ns on a CPU */
} CpuSnapshot;

static void
snapshot_process (CpuSnapshot *snap, int group, const ProcStat *ps)
{
  snap->ticks[group] += ps->ticks;
  g_autofree char *task_dir = g_strdup_printf ("/proc/%d/task", (int) ps->pid);
  g_autoptr (GDir) dir = g_dir_open (task_dir, 0, NULL);
  const char *tid;
  while (dir && (tid = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *path = g_build_filename (task_dir, tid, "schedstat", NULL);
      g_autofree char *text = NULL;
      if (g_file_get_contents (path, &text, NULL, NULL))
        g_hash_table_insert (
          snap->thread_ns[group],
          GINT_TO_POINTER ((int) g_ascii_strtoll (tid, NULL, 10)),
          g_memdup2 (&(gint64){ g_ascii_strtoll (text, NULL, 10) },
                     sizeof (gint64)));
    }
}

static void
cpu_snapshot (LttngPeer *peer, CpuSnapshot *snap)
{
  memset (snap, 0, sizeof *snap);
  for (int g = 0; g < N_GROUPS; g++)
    snap->thread_ns[g] = g_hash_table_new_full (NULL, NULL, NULL, g_free);
  ProcStat self;
  if (read_proc_stat (peer->sessiond, &self))
    snapshot_process (snap, SESSIOND_GROUP, &self);
  g_autoptr (GArray) children = children_of (peer->sessiond);
  for (guint i = 0; i < children->len; i++)
    {
      ProcStat *child = &g_array_index (children, ProcStat, i);
      if (strcmp (child->comm, "lttng-consumerd") != 0)
        {
          snapshot_process (snap, SESSIOND_GROUP, child);
          continue;
        }
      snapshot_process (snap, CONSUMER_GROUP, child);
      g_autoptr (GArray) helpers = children_of (child->pid);
      for (guint k = 0; k < helpers->len; k++)
        snapshot_process (snap, CONSUMER_GROUP,
                          &g_array_index (helpers, ProcStat, k));
    }
}

static void
cpu_snapshot_clear (CpuSnapshot *snap)
{
  for (int g = 0; g < N_GROUPS; g++)
    g_clear_pointer (&snap->thread_ns[g], g_hash_table_unref);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (CpuSnapshot, cpu_snapshot_clear)

static gint64
ticks_to_ns (gint64 ticks)
{
  long hz = sysconf (_SC_CLK_TCK);
  return ticks * (G_GINT64_CONSTANT (1000000000) / (hz > 0 ? hz : 100));
}

/* @group's CPU time from @before to @after: the threads' exact times
 * when they account for it all (to within two ticks), else the ticks
 * (a thread that ended in between took its exact time with it). */
static gint64
cpu_between (const CpuSnapshot *before, const CpuSnapshot *after, int group)
{
  gint64 by_ticks = ticks_to_ns (after->ticks[group] - before->ticks[group]);
  gint64 by_threads = 0;
  GHashTableIter iter;
  gpointer tid, ns;
  g_hash_table_iter_init (&iter, after->thread_ns[group]);
  while (g_hash_table_iter_next (&iter, &tid, &ns))
    {
      const gint64 *was = g_hash_table_lookup (before->thread_ns[group], tid);
      by_threads += *(const gint64 *) ns - (was ? *was : 0);
    }
  gboolean threads_agree = g_hash_table_size (after->thread_ns[group]) > 0 &&
                           ABS (by_threads - by_ticks) <= ticks_to_ns (2);
  return threads_agree ? by_threads : by_ticks;
}

/* ---- Files ---------------------------------------------------------- */

/* Adds the apparent size of every regular file under @path to @bytes
 * and, with @remove, deletes the tree.  Symbolic links are not followed. */
static void
walk_tree (const char *path, gboolean remove, guint64 *bytes)
{
  GStatBuf st;
  if (g_lstat (path, &st) != 0)
    return;
  if (S_ISDIR (st.st_mode))
    {
      g_autoptr (GDir) dir = g_dir_open (path, 0, NULL);
      const char *name;
      while (dir && (name = g_dir_read_name (dir)) != NULL)
        {
          g_autofree char *child = g_build_filename (path, name, NULL);
          walk_tree (child, remove, bytes);
        }
      if (remove)
        g_rmdir (path);
      return;
    }
  if (S_ISREG (st.st_mode) && bytes)
    *bytes += (guint64) st.st_size;
  if (remove)
    g_unlink (path);
}

/* Copies the target where LTTNG_PEER_UID can run it (the build tree may
 * be closed to it) and hands it over. */
static gboolean
install_target (LttngPeer *peer, const char *source, GError **error)
{
  g_autofree char *bytes = NULL;
  gsize length;
  peer->target = g_build_filename (peer->dir, "burst-target-lttng", NULL);
  if (!g_file_get_contents (source, &bytes, &length, error) ||
      !g_file_set_contents_full (peer->target, bytes, (gssize) length,
                                 G_FILE_SET_CONTENTS_NONE, 0755, error))
    return FALSE;
  if (peer->drop_uid && chown (peer->target, LTTNG_PEER_UID, LTTNG_PEER_UID) != 0)
    {
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errno),
                   "chown %s: %s", peer->target, g_strerror (errno));
      return FALSE;
    }
  return TRUE;
}

/* ---- The daemon's life ------------------------------------------------ */

/* The daemon to stop if the benchmark is killed (one peer at a time). */
static volatile GPid daemon_to_kill;

static void
kill_daemon_and_reraise (int signo)
{
  if (daemon_to_kill > 0)
    kill (daemon_to_kill, SIGTERM);
  signal (signo, SIG_DFL);
  raise (signo);
}

static void
guard_signals (GPid pid)
{
  daemon_to_kill = pid;
  static const int signals[] = { SIGINT, SIGTERM, SIGHUP };
  for (guint i = 0; i < G_N_ELEMENTS (signals); i++)
    signal (signals[i], pid > 0 ? kill_daemon_and_reraise : SIG_DFL);
}

/* TRUE while @pid runs (a zombie, reaped by whoever adopted the
 * daemonized process or by nobody, has stopped running). */
static gboolean
is_running (GPid pid)
{
  ProcStat ps;
  return read_proc_stat (pid, &ps) && ps.state != 'Z' && ps.state != 'X';
}

/* Waits up to @timeout_ms for every pid in @pids to stop; TRUE if they did. */
static gboolean
wait_stopped (const GArray *pids, int timeout_ms)
{
  for (int waited = 0;; waited += 20)
    {
      gboolean any = FALSE;
      for (guint i = 0; i < pids->len; i++)
        any = any || is_running (g_array_index (pids, GPid, i));
      if (!any)
        return TRUE;
      if (waited >= timeout_ms)
        return FALSE;
      g_usleep (20000);
    }
}

static void
note_shm (LttngPeer *peer, const char *path)
{
  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    g_ptr_array_add (peer->shm_to_remove, g_strdup (path));
}

/* @name's path in the options' tools_dir or in PATH, or NULL. */
static char *
find_tool (const LttngPeerOptions *options, const char *name)
{
  if (options->tools_dir == NULL)
    return g_find_program_in_path (name);
  char *path = g_build_filename (options->tools_dir, name, NULL);
  if (!g_file_test (path, G_FILE_TEST_IS_EXECUTABLE))
    g_clear_pointer (&path, g_free);
  return path;
}

LttngPeer *
lttng_peer_start (const char *target_path, const LttngPeerOptions *options,
                  char **skip_reason)
{
  *skip_reason = NULL;
  if (target_path == NULL || *target_path == '\0')
    {
      *skip_reason =
        g_strdup ("the LTTng burst target was not built (liblttng-ust-dev was "
                  "not found when the build was set up; "
                  "build-aux/install-deps.sh --bench installs it)");
      return NULL;
    }
  g_autofree char *sessiond = find_tool (options, "lttng-sessiond");
  g_autofree char *client = find_tool (options, "lttng");
  if (sessiond == NULL || client == NULL)
    {
      *skip_reason = g_strdup_printf (
        "lttng-tools is not installed (no lttng-sessiond or lttng"
        " in %s; build-aux/install-deps.sh --bench installs it)",
        options->tools_dir ? options->tools_dir : "PATH");
      return NULL;
    }

  g_autoptr (LttngPeer) peer = g_new0 (LttngPeer, 1);
  peer->options = *options;
  /* The caller's string: the peer keeps the paths found, not it. */
  peer->options.tools_dir = NULL;
  peer->client = g_steal_pointer (&client);
  peer->drop_uid = geteuid () == 0;
  peer->shm_to_remove = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GError) error = NULL;
  peer->dir = g_dir_make_tmp ("cowscope-lttng-XXXXXX", &error);
  if (peer->dir == NULL)
    {
      *skip_reason =
        g_strdup_printf ("no temporary directory: %s", error->message);
      return NULL;
    }
  peer->home = g_build_filename (peer->dir, "home", NULL);
  g_autofree char *no_sessions =
    g_build_filename (peer->dir, "no-sessions", NULL);
  if (g_mkdir (peer->home, 0700) != 0 || g_mkdir (no_sessions, 0700) != 0 ||
      (peer->drop_uid &&
       (chown (peer->dir, LTTNG_PEER_UID, LTTNG_PEER_UID) != 0 ||
        chown (peer->home, LTTNG_PEER_UID, LTTNG_PEER_UID) != 0 ||
        chown (no_sessions, LTTNG_PEER_UID, LTTNG_PEER_UID) != 0)))
    {
      *skip_reason =
        g_strdup_printf ("cannot prepare %s: %s", peer->dir, g_strerror (errno));
      return NULL;
    }
  if (!install_target (peer, target_path, &error))
    {
      *skip_reason =
        g_strdup_printf ("cannot install the burst target: %s", error->message);
      return NULL;
    }

  peer->env = g_get_environ ();
  peer->env = g_environ_setenv (peer->env, "HOME", peer->home, TRUE);
  peer->env = g_environ_setenv (peer->env, "LTTNG_HOME", peer->home, TRUE);
  /* Nothing of the benchmark's own tracing may leak into LTTng's processes. */
  peer->env = g_environ_unsetenv (peer->env, "LD_PRELOAD");

  g_autofree char *uid_shm = g_strdup_printf (
    "%s-%u", GLOBAL_WAIT_SHM, peer->drop_uid ? LTTNG_PEER_UID : getuid ());
  note_shm (peer, GLOBAL_WAIT_SHM);
  note_shm (peer, uid_shm);

  /* --load: none of the auto-loaded sessions of the user or of /etc. */
  g_autofree char *load = g_strconcat ("--load=", no_sessions, NULL);
  const char *const start_argv[] = { sessiond, "--daemonize", "--no-kernel",
                                     load, NULL };
  g_autofree char *ignored = run_command (peer, start_argv, NULL, &error);
  g_autofree char *pid_file =
    g_build_filename (peer->home, ".lttng", "lttng-sessiond.pid", NULL);
  g_autofree char *pid_text = NULL;
  gint64 pid = 0;
  if (ignored != NULL && g_file_get_contents (pid_file, &pid_text, NULL, NULL))
    pid = g_ascii_strtoll (pid_text, NULL, 10);
  if (pid <= 0)
    {
      *skip_reason =
        error
          ? g_strdup_printf ("the session daemon did not start: %s",
                             error->message)
          : g_strdup_printf ("the session daemon left no pid in %s", pid_file);
      return NULL;
    }
  peer->sessiond = (GPid) pid;
  guard_signals (peer->sessiond);
  peer->env =
    g_environ_setenv (peer->env, "LTTNG_UST_REGISTER_TIMEOUT", "-1", TRUE);
  return g_steal_pointer (&peer);
}

void
lttng_peer_free (LttngPeer *peer)
{
  if (peer == NULL)
    return;
  if (peer->sessiond > 0)
    {
      /* The daemon stops its consumer; any that outlive it are ours too. */
      g_autoptr (GArray) pids = g_array_new (FALSE, FALSE, sizeof (GPid));
      g_autoptr (GArray) helpers = children_of (peer->sessiond);
      g_array_append_val (pids, peer->sessiond);
      for (guint i = 0; i < helpers->len; i++)
        {
          ProcStat *h = &g_array_index (helpers, ProcStat, i);
          g_array_append_val (pids, h->pid);
          g_autoptr (GArray) grand = children_of (h->pid);
          for (guint k = 0; k < grand->len; k++)
            g_array_append_val (pids, g_array_index (grand, ProcStat, k).pid);
        }
      kill (peer->sessiond, SIGTERM);
      if (!wait_stopped (pids, 10000))
        {
          for (guint i = 0; i < pids->len; i++)
            if (is_running (g_array_index (pids, GPid, i)))
              kill (g_array_index (pids, GPid, i), SIGKILL);
          wait_stopped (pids, 5000);
        }
      guard_signals (0);
    }
  if (peer->dir)
    walk_tree (peer->dir, TRUE, NULL);
  for (guint i = 0; peer->shm_to_remove && i < peer->shm_to_remove->len; i++)
    g_unlink (g_ptr_array_index (peer->shm_to_remove, i));
  g_clear_pointer (&peer->shm_to_remove, g_ptr_array_unref);
  g_strfreev (peer->env);
  g_free (peer->target);
  g_free (peer->client);
  g_free (peer->home);
  g_free (peer->dir);
  g_free (peer);
}

/* ---- One burst ---------------------------------------------------------- */

gboolean
lttng_peer_parse_discarded (const char *list_output, guint64 *discarded)
{
  static const char key[] = "Discarded events:";
  gboolean found = FALSE;
  *discarded = 0;
  for (const char *p = list_output; p && (p = strstr (p, key)) != NULL;
       p += sizeof key - 1)
    {
      const char *digits = p + sizeof key - 1;
      while (*digits == ' ' || *digits == '\t')
        digits++;
      char *end = NULL;
      if (!g_ascii_isdigit (*digits))
        return FALSE;
      errno = 0;
      guint64 n = g_ascii_strtoull (digits, &end, 10);
      if (errno != 0)
        return FALSE;
      *discarded += n;
      found = TRUE;
    }
  return found;
}

/* `lttng ARGS…` (NULL-terminated) with the peer's environment: its
 * stdout, or NULL and a message. */
static char *
lttng_valist (LttngPeer *peer, GError **error, va_list ap)
{
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  g_ptr_array_add (argv, peer->client);
  for (const char *arg; (arg = va_arg (ap, const char *)) != NULL;)
    g_ptr_array_add (argv, (char *) arg);
  g_ptr_array_add (argv, NULL);
  return run_command (peer, (const char *const *) argv->pdata, NULL, error);
}

static char *
lttng_output (LttngPeer *peer, GError **error, ...)
{
  va_list ap;
  va_start (ap, error);
  char *out = lttng_valist (peer, error, ap);
  va_end (ap);
  return out;
}

/* Like lttng_output(), for a command whose output does not matter. */
static gboolean
lttng_do (LttngPeer *peer, GError **error, ...)
{
  va_list ap;
  va_start (ap, error);
  g_autofree char *out = lttng_valist (peer, error, ap);
  va_end (ap);
  return out != NULL;
}

/* The steps between creating and destroying session @name. */
static gboolean
record_burst (LttngPeer *peer, const char *name, guint64 events,
              LttngPeerRun *run, GError **error)
{
  g_autofree char *subbuf_size = g_strdup_printf (
    "--subbuf-size=%" G_GUINT64_FORMAT, peer->options.subbuf_size);
  g_autofree char *n_subbufs =
    g_strdup_printf ("--num-subbuf=%u", peer->options.n_subbufs);
  gboolean blocking = peer->options.mode == LTTNG_PEER_BLOCKING;
  if (!lttng_do (peer, error, "enable-channel", "--userspace", "--session",
                 name, "--discard",
                 blocking ? "--blocking-timeout=inf" : "--blocking-timeout=0",
                 subbuf_size, n_subbufs, "peer", NULL) ||
      !lttng_do (peer, error, "enable-event", "--userspace", "--session", name,
                 "--channel", "peer", "cowscope_peer:*", NULL))
    return FALSE;

  g_auto (CpuSnapshot) before = { 0 };
  g_auto (CpuSnapshot) after = { 0 };
  cpu_snapshot (peer, &before);
  if (!lttng_do (peer, error, "start", name, NULL))
    return FALSE;
  g_autofree char *count = g_strdup_printf ("%" G_GUINT64_FORMAT, events);
  const char *const target_argv[] = { peer->target, count, NULL };
  const char *const target_env[] = { blocking ? "LTTNG_UST_ALLOW_BLOCKING=1"
                                              : NULL,
                                     NULL };
  g_autofree char *out = run_command (peer, target_argv, target_env, error);
  if (out == NULL || !burst_report_parse (out, &run->target, error))
    return FALSE;
  if (!run->target.enabled)
    {
      g_set_error (
        error, G_IO_ERROR,
        G_IO_ERROR_FAILED, "the target's tracepoint was off: it did not register with the session daemon");
      return FALSE;
    }
  /* `lttng stop` returns once the consumer has written every sub-buffer. */
  if (!lttng_do (peer, error, "stop", name, NULL))
    return FALSE;
  run->complete_ns = burst_report_now_ns () - run->target.loop_end_ns;
  g_autofree char *listing = lttng_output (peer, error, "list", name, NULL);
  if (listing == NULL)
    return FALSE;
  if (!lttng_peer_parse_discarded (listing, &run->discarded))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   "`lttng list %s` shows no \"Discarded events\"", name);
      return FALSE;
    }
  run->kept = run->discarded < run->target.events
                ? run->target.events - run->discarded
                : 0;
  if (!lttng_do (peer, error, "destroy", name, NULL))
    return FALSE;
  cpu_snapshot (peer, &after);
  run->sessiond_cpu_ns = cpu_between (&before, &after, SESSIOND_GROUP);
  run->consumer_cpu_ns = cpu_between (&before, &after, CONSUMER_GROUP);
  return TRUE;
}

gboolean
lttng_peer_run (LttngPeer *peer, guint64 events, LttngPeerRun *run, GError **error)
{
  memset (run, 0, sizeof *run);
  g_autofree char *name = g_strdup_printf ("cowscope-peer-%u", ++peer->sessions);
  g_autofree char *output = g_build_filename (peer->dir, "traces", name, NULL);
  g_autofree char *output_arg = g_strconcat ("--output=", output, NULL);
  if (!lttng_do (peer, error, "create", name, output_arg, NULL))
    return FALSE;
  gboolean ok = record_burst (peer, name, events, run, error);
  if (ok)
    walk_tree (output, FALSE, &run->bytes_on_disk);
  else /* Best effort: the session may be gone already. */
    lttng_do (peer, NULL, "destroy", name, NULL);
  walk_tree (output, TRUE, NULL);
  return ok;
}
