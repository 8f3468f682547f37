/* cowscope-cli.c — the command-line tool: record, finalize, report, diff,
 * merge, export.
 *
 * Exit status, for every command: 0 success, 1 a runtime error (the
 * recorder's own: no probe, output exists, cannot create or write the
 * session, target cannot be started), 2 a usage error, 3 a --fail-if
 * budget exceeded (report, diff).  `record` does not mirror the target's exit
 * status: a target that fails, crashes or is killed still gives a
 * complete session and status 0; the summary line (and meta.target_end,
 * meta.exit_status) says how it ended.
 */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cowscope-recorder.h"

#include "cowscope-cli-args.h"
#include "cowscope-cli-commands.h"

#define EXIT_RUNTIME 1
#define EXIT_USAGE 2

static const char usage_text[] =
  "Usage: cowscope-cli COMMAND [OPTION...]\n"
  "\n"
  "Profiles copy-on-write tensor storage.\n"
  "\n"
  "Commands:\n"
  "  record [OPTION...] -- PROGRAM [ARG...]   record PROGRAM into a session\n"
  "  finalize FILE                            complete a session whose recorder died\n"
  "  report FILE [OPTION...]                  summarize a session\n"
  "  diff BEFORE AFTER [OPTION...]            what changed between two sessions\n"
  "  merge SESSION... -o OUT [OPTION...]      merge the sessions of several processes or machines\n"
  "  export FILE --format chrome|csv|sqlite -o OUT   export a session\n"
  "\n"
  "Options:\n"
  "  -h, --help       show this help (COMMAND --help: the command's)\n"
  "  --version        show the version\n"
  "\n"
  "Exit status: 0 ok, 1 runtime error, 2 usage error, 3 a --fail-if budget\n"
  "exceeded.  `record` exits 0 whenever it wrote a session, however the\n"
  "target ended.\n";

static int
usage_error (const char *fmt, ...) G_GNUC_PRINTF (1, 2);

/* Prints "cowscope-cli: MESSAGE" and a hint on stderr; returns 2. */
static int
usage_error (const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  g_autofree char *msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  cowscope_cli_print_error (stderr, NULL, "%s", msg);
  g_printerr ("%s", usage_text);
  return EXIT_USAGE;
}

static const char *
describe_end (const CowscopeRecordResult *r, char *buf, size_t size)
{
  if (g_strcmp0 (r->target_end, "exited") == 0)
    g_snprintf (buf, size, "exited with status %d", r->exit_status);
  else if (r->exit_signal >= 0)
    g_snprintf (buf, size, "%s by signal %d (%s)",
                g_strcmp0 (r->target_end, "crashed") == 0 ? "crashed" : "was killed",
                r->exit_signal, g_strsignal (r->exit_signal));
  else
    g_snprintf (buf, size, "ended (%s)", r->target_end ? r->target_end : "unknown");
  return buf;
}

