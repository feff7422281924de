/*
 * graphapi.c - CUDA graphs built with the explicit graph API
 * (cuGraphCreate + cuGraphAddKernelNode / MemcpyNode / MemsetNode +
 * dependencies), as XLA, TensorRT and hand-written graph code make them
 * (see capture.h).
 *
 * Their nodes never pass through a launch or copy callback, so at
 * instantiation the graph is walked (cuGraphGetNodes, cuGraphGetEdges,
 * cuGraph*NodeGetParams) and written exactly as a stream-captured graph
 * is: GRAPH_BEGIN, the nodes in a dependency order as records flagged
 * TR_F_CAPTURED on a stream named after the graph, GRAPH_END; then
 * GRAPH_EXEC.  Replay, shrink's graph expansion and slicing need no
 * change.  Graphs made by stream capture need no walk: their nodes were
 * recorded as launches and copies flagged captured, between the GRAPH_BEGIN
 * and GRAPH_END this file writes when the capture begins and ends.
 *
 * An instantiated graph may change later (cuGraphExecKernelNodeSetParams,
 * cuGraphExecNodeSetParams on a kernel node, cuGraphExecUpdate with
 * another graph of the same shape, as XLA's command buffers and "update
 * instead of instantiating again" loops do): each exec's nodes are kept
 * here, and an update writes them all again as a new graph (a synthetic
 * handle) with a GRAPH_EXEC that points the exec at it, so the launches
 * after the update run the new parameters.  An update with a graph made
 * by stream capture only points the exec at that graph's records.  Host-to-device memcpy nodes
 * carry the host bytes as they were at instantiation (or update), not at
 * launch.  A child graph node's graph is walked in its place; event record
 * and wait nodes, like empty ones, only order the others.  Other node
 * types (host, conditional, memory, 2D/3D copies) are not recorded (a note
 * says so).  State is under inject.c's lock.
 *
 * inject.c's dispatch calls cap_graph_exit at the exit of every graph call
 * that succeeded (graphapi.h); the records go through inject.c's writer
 * (cap_graph_mark, cap_emit_graph and the node emitters in capture.h).
 */
#include <cuda.h>
#include <cupti.h>

#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "../common/util.h"
#include "capture.h"
#include "graphapi.h"

#define CB(name) CUPTI_DRIVER_TRACE_CBID_##name

/* A kernel node's launch as the graph API gives it. */
struct cap_knode {
	void *f;                 /* CUfunction (or CUkernel when func was NULL) */
	struct tr_dim3 grid, block;
	uint32_t shmem;
	void **kp, **extra;
};
#define CAP_KNODE_FROM(k, p) do { \
	(k)->f = (void *)(p)->func; \
	(k)->grid = (struct tr_dim3){ (p)->gridDimX, (p)->gridDimY, (p)->gridDimZ }; \
	(k)->block = (struct tr_dim3){ (p)->blockDimX, (p)->blockDimY, (p)->blockDimZ }; \
	(k)->shmem = (p)->sharedMemBytes; \
	(k)->kp = (p)->kernelParams; \
	(k)->extra = (p)->extra; \
} while (0)

struct gnode {
	CUgraphNode h;
	CUgraphNodeType type;
	struct cap_knode k;      /* kernel: kp/extra unused after args are built */
	uint8_t *args;
	uint32_t argsize;
	CUDA_MEMSET_NODE_PARAMS ms;
	uint32_t ctype;          /* memcpy: TR_MEMCPY_H2D/D2D/D2H */
	uint64_t dst, src, size;
};

struct gexec {
	uint64_t exec;
	struct gnode *n;
	size_t nn;
};

static struct {
	struct gexec *x;
	size_t n, alloc;
	struct cap_map stream_graphs;   /* CUgraph from stream capture -> 1 */
	uint64_t synth;                 /* graphs written for exec updates */
} G;

#define SYNTH_GRAPH 0xff00000000000000ull   /* no CUgraph has these handles */

static void gx_stream_graph(uint64_t graph)
{
	if (graph)
		cap_map_put(&G.stream_graphs, graph, 1, 0);
}

