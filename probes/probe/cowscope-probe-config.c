/* cowscope-probe-config.c — the recorder's settings, read from the
 * environment once. */
#include "cowscope-probe-private.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

CowscopeProbeConfig cowscope_probe_config;

/* Writes "cowscope: MESSAGE\n" to stderr in one write, so lines from
 * several threads or processes do not interleave; never fails. */
void
cowscope_probe_warn (const char *format, ...)
{
  char line[512];
  va_list args;

  int n = snprintf (line, sizeof line, "cowscope: ");
  va_start (args, format);
  int m = vsnprintf (line + n, sizeof line - (size_t) n - 1, format, args);
  va_end (args);
  size_t length = (size_t) n + (m < 0 ? 0 : (size_t) m);
  if (length > sizeof line - 2)
    length = sizeof line - 2;
  line[length++] = '\n';
  ssize_t unused = write (STDERR_FILENO, line, length);
  (void) unused;
}

/* True when @name is set to exactly @value. */
static bool
env_is (const char *name, const char *value)
{
  const char *v = getenv (name);
  return v != NULL && strcmp (v, value) == 0;
}

/* Parses COWSCOPE_RING_CAPACITY: a power of two within the ring's limits,
 * or 0 (the ring's default) with a warning for anything else. */
static uint64_t
parse_capacity (const char *text)
{
  if (text == NULL || *text == '\0')
    return 0;
  char *end = NULL;
  errno = 0;
  unsigned long long v = strtoull (text, &end, 10);
  long page = sysconf (_SC_PAGESIZE);
  if (errno != 0 || end == text || *end != '\0' || v == 0 || (v & (v - 1)) != 0
      || v < (unsigned long long) (page > 0 ? page : 4096)
      || v > COWSCOPE_RING_MAX_CAPACITY)
    {
      cowscope_probe_warn ("ignoring %s=%s: not a power of two from the page size to %llu bytes; using %llu",
                           COWSCOPE_ENV_RING_CAPACITY, text,
                           (unsigned long long) COWSCOPE_RING_MAX_CAPACITY,
                           (unsigned long long) COWSCOPE_RING_DEFAULT_CAPACITY);
      return 0;
    }
  return v;
}

/* Fills cowscope_probe_config from the environment.  Idempotent; call
 * before any probe thread runs (constructor, InitializeInjection). */
void
cowscope_probe_config_load (void)
{
  CowscopeProbeConfig *c = &cowscope_probe_config;
  const char *socket_path = getenv (COWSCOPE_ENV_SOCKET);

  memset (c, 0, sizeof *c);
  if (socket_path == NULL || *socket_path == '\0')
    return;

  c->present = true;
  /* A path that does not fit sun_path is kept truncated here and refused
   * by the connect step with a clear reason. */
  snprintf (c->socket_path, sizeof c->socket_path, "%s", socket_path);
  c->socket_path_too_long = strlen (socket_path) >= sizeof c->socket_path;
  c->stacks = !env_is (COWSCOPE_ENV_STACKS, "0");
  c->cuda_only = env_is (COWSCOPE_ENV_CUDA_ONLY, "1");
  c->cuda = env_is (COWSCOPE_ENV_CUDA, "1") || c->cuda_only;
  c->ring_capacity = parse_capacity (getenv (COWSCOPE_ENV_RING_CAPACITY));
  c->ring_policy = env_is (COWSCOPE_ENV_RING_POLICY, "block") ? COWSCOPE_RING_BLOCK
                                                              : COWSCOPE_RING_DROP;
}
