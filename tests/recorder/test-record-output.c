/* test-record-output.c — `cowscope-cli record -o` never writes over what
 * it runs: the program to record and the probe library, by any path
 * (item 3 of issue 11).  Drives the built cowscope-cli ($COWSCOPE_CLI). */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *cli;
static const char *probe;

typedef struct {
  char *dir;
  char *program; /* a copy of /bin/true (or `true` in PATH) in dir */
} Fixture;

static void
fixture_set_up (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *true_path = g_find_program_in_path ("true");
  g_autofree char *contents = NULL;
  gsize length = 0;

  (void) data;
  f->dir = g_dir_make_tmp ("cowscope-record-output-XXXXXX", &error);
  g_assert_no_error (error);
  f->program = g_build_filename (f->dir, "target", NULL);
  g_assert_nonnull (true_path);
  g_assert_true (g_file_get_contents (true_path, &contents, &length, NULL));
  g_assert_true (g_file_set_contents_full (f->program, contents, length,
                                           G_FILE_SET_CONTENTS_NONE, 0755, NULL));
}

static void
fixture_tear_down (Fixture *f, gconstpointer data)
{
  (void) data;
  g_autoptr (GDir) dir = g_dir_open (f->dir, 0, NULL);
  const char *name;
  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *path = g_build_filename (f->dir, name, NULL);
      g_unlink (path);
    }
  g_rmdir (f->dir);
  g_free (f->dir);
  g_free (f->program);
}

static GBytes *
file_bytes (const char *path)
{
  char *contents = NULL;
  gsize length = 0;
  g_assert_true (g_file_get_contents (path, &contents, &length, NULL));
  return g_bytes_new_take (contents, length);
}

/* Runs `cowscope-cli record -o OUTPUT --force -- PROGRAM` in @dir; returns
 * its exit status and its stderr in *@err. */
static int
record (const char *dir, const char *output, const char *program, char **err)
{
  const char *argv[] = { cli, "record", "-o", output, "--force", "--", program, NULL };
  g_autoptr (GError) error = NULL;
  int status = 0;

  g_spawn_sync (dir, (char **) argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL, err,
                &status, &error);
  g_assert_no_error (error);
  return g_spawn_check_wait_status (status, NULL) ? 0 : WEXITSTATUS (status);
}

/* `record` refused @output because it is @what (@how); @protected is
 * byte for byte as it was and no session file appeared. */
static void
assert_refused (Fixture *f, const char *output, const char *program, const char *protected,
                const char *what, const char *how)
{
  g_autoptr (GBytes) before = file_bytes (protected);
  g_autoptr (GBytes) after = NULL;
  g_autofree char *err = NULL;
  g_autofree char *wal = g_strconcat (protected, "-wal", NULL);

  g_test_message ("record -o %s --force -- %s", output, program);
  g_assert_cmpint (record (f->dir, output, program, &err), ==, 1);
  g_assert_nonnull (strstr (err, what));
  g_assert_nonnull (strstr (err, how));
  g_assert_nonnull (strstr (err, "nothing was written"));
  after = file_bytes (protected);
  g_assert_true (g_bytes_equal (before, after));
  g_assert_false (g_file_test (wal, G_FILE_TEST_EXISTS));
}

static void
test_output_is_program (Fixture *f, gconstpointer data)
{
  g_autofree char *hard = g_build_filename (f->dir, "hard", NULL);
  g_autofree char *soft = g_build_filename (f->dir, "soft", NULL);

  (void) data;
  g_assert_cmpint (link (f->program, hard), ==, 0);
  g_assert_cmpint (symlink ("target", soft), ==, 0);
  assert_refused (f, f->program, f->program, f->program, "the program to record",
                  "(the same file)");
  assert_refused (f, "target", "./target", f->program, "the program to record",
                  "(the same file)");
  assert_refused (f, hard, f->program, f->program, "the program to record",
                  "(a hard link to it)");
  assert_refused (f, soft, f->program, f->program, "the program to record",
                  "(a symbolic link to it)");
  assert_refused (f, f->program, soft, f->program, "the program to record",
                  "(the file it links to)");
}

static void
test_output_is_probe (Fixture *f, gconstpointer data)
{
  g_autofree char *link_to_probe = g_build_filename (f->dir, "probe.so", NULL);

  (void) data;
  g_assert_cmpint (symlink (probe, link_to_probe), ==, 0);
  assert_refused (f, link_to_probe, f->program, probe, "the probe library",
                  "(a symbolic link to it)");
}

/* Another output still records the program. */
static void
test_other_output_records (Fixture *f, gconstpointer data)
{
  g_autofree char *session = g_build_filename (f->dir, "s.cowscope", NULL);
  g_autofree char *err = NULL;

  (void) data;
  g_assert_cmpint (record (f->dir, session, f->program, &err), ==, 0);
  g_assert_true (g_file_test (session, G_FILE_TEST_IS_REGULAR));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  cli = g_getenv ("COWSCOPE_CLI");
  probe = g_getenv ("COWSCOPE_PROBE_PATH");
  if (cli == NULL || probe == NULL)
    g_error ("run from meson: COWSCOPE_CLI and COWSCOPE_PROBE_PATH are not set");

#define ADD(path, func) g_test_add (path, Fixture, NULL, fixture_set_up, func, fixture_tear_down)
  ADD ("/record/output/is-the-program", test_output_is_program);
  ADD ("/record/output/is-the-probe", test_output_is_probe);
  ADD ("/record/output/other-file-records", test_other_output_records);
#undef ADD
  return g_test_run ();
}
