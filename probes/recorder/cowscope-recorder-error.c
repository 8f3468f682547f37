/* cowscope-recorder-error.c — the recorder's error domain. */
#include "cowscope-recorder-error.h"

/* The quark of COWSCOPE_RECORDER_ERROR; stable for the process's life. */
G_DEFINE_QUARK (cowscope-recorder-error-quark, cowscope_recorder_error)
