/* cowscope-text.h — strings from a session (or a user's arguments) made
 * safe for text output: what a terminal would act on is shown, not sent.
 *
 * A session file is untrusted, and its tensor names, range names, paths,
 * command lines and schema text are arbitrary bytes: a newline in a name
 * would forge lines of a report, an ESC would send terminal escapes, a
 * bidirectional override would reorder what is shown.  Every text output
 * (the text report, the command-line tool's messages) passes such strings
 * through cowscope_text_escape() once, where it prints them.  JSON output
 * escapes in its own way (json-glib, cowscope_output_json_string()) and
 * does not use this.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* A new string: @text (NULL gives NULL) with invalid UTF-8 replaced by
 * U+FFFD and every control character written out: \n, \r, \t, \xNN for
 * the other C0 controls and DEL, \u00NN for C1 controls (0x80-0x9f, which
 * some terminals read as ESC sequences), \uNNNN for the bidirectional
 * marks, embeddings, overrides and isolates and the Unicode line and
 * paragraph separators.  Everything else, backslashes included, is kept
 * as it is, so ordinary names read unchanged. */
char *cowscope_text_escape (const char *text);

/* TRUE when cowscope_text_escape() would change @text. */
gboolean cowscope_text_needs_escape (const char *text);

G_END_DECLS
