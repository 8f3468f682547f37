/* cowscope-recording-page.h — what a window shows while a target records. */
#pragma once

#include <adwaita.h>

#include "cowscope-graph-view.h"
#include "cowscope-timeline-view.h"

G_BEGIN_DECLS

/* Where a recording page is, in order (its "phase" property). */
typedef enum {
  COWSCOPE_RECORDING_PHASE_RECORDING,  /* the target runs */
  COWSCOPE_RECORDING_PHASE_FINALIZING, /* it ended; the recorder finalizes */
  COWSCOPE_RECORDING_PHASE_OPENING,    /* the finalized session loads */
  COWSCOPE_RECORDING_PHASE_DONE,       /* shown in the window (or failed) */
} CowscopeRecordingPhase;

#define COWSCOPE_TYPE_RECORDING_PHASE (cowscope_recording_phase_get_type ())
GType cowscope_recording_phase_get_type (void);

#define COWSCOPE_TYPE_RECORDING_PAGE (cowscope_recording_page_get_type ())

G_DECLARE_FINAL_TYPE (CowscopeRecordingPage, cowscope_recording_page, COWSCOPE, RECORDING_PAGE, AdwBin)

CowscopeRecordingPage *cowscope_recording_page_record     (GtkWindow             *from,
                                                           const char * const    *argv,
                                                           const char            *working_directory,
                                                           const char * const    *environment,
                                                           gboolean               cuda,
                                                           gboolean               stacks,
                                                           gboolean               block);
CowscopeRecordingPage *cowscope_recording_page_record_to  (GtkWindow             *from,
                                                           const char * const    *argv,
                                                           const char            *working_directory,
                                                           const char * const    *environment,
                                                           const char            *output,
                                                           gboolean               force,
                                                           gboolean               cuda,
                                                           gboolean               stacks,
                                                           gboolean               block);
void                   cowscope_recording_page_stop       (CowscopeRecordingPage *self);
gboolean               cowscope_recording_page_is_running (CowscopeRecordingPage *self);
guint64                cowscope_recording_page_get_events_stored (CowscopeRecordingPage *self);
char                  *cowscope_recording_page_get_output (CowscopeRecordingPage *self);
CowscopeRecordingPhase cowscope_recording_page_get_phase  (CowscopeRecordingPage *self);
const char            *cowscope_recording_page_get_session_path (CowscopeRecordingPage *self);
const char            *cowscope_recording_page_get_title  (CowscopeRecordingPage *self);
double                 cowscope_recording_page_get_progress (CowscopeRecordingPage *self);
char                  *cowscope_recording_page_find_demo  (void);
CowscopeTimelineView  *cowscope_recording_page_get_timeline_view (CowscopeRecordingPage *self);
CowscopeGraphView     *cowscope_recording_page_get_graph_view (CowscopeRecordingPage *self);
guint                  cowscope_recording_page_get_live_updates (CowscopeRecordingPage *self);

G_END_DECLS
