/* test-lttng-peer.c — the LTTng peer harness reads what it is told
 * correctly and says why it skips, without starting LTTng: the burst
 * target's line, `lttng list`'s discarded counts, the missing target or
 * tools. */
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <string.h>

#include "burst-report.h"
#include "lttng-peer.h"

static const char full_line[] =
  "events=2000000 enabled=1 first_ns=81234 mean_ns=131.250 warm_ns=128.500"
  " loop_end_ns=1523456789012345 cpu_ns=262000000\n";

static void
test_report_parses_every_field (void)
{
  BurstReport r;
  g_autoptr (GError) error = NULL;
  g_assert_true (burst_report_parse (full_line, &r, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (r.events, ==, 2000000);
  g_assert_true (r.enabled);
  g_assert_cmpfloat (r.first_ns, ==, 81234);
  g_assert_cmpfloat (r.mean_ns, ==, 131.25);
  g_assert_cmpfloat (r.warm_ns, ==, 128.5);
  g_assert_cmpint (r.loop_end_ns, ==, G_GINT64_CONSTANT (1523456789012345));
  g_assert_cmpint (r.cpu_ns, ==, 262000000);
}

static void
test_report_finds_its_line_among_others (void)
{
  g_autofree char *text = g_strconcat ("warning: nevents=3 something\n",
                                       full_line, "trailing output\n", NULL);
  BurstReport r;
  g_assert_true (burst_report_parse (text, &r, NULL));
  g_assert_cmpuint (r.events, ==, 2000000);
  g_assert_cmpint (r.cpu_ns, ==, 262000000);
}

static void
test_report_rejects_bad_lines (void)
{
  static const char *const bad[] = {
    "",
    "nothing here\n",
    /* each field missing in turn */
    "events=2 first_ns=1 mean_ns=1 warm_ns=1 loop_end_ns=5 cpu_ns=1\n",
    "events=2 enabled=1 mean_ns=1 warm_ns=1 loop_end_ns=5 cpu_ns=1\n",
    "events=2 enabled=1 first_ns=1 warm_ns=1 loop_end_ns=5 cpu_ns=1\n",
    "events=2 enabled=1 first_ns=1 mean_ns=1 loop_end_ns=5 cpu_ns=1\n",
    "events=2 enabled=1 first_ns=1 mean_ns=1 warm_ns=1 cpu_ns=1\n",
    "events=2 enabled=1 first_ns=1 mean_ns=1 warm_ns=1 loop_end_ns=5\n",
    /* malformed values */
    "events=2x enabled=1 first_ns=1 mean_ns=1 warm_ns=1 loop_end_ns=5 "
    "cpu_ns=1\n",
    "events=-2 enabled=1 first_ns=1 mean_ns=1 warm_ns=1 loop_end_ns=5 "
    "cpu_ns=1\n",
    "events=2 enabled=2 first_ns=1 mean_ns=1 warm_ns=1 loop_end_ns=5 "
    "cpu_ns=1\n",
    "events=2 enabled=1 first_ns=nan mean_ns=1 warm_ns=1 loop_end_ns=5 "
    "cpu_ns=1\n",
    "events=2 enabled=1 first_ns=1 mean_ns= warm_ns=1 loop_end_ns=5 cpu_ns=1\n",
    "events=2 enabled=1 first_ns=1 mean_ns=1 warm_ns=1 loop_end_ns=5.5 "
    "cpu_ns=1\n",
    "events=2 enabled=1 first_ns=1 mean_ns=1 warm_ns=1 loop_end_ns=5 "
    "cpu_ns=99999999999999999999\n",
  };
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      BurstReport r;
      g_autoptr (GError) error = NULL;
      g_assert_false (burst_report_parse (bad[i], &r, &error));
      g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA);
    }
  BurstReport r;
  g_assert_false (burst_report_parse (NULL, &r, NULL));
}

/* As `lttng list SESSION` prints a channel (2.13), twice over. */
static const char listing[] = "Recording session s1: [inactive]\n"
                              "=== Domain: User space ===\n"
                              "- peer: [enabled]\n"
                              "    Statistics:\n"
                              "      Discarded events: 1200\n"
                              "- other: [enabled]\n"
                              "    Statistics:\n"
                              "      Discarded events: 34\n"
                              "      Lost packets: 2\n";

static void
test_discarded_are_summed_over_channels (void)
{
  guint64 discarded = 99;
  g_assert_true (lttng_peer_parse_discarded (listing, &discarded));
  g_assert_cmpuint (discarded, ==, 1234);
  g_assert_true (
    lttng_peer_parse_discarded ("      Discarded events: 0\n", &discarded));
  g_assert_cmpuint (discarded, ==, 0);
}

static void
test_discarded_absent_or_malformed_is_refused (void)
{
  guint64 discarded;
  g_assert_false (lttng_peer_parse_discarded (
    "Recording session s1: [inactive]\n", &discarded));
  g_assert_false (
    lttng_peer_parse_discarded ("      Discarded events: many\n", &discarded));
  g_assert_false (lttng_peer_parse_discarded (NULL, &discarded));
}

