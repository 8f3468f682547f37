/* peer-event-tp.c — instantiates the cowscope_peer tracepoint provider
 * (its probe and its registration) in the LTTng burst target. */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "peer-event-tp.h"
