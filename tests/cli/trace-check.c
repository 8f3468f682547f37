/* trace-check.c — properties of an exported Chrome trace (see header). */
#include "trace-check.h"

#include <math.h>
#include <string.h>

/* The names the export gives its own slices and instants. */
static const char *const own_names[] = {
  "copy", "steal", "failed copy", "materialization", "lazy clone", "eager clone",
  "simulate-mode warning", "ipc send", "ipc receive", "ipc release", "ipc held", "ipc limbo",
  "memset", "kernel", "memory_alloc", "memory_free", NULL,
};

typedef struct {
  gint64 start, end;
} Span;

gint64
trace_check_ns (JsonObject *event, const char *member)
{
  return (gint64) llround (json_object_get_double_member (event, member) * 1000.0);
}

static char *
thread_key (JsonObject *event)
{
  return g_strdup_printf ("%" G_GINT64_FORMAT "/%" G_GINT64_FORMAT,
                          json_object_get_int_member (event, "pid"),
                          json_object_get_int_member_with_default (event, "tid", -1));
}

static gint
compare_spans (gconstpointer a, gconstpointer b)
{
  const Span *x = a, *y = b;
  if (x->start != y->start)
    return x->start < y->start ? -1 : 1;
  /* Of two slices starting together, the longer one encloses. */
  return x->end > y->end ? -1 : x->end < y->end ? 1 : 0;
}

/* Slices of one thread nest like calls. */
static void
assert_nested (const char *thread, GArray *spans)
{
  g_autoptr (GArray) open = g_array_new (FALSE, FALSE, sizeof (Span));

  g_array_sort (spans, compare_spans);
  for (guint i = 0; i < spans->len; i++)
    {
      Span *s = &g_array_index (spans, Span, i);
      while (open->len > 0 && g_array_index (open, Span, open->len - 1).end <= s->start)
        g_array_set_size (open, open->len - 1);
      if (open->len > 0 && s->end > g_array_index (open, Span, open->len - 1).end)
        g_error ("thread %s: slice [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT "] ends after"
                 " [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT "], which it starts in",
                 thread, s->start, s->end, g_array_index (open, Span, open->len - 1).start,
                 g_array_index (open, Span, open->len - 1).end);
      g_array_append_val (open, *s);
    }
}

/* TRUE when a slice of @spans has @ts strictly inside it. */
static gboolean
strictly_inside (GArray *spans, gint64 ts)
{
  for (guint i = 0; spans != NULL && i < spans->len; i++)
    {
      Span *s = &g_array_index (spans, Span, i);
      if (s->start < ts && ts < s->end)
        return TRUE;
    }
  return FALSE;
}

