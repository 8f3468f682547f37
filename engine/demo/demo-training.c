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

/* What the training loop keeps from one step to the next. */
typedef struct {
  CowTensor *x, *y;           /* input and target */
  CowTensor *w1, *w2;         /* weights.fc1, weights.fc2 */
  CowTensor *ema;             /* ema.fc1: a running average of fc1 */
  CowTensor *checkpoint;      /* checkpoint.fc2: fc2 as it was */
  float *checkpoint_host;     /* its elements when it was taken */
  float *checkpoint_now;      /* and as read back after an update */
  float *h_before, *h_after;  /* activations around a write to a reshape */
  int checkpoints;
} Training;

/* What the passes of one step hand on to the next pass. */
typedef struct {
  CowTensor *h;     /* activations, forward → backward */
  CowTensor *diff;  /* residual, forward → backward */
  CowTensor *g1;    /* grad.fc1, backward → optimizer */
  CowTensor *g2;    /* grad.fc2, backward → optimizer */
} Step;

/* The input, a target made by a random linear teacher, both weights, and
 * the EMA of fc1, which starts as a lazy clone: no bytes move yet. */
static bool
training_setup (Run *run, Training *t, uint64_t *rng)
{
  CowError err;
  CowTensor *teacher = NULL;
  bool ok = false;

  range_push (run, "setup");
  TRY_TENSOR (t->x, random_tensor (BATCH, IN, 1.0f, rng, &err), "creating the input");
  cow_tensor_set_name (t->x, "input");
  TRY_TENSOR (teacher, random_tensor (IN, OUT, 0.3f, rng, &err), "creating the teacher");
  TRY_TENSOR (t->y, cow_tensor_matmul (t->x, teacher, &err), "matmul target = input·teacher");
  cow_tensor_set_name (t->y, "target");
  drop (&teacher);
  TRY_TENSOR (t->w1, random_tensor (IN, HIDDEN, 0.125f, rng, &err), "creating weights.fc1");
  cow_tensor_set_name (t->w1, "weights.fc1");
  TRY_TENSOR (t->w2, random_tensor (HIDDEN, OUT, 0.09f, rng, &err), "creating weights.fc2");
  cow_tensor_set_name (t->w2, "weights.fc2");
  TRY_TENSOR (t->ema, cow_tensor_lazy_clone (t->w1, &err), "lazy_clone weights.fc1 → ema.fc1");
  cow_tensor_set_name (t->ema, "ema.fc1");
  range_pop (run);
  ok = true;

out:
  drop (&teacher);
  return ok;
}

/* activations = input·fc1, and the mean squared error of
 * activations·fc2 against the target into *@loss_value.  The residual
 * stays in @s for the backward pass. */
static bool
training_forward (Run *run, Training *t, int step, Step *s, double *loss_value)
{
  CowError err;
  CowTensor *logits = NULL, *sq = NULL, *loss = NULL;
  bool ok = false;

  TRY_TENSOR (s->h, cow_tensor_matmul (t->x, t->w1, &err), "matmul activations = input·weights.fc1");
  cow_tensor_set_name (s->h, "activations");
  TRY_TENSOR (logits, cow_tensor_matmul (s->h, t->w2, &err), "matmul output = activations·weights.fc2");
  cow_tensor_set_name (logits, "output");
  TRY_TENSOR (s->diff, cow_tensor_add (logits, t->y, -1.0, &err), "add residual = output − target");
  cow_tensor_set_name (s->diff, "residual");
  drop (&logits);
  TRY_TENSOR (sq, cow_tensor_mul (s->diff, s->diff, &err), "mul residual²");
  TRY_TENSOR (loss, cow_tensor_sum (sq, &err), "sum loss");
  cow_tensor_set_name (loss, "loss");
  drop (&sq);
  TRY_STATUS (cow_tensor_item (loss, loss_value, &err), "item loss");
  drop (&loss);
  *loss_value /= (double) (BATCH * OUT);
  if (!isfinite (*loss_value))
    {
      check_failed (run, "step %d: the loss is %g, not finite", step, *loss_value);
      goto out;
    }
  ok = true;

out:
  drop (&logits);
  drop (&sq);
  drop (&loss);
  return ok;
}

