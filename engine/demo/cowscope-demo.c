/* cowscope-demo.c — a target program for cowscope: the command line and
 * the table of scenarios.
 *
 * Runs small workloads over libcowtensor's public API that make every
 * kind of copy-on-write event happen (lazy clones, materialization by
 * copy and by steal, eager fallbacks, simulate-mode warnings, concurrent
 * materialization), checks its own results, and ends with a summary of
 * what the engine did in each scenario.  Each scenario is a file of its
 * own (demo-SCENARIO.c); demo-harness.c holds what they share.
 *
 * The summary comes from a counting trace sink that the demo installs
 * only when no other sink is present: under the profiler its probes own
 * the sink and record the same events.  Everything a scenario checks is
 * checked without the sink too.
 *
 * Exit status: 0 when every scenario passed its checks, 1 when a check
 * failed or the engine reported an error, 2 for bad arguments.
 */
#include "demo-scenarios.h"
#include "demo-stats.h"
#include "demo-summary.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_STEPS 100000
#define MAX_THREADS 64

typedef struct {
  const char *name;
  const char *description;
  void (*run) (Run *run);
} Scenario;

/* Every scenario, in the order `all` runs them and --list shows them. */
static const Scenario scenarios[] = {
  { "training", "SGD on a small MLP: named weights, step ranges, lazy reshapes"
    " (copy and steal), an EMA and checkpoints as lazy clones", scenario_training },
  { "concurrent", "threads write lazy clones of one 16 MiB tensor at once;"
    " copies vs steals", scenario_concurrent },
  { "simulate", "simulate mode: a write through a reshape result, then a read"
    " of the original, warns", scenario_simulate },
  { "foreign", "lazy clone of foreign memory: eager fallback with its reason",
    scenario_foreign },
  { "ipc", "one producer, three consumer processes; the producer drops its"
    " tensors early, the blocks wait in the limbo until consumers release", scenario_ipc },
  { "gpu", "the training-like loop on a CUDA device (lazy clones, copy and steal,"
    " fill/add/mul kernels), checked against the CPU; skipped without a device",
    scenario_gpu },
};
#define N_SCENARIOS ((int) (sizeof scenarios / sizeof scenarios[0]))

static void
print_usage (FILE *out)
{
  fprintf (out,
           "Usage: " PROGRAM " [--list] [--steps N] [--threads N] [--quiet] SCENARIO...\n"
           "       " PROGRAM " [OPTION...] all\n"
           "\n"
           "Runs workloads over libcowtensor that exercise its copy-on-write storage,\n"
           "checks their results and prints what the engine did.\n"
           "\n"
           "Options:\n"
           "  --list        list the scenarios and exit\n"
           "  --steps N     training steps (default %d) and concurrent rounds (default %d)\n"
           "  --threads N   threads in the concurrent scenario (default %d, at most %d)\n"
           "  --quiet       print only warnings, errors and the summary\n"
           "  -h, --help    show this help and exit\n"
           "\n"
           "Exit status: 0 on success, 1 if a scenario's check or an engine call failed,\n"
           "2 for bad arguments.\n",
           DEFAULT_TRAINING_STEPS, DEFAULT_CONCURRENT_ROUNDS, DEFAULT_THREADS, MAX_THREADS);
}

static int
usage_error (const char *format, ...) DEMO_PRINTF (1, 2);

/* Says what is wrong with the command line; returns the exit status 2. */
static int
usage_error (const char *format, ...)
{
  va_list args;
  fprintf (stderr, PROGRAM ": ");
  va_start (args, format);
  vfprintf (stderr, format, args);
  va_end (args);
  fprintf (stderr, "\nTry '" PROGRAM " --help' for more information.\n");
  return 2;
}

/* Parses a decimal integer in [1, max]. */
static bool
parse_count (const char *text, int max, int *out)
{
  if (text == NULL || *text == '\0')
    return false;
  char *end;
  errno = 0;
  long value = strtol (text, &end, 10);
  if (errno != 0 || *end != '\0' || value < 1 || value > max)
    return false;
  *out = (int) value;
  return true;
}

static const Scenario *
find_scenario (const char *name)
{
  for (int i = 0; i < N_SCENARIOS; i++)
    if (strcmp (scenarios[i].name, name) == 0)
      return &scenarios[i];
  return NULL;
}

/* What the command line asks for. */
typedef struct {
  Options options;
  const Scenario **chosen; /* in the order given; "all" adds every one */
  int n_chosen;
  bool list;
} Request;

/* Reads --steps or --threads at argv[*@i] ("--steps N" or "--steps=N"),
 * moving *@i past its value.  Returns -1 when it was good, else the exit
 * status after saying what is wrong. */
