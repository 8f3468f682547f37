/* cowscope-stack-frame.c — one frame of a recorded call stack. */
#include "cowscope-stack-frame.h"

#include <glib/gi18n-lib.h>
#include <inttypes.h>

struct _CowscopeStackFrame {
  GObject parent_instance;
  guint64 address;
  char *module, *function, *file, *display;
  gint64 line;
};

enum { PROP_0, PROP_FUNCTION, PROP_FILE, PROP_LINE, PROP_DISPLAY, N_PROPS };
static GParamSpec *properties[N_PROPS];

G_DEFINE_FINAL_TYPE (CowscopeStackFrame, cowscope_stack_frame, G_TYPE_OBJECT)

static void
cowscope_stack_frame_finalize (GObject *object)
{
  CowscopeStackFrame *self = COWSCOPE_STACK_FRAME (object);
  g_free (self->module);
  g_free (self->function);
  g_free (self->file);
  g_free (self->display);
  G_OBJECT_CLASS (cowscope_stack_frame_parent_class)->finalize (object);
}

static void
cowscope_stack_frame_get_property (GObject *object, guint prop_id, GValue *value,
                                   GParamSpec *pspec)
{
  CowscopeStackFrame *self = COWSCOPE_STACK_FRAME (object);
  switch (prop_id)
    {
    case PROP_FUNCTION: g_value_set_string (value, self->function); break;
    case PROP_FILE: g_value_set_string (value, self->file); break;
    case PROP_LINE: g_value_set_int64 (value, self->line); break;
    case PROP_DISPLAY: g_value_set_string (value, self->display); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
cowscope_stack_frame_class_init (CowscopeStackFrameClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  object_class->finalize = cowscope_stack_frame_finalize;
  object_class->get_property = cowscope_stack_frame_get_property;
  properties[PROP_FUNCTION] = g_param_spec_string ("function", NULL, NULL, NULL,
                                                   G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  properties[PROP_FILE] = g_param_spec_string ("file", NULL, NULL, NULL,
                                               G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  properties[PROP_LINE] = g_param_spec_int64 ("line", NULL, NULL, 0, G_MAXINT64, 0,
                                              G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  properties[PROP_DISPLAY] = g_param_spec_string ("display", NULL, NULL, NULL,
                                                  G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
cowscope_stack_frame_init (CowscopeStackFrame *self)
{
  (void) self;
}

/* A frame with its display text computed once. */
CowscopeStackFrame *
cowscope_stack_frame_new (guint64 address, const char *module, const char *function,
                          const char *file, gint64 line)
{
  CowscopeStackFrame *self = g_object_new (COWSCOPE_TYPE_STACK_FRAME, NULL);
  self->address = address;
  self->module = g_strdup (module);
  self->function = g_strdup (function);
  self->file = g_strdup (file);
  self->line = MAX (line, 0);
  if (function != NULL && file != NULL && self->line > 0)
    self->display = g_strdup_printf ("%s (%s:%" G_GINT64_FORMAT ")", function, file, self->line);
  else if (function != NULL)
    self->display = g_strdup (function);
  else
    self->display = g_strdup_printf (_("0x%" PRIx64 " in %s"), address,
                                     module ? module : _("unknown module"));
  return self;
}

guint64 cowscope_stack_frame_get_address (CowscopeStackFrame *self) { return self->address; }
const char *cowscope_stack_frame_get_module (CowscopeStackFrame *self) { return self->module; }
const char *cowscope_stack_frame_get_function (CowscopeStackFrame *self) { return self->function; }
const char *cowscope_stack_frame_get_file (CowscopeStackFrame *self) { return self->file; }
gint64 cowscope_stack_frame_get_line (CowscopeStackFrame *self) { return self->line; }
const char *cowscope_stack_frame_get_display (CowscopeStackFrame *self) { return self->display; }
