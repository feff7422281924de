/*
 * fuzz_trace.c - libFuzzer target for everything that reads a trace:
 * trace_open_mem() (lenient and strict), every decoded record, every blob
 * (trace_blob_read with a 16 MiB limit), the YAML rendering of `show`
 * (show_render, to /dev/null) and the ELF symbol counter it uses, and
 * repro.cu's emitter (emit_repro, into memory: what shrink and report do
 * with a trace; GPUREDUCE_SOURCE=0, so no search of the disk beside the
 * trace's cwd).
 *
 * Record checksums would make almost every mutation die at the first
 * record, so each input is also tried a second time after a "fix-up" that
 * gives the mutated bytes valid framing checksums and valid blob hashes
 * (rewriting references to a re-hashed blob), which lets the fuzzer reach
 * field decoding, blob decompression, memmap annotation and ELF parsing.
 *
 * Built and run by `make fuzz` / `make fuzz-run` (tests/tests.mk), which
 * compile the reader sources and src/show/show.c directly with
 * -fsanitize=fuzzer,address,undefined.  Seeds: tests/fuzz/corpus/.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>
#include <zstd.h>

#include "../../common/strbuf.h"
#include "../../emit/emit.h"
#include "../../src/show/show.h"
#include "../../trace/trace.h"

#define LIMIT (16u << 20)

static FILE *devnull;

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t rd64(const uint8_t *p)
{
	return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32;
}

static void wr32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void wr64(uint8_t *p, uint64_t v)
{
	wr32(p, (uint32_t)v);
	wr32(p + 4, (uint32_t)(v >> 32));
}

/* Calls f(payload, len, type, ctx) for each fully framed record. */
static void each_record(uint8_t *d, size_t size,
			void (*f)(uint8_t *, size_t, uint32_t, uint8_t *, void *), void *ctx)
{
	size_t off;
	if (size < TRACE_HEADER_SIZE)
		return;
	off = rd32(d + 12);
	if (off < TRACE_HEADER_SIZE)
		off = TRACE_HEADER_SIZE;
	while (off <= size && size - off >= TRACE_RECORD_HEADER_SIZE) {
		uint64_t len = rd64(d + off + 8);
		if (len > size - off - TRACE_RECORD_HEADER_SIZE)
			return;
		f(d + off + TRACE_RECORD_HEADER_SIZE, (size_t)len, rd32(d + off), d + off, ctx);
		off += TRACE_RECORD_HEADER_SIZE + (size_t)len;
	}
}

struct rehash {
	uint64_t from[64], to[64];
	int n;
};

/* BLOB records: set the hash to the content's. */
static void fix_blob(uint8_t *p, size_t len, uint32_t type, uint8_t *hdr, void *ctx)
{
	struct rehash *rh = ctx;
	uint64_t h, raw;
	uint32_t codec;
	(void)hdr;
	if (type != TR_BLOB || len < 20 || rh->n == 64)
		return;
	raw = rd64(p + 8);
	codec = rd32(p + 16);
	if (codec == TR_CODEC_RAW) {
		h = XXH3_64bits(p + 20, len - 20);
	} else if (codec == TR_CODEC_ZSTD && raw <= (1u << 20)) {
		void *buf = malloc(raw ? raw : 1);
		size_t n = ZSTD_decompress(buf, raw, p + 20, len - 20);
		if (ZSTD_isError(n) || n != raw) {
			free(buf);
			return;
		}
		h = XXH3_64bits(buf, raw);
		free(buf);
	} else {
		return;
	}
	if (h != rd64(p)) {
		rh->from[rh->n] = rd64(p);
		rh->to[rh->n++] = h;
		wr64(p, h);
	}
}

/* MODULE and H2D records: follow the blobs re-hashed above. */
static void fix_refs(uint8_t *p, size_t len, uint32_t type, uint8_t *hdr, void *ctx)
{
	struct rehash *rh = ctx;
	size_t at = type == TR_MODULE ? 8 : type == TR_MEMCPY_H2D ? 24 : 0;
	(void)hdr;
	if (!at || len < at + 8)
		return;
	for (int i = 0; i < rh->n; i++)
		if (rd64(p + at) == rh->from[i]) {
			wr64(p + at, rh->to[i]);
			break;
		}
}

