/* cowscope-symbolizer.c — code addresses to function, file and line.
 *
 * A memory map is untrusted input (a session file, or what a peer sent
 * the recorder): the paths it names may be FIFOs, devices or anything
 * else.  Opening a FIFO for reading blocks until a writer comes, which
 * hung finalization for ever.  So every file is checked with stat() to
 * be a regular file, opened O_NONBLOCK (a FIFO swapped in meanwhile does
 * not block), checked again with fstat() on the descriptor, and only
 * then handed to libdwfl; the separate debug files libdwfl looks for are
 * looked up only when every place it would open is a regular file or
 * absent.
 */
#include "cowscope-symbolizer.h"

#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct _CowscopeSymbolizer {
  Dwfl *dwfl;
};

/* Where libdwfl looks for separate debug files: next to the file, in its
 * .debug directory, under DEBUG_ROOT (see safe_find_debuginfo). */
#define DEBUG_ROOT "/usr/lib/debug"
static char *debuginfo_path = NULL;

/* Whether @path is a regular file or does not exist (nothing there can
 * block an open). */
static gboolean
regular_or_absent (const char *path)
{
  struct stat st;
  if (stat (path, &st) != 0)
    return errno == ENOENT || errno == ENOTDIR;
  return S_ISREG (st.st_mode);
}

/* libdwfl's standard search for a separate debug file, but only when
 * none of the files it may open is a FIFO, a device or a directory. */
static int
safe_find_debuginfo (Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
                     const char *file_name, const char *debuglink_file,
                     GElf_Word debuglink_crc, char **debuginfo_file_name)
{
  const unsigned char *bits = NULL;
  GElf_Addr vaddr;
  int n = dwfl_module_build_id (mod, &bits, &vaddr);
  if (n > 1)
    {
      GString *path = g_string_new (DEBUG_ROOT "/.build-id/");
      for (int i = 0; i < n; i++)
        g_string_append_printf (path, i == 1 ? "/%02x" : "%02x", bits[i]);
      g_string_append (path, ".debug");
      gboolean ok = regular_or_absent (path->str);
      g_string_free (path, TRUE);
      if (!ok)
        return -1;
    }
  if (debuglink_file != NULL && file_name != NULL)
    {
      g_autofree char *dir = g_path_get_dirname (file_name);
      g_autofree char *beside = g_build_filename (dir, debuglink_file, NULL);
      g_autofree char *in_debug = g_build_filename (dir, ".debug", debuglink_file, NULL);
      g_autofree char *in_root = g_build_filename (DEBUG_ROOT, dir, debuglink_file, NULL);
      if (!regular_or_absent (beside) || !regular_or_absent (in_debug)
          || !regular_or_absent (in_root))
        return -1;
    }
  return dwfl_standard_find_debuginfo (mod, userdata, modname, base, file_name,
                                       debuglink_file, debuglink_crc, debuginfo_file_name);
}

static const Dwfl_Callbacks offline_callbacks = {
  .find_elf = dwfl_build_id_find_elf,
  .find_debuginfo = safe_find_debuginfo,
  .section_address = dwfl_offline_section_address,
  .debuginfo_path = &debuginfo_path,
};

/* Opens @path for reading if it is a regular file, without ever
 * blocking; -1 otherwise. */
static int
open_regular_file (const char *path)
{
  struct stat st;
  if (stat (path, &st) != 0 || !S_ISREG (st.st_mode))
    return -1;
  int fd = open (path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  if (fstat (fd, &st) != 0 || !S_ISREG (st.st_mode))
    {
      close (fd);
      return -1;
    }
  return fd;
}

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
       * segment starts there); an unreadable file, or one that is not a
       * regular file, is simply skipped. */
      int fd = open_regular_file (f->path);
      if (fd < 0)
        continue;
      /* On success libdwfl owns the descriptor; on failure we close it. */
      if (dwfl_report_elf (s->dwfl, f->path, f->path, fd, f->base, false) == NULL)
        close (fd);
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
