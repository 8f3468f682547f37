/* cowscope-lane-rules.c — events to timeline items and counters (see
 * header). */
#include "cowscope-lane-rules.h"

#include <string.h>

/* Maps an event type (and aux) to the kind of item it is drawn as. */
guint8
cowscope_lane_rules_event_kind (gint64 type, gint64 aux)
{
  switch (type)
    {
    case COWSCOPE_EV_ALLOCATION_NEW: return COWSCOPE_ITEM_ALLOCATION;
    case COWSCOPE_EV_ALLOCATION_FREE:
    case COWSCOPE_EV_STORAGE_FREE:
    case COWSCOPE_EV_TENSOR_FREE: return COWSCOPE_ITEM_FREE;
    case COWSCOPE_EV_STORAGE_NEW: return COWSCOPE_ITEM_STORAGE;
    case COWSCOPE_EV_TENSOR_NEW:
    case COWSCOPE_EV_TENSOR_NAME: return COWSCOPE_ITEM_TENSOR;
    case COWSCOPE_EV_CONTEXT_NEW:
    case COWSCOPE_EV_CONTEXT_REF:
    case COWSCOPE_EV_CONTEXT_UNREF:
    case COWSCOPE_EV_CONTEXT_FREE: return COWSCOPE_ITEM_CONTEXT;
    case COWSCOPE_EV_LAZY_CLONE: return COWSCOPE_ITEM_LAZY_CLONE;
    case COWSCOPE_EV_LAZY_CLONE_EAGER: return COWSCOPE_ITEM_EAGER_COPY;
    case COWSCOPE_EV_MATERIALIZE_BEGIN: return COWSCOPE_ITEM_MATERIALIZE_BEGIN;
    case COWSCOPE_EV_MATERIALIZE_END:
      switch (aux & 0xff)
        {
        case COWSCOPE_MATERIALIZE_COPY: return COWSCOPE_ITEM_COPY;
        case COWSCOPE_MATERIALIZE_STEAL: return COWSCOPE_ITEM_STEAL;
        default: return COWSCOPE_ITEM_MATERIALIZE_FAILED;
        }
    case COWSCOPE_EV_SIMULATE_VIOLATION: return COWSCOPE_ITEM_VIOLATION;
    case COWSCOPE_EV_RANGE_BEGIN:
    case COWSCOPE_EV_RANGE_END: return COWSCOPE_ITEM_RANGE;
    case COWSCOPE_EV_MARK: return COWSCOPE_ITEM_MARK;
    default:
      if (type >= COWSCOPE_EV_IPC_SEND && type <= COWSCOPE_EV_IPC_COLLECT)
        return COWSCOPE_ITEM_IPC;
      return COWSCOPE_ITEM_OTHER;
    }
}

/* The payload field that holds an event's byte count, per type. */
guint64
cowscope_lane_rules_event_bytes (gint64 type, const gint64 *v)
{
  switch (type)
    {
    case COWSCOPE_EV_ALLOCATION_NEW:
    case COWSCOPE_EV_ALLOCATION_FREE: return (guint64) v[1];
    case COWSCOPE_EV_STORAGE_NEW:
    case COWSCOPE_EV_STORAGE_FREE: return (guint64) v[2];
    case COWSCOPE_EV_MATERIALIZE_BEGIN:
    case COWSCOPE_EV_MATERIALIZE_END: return (guint64) v[3];
    default: return 0;
    }
}

/* Classifies a CUDA record by the words in its kind's name. */
guint8
cowscope_lane_rules_cuda_kind (const char *name)
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

/* All counters at 0, no shared context. */
void
cowscope_counter_rules_init (CowscopeCounterRules *rules)
{
  memset (rules, 0, sizeof *rules);
  rules->contexts = g_hash_table_new (g_direct_hash, g_direct_equal);
}

/* Frees what init() allocated; the values stay readable. */
void
cowscope_counter_rules_clear (CowscopeCounterRules *rules)
{
  g_clear_pointer (&rules->contexts, g_hash_table_unref);
}

/* A key for (pid, id); ids are process-wide counters far below 2^44, so
 * the fold is exact in practice (and only feeds counters). */
static gpointer
pid_id_key (guint32 pid, gint64 id)
{
  return GSIZE_TO_POINTER (((guint64) pid << 44) ^ (guint64) id);
}

/* Allocations move "bytes allocated", storages "live storages"; a storage
 * born on a context (a lazy clone) adds its bytes to "bytes shared" until
 * one of the context's sharers drops its reference (materializes or is
 * freed) while others remain. */
guint
cowscope_counter_rules_apply (CowscopeCounterRules *rules, guint32 pid, gint64 type,
                              const gint64 *v)
{
  double *value = rules->value;
  switch (type)
    {
    case COWSCOPE_EV_ALLOCATION_NEW:
      value[COWSCOPE_COUNTER_BYTES_ALLOCATED] += (double) v[1];
      return 1u << COWSCOPE_COUNTER_BYTES_ALLOCATED;
    case COWSCOPE_EV_ALLOCATION_FREE:
      value[COWSCOPE_COUNTER_BYTES_ALLOCATED] -= (double) v[1];
      return 1u << COWSCOPE_COUNTER_BYTES_ALLOCATED;
    case COWSCOPE_EV_STORAGE_NEW:
      value[COWSCOPE_COUNTER_LIVE_STORAGES] += 1;
      if (v[3] == 0)
        return 1u << COWSCOPE_COUNTER_LIVE_STORAGES;
      g_hash_table_insert (rules->contexts, pid_id_key (pid, v[3]), GSIZE_TO_POINTER (v[2]));
      value[COWSCOPE_COUNTER_BYTES_SHARED] += (double) v[2];
      return 1u << COWSCOPE_COUNTER_LIVE_STORAGES | 1u << COWSCOPE_COUNTER_BYTES_SHARED;
    case COWSCOPE_EV_STORAGE_FREE:
      value[COWSCOPE_COUNTER_LIVE_STORAGES] -= 1;
      return 1u << COWSCOPE_COUNTER_LIVE_STORAGES;
    case COWSCOPE_EV_CONTEXT_UNREF:
      if (v[2] >= 1)
        {
          gpointer nbytes;
          if (g_hash_table_lookup_extended (rules->contexts, pid_id_key (pid, v[0]), NULL,
                                            &nbytes))
            {
              value[COWSCOPE_COUNTER_BYTES_SHARED] -= (double) GPOINTER_TO_SIZE (nbytes);
              return 1u << COWSCOPE_COUNTER_BYTES_SHARED;
            }
        }
      return 0;
    case COWSCOPE_EV_CONTEXT_FREE:
      g_hash_table_remove (rules->contexts, pid_id_key (pid, v[0]));
      return 0;
    default:
      return 0;
    }
}
