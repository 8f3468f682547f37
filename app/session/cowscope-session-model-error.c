/* cowscope-session-model-error.c — the session model's error domain. */
#include "cowscope-session-model-error.h"

/* Returns the same quark on every call. */
G_DEFINE_QUARK (cowscope-session-model-error-quark, cowscope_session_model_error)
