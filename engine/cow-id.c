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

COW_TLS uint32_t cow_cached_tid;
_Atomic uint32_t cow_cached_pid;
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
  cow_cached_tid = 0;
  atomic_store_explicit (&cow_cached_pid, 0, memory_order_relaxed);
}

static void
install_atfork (void)
{
  pthread_atfork (NULL, NULL, reset_ids_in_child);
}

uint32_t
cow_current_tid_slow (void)
{
  pthread_once (&atfork_once, install_atfork);
  cow_cached_tid = (uint32_t) syscall (SYS_gettid);
  return cow_cached_tid;
}

uint32_t
cow_current_pid_slow (void)
{
  pthread_once (&atfork_once, install_atfork);
  uint32_t pid = (uint32_t) getpid ();
  /* Relaxed: every thread computes the same value. */
  atomic_store_explicit (&cow_cached_pid, pid, memory_order_relaxed);
  return pid;
}
