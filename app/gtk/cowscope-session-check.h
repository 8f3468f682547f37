/* cowscope-session-check.h — is this file a Cowscope session we can read?
 *
 * TEMPORARY: a minimal, read-only check that stands in for the session
 * model (app/session/) until it lands; then the window opens sessions
 * through the model and this file goes away.  It is the only file of the
 * GTK application that touches SQLite (DESIGN.md: the UI layer must not),
 * and it does no more than read the `meta` table.
 */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/* The newest session format (meta.schema_version, PRAGMA user_version)
 * this build reads. */
#define COWSCOPE_SESSION_FORMAT_VERSION 1

#define COWSCOPE_SESSION_CHECK_ERROR (cowscope_session_check_error_quark ())

typedef enum
{
  COWSCOPE_SESSION_CHECK_ERROR_NOT_FOUND,   /* no such file */
  COWSCOPE_SESSION_CHECK_ERROR_UNREADABLE,  /* permissions, not local, I/O */
  COWSCOPE_SESSION_CHECK_ERROR_NOT_SESSION, /* not SQLite, or SQLite but not ours */
  COWSCOPE_SESSION_CHECK_ERROR_NEWER,       /* a newer session format */
  COWSCOPE_SESSION_CHECK_ERROR_DAMAGED,     /* truncated or corrupt */
} CowscopeSessionCheckError;

GQuark      cowscope_session_check_error_quark (void);

GHashTable *cowscope_session_check             (GFile               *file,
                                                GCancellable        *cancellable,
                                                GError             **error);
void        cowscope_session_check_async       (GFile               *file,
                                                GCancellable        *cancellable,
                                                GAsyncReadyCallback  callback,
                                                gpointer             user_data);
GHashTable *cowscope_session_check_finish      (GAsyncResult        *result,
                                                GError             **error);

G_END_DECLS
