/*
 * show.c - the YAML rendering behind `gpureduce show` (see show.h).
 *
 * One pass collects totals, the kernel table and the fault; a second pass
 * walks every record in order, keeping an addr/memmap.h view of the
 * captured address space so that launch parameter words and copy/memset
 * addresses can be annotated with the allocation they point into (or the
 * freed allocation they used to point into), and emits the records the
 * options select.  Output goes through libyaml's emitter events, so quoting
 * and escaping are libyaml's business; strings from the trace are cleaned
 * to valid UTF-8 first because the emitter rejects anything else.
 *
 * Used by src/cmd-show.c and by the fuzz target; assumes nothing about the
 * trace beyond what trace_open() validated.
 */
#include <elf.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <yaml.h>

#include "../../common/strbuf.h"
#include "../../common/util.h"
#include "../../common/yamlout.h"
#include "../../addr/memmap.h"
#include "../../trace/trace.h"
#include "show.h"

/* "kernel_name: gather(float*, ...)" beside a mangled kernel: for the reader;
 * `kernel:` keeps the symbol, which tools and the ELF look up. */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);
static void kv_kernel_name(struct yout *y, const char *name)
{
	int st = 0;
	char *d;
	if (!name || name[0] != '_' || name[1] != 'Z')
		return;
	d = __cxa_demangle(name, NULL, NULL, &st);
	if (d && !st)
		yo_kv_str(y, "kernel_name", d);
	free(d);
}

#define HEX_CAP 64                /* parameter bytes shown per param */

static void kv_hash(struct yout *y, const char *k, uint64_t h)
{
	char b[32];
	snprintf(b, sizeof(b), "%016" PRIx64, h);
	yo_key(y, k);
	yo_quoted(y, b);
}

static void kv_dim3(struct yout *y, const char *k, const struct tr_dim3 *d)
{
	yo_key(y, k);
	yo_seq_start(y, 1);
	yo_u64(y, d->x);
	yo_u64(y, d->y);
	yo_u64(y, d->z);
	yo_seq_end(y);
}

static void kv_time(struct yout *y, const char *k, uint64_t ns)
{
	char b[64];
	struct tm tm;
	time_t s = (time_t)(ns / 1000000000u);
	yo_key(y, k);
	if (ns && gmtime_r(&s, &tm) && strftime(b, sizeof(b), "%Y-%m-%dT%H:%M:%SZ", &tm))
		yo_quoted(y, b);
	else
		yo_plain(y, "null");
}

/* Copy/memset/launch flags: the raw bits, then each known bit by name. */
static void kv_flags(struct yout *y, uint32_t flags)
{
	yo_kv_hex(y, "flags", flags);
	yo_kv_bool(y, "async", flags & TR_F_ASYNC);
#ifdef TR_F_CAPTURED
	if (flags & TR_F_CAPTURED)
		yo_kv_bool(y, "captured", 1);   /* issued during stream capture: did not run */
#endif
	if (flags & TR_F_CHECKPOINT)
		yo_kv_bool(y, "checkpoint", 1); /* content a checkpoint took */
	if (flags & TR_F_HOSTMEM)
		yo_kv_bool(y, "hostmem", 1);    /* managed/mapped content the CPU wrote */
	if (flags & TR_F_FOLDED)
		yo_kv_bool(y, "folded", 1);     /* a communication kernel, or the bytes it wrote */
}

/* ---- names of on-disk numbers ---- */

static const char *api_name(uint32_t api)
{
	switch (api) {
	case TR_API_LAUNCH_KERNEL: return "cuLaunchKernel";
	case TR_API_LAUNCH_KERNEL_EX: return "cuLaunchKernelEx";
	case TR_API_LAUNCH_COOPERATIVE: return "cuLaunchCooperativeKernel";
	default: return NULL;
	}
}

static const char *alloc_kind_name(uint32_t kind)
{
	return kind >= TR_MEM_DEVICE && kind <= TR_MEM_GLOBAL ? tr_alloc_kind_name(kind) : NULL;
}

static const char *module_kind_name(uint32_t kind)
{
	switch (kind) {
	case TR_MOD_ELF: return "elf";
	case TR_MOD_OTHER: return "other";
	default: return NULL;
	}
}

static void kv_enum(struct yout *y, const char *k, const char *name, uint32_t v)
{
	yo_key(y, k);
	if (name)
		yo_str(y, name);
	else
		yo_strf(y, "unknown(%u)", v);
}

/* "13000" -> "13.0" (cuDriverGetVersion encoding) */
static void kv_cuda_version(struct yout *y, const char *k, uint32_t v)
{
	yo_key(y, k);
	yo_strf(y, "%u.%u", v / 1000, (v % 1000) / 10);
}

/* ---- ELF ---- */

static int elf_range(size_t len, uint64_t off, uint64_t n)
{
	return off <= len && n <= len - off;
}

