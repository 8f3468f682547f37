/* test-record.c — `cowscope-cli record` and `finalize`, end to end.
 *
 * Drives the built cowscope-cli ($COWSCOPE_CLI) against the demo
 * ($COWSCOPE_DEMO) and crash-target ($COWSCOPE_CRASH_TARGET) with the
 * probe at $COWSCOPE_PROBE_PATH, and checks the sessions' rows with the
 * SQLite C API.  Tests that need the probe are skipped while it is not
 * built. */
#include <errno.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

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
  const char *argv[] = { cli, "record", "-o", out, "--", crash_target, "slow", "600", "1000", NULL };
  GPid pid;
  GError *error = NULL;
  g_spawn_async (NULL, (char **) argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL, &pid, &error);
  g_assert_no_error (error);
  g_usleep (400 * 1000);
  kill (pid, SIGKILL);
  int status;
  waitpid (pid, &status, 0);
  g_assert_true (WIFSIGNALED (status));
  /* Let the orphaned target finish (its probe must survive the lost socket). */
  g_usleep (600 * 1000);

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
  const char *argv[] = { cli, "record", "-o", out, "--", crash_target, "slow", "100000", "1000",
                         NULL };
  GPid pid;
  GError *error = NULL;
  g_spawn_async (NULL, (char **) argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL, &pid, &error);
  g_assert_no_error (error);
  g_usleep (300 * 1000);
  kill (pid, SIGINT);
  int status;
  waitpid (pid, &status, 0);
  g_assert_true (WIFEXITED (status));
  g_assert_cmpint (WEXITSTATUS (status), ==, 0);
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

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
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
  static const char *const scenarios[] = { "training", "concurrent", "simulate", "foreign" };
  for (gsize i = 0; i < G_N_ELEMENTS (scenarios); i++)
    {
      g_autofree char *name = g_strdup_printf ("/recorder/demo/%s", scenarios[i]);
      g_test_add_data_func (name, scenarios[i], test_demo);
    }
  return g_test_run ();
}
