/* test-record.c — `cowscope-cli record` and `finalize`, end to end.
 *
 * Drives the built cowscope-cli ($COWSCOPE_CLI) against the demo
 * ($COWSCOPE_DEMO) and crash-target ($COWSCOPE_CRASH_TARGET) with the
 * probe at $COWSCOPE_PROBE_PATH, and checks the sessions' rows with the
 * SQLite C API.  Tests that need the probe are skipped while it is not
 * built. */
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <poll.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cow-trace.h"
#include "cowscope-protocol.h"
#include "cowscope-ring.h"
#include "cowscope-format-sqlite.h"

static const char *cli;
static const char *demo;
static const char *crash_target;
static const char *probe;
static const char *cuda_target; /* NULL when built without the CUDA runtime */

typedef struct {
  int status; /* exit status, or 128 + signal */
  char *out;
  char *err;
} Run;

static void
run_clear (Run *r)
{
  g_free (r->out);
  g_free (r->err);
}

/* Runs cowscope-cli with @args (NULL-terminated) in @cwd. */
static void
run_cli_env (Run *r, const char *cwd, char **extra_env, const char *const *args)
{
  GPtrArray *argv = g_ptr_array_new ();
  g_ptr_array_add (argv, (char *) cli);
  for (const char *const *a = args; *a; a++)
    g_ptr_array_add (argv, (char *) *a);
  g_ptr_array_add (argv, NULL);
  char **env = g_get_environ ();
  for (char **kv = extra_env; kv && *kv; kv++)
    {
      char *eq = strchr (*kv, '=');
      g_autofree char *key = g_strndup (*kv, (gsize) (eq - *kv));
      env = eq[1] ? g_environ_setenv (env, key, eq + 1, TRUE) : g_environ_unsetenv (env, key);
    }
  GError *error = NULL;
  int wait_status = 0;
  memset (r, 0, sizeof *r);
  g_spawn_sync (cwd, (char **) argv->pdata, env, G_SPAWN_DEFAULT, NULL, NULL, &r->out, &r->err,
                &wait_status, &error);
  g_assert_no_error (error);
  if (WIFEXITED (wait_status))
    r->status = WEXITSTATUS (wait_status);
  else
    r->status = 128 + WTERMSIG (wait_status);
  g_ptr_array_unref (argv);
  g_strfreev (env);
}

#define RUN_CLI(r, cwd, ...)                                                                  \
  do                                                                                          \
    {                                                                                         \
      const char *const args_[] = { __VA_ARGS__, NULL };                                      \
      run_cli_env ((r), (cwd), NULL, args_);                                                  \
    }                                                                                         \
  while (0)

static gboolean
need_probe (void)
{
  if (!probe || !g_file_test (probe, G_FILE_TEST_IS_REGULAR))
    {
      g_test_skip ("the probe library is not built");
      return FALSE;
    }
  return TRUE;
}

static sqlite3 *
open_session (const char *path)
{
  sqlite3 *db = NULL;
  g_assert_cmpint (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  return db;
}

static int64_t
qint (sqlite3 *db, const char *fmt, ...) G_GNUC_PRINTF (2, 3);

static int64_t
qint (sqlite3 *db, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  g_autofree char *sql = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  sqlite3_stmt *s;
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
  sqlite3_stmt *s;
  char *v = NULL;
  if (sqlite3_prepare_v2 (db, sql, -1, &s, NULL) != SQLITE_OK)
    g_error ("%s: %s", sql, sqlite3_errmsg (db));
  if (sqlite3_step (s) == SQLITE_ROW && sqlite3_column_type (s, 0) != SQLITE_NULL)
    v = g_strdup ((const char *) sqlite3_column_text (s, 0));
  sqlite3_finalize (s);
  return v;
}

static char *
meta (sqlite3 *db, const char *key)
{
  g_autofree char *sql = g_strdup_printf ("SELECT value FROM meta WHERE key = '%s'", key);
  return qtext (db, sql);
}

/* Every finalized session: intact, finalized, counters consistent. */
static void
assert_session_sound (sqlite3 *db)
{
  g_autofree char *check = qtext (db, "PRAGMA integrity_check");
  g_assert_cmpstr (check, ==, "ok");
  g_autofree char *format = meta (db, "format");
  g_assert_cmpstr (format, ==, "cowscope-session");
  g_assert_cmpint (qint (db, "SELECT value FROM meta WHERE key = 'finalized'"), ==, 1);
  g_assert_cmpint (qint (db, "SELECT count(*) FROM threads WHERE produced != stored + dropped"), ==,
                   0);
  g_assert_cmpint (qint (db, "SELECT value FROM meta WHERE key = 'produced'"), ==,
                   qint (db, "SELECT value FROM meta WHERE key = 'stored'")
                     + qint (db, "SELECT value FROM meta WHERE key = 'dropped'"));
}

static char *
tmp_dir (void)
{
  GError *error = NULL;
  char *dir = g_dir_make_tmp ("cowscope-record-XXXXXX", &error);
  g_assert_no_error (error);
  return dir;
}

static void
rm_rf (const char *dir)
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

static guint
count_files (const char *dir)
{
  GDir *d = g_dir_open (dir, 0, NULL);
  guint n = 0;
  while (d && g_dir_read_name (d))
    n++;
  if (d)
    g_dir_close (d);
  return n;
}

/* ---- Recordings run in the background ----------------------------------- */

/* How long a test waits for something that must happen before it calls
 * the recorder or the target hung.  Generous: only a hang reaches it. */
#define HANG_S 120

typedef struct {
  GPid pid;
  int err_fd;
  GString *err;
  int status;
} Spawned;

typedef struct {
  rlim_t soft, hard; /* 0: unchanged */
} Limits;

/* Child setup: the file limits asked for (async-signal-safe calls only). */
static void
apply_limits (gpointer data)
{
  const Limits *l = data;
  struct rlimit r;
  if (l == NULL || l->soft == 0 || getrlimit (RLIMIT_NOFILE, &r) != 0)
    return;
  r.rlim_cur = l->soft;
  if (l->hard != 0)
    r.rlim_max = l->hard;
  setrlimit (RLIMIT_NOFILE, &r);
}

/* Starts cowscope-cli with @args (NULL-terminated), @env the whole
 * environment (NULL: ours) and @limits; its stderr (and its target's)
 * goes to a pipe read by spawned_wait(). */
static void
spawned_start (Spawned *s, char **env, const Limits *limits, const char *const *args)
{
  GPtrArray *argv = g_ptr_array_new ();
  g_ptr_array_add (argv, (char *) cli);
  for (const char *const *a = args; *a; a++)
    g_ptr_array_add (argv, (char *) *a);
  g_ptr_array_add (argv, NULL);
  GError *error = NULL;
  memset (s, 0, sizeof *s);
  g_spawn_async_with_pipes (NULL, (char **) argv->pdata, env, G_SPAWN_DO_NOT_REAP_CHILD,
                            apply_limits, (gpointer) limits, &s->pid, NULL, NULL, &s->err_fd,
                            &error);
  g_assert_no_error (error);
  s->err = g_string_new (NULL);
  g_ptr_array_unref (argv);
}

/* Reads the stderr pipe to its end, which comes when the recorder and
 * every process that inherited the pipe (the target) have ended, then
 * reaps the recorder.  Fails the test if that takes HANG_S. */
static void
spawned_wait (Spawned *s)
{
  for (;;)
    {
      struct pollfd p = { s->err_fd, POLLIN, 0 };
      if (poll (&p, 1, HANG_S * 1000) <= 0)
        g_error ("the recorder or its target hangs; stderr so far:\n%s", s->err->str);
      char buf[4096];
      ssize_t n = read (s->err_fd, buf, sizeof buf);
      if (n <= 0)
        break;
      g_string_append_len (s->err, buf, n);
    }
  close (s->err_fd);
  g_assert_cmpint (waitpid (s->pid, &s->status, 0), ==, s->pid);
  g_test_message ("recorder stderr:\n%s", s->err->str);
}

static void
spawned_clear (Spawned *s)
{
  if (s->err)
    g_string_free (s->err, TRUE);
}

/* The first child of @parent (waiting for it to appear): from the
 * kernel's list of the parent's children, else by scanning /proc. */
static pid_t
child_of (pid_t parent)
{
  g_autofree char *list_path = g_strdup_printf ("/proc/%d/task/%d/children", (int) parent,
                                                (int) parent);
  for (int i = 0; i < HANG_S * 100; i++)
    {
      g_autofree char *list = NULL;
      if (g_file_get_contents (list_path, &list, NULL, NULL) && atoi (list) > 0)
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
          if (!g_file_get_contents (path, &text, NULL, NULL))
            continue;
          const char *paren = strrchr (text, ')');
          int ppid = 0;
          char state;
          if (paren && sscanf (paren + 1, " %c %d", &state, &ppid) == 2 && ppid == parent)
            found = (pid_t) pid;
        }
      if (d)
        g_dir_close (d);
      if (found)
        return found;
      g_usleep (10 * 1000);
    }
  g_error ("process %d started no child", (int) parent);
}

