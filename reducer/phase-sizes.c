/*
 * phase-sizes.c - buffer sizes (phase.h, --cut-buffers): the largest
 * buffers cut down to what their pointers and kept bytes need, or to 1/16
 * or 1/4 of their size, each cut kept only when compute-sanitizer still
 * sees the base state's site and no new kind of error.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/strbuf.h"
#include "../common/util.h"
#include "../addr/place.h"
#include "../addr/tensormap.h"
#include "cand.h"
#include "../diagnose/diagnose.h"
#include "oracle.h"
#include "phase.h"
#include "report.h"
#include "shrink-opts.h"

/* ---- buffer sizes ----------------------------------------------------------- */

/* Could buffer `ai` (a TR_ALLOC item) be cut to a smaller size, and to no
 * less than what: every pointer to it (launch parameters, pointer words in
 * kept bytes), and the chunks of bytes kept as captured.  0 when it cannot
 * be cut (a copy reads or writes it device-side, a 2D memset, a kind whose
 * size is not ours to choose). */
static int size_floor(const struct cand *c, size_t ai, uint64_t *floor)
{
	const struct tr_alloc *a = &c->it[ai].rec.u.alloc;
	uint64_t lo = 1, A = a->addr, Z = a->size;
	struct strbuf data = STRBUF_INIT, e = STRBUF_INIT;
	int ok = 1;

#define IN_BUF(v) ((v) >= A && (v) < A + Z)
	if (a->kind != TR_MEM_DEVICE && a->kind != TR_MEM_ASYNC && a->kind != TR_MEM_VMM)
		return 0;
	for (size_t i = 0; i < c->n && ok; i++) {
		const struct item *it = &c->it[i];
		const struct tr_rec *r = &it->rec;
		switch (r->type) {
		case TR_LAUNCH:
			for (uint32_t off = 0; off + 8 <= r->u.launch.argsize; off += 8) {
				uint64_t v;
				memcpy(&v, r->u.launch.args + off, 8);
				if (tr_launch_nonptr(&r->u.launch, off))
					continue;   /* an integer (format 1.7) */
				if (IN_BUF(v) && v - A + 1 > lo)
					lo = v - A + 1;
			}
			break;
		case TR_TENSORMAP: {
			/* a TMA map over the buffer uses all of it that its extent covers */
			uint64_t g = r->u.tmap.gaddr, ext = tmap_extent(&r->u.tmap), end;
			if (!IN_BUF(g))
				break;
			end = ext && ext < Z - (g - A) ? g - A + ext : Z;
			if (end > lo)
				lo = end;
			break;
		}
		case TR_MEMCPY_D2D:
			if (IN_BUF(r->u.copy.dst) || IN_BUF(r->u.copy.src))
				ok = 0;
			break;
		case TR_MEMCPY_D2H:
			if (IN_BUF(r->u.copy.src))
				ok = 0;
			break;
		case TR_MEMSET:
			if (IN_BUF(r->u.memset.dst) && r->u.memset.height > 1)
				ok = 0;
			break;
		case TR_MEMCPY_H2D: {
			int mine = IN_BUF(r->u.copy.dst);
			if (mine && it->data_mode == DATA_ORIG) {
				ok = 0;   /* bytes as captured: the data phase did not get to it */
				break;
			}
			if (mine && it->data_mode == DATA_KEEP && it->nkeep) {
				uint64_t end = r->u.copy.dst - A + it->keep[it->nkeep - 1].off +
					       it->keep[it->nkeep - 1].len;
				if (end > lo)
					lo = end;
			}
			/* pointers to this buffer among bytes kept anywhere */
			if (it->data_mode == DATA_ORIG || it->data_mode == DATA_KEEP) {
				sb_reset(&data);
				if (trace_blob_read(it->src, r->u.copy.blob, &data, 0, &e) < 0) {
					ok = 0;
					break;
				}
				for (size_t w = 0; w + 8 <= data.len; w += 8) {
					uint64_t v;
					int kept = it->data_mode == DATA_ORIG;
					for (size_t k = 0; k < it->nkeep && !kept; k++)
						kept = w >= it->keep[k].off && w < it->keep[k].off + it->keep[k].len;
					memcpy(&v, data.buf + w, 8);
					if (kept && IN_BUF(v) && v - A + 1 > lo)
						lo = v - A + 1;
				}
			}
			break;
		}
		default:
			break;
		}
	}
#undef IN_BUF
	sb_release(&data);
	sb_release(&e);
	*floor = (lo + 3) & ~(uint64_t)3;
	if (*floor > Z)
		*floor = Z;
	return ok && *floor < Z;
}

