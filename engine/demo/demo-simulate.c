/* demo-simulate.c — the simulate scenario: under the simulate reshape
 * mode a reshape still aliases its source, and the engine warns when the
 * program relies on that; the same program in lazy mode copies instead. */
#include "demo-scenarios.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

typedef struct {
  const Run *run;
  int calls;
} WarningLog;

static void
on_warning (const char *message, void *user_data)
{
  WarningLog *log = user_data;
  log->calls++;
  /* The warning is the point of the scenario: shown even with --quiet. */
  printf ("  simulate-mode warning: %s\n", message);
}

/* Under COW_RESHAPE_SIMULATE reshape() still aliases, but the engine
 * notices when the program relies on it: writing through the reshape
 * result and then reading the original is a violation.  The same program
 * under COW_RESHAPE_LAZY shows what would change. */
void
scenario_simulate (Run *run)
{
  const CowReshapeMode previous_mode = cow_get_reshape_mode ();
  const int64_t sizes[2] = { 4, 6 }, reshaped_sizes[2] = { 6, 4 };
  float initial[24], seen[24];
  CowError err;
  WarningLog log = { .run = run };
  CowTensor *base = NULL, *reshaped = NULL, *lazy_base = NULL, *lazy_reshaped = NULL;

  for (int i = 0; i < 24; i++)
    initial[i] = (float) i;
  cow_set_warning_handler (on_warning, &log);

  /* Simulate mode: the reshape aliases, the engine warns. */
  cow_set_reshape_mode (COW_RESHAPE_SIMULATE);
  say (run, "simulate: reshape mode \"%s\"\n", cow_reshape_mode_to_string (cow_get_reshape_mode ()));
  uint64_t violations_before = cow_simulate_violation_count ();
  TRY_TENSOR (base, cow_tensor_from_data (2, sizes, COW_DTYPE_F32, initial, sizeof initial, &err),
              "from_data sim.base");
  cow_tensor_set_name (base, "sim.base");
  TRY_TENSOR (reshaped, cow_tensor_reshape (base, 2, reshaped_sizes, &err),
              "reshape sim.base → sim.reshaped");
  cow_tensor_set_name (reshaped, "sim.reshaped");
  if (!cow_tensor_is_alias_of (base, reshaped))
    check_failed (run, "in simulate mode, reshape() of a contiguous tensor must alias");
  say (run, "  wrote 7 through sim.reshaped, then read sim.base:\n");
  TRY_STATUS (cow_tensor_fill_ (reshaped, 7.0, &err), "fill_ sim.reshaped");
  TRY_STATUS (cow_tensor_read_elements (base, seen, sizeof seen, &err), "read sim.base");
  uint64_t simulated = cow_simulate_violation_count () - violations_before;
  say (run, "  sim.base[0] = %g (aliasing kept), %" PRIu64 " violation%s counted\n",
       seen[0], simulated, simulated == 1 ? "" : "s");
  if (seen[0] != 7.0f || seen[23] != 7.0f)
    check_failed (run, "simulate mode must keep view semantics: sim.base reads %g, expected 7",
                  seen[0]);
  if (simulated < 1)
    check_failed (run, "reading sim.base after a write through sim.reshaped was not"
                  " counted as a simulate-mode violation");
  if (log.calls != 1)
    check_failed (run, "the warning handler ran %d times for one storage, expected once",
                  log.calls);

  /* Lazy mode: the same program, and the write copies instead. */
  cow_set_reshape_mode (COW_RESHAPE_LAZY);
  uint64_t violations_mid = cow_simulate_violation_count ();
  TRY_TENSOR (lazy_base, cow_tensor_from_data (2, sizes, COW_DTYPE_F32, initial, sizeof initial, &err),
              "from_data lazy.base");
  cow_tensor_set_name (lazy_base, "lazy.base");
  TRY_TENSOR (lazy_reshaped, cow_tensor_reshape (lazy_base, 2, reshaped_sizes, &err),
              "reshape lazy.base → lazy.reshaped");
  cow_tensor_set_name (lazy_reshaped, "lazy.reshaped");
  TRY_STATUS (cow_tensor_fill_ (lazy_reshaped, 7.0, &err), "fill_ lazy.reshaped");
  TRY_STATUS (cow_tensor_read_elements (lazy_base, seen, sizeof seen, &err), "read lazy.base");
  say (run, "  same program with reshape mode \"lazy\": lazy.base[0] = %g (the write copied)\n",
       seen[0]);
  if (cow_tensor_is_alias_of (lazy_base, lazy_reshaped))
    check_failed (run, "in lazy mode, reshape() must not alias");
  if (memcmp (seen, initial, sizeof seen) != 0)
    check_failed (run, "in lazy mode, writing the reshape result changed its source");
  if (cow_simulate_violation_count () != violations_mid)
    check_failed (run, "lazy mode counted a simulate-mode violation");

  run->violations = cow_simulate_violation_count () - violations_before;
  snprintf (run->headline, sizeof run->headline,
            "%" PRIu64 " violation%s in simulate mode (warning shown %d time%s);"
            " none in lazy mode", run->violations, run->violations == 1 ? "" : "s",
            log.calls, log.calls == 1 ? "" : "s");

out:
  drop (&base);
  drop (&reshaped);
  drop (&lazy_base);
  drop (&lazy_reshaped);
  cow_set_warning_handler (NULL, NULL);
  cow_set_reshape_mode (previous_mode);
}
