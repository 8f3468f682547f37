/* fuzz-packed.c — libFuzzer target for the decoders of a session's
 * packed BLOBs (cowscope-packed-records.h): timeline chunks (thread and
 * CUDA lanes), timeline spans, checkpoint states, checkpoint replays and
 * counter bins, and the event chunks that hold the events
 * (cowscope-event-chunk.h).  The first byte of the input picks the record kind and the
 * rest is the BLOB; each is decoded the way the model decodes it (until
 * the reader is done or failed) into what the model builds from it — a
 * lane index that is then queried, a graph state that is then replayed,
 * sorted and indexed, counter bins that are then sampled — so that a
 * decoder fault, an arithmetic overflow (UBSan) or a runaway allocation
 * shows.  Built with the replay driver (fuzz-replay.c) by every compiler,
 * with libFuzzer by clang. */
#include <glib.h>
#include <stdint.h>
#include <string.h>

#include "cowscope-event-chunk.h"
#include "cowscope-format-counters.h"
#include "cowscope-format-timeline.h"
#include "cowscope-graph-state.h"
#include "cowscope-lane-index.h"
#include "cowscope-packed-records.h"
#include "cowscope-timeline-item.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (CowscopeLaneIndex, cowscope_lane_index_free)

/* At most this many records are decoded from one input, as the model
 * reads at most a chunk's count (its row says how many). */
#define MAX_RECORDS 100000

/* Queries @index over a few windows, as the timeline draws it: windows
 * within a session's time (the document's start and end are times). */
static void
query_index (CowscopeLaneIndex *index)
{
  gint64 first, last;
  cowscope_lane_index_finish (index);
  if (!cowscope_lane_index_get_bounds (index, &first, &last))
    return;
  g_autoptr (GArray) items = g_array_new (FALSE, FALSE, sizeof (CowscopeTimelineItem));
  g_autoptr (GArray) spans = g_array_new (FALSE, FALSE, sizeof (CowscopeTimelineItem));
  gint64 width = last / 2 - first / 2;
  gint64 windows[][2] = {
    { first, last },
    { first + width / 3, last - width / 3 },
    { 0, COWSCOPE_FORMAT_MAX_TIME },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (windows); i++)
    {
      CowscopeKindSums sums;
      memset (&sums, 0, sizeof sums);
      g_array_set_size (items, 0);
      g_array_set_size (spans, 0);
      cowscope_lane_index_query (index, windows[i][0], windows[i][1], 97, items, spans);
      cowscope_lane_index_sum (index, windows[i][0], windows[i][1], &sums);
      cowscope_lane_index_count (index, windows[i][0], windows[i][1]);
    }
}

static void
decode_instants (const guint8 *blob, gsize len, gboolean cuda)
{
  g_autoptr (CowscopeLaneIndex) index = cowscope_lane_index_new ();
  CowscopePackedReader r;
  cowscope_packed_reader_init (&r, blob, len);
  CowscopeInstant in = { 0 };
  for (guint n = 0; n < MAX_RECORDS && !cowscope_packed_reader_done (&r); n++)
    {
      cowscope_instant_read (&r, &in, cuda);
      /* As the model: an instant outside any session's time ends what
       * can be used of the chunk. */
      if (!cowscope_packed_reader_ok (&r) || !cowscope_instant_valid (&in))
        break;
      guint8 kind = cuda ? (guint8) (in.code % COWSCOPE_N_ITEM_KINDS)
                         : cowscope_timeline_event_kind (in.code, in.aux);
      cowscope_lane_index_append (index, in.ts, in.id, kind, in.bytes);
    }
  query_index (index);
}

static void
decode_spans (const guint8 *blob, gsize len)
{
  g_autoptr (CowscopeLaneIndex) index = cowscope_lane_index_new ();
  CowscopePackedReader r;
  cowscope_packed_reader_init (&r, blob, len);
  CowscopeSpan span = { 0 };
  for (guint n = 0; n < MAX_RECORDS && !cowscope_packed_reader_done (&r); n++)
    {
      cowscope_span_read (&r, &span);
      if (!cowscope_packed_reader_ok (&r) || !cowscope_span_valid (&span))
        break;
      cowscope_lane_index_add_span (index, span.start, span.open ? span.start : span.end, span.id,
                                    cowscope_timeline_span_kind (span.code), span.bytes);
    }
  query_index (index);
}

/* Sorts and indexes @st, as the sharing graph's assembly reads it. */
static void
walk_state (CowscopeGraphState *st)
{
  g_autofree guint32 *order = cowscope_graph_state_sort (st);
  CowscopeGraphStateIndex index;
  cowscope_graph_state_get_index (st, &index);
  for (guint i = 0; i < cowscope_graph_state_get_n_live (st); i++)
    {
      const CowscopeLiveObject *o = cowscope_graph_state_get_slot (st, order[i]);
      if (o == NULL)
        continue;
      gint64 name_id;
      cowscope_graph_state_get_slot_name (st, order[i], &name_id);
      CowscopeGraphStateProbe probe;
      cowscope_graph_state_probe_start (&index, o->kind, o->pid, o->source_id, &probe);
      while (cowscope_graph_state_probe_next (&probe) >= 0)
        ;
    }
}

