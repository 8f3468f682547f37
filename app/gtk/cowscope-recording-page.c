/* cowscope-recording-page.c — what a window shows while a target records.
 *
 * The target's command, the time since it started, live counters (events
 * recorded and dropped, processes, threads) refreshed every 100 ms from
 * the recorder's progress, the copy timeline and the storage sharing
 * graph of what has been recorded so far (a CowscopeLiveSession reads the
 * session while it is written and delivers a snapshot every 200 ms, with
 * per-type counts: lazy clones, copies, steals, bytes copied), the
 * target's stdout and stderr in a monospace panel, and a Stop button that
 * stops the target as Ctrl+C would.
 *
 * The live timeline follows the recording (its window grows with it)
 * until the user zooms or pans; the graph shows the newest state.  Just
 * before the recorder finalizes the session, its thread has the live
 * reader read what is left, deliver a last snapshot and let go of the
 * database (the recorder's `finalizing` hook): so even a program too
 * short for a first snapshot is shown.
 *
 * The recorder (cowscope_record, blocking) runs in a GTask thread: it
 * spawns the target, drains its rings and, when the target ends,
 * finalizes the session, all off the main loop.  Its progress callback
 * only copies counters under a mutex; the main loop reads them from a
 * timer.  The target's output comes through a pipe read asynchronously.
 *
 * The page stays until the session is shown in its place, through the
 * phases of the "phase" property: recording; finalizing (the target
 * ended: a pulsing bar, as the recorder reports no progress then);
 * opening (once the recording and the output are done: the page loads
 * the session, with a bar that fills as it loads); done (the window
 * shows the session, with a toast that says how the target ended, or
 * why it cannot be opened).  A recorder failure becomes the window's
 * error page.  The application is held until then, so closing the last
 * window first stops the target and lets the recorder finish.
 */
#include "cowscope-config.h"

#include <fcntl.h>
#include <gio/gunixinputstream.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

#include "cowscope-graph-view.h"
#include "cowscope-install-dirs.h"
#include "cowscope-live-session.h"
#include "cowscope-recorder.h"
#include "cowscope-recording-page.h"
#include "cowscope-timeline-view.h"
#include "cowscope-view-state.h"
#include "cowscope-window.h"

/* The output panel keeps at most this much text (the newest). */
#define MAX_OUTPUT_CHARS 200000
/* After the recorder returned: how long the output may stay open (a
 * daemon the target left behind) before the session opens anyway. */
#define OUTPUT_GRACE_MS 2000
#define REFRESH_MS 100
/* How often the live timeline and graph get a new snapshot. */
#define LIVE_INTERVAL_MS 200

/* Shared by the page and the recording thread. */
typedef struct
{
  GMutex                  lock;      /* protects progress, has_progress, finalizing */
  CowscopeRecordProgress  progress;
  gboolean                has_progress;
  gboolean                finalizing; /* the target ended; the session is being finalized */
} Shared;

/* What the recording thread needs; owned by the task. */
typedef struct
{
  char                  **argv;
  char                  **environment;
  char                   *working_directory;
  char                   *output;     /* the session path */
  gboolean                force;      /* replace an existing output */
  CowscopeLiveSession    *live;       /* finished before finalizing */
  CowscopeRecordingPage  *page;       /* not a reference: the task holds one */
  GMainContext           *context;    /* the page's */
  gboolean                cuda;
  gboolean                stacks;
  gboolean                block;
  int                     output_fd;  /* write end of the output pipe, closed by the thread */
  Shared                 *shared;
  CowscopeRecordResult    result;
  gboolean                has_result;
} Job;

struct _CowscopeRecordingPage
{
  AdwBin          parent_instance;

  /* Template children */
  GtkSpinner     *spinner;
  GtkLabel       *title_label;
  GtkLabel       *command_label;
  GtkLabel       *elapsed_label;
  GtkWidget      *stop_button;
  GtkLabel       *stored_label;
  GtkLabel       *dropped_label;
  GtkLabel       *processes_label;
  GtkLabel       *threads_label;
  GtkTextView    *output_view;
  GtkLabel       *lazy_clones_label;
  GtkLabel       *copies_label;
  GtkLabel       *steals_label;
  GtkLabel       *bytes_copied_label;
  CowscopeTimelineView *timeline_view;
  CowscopeGraphView *graph_view;
  GtkStack       *live_stack;
  GtkProgressBar *progress_bar;

  Shared         *shared;
  CowscopeLiveSession *live;
  CowscopeViewState *view_state; /* of the newest live snapshot */
  gboolean        follow;       /* the timeline shows all of the recording */
  CowscopeRecordingPhase phase;
  GCancellable   *load_cancellable; /* the session's load (phase opening) */
  GCancellable   *output_cancellable;
  GInputStream   *output;
  GByteArray     *output_tail;  /* the start of a character split between reads */
  guint           refresh_id;
  guint           grace_id;
  gint64          start_us;
  gboolean        running;      /* from start until finished */
  gboolean        record_done;
  gboolean        output_done;
  gboolean        stop_requested;
  Job            *job;          /* the finished job (a ref on its task), or NULL */
  GTask          *task;
  GError         *error;        /* the recorder's failure, or NULL */

  guint64         events_stored;
  guint64         events_dropped;
  guint64         processes;
  guint64         threads;
};

G_DEFINE_FINAL_TYPE (CowscopeRecordingPage, cowscope_recording_page, ADW_TYPE_BIN)

