/* cowscope-target.h — starting the program being recorded.
 *
 * The target is spawned directly from its argv (no shell) in a process
 * group of its own, so the recorder can signal it and everything it
 * forked at once, and so a terminal's Ctrl-C reaches only the recorder,
 * which then stops the target on purpose.
 */
#pragma once

#include <glib.h>
#include <sys/types.h>

G_BEGIN_DECLS

/* Resolves @program the way execvp would, but up front: a name with a
 * '/' is used as given, any other is looked up in $PATH.  Returns the
 * path of an executable regular file, or NULL with "cannot run 'PROGRAM':
 * <OS error>". */
char *cowscope_target_resolve (const char *program, GError **error);

/* Spawns @path with @argv and @envp in a new process group (its pgid is
 * its pid), with default signal dispositions and an empty signal mask;
 * stdin, stdout and stderr are inherited.  Returns the pid, or -1 with
 * "cannot run 'ARGV0': <OS error>". */
pid_t cowscope_target_spawn (const char *path, char **argv, char **envp, GError **error);

/* As cowscope_target_spawn(), and: the target starts in @working_directory
 * when it is not NULL, and its stdout / stderr are duplicates of
 * @stdout_fd / @stderr_fd when those are > 0 (0: inherited).  A working
 * directory that cannot be entered fails with "cannot run 'ARGV0' in
 * 'DIR': <OS error>". */
pid_t cowscope_target_spawn_full (const char *path, char **argv, char **envp,
                                  const char *working_directory, int stdout_fd,
                                  int stderr_fd, GError **error);

/* How a wait status ended: "exited", "killed" (SIGKILL), "crashed"
 * (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT) or "signaled"; sets
 * @exit_status / @exit_signal (-1 when not applicable). */
const char *cowscope_target_describe_status (int wait_status, int *exit_status,
                                             int *exit_signal);

G_END_DECLS
