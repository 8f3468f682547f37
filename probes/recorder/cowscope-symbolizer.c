/* cowscope-symbolizer.c — code addresses to function, file and line. */
#include "cowscope-symbolizer.h"

#include <elfutils/libdwfl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

struct _CowscopeSymbolizer {
  Dwfl *dwfl;
};

static char *debuginfo_path = NULL;

static const Dwfl_Callbacks offline_callbacks = {
  .find_elf = dwfl_build_id_find_elf,
  .find_debuginfo = dwfl_standard_find_debuginfo,
  .section_address = dwfl_offline_section_address,
  .debuginfo_path = &debuginfo_path,
};

typedef struct {
  char *path;
  uint64_t base;     /* start of the mapping at file offset 0 */
  gboolean has_base;
  gboolean executable;
} MappedFile;

static void
mapped_file_free (MappedFile *f)
{
  g_free (f->path);
  g_free (f);
}

CowscopeSymbolizer *
cowscope_symbolizer_new (const char *maps)
{
  CowscopeSymbolizer *s = g_new0 (CowscopeSymbolizer, 1);
  s->dwfl = dwfl_begin (&offline_callbacks);
  if (!s->dwfl || !maps)
    return s;

  /* One entry per file, in order of first appearance. */
  g_autoptr (GHashTable) by_path = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr (GPtrArray) files = g_ptr_array_new_with_free_func ((GDestroyNotify) mapped_file_free);
  g_auto (GStrv) lines = g_strsplit (maps, "\n", -1);
  for (char **l = lines; *l; l++)
    {
      uint64_t start, end, offset;
      char perms[8];
      int path_at = 0;
      if (sscanf (*l, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %*s %n",
                  &start, &end, perms, &offset, &path_at) < 4 || path_at == 0)
        continue;
      const char *path = *l + path_at;
      if (path[0] != '/' || strstr (path, " (deleted)"))
        continue;
      MappedFile *f = g_hash_table_lookup (by_path, path);
      if (!f)
        {
          f = g_new0 (MappedFile, 1);
          f->path = g_strdup (path);
          g_ptr_array_add (files, f);
          g_hash_table_insert (by_path, f->path, f);
        }
      if (offset == 0 && !f->has_base)
        {
          f->base = start;
          f->has_base = TRUE;
        }
      if (strchr (perms, 'x'))
        f->executable = TRUE;
    }

  for (guint i = 0; i < files->len; i++)
    {
      MappedFile *f = g_ptr_array_index (files, i);
      if (!f->executable || !f->has_base)
        continue;
      /* base: where the file's first page is mapped (the first PT_LOAD
       * segment starts there); an unreadable file is simply skipped. */
      dwfl_report_elf (s->dwfl, f->path, f->path, -1, f->base, false);
    }
  dwfl_report_end (s->dwfl, NULL, NULL);
  return s;
}

gboolean
cowscope_symbolizer_lookup (CowscopeSymbolizer *s, uint64_t address,
                            CowscopeSymbol *symbol)
{
  memset (symbol, 0, sizeof *symbol);
  if (!s->dwfl || address == 0)
    return FALSE;
  Dwarf_Addr pc = address - 1;
  Dwfl_Module *mod = dwfl_addrmodule (s->dwfl, pc);
  if (!mod)
    return FALSE;
  symbol->module = dwfl_module_info (mod, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
  symbol->function = dwfl_module_addrname (mod, pc);
  Dwfl_Line *line = dwfl_module_getsrc (mod, pc);
  if (line)
    {
      int lineno = 0;
      const char *file = dwfl_lineinfo (line, NULL, &lineno, NULL, NULL, NULL);
      symbol->file = file;
      symbol->line = file ? lineno : 0;
    }
  return TRUE;
}

void
cowscope_symbolizer_free (CowscopeSymbolizer *s)
{
  if (!s)
    return;
  if (s->dwfl)
    dwfl_end (s->dwfl);
  g_free (s);
}
