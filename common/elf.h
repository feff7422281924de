/*
 * elf.h - just enough ELF64 reading to list the symbols of a cubin.
 *
 * CUPTI's MODULE_LOADED callback hands us cubins but no CUmodule handle, so
 * replay finds "the module that holds kernel K" by name through each
 * image's symbol table (GPU-FACTS.md).  Every offset and size read from the
 * image is bounds-checked: images come from traces, which may be hostile.
 */
#ifndef GPUREDUCE_ELF_H
#define GPUREDUCE_ELF_H

#include <stddef.h>
#include <stdint.h>

#define ELF_SYM_FUNC   1   /* STT_FUNC */
#define ELF_SYM_OBJECT 2   /* STT_OBJECT */

/* Call fn(name, kind, arg) for every defined FUNC or OBJECT symbol.  fn
 * returns non-zero to stop.  Returns the number of symbols visited, or -1
 * when the image is not a well-formed ELF64 file. */
long elf_symbols(const void *img, size_t size,
		 int (*fn)(const char *name, int kind, void *arg), void *arg);
/* The same, also saying whether the symbol's section is writable
 * (SHF_WRITE): a __device__ variable's is, a __constant__ one's is not. */
long elf_symbols_w(const void *img, size_t size,
		   int (*fn)(const char *name, int kind, int writable, void *arg), void *arg);
/* 1 if the image starts with the ELF magic. */
int elf_is_elf(const void *img, size_t size);

#endif