/* Waits until @session (being recorded) has committed at least one
 * event; a structural point to act at, not a guess of how long start-up
 * takes. */
static void
wait_for_committed_events (const char *session)
{
  for (int i = 0; i < HANG_S * 50; i++)
    {
      sqlite3 *db = NULL;
      int64_t n = 0;
      if (g_file_test (session, G_FILE_TEST_EXISTS)
          && sqlite3_open_v2 (session, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK)
        {
          sqlite3_stmt *st = NULL;
          if (sqlite3_prepare_v2 (db, "SELECT count(*) FROM events", -1, &st, NULL) == SQLITE_OK
              && sqlite3_step (st) == SQLITE_ROW)
            n = sqlite3_column_int64 (st, 0);
          sqlite3_finalize (st);
        }
      sqlite3_close (db);
      if (n > 0)
        return;
      g_usleep (20 * 1000);
    }
  g_error ("no event reached %s", session);
}

/* Whether thread state @state is that of some thread of @pid other than
 * its main thread (from /proc/PID/task/TID/stat). */
static gboolean
some_thread_in_state (pid_t pid, char state)
{
  g_autofree char *dir_path = g_strdup_printf ("/proc/%d/task", (int) pid);
  GDir *d = g_dir_open (dir_path, 0, NULL);
  const char *name;
  gboolean found = FALSE;
  while (d && !found && (name = g_dir_read_name (d)))
    {
      if (atoi (name) == pid)
        continue;
      g_autofree char *path = g_strdup_printf ("%s/%s/stat", dir_path, name);
      g_autofree char *text = NULL;
      const char *paren;
      char st;
      if (g_file_get_contents (path, &text, NULL, NULL) && (paren = strrchr (text, ')'))
          && sscanf (paren + 1, " %c", &st) == 1 && st == state)
        found = TRUE;
    }
  if (d)
    g_dir_close (d);
  return found;
}

/* An environment whose temporary and runtime directories are @dir, so
 * a test sees every socket directory a recording makes. */
static char **
env_with_private_tmp (const char *dir)
{
  char **env = g_get_environ ();
  env = g_environ_setenv (env, "TMPDIR", dir, TRUE);
  env = g_environ_setenv (env, "XDG_RUNTIME_DIR", dir, TRUE);
  return env;
}

/* Names in @dir that start with "cowscope-" and are directories. */
static guint
count_socket_dirs (const char *dir)
{
  GDir *d = g_dir_open (dir, 0, NULL);
  const char *name;
  guint n = 0;
  while (d && (name = g_dir_read_name (d)))
    {
      g_autofree char *path = g_build_filename (dir, name, NULL);
      n += g_str_has_prefix (name, "cowscope-") && g_file_test (path, G_FILE_TEST_IS_DIR);
    }
  if (d)
    g_dir_close (d);
  return n;
}

/* ---- Usage and bad input --------------------------------------------- */

static void
test_help_version (void)
{
  Run r;
  RUN_CLI (&r, NULL, "--help");
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, "record"));
  run_clear (&r);
  RUN_CLI (&r, NULL, "--version");
  g_assert_cmpint (r.status, ==, 0);
  g_assert_true (g_str_has_prefix (r.out, "cowscope-cli "));
  run_clear (&r);
  RUN_CLI (&r, NULL, "record", "--help");
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, "--ring-size"));
  run_clear (&r);
}

static void
test_usage_errors (void)
{
  static const char *const cases[][6] = {
    { "frobnicate", NULL },
    { "record", "--no-such-option", "--", "true", NULL },
    { "record", "true", NULL },                /* missing -- */
    { "record", "--", NULL },                  /* missing program */
    { "record", "--drop", "--block", "--", "true", NULL },
    { "record", "--ring-size", "1000", "--", "true", NULL },
    { "record", "--env", "NOEQUALS", "--", "true", NULL },
    { "finalize", NULL },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      Run r;
      g_autofree char *dir = tmp_dir ();
      run_cli_env (&r, dir, NULL, cases[i]);
      g_test_message ("case %" G_GSIZE_FORMAT ": %s", i, r.err);
      g_assert_cmpint (r.status, ==, 2);
      g_assert_true (g_str_has_prefix (r.err, "cowscope-cli: "));
      g_assert_cmpuint (count_files (dir), ==, 0);
      run_clear (&r);
      rm_rf (dir);
    }
  Run r;
  RUN_CLI (&r, NULL, NULL);
  g_assert_cmpint (r.status, ==, 2);
  run_clear (&r);
}

static void
test_missing_program (void)
{
  if (!need_probe ())
    return;
  g_autofree char *dir = tmp_dir ();
  Run r;
  RUN_CLI (&r, dir, "record", "--", "no-such-program-cowscope");
  g_assert_cmpint (r.status, ==, 1);
  g_assert_cmpstr (r.err, ==,
                   "cowscope-cli: cannot run 'no-such-program-cowscope': No such file or directory\n");
  g_assert_cmpuint (count_files (dir), ==, 0);
  run_clear (&r);

  RUN_CLI (&r, dir, "record", "-o", "x.cowscope", "--", "./missing");
  g_assert_cmpint (r.status, ==, 1);
  g_assert_nonnull (strstr (r.err, "cannot run './missing': No such file or directory"));
  g_assert_cmpuint (count_files (dir), ==, 0);
  run_clear (&r);

  /* A file that is not executable. */
  g_autofree char *script = g_build_filename (dir, "not-executable", NULL);
  g_assert_true (g_file_set_contents (script, "#!/bin/sh\n", -1, NULL));
  g_chmod (script, 0644);
  RUN_CLI (&r, dir, "record", "-o", "x.cowscope", "--", script);
  g_assert_cmpint (r.status, ==, 1);
  g_assert_nonnull (strstr (r.err, "Permission denied"));
  g_assert_false (g_file_test (g_build_filename (dir, "x.cowscope", NULL), G_FILE_TEST_EXISTS));
  run_clear (&r);

  /* A file that is executable but not a program: the kernel refuses it
   * after the session was created, which must then disappear. */
  g_autofree char *junk = g_build_filename (dir, "junk", NULL);
  g_assert_true (g_file_set_contents (junk, "\x01\x02\x03 not an executable", -1, NULL));
  g_chmod (junk, 0755);
  RUN_CLI (&r, dir, "record", "-o", "x.cowscope", "--", junk);
  g_assert_cmpint (r.status, ==, 1);
  g_assert_nonnull (strstr (r.err, "cannot run"));
  g_autofree char *x = g_build_filename (dir, "x.cowscope", NULL);
  g_assert_false (g_file_test (x, G_FILE_TEST_EXISTS));
  run_clear (&r);
  rm_rf (dir);
}

static void
test_existing_output (void)
{
  if (!need_probe ())
    return;
  g_autofree char *dir = tmp_dir ();
  g_autofree char *out = g_build_filename (dir, "s.cowscope", NULL);
  g_assert_true (g_file_set_contents (out, "precious", -1, NULL));
  Run r;
  RUN_CLI (&r, dir, "record", "-o", out, "--", crash_target, "marks", "3");
  g_assert_cmpint (r.status, ==, 1);
  g_assert_nonnull (strstr (r.err, "already exists"));
  g_autofree char *contents = NULL;
  g_assert_true (g_file_get_contents (out, &contents, NULL, NULL));
  g_assert_cmpstr (contents, ==, "precious");
  run_clear (&r);

  RUN_CLI (&r, dir, "record", "--force", "-o", out, "--", crash_target, "marks", "3");
  g_assert_cmpint (r.status, ==, 0);
  sqlite3 *db = open_session (out);
  assert_session_sound (db);
  g_assert_cmpint (qint (db, "SELECT count(*) FROM marks"), ==, 3);
  sqlite3_close (db);
  run_clear (&r);
  rm_rf (dir);
}

/* A read-only directory: as a normal user by its mode; as root (who
 * ignores modes) by a read-only tmpfs, or skipped. */
static void
test_unwritable_directory (void)
{
  if (!need_probe ())
    return;
  g_autofree char *dir = tmp_dir ();
  gboolean mounted = FALSE;
  if (geteuid () == 0)
    {
      if (mount ("tmpfs", dir, "tmpfs", MS_RDONLY, "size=64k") != 0)
        {
          g_test_skip ("running as root and cannot mount a read-only tmpfs");
          rm_rf (dir);
          return;
        }
      mounted = TRUE;
    }
  else
    g_chmod (dir, 0500);
  g_autofree char *out = g_build_filename (dir, "s.cowscope", NULL);
  Run r;
  RUN_CLI (&r, NULL, "record", "-o", out, "--", crash_target, "marks", "3");
  g_test_message ("%s", r.err);
  g_assert_cmpint (r.status, ==, 1);
  g_assert_nonnull (strstr (r.err, out));
  g_assert_true (strstr (r.err, "Read-only file system") || strstr (r.err, "Permission denied"));
  run_clear (&r);
  if (mounted)
    umount (dir);
  g_chmod (dir, 0700);
  rm_rf (dir);
}

