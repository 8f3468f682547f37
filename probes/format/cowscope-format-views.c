/* cowscope-format-views.c — the embedded session views (see header). */
#include "cowscope-format-views.h"

#include <string.h>

/* session-views.sql, embedded by meson.build. */
extern const char cowscope_format_views_sql_text[];

/* Every view is defined by a line "CREATE VIEW name AS". */
#define CREATE_VIEW "CREATE VIEW "

const char *
cowscope_format_views_sql (void)
{
  return cowscope_format_views_sql_text;
}

const char *const *
cowscope_format_view_names (void)
{
  static gsize names;
  if (g_once_init_enter (&names))
    {
      GPtrArray *found = g_ptr_array_new ();
      for (const char *p = cowscope_format_views_sql_text; (p = strstr (p, CREATE_VIEW)) != NULL;)
        {
          gboolean line_start = p == cowscope_format_views_sql_text || p[-1] == '\n';
          p += strlen (CREATE_VIEW);
          if (!line_start)
            continue;
          gsize n = strspn (p, "abcdefghijklmnopqrstuvwxyz_");
          g_assert (n > 0);
          g_ptr_array_add (found, g_strndup (p, n));
        }
      g_assert (found->len > 0);
      g_ptr_array_add (found, NULL);
      g_once_init_leave (&names, (gsize) g_ptr_array_free (found, FALSE));
    }
  return (const char *const *) names;
}

gboolean
cowscope_format_create_views (sqlite3 *db)
{
  GString *drop = g_string_new (NULL);
  for (const char *const *name = cowscope_format_view_names (); *name != NULL; name++)
    g_string_append_printf (drop, "DROP VIEW IF EXISTS main.%s;", *name);
  gboolean ok = sqlite3_exec (db, drop->str, NULL, NULL, NULL) == SQLITE_OK
                && sqlite3_exec (db, cowscope_format_views_sql_text, NULL, NULL, NULL) == SQLITE_OK;
  g_string_free (drop, TRUE);
  return ok;
}

gboolean
cowscope_format_create_temp_views (sqlite3 *db)
{
  g_auto (GStrv) parts = g_strsplit (cowscope_format_views_sql_text, "\n" CREATE_VIEW, -1);
  g_autofree char *sql = g_strjoinv ("\nCREATE TEMP VIEW IF NOT EXISTS ", parts);
  return sqlite3_exec (db, sql, NULL, NULL, NULL) == SQLITE_OK;
}
