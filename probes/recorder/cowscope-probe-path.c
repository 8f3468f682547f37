/* cowscope-probe-path.c — where the in-target probe library is. */
#include "cowscope-probe-path.h"

#include <stdlib.h>

#include "cowscope-recorder-error.h"

/* An absolute, canonical form of @path when it names a regular file. */
static char *
usable (const char *path)
{
  if (!path || !*path || !g_file_test (path, G_FILE_TEST_IS_REGULAR))
    return NULL;
  char *real = realpath (path, NULL);
  if (!real)
    return NULL;
  char *result = g_strdup (real);
  free (real);
  return result;
}

char *
cowscope_probe_path_find (const char *build_relative, const char *installed, GError **error)
{
  const char *env = g_getenv (COWSCOPE_ENV_PROBE_PATH);
  if (env && *env)
    {
      char *p = usable (env);
      if (!p)
        g_set_error (error, COWSCOPE_RECORDER_ERROR, COWSCOPE_RECORDER_ERROR_NO_PROBE,
                     "the probe library '%s' (from $%s) does not exist", env,
                     COWSCOPE_ENV_PROBE_PATH);
      return p;
    }

  g_autofree char *candidate = NULL;
  if (build_relative && *build_relative)
    {
      g_autofree char *exe = g_file_read_link ("/proc/self/exe", NULL);
      if (exe)
        {
          g_autofree char *dir = g_path_get_dirname (exe);
          candidate = g_build_filename (dir, build_relative, NULL);
          char *p = usable (candidate);
          if (p)
            return p;
        }
    }
  char *p = usable (installed);
  if (p)
    return p;
  g_set_error (error, COWSCOPE_RECORDER_ERROR, COWSCOPE_RECORDER_ERROR_NO_PROBE,
               "cannot find the probe library (looked at %s%s%s); set $%s",
               candidate ? candidate : "", candidate ? " and " : "",
               installed ? installed : "(no installed path)", COWSCOPE_ENV_PROBE_PATH);
  return NULL;
}
