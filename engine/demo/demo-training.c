/* demo-training.c — the training scenario: lazy reshapes that are copied
 * when written while their source is still needed, stolen when the source
 * was dropped first, and never copied when only read; an EMA and
 * checkpoints taken as lazy clones of weights that SGD keeps updating. */
#include "demo-scenarios.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { BATCH = 32, IN = 64, HIDDEN = 128, OUT = 16, GROUPS = 8 };
#define LEARNING_RATE 0.5
#define EMA_DECAY 0.9
#define CHECKPOINT_EVERY 3

static CowTensor *
random_tensor (int64_t rows, int64_t cols, float scale, uint64_t *state,
               CowError *error)
{
  int64_t sizes[2] = { rows, cols };
  size_t count = (size_t) (rows * cols);
  float *data = malloc (count * sizeof *data);
  if (data == NULL)
    {
      error->code = COW_ERROR_NO_MEMORY;
      snprintf (error->message, sizeof error->message,
                "cannot allocate %zu bytes of host memory", count * sizeof *data);
      return NULL;
    }
  for (size_t i = 0; i < count; i++)
    data[i] = next_uniform (state) * scale;
  CowTensor *tensor = cow_tensor_from_data (2, sizes, COW_DTYPE_F32, data,
                                            count * sizeof *data, error);
  free (data);
  return tensor;
}

/* A two-layer linear network learning a random linear teacher with SGD.
 * Along the way it does what real training code does to storages:
 *   - lazy reshapes of activations that are then written (→ copy: the
 *     original activations are still needed by the backward pass);
 *   - lazy reshapes of gradients whose source is dropped first (→ steal);
 *   - lazy reshapes of weights that are only read (→ never copied);
 *   - an EMA of fc1 started as a lazy clone (fc1's first update copies,
 *     the EMA's first write steals);
 *   - a checkpoint of fc2 every few steps, as a lazy clone that keeps the
 *     old weights while SGD updates fc2 (→ copy) and is later dropped. */
