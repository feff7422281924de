/*
 * mktrace.c - test helper: write a synthetic trace through the real writer
 * (trace/trace.h tw_*) from a small line-based script on stdin.
 *
 *   usage: mktrace [-v] OUT.bin < script
 *          mktrace --elf OUT.cubin FUNC...   (just the ELF image `elfmodule` makes)
 *   -v prints one line per record written: "EVENT TYPE OFFSET".
 *
 * Used by the CLI tests (tests/cli/t*.sh) and to make the fuzz seed corpus;
 * built by tests/tests.mk as $(BUILD)/mktrace.  Exit 0, or 2 with
 * "mktrace: line N: what" for a bad script, 3 for a write error.
 *
 * Script language: one command per line; words are separated by blanks;
 * "double quotes" group words (escapes \" \\ \n \t); # starts a comment.
 * Numbers are C-style (decimal, 0x hex, 0 octal).  Event numbers are the
 * index of each record among all records, BLOB records included (h2d,
 * module, elfmodule and blob each write a BLOB first unless the same bytes
 * were already stored).
 *
 *   process PID CWD ARG...               TR_PROCESS
 *   device NAME [CCMAJ CCMIN [DRIVER [TOOLKIT [MEM [SMS]]]]]
 *                                         defaults 9 0 13000 13000 150e9 132
 *   alloc ADDR SIZE [KIND [NAME]]          KIND: device host managed vmm async
 *                                         global, or a number (default device);
 *                                         vmm+cont: vmm flagged TR_ALLOC_F_VMM_CONT
 *   free ADDR [KIND]
 *   h2d DST SIZE FILL [SRC] [async] [hostmem] [checkpoint]
 *                                         FILL: a byte 0..255, `seq` (i & 255),
 *                                         `u64:V,V,...` (LE words, then zeros)
 *                                         or `rand[:SEED]` (incompressible);
 *                                         hostmem: flagged TR_F_HOSTMEM;
 *                                         checkpoint: TR_F_CHECKPOINT
 *   d2d DST SRC SIZE  |  d2h DST SRC SIZE
 *   memset DST VALUE COUNT [ELEM [HEIGHT PITCH]]     ELEM 1, 2 or 4 (default 1)
 *   launch NAME GX BX ARG...              one TR_LAUNCH; ARG is a parameter or
 *                                         an option (has '=').  Parameters, laid
 *                                         out in order at natural alignment:
 *       ptr:V u64:V   8 bytes LE     u32:V i32:V  4 bytes     u16:V  u8:V
 *       f32:V f64:V   floats         hex:BYTES    raw bytes as written
 *       0xV           (bare, 0x-prefixed) 8 bytes LE, like ptr:
 *       BYTES         (bare hex digits)   raw bytes as written
 *     options: grid=X[,Y[,Z]] block=X[,Y[,Z]] shmem=N stream=V seq=N (default:
 *       count of launches so far) api=kernel|ex|coop|N func=V tid=N async=1
 *       py=none|nogil|frames frame=FILE:LINE:FUNC (repeat, innermost first;
 *       implies py=frames) attr=ID:HEX
 *   fault CODE ERROR API SEQ [at_launch=0|1] [kernel=NAME]
 *                                         kernel defaults to launch SEQ's name
 *   module FILE [ID [KIND]]               image from a file; KIND elf|other|N
 *                                         (default: elf when it starts \x7fELF)
 *   elfmodule ID FUNC...                  a synthesized ELF64 cubin (EM_CUDA)
 *                                         whose .symtab defines each FUNC as a
 *                                         global STT_FUNC in .text
 *   gbegin STREAM | gend STREAM GRAPH | gexec GRAPH EXEC | glaunch EXEC [STREAM]
 *                                         the graph records (launch option
 *                                         captured=1 marks a graph node;
 *                                         folded=1 a communication kernel folded away)
 *   shortlaunches                         from here on, a launch that repeats
 *                                         one written before (func, name,
 *                                         layout, bytes) is written short
 *                                         (TR_F_SAME, format 2.0)
 *   funcattr KERNEL ATTR VALUE
 *   block ADDR SIZE SEGMENT [alloc=N] [initial] [source=N] [at=FILE:LINE:FUNC]
 *                                         BLOCK_ALLOC (1.3): an allocator block
 *                                         (alloc defaults to SIZE rounded up to 512)
 *   blockfree ADDR                        BLOCK_FREE (1.3)
 *   nonptr KERNEL OFFSET [LAYOUT]         NONPTR (1.7): that argument word of
 *                                         KERNEL's launches is an integer
 *                                         (LAYOUT: tr_launch_layout; 0, the
 *                                         default: every layout)
 *   ckbegin ID SEQ [ALLOCS BYTES]  |  ckend ID SEQ [ALLOCS BYTES [STORED]]
 *                                         CHECKPOINT_BEGIN / CHECKPOINT_END (1.2)
 *   note TEXT...  |  reduction TEXT...    words joined by one space
 *   env TEXT...                           ENV (1.4): words joined by one space
 *   source ORIGIN KERNEL PATH META TEXT   SOURCE (1.4); ORIGIN a number
 *   stderr EXIT TEXT [DROPPED]            STDERR (1.4)
 *   end [EXIT [LAUNCHES ALLOCS BYTES]]    counts default to what was written
 *   blob FILL SIZE                        an unreferenced blob
 *   rec TYPE [KEY=VALUE...]               one record of any type of trace/records.def
 *                                         but BLOB, by its name (ALLOC, ENV, ...); KEY:
 *                                         a plain field (number or string) by the key
 *                                         `show` prints; fields not given are 0 or ""
 *   raw TYPE [HEX]                        a correctly framed record of any type
 *                                         number with this payload
 *   After the file is closed, in script order:
 *   truncate N                            keep N bytes (N < 0: drop -N at end)
 *   poke OFFSET HEX                       overwrite bytes (OFFSET < 0: from end)
 *   version MAJOR MINOR                   patch the header's version fields (and
 *                                         its checksum, as that version writes it)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "../../../common/strbuf.h"
#include "../../../common/util.h"
#include "../../../trace/trace.h"

#define MAXW 4096

static int lineno;
static int verbose;
static struct trace_writer w = TRACE_WRITER_INIT;
static uint64_t n_launch, n_alloc, h2d_bytes, n_module;
static char **seq_names;      /* kernel name per launch seq (for `fault`) */
static size_t seq_names_n, seq_names_alloc;