G_DEFINE_ENUM_TYPE (CowscopeRecordingPhase, cowscope_recording_phase,
                    G_DEFINE_ENUM_VALUE (COWSCOPE_RECORDING_PHASE_RECORDING, "recording"),
                    G_DEFINE_ENUM_VALUE (COWSCOPE_RECORDING_PHASE_FINALIZING, "finalizing"),
                    G_DEFINE_ENUM_VALUE (COWSCOPE_RECORDING_PHASE_OPENING, "opening"),
                    G_DEFINE_ENUM_VALUE (COWSCOPE_RECORDING_PHASE_DONE, "done"))

enum {
  PROP_0,
  PROP_RUNNING,
  PROP_EVENTS_STORED,
  PROP_PHASE,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void maybe_finish (CowscopeRecordingPage *self);

static Shared *
shared_new (void)
{
  Shared *shared = g_atomic_rc_box_new0 (Shared);

  g_mutex_init (&shared->lock);
  return shared;
}

static void
shared_clear (Shared *shared)
{
  g_mutex_clear (&shared->lock);
}

static void
shared_unref (Shared *shared)
{
  g_atomic_rc_box_release_full (shared, (GDestroyNotify) shared_clear);
}

static void
job_free (Job *job)
{
  g_strfreev (job->argv);
  g_strfreev (job->environment);
  g_free (job->working_directory);
  g_free (job->output);
  g_clear_object (&job->live);
  g_main_context_unref (job->context);
  if (job->output_fd >= 0)
    close (job->output_fd);
  cowscope_record_result_clear (&job->result);
  shared_unref (job->shared);
  g_free (job);
}

/* The recorder's progress callback (recording thread): copies only. */
static void
progress_cb (const CowscopeRecordProgress *progress,
             void                         *user_data)
{
  Shared *shared = user_data;

  g_mutex_lock (&shared->lock);
  shared->progress = *progress;
  shared->has_progress = TRUE;
  g_mutex_unlock (&shared->lock);
}

static void enter_finalizing (CowscopeRecordingPage *self);

/* Main context: the recorder has started finalizing. */
static gboolean
finalizing_idle_cb (gpointer data)
{
  enter_finalizing (COWSCOPE_RECORDING_PAGE (data));
  return G_SOURCE_REMOVE;
}

/* The recorder is about to finalize (recording thread): the live reader
 * reads what is left and closes its connection first; the page says so
 * before the recording's end is delivered (the idle is queued first). */
static void
finalizing_cb (const char *session_path,
               void       *user_data)
{
  Job *job = user_data;
  GSource *source = g_idle_source_new ();

  cowscope_live_session_finish (job->live);
  g_mutex_lock (&job->shared->lock);
  job->shared->finalizing = TRUE;
  g_mutex_unlock (&job->shared->lock);

  g_source_set_priority (source, G_PRIORITY_DEFAULT);
  g_source_set_callback (source, finalizing_idle_cb, g_object_ref (job->page), g_object_unref);
  g_source_set_static_name (source, "[cowscope] finalizing");
  g_source_attach (source, job->context);
  g_source_unref (source);
}

/* A new session path in the user's data folder: recordings/cowscope-
 * PROGRAM-DATE[-N].cowscope, the folder created.  NULL with @error when
 * the folder cannot be created. */
static char *
new_session_path (const char  *program,
                  GError     **error)
{
  g_autofree char *dir = g_build_filename (g_get_user_data_dir (), "cowscope", "recordings", NULL);
  g_autofree char *base = g_path_get_basename (program);
  g_autoptr(GDateTime) now = g_date_time_new_now_local ();
  g_autofree char *stamp = g_date_time_format (now, "%Y%m%d-%H%M%S");

  if (g_mkdir_with_parents (dir, 0700) != 0)
    {
      int saved = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                   _("Cannot create the folder “%s”: %s"), dir, g_strerror (saved));
      return NULL;
    }

  for (guint n = 0;; n++)
    {
      g_autofree char *name = n == 0 ? g_strdup_printf ("cowscope-%s-%s.cowscope", base, stamp)
                                     : g_strdup_printf ("cowscope-%s-%s-%u.cowscope", base, stamp, n);
      char *path = g_build_filename (dir, name, NULL);

      if (!g_file_test (path, G_FILE_TEST_EXISTS))
        return path;
      g_free (path);
    }
}

/* The recording thread: runs the recorder to the end (the target's end
 * or a stop), which also finalizes the session.  Returns TRUE with
 * job->result filled, or the recorder's error. */
static void
record_thread (GTask        *task,
               gpointer      source_object,
               gpointer      task_data,
               GCancellable *cancellable)
{
  Job *job = task_data;
  CowscopeRecordOptions options;
  GError *error = NULL;
  gboolean ok;

  cowscope_record_options_init (&options);
  options.argv = job->argv;
  options.env = job->environment;
  options.output = job->output;
  options.force = job->force;
  options.stacks = job->stacks;
  options.cuda = job->cuda;
  options.policy = job->block ? COWSCOPE_RING_BLOCK : COWSCOPE_RING_DROP;
  options.working_directory = job->working_directory;
  options.stdout_fd = job->output_fd;
  options.stderr_fd = job->output_fd;
  options.progress = progress_cb;
  options.progress_data = job->shared;
  options.progress_interval_ms = 50;
  options.finalizing = finalizing_cb;
  options.finalizing_data = job;

  ok = cowscope_record (&options, &job->result, &error);
  /* Only the target (and what it forked) keeps the pipe open now. */
  close (job->output_fd);
  job->output_fd = -1;
  job->has_result = TRUE;

  if (ok)
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_error (task, error);
}

/* Formats @value with the locale's digit grouping. */
static char *
format_count (guint64 value)
{
  return g_strdup_printf ("%'" G_GUINT64_FORMAT, value);
}

