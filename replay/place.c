/*
 * place.c - guard placement arithmetic (see place.h).
 */
#include <string.h>

#include "place.h"

static uint64_t round_up(uint64_t v, uint64_t g)
{
	return (v + g - 1) / g * g;
}

int place_compute(uint64_t size, uint64_t addr, uint64_t gran, int guard, struct placement *p)
{
	memset(p, 0, sizeof(*p));
	if (!gran || (gran & (gran - 1)) || gran < 256 || size > (1ull << 48))
		return -1;
	if (!size)
		size = 1;
	if (guard == GUARD_END) {
		uint64_t a = addr & 255, end, b;
		p->map_off = 0;
		p->map_size = round_up(size + 255, gran);
		p->reserve = p->map_size + gran;
		end = p->map_off + p->map_size;
		b = end - size;
		b -= (b - a) & 255;        /* same address mod 256 as captured */
		p->buf_off = b;
		p->slack = end - (b + size);
		return 0;
	}
	if (guard == GUARD_START) {
		p->map_off = gran;
		p->map_size = round_up(size, gran);
		p->reserve = gran + p->map_size;
		p->buf_off = gran;
		p->slack = p->map_size - size;
		return 0;
	}
	return -1;
}

int place_parse_guard(const char *s)
{
	if (!strcmp(s, "end"))
		return GUARD_END;
	if (!strcmp(s, "start"))
		return GUARD_START;
	if (!strcmp(s, "none"))
		return GUARD_NONE;
	return -1;
}

const char *place_guard_name(int guard)
{
	return guard == GUARD_END ? "end" : guard == GUARD_START ? "start" : "none";
}
