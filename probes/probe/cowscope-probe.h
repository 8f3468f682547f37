/* cowscope-probe.h — what libcowscope-probe.so offers the code it is
 * loaded into.
 *
 * The probe is loaded into a target by the recorder (LD_PRELOAD, or the
 * CUDA driver through CUDA_INJECTION64_PATH for `record --cuda-only`) and
 * sets itself up from the environment (cowscope-protocol.h).  Its few
 * exported functions are looked up at run time by whoever needs them
 * (dlsym), so nothing has to link against the probe.  It also defines
 * pthread_create, which interposes libc's when preloaded: a new thread
 * gets its ring before its start routine runs (cowscope-probe-spawn.c).
 *
 * In-target code: libc, libdl and pthreads only (HACKING.md, "Layering").
 */
#pragma once

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define COWSCOPE_PROBE_PUBLIC __attribute__ ((visibility ("default")))

/* Tags the CUDA work the calling thread issues from now on with @op_id
 * (an engine operation id) until the matching pop, through CUPTI's
 * external correlation (kind CUSTOM0).  Returns 1 when CUPTI tracing is
 * on and the id was pushed, 0 otherwise (no CUPTI, tracing off, or a
 * CUPTI error); never fails the caller.  Cheap when tracing is off: one
 * load and a branch. */
COWSCOPE_PROBE_PUBLIC int cowscope_probe_push_external_correlation (uint64_t op_id);

/* Ends the innermost external correlation of the calling thread and
 * returns its id, or 0 when none was pushed or tracing is off. */
COWSCOPE_PROBE_PUBLIC uint64_t cowscope_probe_pop_external_correlation (void);

/* How many threads of this process got their ring inside a sink call
 * (the fallback for threads that did not start through the probe's
 * pthread_create, such as a forked child's) rather than before their
 * first event.  A diagnostic for tests and benchmarks. */
COWSCOPE_PROBE_PUBLIC uint64_t cowscope_probe_lazy_setups (void);

/* The CUDA driver's injection entry point (CUDA_INJECTION64_PATH): the
 * driver calls it from cuInit().  Connects to the recorder and starts
 * CUPTI activity tracing when the recorder's environment asks for it.
 * Safe to call more than once and after the probe already started from
 * LD_PRELOAD: it initializes once.  Always returns 1 (success for the
 * driver); failures are reported to the recorder, never to the target. */
COWSCOPE_PROBE_PUBLIC int InitializeInjection (void);

#ifdef __cplusplus
}
#endif
