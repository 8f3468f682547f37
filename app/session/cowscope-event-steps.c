/* cowscope-event-steps.c — see cowscope-event-steps.h. */
#include "cowscope-event-steps.h"

static int
compare_steps (gconstpointer a, gconstpointer b)
{
  const CowscopeObjectEvent *x = a, *y = b;
  if (x->start_ns != y->start_ns)
    return x->start_ns < y->start_ns ? -1 : 1;
  return (x->seq > y->seq) - (x->seq < y->seq);
}

void
cowscope_event_steps_sort (GArray *events)
{
  g_return_if_fail (events != NULL);
  g_array_sort (events, compare_steps);
}

/* Does @ev come after the point (@t, @seq)?  Seq G_MININT64 stands for
 * "the instant itself": an event at @t comes after it. */
static gboolean
after (const CowscopeObjectEvent *ev, gint64 t, gint64 seq)
{
  return ev->start_ns > t || (ev->start_ns == t && ev->seq > seq);
}

int
cowscope_event_steps_find (GArray *events, gint64 selected_seq, gint64 cursor_ns,
                           int direction, guint32 kinds)
{
  g_return_val_if_fail (events != NULL, -1);
  gint64 t = cursor_ns, seq = G_MININT64;
  for (guint i = 0; selected_seq >= 0 && i < events->len; i++)
    {
      const CowscopeObjectEvent *ev = &g_array_index (events, CowscopeObjectEvent, i);
      if (ev->seq == selected_seq)
        {
          t = ev->start_ns, seq = ev->seq;
          break;
        }
    }
  if (direction > 0)
    {
      for (guint i = 0; i < events->len; i++)
        {
          const CowscopeObjectEvent *ev = &g_array_index (events, CowscopeObjectEvent, i);
          if ((kinds & (1u << ev->kind)) != 0 && after (ev, t, seq))
            return (int) i;
        }
      return -1;
    }
  for (guint i = events->len; i-- > 0;)
    {
      const CowscopeObjectEvent *ev = &g_array_index (events, CowscopeObjectEvent, i);
      if ((kinds & (1u << ev->kind)) != 0 && !after (ev, t, seq) && ev->seq != seq)
        return (int) i;
    }
  return -1;
}
