/* test-format-event-chunk.c — the event chunk decoder on damaged and
 * hostile BLOBs (cowscope-event-chunk.h): every one is refused with a
 * reason, never read past its end, never grown for a count its bytes
 * cannot hold; sound ones decode to what was encoded. */
#include <glib.h>
#include <string.h>

#include "cowscope-event-chunk.h"

/* A block of @n events as the recorder writes them: seqs from 1, times
 * rising, a few NULL payloads and stacks. */
static CowscopeEventBlock *
make_block (guint n)
{
  CowscopeEventBlock *b = cowscope_event_block_new (n);
  for (guint i = 0; i < n; i++)
    {
      CowscopeEventRow row = { { 0 }, 0 };
      row.col[COWSCOPE_EVENT_COL_SEQ] = i + 1;
      row.col[COWSCOPE_EVENT_COL_TS] = 1000000 + (gint64) i * 37;
      row.col[COWSCOPE_EVENT_COL_PID] = 100;
      row.col[COWSCOPE_EVENT_COL_TID] = 100 + i % 3;
      row.col[COWSCOPE_EVENT_COL_TYPE] = i % 7;
      row.col[COWSCOPE_EVENT_COL_V0] = (gint64) i * 4096;
      row.col[COWSCOPE_EVENT_COL_V1] = -(gint64) i;
      row.col[COWSCOPE_EVENT_COL_STACK] = i % 5;
      if (i % 11 == 0)
        row.nulls = COWSCOPE_EVENT_NULL_STACK | 1u << 2;
      cowscope_event_block_append (b, &row);
    }
  return b;
}

static void
put_u (GByteArray *out, guint64 v)
{
  while (v >= 0x80)
    {
      guint8 byte = (guint8) (v | 0x80);
      g_byte_array_append (out, &byte, 1);
      v >>= 7;
    }
  guint8 last = (guint8) v;
  g_byte_array_append (out, &last, 1);
}

static guint64
zigzag (gint64 v)
{
  return ((guint64) v << 1) ^ (guint64) (v >> 63);
}

/* The body of @b as the header documents it (written here independently
 * of the encoder), with a null mask. */
static GByteArray *
body_of (const CowscopeEventBlock *b)
{
  GByteArray *body = g_byte_array_new ();
  put_u (body, COWSCOPE_EVENT_CHUNK_VERSION);
  put_u (body, b->n);
  put_u (body, 1);
  for (int c = 0; c < COWSCOPE_EVENT_COL_STACK; c++)
    {
      gint64 prev = 0;
      for (guint i = 0; i < b->n; i++)
        {
          put_u (body, zigzag ((gint64) ((guint64) b->col[c][i] - (guint64) prev)));
          prev = b->col[c][i];
        }
    }
  for (guint i = 0; i < b->n; i++)
    put_u (body, (b->nulls[i] & COWSCOPE_EVENT_NULL_STACK)
                   ? 0 : zigzag (b->col[COWSCOPE_EVENT_COL_STACK][i]) + 1);
  for (guint i = 0; i < b->n; i++)
    {
      guint8 m = b->nulls[i] & 0x1f;
      g_byte_array_append (body, &m, 1);
    }
  return body;
}

/* A raw chunk (codec 0) of @body. */
static GByteArray *
raw_chunk (const GByteArray *body)
{
  GByteArray *out = g_byte_array_new ();
  guint8 codec = 0;
  g_byte_array_append (out, &codec, 1);
  put_u (out, body->len);
  g_byte_array_append (out, body->data, body->len);
  return out;
}

/* @b encoded: by the encoder (compressed), or (@raw) as a raw chunk. */
static GByteArray *
encode (const CowscopeEventBlock *b, gboolean raw)
{
  if (raw)
    {
      g_autoptr (GByteArray) body = body_of (b);
      return raw_chunk (body);
    }
  g_autoptr (CowscopeEventEncoder) encoder = cowscope_event_encoder_new ();
  gsize len = 0;
  const guint8 *data = cowscope_event_encode (encoder, b, b->n, &len);
  GByteArray *out = g_byte_array_new ();
  g_byte_array_append (out, data, (guint) len);
  return out;
}

