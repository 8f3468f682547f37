/* cowscope-packed.h — the varints every packed BLOB of a session is made
 * of, the writer and the reader side by side so that they cannot drift.
 *
 * A BLOB is a run of records of unsigned LEB128 varints ("u"),
 * zigzag-encoded signed varints ("s"), single bytes ("b"), "free times"
 * (0 for never, else the zigzag of a difference plus 1), names (0 for
 * none, else the length plus 1 and the bytes) and little-endian float64s.
 * cowscope-packed-records.h builds the records of each table from these.
 *
 * The reader is for untrusted files: every read is bounds-checked, and a
 * reader that ran past its end stays failed (reads then return 0), so a
 * caller checks cowscope_packed_reader_ok() once per record or at the end.
 */
#pragma once

#include <glib.h>
#include <string.h>

G_BEGIN_DECLS

/* ---- zigzag ----------------------------------------------------------- */

/* @v with small magnitudes of either sign mapped to small unsigned values. */
static inline guint64
cowscope_packed_zigzag (gint64 v)
{
  return ((guint64) v << 1) ^ (guint64) (v >> 63);
}

static inline gint64
cowscope_packed_unzigzag (guint64 v)
{
  return (gint64) (v >> 1) ^ -(gint64) (v & 1);
}

/* @a + @b wrapping around as unsigned arithmetic does.  Deltas in a
 * damaged BLOB can be anything: a sum that overflows must give some
 * number (that the reader's caller then finds out of order or out of
 * range), never undefined behaviour. */
static inline gint64
cowscope_packed_add (gint64 a, gint64 b)
{
  return (gint64) ((guint64) a + (guint64) b);
}

/* ---- writing ------------------------------------------------------------ */

/* Appends @v as an unsigned LEB128 varint (at most 10 bytes). */
static inline void
cowscope_packed_write_u (GByteArray *b, guint64 v)
{
  guint8 tmp[10];
  guint n = 0;
  while (v >= 0x80)
    {
      tmp[n++] = (guint8) (v | 0x80);
      v >>= 7;
    }
  tmp[n++] = (guint8) v;
  g_byte_array_append (b, tmp, n);
}

/* Appends @v zigzag-encoded. */
static inline void
cowscope_packed_write_s (GByteArray *b, gint64 v)
{
  cowscope_packed_write_u (b, cowscope_packed_zigzag (v));
}

static inline void
cowscope_packed_write_byte (GByteArray *b, guint8 v)
{
  g_byte_array_append (b, &v, 1);
}

/* Appends a time relative to @base; @ts < 0 means "never". */
static inline void
cowscope_packed_write_free (GByteArray *b, gint64 ts, gint64 base)
{
  cowscope_packed_write_u (b, ts < 0 ? 0 : cowscope_packed_zigzag (ts - base) + 1);
}

/* Appends a name of @len bytes (-1: up to its NUL); NULL: none. */
static inline void
cowscope_packed_write_name (GByteArray *b, const char *name, gssize len)
{
  if (name == NULL)
    {
      cowscope_packed_write_u (b, 0);
      return;
    }
  gsize n = len < 0 ? strlen (name) : (gsize) len;
  cowscope_packed_write_u (b, (guint64) n + 1);
  g_byte_array_append (b, (const guint8 *) name, (guint) n);
}

/* Appends @v as a little-endian float64. */
static inline void
cowscope_packed_write_double (GByteArray *b, double v)
{
  guint64 bits;
  memcpy (&bits, &v, sizeof bits);
  bits = GUINT64_TO_LE (bits);
  g_byte_array_append (b, (const guint8 *) &bits, sizeof bits);
}

/* ---- reading ------------------------------------------------------------ */

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

/* TRUE at the end of the data, or once a read failed. */
static inline gboolean
cowscope_packed_reader_done (const CowscopePackedReader *r)
{
  return r->failed || r->p >= r->end;
}

static inline void
cowscope_packed_reader_fail (CowscopePackedReader *r)
{
  r->failed = TRUE;
  r->p = r->end;
}

static inline guint64
cowscope_packed_read_u (CowscopePackedReader *r)
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
  cowscope_packed_reader_fail (r);
  return 0;
}

static inline gint64
cowscope_packed_read_s (CowscopePackedReader *r)
{
  return cowscope_packed_unzigzag (cowscope_packed_read_u (r));
}

static inline guint8
cowscope_packed_read_byte (CowscopePackedReader *r)
{
  if (r->p >= r->end)
    {
      cowscope_packed_reader_fail (r);
      return 0;
    }
  return *r->p++;
}

/* A time written by cowscope_packed_write_free(): -1 for "never". */
static inline gint64
cowscope_packed_read_free (CowscopePackedReader *r, gint64 base)
{
  guint64 v = cowscope_packed_read_u (r);
  return v == 0 ? -1 : cowscope_packed_add (base, cowscope_packed_unzigzag (v - 1));
}

/* A name: NULL (none) or @len bytes at the returned pointer, not
 * NUL-terminated. */
static inline const char *
cowscope_packed_read_name (CowscopePackedReader *r, gsize *len)
{
  guint64 n = cowscope_packed_read_u (r);
  *len = 0;
  if (n == 0)
    return NULL;
  n -= 1;
  if (n > (guint64) (r->end - r->p))
    {
      cowscope_packed_reader_fail (r);
      return NULL;
    }
  const char *s = (const char *) r->p;
  r->p += n;
  *len = (gsize) n;
  return s;
}

static inline double
cowscope_packed_read_double (CowscopePackedReader *r)
{
  if (r->end - r->p < 8)
    {
      cowscope_packed_reader_fail (r);
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
