/* cowscope-event-chunk.c — the packed event chunk (see header). */
#include "cowscope-event-chunk.h"

#include <string.h>
#include <zstd.h>

#include "cowscope-packed.h"

/* zstd's fastest setting that still finds the long runs of equal bytes
 * columns of deltas are made of: about 1 GB/s here, and a chunk of 4096
 * events shrinks 3–6×. */
#define CHUNK_ZSTD_LEVEL 1

enum { CODEC_RAW = 0, CODEC_ZSTD = 1 };
enum { FLAG_NULLS = 1 };

/* Bytes one event can take in a body: every column a 10-byte varint
 * and the null mask. */
#define MAX_ROW_BYTES (COWSCOPE_EVENT_N_COLS * 10 + 1)
#define MAX_HEADER_BYTES 32

CowscopeEventBlock *
cowscope_event_block_new (guint capacity)
{
  CowscopeEventBlock *b = g_new0 (CowscopeEventBlock, 1);
  b->capacity = MAX (capacity, 1);
  for (int c = 0; c < COWSCOPE_EVENT_N_COLS; c++)
    b->col[c] = g_new (gint64, b->capacity);
  b->nulls = g_new0 (guint8, b->capacity);
  b->ref_count = 1;
  return b;
}

CowscopeEventBlock *
cowscope_event_block_ref (CowscopeEventBlock *b)
{
  b->ref_count++;
  return b;
}

void
cowscope_event_block_unref (CowscopeEventBlock *b)
{
  if (b == NULL || --b->ref_count > 0)
    return;
  for (int c = 0; c < COWSCOPE_EVENT_N_COLS; c++)
    g_free (b->col[c]);
  g_free (b->nulls);
  g_free (b);
}

static void
block_reserve (CowscopeEventBlock *b, guint capacity)
{
  if (capacity <= b->capacity)
    return;
  for (int c = 0; c < COWSCOPE_EVENT_N_COLS; c++)
    b->col[c] = g_renew (gint64, b->col[c], capacity);
  b->nulls = g_renew (guint8, b->nulls, capacity);
  b->capacity = capacity;
}

void
cowscope_event_block_append (CowscopeEventBlock *b, const CowscopeEventRow *row)
{
  g_return_if_fail (b->n < b->capacity);
  guint i = b->n++;
  for (int c = 0; c < COWSCOPE_EVENT_N_COLS; c++)
    b->col[c][i] = row->col[c];
  b->nulls[i] = row->nulls;
  b->n_nulls += row->nulls != 0;
}

void
cowscope_event_block_get (const CowscopeEventBlock *b, guint i, CowscopeEventRow *row)
{
  for (int c = 0; c < COWSCOPE_EVENT_N_COLS; c++)
    row->col[c] = b->col[c][i];
  row->nulls = b->nulls[i];
}

void
cowscope_event_block_clear (CowscopeEventBlock *b)
{
  b->n = 0;
  b->n_nulls = 0;
}

void
cowscope_event_block_summary (const CowscopeEventBlock *b, guint n, CowscopeEventSummary *s)
{
  memset (s, 0, sizeof *s);
  s->sorted = TRUE;
  const gint64 *ts = b->col[COWSCOPE_EVENT_COL_TS], *type = b->col[COWSCOPE_EVENT_COL_TYPE];
  for (guint i = 0; i < n; i++)
    {
      s->types |= cowscope_event_type_bit (type[i]);
      if (i == 0 || ts[i] < s->min_ts)
        s->min_ts = ts[i];
      if (i == 0 || ts[i] > s->max_ts)
        s->max_ts = ts[i];
      if (i > 0 && ts[i] < ts[i - 1])
        s->sorted = FALSE;
    }
}

/* ---- encoding --------------------------------------------------------------- */

struct _CowscopeEventEncoder {
  ZSTD_CCtx *zstd;
  guint8 *body, *out;
  gsize body_capacity, out_capacity;
};

CowscopeEventEncoder *
cowscope_event_encoder_new (void)
{
  CowscopeEventEncoder *e = g_new0 (CowscopeEventEncoder, 1);
  e->zstd = ZSTD_createCCtx ();
  return e;
}