struct post {
	int op;                   /* 't' truncate, 'p' poke, 'v' version */
	long long a, b;
	struct strbuf bytes;
};
static struct post *posts;
static size_t nposts, posts_alloc;

static void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
static void die(const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "mktrace: line %d: ", lineno);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static uint64_t num(const char *s)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (!*s || *end || errno)
		die("'%s' is not a number", s);
	return v;
}

static long long snum(const char *s)
{
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 0);
	if (!*s || *end || errno)
		die("'%s' is not a number", s);
	return v;
}

static void hex_decode(struct strbuf *sb, const char *h)
{
	size_t n = strlen(h);
	if (n % 2)
		die("hex '%s' has an odd number of digits", h);
	for (size_t i = 0; i < n; i += 2) {
		char b[3] = { h[i], h[i + 1], 0 };
		char *end;
		unsigned long v = strtoul(b, &end, 16);
		if (*end)
			die("'%s' is not hex", h);
		sb_addch(sb, (int)v);
	}
}

/* Split a line into words; returns the count. */
static int split(char *line, char **wv)
{
	int n = 0;
	char *p = line, *o;
	for (;;) {
		while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
			p++;
		if (!*p || *p == '#')
			return n;
		if (n == MAXW)
			die("too many words");
		wv[n++] = o = p;
		while (*p && *p != ' ' && *p != '\t' && *p != '\r' && *p != '\n') {
			if (*p != '"') {
				*o++ = *p++;
				continue;
			}
			for (p++; *p != '"'; p++) {
				if (!*p)
					die("unterminated quote");
				if (*p == '\\' && p[1]) {
					p++;
					*o++ = *p == 'n' ? '\n' : *p == 't' ? '\t' : *p;
				} else {
					*o++ = *p;
				}
			}
			p++;
		}
		if (*p)
			p++;
		*o = 0;
	}
}

static void need_words(int n, int min, const char *usage)
{
	if (n < min)
		die("usage: %s", usage);
}

/* ev: what a tw_* call that wrote a `type` record at offset off returned */
static void done(long ev, uint32_t type, uint64_t off)
{
	if (ev < 0) {
		fprintf(stderr, "mktrace: write failed\n");
		exit(3);
	}
	if (verbose)
		printf("%ld %s %llu\n", ev, tr_type_name(type), (unsigned long long)off);
}

static void put(struct tr_rec *r)
{
	uint64_t off = w.offset;
	done(tw_record(&w, r), r->type, off);
}

static uint64_t blob(const void *data, size_t len)
{
	uint64_t h, before = w.nrec, off = w.offset;
	if (tw_blob(&w, data, len, &h) < 0) {
		fprintf(stderr, "mktrace: write failed\n");
		exit(3);
	}
	if (verbose && w.nrec != before)
		printf("%llu BLOB %llu\n", (unsigned long long)before, (unsigned long long)off);
	return h;
}

static void fill(struct strbuf *sb, const char *how, uint64_t size)
{
	sb_grow(sb, size);
	if (!strcmp(how, "seq")) {
		for (uint64_t i = 0; i < size; i++)
			sb->buf[i] = (char)(i & 255);
	} else if (!strncmp(how, "u64:", 4)) {
		const char *p = how + 4;
		uint64_t i = 0;
		memset(sb->buf, 0, size);
		while (*p && i + 8 <= size) {
			char word[64];
			size_t k = strcspn(p, ",");
			if (k >= sizeof(word))
				die("u64 word too long in %s", how);
			memcpy(word, p, k);
			word[k] = 0;
			uint64_t v = num(word);
			for (int b = 0; b < 8; b++)
				sb->buf[i + (uint64_t)b] = (char)(v >> (8 * b));
			i += 8;
			p += k;
			if (*p == ',')
				p++;
		}
	} else if (!strncmp(how, "rand", 4)) {
		uint64_t x = how[4] == ':' ? num(how + 5) : 88172645463325252ull;
		if (!x)
			x = 1;
		for (uint64_t i = 0; i < size; i++) {
			x ^= x << 13; x ^= x >> 7; x ^= x << 17;
			sb->buf[i] = (char)(x >> 24);
		}
	} else {
		uint64_t b = num(how);
		if (b > 255)
			die("fill byte %s is over 255", how);
		memset(sb->buf, (int)b, size);
	}
	sb_setlen(sb, size);
}

static uint32_t alloc_kind(const char *s)
{
	static const char *const k[] = { "", "device", "host", "managed", "vmm", "async", "global" };
	if (!strcmp(s, "vmm+cont"))
		return TR_MEM_VMM;
	for (uint32_t i = 1; i < ARRAY_SIZE(k); i++)
		if (!strcmp(s, k[i]))
			return i;
	return (uint32_t)num(s);
}

