/*
 * show.h - render a decoded trace as YAML: the body of `gpureduce show`.
 *
 * Kept apart from src/cmd-show.c (which parses options, opens the trace,
 * prints errors and picks the exit code) so that the fuzz target
 * (tests/fuzz/fuzz_trace.c) and unit tests can run the exact rendering code
 * over hostile traces without going through main().  Everything here only
 * reads the trace; output goes through libyaml's emitter, never printf.
 */
#ifndef GPUREDUCE_SHOW_H
#define GPUREDUCE_SHOW_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct strbuf;
struct trace;

struct show_opts {
	int events;              /* 1: print the events section */
	int fault_only;          /* 1: only the fault section and the faulting launch */
	uint64_t first, last;    /* events printed: first..last, inclusive */
	uint64_t blob_limit;     /* largest module blob decoded to count functions;
				  * 0: 256 MiB */
};
#define SHOW_OPTS_INIT { 1, 0, 0, UINT64_MAX, 0 }

/*
 * Write the YAML document for t to out (see docs/FORMAT.md for the record
 * fields and `gpureduce show --help` for the sections).  Problems inside
 * the trace (a module blob that does not decode, a FREE of an unknown
 * address) are reported in the YAML, not as errors.  Returns 0, or -1 with
 * one line in err when the YAML could not be emitted or written.
 */
int show_render(FILE *out, const struct trace *t, const struct show_opts *o,
		struct strbuf *err);

/*
 * Count the defined STT_FUNC symbols in the symbol tables of an ELF64
 * little-endian image (a cubin).  Bounds-checked against len: any image,
 * however malformed, gives a count or -1 with a reason in err.
 */
long show_elf_count_funcs(const uint8_t *img, size_t len, struct strbuf *err);

/* show-tensormap.c (format 1.4): a TENSORMAP record's fields, and a
 * launch's parameters that hold recorded maps (key tensor_maps). */
struct yout;
struct memmap;
struct tr_tensormap;
struct tr_launch;
void show_tmap_fields(struct yout *y, const struct tr_tensormap *m, const struct memmap *mm);
void show_launch_tmaps(struct yout *y, const struct trace *t, size_t ev, const struct tr_launch *l);

#endif
