/* test-format-packed.c — the packed BLOBs of a session: every record
 * written by the session format reads back as it was written, and a
 * reader over truncated or garbled bytes fails without reading past them. */
#include <glib.h>
#include <string.h>

#include "cow-trace.h"
#include "cowscope-format-counters.h"
#include "cowscope-graph-state.h"
#include "cowscope-packed-records.h"
#include "cowscope-packed.h"

static void
assert_same_object (const CowscopeLiveObject *x, const CowscopeLiveObject *y)
{
  g_assert_cmpuint (x->pid, ==, y->pid);
  g_assert_cmpuint (x->kind, ==, y->kind);
  g_assert_cmpuint (x->alloc_kind, ==, y->alloc_kind);
  g_assert_cmpuint (x->id, ==, y->id);
  g_assert_cmpuint (x->nbytes, ==, y->nbytes);
  g_assert_cmpint (x->free_ts, ==, y->free_ts);
  g_assert_cmpuint (x->allocation_id, ==, y->allocation_id);
  g_assert_cmpuint (x->context_id, ==, y->context_id);
  g_assert_cmpuint (x->left_context_id, ==, y->left_context_id);
  g_assert_cmpuint (x->storage_id, ==, y->storage_id);
  g_assert_cmpuint (x->source_id, ==, y->source_id);
  g_assert_cmpint (x->numel, ==, y->numel);
  g_assert_cmpuint (x->dtype, ==, y->dtype);
  g_assert_cmpuint (x->ndim, ==, y->ndim);
  g_assert_cmpint (x->device, ==, y->device);
}

static void
test_varints (void)
{
  static const guint64 unsigned_values[] = { 0, 1, 127, 128, 16383, 16384, G_MAXUINT32,
                                             G_MAXUINT64 };
  static const gint64 signed_values[] = { 0, 1, -1, 63, -64, 64, -65, G_MAXINT64, G_MININT64 };
  g_autoptr (GByteArray) b = g_byte_array_new ();
  for (gsize i = 0; i < G_N_ELEMENTS (unsigned_values); i++)
    cowscope_packed_write_u (b, unsigned_values[i]);
  for (gsize i = 0; i < G_N_ELEMENTS (signed_values); i++)
    cowscope_packed_write_s (b, signed_values[i]);
  cowscope_packed_write_byte (b, 0xab);
  cowscope_packed_write_free (b, -1, 1000);
  cowscope_packed_write_free (b, 900, 1000);
  cowscope_packed_write_free (b, 5000, 1000);
  cowscope_packed_write_name (b, NULL, -1);
  cowscope_packed_write_name (b, "weights", -1);
  cowscope_packed_write_name (b, "", -1);
  cowscope_packed_write_double (b, -2.5);

  CowscopePackedReader r;
  cowscope_packed_reader_init (&r, b->data, b->len);
  for (gsize i = 0; i < G_N_ELEMENTS (unsigned_values); i++)
    g_assert_cmpuint (cowscope_packed_read_u (&r), ==, unsigned_values[i]);
  for (gsize i = 0; i < G_N_ELEMENTS (signed_values); i++)
    g_assert_cmpint (cowscope_packed_read_s (&r), ==, signed_values[i]);
  g_assert_cmpuint (cowscope_packed_read_byte (&r), ==, 0xab);
  g_assert_cmpint (cowscope_packed_read_free (&r, 1000), ==, -1);
  g_assert_cmpint (cowscope_packed_read_free (&r, 1000), ==, 900);
  g_assert_cmpint (cowscope_packed_read_free (&r, 1000), ==, 5000);
  gsize len;
  g_assert_null (cowscope_packed_read_name (&r, &len));
  const char *name = cowscope_packed_read_name (&r, &len);
  g_assert_cmpuint (len, ==, 7);
  g_assert_cmpint (memcmp (name, "weights", 7), ==, 0);
  g_assert_nonnull (cowscope_packed_read_name (&r, &len));
  g_assert_cmpuint (len, ==, 0);
  g_assert_cmpfloat (cowscope_packed_read_double (&r), ==, -2.5);
  g_assert_true (cowscope_packed_reader_ok (&r));
  g_assert_true (cowscope_packed_reader_done (&r));

  /* Small magnitudes are short: one byte for -64 .. 63. */
  g_byte_array_set_size (b, 0);
  cowscope_packed_write_s (b, -64);
  cowscope_packed_write_s (b, 63);
  g_assert_cmpuint (b->len, ==, 2);
}