void
cowscope_event_encoder_free (CowscopeEventEncoder *e)
{
  if (e == NULL)
    return;
  ZSTD_freeCCtx (e->zstd);
  g_free (e->body);
  g_free (e->out);
  g_free (e);
}

static inline guint8 *
put_u (guint8 *p, guint64 v)
{
  while (v >= 0x80)
    {
      *p++ = (guint8) (v | 0x80);
      v >>= 7;
    }
  *p++ = (guint8) v;
  return p;
}

const guint8 *
cowscope_event_encode (CowscopeEventEncoder *e, const CowscopeEventBlock *b, guint n, gsize *len)
{
  n = MIN (n, b->n);
  gsize need = MAX_HEADER_BYTES + (gsize) n * MAX_ROW_BYTES;
  if (e->body_capacity < need)
    {
      e->body = g_realloc (e->body, need);
      e->body_capacity = need;
    }
  gboolean any_null = FALSE;
  for (guint i = 0; i < n && !any_null; i++)
    any_null = b->nulls[i] & ~COWSCOPE_EVENT_NULL_STACK;

  guint8 *p = e->body;
  p = put_u (p, COWSCOPE_EVENT_CHUNK_VERSION);
  p = put_u (p, n);
  p = put_u (p, any_null ? FLAG_NULLS : 0);
  for (int c = 0; c < COWSCOPE_EVENT_COL_STACK; c++)
    {
      const gint64 *col = b->col[c];
      gint64 prev = 0;
      for (guint i = 0; i < n; i++)
        {
          p = put_u (p, cowscope_packed_zigzag ((gint64) ((guint64) col[i] - (guint64) prev)));
          prev = col[i];
        }
    }
  const gint64 *stack = b->col[COWSCOPE_EVENT_COL_STACK];
  for (guint i = 0; i < n; i++)
    p = put_u (p, (b->nulls[i] & COWSCOPE_EVENT_NULL_STACK)
                    ? 0 : cowscope_packed_zigzag (stack[i]) + 1);
  if (any_null)
    for (guint i = 0; i < n; i++)
      *p++ = b->nulls[i] & ~COWSCOPE_EVENT_NULL_STACK;
  gsize body_len = (gsize) (p - e->body);

  gsize bound = ZSTD_compressBound (body_len) + 16;
  if (e->out_capacity < bound)
    {
      e->out = g_realloc (e->out, bound);
      e->out_capacity = bound;
    }
  guint8 *o = e->out;
  *o++ = CODEC_ZSTD;
  o = put_u (o, body_len);
  gsize header = (gsize) (o - e->out);
  gsize z = ZSTD_compressCCtx (e->zstd, o, e->out_capacity - header, e->body, body_len,
                               CHUNK_ZSTD_LEVEL);
  if (ZSTD_isError (z) || z >= body_len)
    {
      /* Not smaller: the body as is. */
      e->out[0] = CODEC_RAW;
      memcpy (o, e->body, body_len);
      z = body_len;
    }
  *len = header + z;
  return e->out;
}

/* ---- decoding ---------------------------------------------------------------- */

/* The decompressed body of a BLOB, in @scratch when it was compressed. */
static const guint8 *
blob_body (const void *blob, gsize len, GByteArray *scratch, gsize *body_len, const char **what)
{
  CowscopePackedReader r;
  cowscope_packed_reader_init (&r, blob, len);
  guint8 codec = cowscope_packed_read_byte (&r);
  guint64 n = cowscope_packed_read_u (&r);
  if (!cowscope_packed_reader_ok (&r))
    {
      *what = "an event chunk is truncated";
      return NULL;
    }
  if (n > MAX_HEADER_BYTES + (guint64) COWSCOPE_EVENT_CHUNK_MAX_EVENTS * MAX_ROW_BYTES)
    {
      *what = "an event chunk claims an impossible size";
      return NULL;
    }
  gsize rest = (gsize) (r.end - r.p);
  if (codec == CODEC_RAW)
    {
      if (rest != n)
        {
          *what = "an event chunk has the wrong length";
          return NULL;
        }
      *body_len = rest;
      return r.p;
    }
  if (codec != CODEC_ZSTD)
    {
      *what = "an event chunk has an unknown encoding";
      return NULL;
    }
  unsigned long long frame = ZSTD_getFrameContentSize (r.p, rest);
  if (frame != n)
    {
      *what = "an event chunk's compressed data does not match its length";
      return NULL;
    }
  g_byte_array_set_size (scratch, (guint) n);
  gsize got = ZSTD_decompress (scratch->data, n, r.p, rest);
  if (ZSTD_isError (got) || got != n)
    {
      *what = "an event chunk's compressed data is damaged";
      return NULL;
    }
  *body_len = got;
  return scratch->data;
}

