/* cow-range.h — user ranges and marks, like NVTX, so a profile can say
 * "weights.fc1 in step 3".  Ranges nest per thread. */
#pragma once

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Opens a range named @name on this thread; returns its id. */
uint64_t cow_range_push (const char *name);
/* Closes this thread's innermost range (no-op when none is open). */
void cow_range_pop (void);
/* A named instant. */
void cow_mark (const char *name);

#ifdef __cplusplus
}
#endif
