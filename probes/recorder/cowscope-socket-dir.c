/* cowscope-socket-dir.c — private socket directories and their clean-up. */
#include "cowscope-socket-dir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "cowscope-recorder-error.h"

#define DIR_PREFIX "cowscope-"
#define OWNER_FILE "owner"
#define SOCKET_FILE "socket"
/* A directory with no owner file yet (its recorder was killed between
 * making it and writing the file) is removed once this old. */
#define ORPHAN_AGE_S (10 * 60)

const char *
cowscope_socket_dir_parent (void)
{
  const char *runtime = g_getenv ("XDG_RUNTIME_DIR");
  struct stat st;
  if (runtime && g_path_is_absolute (runtime) && stat (runtime, &st) == 0 && S_ISDIR (st.st_mode)
      && st.st_uid == getuid () && access (runtime, W_OK | X_OK) == 0)
    return runtime;
  return g_get_tmp_dir ();
}

/* Field 22 of /proc/@pid/stat (start time in clock ticks since boot), or
 * 0 when the process does not exist.  Fields after the command name
 * (which may hold any byte) start after its last ')'. */
static unsigned long long
process_start_time (pid_t pid)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/stat", (int) pid);
  g_autofree char *text = NULL;
  if (!g_file_get_contents (path, &text, NULL, NULL))
    return 0;
  const char *p = strrchr (text, ')');
  if (p == NULL)
    return 0;
  p++;
  /* Fields 3..21 come before the start time. */
  for (int field = 3; field <= 22 && p != NULL; field++)
    {
      while (*p == ' ')
        p++;
      if (field == 22)
        return g_ascii_strtoull (p, NULL, 10);
      p = strchr (p, ' ');
    }
  return 0;
}

/* Writes "PID STARTTIME\n" for this process into @dir/owner. */
static gboolean
write_owner (const char *dir, GError **error)
{
  g_autofree char *path = g_build_filename (dir, OWNER_FILE, NULL);
  g_autofree char *text = g_strdup_printf ("%d %llu\n", (int) getpid (),
                                           process_start_time (getpid ()));
  return g_file_set_contents_full (path, text, -1, G_FILE_SET_CONTENTS_NONE, 0600, error);
}

/* Whether the owner recorded in @dir_fd's owner file is gone; FALSE when
 * it runs (or cannot be judged: then the directory is not ours to
 * remove).  *@has_owner says whether there was a readable owner file. */
static gboolean
owner_gone (int dir_fd, gboolean *has_owner)
{
  char text[64] = "";
  *has_owner = FALSE;
  int fd = openat (dir_fd, OWNER_FILE, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0)
    return FALSE;
  struct stat st;
  ssize_t n = fstat (fd, &st) == 0 && S_ISREG (st.st_mode) ? read (fd, text, sizeof text - 1) : -1;
  close (fd);
  int pid = 0;
  unsigned long long start = 0;
  if (n <= 0 || sscanf (text, "%d %llu", &pid, &start) != 2 || pid <= 0)
    return FALSE;
  *has_owner = TRUE;
  if (kill (pid, 0) != 0 && errno == ESRCH)
    return TRUE;
  /* A live process with that pid that started at another time is not
   * the owner (pids are reused). */
  unsigned long long now_start = process_start_time (pid);
  return now_start != 0 && start != 0 && now_start != start;
}

/* Whether the socket in @dir accepts nobody (its listener is gone): a
 * directory made by a recorder that wrote no owner file. */
static gboolean
socket_refuses (const char *dir)
{
  struct sockaddr_un address = { .sun_family = AF_UNIX };
  g_autofree char *path = g_build_filename (dir, SOCKET_FILE, NULL);
  if (strlen (path) >= sizeof address.sun_path)
    return FALSE;
  strcpy (address.sun_path, path);
  int fd = socket (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0)
    return FALSE;
  int rc = connect (fd, (struct sockaddr *) &address, sizeof address);
  int saved = errno;
  close (fd);
  return rc != 0 && saved == ECONNREFUSED;
}

