/* cow-lazy.h — lazy copies and the reshape mode.
 *
 * A lazy copy looks like a copy to the program and costs what a view
 * costs: it shares the bytes until one side writes.
 *
 * The invariant.  Tensors alias (a write through one is seen through
 * the other) if and only if they share a storage.  Views share their
 * base's storage; a lazy copy gets a new storage of its own.  Its bytes
 * are shared through a copy-on-write *context*: a reference count of the
 * storages that share one allocation, plus a reader–writer lock.  The
 * first lazy clone of a storage moves its bytes into a new context; later
 * clones only take another reference on it.
 *
 * Materialization.  The first write to a storage that shares a context
 * (cow_tensor_mutable_data(), cow_storage_mutable_data(), any in-place
 * op such as cow_tensor_add_(), a copy_ into it) makes its bytes its own
 * first:
 *   - while other storages still share the context, it *copies* the
 *     bytes into a fresh allocation, under the context's shared lock;
 *   - when it is the last storage sharing them, it *steals* them without
 *     copying, under the exclusive lock, which waits for every copy in
 *     flight.  So when every sharer writes, exactly one of them steals.
 * Allocation and copy happen before the storage lets go of the context,
 * so a failure (out of memory) leaves a valid lazy copy and an error.
 * Reads (cow_tensor_const_data(), cow_tensor_read_elements(),
 * cow_tensor_get_f64()) never materialize.
 *
 * Threads.  The program keeps writes to one storage apart from every
 * other access to that storage, as with any tensor library.  Lazy copies
 * are exempt: tensors on different storages that share a context may be
 * read and written from different threads with no coordination, and the
 * engine keeps their clones, copies and steals safe (a lazy clone is a
 * read of its source, a materialization a write of its own storage).
 *
 * Tracing.  Each lazy clone emits COW_EVENT_LAZY_CLONE (or
 * COW_EVENT_LAZY_CLONE_EAGER when it had to copy), each materialization
 * a COW_EVENT_MATERIALIZE_BEGIN / COW_EVENT_MATERIALIZE_END pair whose
 * aux says copy or steal, with the op that wrote (cow-trace.h).
 *
 * Reshape.  cow_tensor_reshape() decides between a view and a copy by a
 * process-wide mode (CowReshapeMode below): today's aliasing views
 * ("view"), lazy copies ("lazy"), or aliasing views that warn when the
 * program relies on the aliasing ("simulate"): a write through one
 * reshape result followed by a read or write through another result of
 * the same bytes, which lazy copies would have kept apart.  Simulate mode
 * gives each reshape result a *shadow* storage (what its storage would be
 * under lazy copies) and compares write generations of the shadow and of
 * the real storage on each tracked access; a mismatch is a violation.
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
