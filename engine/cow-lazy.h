/* cow-lazy.h — lazy copies and the reshape mode.
 *
 * A lazy clone looks like a copy and shares the bytes until one side
 * writes: then that side materializes (copies, or steals the bytes when
 * it is the last one sharing them).  See ../shared/seeds/cow-design.md
 * and cow-thread-safety.md for the design this follows.
 */
#pragma once

#include "cow-error.h"
#include "cow-tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A tensor with @tensor's sizes, strides and offset over a new storage
 * that shares @tensor's bytes lazily.  O(1), no copy; @tensor's storage
 * becomes copy-on-write too.  If the data pointer cannot be wrapped
 * (foreign memory) it copies eagerly instead and emits
 * COW_EVENT_LAZY_CLONE_EAGER with the reason. */
CowTensor *cow_tensor_lazy_clone (CowTensor *tensor, CowError *error);

typedef enum {
  /* reshape() returns a view when it can (aliasing), else a copy. */
  COW_RESHAPE_VIEW = 0,
  /* reshape() returns a lazy copy when it could be a view, else a copy. */
  COW_RESHAPE_LAZY = 1,
  /* reshape() returns aliasing views but tracks shadow storages and warns
   * when the program relies on the aliasing (what lazy mode would change). */
  COW_RESHAPE_SIMULATE = 2,
} CowReshapeMode;

/* Environment variable read once, at the first reshape, if
 * cow_set_reshape_mode() was not called: "view", "lazy" or "simulate". */
#define COW_RESHAPE_MODE_ENV "COW_RESHAPE_MODE"

void cow_set_reshape_mode (CowReshapeMode mode);
CowReshapeMode cow_get_reshape_mode (void);
/* Parses "view", "lazy", "simulate".  COW_ERROR_INVALID_ARGUMENT otherwise. */
CowStatus cow_reshape_mode_from_string (const char *text, CowReshapeMode *mode,
                                        CowError *error);
const char *cow_reshape_mode_to_string (CowReshapeMode mode);

/* Reshapes to @sizes (one -1 inferred) under the process's reshape mode. */
CowTensor *cow_tensor_reshape (CowTensor *tensor, int ndim,
                               const int64_t *sizes, CowError *error);

/* Simulate-mode warnings: the handler gets a one-line explanation of the
 * first violation on each storage (every violation is still a trace
 * event and counted).  The default prints it to stderr; NULL restores
 * the default. */
typedef void (*CowWarningHandler) (const char *message, void *user_data);
void cow_set_warning_handler (CowWarningHandler handler, void *user_data);

/* Violations seen by this process so far (simulate mode). */
uint64_t cow_simulate_violation_count (void);

#ifdef __cplusplus
}
#endif
