/* cowscope-probe-sink.c — the engine's trace sink: every event into the
 * calling thread's ring, and the user's call stack (or the key of one the
 * ring already carries) after the events that a report explains (the
 * session format's list: cowscope-stack-events.h).
 *
 * Hot path: a TLS load, a mask test and one ring write (allocation-free,
 * lock-free).  Stacks, CUPTI correlation and every first time are in
 * sink_event_slow() and the cold paths of the thread and connection
 * files.
 */
#include "cowscope-probe-private.h"
#include "cowscope-probe.h"
#include "cowscope-stack-events.h"

#include <string.h>

/* Writes the user's call stack for @event right after it: the key of a
 * stack this ring already carries (STACK_REF), or the frames with a new
 * key (STACK_DEF), or, for a thread without a stack table, the frames
 * alone (STACK).  A dropped stack leaves the event without one (the
 * recorder accepts that), and a dropped definition is not remembered, so
 * no reference ever names a key the recorder did not get. */
static void
write_stack (CowscopeProbeThread *t, const CowTraceEvent *event)
{
  uint64_t frames[COWSCOPE_MAX_STACK_DEPTH];
  uint32_t n = cowscope_probe_stack_capture (frames, COWSCOPE_MAX_STACK_DEPTH);
  size_t frame_bytes = n * sizeof (uint64_t);
  CowscopeRingBlobHeader blob = { .flags = 0 };

  if (PROBE_UNLIKELY (t->stacks == NULL))
    {
      blob.type = COWSCOPE_RING_BLOB_STACK;
      CowscopeStackBlob stack = { event->time_ns, event->type, n };
      uint8_t *p = cowscope_ring_reserve (t->ring, COWSCOPE_RING_KIND_BLOB,
                                          sizeof blob + sizeof stack + frame_bytes);
      if (p == NULL)
        return;
      memcpy (p, &blob, sizeof blob);
      memcpy (p + sizeof blob, &stack, sizeof stack);
      memcpy (p + sizeof blob + sizeof stack, frames, frame_bytes);
      cowscope_ring_commit (t->ring);
      return;
    }

  uint64_t hash = cowscope_probe_stack_hash (frames, n);
  uint64_t key = cowscope_probe_stack_cache_find (t->stacks, hash);
  if (key != 0)
    {
      struct {
        CowscopeRingBlobHeader blob;
        CowscopeStackRefBlob ref;
      } record = {
        .blob = { .type = COWSCOPE_RING_BLOB_STACK_REF, .flags = 0 },
        .ref = { .event_time_ns = event->time_ns, .event_type = event->type, .key = key },
      };
      cowscope_ring_write (t->ring, COWSCOPE_RING_KIND_BLOB, &record, sizeof record);
      return;
    }

  key = cowscope_probe_stack_cache_next_key (t->stacks);
  blob.type = COWSCOPE_RING_BLOB_STACK_DEF;
  CowscopeStackDefBlob def = {
    .event_time_ns = event->time_ns,
    .event_type = event->type,
    .n_frames = n,
    .key = key,
  };
  uint8_t *p = cowscope_ring_reserve (t->ring, COWSCOPE_RING_KIND_BLOB,
                                      sizeof blob + sizeof def + frame_bytes);
  if (p == NULL)
    return;
  memcpy (p, &blob, sizeof blob);
  memcpy (p + sizeof blob, &def, sizeof def);
  memcpy (p + sizeof blob + sizeof def, frames, frame_bytes);
  cowscope_ring_commit (t->ring);
  cowscope_probe_stack_cache_insert (t->stacks, hash, key);
}

/* A device materialization's copy is tagged in CUPTI with the begin
 * event's timestamp (the engine enqueues it between begin and end, on
 * this thread); finalize turns that into the begin event's seq, which
 * only the recorder knows.  One load and a branch without CUPTI. */
static void
correlate_device_copy (const CowTraceEvent *event)
{
  if (PROBE_LIKELY (COW_TRACE_AUX_DEVICE (event->aux) == 0))
    return;
  if (event->type == COW_EVENT_MATERIALIZE_BEGIN)
    cowscope_probe_push_external_correlation (event->time_ns);
  else if (event->type == COW_EVENT_MATERIALIZE_END)
    cowscope_probe_pop_external_correlation ();
}

