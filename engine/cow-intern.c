/* cow-intern.c — interned strings for names, ranges and marks.
 *
 * Strings are immortal: an id handed to a sink stays valid for the life
 * of the process.  The table is an open-addressing hash set under one
 * mutex; names are set far less often than tensors are made.
 */
#include "cow-private.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  uint64_t id;
  uint64_t hash;
  uint64_t announced_epoch; /* sink epoch the string was last sent in */
  size_t length;
  char *text;
} InternEntry;

/* Protects every field below. */
static pthread_mutex_t intern_lock = PTHREAD_MUTEX_INITIALIZER;
static InternEntry *entries;
static size_t n_slots; /* power of two */
static size_t n_used;

static uint64_t
hash_bytes (const char *text, size_t length)
{
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (size_t i = 0; i < length; i++)
    h = (h ^ (unsigned char) text[i]) * 1099511628211ull;
  return h;
}

static InternEntry *
find_slot (InternEntry *table, size_t slots, uint64_t hash, const char *text,
           size_t length)
{
  for (size_t i = hash & (slots - 1);; i = (i + 1) & (slots - 1))
    {
      InternEntry *e = &table[i];
      if (e->text == NULL)
        return e;
      if (e->hash == hash && e->length == length
          && memcmp (e->text, text, length) == 0)
        return e;
    }
}

static bool
grow_locked (void)
{
  size_t slots = n_slots ? n_slots * 2 : 256;
  InternEntry *table = calloc (slots, sizeof *table);
  if (table == NULL)
    return false;
  for (size_t i = 0; i < n_slots; i++)
    if (entries[i].text != NULL)
      *find_slot (table, slots, entries[i].hash, entries[i].text,
                  entries[i].length) = entries[i];
  free (entries);
  entries = table;
  n_slots = slots;
  return true;
}

uint64_t
cow_intern_string (const char *text, const char **stable)
{
  if (stable != NULL)
    *stable = NULL;
  if (text == NULL)
    return 0;

  size_t length = strlen (text);
  uint64_t hash = hash_bytes (text, length);
  uint64_t id = 0;

  pthread_mutex_lock (&intern_lock);
  if ((n_used + 1) * 2 > n_slots && !grow_locked ())
    goto out;
  InternEntry *e = find_slot (entries, n_slots, hash, text, length);
  if (e->text == NULL)
    {
      char *copy = malloc (length + 1);
      if (copy == NULL)
        goto out;
      memcpy (copy, text, length + 1);
      *e = (InternEntry) { .id = cow_next_id (), .hash = hash, .length = length, .text = copy };
      n_used++;
    }
  id = e->id;
  if (stable != NULL)
    *stable = e->text;

  /* Announced under the lock so two threads cannot both skip it. */
  const CowTraceSink *sink = cow_trace_sink ();
  uint64_t epoch = atomic_load_explicit (&cow_trace_sink_epoch, memory_order_relaxed);
  if (sink != NULL && e->announced_epoch != epoch)
    {
      e->announced_epoch = epoch;
      if (sink->string != NULL)
        sink->string (e->id, e->text, e->length, sink->user_data);
    }
out:
  pthread_mutex_unlock (&intern_lock);
  return id;
}