static void fix_sum(uint8_t *p, size_t len, uint32_t type, uint8_t *hdr, void *ctx)
{
	(void)ctx;
	wr32(hdr + 4, XXH32(p, len, type));
}

static void exercise(const uint8_t *data, size_t size, unsigned flags)
{
	struct trace t;
	struct strbuf err = STRBUF_INIT, blob = STRBUF_INIT;
	struct show_opts o = SHOW_OPTS_INIT;
	volatile uint64_t sink = 0;

	if (trace_open_mem(&t, "fuzz.bin", data, size, flags, &err) < 0) {
		if (!err.len)
			abort();   /* every failure must say why */
		sb_release(&err);
		return;
	}
	for (size_t i = 0; i < t.nrec; i++) {
		const struct tr_rec *r = &t.rec[i];
		uint64_t h = 0;
		sink += r->type + r->offset;
		switch (r->type) {
		case TR_PROCESS:
			for (uint32_t k = 0; k < r->u.process.argc; k++)
				sink += strlen(r->u.process.argv[k]);
			sink += strlen(r->u.process.cwd);
			break;
		case TR_LAUNCH:
			sink += strlen(r->u.launch.name);
			for (uint32_t k = 0; k < r->u.launch.nparams; k++)
				sink += r->u.launch.args[r->u.launch.params[k].offset +
							 r->u.launch.params[k].size - (r->u.launch.params[k].size ? 1 : 0)];
			for (uint32_t k = 0; k < r->u.launch.nframes; k++)
				sink += strlen(r->u.launch.frames[k].file) + strlen(r->u.launch.frames[k].func);
			break;
		case TR_MODULE: h = r->u.module.blob; break;
		case TR_MEMCPY_H2D: h = r->u.copy.blob; break;
		case TR_BLOB: h = r->u.blob.hash; break;
		default: break;
		}
		if (r->type == TR_MODULE || r->type == TR_MEMCPY_H2D || r->type == TR_BLOB) {
			sb_reset(&blob);
			sb_reset(&err);
			if (trace_blob_read(&t, h, &blob, LIMIT, &err) < 0 && !err.len)
				abort();
			sink += blob.len;
		}
	}
	o.blob_limit = LIMIT;
	sb_reset(&err);
	if (show_render(devnull, &t, &o, &err) < 0) {
		fprintf(stderr, "show_render failed: %s\n", err.buf);
		abort();   /* writing to /dev/null cannot fail: the emitter did */
	}
	o.fault_only = 1;
	if (show_render(devnull, &t, &o, &err) < 0) {
		fprintf(stderr, "show_render --fault failed: %s\n", err.buf);
		abort();
	}
	/* repro.cu from it (a failure is an answer too, but must say why) */
	{
		struct emit_info info = { &t, NULL, NULL, "fuzz.bin", -1 };
		sb_reset(&err);
		sb_reset(&blob);
		if (emit_repro(&t, &info, &blob, &err) < 0 && !err.len)
			abort();
	}
	trace_release(&t);
	sb_release(&err);
	sb_release(&blob);
	(void)sink;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct strbuf err = STRBUF_INIT;
	struct rehash rh;
	uint8_t *fixed;

	if (!devnull) {
		if (!(devnull = fopen("/dev/null", "w")))
			abort();
		setenv("GPUREDUCE_SOURCE", "0", 1);
	}
	exercise(data, size, 0);
	exercise(data, size, TRACE_OPEN_STRICT);

	fixed = malloc(size ? size : 1);
	memcpy(fixed, data, size);
	rh.n = 0;
	each_record(fixed, size, fix_blob, &rh);
	each_record(fixed, size, fix_refs, &rh);
	each_record(fixed, size, fix_sum, NULL);
	exercise(fixed, size, 0);
	free(fixed);

	show_elf_count_funcs(data, size, &err);
	sb_release(&err);
	return 0;
}
