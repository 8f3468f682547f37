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

char *
cowscope_timeline_format_lane_subtitle (CowscopeTimelineLane *lane)
{
  guint64 n = cowscope_timeline_lane_get_n_events (lane);
  guint32 pid = cowscope_timeline_lane_get_pid (lane);
  switch (cowscope_timeline_lane_get_kind (lane))
    {
    case COWSCOPE_LANE_THREAD:
      {
        g_autofree char *count = cowscope_timeline_format_number (n);
        return g_strdup_printf (ngettext ("Process %u · %s event", "Process %u · %s events",
                                          (unsigned long) MIN (n, 1000000)),
                                pid, count);
      }
    case COWSCOPE_LANE_CUDA_STREAM:
      return NULL; /* the title says stream and device; the lane is short */
    case COWSCOPE_LANE_PROCESS:
      {
        g_autofree char *count = cowscope_timeline_format_number (n);
        return g_strdup_printf (ngettext ("Process %u · %s IPC event",
                                          "Process %u · %s IPC events",
                                          (unsigned long) MIN (n, 1000000)),
                                pid, count);
      }
    case COWSCOPE_LANE_COUNTER:
    default:
      return g_strdup (_("Counter"));
    }
}

/* The translated name of an item kind. */
static const char *
kind_name (guint kind)
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
                                       gint64 origin)
{
  g_autofree char *at = cowscope_timeline_format_duration (it->start_ns - origin);
  if (it->count > 1)
    {
      g_autofree char *span = cowscope_timeline_format_duration (it->end_ns - it->start_ns);
      g_autofree char *count = cowscope_timeline_format_number (it->count);
      return g_strdup_printf (ngettext ("%s event in %s at %s, mostly “%s”\nZoom in to see them",
                                        "%s events in %s at %s, mostly “%s”\nZoom in to see them",
                                        it->count),
                              count, span, at, kind_name (it->kind));
    }
  GString *s = g_string_new (kind_name (it->kind));
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
