/* cowscope-format-counters.c — counter rules and bins (see header). */
#include "cowscope-format-counters.h"

#include <string.h>

#include "cow-trace.h"
#include "cowscope-packed.h"

void
cowscope_counter_rules_init (CowscopeCounterRules *rules)
{
  memset (rules, 0, sizeof *rules);
  rules->contexts = g_hash_table_new (g_direct_hash, g_direct_equal);
}

void
cowscope_counter_rules_clear (CowscopeCounterRules *rules)
{
  g_clear_pointer (&rules->contexts, g_hash_table_unref);
}

/* A key for (pid, id); ids are process-wide counters far below 2^44, so
 * the fold is exact in practice (and only feeds counters). */
static gpointer
pid_id_key (guint32 pid, gint64 id)
{
  return GSIZE_TO_POINTER (((guint64) pid << 44) ^ (guint64) id);
}

/* A storage born on a context (a lazy clone) adds its bytes to "bytes
 * shared" until one of the context's sharers drops its reference
 * (materializes or is freed) while others remain. */
guint
cowscope_counter_rules_apply (CowscopeCounterRules *rules, guint32 pid, gint64 type,
                              const gint64 *v)
{
  double *value = rules->value;
  switch (type)
    {
    case COW_EVENT_ALLOCATION_NEW:
      value[COWSCOPE_COUNTER_BYTES_ALLOCATED] += (double) v[1];
      return 1u << COWSCOPE_COUNTER_BYTES_ALLOCATED;
    case COW_EVENT_ALLOCATION_FREE:
      value[COWSCOPE_COUNTER_BYTES_ALLOCATED] -= (double) v[1];
      return 1u << COWSCOPE_COUNTER_BYTES_ALLOCATED;
    case COW_EVENT_STORAGE_NEW:
      value[COWSCOPE_COUNTER_LIVE_STORAGES] += 1;
      if (v[3] == 0)
        return 1u << COWSCOPE_COUNTER_LIVE_STORAGES;
      g_hash_table_insert (rules->contexts, pid_id_key (pid, v[3]), GSIZE_TO_POINTER (v[2]));
      value[COWSCOPE_COUNTER_BYTES_SHARED] += (double) v[2];
      return 1u << COWSCOPE_COUNTER_LIVE_STORAGES | 1u << COWSCOPE_COUNTER_BYTES_SHARED;
    case COW_EVENT_STORAGE_FREE:
      value[COWSCOPE_COUNTER_LIVE_STORAGES] -= 1;
      return 1u << COWSCOPE_COUNTER_LIVE_STORAGES;
    case COW_EVENT_CONTEXT_UNREF:
      if (v[2] >= 1)
        {
          gpointer nbytes;
          if (g_hash_table_lookup_extended (rules->contexts, pid_id_key (pid, v[0]), NULL,
                                            &nbytes))
            {
              value[COWSCOPE_COUNTER_BYTES_SHARED] -= (double) GPOINTER_TO_SIZE (nbytes);
              return 1u << COWSCOPE_COUNTER_BYTES_SHARED;
            }
        }
      return 0;
    case COW_EVENT_CONTEXT_FREE:
      g_hash_table_remove (rules->contexts, pid_id_key (pid, v[0]));
      return 0;
    default:
      return 0;
    }
}

CowscopeCounterBins *
cowscope_counter_bins_new (gint64 start, gint64 end, guint n_bins)
{
  CowscopeCounterBins *bins = g_new0 (CowscopeCounterBins, 1);
  bins->start = start;
  bins->n_bins = MAX (n_bins, 1);
  /* In double: a damaged row's start and end may be anything. */
  bins->bin_ns = MAX (((double) end - (double) start + 1.0) / bins->n_bins, 1.0);
  bins->min = g_new0 (double, bins->n_bins);
  bins->max = g_new0 (double, bins->n_bins);
  bins->last = g_new0 (double, bins->n_bins);
  bins->touched = g_new0 (guint8, bins->n_bins);
  return bins;
}

CowscopeCounterBins *
cowscope_counter_bins_new_growing (gint64 start)
{
  CowscopeCounterBins *bins = cowscope_counter_bins_new (start, start + COWSCOPE_COUNTER_BINS - 1,
                                                         COWSCOPE_COUNTER_BINS);
  bins->growing = TRUE;
  bins->bin_width = 1;
  bins->bin_ns = 1.0;
  return bins;
}

/* Bin i becomes bins 2i and 2i + 1 merged: the track covers twice the
 * time in the same bins. */
