/*
 * test_tritonsig.c - Triton tensor descriptor arguments mapped onto the
 * binary's parameters (emit/tritonsig.c): the types line split without
 * breaking "tensordesc<bf16[64, 64]>" at its inner space, and each of the
 * launcher's expansions chosen by the parameter count it explains (the
 * triton-tma sample: 6 source names, 10 kernel parameters).
 */
#include <stdlib.h>
#include <string.h>

#include "../../common/util.h"
#include "../../emit/tritonsig.h"
#include "../../trace/trace.h"
#include "unit.h"

static uint32_t words(const char *const *w, char ***out)
{
	uint32_t n = 0;
	*out = NULL;
	for (; w[n]; n++) {
		*out = xrealloc(*out, (n + 1) * sizeof(**out));
		(*out)[n] = xstrdup(w[n]);
	}
	return n;
}

static void drop(char **v, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

UNIT_TEST(tritonsig_split_and_expand_tensordesc)
{
	static const char *const nm[] = { "kv_desc", "out_ptr", "scale", "n_tokens", "global_scratch",
					  "profile_scratch", NULL };
	char **names, **types;
	uint32_t n, nt;
	struct tr_param p[10];

	/* an older capture joined types with spaces, one of them inside a type */
	nt = tsig_split_types("tensordesc<bf16[64, 64]> *bf16 fp32 i32 *i8 *i8", &types);
	CHECK_EQ_U(nt, 6);
	CHECK_STR(types[0], "tensordesc<bf16[64,64]>");
	CHECK_STR(types[1], "*bf16");
	CHECK_EQ_U(tsig_tensordesc_rank(types[0]), 2);
	CHECK_EQ_U(tsig_tensordesc_rank("tensordesc<fp32[8,16,32]>"), 3);
	CHECK_EQ_U(tsig_tensordesc_rank("*fp32"), 0);

	/* TMA lowered: desc (128 bytes), 2 x i32 shape, 2 x i64 strides */
	n = words(nm, &names);
	memset(p, 0, sizeof(p));
	p[0].size = 128;
	CHECK_STR(tsig_expand(&names, &types, &n, 10, p), "tma");
	CHECK_EQ_U(n, 10);
	if (n == 10) {
		CHECK_STR(names[0], "kv_desc");
		CHECK(strstr(types[0], "CUtensorMap") != NULL);
		CHECK_STR(names[1], "kv_desc.shape[0]");
		CHECK_STR(types[2], "i32");
		CHECK_STR(names[4], "kv_desc.strides[1]");
		CHECK_STR(types[4], "i64");
		CHECK_STR(names[5], "out_ptr");
		CHECK_STR(names[9], "profile_scratch");
	}
	drop(names, n);
	drop(types, n);

	/* not lowered, with a padding flag (1 + 2*2 + 1 + 2*2 = 10 for the desc) */
	n = words(nm, &names);
	nt = tsig_split_types("tensordesc<bf16[64,64]> *bf16 fp32 i32 *i8 *i8", &types);
	CHECK_STR(tsig_expand(&names, &types, &n, 15, NULL), "pointer+padding");
	CHECK_EQ_U(n, 15);
	if (n == 15) {
		CHECK_STR(names[0], "kv_desc.base");
		CHECK_STR(types[0], "*bf16");
		CHECK_STR(names[5], "kv_desc.padding_nan");
		CHECK_STR(names[6], "kv_desc.shape[0]");
		CHECK_STR(names[10], "out_ptr");
	}
	drop(names, n);
	drop(types, n);

	/* no rule explains 11: names left as they were */
	n = words(nm, &names);
	nt = tsig_split_types("tensordesc<bf16[64,64]> *bf16 fp32 i32 *i8 *i8", &types);
	CHECK(tsig_expand(&names, &types, &n, 11, NULL) == NULL);
	CHECK_EQ_U(n, 6);
	CHECK_STR(names[0], "kv_desc");
	/* 10 params but param 0 is not 128 bytes: not the TMA rule */
	p[0].size = 8;
	CHECK(tsig_expand(&names, &types, &n, 10, p) == NULL);
	drop(names, n);
	drop(types, nt);
}
