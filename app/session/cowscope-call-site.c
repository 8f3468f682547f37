/* cowscope-call-site.c — the call-site rule (see header). */
#include "cowscope-call-site.h"

gboolean
cowscope_call_site_is_internal (const CowscopeFrameRef *frame)
{
  g_autofree char *base = frame->module != NULL ? g_path_get_basename (frame->module) : NULL;

  if (frame->function != NULL
      && (g_str_has_prefix (frame->function, "cow_")
          || g_str_has_prefix (frame->function, "cowscope_")))
    return TRUE;
  return base != NULL
         && (g_str_has_prefix (base, "libcowtensor")
             || g_str_has_prefix (base, "libcowscope"));
}

gboolean
cowscope_call_site_is_symbolized (const CowscopeFrameRef *frame)
{
  return frame->function != NULL || frame->file != NULL;
}

/* 3 symbolized user code, 2 user code, 1 Cowscope's own. */
static int
score (const CowscopeFrameRef *frame)
{
  if (cowscope_call_site_is_internal (frame))
    return 1;
  return cowscope_call_site_is_symbolized (frame) ? 3 : 2;
}

gint
cowscope_call_site_choose (const CowscopeFrameRef *frames, guint n_frames)
{
  gint best = -1;
  int best_score = 0;

  for (guint i = 0; i < n_frames && best_score < 3; i++)
    {
      int s = score (&frames[i]);
      if (s > best_score)
        {
          best_score = s;
          best = (gint) i;
        }
    }
  return best;
}

char *
cowscope_call_site_format (const CowscopeFrameRef *frame)
{
  if (cowscope_call_site_is_symbolized (frame))
    {
      g_autofree char *file = frame->file != NULL ? g_path_get_basename (frame->file) : NULL;
      GString *text = g_string_new (NULL);

      if (file != NULL && frame->line > 0)
        g_string_append_printf (text, "%s:%" G_GINT64_FORMAT, file, frame->line);
      else if (file != NULL)
        g_string_append (text, file);
      if (frame->function != NULL)
        g_string_append_printf (text, "%sin %s()", text->len > 0 ? " " : "", frame->function);
      return g_string_free (text, FALSE);
    }
  else
    {
      g_autofree char *module = frame->module != NULL ? g_path_get_basename (frame->module) : NULL;
      return g_strdup_printf ("0x%" G_GINT64_MODIFIER "x in %s", (gint64) frame->address,
                              module != NULL ? module : "an unknown module");
    }
}

char *
cowscope_call_site_key (const CowscopeFrameRef *frame)
{
  g_autofree char *text = cowscope_call_site_format (frame);
  gboolean symbolized = cowscope_call_site_is_symbolized (frame);

  return g_strdup_printf ("%s\x1f%s\x1f%" G_GINT64_FORMAT "\x1f%s\x1f%" G_GINT64_FORMAT, text,
                          frame->file != NULL ? frame->file : "", MAX (frame->line, 0),
                          frame->module != NULL ? frame->module : "",
                          symbolized ? (gint64) 0 : (gint64) frame->address);
}
