/*
 * emit-int.h - the parts of the repro.cu emitter shared by its files:
 * emit.c (the program's body), emit-header.c (the comment at its top:
 * what was captured, how it was reduced, the diagnosis) and
 * emit-prelude.c (the helpers every program starts with).  Only those
 * files include it; callers use emit.h.
 */
#ifndef GPUREDUCE_EMIT_INT_H
#define GPUREDUCE_EMIT_INT_H

#include <stdint.h>

struct emit_info;
struct strbuf;
struct tr_launch;
struct tr_rec;
struct trace;

/* The program's helpers up to placement's core text (place_core.inc,
 * pasted by emit.c between the two), and what follows it. */
extern const char emit_prelude[];
extern const char emit_prelude_placement[];
/* The banners between repro.cu's three parts (emit-prelude.c). */
extern const char emit_part_support[];
extern const char emit_part_data[];
extern const char emit_part_main[];

/* The first record of a type in t (t may be NULL), or NULL. */
const struct tr_rec *emit_first_of(const struct trace *t, uint32_t type);
/* The comment block at the top of repro.cu; last: the faulting launch
 * (may be NULL). */
void emit_header(struct strbuf *o, const struct trace *t, const struct emit_info *info,
		 const struct tr_launch *last);

#endif
