/* cow-intern.c — interned strings for names, ranges and marks.
 *
 * Strings are immortal: an id handed to a sink stays valid for the life
 * of the process.  The table is read-mostly: an open-addressing hash set
 * of pointers to immutable entries, looked up without a lock (a mark
 * names the same few strings over and over); adding a string, growing
 * the table and announcing a string to a new sink happen under one
 * mutex.  An entry is published with a release store into its slot and a
 * grown table with a release store of the table pointer, so a reader
 * that finds either sees it whole.  A reader that misses (a string being
 * added, a table being replaced) takes the mutex and looks again.
 * Replaced tables are kept, since a reader may still be probing one: they
 * add up to less than the current table.
 *
 * Before the table, each thread looks in a small cache keyed by the
 * string's address (marks and ranges name string literals): a hit is
 * confirmed by comparing the text, so a buffer reused for another name
 * is never mistaken for the old one, and skips measuring, hashing and
 * probing.
 */
#include "cow-private.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  uint64_t id;
  uint64_t hash;
  size_t length;
  /* The sink epoch the string was last announced in, stored once the
   * sink's string callback has returned (release), so that a thread
   * that reads the current epoch here (acquire) emits its events after
   * the announcement. */
  _Atomic uint64_t announced_epoch;
  char text[]; /* NUL-terminated */
} InternEntry;

typedef struct _InternTable InternTable;
struct _InternTable {
  size_t mask;            /* slots - 1; slots is a power of two */
  InternTable *retired;   /* the table this one replaced */
  _Atomic (InternEntry *) slots[];
};

/* The current table (NULL until the first string).  Written under
 * intern_lock, read by anyone. */
static _Atomic (InternTable *) current_table;

/* The per-thread cache: entry for the string last interned from each
 * address that maps to a slot. */
#define CACHE_SLOTS 8
typedef struct {
  const char *text;
  InternEntry *entry;
} CachedName;
static COW_TLS CachedName name_cache[CACHE_SLOTS];

static inline CachedName *
cache_slot (const char *text)
{
  uintptr_t a = (uintptr_t) text;
  return &name_cache[(a ^ (a >> 3) ^ (a >> 9)) & (CACHE_SLOTS - 1)];
}

/* Serialises adding strings, growing the table and announcing. */
static pthread_mutex_t intern_lock = PTHREAD_MUTEX_INITIALIZER;
static size_t n_used; /* entries in the current table; under intern_lock */

static uint64_t
hash_bytes (const char *text, size_t length)
{
  /* Eight bytes a step, each mixed by a multiply (as in wyhash-style
   * hashes); names are short, so this is a handful of instructions. */
  const uint64_t k = 0x9e3779b97f4a7c15ull;
  uint64_t h = k ^ (uint64_t) length;
  const char *p = text;
  size_t left = length;
  for (; left >= 8; p += 8, left -= 8)
    {
      uint64_t w;
      memcpy (&w, p, 8);
      h = (h ^ w) * 0xff51afd7ed558ccdull;
      h ^= h >> 32;
    }
  uint64_t tail = 0;
  memcpy (&tail, p, left);
  h = (h ^ tail) * k;
  return h ^ (h >> 29);
}

/* The entry for @text in @table, or NULL.  Lock-free: slots only ever
 * go from NULL to an entry. */
static InternEntry *
find_entry (InternTable *table, uint64_t hash, const char *text, size_t length)
{
  for (size_t i = hash & table->mask;; i = (i + 1) & table->mask)
    {
      /* Acquire: pairs with the release that published the entry. */
      InternEntry *e = atomic_load_explicit (&table->slots[i], memory_order_acquire);
      if (e == NULL)
        return NULL;
      if (e->hash == hash && e->length == length && memcmp (e->text, text, length) == 0)
        return e;
    }
}

/* Under intern_lock: puts @e into the first free slot of @table. */
static void
insert_locked (InternTable *table, InternEntry *e)
{
  size_t i = e->hash & table->mask;
  while (atomic_load_explicit (&table->slots[i], memory_order_relaxed) != NULL)
    i = (i + 1) & table->mask;
  /* Release: a reader that finds the entry sees its fields. */
  atomic_store_explicit (&table->slots[i], e, memory_order_release);
}

/* Under intern_lock: a table with room for one more entry (at most half
 * full, so probes end), or NULL when memory runs out. */
