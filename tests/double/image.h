/*
 * image.h - bounds-checked reading of module images (ELF64 cubins) for the
 * CPU driver double; see image.c.  Errors set *why to a static string.
 */
#ifndef GPUREDUCE_DOUBLE_IMAGE_H
#define GPUREDUCE_DOUBLE_IMAGE_H

#include <stddef.h>
#include <stdint.h>

struct dbl_image_sym {
	const char *name;               /* points into the image */
	int is_func;                    /* 1: STT_FUNC, 0: STT_OBJECT */
	uint64_t size;                  /* st_size */
	const unsigned char *data;      /* object's initial bytes; NULL: zeros */
};
/* Called per defined symbol; returns 0, or -1 to stop (out of memory). */
typedef int dbl_image_sym_fn(void *ctx, const struct dbl_image_sym *sym);

/* Check the ELF header in the first `avail` bytes; on success give the
 * section header table's offset and entry count.  0 or -1. */
int dbl_image_header(const unsigned char *p, size_t avail, uint64_t *shoff, unsigned *shnum,
		     const char **why);
/* From the shnum section headers at shdrs (copied from offset shoff), the
 * number of bytes the image spans.  0 or -1. */
int dbl_image_extent(const unsigned char *shdrs, unsigned shnum, uint64_t shoff, uint64_t *len,
		     const char **why);
/* Call fn for every defined STT_FUNC/STT_OBJECT symbol of every SHT_SYMTAB
 * in the len-byte image.  0, or -1 (corrupt image, or fn failed). */
int dbl_image_symbols(const unsigned char *img, size_t len, dbl_image_sym_fn *fn, void *ctx,
		      const char **why);

#endif
