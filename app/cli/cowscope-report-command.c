/* cowscope-report-command.c — `cowscope-cli report`: its options, its
 * --fail-if budgets, and printing the session model's report
 * (app/session/cowscope-report.h). */
#include "cowscope-cli-commands.h"

#include <errno.h>
#include <string.h>

#include "cowscope-budget.h"
#include "cowscope-cli-args.h"
#include "cowscope-report.h"

/* User-visible strings (untranslated for now), in one place. */
#define MSG_PARAMETER        "FILE — summarize a recorded session"
#define MSG_SUMMARY          "Prints what a session recorded: lazy clones, copies and steals with their bytes, the call sites that copied most, simulate-mode warnings, CUDA copies and dropped events."
#define MSG_OPT_JSON         "Print the report as one JSON object"
#define MSG_OPT_FAIL_IF      "Exit with status 3 when EXPR holds (repeatable), e.g. 'copied_bytes > 64Mi'"
#define MSG_OPT_TOP          "List at most N operations and call sites (default 5)"
#define MSG_OPT_HELP         "Show help options"
#define MSG_BUDGET_EXCEEDED  "budget exceeded: %s\n"
#define MSG_DESCRIPTION_HEAD "Metrics for --fail-if (also the \"metrics\" object of --json):\n  "
#define MSG_DESCRIPTION_TAIL "\nOperators: > >= < <= == !=.  Numbers may end in K M G T (×1000) or Ki Mi Gi Ti (×1024).\nExit status: 0 ok, 1 error, 2 usage, 3 budget exceeded."

int
cowscope_report_run (int argc, char **argv, FILE *out, FILE *err)
{
  gboolean json = FALSE, help = FALSE;
  g_auto (GStrv) fail_if = NULL;
  g_auto (GStrv) args = NULL;
  gint top = 5;
  GOptionEntry entries[] = {
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, MSG_OPT_JSON, NULL },
    { "fail-if", 0, 0, G_OPTION_ARG_STRING_ARRAY, &fail_if, MSG_OPT_FAIL_IF, "EXPR" },
    { "top", 0, 0, G_OPTION_ARG_INT, &top, MSG_OPT_TOP, "N" },
    { "help", 'h', 0, G_OPTION_ARG_NONE, &help, MSG_OPT_HELP, NULL },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &args, NULL, NULL },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  g_autoptr (GOptionContext) context = g_option_context_new (MSG_PARAMETER);
  g_autoptr (GPtrArray) budgets = g_ptr_array_new_with_free_func ((GDestroyNotify) cowscope_budget_free);
  g_autoptr (GError) error = NULL;
  g_autoptr (CowscopeSessionTables) session = NULL;
  g_autoptr (JsonObject) report = NULL;
  const char *file = NULL;
  JsonObject *metrics;
  int status = COWSCOPE_EXIT_OK;

  {
    g_autofree char *names = g_strjoinv (", ", (char **) cowscope_report_metrics ());
    g_autofree char *description = g_strconcat (MSG_DESCRIPTION_HEAD, names,
                                                MSG_DESCRIPTION_TAIL, NULL);
    g_option_context_set_description (context, description);
  }
  g_option_context_set_summary (context, MSG_SUMMARY);
  g_option_context_add_main_entries (context, entries, NULL);
  status = cowscope_cli_parse_session_args (context, "report", argc, argv, &help, &args,
                                            &file, out, err);
  if (status >= 0)
    return status;
  status = COWSCOPE_EXIT_OK;
  if (top < 0)
    top = 0;
  for (gsize i = 0; fail_if != NULL && fail_if[i] != NULL; i++)
    {
      CowscopeBudget *budget = cowscope_budget_parse (fail_if[i], &error);
      if (budget == NULL)
        return cowscope_cli_usage_error (err, "report", error->message);
      g_ptr_array_add (budgets, budget);
    }

  session = cowscope_session_tables_open (file, &error);
  if (session == NULL)
    {
      cowscope_cli_print_error (err, "report", "%s", error->message);
      return COWSCOPE_EXIT_ERROR;
    }
  report = cowscope_report_build (session, (guint) top, &error);
  if (report == NULL)
    {
      cowscope_cli_print_error (err, "report", "%s", error->message);
      return COWSCOPE_EXIT_ERROR;
    }
  if (!cowscope_session_tables_is_finalized (session))
    {
      g_autofree char *warning = cowscope_report_not_finalized_warning (file);
      cowscope_cli_print_error (err, "report", "warning: %s", warning);
    }

  if (json)
    {
      g_autoptr (JsonGenerator) generator = json_generator_new ();
      g_autoptr (JsonNode) root = json_node_new (JSON_NODE_OBJECT);
      g_autofree char *text = NULL;
      json_node_set_object (root, report);
      json_generator_set_root (generator, root);
      json_generator_set_pretty (generator, TRUE);
      text = json_generator_to_data (generator, NULL);
      fputs (text, out);
      fputc ('\n', out);
    }
  else
    {
      g_autofree char *text = cowscope_report_format_text (report);
      fputs (text, out);
    }
  if (fflush (out) != 0 || ferror (out))
    {
      cowscope_cli_print_error (err, "report", "cannot write the report: %s",
                                g_strerror (errno));
      return COWSCOPE_EXIT_ERROR;
    }

  metrics = json_object_get_object_member (report, "metrics");
  for (guint i = 0; i < budgets->len; i++)
    {
      const CowscopeBudget *budget = budgets->pdata[i];
      gint64 value = json_object_get_int_member (metrics, budget->metric);
      if (cowscope_budget_exceeded (budget, value))
        {
          g_autofree char *why = cowscope_budget_describe (budget, value, 0);
          fprintf (err, MSG_BUDGET_EXCEEDED, why);
          status = COWSCOPE_EXIT_BUDGET;
        }
    }
  return status;
}

int
cowscope_cli_report (int argc, char **argv)
{
  return cowscope_report_run (argc, argv, stdout, stderr);
}
