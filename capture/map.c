/*
 * map.c - a u64 -> (u64, u64) hash map for the capture library (see
 * capture.h): live allocations by the pointer their free call will name,
 * module globals already recorded, and the per-function layout cache.
 *
 * Open addressing with linear probing and backward-shift deletion (no
 * tombstones), so a long run of allocations and frees does not degrade it.
 * Key 0 marks an empty slot and is never stored (NULL pointers are never
 * interesting here).  Not thread-safe: inject.c holds its lock around calls.
 */
#include <stdlib.h>
#include <string.h>

#include "../common/util.h"
#include "capture.h"

static size_t slot_of(uint64_t key, size_t cap)
{
	/* Addresses are aligned and clustered: mix before masking. */
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdull;
	key ^= key >> 33;
	return (size_t)key & (cap - 1);
}

struct cap_map_ent *cap_map_get(const struct cap_map *m, uint64_t key)
{
	if (!m->cap || !key)
		return NULL;
	for (size_t i = slot_of(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
		if (m->slot[i].key == key)
			return &m->slot[i];
		if (!m->slot[i].key)
			return NULL;
	}
}

static void grow(struct cap_map *m)
{
	size_t ocap = m->cap;
	struct cap_map_ent *old = m->slot;

	m->cap = ocap ? ocap * 2 : 64;
	m->slot = xcalloc(m->cap, sizeof(*m->slot));
	m->n = 0;
	for (size_t i = 0; i < ocap; i++)
		if (old[i].key)
			cap_map_put(m, old[i].key, old[i].v1, old[i].v2);
	free(old);
}

void cap_map_put(struct cap_map *m, uint64_t key, uint64_t v1, uint64_t v2)
{
	if (!key)
		return;
	if ((m->n + 1) * 4 > m->cap * 3)
		grow(m);
	for (size_t i = slot_of(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
		if (m->slot[i].key == key || !m->slot[i].key) {
			if (!m->slot[i].key)
				m->n++;
			m->slot[i].key = key;
			m->slot[i].v1 = v1;
			m->slot[i].v2 = v2;
			return;
		}
	}
}

int cap_map_del(struct cap_map *m, uint64_t key, uint64_t *v1, uint64_t *v2)
{
	struct cap_map_ent *e = cap_map_get(m, key);
	size_t i, j, mask;

	if (!e)
		return 0;
	if (v1)
		*v1 = e->v1;
	if (v2)
		*v2 = e->v2;
	mask = m->cap - 1;
	i = (size_t)(e - m->slot);
	/* Backward shift: pull later members of the probe run into the hole
	 * when their home slot is not between the hole and themselves. */
	for (j = (i + 1) & mask; m->slot[j].key; j = (j + 1) & mask) {
		size_t home = slot_of(m->slot[j].key, m->cap);
		int movable = (j > i) ? (home <= i || home > j) : (home <= i && home > j);
		if (movable) {
			m->slot[i] = m->slot[j];
			i = j;
		}
	}
	memset(&m->slot[i], 0, sizeof(m->slot[i]));
	m->n--;
	return 1;
}

void cap_map_clear(struct cap_map *m)
{
	if (m->cap)
		memset(m->slot, 0, m->cap * sizeof(*m->slot));
	m->n = 0;
}

void cap_map_release(struct cap_map *m)
{
	free(m->slot);
	m->slot = NULL;
	m->n = m->cap = 0;
}
