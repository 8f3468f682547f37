/* cowscope-application.h — the Cowscope application (single instance). */
#pragma once

#include <adwaita.h>

G_BEGIN_DECLS

#define COWSCOPE_TYPE_APPLICATION (cowscope_application_get_type ())

G_DECLARE_FINAL_TYPE (CowscopeApplication, cowscope_application, COWSCOPE, APPLICATION, AdwApplication)

CowscopeApplication *cowscope_application_new          (void);
GSettings           *cowscope_application_get_settings (CowscopeApplication *self);
void                 cowscope_application_open_files   (CowscopeApplication *self,
                                                        GFile              **files,
                                                        guint                n_files,
                                                        GtkWindow           *from);
void                 cowscope_application_add_recent   (CowscopeApplication *self,
                                                        GFile               *file);
GVariant            *cowscope_application_parse_record_command_line (const char * const  *argv,
                                                                     GError             **error);

G_END_DECLS
