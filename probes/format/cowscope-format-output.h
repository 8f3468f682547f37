/* cowscope-format-output.h — the one rule that no command writes its
 * output over its own input.
 *
 * `export FILE -o FILE --force` once replaced the session with its own
 * export.  Every command that writes a file it was given (every export
 * format, the application's Export dialog, `record -o`) asks this first,
 * before it creates or removes anything.  An output is its input when it
 * is the same file by any path: the same name, a hard link, a symbolic
 * link to it (or a link the input is), a bind mount — compared by device
 * and inode — or, when it does not exist yet, when its resolved directory
 * and name are the input's or the input's SQLite journal or write-ahead
 * log ("-journal", "-wal", "-shm"), which would damage the input too.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* FALSE with @error (G_FILE_ERROR_EXIST) when writing @output would write
 * over @input: "cannot write OUTPUT: it would overwrite ROLE INPUT (a
 * hard link to it); nothing was written".  @role names the input for the message ("the
 * session", "the program to record").  TRUE when @input does not exist
 * (nothing to protect) or when @output is another file. */
gboolean cowscope_format_check_output (const char *output, const char *input, const char *role,
                                       GError **error);

G_END_DECLS
