/* test-record-embed.c — the recorder embedded in a process (as the app
 * uses it): working directory, the target's output on a pipe, live
 * progress, and stopping from another thread.  Needs $COWSCOPE_DEMO and
 * $COWSCOPE_PROBE_PATH (set by meson). */
#include <fcntl.h>
#include <glib.h>
#include <sys/resource.h>
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

#include "cowscope-recorder.h"

typedef struct {
  guint calls;
  guint64 max_stored;
  guint64 max_processes;
} Progress;

/* Counts progress calls and remembers the largest counters seen. */
static void
progress_cb (const CowscopeRecordProgress *p, void *user_data)
{
  Progress *seen = user_data;
  seen->calls++;
  seen->max_stored = MAX (seen->max_stored, p->stored);
  seen->max_processes = MAX (seen->max_processes, p->processes);
  g_assert_cmpint (p->target_pid, >, 0);
}

/* Reads @fd to its end. */
static char *
read_all (int fd)
{
  GString *s = g_string_new (NULL);
  char buf[4096];
  ssize_t n;
  while ((n = read (fd, buf, sizeof buf)) > 0)
    g_string_append_len (s, buf, n);
  return g_string_free (s, FALSE);
}

static void
test_output_pipe_progress_and_directory (void)
{
  const char *demo = g_getenv ("COWSCOPE_DEMO");
  g_autofree char *dir = g_dir_make_tmp ("cowscope-embed-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "s.cowscope", NULL);
  char *argv[] = { (char *) demo, "--steps", "3", "training", NULL };
  CowscopeRecordOptions o;
  CowscopeRecordResult r;
  Progress seen = { 0 };
  GError *error = NULL;
  int fds[2];

  g_assert_nonnull (demo);
  g_assert_cmpint (pipe2 (fds, O_CLOEXEC), ==, 0);
  cowscope_record_options_init (&o);
  o.argv = argv;
  o.output = path;
  o.cuda = FALSE;
  o.working_directory = dir;
  o.stdout_fd = fds[1];
  o.stderr_fd = fds[1];
  o.progress = progress_cb;
  o.progress_data = &seen;
  o.progress_interval_ms = 5;

  /* A soft file limit below the hard one: the recorder raises it for
   * itself while it records and puts it back afterwards. */
  struct rlimit before, after;
  g_assert_cmpint (getrlimit (RLIMIT_NOFILE, &before), ==, 0);
  if (before.rlim_max > 256)
    {
      before.rlim_cur = 256;
      g_assert_cmpint (setrlimit (RLIMIT_NOFILE, &before), ==, 0);
    }
  gboolean ok = cowscope_record (&o, &r, &error);
  g_assert_cmpint (getrlimit (RLIMIT_NOFILE, &after), ==, 0);
  g_assert_cmpuint (after.rlim_cur, ==, before.rlim_cur);
  close (fds[1]);
  g_autofree char *output = read_all (fds[0]);
  close (fds[0]);

  g_assert_no_error (error);
  g_assert_true (ok);
  g_assert_cmpstr (r.target_end, ==, "exited");
  g_assert_cmpint (r.exit_status, ==, 0);
  g_assert_cmpuint (seen.calls, >, 0);
  g_assert_cmpuint (seen.max_processes, >=, 1);
  /* The demo's own progress lines came through the pipe, not our stdout. */
  g_assert_cmpuint (strlen (output), >, 0);
  g_assert_true (g_file_test (path, G_FILE_TEST_IS_REGULAR));
  cowscope_record_result_clear (&r);
  g_remove (path);
  g_rmdir (dir);
}

static void
test_bad_working_directory (void)
{
  const char *demo = g_getenv ("COWSCOPE_DEMO");
  g_autofree char *dir = g_dir_make_tmp ("cowscope-embed-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "s.cowscope", NULL);
  char *argv[] = { (char *) demo, "--quiet", "training", NULL };
  CowscopeRecordOptions o;
  CowscopeRecordResult r;
  GError *error = NULL;

  cowscope_record_options_init (&o);
  o.argv = argv;
  o.output = path;
  o.cuda = FALSE;
  o.working_directory = "/nonexistent/cowscope-dir";
  g_assert_false (cowscope_record (&o, &r, &error));
  g_assert_error (error, COWSCOPE_RECORDER_ERROR, COWSCOPE_RECORDER_ERROR_SPAWN);
  g_assert_nonnull (strstr (error->message, "/nonexistent/cowscope-dir"));
  /* No session is left for a target that never ran. */
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
  g_clear_error (&error);
  cowscope_record_result_clear (&r);
  g_rmdir (dir);
}

/* Stops the recording once its target has been seen running. */
static void
interrupt_when_running (const CowscopeRecordProgress *p, void *user_data)
{
  gboolean *sent = user_data;
  if (!*sent && p->elapsed_ns > 200 * 1000000)
    {
      *sent = TRUE;
      cowscope_record_interrupt ();
    }
}

static void
test_interrupt_from_caller (void)
{
  g_autofree char *dir = g_dir_make_tmp ("cowscope-embed-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "s.cowscope", NULL);
  char *argv[] = { "sleep", "30", NULL };
  CowscopeRecordOptions o;
  CowscopeRecordResult r;
  gboolean sent = FALSE;
  GError *error = NULL;

  cowscope_record_options_init (&o);
  o.argv = argv;
  o.output = path;
  o.cuda = FALSE;
  o.progress = interrupt_when_running;
  o.progress_data = &sent;
  gint64 start = g_get_monotonic_time ();
  g_assert_true (cowscope_record (&o, &r, &error));
  g_assert_no_error (error);
  g_assert_true (sent);
  g_assert_true (r.interrupted);
  g_assert_cmpstr (r.target_end, ==, "signaled");
  g_assert_cmpint (g_get_monotonic_time () - start, <, 20 * G_USEC_PER_SEC);
  cowscope_record_result_clear (&r);
  g_remove (path);
  g_rmdir (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/recorder/embed/output-pipe-progress-directory",
                   test_output_pipe_progress_and_directory);
  g_test_add_func ("/recorder/embed/bad-working-directory", test_bad_working_directory);
  g_test_add_func ("/recorder/embed/interrupt", test_interrupt_from_caller);
  return g_test_run ();
}
