/* cowscope-packed-records.h — the records of each packed BLOB of a
 * session, each writer beside its reader (the varints: cowscope-packed.h;
 * README.md, "Session database", documents the same layouts).
 *
 * Records are delta-coded against the record before them: a writer and a
 * reader each keep the previous record and pass it in.  The readers are
 * inline, for the timeline's and the graph builder's hot loops.
 */
#pragma once

#include "cow-trace.h"
#include "cowscope-format-check.h"
#include "cowscope-graph-state.h"
#include "cowscope-packed.h"

G_BEGIN_DECLS

/* ---- timeline_chunks.instants ----------------------------------------------
 *   s Δts, s Δid, b code, [b aux: thread lanes, code materialize_end], u bytes
 * Thread lanes: code is the event type, id its seq, aux the low byte of
 * its aux.  CUDA lanes: code is cuda_activity.kind, id its id. */

typedef struct {
  gint64 ts, id;
  guint64 bytes;
  guint8 code, aux;
} CowscopeInstant;

static inline void
cowscope_instant_write (GByteArray *b, const CowscopeInstant *prev, const CowscopeInstant *in,
                        gboolean cuda)
{
  cowscope_packed_write_s (b, in->ts - prev->ts);
  cowscope_packed_write_s (b, in->id - prev->id);
  cowscope_packed_write_byte (b, in->code);
  if (!cuda && in->code == COW_EVENT_MATERIALIZE_END)
    cowscope_packed_write_byte (b, in->aux);
  cowscope_packed_write_u (b, in->bytes);
}

/* Reads the instant after @in (the previous one; zeros before the first)
 * into @in. */
static inline void
cowscope_instant_read (CowscopePackedReader *r, CowscopeInstant *in, gboolean cuda)
{
  in->ts = cowscope_packed_add (in->ts, cowscope_packed_read_s (r));
  in->id = cowscope_packed_add (in->id, cowscope_packed_read_s (r));
  in->code = cowscope_packed_read_byte (r);
  in->aux = !cuda && in->code == COW_EVENT_MATERIALIZE_END ? cowscope_packed_read_byte (r) : 0;
  in->bytes = cowscope_packed_read_u (r);
}

/* TRUE when @in's time is a session's time (0 to
 * COWSCOPE_FORMAT_MAX_TIME): a damaged BLOB decodes to any number, and a
 * reader treats a record that fails this as the end of what it can use
 * (the chunk is damaged). */
static inline gboolean
cowscope_instant_valid (const CowscopeInstant *in)
{
  return in->ts >= 0 && in->ts <= COWSCOPE_FORMAT_MAX_TIME;
}

/* ---- timeline_spans.spans ----------------------------------------------------
 *   s Δstart, u length (0: still open, else zigzag (end - start) + 1),
 *   s Δid, b code, u bytes
 * Thread lanes: materializations (code: the materialize kind, id: the
 * begin event's seq) and user ranges (code COWSCOPE_SPAN_RANGE, id: the
 * range id); CUDA lanes: every record (code: its kind). */

#define COWSCOPE_SPAN_RANGE 255

typedef struct {
  gint64 start, end, id;
  guint64 bytes;
  guint8 code;
  gboolean open;     /* never ended: @end is meaningless */
} CowscopeSpan;

static inline void
cowscope_span_write (GByteArray *b, const CowscopeSpan *prev, const CowscopeSpan *s)
{
  cowscope_packed_write_s (b, s->start - prev->start);
  cowscope_packed_write_u (b, s->open ? 0 : cowscope_packed_zigzag (s->end - s->start) + 1);
  cowscope_packed_write_s (b, s->id - prev->id);
  cowscope_packed_write_byte (b, s->code);
  cowscope_packed_write_u (b, s->bytes);
}

static inline void
cowscope_span_read (CowscopePackedReader *r, CowscopeSpan *s)
{
  s->start = cowscope_packed_add (s->start, cowscope_packed_read_s (r));
  guint64 len = cowscope_packed_read_u (r);
  s->open = len == 0;
  s->end = s->open ? s->start : cowscope_packed_add (s->start, cowscope_packed_unzigzag (len - 1));
  s->id = cowscope_packed_add (s->id, cowscope_packed_read_s (r));
  s->code = cowscope_packed_read_byte (r);
  s->bytes = cowscope_packed_read_u (r);
}

