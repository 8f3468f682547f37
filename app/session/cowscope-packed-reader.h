/* cowscope-packed-reader.h — reading the packed BLOBs of a schema-2
 * session (timeline_chunks, timeline_spans, checkpoint_states,
 * checkpoint_replays; layouts in README.md, "Session database").
 *
 * The file is untrusted: every read is bounds-checked, and a reader that
 * ran past its end stays failed (reads then return 0), so a caller checks
 * cowscope_packed_reader_ok() once per record or at the end. */
#pragma once

#include <glib.h>
#include <string.h>

G_BEGIN_DECLS

/* meta.index_format this model reads. */
#define COWSCOPE_PACKED_INDEX_FORMAT 1

typedef struct {
  const guint8 *p;
  const guint8 *end;
  gboolean failed;
} CowscopePackedReader;

static inline void
cowscope_packed_reader_init (CowscopePackedReader *r, const void *data, gsize len)
{
  r->p = data;
  r->end = r->p + (data ? len : 0);
  r->failed = FALSE;
}

static inline gboolean
cowscope_packed_reader_ok (const CowscopePackedReader *r)
{
  return !r->failed;
}

static inline gboolean
cowscope_packed_reader_done (const CowscopePackedReader *r)
{
  return r->failed || r->p >= r->end;
}

/* An unsigned LEB128 varint (at most 10 bytes). */
static inline guint64
cowscope_packed_u (CowscopePackedReader *r)
{
  guint64 v = 0;
  for (guint shift = 0; shift < 70; shift += 7)
    {
      if (r->p >= r->end)
        break;
      guint8 byte = *r->p++;
      v |= (guint64) (byte & 0x7f) << shift;
      if (!(byte & 0x80))
        return v;
    }
  r->failed = TRUE;
  r->p = r->end;
  return 0;
}

/* A zigzag-encoded signed varint. */
static inline gint64
cowscope_packed_s (CowscopePackedReader *r)
{
  guint64 v = cowscope_packed_u (r);
  return (gint64) (v >> 1) ^ -(gint64) (v & 1);
}

static inline guint8
cowscope_packed_byte (CowscopePackedReader *r)
{
  if (r->p >= r->end)
    {
      r->failed = TRUE;
      return 0;
    }
  return *r->p++;
}

/* A free time relative to @base: -1 for "never freed". */
static inline gint64
cowscope_packed_free (CowscopePackedReader *r, gint64 base)
{
  guint64 v = cowscope_packed_u (r);
  if (v == 0)
    return -1;
  v -= 1;
  return base + ((gint64) (v >> 1) ^ -(gint64) (v & 1));
}

/* A name: NULL (none) or @len bytes at the returned pointer, not
 * NUL-terminated. */
static inline const char *
cowscope_packed_name (CowscopePackedReader *r, gsize *len)
{
  guint64 n = cowscope_packed_u (r);
  *len = 0;
  if (n == 0)
    return NULL;
  n -= 1;
  if (n > (guint64) (r->end - r->p))
    {
      r->failed = TRUE;
      r->p = r->end;
      return NULL;
    }
  const char *s = (const char *) r->p;
  r->p += n;
  *len = (gsize) n;
  return s;
}

/* A little-endian float64. */
static inline double
cowscope_packed_double (CowscopePackedReader *r)
{
  if (r->end - r->p < 8)
    {
      r->failed = TRUE;
      r->p = r->end;
      return 0;
    }
  guint64 bits;
  memcpy (&bits, r->p, sizeof bits);
  r->p += 8;
  bits = GUINT64_FROM_LE (bits);
  double v;
  memcpy (&v, &bits, sizeof v);
  return v;
}

G_END_DECLS
