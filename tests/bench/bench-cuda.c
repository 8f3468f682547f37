/* bench-cuda.c — device tensors against the CUDA runtime, side by side in
 * one run:
 *
 *   1. materialization by copy of a device tensor (64 MiB, 1 GiB): write
 *      one of two lazy clones sharing a context, until the stream is idle
 *      — versus a plain cudaMallocAsync + cudaMemcpyAsync device to device
 *      of the same size on the same stream — target ≥ 90 % of it;
 *   2. a lazy clone of a device tensor, and dropping it, in ns (a dropped
 *      sharer records a CUDA event, so the drop costs a device call);
 *   3. materialization by steal of a device tensor (the last sharer takes
 *      the bytes: no device copy), in ns.
 *
 * Medians after a warm-up; engine and baseline repetitions interleave so
 * drift hits both.  Without a CUDA device it prints "skipped: no CUDA
 * device: <reason>" and exits 77 (meson counts that as skipped).  Misses
 * are reported, not failed; the exit status is 1 only when the engine
 * errs or does not do what is measured.  COWTENSOR_BENCH_QUICK=1 skips
 * the 1 GiB size.
 */
#include "cowtensor.h"

#include <cuda_runtime_api.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define MiB ((size_t) 1 << 20)
#define GiB ((size_t) 1 << 30)

static bool internal_error;

static void
fail (const char *what, const CowError *error)
{
  internal_error = true;
  fprintf (stderr, "bench-cuda: %s: %s: %s\n", what, cow_status_to_string (error->code),
           error->message);
}

static void
fail_cuda (const char *what, cudaError_t status)
{
  internal_error = true;
  fprintf (stderr, "bench-cuda: %s: %s\n", what, cudaGetErrorString (status));
}

