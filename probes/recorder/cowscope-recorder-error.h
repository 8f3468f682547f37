/* cowscope-recorder-error.h — the recorder's error domain. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define COWSCOPE_RECORDER_ERROR (cowscope_recorder_error_quark ())

typedef enum {
  COWSCOPE_RECORDER_ERROR_FAILED,      /* anything else */
  COWSCOPE_RECORDER_ERROR_EXISTS,      /* output exists and no --force */
  COWSCOPE_RECORDER_ERROR_IO,          /* the session file: open, write, full disk */
  COWSCOPE_RECORDER_ERROR_SPAWN,       /* the target could not be started */
  COWSCOPE_RECORDER_ERROR_NO_PROBE,    /* the probe library was not found */
  COWSCOPE_RECORDER_ERROR_NOT_SESSION, /* a file that is not a session */
  COWSCOPE_RECORDER_ERROR_BAD_RECORD,  /* one record the database refused
                                        * (a peer's bad data, not the disk) */
} CowscopeRecorderError;

GQuark cowscope_recorder_error_quark (void);

G_END_DECLS
