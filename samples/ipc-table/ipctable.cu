// ipctable.cu - sample for gpureduce: bad data that a kernel reads from GPU
// memory owned by ANOTHER process and reached through CUDA IPC
// (cudaIpcGetMemHandle / cudaIpcOpenMemHandle), as a serving engine reads
// tensors or weights a trainer process shares with it (torch.multiprocessing,
// RLHF weight sync).
//
// The program forks before any CUDA call.  The child is the PRODUCER: it
// owns each request's block table (which block of a KV pool each of its
// tokens lives in) in its own cudaMalloc memory, exports it with
// cudaIpcGetMemHandle, sends the handle down a pipe and refills the table
// for every step the consumer asks for.  The parent is the CONSUMER: it
// opens the handle and its gather_kv kernel reads the table straight
// through the IPC pointer.  No copy call in the consumer ever carries the
// table's bytes: the producer writes them, in another process.  A plain
// host array stages each step's query rows into device memory with
// cudaMemcpy, as a loader does: that one only ever arrives through a copy.
//
// The bug is in the producer.  When a request finishes, its slots are
// marked free with block id 0xFFFFFFFF (as an unsigned "no block") but the
// step's request count is not lowered; gather_kv only checks the count.  At
// step 6 one request finishes: the consumer's kernel reads pool +
// 0xFFFFFFFF blocks of 64 floats, ~1 TiB past the pool: a certain fault on
// the GPU, in the consumer.  The producer sees the consumer's command pipe
// close, frees the table and exits 0.
//
// CUDA_LAUNCH_BLOCKING=1 safe (gpureduce sets it); the producer
// synchronizes before it acks a step, and the consumer synchronizes after
// each step before it asks for the next one.
//
// Build: nvcc -O2 -arch=sm_90 -o ipctable ipctable.cu
// Exit (the consumer's; the run line's status): 1 on the first CUDA error
// (expected), 0 if it ran clean, 2 if the producer died or a pipe failed.
// IPC_TABLE_CLEAN=1: a finished request's slots point at block 0 (a valid
// block) instead: exits 0.
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cuda_runtime.h>

// The pipe to the other process, closed before a CUDA error exits so the
// other side sees EOF at once (the consumer's command pipe lets the
// producer leave; the producer's reply pipe tells the consumer it died).
static int peer_fd = -1;

#define CHECK(what, call) do { \
	cudaError_t e_ = (call); \
	if (e_ != cudaSuccess) { \
		fprintf(stderr, "ipctable: %s failed: %s (%s)\n", what, \
			cudaGetErrorString(e_), cudaGetErrorName(e_)); \
		if (peer_fd >= 0) \
			close(peer_fd); \
		exit(1); \
	} } while (0)

enum {
	BLOCKS = 4096,       // blocks in the KV pool
	BLOCK = 64,          // floats per block
	REQS = 16,           // requests per step, one CUDA block each
	TOKENS = 32,         // tokens per request (threads)
	STEPS = 10,
	BAD_STEP = 6,
};

// out[r][t] = sum of the token's block in the pool, read through the
// request's block table in the producer's memory (CUDA IPC).
__global__ void gather_kv(const float *pool, const unsigned *table, const float *query,
			  float *out, int nreq)
{
	int r = blockIdx.x, t = threadIdx.x;
	if (r >= nreq)
		return;
	unsigned blk = table[r * TOKENS + t];   // another process's memory, through IPC
	const float *b = pool + (size_t)blk * BLOCK;
	float s = 0.0f;
	for (int k = 0; k < BLOCK; k += 16)
		s += b[k] * query[r * TOKENS + t];
	out[r * TOKENS + t] = s;
}

