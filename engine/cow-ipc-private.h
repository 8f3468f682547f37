/* cow-ipc-private.h — IPC internals shared by the allocator, counter
 * files, producer, consumer and transports. */
#pragma once

#include <pthread.h>
#include <stdatomic.h>
#include <sys/types.h>

#include "cow-ipc.h"
#include "cow-private.h"
#include "cow-tensor-private.h"

/* A block of the shareable CPU allocator: its own memfd, mapped shared. */
typedef struct {
  int fd;
  void *data;
  size_t map_len; /* ≥ 1 page even for 0 bytes */
  size_t nbytes;
  uint64_t block_id;
} CowIpcShmBlock;

/* The consumer that received a slot, written by the consumer at receive. */
typedef struct {
  _Atomic int32_t pid;        /* 0 until received; stored last (release) */
  uint32_t reserved;
  _Atomic uint64_t starttime; /* /proc/<pid>/stat field 22, clock ticks */
  _Atomic uint64_t pid_ns;    /* inode of /proc/self/ns/pid */
} CowIpcConsumerRecord;

/* Layout of a counter file: header, then nslots counters, then nslots
 * consumer records. */
typedef struct {
  uint64_t magic;
  uint64_t nslots;
} CowIpcCounterHeader;

#define COW_IPC_COUNTER_MAGIC 0x434f5743544e5253ull

/* A counter file, mapped (by its producer or a consumer). */
typedef struct _CowIpcCounterFile CowIpcCounterFile;
struct _CowIpcCounterFile {
  uint64_t id;
  char name[COW_IPC_NAME_MAX];
  pid_t creator; /* only the creating process unlinks */
  size_t map_len;
  uint64_t nslots;
  CowIpcCounterHeader *header;
  _Atomic int64_t *counts;
  CowIpcConsumerRecord *consumers;
  /* Producer side, under the producer lock: */
  uint64_t next_offset; /* next slot handed out; never reused */
  uint64_t used_slots;  /* handed out and not yet released */
  bool unlinked;
  CowIpcCounterFile *next;
  /* Consumer side, under the consumer lock: received records using it. */
  int64_t consumer_refs;
};

/* Bytes of a counter file of @nslots slots. */
COW_INTERNAL size_t cow_ipc_counter_file_size (uint64_t nslots);
/* Creates "/cowtensor-ipc-<pid>-<n>" (O_EXCL, 0600), sized and mapped. */
COW_INTERNAL CowIpcCounterFile *cow_ipc_counter_file_create (uint64_t nslots,
                                                            CowError *error);
/* Maps an existing counter file without creating it. */
COW_INTERNAL CowIpcCounterFile *cow_ipc_counter_file_open (const char *name,
                                                          uint64_t id,
                                                          CowError *error);
/* Unmaps @file and frees the record (unlinking is separate). */
COW_INTERNAL void cow_ipc_counter_file_close (CowIpcCounterFile *file);
/* Unlinks @file's name if this process created it. */
COW_INTERNAL void cow_ipc_counter_file_unlink (CowIpcCounterFile *file);
/* True when the consumer recorded in @slot is known to be gone. */
COW_INTERNAL bool cow_ipc_consumer_dead (const CowIpcCounterFile *file,
                                         uint64_t slot);
/* Records the calling process as the consumer of @slot. */
COW_INTERNAL void cow_ipc_consumer_record (CowIpcCounterFile *file, uint64_t slot);

/* The shareable block behind @owner (through sent-data wrappers), or NULL. */
COW_INTERNAL CowIpcShmBlock *cow_ipc_shm_block_of (const CowDataPtr *owner);
/* Deleters, so owners can be recognised. */
COW_INTERNAL void cow_ipc_shm_free (void *context);
COW_INTERNAL void cow_ipc_sent_free (void *context);
COW_INTERNAL void cow_ipc_received_free (void *context);
/* The inner owner of a sent-data record. */
COW_INTERNAL const CowDataPtr *cow_ipc_sent_inner (void *context);

/* Runs a limbo scan for @trigger; returns the blocks freed. */
COW_INTERNAL size_t cow_ipc_collect_for (CowIpcCollectTrigger trigger);

/* The random nonce of this process (new after fork). */
COW_INTERNAL uint64_t cow_ipc_process_nonce (void);

/* Transports. */
COW_INTERNAL extern const CowIpcTransport cow_ipc_cpu_transport;
COW_INTERNAL extern const CowIpcTransport cow_ipc_cuda_transport;
