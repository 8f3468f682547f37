/* cowscope-finalize-command.c — `cowscope-cli finalize`: its arguments
 * and messages over the recorder's finalizer
 * (probes/recorder/cowscope-session-finalize.h). */
#include "cowscope-cli-commands.h"

#include <string.h>

#include "cowscope-cli-args.h"
#include "cowscope-session-finalize.h"
#include "cowscope-socket-dir.h"

/* User-visible strings (untranslated for now), in one place. */
#define MSG_HELP      "Usage: cowscope-cli finalize FILE\n\nCompletes a session whose recorder was killed before it finished:\nbuilds the derived tables, indexes and checkpoints.  The file is\nchecked before and after; what can be rebuilt from its events is\nrepaired, anything else is refused and the file left as it was.\n"
#define MSG_ONE_FILE  "expected exactly one session FILE"
#define MSG_FINALIZED "finalized %s"
#define MSG_REPAIRED  "finalized %s after a repair: %s"

int
cowscope_finalize_run (int argc, char **argv, FILE *out, FILE *err)
{
  if (argc == 2 && (strcmp (argv[1], "--help") == 0 || strcmp (argv[1], "-h") == 0))
    {
      fputs (MSG_HELP, out);
      return COWSCOPE_EXIT_OK;
    }
  /* Messages start "cowscope-cli: ", as they always have for finalize. */
  if (argc != 2 || argv[1][0] == '-')
    {
      cowscope_cli_print_error (err, NULL, "finalize: " MSG_ONE_FILE);
      fputs ("Try 'cowscope-cli finalize --help'.\n", err);
      return COWSCOPE_EXIT_USAGE;
    }
  g_autoptr (GError) error = NULL;
  g_autofree char *repaired = NULL;
  /* A recorder killed before it finished left its socket directory. */
  cowscope_socket_dir_remove_stale (cowscope_socket_dir_parent ());
  if (!cowscope_session_finalize_file (argv[1], &repaired, &error))
    {
      cowscope_cli_print_error (err, NULL, "%s", error->message);
      return COWSCOPE_EXIT_ERROR;
    }
  if (repaired != NULL)
    cowscope_cli_print_error (err, NULL, MSG_REPAIRED, argv[1], repaired);
  else
    cowscope_cli_print_error (err, NULL, MSG_FINALIZED, argv[1]);
  return COWSCOPE_EXIT_OK;
}

int
cowscope_cli_finalize (int argc, char **argv)
{
  return cowscope_finalize_run (argc, argv, stdout, stderr);
}
