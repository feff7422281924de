/*
 * blobcost.c - hand-run timing of the capture writer's per-MiB path
 * (issue 26): tw_blob (XXH3 hash, the compress-or-raw choice, the framed
 * write) on copies shaped like a host-fed loop's: a batch of random uint8
 * images, random floats, normalised float images, zeros.  Every copy is
 * made distinct (its first 8 bytes) so dedup does not hide the cost.
 *
 *   build/blobcost [SIZE_BYTES [COPIES]]   (default 786432 = 64x3x64x64, 200)
 *
 * Prints per kind: ms per MiB and MiB/s, and stored/raw.  Writes to a file
 * under $TMPDIR (removed at the end), so the page cache copy is included.
 * Then the per-launch record write: LAUNCH records shaped like a PyTorch
 * loop's (a 120-character name, 8 parameters, 8 Python frames), us each.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../common/strbuf.h"
#include "../../trace/trace.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static uint64_t rng = 88172645463325252ull;
static uint64_t xr(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void fill(int kind, uint8_t *p, size_t n)
{
	size_t i;
	switch (kind) {
	case 0:	/* random uint8 images */
		for (i = 0; i < n; i++)
			p[i] = (uint8_t)xr();
		break;
	case 1:	/* random floats in [-1, 1) */
		for (i = 0; i + 4 <= n; i += 4) {
			float f = (float)((double)(xr() >> 11) / (1ull << 53) * 2 - 1);
			memcpy(p + i, &f, 4);
		}
		break;
	case 2:	/* normalised images: (u8 - mean) / std, 256 distinct floats */
		for (i = 0; i + 4 <= n; i += 4) {
			float f = ((float)(uint8_t)xr() - 123.7f) / 58.4f;
			memcpy(p + i, &f, 4);
		}
		break;
	default:
		memset(p, 0, n);
	}
}

int main(int argc, char **argv)
{
	static const char *names[] = { "uint8 images", "random floats", "normalised images", "zeros" };
	size_t size = argc > 1 ? strtoull(argv[1], NULL, 10) : 786432;
	int copies = argc > 2 ? atoi(argv[2]) : 200;
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char path[4096];
	uint8_t *buf = malloc(size + 8);
	int rc = 0;

	if (!buf || size < 16)
		return 1;
	snprintf(path, sizeof(path), "%s/blobcost.%d.bin", tmp, (int)getpid());
	for (int kind = 0; kind < 4; kind++) {
		struct trace_writer w;
		struct strbuf err = STRBUF_INIT;
		uint64_t h;
		double t0, t;
		fill(kind, buf, size);
		memset(&w, 0, sizeof(w));
		if (tw_open(&w, path, &err) < 0) {
			fprintf(stderr, "blobcost: %s\n", err.buf);
			return 1;
		}
		w.zstd_level = getenv("GPUREDUCE_ZSTD") ? atoi(getenv("GPUREDUCE_ZSTD")) : -1;
		tw_set_buffer(&w, 256 << 10);
		t0 = now();
		for (int c = 0; c < copies; c++) {
			uint64_t v = (uint64_t)c * 0x9E3779B97F4A7C15ull + (uint64_t)kind;
			memcpy(buf, &v, 8);
			if (tw_blob(&w, buf, size, &h) < 0)
				rc = 1;
		}
		tw_flush(&w);
		t = now() - t0;
		printf("blobcost: %-18s %zu B x %d: %.3f ms/MiB, %.0f MiB/s, stored/raw %.3f\n", names[kind],
		       size, copies, t * 1e3 / ((double)size * copies / 1048576.0),
		       (double)size * copies / 1048576.0 / t, (double)w.bytes_stored / (double)w.bytes_raw);
		tw_close(&w);
		unlink(path);
		sb_release(&err);
	}
	{
		static const char *files[8] = { "/usr/lib/python3/dist-packages/torch/nn/modules/conv.py",
			"/usr/lib/python3/dist-packages/torch/nn/modules/module.py", "train.py",
			"/usr/lib/python3/dist-packages/torch/nn/modules/container.py",
			"/usr/lib/python3/dist-packages/torchvision/models/resnet.py",
			"/usr/lib/python3/dist-packages/torch/nn/modules/module.py", "train.py", "train.py" };
		struct tr_frame fr[8];
		struct tr_param pr[8];
		uint8_t args[64] = { 0 };
		struct tr_rec r;
		struct trace_writer w;
		struct strbuf err = STRBUF_INIT;
		int n = copies * 1000;
		double t0, t;
		for (int i = 0; i < 8; i++) {
			fr[i] = (struct tr_frame){ files[i], i & 1 ? "_call_impl" : "forward", 100 + 7 * (uint32_t)i };
			pr[i] = (struct tr_param){ 8 * (uint32_t)i, 8 };
		}
		memset(&r, 0, sizeof(r));
		r.type = TR_LAUNCH;
		r.u.launch.name = "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_";
		r.u.launch.grid = (struct tr_dim3){ 128, 1, 1 };
		r.u.launch.block = (struct tr_dim3){ 256, 1, 1 };
		r.u.launch.nparams = 8;
		r.u.launch.params = pr;
		r.u.launch.argsize = 64;
		r.u.launch.args = args;
		r.u.launch.nframes = 8;
		r.u.launch.frames = fr;
		memset(&w, 0, sizeof(w));
		if (tw_open(&w, path, &err) < 0) {
			fprintf(stderr, "blobcost: %s\n", err.buf);
			return 1;
		}
		tw_set_buffer(&w, 256 << 10);
		t0 = now();
		for (int i = 0; i < n; i++) {
			r.u.launch.seq = (uint64_t)i;
			if (tw_record(&w, &r) < 0)
				rc = 1;
		}
		tw_flush(&w);
		t = now() - t0;
		printf("blobcost: LAUNCH record (8 frames, 8 params) x %d: %.3f us each, %.0f bytes each\n", n,
		       t * 1e6 / n, (double)w.offset / n);
		tw_close(&w);
		unlink(path);
		sb_release(&err);
	}
	free(buf);
	return rc;
}