/* A full disk: a 512 KiB tmpfs and far more events than fit. */
static void
test_full_disk (void)
{
  if (!need_probe ())
    return;
  g_autofree char *dir = tmp_dir ();
  if (geteuid () != 0 || mount ("tmpfs", dir, "tmpfs", 0, "size=512k") != 0)
    {
      g_test_skip ("cannot mount a small tmpfs (needs root)");
      rm_rf (dir);
      return;
    }
  g_autofree char *out = g_build_filename (dir, "s.cowscope", NULL);
  Run r;
  RUN_CLI (&r, NULL, "record", "--block", "-o", out, "--", crash_target, "marks", "2000000");
  g_test_message ("%s", r.err);
  g_assert_cmpint (r.status, ==, 1);
  g_assert_nonnull (strstr (r.err, out));
  g_assert_nonnull (strstr (r.err, "No space left on device"));
  run_clear (&r);
  umount2 (dir, MNT_DETACH);
  rm_rf (dir);
}

/* ---- Probe location ---------------------------------------------------- */

static void
test_probe_path (void)
{
  if (!need_probe ())
    return;
  g_autofree char *dir = tmp_dir ();
  Run r;
  /* A wrong $COWSCOPE_PROBE_PATH is an error that names it. */
  char *bad_env[] = { "COWSCOPE_PROBE_PATH=/nonexistent/libcowscope-probe.so", NULL };
  const char *const args[] = { "record", "-o", "a.cowscope", "--", crash_target, "marks", "2",
                               NULL };
  run_cli_env (&r, dir, bad_env, args);
  g_assert_cmpint (r.status, ==, 1);
  g_assert_nonnull (strstr (r.err, "/nonexistent/libcowscope-probe.so"));
  g_assert_cmpuint (count_files (dir), ==, 0);
  run_clear (&r);

  /* Without it, the CLI finds the probe in its own build tree. */
  char *no_env[] = { "COWSCOPE_PROBE_PATH=", NULL };
  run_cli_env (&r, dir, no_env, args);
  g_test_message ("%s", r.err);
  g_assert_cmpint (r.status, ==, 0);
  g_autofree char *out = g_build_filename (dir, "a.cowscope", NULL);
  sqlite3 *db = open_session (out);
  g_assert_cmpint (qint (db, "SELECT count(*) FROM marks"), ==, 2);
  sqlite3_close (db);
  run_clear (&r);

  /* The default output name. */
  const char *const args2[] = { "record", "--", crash_target, "marks", "1", NULL };
  run_cli_env (&r, dir, NULL, args2);
  g_assert_cmpint (r.status, ==, 0);
  GDir *d = g_dir_open (dir, 0, NULL);
  const char *name;
  gboolean found = FALSE;
  while ((name = g_dir_read_name (d)))
    if (g_str_has_prefix (name, "cowscope-crash-target-") && g_str_has_suffix (name, ".cowscope"))
      found = TRUE;
  g_dir_close (d);
  g_assert_true (found);
  run_clear (&r);
  rm_rf (dir);
}

/* ---- Crashes ----------------------------------------------------------- */

static void
check_crash (const char *how, const char *marks, const char *end, int signal_or_status)
{
  g_autofree char *dir = tmp_dir ();
  g_autofree char *out = g_build_filename (dir, "s.cowscope", NULL);
  Run r;
  RUN_CLI (&r, NULL, "record", "-o", out, "--", crash_target, "crash", marks, how);
  g_test_message ("%s %s: %s", how, marks, r.err);
  g_assert_cmpint (r.status, ==, 0);
  sqlite3 *db = open_session (out);
  assert_session_sound (db);
  g_assert_cmpint (qint (db, "SELECT count(*) FROM events WHERE type = 19"), ==, atoi (marks));
  g_assert_cmpint (qint (db, "SELECT count(*) FROM marks WHERE name = 'tick'"), ==, atoi (marks));
  g_assert_cmpint (qint (db, "SELECT value FROM meta WHERE key = 'dropped'"), ==, 0);
  g_autofree char *target_end = meta (db, "target_end");
  g_assert_cmpstr (target_end, ==, end);
  if (strcmp (end, "exited") == 0)
    g_assert_cmpint (qint (db, "SELECT value FROM meta WHERE key = 'exit_status'"), ==,
                     signal_or_status);
  else
    g_assert_cmpint (qint (db, "SELECT value FROM meta WHERE key = 'exit_signal'"), ==,
                     signal_or_status);
  g_autofree char *reason = qtext (db, "SELECT end_reason FROM processes"
                                       " WHERE pid = (SELECT value FROM meta WHERE key = 'target_pid')");
  g_assert_cmpstr (reason, ==, end);
  sqlite3_close (db);
  run_clear (&r);
  rm_rf (dir);
}

static void
test_crash (void)
{
  if (!need_probe ())
    return;
  static const char *const counts[] = { "0", "1", "5000" };
  for (gsize i = 0; i < G_N_ELEMENTS (counts); i++)
    {
      check_crash ("kill", counts[i], "killed", SIGKILL);
      check_crash ("abort", counts[i], "crashed", SIGABRT);
      check_crash ("segv", counts[i], "crashed", SIGSEGV);
    }
  check_crash ("exit3", "10", "exited", 3);
}

/* The recorder itself is SIGKILLed mid-run: the file is a readable
 * database with the committed batches, and `finalize` completes it. */
static void
test_recorder_killed (void)
{
  if (!need_probe ())
    return;
  g_autofree char *dir = tmp_dir ();
  g_autofree char *out = g_build_filename (dir, "s.cowscope", NULL);
  const char *args[] = { "record", "-o", out, "--", crash_target, "slow", "600", "1000", NULL };
  Spawned s;
  spawned_start (&s, NULL, NULL, args);
  wait_for_committed_events (out);
  kill (s.pid, SIGKILL);
  /* The orphaned target finishes (its probe must survive the lost
   * socket): the stderr pipe it shares ends when it does. */
  spawned_wait (&s);
  g_assert_true (WIFSIGNALED (s.status));
  spawned_clear (&s);

  sqlite3 *db = open_session (out);
  g_autofree char *check = qtext (db, "PRAGMA integrity_check");
  g_assert_cmpstr (check, ==, "ok");
  int64_t events = qint (db, "SELECT count(*) FROM events");
  g_test_message ("%" G_GINT64_FORMAT " events committed before the recorder died", events);
  g_assert_cmpint (events, >, 0);
  g_assert_cmpint (qint (db, "SELECT value FROM meta WHERE key = 'finalized'"), ==, 0);
  sqlite3_close (db);

  Run r;
  RUN_CLI (&r, NULL, "finalize", out);
  g_assert_cmpint (r.status, ==, 0);
  run_clear (&r);
  db = open_session (out);
  g_assert_cmpint (qint (db, "SELECT value FROM meta WHERE key = 'finalized'"), ==, 1);
  g_assert_cmpint (qint (db, "SELECT value FROM meta WHERE key = 'recorder_killed'"), ==, 1);
  g_assert_cmpint (qint (db, "SELECT count(*) FROM marks"), ==, events);
  sqlite3_close (db);
  rm_rf (dir);
}

/* Ctrl-C on the recorder stops the target and still finalizes. */
static void
test_interrupt (void)
{
  if (!need_probe ())
    return;
  g_autofree char *dir = tmp_dir ();
  g_autofree char *out = g_build_filename (dir, "s.cowscope", NULL);
  const char *args[] = { "record", "-o", out, "--", crash_target, "slow", "100000", "1000", NULL };
  Spawned s;
  spawned_start (&s, NULL, NULL, args);
  wait_for_committed_events (out);
  kill (s.pid, SIGINT);
  spawned_wait (&s);
  g_assert_true (WIFEXITED (s.status));
  g_assert_cmpint (WEXITSTATUS (s.status), ==, 0);
  spawned_clear (&s);
  sqlite3 *db = open_session (out);
  assert_session_sound (db);
  g_assert_cmpint (qint (db, "SELECT value FROM meta WHERE key = 'interrupted'"), ==, 1);
  g_autofree char *end = meta (db, "target_end");
  g_assert_cmpstr (end, ==, "signaled");
  g_assert_cmpint (qint (db, "SELECT value FROM meta WHERE key = 'exit_signal'"), ==, SIGINT);
  g_assert_cmpint (qint (db, "SELECT count(*) FROM marks"), >, 0);
  sqlite3_close (db);
  rm_rf (dir);
}

/* ---- Overflow ------------------------------------------------------------ */

