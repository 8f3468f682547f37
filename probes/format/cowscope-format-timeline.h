/* cowscope-format-timeline.h — how events become timeline items: the one
 * definition that the finalizer's packed lanes (cowscope-format-index.c),
 * the loader of a finalized session and the live view of a recording
 * (app/session/) all apply, so that a session looks the same while it
 * records and once it is finalized.
 *
 * A thread lane (pid, tid) holds that thread's events as instants and its
 * materializations and user ranges as spans; a CUDA lane (pid, device,
 * stream) holds that stream's records as both.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* What a timeline item is; a bucket's kind is its most frequent one.
 * Values are stable (the UI maps them to colours). */
typedef enum {
  COWSCOPE_ITEM_OTHER = 0,
  COWSCOPE_ITEM_ALLOCATION,        /* allocation new */
  COWSCOPE_ITEM_FREE,              /* allocation, storage or tensor free */
  COWSCOPE_ITEM_STORAGE,           /* storage new */
  COWSCOPE_ITEM_TENSOR,            /* tensor new or named */
  COWSCOPE_ITEM_CONTEXT,           /* context new/ref/unref/free */
  COWSCOPE_ITEM_LAZY_CLONE,
  COWSCOPE_ITEM_EAGER_COPY,        /* a lazy clone that copied eagerly */
  COWSCOPE_ITEM_MATERIALIZE_BEGIN,
  COWSCOPE_ITEM_COPY,              /* materialization that copied */
  COWSCOPE_ITEM_STEAL,             /* materialization that stole */
  COWSCOPE_ITEM_MATERIALIZE_FAILED,
  COWSCOPE_ITEM_VIOLATION,         /* simulate-mode warning */
  COWSCOPE_ITEM_RANGE,             /* user range begin/end, or a range span */
  COWSCOPE_ITEM_MARK,
  COWSCOPE_ITEM_IPC,
  COWSCOPE_ITEM_CUDA_MEMCPY,
  COWSCOPE_ITEM_CUDA_MEMSET,
  COWSCOPE_ITEM_CUDA_KERNEL,
  COWSCOPE_ITEM_CUDA_OTHER,
  COWSCOPE_ITEM_IPC_LIMBO,         /* span: a sent block in its producer's limbo */
  COWSCOPE_ITEM_IPC_HELD,          /* span: a consumer holds a received block */
  COWSCOPE_N_ITEM_KINDS
} CowscopeItemKind;

/* The item kind of an event of @type (events.type); @aux is the event's
 * aux (for materialize_end, its low byte says copy or steal). */
guint8 cowscope_timeline_event_kind (gint64 type, gint64 aux);

/* The item kind of a span of a thread lane, from its packed code (a
 * materialize kind, or COWSCOPE_SPAN_RANGE). */
guint8 cowscope_timeline_span_kind (guint8 code);

/* The byte count an event shows (0 when none); @v holds at least the
 * payload's v0..v3. */
guint64 cowscope_timeline_event_bytes (gint64 type, const gint64 *v);

/* The item kind of a CUDA record from its cuda_kinds name (NULL:
 * unknown). */
guint8 cowscope_timeline_cuda_kind (const char *name);

G_END_DECLS