/* out = c with buffer `ai` cut to `size` bytes: copies and memsets into it
 * are clipped (bytes kept as captured become a kept range), those wholly
 * past the new end dropped. */
static void cut_buffer(const struct cand *c, size_t ai, uint64_t size, struct cand *out)
{
	uint64_t A = c->it[ai].rec.u.alloc.addr, Z = c->it[ai].rec.u.alloc.size;
	size_t j = 0;

	cand_copy(out, c);
	out->it[ai].rec.u.alloc.size = size;
	for (size_t i = 0; i < out->n; i++) {
		struct item *it = &out->it[i];
		struct tr_rec *r = &it->rec;
		int drop = 0;
		if (r->type == TR_MEMCPY_H2D && r->u.copy.dst >= A && r->u.copy.dst < A + Z) {
			uint64_t off = r->u.copy.dst - A;
			if (off >= size) {
				drop = 1;
			} else if (off + r->u.copy.size > size) {
				uint64_t len = size - off;
				if (it->data_mode == DATA_ORIG) {
					it->data_mode = DATA_KEEP;
					it->keep = xcalloc(1, sizeof(struct range));
					it->keep[0].off = 0;
					it->keep[0].len = len;
					it->nkeep = 1;
				} else if (it->data_mode == DATA_KEEP) {
					size_t n = 0;
					for (size_t k = 0; k < it->nkeep; k++) {
						struct range g = it->keep[k];
						if (g.off >= len)
							continue;
						if (g.off + g.len > len)
							g.len = len - g.off;
						it->keep[n++] = g;
					}
					it->nkeep = n;
				}
				r->u.copy.size = len;
			}
		} else if (r->type == TR_MEMSET && r->u.memset.dst >= A && r->u.memset.dst < A + Z) {
			uint64_t off = r->u.memset.dst - A, es = r->u.memset.elem_size ? r->u.memset.elem_size : 1;
			if (off >= size)
				drop = 1;
			else if (off + r->u.memset.width * es > size)
				r->u.memset.width = (size - off) / es;
			if (!r->u.memset.width)
				drop = 1;
		}
		if (drop) {
			free(it->keep);
			continue;
		}
		out->it[j++] = *it;
	}
	out->n = j;
}

/* Every distinct site among the reports of a sanitizer run's output
 * (diagnose_sites_all) for the trace at path; "" when none. */
static void all_sites(const char *output, const char *path, char *out, size_t n)
{
	struct trace t;
	struct strbuf e = STRBUF_INIT;
	out[0] = 0;
	if (output && trace_open(&t, path, TRACE_OPEN_STRICT, &e) == 0) {
		diagnose_sites_all(output, &t, out, n);
		trace_release(&t);
	}
	sb_release(&e);
}

/* 1 when every " | "-separated site of a is among those of b. */
static int sites_within(const char *a, const char *b)
{
	while (*a) {
		const char *end = strstr(a, " | ");
		size_t len = end ? (size_t)(end - a) : strlen(a);
		int hit = 0;
		for (const char *p = b; !hit && *p;) {
			const char *pe = strstr(p, " | ");
			size_t pl = pe ? (size_t)(pe - p) : strlen(p);
			hit = pl == len && !memcmp(p, a, len);
			p = pe ? pe + 3 : p + pl;
		}
		if (!hit)
			return 0;
		a = end ? end + 3 : a + len;
	}
	return 1;
}

