/* cow-error.c — error values. */
#include "cow-private.h"

#include <stdio.h>
#include <string.h>

void
cow_error_clear (CowError *error)
{
  if (error == NULL)
    return;
  error->code = COW_OK;
  error->message[0] = '\0';
}

const char *
cow_status_to_string (CowStatus status)
{
  switch (status)
    {
    case COW_OK: return "ok";
    case COW_ERROR_INVALID_ARGUMENT: return "invalid argument";
    case COW_ERROR_SHAPE: return "shape mismatch";
    case COW_ERROR_DTYPE: return "dtype mismatch";
    case COW_ERROR_OUT_OF_RANGE: return "out of range";
    case COW_ERROR_OVERFLOW: return "size overflow";
    case COW_ERROR_NO_MEMORY: return "out of memory";
    case COW_ERROR_NOT_SUPPORTED: return "not supported";
    case COW_ERROR_DEVICE: return "device error";
    }
  return "unknown error";
}

CowStatus
cow_set_error (CowError *error, CowStatus code, const char *format, ...)
{
  if (error != NULL)
    {
      va_list args;
      error->code = code;
      va_start (args, format);
      vsnprintf (error->message, sizeof error->message, format, args);
      va_end (args);
    }
  return code;
}
