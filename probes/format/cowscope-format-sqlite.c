/* cowscope-format-sqlite.c — registering the session's SQL modules (see
 * header). */
#include <glib.h>

#include "cowscope-format-sqlite.h"

#include "cowscope-events-vtab.h"

int
cowscope_format_register_sqlite (sqlite3 *db)
{
  return cowscope_events_vtab_register (db);
}

static int
register_on_open (sqlite3 *db, const char **error, const struct sqlite3_api_routines *api)
{
  (void) error;
  (void) api;
  return cowscope_format_register_sqlite (db);
}

void
cowscope_format_register_everywhere (void)
{
  static gsize done;
  if (g_once_init_enter (&done))
    {
      sqlite3_auto_extension ((void (*) (void)) register_on_open);
      g_once_init_leave (&done, 1);
    }
}