static void
test_overflow_drop (void)
{
  if (!need_probe ())
    return;
  g_autofree char *dir = tmp_dir ();
  g_autofree char *out = g_build_filename (dir, "s.cowscope", NULL);
  Run r;
  RUN_CLI (&r, NULL, "record", "--drop", "--ring-size", "4096", "--no-stacks", "-o", out, "--",
           crash_target, "flood", "200000", "2");
  g_test_message ("%s", r.err);
  g_assert_cmpint (r.status, ==, 0);
  sqlite3 *db = open_session (out);
  assert_session_sound (db);
  int64_t dropped = qint (db, "SELECT value FROM meta WHERE key = 'dropped'");
  g_test_message ("dropped %" G_GINT64_FORMAT " of %" G_GINT64_FORMAT, dropped,
                  qint (db, "SELECT value FROM meta WHERE key = 'produced'"));
  g_assert_cmpint (dropped, >, 0);
  /* Every thread's marks: stored ones are in the database, and the two
   * flood threads produced at least their 200000 marks each. */
  g_assert_cmpint (qint (db, "SELECT count(*) FROM threads WHERE produced >= 200000"), ==, 2);
  g_assert_cmpint (qint (db, "SELECT sum(stored) FROM threads"), >=,
                   qint (db, "SELECT count(*) FROM events"));
  g_assert_cmpint (qint (db, "SELECT count(*) FROM threads t WHERE t.stored <"
                             " (SELECT count(*) FROM events e WHERE e.pid = t.pid AND e.tid = t.tid)"),
                   ==, 0);
  g_assert_cmpint (qint (db, "SELECT ring_capacity FROM threads LIMIT 1"), ==, 4096);
  sqlite3_close (db);
  run_clear (&r);
  rm_rf (dir);
}

static void
test_overflow_block (void)
{
  if (!need_probe ())
    return;
  g_autofree char *dir = tmp_dir ();
  g_autofree char *out = g_build_filename (dir, "s.cowscope", NULL);
  Run r;
  RUN_CLI (&r, NULL, "record", "--block", "--ring-size", "4096", "--no-stacks", "-o", out, "--",
           crash_target, "flood", "100000", "2");
  g_test_message ("%s", r.err);
  g_assert_cmpint (r.status, ==, 0);
  sqlite3 *db = open_session (out);
  assert_session_sound (db);
  g_assert_cmpint (qint (db, "SELECT value FROM meta WHERE key = 'dropped'"), ==, 0);
  g_assert_cmpint (qint (db, "SELECT value FROM meta WHERE key = 'stored'"), ==,
                   qint (db, "SELECT value FROM meta WHERE key = 'produced'"));
  g_assert_cmpint (qint (db, "SELECT count(*) FROM events WHERE type = 19"), ==, 200000);
  g_autofree char *policy = meta (db, "ring_policy");
  g_assert_cmpstr (policy, ==, "block");
  sqlite3_close (db);
  run_clear (&r);
  rm_rf (dir);
}

/* ---- Processes ------------------------------------------------------------ */

static void
test_fork (void)
{
  if (!need_probe ())
    return;
  g_autofree char *dir = tmp_dir ();
  g_autofree char *out = g_build_filename (dir, "s.cowscope", NULL);
  Run r;
  RUN_CLI (&r, NULL, "record", "-o", out, "--", crash_target, "fork", "50");
  g_test_message ("%s", r.err);
  g_assert_cmpint (r.status, ==, 0);
  sqlite3 *db = open_session (out);
  assert_session_sound (db);
  g_assert_cmpint (qint (db, "SELECT count(*) FROM processes"), ==, 2);
  g_assert_cmpint (qint (db, "SELECT count(*) FROM processes c JOIN processes p ON c.ppid = p.pid"),
                   ==, 1);
  g_assert_cmpint (qint (db, "SELECT count(DISTINCT pid) FROM marks"), ==, 2);
  g_assert_cmpint (qint (db, "SELECT count(*) FROM marks"), ==, 100);
  g_assert_cmpint (qint (db, "SELECT count(*) FROM processes WHERE end_reason = 'exited'"), ==, 2);
  sqlite3_close (db);
  run_clear (&r);
  rm_rf (dir);
}

/* ---- The demo's scenarios ----------------------------------------------------- */

typedef struct {
  int64_t lazy, eager, copies, steals, violations, tensors, storages, events;
  double copied, stolen; /* bytes, as printed (rounded) */
} DemoCounts;

static double
parse_bytes (const char *number, const char *unit)
{
  double v = g_ascii_strtod (number, NULL);
  if (strcmp (unit, "KiB") == 0)
    return v * 1024;
  if (strcmp (unit, "MiB") == 0)
    return v * 1024 * 1024;
  if (strcmp (unit, "GiB") == 0)
    return v * 1024 * 1024 * 1024;
  return v;
}

/* Runs the demo without the profiler; parses its own summary. */
static void
demo_counts (const char *scenario, DemoCounts *c)
{
  const char *argv[] = { demo, "--quiet", "--steps", "4", scenario, NULL };
  g_autofree char *out = NULL;
  int status;
  GError *error = NULL;
  g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, &out, NULL,
                &status, &error);
  g_assert_no_error (error);
  memset (c, 0, sizeof *c);
  c->events = -1;
  c->lazy = -1;
  g_auto (GStrv) lines = g_strsplit (out, "\n", -1);
  for (char **l = lines; *l; l++)
    {
      const char *ev = strstr (*l, "trace events ");
      if (ev)
        c->events = g_ascii_strtoll (ev + strlen ("trace events "), NULL, 10);
      g_auto (GStrv) tok = g_strsplit_set (*l, " ", -1);
      GPtrArray *t = g_ptr_array_new ();
      for (char **x = tok; *x; x++)
        if (**x)
          g_ptr_array_add (t, *x);
      /* name lazy eager copies N U steals N U N U viol tensors storages result */
      if (t->len == 15 && strcmp (g_ptr_array_index (t, 0), scenario) == 0)
        {
          char **v = (char **) t->pdata;
          c->lazy = atoll (v[1]);
          c->eager = atoll (v[2]);
          c->copies = atoll (v[3]);
          c->copied = parse_bytes (v[4], v[5]);
          c->steals = atoll (v[6]);
          c->stolen = parse_bytes (v[7], v[8]);
          c->violations = atoll (v[11]);
          c->tensors = atoll (v[12]);
          c->storages = atoll (v[13]);
        }
      g_ptr_array_unref (t);
    }
  g_assert_cmpint (c->lazy, >=, 0);
  g_assert_cmpint (c->events, >, 0);
}

static void
assert_bytes_close (double expected, int64_t actual)
{
  /* The demo prints one decimal: within 5% or 64 bytes. */
  double tolerance = MAX (expected * 0.05, 64);
  g_assert_cmpfloat (ABS ((double) actual - expected), <=, tolerance);
}

static void
test_demo (gconstpointer data)
{
  const char *scenario = data;
  if (!need_probe ())
    return;
  DemoCounts want;
  demo_counts (scenario, &want);

  g_autofree char *dir = tmp_dir ();
  g_autofree char *out = g_build_filename (dir, "s.cowscope", NULL);
  Run r;
  RUN_CLI (&r, NULL, "record", "--block", "-o", out, "--", demo, "--quiet", "--steps", "4",
           scenario);
  g_test_message ("%s", r.err);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.err, "exited with status 0"));
  sqlite3 *db = open_session (out);
  assert_session_sound (db);
  g_assert_cmpint (qint (db, "SELECT value FROM meta WHERE key = 'dropped'"), ==, 0);
  /* Finalized events are in time order, also across the threads of the
   * concurrent scenario (the recorder drains one thread's ring at a time). */
  g_assert_cmpint (qint (db, "SELECT count(*) FROM events a JOIN events b ON b.seq = a.seq + 1"
                             " WHERE b.ts < a.ts"), ==, 0);
  g_autofree char *end = meta (db, "target_end");
  g_assert_cmpstr (end, ==, "exited");
  g_assert_cmpint (qint (db, "SELECT count(*) FROM processes"), ==, 1);

  gboolean racy = strcmp (scenario, "concurrent") == 0;
  g_assert_cmpint (qint (db, "SELECT count(*) FROM storages WHERE source_storage_id IS NOT NULL"),
                   ==, want.lazy);
  g_assert_cmpint (qint (db, "SELECT count(*) FROM lazy_clones WHERE eager_reason IS NOT NULL"), ==,
                   want.eager);
  g_assert_cmpint (qint (db, "SELECT count(*) FROM violations"), ==, want.violations);
  g_assert_cmpint (qint (db, "SELECT count(*) FROM tensors"), ==, want.tensors);
  g_assert_cmpint (qint (db, "SELECT count(*) FROM storages"), ==, want.storages);
  int64_t copies = qint (db, "SELECT count(*) FROM materializations WHERE kind = 1");
  int64_t steals = qint (db, "SELECT count(*) FROM materializations WHERE kind = 2");
  if (racy)
    {
      /* Which thread copies and which steals depends on timing. */
      g_assert_cmpint (copies + steals, ==, want.copies + want.steals);
    }
  else
    {
      g_assert_cmpint (copies, ==, want.copies);
      g_assert_cmpint (steals, ==, want.steals);
      g_assert_cmpint (qint (db, "SELECT count(*) FROM events"), ==, want.events);
      assert_bytes_close (want.copied,
                          qint (db, "SELECT coalesce(sum(nbytes), 0) FROM materializations"
                                    " WHERE kind = 1"));
      assert_bytes_close (want.stolen,
                          qint (db, "SELECT coalesce(sum(nbytes), 0) FROM materializations"
                                    " WHERE kind = 2"));
    }
  /* Every materialization is paired and linked to the lazy clone that
   * made the sharing; stacks were captured and symbolized. */
  g_assert_cmpint (qint (db, "SELECT count(*) FROM materializations WHERE end_ts IS NULL"), ==, 0);
  g_assert_cmpint (qint (db, "SELECT count(*) FROM materializations WHERE lazy_clone_seq IS NULL"),
                   ==, 0);
  if (want.lazy > 0)
    {
      g_assert_cmpint (qint (db, "SELECT count(*) FROM lazy_clones WHERE stack_id IS NULL"), ==, 0);
      /* Each scenario is its own file: the stacks reach its entry point there. */
      g_assert_cmpint (qint (db, "SELECT count(*) FROM frames WHERE function = 'scenario_%s'"
                                 " AND file LIKE '%%/demo-%s.c'", scenario, scenario), >, 0);
    }
  g_autofree char *gpu = meta (db, "gpu_tracing");
  g_assert_nonnull (gpu);
  sqlite3_close (db);
  run_clear (&r);
  rm_rf (dir);
}