/* Events that need more than one ring write: those that take a stack,
 * and a device materialization's begin and end (CUPTI correlation). */
#define SLOW_EVENTS                                                             \
  (COWSCOPE_STACK_EVENTS | (UINT32_C (1) << COW_EVENT_MATERIALIZE_BEGIN)         \
   | (UINT32_C (1) << COW_EVENT_MATERIALIZE_END))

/* Everything but the common case: a thread without its ring yet, a
 * re-entry, drops to count, stacks, CUPTI correlation.  When this call
 * had to set the thread's ring up first (the fallback for threads that
 * did not start through the probe's trampoline), the event is stamped
 * after the set-up: the engine took its time before calling us, and the
 * set-up must not count inside the span it opens. */
static PROBE_COLD void
sink_event_slow (const CowTraceEvent *event)
{
  bool set_up_now = false;
  CowTraceEvent restamped;
  CowscopeProbeThread *t = cowscope_probe_enter (true, &set_up_now);
  if (PROBE_UNLIKELY (set_up_now))
    {
      restamped = *event;
      restamped.time_ns = cow_trace_now_ns ();
      event = &restamped;
    }
  if (event->type == COW_EVENT_MATERIALIZE_BEGIN || event->type == COW_EVENT_MATERIALIZE_END)
    correlate_device_copy (event);
  if (t == NULL)
    return;
  bool stored = cowscope_ring_write_event (t->ring, event);
  /* Config is read-only once the sink is installed. */
  if (cowscope_event_takes_stack (event->type) && stored && cowscope_probe_config.stacks)
    write_stack (t, event);
  cowscope_probe_leave ();
}

/* CowTraceSink.event: the event into this thread's ring, then its stack
 * when it takes one.  Never blocks except in BLOCK mode on a full ring.
 * The common case (a thread with its ring, not re-entered, an event of
 * one record) is a TLS load, three tests and the ring write, between
 * setting and clearing the re-entry flag (cowscope_probe_enter() does
 * the same for the rest). */
static void
sink_event (const CowTraceEvent *event, void *user_data)
{
  (void) user_data;
  CowscopeProbeThread *t = cowscope_probe_tls_thread;
  uint32_t type = event->type;
  /* Relaxed: only this thread and its signal handlers touch these. */
  if (PROBE_UNLIKELY (t == NULL || type >= 32 || ((SLOW_EVENTS >> type) & 1) != 0
                      || atomic_load_explicit (&cowscope_probe_tls_busy, memory_order_relaxed)
                      || atomic_load_explicit (&t->reentered_drops, memory_order_relaxed) != 0))
    {
      sink_event_slow (event);
      return;
    }
  atomic_store_explicit (&cowscope_probe_tls_busy, 1, memory_order_relaxed);
  atomic_signal_fence (memory_order_seq_cst);
  cowscope_ring_write_event (t->ring, event);
  cowscope_probe_leave ();
}

/* CowTraceSink.string: an interned string into this thread's ring, before
 * the first event of this thread that names it. */
static void
sink_string (uint64_t string_id, const char *text, size_t length,
             void *user_data)
{
  (void) user_data;
  CowscopeProbeThread *t = cowscope_probe_enter (false, NULL);
  if (PROBE_UNLIKELY (t == NULL))
    return;
  cowscope_ring_write_string (t->ring, string_id, text, length);
  cowscope_probe_leave ();
}

static const CowTraceSink probe_sink = {
  .event = sink_event,
  .string = sink_string,
  .user_data = NULL,
};

/* Installs the probe's sink unless the target already installed one. */
void
cowscope_probe_sink_install (void)
{
  if (cow_trace_get_sink () == NULL)
    cow_trace_set_sink (&probe_sink);
}

/* Removes the probe's sink; the engine's trace points go back to one
 * branch.  The sink struct is static, so threads still inside it are
 * safe. */
void
cowscope_probe_sink_uninstall (void)
{
  if (cow_trace_get_sink () == &probe_sink)
    cow_trace_set_sink (NULL);
}

/* Fork child: installs the probe's sink again (if it is the installed
 * one) so the engine announces every interned string anew, this time on
 * the child's own rings; the recorder keys strings by process. */
void
cowscope_probe_sink_reannounce (void)
{
  if (cow_trace_get_sink () == &probe_sink)
    cow_trace_set_sink (&probe_sink);
}
