/* cowscope-thread-priority.h — the recorder yields the CPU to its target.
 *
 * The SQLite writer and the WAL checkpointer do most of the recorder's
 * work.  On a machine with few cores they compete with the target they
 * measure; running them at a lower priority makes the target win that
 * contention, so the recording disturbs what it records less.  The drain
 * thread keeps the default priority: it must empty the rings before
 * they fill. */
#pragma once

/* Lowers the calling thread's scheduling priority (nice +10).  Failure
 * (e.g. a seccomp policy) is harmless and ignored. */
void cowscope_recorder_lower_thread_priority (void);