/* Shows the counters and the elapsed time. */
static void
show_counters (CowscopeRecordingPage *self)
{
  g_autofree char *stored = format_count (self->events_stored);
  g_autofree char *dropped = format_count (self->events_dropped);
  g_autofree char *processes = format_count (self->processes);
  g_autofree char *threads = format_count (self->threads);

  gtk_label_set_text (self->stored_label, stored);
  gtk_label_set_text (self->dropped_label, dropped);
  gtk_label_set_text (self->processes_label, processes);
  gtk_label_set_text (self->threads_label, threads);
  if (self->events_dropped > 0)
    gtk_widget_add_css_class (GTK_WIDGET (self->dropped_label), "warning");
}

/* Sets the counters; notifies events-stored when it changed. */
static void
set_counters (CowscopeRecordingPage *self,
              guint64                stored,
              guint64                dropped,
              guint64                processes,
              guint64                threads)
{
  gboolean changed = stored != self->events_stored;

  self->events_stored = stored;
  self->events_dropped = dropped;
  self->processes = processes;
  self->threads = threads;
  show_counters (self);
  if (changed)
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_EVENTS_STORED]);
}

/* The refresh timer (main loop, every REFRESH_MS): the latest progress
 * and the elapsed time. */
static gboolean
refresh_cb (gpointer user_data)
{
  CowscopeRecordingPage *self = user_data;
  CowscopeRecordProgress progress;
  gboolean has, finalizing;
  gint64 seconds = (g_get_monotonic_time () - self->start_us) / G_USEC_PER_SEC;
  g_autofree char *elapsed = NULL;

  g_mutex_lock (&self->shared->lock);
  progress = self->shared->progress;
  has = self->shared->has_progress;
  finalizing = self->shared->finalizing;
  g_mutex_unlock (&self->shared->lock);

  if (finalizing)
    enter_finalizing (self);
  if (self->phase == COWSCOPE_RECORDING_PHASE_FINALIZING)
    gtk_progress_bar_pulse (self->progress_bar);

  if (has)
    set_counters (self, progress.stored, progress.dropped, progress.processes, progress.rings);
  /* The session file exists once the recorder reports: follow it. */
  if (has && self->live != NULL && !self->record_done)
    cowscope_live_session_start (self->live, LIVE_INTERVAL_MS);

  if (seconds >= 3600)
    elapsed = g_strdup_printf ("%d:%02d:%02d", (int) (seconds / 3600), (int) (seconds / 60 % 60),
                               (int) (seconds % 60));
  else
    elapsed = g_strdup_printf ("%d:%02d", (int) (seconds / 60), (int) (seconds % 60));
  gtk_label_set_text (self->elapsed_label, elapsed);

  return G_SOURCE_CONTINUE;
}

/* Inserts @text (valid UTF-8) at the end of the output panel (dropping
 * the oldest text beyond MAX_OUTPUT_CHARS, a quarter of it at a time) and
 * keeps the end in view.  Cheap per chunk, so a chatty target cannot
 * flood the main loop: trimming re-lays out the whole panel, and
 * scrolling to an iter validates every line above it, so both are done
 * rarely or lazily. */
static void
insert_output (CowscopeRecordingPage *self,
               const char            *valid)
{
  GtkTextBuffer *buffer = gtk_text_view_get_buffer (self->output_view);
  GtkTextMark *end_mark = gtk_text_buffer_get_mark (buffer, "cowscope-end");
  GtkTextIter end;
  int excess;

  gtk_text_buffer_get_end_iter (buffer, &end);
  if (end_mark == NULL)
    end_mark = gtk_text_buffer_create_mark (buffer, "cowscope-end", &end, FALSE);
  gtk_text_buffer_insert (buffer, &end, valid, -1);

  excess = gtk_text_buffer_get_char_count (buffer) - MAX_OUTPUT_CHARS;
  if (excess > MAX_OUTPUT_CHARS / 4)
    {
      GtkTextIter start, cut;

      gtk_text_buffer_get_start_iter (buffer, &start);
      gtk_text_buffer_get_iter_at_offset (buffer, &cut, excess);
      gtk_text_buffer_delete (buffer, &start, &cut);
    }

  gtk_text_buffer_get_end_iter (buffer, &end);
  gtk_text_buffer_move_mark (buffer, end_mark, &end);
  gtk_text_view_scroll_to_mark (self->output_view, end_mark, 0.0, FALSE, 0.0, 1.0);
}

/* Appends one chunk of the target's bytes to the output panel.  A
 * character split between two chunks (a pipe read ends anywhere) waits
 * for the rest of its bytes in output_tail rather than being shown as
 * replacement characters; other invalid bytes are replaced. */
static void
append_output (CowscopeRecordingPage *self,
               const char            *text,
               gsize                  length)
{
  g_autoptr(GByteArray) bytes = g_steal_pointer (&self->output_tail);
  const char *data, *valid_end;
  gsize size, keep = 0;

  if (bytes == NULL)
    bytes = g_byte_array_new ();
  g_byte_array_append (bytes, (const guint8 *) text, (guint) length);
  data = (const char *) bytes->data;
  size = bytes->len;
  if (!g_utf8_validate_len (data, size, &valid_end)
      && size - (gsize) (valid_end - data) < 4
      && g_utf8_get_char_validated (valid_end, (gssize) (size - (gsize) (valid_end - data)))
           == (gunichar) -2)
    keep = size - (gsize) (valid_end - data);
  if (keep > 0)
    {
      self->output_tail = g_byte_array_new ();
      g_byte_array_append (self->output_tail, (const guint8 *) data + size - keep, (guint) keep);
    }
  if (size > keep)
    {
      g_autofree char *valid = g_utf8_make_valid (data, (gssize) (size - keep));

      insert_output (self, valid);
    }
}

