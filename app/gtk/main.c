/* main.c — the `cowscope` executable: sets up translations, runs the app. */
#include "cowscope-config.h"

#include <glib/gi18n.h>
#include <locale.h>

#include "cowscope-application.h"

/* Returns the application's exit status. */
int
main (int   argc,
      char *argv[])
{
  g_autoptr(CowscopeApplication) app = NULL;

  setlocale (LC_ALL, "");
  bindtextdomain (GETTEXT_PACKAGE, LOCALEDIR);
  bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
  textdomain (GETTEXT_PACKAGE);

  app = cowscope_application_new ();
  return g_application_run (G_APPLICATION (app), argc, argv);
}
