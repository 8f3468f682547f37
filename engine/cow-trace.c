/* cow-trace.c — the trace sink and event names. */
#include "cow-private.h"
#include "cow-trace-clock-private.h"

_Atomic (const CowTraceSink *) cow_trace_sink_installed = NULL;
/* Bumped on every sink change so interned strings are announced again. */
_Atomic uint64_t cow_trace_sink_epoch = 1;

void
cow_trace_set_sink (const CowTraceSink *sink)
{
  atomic_fetch_add_explicit (&cow_trace_sink_epoch, 1, memory_order_relaxed);
  /* Release: a thread that sees the pointer also sees the sink's fields. */
  atomic_store_explicit (&cow_trace_sink_installed, sink, memory_order_release);
}

const CowTraceSink *
cow_trace_get_sink (void)
{
  return cow_trace_sink ();
}

int64_t
cow_trace_now_ns (void)
{
  return cow_clock_now_ns ();
}

void
cow_trace_emit (const CowTraceSink *sink, CowEventType type, CowOp op,
                uint32_t aux, uint64_t v0, uint64_t v1, uint64_t v2,
                uint64_t v3, uint64_t v4)
{
  CowTraceEvent event = {
    .type = (uint16_t) type,
    .op = (uint16_t) op,
    .aux = aux,
    .pid = cow_current_pid (),
    .tid = cow_current_tid (),
    .time_ns = cow_clock_now_ns (),
    .v = { v0, v1, v2, v3, v4 },
  };
  if (sink->event != NULL)
    sink->event (&event, sink->user_data);
}

const char *
cow_event_type_name (CowEventType type)
{
  static const char *const names[COW_N_EVENT_TYPES] = {
    [COW_EVENT_NONE] = "none",
    [COW_EVENT_ALLOCATION_NEW] = "allocation_new",
    [COW_EVENT_ALLOCATION_FREE] = "allocation_free",
    [COW_EVENT_STORAGE_NEW] = "storage_new",
    [COW_EVENT_STORAGE_FREE] = "storage_free",
    [COW_EVENT_TENSOR_NEW] = "tensor_new",
    [COW_EVENT_TENSOR_FREE] = "tensor_free",
    [COW_EVENT_TENSOR_NAME] = "tensor_name",
    [COW_EVENT_CONTEXT_NEW] = "context_new",
    [COW_EVENT_CONTEXT_REF] = "context_ref",
    [COW_EVENT_CONTEXT_UNREF] = "context_unref",
    [COW_EVENT_CONTEXT_FREE] = "context_free",
    [COW_EVENT_LAZY_CLONE] = "lazy_clone",
    [COW_EVENT_LAZY_CLONE_EAGER] = "lazy_clone_eager",
    [COW_EVENT_MATERIALIZE_BEGIN] = "materialize_begin",
    [COW_EVENT_MATERIALIZE_END] = "materialize_end",
    [COW_EVENT_SIMULATE_VIOLATION] = "simulate_violation",
    [COW_EVENT_RANGE_BEGIN] = "range_begin",
    [COW_EVENT_RANGE_END] = "range_end",
    [COW_EVENT_MARK] = "mark",
    [COW_EVENT_IPC_SEND] = "ipc_send",
    [COW_EVENT_IPC_RECEIVE] = "ipc_receive",
    [COW_EVENT_IPC_RELEASE] = "ipc_release",
    [COW_EVENT_IPC_LIMBO_ENTER] = "ipc_limbo_enter",
    [COW_EVENT_IPC_LIMBO_FREE] = "ipc_limbo_free",
    [COW_EVENT_IPC_COLLECT] = "ipc_collect",
  };
  if ((unsigned) type >= COW_N_EVENT_TYPES)
    return "unknown";
  return names[type];
}

const char *
cow_op_name (CowOp op)
{
  static const char *const names[COW_N_OPS] = {
    [COW_OP_NONE] = "none",
    [COW_OP_EMPTY] = "empty",
    [COW_OP_FROM_DATA] = "from_data",
    [COW_OP_FROM_FOREIGN] = "from_foreign",
    [COW_OP_VIEW] = "view",
    [COW_OP_RESHAPE] = "reshape",
    [COW_OP_SLICE] = "slice",
    [COW_OP_SELECT] = "select",
    [COW_OP_NARROW] = "narrow",
    [COW_OP_TRANSPOSE] = "transpose",
    [COW_OP_PERMUTE] = "permute",
    [COW_OP_EXPAND] = "expand",
    [COW_OP_AS_STRIDED] = "as_strided",
    [COW_OP_CONTIGUOUS] = "contiguous",
    [COW_OP_CLONE] = "clone",
    [COW_OP_LAZY_CLONE] = "lazy_clone",
    [COW_OP_MUTABLE_DATA] = "mutable_data",
    [COW_OP_FILL_] = "fill_",
    [COW_OP_ADD] = "add",
    [COW_OP_ADD_] = "add_",
    [COW_OP_MUL] = "mul",
    [COW_OP_MUL_] = "mul_",
    [COW_OP_MATMUL] = "matmul",
    [COW_OP_SUM] = "sum",
    [COW_OP_COPY_] = "copy_",
    [COW_OP_TO_DEVICE] = "to_device",
    [COW_OP_IPC] = "ipc",
    [COW_OP_SCALE_] = "scale_",
  };
  if ((unsigned) op >= COW_N_OPS)
    return "unknown";
  return names[op];
}
