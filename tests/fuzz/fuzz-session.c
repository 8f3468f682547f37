/* fuzz-session.c — libFuzzer target for the session opener, the dbfuzz2
 * way (SQLite's test/dbfuzz2.c): the input is a database file, loaded
 * with sqlite3_deserialize() under a size limit, with a progress handler
 * and a heap limit so that no input runs away; then the session format's
 * real opener (cowscope_format_adopt()), the finalizer for a session that
 * is not current, the checks, and the model's first queries: the report
 * (JSON and text) and a Chrome export to /dev/null.  A refusal must be in
 * the format's words and a report must pass the oracle (fuzz-oracle.h);
 * anything else aborts, for libFuzzer to keep the input.  Built with the
 * replay driver (fuzz-replay.c) by every compiler, with libFuzzer by
 * clang. */
#include <glib.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cowscope-export.h"
#include "cowscope-format-check.h"
#include "cowscope-format-finalize.h"
#include "cowscope-format-open.h"
#include "cowscope-report.h"
#include "cowscope-session-tables-private.h"
#include "fuzz-oracle.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

#define NAME "fuzz.cowscope"
/* What one input may grow to, and how long it may run (progress
 * handler calls, every 1,000 virtual machine steps). */
#define SIZE_LIMIT (G_GINT64_CONSTANT (64) << 20)
#define MAX_TICKS 50000

static int
progress_cb (void *data)
{
  int *ticks = data;
  return ++*ticks > MAX_TICKS;
}

/* Aborts with @why (NULL: nothing wrong) about @what. */
static void
require (char *why, const char *what)
{
  if (why == NULL)
    return;
  fprintf (stderr, "fuzz-session: %s: %s\n", what, why);
  abort ();
}

/* FUZZ_VERBOSE=1 says what became of each input (the corpus replay). */
static void
say (const char *what, const char *detail)
{
  static int verbose = -1;
  if (verbose < 0)
    verbose = g_getenv ("FUZZ_VERBOSE") != NULL;
  if (verbose)
    printf ("#   %s%s%s\n", what, detail != NULL ? ": " : "", detail != NULL ? detail : "");
}

/* An error from a run the progress handler interrupted says so; any
 * other must be a refusal in the format's words. */
static void
require_refusal (const GError *error, const int *ticks)
{
  say (*ticks > MAX_TICKS ? "interrupted" : "refused", error != NULL ? error->message : NULL);
  if (*ticks > MAX_TICKS)
    return;
  require (fuzz_oracle_check_refusal (error, NAME), "refusal");
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  static gboolean initialized;
  if (!initialized)
    {
      sqlite3_hard_heap_limit64 (G_GINT64_CONSTANT (512) << 20);
      initialized = TRUE;
    }
  if (size < 512 || size > (size_t) SIZE_LIMIT)
    return 0;

  sqlite3 *db = NULL;
  if (sqlite3_open_v2 (":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL)
      != SQLITE_OK)
    {
      sqlite3_close (db);
      return 0;
    }
  unsigned char *copy = sqlite3_malloc64 (size);
  if (copy == NULL)
    {
      sqlite3_close (db);
      return 0;
    }
  memcpy (copy, data, size);
  if (sqlite3_deserialize (db, "main", copy, (sqlite3_int64) size, (sqlite3_int64) size,
                           SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_RESIZEABLE)
      != SQLITE_OK)
    {
      sqlite3_close (db);
      return 0;
    }
  sqlite3_int64 limit = SIZE_LIMIT;
  sqlite3_file_control (db, "main", SQLITE_FCNTL_SIZE_LIMIT, &limit);
  int ticks = 0;
  sqlite3_progress_handler (db, 1000, progress_cb, &ticks);

  g_autoptr (GError) error = NULL;
  CowscopeFormatInfo info;
  if (!cowscope_format_adopt (db, NAME, COWSCOPE_FORMAT_OPEN_READ_WRITE, &info, &error))
    {
      require_refusal (error, &ticks);
      sqlite3_close (db);
      return 0;
    }
  /* What a reader of a session that is not current reads: its finalized
   * copy (here finalized in memory). */
  if (!info.current && !cowscope_format_finalize (db, NAME, NULL, &error))
    {
      require_refusal (error, &ticks);
      sqlite3_close (db);
      return 0;
    }

  g_autoptr (CowscopeSessionTables) tables = cowscope_session_tables_new_for_db (db, NAME, &error);
  if (tables == NULL)
    {
      require_refusal (error, &ticks);
      return 0;
    }
  g_autoptr (JsonObject) report = cowscope_report_build (tables, 5, &error);
  if (report == NULL)
    {
      require_refusal (error, &ticks);
      return 0;
    }
  require (fuzz_oracle_check_report (report), "report");
  g_autofree char *text = cowscope_report_format_text (report);
  require (fuzz_oracle_check_text (text), "text report");
  {
    g_autoptr (JsonGenerator) generator = json_generator_new ();
    g_autoptr (JsonNode) root = json_node_init_object (json_node_alloc (), report);
    json_generator_set_root (generator, root);
    g_autofree char *json = json_generator_to_data (generator, NULL);
    if (json == NULL || !g_utf8_validate (json, -1, NULL))
      require (g_strdup ("not valid UTF-8"), "JSON report");
  }
  if (!cowscope_export_chrome (tables, "/dev/null", TRUE, NULL, &error))
    require_refusal (error, &ticks);
  else
    say ("report and export", NULL);
  return 0;
}
