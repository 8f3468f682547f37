/* cowscope-lane-index.c — in-memory lane indexes (see header). */
#include "cowscope-lane-index.h"
#include "cowscope-lane-pixels.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK_SHIFT 8
#define BLOCK (1u << BLOCK_SHIFT)
#define N_CLASSES 64

typedef struct {
  gint64 start;
  gint64 end;
  gint64 id;
  guint64 bytes;
  guint8 kind;
} Span;

struct _CowscopeLaneIndex {
  gint64 *ts;
  gint64 *id;
  guint8 *kind;
  guint64 *bytes;
  gsize n;
  gsize capacity;
  gboolean sorted;
  guint32 *kind_prefix; /* (n_blocks + 1) * COWSCOPE_N_ITEM_KINDS */
  guint64 *bytes_prefix; /* n_blocks + 1 */
  guint64 *kind_bytes_prefix; /* (n_blocks + 1) * COWSCOPE_N_ITEM_KINDS */
  GArray *spans[N_CLASSES];
};

/* Returns an empty index. */
CowscopeLaneIndex *
cowscope_lane_index_new (void)
{
  CowscopeLaneIndex *index = g_new0 (CowscopeLaneIndex, 1);
  index->sorted = TRUE;
  return index;
}

/* Frees @index and everything it holds; NULL is ignored. */
void
cowscope_lane_index_free (CowscopeLaneIndex *index)
{
  if (index == NULL)
    return;
  g_free (index->ts);
  g_free (index->id);
  g_free (index->kind);
  g_free (index->bytes);
  g_free (index->kind_prefix);
  g_free (index->bytes_prefix);
  g_free (index->kind_bytes_prefix);
  for (guint k = 0; k < N_CLASSES; k++)
    g_clear_pointer (&index->spans[k], g_array_unref);
  g_free (index);
}

/* Appends one instant, growing the arrays geometrically. */
void
cowscope_lane_index_append (CowscopeLaneIndex *index, gint64 ts, gint64 id,
                            guint8 kind, guint64 bytes)
{
  if (index->n == index->capacity)
    {
      gsize capacity = MAX (index->capacity * 2, 1024);
      index->ts = g_renew (gint64, index->ts, capacity);
      index->id = g_renew (gint64, index->id, capacity);
      index->kind = g_renew (guint8, index->kind, capacity);
      index->bytes = g_renew (guint64, index->bytes, capacity);
      index->capacity = capacity;
    }
  if (index->n > 0 && ts < index->ts[index->n - 1])
    index->sorted = FALSE;
  index->ts[index->n] = ts;
  index->id[index->n] = id;
  index->kind[index->n] = kind;
  index->bytes[index->n] = bytes;
  index->n++;
}

/* The duration class of a span: floor (log2 (duration)), 0 for <= 1 ns. */
static guint
duration_class (gint64 duration)
{
  if (duration <= 1)
    return 0;
  return 63 - __builtin_clzll ((unsigned long long) duration);
}

/* Adds one span to its duration class. */
void
cowscope_lane_index_add_span (CowscopeLaneIndex *index, gint64 start, gint64 end,
                              gint64 id, guint8 kind, guint64 bytes)
{
  if (end < start)
    end = start;
  /* Unsigned: the difference of any two times fits (callers pass
   * session times; this keeps it defined whatever they pass). */
  guint k = duration_class ((gint64) MIN ((guint64) end - (guint64) start, (guint64) G_MAXINT64));
  if (index->spans[k] == NULL)
    index->spans[k] = g_array_new (FALSE, FALSE, sizeof (Span));
  Span span = { start, end, id, bytes, kind };
  g_array_append_val (index->spans[k], span);
}

typedef struct {
  gint64 ts;
  gint64 id;
  guint64 bytes;
  guint8 kind;
} Row;

/* Orders rows by time, then id (a total order: stable results). */
static int
compare_rows (const void *a, const void *b)
{
  const Row *x = a, *y = b;
  if (x->ts != y->ts)
    return x->ts < y->ts ? -1 : 1;
  return (x->id > y->id) - (x->id < y->id);
}