/* A reader never reads past its end: cut anywhere, it fails or ends. */
static void
test_truncated_reads_fail (void)
{
  g_autoptr (GByteArray) b = g_byte_array_new ();
  cowscope_packed_write_u (b, G_MAXUINT64);
  cowscope_packed_write_name (b, "a long enough name", -1);
  cowscope_packed_write_double (b, 1.0);
  for (guint cut = 0; cut < b->len; cut++)
    {
      g_autofree guint8 *copy = g_memdup2 (b->data, cut);
      CowscopePackedReader r;
      cowscope_packed_reader_init (&r, copy, cut);
      cowscope_packed_read_u (&r);
      gsize len;
      cowscope_packed_read_name (&r, &len);
      cowscope_packed_read_double (&r);
      g_assert_false (cowscope_packed_reader_ok (&r));
      g_assert_true (r.p <= r.end);
      g_assert_cmpuint (cowscope_packed_read_u (&r), ==, 0); /* stays failed */
    }
  /* Eleven continuation bytes are not a varint. */
  static const guint8 endless[11] = { 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
                                      0x80, 0x80 };
  CowscopePackedReader r;
  cowscope_packed_reader_init (&r, endless, sizeof endless);
  cowscope_packed_read_u (&r);
  g_assert_false (cowscope_packed_reader_ok (&r));
  /* A name longer than what is left. */
  static const guint8 long_name[] = { 50, 'a', 'b' };
  cowscope_packed_reader_init (&r, long_name, sizeof long_name);
  gsize len;
  g_assert_null (cowscope_packed_read_name (&r, &len));
  g_assert_false (cowscope_packed_reader_ok (&r));
}

static void
test_instants (void)
{
  const CowscopeInstant thread[] = {
    { 1000, 1, 4096, COW_EVENT_ALLOCATION_NEW, 2 },
    { 1000, 2, 0, COW_EVENT_TENSOR_NEW, 0 },
    { 1500, 9, 4096, COW_EVENT_MATERIALIZE_END, COW_MATERIALIZE_STEAL },
    { 1499, 3, 0, COW_EVENT_MARK, 0 }, /* deltas may be negative */
  };
  g_autoptr (GByteArray) b = g_byte_array_new ();
  CowscopeInstant prev = { 0 };
  for (gsize i = 0; i < G_N_ELEMENTS (thread); i++)
    {
      cowscope_instant_write (b, &prev, &thread[i], FALSE);
      prev = thread[i];
    }
  CowscopePackedReader r;
  cowscope_packed_reader_init (&r, b->data, b->len);
  CowscopeInstant in = { 0 };
  for (gsize i = 0; i < G_N_ELEMENTS (thread); i++)
    {
      cowscope_instant_read (&r, &in, FALSE);
      g_assert_cmpint (in.ts, ==, thread[i].ts);
      g_assert_cmpint (in.id, ==, thread[i].id);
      g_assert_cmpuint (in.bytes, ==, thread[i].bytes);
      g_assert_cmpuint (in.code, ==, thread[i].code);
      /* Only a materialize_end keeps its aux (copy or steal). */
      g_assert_cmpuint (in.aux, ==, thread[i].code == COW_EVENT_MATERIALIZE_END ? thread[i].aux : 0);
    }
  g_assert_true (cowscope_packed_reader_done (&r) && cowscope_packed_reader_ok (&r));

  /* On a CUDA lane the code is a CUDA kind: code 15 has no aux byte. */
  const CowscopeInstant cuda = { 7, 3, 512, 15, 0 };
  g_byte_array_set_size (b, 0);
  CowscopeInstant zero = { 0 };
  cowscope_instant_write (b, &zero, &cuda, TRUE);
  g_assert_cmpuint (b->len, ==, 5);
  cowscope_packed_reader_init (&r, b->data, b->len);
  in = zero;
  cowscope_instant_read (&r, &in, TRUE);
  g_assert_cmpint (in.ts, ==, 7);
  g_assert_cmpuint (in.code, ==, 15);
  g_assert_cmpuint (in.bytes, ==, 512);
  g_assert_true (cowscope_packed_reader_done (&r) && cowscope_packed_reader_ok (&r));
}