/* --cuda-only on an unmodified CUDA program.  Without a CUDA device the
 * session must say why GPU tracing was unavailable; with one (the GPU
 * path, skipped elsewhere) CUPTI's two 1 MiB memcpys must be recorded
 * with real timestamps and tracing marked available. */
static void
test_cuda_only (void)
{
  if (!need_probe ())
    return;
  if (cuda_target == NULL)
    {
      g_test_skip ("built without the CUDA runtime");
      return;
    }
  g_autofree char *dir = tmp_dir ();
  g_autofree char *session = g_build_filename (dir, "cuda.cowscope", NULL);
  Run r;
  RUN_CLI (&r, dir, "record", "--cuda-only", "-o", session, "--", cuda_target);
  g_assert_cmpint (r.status, ==, 0);
  sqlite3 *db = open_session (session);
  g_autofree char *gpu = qtext (db, "SELECT value FROM meta WHERE key = 'gpu_tracing'");
  int64_t exit_status = qint (db, "SELECT value FROM meta WHERE key = 'exit_status'");
  if (exit_status == 77)
    {
      /* No CUDA device here: the reason is recorded, nothing else. */
      g_assert_true (g_str_has_prefix (gpu, "unavailable: "));
      g_assert_cmpuint (strlen (gpu), >, strlen ("unavailable: "));
      g_assert_cmpint (qint (db, "SELECT count(*) FROM cuda_activity"), ==, 0);
      g_test_message ("no CUDA device: %s", gpu);
    }
  else
    {
      g_assert_cmpint (exit_status, ==, 0);
      g_assert_cmpstr (gpu, ==, "available");
      g_assert_cmpint (qint (db, "SELECT count(*) FROM cuda_activity WHERE kind = %d"
                                 " AND bytes = 1048576 AND start_ns > 0 AND end_ns >= start_ns",
                             1 /* COWSCOPE_CUDA_MEMCPY */), >=, 2);
    }
  sqlite3_close (db);
  run_clear (&r);
  rm_rf (dir);
}

/* ---- Scale: many short-lived threads, few file descriptors ---------------- */

/* 1,200 short-lived threads, 6 marks each, recorded under a file limit:
 * every one of the 7,200 events is stored, and the books balance for
 * events and for records.  Rings cost the recorder no descriptor once
 * mapped and those of finished threads are released; the soft limit is
 * raised to the hard one anyway.  (Before: one descriptor per ring until
 * the end, so past the limit rings were "ignored" and their events
 * silently missing: produced = stored said nothing about them.) */
static void
check_short_lived_threads (rlim_t soft, rlim_t hard)
{
  g_autofree char *dir = tmp_dir ();
  g_autofree char *out = g_build_filename (dir, "s.cowscope", NULL);
  const char *args[] = { "record", "--block", "--no-stacks", "-o", out, "--", crash_target,
                         "threads", "1200", "6", NULL };
  Limits limits = { soft, hard };
  Spawned s;
  spawned_start (&s, NULL, &limits, args);
  spawned_wait (&s);
  g_assert_true (WIFEXITED (s.status));
  g_assert_cmpint (WEXITSTATUS (s.status), ==, 0);
  g_assert_null (strstr (s.err->str, "ignoring"));
  sqlite3 *db = open_session (out);
  assert_session_sound (db);
  g_assert_cmpint (qint (db, "SELECT count(*) FROM events WHERE type = 19"), ==, 7200);
  g_assert_cmpint (qint (db, "SELECT value FROM meta WHERE key = 'events_produced'"), ==, 7200);
  g_assert_cmpint (qint (db, "SELECT value FROM meta WHERE key = 'events_stored'"), ==, 7200);
  g_assert_cmpint (qint (db, "SELECT value FROM meta WHERE key = 'dropped'"), ==, 0);
  g_assert_cmpint (qint (db, "SELECT count(*) FROM threads WHERE produced > 0"), ==, 1200);
  g_assert_cmpint (qint (db, "SELECT count(*) FROM peer_faults"), ==, 0);
  sqlite3_close (db);
  spawned_clear (&s);
  rm_rf (dir);
}

static void
test_short_lived_threads (void)
{
  if (!need_probe ())
    return;
  struct rlimit now;
  g_assert_cmpint (getrlimit (RLIMIT_NOFILE, &now), ==, 0);
  /* The usual soft limit of 1,024 under a larger hard one. */
  if (now.rlim_max > 1024)
    check_short_lived_threads (1024, 0);
  /* A hard limit far below the thread count: raising cannot help. */
  check_short_lived_threads (64, 64);
}

/* ---- BLOCK mode and the recorder's liveness ---------------------------- */

/* A recorder stopped (SIGSTOP) while two threads flood a tiny ring in
 * BLOCK mode: the writers wait for as long as it is stopped, however
 * long that is, and nothing is lost.  (Before: writers gave up after
 * 10 ms and dropped.)  The test acts on what it observes: it stops the
 * recorder once the target runs, and lets it go once a flooding thread
 * was seen sleeping (waiting for room) and well after. */
static void
test_block_recorder_stopped (void)
{
  if (!need_probe ())
    return;
  g_autofree char *dir = tmp_dir ();
  g_autofree char *out = g_build_filename (dir, "s.cowscope", NULL);
  const char *args[] = { "record", "--block", "--ring-size", "4096", "--no-stacks", "-o", out,
                         "--", crash_target, "flood", "200000", "2", NULL };
  Spawned s;
  spawned_start (&s, NULL, NULL, args);
  pid_t target = child_of (s.pid);
  wait_for_committed_events (out);
  kill (s.pid, SIGSTOP);
  gboolean seen_waiting = FALSE;
  for (int i = 0; i < 1000 && !seen_waiting; i++)
    {
      seen_waiting = some_thread_in_state (target, 'S');
      g_usleep (1000);
    }
  g_test_message ("a writer was %sseen waiting", seen_waiting ? "" : "not ");
  g_usleep (300 * 1000);
  kill (s.pid, SIGCONT);
  spawned_wait (&s);
  g_assert_true (WIFEXITED (s.status));
  g_assert_cmpint (WEXITSTATUS (s.status), ==, 0);
  sqlite3 *db = open_session (out);
  assert_session_sound (db);
  g_assert_cmpint (qint (db, "SELECT value FROM meta WHERE key = 'dropped'"), ==, 0);
  g_assert_cmpint (qint (db, "SELECT count(*) FROM events WHERE type = 19"), ==, 400000);
  g_assert_null (qtext (db, "SELECT value FROM meta WHERE key = 'block_stopped_waiting'"));
  sqlite3_close (db);
  spawned_clear (&s);
  rm_rf (dir);
}

/* A recorder killed while BLOCK-mode writers wait on a full ring: the
 * target notices (the recorder's socket hung up), stops waiting, runs to
 * its end and says how many records it could not hand over.  (Before:
 * the writers gave up by a timeout, silently.)  The killed recorder's
 * socket directory is left behind; the next recording removes it. */
