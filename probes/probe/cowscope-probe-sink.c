/* cowscope-probe-sink.c — the engine's trace sink: every event into the
 * calling thread's ring, and the user's call stack after the events that
 * a report explains (the session format's list: cowscope-stack-events.h).
 *
 * Hot path: a TLS load, one ring write (allocation-free, lock-free) and a
 * mask test.  Everything else is in the cold paths of the thread and
 * connection files.
 */
#include "cowscope-probe-private.h"
#include "cowscope-probe.h"
#include "cowscope-stack-events.h"

#include <string.h>

/* A STACK blob: blob header, stack header, frames. */
typedef struct {
  CowscopeRingBlobHeader blob;
  CowscopeStackBlob stack;
  uint64_t frames[COWSCOPE_MAX_STACK_DEPTH];
} StackRecord;

/* Writes the user's call stack for @event right after it.  A dropped
 * stack leaves the event without one (the recorder accepts that). */
static void
write_stack (CowscopeProbeThread *t, const CowTraceEvent *event)
{
  StackRecord record;
  uint32_t n = cowscope_probe_stack_capture (record.frames, COWSCOPE_MAX_STACK_DEPTH);

  record.blob.type = COWSCOPE_RING_BLOB_STACK;
  record.blob.flags = 0;
  record.stack.event_time_ns = event->time_ns;
  record.stack.event_type = event->type;
  record.stack.n_frames = n;
  size_t size = offsetof (StackRecord, frames) + n * sizeof (uint64_t);
  cowscope_ring_write (t->ring, COWSCOPE_RING_KIND_BLOB, &record, size);
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

/* CowTraceSink.event: the event into this thread's ring, then its stack
 * when it takes one.  Never blocks except in BLOCK mode on a full ring.
 * When this call had to set the thread's ring up first (the fallback for
 * threads that did not start through the probe's trampoline), the event
 * is stamped after the set-up: the engine took its time before calling
 * us, and the set-up must not count inside the span it opens. */
static void
sink_event (const CowTraceEvent *event, void *user_data)
{
  (void) user_data;
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
  if (PROBE_UNLIKELY (t == NULL))
    return;
  bool stored = cowscope_ring_write_event (t->ring, event);
  /* Config is read-only once the sink is installed. */
  if (PROBE_UNLIKELY (cowscope_event_takes_stack (event->type)) && stored
      && cowscope_probe_config.stacks)
    write_stack (t, event);
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
