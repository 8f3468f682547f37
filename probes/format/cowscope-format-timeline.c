/* cowscope-format-timeline.c — events to timeline items (see header). */
#include "cowscope-format-timeline.h"

#include <string.h>

#include "cow-trace.h"
#include "cowscope-packed-records.h"

guint8
cowscope_timeline_event_kind (gint64 type, gint64 aux)
{
  switch (type)
    {
    case COW_EVENT_ALLOCATION_NEW: return COWSCOPE_ITEM_ALLOCATION;
    case COW_EVENT_ALLOCATION_FREE:
    case COW_EVENT_STORAGE_FREE:
    case COW_EVENT_TENSOR_FREE: return COWSCOPE_ITEM_FREE;
    case COW_EVENT_STORAGE_NEW: return COWSCOPE_ITEM_STORAGE;
    case COW_EVENT_TENSOR_NEW:
    case COW_EVENT_TENSOR_NAME: return COWSCOPE_ITEM_TENSOR;
    case COW_EVENT_CONTEXT_NEW:
    case COW_EVENT_CONTEXT_REF:
    case COW_EVENT_CONTEXT_UNREF:
    case COW_EVENT_CONTEXT_FREE: return COWSCOPE_ITEM_CONTEXT;
    case COW_EVENT_LAZY_CLONE: return COWSCOPE_ITEM_LAZY_CLONE;
    case COW_EVENT_LAZY_CLONE_EAGER: return COWSCOPE_ITEM_EAGER_COPY;
    case COW_EVENT_MATERIALIZE_BEGIN: return COWSCOPE_ITEM_MATERIALIZE_BEGIN;
    case COW_EVENT_MATERIALIZE_END:
      switch (aux & COW_MATERIALIZE_KIND_MASK)
        {
        case COW_MATERIALIZE_COPY: return COWSCOPE_ITEM_COPY;
        case COW_MATERIALIZE_STEAL: return COWSCOPE_ITEM_STEAL;
        default: return COWSCOPE_ITEM_MATERIALIZE_FAILED;
        }
    case COW_EVENT_SIMULATE_VIOLATION: return COWSCOPE_ITEM_VIOLATION;
    case COW_EVENT_RANGE_BEGIN:
    case COW_EVENT_RANGE_END: return COWSCOPE_ITEM_RANGE;
    case COW_EVENT_MARK: return COWSCOPE_ITEM_MARK;
    case COW_EVENT_IPC_SEND:
    case COW_EVENT_IPC_RECEIVE:
    case COW_EVENT_IPC_RELEASE:
    case COW_EVENT_IPC_LIMBO_ENTER:
    case COW_EVENT_IPC_LIMBO_FREE:
    case COW_EVENT_IPC_COLLECT: return COWSCOPE_ITEM_IPC;
    default: return COWSCOPE_ITEM_OTHER;
    }
}

guint8
cowscope_timeline_span_kind (guint8 code)
{
  if (code == COWSCOPE_SPAN_RANGE)
    return COWSCOPE_ITEM_RANGE;
  return cowscope_timeline_event_kind (COW_EVENT_MATERIALIZE_END, code);
}

/* The payload field that holds an event's byte count, per type. */
guint64
cowscope_timeline_event_bytes (gint64 type, const gint64 *v)
{
  switch (type)
    {
    case COW_EVENT_ALLOCATION_NEW:
    case COW_EVENT_ALLOCATION_FREE: return (guint64) v[1];
    case COW_EVENT_STORAGE_NEW:
    case COW_EVENT_STORAGE_FREE: return (guint64) v[2];
    case COW_EVENT_MATERIALIZE_BEGIN:
    case COW_EVENT_MATERIALIZE_END: return (guint64) v[3];
    default: return 0;
    }
}

/* Classifies a CUDA record by the words in its kind's name. */
guint8
cowscope_timeline_cuda_kind (const char *name)
{
  if (name == NULL)
    return COWSCOPE_ITEM_CUDA_OTHER;
  if (strstr (name, "memcpy") != NULL)
    return COWSCOPE_ITEM_CUDA_MEMCPY;
  if (strstr (name, "memset") != NULL)
    return COWSCOPE_ITEM_CUDA_MEMSET;
  if (strstr (name, "kernel") != NULL)
    return COWSCOPE_ITEM_CUDA_KERNEL;
  return COWSCOPE_ITEM_CUDA_OTHER;
}