static void
assert_same_events (const CowscopeEventBlock *a, const CowscopeEventBlock *b)
{
  g_assert_cmpuint (a->n, ==, b->n);
  for (int c = 0; c < COWSCOPE_EVENT_N_COLS; c++)
    for (guint i = 0; i < a->n; i++)
      if (c != COWSCOPE_EVENT_COL_STACK || !(a->nulls[i] & COWSCOPE_EVENT_NULL_STACK))
        g_assert_cmpint (a->col[c][i], ==, b->col[c][i]);
  g_assert_cmpmem (a->nulls, a->n, b->nulls, b->n);
}

/* @blob must be refused with a reason containing @fragment, leaving the
 * block empty. */
static void
assert_refused (const guint8 *blob, gsize len, const CowscopeEventChunkHeader *expect,
                const char *fragment)
{
  g_autoptr (CowscopeEventBlock) b = cowscope_event_block_new (1);
  const char *what = NULL;
  /* Copied to a buffer of exactly @len bytes, so that a read past the
   * end shows under AddressSanitizer. */
  g_autofree guint8 *copy = g_memdup2 (blob, len);
  g_assert_false (cowscope_event_decode (copy, len, expect, b, &what));
  g_assert_nonnull (what);
  if (fragment != NULL && strstr (what, fragment) == NULL)
    g_error ("refused with '%s', expected '%s'", what, fragment);
  g_assert_cmpuint (b->n, ==, 0);
}

static void
test_round_trip (void)
{
  for (guint raw = 0; raw < 2; raw++)
    {
      g_autoptr (CowscopeEventBlock) b = make_block (300);
      g_autoptr (GByteArray) blob = encode (b, raw);
      g_assert_cmpuint (blob->data[0], ==, raw ? 0 : 1);
      g_autoptr (CowscopeEventBlock) d = cowscope_event_block_new (1);
      CowscopeEventChunkHeader h = { 1, 300, 300 };
      const char *what = NULL;
      g_assert_true (cowscope_event_decode (blob->data, blob->len, &h, d, &what));
      assert_same_events (b, d);
    }
}

/* Every strict prefix of a chunk, compressed or not, is refused. */
static void
test_every_truncation (void)
{
  for (guint raw = 0; raw < 2; raw++)
    {
      g_autoptr (CowscopeEventBlock) b = make_block (200);
      g_autoptr (GByteArray) blob = encode (b, raw);
      for (gsize len = 0; len < blob->len; len++)
        assert_refused (blob->data, len, NULL, NULL);
    }
}

static void
test_hostile_headers (void)
{
  /* Codec unknown; a raw length that lies either way. */
  static const guint8 codec[] = { 7, 3, 1, 1, 0 };
  assert_refused (codec, sizeof codec, NULL, "unknown encoding");
  static const guint8 longer[] = { 0, 9, 1, 1, 0 };
  assert_refused (longer, sizeof longer, NULL, "wrong length");
  static const guint8 shorter[] = { 0, 2, 1, 1, 0 };
  assert_refused (shorter, sizeof shorter, NULL, "wrong length");
  /* A length varint of eleven bytes (more than 64 bits). */
  static const guint8 overflow[] = { 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                     0xff, 0x01 };
  assert_refused (overflow, sizeof overflow, NULL, NULL);
  /* A huge body length, compressed or not: refused before any buffer
   * is made for it. */
  static const guint8 huge_raw[] = { 0, 0xff, 0xff, 0xff, 0xff, 0x0f, 1 };
  assert_refused (huge_raw, sizeof huge_raw, NULL, "impossible size");
  static const guint8 huge_zstd[] = { 1, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x28, 0xb5, 0x2f, 0xfd };
  assert_refused (huge_zstd, sizeof huge_zstd, NULL, "impossible size");
  /* A zstd frame that is not one. */
  static const guint8 zstd_junk[] = { 1, 4, 0x28, 0xb5, 0x2f, 0xfd, 0, 0, 0, 0 };
  assert_refused (zstd_junk, sizeof zstd_junk, NULL, "compressed data");
  /* Bodies: another layout version, no events, more events than a
   * chunk may hold, unknown flags. */
  static const guint8 version[] = { 0, 3, 2, 1, 0 };
  assert_refused (version, sizeof version, NULL, "unknown layout");
  static const guint8 none[] = { 0, 3, 1, 0, 0 };
  assert_refused (none, sizeof none, NULL, "impossible header");
  static const guint8 too_many[] = { 0, 5, 1, 0x81, 0x80, 0x04, 0 }; /* 65537 */
  assert_refused (too_many, sizeof too_many, NULL, "impossible header");
  static const guint8 flags[] = { 0, 3, 1, 1, 6 };
  assert_refused (flags, sizeof flags, NULL, "impossible header");
  /* 60000 events claimed in a body of a few bytes: refused before the
   * block grows for them (the block stays at its size). */
  static const guint8 lying_count[] = { 0, 7, 1, 0xe0, 0xd4, 0x03, 0, 0, 0 };
  assert_refused (lying_count, sizeof lying_count, NULL, "do not add up");
  g_autoptr (CowscopeEventBlock) b = cowscope_event_block_new (1);
  const char *what = NULL;
  g_assert_false (cowscope_event_decode (lying_count, sizeof lying_count, NULL, b, &what));
  g_assert_cmpuint (b->capacity, ==, 1);
}