/* TRUE when @s starts at a session's time and, unless still open, ends
 * at one no earlier (as cowscope_instant_valid()). */
static inline gboolean
cowscope_span_valid (const CowscopeSpan *s)
{
  return s->start >= 0 && s->start <= COWSCOPE_FORMAT_MAX_TIME
         && (s->open || (s->end >= s->start && s->end <= COWSCOPE_FORMAT_MAX_TIME));
}

/* ---- checkpoint_states.objects ---------------------------------------------
 *   s Δpid, b kind, s Δid (from 0 when pid or kind changed), then
 *   allocation: u alloc kind, s device, u nbytes
 *   context:    u allocation id, u first storage id
 *   storage:    u allocation id, u nbytes, u context id, u left context id,
 *               u source id
 *   tensor:     u storage id, u base tensor id, u dtype, u ndim, s numel
 *   then the free time relative to the checkpoint's ts and, for tensors,
 *   the name.  Records come in (kind, pid, id) order. */

typedef struct {
  guint32 pid;
  guint8 kind;
  guint64 id;
} CowscopeObjectKey;

static inline void
cowscope_object_write (GByteArray *b, CowscopeObjectKey *prev, const CowscopeLiveObject *o,
                       gint64 base_ts, const char *name)
{
  if (o->pid != prev->pid || o->kind != prev->kind)
    prev->id = 0;
  cowscope_packed_write_s (b, (gint64) o->pid - (gint64) prev->pid);
  cowscope_packed_write_byte (b, o->kind);
  cowscope_packed_write_s (b, (gint64) (o->id - prev->id));
  prev->pid = o->pid;
  prev->kind = o->kind;
  prev->id = o->id;
  switch (o->kind)
    {
    case COWSCOPE_OBJECT_ALLOCATION:
      cowscope_packed_write_u (b, o->alloc_kind);
      cowscope_packed_write_s (b, o->device);
      cowscope_packed_write_u (b, o->nbytes);
      break;
    case COWSCOPE_OBJECT_CONTEXT:
      cowscope_packed_write_u (b, o->allocation_id);
      cowscope_packed_write_u (b, o->storage_id);
      break;
    case COWSCOPE_OBJECT_STORAGE:
      cowscope_packed_write_u (b, o->allocation_id);
      cowscope_packed_write_u (b, o->nbytes);
      cowscope_packed_write_u (b, o->context_id);
      cowscope_packed_write_u (b, o->left_context_id);
      cowscope_packed_write_u (b, o->source_id);
      break;
    default:
      cowscope_packed_write_u (b, o->storage_id);
      cowscope_packed_write_u (b, o->source_id);
      cowscope_packed_write_u (b, o->dtype);
      cowscope_packed_write_u (b, o->ndim);
      cowscope_packed_write_s (b, o->numel);
      break;
    }
  cowscope_packed_write_free (b, o->free_ts, base_ts);
  if (o->kind == COWSCOPE_OBJECT_TENSOR)
    cowscope_packed_write_name (b, name, -1);
}

/* Reads the next record's key into @key (the previous one's; zeros
 * before the first); FALSE when it cannot be read or names no object
 * kind (the reader then failed). */
static inline gboolean
cowscope_object_read_key (CowscopePackedReader *r, CowscopeObjectKey *key)
{
  gint64 dpid = cowscope_packed_read_s (r);
  guint8 kind = cowscope_packed_read_byte (r);
  if (dpid != 0 || kind != key->kind)
    key->id = 0;
  key->pid = (guint32) cowscope_packed_add ((gint64) key->pid, dpid);
  key->kind = kind;
  key->id += (guint64) cowscope_packed_read_s (r);
  if (kind >= COWSCOPE_N_OBJECT_KINDS)
    cowscope_packed_reader_fail (r);
  return cowscope_packed_reader_ok (r);
}

/* Reads the rest of the record into @o (its key already set) and, for a
 * tensor, its name (@len bytes at the result, not NUL-terminated; NULL:
 * none). */