static void
test_block_recorder_killed (void)
{
  if (!need_probe ())
    return;
  g_autofree char *dir = tmp_dir ();
  g_autofree char *tmp = g_build_filename (dir, "tmp", NULL);
  g_assert_cmpint (g_mkdir (tmp, 0700), ==, 0);
  g_auto (GStrv) env = env_with_private_tmp (tmp);
  g_autofree char *out = g_build_filename (dir, "s.cowscope", NULL);
  const char *args[] = { "record", "--block", "--ring-size", "4096", "--no-stacks", "-o", out,
                         "--", crash_target, "flood", "300000", "2", NULL };
  Spawned s;
  spawned_start (&s, env, NULL, args);
  wait_for_committed_events (out);
  kill (s.pid, SIGKILL);
  spawned_wait (&s);
  g_assert_true (WIFSIGNALED (s.status));
  g_assert_nonnull (strstr (s.err->str, "the recorder is gone"));
  g_assert_nonnull (strstr (s.err->str, "were not recorded: the recorder went away"));
  g_assert_cmpuint (count_socket_dirs (tmp), ==, 1);
  spawned_clear (&s);

  /* The next recording cleans up after the dead one (and after itself). */
  g_autofree char *out2 = g_build_filename (dir, "s2.cowscope", NULL);
  const char *args2[] = { "record", "-o", out2, "--", crash_target, "marks", "3", NULL };
  spawned_start (&s, env, NULL, args2);
  spawned_wait (&s);
  g_assert_cmpint (WEXITSTATUS (s.status), ==, 0);
  g_assert_cmpuint (count_socket_dirs (tmp), ==, 0);
  spawned_clear (&s);

  /* finalize completes the killed recording's session. */
  Run r;
  RUN_CLI (&r, NULL, "finalize", out);
  g_assert_cmpint (r.status, ==, 0);
  sqlite3 *db = open_session (out);
  assert_session_sound (db);
  g_assert_cmpint (qint (db, "SELECT value FROM meta WHERE key = 'events_stored'"), ==,
                   qint (db, "SELECT count(*) FROM events"));
  sqlite3_close (db);
  run_clear (&r);
  rm_rf (tmp);
  rm_rf (dir);
}

/* Socket directories: a recorder's own is gone when it ends; one whose
 * owner is dead (a pid that does not run) is removed by the next
 * recording, one whose owner runs, or that holds anything else, is not. */
static void
test_stale_socket_dirs (void)
{
  if (!need_probe ())
    return;
  g_autofree char *tmp = tmp_dir ();
  g_auto (GStrv) env = env_with_private_tmp (tmp);
  g_autofree char *dead = g_build_filename (tmp, "cowscope-dead00", NULL);
  g_autofree char *alive = g_build_filename (tmp, "cowscope-alive0", NULL);
  g_autofree char *other = g_build_filename (tmp, "cowscope-other0", NULL);
  g_assert_cmpint (g_mkdir (dead, 0700), ==, 0);
  g_assert_cmpint (g_mkdir (alive, 0700), ==, 0);
  g_assert_cmpint (g_mkdir (other, 0700), ==, 0);
  /* A pid above the kernel's maximum never runs. */
  g_autofree char *dead_owner = g_build_filename (dead, "owner", NULL);
  g_assert_true (g_file_set_contents (dead_owner, "2147483647 1\n", -1, NULL));
  g_autofree char *alive_owner = g_build_filename (alive, "owner", NULL);
  g_autofree char *me = g_strdup_printf ("%d 0\n", (int) getpid ());
  g_assert_true (g_file_set_contents (alive_owner, me, -1, NULL));
  g_autofree char *other_owner = g_build_filename (other, "owner", NULL);
  g_autofree char *other_file = g_build_filename (other, "precious", NULL);
  g_assert_true (g_file_set_contents (other_owner, "2147483647 1\n", -1, NULL));
  g_assert_true (g_file_set_contents (other_file, "x", -1, NULL));

  g_autofree char *out = g_build_filename (tmp, "s.cowscope", NULL);
  const char *args[] = { "record", "-o", out, "--", crash_target, "marks", "1", NULL };
  Spawned s;
  spawned_start (&s, env, NULL, args);
  spawned_wait (&s);
  g_assert_cmpint (WEXITSTATUS (s.status), ==, 0);
  g_assert_false (g_file_test (dead, G_FILE_TEST_EXISTS));
  g_assert_true (g_file_test (alive, G_FILE_TEST_IS_DIR));
  g_assert_true (g_file_test (other_file, G_FILE_TEST_EXISTS));
  g_assert_cmpuint (count_socket_dirs (tmp), ==, 2);
  spawned_clear (&s);
  g_remove (alive_owner);
  g_rmdir (alive);
  g_remove (other_owner);
  g_remove (other_file);
  g_rmdir (other);
  rm_rf (tmp);
}

/* ---- Hostile peers ------------------------------------------------------- */

/* One datagram: header of @type with @payload, @fds as SCM_RIGHTS. */
static void
send_datagram (int fd, uint32_t type, const void *payload, size_t size, const int *fds, int n_fds)
{
  CowscopeMessageHeader h = { .type = type, .size = (uint32_t) size };
  struct iovec iov[2] = { { &h, sizeof h }, { (void *) payload, size } };
  union {
    struct cmsghdr align;
    char bytes[CMSG_SPACE (sizeof (int) * 4)];
  } control;
  struct msghdr msg = { .msg_iov = iov, .msg_iovlen = size > 0 ? 2 : 1 };
  if (n_fds > 0)
    {
      memset (&control, 0, sizeof control);
      msg.msg_control = control.bytes;
      msg.msg_controllen = CMSG_SPACE (sizeof (int) * n_fds);
      struct cmsghdr *c = CMSG_FIRSTHDR (&msg);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN (sizeof (int) * n_fds);
      memcpy (CMSG_DATA (c), fds, sizeof (int) * n_fds);
    }
  g_assert_cmpint (sendmsg (fd, &msg, MSG_NOSIGNAL), >=, 0);
}

/* Connects to the socket of the one recording running with @tmp as its
 * temporary directory (waiting for it to appear). */
