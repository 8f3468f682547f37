/* cowscope-probe-path.h — where the in-target probe library is.
 *
 * Looked up in this order:
 *   1. $COWSCOPE_PROBE_PATH, when set (tests, packagers): used as given;
 *   2. in the build tree the running binary was built in, when it runs
 *      from one (so a cowscope-cli run from build/ uses the probe built
 *      with it, never an older installed one);
 *   3. in the private library folder (libdir/cowscope) of the prefix the
 *      running binary is installed in, wherever that prefix is now;
 *   4. in that folder under the configured prefix.
 * (cowscope-install-dirs.h finds 2 to 4.)  The result is always an
 * absolute path to an existing regular file (LD_PRELOAD needs no search
 * path surprises).
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define COWSCOPE_ENV_PROBE_PATH "COWSCOPE_PROBE_PATH"

/* The probe's file name, and its folder in a build tree (relative to the
 * build root). */
#define COWSCOPE_PROBE_NAME "libcowscope-probe.so"
#define COWSCOPE_PROBE_BUILD_DIR "probes/probe"

/* Returns the probe's absolute path, or NULL with an error that lists
 * where it looked. */
char *cowscope_probe_path_find (GError **error);

G_END_DECLS