static inline const char *
cowscope_object_read_body (CowscopePackedReader *r, CowscopeLiveObject *o, gint64 base_ts,
                           gsize *len)
{
  switch (o->kind)
    {
    case COWSCOPE_OBJECT_ALLOCATION:
      o->alloc_kind = (guint8) cowscope_packed_read_u (r);
      o->device = cowscope_packed_read_s (r);
      o->nbytes = cowscope_packed_read_u (r);
      break;
    case COWSCOPE_OBJECT_CONTEXT:
      o->allocation_id = cowscope_packed_read_u (r);
      o->storage_id = cowscope_packed_read_u (r);
      break;
    case COWSCOPE_OBJECT_STORAGE:
      o->allocation_id = cowscope_packed_read_u (r);
      o->nbytes = cowscope_packed_read_u (r);
      o->context_id = cowscope_packed_read_u (r);
      o->left_context_id = cowscope_packed_read_u (r);
      o->source_id = cowscope_packed_read_u (r);
      break;
    default:
      o->storage_id = cowscope_packed_read_u (r);
      o->source_id = cowscope_packed_read_u (r);
      o->dtype = (guint32) cowscope_packed_read_u (r);
      o->ndim = (guint32) cowscope_packed_read_u (r);
      o->numel = cowscope_packed_read_s (r);
      break;
    }
  o->free_ts = cowscope_packed_read_free (r, base_ts);
  *len = 0;
  return o->kind == COWSCOPE_OBJECT_TENSOR ? cowscope_packed_read_name (r, len) : NULL;
}

/* ---- checkpoint_replays.events ---------------------------------------------
 *   s Δseq, s Δts, u type, s aux, s Δpid, s v0 ... s v4, and after an event
 *   that creates an object (cowscope_event_creates()) that object's free
 *   time relative to the event's ts and, for a tensor, its name.  Only
 *   events that change the graph (cowscope_event_changes_graph()). */

typedef struct {
  gint64 seq, ts;
  gint64 type, aux;
  gint64 pid;
  gint64 v[5];
} CowscopeReplayEvent;

/* Writes @ev after @prev (then makes @prev @ev); @free_ts and @name: the
 * object it creates, if any. */
static inline void
cowscope_replay_write (GByteArray *b, CowscopeReplayEvent *prev, const CowscopeReplayEvent *ev,
                       gint64 free_ts, const char *name)
{
  cowscope_packed_write_s (b, ev->seq - prev->seq);
  cowscope_packed_write_s (b, ev->ts - prev->ts);
  cowscope_packed_write_u (b, (guint64) ev->type);
  cowscope_packed_write_s (b, ev->aux);
  cowscope_packed_write_s (b, ev->pid - prev->pid);
  for (int k = 0; k < 5; k++)
    cowscope_packed_write_s (b, ev->v[k]);
  int kind = cowscope_event_creates (ev->type);
  if (kind >= 0)
    {
      cowscope_packed_write_free (b, free_ts, ev->ts);
      if (kind == COWSCOPE_OBJECT_TENSOR)
        cowscope_packed_write_name (b, name, -1);
    }
  *prev = *ev;
}

/* Reads the next event's head (everything but the created object's free
 * time and name) into @ev (the previous event). */
static inline void
cowscope_replay_read_head (CowscopePackedReader *r, CowscopeReplayEvent *ev)
{
  ev->seq = cowscope_packed_add (ev->seq, cowscope_packed_read_s (r));
  ev->ts = cowscope_packed_add (ev->ts, cowscope_packed_read_s (r));
  ev->type = (gint64) cowscope_packed_read_u (r);
  ev->aux = cowscope_packed_read_s (r);
  ev->pid = cowscope_packed_add (ev->pid, cowscope_packed_read_s (r));
  for (int k = 0; k < 5; k++)
    ev->v[k] = cowscope_packed_read_s (r);
}

/* Reads the rest of @ev's record: the free time of the object it creates
 * (-1 when none) and a tensor's name (as cowscope_object_read_body()). */
static inline const char *
cowscope_replay_read_tail (CowscopePackedReader *r, const CowscopeReplayEvent *ev,
                           gint64 *free_ts, gsize *len)
{
  int kind = cowscope_event_creates (ev->type);
  *free_ts = kind >= 0 ? cowscope_packed_read_free (r, ev->ts) : -1;
  *len = 0;
  return kind == COWSCOPE_OBJECT_TENSOR ? cowscope_packed_read_name (r, len) : NULL;
}

G_END_DECLS