static InternTable *
table_with_room_locked (void)
{
  InternTable *table = atomic_load_explicit (&current_table, memory_order_relaxed);
  size_t slots = table != NULL ? table->mask + 1 : 0;
  if ((n_used + 1) * 2 <= slots)
    return table;
  size_t grown_slots = slots ? slots * 2 : 256;
  InternTable *grown = calloc (1, sizeof *grown + grown_slots * sizeof grown->slots[0]);
  if (grown == NULL)
    return NULL;
  grown->mask = grown_slots - 1;
  grown->retired = table;
  for (size_t i = 0; i < slots; i++)
    {
      InternEntry *e = atomic_load_explicit (&table->slots[i], memory_order_relaxed);
      if (e != NULL)
        insert_locked (grown, e);
    }
  /* Release: a reader that loads the new table sees its slots. */
  atomic_store_explicit (&current_table, grown, memory_order_release);
  return grown;
}

/* True when @e needs no announcement: no sink, or announced to this one. */
static inline bool
announced (InternEntry *e)
{
  /* The sink first (acquire), then its epoch: cow_trace_set_sink()
   * bumps the epoch before it publishes the sink. */
  if (cow_trace_sink () == NULL)
    return true;
  uint64_t epoch = atomic_load_explicit (&cow_trace_sink_epoch, memory_order_relaxed);
  return atomic_load_explicit (&e->announced_epoch, memory_order_acquire) == epoch;
}

/* Adds @text if it is new and announces it to the sink if needed. */
static InternEntry *
intern_slow (const char *text, size_t length, uint64_t hash)
{
  InternEntry *e = NULL;
  pthread_mutex_lock (&intern_lock);
  InternTable *table = atomic_load_explicit (&current_table, memory_order_relaxed);
  if (table != NULL)
    e = find_entry (table, hash, text, length);
  if (e == NULL)
    {
      table = table_with_room_locked ();
      if (table == NULL || (e = malloc (sizeof *e + length + 1)) == NULL)
        goto out;
      e->id = cow_next_id ();
      e->hash = hash;
      e->length = length;
      atomic_init (&e->announced_epoch, 0);
      memcpy (e->text, text, length + 1);
      insert_locked (table, e);
      n_used++;
    }

  /* Announced under the lock so two threads cannot both do it, and so
   * that nobody skips it before it is done. */
  const CowTraceSink *sink = cow_trace_sink ();
  uint64_t epoch = atomic_load_explicit (&cow_trace_sink_epoch, memory_order_relaxed);
  if (sink != NULL && atomic_load_explicit (&e->announced_epoch, memory_order_relaxed) != epoch)
    {
      if (sink->string != NULL)
        sink->string (e->id, e->text, e->length, sink->user_data);
      /* Release: see InternEntry.announced_epoch. */
      atomic_store_explicit (&e->announced_epoch, epoch, memory_order_release);
    }
out:
  pthread_mutex_unlock (&intern_lock);
  return e;
}

/* The table lookup (and the slow path behind it), after a cache miss.
 * Not inlined, so that a cache hit needs no stack frame. */
static uint64_t __attribute__ ((noinline))
intern_uncached (const char *text, const char **stable, CachedName *cached)
{
  size_t length = strlen (text);
  uint64_t hash = hash_bytes (text, length);
  /* Acquire: pairs with the release that published the table. */
  InternTable *table = atomic_load_explicit (&current_table, memory_order_acquire);
  InternEntry *e = table != NULL ? find_entry (table, hash, text, length) : NULL;
  if (COW_UNLIKELY (e == NULL || !announced (e)))
    {
      e = intern_slow (text, length, hash);
      if (e == NULL)
        return 0;
    }
  *cached = (CachedName) { text, e };
  if (stable != NULL)
    *stable = e->text;
  return e->id;
}

uint64_t
cow_intern_string (const char *text, const char **stable)
{
  if (stable != NULL)
    *stable = NULL;
  if (text == NULL)
    return 0;

  CachedName *cached = cache_slot (text);
  InternEntry *hit = cached->text == text ? cached->entry : NULL;
  /* Equal up to and including the terminating NUL: the same string. */
  if (hit != NULL && strncmp (hit->text, text, hit->length + 1) == 0 && announced (hit))
    {
      if (stable != NULL)
        *stable = hit->text;
      return hit->id;
    }
  return intern_uncached (text, stable, cached);
}
