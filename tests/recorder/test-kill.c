/* test-kill.c — what the recorder guarantees when a process dies under it.
 *
 * /kill/target: the target is SIGKILLed at random points while the demo
 * scenarios are recorded (BLOCK mode).  Every event it had written is in
 * the session (its rings say how many it wrote; nothing was dropped and
 * every one of them is in `events`), produced = stored + dropped exactly
 * for records and events, and the session passes integrity_check and
 * `cowscope-cli report`.
 *
 * /kill/recorder: the recorder is SIGKILLed at random points of such a
 * recording.  The file is a readable SQLite database, `cowscope-cli
 * finalize` makes it a sound session (integrity_check, report,
 * produced = stored + dropped), the target runs to its end, and nothing
 * is left in the temporary directory or /dev/shm.
 *
 * The points are random (GLib's test seed, printed, reproduces a run):
 * a delay drawn in [0, how long the scenario's target lives under the
 * recorder], measured once at the start, after the target appeared.  A kill that lands after the process ended does not
 * count; each test goes on until COWSCOPE_KILL_POINTS target kills
 * (default 5) and COWSCOPE_RECORDER_KILL_POINTS recorder kills (default
 * 3) landed: the quick subset of the normal suite; the `kill-points`
 * benchmark runs 100 and 30.
 */
#include <errno.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <poll.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cowscope-format-sqlite.h"

static const char *cli;
static const char *demo;
static guint target_points, recorder_points;

/* Scenarios and the steps that make them run long enough to be hit. */
static const struct {
  const char *name;
  const char *steps;
} scenarios[] = {
  { "training", "100" },
  { "concurrent", "4" },
  { "simulate", "8" },
  { "foreign", "8" },
  { "ipc", "8" },
};

#define N_SCENARIOS G_N_ELEMENTS (scenarios)
/* Only a hang takes this long. */
#define HANG_S 120

static int64_t duration_us[N_SCENARIOS];

typedef struct {
  GPid pid;
  int err_fd;
  GString *err;
  int status;
} Spawned;

static void
spawn (Spawned *s, char **env, const char *const *argv)
{
  GError *error = NULL;
  memset (s, 0, sizeof *s);
  g_spawn_async_with_pipes (NULL, (char **) argv, env,
                            G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL,
                            &s->pid, NULL, NULL, &s->err_fd, &error);
  g_assert_no_error (error);
  s->err = g_string_new (NULL);
}

/* Reads stderr to its end (every process holding it, the target too,
 * has ended) and reaps the spawned process. */
static void
spawn_wait (Spawned *s)
{
  for (;;)
    {
      struct pollfd p = { s->err_fd, POLLIN, 0 };
      if (poll (&p, 1, HANG_S * 1000) <= 0)
        g_error ("a recording hangs; stderr so far:\n%s", s->err->str);
      char buf[4096];
      ssize_t n = read (s->err_fd, buf, sizeof buf);
      if (n <= 0)
        break;
      g_string_append_len (s->err, buf, n);
    }
  close (s->err_fd);
  g_assert_cmpint (waitpid (s->pid, &s->status, 0), ==, s->pid);
}

static void
spawn_clear (Spawned *s)
{
  g_string_free (s->err, TRUE);
}

/* Runs cowscope-cli @args to completion; returns its exit status. */
static int
run_cli (const char *const *args, char **out)
{
  GPtrArray *argv = g_ptr_array_new ();
  g_ptr_array_add (argv, (char *) cli);
  for (const char *const *a = args; *a; a++)
    g_ptr_array_add (argv, (char *) *a);
  g_ptr_array_add (argv, NULL);
  int status = 0;
  g_autofree char *err = NULL;
  g_autofree char *ignored = NULL;
  GError *error = NULL;
  g_spawn_sync (NULL, (char **) argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL,
                out != NULL ? out : &ignored, &err, &status, &error);
  g_assert_no_error (error);
  g_ptr_array_unref (argv);
  if (!WIFEXITED (status) || WEXITSTATUS (status) != 0)
    g_test_message ("cowscope-cli %s: %s", args[0], err);
  return WIFEXITED (status) ? WEXITSTATUS (status) : 128 + WTERMSIG (status);
}

/* The first child of @parent, or 0 when it has none (yet): from the
 * kernel's list of the parent's children, else by scanning /proc. */