static void gx_graph_destroyed(uint64_t graph)
{
	cap_map_del(&G.stream_graphs, graph, NULL, NULL);
}

static void gexec_free(struct gexec *x)
{
	for (size_t i = 0; i < x->nn; i++)
		free(x->n[i].args);
	free(x->n);
	x->n = NULL;
	x->nn = 0;
}

/* Host, device or (unified) whichever the driver says the pointer is. */
static int side_is_dev(CUmemorytype t, uint64_t p)
{
	if (t == CU_MEMORYTYPE_DEVICE)
		return 1;
	if (t == CU_MEMORYTYPE_HOST)
		return 0;
	return t == CU_MEMORYTYPE_UNIFIED ? cap_is_device_ptr(p) : -1;
}

static int read_memcpy(struct gnode *g)
{
	CUDA_MEMCPY3D c;
	uint64_t src, dst;
	int sd, dd;

	memset(&c, 0, sizeof(c));
	if (cuGraphMemcpyNodeGetParams(g->h, &c) != CUDA_SUCCESS)
		return -1;
	if (c.Height > 1 || c.Depth > 1 || c.srcY || c.srcZ || c.dstY || c.dstZ)
		return -1;   /* 2D/3D copy nodes: not followed */
	src = (c.srcMemoryType == CU_MEMORYTYPE_HOST ? (uint64_t)(uintptr_t)c.srcHost : c.srcDevice) +
	      c.srcXInBytes;
	dst = (c.dstMemoryType == CU_MEMORYTYPE_HOST ? (uint64_t)(uintptr_t)c.dstHost : c.dstDevice) +
	      c.dstXInBytes;
	sd = side_is_dev(c.srcMemoryType, src);
	dd = side_is_dev(c.dstMemoryType, dst);
	if (sd < 0 || dd < 0 || (!sd && !dd))
		return -1;
	g->ctype = sd && dd ? TR_MEMCPY_D2D : dd ? TR_MEMCPY_H2D : TR_MEMCPY_D2H;
	g->src = src;
	g->dst = dst;
	g->size = c.WidthInBytes;
	return 0;
}

static void set_kernel(struct gnode *g, const struct cap_knode *k)
{
	free(g->args);
	g->k = *k;
	g->args = cap_kernel_args(k->f, k->kp, k->extra, &g->argsize);
	g->k.kp = g->k.extra = NULL;
}

/* One node's parameters (g->h and g->type set); -1 when its type is not
 * recorded. */
static int read_node(struct gnode *g)
{
	switch (g->type) {
	case CU_GRAPH_NODE_TYPE_KERNEL: {
		CUDA_KERNEL_NODE_PARAMS p;
		struct cap_knode k;
		memset(&p, 0, sizeof(p));
		if (cuGraphKernelNodeGetParams(g->h, &p) != CUDA_SUCCESS)
			return -1;
		CAP_KNODE_FROM(&k, &p);
		if (!k.f)
			k.f = (void *)p.kern;
		set_kernel(g, &k);
		return 0;
	}
	case CU_GRAPH_NODE_TYPE_MEMSET:
		return cuGraphMemsetNodeGetParams(g->h, &g->ms) == CUDA_SUCCESS ? 0 : -1;
	case CU_GRAPH_NODE_TYPE_MEMCPY:
		return read_memcpy(g);
	case CU_GRAPH_NODE_TYPE_EMPTY:
	case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
	case CU_GRAPH_NODE_TYPE_WAIT_EVENT:
		return 0;   /* order only: the dependency order stands for them */
	default:
		return -1;
	}
}

static ssize_t node_index(CUgraphNode *nodes, size_t n, CUgraphNode h)
{
	for (size_t i = 0; i < n; i++)
		if (nodes[i] == h)
			return (ssize_t)i;
	return -1;
}

/* The nodes of graph in a dependency order (Kahn; among ready nodes the
 * driver's order), or NULL.  *n gets the count. */