static int
connect_to_recorder (const char *tmp)
{
  for (int i = 0; i < HANG_S * 100; i++)
    {
      GDir *d = g_dir_open (tmp, 0, NULL);
      const char *name;
      while (d && (name = g_dir_read_name (d)))
        {
          if (!g_str_has_prefix (name, "cowscope-"))
            continue;
          g_autofree char *path = g_build_filename (tmp, name, "socket", NULL);
          struct sockaddr_un a = { .sun_family = AF_UNIX };
          g_strlcpy (a.sun_path, path, sizeof a.sun_path);
          int fd = socket (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
          if (connect (fd, (struct sockaddr *) &a, sizeof a) == 0)
            {
              g_dir_close (d);
              return fd;
            }
          close (fd);
        }
      if (d)
        g_dir_close (d);
      g_usleep (10 * 1000);
    }
  g_error ("no recorder socket appeared in %s", tmp);
}

/* The test process plays a hostile peer against a real recording: it
 * claims to be someone else, sends malformed datagrams, descriptors that
 * are not rings, a ring holding an empty string (once enough to make the
 * recorder exit 1 and lose the session), a stack in a "library" that is
 * a FIFO (once enough to hang finalization for ever), and garbage after
 * all that.  The recording goes on, the target's events are all there,
 * each refusal is counted against this process, and what it claimed is
 * kept apart from what the kernel says it is. */
static void
test_hostile_peer (void)
{
  if (!need_probe ())
    return;
  g_autofree char *dir = tmp_dir ();
  g_autofree char *tmp = g_build_filename (dir, "tmp", NULL);
  g_assert_cmpint (g_mkdir (tmp, 0700), ==, 0);
  g_auto (GStrv) env = env_with_private_tmp (tmp);
  g_autofree char *out = g_build_filename (dir, "s.cowscope", NULL);
  g_autofree char *fifo = g_build_filename (dir, "libevil.so", NULL);
  g_assert_cmpint (mkfifo (fifo, 0600), ==, 0);
  const char *args[] = { "record", "-o", out, "--", crash_target, "slow", "300", "2000", NULL };
  Spawned s;
  spawned_start (&s, env, NULL, args);
  int peer = connect_to_recorder (tmp);

  /* Garbage before HELLO, a HELLO full of lies, then more garbage. */
  send_datagram (peer, COWSCOPE_MESSAGE_RING, "x", 1, NULL, 0);
  struct {
    CowscopeHello hello;
    char text[64];
  } hello = { .hello = { .protocol_version = COWSCOPE_PROTOCOL_VERSION, .pid = 1, .ppid = 0,
                         .trace_abi_version = COW_TRACE_ABI_VERSION } };
  const char *lie_exe = "/usr/bin/evil", *lie_cmdline = "evil\0--pwn";
  hello.hello.exe_length = (uint32_t) strlen (lie_exe);
  hello.hello.cmdline_length = 10;
  memcpy (hello.text, lie_exe, strlen (lie_exe));
  memcpy (hello.text + strlen (lie_exe), lie_cmdline, 10);
  send_datagram (peer, COWSCOPE_MESSAGE_HELLO, &hello,
                 sizeof hello.hello + hello.hello.exe_length + 10, NULL, 0);
  char junk[3] = { 1, 2, 3 };
  send_datagram (peer, 77, junk, sizeof junk, NULL, 0);
  g_assert_cmpint (send (peer, junk, 3, MSG_NOSIGNAL), ==, 3); /* shorter than a header */
  int pipe_fds[2];
  g_assert_cmpint (pipe (pipe_fds), ==, 0);
  CowscopeRingMessage rm = { .tid = 4242, .thread_name = "evil" };
  send_datagram (peer, COWSCOPE_MESSAGE_RING, &rm, sizeof rm, pipe_fds, 1); /* not a ring */
  send_datagram (peer, COWSCOPE_MESSAGE_BYE, NULL, 0, pipe_fds, 2); /* fds where none go */
  close (pipe_fds[0]);
  close (pipe_fds[1]);

  /* MAPS naming a FIFO as executable code, and a ring whose stack points
   * into it, with an empty string and a valid event. */
  g_autofree char *maps = g_strdup_printf ("7f0000000000-7f0000010000 r-xp 00000000 00:00 1 %s\n",
                                           fifo);
  struct {
    CowscopeMapsChunk chunk;
    char text[512];
  } m = { .chunk = { .generation = 1, .final = 1, .offset = 0 } };
  g_strlcpy (m.text, maps, sizeof m.text);
  send_datagram (peer, COWSCOPE_MESSAGE_MAPS, &m, sizeof m.chunk + strlen (maps), NULL, 0);
  CowError err = { 0 };
  CowscopeRing *ring = cowscope_ring_new (0, COWSCOPE_RING_DROP, &err);
  g_assert_nonnull (ring);
  g_assert_true (cowscope_ring_write_string (ring, 99, "", 0));
  CowTraceEvent clone = { .type = COW_EVENT_LAZY_CLONE, .time_ns = 5, .pid = 1, .tid = 4242 };
  g_assert_true (cowscope_ring_write_event (ring, &clone));
  struct {
    CowscopeRingBlobHeader blob;
    CowscopeStackBlob stack;
    uint64_t frames[1];
  } stack = { { COWSCOPE_RING_BLOB_STACK, 0 }, { 5, COW_EVENT_LAZY_CLONE, 1 }, { 0x7f0000001234 } };
  g_assert_true (cowscope_ring_write (ring, COWSCOPE_RING_KIND_BLOB, &stack, sizeof stack));
  /* A blob too short to hold its header: a malformed record. */
  g_assert_true (cowscope_ring_write (ring, COWSCOPE_RING_KIND_BLOB, junk, 1));
  int ring_fd = cowscope_ring_get_fd (ring);
  send_datagram (peer, COWSCOPE_MESSAGE_RING, &rm, sizeof rm, &ring_fd, 1);
  /* Once the recorder has read those four records, the ring's head is
   * scribbled over: the ring is given up as damaged. */
  CowscopeRingStats stats;
  for (int i = 0; i < HANG_S * 100; i++)
    {
      cowscope_ring_get_stats (ring, &stats);
      if (stats.consumed >= 4)
        break;
      g_usleep (10 * 1000);
    }
  g_assert_cmpuint (stats.consumed, ==, 4);
  CowscopeRingHeader *header = mmap (NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, ring_fd, 0);
  g_assert_true (header != MAP_FAILED);
  atomic_store (&header->head, atomic_load (&header->head) + 3);

  spawned_wait (&s);
  close (peer);
  g_assert_true (WIFEXITED (s.status));
  g_assert_cmpint (WEXITSTATUS (s.status), ==, 0);
  sqlite3 *db = open_session (out);
  assert_session_sound (db);
  g_assert_cmpint (qint (db, "SELECT count(*) FROM events WHERE type = 19"), ==, 300);
  int me = (int) getpid ();
  /* Identity: the kernel's, the claims apart. */
  g_autofree char *exe = g_file_read_link ("/proc/self/exe", NULL);
  g_autofree char *sql = g_strdup_printf ("SELECT exe FROM processes WHERE pid = %d", me);
  g_autofree char *stored_exe = qtext (db, sql);
  g_assert_cmpstr (stored_exe, ==, exe);
  g_free (sql);
  sql = g_strdup_printf ("SELECT identity || '|' || claimed_pid || '|' || claimed_exe || '|' ||"
                         " claimed_cmdline FROM process_identity WHERE pid = %d", me);
  g_autofree char *claims = qtext (db, sql);
  g_assert_cmpstr (claims, ==, "kernel|1|/usr/bin/evil|evil --pwn");
  g_assert_cmpint (qint (db, "SELECT count(*) FROM processes WHERE exe = '/usr/bin/evil'"), ==, 0);
  /* The empty string is stored as one; the stack symbolized to nothing. */
  g_assert_cmpint (qint (db, "SELECT count(*) FROM strings WHERE pid = %d AND id = 99"
                             " AND value = ''", me), ==, 1);
  g_assert_cmpint (qint (db, "SELECT count(*) FROM frames WHERE pid = %d AND function IS NULL",
                         me), ==, 1);
  /* Each refusal counted against this process. */
  static const char *const faults[] = { "message before hello", "unknown message",
                                        "malformed message", "bad ring",
                                        "unexpected file descriptors", "damaged ring",
                                        "malformed records" };
  for (gsize i = 0; i < G_N_ELEMENTS (faults); i++)
    {
      g_test_message ("fault %s", faults[i]);
      g_assert_cmpint (qint (db, "SELECT count FROM peer_faults WHERE pid = %d AND fault = '%s'",
                             me, faults[i]), >=, 1);
    }
  g_assert_cmpint (qint (db, "SELECT value FROM meta WHERE key = 'peer_faults'"), >=, 7);
  g_assert_cmpint (qint (db, "SELECT count(*) FROM peer_faults WHERE pid != %d", me), ==, 0);
  sqlite3_close (db);
  munmap (header, 4096);
  cowscope_ring_free (ring);
  spawned_clear (&s);
  g_remove (fifo);
  rm_rf (tmp);
  rm_rf (dir);
}

/* Child setup: run as nobody. */
static void
become_nobody (gpointer data)
{
  (void) data;
  if (setgid (65534) != 0 || setuid (65534) != 0)
    _exit (99);
}

/* A process of another user that does not descend from the target is
 * refused at once and counted; it gets no process row.  Needs root (the
 * recorder runs as nobody, this test connects as root, which reaches any
 * socket). */
static void
test_foreign_user (void)
{
  if (!need_probe ())
    return;
  if (geteuid () != 0)
    {
      g_test_skip ("needs root to run the recorder as another user");
      return;
    }
  g_autofree char *dir = tmp_dir ();
  g_assert_cmpint (g_chmod (dir, 0777), ==, 0);
  g_auto (GStrv) env = env_with_private_tmp (dir);
  g_autofree char *out = g_build_filename (dir, "s.cowscope", NULL);
  const char *args[] = { cli, "record", "-o", out, "--", crash_target, "slow", "200", "2000",
                         NULL };
  GPid pid;
  int err_fd;
  GError *error = NULL;
  g_spawn_async_with_pipes (NULL, (char **) args, env, G_SPAWN_DO_NOT_REAP_CHILD, become_nobody,
                            NULL, &pid, NULL, NULL, &err_fd, &error);
  g_assert_no_error (error);
  int peer = connect_to_recorder (dir);
  CowscopeHello hello = { .protocol_version = COWSCOPE_PROTOCOL_VERSION, .pid = 1 };
  /* The recorder may have closed the connection already. */
  CowscopeMessageHeader h = { .type = COWSCOPE_MESSAGE_HELLO, .size = sizeof hello };
  struct iovec iov[2] = { { &h, sizeof h }, { &hello, sizeof hello } };
  struct msghdr msg = { .msg_iov = iov, .msg_iovlen = 2 };
  sendmsg (peer, &msg, MSG_NOSIGNAL);
  Spawned s = { .pid = pid, .err_fd = err_fd, .err = g_string_new (NULL) };
  spawned_wait (&s);
  close (peer);
  g_assert_cmpint (WEXITSTATUS (s.status), ==, 0);
  sqlite3 *db = open_session (out);
  assert_session_sound (db);
  int me = (int) getpid ();
  g_assert_cmpint (qint (db, "SELECT count FROM peer_faults WHERE pid = %d AND uid = 0"
                             " AND fault = 'foreign user'", me), ==, 1);
  g_assert_cmpint (qint (db, "SELECT count(*) FROM processes WHERE pid = %d", me), ==, 0);
  g_assert_cmpint (qint (db, "SELECT count(*) FROM events WHERE type = 19"), ==, 200);
  sqlite3_close (db);
  spawned_clear (&s);
  rm_rf (dir);
}

/* A symbolizer given a map whose executable mapping names a FIFO, a
 * device or a directory skips them instead of opening (and, for the
 * FIFO, blocking for ever), and still symbolizes the real files.  Here
 * through `finalize` of a session built to say so. */
static void
test_finalize_fifo_maps (void)
{
  if (!need_probe ())
    return;
  g_autofree char *dir = tmp_dir ();
  g_autofree char *out = g_build_filename (dir, "s.cowscope", NULL);
  g_autofree char *fifo = g_build_filename (dir, "fifo.so", NULL);
  g_assert_cmpint (mkfifo (fifo, 0600), ==, 0);
  Run r;
  /* lock-wait: lazy clones and materializations, whose stacks have frames. */
  RUN_CLI (&r, NULL, "record", "-o", out, "--", crash_target, "lock-wait", "64");
  g_assert_cmpint (r.status, ==, 0);
  run_clear (&r);
  sqlite3 *db = NULL;
  g_assert_cmpint (sqlite3_open (out, &db), ==, SQLITE_OK);
  g_autofree char *sql = g_strdup_printf (
    "INSERT OR REPLACE INTO process_maps (pid, generation, maps) VALUES (1, 9,"
    " '7f0000000000-7f0000010000 r-xp 00000000 00:00 1 %s' || char (10) ||"
    " '7f0000010000-7f0000020000 r-xp 00000000 00:00 1 /dev/zero' || char (10) ||"
    " '7f0000020000-7f0000030000 r-xp 00000000 00:00 1 /' || char (10));"
    "INSERT INTO frames (id, pid, address) VALUES (9001, 1, 139637976727556),"
    " (9002, 1, 139637976793092), (9003, 1, 139637976858628);"
    "UPDATE meta SET value = 0 WHERE key = 'finalized';", fifo);
  g_assert_cmpint (sqlite3_exec (db, sql, NULL, NULL, NULL), ==, SQLITE_OK);
  sqlite3_close (db);

  Spawned s;
  const char *args[] = { "finalize", out, NULL };
  spawned_start (&s, NULL, NULL, args);
  spawned_wait (&s);
  g_assert_cmpint (WEXITSTATUS (s.status), ==, 0);
  db = open_session (out);
  g_assert_cmpint (qint (db, "SELECT count(*) FROM frames WHERE pid = 1 AND function IS NULL"),
                   ==, 3);
  /* The real frames are still symbolized. */
  g_assert_cmpint (qint (db, "SELECT count(*) FROM frames WHERE pid != 1 AND function IS NOT NULL"),
                   >, 0);
  sqlite3_close (db);
  spawned_clear (&s);
  g_remove (fifo);
  rm_rf (dir);
}

/* ---- Lock waits ---------------------------------------------------------- */

/* A steal that really waits for a copy in flight (crash-target lock-wait
 * holds the copier under the shared lock until the stealer sleeps on the
 * exclusive one): the wait is measured and recorded, so
 * materializations.lock_wait_ns of the steal is above 0 and equals its
 * materialize_end's. */
static void
test_lock_wait_recorded (void)
{
  if (!need_probe ())
    return;
  g_autofree char *dir = tmp_dir ();
  g_autofree char *out = g_build_filename (dir, "s.cowscope", NULL);
  Spawned s;
  const char *args[] = { "record", "-o", out, "--", crash_target, "lock-wait", "8000", NULL };
  spawned_start (&s, NULL, NULL, args);
  spawned_wait (&s);
  g_assert_cmpint (WEXITSTATUS (s.status), ==, 0);
  sqlite3 *db = open_session (out);
  assert_session_sound (db);
  g_assert_cmpint (qint (db, "SELECT value FROM meta WHERE key = 'exit_status'"), ==, 0);
  g_assert_cmpint (qint (db, "SELECT count(*) FROM materializations WHERE kind = 1"), ==, 1);
  g_assert_cmpint (qint (db, "SELECT count(*) FROM materializations WHERE kind = 2"), ==, 1);
  g_assert_cmpint (qint (db, "SELECT lock_wait_ns FROM materializations WHERE kind = 2"), >, 0);
  g_assert_cmpint (qint (db, "SELECT lock_wait_ns FROM materializations WHERE kind = 2"), ==,
                   qint (db, "SELECT v4 FROM events WHERE type = 15 AND (aux & 255) = 2"));
  g_test_message ("the steal waited %" G_GINT64_FORMAT " ns",
                  qint (db, "SELECT lock_wait_ns FROM materializations WHERE kind = 2"));
  sqlite3_close (db);
  spawned_clear (&s);
  rm_rf (dir);
}

/* ---- Events and records ------------------------------------------------- */

/* The session counts engine events apart from the records around them
 * (strings, stacks): events_stored is exactly the events table, and both
 * books balance.  (Before, records were reported as events.) */
static void
test_events_and_records (void)
{
  if (!need_probe ())
    return;
  g_autofree char *dir = tmp_dir ();
  g_autofree char *out = g_build_filename (dir, "s.cowscope", NULL);
  Run r;
  RUN_CLI (&r, NULL, "record", "-o", out, "--", demo, "--quiet", "--steps", "2", "training");
  g_assert_cmpint (r.status, ==, 0);
  sqlite3 *db = open_session (out);
  assert_session_sound (db);
  int64_t events = qint (db, "SELECT count(*) FROM events");
  g_assert_cmpint (qint (db, "SELECT value FROM meta WHERE key = 'events_stored'"), ==, events);
  g_assert_cmpint (qint (db, "SELECT value FROM meta WHERE key = 'events_produced'"), ==, events);
  g_assert_cmpint (qint (db, "SELECT value FROM meta WHERE key = 'stored'"), >, events);
  g_assert_cmpint (qint (db, "SELECT count(*) FROM thread_events WHERE produced != stored + dropped"),
                   ==, 0);
  g_autofree char *stored = g_strdup_printf ("%" G_GINT64_FORMAT " events stored", events);
  g_assert_nonnull (strstr (r.err, stored));
  sqlite3_close (db);
  run_clear (&r);

  RUN_CLI (&r, NULL, "report", out);
  g_assert_cmpint (r.status, ==, 0);
  g_autofree char *line = g_strdup_printf ("Events: %" G_GINT64_FORMAT " produced, %" G_GINT64_FORMAT
                                           " stored, 0 dropped", events, events);
  g_assert_nonnull (strstr (r.out, line));
  g_assert_nonnull (strstr (r.out, "Records (events, strings, stacks, CUDA): "));
  run_clear (&r);
  rm_rf (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  /* Sessions keep their events packed: `events` needs the format's module. */
  cowscope_format_register_everywhere ();
  cli = g_getenv ("COWSCOPE_CLI");
  demo = g_getenv ("COWSCOPE_DEMO");
  crash_target = g_getenv ("COWSCOPE_CRASH_TARGET");
  probe = g_getenv ("COWSCOPE_PROBE_PATH");
  cuda_target = g_getenv ("COWSCOPE_CUDA_TARGET");
  if (!cli || !demo || !crash_target)
    g_error ("run from meson: COWSCOPE_CLI, COWSCOPE_DEMO and COWSCOPE_CRASH_TARGET are not set");
  if (probe && !g_file_test (probe, G_FILE_TEST_IS_REGULAR))
    g_unsetenv ("COWSCOPE_PROBE_PATH");

  g_test_add_func ("/recorder/cli/help-version", test_help_version);
  g_test_add_func ("/recorder/cli/usage-errors", test_usage_errors);
  g_test_add_func ("/recorder/cli/missing-program", test_missing_program);
  g_test_add_func ("/recorder/cli/existing-output", test_existing_output);
  g_test_add_func ("/recorder/cli/unwritable-directory", test_unwritable_directory);
  g_test_add_func ("/recorder/cli/full-disk", test_full_disk);
  g_test_add_func ("/recorder/cli/probe-path", test_probe_path);
  g_test_add_func ("/recorder/crash/target", test_crash);
  g_test_add_func ("/recorder/crash/recorder-killed", test_recorder_killed);
  g_test_add_func ("/recorder/crash/interrupt", test_interrupt);
  g_test_add_func ("/recorder/overflow/drop", test_overflow_drop);
  g_test_add_func ("/recorder/overflow/block", test_overflow_block);
  g_test_add_func ("/recorder/processes/fork", test_fork);
  g_test_add_func ("/recorder/cuda/cuda-only", test_cuda_only);
  g_test_add_func ("/recorder/scale/short-lived-threads", test_short_lived_threads);
  g_test_add_func ("/recorder/block/recorder-stopped", test_block_recorder_stopped);
  g_test_add_func ("/recorder/block/recorder-killed", test_block_recorder_killed);
  g_test_add_func ("/recorder/socket-dir/stale", test_stale_socket_dirs);
  g_test_add_func ("/recorder/peers/hostile", test_hostile_peer);
  g_test_add_func ("/recorder/peers/foreign-user", test_foreign_user);
  g_test_add_func ("/recorder/peers/finalize-fifo-maps", test_finalize_fifo_maps);
  g_test_add_func ("/recorder/lock-wait", test_lock_wait_recorded);
  g_test_add_func ("/recorder/events-and-records", test_events_and_records);
  static const char *const scenarios[] = { "training", "concurrent", "simulate", "foreign" };
  for (gsize i = 0; i < G_N_ELEMENTS (scenarios); i++)
    {
      g_autofree char *name = g_strdup_printf ("/recorder/demo/%s", scenarios[i]);
      g_test_add_data_func (name, scenarios[i], test_demo);
    }
  return g_test_run ();
}
