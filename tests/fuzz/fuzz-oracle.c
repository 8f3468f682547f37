/* fuzz-oracle.c — the fuzzers' idea of a correct result (see header). */
#include "fuzz-oracle.h"

#include <string.h>

#include "cowscope-format-error.h"

/* Member @name of @object as an integer; FALSE when absent or not one. */
static gboolean
get_int (JsonObject *object, const char *name, gint64 *value)
{
  JsonNode *node = object != NULL ? json_object_get_member (object, name) : NULL;
  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node)
      || json_node_get_value_type (node) != G_TYPE_INT64)
    return FALSE;
  *value = json_node_get_int (node);
  return TRUE;
}

/* Sums member @name over the objects of @array into *@sum; FALSE (with
 * *@why) when one is negative or the sum overflows. */
static gboolean
sum_members (JsonArray *array, const char *name, gint64 *sum, char **why)
{
  *sum = 0;
  for (guint i = 0; array != NULL && i < json_array_get_length (array); i++)
    {
      gint64 v = 0;
      if (!get_int (json_array_get_object_element (array, i), name, &v) || v < 0
          || v > G_MAXINT64 - *sum)
        {
          *why = g_strdup_printf ("%s of element %u is %" G_GINT64_FORMAT
                                  " (missing, negative or overflowing)", name, i, v);
          return FALSE;
        }
      *sum += v;
    }
  return TRUE;
}

char *
fuzz_oracle_check_report (JsonObject *report)
{
  JsonObject *m = json_object_get_object_member (report, "metrics");
  JsonObject *cuda = json_object_get_object_member (report, "cuda");
  JsonObject *events = json_object_get_object_member (report, "events");
  char *why = NULL;
  gint64 v, shared = 0, copied = 0, saved = 0, sum;

  if (m == NULL || cuda == NULL || events == NULL)
    return g_strdup ("metrics, cuda or events missing");
  JsonObjectIter iter;
  const char *name;
  JsonNode *node;
  json_object_iter_init (&iter, m);
  while (json_object_iter_next (&iter, &name, &node))
    {
      if (!get_int (m, name, &v))
        return g_strdup_printf ("metric %s is not an integer", name);
      if (v < 0 && strcmp (name, "saved_bytes") != 0)
        return g_strdup_printf ("metric %s = %" G_GINT64_FORMAT " < 0", name, v);
    }
  get_int (m, "shared_bytes", &shared);
  get_int (m, "copied_bytes", &copied);
  get_int (m, "saved_bytes", &saved);
  if (saved != shared - copied)
    return g_strdup_printf ("saved_bytes %" G_GINT64_FORMAT " != shared %" G_GINT64_FORMAT
                            " - copied %" G_GINT64_FORMAT, saved, shared, copied);
  if (get_int (m, "duration_ns", &v) && v > (G_GINT64_CONSTANT (1) << 62))
    return g_strdup_printf ("duration_ns %" G_GINT64_FORMAT " is beyond any recording", v);
  for (const char *const *k = (const char *const[]) { "produced", "stored", "dropped",
                                                      "malformed_records", NULL };
       *k != NULL; k++)
    if (!get_int (events, *k, &v) || v < 0)
      return g_strdup_printf ("events.%s is missing or negative", *k);

  /* The parts add up to their totals. */
  struct {
    const char *array, *member, *metric;
    JsonObject *parent;
    gboolean whole; /* all of them are listed (else: a top few) */
  } sums[] = {
    { "eager_fallbacks", "count", "eager_fallbacks", report, TRUE },
    { "eager_fallbacks", "bytes", "eager_bytes", report, TRUE },
    { "copies_by_kind", "count", "cuda_copies", cuda, TRUE },
    { "copies_by_kind", "bytes", "cuda_copy_bytes", cuda, TRUE },
    { "top_ops", "copies", "copies", report, FALSE },
    { "top_ops", "copied_bytes", "copied_bytes", report, FALSE },
    { "top_ops", "steals", "steals", report, FALSE },
    { "top_ops", "stolen_bytes", "stolen_bytes", report, FALSE },
    { "top_call_sites", "copies", "copies", report, FALSE },
    { "top_call_sites", "bytes", "copied_bytes", report, FALSE },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (sums); i++)
    {
      JsonArray *array = json_object_get_array_member (sums[i].parent, sums[i].array);
      gint64 total = 0;
      if (!sum_members (array, sums[i].member, &sum, &why))
        return why;
      get_int (m, sums[i].metric, &total);
      if (sums[i].whole ? sum != total : sum > total)
        return g_strdup_printf ("%s.%s add up to %" G_GINT64_FORMAT ", %s is %" G_GINT64_FORMAT,
                                sums[i].array, sums[i].member, sum, sums[i].metric, total);
    }
  JsonArray *processes = json_object_get_array_member (report, "processes");
  if (!sum_members (processes, "threads", &sum, &why))
    return why;

  gint64 start, end;
  if (get_int (report, "start_ns", &start) && get_int (report, "end_ns", &end)
      && (start < 0 || end < start))
    return g_strdup_printf ("start_ns %" G_GINT64_FORMAT " > end_ns %" G_GINT64_FORMAT, start,
                            end);
  return NULL;
}

char *
fuzz_oracle_check_text (const char *text)
{
  for (const char *p = text; *p != '\0'; p++)
    {
      unsigned char c = (unsigned char) *p;
      if ((c < 0x20 && c != '\n') || c == 0x7f)
        return g_strdup_printf ("control character 0x%02x at offset %td", c, p - text);
    }
  if (strstr (text, "\xe2\x80\xae") != NULL || strstr (text, "\xc2\x9b") != NULL)
    return g_strdup ("a bidirectional override or CSI reaches the terminal");
  return NULL;
}

char *
fuzz_oracle_check_refusal (const GError *error, const char *path)
{
  static const char *const raw[] = {
    "unrecognized token", "syntax error", "malformed database schema", "incomplete input",
  };
  if (error == NULL)
    return g_strdup ("refused without an error");
  if (error->domain != COWSCOPE_SESSION_ERROR && error->domain != G_FILE_ERROR)
    return g_strdup_printf ("error of domain %s: %s", g_quark_to_string (error->domain),
                            error->message);
  if (strstr (error->message, path) == NULL)
    return g_strdup_printf ("the message does not name the file: %s", error->message);
  for (gsize i = 0; i < G_N_ELEMENTS (raw); i++)
    if (strstr (error->message, raw[i]) != NULL)
      return g_strdup_printf ("SQLite's raw message: %s", error->message);
  return NULL;
}
