/* cli-fixture.h — known session databases and helpers for the CLI tests.
 *
 * The fixture session records a small known workload (pid 100, threads
 * 100 "main" and 101 "worker"): tensor 1 (4 MiB) lazily cloned three times
 * (tensors 2, 3, 4: 12 MiB shared), one eager fallback (1 MiB,
 * foreign_data_ptr), two copies of 4 MiB (add_ on thread 100 and mul_ on
 * thread 101, both at train.c:88 in update_weights(), lock waits 300 and
 * 200 ns), one steal of 4 MiB (add_), one simulate-mode violation (read
 * through "snapshot" after a write through "weights", unsymbolized stack
 * 0xdeadbeef in /usr/bin/train), a range "epoch 1", an unclosed range
 * and a mark with awkward characters, a CUDA HtoD memcpy of 4 MiB issued
 * by the first copy (external_id = its seq, 14, once finalized; before,
 * an external correlation record gives its begin event's time, as the
 * probe records it) and a kernel.  Every
 * timestamp is CLI_FIXTURE_T0 + a few µs.
 */
#pragma once

#include <glib.h>
#include <sqlite3.h>
#include <stdio.h>

G_BEGIN_DECLS

#define CLI_FIXTURE_T0 G_GINT64_CONSTANT (1000000000000)
#define MiB (G_GINT64_CONSTANT (1) << 20)
#define CLI_FIXTURE_WEIRD_MARK "odd \"mark\" \\ with\nnewline\ttab\x01 and \xff bytes"

/* A fresh temporary directory (removed by cli_fixture_remove_tree). */
char *cli_fixture_tmpdir (void);

/* Removes @path and everything under it. */
void cli_fixture_remove_tree (const char *path);

/* Creates an empty session database at @path with the session format's
 * schema and returns it open for writing. */
sqlite3 *cli_fixture_create_schema (const char *path);

/* Writes the known workload to @path; @finalized FALSE leaves the derived
 * tables empty and meta.finalized = 0, as a recorder killed mid-run would.
 * @padding extra unrelated events make the file span many pages. */
void cli_fixture_write_session (const char *path, gboolean finalized,
                                guint padding);

/* Runs @sql on the session at @path (for variants of the fixture). */
void cli_fixture_exec (const char *path, const char *sql);

typedef int (*CliCommand) (int argc, char **argv, FILE *out, FILE *err);

/* Runs @command with the NULL-terminated arguments after @name, capturing
 * what it prints into *@out and *@err (either may be NULL). */
int cli_fixture_run (CliCommand command, char **out, char **err,
                     const char *name, ...) G_GNUC_NULL_TERMINATED;

/* Files in @dir whose names contain ".part" (leftovers of failed writes). */
guint cli_fixture_count_partial (const char *dir);

G_END_DECLS
