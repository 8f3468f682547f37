/* cowscope-probe-stack.c — the user's call stack at an engine event.
 *
 * glibc's backtrace() walks the stack with the unwind tables; its first
 * call loads libgcc_s and allocates, so it is made once at start-up and
 * later calls neither allocate nor take the loader lock (glibc >= 2.35
 * finds unwind tables with _dl_find_object).  The frames of the probe and
 * of the engine are dropped from the innermost end, so the first frame
 * is the user's call into the engine.
 */
#include "cowscope-probe-private.h"

#include <execinfo.h>
#include <link.h>
#include <string.h>

/* Executable segments of the probe and of the engine.  Written once by
 * cowscope_probe_stack_init() before the sink is installed (the sink's
 * release publication makes them visible); read-only afterwards. */
#define MAX_OWN_RANGES 16
static struct {
  uintptr_t start, end;
} own_ranges[MAX_OWN_RANGES];
static int n_own_ranges;

/* Frames above the user's: the probe's (capture, sink) and the engine's
 * (the operation, its trace point).  A generous margin. */
#define MAX_OWN_FRAMES 24

/* True when @address lies in one of @info's PT_LOAD segments. */
static bool
object_contains (const struct dl_phdr_info *info, uintptr_t address)
{
  for (int i = 0; i < info->dlpi_phnum; i++)
    {
      const ElfW (Phdr) *ph = &info->dlpi_phdr[i];
      uintptr_t start = info->dlpi_addr + ph->p_vaddr;
      if (ph->p_type == PT_LOAD && address >= start && address - start < ph->p_memsz)
        return true;
    }
  return false;
}

/* True when @info is libcowtensor (by name, for an engine whose symbols
 * the executable interposes). */
static bool
object_is_engine (const struct dl_phdr_info *info)
{
  const char *name = info->dlpi_name;
  if (name == NULL)
    return false;
  const char *base = strrchr (name, '/');
  base = base != NULL ? base + 1 : name;
  return strncmp (base, "libcowtensor.so", strlen ("libcowtensor.so")) == 0;
}

/* dl_iterate_phdr callback: records the executable segments of the
 * object holding the probe or the engine. */
static int
collect_own_ranges (struct dl_phdr_info *info, size_t size, void *data)
{
  (void) size;
  (void) data;
  bool own = object_contains (info, (uintptr_t) &cowscope_probe_stack_capture)
             || object_contains (info, (uintptr_t) &cow_trace_set_sink)
             || object_is_engine (info);
  if (!own)
    return 0;
  for (int i = 0; i < info->dlpi_phnum && n_own_ranges < MAX_OWN_RANGES; i++)
    {
      const ElfW (Phdr) *ph = &info->dlpi_phdr[i];
      if (ph->p_type != PT_LOAD || (ph->p_flags & PF_X) == 0)
        continue;
      own_ranges[n_own_ranges].start = info->dlpi_addr + ph->p_vaddr;
      own_ranges[n_own_ranges].end = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
      n_own_ranges++;
    }
  return 0;
}

/* Finds the probe's and the engine's code and warms up backtrace(). */
void
cowscope_probe_stack_init (void)
{
  void *warm[4];

  n_own_ranges = 0;
  dl_iterate_phdr (collect_own_ranges, NULL);
  backtrace (warm, 4);
}

/* True when @address is the probe's or the engine's code. */
static inline bool
is_own (uintptr_t address)
{
  for (int i = 0; i < n_own_ranges; i++)
    if (address >= own_ranges[i].start && address < own_ranges[i].end)
      return true;
  return false;
}

/* Captures up to @max user frames, innermost first.  No allocation, no
 * lock (after the warm-up). */
uint32_t
cowscope_probe_stack_capture (uint64_t *frames, uint32_t max)
{
  void *raw[COWSCOPE_MAX_STACK_DEPTH + MAX_OWN_FRAMES];
  uint32_t limit = max < COWSCOPE_MAX_STACK_DEPTH ? max : COWSCOPE_MAX_STACK_DEPTH;

  int n = backtrace (raw, (int) limit + MAX_OWN_FRAMES);
  /* Innermost first: frames of whatever wraps backtrace() (a sanitizer's
   * interceptor), then the probe's and the engine's, then the user's. */
  int first = 0;
  while (first < n && !is_own ((uintptr_t) raw[first]))
    first++;
  if (first == n)
    first = 0;
  while (first < n && is_own ((uintptr_t) raw[first]))
    first++;
  uint32_t count = 0;
  for (int i = first; i < n && count < limit; i++)
    frames[count++] = (uint64_t) (uintptr_t) raw[i];
  return count;
}
