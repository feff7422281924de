// graph.cu - sample for gpureduce: a fault inside a CUDA graph launch.
//
// The seed scenario: an inference server captures its per-step work once into
// a CUDA graph (as torch.cuda.graphs and serving engines do) and replays it
// every step.  A graph reads its inputs from fixed ("static") device buffers,
// so before each replay the host copies the new batch of token ids into the
// static `ids` buffer with a plain cudaMemcpy, outside the graph.
//
// The graph (captured on a non-blocking stream): a memset node that zeroes
// the per-request scores, then three kernels:
//   normalize    elementwise, rescales the per-request running state;
//   lookup       an embedding gather WITHOUT a bounds check on the id:
//                state[i, d] = 0.5 * state[i, d] + table[ids[i] * DIM + d];
//   reduce_rows  sums each request's state row into its score (atomicAdd,
//                hence the memset node).
//
// The bug is on the host.  Words become table rows through a word -> row
// cache.  A miss was made "fast": it writes the marker ID_PENDING (1 << 30)
// and queues the word for the slow vocabulary lookup, which is meant to patch
// the batch before it is copied in -- but the slow path runs after the step.
// The warm cache covers all traffic until step 12, where one request brings a
// new word: ID_PENDING goes into the static input buffer, and the 13th replay
// of the graph has `lookup` read table + 2^30 * 64 * 4 bytes, i.e. 256 GiB
// past the table: a certain fault on the GPU (small overruns of a cudaMalloc
// block often do not fault).
//
// Why it is here: the faulting launch is not a kernel launch of the program
// but a captured node of a graph, run at the 13th cudaGraphLaunch; the trace
// has it as a "captured" kernel replayed at each GRAPH_LAUNCH.  The bad data
// comes from a plain cudaMemcpy outside the graph just before that launch.
//
// CUDA_LAUNCH_BLOCKING=1 safe (gpureduce sets it): nothing synchronizes or
// allocates while the stream is capturing, and the host batch is in pinned
// memory, so the plain cudaMemcpy has finished when it returns (from pageable
// memory it may return before the DMA is done, and the non-blocking stream
// does not wait for the legacy default stream).
//
// Build: nvcc -O2 -arch=sm_90 -o graph graph.cu
// Exit: 1 on the first CUDA error (expected), 0 if it ran clean.
// CUDA_GRAPH_CLEAN=1: a cache miss is resolved through the slow path before
// the batch is copied in, so no ID_PENDING reaches the graph: exits 0.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#define CHECK(what, call) do { \
	cudaError_t e_ = (call); \
	if (e_ != cudaSuccess) { \
		fprintf(stderr, "graph: %s failed: %s (%s)\n", what, \
			cudaGetErrorString(e_), cudaGetErrorName(e_)); \
		exit(1); \
	} } while (0)

enum {
	VOCAB = 50000,       // table rows
	DIM = 64,            // floats per row
	BATCH = 64,          // requests per step
	NWORDS = 4096,       // words the traffic uses
	STEPS = 20,
	BAD_STEP = 12,       // the step whose batch has the new word
	BAD_REQ = 37,        // ... in this request
};
#define ID_PENDING (1 << 30)   // cache-miss marker: "row not known yet"

// state = (state - mean) * inv_std, elementwise
__global__ void normalize(float *state, int n, float mean, float inv_std)
{
	int k = blockIdx.x * blockDim.x + threadIdx.x;
	if (k < n)
		state[k] = (state[k] - mean) * inv_std;
}

// state[i, :] = 0.5 * state[i, :] + table[ids[i], :] -- no check that ids[i] < rows.
__global__ void lookup(float *state, const float *table, const int *ids, int batch)
{
	int i = blockIdx.x;
	int d = threadIdx.x;
	if (i >= batch || d >= DIM)
		return;
	size_t row = (size_t)ids[i];   // BUG: never checked against VOCAB
	state[(size_t)i * DIM + d] = 0.5f * state[(size_t)i * DIM + d] + table[row * DIM + d];
}

// scores[i] += sum over d of state[i, d]
__global__ void reduce_rows(float *scores, const float *state, int batch)
{
	int i = blockIdx.x;
	int d = threadIdx.x;
	if (i < batch && d < DIM)
		atomicAdd(&scores[i], state[(size_t)i * DIM + d]);
}

// ---- the host side: words -> rows ------------------------------------------
static int cache[NWORDS];         // word -> row, -1 = not cached

static int vocab_row(int word)    // the slow path (a vocabulary service)
{
	return (int)(((unsigned)word * 2654435761u) % VOCAB);
}

// The words of request i at this step; step 12 brings a word that the
// warm-up traffic never had.
static int word_of(int step, int i)
{
	if (step == BAD_STEP && i == BAD_REQ)
		return NWORDS - 1;
	return (step * 977 + i * 131) % (NWORDS - 1);
}

// Fill the batch from the cache; a miss gets ID_PENDING and is queued.
static int resolve_batch(int step, int *ids, int *missed)
{
	int nmiss = 0;

	for (int i = 0; i < BATCH; i++) {
		int w = word_of(step, i);
		if (cache[w] >= 0) {
			ids[i] = cache[w];
		} else {
			ids[i] = ID_PENDING;
			missed[nmiss++] = w;
		}
	}
	return nmiss;
}

