/* demo-harness.c — the helpers every scenario of cowscope-demo shares:
 * progress output, error and check reports, ranges, number formatting. */
#include "demo-harness.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/* Progress output, silenced by --quiet. */
void
say (const Run *run, const char *format, ...)
{
  if (run->options->quiet)
    return;
  va_list args;
  va_start (args, format);
  vprintf (format, args);
  va_end (args);
}

void
report_error (Run *run, const char *what, const CowError *error)
{
  run->engine_error = true;
  fflush (stdout);
  if (error->code == COW_OK)
    fprintf (stderr, PROGRAM ": %s: %s failed, but the engine gave no error"
             " (engine bug)\n", run->name, what);
  else
    fprintf (stderr, PROGRAM ": %s: %s failed: %s: %s\n", run->name, what,
             cow_status_to_string (error->code), error->message);
}

void
check_failed (Run *run, const char *format, ...)
{
  run->check_failed = true;
  fflush (stdout);
  fprintf (stderr, PROGRAM ": %s: check failed: ", run->name);
  va_list args;
  va_start (args, format);
  vfprintf (stderr, format, args);
  va_end (args);
  fputc ('\n', stderr);
}

void
drop (CowTensor **tensor)
{
  cow_tensor_unref (*tensor);
  *tensor = NULL;
}

void
range_push (Run *run, const char *name)
{
  cow_range_push (name);
  run->open_ranges++;
}

void
range_pop (Run *run)
{
  cow_range_pop ();
  run->open_ranges--;
}

/* Closes the ranges an error path left open. */
void
range_close_all (Run *run)
{
  while (run->open_ranges > 0)
    range_pop (run);
}

/* "" for one, "s" otherwise. */
const char *
plural (uint64_t n)
{
  return n == 1 ? "" : "s";
}

const char *
format_bytes (uint64_t bytes, char *buffer, size_t size)
{
  static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
  double value = (double) bytes;
  unsigned unit = 0;
  while (value >= 1024.0 && unit + 1 < sizeof units / sizeof units[0])
    {
      value /= 1024.0;
      unit++;
    }
  if (unit == 0)
    snprintf (buffer, size, "%" PRIu64 " B", bytes);
  else
    snprintf (buffer, size, "%.1f %s", value, units[unit]);
  return buffer;
}

/* A deterministic uniform value in [-1, 1). */
float
next_uniform (uint64_t *state)
{
  *state = *state * 6364136223846793005ull + 1442695040888963407ull;
  return (float) ((double) (*state >> 40) / (double) (1ull << 24) * 2.0 - 1.0);
}

float *
host_alloc (Run *run, size_t count)
{
  float *data = malloc (count * sizeof *data);
  if (data == NULL)
    check_failed (run, "cannot allocate %zu bytes of host memory",
                  count * sizeof *data);
  return data;
}

const char *
eager_reason_text (CowEagerReason reason)
{
  switch (reason)
    {
    case COW_EAGER_FOREIGN_DATA_PTR:
      return "foreign data pointer (memory with its own owner and deleter)";
    case COW_EAGER_NOT_SIMPLE:
      return "data pointer its allocator cannot share (not simple)";
    default:
      return "unknown reason";
    }
}