/* A chunk whose events contradict themselves or its row. */
static void
test_events_that_lie (void)
{
  g_autoptr (CowscopeEventBlock) b = make_block (50);
  /* Seqs out of order, then repeated. */
  b->col[COWSCOPE_EVENT_COL_SEQ][20] = 3;
  g_autoptr (GByteArray) blob = encode (b, FALSE);
  assert_refused (blob->data, blob->len, NULL, "seqs do not increase");
  b->col[COWSCOPE_EVENT_COL_SEQ][20] = 20;
  g_autoptr (GByteArray) again = encode (b, FALSE);
  assert_refused (again->data, again->len, NULL, "seqs do not increase");
  b->col[COWSCOPE_EVENT_COL_SEQ][20] = 21;

  /* Sound events under a row that says otherwise. */
  g_autoptr (GByteArray) sound = encode (b, FALSE);
  CowscopeEventChunkHeader count = { 1, 50, 51 }, first = { 2, 50, 50 }, last = { 1, 49, 50 };
  assert_refused (sound->data, sound->len, &count, "does not hold the events its row names");
  assert_refused (sound->data, sound->len, &first, "does not hold the events its row names");
  assert_refused (sound->data, sound->len, &last, "does not hold the events its row names");

  /* Trailing bytes after the columns, in a raw chunk. */
  g_autoptr (GByteArray) body = body_of (b);
  g_autoptr (GByteArray) raw = raw_chunk (body);
  g_autoptr (CowscopeEventBlock) d = cowscope_event_block_new (1);
  const char *what = NULL;
  g_assert_true (cowscope_event_decode (raw->data, raw->len, NULL, d, &what));
  assert_same_events (b, d);
  guint8 extra = 0;
  g_byte_array_append (body, &extra, 1);
  g_autoptr (GByteArray) longer = raw_chunk (body);
  assert_refused (longer->data, longer->len, NULL, "do not add up");
}

/* Any byte of a raw chunk changed: refused with a reason, or decoded to
 * events whose seqs still increase (a changed time is not detectable
 * here: the row's summary is checked by the store). */
static void
test_every_byte_changed (void)
{
  g_autoptr (CowscopeEventBlock) b = make_block (40);
  g_autoptr (GByteArray) blob = encode (b, TRUE);
  g_autoptr (CowscopeEventBlock) d = cowscope_event_block_new (1);
  guint refused = 0, decoded = 0;
  for (gsize at = 0; at < blob->len; at++)
    for (guint bit = 0; bit < 8; bit++)
      {
        g_autofree guint8 *copy = g_memdup2 (blob->data, blob->len);
        copy[at] ^= (guint8) (1u << bit);
        const char *what = NULL;
        if (!cowscope_event_decode (copy, blob->len, NULL, d, &what))
          {
            g_assert_nonnull (what);
            g_assert_cmpuint (d->n, ==, 0);
            refused++;
            continue;
          }
        decoded++;
        g_assert_cmpuint (d->n, >, 0);
        for (guint i = 1; i < d->n; i++)
          g_assert_cmpint (d->col[COWSCOPE_EVENT_COL_SEQ][i], >,
                           d->col[COWSCOPE_EVENT_COL_SEQ][i - 1]);
      }
  g_test_message ("%u refused, %u decoded", refused, decoded);
  g_assert_cmpuint (refused, >, 0);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/format/event-chunk/round-trip", test_round_trip);
  g_test_add_func ("/format/event-chunk/every-truncation", test_every_truncation);
  g_test_add_func ("/format/event-chunk/hostile-headers", test_hostile_headers);
  g_test_add_func ("/format/event-chunk/events-that-lie", test_events_that_lie);
  g_test_add_func ("/format/event-chunk/every-byte-changed", test_every_byte_changed);
  return g_test_run ();
}
