/* cowscope-install-dirs.h — where Cowscope's installed files are, found
 * from the running binary.
 *
 * An installed Cowscope finds its own files (the probe library, the
 * settings schema, translations, the demo target) under the prefix its
 * running binary was installed in, worked out from /proc/self/exe, so an
 * install works from any prefix and from a DESTDIR staging tree, not
 * only from the prefix it was configured for.  The configured prefix is
 * the fallback (a binary copied out of its prefix).  A binary run from a
 * meson build tree finds the files built there instead
 * (cowscope_install_dirs_build_root()).
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef enum {
  COWSCOPE_INSTALL_DIR_BIN,    /* bindir: the commands, cowscope-demo */
  COWSCOPE_INSTALL_DIR_PKGLIB, /* libdir/cowscope: libcowscope-probe.so */
  COWSCOPE_INSTALL_DIR_DATA,   /* datadir: glib-2.0/schemas, cowscope/ */
  COWSCOPE_INSTALL_DIR_LOCALE, /* localedir: the translations */
} CowscopeInstallDir;

/* The root of the meson build tree the running binary was built in (the
 * nearest folder above it holding meson-private/), or NULL when it runs
 * installed. */
char *cowscope_install_dirs_build_root (void);

/* The absolute path of @dir (with @name inside it when @name is not
 * NULL): under the running binary's prefix when that exists, else under
 * the configured prefix, else NULL. */
char *cowscope_install_dirs_find (CowscopeInstallDir dir, const char *name);

/* The configured absolute path of @dir (with @name inside it), which
 * cowscope_install_dirs_find() falls back to; for messages. */
char *cowscope_install_dirs_configured (CowscopeInstallDir dir, const char *name);

G_END_DECLS