static void
test_skips_without_the_target (void)
{
  LttngPeerOptions options;
  lttng_peer_options_init (&options);
  g_autofree char *reason = NULL;
  g_assert_null (lttng_peer_start (NULL, &options, &reason));
  g_assert_nonnull (reason);
  g_assert_nonnull (strstr (reason, "liblttng-ust-dev"));
  g_clear_pointer (&reason, g_free);
  g_assert_null (lttng_peer_start ("", &options, &reason));
  g_assert_nonnull (strstr (reason, "liblttng-ust-dev"));
}

static void
test_skips_without_lttng_tools (void)
{
  g_autofree char *empty = g_dir_make_tmp ("test-lttng-peer-XXXXXX", NULL);
  g_assert_nonnull (empty);
  LttngPeerOptions options;
  lttng_peer_options_init (&options);
  options.tools_dir = empty;
  g_autofree char *reason = NULL;
  /* Any existing file will do as the target: the tools are looked for first. */
  LttngPeer *peer = lttng_peer_start ("/bin/true", &options, &reason);
  g_rmdir (empty);
  g_assert_null (peer);
  g_assert_nonnull (reason);
  g_assert_nonnull (strstr (reason, "lttng-tools is not installed"));
}

/* Writes an executable shell script @name into @dir. */
static void
write_script (const char *dir, const char *name, const char *body)
{
  g_autofree char *path = g_build_filename (dir, name, NULL);
  g_autofree char *text = g_strconcat ("#!/bin/sh\n", body, NULL);
  g_autoptr (GError) error = NULL;
  g_assert_true (g_file_set_contents_full (
    path, text, -1, G_FILE_SET_CONTENTS_NONE, 0755, &error));
  g_assert_no_error (error);
}

static void
test_skips_when_the_daemon_fails (void)
{
  /* A session daemon that refuses to start, as a broken install would;
   * as root it runs as the unprivileged uid, so its directory is open. */
  g_autofree char *bin = g_dir_make_tmp ("test-lttng-peer-XXXXXX", NULL);
  g_assert_nonnull (bin);
  g_assert_cmpint (g_chmod (bin, 0755), ==, 0);
  write_script (bin, "lttng-sessiond",
                "echo 'Error: fake daemon refuses' >&2\nexit 1\n");
  write_script (bin, "lttng", "exit 1\n");
  LttngPeerOptions options;
  lttng_peer_options_init (&options);
  options.tools_dir = bin;
  options.timeout_s = 20;
  g_autofree char *reason = NULL;
  LttngPeer *peer = lttng_peer_start ("/bin/true", &options, &reason);
  g_autofree char *script1 = g_build_filename (bin, "lttng-sessiond", NULL);
  g_autofree char *script2 = g_build_filename (bin, "lttng", NULL);
  g_unlink (script1);
  g_unlink (script2);
  g_rmdir (bin);
  g_assert_null (peer);
  g_assert_nonnull (reason);
  g_assert_nonnull (strstr (reason, "the session daemon did not start"));
  g_assert_nonnull (strstr (reason, "fake daemon refuses"));
}

static void
test_describes_the_channel (void)
{
  LttngPeerOptions options;
  lttng_peer_options_init (&options);
  g_autofree char *discard = lttng_peer_describe (&options);
  g_assert_cmpstr (discard, ==,
                   "discard mode, 4 \xc3\x97 8 MiB sub-buffers per CPU");
  options.mode = LTTNG_PEER_BLOCKING;
  options.n_subbufs = 2;
  options.subbuf_size = 512 * 1024;
  g_autofree char *blocking = lttng_peer_describe (&options);
  g_assert_cmpstr (blocking, ==,
                   "blocking mode, 2 \xc3\x97 512 KiB sub-buffers per CPU");
  options.subbuf_size = 5000;
  g_autofree char *odd = lttng_peer_describe (&options);
  g_assert_cmpstr (odd, ==,
                   "blocking mode, 2 \xc3\x97 5000 B sub-buffers per CPU");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/burst-report/parses-every-field",
                   test_report_parses_every_field);
  g_test_add_func ("/burst-report/finds-its-line-among-others",
                   test_report_finds_its_line_among_others);
  g_test_add_func ("/burst-report/rejects-bad-lines",
                   test_report_rejects_bad_lines);
  g_test_add_func ("/lttng-peer/discarded-are-summed-over-channels",
                   test_discarded_are_summed_over_channels);
  g_test_add_func ("/lttng-peer/discarded-absent-or-malformed-is-refused",
                   test_discarded_absent_or_malformed_is_refused);
  g_test_add_func ("/lttng-peer/skips-without-the-target",
                   test_skips_without_the_target);
  g_test_add_func ("/lttng-peer/skips-without-lttng-tools",
                   test_skips_without_lttng_tools);
  g_test_add_func ("/lttng-peer/skips-when-the-daemon-fails",
                   test_skips_when_the_daemon_fails);
  g_test_add_func ("/lttng-peer/describes-the-channel",
                   test_describes_the_channel);
  return g_test_run ();
}