static void dim3(const char *s, struct tr_dim3 *d)
{
	char buf[128], *a, *save = NULL;
	uint32_t *f[3] = { &d->x, &d->y, &d->z };
	snprintf(buf, sizeof(buf), "%s", s);
	d->x = d->y = d->z = 1;
	a = strtok_r(buf, ",", &save);
	for (int i = 0; i < 3 && a; i++, a = strtok_r(NULL, ",", &save))
		*f[i] = (uint32_t)num(a);
}

/* ---- launch ---- */

static void add_param(struct strbuf *args, struct tr_param **params, uint32_t *np,
		      size_t *palloc, const void *b, size_t n)
{
	size_t align = n >= 8 ? 8 : n >= 4 ? 4 : n >= 2 ? 2 : 1;
	while (args->len % align)
		sb_addch(args, 0);
	ALLOC_GROW(*params, *np + 1, *palloc);
	(*params)[*np].offset = (uint32_t)args->len;
	(*params)[*np].size = (uint32_t)n;
	(*np)++;
	sb_add(args, b, n);
}

static void cmd_launch(int n, char **wv)
{
	struct tr_rec r;
	struct tr_launch *l = &r.u.launch;
	struct strbuf args = STRBUF_INIT;
	struct tr_param *params = NULL;
	struct tr_frame *frames = NULL;
	struct tr_launch_attr *attrs = NULL;
	size_t palloc = 0, falloc = 0, aalloc = 0;
	uint32_t np = 0;

	need_words(n, 4, "launch NAME GX BX ARG...");
	memset(&r, 0, sizeof(r));
	r.type = TR_LAUNCH;
	l->name = wv[1];
	l->seq = n_launch;
	l->api = TR_API_LAUNCH_KERNEL;
	l->grid.x = (uint32_t)num(wv[2]);
	l->block.x = (uint32_t)num(wv[3]);
	l->grid.y = l->grid.z = l->block.y = l->block.z = 1;
	l->func = 0x5550000 + n_launch;
	l->tid = 4242;
	for (int i = 4; i < n; i++) {
		char *a = wv[i], *v = strchr(a, '='), *c = strchr(a, ':');
		unsigned char b[8];
		if (v) {
			*v++ = 0;
			if (!strcmp(a, "grid")) dim3(v, &l->grid);
			else if (!strcmp(a, "block")) dim3(v, &l->block);
			else if (!strcmp(a, "shmem")) l->shmem = (uint32_t)num(v);
			else if (!strcmp(a, "stream")) l->stream = num(v);
			else if (!strcmp(a, "seq")) l->seq = num(v);
			else if (!strcmp(a, "func")) l->func = num(v);
			else if (!strcmp(a, "tid")) l->tid = (uint32_t)num(v);
			else if (!strcmp(a, "async")) l->flags = (l->flags & ~TR_F_ASYNC) | (num(v) ? TR_F_ASYNC : 0);
			else if (!strcmp(a, "captured")) l->flags = (l->flags & ~TR_F_CAPTURED) | (num(v) ? TR_F_CAPTURED : 0);
			else if (!strcmp(a, "folded")) l->flags = (l->flags & ~TR_F_FOLDED) | (num(v) ? TR_F_FOLDED : 0);
			else if (!strcmp(a, "api"))
				l->api = !strcmp(v, "kernel") ? TR_API_LAUNCH_KERNEL :
					 !strcmp(v, "ex") ? TR_API_LAUNCH_KERNEL_EX :
					 !strcmp(v, "coop") ? TR_API_LAUNCH_COOPERATIVE : (uint32_t)num(v);
			else if (!strcmp(a, "py"))
				l->py_state = !strcmp(v, "none") ? TR_PY_NONE : !strcmp(v, "nogil") ?
					TR_PY_NO_GIL : !strcmp(v, "frames") ? TR_PY_FRAMES : (uint32_t)num(v);
			else if (!strcmp(a, "frame")) {
				char *l1 = strchr(v, ':'), *l2 = l1 ? strchr(l1 + 1, ':') : NULL;
				if (!l2)
					die("frame=FILE:LINE:FUNC expected, got '%s'", v);
				*l1 = *l2 = 0;
				ALLOC_GROW(frames, l->nframes + 1, falloc);
				frames[l->nframes].file = v;
				frames[l->nframes].line = (uint32_t)num(l1 + 1);
				frames[l->nframes].func = l2 + 1;
				l->nframes++;
				l->py_state = TR_PY_FRAMES;
			} else if (!strcmp(a, "attr")) {
				struct strbuf hb = STRBUF_INIT;
				char *col = strchr(v, ':');
				if (!col)
					die("attr=ID:HEX expected");
				*col = 0;
				hex_decode(&hb, col + 1);
				if (hb.len > 64)
					die("attr value over 64 bytes");
				ALLOC_GROW(attrs, l->nattrs + 1, aalloc);
				memset(&attrs[l->nattrs], 0, sizeof(*attrs));
				attrs[l->nattrs].id = (uint32_t)num(v);
				attrs[l->nattrs].len = (uint32_t)hb.len;
				memcpy(attrs[l->nattrs].value, hb.buf, hb.len);
				l->nattrs++;
				sb_release(&hb);
			} else {
				die("unknown launch option '%s='", a);
			}
			continue;
		}
		if (c) {
			*c++ = 0;
			size_t sz = 0;
			if (!strcmp(a, "ptr") || !strcmp(a, "u64")) {
				uint64_t x = num(c);
				for (int k = 0; k < 8; k++)
					b[k] = (unsigned char)(x >> (8 * k));
				sz = 8;
			} else if (!strcmp(a, "u32") || !strcmp(a, "i32")) {
				uint32_t x = (uint32_t)snum(c);
				memcpy(b, &x, 4); sz = 4;
			} else if (!strcmp(a, "u16")) {
				uint16_t x = (uint16_t)num(c);
				memcpy(b, &x, 2); sz = 2;
			} else if (!strcmp(a, "u8")) {
				b[0] = (unsigned char)num(c); sz = 1;
			} else if (!strcmp(a, "f32")) {
				float x = strtof(c, NULL);
				memcpy(b, &x, 4); sz = 4;
			} else if (!strcmp(a, "f64")) {
				double x = strtod(c, NULL);
				memcpy(b, &x, 8); sz = 8;
			} else if (!strcmp(a, "hex")) {
				struct strbuf hb = STRBUF_INIT;
				hex_decode(&hb, c);
				add_param(&args, &params, &np, &palloc, hb.buf, hb.len);
				sb_release(&hb);
				continue;
			} else {
				die("unknown parameter type '%s:'", a);
			}
			add_param(&args, &params, &np, &palloc, b, sz);
			continue;
		}
		if (a[0] == '0' && (a[1] == 'x' || a[1] == 'X')) {
			uint64_t x = num(a);
			for (int k = 0; k < 8; k++)
				b[k] = (unsigned char)(x >> (8 * k));
			add_param(&args, &params, &np, &palloc, b, 8);
		} else {
			struct strbuf hb = STRBUF_INIT;
			hex_decode(&hb, a);
			add_param(&args, &params, &np, &palloc, hb.buf, hb.len);
			sb_release(&hb);
		}
	}
	l->nparams = np;
	l->params = params;
	l->argsize = (uint32_t)args.len;
	l->args = (uint8_t *)args.buf;
	l->frames = frames;
	l->attrs = attrs;
	put(&r);
	ALLOC_GROW(seq_names, l->seq + 1 > seq_names_n ? l->seq + 1 : seq_names_n, seq_names_alloc);
	while (seq_names_n <= l->seq)
		seq_names[seq_names_n++] = NULL;
	free(seq_names[l->seq]);
	seq_names[l->seq] = xstrdup(l->name);
	n_launch++;
	free(params);
	free(frames);
	free(attrs);
	sb_release(&args);
}

