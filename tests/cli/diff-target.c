/* diff-target.c — a target built twice for the `cowscope-cli diff` tests:
 * what a change to a program does to its copies.
 *
 * diff-target-before makes two copies: 64 KiB in update_weights() and
 * 16 KiB in take_snapshot().  diff-target-after (built with
 * DIFF_TARGET_AFTER) no longer writes the snapshot, so its copy is gone,
 * and code added in update_weights() moved that function's copy down two
 * lines: the same call site, which a diff must match.  Everything else
 * (two lazy clones, the range "work") is the same.  The test reads the
 * lines of the markers "diff-target:" below, so the source may change. */
#include <cowtensor.h>
#include <stdio.h>
#include <stdlib.h>

static void
check (int failed, const char *what, const CowError *error)
{
  if (failed)
    {
      fprintf (stderr, "diff-target: %s: %s\n", what, error->message);
      exit (1);
    }
}

static CowTensor *
zeros (int64_t elements, const char *name)
{
  CowError error = { 0 };
  const int64_t sizes[1] = { elements };
  CowTensor *tensor = cow_tensor_zeros (1, sizes, COW_DTYPE_F32, &error);

  check (tensor == NULL, "zeros", &error);
  cow_tensor_set_name (tensor, name);
  return tensor;
}

#ifdef DIFF_TARGET_AFTER
static volatile int refreshes;
#endif

/* A write while a lazy clone shares the bytes: copies 64 KiB. */
static void __attribute__ ((noinline))
update_weights (CowTensor *weights)
{
  CowError error = { 0 };

#ifdef DIFF_TARGET_AFTER
  refreshes++;
  refreshes++;
  check (cow_tensor_fill_ (weights, 1.0, &error) != COW_OK, "fill", &error); /* diff-target: moved copy, after */
#else
  check (cow_tensor_fill_ (weights, 1.0, &error) != COW_OK, "fill", &error); /* diff-target: moved copy, before */
#endif
}

/* A lazy clone of @source, written before the version after (16 KiB
 * copied), only dropped since. */
static void __attribute__ ((noinline))
take_snapshot (CowTensor *source)
{
  CowError error = { 0 };
  CowTensor *snapshot = cow_tensor_lazy_clone (source, &error);

  check (snapshot == NULL, "lazy clone", &error);
  cow_tensor_set_name (snapshot, "snapshot");
#ifndef DIFF_TARGET_AFTER
  check (cow_tensor_scale_ (snapshot, 2.0, &error) != COW_OK, "scale", &error); /* diff-target: removed copy */
#endif
  cow_tensor_unref (snapshot);
}

int
main (void)
{
  CowError error = { 0 };
  CowTensor *weights = zeros (16384, "weights"); /* 64 KiB */
  CowTensor *bias = zeros (4096, "bias");        /* 16 KiB */
  CowTensor *backup;

  cow_range_push ("work");
  backup = cow_tensor_lazy_clone (weights, &error);
  check (backup == NULL, "lazy clone", &error);
  cow_tensor_set_name (backup, "backup");
  update_weights (weights);
  take_snapshot (bias);
  cow_range_pop ();

  cow_tensor_unref (backup);
  cow_tensor_unref (bias);
  cow_tensor_unref (weights);
  return 0;
}
