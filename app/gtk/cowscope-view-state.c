/* cowscope-view-state.c — see cowscope-view-state.h. */
#include "cowscope-view-state.h"

#define MIN_VISIBLE_NS 1000

struct _CowscopeViewState {
  GObject parent_instance;
  CowscopeSessionDocument *document;
  gint64 visible_start, visible_end;
  gint64 cursor;
  gint64 range_start, range_end;
  gint64 selected_seq;
  GArray *highlights; /* of CowscopeObjectRef */
};

G_DEFINE_FINAL_TYPE (CowscopeViewState, cowscope_view_state, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_DOCUMENT,
  PROP_VISIBLE_START,
  PROP_VISIBLE_END,
  PROP_CURSOR,
  PROP_RANGE_START,
  PROP_RANGE_END,
  PROP_SELECTED_SEQ,
  N_PROPS
};

enum { HIGHLIGHTS_CHANGED, N_SIGNALS };

static GParamSpec *properties[N_PROPS];
static guint signals[N_SIGNALS];

static void
cowscope_view_state_finalize (GObject *object)
{
  CowscopeViewState *self = COWSCOPE_VIEW_STATE (object);
  g_clear_object (&self->document);
  g_clear_pointer (&self->highlights, g_array_unref);
  G_OBJECT_CLASS (cowscope_view_state_parent_class)->finalize (object);
}