TraceCheckCounts
trace_check_properties (JsonArray *events, const char *const *user_names)
{
  TraceCheckCounts counts = { 0 };
  g_autoptr (GHashTable) spans =
    g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) g_array_unref);
  g_autoptr (GHashTable) process_names = g_hash_table_new (g_int64_hash, g_int64_equal);
  g_autoptr (GHashTable) flows = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr (GHashTable) async = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  guint n = json_array_get_length (events);

  for (guint i = 0; i < n; i++)
    {
      JsonObject *e = json_array_get_object_element (events, i);
      const char *ph = json_object_get_string_member (e, "ph");
      const char *name = json_object_get_string_member_with_default (e, "name", NULL);
      const char *cat = json_object_get_string_member_with_default (e, "cat", "");
      JsonObject *args = json_object_has_member (e, "args")
                           ? json_object_get_object_member (e, "args") : NULL;

      g_assert_nonnull (name);
      if (strcmp (ph, "M") == 0)
        {
          if (strcmp (name, "process_name") == 0)
            {
              gint64 *pid = g_new (gint64, 1);
              *pid = json_object_get_int_member (e, "pid");
              if (g_hash_table_contains (process_names, pid))
                g_error ("pid %" G_GINT64_FORMAT " is named twice", *pid);
              g_hash_table_add (process_names, pid);
            }
          continue;
        }
      if (strcmp (ph, "C") == 0)
        continue;
      if (strcmp (ph, "s") == 0 || strcmp (ph, "f") == 0)
        {
          g_assert_true (strcmp (cat, "lazy_copy_flow") == 0 || strcmp (cat, "cuda_flow") == 0);
          g_autofree char *key = g_strdup_printf ("%s/%" G_GINT64_FORMAT "/%s", cat,
                                                  json_object_get_int_member (e, "id"), ph);
          if (g_hash_table_contains (flows, key))
            g_error ("flow %s appears twice", key);
          g_hash_table_add (flows, g_steal_pointer (&key));
          if (ph[0] == 'f')
            g_assert_cmpstr (json_object_get_string_member (e, "bp"), ==, "e");
          continue;
        }

      /* A slice, an instant or an async begin/end: a stable name. */
      if (strcmp (cat, "engine") == 0)
        {
          /* An engine operation's name ("to", "copy_"). */
          if (!g_regex_match_simple ("^[a-z_]+$", name, 0, 0))
            g_error ("engine slice name '%s' is no operation", name);
        }
      else if (!g_strv_contains (own_names, name) && !g_str_has_prefix (name, "memcpy ")
               && (user_names == NULL || !g_strv_contains (user_names, name)))
        g_error ("slice name '%s' (cat %s) is not a stable name", name, cat);
      if (args != NULL && json_object_has_member (args, "stack"))
        {
          JsonArray *stack = json_object_get_array_member (args, "stack");
          g_assert_cmpuint (json_array_get_length (stack), >, 0);
          for (guint k = 0; k < json_array_get_length (stack); k++)
            g_assert_nonnull (json_array_get_string_element (stack, k));
          g_assert_nonnull (json_object_get_string_member (args, "call_site"));
          counts.stacks++;
        }
      if (strcmp (ph, "X") == 0)
        {
          g_autofree char *thread = thread_key (e);
          GArray *list = g_hash_table_lookup (spans, thread);
          Span s = { trace_check_ns (e, "ts"), 0 };
          s.end = s.start + trace_check_ns (e, "dur");
          if (list == NULL)
            {
              list = g_array_new (FALSE, FALSE, sizeof (Span));
              g_hash_table_insert (spans, g_strdup (thread), list);
            }
          g_array_append_val (list, s);
          counts.slices++;
          if (strcmp (name, "copy") == 0 || strcmp (name, "steal") == 0)
            g_assert_true (json_object_has_member (args, "seq"));
        }
      else if (strcmp (ph, "b") == 0 || strcmp (ph, "e") == 0)
        {
          g_autofree char *key = g_strdup_printf ("%s/%" G_GINT64_FORMAT "/%s", name,
                                                  json_object_get_int_member (e, "pid"),
                                                  json_object_get_string_member (e, "id"));
          gpointer count = g_hash_table_lookup (async, key);
          g_hash_table_replace (async, g_steal_pointer (&key),
                                GINT_TO_POINTER (GPOINTER_TO_INT (count)
                                                 + (ph[0] == 'b' ? 1 : -1)));
        }
      else
        g_assert_true (strcmp (ph, "i") == 0);
    }

  /* Flows: a start and an end each, strictly inside a slice of their
   * thread. */
  for (guint i = 0; i < n; i++)
    {
      JsonObject *e = json_array_get_object_element (events, i);
      const char *ph = json_object_get_string_member (e, "ph");
      if (strcmp (ph, "s") != 0 && strcmp (ph, "f") != 0)
        continue;
      const char *cat = json_object_get_string_member (e, "cat");
      g_autofree char *other = g_strdup_printf ("%s/%" G_GINT64_FORMAT "/%s", cat,
                                                json_object_get_int_member (e, "id"),
                                                ph[0] == 's' ? "f" : "s");
      if (!g_hash_table_contains (flows, other))
        g_error ("flow %s has no other end", other);
      g_autofree char *thread = thread_key (e);
      gint64 ts = trace_check_ns (e, "ts");
      if (!strictly_inside (g_hash_table_lookup (spans, thread), ts))
        g_error ("flow %s %s at %" G_GINT64_FORMAT " ns on thread %s is inside no slice", cat,
                 ph, ts, thread);
      if (ph[0] == 's')
        {
          if (strcmp (cat, "lazy_copy_flow") == 0)
            counts.lazy_flows++;
          else
            counts.cuda_flows++;
        }
    }

  /* Async slices end; thread slices nest. */
  {
    GHashTableIter iter;
    gpointer key, value;
    g_hash_table_iter_init (&iter, async);
    while (g_hash_table_iter_next (&iter, &key, &value))
      if (GPOINTER_TO_INT (value) != 0)
        g_error ("async slice %s: %d more begins than ends", (char *) key, GPOINTER_TO_INT (value));
    g_hash_table_iter_init (&iter, spans);
    while (g_hash_table_iter_next (&iter, &key, &value))
      assert_nested (key, value);
  }
  {
    GHashTableIter iter;
    gpointer pid;
    g_hash_table_iter_init (&iter, process_names);
    while (g_hash_table_iter_next (&iter, &pid, NULL))
      g_free (pid);
  }
  return counts;
}
