/* cowscope-output.c — all-or-nothing output files. */
#include "cowscope-output.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* User-visible messages (untranslated for now), in one place. */
#define MSG_EXISTS      "%s already exists (use --force to replace it)"
#define MSG_IS_DIR      "%s is a directory"
#define MSG_CREATE      "cannot create %s: %s"
#define MSG_WRITE       "cannot write %s: %s"
#define MSG_RENAME      "cannot move the output into place as %s: %s"

struct _CowscopeOutput {
  char *path;      /* where the result goes */
  char *tmp_path;  /* what is written now; NULL when writing @path directly */
  FILE *file;
  int error_errno; /* first write failure, 0 if none */
};

/* Remembers the first failed write's errno. */
static void
note_failure (CowscopeOutput *output)
{
  if (output->error_errno == 0)
    output->error_errno = errno != 0 ? errno : EIO;
}

CowscopeOutput *
cowscope_output_open (const char *path, gboolean force, GError **error)
{
  CowscopeOutput *output;
  struct stat st;
  int fd;

  g_return_val_if_fail (path != NULL, NULL);

  output = g_new0 (CowscopeOutput, 1);
  output->path = g_strdup (path);

  if (stat (path, &st) == 0 && !S_ISREG (st.st_mode))
    {
      if (S_ISDIR (st.st_mode))
        {
          g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_ISDIR, MSG_IS_DIR,
                       path);
          cowscope_output_abort (output);
          return NULL;
        }
      /* A device or FIFO: write it directly. */
      fd = open (path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
    }
  else
    {
      g_autofree char *dir = NULL;
      g_autofree char *base = NULL;
      g_autofree char *tmpl = NULL;

      if (!force && g_file_test (path, G_FILE_TEST_EXISTS))
        {
          g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_EXIST, MSG_EXISTS,
                       path);
          cowscope_output_abort (output);
          return NULL;
        }
      dir = g_path_get_dirname (path);
      base = g_path_get_basename (path);
      tmpl = g_strdup_printf (".%s.XXXXXX.part", base);
      output->tmp_path = g_build_filename (dir, tmpl, NULL);
      fd = g_mkstemp_full (output->tmp_path, O_WRONLY | O_CLOEXEC, 0644);
      if (fd < 0)
        g_clear_pointer (&output->tmp_path, g_free);
    }
  if (fd < 0)
    {
      int saved_errno = errno;
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (saved_errno),
                   MSG_CREATE, path, g_strerror (saved_errno));
      cowscope_output_abort (output);
      return NULL;
    }
  output->file = fdopen (fd, "w");
  if (output->file == NULL)
    {
      int saved_errno = errno;
      close (fd);
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (saved_errno),
                   MSG_CREATE, path, g_strerror (saved_errno));
      cowscope_output_abort (output);
      return NULL;
    }
  /* Large writes: a trace is written in many small pieces. */
  setvbuf (output->file, NULL, _IOFBF, 1 << 16);
  return output;
}

gboolean
cowscope_output_ok (CowscopeOutput *output)
{
  return output->error_errno == 0;
}

void
cowscope_output_write (CowscopeOutput *output, const char *data, gsize length)
{
  if (output->error_errno != 0 || length == 0)
    return;
  errno = 0;
  if (fwrite (data, 1, length, output->file) != length)
    note_failure (output);
}

void
cowscope_output_puts (CowscopeOutput *output, const char *text)
{
  cowscope_output_write (output, text, strlen (text));
}

void
cowscope_output_printf (CowscopeOutput *output, const char *format, ...)
{
  va_list args;

  if (output->error_errno != 0)
    return;
  va_start (args, format);
  errno = 0;
  if (vfprintf (output->file, format, args) < 0)
    note_failure (output);
  va_end (args);
}

void
cowscope_output_json_string (CowscopeOutput *output, const char *text)
{
  g_autofree char *valid = NULL;
  GString *escaped;

  if (text == NULL)
    {
      cowscope_output_puts (output, "null");
      return;
    }
  if (!g_utf8_validate (text, -1, NULL))
    text = valid = g_utf8_make_valid (text, -1);

  escaped = g_string_sized_new (strlen (text) + 2);
  g_string_append_c (escaped, '"');
  for (const char *p = text; *p != '\0'; p++)
    {
      unsigned char c = (unsigned char) *p;
      switch (c)
        {
        case '"': g_string_append (escaped, "\\\""); break;
        case '\\': g_string_append (escaped, "\\\\"); break;
        case '\n': g_string_append (escaped, "\\n"); break;
        case '\r': g_string_append (escaped, "\\r"); break;
        case '\t': g_string_append (escaped, "\\t"); break;
        default:
          if (c < 0x20 || c == 0x7f)
            g_string_append_printf (escaped, "\\u%04x", c);
          else
            g_string_append_c (escaped, (char) c);
        }
    }
  g_string_append_c (escaped, '"');
  cowscope_output_write (output, escaped->str, escaped->len);
  g_string_free (escaped, TRUE);
}

/* Frees @output's memory only. */
static void
output_free (CowscopeOutput *output)
{
  g_free (output->path);
  g_free (output->tmp_path);
  g_free (output);
}

gboolean
cowscope_output_commit (CowscopeOutput *output, GError **error)
{
  FILE *file = output->file;
  int failure = output->error_errno;

  output->file = NULL;
  errno = 0;
  if (fflush (file) != 0 && failure == 0)
    failure = errno != 0 ? errno : EIO;
  if (ferror (file) && failure == 0)
    failure = EIO;
  /* A regular file must be on disk before it replaces anything. */
  if (failure == 0 && output->tmp_path != NULL && fsync (fileno (file)) != 0)
    failure = errno;
  errno = 0;
  if (fclose (file) != 0 && failure == 0)
    failure = errno != 0 ? errno : EIO;

  if (failure == 0 && output->tmp_path != NULL
      && rename (output->tmp_path, output->path) != 0)
    {
      int saved_errno = errno;
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (saved_errno),
                   MSG_RENAME, output->path, g_strerror (saved_errno));
      unlink (output->tmp_path);
      output_free (output);
      return FALSE;
    }
  if (failure != 0)
    {
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (failure),
                   MSG_WRITE, output->path, g_strerror (failure));
      if (output->tmp_path != NULL)
        unlink (output->tmp_path);
      output_free (output);
      return FALSE;
    }
  output_free (output);
  return TRUE;
}

void
cowscope_output_abort (CowscopeOutput *output)
{
  if (output == NULL)
    return;
  if (output->file != NULL)
    fclose (output->file);
  if (output->tmp_path != NULL)
    unlink (output->tmp_path);
  output_free (output);
}
