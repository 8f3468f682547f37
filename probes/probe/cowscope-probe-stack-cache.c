/* cowscope-probe-stack-cache.c — the stacks a thread already sent, so
 * that an event whose call stack repeats carries only its key.
 *
 * heaptrack gives each unique stack an index and writes the frames once;
 * we do the same per ring (per thread), which needs no lock and keeps the
 * recorder's resolution local to the ring it reads in order: the first
 * time a thread records a stack it writes the frames with a new key
 * (STACK_DEF), later times the key (STACK_REF).  The table is direct
 * mapped by a 64-bit hash of the frames: a slot taken by another stack is
 * simply overwritten, and that stack gets a new key when it comes back
 * (the recorder interns stacks by their frames, so the session still
 * holds it once).  Two different stacks with the same 64-bit hash in one
 * thread would share a key: about one chance in 10^12 for 10^4 distinct
 * stacks of a thread, which we accept for a hash instead of storing and
 * comparing every stack's frames.
 */
#include "cowscope-probe-private.h"

#include <stdlib.h>

/* 1024 stacks a thread (16 KiB): a training loop's call sites, many
 * times over. */
#define STACK_CACHE_SLOTS 1024

typedef struct {
  uint64_t hash;
  uint64_t key; /* 0: empty */
} StackSlot;

struct _CowscopeProbeStackCache {
  uint64_t last_key;
  StackSlot slots[STACK_CACHE_SLOTS];
};

CowscopeProbeStackCache *
cowscope_probe_stack_cache_new (void)
{
  return calloc (1, sizeof (CowscopeProbeStackCache));
}

void
cowscope_probe_stack_cache_free (CowscopeProbeStackCache *cache)
{
  free (cache);
}

uint64_t
cowscope_probe_stack_hash (const uint64_t *frames, uint32_t n)
{
  /* A multiply-xorshift step per frame (as the engine's string hash). */
  uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
  for (uint32_t i = 0; i < n; i++)
    {
      h = (h ^ frames[i]) * 0xff51afd7ed558ccdull;
      h ^= h >> 32;
    }
  h *= 0xc4ceb9fe1a85ec53ull;
  return h ^ (h >> 29);
}

uint64_t
cowscope_probe_stack_cache_find (const CowscopeProbeStackCache *cache, uint64_t hash)
{
  const StackSlot *slot = &cache->slots[hash & (STACK_CACHE_SLOTS - 1)];
  return slot->key != 0 && slot->hash == hash ? slot->key : 0;
}

uint64_t
cowscope_probe_stack_cache_next_key (const CowscopeProbeStackCache *cache)
{
  return cache->last_key + 1;
}

void
cowscope_probe_stack_cache_insert (CowscopeProbeStackCache *cache, uint64_t hash, uint64_t key)
{
  StackSlot *slot = &cache->slots[hash & (STACK_CACHE_SLOTS - 1)];
  slot->hash = hash;
  slot->key = key;
  cache->last_key = key;
}
