/* lazy-copies.c — a target of your own for Cowscope: a lazy clone, a
 * write that copies, a steal, named tensors and a range.
 *
 * Compile it against an installed libcowtensor (README.md, "Writing your
 * own target"):
 *
 *   cc -g -O2 -o lazy-copies lazy-copies.c $(pkg-config --cflags --libs cowtensor)
 *
 * -g keeps the debug information that turns a call stack's addresses
 * into "lazy-copies.c:LINE in main()"; without it the report can only
 * say "in main()".  Then record it and read the report:
 *
 *   cowscope-cli record -o lazy-copies.cowscope -- ./lazy-copies
 *   cowscope-cli report lazy-copies.cowscope
 *
 * The report counts 2 lazy clones, 1 copy of 256 KiB (its call site is
 * the cow_tensor_fill_() line below) and 1 steal.  The program itself
 * needs no Cowscope: run alone, it runs with no probe and every trace
 * point costs one branch.
 */
#include <cowtensor.h>
#include <stdio.h>
#include <stdlib.h>

/* Every engine call that can fail says so through its return value and
 * fills a CowError with a message; this example gives up on any. */
static void
check (int failed, const char *what, const CowError *error)
{
  if (failed)
    {
      fprintf (stderr, "lazy-copies: %s: %s\n", what, error->message);
      exit (1);
    }
}

int
main (void)
{
  CowError error = { 0 };
  const int64_t sizes[2] = { 256, 256 }; /* 256 × 256 float32: 256 KiB */
  const int64_t corner[2] = { 0, 0 };
  double before, after;

  /* A range names a phase of the program, like an NVTX range: events
   * inside it are recorded with it (the session's `ranges` table, spans
   * in the application's timeline). */
  cow_range_push ("update");

  /* A tensor of zeros, named: the name travels with it into the session
   * (`tensors.name`) and the application's graph and tables. */
  CowTensor *weights = cow_tensor_zeros (2, sizes, COW_DTYPE_F32, &error);
  check (weights == NULL, "zeros", &error);
  cow_tensor_set_name (weights, "weights");

  /* A lazy clone looks like a copy but copies nothing: the two tensors
   * get distinct storages that share the bytes until one of them writes.
   * Recorded as a `lazy_clone` event, with this line as its call site. */
  CowTensor *snapshot = cow_tensor_lazy_clone (weights, &error);
  check (snapshot == NULL, "lazy clone", &error);
  cow_tensor_set_name (snapshot, "snapshot");

  /* A write while the bytes are shared: `weights` first gets bytes of its
   * own by copying them (a materialization by copy, 256 KiB), then the
   * write lands.  The report lists this line under "Top call sites". */
  check (cow_tensor_fill_ (weights, 1.0, &error) != COW_OK, "fill", &error);

  /* Another lazy clone, and then its source goes away: `backup` is left
   * as the only storage sharing those bytes... */
  CowTensor *backup = cow_tensor_lazy_clone (weights, &error);
  check (backup == NULL, "lazy clone", &error);
  cow_tensor_set_name (backup, "backup");
  cow_tensor_unref (weights);

  /* ...so its first write takes the bytes over without copying: a
   * materialization by steal. */
  check (cow_tensor_scale_ (backup, 2.0, &error) != COW_OK, "scale", &error);

  cow_range_pop ();

  /* A lazy copy is a copy: `snapshot` still reads the zeros it was cloned
   * from.  Reads never materialize. */
  check (cow_tensor_get_f64 (snapshot, corner, &before, &error) != COW_OK,
         "read", &error);
  check (cow_tensor_get_f64 (backup, corner, &after, &error) != COW_OK, "read",
         &error);
  printf ("snapshot[0][0] = %g, backup[0][0] = %g\n", before, after);

  cow_tensor_unref (backup);
  cow_tensor_unref (snapshot);
  return before == 0.0 && after == 2.0 ? 0 : 1;
}
