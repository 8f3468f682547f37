/* cow-range.c — user ranges and marks.  Each thread keeps its own stack
 * of open ranges so events can name their parent. */
#include "cow-private.h"
#include "cow-range.h"

#define MAX_RANGE_DEPTH 64

/* The stack stays in ordinary thread-local storage (512 bytes); what
 * every mark reads is kept beside it in the initial-exec model, which a
 * library has little room for (COW_TLS). */
static _Thread_local uint64_t range_stack[MAX_RANGE_DEPTH];
/* May exceed MAX_RANGE_DEPTH: deeper ranges still pair up, without ids. */
static COW_TLS int range_depth;
/* The innermost open range with an id (0: none). */
static COW_TLS uint64_t range_innermost;

static uint64_t
innermost (void)
{
  return range_innermost;
}

/* Recomputes range_innermost after the stack changed. */
static void
update_innermost (void)
{
  range_innermost = range_depth == 0
                      ? 0
                      : range_stack[(range_depth <= MAX_RANGE_DEPTH ? range_depth
                                                                   : MAX_RANGE_DEPTH) - 1];
}

uint64_t
cow_range_push (const char *name)
{
  uint64_t id = cow_next_id ();
  uint64_t parent = innermost ();
  if (range_depth < MAX_RANGE_DEPTH)
    range_stack[range_depth] = id;
  range_depth++;
  update_innermost ();
  const CowTraceSink *sink = cow_trace_sink ();
  if (COW_UNLIKELY (sink != NULL))
    {
      /* Interned only when someone listens. */
      uint64_t string_id = cow_intern_string (name ? name : "", NULL);
      cow_trace_emit (sink, COW_EVENT_RANGE_BEGIN, COW_OP_NONE, 0, id, string_id,
                      parent, 0, 0);
    }
  return id;
}

void
cow_range_pop (void)
{
  if (range_depth == 0)
    return;
  uint64_t id = range_depth <= MAX_RANGE_DEPTH ? range_stack[range_depth - 1] : 0;
  range_depth--;
  update_innermost ();
  COW_TRACE (COW_EVENT_RANGE_END, COW_OP_NONE, 0, id, 0, innermost (), 0, 0);
}

void
cow_mark (const char *name)
{
  const CowTraceSink *sink = cow_trace_sink ();
  if (COW_UNLIKELY (sink != NULL))
    {
      uint64_t string_id = cow_intern_string (name ? name : "", NULL);
      cow_trace_emit (sink, COW_EVENT_MARK, COW_OP_NONE, 0, 0, string_id,
                      innermost (), 0, 0);
    }
}
