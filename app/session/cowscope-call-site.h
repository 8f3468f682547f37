/* cowscope-call-site.h — which frame of a recorded call stack names the
 * user's code behind an event, and how a frame is written.
 *
 * Stacks are innermost first, and their innermost frames are Cowscope's
 * own (the engine's copy, the probe): code the user cannot change.  The
 * *call site* of a stack is its innermost symbolized frame outside them,
 * else its innermost frame outside them (an address in a module), else
 * its innermost frame.  The session's call_sites view states this rule
 * for SQL and the report, which asks it of one stack at a time; the copy
 * call tree (cowscope-call-tree.h) reads tens of thousands of stacks'
 * frames in one scan and chooses here instead, by the same rule.  The
 * call tree's tests check that every call site the report names is a
 * root of the bottom-up tree, with the report's figures.  Both write a
 * call site with cowscope_call_site_format(). */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* One frame, borrowed from its owner (any string may be NULL). */
typedef struct {
  const char *function; /* NULL when unknown */
  const char *file;     /* as symbolized (usually absolute) */
  const char *module;   /* the mapped file the address falls in */
  gint64 line;          /* <= 0: unknown */
  guint64 address;
} CowscopeFrameRef;

/* TRUE for a frame inside Cowscope's own libraries (engine, probes). */
gboolean cowscope_call_site_is_internal (const CowscopeFrameRef *frame);

/* TRUE when the frame has a function or a file. */
gboolean cowscope_call_site_is_symbolized (const CowscopeFrameRef *frame);

/* The position of the call site among @frames (innermost first), or -1
 * when @n_frames is 0. */
gint cowscope_call_site_choose (const CowscopeFrameRef *frames, guint n_frames);

/* The frame as the report writes a call site: "train.c:88 in
 * update_weights()" (the file's base name), "in update_weights()",
 * "train.c", or "0x4a0 in train" when it is not symbolized. */
char *cowscope_call_site_format (const CowscopeFrameRef *frame);

/* A string that two frames share exactly when they name the same place
 * (function, file, line and module; the address only when unsymbolized),
 * whatever process or address they were recorded at. */
char *cowscope_call_site_key (const CowscopeFrameRef *frame);

G_END_DECLS