long show_elf_count_funcs(const uint8_t *img, size_t len, struct strbuf *err)
{
	Elf64_Ehdr eh;
	long count = 0;

	if (len < sizeof(eh) || memcmp(img, ELFMAG, SELFMAG)) {
		sb_adds(err, "not an ELF image");
		return -1;
	}
	memcpy(&eh, img, sizeof(eh));
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB) {
		sb_adds(err, "not a 64-bit little-endian ELF image");
		return -1;
	}
	if (eh.e_shnum && (eh.e_shentsize < sizeof(Elf64_Shdr) ||
			   !elf_range(len, eh.e_shoff, (uint64_t)eh.e_shnum * eh.e_shentsize))) {
		sb_addf(err, "ELF section headers (%u at offset %" PRIu64 ") lie outside the %zu-byte image",
			eh.e_shnum, (uint64_t)eh.e_shoff, len);
		return -1;
	}
	for (unsigned i = 0; i < eh.e_shnum; i++) {
		Elf64_Shdr sh;
		uint64_t ent, nsym;
		memcpy(&sh, img + eh.e_shoff + (uint64_t)i * eh.e_shentsize, sizeof(sh));
		if (sh.sh_type != SHT_SYMTAB)
			continue;
		ent = sh.sh_entsize ? sh.sh_entsize : sizeof(Elf64_Sym);
		if (ent < sizeof(Elf64_Sym) || !elf_range(len, sh.sh_offset, sh.sh_size)) {
			sb_addf(err, "ELF symbol table (section %u) lies outside the image", i);
			return -1;
		}
		nsym = sh.sh_size / ent;
		for (uint64_t k = 0; k < nsym; k++) {
			Elf64_Sym s;
			memcpy(&s, img + sh.sh_offset + k * ent, sizeof(s));
			if (ELF64_ST_TYPE(s.st_info) == STT_FUNC && s.st_shndx != SHN_UNDEF)
				count++;
		}
	}
	return count;
}

/* ---- pass 1: totals, kernels, fault ---- */

struct kcount {
	const char *name;
	uint64_t n;
};

struct stats {
	uint64_t launches, allocs, alloc_bytes, frees;
	uint64_t short_launches;   /* 2.0: written short, as repeats */
	uint64_t h2d, h2d_bytes, d2d, d2h, memsets;
	uint64_t blobs, blob_raw, blob_stored;
	uint64_t modules, module_bytes, notes, unknown;
	/* kernel name -> launches: open addressing, then sorted into ks */
	struct kcount *slots;
	size_t nslots, nkernels;
	long fault;              /* record index of the first FAULT, or -1 */
	long fault_launch;       /* record index of its launch, or -1 */
	long process, device;    /* first PROCESS / DEVICE record, or -1 */
};

static uint64_t str_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static void kernel_count(struct stats *st, const char *name)
{
	size_t i;
	if ((st->nkernels + 1) * 2 > st->nslots) {
		struct kcount *old = st->slots;
		size_t on = st->nslots;
		st->nslots = on ? on * 2 : 64;
		st->slots = xcalloc(st->nslots, sizeof(*st->slots));
		for (size_t k = 0; k < on; k++) {
			if (!old[k].name)
				continue;
			for (i = str_hash(old[k].name) & (st->nslots - 1); st->slots[i].name;
			     i = (i + 1) & (st->nslots - 1))
				;
			st->slots[i] = old[k];
		}
		free(old);
	}
	for (i = str_hash(name) & (st->nslots - 1); st->slots[i].name;
	     i = (i + 1) & (st->nslots - 1))
		if (!strcmp(st->slots[i].name, name))
			break;
	if (!st->slots[i].name) {
		st->slots[i].name = name;
		st->nkernels++;
	}
	st->slots[i].n++;
}

static int kcount_cmp(const void *a, const void *b)
{
	const struct kcount *x = a, *y = b;
	if (!x->name || !y->name)
		return !x->name - !y->name;   /* empty slots last */
	if (x->n != y->n)
		return x->n < y->n ? 1 : -1;
	return strcmp(x->name, y->name);
}

static void stats_collect(struct stats *st, const struct trace *t)
{
	memset(st, 0, sizeof(*st));
	st->fault = st->fault_launch = st->process = st->device = -1;
	for (size_t i = 0; i < t->nrec; i++) {
		const struct tr_rec *r = &t->rec[i];
		switch (r->type) {
		case TR_PROCESS:
			if (st->process < 0)
				st->process = (long)i;
			break;
		case TR_DEVICE:
			if (st->device < 0)
				st->device = (long)i;
			break;
		case TR_BLOB:
			st->blobs++;
			st->blob_raw += r->u.blob.raw_size;
			st->blob_stored += r->u.blob.stored_size;
			break;
		case TR_MODULE:
			st->modules++;
			st->module_bytes += r->u.module.size;
			break;
		case TR_ALLOC:
			st->allocs++;
			st->alloc_bytes += r->u.alloc.size;
			break;
		case TR_FREE:
			st->frees++;
			break;
		case TR_MEMCPY_H2D:
			st->h2d++;
			st->h2d_bytes += r->u.copy.size;
			break;
		case TR_MEMCPY_D2D:
			st->d2d++;
			break;
		case TR_MEMCPY_D2H:
			st->d2h++;
			break;
		case TR_MEMSET:
			st->memsets++;
			break;
		case TR_LAUNCH:
			st->launches++;
			st->short_launches += r->u.launch.same_back != 0;
			kernel_count(st, r->u.launch.name);
			break;
		case TR_FAULT:
			if (st->fault < 0)
				st->fault = (long)i;
			break;
		case TR_NOTE:
			st->notes++;
			break;
		default:
			st->unknown += !tr_type_known(r->type);
			break;
		}
	}
	if (st->nslots)
		qsort(st->slots, st->nslots, sizeof(*st->slots), kcount_cmp);
	if (st->fault >= 0) {
		/* The faulting launch: the last launch with that seq before the
		 * FAULT record, else the first one anywhere. */
		uint64_t seq = t->rec[st->fault].u.fault.launch_seq;
		for (size_t i = 0; i < t->nrec; i++) {
			const struct tr_rec *r = &t->rec[i];
			if (r->type != TR_LAUNCH || r->u.launch.seq != seq)
				continue;
			if (i < (size_t)st->fault || st->fault_launch < 0)
				st->fault_launch = (long)i;
			if (i > (size_t)st->fault)
				break;
		}
	}
}

