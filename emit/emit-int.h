/*
 * emit-int.h - the parts of the repro.cu emitter shared by its files:
 * emit.c (the program's body), emit-header.c (the comment at its top:
 * what was captured, how it was reduced, the diagnosis) and
 * emit-prelude.c (the helpers every program starts with).  Only those
 * files include it; callers use emit.h.
 */
#ifndef GPUREDUCE_EMIT_INT_H
#define GPUREDUCE_EMIT_INT_H

#include <stddef.h>
#include <stdint.h>

struct emit_info;
struct strbuf;
struct tr_func_info;
struct tr_launch;
struct tr_rec;
struct trace;

/* The program's helpers up to the core texts (placement's and the seeded
 * fill's, which emit.c pastes between the two), and what follows them. */
extern const char emit_prelude[];
extern const char emit_prelude_placement[];
/* The banners between repro.cu's three parts (emit-prelude.c). */
extern const char emit_part_support[];
extern const char emit_part_data[];
extern const char emit_part_main[];
/* A race's repro.cu: repro_tries() and release_try(), before main(). */
extern const char emit_retry_support[];

/* The first record of a type in t (t may be NULL), or NULL. */
const struct tr_rec *emit_first_of(const struct trace *t, uint32_t type);
/* The comment block at the top of repro.cu; last: the faulting launch
 * (may be NULL). */
void emit_header(struct strbuf *o, const struct trace *t, const struct emit_info *info,
		 const struct tr_launch *last);

/* emit-tensormap.c: for each recorded TMA tensor map in launch l (record
 * ev of t) -- after its args[] and put_ptr lines -- the code that builds
 * it with cuTensorMapEncode*; returns how many. */
struct memmap;
size_t emit_tmaps(struct strbuf *o, const struct trace *t, size_t ev, const struct tr_launch *l,
		  const struct memmap *mm);
/* How many recorded maps launch l holds (args[] then needs .align 64). */
size_t emit_tmap_count(const struct trace *t, size_t ev, const struct tr_launch *l);

/* emit-stored.c: the lines that copy len captured bytes (the C expression
 * expr) into buffer `id` at offset `off` (captured address dst), every
 * device pointer stored in them pointed at the repro's own buffer; returns
 * how many such pointers. */
size_t emit_copy_in(struct strbuf *o, const struct memmap *mm, int id, uint64_t off, uint64_t dst,
		    const uint8_t *data, size_t len, const char *expr);

/* emit-fnpick.c: the block that picks fn among the modules cand[0..ncand)
 * (newest first) defining launch l's kernel, with replay's passes
 * (fnpick_core.inc; the attributes `in`: its FUNC_INFO, NULL: none; the
 * caller pastes the core text once); it ends with "else" and an indent,
 * for the caller's fallback statement when no candidate passes.
 * cname: the kernel's name as a C string literal. */
void emit_fn_choice(struct strbuf *o, const struct tr_launch *l, const struct tr_func_info *in, const int *cand,
		    int ncand, const char *cname);
/* emit-fnpick.c: FNPICK_ATTR/FNPICK_PARAM for a repro, before fnpick_core_text */
extern const char emit_fnpick_prelude[];
/* The FUNC_INFO record of the launch at record i (its handle and name,
 * the latest before it), or NULL. */
const struct tr_func_info *emit_launch_finfo(const struct trace *t, size_t i);

#endif
