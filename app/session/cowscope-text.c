/* cowscope-text.c — escaping strings for text output (see header). */
#include "cowscope-text.h"

#include <string.h>

/* TRUE for the characters that are written out as escapes. */
static gboolean
is_unsafe (gunichar c)
{
  if (c < 0x20 || (c >= 0x7f && c <= 0x9f))
    return TRUE;
  switch (c)
    {
    case 0x061c:                  /* Arabic letter mark */
    case 0x200e: case 0x200f:     /* left-to-right and right-to-left marks */
    case 0x2028: case 0x2029:     /* line and paragraph separators */
      return TRUE;
    default:
      /* Embeddings and overrides (U+202A..E), isolates (U+2066..9). */
      return (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069);
    }
}

gboolean
cowscope_text_needs_escape (const char *text)
{
  if (text == NULL)
    return FALSE;
  if (!g_utf8_validate (text, -1, NULL))
    return TRUE;
  for (const char *p = text; *p != '\0'; p = g_utf8_next_char (p))
    if (is_unsafe (g_utf8_get_char (p)))
      return TRUE;
  return FALSE;
}

char *
cowscope_text_escape (const char *text)
{
  if (text == NULL)
    return NULL;
  if (!cowscope_text_needs_escape (text))
    return g_strdup (text);

  g_autofree char *valid = g_utf8_make_valid (text, -1);
  GString *out = g_string_sized_new (strlen (valid) + 16);
  for (const char *p = valid; *p != '\0'; p = g_utf8_next_char (p))
    {
      gunichar c = g_utf8_get_char (p);
      if (!is_unsafe (c))
        g_string_append_len (out, p, g_utf8_next_char (p) - p);
      else if (c == '\n')
        g_string_append (out, "\\n");
      else if (c == '\r')
        g_string_append (out, "\\r");
      else if (c == '\t')
        g_string_append (out, "\\t");
      else if (c < 0x80)
        g_string_append_printf (out, "\\x%02x", c);
      else
        g_string_append_printf (out, "\\u%04x", c);
    }
  return g_string_free (out, FALSE);
}