/* Orders spans by start. */
static int
compare_spans (const void *a, const void *b)
{
  const Span *x = a, *y = b;
  if (x->start != y->start)
    return x->start < y->start ? -1 : 1;
  return (x->id > y->id) - (x->id < y->id);
}

/* Sorts instants (only if they arrived out of order) and spans, then
 * builds the block prefix sums. */
void
cowscope_lane_index_finish (CowscopeLaneIndex *index)
{
  if (!index->sorted)
    {
      Row *rows = g_new (Row, index->n);
      for (gsize i = 0; i < index->n; i++)
        rows[i] = (Row) { index->ts[i], index->id[i], index->bytes[i], index->kind[i] };
      qsort (rows, index->n, sizeof (Row), compare_rows);
      for (gsize i = 0; i < index->n; i++)
        {
          index->ts[i] = rows[i].ts;
          index->id[i] = rows[i].id;
          index->bytes[i] = rows[i].bytes;
          index->kind[i] = rows[i].kind;
        }
      g_free (rows);
      index->sorted = TRUE;
    }
  for (guint k = 0; k < N_CLASSES; k++)
    if (index->spans[k] != NULL)
      g_array_sort (index->spans[k], compare_spans);

  gsize n_blocks = index->n >> BLOCK_SHIFT;
  index->kind_prefix = g_new0 (guint32, (n_blocks + 1) * COWSCOPE_N_ITEM_KINDS);
  index->bytes_prefix = g_new0 (guint64, n_blocks + 1);
  index->kind_bytes_prefix = g_new0 (guint64, (n_blocks + 1) * COWSCOPE_N_ITEM_KINDS);
  for (gsize b = 0; b < n_blocks; b++)
    {
      guint32 *prev = index->kind_prefix + b * COWSCOPE_N_ITEM_KINDS;
      guint32 *next = prev + COWSCOPE_N_ITEM_KINDS;
      memcpy (next, prev, sizeof (guint32) * COWSCOPE_N_ITEM_KINDS);
      guint64 *prev_bytes = index->kind_bytes_prefix + b * COWSCOPE_N_ITEM_KINDS;
      guint64 *next_bytes = prev_bytes + COWSCOPE_N_ITEM_KINDS;
      memcpy (next_bytes, prev_bytes, sizeof (guint64) * COWSCOPE_N_ITEM_KINDS);
      guint64 bytes = index->bytes_prefix[b];
      for (gsize i = b * BLOCK; i < (b + 1) * BLOCK; i++)
        {
          guint k = index->kind[i] < COWSCOPE_N_ITEM_KINDS ? index->kind[i] : 0;
          next[k]++;
          next_bytes[k] += index->bytes[i];
          bytes += index->bytes[i];
        }
      index->bytes_prefix[b + 1] = bytes;
    }
}

/* Returns how many instants the index holds. */
gsize
cowscope_lane_index_get_n (const CowscopeLaneIndex *index)
{
  return index->n;
}

/* First and last instant's time; FALSE when there is none. */
gboolean
cowscope_lane_index_get_bounds (const CowscopeLaneIndex *index, gint64 *first,
                                gint64 *last)
{
  if (index->n == 0)
    return FALSE;
  *first = index->ts[0];
  *last = index->ts[index->n - 1];
  return TRUE;
}

/* The first position in [lo, hi) whose time is >= @t (hi when none). */
static gsize
lower_bound (const gint64 *ts, gsize lo, gsize hi, gint64 t)
{
  while (lo < hi)
    {
      gsize mid = lo + (hi - lo) / 2;
      if (ts[mid] < t)
        lo = mid + 1;
      else
        hi = mid;
    }
  return lo;
}

/* Counts instants in [t0, t1) with two binary searches. */
gsize
cowscope_lane_index_count (const CowscopeLaneIndex *index, gint64 t0, gint64 t1)
{
  if (t1 <= t0)
    return 0;
  gsize a = lower_bound (index->ts, 0, index->n, t0);
  gsize b = lower_bound (index->ts, a, index->n, t1);
  return b - a;
}

