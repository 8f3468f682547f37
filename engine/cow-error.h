/* cow-error.h — errors as values.
 *
 * Every engine function that can fail takes a `CowError *` as its last
 * argument (NULL is allowed when the caller only wants the status) and
 * reports failure through its return value: a CowStatus, or NULL for
 * functions that return an object.  Nothing in the engine aborts on
 * input that a caller or a file can cause.
 */
#pragma once

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  COW_OK = 0,
  COW_ERROR_INVALID_ARGUMENT, /* NULL object, bad dimension, bad mode name */
  COW_ERROR_SHAPE,            /* sizes do not match or do not broadcast */
  COW_ERROR_DTYPE,            /* dtypes differ or are not supported by the op */
  COW_ERROR_OUT_OF_RANGE,     /* index, slice or strided view outside the tensor */
  COW_ERROR_OVERFLOW,         /* element or byte count does not fit in 64 bits */
  COW_ERROR_NO_MEMORY,        /* an allocator could not provide the bytes */
  COW_ERROR_NOT_SUPPORTED,    /* the operation cannot be done on this object */
  COW_ERROR_DEVICE,           /* no CUDA device, or a device call failed */
} CowStatus;

#define COW_ERROR_MESSAGE_MAX 256

typedef struct {
  CowStatus code;
  char message[COW_ERROR_MESSAGE_MAX];
} CowError;

/* Resets @error to COW_OK with an empty message.  NULL is ignored. */
void cow_error_clear (CowError *error);

/* A stable English name for @status ("out of range"), never NULL. */
const char *cow_status_to_string (CowStatus status);

#ifdef __cplusplus
}
#endif
