/* cowscope-cli-args.c — see cowscope-cli-args.h. */
#include "cowscope-cli-args.h"

#include "cowscope-text.h"

void
cowscope_cli_print_error (FILE *err, const char *command, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  g_autofree char *message = g_strdup_vprintf (format, args);
  va_end (args);
  g_autofree char *safe = cowscope_text_escape (message);
  if (command != NULL)
    fprintf (err, "cowscope-cli %s: %s\n", command, safe);
  else
    fprintf (err, "cowscope-cli: %s\n", safe);
}

int
cowscope_cli_usage_error (FILE *err, const char *command, const char *message)
{
  cowscope_cli_print_error (err, command, "%s", message);
  fprintf (err, "Try 'cowscope-cli %s --help'.\n", command);
  return COWSCOPE_EXIT_USAGE;
}

int
cowscope_cli_parse_session_args (GOptionContext *context, const char *command, int argc,
                                 char **argv, const gboolean *help, char ***files,
                                 const char **file, FILE *out, FILE *err)
{
  int status = cowscope_cli_parse_session_files (context, command, argc, argv, help, files, 1, 1,
                                                 out, err);
  if (status < 0)
    *file = (*files)[0];
  return status;
}

int
cowscope_cli_parse_session_files (GOptionContext *context, const char *command, int argc,
                                  char **argv, const gboolean *help, char ***files,
                                  guint min_files, guint max_files, FILE *out, FILE *err)
{
  guint n;

  g_autoptr (GError) error = NULL;
  /* A copy: parsing removes what it consumed. */
  g_auto (GStrv) strv = g_new0 (char *, argc + 1);

  for (int i = 0; i < argc; i++)
    strv[i] = g_strdup (argv[i]);
  g_option_context_set_help_enabled (context, FALSE);
  if (!g_option_context_parse_strv (context, &strv, &error))
    return cowscope_cli_usage_error (err, command, error->message);
  if (*help)
    {
      g_autofree char *text = g_option_context_get_help (context, TRUE, NULL);
      fputs (text, out);
      return COWSCOPE_EXIT_OK;
    }
  n = *files != NULL ? g_strv_length (*files) : 0;
  if (n == 0)
    return cowscope_cli_usage_error (err, command, "no session file given");
  if (max_files == 1 && n > 1)
    {
      g_autofree char *message =
        g_strdup_printf ("unexpected argument '%s' (one session file at a time)", (*files)[1]);
      return cowscope_cli_usage_error (err, command, message);
    }
  if (n < min_files || (max_files > 0 && n > max_files))
    {
      g_autofree char *message =
        min_files == max_files
          ? g_strdup_printf ("expected %u session files, not %u", min_files, n)
          : g_strdup_printf ("expected at least %u session files, not %u", min_files, n);
      return cowscope_cli_usage_error (err, command, message);
    }
  return -1;
}
