/* cowscope-probe-stack.c — the user's call stack at an engine event.
 *
 * Two unwinders.  libunwind's unw_backtrace() (dlopened at start-up, as
 * CUPTI is: the probe links nothing beyond libc, libdl and pthreads) with
 * a per-thread cache, as heaptrack uses it: a frame's recipe (where the
 * caller's frame and return address are, from the unwind tables) is
 * looked up once per address and thread, so a warm capture costs a few
 * hundred ns instead of glibc backtrace()'s ~1.1 µs.  Its first capture in
 * a thread allocates that cache (about a millisecond), so every thread
 * makes one at set-up (cowscope_probe_stack_thread_init()), before user
 * code.  Without libunwind.so.8, or with COWSCOPE_UNWIND=backtrace, glibc's
 * backtrace(), warmed up once (its first call loads libgcc_s and
 * allocates).  Which one, and why, goes to the recorder (STACKS) and into
 * the session's meta.
 *
 * Debian's libunwind.so.8 also defines weak `backtrace` and
 * `_Unwind_Backtrace`: it is opened RTLD_LOCAL and unw_backtrace is called
 * by name, so neither replaces glibc's or libgcc's for the target.
 *
 * The frames of the probe and of the engine are dropped from the
 * innermost end, so the first frame is the user's call into the engine.
 */
#include "cowscope-probe-private.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
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

/* libunwind's ABI (libunwind-common.h, stable since 1.0): the local
 * address space and its caching policies, under their x86-64 names. */
#define UNW_CACHE_PER_THREAD 2
/* heaptrack's size for the per-thread cache of frame recipes. */
#define UNW_CACHE_SIZE 1024
#if defined(__x86_64__)
#define UNW_NAME(n) "_ULx86_64_" n
#elif defined(__aarch64__)
#define UNW_NAME(n) "_ULaarch64_" n
#else
#define UNW_NAME(n) NULL
#endif
typedef int (*UnwBacktraceFunc) (void **buffer, int size);
typedef int (*UnwSetCachingPolicyFunc) (void *address_space, int policy);
typedef int (*UnwSetCacheSizeFunc) (void *address_space, size_t size, int flags);

/* The unwinder, chosen by cowscope_probe_stack_init() before the sink is
 * live; read-only afterwards. */
static CowscopeUnwinder unwinder = COWSCOPE_UNWINDER_BACKTRACE;
static UnwBacktraceFunc unw_backtrace_func;
static char unwinder_reason[192];

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

/* Opens libunwind and sets its per-thread cache up; false (with the
 * reason) when it cannot be used. */
static bool
load_libunwind (void)
{
  const char *name = "libunwind.so.8";
  if (UNW_NAME ("") == NULL)
    {
      snprintf (unwinder_reason, sizeof unwinder_reason,
                "libunwind is not used on this architecture");
      return false;
    }
  void *lib = dlopen (name, RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL)
    {
      const char *why = dlerror ();
      snprintf (unwinder_reason, sizeof unwinder_reason, "%s", why ? why : name);
      return false;
    }
  UnwBacktraceFunc backtrace_func = (UnwBacktraceFunc) dlsym (lib, "unw_backtrace");
  void **address_space = dlsym (lib, UNW_NAME ("local_addr_space"));
  UnwSetCachingPolicyFunc set_policy =
    (UnwSetCachingPolicyFunc) dlsym (lib, UNW_NAME ("set_caching_policy"));
  UnwSetCacheSizeFunc set_size = (UnwSetCacheSizeFunc) dlsym (lib, UNW_NAME ("set_cache_size"));
  if (backtrace_func == NULL || address_space == NULL || set_policy == NULL)
    {
      snprintf (unwinder_reason, sizeof unwinder_reason,
                "%s lacks unw_backtrace or its caching policy", name);
      dlclose (lib);
      return false;
    }
  if (set_policy (*address_space, UNW_CACHE_PER_THREAD) != 0)
    {
      snprintf (unwinder_reason, sizeof unwinder_reason,
                "%s refused a per-thread cache", name);
      dlclose (lib);
      return false;
    }
  if (set_size != NULL)
    set_size (*address_space, UNW_CACHE_SIZE, 0);
  /* Kept open for the life of the process. */
  unw_backtrace_func = backtrace_func;
  return true;
}

/* Finds the probe's and the engine's code, chooses the unwinder and warms
 * it up on this thread, so that later captures do not allocate. */
void
cowscope_probe_stack_init (void)
{
  n_own_ranges = 0;
  dl_iterate_phdr (collect_own_ranges, NULL);

  const char *wanted = getenv (COWSCOPE_PROBE_ENV_UNWIND);
  unwinder_reason[0] = '\0';
  if (wanted != NULL && strcmp (wanted, "backtrace") == 0)
    snprintf (unwinder_reason, sizeof unwinder_reason, "%s=backtrace",
              COWSCOPE_PROBE_ENV_UNWIND);
  else if (load_libunwind ())
    unwinder = COWSCOPE_UNWINDER_LIBUNWIND;
  if (wanted != NULL && strcmp (wanted, "backtrace") != 0 && strcmp (wanted, "libunwind") != 0)
    cowscope_probe_warn ("ignoring %s=%s: not \"libunwind\" or \"backtrace\"",
                         COWSCOPE_PROBE_ENV_UNWIND, wanted);

  /* glibc's backtrace() loads libgcc_s on its first call: once, here,
   * whichever unwinder is used (a fallback may need it later). */
  void *warm[4];
  backtrace (warm, 4);
  cowscope_probe_stack_thread_init ();
}

void
cowscope_probe_stack_thread_init (void)
{
  if (unwinder == COWSCOPE_UNWINDER_LIBUNWIND)
    {
      /* The first unw_backtrace() of a thread allocates its cache. */
      void *warm[4];
      unw_backtrace_func (warm, 4);
    }
}

CowscopeUnwinder
cowscope_probe_stack_unwinder (const char **reason)
{
  if (reason != NULL)
    *reason = unwinder_reason;
  return unwinder;
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
 * lock (after the thread's warm-up). */
uint32_t
cowscope_probe_stack_capture (uint64_t *frames, uint32_t max)
{
  void *raw[COWSCOPE_MAX_STACK_DEPTH + MAX_OWN_FRAMES];
  uint32_t limit = max < COWSCOPE_MAX_STACK_DEPTH ? max : COWSCOPE_MAX_STACK_DEPTH;

  int n = unwinder == COWSCOPE_UNWINDER_LIBUNWIND
            ? unw_backtrace_func (raw, (int) limit + MAX_OWN_FRAMES)
            : backtrace (raw, (int) limit + MAX_OWN_FRAMES);
  /* Innermost first: frames of whatever wraps the unwinder (libunwind
   * itself, a sanitizer's interceptor), then the probe's and the
   * engine's, then the user's. */
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
