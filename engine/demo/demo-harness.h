/* demo-harness.h — what every scenario of cowscope-demo shares: its
 * options, its run record, and the helpers that report errors and failed
 * checks, print progress and format numbers.
 *
 * The demo is plain C over the engine's public API (cowtensor.h) only:
 * it is what a user's program looks like to the profiler.
 */
#pragma once

#include "cowtensor.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "demo-stats.h"

#define PROGRAM "cowscope-demo"

#define DEMO_PRINTF(f, a) __attribute__ ((format (printf, f, a)))

/* The command line's settings, shared by every scenario of one run. */
typedef struct {
  int steps;      /* 0: each scenario's default */
  int threads;
  bool quiet;
} Options;

/* One scenario's run: its settings in, its outcome out. */
typedef struct {
  const char *name;
  const Options *options;
  bool engine_error;   /* an engine call failed */
  bool check_failed;   /* the scenario's own data check failed */
  int open_ranges;     /* cow_range_push() without pop, closed on errors */
  char headline[256];  /* one line for the summary */
  Stats stats;         /* what the counting sink saw during the run */
  uint64_t violations; /* cow_simulate_violation_count() delta */
  double seconds;
} Run;

/* Progress output, silenced by --quiet. */
void say (const Run *run, const char *format, ...) DEMO_PRINTF (2, 3);

/* Marks @run as failed by the engine and prints @what and @error. */
void report_error (Run *run, const char *what, const CowError *error);

/* Marks @run as failed by its own data check and prints why. */
void check_failed (Run *run, const char *format, ...) DEMO_PRINTF (2, 3);

/* Calls an engine function that returns a tensor (or a status) with the
 * local `CowError err`; on failure reports it and jumps to `out`, where
 * the scenario releases what it holds. */
#define TRY_TENSOR(var, call, what)                                            \
  do {                                                                         \
    cow_error_clear (&err);                                                    \
    (var) = (call);                                                            \
    if ((var) == NULL)                                                         \
      {                                                                        \
        report_error (run, (what), &err);                                      \
        goto out;                                                              \
      }                                                                        \
  } while (0)

#define TRY_STATUS(call, what)                                                 \
  do {                                                                         \
    cow_error_clear (&err);                                                    \
    if ((call) != COW_OK)                                                      \
      {                                                                        \
        report_error (run, (what), &err);                                      \
        goto out;                                                              \
      }                                                                        \
  } while (0)

/* Unrefs *@tensor (NULL is fine) and clears the pointer. */
void drop (CowTensor **tensor);

/* cow_range_push()/cow_range_pop() that @run keeps count of, so that an
 * error path can close what it left open with range_close_all(). */
void range_push (Run *run, const char *name);
void range_pop (Run *run);
void range_close_all (Run *run);

/* "" for one, "s" otherwise. */
const char *plural (uint64_t n);

/* @bytes as "512 B", "1.5 MiB", … in @buffer; returns @buffer. */
const char *format_bytes (uint64_t bytes, char *buffer, size_t size);

/* Why a lazy clone fell back to an eager copy, in words. */
const char *eager_reason_text (CowEagerReason reason);

/* A deterministic uniform value in [-1, 1). */
float next_uniform (uint64_t *state);

/* @count floats of host memory, or NULL after failing @run's check. */
float *host_alloc (Run *run, size_t count);
