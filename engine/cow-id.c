/* cow-id.c — object ids and cached thread/process ids. */
#include "cow-private.h"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Threads take ids in blocks so that making objects on many threads does
 * not bounce one cache line. */
#define COW_ID_BLOCK 1024

static _Atomic uint64_t next_id_block = 1;
COW_TLS uint64_t cow_thread_next_id;
COW_TLS uint64_t cow_thread_id_limit;

static COW_TLS uint32_t cached_tid;
static _Atomic uint32_t cached_pid;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

uint64_t
cow_next_id_block (void)
{
  /* Relaxed: only uniqueness matters, not ordering with other memory. */
  uint64_t first = atomic_fetch_add_explicit (&next_id_block, COW_ID_BLOCK,
                                              memory_order_relaxed);
  cow_thread_next_id = first + 1;
  cow_thread_id_limit = first + COW_ID_BLOCK;
  return first;
}

static void
reset_ids_in_child (void)
{
  /* The forking thread is the child's only thread: its tid changed. */
  cached_tid = 0;
  atomic_store_explicit (&cached_pid, 0, memory_order_relaxed);
}

static void
install_atfork (void)
{
  pthread_atfork (NULL, NULL, reset_ids_in_child);
}

uint32_t
cow_current_tid (void)
{
  if (COW_UNLIKELY (cached_tid == 0))
    {
      pthread_once (&atfork_once, install_atfork);
      cached_tid = (uint32_t) syscall (SYS_gettid);
    }
  return cached_tid;
}

uint32_t
cow_current_pid (void)
{
  /* Relaxed: every thread computes the same value. */
  uint32_t pid = atomic_load_explicit (&cached_pid, memory_order_relaxed);
  if (COW_UNLIKELY (pid == 0))
    {
      pthread_once (&atfork_once, install_atfork);
      pid = (uint32_t) getpid ();
      atomic_store_explicit (&cached_pid, pid, memory_order_relaxed);
    }
  return pid;
}
