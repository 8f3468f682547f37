/* demo-stats.c — the demo's counting trace sink: counts every event the
 * engine reports, by kind, bytes and triggering operation. */
#include "demo-stats.h"

#include <stdatomic.h>
#include <stddef.h>

/* Bumped from whichever thread the engine reports on; relaxed, since
 * they are only read after the threads that bump them were joined. */
static struct {
  _Atomic uint64_t k[N_COUNTERS];
  _Atomic uint64_t lazy_by_op[COW_N_OPS];
  _Atomic uint64_t copy_by_op[COW_N_OPS];
  _Atomic uint64_t steal_by_op[COW_N_OPS];
} live;

/* True when the installed sink is count_sink below. */
static bool counting;

static void
bump (_Atomic uint64_t *counter, uint64_t amount)
{
  atomic_fetch_add_explicit (counter, amount, memory_order_relaxed);
}

/* The sink's event callback: counts, never calls into the engine. */
static void
count_event (const CowTraceEvent *event, void *user_data)
{
  (void) user_data;
  unsigned op = event->op < COW_N_OPS ? event->op : COW_OP_NONE;

  bump (&live.k[K_EVENTS], 1);
  switch (event->type)
    {
    case COW_EVENT_TENSOR_NEW:
      bump (&live.k[K_TENSOR_NEW], 1);
      break;
    case COW_EVENT_TENSOR_FREE:
      bump (&live.k[K_TENSOR_FREE], 1);
      break;
    case COW_EVENT_STORAGE_NEW:
      bump (&live.k[K_STORAGE_NEW], 1);
      if (event->storage.source_storage_id != 0)
        {
          bump (&live.k[K_SHARED_STORAGES], 1);
          bump (&live.k[K_SHARED_BYTES], event->storage.nbytes);
        }
      break;
    case COW_EVENT_STORAGE_FREE:
      bump (&live.k[K_STORAGE_FREE], 1);
      break;
    case COW_EVENT_ALLOCATION_NEW:
      bump (&live.k[K_ALLOCATION_NEW], 1);
      bump (&live.k[K_ALLOCATION_BYTES], event->allocation.nbytes);
      break;
    case COW_EVENT_ALLOCATION_FREE:
      bump (&live.k[K_ALLOCATION_FREE], 1);
      break;
    case COW_EVENT_CONTEXT_NEW:
      bump (&live.k[K_CONTEXT_NEW], 1);
      break;
    case COW_EVENT_CONTEXT_FREE:
      bump (&live.k[K_CONTEXT_FREE], 1);
      break;
    case COW_EVENT_LAZY_CLONE:
      bump (&live.k[K_LAZY_CLONE], 1);
      bump (&live.lazy_by_op[op], 1);
      break;
    case COW_EVENT_LAZY_CLONE_EAGER:
      bump (&live.k[K_EAGER], 1);
      bump (&live.k[K_EAGER_BYTES], event->lazy_clone.context_id_or_nbytes);
      if (event->aux == COW_EAGER_FOREIGN_DATA_PTR)
        bump (&live.k[K_EAGER_FOREIGN], 1);
      else if (event->aux == COW_EAGER_NOT_SIMPLE)
        bump (&live.k[K_EAGER_NOT_SIMPLE], 1);
      else
        bump (&live.k[K_EAGER_OTHER], 1);
      break;
    case COW_EVENT_MATERIALIZE_END:
      {
        uint32_t kind = event->aux & COW_MATERIALIZE_KIND_MASK;
        uint64_t nbytes = event->materialize_end.nbytes;
        bump (&live.k[K_LOCK_WAIT_NS], event->materialize_end.lock_wait_ns);
        if (kind == COW_MATERIALIZE_COPY)
          {
            bump (&live.k[K_COPY], 1);
            bump (&live.k[K_COPY_BYTES], nbytes);
            bump (&live.copy_by_op[op], 1);
          }
        else if (kind == COW_MATERIALIZE_STEAL)
          {
            bump (&live.k[K_STEAL], 1);
            bump (&live.k[K_STEAL_BYTES], nbytes);
            bump (&live.steal_by_op[op], 1);
            if (event->aux & COW_MATERIALIZE_FLAG_COPY_DISCARDED)
              {
                bump (&live.k[K_DISCARDED], 1);
                bump (&live.k[K_DISCARDED_BYTES], nbytes);
              }
          }
        else
          bump (&live.k[K_FAILED], 1);
      }
      break;
    case COW_EVENT_SIMULATE_VIOLATION:
      bump (&live.k[K_VIOLATION], 1);
      bump (&live.k[event->aux == COW_ACCESS_WRITE ? K_VIOLATION_WRITE
                                                   : K_VIOLATION_READ], 1);
      break;
    case COW_EVENT_RANGE_BEGIN:
      bump (&live.k[K_RANGE], 1);
      break;
    case COW_EVENT_MARK:
      bump (&live.k[K_MARK], 1);
      break;
    case COW_EVENT_TENSOR_NAME:
      bump (&live.k[K_NAME], 1);
      break;
    default:
      break;
    }
}

static void
count_string (uint64_t string_id, const char *text, size_t length,
              void *user_data)
{
  (void) string_id;
  (void) text;
  (void) length;
  (void) user_data;
  bump (&live.k[K_STRING], 1);
}

static const CowTraceSink count_sink = {
  .event = count_event,
  .string = count_string,
  .user_data = NULL,
};

void
stats_snapshot (Stats *out)
{
  for (int i = 0; i < N_COUNTERS; i++)
    out->k[i] = atomic_load_explicit (&live.k[i], memory_order_relaxed);
  for (int i = 0; i < COW_N_OPS; i++)
    {
      out->lazy_by_op[i] = atomic_load_explicit (&live.lazy_by_op[i], memory_order_relaxed);
      out->copy_by_op[i] = atomic_load_explicit (&live.copy_by_op[i], memory_order_relaxed);
      out->steal_by_op[i] = atomic_load_explicit (&live.steal_by_op[i], memory_order_relaxed);
    }
}

/* @after − @before into @after. */
void
stats_subtract (Stats *after, const Stats *before)
{
  for (int i = 0; i < N_COUNTERS; i++)
    after->k[i] -= before->k[i];
  for (int i = 0; i < COW_N_OPS; i++)
    {
      after->lazy_by_op[i] -= before->lazy_by_op[i];
      after->copy_by_op[i] -= before->copy_by_op[i];
      after->steal_by_op[i] -= before->steal_by_op[i];
    }
}

void
stats_add (Stats *total, const Stats *part)
{
  for (int i = 0; i < N_COUNTERS; i++)
    total->k[i] += part->k[i];
  for (int i = 0; i < COW_N_OPS; i++)
    {
      total->lazy_by_op[i] += part->lazy_by_op[i];
      total->copy_by_op[i] += part->copy_by_op[i];
      total->steal_by_op[i] += part->steal_by_op[i];
    }
}

bool
stats_start_counting (void)
{
  /* Count events only if nobody else (the profiler's probes) listens. */
  if (cow_trace_get_sink () == NULL)
    {
      cow_trace_set_sink (&count_sink);
      counting = true;
    }
  return counting;
}

void
stats_stop_counting (void)
{
  if (counting && cow_trace_get_sink () == &count_sink)
    cow_trace_set_sink (NULL);
}

bool
stats_counting (void)
{
  return counting;
}
