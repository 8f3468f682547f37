/* cowscope-session-types.h — small enums shared by the session model's
 * classes: the timeline's lane kinds here; its item kinds and counter
 * kinds are the session format's (cowscope-format-timeline.h,
 * cowscope-format-counters.h), and so are event codes (the engine's
 * cow-trace.h, through the format). */
#pragma once

#include <glib.h>

#include "cowscope-format-counters.h"
#include "cowscope-format-timeline.h"

G_BEGIN_DECLS

typedef enum {
  COWSCOPE_LANE_THREAD,       /* one per (pid, tid) */
  COWSCOPE_LANE_CUDA_STREAM,  /* one per (pid, device, stream) */
  COWSCOPE_LANE_COUNTER,      /* bytes allocated, bytes shared, live storages */
  COWSCOPE_LANE_PROCESS,      /* one per process in multi-process sessions: its
                               * IPC events, limbo and held-block spans */
} CowscopeLaneKind;

G_END_DECLS
