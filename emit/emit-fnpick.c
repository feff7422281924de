/*
 * emit-fnpick.c - repro.cu's choice among captured modules that define
 * the launched kernel's name (a JIT's builds of one kernel per
 * configuration): the passes are replay's own code (fnpick_core.inc,
 * pasted once into repro.cu by emit.c when a launch needs it, with
 * emit_fnpick_prelude before it); this file writes, per launch, what the
 * launch says (block, recorded parameter layout, the attributes capture
 * recorded for its function: FUNC_INFO) and the candidate modules'
 * functions, newest first, for fnpick_first.
 */
#include <stdint.h>
#include <string.h>

#include "../common/strbuf.h"
#include "../trace/trace.h"
#include "emit-int.h"

/* the driver calls fnpick_core.inc makes, in a repro */
const char emit_fnpick_prelude[] =
	"\n/* which build of a kernel name a launch ran (used where several modules define it) */\n"
	"#define FNPICK_ATTR(v, a, fn) cuFuncGetAttribute(v, a, fn)\n"
	"#if CUDA_VERSION >= 12040\n"
	"#define FNPICK_PARAM(fn, i, o, z) cuFuncGetParamInfo(fn, i, o, z)\n"
	"#else\n"
	"#define FNPICK_PARAM(fn, i, o, z) CUDA_ERROR_NOT_SUPPORTED\n"
	"#endif\n";

const struct tr_func_info *emit_launch_finfo(const struct trace *t, size_t i)
{
	const struct tr_launch *l = &t->rec[i].u.launch;
	while (i-- > 0)
		if (t->rec[i].type == TR_FUNC_INFO && t->rec[i].u.func_info.func == l->func &&
		    !strcmp(t->rec[i].u.func_info.name, l->name))
			return &t->rec[i].u.func_info;
	return NULL;
}

void emit_fn_choice(struct strbuf *o, const struct tr_launch *l, const struct tr_func_info *in, const int *cand,
		    int ncand, const char *cname)
{
	unsigned long long threads = (unsigned long long)l->block.x * l->block.y * l->block.z;

	sb_addf(o, "\t/* %d of the captured modules define this kernel (a JIT compiled it once per\n"
		"\t * configuration): the first, newest first, of the first pass any passes\n"
		"\t * (fnpick_first, above), as replay chose; ", ncand);
	if (in)
		sb_addf(o, "the program's build had max threads %d,\n"
			"\t * %d registers, %d bytes static shared, %d constant, %d local */\n",
			in->max_threads, in->num_regs, in->shared_bytes, in->const_bytes, in->local_bytes);
	else
		sb_adds(o, "the capture did not record the build's attributes */\n");
	sb_adds(o, "\t{\n\t\tstatic const int cand[] = {");
	for (int k = 0; k < ncand; k++)
		sb_addf(o, " %d,", cand[k]);
	sb_adds(o, " };\n\t\tstatic const unsigned layout[] = {");
	for (uint32_t p = 0; p < l->nparams; p++)
		sb_addf(o, " %u, %u,", l->params[p].offset, l->params[p].size);
	sb_adds(o, l->nparams ? " };   /* (offset, size) of each parameter */\n" : " 0 };\n");
	sb_addf(o, "\t\tstatic const struct fnpick_want want = { %lluull, %u, layout, %d,\n"
		"\t\t\t{ %d, %d, %d, %d, %d } };   /* -1: not known */\n",
		threads, l->nparams, !(l->nparams == 0 && l->argsize),
		in ? in->max_threads : -1, in ? in->num_regs : -1, in ? in->shared_bytes : -1,
		in ? in->const_bytes : -1, in ? in->local_bytes : -1);
	sb_addf(o, "\t\tCUfunction fns[%d];\n"
		"\t\tint i, pass;\n"
		"\t\tfor (i = 0; i < %d; i++)\n"
		"\t\t\tif (cuModuleGetFunction(&fns[i], mod[cand[i]], %s) != CUDA_SUCCESS)\n"
		"\t\t\t\tfns[i] = NULL;\n"
		"\t\ti = fnpick_first(fns, %d, &want, &pass);\n"
		"\t\tif (i >= 0)\n"
		"\t\t\tfn = fns[i];\n"
		"\t\telse\n\t\t\t",
		ncand, ncand, cname, ncand);
}
