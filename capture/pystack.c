/*
 * pystack.c - each launch's Python frames written once (format 1.8
 * PYSTACK) and named by id in the LAUNCH records that have them.
 *
 * A training loop launches from a few hundred call paths, over and over:
 * eight frames of (file, function, line) written out in full at every
 * launch were most of a launch record's bytes (747 -> 146 on the CPU
 * bench, tests/bench/pystack-cost.sh), and the record write's time went
 * with them.  So a launch's stack is looked up, and one not seen before is
 * written as a PYSTACK record with the next id, marked to be carried into
 * every later checkpoint segment (ckpt_carry: a segment must define the
 * ids its launches name); the launch names the id.
 *
 * The key: where the frame reader gave a token for every frame (its code
 * cache entry's serial, python.c: one token, one (file, function) for the
 * life of the process), the tokens and the lines, 12 bytes a frame, with
 * no string read; else (the API walk) the frames' bytes.  inject.c first
 * walks the stack for its tokens alone (cap_py_keys) and asks
 * cap_pystack_find; only a stack not written yet has its strings read
 * (cap_py_frames_at) and goes to cap_pystack_id.  Either is hashed
 * (XXH3) and a hit is checked against the stored key byte for byte, so a
 * hash two stacks share costs the second its own inline frames, never the
 * wrong ones.  The same frames met under other tokens (an entry evicted
 * and read again) get a second id: bytes, not a wrong answer.  After
 * CAP_PYSTACK_MAX distinct stacks, new ones are written inline (memory
 * stays bounded where stacks never repeat).  Called by inject.c with its
 * lock held.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../common/strbuf.h"
#include "../common/util.h"
#include "capture.h"

enum { CAP_PYSTACK_MAX = 1 << 16 };

struct stack_ent {
	char *key;               /* the key's bytes (make_key) */
	size_t len;
	uint32_t id;
};

static struct {
	struct cap_map ids;      /* hash | 1 -> index into ent */
	struct stack_ent *ent;
	size_t n, alloc;
	struct strbuf key;
} P = { CAP_MAP_INIT, NULL, 0, 0, STRBUF_INIT };

/* 'T' then (token, line) each: equal keys, equal frames */
static void token_key(struct strbuf *sb, const uint64_t *toks, const uint32_t *lines, const struct tr_frame *f,
		      uint32_t n)
{
	sb_reset(sb);
	sb_grow(sb, 1 + (size_t)n * 12);
	sb_add(sb, "T", 1);
	for (uint32_t i = 0; i < n; i++) {
		sb_add(sb, &toks[i], sizeof(toks[i]));
		sb_add(sb, lines ? &lines[i] : &f[i].line, sizeof(uint32_t));
	}
}

/* the token key where every frame has a token; else 'S' then (file NUL
 * func NUL line) each */
static void make_key(struct strbuf *sb, const struct tr_frame *f, const uint64_t *toks, uint32_t n)
{
	int all = toks != NULL;
	for (uint32_t i = 0; all && i < n; i++)
		all = toks[i] != 0;
	if (all) {
		token_key(sb, toks, NULL, f, n);
		return;
	}
	sb_reset(sb);
	sb_add(sb, "S", 1);
	for (uint32_t i = 0; i < n; i++) {
		const char *file = f[i].file ? f[i].file : "", *func = f[i].func ? f[i].func : "";
		sb_add(sb, file, strlen(file) + 1);
		sb_add(sb, func, strlen(func) + 1);
		sb_add(sb, &f[i].line, sizeof(f[i].line));
	}
}

/* P.key's name in P.ids (never 0: the map's empty slot) */
static uint64_t key_hash(void)
{
	return tr_hash(P.key.buf, P.key.len) | 1;
}

/* the id of the key in P.key, or 0 (*known: the hash names another key) */
static uint32_t lookup(uint64_t *hash, int *known)
{
	struct cap_map_ent *e;
	const struct stack_ent *s;
	*hash = key_hash();
	*known = 0;
	if (!(e = cap_map_get(&P.ids, *hash)))
		return 0;
	*known = 1;
	s = &P.ent[e->v1];
	return s->len == P.key.len && !memcmp(s->key, P.key.buf, s->len) ? s->id : 0;
}

/* At every launch: known by the key's XXH3 and length alone, both in the
 * map's slot (as blobs are named by their hash), so the entry and its key
 * are not read; on a loop's host they are out of the cache by the next
 * step.  A stack written inline (its hash taken) is never found here. */
uint32_t cap_pystack_find(const uint64_t *toks, const uint32_t *lines, uint32_t n)
{
	struct cap_map_ent *e;
	for (uint32_t i = 0; i < n; i++)
		if (!toks[i])
			return 0;
	if (!n)
		return 0;
	token_key(&P.key, toks, lines, NULL, n);
	e = cap_map_get(&P.ids, key_hash());
	return e && e->v2 >> 32 == P.key.len ? (uint32_t)e->v2 : 0;
}

uint32_t cap_pystack_id(struct trace_writer *w, const struct tr_frame *frames, const uint64_t *toks, uint32_t n)
{
	struct stack_ent *s;
	struct tr_rec r;
	uint64_t hash, start;
	uint32_t id;
	int known;

	if (!n || w->failed)
		return 0;
	make_key(&P.key, frames, toks, n);
	if ((id = lookup(&hash, &known)) || known || P.n >= CAP_PYSTACK_MAX)
		return id;   /* known, or its hash taken by another key: inline */
	memset(&r, 0, sizeof(r));
	r.type = TR_PYSTACK;
	r.u.pystack.id = (uint32_t)P.n + 1;
	r.u.pystack.nframes = n;
	r.u.pystack.frames = (struct tr_frame *)frames;
	start = cap_wq_mark(w);
	if (tw_record(w, &r) < 0)
		return 0;
	ckpt_carry(w, start, 1, 0, 0);
	ALLOC_GROW(P.ent, P.n + 1, P.alloc);
	s = &P.ent[P.n];
	s->key = xmalloc(P.key.len + 1);
	memcpy(s->key, P.key.buf, P.key.len);
	s->len = P.key.len;
	s->id = r.u.pystack.id;
	cap_map_put(&P.ids, hash, P.n, (uint64_t)P.key.len << 32 | s->id);   /* cap_pystack_find's */
	P.n++;
	return s->id;
}
