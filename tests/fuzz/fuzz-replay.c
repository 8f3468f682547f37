/* fuzz-replay.c — runs a libFuzzer target's inputs once each, without
 * libFuzzer: every file named on the command line, and every file in
 * each directory named (a seed corpus), in name order.  Built with every
 * compiler, so that the corpus runs as a normal test (GNOME's
 * fuzzing/driver.c does the same for GLib's targets).  Exits 0 when every
 * input ran (a target that finds a fault aborts). */
#include <glib.h>
#include <stdint.h>
#include <stdio.h>

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static int
run_file (const char *path)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *contents = NULL;
  gsize length = 0;
  if (!g_file_get_contents (path, &contents, &length, &error))
    {
      fprintf (stderr, "fuzz-replay: %s\n", error->message);
      return 1;
    }
  printf ("# %s (%" G_GSIZE_FORMAT " bytes)\n", path, length);
  fflush (stdout);
  LLVMFuzzerTestOneInput ((const uint8_t *) contents, length);
  return 0;
}

static gint
compare_names (gconstpointer a, gconstpointer b)
{
  return g_strcmp0 (*(const char *const *) a, *(const char *const *) b);
}

int
main (int argc, char **argv)
{
  int failures = 0, runs = 0;
  for (int i = 1; i < argc; i++)
    {
      if (!g_file_test (argv[i], G_FILE_TEST_IS_DIR))
        {
          failures += run_file (argv[i]);
          runs++;
          continue;
        }
      g_autoptr (GDir) dir = g_dir_open (argv[i], 0, NULL);
      g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
      const char *name;
      while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
        g_ptr_array_add (names, g_build_filename (argv[i], name, NULL));
      g_ptr_array_sort (names, compare_names);
      for (guint k = 0; k < names->len; k++)
        {
          failures += run_file (names->pdata[k]);
          runs++;
        }
    }
  printf ("# %d inputs replayed\n", runs);
  if (runs == 0)
    {
      fprintf (stderr, "fuzz-replay: no input given\n");
      return 1;
    }
  return failures > 0 ? 1 : 0;
}