static void
merge_pairs (CowscopeCounterBins *bins)
{
  guint n = bins->n_bins;
  for (guint i = 0; i < n / 2; i++)
    {
      guint a = 2 * i, b = 2 * i + 1;
      gboolean ta = bins->touched[a], tb = bins->touched[b];
      double mn = tb ? bins->min[b] : bins->min[a], mx = tb ? bins->max[b] : bins->max[a];
      if (ta && tb)
        {
          mn = MIN (bins->min[a], bins->min[b]);
          mx = MAX (bins->max[a], bins->max[b]);
        }
      bins->min[i] = mn;
      bins->max[i] = mx;
      bins->last[i] = tb ? bins->last[b] : bins->last[a];
      bins->touched[i] = ta || tb;
    }
  for (guint i = n / 2; i < n; i++)
    {
      bins->min[i] = bins->max[i] = bins->last[i] = 0;
      bins->touched[i] = 0;
    }
  bins->bin_width *= 2;
  bins->bin_ns = (double) bins->bin_width;
  bins->used = (bins->used + 1) / 2;
}

void
cowscope_counter_bins_trim (CowscopeCounterBins *bins, guint max_bins)
{
  g_return_if_fail (bins->growing);
  max_bins = CLAMP (max_bins, 1, bins->n_bins);
  while (MAX (bins->used, 1) > max_bins)
    merge_pairs (bins);
  bins->n_bins = MAX (bins->used, 1);
  bins->growing = FALSE;
}

gint64
cowscope_counter_bins_end (const CowscopeCounterBins *bins)
{
  return bins->start + (gint64) (bins->bin_ns * bins->n_bins) - 1;
}

guint
cowscope_counter_bins_count_touched (const CowscopeCounterBins *bins)
{
  guint n = 0;
  for (guint b = 0; b < bins->n_bins; b++)
    n += bins->touched[b] != 0;
  return n;
}

void
cowscope_counter_bins_free (CowscopeCounterBins *bins)
{
  if (bins == NULL)
    return;
  g_free (bins->min);
  g_free (bins->max);
  g_free (bins->last);
  g_free (bins->touched);
  g_free (bins);
}

guint
cowscope_counter_bins_index (const CowscopeCounterBins *bins, gint64 ts)
{
  double f = (double) (ts - bins->start) / bins->bin_ns;
  if (f < 0)
    return 0;
  if (f >= bins->n_bins)
    return bins->n_bins - 1;
  return (guint) f;
}

void
cowscope_counter_bins_set (CowscopeCounterBins *bins, gint64 ts, double value)
{
  guint b;
  if (bins->growing)
    {
      gint64 i = ts <= bins->start ? 0 : (ts - bins->start) / bins->bin_width;
      while (i >= (gint64) bins->n_bins)
        {
          merge_pairs (bins);
          i = (ts - bins->start) / bins->bin_width;
        }
      b = (guint) i;
      bins->used = MAX (bins->used, b + 1);
    }
  else
    b = cowscope_counter_bins_index (bins, ts);
  if (!bins->touched[b])
    {
      bins->touched[b] = 1;
      bins->min[b] = bins->max[b] = value;
    }
  else
    {
      bins->min[b] = MIN (bins->min[b], value);
      bins->max[b] = MAX (bins->max[b], value);
    }
  bins->last[b] = value;
}

/* A bin holds the value carried into it as well as the ones set in it. */
void
cowscope_counter_bins_finish (CowscopeCounterBins *bins)
{
  double carried = 0;
  for (guint b = 0; b < bins->n_bins; b++)
    {
      if (!bins->touched[b])
        bins->min[b] = bins->max[b] = bins->last[b] = carried;
      else
        {
          bins->min[b] = MIN (bins->min[b], carried);
          bins->max[b] = MAX (bins->max[b], carried);
        }
      bins->touched[b] = 1;
      carried = bins->last[b];
    }
}

void
cowscope_counter_bins_write (const CowscopeCounterBins *bins, GByteArray *out)
{
  for (guint b = 0; b < bins->n_bins; b++)
    {
      cowscope_packed_write_double (out, bins->min[b]);
      cowscope_packed_write_double (out, bins->max[b]);
      cowscope_packed_write_double (out, bins->last[b]);
    }
}

CowscopeCounterBins *
cowscope_counter_bins_read (gint64 start, gint64 end, gint64 n_bins, const void *blob, gsize len)
{
  if (n_bins <= 0 || n_bins > G_MAXINT32 || len != (gsize) n_bins * 3 * sizeof (double))
    return NULL;
  CowscopeCounterBins *bins = cowscope_counter_bins_new (start, end, (guint) n_bins);
  CowscopePackedReader r;
  cowscope_packed_reader_init (&r, blob, len);
  for (guint b = 0; b < bins->n_bins; b++)
    {
      bins->min[b] = cowscope_packed_read_double (&r);
      bins->max[b] = cowscope_packed_read_double (&r);
      bins->last[b] = cowscope_packed_read_double (&r);
      bins->touched[b] = 1;
      /* Counters count bytes and storages: a damaged BLOB's NaN,
       * infinity or negative value is refused, not drawn. */
      if (!(bins->min[b] >= 0 && bins->min[b] <= bins->max[b] && bins->max[b] < 1e300
            && bins->last[b] >= bins->min[b] && bins->last[b] <= bins->max[b]))
        {
          cowscope_counter_bins_free (bins);
          return NULL;
        }
    }
  return bins;
}