static void
cowscope_view_state_get_property (GObject *object, guint prop_id, GValue *value,
                                  GParamSpec *pspec)
{
  CowscopeViewState *self = COWSCOPE_VIEW_STATE (object);
  switch (prop_id)
    {
    case PROP_DOCUMENT: g_value_set_object (value, self->document); break;
    case PROP_VISIBLE_START: g_value_set_int64 (value, self->visible_start); break;
    case PROP_VISIBLE_END: g_value_set_int64 (value, self->visible_end); break;
    case PROP_CURSOR: g_value_set_int64 (value, self->cursor); break;
    case PROP_RANGE_START: g_value_set_int64 (value, self->range_start); break;
    case PROP_RANGE_END: g_value_set_int64 (value, self->range_end); break;
    case PROP_SELECTED_SEQ: g_value_set_int64 (value, self->selected_seq); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
cowscope_view_state_set_property (GObject *object, guint prop_id, const GValue *value,
                                  GParamSpec *pspec)
{
  CowscopeViewState *self = COWSCOPE_VIEW_STATE (object);
  switch (prop_id)
    {
    case PROP_DOCUMENT: self->document = g_value_dup_object (value); break;
    case PROP_CURSOR: cowscope_view_state_set_cursor (self, g_value_get_int64 (value)); break;
    case PROP_SELECTED_SEQ:
      cowscope_view_state_set_selected_seq (self, g_value_get_int64 (value));
      break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
cowscope_view_state_constructed (GObject *object)
{
  CowscopeViewState *self = COWSCOPE_VIEW_STATE (object);
  G_OBJECT_CLASS (cowscope_view_state_parent_class)->constructed (object);
  if (self->document != NULL)
    {
      self->visible_start = cowscope_session_document_get_start_ns (self->document);
      self->visible_end = cowscope_session_document_get_end_ns (self->document);
      if (self->visible_end - self->visible_start < MIN_VISIBLE_NS)
        self->visible_end = self->visible_start + MIN_VISIBLE_NS;
      /* Not the end: by then a finished program has freed everything and
       * the sharing graph would open empty. */
      self->cursor = self->visible_start + (self->visible_end - self->visible_start) / 2;
    }
}

static void
cowscope_view_state_class_init (CowscopeViewStateClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  object_class->finalize = cowscope_view_state_finalize;
  object_class->get_property = cowscope_view_state_get_property;
  object_class->set_property = cowscope_view_state_set_property;
  object_class->constructed = cowscope_view_state_constructed;

  properties[PROP_DOCUMENT] =
    g_param_spec_object ("document", NULL, NULL, COWSCOPE_TYPE_SESSION_DOCUMENT,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  properties[PROP_VISIBLE_START] =
    g_param_spec_int64 ("visible-start", NULL, NULL, G_MININT64, G_MAXINT64, 0,
                        G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  properties[PROP_VISIBLE_END] =
    g_param_spec_int64 ("visible-end", NULL, NULL, G_MININT64, G_MAXINT64, 0,
                        G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  properties[PROP_CURSOR] =
    g_param_spec_int64 ("cursor", NULL, NULL, G_MININT64, G_MAXINT64, 0,
                        G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_RANGE_START] =
    g_param_spec_int64 ("range-start", NULL, NULL, -1, G_MAXINT64, -1,
                        G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  properties[PROP_RANGE_END] =
    g_param_spec_int64 ("range-end", NULL, NULL, -1, G_MAXINT64, -1,
                        G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  properties[PROP_SELECTED_SEQ] =
    g_param_spec_int64 ("selected-seq", NULL, NULL, -1, G_MAXINT64, -1,
                        G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  /* Emitted after cowscope_view_state_set_highlights() changed the set. */
  signals[HIGHLIGHTS_CHANGED] =
    g_signal_new ("highlights-changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL, G_TYPE_NONE, 0);
}

static void
cowscope_view_state_init (CowscopeViewState *self)
{
  self->range_start = self->range_end = -1;
  self->selected_seq = -1;
  self->highlights = g_array_new (FALSE, FALSE, sizeof (CowscopeObjectRef));
}

CowscopeViewState *
cowscope_view_state_new (CowscopeSessionDocument *document)
{
  g_return_val_if_fail (COWSCOPE_IS_SESSION_DOCUMENT (document), NULL);
  return g_object_new (COWSCOPE_TYPE_VIEW_STATE, "document", document, NULL);
}

CowscopeSessionDocument *
cowscope_view_state_get_document (CowscopeViewState *self)
{
  g_return_val_if_fail (COWSCOPE_IS_VIEW_STATE (self), NULL);
  return self->document;
}

gint64 cowscope_view_state_get_visible_start (CowscopeViewState *self) { return self->visible_start; }
gint64 cowscope_view_state_get_visible_end (CowscopeViewState *self) { return self->visible_end; }
gint64 cowscope_view_state_get_cursor (CowscopeViewState *self) { return self->cursor; }
gint64 cowscope_view_state_get_range_start (CowscopeViewState *self) { return self->range_start; }
gint64 cowscope_view_state_get_range_end (CowscopeViewState *self) { return self->range_end; }
gint64 cowscope_view_state_get_selected_seq (CowscopeViewState *self) { return self->selected_seq; }

void
cowscope_view_state_set_visible (CowscopeViewState *self, gint64 start, gint64 end)
{
  g_return_if_fail (COWSCOPE_IS_VIEW_STATE (self));
  gint64 lo = cowscope_session_document_get_start_ns (self->document);
  gint64 hi = cowscope_session_document_get_end_ns (self->document);
  if (hi - lo < MIN_VISIBLE_NS)
    hi = lo + MIN_VISIBLE_NS;
  if (end - start < MIN_VISIBLE_NS)
    end = start + MIN_VISIBLE_NS;
  /* Keep the width when the window runs past an edge: panning stops at
   * the session's bounds instead of squeezing the view. */
  if (end - start > hi - lo)
    start = lo, end = hi;
  else if (start < lo)
    end += lo - start, start = lo;
  else if (end > hi)
    start -= end - hi, end = hi;
  if (start == self->visible_start && end == self->visible_end)
    return;
  g_object_freeze_notify (G_OBJECT (self));
  if (start != self->visible_start)
    {
      self->visible_start = start;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_VISIBLE_START]);
    }
  if (end != self->visible_end)
    {
      self->visible_end = end;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_VISIBLE_END]);
    }
  g_object_thaw_notify (G_OBJECT (self));
}

void
cowscope_view_state_set_cursor (CowscopeViewState *self, gint64 t)
{
  g_return_if_fail (COWSCOPE_IS_VIEW_STATE (self));
  t = CLAMP (t, cowscope_session_document_get_start_ns (self->document),
             MAX (cowscope_session_document_get_end_ns (self->document),
                  cowscope_session_document_get_start_ns (self->document)));
  if (t == self->cursor)
    return;
  self->cursor = t;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_CURSOR]);
}

void
cowscope_view_state_set_range (CowscopeViewState *self, gint64 start, gint64 end)
{
  g_return_if_fail (COWSCOPE_IS_VIEW_STATE (self));
  if (start < 0 || end < 0 || end <= start)
    start = end = -1;
  g_object_freeze_notify (G_OBJECT (self));
  if (start != self->range_start)
    {
      self->range_start = start;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_RANGE_START]);
    }
  if (end != self->range_end)
    {
      self->range_end = end;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_RANGE_END]);
    }
  g_object_thaw_notify (G_OBJECT (self));
}

void
cowscope_view_state_set_selected_seq (CowscopeViewState *self, gint64 seq)
{
  g_return_if_fail (COWSCOPE_IS_VIEW_STATE (self));
  if (seq < 0)
    seq = -1;
  if (seq == self->selected_seq)
    return;
  self->selected_seq = seq;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SELECTED_SEQ]);
}

const CowscopeObjectRef *
cowscope_view_state_get_highlights (CowscopeViewState *self, guint *n_refs)
{
  g_return_val_if_fail (COWSCOPE_IS_VIEW_STATE (self), NULL);
  if (n_refs != NULL)
    *n_refs = self->highlights->len;
  return (const CowscopeObjectRef *) (gpointer) self->highlights->data;
}

void
cowscope_view_state_set_highlights (CowscopeViewState *self,
                                    const CowscopeObjectRef *refs, guint n_refs)
{
  g_return_if_fail (COWSCOPE_IS_VIEW_STATE (self));
  g_array_set_size (self->highlights, 0);
  if (refs != NULL && n_refs > 0)
    g_array_append_vals (self->highlights, refs, n_refs);
  g_signal_emit (self, signals[HIGHLIGHTS_CHANGED], 0);
}

gboolean
cowscope_view_state_is_highlighted (CowscopeViewState *self, guint32 pid, guint64 id)
{
  g_return_val_if_fail (COWSCOPE_IS_VIEW_STATE (self), FALSE);
  for (guint i = 0; i < self->highlights->len; i++)
    {
      const CowscopeObjectRef *ref = &g_array_index (self->highlights, CowscopeObjectRef, i);
      if (ref->pid == pid && ref->id == id)
        return TRUE;
    }
  return FALSE;
}