/*
 * Cut buffers to smaller sizes that keep the fault.  A cut can turn a
 * read that was in bounds into a new overrun in the same kernel, which the
 * cheap signature cannot tell from the bug, so every cut that passes it is
 * also run under compute-sanitizer and kept only when it fails at the base
 * state's site (PC, access, and where the address lies) and reports no
 * kind of error the base state did not (among the first 64 reports, which
 * --cut-buffers asks compute-sanitizer for): the phase runs
 * only where compute-sanitizer is at hand.  For each of the largest
 * buffers, one batch tries the floor (what pointers and kept bytes need),
 * 1/16 and 1/4 of the size; the smallest good size of each buffer is
 * combined into one candidate.
 */
#define SIZES_MAX_BUFFERS 4
#define SIZES_PER_BUFFER 3

void phase_sizes(struct oracle *o, const struct shrink_opts *opts, struct cand *best)
{
	struct cand cs[SIZES_MAX_BUFFERS * SIZES_PER_BUFFER];
	size_t buf_of[SIZES_MAX_BUFFERS * SIZES_PER_BUFFER];
	uint64_t size_of[SIZES_MAX_BUFFERS * SIZES_PER_BUFFER];
	size_t ai[SIZES_MAX_BUFFERS], na = 0, nc = 0;
	uint64_t pick[SIZES_MAX_BUFFERS] = { 0 };
	int r[SIZES_MAX_BUFFERS * SIZES_PER_BUFFER];
	const char *ref;
	int changed = 0;
	size_t made = 0;
	uint64_t addr[SIZES_MAX_BUFFERS], floor_of[SIZES_MAX_BUFFERS];

	oracle_phase_begin(o, phase_name(PH_SIZES), best);
	if (oracle_guard(o) == GUARD_LAYOUT) {
		/* whole granules are mapped: a cut buffer's new overrun would not fault */
		oracle_phase_end(o, best, "skipped: the fault needs layout placement, where cuts go unseen");
		return;
	}
	if (!oracle_have_san(o)) {
		oracle_phase_end(o, best, "skipped: no compute-sanitizer to check that a cut keeps the site");
		return;
	}
	if (!(ref = oracle_base_site(o))) {
		oracle_phase_end(o, best, "skipped: compute-sanitizer saw no error in the base state");
		return;
	}
	/* the largest buffers that can be cut (at least 1 KiB), with their floors */
	for (size_t i = 0; i < best->n; i++) {
		uint64_t f;
		if (best->it[i].rec.type != TR_ALLOC || best->it[i].rec.u.alloc.size < 1024 ||
		    !size_floor(best, i, &f))
			continue;
		size_t k = na < SIZES_MAX_BUFFERS ? na++ : SIZES_MAX_BUFFERS;
		if (k == SIZES_MAX_BUFFERS) {
			/* replace the smallest kept one if this one is larger */
			size_t m = 0;
			for (size_t q = 1; q < na; q++)
				if (best->it[ai[q]].rec.u.alloc.size < best->it[ai[m]].rec.u.alloc.size)
					m = q;
			if (best->it[ai[m]].rec.u.alloc.size >= best->it[i].rec.u.alloc.size)
				continue;
			k = m;
		}
		ai[k] = i;
		floor_of[k] = f;
	}
	for (size_t b = 0; b < na; b++) {
		uint64_t z = best->it[ai[b]].rec.u.alloc.size, f = floor_of[b], v[SIZES_PER_BUFFER];
		int nv = 0;
		v[nv++] = f;
		if (((z / 16 + 15) & ~(uint64_t)15) > f)
			v[nv++] = (z / 16 + 15) & ~(uint64_t)15;
		if (((z / 4 + 15) & ~(uint64_t)15) > v[nv - 1] && z / 4 < z)
			v[nv++] = (z / 4 + 15) & ~(uint64_t)15;
		addr[b] = best->it[ai[b]].rec.u.alloc.addr;
		for (int t = 0; t < nv; t++) {
			cut_buffer(best, ai[b], v[t], &cs[nc]);
			buf_of[nc] = b;
			size_of[nc++] = v[t];
		}
	}
	made = nc;
	if (nc) {
		struct cand *ps[SIZES_MAX_BUFFERS * SIZES_PER_BUFFER];
		char *paths[SIZES_MAX_BUFFERS * SIZES_PER_BUFFER];
		char (*sites)[700] = xcalloc(nc, sizeof(*sites));
		size_t np = 0;
		for (size_t c = 0; c < nc; c++)
			ps[c] = &cs[c];
		if (oracle_test(o, ps, nc, r) < 0)
			nc = 0;
		/* the cheap survivors under compute-sanitizer, side by side */
		for (size_t c = 0; c < nc; c++) {
			struct strbuf p = STRBUF_INIT;
			if (!r[c])
				continue;
			sb_addf(&p, "%s/size-%zu.bin", opts->workdir, c);
			if (cand_write(&cs[c], p.buf, oracle_err(o)) < 0) {
				r[c] = 0;
				sb_release(&p);
				continue;
			}
			paths[np] = sb_detach(&p, NULL);
			buf_of[np] = buf_of[c];     /* compacted alongside */
			size_of[np] = size_of[c];
			np++;
		}
		char **outs = xcalloc(np + 1, sizeof(char *));
		char base_all[4096] = "";
		if (np)
			oracle_sanitize(o, paths, np, sites, outs, NULL);
		all_sites(oracle_base_output(o), oracle_base_bin(o), base_all, sizeof(base_all));
		for (size_t q = 0; q < np; q++) {
			char cut_all[4096] = "";
			const char *why;
			int good = !strcmp(sites[q], ref);
			all_sites(outs[q], paths[q], cut_all, sizeof(cut_all));
			if (!good) {
				why = sites[q][0] ? "the site MOVED" : "no sanitizer report";
			} else if (!sites_within(cut_all, base_all)) {
				why = "same first site, but NEW errors behind it";
				good = 0;
			} else {
				why = "same site";
			}
			oracle_log(o, "cut buffer #%zu to %llu bytes: %s%s%s", buf_of[q], (unsigned long long)size_of[q],
			     why, good ? "" : ": ", good ? "" : cut_all);
			if (!good)
				oracle_report(o)->slipped++;
			else if (!pick[buf_of[q]] || size_of[q] < pick[buf_of[q]])
				pick[buf_of[q]] = size_of[q];
			unlink(paths[q]);
			free(paths[q]);
			free(outs[q]);
		}
		free(outs);
		free(sites);
	}
	for (size_t c = 0; c < made; c++)
		cand_release(&cs[c]);
	{
		struct cand comb = CAND_INIT, tmp;
		int any = 0;
		cand_copy(&comb, best);
		for (size_t b = 0; b < na; b++) {
			size_t at = (size_t)-1;
			if (!pick[b])
				continue;
			/* cuts drop records: find the buffer again by its address */
			for (size_t i = 0; i < comb.n && at == (size_t)-1; i++)
				if (comb.it[i].rec.type == TR_ALLOC && comb.it[i].rec.u.alloc.addr == addr[b])
					at = i;
			if (at == (size_t)-1)
				continue;
			cut_buffer(&comb, at, pick[b], &tmp);
			cand_release(&comb);
			comb = tmp;
			any++;
		}
		if (any && !oracle_failed(o) && oracle_test_one(o, &comb) == 1) {
			cand_release(best);
			*best = comb;
			changed = 1;
		} else {
			cand_release(&comb);
		}
	}
	oracle_phase_end(o, best, changed ? "buffers cut" : "sizes kept");
}