static void read_output (CowscopeRecordingPage *self);

/* One chunk of the target's output arrived (or its end). */
static void
output_read_cb (GObject      *source,
                GAsyncResult *result,
                gpointer      user_data)
{
  g_autoptr(CowscopeRecordingPage) self = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) bytes = g_input_stream_read_bytes_finish (G_INPUT_STREAM (source), result,
                                                              &error);

  if (bytes == NULL || g_bytes_get_size (bytes) == 0)
    {
      if (self->output_done)
        return;
      /* A character the target never finished is shown as replaced. */
      if (self->output_tail != NULL)
        {
          g_autoptr(GByteArray) tail = g_steal_pointer (&self->output_tail);
          g_autofree char *valid = g_utf8_make_valid ((const char *) tail->data, (gssize) tail->len);

          insert_output (self, valid);
        }
      self->output_done = TRUE;
      maybe_finish (self);
      return;
    }

  append_output (self, g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes));
  read_output (self);
}

/* Reads the next chunk of the target's output, asynchronously. */
static void
read_output (CowscopeRecordingPage *self)
{
  g_input_stream_read_bytes_async (self->output, 16384, G_PRIORITY_DEFAULT,
                                   self->output_cancellable, output_read_cb,
                                   g_object_ref (self));
}

/* After OUTPUT_GRACE_MS: the output is given up on (something the target
 * started still holds the pipe). */
static gboolean
output_grace_cb (gpointer user_data)
{
  CowscopeRecordingPage *self = user_data;

  self->grace_id = 0;
  g_cancellable_cancel (self->output_cancellable);
  if (!self->output_done)
    {
      self->output_done = TRUE;
      maybe_finish (self);
    }
  return G_SOURCE_REMOVE;
}

/* The recording thread ended: keep its result until the output is done. */
static void
record_done_cb (GObject      *source,
                GAsyncResult *result,
                gpointer      user_data)
{
  CowscopeRecordingPage *self = COWSCOPE_RECORDING_PAGE (source);

  g_task_propagate_boolean (G_TASK (result), &self->error);
  self->record_done = TRUE;
  if (!self->output_done)
    self->grace_id = g_timeout_add (OUTPUT_GRACE_MS, output_grace_cb, self);
  maybe_finish (self);
}

/* Shows the per-type counts of what the live reader has read. */
static void
show_live_totals (CowscopeRecordingPage    *self,
                  const CowscopeLiveTotals *totals)
{
  g_autofree char *lazy = format_count (totals->lazy_clones);
  g_autofree char *copies = format_count (totals->copies + totals->eager_copies);
  g_autofree char *steals = format_count (totals->steals);
  g_autofree char *bytes = g_format_size (totals->bytes_copied);

  gtk_label_set_text (self->lazy_clones_label, lazy);
  gtk_label_set_text (self->copies_label, copies);
  gtk_label_set_text (self->steals_label, steals);
  gtk_label_set_text (self->bytes_copied_label, bytes);
}

/* A new live snapshot: the timeline gets a view state over it (keeping
 * the user's window unless it showed the whole recording, which it
 * keeps doing), its cursor at the newest event; the graph shows the
 * newest state. */
static void
live_updated_cb (CowscopeLiveSession   *live,
                 CowscopeRecordingPage *self)
{
  CowscopeSessionDocument *document = cowscope_live_session_get_document (live);
  g_autoptr(CowscopeViewState) state = NULL;
  CowscopeLiveTotals totals;

  if (document == NULL)
    return;
  cowscope_live_session_get_totals (live, &totals);
  show_live_totals (self, &totals);

  state = cowscope_view_state_new (document);
  if (self->view_state != NULL)
    {
      CowscopeSessionDocument *old = cowscope_view_state_get_document (self->view_state);
      gint64 start = cowscope_view_state_get_visible_start (self->view_state);
      gint64 end = cowscope_view_state_get_visible_end (self->view_state);

      self->follow = start <= cowscope_session_document_get_start_ns (old)
                     && end >= cowscope_session_document_get_end_ns (old);
      if (!self->follow)
        cowscope_view_state_set_visible (state, start, end);
    }
  cowscope_view_state_set_cursor (state, cowscope_session_document_get_end_ns (document));
  g_set_object (&self->view_state, state);
  cowscope_timeline_view_set_view_state (self->timeline_view, state);
  cowscope_graph_view_show_graph (self->graph_view, cowscope_live_session_get_graph (live));
  gtk_stack_set_visible_child_name (self->live_stack, "live");
}

/* How the target ended, as one sentence for a toast. */
static char *
describe_end (const CowscopeRecordResult *result,
              gboolean                    stopped)
{
  const char *end = result->target_end != NULL ? result->target_end : "unknown";
  const char *signal_name = result->exit_signal > 0 ? g_strsignal (result->exit_signal) : "";

  if (g_str_equal (end, "exited"))
    {
      if (result->exit_status == 0)
        return g_strdup (_("The program exited normally"));
      return g_strdup_printf (_("The program exited with status %d"), result->exit_status);
    }
  if (stopped || result->interrupted)
    return g_strdup_printf (_("Recording stopped: the program ended by signal %d (%s)"),
                            result->exit_signal, signal_name);
  if (g_str_equal (end, "crashed"))
    return g_strdup_printf (_("The program crashed: signal %d (%s)"), result->exit_signal,
                            signal_name);
  if (g_str_equal (end, "killed") || g_str_equal (end, "signaled"))
    return g_strdup_printf (_("The program was ended by signal %d (%s)"), result->exit_signal,
                            signal_name);
  return g_strdup (_("The program ended in an unknown way"));
}

