/* cow-dtype.h — element types. */
#pragma once

#include <stddef.h>
#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  COW_DTYPE_F32 = 0,
  COW_DTYPE_F64,
  COW_DTYPE_I32,
  COW_DTYPE_I64,
  COW_DTYPE_U8,
  COW_DTYPE_BOOL,
  COW_N_DTYPES
} CowDType;

/* Bytes per element of @dtype, or 0 when @dtype is not a CowDType. */
size_t cow_dtype_size (CowDType dtype);

/* "f32", "f64", "i32", "i64", "u8", "bool"; "invalid" otherwise. */
const char *cow_dtype_name (CowDType dtype);

/* True for COW_DTYPE_F32 and COW_DTYPE_F64. */
bool cow_dtype_is_floating (CowDType dtype);

#ifdef __cplusplus
}
#endif
