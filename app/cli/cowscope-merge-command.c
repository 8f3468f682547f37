/* cowscope-merge-command.c — `cowscope-cli merge A B ... -o OUT`: its
 * options, and one line about what the session model's merge
 * (app/session/cowscope-session-merge.h) wrote. */
#include "cowscope-cli-commands.h"

#include "cowscope-cli-args.h"
#include "cowscope-session-merge.h"

/* User-visible strings (untranslated for now), in one place. */
#define MSG_PARAMETER      "SESSION... — merge the sessions of several processes or machines into one"
#define MSG_SUMMARY        "Writes one session holding every SESSION, each its own process group labelled by its rank (from the RANK the launcher set when it was recorded) or by --label, its pids remapped to stay apart and its times moved onto the first session's clock."
#define MSG_OPT_OUTPUT     "The merged session (required)"
#define MSG_OPT_LABEL      "The label of the next SESSION, in order (repeat once per SESSION)"
#define MSG_OPT_FORCE      "Replace OUT if it exists (never one of the SESSIONs)"
#define MSG_OPT_HELP       "Show help options"
#define MSG_NO_OUTPUT      "no output given (-o OUT)"
#define MSG_DONE           "cowscope-cli: merged %u sessions (%" G_GUINT64_FORMAT " events) into %s%s\n"
#define MSG_WALL_CLOCK     "; some ran on another machine or boot: aligned through the wall clock (as good as NTP keeps the machines, typically under a millisecond)"
#define MSG_UNALIGNED      "; some were recorded without a clock pair (an older Cowscope): their times are as recorded, not aligned"

int
cowscope_merge_run (int argc, char **argv, FILE *out, FILE *err)
{
  g_autofree char *output = NULL;
  g_auto (GStrv) labels = NULL;
  g_auto (GStrv) files = NULL;
  gboolean force = FALSE, help = FALSE;
  GOptionEntry entries[] = {
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output, MSG_OPT_OUTPUT, "OUT" },
    { "label", 0, 0, G_OPTION_ARG_STRING_ARRAY, &labels, MSG_OPT_LABEL, "NAME" },
    { "force", 0, 0, G_OPTION_ARG_NONE, &force, MSG_OPT_FORCE, NULL },
    { "help", 'h', 0, G_OPTION_ARG_NONE, &help, MSG_OPT_HELP, NULL },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &files, NULL, NULL },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  g_autoptr (GOptionContext) context = g_option_context_new (MSG_PARAMETER);
  g_autoptr (GError) error = NULL;
  CowscopeMergeResult result;
  int status;

  g_option_context_set_summary (context, MSG_SUMMARY);
  g_option_context_add_main_entries (context, entries, NULL);
  status = cowscope_cli_parse_session_files (context, "merge", argc, argv, &help, &files, 2, 0,
                                             out, err);
  if (status >= 0)
    return status;
  if (output == NULL)
    return cowscope_cli_usage_error (err, "merge", MSG_NO_OUTPUT);

  if (!cowscope_session_merge ((const char *const *) files, g_strv_length (files),
                               (const char *const *) labels, output, force, &result, &error))
    {
      if (error->domain == G_OPTION_ERROR)
        return cowscope_cli_usage_error (err, "merge", error->message);
      cowscope_cli_print_error (err, "merge", "%s", error->message);
      return COWSCOPE_EXIT_ERROR;
    }
  fprintf (out, MSG_DONE, result.sessions, result.events, output,
           result.unaligned ? MSG_UNALIGNED : result.aligned_by_wall_clock ? MSG_WALL_CLOCK : "");
  return COWSCOPE_EXIT_OK;
}

int
cowscope_cli_merge (int argc, char **argv)
{
  return cowscope_merge_run (argc, argv, stdout, stderr);
}