// read_full / write_full: the whole buffer, across short reads and EINTR.
// read_full returns 1 when done, 0 on EOF before the end, -1 on an error.
static int read_full(int fd, void *buf, size_t n)
{
	char *p = (char *)buf;
	while (n > 0) {
		ssize_t r = read(fd, p, n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return (int)r;
		p += r;
		n -= (size_t)r;
	}
	return 1;
}

static int write_full(int fd, const void *buf, size_t n)
{
	const char *p = (const char *)buf;
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

// The child: owns the table, exports it, refills it per step.  cmd_fd
// carries step numbers from the consumer, reply_fd the handle and one ack
// byte per step back.  Returns the child's exit status.
static int producer(int cmd_fd, int reply_fd)
{
	int clean = getenv("IPC_TABLE_CLEAN") != NULL;
	static unsigned host[REQS * TOKENS];
	unsigned *table;
	cudaIpcMemHandle_t handle;

	peer_fd = reply_fd;
	CHECK("producer cudaMalloc table", cudaMalloc(&table, sizeof(unsigned) * REQS * TOKENS));
	CHECK("producer cudaIpcGetMemHandle", cudaIpcGetMemHandle(&handle, table));
	if (write_full(reply_fd, &handle, sizeof handle) != 0)
		goto gone;   // the consumer is gone before it got the handle

	for (;;) {
		int step, r = read_full(cmd_fd, &step, sizeof step);
		if (r == 0)
			break;   // EOF: the consumer is done (or faulted and exited)
		if (r < 0) {
			fprintf(stderr, "ipctable: producer: reading the command pipe: %s\n",
				strerror(errno));
			break;
		}
		for (int i = 0; i < REQS * TOKENS; i++)
			host[i] = (unsigned)((i * 37 + step * 11) % BLOCKS);
		if (step == BAD_STEP)   // request 5 finished: its slots freed
			for (int t = 0; t < TOKENS; t++)
				host[5 * TOKENS + t] = clean ? 0u : 0xFFFFFFFFu;
		CHECK("producer cudaMemcpy table", cudaMemcpy(table, host, sizeof host,
							      cudaMemcpyHostToDevice));
		CHECK("producer sync", cudaDeviceSynchronize());
		char ack = 1;
		if (write_full(reply_fd, &ack, 1) != 0)
			break;   // the consumer is gone
	}
gone:
	close(reply_fd);
	close(cmd_fd);
	cudaFree(table);
	return 0;
}

// reap: the producer's exit, waited for up to about 5 s; describes it in
// why (for the consumer's messages).  Returns 0 when it exited 0.
static int reap(pid_t pid, char *why, size_t n)
{
	int st;
	for (int i = 0; i < 50; i++) {
		pid_t w = waitpid(pid, &st, WNOHANG);
		if (w == pid) {
			if (WIFEXITED(st))
				snprintf(why, n, "exited with status %d", WEXITSTATUS(st));
			else if (WIFSIGNALED(st))
				snprintf(why, n, "was killed by signal %d", WTERMSIG(st));
			else
				snprintf(why, n, "ended (wait status 0x%x)", st);
			return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
		}
		if (w < 0) {
			snprintf(why, n, "cannot be waited for (%s)", strerror(errno));
			return 1;
		}
		usleep(100 * 1000);
	}
	snprintf(why, n, "closed its pipe but is still running");
	return 1;
}

// The consumer's way out when the producer or a pipe failed: exit 2.
static void producer_lost(pid_t pid, int cmd_fd, const char *when)
{
	char why[128];
	close(cmd_fd);   // lets a producer still reading leave
	reap(pid, why, sizeof why);
	fprintf(stderr, "ipctable: the producer (pid %d) %s; lost %s\n", (int)pid, why, when);
	exit(2);
}

// The parent: opens the producer's table and runs the steps.  Returns its
// exit status (a CUDA error exits 1 in CHECK).
static int consumer(pid_t pid, int cmd_fd, int reply_fd)
{
	static float staging[REQS * TOKENS];
	float *pool, *query, *out;
	unsigned *table;
	cudaIpcMemHandle_t handle;
	char why[128];

	peer_fd = cmd_fd;
	if (read_full(reply_fd, &handle, sizeof handle) != 1)
		producer_lost(pid, cmd_fd, "while waiting for the table's IPC handle");
	CHECK("cudaIpcOpenMemHandle table",
	      cudaIpcOpenMemHandle((void **)&table, handle, cudaIpcMemLazyEnablePeerAccess));
	CHECK("cudaMalloc pool", cudaMalloc(&pool, sizeof(float) * BLOCKS * BLOCK));
	CHECK("cudaMalloc query", cudaMalloc(&query, sizeof(float) * REQS * TOKENS));
	CHECK("cudaMalloc out", cudaMalloc(&out, sizeof(float) * REQS * TOKENS));
	CHECK("cudaMemset pool", cudaMemset(pool, 0, sizeof(float) * BLOCKS * BLOCK));

	for (int step = 0; step < STEPS; step++) {
		char ack, when[64];
		snprintf(when, sizeof when, "at step %d", step);
		if (write_full(cmd_fd, &step, sizeof step) != 0 || read_full(reply_fd, &ack, 1) != 1)
			producer_lost(pid, cmd_fd, when);
		for (int i = 0; i < REQS * TOKENS; i++)
			staging[i] = 0.5f + (float)((i + step) % 7);
		CHECK("cudaMemcpy query", cudaMemcpy(query, staging, sizeof staging,
						     cudaMemcpyHostToDevice));
		gather_kv<<<REQS, TOKENS>>>(pool, table, query, out, REQS);
		CHECK("gather_kv", cudaGetLastError());
		CHECK("step sync", cudaDeviceSynchronize());
	}

	double sum = 0.0;
	CHECK("cudaMemcpy out", cudaMemcpy(staging, out, sizeof staging, cudaMemcpyDeviceToHost));
	for (int i = 0; i < REQS * TOKENS; i++)
		sum += staging[i];
	CHECK("cudaIpcCloseMemHandle table", cudaIpcCloseMemHandle(table));
	close(cmd_fd);   // EOF: the producer frees its table and exits
	peer_fd = -1;
	if (reap(pid, why, sizeof why) != 0) {
		fprintf(stderr, "ipctable: the producer (pid %d) %s after the last step\n", (int)pid, why);
		return 2;
	}
	close(reply_fd);
	printf("ipctable: %d steps ran clean, checksum %.1f\n", STEPS, sum);
	return 0;
}

int main()
{
	int cmd[2], reply[2];   // consumer -> producer: steps; back: handle, acks

	// a write to a pipe whose reader is gone must fail (EPIPE), not kill
	signal(SIGPIPE, SIG_IGN);
	if (pipe(cmd) != 0 || pipe(reply) != 0) {
		perror("ipctable: pipe");
		return 2;
	}
	fflush(NULL);
	pid_t pid = fork();   // before any CUDA call: CUDA must not be initialised
	if (pid < 0) {
		perror("ipctable: fork");
		return 2;
	}
	if (pid == 0) {
		close(cmd[1]);
		close(reply[0]);
		exit(producer(cmd[0], reply[1]));
	}
	close(cmd[0]);
	close(reply[1]);
	return consumer(pid, cmd[1], reply[0]);
}