/* Sets the phase, notifying "phase". */
static void
set_phase (CowscopeRecordingPage  *self,
           CowscopeRecordingPhase  phase)
{
  if (self->phase == phase)
    return;
  self->phase = phase;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_PHASE]);
}

/* The target ended and the recorder finalizes: what is shown stays, with
 * a pulsing bar (the recorder reports no progress while it finalizes)
 * and no Stop.  Once. */
static void
enter_finalizing (CowscopeRecordingPage *self)
{
  if (self->phase != COWSCOPE_RECORDING_PHASE_RECORDING)
    return;
  gtk_label_set_text (self->title_label, _("Finalizing the Session…"));
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "recording.stop", FALSE);
  gtk_progress_bar_set_fraction (self->progress_bar, 0);
  gtk_progress_bar_pulse (self->progress_bar);
  gtk_widget_set_visible (GTK_WIDGET (self->progress_bar), TRUE);
  set_phase (self, COWSCOPE_RECORDING_PHASE_FINALIZING);
}

/* The end: running no more, the application let go.  Once. */
static void
finish (CowscopeRecordingPage *self)
{
  g_clear_object (&self->load_cancellable);
  set_phase (self, COWSCOPE_RECORDING_PHASE_DONE);
  self->running = FALSE;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_RUNNING]);
  g_application_release (g_application_get_default ());
}

/* Load progress of the finalized session (coalesced, main context). */
static void
load_progress_cb (double   fraction,
                  gpointer user_data)
{
  CowscopeRecordingPage *self = user_data;

  if (self->phase == COWSCOPE_RECORDING_PHASE_OPENING)
    gtk_progress_bar_set_fraction (self->progress_bar, fraction);
}

/* The finalized session is loaded (or not): the window shows it in
 * place of this page, with a toast saying how the target ended.  Holds
 * a page reference. */
static void
load_done_cb (GObject      *source,
              GAsyncResult *result,
              gpointer      user_data)
{
  g_autoptr(CowscopeRecordingPage) self = user_data;
  g_autoptr(CowscopeSessionDocument) document = NULL;
  g_autoptr(GError) error = NULL;
  GtkWidget *window;

  document = cowscope_session_document_load_finish (result, &error);
  window = gtk_widget_get_ancestor (GTK_WIDGET (self), COWSCOPE_TYPE_WINDOW);
  if (window != NULL && !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      Job *job = g_task_get_task_data (self->task);
      g_autoptr(GFile) file = g_file_new_for_path (job->result.session_path);
      g_autofree char *text = describe_end (&job->result, self->stop_requested);

      gtk_progress_bar_set_fraction (self->progress_bar, 1);
      /* The window removes this page: keep it alive until the end. */
      cowscope_window_show_recorded (COWSCOPE_WINDOW (window), file, document, error);
      if (document != NULL)
        cowscope_window_add_toast (COWSCOPE_WINDOW (window), text);
    }
  finish (self);
}

/* When the recording and the output are both done: shows the final
 * counters and loads the session, still on this page (phase opening),
 * or on a recorder failure shows the window's error page.  Runs once. */
static void
maybe_finish (CowscopeRecordingPage *self)
{
  GtkWidget *window;
  Job *job;

  if (!self->running || !self->record_done || !self->output_done
      || self->phase >= COWSCOPE_RECORDING_PHASE_OPENING)
    return;

  g_clear_handle_id (&self->refresh_id, g_source_remove);
  g_clear_handle_id (&self->grace_id, g_source_remove);
  gtk_spinner_set_spinning (self->spinner, FALSE);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "recording.stop", FALSE);
  if (self->live != NULL)
    cowscope_live_session_stop (self->live);
  refresh_cb (self);

  /* The final counters, still on this page (a short target may end
   * before the first refresh). */
  job = self->task != NULL ? g_task_get_task_data (self->task) : NULL;
  if (job != NULL && job->has_result && self->error == NULL)
    set_counters (self, job->result.totals.events_stored, job->result.totals.events_dropped,
                  job->result.processes, job->result.totals.rings);

  window = gtk_widget_get_ancestor (GTK_WIDGET (self), COWSCOPE_TYPE_WINDOW);
  if (window == NULL)
    {
      finish (self);
      return;
    }
  if (self->error != NULL || job == NULL)
    {
      CowscopeWindow *win = COWSCOPE_WINDOW (window);

      /* Keep this page alive through its removal from the window. */
      g_object_ref (self);
      cowscope_window_set_recording_page (win, NULL);
      cowscope_window_show_error_page (win, _("Cannot Record the Program"),
                                       self->error != NULL ? self->error->message : "");
      finish (self);
      g_object_unref (self);
      return;
    }

  gtk_label_set_text (self->title_label, _("Opening the Session…"));
  gtk_progress_bar_set_fraction (self->progress_bar, 0);
  gtk_widget_set_visible (GTK_WIDGET (self->progress_bar), TRUE);
  set_phase (self, COWSCOPE_RECORDING_PHASE_OPENING);
  self->load_cancellable = g_cancellable_new ();
  cowscope_session_document_load_async (job->result.session_path, self->load_cancellable,
                                        load_progress_cb, g_object_ref (self), g_object_unref,
                                        load_done_cb, g_object_ref (self));
}

/* Starts the recording of @job (argv, environment, flags filled in), or
 * fails at once with @error (then job->output is NULL). */
