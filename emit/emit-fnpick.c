/*
 * emit-fnpick.c - repro.cu's choice among captured modules that define
 * the launched kernel's name (a JIT's builds of one kernel per
 * configuration), the same choice replay makes (replay/fnpick.c,
 * replay/engine.c get_function): the newest module whose function runs
 * the launch's block and has the launch's recorded parameter layout
 * (cuFuncGetParamInfo: count, offsets, sizes; where the toolkit has it,
 * CUDA 12.4+).  emit.c calls it with the candidate module indexes.
 */
#include <stdint.h>

#include "../common/strbuf.h"
#include "../trace/trace.h"
#include "emit-int.h"

void emit_fn_choice(struct strbuf *o, const struct tr_launch *l, const int *cand, int ncand, const char *cname)
{
	unsigned long long threads = (unsigned long long)l->block.x * l->block.y * l->block.z;

	sb_addf(o, "\t/* %d of the captured modules define this kernel (a JIT compiled it once per\n"
		"\t * configuration): the newest whose build runs blocks of %llu threads and takes\n"
		"\t * the launch's %u parameters (offsets and sizes below), as replay chooses */\n"
		"\t{\n\t\tstatic const int cand[] = {", ncand, threads, l->nparams);
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
	sb_addf(o, "\t\tint i = %d, pass, mx = 0;\n"
		"\t\t(void)poff;\n\t\t(void)psz;\n"
		"\t\t/* pass 0: the block and the parameters; pass 1: the block only */\n"
		"\t\tfor (pass = 0; pass < 2 && i == %d; pass++)\n"
		"\t\tfor (i = 0; i < %d; i++) {\n"
		"\t\t\tif (cuModuleGetFunction(&fn, mod[cand[i]], %s) != CUDA_SUCCESS)\n"
		"\t\t\t\tcontinue;\n"
		"\t\t\tif (cuFuncGetAttribute(&mx, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, fn) == CUDA_SUCCESS && "
		"mx < %llu)\n"
		"\t\t\t\tcontinue;\n"
		"#if CUDA_VERSION >= 12040\n"
		"\t\t\tif (!pass) {\n"
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
		ncand, ncand, ncand, cname, threads, l->nparams, l->nparams, l->nparams, ncand);
}
