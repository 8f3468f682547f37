/* cowscope-install-dirs.c — see cowscope-install-dirs.h. */
#include "cowscope-install-dirs.h"

/* The build defines the layout: COWSCOPE_PREFIX (absolute),
 * COWSCOPE_BINDIR_TO_PREFIX (".." for bindir "bin"; "" when bindir is
 * outside the prefix, which makes the install not relocatable) and the
 * directories, relative to the prefix unless configured outside it. */
#if !defined(COWSCOPE_PREFIX) || !defined(COWSCOPE_BINDIR_TO_PREFIX) ||        \
  !defined(COWSCOPE_BINDIR) || !defined(COWSCOPE_PKGLIBDIR) ||                 \
  !defined(COWSCOPE_DATADIR) || !defined(COWSCOPE_LOCALEDIR)
#error "the build must define the install layout (probes/recorder/meson.build)"
#endif

/* How many folders above the running binary a build root may be
 * (build/tests/gui/test-x is two). */
#define BUILD_ROOT_MAX_DEPTH 4

static const char *
dir_path (CowscopeInstallDir dir)
{
  switch (dir)
    {
      case COWSCOPE_INSTALL_DIR_BIN: return COWSCOPE_BINDIR;
      case COWSCOPE_INSTALL_DIR_PKGLIB: return COWSCOPE_PKGLIBDIR;
      case COWSCOPE_INSTALL_DIR_DATA: return COWSCOPE_DATADIR;
      case COWSCOPE_INSTALL_DIR_LOCALE: return COWSCOPE_LOCALEDIR;
    }
  g_return_val_if_reached (COWSCOPE_DATADIR);
}

/* The folder of the running binary, symbolic links resolved. */
static char *
exe_dir (void)
{
  g_autofree char *exe = g_file_read_link ("/proc/self/exe", NULL);

  return exe != NULL ? g_path_get_dirname (exe) : NULL;
}

char *
cowscope_install_dirs_build_root (void)
{
  g_autofree char *dir = exe_dir ();

  for (int depth = 0; dir != NULL && depth <= BUILD_ROOT_MAX_DEPTH; depth++)
    {
      g_autofree char *marker =
        g_build_filename (dir, "meson-private", "coredata.dat", NULL);
      char *parent;

      if (g_file_test (marker, G_FILE_TEST_IS_REGULAR))
        return g_steal_pointer (&dir);
      parent = g_path_get_dirname (dir);
      if (g_strcmp0 (parent, dir) == 0)
        {
          g_free (parent);
          break;
        }
      g_free (dir);
      dir = parent;
    }
  return NULL;
}

/* @dir (with @name) under @prefix; @dir may be absolute (configured
 * outside the prefix), which @prefix then does not change. */
static char *
under (const char *prefix, CowscopeInstallDir dir, const char *name)
{
  const char *path = dir_path (dir);

  if (g_path_is_absolute (path))
    return g_build_filename (path, name, NULL);
  return g_build_filename (prefix, path, name, NULL);
}

char *
cowscope_install_dirs_configured (CowscopeInstallDir dir, const char *name)
{
  return under (COWSCOPE_PREFIX, dir, name);
}

char *
cowscope_install_dirs_find (CowscopeInstallDir dir, const char *name)
{
  g_autofree char *bindir = exe_dir ();
  g_autofree char *configured = cowscope_install_dirs_configured (dir, name);

  if (bindir != NULL && COWSCOPE_BINDIR_TO_PREFIX[0] != '\0')
    {
      g_autofree char *relative_prefix =
        g_build_filename (bindir, COWSCOPE_BINDIR_TO_PREFIX, NULL);
      g_autofree char *prefix = g_canonicalize_filename (relative_prefix, NULL);
      g_autofree char *relocated = under (prefix, dir, name);

      if (g_file_test (relocated, G_FILE_TEST_EXISTS))
        return g_steal_pointer (&relocated);
    }
  if (g_file_test (configured, G_FILE_TEST_EXISTS))
    return g_steal_pointer (&configured);
  return NULL;
}
