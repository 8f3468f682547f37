/* cowscope-format-output.c — an output is never its own input (see
 * header). */
#include "cowscope-format-output.h"

#include <glib/gi18n-lib.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* @path with its directory resolved (symbolic links, "..") and its own
 * name kept: where a file created at @path would be.  NULL when the
 * directory does not resolve. */
static char *
resolved_name (const char *path)
{
  g_autofree char *dir = g_path_get_dirname (path);
  g_autofree char *base = g_path_get_basename (path);
  g_autofree char *real_dir = realpath (dir, NULL);
  if (real_dir == NULL || strcmp (base, "/") == 0 || strcmp (base, ".") == 0
      || strcmp (base, "..") == 0)
    return NULL;
  return g_build_filename (real_dir, base, NULL);
}

/* How @output is @input (both exist, same device and inode), in words. */
static const char *
how_same (const char *output, const char *input)
{
  struct stat st;
  if (lstat (output, &st) == 0 && S_ISLNK (st.st_mode))
    return _("a symbolic link to it");
  g_autofree char *out_real = realpath (output, NULL);
  g_autofree char *in_real = realpath (input, NULL);
  if (out_real == NULL || in_real == NULL || strcmp (out_real, in_real) != 0)
    return _("a hard link to it");
  if (lstat (input, &st) == 0 && S_ISLNK (st.st_mode))
    return _("the file it links to");
  return _("the same file");
}

gboolean
cowscope_format_check_output (const char *output, const char *input, const char *role,
                              GError **error)
{
  g_return_val_if_fail (output != NULL && input != NULL && role != NULL, FALSE);

  struct stat in_st, out_st;
  if (stat (input, &in_st) != 0)
    return TRUE;
  const char *how = NULL;
  if (stat (output, &out_st) == 0)
    {
      if (out_st.st_dev == in_st.st_dev && out_st.st_ino == in_st.st_ino)
        how = how_same (output, input);
    }
  if (how == NULL)
    {
      /* What a new file at @output would replace: compared by name, as
       * the input's journal and log need not exist yet. */
      static const struct {
        const char *suffix;
        const char *what;
      } sidecars[] = {
        { "", N_("the same file") },
        { "-journal", N_("its rollback journal") },
        { "-wal", N_("its write-ahead log") },
        { "-shm", N_("its write-ahead log index") },
      };
      g_autofree char *out_name = resolved_name (output);
      g_autofree char *in_real = realpath (input, NULL);
      for (gsize i = 0; out_name != NULL && in_real != NULL && i < G_N_ELEMENTS (sidecars); i++)
        {
          g_autofree char *name = g_strconcat (in_real, sidecars[i].suffix, NULL);
          if (strcmp (out_name, name) == 0)
            {
              how = _(sidecars[i].what);
              break;
            }
        }
    }
  if (how == NULL)
    return TRUE;
  g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_EXIST,
               _("cannot write %s: it would overwrite %s %s (%s); nothing was written"), output, role, input,
               how);
  return FALSE;
}
