/* cow-reshape.c — reshape() and its process-wide mode: aliasing views
 * (today's semantics), lazy copies (cow-lazy.h), or simulated
 * lazy copies that warn when a program relies on the aliasing. */
#include "cow-lazy-private.h"
#include "cow-lazy.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* -1 until set or read from the environment.  Relaxed: the mode is a
 * setting, not a synchronisation point. */
static _Atomic int reshape_mode = -1;
static pthread_once_t env_once = PTHREAD_ONCE_INIT;

const char *
cow_reshape_mode_to_string (CowReshapeMode mode)
{
  switch (mode)
    {
    case COW_RESHAPE_VIEW: return "view";
    case COW_RESHAPE_LAZY: return "lazy";
    case COW_RESHAPE_SIMULATE: return "simulate";
    }
  return "invalid";
}

CowStatus
cow_reshape_mode_from_string (const char *text, CowReshapeMode *mode, CowError *error)
{
  static const CowReshapeMode modes[] = { COW_RESHAPE_VIEW, COW_RESHAPE_LAZY,
                                          COW_RESHAPE_SIMULATE };
  for (size_t i = 0; text != NULL && i < sizeof modes / sizeof modes[0]; i++)
    if (strcmp (text, cow_reshape_mode_to_string (modes[i])) == 0)
      {
        *mode = modes[i];
        return COW_OK;
      }
  return cow_set_error (error, COW_ERROR_INVALID_ARGUMENT,
                        "reshape mode \"%s\" is not one of view, lazy, simulate",
                        text ? text : "(null)");
}

static void
read_environment (void)
{
  const char *text = getenv (COW_RESHAPE_MODE_ENV);
  CowReshapeMode mode = COW_RESHAPE_VIEW;
  CowError error;
  if (text != NULL && *text != '\0'
      && cow_reshape_mode_from_string (text, &mode, &error) != COW_OK)
    fprintf (stderr, "cowtensor: warning: %s=%s: %s; using view\n",
             COW_RESHAPE_MODE_ENV, text, error.message);
  int unset = -1;
  /* An explicit cow_set_reshape_mode() wins over the environment. */
  atomic_compare_exchange_strong_explicit (&reshape_mode, &unset, (int) mode,
                                           memory_order_relaxed, memory_order_relaxed);
}

void
cow_set_reshape_mode (CowReshapeMode mode)
{
  atomic_store_explicit (&reshape_mode, (int) mode, memory_order_relaxed);
}

CowReshapeMode
cow_get_reshape_mode (void)
{
  int mode = atomic_load_explicit (&reshape_mode, memory_order_relaxed);
  if (COW_UNLIKELY (mode < 0))
    {
      pthread_once (&env_once, read_environment);
      mode = atomic_load_explicit (&reshape_mode, memory_order_relaxed);
    }
  return (CowReshapeMode) mode;
}

CowTensor *
cow_tensor_reshape (CowTensor *tensor, int ndim, const int64_t *sizes, CowError *error)
{
  if (tensor == NULL)
    {
      cow_set_error (error, COW_ERROR_INVALID_ARGUMENT, "reshape: tensor is NULL");
      return NULL;
    }
  int64_t resolved[COW_MAX_DIMS], strides[COW_MAX_DIMS];
  if (cow_infer_sizes ("reshape", ndim, sizes, cow_tensor_numel (tensor), resolved,
                       error) != COW_OK)
    return NULL;
  /* Not expressible as a view: every mode copies. */
  if (!cow_compute_view_strides (tensor, ndim, resolved, strides))
    return cow_tensor_clone_as (tensor, ndim, resolved, COW_OP_RESHAPE, error);

  switch (cow_get_reshape_mode ())
    {
    case COW_RESHAPE_LAZY:
      return cow_tensor_lazy_clone_as (tensor, ndim, resolved, strides,
                                       COW_OP_RESHAPE, error);
    case COW_RESHAPE_SIMULATE:
      {
        CowShadow *shadow = cow_sim_fork_shadow (tensor);
        if (shadow == NULL)
          {
            cow_set_error (error, COW_ERROR_NO_MEMORY, "reshape: cannot allocate a shadow storage");
            return NULL;
          }
        CowTensor *result = cow_tensor_make (tensor->storage, ndim, resolved, strides,
                                             tensor->storage_offset, tensor->dtype,
                                             COW_OP_RESHAPE, tensor, shadow, error);
        cow_shadow_unref (shadow); /* the tensor holds its own reference */
        return result;
      }
    case COW_RESHAPE_VIEW:
    default:
      return cow_tensor_make_view (tensor, ndim, resolved, strides,
                                   tensor->storage_offset, COW_OP_RESHAPE, error);
    }
}