static pid_t
child_of (pid_t parent)
{
  g_autofree char *list_path = g_strdup_printf ("/proc/%d/task/%d/children", (int) parent,
                                                (int) parent);
  g_autofree char *list = NULL;
  if (g_file_get_contents (list_path, &list, NULL, NULL))
    return (pid_t) atoi (list);
  GDir *d = g_dir_open ("/proc", 0, NULL);
  const char *name;
  pid_t found = 0;
  while (d && !found && (name = g_dir_read_name (d)))
    {
      char *end;
      long pid = strtol (name, &end, 10);
      if (*end != '\0' || pid <= 0)
        continue;
      g_autofree char *path = g_strdup_printf ("/proc/%ld/stat", pid);
      g_autofree char *text = NULL;
      const char *paren;
      int ppid = 0;
      char state;
      if (g_file_get_contents (path, &text, NULL, NULL) && (paren = strrchr (text, ')'))
          && sscanf (paren + 1, " %c %d", &state, &ppid) == 2 && ppid == parent)
        found = (pid_t) pid;
    }
  if (d)
    g_dir_close (d);
  return found;
}

static int64_t
qint (sqlite3 *db, const char *sql)
{
  sqlite3_stmt *s = NULL;
  int64_t v = -1;
  if (sqlite3_prepare_v2 (db, sql, -1, &s, NULL) != SQLITE_OK)
    g_error ("%s: %s", sql, sqlite3_errmsg (db));
  if (sqlite3_step (s) == SQLITE_ROW)
    v = sqlite3_column_int64 (s, 0);
  sqlite3_finalize (s);
  return v;
}

static char *
qtext (sqlite3 *db, const char *sql)
{
  sqlite3_stmt *s = NULL;
  char *v = NULL;
  if (sqlite3_prepare_v2 (db, sql, -1, &s, NULL) != SQLITE_OK)
    g_error ("%s: %s", sql, sqlite3_errmsg (db));
  if (sqlite3_step (s) == SQLITE_ROW && sqlite3_column_type (s, 0) != SQLITE_NULL)
    v = g_strdup ((const char *) sqlite3_column_text (s, 0));
  sqlite3_finalize (s);
  return v;
}

/* A finalized session that is sound: intact, every book balanced, and
 * `report` reads it. */
static void
assert_sound (const char *path)
{
  sqlite3 *db = NULL;
  g_assert_cmpint (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  g_autofree char *check = qtext (db, "PRAGMA integrity_check");
  g_assert_cmpstr (check, ==, "ok");
  g_assert_cmpint (qint (db, "SELECT value FROM meta WHERE key = 'finalized'"), ==, 1);
  g_assert_cmpint (qint (db, "SELECT count(*) FROM threads WHERE produced != stored + dropped"),
                   ==, 0);
  g_assert_cmpint (qint (db, "SELECT count(*) FROM thread_events WHERE produced != stored + dropped"),
                   ==, 0);
  g_assert_cmpint (qint (db, "SELECT value FROM meta WHERE key = 'produced'"), ==,
                   qint (db, "SELECT (SELECT value FROM meta WHERE key = 'stored')"
                             " + (SELECT value FROM meta WHERE key = 'dropped')"));
  g_assert_cmpint (qint (db, "SELECT value FROM meta WHERE key = 'events_stored'"), ==,
                   qint (db, "SELECT count(*) FROM events"));
  sqlite3_close (db);
  const char *report[] = { "report", path, NULL };
  g_assert_cmpint (run_cli (report, NULL), ==, 0);
}

static char **
demo_argv (guint scenario, const char *out)
{
  char **argv = g_new0 (char *, 12);
  int i = 0;
  argv[i++] = g_strdup (cli);
  argv[i++] = g_strdup ("record");
  argv[i++] = g_strdup ("--block");
  argv[i++] = g_strdup ("-o");
  argv[i++] = g_strdup (out);
  argv[i++] = g_strdup ("--");
  argv[i++] = g_strdup (demo);
  argv[i++] = g_strdup ("--quiet");
  argv[i++] = g_strdup ("--steps");
  argv[i++] = g_strdup (scenarios[scenario].steps);
  argv[i++] = g_strdup (scenarios[scenario].name);
  return argv;
}

/* Whether process @pid has ended (gone, or a zombie not yet reaped). */
static gboolean
has_ended (pid_t pid)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/stat", (int) pid);
  g_autofree char *text = NULL;
  const char *paren;
  char state = 'Z';
  if (g_file_get_contents (path, &text, NULL, NULL) && (paren = strrchr (text, ')')))
    sscanf (paren + 1, " %c", &state);
  return state == 'Z' || state == 'X';
}

