/* cowscope-target.c — starting the program being recorded. */
#include "cowscope-target.h"

#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cowscope-recorder-error.h"

static gboolean
is_executable_file (const char *path, int *err)
{
  struct stat st;
  if (stat (path, &st) != 0)
    {
      *err = errno;
      return FALSE;
    }
  if (S_ISDIR (st.st_mode))
    {
      *err = EISDIR;
      return FALSE;
    }
  if (!S_ISREG (st.st_mode) || access (path, X_OK) != 0)
    {
      *err = EACCES;
      return FALSE;
    }
  return TRUE;
}

char *
cowscope_target_resolve (const char *program, GError **error)
{
  int err = ENOENT;

  if (!program || !*program)
    {
      g_set_error (error, COWSCOPE_RECORDER_ERROR, COWSCOPE_RECORDER_ERROR_SPAWN,
                   "cannot run '': %s", g_strerror (ENOENT));
      return NULL;
    }
  if (strchr (program, '/'))
    {
      if (is_executable_file (program, &err))
        return g_strdup (program);
    }
  else
    {
      const char *path = g_getenv ("PATH");
      g_auto (GStrv) dirs = g_strsplit (path ? path : "/usr/local/bin:/usr/bin:/bin", ":", -1);
      int first_err = ENOENT;
      for (char **d = dirs; *d; d++)
        {
          g_autofree char *candidate = g_build_filename (**d ? *d : ".", program, NULL);
          int e;
          if (is_executable_file (candidate, &e))
            return g_steal_pointer (&candidate);
          if (e != ENOENT && e != ENOTDIR && first_err == ENOENT)
            first_err = e; /* found, but not runnable: say so */
        }
      err = first_err;
    }
  g_set_error (error, COWSCOPE_RECORDER_ERROR, COWSCOPE_RECORDER_ERROR_SPAWN,
               "cannot run '%s': %s", program, g_strerror (err));
  return NULL;
}

pid_t
cowscope_target_spawn (const char *path, char **argv, char **envp, GError **error)
{
  return cowscope_target_spawn_full (path, argv, envp, NULL, 0, 0, error);
}

pid_t
cowscope_target_spawn_full (const char *path, char **argv, char **envp,
                            const char *working_directory, int stdout_fd, int stderr_fd,
                            GError **error)
{
  posix_spawnattr_t attr;
  posix_spawn_file_actions_t actions;
  sigset_t none, defaults;
  pid_t pid = -1;

  posix_spawnattr_init (&attr);
  posix_spawn_file_actions_init (&actions);
  sigemptyset (&none);
  sigemptyset (&defaults);
  sigaddset (&defaults, SIGINT);
  sigaddset (&defaults, SIGTERM);
  sigaddset (&defaults, SIGPIPE);
  sigaddset (&defaults, SIGCHLD);
  posix_spawnattr_setsigmask (&attr, &none);
  posix_spawnattr_setsigdefault (&attr, &defaults);
  posix_spawnattr_setpgroup (&attr, 0);
  posix_spawnattr_setflags (&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK
                                     | POSIX_SPAWN_SETSIGDEF);
  /* dup2 onto 1 and 2 clears close-on-exec on the copies only. */
  if (stdout_fd > 0)
    posix_spawn_file_actions_adddup2 (&actions, stdout_fd, STDOUT_FILENO);
  if (stderr_fd > 0)
    posix_spawn_file_actions_adddup2 (&actions, stderr_fd, STDERR_FILENO);
  if (working_directory && *working_directory)
    posix_spawn_file_actions_addchdir_np (&actions, working_directory);
  int rc = posix_spawn (&pid, path, &actions, &attr, argv, envp);
  posix_spawn_file_actions_destroy (&actions);
  posix_spawnattr_destroy (&attr);
  if (rc != 0)
    {
      if (working_directory && *working_directory)
        g_set_error (error, COWSCOPE_RECORDER_ERROR, COWSCOPE_RECORDER_ERROR_SPAWN,
                     "cannot run '%s' in '%s': %s", argv[0], working_directory,
                     g_strerror (rc));
      else
        g_set_error (error, COWSCOPE_RECORDER_ERROR, COWSCOPE_RECORDER_ERROR_SPAWN,
                     "cannot run '%s': %s", argv[0], g_strerror (rc));
      return -1;
    }
  return pid;
}

const char *
cowscope_target_describe_status (int wait_status, int *exit_status, int *exit_signal)
{
  *exit_status = -1;
  *exit_signal = -1;
  if (WIFEXITED (wait_status))
    {
      *exit_status = WEXITSTATUS (wait_status);
      return "exited";
    }
  if (WIFSIGNALED (wait_status))
    {
      int sig = WTERMSIG (wait_status);
      *exit_signal = sig;
      switch (sig)
        {
        case SIGKILL:
          return "killed";
        case SIGSEGV:
        case SIGBUS:
        case SIGILL:
        case SIGFPE:
        case SIGABRT:
          return "crashed";
        default:
          return "signaled";
        }
    }
  return "unknown";
}