/* ---- sections ---- */

static void emit_header(struct yout *y, const struct trace *t)
{
	yo_key(y, "header");
	yo_map_start(y, 0);
	yo_kv_str(y, "path", t->path);
	yo_key(y, "format");
	yo_strf(y, "%u.%u", t->major, t->minor);
	kv_time(y, "created", t->created_ns);
	yo_kv_u64(y, "created_ns", t->created_ns);
	yo_kv_u64(y, "size", t->size);
	yo_kv_bool(y, "truncated", t->truncated);
	if (t->truncated)
		yo_kv_str(y, "truncated_message", t->truncated_msg ? t->truncated_msg : "");
	yo_kv_bool(y, "complete", trace_complete(t));
	if (!trace_complete(t))
		yo_kv_str(y, "incomplete", TRACE_INCOMPLETE_MSG);
	if (t->vmm_joined)      /* vmm pieces joined by the decoder (trace/vmmjoin.inc) */
		yo_kv_u64(y, "vmm_pieces_joined", t->vmm_joined);
	if (t->block_batches)   /* 1.6: late allocator blocks, placed by the decoder */
		yo_kv_u64(y, "block_batches", t->block_batches);
	if (t->blocks_cut) {
		yo_kv_u64(y, "blocks_known_before", t->blocks_known);
		yo_kv_str(y, "blocks_unknown", "the capture never fetched the allocator's blocks of the "
			  "later launches (the process died first): they read as having none");
	}
	yo_map_end(y);
}

/* argv joined for a shell: words with special characters single-quoted. */
static void command_line(struct strbuf *sb, const struct tr_process *p)
{
	for (uint32_t i = 0; i < p->argc; i++) {
		const char *a = p->argv[i];
		if (i)
			sb_addch(sb, ' ');
		if (*a && strspn(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				   "0123456789-_./=:,+@%") == strlen(a)) {
			sb_adds(sb, a);
			continue;
		}
		sb_addch(sb, '\'');
		for (; *a; a++) {
			if (*a == '\'')
				sb_adds(sb, "'\\''");
			else
				sb_addch(sb, *a);
		}
		sb_addch(sb, '\'');
	}
}

static void emit_process_fields(struct yout *y, const struct tr_process *p)
{
	struct strbuf cmd = STRBUF_INIT;
	command_line(&cmd, p);
	yo_kv_str(y, "command", cmd.buf);
	sb_release(&cmd);
	yo_key(y, "argv");
	yo_seq_start(y, 0);
	for (uint32_t i = 0; i < p->argc; i++)
		yo_str(y, p->argv[i]);
	yo_seq_end(y);
	yo_kv_str(y, "cwd", p->cwd);
	yo_kv_u64(y, "pid", p->pid);
	kv_time(y, "started", p->start_ns);
}

static void emit_device_fields(struct yout *y, const struct tr_device *d)
{
	char b[32];
	yo_kv_u64(y, "ordinal", d->ordinal);
	yo_kv_str(y, "name", d->name);
	yo_key(y, "cc");
	yo_strf(y, "%u.%u", d->cc_major, d->cc_minor);
	kv_cuda_version(y, "driver", d->driver_version);
	kv_cuda_version(y, "toolkit", d->toolkit_version);
	yo_kv_u64(y, "memory", d->total_mem);
	yo_kv_str(y, "memory_human", fmt_bytes(d->total_mem, b));
	yo_kv_u64(y, "sm_count", d->sm_count);
}