static void
test_spans (void)
{
  const CowscopeSpan spans[] = {
    { 100, 250, 14, 4096, COW_MATERIALIZE_COPY, FALSE },
    { 120, 120, 3, 0, COWSCOPE_SPAN_RANGE, TRUE },
    { 130, 129, 20, 0, COWSCOPE_SPAN_RANGE, FALSE }, /* ended before it began: kept as is */
  };
  g_autoptr (GByteArray) b = g_byte_array_new ();
  CowscopeSpan prev = { 0 };
  for (gsize i = 0; i < G_N_ELEMENTS (spans); i++)
    {
      cowscope_span_write (b, &prev, &spans[i]);
      prev = spans[i];
    }
  CowscopePackedReader r;
  cowscope_packed_reader_init (&r, b->data, b->len);
  CowscopeSpan s = { 0 };
  for (gsize i = 0; i < G_N_ELEMENTS (spans); i++)
    {
      cowscope_span_read (&r, &s);
      g_assert_cmpint (s.start, ==, spans[i].start);
      g_assert_cmpint (s.open, ==, spans[i].open);
      if (!s.open)
        g_assert_cmpint (s.end, ==, spans[i].end);
      g_assert_cmpint (s.id, ==, spans[i].id);
      g_assert_cmpuint (s.code, ==, spans[i].code);
      g_assert_cmpuint (s.bytes, ==, spans[i].bytes);
    }
  g_assert_true (cowscope_packed_reader_done (&r) && cowscope_packed_reader_ok (&r));
}

static void
test_objects (void)
{
  const CowscopeLiveObject objects[] = {
    { .pid = 7, .kind = COWSCOPE_OBJECT_ALLOCATION, .alloc_kind = COW_ALLOCATION_CUDA, .id = 1,
      .nbytes = 1 << 20, .free_ts = -1, .device = 1 },
    { .pid = 7, .kind = COWSCOPE_OBJECT_ALLOCATION, .id = 9, .nbytes = 64, .free_ts = 5000 },
    { .pid = 7, .kind = COWSCOPE_OBJECT_CONTEXT, .id = 4, .allocation_id = 1, .storage_id = 2,
      .free_ts = 900 },
    { .pid = 7, .kind = COWSCOPE_OBJECT_STORAGE, .id = 5, .allocation_id = 9, .nbytes = 64,
      .context_id = 0, .left_context_id = 4, .source_id = 2, .free_ts = -1 },
    { .pid = 8, .kind = COWSCOPE_OBJECT_TENSOR, .id = 3, .storage_id = 2, .source_id = 1,
      .dtype = 1, .ndim = 2, .numel = 16, .free_ts = -1 },
  };
  const char *names[] = { NULL, NULL, NULL, NULL, "weights" };
  g_autoptr (GByteArray) b = g_byte_array_new ();
  CowscopeObjectKey key = { 0 };
  for (gsize i = 0; i < G_N_ELEMENTS (objects); i++)
    cowscope_object_write (b, &key, &objects[i], 1000, names[i]);

  CowscopePackedReader r;
  cowscope_packed_reader_init (&r, b->data, b->len);
  key = (CowscopeObjectKey) { 0 };
  for (gsize i = 0; i < G_N_ELEMENTS (objects); i++)
    {
      g_assert_true (cowscope_object_read_key (&r, &key));
      CowscopeLiveObject o = { .pid = key.pid, .kind = key.kind, .id = key.id };
      gsize len;
      const char *name = cowscope_object_read_body (&r, &o, 1000, &len);
      assert_same_object (&o, &objects[i]);
      if (names[i] == NULL)
        g_assert_null (name);
      else
        g_assert_true (len == strlen (names[i]) && memcmp (name, names[i], len) == 0);
    }
  g_assert_true (cowscope_packed_reader_done (&r) && cowscope_packed_reader_ok (&r));

  /* A kind past the object kinds is damage. */
  static const guint8 bad[] = { 0, COWSCOPE_N_OBJECT_KINDS, 2 };
  cowscope_packed_reader_init (&r, bad, sizeof bad);
  key = (CowscopeObjectKey) { 0 };
  g_assert_false (cowscope_object_read_key (&r, &key));
}