static int64_t
now_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int
compare_doubles (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

static double
median (double *values, int n)
{
  qsort (values, (size_t) n, sizeof *values, compare_doubles);
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2.0;
}

/* ------------------------------------------------------------------ */
/* 1. materialization by copy versus cudaMemcpyAsync                    */

/* Seconds for the engine's copy: the write to a lazy clone whose source
 * lives, until the stream has run it.  The clone is freed afterwards. */
static bool
engine_copy (CowTensor *source, CowCudaStream *stream, double *seconds)
{
  CowError error = { 0 };
  CowTensor *clone = cow_tensor_lazy_clone (source, &error);
  if (clone == NULL)
    {
      fail ("cow_tensor_lazy_clone", &error);
      return false;
    }
  int64_t start = now_ns ();
  void *copy = cow_tensor_mutable_data (clone, &error);
  CowStatus status = copy != NULL ? cow_cuda_stream_synchronize (stream, &error) : error.code;
  *seconds = (double) (now_ns () - start) / 1e9;
  bool copied = status == COW_OK && cow_tensor_data_address (clone) != cow_tensor_data_address (source);
  if (status != COW_OK)
    fail ("materialize by copy", &error);
  else if (!copied)
    {
      internal_error = true;
      fprintf (stderr, "bench-cuda: writing a lazy clone whose source lives did not copy\n");
    }
  cow_tensor_unref (clone);
  cow_cuda_stream_synchronize (stream, NULL);
  return copied;
}

/* Seconds for the baseline: allocate as the engine does and copy. */
static bool
plain_copy (const void *src, size_t nbytes, cudaStream_t stream, double *seconds)
{
  void *dst = NULL;
  int64_t start = now_ns ();
  cudaError_t status = cudaMallocAsync (&dst, nbytes, stream);
  if (status == cudaSuccess)
    status = cudaMemcpyAsync (dst, src, nbytes, cudaMemcpyDeviceToDevice, stream);
  if (status == cudaSuccess)
    status = cudaStreamSynchronize (stream);
  *seconds = (double) (now_ns () - start) / 1e9;
  if (dst != NULL)
    cudaFreeAsync (dst, stream);
  cudaStreamSynchronize (stream);
  if (status != cudaSuccess)
    fail_cuda ("cudaMemcpyAsync baseline", status);
  return status == cudaSuccess;
}

static void
bench_copy (bool quick)
{
  const size_t sizes[] = { 64 * MiB, GiB };
  const int reps[] = { 20, 8 };
  CowError error = { 0 };
  CowCudaStream *stream = cow_cuda_stream_new (0, &error);
  if (stream == NULL)
    {
      fail ("cow_cuda_stream_new", &error);
      return;
    }
  /* The baseline's own non-blocking stream, like the engine's; both
   * allocate from the device's default pool. */
  cudaStream_t handle;
  cudaStreamCreateWithFlags (&handle, cudaStreamNonBlocking);
  cow_cuda_set_current_stream (stream);

  printf ("\n1. Materialization by copy on cuda:0, GB/s (10^9 B/s; median of %d runs at 64 MiB,\n"
          "   %d at 1 GiB; engine and baseline interleave)\n", reps[0], reps[1]);
  printf ("   engine: write one of two device tensors sharing a context (allocate + copy),\n"
          "           until the stream is idle\n");
  printf ("   plain:  cudaMallocAsync + cudaMemcpyAsync device to device + synchronize\n\n");
  printf ("   %-8s %10s %10s %8s  %-14s %s\n", "size", "engine", "plain", "ratio", "target", "result");
  for (int i = 0; i < 2; i++)
    {
      const char *label = sizes[i] == GiB ? "1 GiB" : "64 MiB";
      if (quick && sizes[i] == GiB)
        {
          printf ("   %-8s skipped (COWTENSOR_BENCH_QUICK=1)\n", label);
          continue;
        }
      const int64_t numel = (int64_t) sizes[i];
      CowTensor *source = cow_tensor_empty_on (1, &numel, COW_DTYPE_U8, cow_device_cuda (0), &error);
      if (source == NULL || cow_tensor_fill_ (source, 7, &error) != COW_OK)
        {
          fail ("a device source", &error);
          cow_tensor_unref (source);
          break;
        }
      cow_cuda_stream_synchronize (stream, NULL);
      double engine[32], plain[32], seconds;
      bool ok = engine_copy (source, stream, &seconds)
                && plain_copy (cow_tensor_const_data (source), sizes[i], handle, &seconds);
      for (int r = 0; ok && r < reps[i]; r++)
        {
          if (r % 2 == 0)
            ok = engine_copy (source, stream, &engine[r])
                 && plain_copy (cow_tensor_const_data (source), sizes[i], handle, &plain[r]);
          else
            ok = plain_copy (cow_tensor_const_data (source), sizes[i], handle, &plain[r])
                 && engine_copy (source, stream, &engine[r]);
        }
      cow_tensor_unref (source);
      if (!ok)
        {
          printf ("   %-8s not measured (error above)\n", label);
          continue;
        }
      double e = (double) sizes[i] / median (engine, reps[i]) / 1e9;
      double p = (double) sizes[i] / median (plain, reps[i]) / 1e9;
      printf ("   %-8s %10.1f %10.1f %7.0f%%  %-14s %s\n", label, e, p, 100.0 * e / p,
              ">= 90% of plain", e / p >= 0.90 ? "PASS" : "MISS");
    }
  cow_cuda_set_current_stream (NULL);
  cudaStreamDestroy (handle);
  cow_cuda_stream_unref (stream);
}

/* ------------------------------------------------------------------ */
/* 2, 3. lazy clone and steal of a device tensor                        */

enum { BATCH = 2000, REPS = 9 };

static void
bench_clone_and_steal (void)
{
  CowError error = { 0 };
  const int64_t numel = 1024;
  double clone_ns[REPS], drop_ns[REPS], steal_ns[REPS];
  CowTensor **sources = calloc (BATCH, sizeof *sources);
  CowTensor **clones = calloc (BATCH, sizeof *clones);
  if (sources == NULL || clones == NULL)
    {
      internal_error = true;
      goto out;
    }
  CowTensor *shared = cow_tensor_empty_on (1, &numel, COW_DTYPE_F32, cow_device_cuda (0), &error);
  if (shared == NULL)
    {
      fail ("cow_tensor_empty_on", &error);
      goto out;
    }
  for (int r = -1; r < REPS; r++) /* r = -1: warm-up */
    {
      /* Lazy clones of an already shared tensor (the steady state), then
       * dropping them. */
      int64_t start = now_ns ();
      for (int i = 0; i < BATCH; i++)
        clones[i] = cow_tensor_lazy_clone (shared, NULL);
      int64_t middle = now_ns ();
      for (int i = 0; i < BATCH; i++)
        {
          if (clones[i] == NULL)
            {
              internal_error = true;
              fprintf (stderr, "bench-cuda: a lazy clone of a device tensor failed\n");
            }
          cow_tensor_unref (clones[i]);
          clones[i] = NULL;
        }
      if (r >= 0)
        {
          clone_ns[r] = (double) (middle - start) / BATCH;
          drop_ns[r] = (double) (now_ns () - middle) / BATCH;
        }

      /* Steal: sources dropped, each clone's first write takes the bytes. */
      for (int i = 0; i < BATCH; i++)
        {
          sources[i] = cow_tensor_empty_on (1, &numel, COW_DTYPE_F32, cow_device_cuda (0), &error);
          clones[i] = sources[i] != NULL ? cow_tensor_lazy_clone (sources[i], &error) : NULL;
          if (clones[i] == NULL)
            {
              fail ("a device lazy clone", &error);
              goto out_batch;
            }
          cow_tensor_unref (sources[i]);
          sources[i] = NULL;
        }
      start = now_ns ();
      for (int i = 0; i < BATCH; i++)
        if (cow_tensor_mutable_data (clones[i], &error) == NULL)
          {
            fail ("materialize by steal", &error);
            goto out_batch;
          }
      if (r >= 0)
        steal_ns[r] = (double) (now_ns () - start) / BATCH;
      for (int i = 0; i < BATCH; i++)
        {
          cow_tensor_unref (clones[i]);
          clones[i] = NULL;
        }
    }
  printf ("\n2. Lazy clone of a device tensor:         %8.1f ns (median of %d × %d)\n",
          median (clone_ns, REPS), REPS, BATCH);
  printf ("   Dropping that clone (release event):   %8.1f ns\n", median (drop_ns, REPS));
  printf ("3. Materialization by steal, device:      %8.1f ns (median of %d × %d; waits on\n"
          "   the other sharers' release events, copies nothing)\n", median (steal_ns, REPS),
          REPS, BATCH);

out_batch:
  for (int i = 0; i < BATCH; i++)
    {
      cow_tensor_unref (sources[i]);
      cow_tensor_unref (clones[i]);
    }
  cow_tensor_unref (shared);
out:
  free (sources);
  free (clones);
}

int
main (void)
{
  CowError error = { 0 };
  if (cow_cuda_available (&error) != COW_OK)
    {
      printf ("skipped: %s\n", error.message);
      return 77;
    }
  struct cudaDeviceProp prop;
  if (cudaGetDeviceProperties (&prop, 0) == cudaSuccess)
    printf ("bench-cuda: cuda:0 is %s (%d SMs, %.1f GiB)\n", prop.name, prop.multiProcessorCount,
            (double) prop.totalGlobalMem / (double) GiB);
  const char *quick = getenv ("COWTENSOR_BENCH_QUICK");
  bench_copy (quick != NULL && quick[0] == '1');
  bench_clone_and_steal ();
  return internal_error ? 1 : 0;
}
