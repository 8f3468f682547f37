/* cowscope-export-dialog.h — the window's export: a session in other formats. */
#pragma once

#include <adwaita.h>

G_BEGIN_DECLS

typedef enum {
  COWSCOPE_EXPORT_FORMAT_SESSION, /* a compacted copy of the database */
  COWSCOPE_EXPORT_FORMAT_CHROME,  /* Chrome / Perfetto trace JSON */
  COWSCOPE_EXPORT_FORMAT_CSV,     /* a folder of CSV files */
} CowscopeExportFormat;

#define COWSCOPE_TYPE_EXPORT_DIALOG (cowscope_export_dialog_get_type ())

G_DECLARE_FINAL_TYPE (CowscopeExportDialog, cowscope_export_dialog, COWSCOPE, EXPORT_DIALOG, AdwWindow)

CowscopeExportDialog *cowscope_export_dialog_new        (GtkWindow            *parent,
                                                         GFile                *session);
void                  cowscope_export_dialog_set_format (CowscopeExportDialog *self,
                                                         CowscopeExportFormat  format);
CowscopeExportFormat  cowscope_export_dialog_get_format (CowscopeExportDialog *self);
void                  cowscope_export_dialog_export_to  (CowscopeExportDialog *self,
                                                         GFile                *destination);
gboolean              cowscope_export_dialog_is_busy    (CowscopeExportDialog *self);

G_END_DECLS
