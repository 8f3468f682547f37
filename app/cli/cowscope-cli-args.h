/* cowscope-cli-args.h — the argument handling that the commands reading
 * sessions share: options, --help, and the session files. */
#pragma once

#include <glib.h>
#include <stdio.h>

G_BEGIN_DECLS

/* Exit statuses of the command-line tool. */
typedef enum {
  COWSCOPE_EXIT_OK = 0,
  COWSCOPE_EXIT_ERROR = 1,  /* a bad file, an I/O error */
  COWSCOPE_EXIT_USAGE = 2,  /* bad arguments */
  COWSCOPE_EXIT_BUDGET = 3, /* a --fail-if budget was exceeded */
} CowscopeExitStatus;

/* Prints "cowscope-cli COMMAND: MESSAGE" (@command NULL: "cowscope-cli:
 * MESSAGE") and a newline on @err, the message's control characters
 * escaped (cowscope-text.h): every message of the tool goes through here,
 * and messages quote file names, arguments and session contents. */
void cowscope_cli_print_error (FILE *err, const char *command, const char *format, ...)
  G_GNUC_PRINTF (3, 4);

/* Prints "cowscope-cli COMMAND: MESSAGE" and a --help hint on @err;
 * returns COWSCOPE_EXIT_USAGE. */
int cowscope_cli_usage_error (FILE *err, const char *command, const char *message);

/* Parses @argc/@argv (argv[0] is the command's name) with @context, whose
 * entries set *@help for --help and *@files for the remaining arguments.
 * Returns -1 when the caller should go on, with *@file the one session
 * file named; otherwise the exit status: COWSCOPE_EXIT_OK after printing
 * the help to @out, or COWSCOPE_EXIT_USAGE after a message on @err. */
int cowscope_cli_parse_session_args (GOptionContext *context, const char *command,
                                     int argc, char **argv, const gboolean *help,
                                     char ***files, const char **file, FILE *out,
                                     FILE *err);

/* The same for a command that takes at least @min_files and at most
 * @max_files session files (@max_files 0: no limit); on -1, *@files holds
 * them. */
int cowscope_cli_parse_session_files (GOptionContext *context, const char *command, int argc,
                                      char **argv, const gboolean *help, char ***files,
                                      guint min_files, guint max_files, FILE *out, FILE *err);

G_END_DECLS
