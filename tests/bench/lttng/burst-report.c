/* burst-report.c — parses the line a burst target prints about its loop. */
#include "burst-report.h"

#include <errno.h>
#include <gio/gio.h>
#include <string.h>
#include <time.h>

/* Where the value of " KEY=" (or "KEY=" at the start of @line) begins,
 * or NULL. */
static const char *
field_start (const char *line, const char *key)
{
  g_autofree char *needle = g_strconcat (key, "=", NULL);
  const char *p = line;
  while ((p = strstr (p, needle)) != NULL && p != line && p[-1] != ' ')
    p += strlen (needle);
  return p ? p + strlen (needle) : NULL;
}

static gboolean
ends_value (const char *end)
{
  return *end == ' ' || *end == '\0';
}

/* KEY's value as a non-negative integer; FALSE when absent or malformed. */
static gboolean
field_int (const char *line, const char *key, gint64 *value)
{
  const char *start = field_start (line, key);
  char *end = NULL;
  if (start == NULL || !g_ascii_isdigit (*start))
    return FALSE;
  errno = 0;
  gint64 v = g_ascii_strtoll (start, &end, 10);
  if (errno != 0 || !ends_value (end))
    return FALSE;
  *value = v;
  return TRUE;
}

/* KEY's value as a finite non-negative number; FALSE otherwise. */
static gboolean
field_double (const char *line, const char *key, double *value)
{
  const char *start = field_start (line, key);
  char *end = NULL;
  if (start == NULL || !g_ascii_isdigit (*start))
    return FALSE;
  errno = 0;
  double v = g_ascii_strtod (start, &end);
  if (errno != 0 || !ends_value (end) || !(v <= G_MAXDOUBLE))
    return FALSE;
  *value = v;
  return TRUE;
}

static gboolean
malformed (GError **error, const char *key, const char *line)
{
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
               "the burst target's line has no valid %s: \"%s\"", key, line);
  return FALSE;
}

gboolean
burst_report_parse (const char *text, BurstReport *report, GError **error)
{
  memset (report, 0, sizeof *report);
  const char *line = text ? strstr (text, "events=") : NULL;
  while (line != NULL && line != text && line[-1] != '\n')
    line = strstr (line + 1, "events=");
  if (line == NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   "the burst target printed no \"events=…\" line");
      return FALSE;
    }
  g_autofree char *copy = g_strndup (line, strcspn (line, "\n"));
  gint64 events, enabled;
  if (!field_int (copy, "events", &events))
    return malformed (error, "events", copy);
  if (!field_int (copy, "enabled", &enabled) || enabled > 1)
    return malformed (error, "enabled", copy);
  if (!field_double (copy, "first_ns", &report->first_ns))
    return malformed (error, "first_ns", copy);
  if (!field_double (copy, "mean_ns", &report->mean_ns))
    return malformed (error, "mean_ns", copy);
  if (!field_double (copy, "warm_ns", &report->warm_ns))
    return malformed (error, "warm_ns", copy);
  if (!field_int (copy, "loop_end_ns", &report->loop_end_ns))
    return malformed (error, "loop_end_ns", copy);
  if (!field_int (copy, "cpu_ns", &report->cpu_ns))
    return malformed (error, "cpu_ns", copy);
  report->events = (guint64) events;
  report->enabled = enabled == 1;
  return TRUE;
}

gint64
burst_report_now_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (gint64) ts.tv_sec * G_GINT64_CONSTANT (1000000000) + ts.tv_nsec;
}