/* ---- a tiny cubin-like ELF ---- */

#include <elf.h>

static void elf_image(struct strbuf *img, int nf, char **funcs)
{
	struct strbuf strtab = STRBUF_INIT, symtab = STRBUF_INIT;
	static const char shstr[] = "\0.text\0.strtab\0.symtab\0.shstrtab";
	Elf64_Ehdr eh;
	Elf64_Shdr sh[5];
	Elf64_Sym s;
	const size_t text_size = 16;
	size_t off;

	sb_addch(&strtab, 0);
	memset(&s, 0, sizeof(s));
	sb_add(&symtab, &s, sizeof(s));
	for (int i = 0; i < nf; i++) {
		memset(&s, 0, sizeof(s));
		s.st_name = (uint32_t)strtab.len;
		s.st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
		s.st_shndx = 1;
		s.st_size = text_size;
		sb_add(&symtab, &s, sizeof(s));
		sb_add(&strtab, funcs[i], strlen(funcs[i]) + 1);
	}
	memset(&eh, 0, sizeof(eh));
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_EXEC;
	eh.e_machine = 190;   /* EM_CUDA */
	eh.e_version = EV_CURRENT;
	eh.e_ehsize = sizeof(eh);
	eh.e_shentsize = sizeof(Elf64_Shdr);
	eh.e_shnum = 5;
	eh.e_shstrndx = 4;
	memset(sh, 0, sizeof(sh));
	off = sizeof(eh);
	sh[1].sh_name = 1; sh[1].sh_type = SHT_PROGBITS; sh[1].sh_flags = SHF_ALLOC | SHF_EXECINSTR;
	sh[1].sh_offset = off; sh[1].sh_size = text_size; sh[1].sh_addralign = 8;
	off += text_size;
	sh[2].sh_name = 7; sh[2].sh_type = SHT_STRTAB; sh[2].sh_offset = off; sh[2].sh_size = strtab.len;
	off += strtab.len;
	off = (off + 7) & ~(size_t)7;
	sh[3].sh_name = 15; sh[3].sh_type = SHT_SYMTAB; sh[3].sh_offset = off;
	sh[3].sh_size = symtab.len; sh[3].sh_link = 2; sh[3].sh_info = 1;
	sh[3].sh_entsize = sizeof(Elf64_Sym); sh[3].sh_addralign = 8;
	off += symtab.len;
	sh[4].sh_name = 23; sh[4].sh_type = SHT_STRTAB; sh[4].sh_offset = off; sh[4].sh_size = sizeof(shstr);
	off += sizeof(shstr);
	off = (off + 7) & ~(size_t)7;
	eh.e_shoff = off;

	sb_add(img, &eh, sizeof(eh));
	sb_addfill(img, 0xcc, text_size);
	sb_add(img, strtab.buf, strtab.len);
	sb_addfill(img, 0, sh[3].sh_offset - img->len);
	sb_add(img, symtab.buf, symtab.len);
	sb_add(img, shstr, sizeof(shstr));
	sb_addfill(img, 0, off - img->len);
	sb_add(img, sh, sizeof(sh));
	sb_release(&strtab);
	sb_release(&symtab);
}

static void module_record(const struct strbuf *img, uint32_t id, uint32_t kind)
{
	struct tr_rec r;
	uint64_t h = blob(img->buf, img->len);
	memset(&r, 0, sizeof(r));
	r.type = TR_MODULE;
	r.u.module.module_id = id;
	r.u.module.kind = kind;
	r.u.module.blob = h;
	r.u.module.size = img->len;
	put(&r);
	n_module++;
}

