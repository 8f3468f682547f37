/* cowscope-socket-dir.h — the recorder's private socket directory, and
 * the clean-up of those that killed recorders left behind.
 *
 * A recording listens in its own directory, PARENT/cowscope-XXXXXX (mode
 * 0700; PARENT is $XDG_RUNTIME_DIR when it is the user's, else the
 * temporary directory), which holds an "owner" file (the recorder's pid
 * and its start time, so a reused pid is not mistaken for the owner) and
 * the socket.  A recorder removes its directory when it ends; one killed
 * cannot, and the next recording (or `cowscope-cli finalize`) removes
 * every such directory whose owner is gone, as the engine removes stale
 * counter files.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Where recordings make their socket directories. */
const char *cowscope_socket_dir_parent (void);

/* Creates a socket directory (with its owner file) in
 * cowscope_socket_dir_parent(), first removing stale ones there.
 * Returns its path, or NULL with @error set. */
char *cowscope_socket_dir_create (GError **error);

/* Removes the socket directory @dir made by cowscope_socket_dir_create()
 * (its socket and owner file, then the directory).  NULL is ignored. */
void cowscope_socket_dir_remove (const char *dir);

/* Removes, in @parent, every cowscope-XXXXXX directory of this user whose
 * owner is no longer running (nothing else: a directory holding anything
 * but a socket and an owner file is left alone).  Returns how many were
 * removed. */
guint cowscope_socket_dir_remove_stale (const char *parent);

G_END_DECLS
