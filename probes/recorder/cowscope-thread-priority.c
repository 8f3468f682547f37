/* cowscope-thread-priority.c — see cowscope-thread-priority.h. */
#include "cowscope-thread-priority.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#define RECORDER_NICENESS 10

void
cowscope_recorder_lower_thread_priority (void)
{
  /* On Linux a nice value belongs to a thread, named by its tid. */
  (void) setpriority (PRIO_PROCESS, (id_t) syscall (SYS_gettid), RECORDER_NICENESS);
}