/* Activation statistics on a grouped lazy reshape, scaled in place: the
 * write copies, since the backward pass still holds the activations, and
 * must leave them untouched. */
static bool
training_activation_mean (Run *run, Training *t, int step, const Step *s, double *mean)
{
  CowError err;
  CowTensor *grouped = NULL, *grouped_sum = NULL;
  bool ok = false;

  TRY_STATUS (cow_tensor_read_elements (s->h, t->h_before, BATCH * HIDDEN * sizeof (float), &err),
              "read activations");
  TRY_TENSOR (grouped,
              cow_tensor_reshape (s->h, 3, (const int64_t[]) { BATCH, GROUPS, HIDDEN / GROUPS }, &err),
              "reshape activations → activations.grouped");
  cow_tensor_set_name (grouped, "activations.grouped");
  TRY_STATUS (cow_tensor_scale_ (grouped, 1.0 / (HIDDEN / GROUPS), &err),
              "scale_ activations.grouped");
  TRY_TENSOR (grouped_sum, cow_tensor_sum (grouped, &err), "sum activations.grouped");
  TRY_STATUS (cow_tensor_item (grouped_sum, mean, &err), "item activation mean");
  *mean /= (double) (BATCH * GROUPS);
  drop (&grouped_sum);
  drop (&grouped);
  TRY_STATUS (cow_tensor_read_elements (s->h, t->h_after, BATCH * HIDDEN * sizeof (float), &err),
              "read activations");
  if (memcmp (t->h_before, t->h_after, BATCH * HIDDEN * sizeof (float)) != 0)
    {
      check_failed (run, "step %d: writing activations.grouped (a lazy reshape)"
                    " changed the activations it was reshaped from", step);
      goto out;
    }
  ok = true;

out:
  drop (&grouped);
  drop (&grouped_sum);
  return ok;
}

/* The gradients of both weights into @s; the residual and the
 * activations are dropped on the way. */
static bool
training_backward (Run *run, Training *t, Step *s)
{
  CowError err;
  CowTensor *dflat = NULL, *dout = NULL, *h_t = NULL, *w2_t = NULL, *dh = NULL, *x_t = NULL;
  bool ok = false;

  /* d loss / d output = 2·residual / n, computed on a flat lazy reshape
   * after dropping the residual: the write steals. */
  TRY_TENSOR (dflat, cow_tensor_reshape (s->diff, 1, (const int64_t[]) { -1 }, &err),
              "reshape residual → grad.output.flat");
  cow_tensor_set_name (dflat, "grad.output.flat");
  drop (&s->diff);
  TRY_STATUS (cow_tensor_scale_ (dflat, 2.0 / (BATCH * OUT), &err),
              "scale_ grad.output.flat");
  TRY_TENSOR (dout, cow_tensor_reshape (dflat, 2, (const int64_t[]) { BATCH, OUT }, &err),
              "reshape grad.output.flat → grad.output");
  cow_tensor_set_name (dout, "grad.output");
  drop (&dflat);
  TRY_TENSOR (h_t, cow_tensor_transpose (s->h, 0, 1, &err), "transpose activations");
  TRY_TENSOR (s->g2, cow_tensor_matmul (h_t, dout, &err), "matmul grad.fc2 = activationsᵀ·grad.output");
  cow_tensor_set_name (s->g2, "grad.fc2");
  drop (&h_t);
  TRY_TENSOR (w2_t, cow_tensor_transpose (t->w2, 0, 1, &err), "transpose weights.fc2");
  TRY_TENSOR (dh, cow_tensor_matmul (dout, w2_t, &err), "matmul grad.activations = grad.output·weights.fc2ᵀ");
  cow_tensor_set_name (dh, "grad.activations");
  drop (&w2_t);
  drop (&dout);
  drop (&s->h);
  TRY_TENSOR (x_t, cow_tensor_transpose (t->x, 0, 1, &err), "transpose input");
  TRY_TENSOR (s->g1, cow_tensor_matmul (x_t, dh, &err), "matmul grad.fc1 = inputᵀ·grad.activations");
  cow_tensor_set_name (s->g1, "grad.fc1");
  drop (&x_t);
  drop (&dh);
  ok = true;

out:
  drop (&dflat);
  drop (&dout);
  drop (&h_t);
  drop (&w2_t);
  drop (&dh);
  drop (&x_t);
  return ok;
}

