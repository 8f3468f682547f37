/* lttng-peer-burst.c — runs LTTng's side of the peer benchmarks alone:
 * ROUNDS bursts of EVENTS cowscope_peer:event records through a private
 * session daemon, one line of figures per burst.  For checking the
 * harness by hand; the benchmarks link the same harness.
 *
 *   lttng-peer-burst [--blocking] [EVENTS [ROUNDS]]   (2000000 events, 1 round)
 *
 * The LTTng burst target's path comes from COWSCOPE_LTTNG_TARGET.
 * Prints "skipped: <reason>" and exits 77 where LTTng cannot run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lttng-peer.h"

int
main (int argc, char **argv)
{
  LttngPeerOptions options;
  lttng_peer_options_init (&options);
  int arg = 1;
  if (arg < argc && strcmp (argv[arg], "--blocking") == 0)
    {
      options.mode = LTTNG_PEER_BLOCKING;
      arg++;
    }
  guint64 events =
    arg < argc ? g_ascii_strtoull (argv[arg++], NULL, 10) : 2000000;
  guint64 rounds = arg < argc ? g_ascii_strtoull (argv[arg++], NULL, 10) : 1;
  if (arg != argc || events < 2 || rounds < 1 || rounds > 1000)
    {
      fprintf (stderr,
               "usage: lttng-peer-burst [--blocking] [EVENTS [ROUNDS]]\n");
      return 2;
    }

  g_autofree char *reason = NULL;
  g_autoptr (LttngPeer) peer =
    lttng_peer_start (g_getenv ("COWSCOPE_LTTNG_TARGET"), &options, &reason);
  if (peer == NULL)
    {
      printf ("skipped: %s\n", reason);
      return 77;
    }
  g_autofree char *channel = lttng_peer_describe (&options);
  printf ("LTTng-UST, %s, %" G_GUINT64_FORMAT " events per burst\n", channel,
          events);
  for (guint64 r = 0; r < rounds; r++)
    {
      LttngPeerRun run;
      g_autoptr (GError) error = NULL;
      if (!lttng_peer_run (peer, events, &run, &error))
        {
          fprintf (stderr, "lttng-peer-burst: %s\n", error->message);
          return 1;
        }
      printf ("first %.1f us  warm %.1f ns/event  mean %.1f ns/event  kept "
              "%" G_GUINT64_FORMAT " discarded %" G_GUINT64_FORMAT
              "  %.1f B/event on disk  consumer %.1f ns/event"
              "  sessiond %.1f ns/event  complete %.3f s after the loop\n",
              run.target.first_ns / 1e3, run.target.warm_ns, run.target.mean_ns,
              run.kept, run.discarded,
              (double) run.bytes_on_disk / (double) MAX (run.kept, 1),
              (double) run.consumer_cpu_ns / (double) MAX (run.kept, 1),
              (double) run.sessiond_cpu_ns / (double) MAX (run.kept, 1),
              (double) run.complete_ns / 1e9);
    }
  return 0;
}
