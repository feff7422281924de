/*
 * test_backmap.c - replay addresses back to captured ones (replay/backmap.h)
 * against a naive model: random twins, words inside, one past the end,
 * between and outside; backmap_apply rewrites exactly the words in twins,
 * at the alignment asked for.
 */
#include <stdlib.h>
#include <string.h>

#include "../../replay/backmap.h"
#include "unit.h"

UNIT_TEST(backmap_vs_model)
{
	struct backmap b = BACKMAP_INIT;
	uint64_t ptr[32], size[32], addr[32];
	unsigned seed = 7;
	size_t n = 32;

	for (size_t i = 0; i < n; i++) {   /* disjoint twins, in no order */
		ptr[i] = 0x7f0000000000ull + ((i * 7) % n) * 0x400000ull + (rand_r(&seed) % 16) * 256;
		size[i] = 1 + rand_r(&seed) % 0x100000;
		addr[i] = 0x5a0000000000ull + i * 0x1000000ull;
		backmap_add(&b, ptr[i], size[i], addr[i]);
	}
	for (int k = 0; k < 20000; k++) {
		size_t i = (size_t)rand_r(&seed) % n;
		uint64_t v = ptr[i] + (uint64_t)rand_r(&seed) % (size[i] + 0x1000), want = 0;
		for (size_t j = 0; j < n; j++)
			if (v >= ptr[j] && v <= ptr[j] + size[j])
				want = addr[j] + (v - ptr[j]);
		CHECK_EQ_U(backmap_lookup(&b, v), want);
	}
	CHECK_EQ_U(backmap_lookup(&b, 0x1234), 0);
	{
		uint8_t buf[40];
		uint64_t w[5] = { ptr[3] + 8, 42, ptr[5] + size[5], 0x7f0000000000ull - 1, ptr[9] };
		memset(buf, 0, sizeof(buf));
		memcpy(buf, w, sizeof(w));
		CHECK_EQ_U(backmap_apply(&b, buf, sizeof(buf), 0), 3);
		memcpy(w, buf, sizeof(w));
		CHECK_EQ_U(w[0], addr[3] + 8);
		CHECK_EQ_U(w[1], 42);
		CHECK_EQ_U(w[2], addr[5] + size[5]);
		CHECK_EQ_U(w[3], 0x7f0000000000ull - 1);
		CHECK_EQ_U(w[4], addr[9]);
		/* scanned from byte 4: the words at 4, 12, ... are other values */
		CHECK_EQ_U(backmap_apply(&b, buf, sizeof(buf), 4), 0);
	}
	backmap_release(&b);
}