/* A checkpoint state, then its objects changed as a replay would. */
static void
decode_state (const guint8 *blob, gsize len)
{
  g_autoptr (CowscopeGraphState) st = cowscope_graph_state_new ();
  CowscopePackedReader r;
  cowscope_packed_reader_init (&r, blob, len);
  CowscopeObjectKey key = { 0 };
  for (guint n = 0; n < MAX_RECORDS && !cowscope_packed_reader_done (&r); n++)
    {
      if (!cowscope_object_read_key (&r, &key))
        break;
      CowscopeLiveObject *o = cowscope_graph_state_add (st, key.kind, key.pid, key.id);
      gsize name_len;
      const char *name = cowscope_object_read_body (&r, o, 1000, &name_len);
      if (!cowscope_packed_reader_ok (&r))
        break;
      if (name != NULL)
        cowscope_graph_state_set_name (st, o, name, (gssize) name_len);
    }
  walk_state (st);
  g_autoptr (CowscopeGraphState) copy = cowscope_graph_state_copy (st, 16, NULL);
  cowscope_graph_state_compact (copy);
  walk_state (copy);
}

static void
decode_replay (const guint8 *blob, gsize len)
{
  g_autoptr (CowscopeGraphState) st = cowscope_graph_state_new ();
  CowscopePackedReader r;
  cowscope_packed_reader_init (&r, blob, len);
  CowscopeReplayEvent ev = { 0 };
  for (guint n = 0; n < MAX_RECORDS && !cowscope_packed_reader_done (&r); n++)
    {
      cowscope_replay_read_head (&r, &ev);
      if (!cowscope_packed_reader_ok (&r))
        break;
      CowscopeLiveObject *born =
        cowscope_graph_state_apply (st, ev.type, ev.aux, (guint32) ev.pid, ev.v);
      gint64 free_ts;
      gsize name_len;
      const char *name = cowscope_replay_read_tail (&r, &ev, &free_ts, &name_len);
      if (!cowscope_packed_reader_ok (&r))
        break;
      if (born != NULL)
        {
          born->free_ts = free_ts;
          if (name != NULL)
            cowscope_graph_state_set_name (st, born, name, (gssize) name_len);
        }
      if ((n & 255) == 0)
        cowscope_graph_state_compact (st);
    }
  walk_state (st);
}

/* Counter bins: the row's start, end and count come first (varints,
 * zigzag for the times), as the table's columns, then the BLOB. */
static void
decode_counters (const guint8 *blob, gsize len)
{
  CowscopePackedReader r;
  cowscope_packed_reader_init (&r, blob, len);
  gint64 start = cowscope_packed_read_s (&r);
  gint64 end = cowscope_packed_read_s (&r);
  gint64 n_bins = (gint64) cowscope_packed_read_u (&r);
  /* The row's start and end are checked as times before the BLOB is
   * read (cowscope-format-check.h); so here. */
  if (!cowscope_packed_reader_ok (&r) || start < 0 || start > COWSCOPE_FORMAT_MAX_TIME || end < 0
      || end > COWSCOPE_FORMAT_MAX_TIME)
    return;
  CowscopeCounterBins *bins = cowscope_counter_bins_read (start, end, n_bins, r.p,
                                                          (gsize) (r.end - r.p));
  if (bins == NULL)
    return;
  g_autoptr (GArray) samples = g_array_new (FALSE, FALSE, sizeof (CowscopeCounterSample));
  cowscope_counter_bins_query (bins, start, end, 53, samples);
  cowscope_counter_bins_query (bins, 0, COWSCOPE_FORMAT_MAX_TIME, 7, samples);
  cowscope_counter_bins_free (bins);
}

/* An event chunk, decoded as the events module decodes it (its row's
 * header taken from the decoded events, then a lying one), summarized as
 * the store summarizes it, and encoded again: a chunk that decodes must
 * decode to the same events once re-encoded. */
static void
decode_event_chunk (const guint8 *blob, gsize len)
{
  g_autoptr (CowscopeEventBlock) block = cowscope_event_block_new (16);
  const char *what = NULL;
  if (!cowscope_event_decode (blob, len, NULL, block, &what))
    {
      g_assert_nonnull (what);
      g_assert_cmpuint (block->n, ==, 0);
      return;
    }
  g_assert_cmpuint (block->n, >, 0);
  g_assert_cmpuint (block->n, <=, COWSCOPE_EVENT_CHUNK_MAX_EVENTS);
  CowscopeEventSummary sum;
  cowscope_event_block_summary (block, block->n, &sum);
  const gint64 *seq = block->col[COWSCOPE_EVENT_COL_SEQ];
  CowscopeEventChunkHeader header = { seq[0], seq[block->n - 1], block->n };
  CowscopeEventChunkHeader lie = { seq[0], seq[block->n - 1], block->n + 1 };
  g_autoptr (CowscopeEventBlock) again = cowscope_event_block_new (16);
  g_assert_true (cowscope_event_decode (blob, len, &header, again, &what));
  g_assert_false (cowscope_event_decode (blob, len, &lie, again, &what));

  g_autoptr (CowscopeEventEncoder) encoder = cowscope_event_encoder_new ();
  gsize out_len = 0;
  const guint8 *out = cowscope_event_encode (encoder, block, block->n, &out_len);
  g_assert_true (cowscope_event_decode (out, out_len, &header, again, &what));
  for (int c = 0; c < COWSCOPE_EVENT_N_COLS; c++)
    g_assert_cmpmem (again->col[c], again->n * sizeof (gint64), block->col[c],
                     block->n * sizeof (gint64));
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  if (size < 1)
    return 0;
  const guint8 *blob = data + 1;
  gsize len = size - 1;
  switch (data[0] % 7)
    {
    case 6: decode_event_chunk (blob, len); break;
    case 0: decode_instants (blob, len, FALSE); break;
    case 1: decode_instants (blob, len, TRUE); break;
    case 2: decode_spans (blob, len); break;
    case 3: decode_state (blob, len); break;
    case 4: decode_replay (blob, len); break;
    default: decode_counters (blob, len); break;
    }
  return 0;
}
