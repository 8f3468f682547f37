/* cowscope-record-dialog.h — the launch dialog: what to record and how. */
#pragma once

#include <adwaita.h>

G_BEGIN_DECLS

#define COWSCOPE_TYPE_RECORD_DIALOG (cowscope_record_dialog_get_type ())

G_DECLARE_FINAL_TYPE (CowscopeRecordDialog, cowscope_record_dialog, COWSCOPE, RECORD_DIALOG, AdwWindow)

CowscopeRecordDialog *cowscope_record_dialog_new           (GtkWindow            *parent,
                                                            GSettings            *settings);
void                  cowscope_record_dialog_set_program   (CowscopeRecordDialog *self,
                                                            const char           *program);
void                  cowscope_record_dialog_set_arguments (CowscopeRecordDialog *self,
                                                            const char           *arguments);
void                  cowscope_record_dialog_set_output    (CowscopeRecordDialog *self,
                                                            const char           *output);
const char           *cowscope_record_dialog_get_error     (CowscopeRecordDialog *self);

G_END_DECLS
