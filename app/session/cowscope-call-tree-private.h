/* cowscope-call-tree-private.h — a knob of the call tree's reader for
 * tests: the two ways it reads stacks must give the same trees. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Above @n stacks with events, a tree reads every stack's frames in one
 * scan instead of one query a stack (0: the default).  Process-wide. */
void cowscope_call_tree_set_scan_threshold (guint n);

G_END_DECLS
