/* cowscope-session-model-error.h — why the session model refused a file
 * or a query.  (The CLI's reader has its own domain, COWSCOPE_SESSION_ERROR;
 * this one is the application's.) */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define COWSCOPE_SESSION_MODEL_ERROR (cowscope_session_model_error_quark ())

typedef enum {
  COWSCOPE_SESSION_MODEL_ERROR_NOT_FOUND,     /* missing or unreadable file */
  COWSCOPE_SESSION_MODEL_ERROR_NOT_SQLITE,    /* not an SQLite database at all */
  COWSCOPE_SESSION_MODEL_ERROR_NOT_SESSION,   /* SQLite, but not a Cowscope session */
  COWSCOPE_SESSION_MODEL_ERROR_NEWER,         /* a schema newer than this build reads */
  COWSCOPE_SESSION_MODEL_ERROR_DAMAGED,       /* corrupt, truncated or inconsistent */
  COWSCOPE_SESSION_MODEL_ERROR_NOT_FINALIZED, /* recorder did not finish it */
  COWSCOPE_SESSION_MODEL_ERROR_NOT_FOUND_IN_SESSION, /* no such event or object */
  COWSCOPE_SESSION_MODEL_ERROR_FAILED,        /* any other SQLite failure */
} CowscopeSessionModelError;

/* The error domain of the session model; stable for the process. */
GQuark cowscope_session_model_error_quark (void);

G_END_DECLS
