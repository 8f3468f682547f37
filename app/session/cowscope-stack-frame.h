/* cowscope-stack-frame.h — one symbolized call-stack frame. */
#pragma once

#include <glib-object.h>

G_BEGIN_DECLS

#define COWSCOPE_TYPE_STACK_FRAME (cowscope_stack_frame_get_type ())
G_DECLARE_FINAL_TYPE (CowscopeStackFrame, cowscope_stack_frame, COWSCOPE, STACK_FRAME, GObject)

/* Takes copies of the strings (any may be NULL). */
CowscopeStackFrame *cowscope_stack_frame_new (guint64 address, const char *module,
                                              const char *function, const char *file,
                                              gint64 line);
guint64 cowscope_stack_frame_get_address (CowscopeStackFrame *self);
const char *cowscope_stack_frame_get_module (CowscopeStackFrame *self);
const char *cowscope_stack_frame_get_function (CowscopeStackFrame *self);
const char *cowscope_stack_frame_get_file (CowscopeStackFrame *self);
gint64 cowscope_stack_frame_get_line (CowscopeStackFrame *self); /* 0: unknown */
/* "function (file:line)", "function", or "0x… in module"; never NULL. */
const char *cowscope_stack_frame_get_display (CowscopeStackFrame *self);

G_END_DECLS
