/*
 * elf.c - ELF64 symbol table walk (see elf.h).
 */
#include <string.h>

#include "elf.h"

static uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t rd32(const uint8_t *p) { return (uint32_t)rd16(p) | (uint32_t)rd16(p + 2) << 16; }
static uint64_t rd64(const uint8_t *p) { return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32; }

int elf_is_elf(const void *img, size_t size)
{
	return size >= 4 && !memcmp(img, "\177ELF", 4);
}

/* 1 if [off, off+len) lies inside size. */
static int inside(uint64_t off, uint64_t len, size_t size)
{
	return off <= size && len <= size - off;
}

struct plain_fn {
	int (*fn)(const char *name, int kind, void *arg);
	void *arg;
};

static int plain_adapter(const char *name, int kind, int writable, void *arg)
{
	struct plain_fn *p = arg;
	(void)writable;
	return p->fn ? p->fn(name, kind, p->arg) : 0;
}

long elf_symbols(const void *img, size_t size,
		 int (*fn)(const char *name, int kind, void *arg), void *arg)
{
	struct plain_fn p = { fn, arg };
	return elf_symbols_w(img, size, plain_adapter, &p);
}

long elf_symbols_w(const void *img, size_t size,
		   int (*fn)(const char *name, int kind, int writable, void *arg), void *arg)
{
	const uint8_t *p = img;
	uint64_t shoff;
	uint16_t shentsize, shnum;
	long count = 0;

	if (size < 64 || !elf_is_elf(img, size) || p[4] != 2 /* ELFCLASS64 */ || p[5] != 1 /* LE */)
		return -1;
	shoff = rd64(p + 0x28);
	shentsize = rd16(p + 0x3a);
	shnum = rd16(p + 0x3c);
	if (shentsize < 64 || !inside(shoff, (uint64_t)shentsize * shnum, size))
		return -1;
	for (uint16_t i = 0; i < shnum; i++) {
		const uint8_t *sh = p + shoff + (uint64_t)i * shentsize;
		uint32_t type = rd32(sh + 4);
		uint64_t off = rd64(sh + 0x18), sz = rd64(sh + 0x20);
		uint32_t link = rd32(sh + 0x28);
		uint64_t entsize = rd64(sh + 0x38);
		const uint8_t *str;
		uint64_t stroff, strsz;

		if (type != 2 /* SHT_SYMTAB */)
			continue;
		if (entsize < 24 || !inside(off, sz, size) || link >= shnum)
			return -1;
		const uint8_t *lsh = p + shoff + (uint64_t)link * shentsize;
		stroff = rd64(lsh + 0x18);
		strsz = rd64(lsh + 0x20);
		if (!inside(stroff, strsz, size) || strsz == 0)
			return -1;
		str = p + stroff;
		for (uint64_t s = 0; s + entsize <= sz; s += entsize) {
			const uint8_t *sym = p + off + s;
			uint32_t name = rd32(sym);
			uint8_t info = sym[4];
			uint16_t shndx = rd16(sym + 6);
			int kind = (info & 0xf) == 2 ? ELF_SYM_FUNC : (info & 0xf) == 1 ? ELF_SYM_OBJECT : 0;
			if (!kind || shndx == 0 /* SHN_UNDEF */ || name >= strsz)
				continue;
			/* the name must be NUL-terminated inside the string table */
			if (!memchr(str + name, 0, (size_t)(strsz - name)))
				continue;
			count++;
			{
				/* its section's SHF_WRITE: __device__ (.nv.global*), not
				 * __constant__ (.nv.constant*) */
				int w = 0;
				if (shndx < shnum) {
					const uint8_t *ssh = p + shoff + (uint64_t)shndx * shentsize;
					w = (rd64(ssh + 8) & 0x1) != 0;
				}
				if (fn && fn((const char *)str + name, kind, w, arg))
					return count;
			}
		}
	}
	return count;
}