static int
parse_count_option (int argc, char **argv, int *i, Options *options)
{
  const char *arg = argv[*i];
  const bool is_steps = strncmp (arg, "--steps", 7) == 0;
  const char *value;
  const char *eq = strchr (arg, '=');

  if (eq != NULL)
    value = eq + 1;
  else if (*i + 1 < argc)
    value = argv[++*i];
  else
    return usage_error ("option '%s' needs a number", arg);
  if (is_steps && !parse_count (value, MAX_STEPS, &options->steps))
    return usage_error ("--steps wants a whole number from 1 to %d, not '%s'", MAX_STEPS, value);
  if (!is_steps && !parse_count (value, MAX_THREADS, &options->threads))
    return usage_error ("--threads wants a whole number from 1 to %d, not '%s'", MAX_THREADS,
                        value);
  return -1;
}

/* Fills @request from the command line.  Returns -1 to go on, else the
 * exit status: 0 after --help, 2 after saying what is wrong. */
static int
parse_command_line (int argc, char **argv, Request *request)
{
  for (int i = 1; i < argc; i++)
    {
      const char *arg = argv[i];
      bool is_steps = strncmp (arg, "--steps", 7) == 0 && (arg[7] == '\0' || arg[7] == '=');
      bool is_threads = strncmp (arg, "--threads", 9) == 0 && (arg[9] == '\0' || arg[9] == '=');

      if (is_steps || is_threads)
        {
          int status = parse_count_option (argc, argv, &i, &request->options);
          if (status >= 0)
            return status;
        }
      else if (strcmp (arg, "--quiet") == 0 || strcmp (arg, "-q") == 0)
        request->options.quiet = true;
      else if (strcmp (arg, "--list") == 0)
        request->list = true;
      else if (strcmp (arg, "--help") == 0 || strcmp (arg, "-h") == 0)
        {
          print_usage (stdout);
          return 0;
        }
      else if (arg[0] == '-' && arg[1] != '\0')
        return usage_error ("unknown option '%s'", arg);
      else if (strcmp (arg, "all") == 0)
        for (int s = 0; s < N_SCENARIOS; s++)
          request->chosen[request->n_chosen++] = &scenarios[s];
      else
        {
          const Scenario *scenario = find_scenario (arg);
          if (scenario == NULL)
            return usage_error ("unknown scenario '%s' (try --list)", arg);
          request->chosen[request->n_chosen++] = scenario;
        }
    }
  return -1;
}

static void
print_list (void)
{
  for (int s = 0; s < N_SCENARIOS; s++)
    printf ("%-11s %s\n", scenarios[s].name, scenarios[s].description);
  printf ("%-11s every scenario above, in this order\n", "all");
}

/* Runs @scenario into @run, inside a range named after it, and records
 * its time and what the engine did meanwhile. */
static void
run_scenario (const Scenario *scenario, Run *run)
{
  Stats before;
  stats_snapshot (&before);
  uint64_t violations = cow_simulate_violation_count ();
  int64_t start = cow_trace_now_ns ();
  cow_range_push (run->name);
  scenario->run (run);
  cow_range_pop ();
  run->seconds = (double) (cow_trace_now_ns () - start) / 1e9;
  run->violations = cow_simulate_violation_count () - violations;
  stats_snapshot (&run->stats);
  stats_subtract (&run->stats, &before);
  fflush (stdout);
}

/* Runs the chosen scenarios in order, then prints the summary.  Returns
 * the exit status: 0 when all passed, 1 otherwise. */
static int
run_request (const Request *request)
{
  stats_start_counting ();

  Run *runs = calloc ((size_t) request->n_chosen, sizeof *runs);
  if (runs == NULL)
    {
      fprintf (stderr, PROGRAM ": out of memory\n");
      return 1;
    }
  bool failed = false;
  for (int i = 0; i < request->n_chosen; i++)
    {
      Run *run = &runs[i];
      run->name = request->chosen[i]->name;
      run->options = &request->options;
      if (i > 0)
        say (run, "\n");
      run_scenario (request->chosen[i], run);
      failed |= run->engine_error || run->check_failed;
    }

  print_summary (runs, request->n_chosen);

  stats_stop_counting ();
  free (runs);
  return failed ? 1 : 0;
}

int
main (int argc, char **argv)
{
  /* Hidden: the consumer process of the ipc scenario. */
  if (argc == 3 && strcmp (argv[1], "--ipc-consumer") == 0)
    return ipc_consumer_main (atoi (argv[2]));

  Request request = {
    .options = { .steps = 0, .threads = DEFAULT_THREADS, .quiet = false },
    /* Each argument adds at most every scenario ("all"). */
    .chosen = calloc ((size_t) argc * N_SCENARIOS + 1, sizeof *request.chosen),
  };
  if (request.chosen == NULL)
    {
      fprintf (stderr, PROGRAM ": out of memory\n");
      return 1;
    }

  int status = parse_command_line (argc, argv, &request);
  if (status < 0 && request.list)
    {
      print_list ();
      status = 0;
    }
  else if (status < 0 && request.n_chosen == 0)
    {
      fprintf (stderr, PROGRAM ": no scenario given\n");
      print_usage (stderr);
      status = 2;
    }
  else if (status < 0)
    status = run_request (&request);
  free (request.chosen);
  return status;
}
