/* test-cli-ranks.c — `cowscope-cli record` run once per rank by a
 * distributed launcher: each rank's session names its rank and host and
 * holds the realtime/monotonic clock pair that lines the ranks up, and
 * one command line gives each rank its own file. */
#include <glib.h>
#include <sqlite3.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli-fixture.h"

#define N_RANKS 3

static const char *cli, *target;

static gint64
realtime_now (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_REALTIME, &ts);
  return (gint64) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* meta.@key of the session @path, as SQLite gives it ("3", "node7"),
 * or NULL when absent. */
static char *
meta (const char *path, const char *key)
{
  sqlite3 *db = NULL;
  sqlite3_stmt *stmt = NULL;
  char *value = NULL;

  g_assert_cmpint (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_prepare_v2 (db, "SELECT value, typeof (value) FROM meta WHERE key = ?",
                                       -1, &stmt, NULL), ==, SQLITE_OK);
  sqlite3_bind_text (stmt, 1, key, -1, SQLITE_STATIC);
  if (sqlite3_step (stmt) == SQLITE_ROW && sqlite3_column_type (stmt, 0) != SQLITE_NULL)
    value = g_strdup ((const char *) sqlite3_column_text (stmt, 0));
  sqlite3_finalize (stmt);
  sqlite3_close (db);
  return value;
}

static gint64
meta_int (const char *path, const char *key)
{
  g_autofree char *text = meta (path, key);
  g_assert_nonnull (text);
  return g_ascii_strtoll (text, NULL, 10);
}

/* Starts `cowscope-cli record ARGS -- target` in @dir with the extra
 * environment @env (NULL-terminated K=V), without waiting. */
static GPid
start_record (const char *dir, const char *const *env, const char *const *args)
{
  g_auto (GStrv) envp = g_get_environ ();
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  g_autoptr (GError) error = NULL;
  GPid pid = 0;

  for (gsize i = 0; env != NULL && env[i] != NULL; i++)
    {
      g_auto (GStrv) kv = g_strsplit (env[i], "=", 2);
      envp = g_environ_setenv (envp, kv[0], kv[1], TRUE);
    }
  g_ptr_array_add (argv, (gpointer) cli);
  g_ptr_array_add (argv, (gpointer) "record");
  for (gsize i = 0; args != NULL && args[i] != NULL; i++)
    g_ptr_array_add (argv, (gpointer) args[i]);
  g_ptr_array_add (argv, (gpointer) "--");
  g_ptr_array_add (argv, (gpointer) target);
  g_ptr_array_add (argv, NULL);
  g_assert_true (g_spawn_async (dir, (char **) argv->pdata, envp,
                                G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL
                                  | G_SPAWN_STDERR_TO_DEV_NULL,
                                NULL, NULL, &pid, &error));
  g_assert_no_error (error);
  return pid;
}

static void
assert_exit_ok (GPid pid)
{
  int status = 0;

  g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
  g_assert_true (WIFEXITED (status));
  g_assert_cmpint (WEXITSTATUS (status), ==, 0);
  g_spawn_close_pid (pid);
}

static gboolean
need_recorder (void)
{
  cli = g_getenv ("COWSCOPE_CLI");
  target = g_getenv ("COWSCOPE_DIFF_TARGET_BEFORE");
  if (cli == NULL || target == NULL)
    {
      g_test_skip ("cowscope-cli or its target is not built");
      return FALSE;
    }
  return TRUE;
}

/* Three ranks started at once with one command line, as torchrun starts
 * them: three files, each with its rank, the world size, the host, and a
 * clock pair taken while it ran. */
