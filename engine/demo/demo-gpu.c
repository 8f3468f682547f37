/* demo-gpu.c — the gpu scenario: lazy clones on a CUDA device,
 * materialized by copy and by steal with device kernels, checked bit for
 * bit against the same loop on the CPU; skipped without a device. */
#include "demo-scenarios.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#define GPU_ELEMENTS ((int64_t) 1 << 20) /* 4 MiB of f32 per tensor */
#define GPU_DEFAULT_STEPS 8
#define GPU_LEARNING_RATE 0.125
#define GPU_CHECKPOINT_EVERY 3

/* The loop the gpu scenario runs, on @device: SGD-like updates of a
 * weight vector with lazy clones that are materialized by copy (a
 * snapshot and checkpoints that keep the old weights while the weights
 * change) and by steal (a scratch lazy clone of the gradient whose
 * source is dropped first), using fill_, add_ and mul.  Returns the final
 * weights on the CPU, or NULL after reporting an error. */
static CowTensor *
gpu_loop (Run *run, CowDevice device, int steps)
{
  CowError err = { 0 };
  const int64_t n = GPU_ELEMENTS;
  CowTensor *host = NULL, *weights = NULL, *grad = NULL, *square = NULL, *scratch = NULL,
            *snapshot = NULL, *checkpoint = NULL, *result = NULL;
  float *init = host_alloc (run, (size_t) n);
  if (init == NULL)
    return NULL;
  uint64_t state = 42;
  for (int64_t i = 0; i < n; i++)
    init[i] = next_uniform (&state);
  TRY_TENSOR (host, cow_tensor_from_data (1, &n, COW_DTYPE_F32, init,
                                          (size_t) n * sizeof *init, &err), "from_data");
  TRY_TENSOR (weights, cow_tensor_to (host, device, &err), "to(device)");
  cow_tensor_set_name (weights, "gpu.weights");
  TRY_TENSOR (grad, cow_tensor_empty_on (1, &n, COW_DTYPE_F32, device, &err), "empty_on");
  cow_tensor_set_name (grad, "gpu.grad");

  for (int step = 0; step < steps; step++)
    {
      range_push (run, "gpu step");
      /* Kept until the update has happened: the update copies. */
      TRY_TENSOR (snapshot, cow_tensor_lazy_clone (weights, &err), "lazy_clone (snapshot)");
      if (step % GPU_CHECKPOINT_EVERY == 0)
        {
          drop (&checkpoint);
          TRY_TENSOR (checkpoint, cow_tensor_lazy_clone (weights, &err), "lazy_clone (checkpoint)");
          cow_tensor_set_name (checkpoint, "gpu.checkpoint");
        }
      /* A "gradient" that depends on the weights: w × w + step / 16. */
      TRY_STATUS (cow_tensor_fill_ (grad, (double) step / 16.0, &err), "fill_ (grad)");
      TRY_TENSOR (square, cow_tensor_mul (snapshot, snapshot, &err), "mul");
      TRY_STATUS (cow_tensor_add_ (grad, square, 1.0, &err), "add_ (grad)");
      drop (&square);
      /* Scratch: a lazy clone of the gradient, written after the gradient
       * itself is dropped, steals its bytes. */
      TRY_TENSOR (scratch, cow_tensor_lazy_clone (grad, &err), "lazy_clone (scratch)");
      drop (&grad);
      TRY_STATUS (cow_tensor_scale_ (scratch, GPU_LEARNING_RATE, &err), "scale_ (steal)");
      grad = scratch;
      scratch = NULL;
      /* The update: the weights still share with the snapshot, so this copies. */
      TRY_STATUS (cow_tensor_add_ (weights, grad, -1.0, &err), "add_ (update)");
      drop (&snapshot);
      range_pop (run);
    }
  TRY_TENSOR (result, cow_tensor_to (weights, cow_device_cpu (), &err), "to(cpu)");

out:
  range_close_all (run);
  free (init);
  drop (&host);
  drop (&weights);
  drop (&grad);
  drop (&square);
  drop (&scratch);
  drop (&snapshot);
  drop (&checkpoint);
  return result;
}

/* The same loop on the GPU and on the CPU; the results must agree bit
 * for bit (the kernels are built without fused multiply-add).  Without a
 * CUDA device it says why and passes: the scenario is optional. */
void
scenario_gpu (Run *run)
{
  CowError err = { 0 };
  if (cow_cuda_available (&err) != COW_OK)
    {
      /* Shown even with --quiet: the reason is the scenario's result. */
      printf ("gpu: skipped: %s\n", err.message);
      snprintf (run->headline, sizeof run->headline, "skipped: %.200s", err.message);
      return;
    }
  int steps = run->options->steps > 0 ? run->options->steps : GPU_DEFAULT_STEPS;
  say (run, "gpu: %d steps on cuda:0 and on the CPU, %" PRId64 " f32 weights\n", steps,
       GPU_ELEMENTS);
  CowTensor *on_gpu = gpu_loop (run, cow_device_cuda (0), steps);
  CowTensor *on_cpu = on_gpu != NULL ? gpu_loop (run, cow_device_cpu (), steps) : NULL;
  if (on_gpu != NULL && on_cpu != NULL)
    {
      const float *g = cow_tensor_const_data (on_gpu), *c = cow_tensor_const_data (on_cpu);
      int64_t differ = 0;
      for (int64_t i = 0; i < GPU_ELEMENTS; i++)
        differ += g[i] != c[i];
      if (differ != 0)
        check_failed (run, "%" PRId64 " of %" PRId64 " weights differ between cuda:0 and the CPU",
                      differ, GPU_ELEMENTS);
      snprintf (run->headline, sizeof run->headline,
                "%d steps on cuda:0 match the CPU bit for bit (%" PRId64 " weights)", steps,
                GPU_ELEMENTS);
    }
  drop (&on_gpu);
  drop (&on_cpu);
}