/* `record`: options up to "--", the program after it. */
static int
cmd_record (int argc, char **argv)
{
  int dash = -1;
  for (int i = 1; i < argc; i++)
    if (strcmp (argv[i], "--") == 0)
      {
        dash = i;
        break;
      }

  g_autofree char *output = NULL;
  gboolean force = FALSE, cuda_only = FALSE, no_cuda = FALSE, no_stacks = FALSE;
  gboolean drop = FALSE, block = FALSE;
  gint64 ring_size = 0;
  g_auto (GStrv) env = NULL;
  GOptionEntry entries[] = {
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output,
      "Session file; %q{NAME} is the environment variable NAME (default: cowscope-PROGRAM-DATE[-rankN].cowscope)", "FILE" },
    { "force", 0, 0, G_OPTION_ARG_NONE, &force, "Overwrite an existing session file", NULL },
    { "env", 0, 0, G_OPTION_ARG_STRING_ARRAY, &env, "Set K=V in the target's environment",
      "K=V" },
    { "cuda-only", 0, 0, G_OPTION_ARG_NONE, &cuda_only,
      "Record only CUDA activity of a program that does not use libcowtensor", NULL },
    { "no-cuda", 0, 0, G_OPTION_ARG_NONE, &no_cuda, "Do not trace CUDA activity", NULL },
    { "no-stacks", 0, 0, G_OPTION_ARG_NONE, &no_stacks, "Do not capture call stacks", NULL },
    { "drop", 0, 0, G_OPTION_ARG_NONE, &drop, "Drop (and count) events when a ring is full (default)",
      NULL },
    { "block", 0, 0, G_OPTION_ARG_NONE, &block, "Make the target wait when a ring is full", NULL },
    { "ring-size", 0, 0, G_OPTION_ARG_INT64, &ring_size,
      "Bytes per thread ring (a power of two, at least 4096)", "BYTES" },
    G_OPTION_ENTRY_NULL
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("-- PROGRAM [ARG...]");
  g_option_context_set_summary (ctx, "Records PROGRAM into a session database.");
  g_option_context_set_description (ctx,
    "Exits 0 whenever a session was written, however the target ended;\n"
    "1 when the recorder failed, 2 for bad arguments.");
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_set_help_enabled (ctx, TRUE);

  int opt_argc = dash >= 0 ? dash : argc;
  g_autofree char **opt_argv = g_new0 (char *, opt_argc + 1);
  for (int i = 0; i < opt_argc; i++)
    opt_argv[i] = argv[i];
  char **parse_argv = opt_argv;
  g_autoptr (GError) error = NULL;
  if (!g_option_context_parse (ctx, &opt_argc, &parse_argv, &error))
    return usage_error ("record: %s", error->message);
  if (opt_argc > 1)
    return usage_error ("record: unexpected '%s' (put the program after '--')", parse_argv[1]);
  if (dash < 0)
    return usage_error ("record: missing '--' before the program to record");
  if (dash + 1 >= argc)
    return usage_error ("record: missing the program after '--'");
  if (drop && block)
    return usage_error ("record: --drop and --block exclude each other");
  if (cuda_only && no_cuda)
    return usage_error ("record: --cuda-only and --no-cuda exclude each other");
  if (ring_size != 0
      && (ring_size < 4096 || ring_size > (gint64) COWSCOPE_RING_MAX_CAPACITY
          || (ring_size & (ring_size - 1)) != 0))
    return usage_error ("record: --ring-size must be a power of two from 4096 to %" G_GUINT64_FORMAT,
                        (guint64) COWSCOPE_RING_MAX_CAPACITY);
  for (char **kv = env; kv && *kv; kv++)
    if (!strchr (*kv, '=') || **kv == '=')
      return usage_error ("record: --env wants K=V, not '%s'", *kv);

  CowscopeRecordOptions options;
  cowscope_record_options_init (&options);
  options.argv = argv + dash + 1;
  options.env = env;
  options.output = output;
  options.force = force;
  options.stacks = !no_stacks;
  options.cuda = !no_cuda;
  options.cuda_only = cuda_only;
  options.policy = block ? COWSCOPE_RING_BLOCK : COWSCOPE_RING_DROP;
  options.ring_capacity = (uint64_t) ring_size;

  CowscopeRecordResult result;
  if (!cowscope_record (&options, &result, &error))
    {
      cowscope_cli_print_error (stderr, NULL, "%s", error->message);
      cowscope_record_result_clear (&result);
      return EXIT_RUNTIME;
    }
  char end[128];
  cowscope_cli_print_error (stderr, NULL, "recorded %s: %" G_GUINT64_FORMAT " events stored, %"
              G_GUINT64_FORMAT " dropped (of %" G_GUINT64_FORMAT " produced) from %"
              G_GUINT64_FORMAT " process%s; the target %s%s.",
              result.session_path, result.totals.events_stored, result.totals.events_dropped,
              result.totals.events_produced, result.processes, result.processes == 1 ? "" : "es",
              describe_end (&result, end, sizeof end),
              result.interrupted ? " (recording interrupted)" : "");
  if (result.totals.dropped > 0 && result.block_stopped_waiting != NULL)
    g_printerr ("cowscope-cli: %" G_GUINT64_FORMAT " records were dropped after the target stopped"
                " waiting for the recorder (%s).\n",
                result.totals.dropped, result.block_stopped_waiting);
  else if (result.totals.dropped > 0)
    g_printerr ("cowscope-cli: %" G_GUINT64_FORMAT " records were dropped because a ring was full;"
                " use --block or a larger --ring-size to keep them all.\n",
                result.totals.dropped);
  if (result.totals.peer_faults > 0)
    g_printerr ("cowscope-cli: %" G_GUINT64_FORMAT " %s from processes that did not follow the"
                " protocol %s refused (see the session's peer_faults table).\n",
                result.totals.peer_faults, result.totals.peer_faults == 1 ? "fault" : "faults",
                result.totals.peer_faults == 1 ? "was" : "were");
  cowscope_record_result_clear (&result);
  return 0;
}

int
main (int argc, char **argv)
{
  if (argc < 2)
    return usage_error ("missing a command");
  const char *cmd = argv[1];
  if (strcmp (cmd, "--help") == 0 || strcmp (cmd, "-h") == 0 || strcmp (cmd, "help") == 0)
    {
      g_print ("%s", usage_text);
      return 0;
    }
  if (strcmp (cmd, "--version") == 0)
    {
      g_print ("cowscope-cli %s\n", COWSCOPE_VERSION);
      return 0;
    }
  if (strcmp (cmd, "record") == 0)
    return cmd_record (argc - 1, argv + 1);
  if (strcmp (cmd, "finalize") == 0)
    return cowscope_cli_finalize (argc - 1, argv + 1);
  if (strcmp (cmd, "report") == 0)
    return cowscope_cli_report (argc - 1, argv + 1);
  if (strcmp (cmd, "diff") == 0)
    return cowscope_cli_diff (argc - 1, argv + 1);
  if (strcmp (cmd, "merge") == 0)
    return cowscope_cli_merge (argc - 1, argv + 1);
  if (strcmp (cmd, "export") == 0)
    return cowscope_cli_export (argc - 1, argv + 1);
  return usage_error ("unknown command '%s'", cmd);
}
