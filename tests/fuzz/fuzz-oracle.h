/* fuzz-oracle.h — what a correct result looks like, for the fuzzers: a
 * report whose numbers are in range and agree with each other, a text
 * report with no control character, a refusal that says what is wrong.
 * One place for the fuzz test (fuzz-sessions.c) and the libFuzzer
 * targets (fuzz-session.c). */
#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* NULL when @report (cowscope_report_build()'s) is consistent: every
 * count and byte total >= 0 and below 2^63, saved = shared - copied,
 * the eager fallbacks and CUDA kinds add up to their totals, the top
 * operations and call sites add up to no more than the totals, start <=
 * end.  Otherwise why not (a new string). */
char *fuzz_oracle_check_report (JsonObject *report);

/* NULL when @text (a text report or a message for a terminal) holds no
 * control character but newlines, and no bidirectional override; else
 * why (a new string). */
char *fuzz_oracle_check_text (const char *text);

/* NULL when @error is a refusal of the session named @path in the
 * format's words (COWSCOPE_SESSION_ERROR or a file error naming @path,
 * none of SQLite's raw parser messages); else why (a new string). */
char *fuzz_oracle_check_refusal (const GError *error, const char *path);

G_END_DECLS
