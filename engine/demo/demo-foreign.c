/* demo-foreign.c — the foreign scenario: memory the engine did not
 * allocate cannot be shared copy-on-write, so a lazy clone of it falls
 * back to an eager copy and says why, and the storage-level clone
 * refuses. */
#include "demo-scenarios.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  float *data;
  int released;
} ForeignBlock;

/* The foreign owner's deleter: frees its bytes and counts the call. */
static void
foreign_release (void *context)
{
  ForeignBlock *block = context;
  free (block->data);
  block->data = NULL;
  block->released++;
}

/* Memory the engine did not allocate cannot be wrapped in a
 * copy-on-write context: a lazy clone of it copies eagerly and says why,
 * and the storage-level lazy clone refuses. */
void
scenario_foreign (Run *run)
{
  enum { N = 256 * 1024 };
  const int64_t numel = N;
  CowError err;
  char text[32];
  ForeignBlock block = { 0 };
  CowTensor *foreign = NULL, *clone = NULL, *owned = NULL, *owned_clone = NULL;
  float *check = host_alloc (run, N);
  block.data = malloc (N * sizeof (float));
  if (check == NULL || block.data == NULL)
    {
      if (block.data == NULL)
        check_failed (run, "cannot allocate the foreign block");
      goto out;
    }
  for (int i = 0; i < N; i++)
    block.data[i] = (float) (i % 1000);

  say (run, "foreign: lazy clone of %s the engine did not allocate\n",
       format_bytes (N * sizeof (float), text, sizeof text));
  TRY_TENSOR (foreign, cow_tensor_from_foreign (1, &numel, COW_DTYPE_F32, block.data, &block,
                                                foreign_release, &err),
              "from_foreign");
  cow_tensor_set_name (foreign, "foreign.buffer");

  Stats before;
  stats_snapshot (&before);
  TRY_TENSOR (clone, cow_tensor_lazy_clone (foreign, &err), "lazy_clone foreign.buffer");
  cow_tensor_set_name (clone, "foreign.clone");
  Stats during;
  stats_snapshot (&during);
  stats_subtract (&during, &before);

  bool eager = !cow_tensor_is_cow (clone) && !cow_tensor_is_cow (foreign)
               && cow_tensor_data_address (clone) != cow_tensor_data_address (foreign);
  if (!eager)
    check_failed (run, "a lazy clone of foreign memory must copy eagerly");
  if (stats_counting ())
    {
      const char *reason = during.k[K_EAGER_FOREIGN] ? eager_reason_text (COW_EAGER_FOREIGN_DATA_PTR)
                           : during.k[K_EAGER_NOT_SIMPLE] ? eager_reason_text (COW_EAGER_NOT_SIMPLE)
                           : NULL;
      if (reason != NULL)
        say (run, "  lazy_clone fell back to an eager copy of %s: %s\n",
             format_bytes (during.k[K_EAGER_BYTES], text, sizeof text), reason);
      else
        check_failed (run, "the eager fallback emitted no lazy_clone_eager event with a reason");
      if (during.k[K_EAGER_FOREIGN] != 1)
        check_failed (run, "expected one eager fallback for a foreign data pointer, saw %" PRIu64,
                      during.k[K_EAGER_FOREIGN]);
    }
  else
    say (run, "  lazy_clone fell back to an eager copy (the result has its own bytes)\n");

  TRY_STATUS (cow_tensor_read_elements (clone, check, N * sizeof (float), &err), "read foreign.clone");
  if (block.data != NULL && memcmp (check, block.data, N * sizeof (float)) != 0)
    check_failed (run, "the eager copy differs from the foreign bytes");

  /* The storage-level lazy clone has no fallback: it refuses. */
  cow_error_clear (&err);
  CowStorage *refused = cow_storage_lazy_clone (cow_tensor_storage (foreign), &err);
  if (refused != NULL)
    {
      check_failed (run, "cow_storage_lazy_clone of foreign memory succeeded; it must refuse");
      cow_storage_unref (refused);
    }
  else if (err.code != COW_ERROR_NOT_SUPPORTED)
    check_failed (run, "cow_storage_lazy_clone of foreign memory failed with \"%s\","
                  " expected \"%s\"", cow_status_to_string (err.code),
                  cow_status_to_string (COW_ERROR_NOT_SUPPORTED));
  else
    say (run, "  cow_storage_lazy_clone refuses, as documented: %s\n", err.message);

  /* Writing the clone touches only its own bytes. */
  TRY_STATUS (cow_tensor_fill_ (clone, -1.0, &err), "fill_ foreign.clone");
  if (block.data != NULL && block.data[0] != 0.0f)
    check_failed (run, "writing the eager copy changed the foreign memory");

  /* For contrast: memory the engine allocated is shared lazily. */
  TRY_TENSOR (owned, cow_tensor_from_data (1, &numel, COW_DTYPE_F32, check, N * sizeof (float), &err),
              "from_data owned.buffer");
  cow_tensor_set_name (owned, "owned.buffer");
  TRY_TENSOR (owned_clone, cow_tensor_lazy_clone (owned, &err), "lazy_clone owned.buffer");
  if (!cow_tensor_is_cow (owned_clone)
      || cow_tensor_data_address (owned_clone) != cow_tensor_data_address (owned))
    check_failed (run, "a lazy clone of engine-allocated memory must share its bytes");
  else
    say (run, "  for contrast, a lazy clone of engine-allocated memory shares its bytes\n");

  /* The clone owns its bytes: dropping the foreign tensor runs the
   * owner's deleter right away, once. */
  drop (&foreign);
  if (block.released != 1)
    check_failed (run, "dropping the foreign tensor ran its deleter %d times, expected 1",
                  block.released);

  snprintf (run->headline, sizeof run->headline,
            "lazy clone of foreign memory copied eagerly; storage-level clone refused;"
            " foreign deleter ran %d time%s", block.released, block.released == 1 ? "" : "s");

out:
  drop (&foreign);
  drop (&clone);
  drop (&owned);
  drop (&owned_clone);
  free (check);
  if (block.released == 0)
    free (block.data); /* never handed over, or the engine kept it */
}