typedef CowscopePixels Pixels;
#define edge cowscope_pixels_edge
#define pixel_of cowscope_pixels_of

/* Adds the kinds and bytes of instants [a, b) to @counts and @bytes,
 * using the block prefix sums for whole blocks. */
static void
accumulate (const CowscopeLaneIndex *index, gsize a, gsize b,
            guint32 counts[COWSCOPE_N_ITEM_KINDS], guint64 *bytes)
{
  gsize first_full = (a + BLOCK - 1) >> BLOCK_SHIFT;
  gsize last_full = b >> BLOCK_SHIFT;
  if (first_full >= last_full)
    {
      for (gsize i = a; i < b; i++)
        {
          counts[index->kind[i] < COWSCOPE_N_ITEM_KINDS ? index->kind[i] : 0]++;
          *bytes += index->bytes[i];
        }
      return;
    }
  for (gsize i = a; i < first_full * BLOCK; i++)
    {
      counts[index->kind[i] < COWSCOPE_N_ITEM_KINDS ? index->kind[i] : 0]++;
      *bytes += index->bytes[i];
    }
  const guint32 *lo = index->kind_prefix + first_full * COWSCOPE_N_ITEM_KINDS;
  const guint32 *hi = index->kind_prefix + last_full * COWSCOPE_N_ITEM_KINDS;
  for (guint k = 0; k < COWSCOPE_N_ITEM_KINDS; k++)
    counts[k] += hi[k] - lo[k];
  *bytes += index->bytes_prefix[last_full] - index->bytes_prefix[first_full];
  for (gsize i = last_full * BLOCK; i < b; i++)
    {
      counts[index->kind[i] < COWSCOPE_N_ITEM_KINDS ? index->kind[i] : 0]++;
      *bytes += index->bytes[i];
    }
}

/* Adds instant @i to @sums. */
static inline void
sum_instant (const CowscopeLaneIndex *index, gsize i, CowscopeKindSums *sums)
{
  guint k = index->kind[i] < COWSCOPE_N_ITEM_KINDS ? index->kind[i] : 0;
  sums->count[k]++;
  sums->bytes[k] += index->bytes[i];
}

/* Sums the instants of [t0, t1): whole blocks from the prefix sums, the
 * partial blocks at either end instant by instant. */
void
cowscope_lane_index_sum (const CowscopeLaneIndex *index, gint64 t0, gint64 t1,
                         CowscopeKindSums *sums)
{
  if (t1 <= t0)
    return;
  gsize a = lower_bound (index->ts, 0, index->n, t0);
  gsize b = lower_bound (index->ts, a, index->n, t1);
  gsize first_full = (a + BLOCK - 1) >> BLOCK_SHIFT;
  gsize last_full = b >> BLOCK_SHIFT;
  if (first_full >= last_full)
    {
      for (gsize i = a; i < b; i++)
        sum_instant (index, i, sums);
      return;
    }
  for (gsize i = a; i < first_full * BLOCK; i++)
    sum_instant (index, i, sums);
  const guint32 *lo = index->kind_prefix + first_full * COWSCOPE_N_ITEM_KINDS;
  const guint32 *hi = index->kind_prefix + last_full * COWSCOPE_N_ITEM_KINDS;
  const guint64 *lo_bytes = index->kind_bytes_prefix + first_full * COWSCOPE_N_ITEM_KINDS;
  const guint64 *hi_bytes = index->kind_bytes_prefix + last_full * COWSCOPE_N_ITEM_KINDS;
  for (guint k = 0; k < COWSCOPE_N_ITEM_KINDS; k++)
    {
      sums->count[k] += hi[k] - lo[k];
      sums->bytes[k] += hi_bytes[k] - lo_bytes[k];
    }
  for (gsize i = last_full * BLOCK; i < b; i++)
    sum_instant (index, i, sums);
}

