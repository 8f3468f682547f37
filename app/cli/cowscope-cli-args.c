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
  if (*files == NULL || (*files)[0] == NULL)
    return cowscope_cli_usage_error (err, command, "no session file given");
  if ((*files)[1] != NULL)
    {
      g_autofree char *message =
        g_strdup_printf ("unexpected argument '%s' (one session file at a time)", (*files)[1]);
      return cowscope_cli_usage_error (err, command, message);
    }
  *file = (*files)[0];
  return -1;
}