static void emit_totals(struct yout *y, const struct stats *st, const struct trace *t)
{
	yo_key(y, "totals");
	yo_map_start(y, 0);
	yo_kv_u64(y, "records", t->nrec);
	yo_kv_u64(y, "launches", st->launches);
	if (st->short_launches)   /* 2.0: repeats written as a reference */
		yo_kv_u64(y, "launches_written_short", st->short_launches);
	yo_kv_u64(y, "allocations", st->allocs);
	yo_kv_u64(y, "allocation_bytes", st->alloc_bytes);
	yo_kv_u64(y, "frees", st->frees);
	yo_kv_u64(y, "h2d_copies", st->h2d);
	yo_kv_u64(y, "h2d_bytes", st->h2d_bytes);
	yo_kv_u64(y, "d2d_copies", st->d2d);
	yo_kv_u64(y, "d2h_copies", st->d2h);
	yo_kv_u64(y, "memsets", st->memsets);
	yo_kv_u64(y, "blobs", st->blobs);
	yo_kv_u64(y, "blob_raw_bytes", st->blob_raw);
	yo_kv_u64(y, "blob_stored_bytes", st->blob_stored);
	yo_key(y, "compression_ratio");
	if (st->blob_stored) {
		char b[32];
		snprintf(b, sizeof(b), "%.2f", (double)st->blob_raw / (double)st->blob_stored);
		yo_plain(y, b);
	} else {
		yo_plain(y, "null");
	}
	/* 1.7: argument words held to be integers, and words some launch
	 * showed small that another launch held an address in (pointer slots) */
	yo_kv_u64(y, "integer_words", t->nnonptr);
	yo_kv_u64(y, "pointer_slots_with_small_values", t->nnonptr_slots);
	yo_kv_u64(y, "modules", st->modules);
	yo_kv_u64(y, "module_bytes", st->module_bytes);
	yo_kv_u64(y, "kernels", st->nkernels);
	yo_kv_u64(y, "notes", st->notes);
	yo_kv_u64(y, "unknown_records", st->unknown);
	/* 1.8: launches whose Python stack the file does not define (shown
	 * without frames) */
	if (t->stacks_missing)
		yo_kv_u64(y, "launches_missing_python_stack", t->stacks_missing);
	yo_map_end(y);
}

static void emit_kernels(struct yout *y, const struct stats *st)
{
	yo_key(y, "kernels");
	yo_seq_start(y, 0);
	for (size_t i = 0; i < st->nkernels; i++) {
		yo_map_start(y, 0);
		yo_kv_str(y, "name", st->slots[i].name);
		yo_kv_u64(y, "launches", st->slots[i].n);
		yo_map_end(y);
	}
	yo_seq_end(y);
}

static void emit_modules(struct yout *y, const struct trace *t, const struct show_opts *o)
{
	struct strbuf img = STRBUF_INIT, e = STRBUF_INIT;
	yo_key(y, "modules");
	yo_seq_start(y, 0);
	for (size_t i = 0; i < t->nrec && !y->failed; i++) {
		const struct tr_module *m = &t->rec[i].u.module;
		if (t->rec[i].type != TR_MODULE)
			continue;
		yo_map_start(y, 0);
		yo_kv_u64(y, "id", m->module_id);
		kv_enum(y, "kind", module_kind_name(m->kind), m->kind);
		yo_kv_u64(y, "size", m->size);
		kv_hash(y, "blob", m->blob);
		yo_kv_u64(y, "event", i);
		sb_reset(&img);
		sb_reset(&e);
		if (trace_blob_read(t, m->blob, &img, o->blob_limit ? o->blob_limit : 256ull << 20, &e) < 0) {
			yo_kv_str(y, "error", e.buf);
		} else if (m->kind == TR_MOD_ELF) {
			long n = show_elf_count_funcs((const uint8_t *)img.buf, img.len, &e);
			if (n < 0)
				yo_kv_str(y, "error", e.buf);
			else
				yo_kv_u64(y, "functions", (uint64_t)n);
		}
		yo_map_end(y);
	}
	yo_seq_end(y);
	sb_release(&img);
	sb_release(&e);
}

/* k: Python frames (innermost first), or why there are none */
static void emit_frames(struct yout *y, const char *k, uint32_t py_state, uint32_t nframes,
			const struct tr_frame *frames)
{
	yo_key(y, k);
	if (!nframes) {
		switch (py_state) {
		case TR_PY_NONE: yo_str(y, "none"); break;
		case TR_PY_FRAMES: yo_str(y, "no frames recorded"); break;
		case TR_PY_NO_GIL: yo_str(y, "no GIL (the launching thread did not hold it)"); break;
		default: yo_strf(y, "unknown(%u)", py_state); break;
		}
		return;
	}
	yo_seq_start(y, 0);
	for (uint32_t i = 0; i < nframes; i++)
		yo_strf(y, "%s:%u %s", frames[i].file, frames[i].line, frames[i].func);
	yo_seq_end(y);
}

static void emit_fault(struct yout *y, const struct trace *t, const struct stats *st)
{
	yo_key(y, "fault");
	if (st->fault < 0) {
		yo_plain(y, "null");
		return;
	}
	const struct tr_fault *f = &t->rec[st->fault].u.fault;
	yo_map_start(y, 0);
	yo_kv_u64(y, "code", f->code);
	yo_kv_str(y, "error", f->error);
	yo_kv_str(y, "api", f->api);
	yo_kv_u64(y, "launch_seq", f->launch_seq);
	yo_kv_str(y, "kernel", f->kernel);
	kv_kernel_name(y, f->kernel);
	yo_kv_bool(y, "at_launch", f->at_launch);
	yo_kv_u64(y, "event", (uint64_t)st->fault);
	yo_key(y, "launch_event");
	if (st->fault_launch >= 0)
		yo_u64(y, (uint64_t)st->fault_launch);
	else
		yo_plain(y, "null");
	if (st->fault_launch >= 0) {
		const struct tr_launch *fl = &t->rec[st->fault_launch].u.launch;
		emit_frames(y, "python", fl->py_state, fl->nframes, fl->frames);
	}
	yo_map_end(y);
}