/* Items per non-empty pixel, then the spans a pixel wide or more. */
void
cowscope_lane_index_query (const CowscopeLaneIndex *index, gint64 t0, gint64 t1,
                           guint width, GArray *items, GArray *spans)
{
  if (t1 <= t0 || width == 0)
    return;
  Pixels px;
  cowscope_pixels_init (&px, t0, t1, width);

  gsize i = lower_bound (index->ts, 0, index->n, t0);
  gsize end = lower_bound (index->ts, i, index->n, t1);
  while (i < end)
    {
      guint p = pixel_of (&px, index->ts[i]);
      gint64 right = edge (&px, p + 1);
      gsize j = lower_bound (index->ts, i + 1, end, right);
      CowscopeTimelineItem item = { 0 };
      item.pixel = (guint16) p;
      item.count = (guint32) (j - i);
      if (j - i == 1)
        {
          item.start_ns = item.end_ns = index->ts[i];
          item.id = index->id[i];
          item.kind = index->kind[i];
          item.kinds = 1u << MIN (item.kind, COWSCOPE_N_ITEM_KINDS - 1);
          item.bytes = index->bytes[i];
        }
      else
        {
          guint32 counts[COWSCOPE_N_ITEM_KINDS] = { 0 };
          guint64 bytes = 0;
          accumulate (index, i, j, counts, &bytes);
          guint best = 0;
          for (guint k = 1; k < COWSCOPE_N_ITEM_KINDS; k++)
            if (counts[k] > counts[best])
              best = k;
          for (guint k = 0; k < COWSCOPE_N_ITEM_KINDS; k++)
            if (counts[k] > 0)
              item.kinds |= 1u << k;
          item.start_ns = edge (&px, p);
          item.end_ns = right;
          item.id = -1;
          item.kind = (guint16) best;
          item.bytes = bytes;
        }
      g_array_append_val (items, item);
      i = j;
    }

  if (spans == NULL)
    return;
  for (guint k = 0; k < N_CLASSES; k++)
    {
      GArray *class = index->spans[k];
      if (class == NULL || class->len == 0)
        continue;
      double longest = k >= 62 ? (double) G_MAXINT64 : (double) ((1ll << (k + 1)) - 1);
      if (longest < px.ns_per_px)
        continue;
      gint64 reach = k >= 62 ? G_MAXINT64 / 2 : (1ll << (k + 1));
      gint64 from = t0 - reach;
      const Span *s = (const Span *) class->data;
      gsize lo = 0, hi = class->len;
      while (lo < hi)
        {
          gsize mid = lo + (hi - lo) / 2;
          if (s[mid].start < from)
            lo = mid + 1;
          else
            hi = mid;
        }
      for (gsize m = lo; m < class->len && s[m].start < t1; m++)
        {
          if (s[m].end <= t0)
            continue;
          if ((double) (s[m].end - s[m].start) < px.ns_per_px)
            continue;
          CowscopeTimelineItem item = {
            .start_ns = s[m].start, .end_ns = s[m].end, .id = s[m].id,
            .bytes = s[m].bytes, .count = 1, .kind = s[m].kind,
            .kinds = 1u << MIN (s[m].kind, COWSCOPE_N_ITEM_KINDS - 1),
            .pixel = (guint16) pixel_of (&px, MAX (s[m].start, t0)),
          };
          g_array_append_val (spans, item);
        }
    }
}

/* One sample per pixel from the bins it overlaps. */
void
cowscope_counter_bins_query (const CowscopeCounterBins *series, gint64 t0,
                             gint64 t1, guint width, GArray *samples)
{
  if (t1 <= t0 || width == 0)
    return;
  Pixels px;
  cowscope_pixels_init (&px, t0, t1, width);
  for (guint p = 0; p < px.width; p++)
    {
      gint64 a = edge (&px, p), b = edge (&px, p + 1);
      guint first = cowscope_counter_bins_index (series, a);
      guint last = cowscope_counter_bins_index (series, MAX (a, b - 1));
      CowscopeCounterSample sample = { a, b, series->min[first], series->max[first],
                                       series->last[last], (guint16) p };
      for (guint k = first + 1; k <= last; k++)
        {
          sample.min = MIN (sample.min, series->min[k]);
          sample.max = MAX (sample.max, series->max[k]);
        }
      g_array_append_val (samples, sample);
    }
}
