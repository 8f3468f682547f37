/* cowscope-probe-path.c — where the in-target probe library is. */
#include "cowscope-probe-path.h"

#include <stdlib.h>

#include "cowscope-install-dirs.h"
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
cowscope_probe_path_find (GError **error)
{
  const char *env = g_getenv (COWSCOPE_ENV_PROBE_PATH);
  if (env && *env)
    {
      char *p = usable (env);
      if (!p)
        g_set_error (error, COWSCOPE_RECORDER_ERROR,
                     COWSCOPE_RECORDER_ERROR_NO_PROBE,
                     "the probe library '%s' (from $%s) does not exist", env,
                     COWSCOPE_ENV_PROBE_PATH);
      return p;
    }

  g_autofree char *build_root = cowscope_install_dirs_build_root ();
  g_autofree char *built = NULL;
  if (build_root)
    {
      built = g_build_filename (build_root, COWSCOPE_PROBE_BUILD_DIR,
                                COWSCOPE_PROBE_NAME, NULL);
      char *p = usable (built);
      if (p)
        return p;
    }
  g_autofree char *installed =
    cowscope_install_dirs_find (COWSCOPE_INSTALL_DIR_PKGLIB, COWSCOPE_PROBE_NAME);
  char *p = usable (installed);
  if (p)
    return p;
  g_autofree char *configured = cowscope_install_dirs_configured (
    COWSCOPE_INSTALL_DIR_PKGLIB, COWSCOPE_PROBE_NAME);
  g_set_error (
    error, COWSCOPE_RECORDER_ERROR, COWSCOPE_RECORDER_ERROR_NO_PROBE,
    "cannot find the probe library %s (looked %sunder the running program's "
    "prefix and at %s); set $%s",
    COWSCOPE_PROBE_NAME, built ? "in the build tree, " : "", configured,
    COWSCOPE_ENV_PROBE_PATH);
  return NULL;
}