static CUgraphNode *sorted_nodes(CUgraph graph, size_t *n)
{
	CUgraphNode *nodes = NULL, *from = NULL, *to = NULL, *order = NULL;
	CUgraphEdgeData *ed = NULL;
	size_t nn = 0, ne = 0, done = 0;
	unsigned *indeg = NULL;
	uint8_t *used = NULL;

	if (cuGraphGetNodes(graph, NULL, &nn) != CUDA_SUCCESS || !nn)
		return NULL;
	nodes = xcalloc(nn, sizeof(*nodes));
	if (cuGraphGetNodes(graph, nodes, &nn) != CUDA_SUCCESS ||
	    cuGraphGetEdges(graph, NULL, NULL, NULL, &ne) != CUDA_SUCCESS)
		goto cleanup;
	from = xcalloc(ne + 1, sizeof(*from));
	to = xcalloc(ne + 1, sizeof(*to));
	ed = xcalloc(ne + 1, sizeof(*ed));
	if (ne && cuGraphGetEdges(graph, from, to, ed, &ne) != CUDA_SUCCESS)
		goto cleanup;
	indeg = xcalloc(nn, sizeof(*indeg));
	used = xcalloc(nn, 1);
	for (size_t e = 0; e < ne; e++) {
		ssize_t t = node_index(nodes, nn, to[e]);
		if (t >= 0)
			indeg[t]++;
	}
	order = xcalloc(nn, sizeof(*order));
	while (done < nn) {
		size_t i = 0;
		while (i < nn && (used[i] || indeg[i]))
			i++;
		if (i == nn)
			break;   /* a cycle: cannot happen in a valid graph */
		used[i] = 1;
		order[done++] = nodes[i];
		for (size_t e = 0; e < ne; e++) {
			ssize_t t = from[e] == nodes[i] ? node_index(nodes, nn, to[e]) : -1;
			if (t >= 0 && indeg[t])
				indeg[t]--;
		}
	}
	if (done < nn) {
		free(order);
		order = NULL;
	}
	*n = nn;
cleanup:
	free(nodes);
	free(from);
	free(to);
	free(ed);
	free(indeg);
	free(used);
	return order;
}

/* GRAPH_BEGIN, the nodes, GRAPH_END for graph id `gid` (also the stream). */
static void write_graph(const struct gexec *x, uint64_t gid)
{
	cap_emit_graph(TR_GRAPH_BEGIN, gid, 0, 0);
	for (size_t i = 0; i < x->nn; i++) {
		const struct gnode *g = &x->n[i];
		switch (g->type) {
		case CU_GRAPH_NODE_TYPE_KERNEL:
			cap_emit_node_launch(g->k.f, g->k.grid, g->k.block, g->k.shmem, g->args,
					     g->argsize, gid);
			break;
		case CU_GRAPH_NODE_TYPE_MEMSET:
			cap_emit_node_memset(&g->ms, gid);
			break;
		case CU_GRAPH_NODE_TYPE_MEMCPY:
			if (g->ctype == TR_MEMCPY_H2D &&
			    cap_host_readable((const void *)(uintptr_t)g->src, g->size) == 0) {
				cap_note("graph memcpy node: host source 0x%llx (%llu bytes) is not readable; "
					 "copy not recorded", (unsigned long long)g->src,
					 (unsigned long long)g->size);
				break;
			}
			cap_emit_node_copy(g->ctype, g->dst, g->src, g->size, gid);
			break;
		default:
			break;
		}
	}
	cap_emit_graph(TR_GRAPH_END, gid, gid, 0);
}

static struct gexec *find_exec(uint64_t exec)
{
	for (size_t i = 0; i < G.n; i++)
		if (G.x[i].exec == exec)
			return &G.x[i];
	return NULL;
}

enum { CHILD_DEPTH = 8 };   /* child graphs inside child graphs, at most */

struct walk {
	struct gnode *n;
	size_t nn, alloc;
	size_t total, skipped;   /* nodes seen, nodes of a kind not recorded */
};

/* Append graph's nodes in a dependency order to w; a child graph node's
 * graph is walked in its place (its nodes run where it runs).  -1 when
 * graph's own nodes could not be read. */
