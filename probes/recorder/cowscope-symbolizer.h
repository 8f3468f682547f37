/* cowscope-symbolizer.h — code addresses to function, file and line.
 *
 * Built from one process's memory map (/proc/PID/maps text): every
 * file-backed mapping of a file that has an executable mapping is
 * reported to elfutils' libdw offline, from the file on disk.  Unknown
 * addresses, missing files, files that are not regular files (a FIFO, a
 * device) and missing debug information give NULL fields, never an
 * error and never a wait.
 */
#pragma once

#include <glib.h>
#include <stdint.h>

G_BEGIN_DECLS

typedef struct _CowscopeSymbolizer CowscopeSymbolizer;

typedef struct {
  const char *module;   /* the mapped file, or NULL */
  const char *function; /* symbol name, or NULL */
  const char *file;     /* source file, or NULL */
  int line;             /* 0 when unknown */
} CowscopeSymbol;

/* Parses @maps; never fails (an unusable map symbolizes nothing). */
CowscopeSymbolizer *cowscope_symbolizer_new (const char *maps);

/* Looks up @address, a return address (the call site is looked up at
 * address - 1).  The strings stay valid until the symbolizer is freed.
 * Returns FALSE when no module covers @address (@symbol all NULL). */
gboolean cowscope_symbolizer_lookup (CowscopeSymbolizer *symbolizer,
                                     uint64_t address, CowscopeSymbol *symbol);

void cowscope_symbolizer_free (CowscopeSymbolizer *symbolizer);

G_END_DECLS
