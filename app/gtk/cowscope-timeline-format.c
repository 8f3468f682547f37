/* cowscope-timeline-format.c — the timeline's text (see header). */
#include "cowscope-config.h"

#include "cowscope-timeline-format.h"

#include <glib/gi18n.h>
#include <math.h>
#include <stdlib.h>

char *
cowscope_timeline_format_duration (gint64 ns)
{
  double v = (double) ns;
  if (llabs (ns) < 1000)
    return g_strdup_printf (_("%d ns"), (int) ns);
  if (fabs (v) < 1e6)
    return g_strdup_printf (_("%.3g µs"), v / 1e3);
  if (fabs (v) < 1e9)
    return g_strdup_printf (_("%.3g ms"), v / 1e6);
  return g_strdup_printf (_("%.4g s"), v / 1e9);
}

char *
cowscope_timeline_format_tick (gint64 ns, gint64 step)
{
  if (step < 1000)
    return g_strdup_printf (_("%.0f ns"), (double) ns);
  double unit = step < 1000000 ? 1e3 : step < 1000000000 ? 1e6 : 1e9;
  int decimals = (int) MAX (0, ceil (-log10 ((double) step / unit) - 1e-9));
  if (unit == 1e3)
    return g_strdup_printf (_("%.*f µs"), decimals, (double) ns / unit);
  if (unit == 1e6)
    return g_strdup_printf (_("%.*f ms"), decimals, (double) ns / unit);
  return g_strdup_printf (_("%.*f s"), decimals, (double) ns / unit);
}

char *
cowscope_timeline_format_shown (gint64 t0, gint64 t1)
{
  g_autofree char *span = cowscope_timeline_format_duration (t1 - t0);
  return g_strdup_printf (_("%s shown"), span);
}

char *
cowscope_timeline_format_number (guint64 n)
{
  return g_strdup_printf ("%'" G_GUINT64_FORMAT, n);
}

char *
cowscope_timeline_format_counter (CowscopeCounterKind counter, double value)
{
  if (counter == COWSCOPE_COUNTER_LIVE_STORAGES)
    return g_strdup_printf ("%'.0f", value);
  return g_format_size ((guint64) MAX (value, 0));
}

/* The program of process @pid of @document (its exe's base name), or
 * NULL. */
static char *
program_of (CowscopeSessionDocument *document, guint32 pid)
{
  guint n = cowscope_session_document_get_n_processes (document);
  for (guint i = 0; i < n; i++)
    {
      const CowscopeProcessInfo *p = cowscope_session_document_get_process (document, i);
      if (p->pid == pid && p->exe != NULL && p->exe[0] != '\0')
        return g_path_get_basename (p->exe);
    }
  return NULL;
}

void
cowscope_timeline_format_lane_label (CowscopeTimelineLane *lane, CowscopeSessionDocument *document,
                                     char **name, char **detail)
{
  g_return_if_fail (COWSCOPE_IS_TIMELINE_LANE (lane));
  g_return_if_fail (COWSCOPE_IS_SESSION_DOCUMENT (document));
  guint32 pid = cowscope_timeline_lane_get_pid (lane);
  gint64 tid = cowscope_timeline_lane_get_tid (lane);
  switch (cowscope_timeline_lane_get_kind (lane))
    {
    case COWSCOPE_LANE_THREAD:
      {
        const char *thread = cowscope_session_document_thread_name (document, pid, tid);
        *name = thread != NULL && thread[0] != '\0'
                  ? g_strdup (thread)
                  : g_strdup_printf (_("Thread %" G_GINT64_FORMAT), tid);
        /* Translators: a thread lane's second line: thread id and process id */
        *detail = g_strdup_printf (_("tid %" G_GINT64_FORMAT " · process %u"), tid, pid);
        return;
      }
    case COWSCOPE_LANE_CUDA_STREAM:
      *name = g_strdup_printf (_("CUDA stream %" G_GINT64_FORMAT), tid);
      *detail = g_strdup_printf (_("device %" G_GINT64_FORMAT " · process %u"),
                                 cowscope_timeline_lane_get_device (lane), pid);
      return;
    case COWSCOPE_LANE_PROCESS:
      {
        /* The model's title: the program, or "rank 3 · train" for a
         * merged session's member. */
        const char *title = cowscope_timeline_lane_get_title (lane);
        *name = title != NULL && title[0] != '\0' ? g_strdup (title) : program_of (document, pid);
        if (*name == NULL)
          *name = g_strdup_printf (_("Process %u"), pid);
        /* Translators: a process lane's second line */
        *detail = g_strdup_printf (_("process %u"), pid);
        return;
      }
    case COWSCOPE_LANE_COUNTER:
    default:
      *name = g_strdup (cowscope_timeline_lane_get_title (lane));
      *detail = g_strdup (_("Counter"));
      return;
    }
}