// CUDA_GRAPH_CLEAN=1 runs the same program with its bug fixed
// (misses resolved before the copy): the clean variant, which must run
// and hunt clean (issue 28, tests/gpu/hunt-clean.sh).
static int clean_variant(void)
{
	const char *v = getenv("CUDA_GRAPH_CLEAN");
	return v && strcmp(v, "1") == 0;
}

int main(void)
{
	float *table, *state, *scores;
	int *ids, *h_ids;
	int missed[BATCH];
	static float h_scores[BATCH];
	const size_t table_bytes = (size_t)VOCAB * DIM * sizeof(float);
	float *h_table = (float *)malloc(table_bytes);
	cudaStream_t s;
	cudaGraph_t graph;
	cudaGraphExec_t exec;
	double total = 0;
	const int clean = clean_variant();

	if (!h_table)
		return 2;
	for (size_t k = 0; k < (size_t)VOCAB * DIM; k++)
		h_table[k] = (float)(k % 997) * 0.001f;
	for (int w = 0; w < NWORDS; w++)      // warm-up: every word seen so far
		cache[w] = w < NWORDS - 1 ? vocab_row(w) : -1;

	CHECK("cudaMalloc table", cudaMalloc(&table, table_bytes));
	CHECK("cudaMalloc state", cudaMalloc(&state, (size_t)BATCH * DIM * sizeof(float)));
	CHECK("cudaMalloc scores", cudaMalloc(&scores, BATCH * sizeof(float)));
	CHECK("cudaMalloc ids", cudaMalloc(&ids, BATCH * sizeof(int)));
	CHECK("cudaMallocHost ids", cudaMallocHost(&h_ids, BATCH * sizeof(int)));
	CHECK("copy table", cudaMemcpy(table, h_table, table_bytes, cudaMemcpyHostToDevice));
	CHECK("clear state", cudaMemset(state, 0, (size_t)BATCH * DIM * sizeof(float)));
	CHECK("clear ids", cudaMemset(ids, 0, BATCH * sizeof(int)));
	CHECK("cudaStreamCreateWithFlags", cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	printf("graph: a %d-row table (%zu KiB), batch %d, %d steps of one captured graph\n",
	       VOCAB, table_bytes / 1024, BATCH, STEPS);

	// Capture the step once: nothing in here allocates or synchronizes.
	const int n = BATCH * DIM;
	CHECK("cudaStreamBeginCapture", cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	CHECK("memset scores (captured)", cudaMemsetAsync(scores, 0, BATCH * sizeof(float), s));
	normalize<<<(n + 255) / 256, 256, 0, s>>>(state, n, 0.1f, 0.5f);
	CHECK("normalize (captured)", cudaGetLastError());
	lookup<<<BATCH, DIM, 0, s>>>(state, table, ids, BATCH);
	CHECK("lookup (captured)", cudaGetLastError());
	reduce_rows<<<BATCH, DIM, 0, s>>>(scores, state, BATCH);
	CHECK("reduce_rows (captured)", cudaGetLastError());
	CHECK("cudaStreamEndCapture", cudaStreamEndCapture(s, &graph));
	CHECK("cudaGraphInstantiate", cudaGraphInstantiate(&exec, graph, 0));
	CHECK("after capture", cudaGetLastError());

	// The serving loop: new ids into the static buffer, replay, read scores.
	for (int step = 0; step < STEPS; step++) {
		char what[64];
		int nmiss = resolve_batch(step, h_ids, missed);

		if (clean && nmiss > 0) {   // the fix: the slow path before the copy
			for (int k = 0; k < nmiss; k++)
				cache[missed[k]] = vocab_row(missed[k]);
			nmiss = resolve_batch(step, h_ids, missed);
		}

		CHECK("copy ids", cudaMemcpy(ids, h_ids, BATCH * sizeof(int), cudaMemcpyHostToDevice));
		snprintf(what, sizeof(what), "cudaGraphLaunch (step %d)", step);
		CHECK(what, cudaGraphLaunch(exec, s));
		snprintf(what, sizeof(what), "step %d", step);
		CHECK(what, cudaStreamSynchronize(s));
		CHECK("copy scores", cudaMemcpy(h_scores, scores, sizeof(h_scores), cudaMemcpyDeviceToHost));
		for (int i = 0; i < BATCH; i++)
			total += h_scores[i];
		// BUG: the slow path runs after the step; it should have patched
		// h_ids before the copy.
		for (int k = 0; k < nmiss; k++)
			cache[missed[k]] = vocab_row(missed[k]);
	}
	printf("graph: all %d steps ran clean, score sum %.3f\n", STEPS, total);
	CHECK("cudaGraphExecDestroy", cudaGraphExecDestroy(exec));
	CHECK("cudaGraphDestroy", cudaGraphDestroy(graph));
	CHECK("cudaStreamDestroy", cudaStreamDestroy(s));
	CHECK("cudaFreeHost", cudaFreeHost(h_ids));
	CHECK("cudaFree", cudaFree(ids));
	CHECK("cudaFree", cudaFree(scores));
	CHECK("cudaFree", cudaFree(state));
	CHECK("cudaFree", cudaFree(table));
	free(h_table);
	return 0;
}