static int walk_into(struct walk *w, CUgraph graph, int depth)
{
	CUgraphNode *order;
	size_t n = 0;

	if (!(order = sorted_nodes(graph, &n)))
		return -1;
	for (size_t i = 0; i < n; i++) {
		struct gnode *g;
		CUgraphNodeType type = CU_GRAPH_NODE_TYPE_EMPTY;
		CUgraph child = NULL;
		int typed = cuGraphNodeGetType(order[i], &type) == CUDA_SUCCESS;

		if (typed && type == CU_GRAPH_NODE_TYPE_GRAPH && depth < CHILD_DEPTH &&
		    cuGraphChildGraphNodeGetGraph(order[i], &child) == CUDA_SUCCESS && child &&
		    walk_into(w, child, depth + 1) == 0)
			continue;
		w->total++;
		ALLOC_GROW(w->n, w->nn + 1, w->alloc);
		g = &w->n[w->nn];
		memset(g, 0, sizeof(*g));
		g->h = order[i];
		g->type = type;
		if (!typed || read_node(g) < 0) {
			free(g->args);
			memset(g, 0, sizeof(*g));
			w->skipped++;
			continue;
		}
		w->nn++;
	}
	free(order);
	return 0;
}

/* Walk graph's nodes (child graphs' included) into a fresh node list
 * (*nodes, *nn); -1 when they could not be read.  `when` names the moment
 * for the notes. */
static int walk_graph(uint64_t graph, struct gnode **nodes, size_t *nn, const char *when)
{
	struct walk w = { 0 };

	*nodes = NULL;
	*nn = 0;
	if (walk_into(&w, (CUgraph)(uintptr_t)graph, 0) < 0) {
		for (size_t i = 0; i < w.nn; i++)
			free(w.n[i].args);
		free(w.n);
		cap_note("graph 0x%llx: its nodes could not be read at %s; its launches are "
			 "not replayed", (unsigned long long)graph, when);
		return -1;
	}
	if (w.skipped)
		cap_note("graph 0x%llx: %zu of its %zu nodes are of a kind not recorded (host, "
			 "conditional, memory, 2D/3D or array copy...): replay skips them",
			 (unsigned long long)graph, w.skipped, w.total);
	*nodes = w.n;
	*nn = w.nn;
	return 0;
}

static struct gexec *exec_slot(uint64_t exec)
{
	struct gexec *x = find_exec(exec);
	if (!x) {
		ALLOC_GROW(G.x, G.n + 1, G.alloc);
		x = &G.x[G.n++];
		memset(x, 0, sizeof(*x));
		x->exec = exec;
	}
	return x;
}

static void forget_exec(uint64_t exec)
{
	struct gexec *x = find_exec(exec);
	if (!x)
		return;
	gexec_free(x);
	*x = G.x[--G.n];
}

static void gx_instantiate(uint64_t graph, uint64_t exec)
{
	struct gexec *x;
	struct gnode *nodes;
	size_t nn;

	if (!graph || !exec)
		return;
	if (cap_map_get(&G.stream_graphs, graph)) {
		forget_exec(exec);   /* a handle made again: the old exec's nodes are gone */
		return;
	}
	if (walk_graph(graph, &nodes, &nn, "instantiation") < 0)
		return;
	x = exec_slot(exec);
	gexec_free(x);
	x->n = nodes;
	x->nn = nn;
	write_graph(x, graph);
}