/* ---- events ---- */

/* "alloc#3+0x40 (device, 4000 bytes)" for v, which points into a. */
static void describe_alloc(struct strbuf *sb, const struct mm_alloc *a, uint64_t v, int dead)
{
	sb_addf(sb, "alloc#%zu+0x%" PRIx64, a->index, v - a->addr);
	if (dead) {
		sb_addf(sb, " (FREED at event %ld)", a->free_event);
		return;
	}
	sb_addf(sb, " (%s", tr_alloc_kind_name(a->kind));
	if (a->user && *(const char *)a->user)
		sb_addf(sb, " %s", (const char *)a->user);
	sb_addf(sb, ", %" PRIu64 " bytes%s)", a->size, v - a->addr == a->size ? ", one past the end" : "");
}

/* k: the allocation that address v (a copy's or memset's target or
 * source) lies in, if any. */
static void kv_ptr(struct yout *y, const char *k, const struct memmap *mm, uint64_t v)
{
	struct strbuf sb = STRBUF_INIT;
	int dead = 0;
	const struct mm_alloc *a = v ? memmap_lookup(mm, v, &dead) : NULL;
	if (a) {
		describe_alloc(&sb, a, v, dead);
		yo_key(y, k);
		yo_str(y, sb.buf);
	}
	sb_release(&sb);
}

/* k: the allocation that l's 8-byte argument word at off (value v) points
 * into, if it is a pointer word (memmap_arg_word: not an integer one). */
static void kv_word(struct yout *y, const char *k, const struct memmap *mm, const struct tr_launch *l, uint32_t off,
		    uint64_t v)
{
	struct strbuf sb = STRBUF_INIT;
	int dead = 0;
	const struct mm_alloc *a = memmap_arg_word(mm, l, off, v, &dead);
	if (a) {
		describe_alloc(&sb, a, v, dead);
		yo_key(y, k);
		yo_str(y, sb.buf);
	}
	sb_release(&sb);
}

/* The pointer words of a by-value struct or of copied bytes, listed under
 * `key` (memmap_scan_words calls list_word for each). */
struct word_list {
	struct yout *y;
	const char *key;         /* "ptrs": {at, ptr} maps; else "+0x..: ..." strings */
	uint64_t base;           /* "ptrs": the struct's offset in the parameter bytes */
	uint64_t n, cap;         /* found so far; how many are listed */
	struct strbuf sb;
};

static int list_word(struct mm_alloc *a, size_t off, uint64_t v, int dead, void *arg)
{
	struct word_list *w = arg;
	if (!w->n++) {
		yo_key(w->y, w->key);
		yo_seq_start(w->y, 0);
	}
	if (w->n > w->cap)
		return 0;
	sb_reset(&w->sb);
	describe_alloc(&w->sb, a, v, dead);
	if (!strcmp(w->key, "ptrs")) {
		yo_map_start(w->y, 0);
		yo_key(w->y, "at");
		yo_strf(w->y, "+0x%" PRIx64, (uint64_t)off - w->base);
		yo_kv_str(w->y, "ptr", w->sb.buf);
		yo_map_end(w->y);
	} else {
		yo_strf(w->y, "+0x%llx: %s", (unsigned long long)off, w->sb.buf);
	}
	return 0;
}