static void
start (CowscopeRecordingPage *self,
       Job                   *job,
       GError                *error)
{
  int fds[2];
  g_autofree char *joined = g_strjoinv (" ", job->argv);
  /* Arguments are bytes; the label shows them as text. */
  g_autofree char *command = g_utf8_make_valid (joined, -1);

  gtk_label_set_text (self->command_label, command);
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->command_label), command);

  self->running = TRUE;
  g_application_hold (g_application_get_default ());
  self->start_us = g_get_monotonic_time ();
  self->refresh_id = g_timeout_add (REFRESH_MS, refresh_cb, self);

  if (error != NULL)
    {
      job_free (job);
      self->error = error;
      self->record_done = self->output_done = TRUE;
      maybe_finish (self);
      return;
    }

  self->live = cowscope_live_session_new (job->output);
  g_signal_connect (self->live, "updated", G_CALLBACK (live_updated_cb), self);
  job->live = g_object_ref (self->live);
  job->page = self;

  if (pipe2 (fds, O_CLOEXEC) != 0)
    {
      int saved = errno;

      job_free (job);
      self->error = g_error_new (G_IO_ERROR, g_io_error_from_errno (saved),
                                 _("Cannot create a pipe for the program’s output: %s"),
                                 g_strerror (saved));
      self->record_done = self->output_done = TRUE;
      maybe_finish (self);
      return;
    }

  job->output_fd = fds[1];
  job->shared = g_atomic_rc_box_acquire (self->shared);
  self->output = g_unix_input_stream_new (fds[0], TRUE);
  self->output_cancellable = g_cancellable_new ();
  read_output (self);

  self->task = g_task_new (self, NULL, record_done_cb, NULL);
  g_task_set_source_tag (self->task, start);
  g_task_set_task_data (self->task, job, (GDestroyNotify) job_free);
  g_task_run_in_thread (self->task, record_thread);
}

/* recording.stop: asks the recorder to stop the target (SIGINT to its
 * process group, SIGKILL if it lingers); the session then opens as for
 * a target that ended by itself.  A second press kills at once. */
static void
stop_activated (GtkWidget  *widget,
                const char *action_name,
                GVariant   *parameter)
{
  cowscope_recording_page_stop (COWSCOPE_RECORDING_PAGE (widget));
}

/* A page taken out of its window while recording (the window closed)
 * stops the target; the recorder still finalizes the session. */
static void
cowscope_recording_page_unroot (GtkWidget *widget)
{
  CowscopeRecordingPage *self = COWSCOPE_RECORDING_PAGE (widget);

  if (self->running && !self->record_done)
    cowscope_recording_page_stop (self);
  /* Out of its window while the session loads: nowhere to show it. */
  g_cancellable_cancel (self->load_cancellable);

  GTK_WIDGET_CLASS (cowscope_recording_page_parent_class)->unroot (widget);
}

static void
cowscope_recording_page_dispose (GObject *object)
{
  CowscopeRecordingPage *self = COWSCOPE_RECORDING_PAGE (object);

  g_clear_handle_id (&self->refresh_id, g_source_remove);
  g_clear_handle_id (&self->grace_id, g_source_remove);
  g_cancellable_cancel (self->load_cancellable);
  if (self->output_cancellable != NULL)
    g_cancellable_cancel (self->output_cancellable);
  if (self->live != NULL)
    {
      g_signal_handlers_disconnect_by_data (self->live, self);
      cowscope_live_session_stop (self->live);
      g_clear_object (&self->live);
    }
  if (self->timeline_view != NULL)
    cowscope_timeline_view_set_view_state (self->timeline_view, NULL);
  g_clear_object (&self->view_state);
  gtk_widget_dispose_template (GTK_WIDGET (self), COWSCOPE_TYPE_RECORDING_PAGE);

  G_OBJECT_CLASS (cowscope_recording_page_parent_class)->dispose (object);
}

static void
cowscope_recording_page_finalize (GObject *object)
{
  CowscopeRecordingPage *self = COWSCOPE_RECORDING_PAGE (object);

  g_clear_object (&self->output_cancellable);
  g_clear_object (&self->load_cancellable);
  g_clear_object (&self->output);
  g_clear_pointer (&self->output_tail, g_byte_array_unref);
  g_clear_object (&self->task);
  g_clear_error (&self->error);
  shared_unref (self->shared);

  G_OBJECT_CLASS (cowscope_recording_page_parent_class)->finalize (object);
}