/* ---- raw records ---- */

static void raw_record(uint32_t type, const struct strbuf *pay)
{
	struct strbuf sb = STRBUF_INIT;
	sb_put_u32(&sb, type);
	sb_put_u32(&sb, XXH32(pay->buf, pay->len, type));
	sb_put_u64(&sb, pay->len);
	sb_add(&sb, pay->buf, pay->len);
	if (write_all(w.fd, sb.buf, sb.len) < 0) {
		fprintf(stderr, "mktrace: write failed: %s\n", strerror(errno));
		exit(3);
	}
	if (verbose)
		printf("%llu %s %llu\n", (unsigned long long)w.nrec, tr_type_name(type),
		       (unsigned long long)w.offset);
	w.offset += sb.len;
	w.nrec++;
	sb_release(&sb);
}

/* ---- `rec`: any record type by the table (trace/records.def) ---- */

static const char *field_key(const char *name)
{
	const char *d = strchr(name, '.');
	return d ? d + 1 : name;
}

#define SET_U32(f, name) if (!strcmp(k, field_key(name))) { x->f = (uint32_t)num(v); return 0; }
#define SET_U64(f, name) if (!strcmp(k, field_key(name))) { x->f = num(v); return 0; }
#define SET_I32(f, name) if (!strcmp(k, field_key(name))) { x->f = (int32_t)snum(v); return 0; }
#define SET_STR(f, name) if (!strcmp(k, field_key(name))) { x->f = v; return 0; }
#define SET_DIM3(f, name)
#define SET_U64_ARR(f, name)
#define SET_U32_ARR(f, name)
#define SET_I32_ARR(f, name)
#define SET_BYTES(f, name)
#define SET_VAR(f, name)
#define SET_CHECK(f, name)
#define SET_FIELD_(kind, field, name, show) SET_##kind(field, name)
#define SET_LAYOUT_(layout, tag) \
	static int set_##layout(struct tag *x, const char *k, char *v) \
	{ TR_FIELDS_##layout(SET_FIELD_) return -1; }
TR_LAYOUTS(SET_LAYOUT_)

/* Set field k of r to v (a string field keeps v: it must outlive r). */
static int set_field(struct tr_rec *r, const char *k, char *v)
{
	switch (r->type) {
#define SET_CASE_(NAME, num, layout, ctor, rec) \
	case TR_##NAME: return set_##layout(&r->u.layout, k, v);
	TR_RECORDS(SET_CASE_)
	default:
		return -1;
	}
}

static void cmd_rec(int n, char **wv, struct tr_rec *r)
{
	need_words(n, 2, "rec TYPE [KEY=VALUE...]");
#define BY_NAME_(NAME, num, layout, ctor, rec) \
	if (rec && !strcmp(wv[1], #NAME)) r->type = TR_##NAME;
	TR_RECORDS(BY_NAME_)
	if (!r->type)
		die("rec: '%s' is not a record type tw_record writes (trace/records.def)", wv[1]);
	for (int i = 2; i < n; i++) {
		char *eq = strchr(wv[i], '=');
		if (!eq)
			die("rec: '%s' is not KEY=VALUE", wv[i]);
		*eq = 0;
		if (set_field(r, wv[i], eq + 1) < 0)
			die("rec: %s has no plain field '%s'", wv[1], wv[i]);
	}
	put(r);
}

static void join(struct strbuf *sb, int n, char **wv, int from)
{
	for (int i = from; i < n; i++) {
		if (i > from)
			sb_addch(sb, ' ');
		sb_adds(sb, wv[i]);
	}
}

static void command(int n, char **wv)
{
	const char *c = wv[0];
	struct tr_rec r;
	struct strbuf sb = STRBUF_INIT;

	memset(&r, 0, sizeof(r));
	if (!strcmp(c, "process")) {
		need_words(n, 3, "process PID CWD ARG...");
		r.type = TR_PROCESS;
		r.u.process.pid = (uint32_t)num(wv[1]);
		r.u.process.start_ns = 1764669060ull * 1000000000ull;
		r.u.process.cwd = wv[2];
		r.u.process.argc = (uint32_t)(n - 3);
		r.u.process.argv = (const char **)wv + 3;
		put(&r);
	} else if (!strcmp(c, "device")) {
		need_words(n, 2, "device NAME [CCMAJ CCMIN [DRIVER [TOOLKIT [MEM [SMS]]]]]");
		r.type = TR_DEVICE;
		r.u.device.name = wv[1];
		r.u.device.cc_major = n > 2 ? (uint32_t)num(wv[2]) : 9;
		r.u.device.cc_minor = n > 3 ? (uint32_t)num(wv[3]) : 0;
		r.u.device.driver_version = n > 4 ? (uint32_t)num(wv[4]) : 13000;
		r.u.device.toolkit_version = n > 5 ? (uint32_t)num(wv[5]) : 13000;
		r.u.device.total_mem = n > 6 ? num(wv[6]) : 150754820096ull;
		r.u.device.sm_count = n > 7 ? (uint32_t)num(wv[7]) : 132;
		put(&r);
	} else if (!strcmp(c, "alloc")) {
		uint64_t off = w.offset;
		need_words(n, 3, "alloc ADDR SIZE [KIND [NAME]]");
		done(tw_alloc(&w, &(struct tr_alloc){ .addr = num(wv[1]), .size = num(wv[2]),
						     .kind = n > 3 ? alloc_kind(wv[3]) : TR_MEM_DEVICE,
						     .flags = n > 3 && !strcmp(wv[3], "vmm+cont") ? TR_ALLOC_F_VMM_CONT : 0,
						     .name = n > 4 ? wv[4] : "" }), TR_ALLOC, off);
		n_alloc++;
	} else if (!strcmp(c, "free")) {
		need_words(n, 2, "free ADDR [KIND]");
		r.type = TR_FREE;
		r.u.free.addr = num(wv[1]);
		r.u.free.kind = n > 2 ? alloc_kind(wv[2]) : TR_MEM_DEVICE;
		put(&r);
	} else if (!strcmp(c, "block")) {
		need_words(n, 4, "block ADDR SIZE SEGMENT [alloc=N] [initial] [source=N] [at=FILE:LINE:FUNC]");
		r.type = TR_BLOCK_ALLOC;
		r.u.block.addr = num(wv[1]);
		r.u.block.size = num(wv[2]);
		r.u.block.alloc_size = (r.u.block.size + 511) / 512 * 512;
		r.u.block.segment = num(wv[3]);
		r.u.block.source = TR_BLK_TEST;
		r.u.block.file = r.u.block.func = "";
		for (int i = 4; i < n; i++) {
			if (!strncmp(wv[i], "alloc=", 6)) {
				r.u.block.alloc_size = num(wv[i] + 6);
			} else if (!strcmp(wv[i], "initial")) {
				r.u.block.flags |= TR_BLK_F_INITIAL;
			} else if (!strncmp(wv[i], "source=", 7)) {
				r.u.block.source = (uint32_t)num(wv[i] + 7);
			} else if (!strncmp(wv[i], "at=", 3)) {
				char *l = strchr(wv[i] + 3, ':'), *f = l ? strchr(l + 1, ':') : NULL;
				if (!f)
					die("block at= takes FILE:LINE:FUNC");
				*l = *f = 0;
				r.u.block.file = wv[i] + 3;
				r.u.block.line = (uint32_t)num(l + 1);
				r.u.block.func = f + 1;
			} else {
				die("block: unknown word '%s'", wv[i]);
			}
		}
		put(&r);
	} else if (!strcmp(c, "blockfree")) {
		need_words(n, 2, "blockfree ADDR");
		r.type = TR_BLOCK_FREE;
		r.u.block_free.addr = num(wv[1]);
		r.u.block_free.source = TR_BLK_TEST;
		put(&r);
	} else if (!strcmp(c, "nonptr")) {   /* 1.7 */
		need_words(n, 3, "nonptr KERNEL OFFSET [LAYOUT]");
		r.type = TR_NONPTR;
		r.u.nonptr.kernel = wv[1];
		r.u.nonptr.offset = (uint32_t)num(wv[2]);
		r.u.nonptr.layout = n > 3 ? num(wv[3]) : 0;
		put(&r);
	} else if (!strcmp(c, "blockbatch")) {   /* 1.6 */
		need_words(n, 3, "blockbatch SEQ KNOWN");
		r.type = TR_BLOCK_BATCH;
		r.u.block_batch.seq = num(wv[1]);
		r.u.block_batch.known = num(wv[2]);
		put(&r);
	} else if (!strcmp(c, "h2d")) {
		struct tr_copy cp = { 0 };
		need_words(n, 4, "h2d DST SIZE FILL [SRC] [async]");
		cp.dst = num(wv[1]);
		cp.size = num(wv[2]);
		fill(&sb, wv[3], cp.size);
		cp.blob = blob(sb.buf, sb.len);   /* first: -v prints the BLOB's line */
		for (int i = 4; i < n; i++) {
			if (!strcmp(wv[i], "async"))
				cp.flags |= TR_F_ASYNC;
			else if (!strcmp(wv[i], "hostmem"))
				cp.flags |= TR_F_HOSTMEM;
			else if (!strcmp(wv[i], "checkpoint"))
				cp.flags |= TR_F_CHECKPOINT;
			else
				cp.src = num(wv[i]);
		}
		uint64_t off = w.offset;
		done(tw_h2d(&w, &cp), TR_MEMCPY_H2D, off);
		h2d_bytes += cp.size;
	} else if (!strcmp(c, "d2d") || !strcmp(c, "d2h")) {
		need_words(n, 4, "d2d|d2h DST SRC SIZE");
		r.type = c[2] == 'd' ? TR_MEMCPY_D2D : TR_MEMCPY_D2H;
		r.u.copy.dst = num(wv[1]);
		r.u.copy.src = num(wv[2]);
		r.u.copy.size = num(wv[3]);
		put(&r);
	} else if (!strcmp(c, "memset")) {
		need_words(n, 4, "memset DST VALUE COUNT [ELEM [HEIGHT PITCH]]");
		r.type = TR_MEMSET;
		r.u.memset.dst = num(wv[1]);
		r.u.memset.value = (uint32_t)num(wv[2]);
		r.u.memset.width = num(wv[3]);
		r.u.memset.elem_size = n > 4 ? (uint32_t)num(wv[4]) : 1;
		r.u.memset.height = n > 5 ? num(wv[5]) : 1;
		r.u.memset.pitch = n > 6 ? num(wv[6]) : 0;
		put(&r);
	} else if (!strcmp(c, "launch")) {
		cmd_launch(n, wv);
	} else if (!strcmp(c, "fault")) {
		need_words(n, 5, "fault CODE ERROR API SEQ [at_launch=0|1] [kernel=NAME]");
		r.type = TR_FAULT;
		r.u.fault.code = (uint32_t)num(wv[1]);
		r.u.fault.error = wv[2];
		r.u.fault.api = wv[3];
		r.u.fault.launch_seq = num(wv[4]);
		r.u.fault.at_launch = 1;
		r.u.fault.kernel = r.u.fault.launch_seq < seq_names_n && seq_names[r.u.fault.launch_seq] ?
			seq_names[r.u.fault.launch_seq] : "";
		for (int i = 5; i < n; i++) {
			if (!strncmp(wv[i], "at_launch=", 10))
				r.u.fault.at_launch = (uint32_t)num(wv[i] + 10);
			else if (!strncmp(wv[i], "kernel=", 7))
				r.u.fault.kernel = wv[i] + 7;
			else
				die("unknown fault option '%s'", wv[i]);
		}
		put(&r);
	} else if (!strcmp(c, "module")) {
		struct strbuf err = STRBUF_INIT;
		need_words(n, 2, "module FILE [ID [KIND]]");
		if (read_file(wv[1], &sb, &err) < 0)
			die("%s", err.buf);
		uint32_t kind = sb.len >= 4 && !memcmp(sb.buf, "\x7f" "ELF", 4) ? TR_MOD_ELF : TR_MOD_OTHER;
		if (n > 3)
			kind = !strcmp(wv[3], "elf") ? TR_MOD_ELF : !strcmp(wv[3], "other") ?
				TR_MOD_OTHER : (uint32_t)num(wv[3]);
		module_record(&sb, n > 2 ? (uint32_t)num(wv[2]) : (uint32_t)n_module + 1, kind);
		sb_release(&err);
	} else if (!strcmp(c, "elfmodule")) {
		need_words(n, 2, "elfmodule ID FUNC...");
		elf_image(&sb, n - 2, wv + 2);
		module_record(&sb, (uint32_t)num(wv[1]), TR_MOD_ELF);
	} else if (!strcmp(c, "gbegin") || !strcmp(c, "gend") || !strcmp(c, "gexec") ||
		   !strcmp(c, "glaunch")) {
		need_words(n, 2, "gbegin STREAM | gend STREAM GRAPH | gexec GRAPH EXEC | glaunch EXEC [STREAM]");
		if (!strcmp(c, "gbegin")) {
			r.type = TR_GRAPH_BEGIN;
			r.u.graph.stream = num(wv[1]);
		} else if (!strcmp(c, "gend")) {
			need_words(n, 3, "gend STREAM GRAPH");
			r.type = TR_GRAPH_END;
			r.u.graph.stream = num(wv[1]);
			r.u.graph.graph = num(wv[2]);
		} else if (!strcmp(c, "gexec")) {
			need_words(n, 3, "gexec GRAPH EXEC");
			r.type = TR_GRAPH_EXEC;
			r.u.graph.graph = num(wv[1]);
			r.u.graph.exec = num(wv[2]);
		} else {
			r.type = TR_GRAPH_LAUNCH;
			r.u.graph.exec = num(wv[1]);
			r.u.graph.stream = n > 2 ? num(wv[2]) : 0;
		}
		put(&r);
	} else if (!strcmp(c, "ckbegin") || !strcmp(c, "ckend")) {
		need_words(n, 3, "ckbegin|ckend ID SEQ [ALLOCS BYTES [STORED]]");
		r.type = c[2] == 'b' ? TR_CHECKPOINT_BEGIN : TR_CHECKPOINT_END;
		r.u.checkpoint.id = num(wv[1]);
		r.u.checkpoint.launch_seq = num(wv[2]);
		r.u.checkpoint.allocs = n > 3 ? num(wv[3]) : 0;
		r.u.checkpoint.bytes = n > 4 ? num(wv[4]) : 0;
		r.u.checkpoint.stored = n > 5 ? num(wv[5]) : 0;
		put(&r);
	} else if (!strcmp(c, "funcattr")) {
		need_words(n, 4, "funcattr KERNEL ATTR VALUE");
		r.type = TR_FUNC_ATTR;
		r.u.func_attr.kernel = wv[1];
		r.u.func_attr.attr = (uint32_t)num(wv[2]);
		r.u.func_attr.value = (int32_t)snum(wv[3]);
		put(&r);
	} else if (!strcmp(c, "note") || !strcmp(c, "reduction")) {
		join(&sb, n, wv, 1);
		r.type = c[0] == 'n' ? TR_NOTE : TR_REDUCTION;
		r.u.note.text = sb.buf;   /* same layout as reduction.text */
		if (r.type == TR_REDUCTION)
			r.u.reduction.text = sb.buf;
		put(&r);
	} else if (!strcmp(c, "env")) {
		join(&sb, n, wv, 1);
		r.type = TR_ENV;
		r.u.env.text = sb.buf;
		put(&r);
	} else if (!strcmp(c, "source")) {
		need_words(n, 6, "source ORIGIN KERNEL PATH META TEXT");
		r.type = TR_SOURCE;
		r.u.source.origin = (uint32_t)num(wv[1]);
		r.u.source.kernel = wv[2];
		r.u.source.path = wv[3];
		r.u.source.meta = wv[4];
		r.u.source.text = wv[5];
		put(&r);
	} else if (!strcmp(c, "stderr")) {
		need_words(n, 3, "stderr EXIT TEXT [DROPPED]");
		r.type = TR_STDERR;
		r.u.stderr_tail.exit_code = (int32_t)snum(wv[1]);
		r.u.stderr_tail.text = wv[2];
		r.u.stderr_tail.dropped = n > 3 ? num(wv[3]) : 0;
		put(&r);
	} else if (!strcmp(c, "end")) {
		r.type = TR_END;
		r.u.end.exit_code = n > 1 ? (int32_t)snum(wv[1]) : 0;
		r.u.end.launches = n > 2 ? num(wv[2]) : n_launch;
		r.u.end.allocs = n > 3 ? num(wv[3]) : n_alloc;
		r.u.end.bytes_h2d = n > 4 ? num(wv[4]) : h2d_bytes;
		put(&r);
	} else if (!strcmp(c, "blob")) {
		need_words(n, 3, "blob FILL SIZE");
		fill(&sb, wv[1], num(wv[2]));
		blob(sb.buf, sb.len);
	} else if (!strcmp(c, "rec")) {
		cmd_rec(n, wv, &r);
	} else if (!strcmp(c, "raw")) {
		need_words(n, 2, "raw TYPE [HEX]");
		if (n > 2)
			hex_decode(&sb, wv[2]);
		raw_record((uint32_t)num(wv[1]), &sb);
	} else if (!strcmp(c, "shortlaunches")) {
		tw_short_launches(&w);   /* later repeats of a launch are written short (2.0) */
	} else if (!strcmp(c, "truncate") || !strcmp(c, "poke") || !strcmp(c, "version")) {
		struct post *p;
		need_words(n, c[0] == 't' ? 2 : 3, "truncate N | poke OFFSET HEX | version MAJOR MINOR");
		ALLOC_GROW(posts, nposts + 1, posts_alloc);
		p = &posts[nposts++];
		memset(p, 0, sizeof(*p));
		sb_init(&p->bytes, 0);
		p->op = c[0];
		p->a = snum(wv[1]);
		if (c[0] == 'p')
			hex_decode(&p->bytes, wv[2]);
		if (c[0] == 'v')
			p->b = snum(wv[2]);
	} else {
		die("unknown command '%s'", c);
	}
	sb_release(&sb);
}

/* After `version`: the header as a writer of that version makes it: before
 * 1.4, zeros at 24-31; from 1.4 (and any other major), the checksum. */
static void reseal(int fd, long long major, long long minor, const char *path)
{
	unsigned char h[32];
	uint32_t sum = 0;
	if (pread(fd, h, 32, 0) != 32) {
		fprintf(stderr, "mktrace: cannot read the header of %s\n", path);
		exit(3);
	}
	if (!(major == 1 && minor < 4))
		sum = XXH32(h, 24, TRACE_HEADER_SEED);
	for (int k = 0; k < 4; k++)
		h[24 + k] = (unsigned char)(sum >> (8 * k)), h[28 + k] = 0;
	if (pwrite(fd, h + 24, 8, 24) != 8) {
		fprintf(stderr, "mktrace: cannot write the header of %s\n", path);
		exit(3);
	}
}

static void post_process(const char *path)
{
	for (size_t i = 0; i < nposts; i++) {
		struct post *p = &posts[i];
		struct stat st;
		int fd = open(path, O_RDWR);
		long long off = p->a;
		if (fd < 0 || fstat(fd, &st) < 0) {
			fprintf(stderr, "mktrace: %s: %s\n", path, strerror(errno));
			exit(3);
		}
		if (p->op == 't') {
			if (off < 0)
				off += st.st_size;
			if (off < 0 || ftruncate(fd, off) < 0) {
				fprintf(stderr, "mktrace: cannot truncate %s to %lld bytes\n", path, off);
				exit(3);
			}
		} else {
			unsigned char v[4];
			const void *b = p->bytes.buf;
			size_t len = p->bytes.len;
			if (p->op == 'v') {
				v[0] = (unsigned char)p->a; v[1] = (unsigned char)(p->a >> 8);
				v[2] = (unsigned char)p->b; v[3] = (unsigned char)(p->b >> 8);
				off = 8;
				b = v;
				len = 4;
			} else if (off < 0) {
				off += st.st_size;
			}
			if (off < 0 || pwrite(fd, b, len, off) != (ssize_t)len) {
				fprintf(stderr, "mktrace: cannot write %zu bytes at %lld in %s\n", len, off, path);
				exit(3);
			}
		}
		if (p->op == 'v')
			reseal(fd, p->a, p->b, path);
		close(fd);
		sb_release(&p->bytes);
	}
	free(posts);
}

int main(int argc, char **argv)
{
	struct strbuf err = STRBUF_INIT;
	char *line = NULL;
	size_t cap = 0;
	static char *wv[MAXW];
	const char *out;

	if (argc > 2 && !strcmp(argv[1], "--elf")) {
		struct strbuf img = STRBUF_INIT;
		elf_image(&img, argc - 3, argv + 3);
		if (write_file(argv[2], img.buf, img.len, &err) < 0) {
			fprintf(stderr, "mktrace: %s\n", err.buf);
			return 3;
		}
		sb_release(&img);
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "-v")) {
		verbose = 1;
		argv++;
		argc--;
	}
	if (argc != 2) {
		fprintf(stderr, "usage: mktrace [-v] OUT.bin < script  (language: see mktrace.c)\n"
			"       mktrace --elf OUT.cubin FUNC...\n");
		return 2;
	}
	out = argv[1];
	if (tw_open(&w, out, &err) < 0) {
		fprintf(stderr, "mktrace: %s\n", err.buf);
		return 3;
	}
	while (getline(&line, &cap, stdin) > 0) {
		int n;
		lineno++;
		n = split(line, wv);
		if (n)
			command(n, wv);
	}
	free(line);
	if (tw_close(&w) < 0) {
		fprintf(stderr, "mktrace: %s: write failed\n", out);
		return 3;
	}
	post_process(out);
	for (size_t i = 0; i < seq_names_n; i++)
		free(seq_names[i]);
	free(seq_names);
	sb_release(&err);
	return 0;
}
