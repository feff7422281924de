/*
 * graphs.c - graph bookkeeping over trace records (see graphs.h).
 */
#include <stdlib.h>
#include <string.h>

#include "../common/util.h"
#include "../trace/trace.h"
#include "graphs.h"

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
		}
	} else if (r->type == TR_GRAPH_EXEC) {
		/* the exec runs this graph from now on (an update may point it
		 * back at an older one): it leaves every other graph's list */
		for (size_t i = 0; i < G->n; i++)
			for (size_t k = 0; k < G->g[i].nexec;)
				if (G->g[i].execs[k] == x->exec)
					G->g[i].execs[k] = G->g[i].execs[--G->g[i].nexec];
				else
					k++;
		for (size_t i = G->n; i-- > 0;)
			if (!G->g[i].open && G->g[i].graph == x->graph) {
				ALLOC_GROW(G->g[i].execs, G->g[i].nexec + 1, G->g[i].aexec);
				G->g[i].execs[G->g[i].nexec++] = x->exec;
				break;
			}
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
	for (size_t i = G->n; i-- > 0;)
		for (size_t k = 0; k < G->g[i].nexec; k++)
			if (G->g[i].execs[k] == exec)
				return &G->g[i];
	return NULL;
}

void graphs_release(struct graphs *G)
{
	for (size_t i = 0; i < G->n; i++) {
		free(G->g[i].recs);
		free(G->g[i].execs);
	}
	free(G->g);
}

