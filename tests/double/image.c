/*
 * image.c - reads a module image (a cubin: ELF64, little-endian) for the CPU
 * driver double: how many bytes it spans, and its defined function and
 * object symbols.  Every offset, size and string read from the image is
 * bounds-checked against the bytes available, so a corrupt image gives an
 * error, never a crash.  Used only by libcuda.c.
 */
#include <elf.h>
#include <stdint.h>
#include <string.h>

#include "image.h"

#define IMAGE_MAX ((uint64_t)1 << 30)   /* larger "images" are rejected */

/* 1 if [off, off+len) lies within [0, avail). */
static int in_bounds(uint64_t off, uint64_t len, uint64_t avail)
{
	return off <= avail && len <= avail - off;
}

int dbl_image_header(const unsigned char *p, size_t avail, uint64_t *shoff, unsigned *shnum,
		     const char **why)
{
	Elf64_Ehdr eh;
	if (avail < sizeof(eh)) {
		*why = "shorter than an ELF header";
		return -1;
	}
	memcpy(&eh, p, sizeof(eh));
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG)) {
		*why = "not an ELF image (bad magic)";
		return -1;
	}
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB) {
		*why = "not a little-endian ELF64 image";
		return -1;
	}
	if (eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum == 0 || eh.e_shnum >= SHN_LORESERVE) {
		*why = "bad section header table size";
		return -1;
	}
	if (eh.e_shoff > IMAGE_MAX || (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr) > IMAGE_MAX - eh.e_shoff) {
		*why = "section header table out of range";
		return -1;
	}
	*shoff = eh.e_shoff;
	*shnum = eh.e_shnum;
	return 0;
}

int dbl_image_extent(const unsigned char *shdrs, unsigned shnum, uint64_t shoff, uint64_t *len,
		     const char **why)
{
	uint64_t end = shoff + (uint64_t)shnum * sizeof(Elf64_Shdr);
	for (unsigned i = 0; i < shnum; i++) {
		Elf64_Shdr sh;
		memcpy(&sh, shdrs + (size_t)i * sizeof(sh), sizeof(sh));
		if (sh.sh_type == SHT_NOBITS || sh.sh_type == SHT_NULL)
			continue;
		if (sh.sh_offset > IMAGE_MAX || sh.sh_size > IMAGE_MAX - sh.sh_offset) {
			*why = "section out of range";
			return -1;
		}
		if (sh.sh_offset + sh.sh_size > end)
			end = sh.sh_offset + sh.sh_size;
	}
	if (end < sizeof(Elf64_Ehdr))
		end = sizeof(Elf64_Ehdr);
	*len = end;
	return 0;
}

/* Copy section header i of a validated image. */
static int get_shdr(const unsigned char *img, size_t len, unsigned i, Elf64_Shdr *sh)
{
	Elf64_Ehdr eh;
	memcpy(&eh, img, sizeof(eh));
	if (i >= eh.e_shnum)
		return -1;
	uint64_t off = eh.e_shoff + (uint64_t)i * sizeof(*sh);
	if (!in_bounds(off, sizeof(*sh), len))
		return -1;
	memcpy(sh, img + off, sizeof(*sh));
	return 0;
}

int dbl_image_symbols(const unsigned char *img, size_t len, dbl_image_sym_fn *fn, void *ctx,
		      const char **why)
{
	uint64_t shoff;
	unsigned shnum, nsymtab = 0;
	if (dbl_image_header(img, len, &shoff, &shnum, why))
		return -1;
	if (!in_bounds(shoff, (uint64_t)shnum * sizeof(Elf64_Shdr), len)) {
		*why = "section header table past the end of the image";
		return -1;
	}
	for (unsigned s = 0; s < shnum; s++) {
		Elf64_Shdr sym_sh, str_sh;
		get_shdr(img, len, s, &sym_sh);
		if (sym_sh.sh_type != SHT_SYMTAB)
			continue;
		nsymtab++;
		if (sym_sh.sh_entsize != sizeof(Elf64_Sym) || !in_bounds(sym_sh.sh_offset, sym_sh.sh_size, len) ||
		    get_shdr(img, len, sym_sh.sh_link, &str_sh) || str_sh.sh_type != SHT_STRTAB ||
		    !in_bounds(str_sh.sh_offset, str_sh.sh_size, len)) {
			*why = "corrupt symbol table";
			return -1;
		}
		const char *strtab = (const char *)img + str_sh.sh_offset;
		uint64_t nsym = sym_sh.sh_size / sizeof(Elf64_Sym);
		for (uint64_t k = 1; k < nsym; k++) {
			Elf64_Sym sym;
			memcpy(&sym, img + sym_sh.sh_offset + k * sizeof(sym), sizeof(sym));
			unsigned type = ELF64_ST_TYPE(sym.st_info);
			if ((type != STT_FUNC && type != STT_OBJECT) || sym.st_shndx == SHN_UNDEF)
				continue;
			if (sym.st_name >= str_sh.sh_size ||
			    !memchr(strtab + sym.st_name, 0, str_sh.sh_size - sym.st_name)) {
				*why = "symbol name outside the string table";
				return -1;
			}
			struct dbl_image_sym out = { strtab + sym.st_name, type == STT_FUNC, sym.st_size, NULL };
			if (type == STT_OBJECT && sym.st_shndx != SHN_COMMON && sym.st_shndx != SHN_ABS) {
				Elf64_Shdr data_sh;
				if (sym.st_shndx >= SHN_LORESERVE || get_shdr(img, len, sym.st_shndx, &data_sh)) {
					*why = "object symbol in a missing section";
					return -1;
				}
				/* relocatable images: st_value is the offset in the section;
				 * executables: an address, so subtract the section's */
				uint64_t off = sym.st_value;
				if (data_sh.sh_addr && off >= data_sh.sh_addr)
					off -= data_sh.sh_addr;
				if (data_sh.sh_type != SHT_NOBITS) {
					if (!in_bounds(data_sh.sh_offset, data_sh.sh_size, len) ||
					    !in_bounds(off, sym.st_size, data_sh.sh_size)) {
						*why = "object symbol outside its section";
						return -1;
					}
					out.data = img + data_sh.sh_offset + off;
				}
			}
			if (fn(ctx, &out)) {
				*why = "out of memory";
				return -1;
			}
		}
	}
	if (!nsymtab) {
		*why = "no symbol table";
		return -1;
	}
	return 0;
}
