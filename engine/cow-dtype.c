/* cow-dtype.c — element types. */
#include "cow-dtype.h"

#include <stdint.h>

size_t
cow_dtype_size (CowDType dtype)
{
  switch (dtype)
    {
    case COW_DTYPE_F32: return sizeof (float);
    case COW_DTYPE_F64: return sizeof (double);
    case COW_DTYPE_I32: return sizeof (int32_t);
    case COW_DTYPE_I64: return sizeof (int64_t);
    case COW_DTYPE_U8: return sizeof (uint8_t);
    case COW_DTYPE_BOOL: return sizeof (_Bool);
    case COW_N_DTYPES: break;
    }
  return 0;
}

const char *
cow_dtype_name (CowDType dtype)
{
  static const char *const names[COW_N_DTYPES] = {
    [COW_DTYPE_F32] = "f32", [COW_DTYPE_F64] = "f64", [COW_DTYPE_I32] = "i32",
    [COW_DTYPE_I64] = "i64", [COW_DTYPE_U8] = "u8",   [COW_DTYPE_BOOL] = "bool",
  };
  if ((unsigned) dtype >= COW_N_DTYPES)
    return "invalid";
  return names[dtype];
}

bool
cow_dtype_is_floating (CowDType dtype)
{
  return dtype == COW_DTYPE_F32 || dtype == COW_DTYPE_F64;
}