static int gx_exec_update(uint64_t graph, uint64_t exec)
{
	struct gexec *x;
	struct gnode *nodes;
	size_t nn;
	uint64_t gid;

	if (!graph || !exec)
		return -1;
	if (cap_map_get(&G.stream_graphs, graph)) {
		/* its nodes are the captured records: point the exec at them */
		forget_exec(exec);
		cap_emit_graph(TR_GRAPH_EXEC, 0, graph, exec);
		return 0;
	}
	if (walk_graph(graph, &nodes, &nn, "cuGraphExecUpdate") < 0)
		return -1;
	x = exec_slot(exec);
	/* later node updates name the nodes of the graph the exec was
	 * instantiated from: the same topology, so the same places */
	if (x->nn == nn) {
		size_t i = 0;
		while (i < nn && x->n[i].type == nodes[i].type)
			i++;
		if (i == nn)
			for (i = 0; i < nn; i++)
				nodes[i].h = x->n[i].h;
	}
	gexec_free(x);
	x->n = nodes;
	x->nn = nn;
	gid = SYNTH_GRAPH | ++G.synth;
	write_graph(x, gid);
	cap_emit_graph(TR_GRAPH_EXEC, 0, gid, exec);
	return 0;
}

static void gx_kernel_update(uint64_t exec, void *node, const struct cap_knode *k)
{
	struct gexec *x = find_exec(exec);
	uint64_t gid;

	if (!x)
		return;   /* a stream-captured graph's exec: not followed */
	for (size_t i = 0; i < x->nn; i++) {
		if (x->n[i].h != (CUgraphNode)node || x->n[i].type != CU_GRAPH_NODE_TYPE_KERNEL)
			continue;
		set_kernel(&x->n[i], k);
		gid = SYNTH_GRAPH | ++G.synth;
		write_graph(x, gid);
		cap_emit_graph(TR_GRAPH_EXEC, 0, gid, exec);
		return;
	}
}

/* ---- the graph calls, at their exit (inject.c's dispatch) ---- */

/* An instantiated graph not made by stream capture: its nodes, walked now
 * (gx_instantiate), written ahead of the GRAPH_EXEC record. */
static void rec_explicit_graph(CUgraph graph, const CUgraphExec *exec)
{
	if (!exec || !cap_lock_rec())
		return;
	cap_graph_seen();   /* its nodes cannot be carried across segments either */
	gx_instantiate((uint64_t)(uintptr_t)graph, (uint64_t)(uintptr_t)*exec);
	cap_unlock();
}

/* A graph was instantiated as *exec: an explicit graph's nodes, then
 * GRAPH_EXEC (every form of cuGraphInstantiate). */
static void rec_instantiate(CUgraph graph, const CUgraphExec *exec)
{
	rec_explicit_graph(graph, exec);
	if (exec)
		cap_graph_mark(TR_GRAPH_EXEC, NULL, (uint64_t)(uintptr_t)graph, (uint64_t)(uintptr_t)*exec);
}

/* A node of an instantiated explicit graph got new parameters. */
static void rec_exec_update(CUpti_CallbackId cbid, const void *p)
{
	struct cap_knode k;
	uint64_t exec;
	void *node;

	memset(&k, 0, sizeof(k));
	switch (cbid) {
	case CB(cuGraphExecKernelNodeSetParams): {
		const cuGraphExecKernelNodeSetParams_params *q = p;
		if (!q->nodeParams)
			return;
		exec = (uint64_t)(uintptr_t)q->hGraphExec;
		node = q->hNode;
		CAP_KNODE_FROM(&k, q->nodeParams);
		break;
	}
	case CB(cuGraphExecKernelNodeSetParams_v2): {
		const cuGraphExecKernelNodeSetParams_v2_params *q = p;
		if (!q->nodeParams)
			return;
		exec = (uint64_t)(uintptr_t)q->hGraphExec;
		node = q->hNode;
		CAP_KNODE_FROM(&k, q->nodeParams);
		if (!k.f)
			k.f = (void *)q->nodeParams->kern;
		break;
	}
	case CB(cuGraphExecNodeSetParams): {
		const cuGraphExecNodeSetParams_params *q = p;
		if (!q->nodeParams || q->nodeParams->type != CU_GRAPH_NODE_TYPE_KERNEL)
			return;
		exec = (uint64_t)(uintptr_t)q->hGraphExec;
		node = q->hNode;
		CAP_KNODE_FROM(&k, &q->nodeParams->kernel);
		if (!k.f)
			k.f = (void *)q->nodeParams->kernel.kern;
		break;
	}
	default:
		return;
	}
	if (!cap_lock_rec())
		return;
	gx_kernel_update(exec, node, &k);
	cap_unlock();
}

