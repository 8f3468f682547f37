/* main.c — the `cowscope` executable: sets up translations, runs the app. */
#include "cowscope-config.h"

#include <glib/gi18n.h>
#include <locale.h>

#include "cowscope-application.h"
#include "cowscope-install-dirs.h"

/* Returns the application's exit status. */
int
main (int   argc,
      char *argv[])
{
  g_autoptr(CowscopeApplication) app = NULL;
  g_autofree char *localedir = cowscope_install_dirs_find (COWSCOPE_INSTALL_DIR_LOCALE, NULL);

  setlocale (LC_ALL, "");
  if (localedir == NULL)
    localedir = cowscope_install_dirs_configured (COWSCOPE_INSTALL_DIR_LOCALE, NULL);
  bindtextdomain (GETTEXT_PACKAGE, localedir);
  bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
  textdomain (GETTEXT_PACKAGE);

  app = cowscope_application_new ();
  return g_application_run (G_APPLICATION (app), argc, argv);
}
