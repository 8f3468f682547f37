/* cowscope-diff-command.c — `cowscope-cli diff BEFORE AFTER`: its
 * options, its --fail-if budgets on change, and printing the session
 * model's diff (app/session/cowscope-session-diff.h). */
#include "cowscope-cli-commands.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "cowscope-budget.h"
#include "cowscope-cli-args.h"
#include "cowscope-report.h"
#include "cowscope-session-diff.h"

/* User-visible strings (untranslated for now), in one place. */
#define MSG_PARAMETER        "BEFORE AFTER — what changed between two sessions"
#define MSG_SUMMARY          "Prints what changed from the session BEFORE to the session AFTER: copies, bytes copied, steals, lazy clones, bytes saved, eager fallbacks and simulate-mode warnings, by call site (matched by function and file, then the nearest line), by operation and by range, largest change first."
#define MSG_OPT_JSON         "Print the diff as one JSON object"
#define MSG_OPT_FAIL_IF      "Exit with status 3 when EXPR holds (repeatable), e.g. 'copied_bytes.increase > 5%' or 'new_warnings > 0'"
#define MSG_OPT_TOP          "List at most N rows of each kind (default 20)"
#define MSG_OPT_HELP         "Show help options"
#define MSG_SAME_FILE        "BEFORE and AFTER are the same file (%s): give two sessions to compare"
#define MSG_BUDGET_EXCEEDED  "budget exceeded: %s\n"
#define MSG_DESCRIPTION_HEAD "Metrics for --fail-if (also the \"metrics\" object of --json): METRIC.before, METRIC.after, METRIC.change (after − before), METRIC.increase and METRIC.decrease (the change that way, else 0), where METRIC is one of\n  "
#define MSG_DESCRIPTION_TAIL "\nand new_warnings, gone_warnings (simulate-mode warnings that appeared or went away).\nOperators: > >= < <= == !=.  Numbers may end in K M G T (×1000) or Ki Mi Gi Ti (×1024), or in % (of the BEFORE value).\nExit status: 0 ok, 1 error, 2 usage, 3 budget exceeded."
#define MSG_KNOWN            "METRIC.before|after|change|increase|decrease with METRIC one of %s; new_warnings, gone_warnings"

/* TRUE when @a and @b name the same file (both exist). */
static gboolean
same_file (const char *a, const char *b)
{
  struct stat sa, sb;

  return stat (a, &sa) == 0 && stat (b, &sb) == 0 && sa.st_dev == sb.st_dev
         && sa.st_ino == sb.st_ino;
}

static int
print_json (JsonObject *object, FILE *out)
{
  g_autoptr (JsonGenerator) generator = json_generator_new ();
  g_autoptr (JsonNode) root = json_node_new (JSON_NODE_OBJECT);
  g_autofree char *text = NULL;

  json_node_set_object (root, object);
  json_generator_set_root (generator, root);
  json_generator_set_pretty (generator, TRUE);
  text = json_generator_to_data (generator, NULL);
  fputs (text, out);
  fputc ('\n', out);
  return 0;
}

int
cowscope_diff_run (int argc, char **argv, FILE *out, FILE *err)
{
  gboolean json = FALSE, help = FALSE;
  g_auto (GStrv) fail_if = NULL;
  g_auto (GStrv) files = NULL;
  gint top = 20;
  GOptionEntry entries[] = {
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, MSG_OPT_JSON, NULL },
    { "fail-if", 0, 0, G_OPTION_ARG_STRING_ARRAY, &fail_if, MSG_OPT_FAIL_IF, "EXPR" },
    { "top", 0, 0, G_OPTION_ARG_INT, &top, MSG_OPT_TOP, "N" },
    { "help", 'h', 0, G_OPTION_ARG_NONE, &help, MSG_OPT_HELP, NULL },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &files, NULL, NULL },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  g_autoptr (GOptionContext) context = g_option_context_new (MSG_PARAMETER);
  g_autoptr (GPtrArray) budgets = g_ptr_array_new_with_free_func ((GDestroyNotify) cowscope_budget_free);
  g_autoptr (GError) error = NULL;
  g_autoptr (CowscopeSessionTables) before = NULL;
  g_autoptr (CowscopeSessionTables) after = NULL;
  g_autoptr (CowscopeSessionDiff) diff = NULL;
  g_autoptr (JsonObject) object = NULL;
  g_autofree char *report_names = g_strjoinv (", ", (char **) cowscope_report_metrics ());
  g_autofree char *known = g_strdup_printf (MSG_KNOWN, report_names);
  int status;

  {
    g_autofree char *description = g_strconcat (MSG_DESCRIPTION_HEAD, report_names,
                                                MSG_DESCRIPTION_TAIL, NULL);
    g_option_context_set_description (context, description);
  }
  g_option_context_set_summary (context, MSG_SUMMARY);
  g_option_context_add_main_entries (context, entries, NULL);
  status = cowscope_cli_parse_session_files (context, "diff", argc, argv, &help, &files, 2, 2,
                                             out, err);
  if (status >= 0)
    return status;
  if (top < 0)
    top = 0;
  for (gsize i = 0; fail_if != NULL && fail_if[i] != NULL; i++)
    {
      CowscopeBudget *budget = cowscope_budget_parse_for (fail_if[i],
                                                          cowscope_session_diff_metrics (), TRUE,
                                                          known, &error);
      if (budget == NULL)
        return cowscope_cli_usage_error (err, "diff", error->message);
      g_ptr_array_add (budgets, budget);
    }
  if (same_file (files[0], files[1]))
    {
      g_autofree char *message = g_strdup_printf (MSG_SAME_FILE, files[0]);
      return cowscope_cli_usage_error (err, "diff", message);
    }

  before = cowscope_session_tables_open (files[0], &error);
  if (before != NULL)
    after = cowscope_session_tables_open (files[1], &error);
  if (after != NULL)
    diff = cowscope_session_diff_build (before, after, &error);
  if (diff == NULL)
    {
      cowscope_cli_print_error (err, "diff", "%s", error->message);
      return COWSCOPE_EXIT_ERROR;
    }
  for (int s = 0; s < 2; s++)
    if (!cowscope_session_tables_is_finalized (s == 0 ? before : after))
      {
        g_autofree char *warning = cowscope_report_not_finalized_warning (files[s]);
        cowscope_cli_print_error (err, "diff", "warning: %s", warning);
      }

  object = cowscope_session_diff_to_json (diff, (guint) top);
  if (json)
    print_json (object, out);
  else
    {
      g_autofree char *text = cowscope_session_diff_format_text (object);
      fputs (text, out);
    }
  if (fflush (out) != 0 || ferror (out))
    {
      fprintf (err, "cowscope-cli diff: cannot write the diff: %s\n", g_strerror (errno));
      return COWSCOPE_EXIT_ERROR;
    }

  status = COWSCOPE_EXIT_OK;
  for (guint i = 0; i < budgets->len; i++)
    {
      const CowscopeBudget *budget = budgets->pdata[i];
      gint64 value = 0, base = 0;
      if (cowscope_session_diff_metric (diff, budget->metric, &value, &base)
          && cowscope_budget_exceeded_relative (budget, value, base))
        {
          g_autofree char *why = cowscope_budget_describe (budget, value, base);
          fprintf (err, MSG_BUDGET_EXCEEDED, why);
          status = COWSCOPE_EXIT_BUDGET;
        }
    }
  return status;
}

int
cowscope_cli_diff (int argc, char **argv)
{
  return cowscope_diff_run (argc, argv, stdout, stderr);
}
