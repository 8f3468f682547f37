/* cowscope-probe-path.h — where the in-target probe library is.
 *
 * Looked up in this order:
 *   1. $COWSCOPE_PROBE_PATH, when set (tests, packagers): used as given;
 *   2. next to the running executable in the build tree: @build_relative
 *      resolved from the directory of /proc/self/exe (so a cowscope-cli
 *      run from build/ uses the probe built with it, never an older
 *      installed one);
 *   3. @installed, the path it is installed to.
 * The result is always an absolute path to an existing regular file
 * (LD_PRELOAD needs no search path surprises).
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define COWSCOPE_ENV_PROBE_PATH "COWSCOPE_PROBE_PATH"

/* Returns the probe's absolute path, or NULL with an error that lists
 * where it looked. */
char *cowscope_probe_path_find (const char *build_relative, const char *installed,
                                GError **error);

G_END_DECLS
