/* cow-simulate-private.h — simulated lazy copies (cow-lazy.h, "Reshape").
 *
 * In simulate mode reshape() keeps returning aliasing views, but each
 * such result gets its own shadow storage: what its storage would be if
 * the reshape had been a lazy copy.  A physical storage and each shadow
 * carry a generation; a write bumps the physical generation and brings
 * the writer's shadow up to it.  An access through a shadow whose
 * generation differs from the physical one sees data written through
 * another shadow set: under real lazy copies that write would have
 * copied, so the program relies on aliasing and we warn.
 *
 * Asymmetric rule: a tensor with a NULL shadow uses its storage's default
 * shadow, so plain tensors and their views pay nothing, and generations
 * are only tracked once a storage has had a simulated lazy copy.
 */
#pragma once

#include <stdatomic.h>
#include <stdint.h>

#include "cow-private.h"
#include "cow-tensor.h"

typedef struct _CowSimState CowSimState;

typedef struct _CowShadow {
  _Atomic int64_t refcount;
  uint64_t id;
  /* Physical generation this shadow set last wrote or was forked at. */
  _Atomic uint64_t generation;
  /* Physical generation at which a violation through it was reported. */
  _Atomic uint64_t reported_generation;
} CowShadow;

struct _CowSimState {
  _Atomic uint64_t generation;  /* bumped by every tracked write */
  _Atomic uint64_t last_writer; /* tensor id of the latest write */
  _Atomic int warned;           /* the warning handler ran for this storage */
  CowShadow *default_shadow;    /* for tensors whose shadow is NULL */
};

COW_INTERNAL CowShadow *cow_shadow_ref (CowShadow *shadow);
COW_INTERNAL void cow_shadow_unref (CowShadow *shadow);

/* A new shadow for a simulated lazy copy of @tensor (refcount 1),
 * starting tracking on its storage; NULL when memory runs out. */
COW_INTERNAL CowShadow *cow_sim_fork_shadow (CowTensor *tensor);

/* Record an access through @tensor to a tracked storage. */
COW_INTERNAL void cow_sim_on_write (const CowTensor *tensor, CowSimState *sim, CowOp op);
COW_INTERNAL void cow_sim_on_read (const CowTensor *tensor, CowSimState *sim, CowOp op);

COW_INTERNAL void cow_sim_state_free (CowSimState *sim);