/* Removes @dir_fd's entries if they are only a socket and an owner file,
 * then the directory @name in @parent_fd.  TRUE when it is gone. */
static gboolean
remove_dir_at (int parent_fd, const char *name)
{
  int dir_fd = openat (parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dir_fd < 0)
    return FALSE;
  DIR *d = fdopendir (dir_fd);
  if (d == NULL)
    {
      close (dir_fd);
      return FALSE;
    }
  gboolean only_ours = TRUE;
  struct dirent *entry;
  while ((entry = readdir (d)) != NULL)
    if (strcmp (entry->d_name, ".") != 0 && strcmp (entry->d_name, "..") != 0
        && strcmp (entry->d_name, SOCKET_FILE) != 0 && strcmp (entry->d_name, OWNER_FILE) != 0)
      only_ours = FALSE;
  if (only_ours)
    {
      unlinkat (dirfd (d), SOCKET_FILE, 0);
      unlinkat (dirfd (d), OWNER_FILE, 0);
    }
  closedir (d);
  return only_ours && unlinkat (parent_fd, name, AT_REMOVEDIR) == 0;
}

guint
cowscope_socket_dir_remove_stale (const char *parent)
{
  int parent_fd = open (parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (parent_fd < 0)
    return 0;
  DIR *d = fdopendir (parent_fd);
  if (d == NULL)
    {
      close (parent_fd);
      return 0;
    }
  guint removed = 0;
  struct dirent *entry;
  while ((entry = readdir (d)) != NULL)
    {
      const char *name = entry->d_name;
      if (!g_str_has_prefix (name, DIR_PREFIX) || strlen (name) != strlen (DIR_PREFIX) + 6)
        continue;
      struct stat st;
      if (fstatat (dirfd (d), name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR (st.st_mode)
          || st.st_uid != geteuid ())
        continue; /* only our own directories are ours to judge */
      int dir_fd = openat (dirfd (d), name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (dir_fd < 0)
        continue;
      gboolean has_owner = FALSE;
      gboolean gone = owner_gone (dir_fd, &has_owner);
      close (dir_fd);
      if (!has_owner)
        {
          g_autofree char *path = g_build_filename (parent, name, NULL);
          g_autofree char *socket_path = g_build_filename (path, SOCKET_FILE, NULL);
          if (g_file_test (socket_path, G_FILE_TEST_EXISTS))
            gone = socket_refuses (path);
          else
            gone = time (NULL) - st.st_mtime > ORPHAN_AGE_S;
        }
      if (gone && remove_dir_at (dirfd (d), name))
        removed++;
    }
  closedir (d);
  return removed;
}

char *
cowscope_socket_dir_create (GError **error)
{
  const char *parent = cowscope_socket_dir_parent ();
  cowscope_socket_dir_remove_stale (parent);
  char *dir = g_build_filename (parent, DIR_PREFIX "XXXXXX", NULL);
  if (!g_mkdtemp_full (dir, 0700))
    {
      int saved = errno;
      g_set_error (error, COWSCOPE_RECORDER_ERROR, COWSCOPE_RECORDER_ERROR_FAILED,
                   "cannot create a socket directory in '%s': %s", parent, g_strerror (saved));
      g_free (dir);
      return NULL;
    }
  GError *local = NULL;
  if (!write_owner (dir, &local))
    {
      g_set_error (error, COWSCOPE_RECORDER_ERROR, COWSCOPE_RECORDER_ERROR_FAILED,
                   "cannot write the socket directory's owner file: %s", local->message);
      g_error_free (local);
      cowscope_socket_dir_remove (dir);
      g_free (dir);
      return NULL;
    }
  return dir;
}

void
cowscope_socket_dir_remove (const char *dir)
{
  if (dir == NULL)
    return;
  g_autofree char *socket_path = g_build_filename (dir, SOCKET_FILE, NULL);
  g_autofree char *owner = g_build_filename (dir, OWNER_FILE, NULL);
  unlink (socket_path);
  unlink (owner);
  rmdir (dir);
}
