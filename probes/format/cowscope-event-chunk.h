/* cowscope-event-chunk.h — the packed event chunk: up to
 * COWSCOPE_EVENT_CHUNK_EVENTS consecutive events of `events`, stored as
 * one event_chunks.data BLOB, the encoder beside the decoder so that
 * they cannot drift.  README.md ("Session database") documents the same
 * layout.
 *
 * A chunk is columnar: for each column, one varint per event, each the
 * difference from the event before it (the first from 0), zigzag-encoded
 * ("s"), so that times, ids and repeated values cost a byte or less; the
 * whole body is then compressed with zstd when that makes it smaller.
 * This is how Perfetto's trace processor and Tracy keep events: a few
 * bytes an event instead of a SQLite row of forty and the indexes over it.
 *
 *   BLOB  = b codec (0: the body as is, 1: zstd frame of the body),
 *           u body length, then the (compressed) body
 *   body  = u version (1), u n, u flags (bit 0: a null mask follows the
 *           columns), then the columns
 *           seq, ts, pid, tid, type, op, aux, v0 … v4: n × s Δ each;
 *           stack_id: n × u (0: NULL, else its zigzag + 1);
 *           [null mask: n bytes, bit k: v<k> is NULL]
 *
 * The decoder is for untrusted files: everything is bounds-checked, and a
 * chunk that does not decode to what its row says is damaged.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Events a chunk holds at most (the recorder fills chunks to this). */
#define COWSCOPE_EVENT_CHUNK_EVENTS 4096
/* What a decoder accepts: a file may hold larger chunks than we write. */
#define COWSCOPE_EVENT_CHUNK_MAX_EVENTS 65536
/* The layout version in each body. */
#define COWSCOPE_EVENT_CHUNK_VERSION 1

/* Columns of events, in this order (CowscopeEventBlock.col[]). */
typedef enum {
  COWSCOPE_EVENT_COL_SEQ,
  COWSCOPE_EVENT_COL_TS,
  COWSCOPE_EVENT_COL_PID,
  COWSCOPE_EVENT_COL_TID,
  COWSCOPE_EVENT_COL_TYPE,
  COWSCOPE_EVENT_COL_OP,
  COWSCOPE_EVENT_COL_AUX,
  COWSCOPE_EVENT_COL_V0,
  COWSCOPE_EVENT_COL_V1,
  COWSCOPE_EVENT_COL_V2,
  COWSCOPE_EVENT_COL_V3,
  COWSCOPE_EVENT_COL_V4,
  COWSCOPE_EVENT_COL_STACK,
  COWSCOPE_EVENT_N_COLS
} CowscopeEventColumn;

/* Bits of a null mask byte: v0 … v4 (bit k), stack_id (bit 5). */
#define COWSCOPE_EVENT_NULL_STACK (1u << 5)

/* One event, as a row of `events`. */
typedef struct {
  gint64 col[COWSCOPE_EVENT_N_COLS]; /* COL_STACK 0 with the null bit: NULL */
  guint8 nulls;                      /* COWSCOPE_EVENT_NULL_* and bits 0-4 */
} CowscopeEventRow;

/* Events in columns: what the decoder gives and the encoder takes. */
typedef struct {
  guint n, capacity;
  gint64 *col[COWSCOPE_EVENT_N_COLS]; /* each @capacity long */
  guint8 *nulls;                      /* @capacity long */
  guint n_nulls;                      /* rows with a null bit set */
  gint ref_count;                     /* not atomic: one thread at a time */
} CowscopeEventBlock;

/* A new empty block (one reference). */
CowscopeEventBlock *cowscope_event_block_new (guint capacity);
CowscopeEventBlock *cowscope_event_block_ref (CowscopeEventBlock *block);
void cowscope_event_block_unref (CowscopeEventBlock *block);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (CowscopeEventBlock, cowscope_event_block_unref)

/* Appends @row (the block must have room). */
void cowscope_event_block_append (CowscopeEventBlock *block, const CowscopeEventRow *row);
/* Row @i of @block. */
void cowscope_event_block_get (const CowscopeEventBlock *block, guint i, CowscopeEventRow *row);
void cowscope_event_block_clear (CowscopeEventBlock *block);

/* Reusable encoder state (zstd context and buffers); one thread at a time. */
typedef struct _CowscopeEventEncoder CowscopeEventEncoder;
CowscopeEventEncoder *cowscope_event_encoder_new (void);
void cowscope_event_encoder_free (CowscopeEventEncoder *encoder);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (CowscopeEventEncoder, cowscope_event_encoder_free)

/* Encodes the first @n events of @block as a chunk BLOB; the returned
 * bytes belong to @encoder and stay valid until its next call. */
const guint8 *cowscope_event_encode (CowscopeEventEncoder *encoder, const CowscopeEventBlock *block,
                                     guint n, gsize *len);

/* What a chunk's row says of it, checked against the decoded events. */
typedef struct {
  gint64 first_seq, last_seq;
  gint64 n;
} CowscopeEventChunkHeader;

/* Decodes a chunk BLOB into @block (replacing what it held; grown as
 * needed).  FALSE when the BLOB is damaged: @what then says how (a static
 * string).  @expect, when not NULL, must agree with the decoded events. */
gboolean cowscope_event_decode (const void *blob, gsize len, const CowscopeEventChunkHeader *expect,
                                CowscopeEventBlock *block, const char **what);

/* Summary of a block's first @n events: the types it holds (bit t for
 * type t < 63, bit 63 for any other), its least and greatest ts, and
 * whether ts never decreases. */
typedef struct {
  guint64 types;
  gint64 min_ts, max_ts;
  gboolean sorted;
} CowscopeEventSummary;

void cowscope_event_block_summary (const CowscopeEventBlock *block, guint n,
                                   CowscopeEventSummary *summary);

/* The type bit of @type in CowscopeEventSummary.types. */
static inline guint64
cowscope_event_type_bit (gint64 type)
{
  return type >= 0 && type < 63 ? G_GUINT64_CONSTANT (1) << type : G_GUINT64_CONSTANT (1) << 63;
}

G_END_DECLS
