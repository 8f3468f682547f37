/* test-cli-special-files.c — a session path that names no regular file (a
 * FIFO, a socket, a directory, a device, a symbolic link loop, a dangling
 * link, an unreadable file) gets one clear line from every command that
 * reads a session, exit status 1, and never blocks (item 4 of issue 11:
 * `finalize` on a FIFO said "Illegal seek (disk I/O error)"). */
#include <errno.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "cli-fixture.h"
#include "cowscope-cli-commands.h"

typedef struct {
  char *dir;
  char *out;
} Fixture;

static void
fixture_set_up (Fixture *f, gconstpointer data)
{
  (void) data;
  f->dir = cli_fixture_tmpdir ();
  f->out = g_build_filename (f->dir, "out", NULL);
}

static void
fixture_tear_down (Fixture *f, gconstpointer data)
{
  (void) data;
  cli_fixture_remove_tree (f->dir);
  g_free (f->dir);
  g_free (f->out);
}

/* Every command that reads @path: exit 1, one line on stderr naming
 * @path and containing @fragment, nothing on stdout, no output file. */
static void
assert_every_command_refuses (Fixture *f, const char *path, const char *fragment)
{
  struct {
    CliCommand command;
    const char *args[6];
  } runs[] = {
    { cowscope_report_run, { "report", path, NULL } },
    { cowscope_report_run, { "report", "--json", path, NULL } },
    { cowscope_export_run, { "export", path, "--format", "chrome", "-o", f->out } },
    { cowscope_export_run, { "export", path, "--format", "csv", "-o", f->out } },
    { cowscope_export_run, { "export", path, "--format", "sqlite", "-o", f->out } },
    { cowscope_finalize_run, { "finalize", path, NULL } },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (runs); i++)
    {
      g_autofree char *out = NULL;
      g_autofree char *err = NULL;
      const char *const *a = runs[i].args;
      int status = cli_fixture_run (runs[i].command, &out, &err, a[0], a[1], a[2], a[3], a[4],
                                    a[5], NULL);
      g_test_message ("%s %s: %d %s", a[0], a[1], status, err);
      g_assert_cmpint (status, ==, 1);
      g_assert_cmpstr (out, ==, "");
      g_assert_nonnull (strstr (err, fragment));
      g_assert_nonnull (strstr (err, path));
      g_assert_nonnull (strchr (err, '\n'));
      g_assert_cmpstr (strchr (err, '\n') + 1, ==, "");
      g_assert_false (g_file_test (f->out, G_FILE_TEST_EXISTS));
      g_assert_cmpuint (cli_fixture_count_partial (f->dir), ==, 0);
    }
}

static void
test_fifo (Fixture *f, gconstpointer data)
{
  g_autofree char *fifo = g_build_filename (f->dir, "s.cowscope", NULL);

  (void) data;
  g_assert_cmpint (mkfifo (fifo, 0600), ==, 0);
  /* Opening the FIFO to read would wait for a writer for ever. */
  assert_every_command_refuses (f, fifo, "is not a regular file (a named pipe)");
}

static void
test_socket (Fixture *f, gconstpointer data)
{
  g_autofree char *path = g_build_filename (f->dir, "s.cowscope", NULL);
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

  (void) data;
  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpuint (strlen (path), <, sizeof addr.sun_path);
  strcpy (addr.sun_path, path);
  g_assert_cmpint (bind (fd, (struct sockaddr *) &addr, sizeof addr), ==, 0);
  g_assert_cmpint (listen (fd, 1), ==, 0);
  assert_every_command_refuses (f, path, "is not a regular file (a socket)");
  close (fd);
}

static void
test_directory (Fixture *f, gconstpointer data)
{
  g_autofree char *path = g_build_filename (f->dir, "s.cowscope", NULL);

  (void) data;
  g_assert_cmpint (g_mkdir (path, 0755), ==, 0);
  assert_every_command_refuses (f, path, "it is a directory, not a session file");
}

static void
test_device (Fixture *f, gconstpointer data)
{
  (void) data;
  assert_every_command_refuses (f, "/dev/null", "is not a regular file (a character device)");
}

static void
test_symlink_loop (Fixture *f, gconstpointer data)
{
  g_autofree char *a = g_build_filename (f->dir, "a.cowscope", NULL);
  g_autofree char *b = g_build_filename (f->dir, "b.cowscope", NULL);
  g_autofree char *dangling = g_build_filename (f->dir, "dangling.cowscope", NULL);

  (void) data;
  g_assert_cmpint (symlink ("b.cowscope", a), ==, 0);
  g_assert_cmpint (symlink ("a.cowscope", b), ==, 0);
  assert_every_command_refuses (f, a, g_strerror (ELOOP));
  g_assert_cmpint (symlink ("nowhere.cowscope", dangling), ==, 0);
  assert_every_command_refuses (f, dangling, g_strerror (ENOENT));
}

static void
test_unreadable (Fixture *f, gconstpointer data)
{
  g_autofree char *path = g_build_filename (f->dir, "s.cowscope", NULL);

  (void) data;
  if (geteuid () == 0)
    {
      /* Root reads a file whatever its mode; no mode refuses root. */
      g_test_skip ("root reads files whatever their mode");
      return;
    }
  cli_fixture_write_session (path, TRUE, 0);
  g_assert_cmpint (g_chmod (path, 0), ==, 0);
  assert_every_command_refuses (f, path, g_strerror (EACCES));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  /* A command that blocks fails the test instead of hanging it. */
  alarm (120);

#define ADD(path, func) g_test_add (path, Fixture, NULL, fixture_set_up, func, fixture_tear_down)
  ADD ("/cli/special-files/fifo", test_fifo);
  ADD ("/cli/special-files/socket", test_socket);
  ADD ("/cli/special-files/directory", test_directory);
  ADD ("/cli/special-files/device", test_device);
  ADD ("/cli/special-files/symlink-loop", test_symlink_loop);
  ADD ("/cli/special-files/unreadable", test_unreadable);
#undef ADD
  return g_test_run ();
}
