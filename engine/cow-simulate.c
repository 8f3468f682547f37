/* cow-simulate.c — shadow storages and violation warnings (see
 * cow-simulate-private.h). */
#include "cow-tensor-private.h"
#include "cow-lazy.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

/* All relaxed: generations are heuristics the user's own ordering of
 * reads and writes already serialises; atomics only keep TSan honest
 * when sibling views are read from several threads. */

static _Atomic uint64_t violation_count;

/* Protects handler and handler_data. */
static pthread_mutex_t handler_lock = PTHREAD_MUTEX_INITIALIZER;
static CowWarningHandler handler;
static void *handler_data;

void
cow_set_warning_handler (CowWarningHandler new_handler, void *user_data)
{
  pthread_mutex_lock (&handler_lock);
  handler = new_handler;
  handler_data = user_data;
  pthread_mutex_unlock (&handler_lock);
}

uint64_t
cow_simulate_violation_count (void)
{
  return atomic_load_explicit (&violation_count, memory_order_relaxed);
}

static CowShadow *
shadow_new (uint64_t generation)
{
  CowShadow *shadow = malloc (sizeof *shadow);
  if (shadow == NULL)
    return NULL;
  atomic_init (&shadow->refcount, 1);
  shadow->id = cow_next_id ();
  atomic_init (&shadow->generation, generation);
  atomic_init (&shadow->reported_generation, 0);
  return shadow;
}

CowShadow *
cow_shadow_ref (CowShadow *shadow)
{
  if (shadow != NULL)
    atomic_fetch_add_explicit (&shadow->refcount, 1, memory_order_relaxed);
  return shadow;
}

void
cow_shadow_unref (CowShadow *shadow)
{
  if (shadow != NULL
      && atomic_fetch_sub_explicit (&shadow->refcount, 1, memory_order_acq_rel) == 1)
    free (shadow);
}

void
cow_sim_state_free (CowSimState *sim)
{
  if (sim == NULL)
    return;
  cow_shadow_unref (sim->default_shadow);
  free (sim);
}

static CowSimState *
attach (CowStorage *storage)
{
  CowSimState *sim = atomic_load_explicit (&storage->sim, memory_order_acquire);
  if (sim != NULL)
    return sim;
  CowSimState *fresh = calloc (1, sizeof *fresh);
  if (fresh == NULL)
    return NULL;
  fresh->default_shadow = shadow_new (0);
  if (fresh->default_shadow == NULL)
    {
      free (fresh);
      return NULL;
    }
  /* A CAS so that concurrent first reshapes agree on one state. */
  if (atomic_compare_exchange_strong_explicit (&storage->sim, &sim, fresh,
                                               memory_order_acq_rel,
                                               memory_order_acquire))
    return fresh;
  cow_sim_state_free (fresh);
  return sim;
}

static CowShadow *
shadow_of (const CowTensor *tensor, CowSimState *sim)
{
  return tensor->shadow != NULL ? tensor->shadow : sim->default_shadow;
}

CowShadow *
cow_sim_fork_shadow (CowTensor *tensor)
{
  CowSimState *sim = attach (tensor->storage);
  if (sim == NULL)
    return NULL;
  /* The copy holds what its source sees: it inherits the generation. */
  uint64_t generation = atomic_load_explicit (&shadow_of (tensor, sim)->generation,
                                              memory_order_relaxed);
  return shadow_new (generation);
}

static void
default_warning (const char *message)
{
  fprintf (stderr, "cowtensor: warning: %s\n", message);
}

static void
report (const CowTensor *tensor, CowSimState *sim, CowShadow *shadow,
        uint64_t physical, CowAccessKind access, CowOp op)
{
  /* Once per shadow set and physical generation, not per element access. */
  if (atomic_exchange_explicit (&shadow->reported_generation, physical,
                                memory_order_relaxed) == physical)
    return;
  atomic_fetch_add_explicit (&violation_count, 1, memory_order_relaxed);
  uint64_t writer = atomic_load_explicit (&sim->last_writer, memory_order_relaxed);
  uint64_t seen = atomic_load_explicit (&shadow->generation, memory_order_relaxed);
  COW_TRACE (COW_EVENT_SIMULATE_VIOLATION, op, access, tensor->storage->id,
             writer, tensor->id, physical, seen);

  if (atomic_exchange_explicit (&sim->warned, 1, memory_order_relaxed))
    return;
  char message[512];
  snprintf (message, sizeof message,
            "%s of tensor %" PRIu64 "%s%s%s by %s sees storage %" PRIu64
            " as written by tensor %" PRIu64 " through another reshape() result;"
            " with lazy reshape (" COW_RESHAPE_MODE_ENV "=lazy) that write would"
            " have copied and this %s would not see it",
            access == COW_ACCESS_WRITE ? "write" : "read", tensor->id,
            tensor->name ? " (" : "", tensor->name ? tensor->name : "",
            tensor->name ? ")" : "",
            op == COW_OP_NONE ? "direct data access" : cow_op_name (op),
            tensor->storage->id,
            writer, access == COW_ACCESS_WRITE ? "write" : "read");
  pthread_mutex_lock (&handler_lock);
  CowWarningHandler h = handler;
  void *data = handler_data;
  pthread_mutex_unlock (&handler_lock);
  if (h != NULL)
    h (message, data);
  else
    default_warning (message);
}

void
cow_sim_on_write (const CowTensor *tensor, CowSimState *sim, CowOp op)
{
  CowShadow *shadow = shadow_of (tensor, sim);
  uint64_t physical = atomic_load_explicit (&sim->generation, memory_order_relaxed);
  if (atomic_load_explicit (&shadow->generation, memory_order_relaxed) != physical)
    report (tensor, sim, shadow, physical, COW_ACCESS_WRITE, op);
  uint64_t next = atomic_fetch_add_explicit (&sim->generation, 1, memory_order_relaxed) + 1;
  atomic_store_explicit (&shadow->generation, next, memory_order_relaxed);
  atomic_store_explicit (&sim->last_writer, tensor->id, memory_order_relaxed);
}

void
cow_sim_on_read (const CowTensor *tensor, CowSimState *sim, CowOp op)
{
  CowShadow *shadow = shadow_of (tensor, sim);
  uint64_t physical = atomic_load_explicit (&sim->generation, memory_order_relaxed);
  if (atomic_load_explicit (&shadow->generation, memory_order_relaxed) != physical)
    report (tensor, sim, shadow, physical, COW_ACCESS_READ, op);
}