/* On a successful exit of the capture and instantiate calls. */
void cap_graph_exit(CUpti_CallbackId cbid, const void *p)
{
	switch (cbid) {
	case CB(cuStreamBeginCapture): case CB(cuStreamBeginCapture_ptsz):
		cap_graph_mark(TR_GRAPH_BEGIN, cap_eff_stream(((const cuStreamBeginCapture_params *)p)->hStream,
			  cbid != CB(cuStreamBeginCapture)), 0, 0);
		break;
	case CB(cuStreamBeginCapture_v2): case CB(cuStreamBeginCapture_v2_ptsz):
		cap_graph_mark(TR_GRAPH_BEGIN, cap_eff_stream(((const cuStreamBeginCapture_v2_params *)p)->hStream,
			  cbid != CB(cuStreamBeginCapture_v2)), 0, 0);
		break;
	case CB(cuStreamBeginCaptureToGraph): case CB(cuStreamBeginCaptureToGraph_ptsz):
		cap_graph_mark(TR_GRAPH_BEGIN, cap_eff_stream(((const cuStreamBeginCaptureToGraph_params *)p)->hStream,
			  cbid != CB(cuStreamBeginCaptureToGraph)), 0, 0);
		break;
	case CB(cuStreamEndCapture): case CB(cuStreamEndCapture_ptsz): {
		const cuStreamEndCapture_params *q = p;
		cap_graph_mark(TR_GRAPH_END, cap_eff_stream(q->hStream, cbid != CB(cuStreamEndCapture)),
			  q->phGraph ? (uint64_t)(uintptr_t)*q->phGraph : 0, 0);
		if (q->phGraph && cap_lock_rec()) {
			gx_stream_graph((uint64_t)(uintptr_t)*q->phGraph);
			cap_unlock();
		}
		break;
	}
	case CB(cuGraphInstantiate): case CB(cuGraphInstantiate_v2): {
		const cuGraphInstantiate_params *q = p;
		rec_instantiate(q->hGraph, q->phGraphExec);
		break;
	}
	case CB(cuGraphInstantiateWithFlags): {
		const cuGraphInstantiateWithFlags_params *q = p;
		rec_instantiate(q->hGraph, q->phGraphExec);
		break;
	}
	case CB(cuGraphInstantiateWithParams): case CB(cuGraphInstantiateWithParams_ptsz): {
		const cuGraphInstantiateWithParams_params *q = p;
		rec_instantiate(q->hGraph, q->phGraphExec);
		break;
	}
	case CB(cuGraphExecKernelNodeSetParams): case CB(cuGraphExecKernelNodeSetParams_v2):
	case CB(cuGraphExecNodeSetParams):
		rec_exec_update(cbid, p);
		break;
	case CB(cuGraphDestroy):
		if (cap_lock_rec()) {   /* its handle may come back as another graph */
			gx_graph_destroyed((uint64_t)(uintptr_t)((const cuGraphDestroy_params *)p)->hGraph);
			cap_unlock();
		}
		break;
	case CB(cuGraphExecUpdate): case CB(cuGraphExecUpdate_v2): {
		/* both forms start with the exec and the graph */
		const cuGraphExecUpdate_v2_params *q = p;
		if (!cap_lock_rec())
			break;
		cap_graph_seen();
		gx_exec_update((uint64_t)(uintptr_t)q->hGraph, (uint64_t)(uintptr_t)q->hGraphExec);
		cap_unlock();
		break;
	}
	case CB(cuGraphExecMemsetNodeSetParams): case CB(cuGraphExecMemcpyNodeSetParams):
		cap_note_once(cbid, "%s: a graph exec changed in a way the trace does not follow; replay "
			  "runs the graph as instantiated",
			  cbid == CB(cuGraphExecMemsetNodeSetParams) ? "cuGraphExecMemsetNodeSetParams" :
			  "cuGraphExecMemcpyNodeSetParams");
		break;
	default:
		break;
	}
}
