/* cowscope-format-counters.h — the counter tracks of a session: how
 * events move them (the rules) and how a track is kept in fixed bins of
 * (min, max, last) values (timeline_counters).  The finalizer, the loader,
 * the live view and the Chrome trace export all count with these. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef enum {
  COWSCOPE_COUNTER_NONE = -1,
  COWSCOPE_COUNTER_BYTES_ALLOCATED = 0,
  COWSCOPE_COUNTER_BYTES_SHARED,     /* bytes lazy copies share: what CoW saved */
  COWSCOPE_COUNTER_LIVE_STORAGES,
  COWSCOPE_N_COUNTERS
} CowscopeCounterKind;

/* Bins per track in a finalized session. */
#define COWSCOPE_COUNTER_BINS 65536

/* ---- the rules ---------------------------------------------------------- */

/* The three counters as events change them, in time order. */
typedef struct {
  double value[COWSCOPE_N_COUNTERS]; /* the counters after the last event */
  GHashTable *contexts;              /* (pid, context id) -> bytes one sharer shares */
} CowscopeCounterRules;

void cowscope_counter_rules_init (CowscopeCounterRules *rules);
/* Frees what init() allocated; the values stay readable. */
void cowscope_counter_rules_clear (CowscopeCounterRules *rules);

/* Applies one event of process @pid (@v: at least v0..v3):
 *   allocation new / free       bytes allocated +/- v1;
 *   storage new / free          live storages +/- 1;
 *   storage new on a context    bytes shared + v2 (a lazy copy);
 *   context unref, refcount v2 >= 1 left
 *                               bytes shared - the bytes of one sharer.
 * Returns the set of counters it changed (bit k: counter k, now
 * rules->value[k]). */
guint cowscope_counter_rules_apply (CowscopeCounterRules *rules, guint32 pid, gint64 type,
                                    const gint64 *v);

/* ---- bins ------------------------------------------------------------------ */

/* A track over [start, end] in n_bins equal bins: in each, the least,
 * greatest and last value it took. */
typedef struct {
  gint64 start;
  double bin_ns;
  guint n_bins;
  double *min, *max, *last;
  guint8 *touched;   /* bins a value fell into (until finish()) */
  /* Growing tracks (cowscope_counter_bins_new_growing()). */
  gboolean growing;
  gint64 bin_width;  /* bin_ns, exactly: a power of two */
  guint used;        /* bins up to the last one a value fell into */
} CowscopeCounterBins;

CowscopeCounterBins *cowscope_counter_bins_new (gint64 start, gint64 end, guint n_bins);

/* A track that grows with a recording whose end is not known yet: it
 * starts at @start with 1 ns bins and, whenever a value falls past its
 * COWSCOPE_COUNTER_BINS bins, merges neighbouring bins in pairs (exact
 * for min, max and last) to cover twice the time.  cowscope_counter_bins_trim()
 * then fixes its end. */
CowscopeCounterBins *cowscope_counter_bins_new_growing (gint64 start);

/* A growing track's last step: merges bins in pairs until the bins that
 * hold values are no more than @max_bins, and ends the track after them
 * (n_bins × bin_ns after start; see cowscope_counter_bins_end()). */
void cowscope_counter_bins_trim (CowscopeCounterBins *bins, guint max_bins);

/* The last ns a track covers: timeline_counters.end_ns. */
gint64 cowscope_counter_bins_end (const CowscopeCounterBins *bins);

/* How many bins a value fell into. */
guint cowscope_counter_bins_count_touched (const CowscopeCounterBins *bins);
void cowscope_counter_bins_free (CowscopeCounterBins *bins);

/* The bin holding @ts, clamped to the track. */
guint cowscope_counter_bins_index (const CowscopeCounterBins *bins, gint64 ts);

/* Records that the counter is @value from @ts on. */
void cowscope_counter_bins_set (CowscopeCounterBins *bins, gint64 ts, double value);

/* Fills the bins no value fell into with the value before them (a step
 * function): the track is then complete. */
void cowscope_counter_bins_finish (CowscopeCounterBins *bins);

/* Appends the finished @bins as timeline_counters.bins: per bin min, max
 * and last, little-endian float64. */
void cowscope_counter_bins_write (const CowscopeCounterBins *bins, GByteArray *out);

/* A finished track read back from a timeline_counters row; NULL when the
 * row's BLOB does not hold @n_bins bins, or holds a value no counter
 * takes (negative, not finite, or outside its bin's min and max). */
CowscopeCounterBins *cowscope_counter_bins_read (gint64 start, gint64 end, gint64 n_bins,
                                                 const void *blob, gsize len);

G_END_DECLS