void
scenario_training (Run *run)
{
  const int steps = run->options->steps > 0 ? run->options->steps : DEFAULT_TRAINING_STEPS;
  CowError err;
  uint64_t rng = 0x5eed;
  const CowReshapeMode previous_mode = cow_get_reshape_mode ();
  double first_loss = NAN, last_loss = NAN;
  int checkpoints = 0;

  CowTensor *x = NULL, *teacher = NULL, *y = NULL, *w1 = NULL, *w2 = NULL;
  CowTensor *ema = NULL, *checkpoint = NULL;
  CowTensor *h = NULL, *logits = NULL, *diff = NULL, *sq = NULL, *loss = NULL;
  CowTensor *grouped = NULL, *grouped_sum = NULL, *dflat = NULL, *dout = NULL;
  CowTensor *h_t = NULL, *g2 = NULL, *w2_t = NULL, *dh = NULL, *x_t = NULL, *g1 = NULL;
  CowTensor *w1_flat = NULL, *w1_sq = NULL, *w1_norm = NULL, *ema_sum = NULL;
  float *h_before = host_alloc (run, BATCH * HIDDEN);
  float *h_after = host_alloc (run, BATCH * HIDDEN);
  float *checkpoint_host = host_alloc (run, HIDDEN * OUT);
  float *checkpoint_now = host_alloc (run, HIDDEN * OUT);
  if (h_before == NULL || h_after == NULL || checkpoint_host == NULL
      || checkpoint_now == NULL)
    goto out;

  cow_set_reshape_mode (COW_RESHAPE_LAZY);
  say (run, "training: %d step%s of SGD on a %dx%dx%d linear network, batch %d,"
       " reshape mode \"lazy\"\n", steps, plural ((uint64_t) steps), IN, HIDDEN, OUT, BATCH);

  range_push (run, "setup");
  TRY_TENSOR (x, random_tensor (BATCH, IN, 1.0f, &rng, &err), "creating the input");
  cow_tensor_set_name (x, "input");
  TRY_TENSOR (teacher, random_tensor (IN, OUT, 0.3f, &rng, &err), "creating the teacher");
  TRY_TENSOR (y, cow_tensor_matmul (x, teacher, &err), "matmul target = input·teacher");
  cow_tensor_set_name (y, "target");
  drop (&teacher);
  TRY_TENSOR (w1, random_tensor (IN, HIDDEN, 0.125f, &rng, &err), "creating weights.fc1");
  cow_tensor_set_name (w1, "weights.fc1");
  TRY_TENSOR (w2, random_tensor (HIDDEN, OUT, 0.09f, &rng, &err), "creating weights.fc2");
  cow_tensor_set_name (w2, "weights.fc2");
  /* The EMA starts as a lazy copy of fc1: no bytes move yet. */
  TRY_TENSOR (ema, cow_tensor_lazy_clone (w1, &err), "lazy_clone weights.fc1 → ema.fc1");
  cow_tensor_set_name (ema, "ema.fc1");
  range_pop (run);

  for (int step = 0; step < steps; step++)
    {
      char label[32];
      snprintf (label, sizeof label, "step %d", step);
      range_push (run, label);

      /* ---- forward ---- */
      range_push (run, "forward");
      TRY_TENSOR (h, cow_tensor_matmul (x, w1, &err), "matmul activations = input·weights.fc1");
      cow_tensor_set_name (h, "activations");
      TRY_TENSOR (logits, cow_tensor_matmul (h, w2, &err), "matmul output = activations·weights.fc2");
      cow_tensor_set_name (logits, "output");
      TRY_TENSOR (diff, cow_tensor_add (logits, y, -1.0, &err), "add residual = output − target");
      cow_tensor_set_name (diff, "residual");
      drop (&logits);
      TRY_TENSOR (sq, cow_tensor_mul (diff, diff, &err), "mul residual²");
      TRY_TENSOR (loss, cow_tensor_sum (sq, &err), "sum loss");
      cow_tensor_set_name (loss, "loss");
      drop (&sq);
      double loss_value;
      TRY_STATUS (cow_tensor_item (loss, &loss_value, &err), "item loss");
      drop (&loss);
      loss_value /= (double) (BATCH * OUT);
      if (!isfinite (loss_value))
        {
          check_failed (run, "step %d: the loss is %g, not finite", step, loss_value);
          goto out;
        }
      if (step == 0)
        first_loss = loss_value;
      last_loss = loss_value;

      /* Activation statistics on a grouped lazy reshape, scaled in place:
       * the write copies, since the backward pass still holds the
       * activations, and must leave them untouched. */
      TRY_STATUS (cow_tensor_read_elements (h, h_before, BATCH * HIDDEN * sizeof (float), &err),
                  "read activations");
      TRY_TENSOR (grouped,
                  cow_tensor_reshape (h, 3, (const int64_t[]) { BATCH, GROUPS, HIDDEN / GROUPS }, &err),
                  "reshape activations → activations.grouped");
      cow_tensor_set_name (grouped, "activations.grouped");
      TRY_STATUS (cow_tensor_scale_ (grouped, 1.0 / (HIDDEN / GROUPS), &err),
                  "scale_ activations.grouped");
      TRY_TENSOR (grouped_sum, cow_tensor_sum (grouped, &err), "sum activations.grouped");
      double activation_mean;
      TRY_STATUS (cow_tensor_item (grouped_sum, &activation_mean, &err), "item activation mean");
      activation_mean /= (double) (BATCH * GROUPS);
      drop (&grouped_sum);
      drop (&grouped);
      TRY_STATUS (cow_tensor_read_elements (h, h_after, BATCH * HIDDEN * sizeof (float), &err),
                  "read activations");
      if (memcmp (h_before, h_after, BATCH * HIDDEN * sizeof (float)) != 0)
        {
          check_failed (run, "step %d: writing activations.grouped (a lazy reshape)"
                        " changed the activations it was reshaped from", step);
          goto out;
        }
      range_pop (run);

      /* ---- backward ---- */
      range_push (run, "backward");
      /* d loss / d output = 2·residual / n, computed on a flat lazy
       * reshape after dropping the residual: the write steals. */
      TRY_TENSOR (dflat, cow_tensor_reshape (diff, 1, (const int64_t[]) { -1 }, &err),
                  "reshape residual → grad.output.flat");
      cow_tensor_set_name (dflat, "grad.output.flat");
      drop (&diff);
      TRY_STATUS (cow_tensor_scale_ (dflat, 2.0 / (BATCH * OUT), &err),
                  "scale_ grad.output.flat");
      TRY_TENSOR (dout, cow_tensor_reshape (dflat, 2, (const int64_t[]) { BATCH, OUT }, &err),
                  "reshape grad.output.flat → grad.output");
      cow_tensor_set_name (dout, "grad.output");
      drop (&dflat);
      TRY_TENSOR (h_t, cow_tensor_transpose (h, 0, 1, &err), "transpose activations");
      TRY_TENSOR (g2, cow_tensor_matmul (h_t, dout, &err), "matmul grad.fc2 = activationsᵀ·grad.output");
      cow_tensor_set_name (g2, "grad.fc2");
      drop (&h_t);
      TRY_TENSOR (w2_t, cow_tensor_transpose (w2, 0, 1, &err), "transpose weights.fc2");
      TRY_TENSOR (dh, cow_tensor_matmul (dout, w2_t, &err), "matmul grad.activations = grad.output·weights.fc2ᵀ");
      cow_tensor_set_name (dh, "grad.activations");
      drop (&w2_t);
      drop (&dout);
      drop (&h);
      TRY_TENSOR (x_t, cow_tensor_transpose (x, 0, 1, &err), "transpose input");
      TRY_TENSOR (g1, cow_tensor_matmul (x_t, dh, &err), "matmul grad.fc1 = inputᵀ·grad.activations");
      cow_tensor_set_name (g1, "grad.fc1");
      drop (&x_t);
      drop (&dh);
      range_pop (run);

      /* ---- optimizer ---- */
      range_push (run, "optimizer");
      /* ‖fc1‖² through a flat lazy reshape that is only read, then
       * dropped: fc1's update below steals its bytes back. */
      TRY_TENSOR (w1_flat, cow_tensor_reshape (w1, 1, (const int64_t[]) { -1 }, &err),
                  "reshape weights.fc1 → weights.fc1.flat");
      cow_tensor_set_name (w1_flat, "weights.fc1.flat");
      TRY_TENSOR (w1_sq, cow_tensor_mul (w1_flat, w1_flat, &err), "mul weights.fc1.flat²");
      TRY_TENSOR (w1_norm, cow_tensor_sum (w1_sq, &err), "sum ‖weights.fc1‖²");
      double norm;
      TRY_STATUS (cow_tensor_item (w1_norm, &norm, &err), "item ‖weights.fc1‖²");
      drop (&w1_norm);
      drop (&w1_sq);
      drop (&w1_flat);

      if (step % CHECKPOINT_EVERY == 0)
        {
          /* The previous checkpoint goes without ever being written. */
          drop (&checkpoint);
          TRY_TENSOR (checkpoint, cow_tensor_lazy_clone (w2, &err),
                      "lazy_clone weights.fc2 → checkpoint.fc2");
          cow_tensor_set_name (checkpoint, "checkpoint.fc2");
          cow_mark ("checkpoint weights.fc2");
          TRY_STATUS (cow_tensor_read_elements (checkpoint, checkpoint_host,
                                                HIDDEN * OUT * sizeof (float), &err),
                      "read checkpoint.fc2");
          checkpoints++;
        }

      TRY_STATUS (cow_tensor_add_ (w1, g1, -LEARNING_RATE, &err), "add_ SGD update of weights.fc1");
      TRY_STATUS (cow_tensor_add_ (w2, g2, -LEARNING_RATE, &err), "add_ SGD update of weights.fc2");
      drop (&g1);
      drop (&g2);

      /* ema = decay·ema + (1 − decay)·fc1 */
      TRY_STATUS (cow_tensor_scale_ (ema, EMA_DECAY, &err), "scale_ ema.fc1");
      TRY_STATUS (cow_tensor_add_ (ema, w1, 1.0 - EMA_DECAY, &err), "add_ ema.fc1 += fc1");
      TRY_TENSOR (ema_sum, cow_tensor_sum (ema, &err), "sum ema.fc1");
      double ema_total;
      TRY_STATUS (cow_tensor_item (ema_sum, &ema_total, &err), "item ema.fc1");
      drop (&ema_sum);
      if (!isfinite (ema_total) || !isfinite (norm))
        {
          check_failed (run, "step %d: ‖fc1‖² = %g, Σ ema.fc1 = %g: not finite",
                        step, norm, ema_total);
          goto out;
        }

      /* SGD wrote fc2; the checkpoint must still hold the old weights. */
      TRY_STATUS (cow_tensor_read_elements (checkpoint, checkpoint_now,
                                            HIDDEN * OUT * sizeof (float), &err),
                  "read checkpoint.fc2");
      if (memcmp (checkpoint_host, checkpoint_now, HIDDEN * OUT * sizeof (float)) != 0)
        {
          check_failed (run, "step %d: updating weights.fc2 changed checkpoint.fc2,"
                        " a lazy clone taken before the update", step);
          goto out;
        }
      range_pop (run);
      range_pop (run); /* step */

      say (run, "  step %3d  loss %.6g  ‖fc1‖² %8.4f  activation mean %+.5f\n",
           step, loss_value, norm, activation_mean);
    }

  if (steps >= 2 && !(last_loss < first_loss))
    check_failed (run, "the loss did not go down: %.6f at step 0, %.6f at step %d",
                  first_loss, last_loss, steps - 1);

  snprintf (run->headline, sizeof run->headline,
            "%d step%s, loss %.6g → %.6g, %d checkpoint%s of weights.fc2", steps,
            plural ((uint64_t) steps),
            first_loss, last_loss, checkpoints, checkpoints == 1 ? "" : "s");

out:
  range_close_all (run);
  CowTensor **all[] = { &x, &teacher, &y, &w1, &w2, &ema, &checkpoint, &h,
                        &logits, &diff, &sq, &loss, &grouped, &grouped_sum,
                        &dflat, &dout, &h_t, &g2, &w2_t, &dh, &x_t, &g1,
                        &w1_flat, &w1_sq, &w1_norm, &ema_sum };
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
    drop (all[i]);
  free (h_before);
  free (h_after);
  free (checkpoint_host);
  free (checkpoint_now);
  cow_set_reshape_mode (previous_mode);
}
