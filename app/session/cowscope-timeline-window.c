/* cowscope-timeline-window.c — one lane's items for one window. */
#include "cowscope-timeline-window.h"

struct _CowscopeTimelineWindow {
  GObject parent_instance;
  gint64 t0, t1;
  guint width;
  GArray *items;
  GArray *spans;
  GArray *samples;
};

G_DEFINE_FINAL_TYPE (CowscopeTimelineWindow, cowscope_timeline_window, G_TYPE_OBJECT)

static void
cowscope_timeline_window_finalize (GObject *object)
{
  CowscopeTimelineWindow *self = COWSCOPE_TIMELINE_WINDOW (object);
  g_clear_pointer (&self->items, g_array_unref);
  g_clear_pointer (&self->spans, g_array_unref);
  g_clear_pointer (&self->samples, g_array_unref);
  G_OBJECT_CLASS (cowscope_timeline_window_parent_class)->finalize (object);
}

static void
cowscope_timeline_window_class_init (CowscopeTimelineWindowClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = cowscope_timeline_window_finalize;
}

static void
cowscope_timeline_window_init (CowscopeTimelineWindow *self)
{
  (void) self;
}

/* Takes @items, @spans and @samples (any may be NULL: empty). */
CowscopeTimelineWindow *
cowscope_timeline_window_new (gint64 t0, gint64 t1, guint width, GArray *items,
                              GArray *spans, GArray *samples)
{
  CowscopeTimelineWindow *self = g_object_new (COWSCOPE_TYPE_TIMELINE_WINDOW, NULL);
  self->t0 = t0;
  self->t1 = t1;
  self->width = width;
  self->items = items ? items : g_array_new (FALSE, FALSE, sizeof (CowscopeTimelineItem));
  self->spans = spans ? spans : g_array_new (FALSE, FALSE, sizeof (CowscopeTimelineItem));
  self->samples = samples ? samples : g_array_new (FALSE, FALSE, sizeof (CowscopeCounterSample));
  return self;
}

/* The window's start (inclusive). */
gint64
cowscope_timeline_window_get_start (CowscopeTimelineWindow *self)
{
  g_return_val_if_fail (COWSCOPE_IS_TIMELINE_WINDOW (self), 0);
  return self->t0;
}

/* The window's end (exclusive). */
gint64
cowscope_timeline_window_get_end (CowscopeTimelineWindow *self)
{
  g_return_val_if_fail (COWSCOPE_IS_TIMELINE_WINDOW (self), 0);
  return self->t1;
}

/* The pixel count the window was split into. */
guint
cowscope_timeline_window_get_width (CowscopeTimelineWindow *self)
{
  g_return_val_if_fail (COWSCOPE_IS_TIMELINE_WINDOW (self), 0);
  return self->width;
}

/* The items, valid as long as @self. */
const CowscopeTimelineItem *
cowscope_timeline_window_get_items (CowscopeTimelineWindow *self, guint *n_items)
{
  g_return_val_if_fail (COWSCOPE_IS_TIMELINE_WINDOW (self), NULL);
  if (n_items)
    *n_items = self->items->len;
  return (const CowscopeTimelineItem *) self->items->data;
}

/* The spans, valid as long as @self. */
const CowscopeTimelineItem *
cowscope_timeline_window_get_spans (CowscopeTimelineWindow *self, guint *n_spans)
{
  g_return_val_if_fail (COWSCOPE_IS_TIMELINE_WINDOW (self), NULL);
  if (n_spans)
    *n_spans = self->spans->len;
  return (const CowscopeTimelineItem *) self->spans->data;
}

/* The counter samples, valid as long as @self. */
const CowscopeCounterSample *
cowscope_timeline_window_get_samples (CowscopeTimelineWindow *self, guint *n_samples)
{
  g_return_val_if_fail (COWSCOPE_IS_TIMELINE_WINDOW (self), NULL);
  if (n_samples)
    *n_samples = self->samples->len;
  return (const CowscopeCounterSample *) self->samples->data;
}

/* Sum of the item counts. */
guint64
cowscope_timeline_window_get_total_count (CowscopeTimelineWindow *self)
{
  g_return_val_if_fail (COWSCOPE_IS_TIMELINE_WINDOW (self), 0);
  guint64 total = 0;
  for (guint i = 0; i < self->items->len; i++)
    total += g_array_index (self->items, CowscopeTimelineItem, i).count;
  return total;
}