char *
cowscope_timeline_format_lane_tooltip (CowscopeTimelineLane *lane, CowscopeSessionDocument *document)
{
  g_return_val_if_fail (COWSCOPE_IS_TIMELINE_LANE (lane), NULL);
  g_return_val_if_fail (COWSCOPE_IS_SESSION_DOCUMENT (document), NULL);
  guint32 pid = cowscope_timeline_lane_get_pid (lane);
  gint64 tid = cowscope_timeline_lane_get_tid (lane);
  CowscopeLaneKind kind = cowscope_timeline_lane_get_kind (lane);
  g_autofree char *name = NULL, *detail = NULL;
  cowscope_timeline_format_lane_label (lane, document, &name, &detail);
  g_autofree char *program = program_of (document, pid);
  GString *s = g_string_new (name);
  g_string_append_c (s, '\n');
  switch (kind)
    {
    case COWSCOPE_LANE_THREAD:
      if (program != NULL)
        g_string_append_printf (s, _("Thread %" G_GINT64_FORMAT " of process %u (%s)"), tid, pid,
                                program);
      else
        g_string_append_printf (s, _("Thread %" G_GINT64_FORMAT " of process %u"), tid, pid);
      break;
    case COWSCOPE_LANE_CUDA_STREAM:
      g_string_append_printf (s, _("Stream %" G_GINT64_FORMAT " on CUDA device %" G_GINT64_FORMAT
                                   " of process %u"),
                              tid, cowscope_timeline_lane_get_device (lane), pid);
      break;
    case COWSCOPE_LANE_PROCESS:
      {
        guint64 n = cowscope_timeline_lane_get_n_events (lane);
        g_autofree char *count = cowscope_timeline_format_number (n);
        g_string_append_printf (s, ngettext ("Process %u · %s IPC event", "Process %u · %s IPC events",
                                             (unsigned long) MIN (n, 1000000)),
                                pid, count);
        g_string_append_c (s, '\n');
        g_string_append (s, _("Its threads are the lanes below it (the triangle folds them)"));
      }
      break;
    case COWSCOPE_LANE_COUNTER:
    default:
      g_string_append (s, _("A counter over the whole session"));
      break;
    }
  if (kind == COWSCOPE_LANE_THREAD || kind == COWSCOPE_LANE_CUDA_STREAM)
    {
      guint64 n = cowscope_timeline_lane_get_n_events (lane);
      g_autofree char *count = cowscope_timeline_format_number (n);
      g_string_append_c (s, '\n');
      g_string_append_printf (s, ngettext ("%s event", "%s events", (unsigned long) MIN (n, 1000000)),
                              count);
    }
  g_string_append_c (s, '\n');
  g_string_append (s, _("Right-click for the lane menu; drag the column’s edge to resize it"));
  return g_string_free (s, FALSE);
}

const char *
cowscope_timeline_format_kind_name (CowscopeItemKind kind)
{
  switch ((CowscopeItemKind) kind)
    {
    case COWSCOPE_ITEM_ALLOCATION: return _("Allocation");
    case COWSCOPE_ITEM_FREE: return _("Free");
    case COWSCOPE_ITEM_STORAGE: return _("New storage");
    case COWSCOPE_ITEM_TENSOR: return _("Tensor");
    case COWSCOPE_ITEM_CONTEXT: return _("CoW context");
    case COWSCOPE_ITEM_LAZY_CLONE: return _("Lazy clone");
    case COWSCOPE_ITEM_EAGER_COPY: return _("Eager copy");
    case COWSCOPE_ITEM_MATERIALIZE_BEGIN: return _("Materialization begins");
    case COWSCOPE_ITEM_COPY: return _("Copy");
    case COWSCOPE_ITEM_STEAL: return _("Steal");
    case COWSCOPE_ITEM_MATERIALIZE_FAILED: return _("Failed materialization");
    case COWSCOPE_ITEM_VIOLATION: return _("Simulate-mode warning");
    case COWSCOPE_ITEM_RANGE: return _("User range");
    case COWSCOPE_ITEM_MARK: return _("Mark");
    case COWSCOPE_ITEM_IPC: return _("IPC");
    case COWSCOPE_ITEM_CUDA_MEMCPY: return _("CUDA memcpy");
    case COWSCOPE_ITEM_CUDA_MEMSET: return _("CUDA memset");
    case COWSCOPE_ITEM_CUDA_KERNEL: return _("CUDA kernel");
    case COWSCOPE_ITEM_CUDA_OTHER: return _("CUDA activity");
    case COWSCOPE_ITEM_IPC_LIMBO: return _("Sent block in the limbo");
    case COWSCOPE_ITEM_IPC_HELD: return _("Received block held");
    case COWSCOPE_ITEM_OTHER:
    case COWSCOPE_N_ITEM_KINDS:
    default: return _("Event");
    }
}