/* ‖fc1‖² into *@norm, through a flat lazy reshape that is only read, then
 * dropped: fc1's update afterwards steals its bytes back. */
static bool
training_fc1_norm (Run *run, Training *t, double *norm)
{
  CowError err;
  CowTensor *w1_flat = NULL, *w1_sq = NULL, *w1_norm = NULL;
  bool ok = false;

  TRY_TENSOR (w1_flat, cow_tensor_reshape (t->w1, 1, (const int64_t[]) { -1 }, &err),
              "reshape weights.fc1 → weights.fc1.flat");
  cow_tensor_set_name (w1_flat, "weights.fc1.flat");
  TRY_TENSOR (w1_sq, cow_tensor_mul (w1_flat, w1_flat, &err), "mul weights.fc1.flat²");
  TRY_TENSOR (w1_norm, cow_tensor_sum (w1_sq, &err), "sum ‖weights.fc1‖²");
  TRY_STATUS (cow_tensor_item (w1_norm, norm, &err), "item ‖weights.fc1‖²");
  ok = true;

out:
  drop (&w1_norm);
  drop (&w1_sq);
  drop (&w1_flat);
  return ok;
}

/* A new checkpoint of fc2, as a lazy clone; the previous one goes
 * without ever being written. */
static bool
training_checkpoint (Run *run, Training *t)
{
  CowError err;

  drop (&t->checkpoint);
  TRY_TENSOR (t->checkpoint, cow_tensor_lazy_clone (t->w2, &err),
              "lazy_clone weights.fc2 → checkpoint.fc2");
  cow_tensor_set_name (t->checkpoint, "checkpoint.fc2");
  cow_mark ("checkpoint weights.fc2");
  TRY_STATUS (cow_tensor_read_elements (t->checkpoint, t->checkpoint_host,
                                        HIDDEN * OUT * sizeof (float), &err),
              "read checkpoint.fc2");
  t->checkpoints++;
  return true;

out:
  return false;
}

/* SGD updates of both weights (fc2's copies while a checkpoint shares
 * it), then the EMA: ema = decay·ema + (1 − decay)·fc1.  The checkpoint
 * must still hold the weights from before the update. */
static bool
training_update (Run *run, Training *t, int step, Step *s, double norm)
{
  CowError err;
  CowTensor *ema_sum = NULL;
  bool ok = false;

  TRY_STATUS (cow_tensor_add_ (t->w1, s->g1, -LEARNING_RATE, &err), "add_ SGD update of weights.fc1");
  TRY_STATUS (cow_tensor_add_ (t->w2, s->g2, -LEARNING_RATE, &err), "add_ SGD update of weights.fc2");
  drop (&s->g1);
  drop (&s->g2);

  TRY_STATUS (cow_tensor_scale_ (t->ema, EMA_DECAY, &err), "scale_ ema.fc1");
  TRY_STATUS (cow_tensor_add_ (t->ema, t->w1, 1.0 - EMA_DECAY, &err), "add_ ema.fc1 += fc1");
  TRY_TENSOR (ema_sum, cow_tensor_sum (t->ema, &err), "sum ema.fc1");
  double ema_total;
  TRY_STATUS (cow_tensor_item (ema_sum, &ema_total, &err), "item ema.fc1");
  drop (&ema_sum);
  if (!isfinite (ema_total) || !isfinite (norm))
    {
      check_failed (run, "step %d: ‖fc1‖² = %g, Σ ema.fc1 = %g: not finite",
                    step, norm, ema_total);
      goto out;
    }

  TRY_STATUS (cow_tensor_read_elements (t->checkpoint, t->checkpoint_now,
                                        HIDDEN * OUT * sizeof (float), &err),
              "read checkpoint.fc2");
  if (memcmp (t->checkpoint_host, t->checkpoint_now, HIDDEN * OUT * sizeof (float)) != 0)
    {
      check_failed (run, "step %d: updating weights.fc2 changed checkpoint.fc2,"
                    " a lazy clone taken before the update", step);
      goto out;
    }
  ok = true;

out:
  drop (&ema_sum);
  return ok;
}

