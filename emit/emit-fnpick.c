/*
 * emit-fnpick.c - repro.cu's choice among captured modules that define
 * the launched kernel's name (a JIT's builds of one kernel per
 * configuration), the same choice replay makes (replay/fnpick.c,
 * replay/engine.c get_function), tried in this order: the build with the
 * attributes capture recorded for the launch's function (FUNC_INFO, 1.5);
 * the build made for exactly the launch's block (Triton's .reqntid); the
 * newest that runs the block and has the launch's recorded parameter
 * layout (cuFuncGetParamInfo: count, offsets, sizes; CUDA 12.4+); the
 * newest that runs the block.  emit.c calls it with the candidate module
 * indexes.
 */
#include <stdint.h>
#include <string.h>

#include "../common/strbuf.h"
#include "../trace/trace.h"
#include "emit-int.h"

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
		"\t * configuration); as replay chooses, the first of them, newest first, that\n", ncand);
	if (in)
		sb_addf(o, "\t * pass 0: has the attributes the program's build had (max threads %d, %d\n"
			"\t *   registers, %d bytes static shared, %d constant, %d local),\n",
			in->max_threads, in->num_regs, in->shared_bytes, in->const_bytes, in->local_bytes);
	sb_addf(o, "\t * pass 1: was built for blocks of exactly %llu threads (Triton's .reqntid),\n"
		"\t * pass 2: runs blocks of %llu threads,\n"
		"\t * and (passes 0-2) takes the launch's %u parameters (offsets and sizes below);\n"
		"\t * pass 3: runs the block */\n"
		"\t{\n\t\tstatic const int cand[] = {", threads, threads, l->nparams);
	for (int k = 0; k < ncand; k++)
		sb_addf(o, " %d,", cand[k]);
	sb_adds(o, " };\n\t\tstatic const size_t poff[] = {");
	for (uint32_t p = 0; p < l->nparams; p++)
		sb_addf(o, " %u,", l->params[p].offset);
	sb_adds(o, l->nparams ? " };\n" : " 0 };\n");
	sb_adds(o, "\t\tstatic const size_t psz[] = {");
	for (uint32_t p = 0; p < l->nparams; p++)
		sb_addf(o, " %u,", l->params[p].size);
	sb_adds(o, l->nparams ? " };\n" : " 0 };\n");
	sb_addf(o, "\t\tstatic const CUfunction_attribute wa[] = { CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,\n"
		"\t\t\tCU_FUNC_ATTRIBUTE_NUM_REGS, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,\n"
		"\t\t\tCU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES };\n"
		"\t\tstatic const int want[] = { %d, %d, %d, %d, %d };   /* -1: not known */\n",
		in ? in->max_threads : -1, in ? in->num_regs : -1, in ? in->shared_bytes : -1,
		in ? in->const_bytes : -1, in ? in->local_bytes : -1);
	sb_addf(o, "\t\tint i = %d, pass, mx;\n"
		"\t\t(void)poff;\n\t\t(void)psz;\n"
		"\t\tfor (pass = %d; pass < 4 && i == %d; pass++)\n"
		"\t\tfor (i = 0; i < %d; i++) {\n"
		"\t\t\tif (cuModuleGetFunction(&fn, mod[cand[i]], %s) != CUDA_SUCCESS)\n"
		"\t\t\t\tcontinue;\n"
		"\t\t\tmx = 0;\n"
		"\t\t\tif (cuFuncGetAttribute(&mx, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, fn) == CUDA_SUCCESS && "
		"mx < %llu)\n"
		"\t\t\t\tcontinue;\n"
		"\t\t\tif (pass == 1 && mx != %llu)\n"
		"\t\t\t\tcontinue;\n"
		"\t\t\tif (pass == 0) {\n"
		"\t\t\t\tint k, v, known = 0, same = 1;\n"
		"\t\t\t\tfor (k = 0; k < 5; k++)\n"
		"\t\t\t\t\tif (want[k] >= 0 && cuFuncGetAttribute(&v, wa[k], fn) == CUDA_SUCCESS) {\n"
		"\t\t\t\t\t\tknown++;\n"
		"\t\t\t\t\t\tsame &= v == want[k];\n"
		"\t\t\t\t\t}\n"
		"\t\t\t\tif (!known || !same)\n"
		"\t\t\t\t\tcontinue;\n"
		"\t\t\t}\n"
		"#if CUDA_VERSION >= 12040\n"
		"\t\t\tif (pass < 3) {\n"
		"\t\t\t\tsize_t o, z;\n"
		"\t\t\t\tunsigned p = 0;\n"
		"\t\t\t\tif (cuFuncGetParamInfo(fn, 0, &o, &z) == CUDA_SUCCESS) {\n"
		"\t\t\t\t\twhile (p < %u && cuFuncGetParamInfo(fn, p, &o, &z) == CUDA_SUCCESS && o == poff[p] && "
		"z == psz[p])\n"
		"\t\t\t\t\t\tp++;\n"
		"\t\t\t\t\tif (p < %u || cuFuncGetParamInfo(fn, %u, &o, &z) == CUDA_SUCCESS)\n"
		"\t\t\t\t\t\tcontinue;   /* another build's parameters */\n"
		"\t\t\t\t}\n"
		"\t\t\t}\n"
		"#endif\n"
		"\t\t\tbreak;\n"
		"\t\t}\n"
		"\t\tif (i == %d)\n\t\t\t",
		ncand, in ? 0 : 1, ncand, ncand, cname, threads, threads, l->nparams, l->nparams, l->nparams, ncand);
}