char *
cowscope_timeline_format_item_tooltip (CowscopeTimelineLane *lane, const CowscopeTimelineItem *it,
                                       gint64 origin, const char *range_name)
{
  g_autofree char *at = cowscope_timeline_format_duration (it->start_ns - origin);
  if (it->count > 1)
    {
      g_autofree char *span = cowscope_timeline_format_duration (it->end_ns - it->start_ns);
      g_autofree char *count = cowscope_timeline_format_number (it->count);
      return g_strdup_printf (ngettext ("%s event in %s at %s, mostly “%s”\nZoom in to see them",
                                        "%s events in %s at %s, mostly “%s”\nZoom in to see them",
                                        it->count),
                              count, span, at, cowscope_timeline_format_kind_name (it->kind));
    }
  GString *s = g_string_new (NULL);
  if (it->kind == COWSCOPE_ITEM_RANGE && range_name != NULL)
    /* Translators: a user range (cow_range_push()) and its name */
    g_string_append_printf (s, _("User range “%s”"), range_name);
  else
    g_string_append (s, cowscope_timeline_format_kind_name (it->kind));
  if (it->end_ns > it->start_ns)
    {
      g_autofree char *dur = cowscope_timeline_format_duration (it->end_ns - it->start_ns);
      g_string_append_printf (s, _(", %s"), dur);
    }
  if (it->bytes > 0)
    {
      g_autofree char *bytes = g_format_size (it->bytes);
      g_string_append_printf (s, _(", %s"), bytes);
    }
  g_string_append_c (s, '\n');
  g_string_append_printf (s, _("At %s"), at);
  if (cowscope_timeline_lane_get_kind (lane) == COWSCOPE_LANE_THREAD
      && it->kind != COWSCOPE_ITEM_RANGE)
    {
      g_autofree char *seq = cowscope_timeline_format_number ((guint64) it->id);
      g_string_append_printf (s, _(" · event %s"), seq);
    }
  g_string_append_c (s, '\n');
  g_string_append (s, it->kind == COWSCOPE_ITEM_RANGE ? _("Click to select this range")
                                                      : _("Click to select"));
  return g_string_free (s, FALSE);
}

char *
cowscope_timeline_format_sample_tooltip (CowscopeTimelineLane *lane,
                                         const CowscopeCounterSample *sample, gint64 origin)
{
  CowscopeCounterKind counter = cowscope_timeline_lane_get_counter (lane);
  g_autofree char *at = cowscope_timeline_format_duration (sample->end_ns - origin);
  g_autofree char *last = cowscope_timeline_format_counter (counter, sample->last);
  g_autofree char *lo = cowscope_timeline_format_counter (counter, sample->min);
  g_autofree char *hi = cowscope_timeline_format_counter (counter, sample->max);
  return g_strdup_printf (_("%s: %s at %s\n(%s to %s within this pixel)"),
                          cowscope_timeline_lane_get_title (lane), last, at, lo, hi);
}

char *
cowscope_timeline_format_range (gint64 r0, gint64 r1, const CowscopeRangeTotals *totals)
{
  g_autofree char *dur = cowscope_timeline_format_duration (r1 - r0);
  if (totals == NULL)
    return g_strdup_printf (_("Selection: %s\nCounting…"), dur);
  g_autofree char *bytes = g_format_size (totals->bytes_copied);
  g_autofree char *events = cowscope_timeline_format_number (totals->events);
  g_autofree char *copies = cowscope_timeline_format_number (totals->copies);
  g_autofree char *steals = cowscope_timeline_format_number (totals->steals);
  g_autofree char *clones = cowscope_timeline_format_number (totals->lazy_clones);
  /* Translators: the totals of a selected time range */
  return g_strdup_printf (_("Selection: %s · Events: %s\n"
                            "Copies: %s (%s) · Steals: %s · Lazy clones: %s"),
                          dur, events, copies, bytes, steals, clones);
}
