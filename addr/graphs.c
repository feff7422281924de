/*
 * graphs.c - graph bookkeeping over trace records (see graphs.h).
 */
#include <stdlib.h>
#include <string.h>

#include "../common/util.h"
#include "../trace/trace.h"
#include "graphs.h"

/* ---- handle -> index ---- */

static size_t gmap_slot(const struct gmap *m, uint64_t key)
{
	size_t i = (size_t)((key * 0x9E3779B97F4A7C15ull) >> 20) & (m->cap - 1);
	while (m->key[i] && m->key[i] != key)
		i = (i + 1) & (m->cap - 1);
	return i;
}

static void gmap_put(struct gmap *m, uint64_t key, size_t val)
{
	size_t i;
	if (!key)
		return;
	if ((m->n + 1) * 2 > m->cap) {
		struct gmap old = *m;
		m->cap = old.cap ? old.cap * 2 : 16;
		m->key = xcalloc(m->cap, sizeof(*m->key));
		m->val = xcalloc(m->cap, sizeof(*m->val));
		m->n = 0;
		for (size_t k = 0; k < old.cap; k++)
			if (old.key[k])
				gmap_put(m, old.key[k], old.val[k]);
		free(old.key);
		free(old.val);
	}
	i = gmap_slot(m, key);
	if (!m->key[i]) {
		m->key[i] = key;
		m->n++;
	}
	m->val[i] = val;
}

/* 1 and *val when key is in m. */
static int gmap_get(const struct gmap *m, uint64_t key, size_t *val)
{
	size_t i;
	if (!key || !m->cap)
		return 0;
	i = gmap_slot(m, key);
	if (!m->key[i])
		return 0;
	*val = m->val[i];
	return 1;
}

int graphs_is_node(const struct tr_rec *r)
{
	switch (r->type) {
	case TR_LAUNCH: return (r->u.launch.flags & TR_F_CAPTURED) != 0;
	case TR_MEMSET: return (r->u.memset.flags & TR_F_CAPTURED) != 0;
	case TR_MEMCPY_H2D: case TR_MEMCPY_D2D: case TR_MEMCPY_D2H:
		return (r->u.copy.flags & TR_F_CAPTURED) != 0;
	default: return 0;
	}
}

static uint64_t node_stream(const struct tr_rec *r)
{
	return r->type == TR_LAUNCH ? r->u.launch.stream :
	       r->type == TR_MEMSET ? r->u.memset.stream : r->u.copy.stream;
}

/* The open capture on this stream, else the latest open one. */
static struct gcap *graphs_open(struct graphs *G, uint64_t stream)
{
	struct gcap *latest = NULL;
	for (size_t i = G->n; i-- > 0;) {
		if (!G->g[i].open)
			continue;
		if (G->g[i].stream == stream)
			return &G->g[i];
		if (!latest)
			latest = &G->g[i];
	}
	return latest;
}

void graphs_add_node(struct graphs *G, const struct tr_rec *r, size_t i)
{
	struct gcap *g = graphs_open(G, node_stream(r));
	if (!g)
		return;   /* captured outside any recorded capture: cannot place it */
	ALLOC_GROW(g->recs, g->n + 1, g->alloc);
	g->recs[g->n++] = i;
}

void graphs_note(struct graphs *G, const struct tr_rec *r)
{
	const struct tr_graph *x = &r->u.graph;
	if (r->type == TR_GRAPH_BEGIN) {
		ALLOC_GROW(G->g, G->n + 1, G->alloc);
		memset(&G->g[G->n], 0, sizeof(G->g[G->n]));
		G->g[G->n].stream = x->stream;
		G->g[G->n].open = 1;
		G->n++;
	} else if (r->type == TR_GRAPH_END) {
		struct gcap *g = graphs_open(G, x->stream);
		if (g) {
			g->open = 0;
			g->graph = x->graph;
			gmap_put(&G->closed, x->graph, (size_t)(g - G->g));
		}
	} else if (r->type == TR_GRAPH_EXEC) {
		/* the latest closed capture with that handle (a handle may be
		 * reused after cuGraphDestroy); the exec runs it from now on */
		size_t i;
		if (gmap_get(&G->closed, x->graph, &i))
			gmap_put(&G->bind, x->exec, i);
	}
}

int graphs_feed(struct graphs *G, const struct tr_rec *r, size_t index)
{
	if (graphs_is_node(r)) {
		graphs_add_node(G, r, index);
		return 1;
	}
	if (r->type == TR_GRAPH_BEGIN || r->type == TR_GRAPH_END || r->type == TR_GRAPH_EXEC) {
		graphs_note(G, r);
		return 1;
	}
	return 0;
}

const struct gcap *graphs_find_exec(const struct graphs *G, uint64_t exec)
{
	size_t i;
	return gmap_get(&G->bind, exec, &i) ? &G->g[i] : NULL;
}

void graphs_release(struct graphs *G)
{
	for (size_t i = 0; i < G->n; i++)
		free(G->g[i].recs);
	free(G->g);
	free(G->closed.key);
	free(G->closed.val);
	free(G->bind.key);
	free(G->bind.val);
}