/* Waits for a child of @recorder to appear and returns it; 0 when the
 * recorder ended first (a target too quick to be seen). */
static pid_t
wait_for_target (pid_t recorder)
{
  for (;;)
    {
      pid_t target = child_of (recorder);
      if (target != 0)
        return target;
      if (has_ended (recorder))
        return 0;
      g_usleep (100);
    }
}

/* How long each scenario's target lives under the recorder here, once,
 * so the kill points spread over its whole life. */
static void
measure_durations (void)
{
  g_autofree char *dir = g_dir_make_tmp ("cowscope-kill-XXXXXX", NULL);
  for (guint i = 0; i < N_SCENARIOS; i++)
    {
      g_autofree char *out = g_build_filename (dir, "measure.cowscope", NULL);
      g_auto (GStrv) argv = demo_argv (i, out);
      Spawned s;
      spawn (&s, NULL, (const char *const *) argv);
      pid_t target = wait_for_target (s.pid);
      int64_t start = g_get_monotonic_time ();
      while (target != 0 && !has_ended (target))
        g_usleep (100);
      duration_us[i] = MAX (g_get_monotonic_time () - start, 1000);
      spawn_wait (&s);
      g_assert_true (WIFEXITED (s.status) && WEXITSTATUS (s.status) == 0);
      spawn_clear (&s);
      g_remove (out);
      g_test_message ("the %s target lives %.1f ms", scenarios[i].name, duration_us[i] / 1000.0);
    }
  g_rmdir (dir);
}

/* Removes @dir's files and @dir. */
static void
rm_dir (const char *dir)
{
  GDir *d = g_dir_open (dir, 0, NULL);
  const char *name;
  while (d && (name = g_dir_read_name (d)))
    {
      g_autofree char *p = g_build_filename (dir, name, NULL);
      g_remove (p);
    }
  if (d)
    g_dir_close (d);
  g_rmdir (dir);
}

/* Whether /dev/shm holds an engine counter file of process @pid. */
static gboolean
shm_files_of (pid_t pid)
{
  g_autofree char *prefix = g_strdup_printf ("cowtensor-ipc-%d-", (int) pid);
  GDir *d = g_dir_open ("/dev/shm", 0, NULL);
  const char *name;
  gboolean found = FALSE;
  while (d && !found && (name = g_dir_read_name (d)))
    found = g_str_has_prefix (name, prefix);
  if (d)
    g_dir_close (d);
  return found;
}

