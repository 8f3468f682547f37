/* cowscope-export-command.c — `cowscope-cli export`: its options, and a
 * percentage on a terminal while the session model's exporter
 * (app/session/cowscope-export.h) writes. */
#include "cowscope-cli-commands.h"

#include <string.h>
#include <unistd.h>

#include "cowscope-cli-args.h"
#include "cowscope-export.h"
#include "cowscope-text.h"

/* User-visible strings (untranslated for now), in one place. */
#define MSG_PARAMETER      "FILE — write a session as a trace, CSV files or a compacted copy"
#define MSG_SUMMARY        "Formats:\n  chrome  Trace Event JSON for the Perfetto UI (https://ui.perfetto.dev)\n  csv     a directory with one CSV file per table\n  sqlite  a compacted copy of the session database"
#define MSG_OPT_FORMAT     "Output format: chrome, csv or sqlite (default chrome)"
#define MSG_OPT_OUTPUT     "Where to write (a file; a directory for csv)"
#define MSG_OPT_FORCE      "Replace OUT if it exists"
#define MSG_OPT_HELP       "Show help options"
#define MSG_NO_OUTPUT      "no output given (-o OUT)"
#define MSG_BAD_FORMAT     "unknown format '%s' (use chrome, csv or sqlite)"
#define MSG_NOT_FINALIZED  "warning: %s was not finalized: exporting the raw events as recorded (run 'cowscope-cli finalize %s' first for the full picture)"
#define MSG_PROGRESS       "\rexporting %s: %3d%%"

/* The percentage drawn on a terminal. */
typedef struct {
  FILE *stream;  /* NULL: not a terminal, nothing is drawn */
  const char *label;
  int percent;   /* last drawn, -1 none */
} Percentage;

/* CowscopeExportProgressFunc: redraws the percentage when it changed (a
 * copy whose total is unknown, -1, draws nothing); never cancels. */
static gboolean
draw_percentage (double fraction, gpointer data)
{
  Percentage *shown = data;
  int percent = (int) (fraction * 100);
  if (shown->stream != NULL && fraction >= 0 && percent != shown->percent)
    {
      fprintf (shown->stream, MSG_PROGRESS, shown->label, percent);
      fflush (shown->stream);
      shown->percent = percent;
    }
  return TRUE;
}

int
cowscope_export_run (int argc, char **argv, FILE *out, FILE *err)
{
  g_autofree char *format = NULL;
  g_autofree char *output = NULL;
  g_auto (GStrv) args = NULL;
  const char *file = NULL;
  gboolean force = FALSE, help = FALSE, ok;
  GOptionEntry entries[] = {
    { "format", 'f', 0, G_OPTION_ARG_STRING, &format, MSG_OPT_FORMAT, "FORMAT" },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output, MSG_OPT_OUTPUT, "OUT" },
    { "force", 0, 0, G_OPTION_ARG_NONE, &force, MSG_OPT_FORCE, NULL },
    { "help", 'h', 0, G_OPTION_ARG_NONE, &help, MSG_OPT_HELP, NULL },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &args, NULL, NULL },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  g_autoptr (GOptionContext) context = g_option_context_new (MSG_PARAMETER);
  g_autoptr (GError) error = NULL;
  g_autoptr (CowscopeSessionTables) session = NULL;

  g_option_context_set_summary (context, MSG_SUMMARY);
  g_option_context_add_main_entries (context, entries, NULL);
  int status = cowscope_cli_parse_session_args (context, "export", argc, argv, &help, &args,
                                                &file, out, err);
  if (status >= 0)
    return status;
  if (format == NULL)
    format = g_strdup ("chrome");
  if (strcmp (format, "chrome") != 0 && strcmp (format, "csv") != 0
      && strcmp (format, "sqlite") != 0)
    {
      g_autofree char *message = g_strdup_printf (MSG_BAD_FORMAT, format);
      return cowscope_cli_usage_error (err, "export", message);
    }
  if (output == NULL || *output == '\0')
    return cowscope_cli_usage_error (err, "export", MSG_NO_OUTPUT);

  session = cowscope_session_tables_open (file, &error);
  if (session == NULL)
    {
      cowscope_cli_print_error (err, "export", "%s", error->message);
      return COWSCOPE_EXIT_ERROR;
    }

  g_autofree char *label = cowscope_text_escape (output);
  Percentage shown = { isatty (fileno (err)) ? err : NULL, label, -1 };
  CowscopeExportProgress progress = { draw_percentage, &shown };
  if (strcmp (format, "chrome") == 0)
    ok = cowscope_export_chrome (session, output, force, &progress, &error);
  else if (strcmp (format, "csv") == 0)
    ok = cowscope_export_csv (session, output, force, &progress, &error);
  else
    ok = cowscope_export_sqlite (session, output, force, &progress, &error);
  if (shown.stream != NULL && shown.percent >= 0)
    {
      /* Erases the progress line. */
      fputs ("\r\033[K", shown.stream);
      fflush (shown.stream);
    }
  if (!ok)
    {
      cowscope_cli_print_error (err, "export", "%s", error->message);
      return COWSCOPE_EXIT_ERROR;
    }
  /* Said once the export is written: a failed one says only why. */
  if (!cowscope_session_tables_is_finalized (session))
    cowscope_cli_print_error (err, "export", MSG_NOT_FINALIZED, file, file);
  return COWSCOPE_EXIT_OK;
}

int
cowscope_cli_export (int argc, char **argv)
{
  return cowscope_export_run (argc, argv, stdout, stderr);
}
