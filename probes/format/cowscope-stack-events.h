/* cowscope-stack-events.h — which events carry the user's call stack.
 *
 * Plain C (libc and the engine's cow-trace.h only): the in-target probe
 * (probes/probe/cowscope-probe-sink.c) writes a STACK blob after exactly
 * these events, and the recorder's collector
 * (probes/recorder/cowscope-collector.c) holds exactly these back until
 * their stack arrives.  They are the events a report explains by call
 * site: lazy clones, the begin of a materialization, simulate-mode
 * violations and IPC sends.
 *
 * MATERIALIZE_END carries none: it is emitted by the same call on the
 * same thread right after its MATERIALIZE_BEGIN, whose stack the
 * materialization keeps (materializations.stack_id), so a second capture
 * would cost one more unwind per copy for the same frames.  (The
 * collector once waited for an END's stack that the probe never sent.)
 */
#ifndef COWSCOPE_STACK_EVENTS_H
#define COWSCOPE_STACK_EVENTS_H

#include <stdbool.h>
#include <stdint.h>

#include "cow-trace.h"

#define COWSCOPE_STACK_EVENTS                                                 \
  ((UINT32_C (1) << COW_EVENT_LAZY_CLONE) | (UINT32_C (1) << COW_EVENT_LAZY_CLONE_EAGER) \
   | (UINT32_C (1) << COW_EVENT_MATERIALIZE_BEGIN)                            \
   | (UINT32_C (1) << COW_EVENT_SIMULATE_VIOLATION) | (UINT32_C (1) << COW_EVENT_IPC_SEND))

_Static_assert (COW_N_EVENT_TYPES <= 32, "the stack events fit one 32-bit mask");

/* Whether an event of @type is followed by its call stack (when stacks
 * are recorded at all).  One shift and a test: the probe's hot path. */
static inline bool
cowscope_event_takes_stack (uint32_t type)
{
  return type < 32 && ((COWSCOPE_STACK_EVENTS >> type) & 1u) != 0;
}

#endif /* COWSCOPE_STACK_EVENTS_H */