static void
test_kill_target (void)
{
  guint landed = 0, attempts = 0;
  guint per_scenario[N_SCENARIOS] = { 0 };
  while (landed < target_points)
    {
      g_assert_cmpuint (attempts, <, 50 * target_points + 100);
      guint scenario = attempts++ % N_SCENARIOS;
      g_autofree char *dir = g_dir_make_tmp ("cowscope-kill-XXXXXX", NULL);
      g_autofree char *out = g_build_filename (dir, "s.cowscope", NULL);
      g_auto (GStrv) argv = demo_argv (scenario, out);
      Spawned s;
      spawn (&s, NULL, (const char *const *) argv);
      pid_t target = wait_for_target (s.pid);
      g_usleep ((gulong) g_test_rand_int_range (0, (gint32) duration_us[scenario]));
      gboolean sent = target != 0 && kill (target, SIGKILL) == 0;
      spawn_wait (&s);
      g_assert_true (WIFEXITED (s.status));
      g_assert_cmpint (WEXITSTATUS (s.status), ==, 0);

      sqlite3 *db = NULL;
      g_assert_cmpint (sqlite3_open_v2 (out, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
      g_autofree char *end = qtext (db, "SELECT value FROM meta WHERE key = 'target_end'");
      /* BLOCK mode: nothing the target wrote was dropped. */
      g_assert_cmpint (qint (db, "SELECT value FROM meta WHERE key = 'dropped'"), ==, 0);
      g_assert_cmpint (qint (db, "SELECT value FROM meta WHERE key = 'events_produced'"), ==,
                       qint (db, "SELECT count(*) FROM events"));
      sqlite3_close (db);
      assert_sound (out);
      if (sent && g_strcmp0 (end, "killed") == 0)
        {
          landed++;
          per_scenario[scenario]++;
        }
      spawn_clear (&s);
      rm_dir (dir);
    }
  for (guint i = 0; i < N_SCENARIOS; i++)
    g_test_message ("%s: %u kills", scenarios[i].name, per_scenario[i]);
  g_test_message ("%u kills landed in %u attempts", landed, attempts);
}

static void
test_kill_recorder (void)
{
  guint landed = 0, attempts = 0;
  while (landed < recorder_points)
    {
      g_assert_cmpuint (attempts, <, 50 * recorder_points + 100);
      guint scenario = attempts++ % N_SCENARIOS;
      g_autofree char *dir = g_dir_make_tmp ("cowscope-kill-XXXXXX", NULL);
      g_autofree char *tmp = g_build_filename (dir, "tmp", NULL);
      g_assert_cmpint (g_mkdir (tmp, 0700), ==, 0);
      char **env = g_get_environ ();
      env = g_environ_setenv (env, "TMPDIR", tmp, TRUE);
      env = g_environ_setenv (env, "XDG_RUNTIME_DIR", tmp, TRUE);
      g_autofree char *out = g_build_filename (dir, "s.cowscope", NULL);
      g_auto (GStrv) argv = demo_argv (scenario, out);
      Spawned s;
      spawn (&s, env, (const char *const *) argv);
      /* A recording exists once the target runs. */
      pid_t target = wait_for_target (s.pid);
      g_usleep ((gulong) g_test_rand_int_range (0, (gint32) duration_us[scenario]));
      kill (s.pid, SIGKILL);
      spawn_wait (&s);
      gboolean killed = WIFSIGNALED (s.status) && WTERMSIG (s.status) == SIGKILL;

      /* A readable database, whatever the moment. */
      sqlite3 *db = NULL;
      g_assert_cmpint (sqlite3_open_v2 (out, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
      g_autofree char *check = qtext (db, "PRAGMA integrity_check");
      g_assert_cmpstr (check, ==, "ok");
      g_autofree char *format = qtext (db, "SELECT value FROM meta WHERE key = 'format'");
      g_assert_cmpstr (format, ==, "cowscope-session");
      sqlite3_close (db);

      GError *error = NULL;
      int status = 0;
      const char *finalize[] = { cli, "finalize", out, NULL };
      g_spawn_sync (NULL, (char **) finalize, env, G_SPAWN_STDOUT_TO_DEV_NULL
                    | G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, NULL, NULL, &status, &error);
      g_assert_no_error (error);
      g_assert_true (WIFEXITED (status));
      g_assert_cmpint (WEXITSTATUS (status), ==, 0);
      assert_sound (out);

      /* Nothing left behind: the socket directory went with finalize,
       * the target (which ran on to its end) removed its shared memory. */
      g_autofree char *left = NULL;
      GDir *d = g_dir_open (tmp, 0, NULL);
      const char *name = d ? g_dir_read_name (d) : NULL;
      left = g_strdup (name);
      if (d)
        g_dir_close (d);
      if (left != NULL)
        g_error ("left in the temporary directory: %s", left);
      g_assert_true (target == 0 || !shm_files_of (target));
      landed += killed;
      g_strfreev (env);
      spawn_clear (&s);
      rm_dir (tmp);
      rm_dir (dir);
    }
  g_test_message ("%u recorder kills landed in %u attempts", landed, attempts);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  /* Sessions keep their events packed: `events` needs the format's module. */
  cowscope_format_register_everywhere ();
  signal (SIGPIPE, SIG_IGN);
  cli = g_getenv ("COWSCOPE_CLI");
  demo = g_getenv ("COWSCOPE_DEMO");
  const char *points = g_getenv ("COWSCOPE_KILL_POINTS");
  const char *recorder = g_getenv ("COWSCOPE_RECORDER_KILL_POINTS");
  target_points = points != NULL ? (guint) g_ascii_strtoull (points, NULL, 10) : 5;
  recorder_points = recorder != NULL ? (guint) g_ascii_strtoull (recorder, NULL, 10) : 3;
  if (cli == NULL || demo == NULL)
    g_error ("run from meson: COWSCOPE_CLI and COWSCOPE_DEMO are not set");

  measure_durations ();
  g_test_add_func ("/kill/target", test_kill_target);
  g_test_add_func ("/kill/recorder", test_kill_recorder);
  return g_test_run ();
}
