/* cowscope-event-steps.h — stepping through the events of selected
 * objects in time: the next or previous one after a point, of some kinds.
 *
 * The timeline's keys ("next copy of the selected object", "previous
 * warning", the tensor search's next and previous match) step through a
 * list of CowscopeObjectEvent.  Where the person is: the selected event
 * when the list holds it, else the cursor instant. */
#pragma once

#include <glib.h>

#include "cowscope-object-events.h"

G_BEGIN_DECLS

/* Sets of CowscopeItemKind, as bit masks. */
#define COWSCOPE_STEP_ANY G_MAXUINT32
/* Copies: materializations that copied (or failed to), eager copies. */
#define COWSCOPE_STEP_COPIES                                                                \
  ((1u << COWSCOPE_ITEM_COPY) | (1u << COWSCOPE_ITEM_EAGER_COPY)                            \
   | (1u << COWSCOPE_ITEM_MATERIALIZE_FAILED))
#define COWSCOPE_STEP_WARNINGS (1u << COWSCOPE_ITEM_VIOLATION)

/* Sorts @events (CowscopeObjectEvent) by start time, then seq: the order
 * of steps. */
void cowscope_event_steps_sort (GArray *events);

/* The index in @events (sorted as above) of the first event of a kind in
 * @kinds after the point (@direction > 0) or the last one before it
 * (@direction < 0), or -1 when there is none.  The point is event
 * @selected_seq when @events holds it; else the instant @cursor_ns (an
 * event starting at the cursor counts as after it). */
int cowscope_event_steps_find (GArray *events, gint64 selected_seq, gint64 cursor_ns,
                               int direction, guint32 kinds);

G_END_DECLS