/* One step, as ranges "step N" › forward, backward, optimizer; its
 * progress line.  *@loss is the step's loss. */
static bool
training_step (Run *run, Training *t, int step, double *loss)
{
  Step s = { 0 };
  double activation_mean, norm;
  bool ok = false;
  char label[32];

  snprintf (label, sizeof label, "step %d", step);
  range_push (run, label);

  range_push (run, "forward");
  if (!training_forward (run, t, step, &s, loss)
      || !training_activation_mean (run, t, step, &s, &activation_mean))
    goto out;
  range_pop (run);

  range_push (run, "backward");
  if (!training_backward (run, t, &s))
    goto out;
  range_pop (run);

  range_push (run, "optimizer");
  if (!training_fc1_norm (run, t, &norm))
    goto out;
  if (step % CHECKPOINT_EVERY == 0 && !training_checkpoint (run, t))
    goto out;
  if (!training_update (run, t, step, &s, norm))
    goto out;
  range_pop (run);
  range_pop (run); /* step */

  say (run, "  step %3d  loss %.6g  ‖fc1‖² %8.4f  activation mean %+.5f\n",
       step, *loss, norm, activation_mean);
  ok = true;

out:
  drop (&s.h);
  drop (&s.diff);
  drop (&s.g1);
  drop (&s.g2);
  return ok;
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
  uint64_t rng = 0x5eed;
  const CowReshapeMode previous_mode = cow_get_reshape_mode ();
  double first_loss = NAN, last_loss = NAN;
  Training t = {
    .h_before = host_alloc (run, BATCH * HIDDEN),
    .h_after = host_alloc (run, BATCH * HIDDEN),
    .checkpoint_host = host_alloc (run, HIDDEN * OUT),
    .checkpoint_now = host_alloc (run, HIDDEN * OUT),
  };
  if (t.h_before == NULL || t.h_after == NULL || t.checkpoint_host == NULL
      || t.checkpoint_now == NULL)
    goto out;

  cow_set_reshape_mode (COW_RESHAPE_LAZY);
  say (run, "training: %d step%s of SGD on a %dx%dx%d linear network, batch %d,"
       " reshape mode \"lazy\"\n", steps, plural ((uint64_t) steps), IN, HIDDEN, OUT, BATCH);

  if (!training_setup (run, &t, &rng))
    goto out;
  for (int step = 0; step < steps; step++)
    {
      double loss;
      if (!training_step (run, &t, step, &loss))
        goto out;
      if (step == 0)
        first_loss = loss;
      last_loss = loss;
    }

  if (steps >= 2 && !(last_loss < first_loss))
    check_failed (run, "the loss did not go down: %.6f at step 0, %.6f at step %d",
                  first_loss, last_loss, steps - 1);

  snprintf (run->headline, sizeof run->headline,
            "%d step%s, loss %.6g → %.6g, %d checkpoint%s of weights.fc2", steps,
            plural ((uint64_t) steps),
            first_loss, last_loss, t.checkpoints, t.checkpoints == 1 ? "" : "s");

out:
  range_close_all (run);
  CowTensor **all[] = { &t.x, &t.y, &t.w1, &t.w2, &t.ema, &t.checkpoint };
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
    drop (all[i]);
  free (t.h_before);
  free (t.h_after);
  free (t.checkpoint_host);
  free (t.checkpoint_now);
  cow_set_reshape_mode (previous_mode);
}
