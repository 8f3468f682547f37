/* cowscope-output.h — an output file that is complete or absent.
 *
 * A regular output file is written under a temporary name in its
 * directory and renamed into place only when every byte reached the disk;
 * any failure (ENOSPC on write, fflush or fclose included) removes the
 * temporary file, so no partial file is left claiming success.  An
 * existing regular file or directory is replaced only with @force.  A
 * path that names a device or a FIFO (/dev/stdout, /dev/full) is written
 * directly: it holds nothing to protect, and nothing is removed.
 */
#pragma once

#include <glib.h>
#include <stdio.h>

G_BEGIN_DECLS

typedef struct _CowscopeOutput CowscopeOutput;

/* Opens @path for writing (see above).  NULL with @error naming the file
 * and the OS error when it exists without @force, or cannot be created. */
CowscopeOutput *cowscope_output_open (const char *path, gboolean force,
                                      GError **error);

/* TRUE when no write has failed so far. */
gboolean cowscope_output_ok (CowscopeOutput *output);

/* Writes; failures are remembered (with errno) and reported by commit. */
void cowscope_output_write (CowscopeOutput *output, const char *data,
                            gsize length);
void cowscope_output_puts (CowscopeOutput *output, const char *text);
void cowscope_output_printf (CowscopeOutput *output, const char *format, ...)
  G_GNUC_PRINTF (2, 3);

/* Writes @text as a JSON string literal (quotes, escapes; invalid UTF-8
 * replaced by U+FFFD), so any content yields valid JSON. */
void cowscope_output_json_string (CowscopeOutput *output, const char *text);

/* Flushes, syncs and closes, then moves the file into place.  On any
 * failure returns FALSE with @error ("cannot write PATH: No space left on
 * device") and removes the temporary file.  Frees @output either way. */
gboolean cowscope_output_commit (CowscopeOutput *output, GError **error);

/* Closes and removes the temporary file.  Frees @output; NULL is ignored. */
void cowscope_output_abort (CowscopeOutput *output);

G_END_DECLS
