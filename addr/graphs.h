/*
 * graphs.h - CUDA graphs made by stream capture, as a trace records them
 * (format 1.1): the records flagged TR_F_CAPTURED between GRAPH_BEGIN and
 * GRAPH_END are a graph's nodes; GRAPH_EXEC names an instantiation of it;
 * GRAPH_LAUNCH runs the nodes in order.  Handles are only identifiers.
 *
 * Pure bookkeeping over records, shared by replay (which runs the nodes at
 * each GRAPH_LAUNCH) and shrink (which expands graph launches into plain
 * records before reducing, so a fault inside a graph can be sliced).
 */
#ifndef GPUREDUCE_GRAPHS_H
#define GPUREDUCE_GRAPHS_H

#include <stddef.h>
#include <stdint.h>

struct tr_rec;

struct gcap {
	uint64_t stream, graph;
	size_t *recs;            /* record indexes of the nodes, in order */
	size_t n, alloc;
	int open;
};

/* A handle -> graph index table (open addressing; key 0 is free: handles
 * are never 0 where they are looked up). */
struct gmap {
	uint64_t *key;
	size_t *val;
	size_t n, cap;
};

struct graphs {
	struct gcap *g;
	size_t n, alloc;
	struct gmap closed;      /* graph handle -> its latest closed capture */
	struct gmap bind;        /* exec handle -> the graph its latest GRAPH_EXEC named
				  * (an update may point it at any, an older one included) */
};
#define GRAPHS_INIT { NULL, 0, 0, { NULL, NULL, 0, 0 }, { NULL, NULL, 0, 0 } }

/* 1 if the record is a graph node (a copy, memset or launch recorded during
 * stream capture: it did not run then). */
int graphs_is_node(const struct tr_rec *r);
/* Feed records in file order: nodes (with their index) and the GRAPH_BEGIN/
 * END/EXEC records.  A node outside any recorded capture is dropped. */
void graphs_add_node(struct graphs *G, const struct tr_rec *r, size_t index);
void graphs_note(struct graphs *G, const struct tr_rec *r);
/* Both of the above in one: returns 1 when the record was a node or a
 * GRAPH_BEGIN/END/EXEC (consumed: it does not run by itself), 0 for a
 * GRAPH_LAUNCH and every other record. */
int graphs_feed(struct graphs *G, const struct tr_rec *r, size_t index);
/* The graph a GRAPH_LAUNCH's exec handle runs, or NULL. */
const struct gcap *graphs_find_exec(const struct graphs *G, uint64_t exec);
void graphs_release(struct graphs *G);

#endif