static uint64_t le_u64(const uint8_t *p, size_t n)
{
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static void hex_bytes(struct strbuf *sb, const uint8_t *p, size_t n, size_t cap)
{
	for (size_t i = 0; i < n && i < cap; i++)
		sb_addf(sb, "%02x", p[i]);
	if (n > cap)
		sb_addf(sb, "...");
}

static void emit_params(struct yout *y, const struct tr_launch *l, const struct memmap *mm)
{
	struct strbuf sb = STRBUF_INIT;
	yo_key(y, "params");
	yo_seq_start(y, 0);
	for (uint32_t i = 0; i < l->nparams; i++) {
		const struct tr_param *p = &l->params[i];
		const uint8_t *b = l->args + p->offset;   /* reader checked the bounds */
		uint64_t first = ((uint64_t)p->offset + 7) & ~7ull;
		uint64_t end = (uint64_t)p->offset + p->size;

		yo_map_start(y, 0);
		yo_kv_u64(y, "offset", p->offset);
		yo_kv_u64(y, "size", p->size);
		sb_reset(&sb);
		hex_bytes(&sb, b, p->size, HEX_CAP);
		yo_key(y, "hex");
		yo_quoted(y, sb.buf);
		if (p->size == 1 || p->size == 2 || p->size == 4 || p->size == 8)
			yo_kv_u64(y, "value", le_u64(b, p->size));
		if (p->size == 8 && first == p->offset) {
			kv_word(y, "ptr", mm, l, p->offset, le_u64(b, 8));
		} else {
			/* a by-value struct: its words aligned in the parameter bytes,
			 * the integer ones left out */
			struct word_list w = { y, "ptrs", p->offset, 0, UINT64_MAX, STRBUF_INIT };
			if (memmap_scan_args(mm, l, l->args, first, end, list_word, &w))
				yo_seq_end(y);
			sb_release(&w.sb);
		}
		yo_map_end(y);
	}
	yo_seq_end(y);
	if (!l->nparams && l->argsize) {
		sb_reset(&sb);
		hex_bytes(&sb, l->args, l->argsize, HEX_CAP);
		yo_key(y, "args_hex");
		yo_quoted(y, sb.buf);
	}
	sb_release(&sb);
}

/* int_words: the words of l the decoder holds to be integers (NONPTR, or
 * a launch of its kernel showing a small value there) whose value here
 * falls inside an allocation: what a reader before 1.7 took for pointers
 * ("+0x..: 0x... (alloc#N+0x..)"); nothing when there are none. */
static void emit_int_words(struct yout *y, const struct tr_launch *l, const struct memmap *mm)
{
	struct strbuf sb = STRBUF_INIT;
	int n = 0;
	for (uint32_t i = 0; i < l->nnonptr; i++) {
		uint32_t off = l->nonptr[i];
		const struct mm_alloc *a;
		uint64_t v;
		int dead = 0;
		if (!tr_launch_word(l, off, &v) || !(a = memmap_pointer_word(mm, v, &dead)))
			continue;
		if (!n++) {
			yo_key(y, "int_words");
			yo_seq_start(y, 0);
		}
		sb_reset(&sb);
		describe_alloc(&sb, a, v, dead);
		yo_strf(y, "+0x%x: 0x%016llx (%s)", off, (unsigned long long)v, sb.buf);
	}
	if (n)
		yo_seq_end(y);
	sb_release(&sb);
}

static void emit_launch(struct yout *y, const struct tr_launch *l, const struct memmap *mm)
{
	struct strbuf sb = STRBUF_INIT;
	yo_kv_u64(y, "seq", l->seq);
	yo_kv_str(y, "kernel", l->name);
	kv_kernel_name(y, l->name);
	kv_enum(y, "api", api_name(l->api), l->api);
	kv_dim3(y, "grid", &l->grid);
	kv_dim3(y, "block", &l->block);
	yo_kv_u64(y, "shmem", l->shmem);
	yo_kv_hex(y, "stream", l->stream);
	kv_flags(y, l->flags);
	yo_kv_hex(y, "func", l->func);
	yo_kv_u64(y, "tid", l->tid);
	yo_kv_u64(y, "args_size", l->argsize);
	if (l->same_back)   /* format 2.0: written short, as a repeat */
		yo_kv_u64(y, "same_as_records_back", l->same_back);
	emit_params(y, l, mm);
	emit_int_words(y, l, mm);
	if (l->nattrs) {
		yo_key(y, "attrs");
		yo_seq_start(y, 0);
		for (uint32_t i = 0; i < l->nattrs; i++) {
			yo_map_start(y, 1);
			yo_kv_u64(y, "id", l->attrs[i].id);
			sb_reset(&sb);
			hex_bytes(&sb, l->attrs[i].value, l->attrs[i].len, 64);
			yo_key(y, "hex");
			yo_quoted(y, sb.buf);
			yo_map_end(y);
		}
		yo_seq_end(y);
	}
	emit_frames(y, "python", l->py_state, l->nframes, l->frames);
	sb_release(&sb);
}

/*
 * Pointer arrays in device memory: 8-byte words of the copied bytes that
 * point into a captured allocation (a kernel taking float** reaches those
 * buffers too; replay and shrink follow them).  Payloads over 16 MiB are not
 * scanned; at most 8 pointers are listed, with the total.
 */
static void emit_stored_pointers(struct yout *y, const struct trace *t, const struct tr_copy *c,
				 const struct memmap *mm)
{
	struct strbuf data = STRBUF_INIT, e = STRBUF_INIT;
	struct word_list w = { y, "stored_pointers", 0, 0, 8, STRBUF_INIT };

	if (c->size > (16u << 20) || trace_blob_read(t, c->blob, &data, 16u << 20, &e) < 0)
		goto out;
	/* words aligned in the device address space */
	if (memmap_scan_words(mm, data.buf, data.len, memmap_first_aligned(c->dst), list_word, &w)) {
		yo_seq_end(y);
		yo_kv_u64(y, "stored_pointers_total", w.n);
	}
out:
	sb_release(&data);
	sb_release(&e);
	sb_release(&w.sb);
}

static void emit_copy(struct yout *y, const struct trace *t, const struct tr_rec *r,
		      const struct memmap *mm)
{
	const struct tr_copy *c = &r->u.copy;
	yo_kv_hex(y, "dst", c->dst);
	kv_ptr(y, "dst_ptr", mm, c->dst);
	yo_kv_hex(y, "src", c->src);
	if (r->type != TR_MEMCPY_H2D)
		kv_ptr(y, "src_ptr", mm, c->src);
	yo_kv_u64(y, "size", c->size);
	if (r->type == TR_MEMCPY_H2D) {
		kv_hash(y, "blob", c->blob);
		if (trace_find_blob(t, c->blob) < 0)
			yo_kv_bool(y, "blob_missing", 1);
		else
			emit_stored_pointers(y, t, c, mm);
	}
	yo_kv_hex(y, "stream", c->stream);
	kv_flags(y, c->flags);
}

/* Records with no case of their own in emit_record: every field, as the
 * table (trace/records.def) says to show it, keyed by the part of its name
 * after the dot. */
static const char *field_key(const char *name)
{
	const char *d = strchr(name, '.');
	return d ? d + 1 : name;
}
#define SHOW_DEC(name, v) yo_kv_u64(y, field_key(name), v);
#define SHOW_HEX(name, v) yo_kv_hex(y, field_key(name), v);
#define SHOW_HASH(name, v) kv_hash(y, field_key(name), v);
#define SHOW_STR(name, v) yo_kv_str(y, field_key(name), v);
#define SHOW_I64(name, v) yo_kv_i64(y, field_key(name), v);
#define SHOW_BOOL(name, v) yo_kv_bool(y, field_key(name), v);
#define SHOW_NONE(name, v)
#define SHOW_FIELD_(kind, field, name, show) SHOW_##show(name, x->field)
#define SHOW_LAYOUT_(layout, tag) \
	static void show_layout_##layout(struct yout *y, const struct tag *x) \
	{ TR_FIELDS_##layout(SHOW_FIELD_) }
TR_LAYOUTS(SHOW_LAYOUT_)

static void emit_fields(struct yout *y, const struct tr_rec *r)
{
	switch (r->type) {
#define SHOW_CASE_(NAME, num, layout, ctor, rec) \
	case TR_##NAME: show_layout_##layout(y, &r->u.layout); break;
	TR_RECORDS(SHOW_CASE_)
	default:
		break;   /* an unknown type: its bytes are not shown */
	}
}

static void emit_record(struct yout *y, const struct trace *t, size_t i, const struct memmap *mm,
			const struct mm_alloc *freed)
{
	const struct tr_rec *r = &t->rec[i];
	yo_map_start(y, 0);
	yo_kv_u64(y, "event", i);
	yo_key(y, "type");
	if (tr_type_known(r->type))
		yo_str(y, tr_type_name(r->type));
	else
		yo_strf(y, "UNKNOWN(%u)", r->type);   /* a gap in the table too (docs/FORMAT.md) */
	yo_kv_u64(y, "offset", r->offset);
	switch (r->type) {
	case TR_PROCESS:
		emit_process_fields(y, &r->u.process);
		break;
	case TR_DEVICE:
		emit_device_fields(y, &r->u.device);
		break;
	case TR_BLOB: {
		const struct tr_blob *b = &r->u.blob;
		kv_hash(y, "hash", b->hash);
		yo_kv_u64(y, "raw_size", b->raw_size);
		yo_kv_u64(y, "stored_size", b->stored_size);
		yo_kv_str(y, "codec", b->codec == TR_CODEC_ZSTD ? "zstd" : "raw");
		break;
	}
	case TR_MODULE: {
		const struct tr_module *m = &r->u.module;
		yo_kv_u64(y, "id", m->module_id);
		kv_enum(y, "kind", module_kind_name(m->kind), m->kind);
		kv_hash(y, "blob", m->blob);
		yo_kv_u64(y, "size", m->size);
		if (trace_find_blob(t, m->blob) < 0)
			yo_kv_bool(y, "blob_missing", 1);
		break;
	}
	case TR_ALLOC: {
		const struct tr_alloc *a = &r->u.alloc;
		/* memmap_add ran just before: the newest allocation is this one */
		yo_key(y, "alloc");
		yo_strf(y, "alloc#%zu", mm->n ? mm->n - 1 : 0);
		yo_kv_hex(y, "addr", a->addr);
		yo_kv_u64(y, "size", a->size);
		kv_enum(y, "kind", alloc_kind_name(a->kind), a->kind);
		yo_kv_hex(y, "flags", a->flags);
		if (*a->name)
			yo_kv_str(y, "name", a->name);
		break;
	}
	case TR_FREE:
		yo_kv_hex(y, "addr", r->u.free.addr);
		kv_enum(y, "kind", alloc_kind_name(r->u.free.kind), r->u.free.kind);
		yo_key(y, "alloc");
		if (freed)
			yo_strf(y, "alloc#%zu", freed->index);
		else
			yo_str(y, "none (no live allocation starts here)");
		break;
	case TR_MEMCPY_H2D:
	case TR_MEMCPY_D2D:
	case TR_MEMCPY_D2H:
		emit_copy(y, t, r, mm);
		break;
	case TR_MEMSET: {
		const struct tr_memset *m = &r->u.memset;
		yo_kv_hex(y, "dst", m->dst);
		kv_ptr(y, "dst_ptr", mm, m->dst);
		yo_kv_hex(y, "value", m->value);
		yo_kv_u64(y, "elem_size", m->elem_size);
		yo_kv_u64(y, "width", m->width);
		yo_kv_u64(y, "height", m->height);
		yo_kv_u64(y, "pitch", m->pitch);
		yo_kv_hex(y, "stream", m->stream);
		kv_flags(y, m->flags);
		break;
	}
	case TR_LAUNCH:
		emit_launch(y, &r->u.launch, mm);
		show_launch_tmaps(y, t, i, &r->u.launch);
		break;
	case TR_TENSORMAP:
		show_tmap_fields(y, &r->u.tmap, mm);
		break;
	case TR_FAULT:
		emit_fields(y, r);
		kv_kernel_name(y, r->u.fault.kernel);
		break;
	case TR_GRAPH_BEGIN:
	case TR_GRAPH_END:
	case TR_GRAPH_EXEC:
	case TR_GRAPH_LAUNCH:
		if (r->type != TR_GRAPH_EXEC)
			yo_kv_hex(y, "stream", r->u.graph.stream);
		if (r->type == TR_GRAPH_END || r->type == TR_GRAPH_EXEC)
			yo_kv_hex(y, "graph", r->u.graph.graph);
		if (r->type == TR_GRAPH_EXEC || r->type == TR_GRAPH_LAUNCH)
			yo_kv_hex(y, "exec", r->u.graph.exec);
		break;
	case TR_CHECKPOINT_BEGIN:
	case TR_CHECKPOINT_END: {
		const struct tr_checkpoint *k = &r->u.checkpoint;
		yo_kv_u64(y, "id", k->id);
		yo_kv_u64(y, "launch_seq", k->launch_seq);
		yo_kv_u64(y, "allocs", k->allocs);
		yo_kv_u64(y, "bytes", k->bytes);
		if (r->type == TR_CHECKPOINT_END)
			yo_kv_u64(y, "stored", k->stored);
		yo_kv_hex(y, "flags", k->flags);
		break;
	}
	case TR_BLOCK_ALLOC: {
		const struct tr_block *b = &r->u.block;
		yo_kv_hex(y, "addr", b->addr);
		yo_kv_u64(y, "size", b->size);
		yo_kv_u64(y, "alloc_size", b->alloc_size);
		yo_kv_hex(y, "segment", b->segment);
		kv_ptr(y, "segment_ptr", mm, b->addr);
		yo_kv_u64(y, "source", b->source);
		yo_kv_hex(y, "flags", b->flags);
		if (*b->file) {
			yo_key(y, "at");
			yo_strf(y, "%s:%u (%s)", b->file, b->line, b->func);
		}
		break;
	}
	case TR_PYSTACK:   /* the frames the launches that name this id carry (1.8) */
		emit_fields(y, r);
		emit_frames(y, "python", TR_PY_FRAMES, r->u.pystack.nframes, r->u.pystack.frames);
		break;
	default:   /* FUNC_ATTR, END, NOTE, ..., and types added since */
		emit_fields(y, r);
		break;
	}
	yo_map_end(y);
}

/* Walk every record, keeping the address map current; emit those selected:
 * [o->first, o->last], or only record `only` when only >= 0. */
static void emit_events(struct yout *y, const struct trace *t, const struct show_opts *o, long only)
{
	struct memmap mm = MEMMAP_INIT;
	yo_key(y, "events");
	yo_seq_start(y, 0);
	for (size_t i = 0; i < t->nrec && !y->failed; i++) {
		const struct tr_rec *r = &t->rec[i];
		struct mm_alloc *freed = NULL;
		int sel = only >= 0 ? i == (size_t)only : i >= o->first && i <= o->last;

		if (r->type == TR_ALLOC) {
			struct mm_alloc *a = memmap_add(&mm, r->u.alloc.addr, r->u.alloc.size,
							r->u.alloc.kind, (long)i);
			a->user = (void *)r->u.alloc.name;
		} else if (r->type == TR_FREE) {
			freed = memmap_free(&mm, r->u.free.addr, (long)i);
		}
		if (sel)
			emit_record(y, t, i, &mm, freed);
		if (only < 0 && i >= o->last)
			break;
		if (only >= 0 && i >= (size_t)only)
			break;
	}
	yo_seq_end(y);
	memmap_release(&mm);
}

int show_render(FILE *out, const struct trace *t, const struct show_opts *o, struct strbuf *err)
{
	struct yout y;
	struct stats st;
	int ret = -1;

	stats_collect(&st, t);
	if (yo_open(&y, out, err) < 0) {
		yo_close(&y, err);
		goto out_stats;
	}
	yo_map_start(&y, 0);
	if (o->fault_only) {
		emit_fault(&y, t, &st);
		if (o->events && st.fault_launch >= 0)
			emit_events(&y, t, o, st.fault_launch);
	} else {
		emit_header(&y, t);
		yo_key(&y, "process");
		if (st.process >= 0) {
			yo_map_start(&y, 0);
			emit_process_fields(&y, &t->rec[st.process].u.process);
			yo_map_end(&y);
		} else {
			yo_plain(&y, "null");
		}
		yo_key(&y, "device");
		if (st.device >= 0) {
			yo_map_start(&y, 0);
			emit_device_fields(&y, &t->rec[st.device].u.device);
			yo_map_end(&y);
		} else {
			yo_plain(&y, "null");
		}
		emit_totals(&y, &st, t);
		emit_kernels(&y, &st);
		emit_modules(&y, t, o);
		emit_fault(&y, t, &st);
		if (o->events)
			emit_events(&y, t, o, -1);
	}
	yo_map_end(&y);
	if (yo_close(&y, err) < 0)
		goto out_stats;
	ret = 0;
out_stats:
	free(st.slots);
	return ret;
}