static void
test_replay_events (void)
{
  const CowscopeReplayEvent events[] = {
    { 10, 1000, COW_EVENT_ALLOCATION_NEW, COW_ALLOCATION_CPU, 7, { 1, 4096, 0xdead, 0, 0 } },
    { 11, 1001, COW_EVENT_TENSOR_NEW, 1 | 2 << 8, 7, { 3, 2, 0, 16, 0 } },
    { 15, 1002, COW_EVENT_CONTEXT_UNREF, 0, 9, { 4, 2, 1, 1, 0 } },
  };
  const gint64 free_ts[] = { 4000, -1, -1 };
  const char *names[] = { NULL, "grad", NULL };
  g_autoptr (GByteArray) b = g_byte_array_new ();
  CowscopeReplayEvent prev = { 0 };
  for (gsize i = 0; i < G_N_ELEMENTS (events); i++)
    cowscope_replay_write (b, &prev, &events[i], free_ts[i], names[i]);
  g_assert_cmpmem (&prev, sizeof prev, &events[2], sizeof events[2]);

  CowscopePackedReader r;
  cowscope_packed_reader_init (&r, b->data, b->len);
  CowscopeReplayEvent ev = { 0 };
  for (gsize i = 0; i < G_N_ELEMENTS (events); i++)
    {
      cowscope_replay_read_head (&r, &ev);
      g_assert_cmpmem (&ev, sizeof ev, &events[i], sizeof events[i]);
      gint64 t;
      gsize len;
      const char *name = cowscope_replay_read_tail (&r, &ev, &t, &len);
      g_assert_cmpint (t, ==, free_ts[i]);
      if (names[i] == NULL)
        g_assert_null (name);
      else
        g_assert_true (len == strlen (names[i]) && memcmp (name, names[i], len) == 0);
    }
  g_assert_true (cowscope_packed_reader_done (&r) && cowscope_packed_reader_ok (&r));
}

static void
test_counter_bins (void)
{
  g_autoptr (GByteArray) b = g_byte_array_new ();
  CowscopeCounterBins *bins = cowscope_counter_bins_new (0, 399, 4); /* 100 ns a bin */
  cowscope_counter_bins_set (bins, 10, 5);
  cowscope_counter_bins_set (bins, 20, 2);
  cowscope_counter_bins_set (bins, 250, 8);
  cowscope_counter_bins_finish (bins);
  cowscope_counter_bins_write (bins, b);
  g_assert_cmpuint (b->len, ==, 4 * 3 * 8);
  CowscopeCounterBins *read = cowscope_counter_bins_read (0, 399, 4, b->data, b->len);
  g_assert_nonnull (read);
  /* (min, max, last) per bin: a bin keeps the value carried into it (0
   * before the first). */
  const double expected[4][3] = { { 0, 5, 2 }, { 2, 2, 2 }, { 2, 8, 8 }, { 8, 8, 8 } };
  for (guint k = 0; k < 4; k++)
    {
      g_assert_cmpfloat (read->min[k], ==, expected[k][0]);
      g_assert_cmpfloat (read->max[k], ==, expected[k][1]);
      g_assert_cmpfloat (read->last[k], ==, expected[k][2]);
    }
  /* A BLOB of the wrong size is refused. */
  g_assert_null (cowscope_counter_bins_read (0, 399, 5, b->data, b->len));
  g_assert_null (cowscope_counter_bins_read (0, 399, 4, b->data, b->len - 1));
  cowscope_counter_bins_free (read);
  cowscope_counter_bins_free (bins);
}

/* A whole checkpoint state: every live object of a state written in
 * sorted order reads back into an equal state. */