gboolean
cowscope_event_decode (const void *blob, gsize len, const CowscopeEventChunkHeader *expect,
                       CowscopeEventBlock *b, const char **what)
{
  static GPrivate scratch_key = G_PRIVATE_INIT ((GDestroyNotify) g_byte_array_unref);
  GByteArray *scratch = g_private_get (&scratch_key);
  if (scratch == NULL)
    {
      scratch = g_byte_array_new ();
      g_private_set (&scratch_key, scratch);
    }
  gsize body_len = 0;
  cowscope_event_block_clear (b);
  const guint8 *body = blob_body (blob, len, scratch, &body_len, what);
  if (body == NULL)
    return FALSE;

  CowscopePackedReader r;
  cowscope_packed_reader_init (&r, body, body_len);
  guint64 version = cowscope_packed_read_u (&r);
  guint64 n = cowscope_packed_read_u (&r);
  guint64 flags = cowscope_packed_read_u (&r);
  if (!cowscope_packed_reader_ok (&r) || version != COWSCOPE_EVENT_CHUNK_VERSION)
    {
      *what = "an event chunk has an unknown layout";
      return FALSE;
    }
  if (n == 0 || n > COWSCOPE_EVENT_CHUNK_MAX_EVENTS || (flags & ~(guint64) FLAG_NULLS) != 0)
    {
      *what = "an event chunk has an impossible header";
      return FALSE;
    }
  /* Every column of every event takes a byte at least: a count that the
   * body cannot hold is refused before the block grows for it. */
  if ((guint64) (r.end - r.p) < n * COWSCOPE_EVENT_N_COLS)
    {
      *what = "an event chunk's columns do not add up";
      return FALSE;
    }
  block_reserve (b, (guint) n);
  for (int c = 0; c < COWSCOPE_EVENT_COL_STACK; c++)
    {
      gint64 *col = b->col[c];
      guint64 prev = 0;
      for (guint i = 0; i < n; i++)
        {
          prev += (guint64) cowscope_packed_read_s (&r);
          col[i] = (gint64) prev;
        }
    }
  gint64 *stack = b->col[COWSCOPE_EVENT_COL_STACK];
  memset (b->nulls, 0, n);
  for (guint i = 0; i < n; i++)
    {
      guint64 v = cowscope_packed_read_u (&r);
      stack[i] = v == 0 ? 0 : cowscope_packed_unzigzag (v - 1);
      if (v == 0)
        b->nulls[i] = COWSCOPE_EVENT_NULL_STACK;
    }
  if (flags & FLAG_NULLS)
    {
      if ((gsize) (r.end - r.p) < n)
        cowscope_packed_reader_fail (&r);
      else
        {
          for (guint i = 0; i < n; i++)
            b->nulls[i] |= r.p[i] & 0x1f;
          r.p += n;
        }
    }
  if (!cowscope_packed_reader_ok (&r) || r.p != r.end)
    {
      *what = "an event chunk's columns do not add up";
      return FALSE;
    }
  b->n = (guint) n;
  b->n_nulls = 0;
  for (guint i = 0; i < n; i++)
    b->n_nulls += (b->nulls[i] & ~COWSCOPE_EVENT_NULL_STACK) != 0;
  const gint64 *seq = b->col[COWSCOPE_EVENT_COL_SEQ];
  for (guint i = 1; i < n; i++)
    if (seq[i] <= seq[i - 1])
      {
        *what = "an event chunk's seqs do not increase";
        cowscope_event_block_clear (b);
        return FALSE;
      }
  if (expect != NULL
      && (expect->n != (gint64) n || expect->first_seq != seq[0]
          || expect->last_seq != seq[n - 1]))
    {
      *what = "an event chunk does not hold the events its row names";
      cowscope_event_block_clear (b);
      return FALSE;
    }
  return TRUE;
}