static void
cowscope_recording_page_get_property (GObject    *object,
                                      guint       prop_id,
                                      GValue     *value,
                                      GParamSpec *pspec)
{
  CowscopeRecordingPage *self = COWSCOPE_RECORDING_PAGE (object);

  switch (prop_id)
    {
    case PROP_RUNNING:
      g_value_set_boolean (value, self->running);
      break;
    case PROP_EVENTS_STORED:
      g_value_set_uint64 (value, self->events_stored);
      break;
    case PROP_PHASE:
      g_value_set_enum (value, self->phase);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
cowscope_recording_page_class_init (CowscopeRecordingPageClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = cowscope_recording_page_dispose;
  object_class->finalize = cowscope_recording_page_finalize;
  object_class->get_property = cowscope_recording_page_get_property;
  widget_class->unroot = cowscope_recording_page_unroot;

  properties[PROP_RUNNING] =
    g_param_spec_boolean ("running", NULL, NULL, FALSE,
                          G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_EVENTS_STORED] =
    g_param_spec_uint64 ("events-stored", NULL, NULL, 0, G_MAXUINT64, 0,
                         G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /**
   * CowscopeRecordingPage:phase:
   *
   * Where the page is: recording, finalizing, opening the session, done
   * (see the file comment).
   */
  properties[PROP_PHASE] =
    g_param_spec_enum ("phase", NULL, NULL, COWSCOPE_TYPE_RECORDING_PHASE,
                       COWSCOPE_RECORDING_PHASE_RECORDING,
                       G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  g_type_ensure (COWSCOPE_TYPE_TIMELINE_VIEW);
  g_type_ensure (COWSCOPE_TYPE_GRAPH_VIEW);
  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/org/cowscope/Cowscope/cowscope-recording-page.ui");
  gtk_widget_class_bind_template_child (widget_class, CowscopeRecordingPage, spinner);
  gtk_widget_class_bind_template_child (widget_class, CowscopeRecordingPage, title_label);
  gtk_widget_class_bind_template_child (widget_class, CowscopeRecordingPage, command_label);
  gtk_widget_class_bind_template_child (widget_class, CowscopeRecordingPage, elapsed_label);
  gtk_widget_class_bind_template_child (widget_class, CowscopeRecordingPage, stop_button);
  gtk_widget_class_bind_template_child (widget_class, CowscopeRecordingPage, stored_label);
  gtk_widget_class_bind_template_child (widget_class, CowscopeRecordingPage, dropped_label);
  gtk_widget_class_bind_template_child (widget_class, CowscopeRecordingPage, processes_label);
  gtk_widget_class_bind_template_child (widget_class, CowscopeRecordingPage, threads_label);
  gtk_widget_class_bind_template_child (widget_class, CowscopeRecordingPage, output_view);
  gtk_widget_class_bind_template_child (widget_class, CowscopeRecordingPage, lazy_clones_label);
  gtk_widget_class_bind_template_child (widget_class, CowscopeRecordingPage, copies_label);
  gtk_widget_class_bind_template_child (widget_class, CowscopeRecordingPage, steals_label);
  gtk_widget_class_bind_template_child (widget_class, CowscopeRecordingPage, bytes_copied_label);
  gtk_widget_class_bind_template_child (widget_class, CowscopeRecordingPage, timeline_view);
  gtk_widget_class_bind_template_child (widget_class, CowscopeRecordingPage, graph_view);
  gtk_widget_class_bind_template_child (widget_class, CowscopeRecordingPage, live_stack);
  gtk_widget_class_bind_template_child (widget_class, CowscopeRecordingPage, progress_bar);

  gtk_widget_class_install_action (widget_class, "recording.stop", NULL, stop_activated);
}

static void
cowscope_recording_page_init (CowscopeRecordingPage *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  self->shared = shared_new ();
  self->follow = TRUE;
}

/**
 * cowscope_recording_page_record:
 * @from: (nullable): the window the request came from
 * @argv: the program (an absolute path) and its arguments
 * @working_directory: (nullable): where the program starts; NULL: here
 * @environment: (nullable): extra NAME=VALUE variables
 *
 * Starts recording @argv in @from when that window is empty (start
 * page), else in a new window, and shows this page there, into a new
 * session in the user's data folder.  Returns at once; see the file
 * comment for what follows.
 *
 * Returns: (transfer none): the page shown.
 */
CowscopeRecordingPage *
cowscope_recording_page_record (GtkWindow          *from,
                                const char * const *argv,
                                const char         *working_directory,
                                const char * const *environment,
                                gboolean            cuda,
                                gboolean            stacks,
                                gboolean            block)
{
  return cowscope_recording_page_record_to (from, argv, working_directory, environment, NULL,
                                            FALSE, cuda, stacks, block);
}

/**
 * cowscope_recording_page_record_to:
 * @output: (nullable): the session file to write; NULL: a new one in
 *   the user's data folder
 * @force: replace @output when it exists (else that is an error)
 *
 * As cowscope_recording_page_record(), into @output.
 *
 * Returns: (transfer none): the page shown.
 */
CowscopeRecordingPage *
cowscope_recording_page_record_to (GtkWindow          *from,
                                   const char * const *argv,
                                   const char         *working_directory,
                                   const char * const *environment,
                                   const char         *output,
                                   gboolean            force,
                                   gboolean            cuda,
                                   gboolean            stacks,
                                   gboolean            block)
{
  CowscopeRecordingPage *self;
  CowscopeWindow *window;
  GError *error = NULL;
  Job *job;

  g_return_val_if_fail (argv != NULL && argv[0] != NULL, NULL);

  if (COWSCOPE_IS_WINDOW (from) && cowscope_window_is_empty (COWSCOPE_WINDOW (from)))
    window = COWSCOPE_WINDOW (from);
  else
    {
      GApplication *app = g_application_get_default ();

      window = cowscope_window_new (COWSCOPE_APPLICATION (app));
    }
  self = g_object_new (COWSCOPE_TYPE_RECORDING_PAGE, NULL);
  if (gtk_window_get_application (GTK_WINDOW (window)) != NULL)
    cowscope_graph_view_bind_size_filter (self->graph_view,
                                          cowscope_application_get_settings (COWSCOPE_APPLICATION (
                                            gtk_window_get_application (GTK_WINDOW (window)))));
  cowscope_window_set_recording_page (window, GTK_WIDGET (self));
  /* Presented after: a new window shows the recording at once, rather
   * than fading to it from the Welcome page. */
  gtk_window_present (GTK_WINDOW (window));

  job = g_new0 (Job, 1);
  job->argv = g_strdupv ((char **) argv);
  job->environment = environment != NULL ? g_strdupv ((char **) environment) : NULL;
  job->working_directory = g_strdup (working_directory);
  job->cuda = cuda;
  job->stacks = stacks;
  job->block = block;
  job->force = force;
  job->output_fd = -1;
  job->context = g_main_context_ref_thread_default ();
  job->output = output != NULL ? g_strdup (output) : new_session_path (argv[0], &error);
  start (self, job, error);
  return self;
}

/* Stops the target as Ctrl+C would (see stop_activated); nothing when
 * the recording is over. */
void
cowscope_recording_page_stop (CowscopeRecordingPage *self)
{
  g_return_if_fail (COWSCOPE_IS_RECORDING_PAGE (self));

  if (!self->running || self->record_done)
    return;
  self->stop_requested = TRUE;
  gtk_label_set_text (self->title_label, _("Stopping…"));
  cowscope_record_interrupt ();
}

/* TRUE from the start of the recording until its session is opened. */
gboolean
cowscope_recording_page_is_running (CowscopeRecordingPage *self)
{
  g_return_val_if_fail (COWSCOPE_IS_RECORDING_PAGE (self), FALSE);

  return self->running;
}

/* The largest "events recorded" count shown so far. */
guint64
cowscope_recording_page_get_events_stored (CowscopeRecordingPage *self)
{
  g_return_val_if_fail (COWSCOPE_IS_RECORDING_PAGE (self), 0);

  return self->events_stored;
}

/* The session file being recorded (NULL when none could be made). */
const char *
cowscope_recording_page_get_session_path (CowscopeRecordingPage *self)
{
  Job *job;

  g_return_val_if_fail (COWSCOPE_IS_RECORDING_PAGE (self), NULL);

  job = self->task != NULL ? g_task_get_task_data (self->task) : NULL;
  return job != NULL ? job->output : NULL;
}

/* Where the page is (see the "phase" property). */
CowscopeRecordingPhase
cowscope_recording_page_get_phase (CowscopeRecordingPage *self)
{
  g_return_val_if_fail (COWSCOPE_IS_RECORDING_PAGE (self), COWSCOPE_RECORDING_PHASE_DONE);

  return self->phase;
}

/* The page's title ("Recording", "Finalizing the Session…", …). */
const char *
cowscope_recording_page_get_title (CowscopeRecordingPage *self)
{
  g_return_val_if_fail (COWSCOPE_IS_RECORDING_PAGE (self), NULL);

  return gtk_label_get_text (self->title_label);
}

/* The progress bar under the title: its fraction, or -1 while hidden. */
double
cowscope_recording_page_get_progress (CowscopeRecordingPage *self)
{
  g_return_val_if_fail (COWSCOPE_IS_RECORDING_PAGE (self), -1);

  return gtk_widget_get_visible (GTK_WIDGET (self->progress_bar))
           ? gtk_progress_bar_get_fraction (self->progress_bar) : -1;
}

/* Returns: (transfer full): the text of the output panel. */
char *
cowscope_recording_page_get_output (CowscopeRecordingPage *self)
{
  GtkTextBuffer *buffer;
  GtkTextIter start, end;

  g_return_val_if_fail (COWSCOPE_IS_RECORDING_PAGE (self), NULL);

  buffer = gtk_text_view_get_buffer (self->output_view);
  gtk_text_buffer_get_bounds (buffer, &start, &end);
  return gtk_text_buffer_get_text (buffer, &start, &end, FALSE);
}

/**
 * cowscope_recording_page_find_demo:
 *
 * Returns: (transfer full) (nullable): the bundled demo target: from
 *   $COWSCOPE_DEMO, in the build tree the running binary was built in,
 *   installed with the running binary, or in $PATH; NULL when none is
 *   executable.
 */
char *
cowscope_recording_page_find_demo (void)
{
  const char *env = g_getenv ("COWSCOPE_DEMO");
  g_autofree char *build_root = cowscope_install_dirs_build_root ();
  g_autofree char *build = build_root != NULL ? g_build_filename (build_root, "engine", "demo",
                                                                  "cowscope-demo", NULL) : NULL;
  g_autofree char *installed = cowscope_install_dirs_find (COWSCOPE_INSTALL_DIR_BIN,
                                                           "cowscope-demo");
  const char *candidates[] = { env, build, installed };

  for (guint i = 0; i < G_N_ELEMENTS (candidates); i++)
    if (candidates[i] != NULL && g_file_test (candidates[i], G_FILE_TEST_IS_EXECUTABLE)
        && !g_file_test (candidates[i], G_FILE_TEST_IS_DIR))
      return g_canonicalize_filename (candidates[i], NULL);

  return g_find_program_in_path ("cowscope-demo");
}

/**
 * cowscope_recording_page_get_timeline_view:
 *
 * Returns: (transfer none): the live copy timeline.
 */
CowscopeTimelineView *
cowscope_recording_page_get_timeline_view (CowscopeRecordingPage *self)
{
  g_return_val_if_fail (COWSCOPE_IS_RECORDING_PAGE (self), NULL);

  return self->timeline_view;
}

/**
 * cowscope_recording_page_get_graph_view:
 *
 * Returns: (transfer none): the live storage sharing graph.
 */
CowscopeGraphView *
cowscope_recording_page_get_graph_view (CowscopeRecordingPage *self)
{
  g_return_val_if_fail (COWSCOPE_IS_RECORDING_PAGE (self), NULL);

  return self->graph_view;
}

/* Live snapshots shown so far. */
guint
cowscope_recording_page_get_live_updates (CowscopeRecordingPage *self)
{
  g_return_val_if_fail (COWSCOPE_IS_RECORDING_PAGE (self), 0);

  return self->live != NULL ? cowscope_live_session_get_n_updates (self->live) : 0;
}