static void
test_launcher (void)
{
  g_autofree char *dir = NULL;
  GPid pids[N_RANKS];
  gint64 started, ended, offsets[N_RANKS];
  const char *const args[] = { "-o", "train-%q{RANK}.cowscope", NULL };
  g_autofree char *boot0 = NULL;

  if (!need_recorder ())
    return;
  dir = cli_fixture_tmpdir ();
  started = realtime_now ();
  for (int rank = 0; rank < N_RANKS; rank++)
    {
      g_autofree char *rank_var = g_strdup_printf ("RANK=%d", rank);
      g_autofree char *local_var = g_strdup_printf ("LOCAL_RANK=%d", rank);
      const char *const env[] = { rank_var, local_var, "WORLD_SIZE=3", "MASTER_ADDR=node7",
                                  NULL };
      pids[rank] = start_record (dir, env, args);
    }
  for (int rank = 0; rank < N_RANKS; rank++)
    assert_exit_ok (pids[rank]);
  ended = realtime_now ();

  for (int rank = 0; rank < N_RANKS; rank++)
    {
      g_autofree char *name = g_strdup_printf ("train-%d.cowscope", rank);
      g_autofree char *path = g_build_filename (dir, name, NULL);
      g_autofree char *master = meta (path, "master_addr");
      g_autofree char *host = meta (path, "hostname");
      g_autofree char *boot = meta (path, "boot_id");
      gint64 realtime = meta_int (path, "clock_realtime_ns");
      gint64 monotonic = meta_int (path, "clock_monotonic_ns");

      g_assert_true (g_file_test (path, G_FILE_TEST_IS_REGULAR));
      g_assert_cmpint (meta_int (path, "rank"), ==, rank);
      g_assert_cmpint (meta_int (path, "local_rank"), ==, rank);
      g_assert_cmpint (meta_int (path, "world_size"), ==, N_RANKS);
      g_assert_cmpstr (master, ==, "node7");
      g_assert_cmpstr (host, ==, g_get_host_name ());
      /* The pair was read while the recorder ran, before its first event. */
      g_assert_cmpint (realtime, >=, started);
      g_assert_cmpint (realtime, <=, ended);
      g_assert_cmpint (monotonic, <=, meta_int (path, "start_ns"));
      offsets[rank] = realtime - monotonic;
      if (rank == 0)
        boot0 = g_strdup (boot);
      g_assert_cmpstr (boot, ==, boot0);
    }
  /* One machine, one boot: the pairs agree on how far the wall clock is
   * from the monotonic one (up to NTP slewing between them, which is at
   * most 0.5 ms a second; one second is a bound no scheduler breaks). */
  for (int rank = 1; rank < N_RANKS; rank++)
    g_assert_cmpint (ABS (offsets[rank] - offsets[0]), <, G_GINT64_CONSTANT (1000000000));
  cli_fixture_remove_tree (dir);
}

/* No -o: the default name carries the rank. */
static void
test_default_name (void)
{
  g_autofree char *dir = NULL;
  const char *const env[] = { "RANK=5", NULL };
  g_autoptr (GDir) listing = NULL;
  const char *name;
  guint found = 0;

  if (!need_recorder ())
    return;
  dir = cli_fixture_tmpdir ();
  assert_exit_ok (start_record (dir, env, NULL));
  listing = g_dir_open (dir, 0, NULL);
  g_assert_nonnull (listing);
  while ((name = g_dir_read_name (listing)) != NULL)
    {
      g_assert_true (g_str_has_prefix (name, "cowscope-diff-target-before-"));
      g_assert_true (g_str_has_suffix (name, "-rank5.cowscope"));
      found++;
    }
  g_assert_cmpuint (found, ==, 1);
  cli_fixture_remove_tree (dir);
}

/* %% is a percent sign, an unset variable expands to nothing, --env
 * counts as the target's environment, other % stay. */
static void
test_output_pattern (void)
{
  g_autofree char *dir = NULL;
  const char *const args[] = { "-o", "a%%b-%q{COWSCOPE_TEST_UNSET}-%q{RANK}-%d.cowscope",
                               "--env", "RANK=7", NULL };
  g_autofree char *path = NULL;

  if (!need_recorder ())
    return;
  g_unsetenv ("COWSCOPE_TEST_UNSET");
  dir = cli_fixture_tmpdir ();
  assert_exit_ok (start_record (dir, NULL, args));
  path = g_build_filename (dir, "a%b--7-%d.cowscope", NULL);
  g_assert_true (g_file_test (path, G_FILE_TEST_IS_REGULAR));
  g_assert_cmpint (meta_int (path, "rank"), ==, 7);
  cli_fixture_remove_tree (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  /* The test's own environment must not leak a rank into the others. */
  g_unsetenv ("RANK");
  g_unsetenv ("LOCAL_RANK");
  g_unsetenv ("WORLD_SIZE");
  g_unsetenv ("MASTER_ADDR");
  g_test_add_func ("/cli/ranks/launcher", test_launcher);
  g_test_add_func ("/cli/ranks/default-name", test_default_name);
  g_test_add_func ("/cli/ranks/output-pattern", test_output_pattern);
  return g_test_run ();
}