static void
test_checkpoint_state (void)
{
  g_autoptr (CowscopeGraphState) st = cowscope_graph_state_new ();
  for (guint32 pid = 1; pid <= 3; pid++)
    for (guint64 id = 1; id <= 200; id++)
      {
        CowscopeLiveObject *o = cowscope_graph_state_add (st, (guint8) (id % 4), pid, id * 3);
        o->free_ts = id % 5 == 0 ? -1 : (gint64) (10000 + id);
        /* The attributes each kind's record holds. */
        switch (o->kind)
          {
          case COWSCOPE_OBJECT_ALLOCATION:
            o->alloc_kind = (guint8) (id % 3);
            o->device = (gint64) pid - 2;
            o->nbytes = id * 64;
            break;
          case COWSCOPE_OBJECT_CONTEXT:
            o->allocation_id = id + 1;
            o->storage_id = id + 2;
            break;
          case COWSCOPE_OBJECT_STORAGE:
            o->allocation_id = id + 1;
            o->nbytes = id * 64;
            o->context_id = id % 2 ? id + 3 : 0;
            o->left_context_id = id % 2 ? 0 : id + 4;
            o->source_id = id + 5;
            break;
          default:
            o->storage_id = id + 2;
            o->source_id = id + 5;
            o->dtype = (guint32) (id % 6);
            o->ndim = 2;
            o->numel = (gint64) id - 100;
            if (id % 2 == 0)
              cowscope_graph_state_set_name (st, o, "t", -1);
            break;
          }
      }
  /* Some die: they are not written. */
  for (guint64 id = 4; id <= 200; id += 8)
    {
      gint64 v[5] = { (gint64) (id * 3), 0, 0, 0, 0 };
      cowscope_graph_state_apply (st, COW_EVENT_ALLOCATION_FREE, 0, 2, v);
    }
  guint n = cowscope_graph_state_get_n_live (st);
  g_assert_cmpuint (n, ==, 3 * 200 - 25);
  g_autofree guint32 *order = cowscope_graph_state_sort (st);
  g_autoptr (GByteArray) b = g_byte_array_new ();
  CowscopeObjectKey key = { 0 };
  for (guint i = 0; i < n; i++)
    {
      gint64 name_id;
      cowscope_object_write (b, &key, cowscope_graph_state_get_slot (st, order[i]), 500,
                             cowscope_graph_state_get_slot_name (st, order[i], &name_id));
    }

  g_autoptr (CowscopeGraphState) back = cowscope_graph_state_new ();
  CowscopePackedReader r;
  cowscope_packed_reader_init (&r, b->data, b->len);
  key = (CowscopeObjectKey) { 0 };
  while (!cowscope_packed_reader_done (&r))
    {
      g_assert_true (cowscope_object_read_key (&r, &key));
      CowscopeLiveObject *o = cowscope_graph_state_add_new (back, key.kind, key.pid, key.id);
      gsize len;
      const char *name = cowscope_object_read_body (&r, o, 500, &len);
      if (name != NULL)
        cowscope_graph_state_set_name (back, o, name, (gssize) len);
    }
  g_assert_true (cowscope_packed_reader_ok (&r));
  g_assert_cmpuint (cowscope_graph_state_get_n_live (back), ==, n);
  g_autofree guint32 *back_order = cowscope_graph_state_sort (back);
  for (guint i = 0; i < n; i++)
    {
      const CowscopeLiveObject *x = cowscope_graph_state_get_slot (st, order[i]);
      const CowscopeLiveObject *y = cowscope_graph_state_get_slot (back, back_order[i]);
      assert_same_object (x, y);
      gint64 id_x, id_y;
      g_assert_cmpstr (cowscope_graph_state_get_slot_name (st, order[i], &id_x), ==,
                       cowscope_graph_state_get_slot_name (back, back_order[i], &id_y));
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/format/packed/varints", test_varints);
  g_test_add_func ("/format/packed/truncated-reads-fail", test_truncated_reads_fail);
  g_test_add_func ("/format/packed/instants", test_instants);
  g_test_add_func ("/format/packed/spans", test_spans);
  g_test_add_func ("/format/packed/objects", test_objects);
  g_test_add_func ("/format/packed/replay-events", test_replay_events);
  g_test_add_func ("/format/packed/counter-bins", test_counter_bins);
  g_test_add_func ("/format/packed/checkpoint-state", test_checkpoint_state);
  return g_test_run ();
}
