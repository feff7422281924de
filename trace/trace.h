/*
 * trace.h - the gpureduce trace format: record ids, in-memory records, and the
 * reader and writer API.  This module is the only place that knows the byte
 * layout; the capture library (encode side), replay, the reducer and `show`
 * (decode side) all go through it.  The record types and the on-disk order
 * of their fields are one table, trace/records.def; the enum, the union
 * below and the constructors are generated from it.  The layout is
 * documented in docs/FORMAT.md; any change here or there must bump
 * TRACE_MINOR (additive) or TRACE_MAJOR (incompatible) and add a row to
 * that file's history table.
 *
 * A trace is `header record*`.  Records are self-framed (type, checksum,
 * length), so readers skip types they do not know.  Large payloads (module
 * images, host-to-device copy data, buffer snapshots) are stored once in BLOB
 * records, named by their XXH3-64 content hash and zstd-compressed; other
 * records refer to them by hash.
 *
 * Event numbering: the index of a record among all records of the file
 * (0-based, BLOB records included) is its "event number"; replay and show
 * report positions in those terms.
 */
#ifndef GPUREDUCE_TRACE_H
#define GPUREDUCE_TRACE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "records.def"

struct strbuf;

#define TRACE_MAGIC "GPURDTRC"   /* 8 bytes, no NUL on disk */
#define TRACE_MAJOR 2
#define TRACE_MINOR 1
#define TRACE_HEADER_SIZE 32
#define TRACE_HEADER_SEED 0x48445243u   /* "CRDH": the header checksum's XXH32 seed (1.4) */
#define TRACE_RECORD_HEADER_SIZE 16

/* Record types: one row each in trace/records.def, which also gives the
 * on-disk order of their fields.  On-disk numbers: never renumber, never
 * reuse; retire a type by renaming it *_DEPRECATED. */
enum tr_type {
#define TR_ENUM_(NAME, num, layout, ctor, rec) TR_##NAME = num,
	TR_RECORDS(TR_ENUM_)
#undef TR_ENUM_
};
/* The largest known type number: the size of a union of char[number]s. */
union tr_type_max_ {
#define TR_MAX_(NAME, num, layout, ctor, rec) char m_##NAME[num];
	TR_RECORDS(TR_MAX_)
#undef TR_MAX_
};
#define TR_TYPE_MAX_KNOWN ((uint32_t)sizeof(union tr_type_max_))

/* TR_ALLOC kinds (on disk). */
enum tr_alloc_kind {
	TR_MEM_DEVICE = 1,     /* cuMemAlloc, cuMemAllocPitch */
	TR_MEM_HOST = 2,       /* pinned/mapped host memory */
	TR_MEM_MANAGED = 3,    /* cuMemAllocManaged */
	TR_MEM_VMM = 4,        /* a cuMemMap'ed range */
	TR_MEM_ASYNC = 5,      /* cuMemAllocAsync / pools */
	TR_MEM_GLOBAL = 6      /* a module __device__ variable */
};

/* TR_LAUNCH api (on disk). */
enum tr_launch_api {
	TR_API_LAUNCH_KERNEL = 1,
	TR_API_LAUNCH_KERNEL_EX = 2,
	TR_API_LAUNCH_COOPERATIVE = 3
};

/* TR_LAUNCH python state (on disk). */
enum tr_py_state {
	TR_PY_NONE = 0,        /* no CPython in the process */
	TR_PY_FRAMES = 1,      /* frames recorded (innermost first) */
	TR_PY_NO_GIL = 2       /* Python present but this thread held no GIL */
};

/* TR_MODULE kinds (on disk). */
enum tr_module_kind {
	TR_MOD_ELF = 1,        /* a cubin: ELF image */
	TR_MOD_OTHER = 2       /* fatbin/PTX or unknown: stored, not indexed */
};

/* Blob codecs (on disk). */
enum tr_codec {
	TR_CODEC_RAW = 0,
	TR_CODEC_ZSTD = 1
};

/* Flags on copy/memset/launch records (on disk, bit values). */
#define TR_F_ASYNC 0x1u
#define TR_F_CAPTURED 0x2u /* issued during stream capture: did not run then */
#define TR_F_FILL 0x4u     /* H2D written by shrink: bytes are cand_fill(src as seed) */
#define TR_F_HOSTMEM 0x8u  /* H2D written by capture before a launch: managed/mapped host
			    * memory content the CPU changed, or device memory another
			    * process wrote (no copy call made it) */
#define TR_F_CHECKPOINT 0x10u /* H2D written by a checkpoint: the content the memory held */
#define TR_F_SAME 0x80u    /* (2.0) LAUNCH, on disk only: name, layout and argument bytes
			    * are those of the LAUNCH `back` records before it (this one's
			    * 16 argument bytes: u64 back, u64 XXH3 of those bytes); the
			    * reader resolves it and clears the flag */
#define TR_F_FOLDED 0x40u  /* (1.4) LAUNCH: a communication kernel (NCCL) folded away: never
			    * launched in replay; H2D: the bytes such a kernel wrote on this
			    * rank, applied in its place (docs/MULTI-RANK.md) */

struct tr_dim3 {
	uint32_t x, y, z;
};

struct tr_param {
	uint32_t offset, size;   /* from cu{Func,Kernel}GetParamInfo */
};

struct tr_launch_attr {
	uint32_t id;             /* CUlaunchAttributeID */
	uint32_t len;
	uint8_t value[64];       /* raw CUlaunchAttributeValue bytes */
};

struct tr_frame {
	const char *file;
	const char *func;
	uint32_t line;
};

struct tr_process {
	uint32_t pid;
	uint64_t start_ns;       /* CLOCK_REALTIME at capture start */
	const char *cwd;
	uint32_t argc;
	const char **argv;
};

struct tr_device {
	uint32_t ordinal;
	const char *name;
	uint32_t cc_major, cc_minor;
	uint32_t driver_version;   /* cuDriverGetVersion, e.g. 13000 */
	uint32_t toolkit_version;  /* CUDA_VERSION the capture library was built with */
	uint64_t total_mem;
	uint32_t sm_count;
};

struct tr_blob {
	uint64_t hash;           /* XXH3-64 of the raw bytes */
	uint64_t raw_size;
	uint32_t codec;
	const uint8_t *data;     /* stored bytes (points into the mapped file) */
	uint64_t stored_size;
};

struct tr_module {
	uint32_t module_id;      /* CUPTI moduleId; unique within a trace */
	uint32_t kind;           /* enum tr_module_kind */
	uint64_t blob;           /* hash of the image */
	uint64_t size;
};

/* ALLOC flags (2.1) */
#define TR_ALLOC_F_VMM_CONT 0x1u   /* a VMM piece past the start of the range the
				    * program reserved: it continues the range below
				    * it (trace/vmmjoin.inc joins it only then) */

struct tr_alloc {
	uint64_t addr, size;
	uint32_t kind;           /* enum tr_alloc_kind */
	uint32_t flags;          /* TR_ALLOC_F_* */
	const char *name;        /* globals: symbol name; else "" */
};

struct tr_free {
	uint64_t addr;
	uint32_t kind;
};

struct tr_copy {               /* H2D, D2D, D2H */
	uint64_t dst, src;       /* H2D: src is the host address (informational) */
	uint64_t size;
	uint64_t blob;           /* H2D only: hash of the bytes */
	uint64_t stream;
	uint32_t flags;
};

struct tr_memset {
	uint64_t dst;
	uint32_t value;
	uint32_t elem_size;      /* 1, 2 or 4 */
	uint64_t width;          /* elements per row */
	uint64_t height;         /* rows; 1 for 1D */
	uint64_t pitch;          /* bytes between rows; 0 for 1D */
	uint64_t stream;
	uint32_t flags;
};

struct tr_launch {
	uint64_t seq;            /* 0-based index among launches of the capture */
	uint64_t func;           /* captured CUfunction/CUkernel handle (informational) */
	const char *name;        /* mangled kernel name */
	uint32_t api;            /* enum tr_launch_api */
	uint32_t flags;
	struct tr_dim3 grid, block;
	uint32_t shmem;
	uint64_t stream;
	uint32_t nparams;
	struct tr_param *params;
	uint32_t argsize;        /* bytes of args: offset+size of the last param */
	uint8_t *args;           /* the parameter buffer as the kernel sees it */
	/* not on disk (2.0): when the record was a short one (TR_F_SAME), how
	 * many records back the launch it repeats stands; 0 for a whole one.
	 * Its name, params and args then point at that launch's */
	uint64_t same_back;
	uint32_t nattrs;
	struct tr_launch_attr *attrs;
	uint32_t tid;            /* OS thread id of the launching thread */
	uint32_t py_state;       /* enum tr_py_state */
	uint32_t nframes;
	struct tr_frame *frames; /* innermost first */
	/* 1.8: the PYSTACK whose frames these are.  A writer gives it (and no
	 * frames of the launch's own) only when nframes is 0; a reader sets
	 * nframes and frames from that PYSTACK and stack back to 0, so a
	 * launch read and written again carries its frames itself */
	uint32_t stack;
	/* not on disk (1.7, trace_mark_nonptr): the sorted byte offsets of
	 * the 8-byte argument words that are never pointers in this kernel's
	 * launches (tr_launch_nonptr); NULL when none */
	const uint32_t *nonptr;
	uint32_t nnonptr;
	/* not on disk: tr_hash(args, argsize) when the writer's caller has it
	 * already (the capture's launch path), else 0 and the writer hashes */
	uint64_t args_hash;
};

struct tr_fault {
	uint32_t code;           /* CUresult */
	const char *error;       /* e.g. CUDA_ERROR_ILLEGAL_ADDRESS */
	const char *api;         /* the call that returned it first */
	uint64_t launch_seq;     /* seq of the launch that faulted (or last launched) */
	uint32_t at_launch;      /* 1 when the launch call itself returned it */
	const char *kernel;      /* name of that launch's kernel */
};

struct tr_func_attr {
	const char *kernel;
	uint32_t attr;           /* CUfunction_attribute */
	int32_t value;
};

/* FUNC_INFO (1.5): what the driver said of a launched function (handle
 * `func`, the LAUNCH records' `func`) at its first launch; -1 where it
 * would not say.  A JIT loads one name in several builds (one per
 * configuration); these tell replay and repro.cu which build it was. */
struct tr_func_info {
	uint64_t func;           /* CUfunction/CUkernel handle */
	const char *name;
	int32_t max_threads;     /* CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK */
	int32_t num_regs;        /* ..._NUM_REGS */
	int32_t shared_bytes;    /* ..._SHARED_SIZE_BYTES (static) */
	int32_t const_bytes;     /* ..._CONST_SIZE_BYTES */
	int32_t local_bytes;     /* ..._LOCAL_SIZE_BYTES */
	int32_t ptx_version;     /* ..._PTX_VERSION */
	int32_t binary_version;  /* ..._BINARY_VERSION */
};

struct tr_end {
	int32_t exit_code;       /* -1 when unknown */
	uint64_t launches;
	uint64_t allocs;
	uint64_t bytes_h2d;
};

struct tr_note {
	const char *text;
};

/* The four graph records share one layout; unused fields are 0.
 * GRAPH_BEGIN: stream.  GRAPH_END: stream, graph.  GRAPH_EXEC: graph, exec.
 * GRAPH_LAUNCH: exec, stream.  A graph's nodes are the records flagged
 * TR_F_CAPTURED between its BEGIN and END (see docs/FORMAT.md). */
struct tr_graph {
	uint64_t stream;
	uint64_t graph;          /* CUgraph handle (an identifier, not replayed) */
	uint64_t exec;           /* CUgraphExec handle (an identifier) */
	uint32_t flags;
};

/* CHECKPOINT_BEGIN and CHECKPOINT_END share one layout (1.2).  Between
 * them: an ALLOC for every live allocation and its content as MEMCPY_H2D
 * records flagged TR_F_CHECKPOINT (one per chunk).  A BEGIN with no END
 * after it is an incomplete checkpoint: readers drop it and everything
 * after it (see docs/FORMAT.md). */
struct tr_checkpoint {
	uint64_t id;             /* 1, 2, ... in the order the capture took them */
	uint64_t launch_seq;     /* seq the next launch gets (launches before it) */
	uint64_t allocs;         /* live allocations in it */
	uint64_t bytes;          /* their bytes */
	uint64_t stored;         /* END: blob bytes this checkpoint wrote (after dedup); BEGIN: 0 */
	uint32_t flags;          /* reserved, 0 */
};

/* TR_BLOCK_* source (on disk): whose allocator the block belongs to. */
enum tr_block_source {
	TR_BLK_TORCH = 1,      /* PyTorch's CUDA caching allocator */
	TR_BLK_CUPY = 2,       /* CuPy's memory pool (reserved: not recorded yet) */
	TR_BLK_TEST = 3        /* written by tests */
};
/* TR_BLOCK_* flags (on disk, bit values). */
#define TR_BLK_F_INITIAL 0x1u /* BLOCK_ALLOC: live when recording began or re-sent after a
			       * checkpoint; allocated at an unknown earlier point */
#define TR_BLK_F_UNKNOWN 0x2u /* not on disk: made by the decoder (batch.inc): a whole
			       * segment, from the first launch whose blocks were never fetched */

/* BLOCK_ALLOC (1.3): a block of a caching allocator (a tensor's storage)
 * became live inside a captured allocation (its segment).  Written before
 * the first launch that could see it; see docs/FORMAT.md. */
struct tr_block {
	uint64_t addr;           /* device address of the block */
	uint64_t size;           /* bytes the program asked for (the tensor's storage) */
	uint64_t alloc_size;     /* bytes the allocator gave (rounded up, >= size) */
	uint64_t segment;        /* address of the captured allocation it lies in (0: unknown) */
	uint32_t source;         /* enum tr_block_source */
	uint32_t flags;          /* TR_BLK_F_* */
	const char *file;        /* allocated at: the innermost user Python frame ("" unknown) */
	const char *func;
	uint32_t line;
};

/* BLOCK_FREE (1.3): the block at addr went back to its allocator. */
struct tr_block_free {
	uint64_t addr;
	uint32_t source;
	uint32_t flags;          /* reserved, 0 */
};

/* BLOCK_FREE flags (on disk, bit values). */
#define TR_BLKFREE_F_UNKNOWN 0x1u /* not on disk: made by the decoder (read.c) before the
				   * first launch whose blocks the capture never fetched */

/* BLOCK_BATCH (1.6, `capture --tensors` events mode): the BLOCK_ALLOC and
 * BLOCK_FREE records right after it (up to the next BLOCK_BATCH or the
 * first record of another type) apply before the LAUNCH with this seq;
 * the decoder moves them there (docs/FORMAT.md). */
struct tr_block_batch {
	uint64_t seq;            /* the launch they apply before */
	uint64_t known;          /* blocks are complete for launches with seq < known (0: not said) */
	uint32_t flags;          /* reserved, 0 */
};

/* PYSTACK (1.8): Python frames written once and named by id (not 0) in
 * every LAUNCH that has them (tr_launch.stack), defined before the first
 * such launch; the same id defined again later (a checkpoint segment
 * carries the definitions before it) means the same frames. */
struct tr_pystack {
	uint32_t id;
	uint32_t nframes;
	struct tr_frame *frames; /* innermost first */
};

/* NONPTR (1.7): in every LAUNCH of `kernel` whose parameter layout is
 * `layout` (tr_launch_layout; 0: any), the 8-byte argument word at byte
 * `offset` is an integer, never a pointer: no reader relocates it or
 * names a buffer by it (docs/FORMAT.md).  tw_record writes a kernel's
 * records before the first LAUNCH of it (name and layout) that carries a
 * nonptr list (a trace derived from another keeps what its source
 * showed); the reader adds what the launches themselves show
 * (trace_mark_nonptr). */
struct tr_nonptr {
	const char *kernel;      /* mangled name, as in LAUNCH */
	uint64_t layout;         /* tr_launch_layout of the launches it is about; 0: any */
	uint32_t offset;         /* byte offset in the argument buffer, 8-aligned */
	uint32_t flags;          /* reserved, 0 */
};

/* ENV (1.4): "key: value" lines, one fact each (docs/FORMAT.md lists the keys). */
struct tr_env {
	const char *text;
};

/* TR_SOURCE origin (on disk). */
enum tr_src_origin {
	TR_SRC_TRITON = 1,     /* a @triton.jit function (JITFunction.src) */
	TR_SRC_INDUCTOR = 2,   /* a Triton kernel of a torch.compile (Inductor) generated module */
	TR_SRC_NVRTC = 3,      /* a program given to nvrtcCreateProgram, and its options */
	TR_SRC_EXTENSION = 4,  /* a torch.utils.cpp_extension source (.cu) */
	TR_SRC_FILE = 5,       /* a source file named by the module's line info */
	TR_SRC_PTX = 6,        /* the PTX of a kernel (text), when the framework kept it */
	TR_SRC_TEST = 7        /* written by tests */
};

/* SOURCE (1.4): source text with where it came from.  kernel: the kernel
 * (ELF symbol, as LAUNCH.name) it belongs to, or "" for a whole program
 * (NVRTC, an extension) whose kernels are found by name in the text. */
struct tr_source {
	uint32_t origin;         /* enum tr_src_origin */
	uint32_t flags;          /* reserved, 0 */
	uint32_t module_id;      /* MODULE it was loaded as, 0 when unknown */
	const char *kernel;
	const char *path;        /* file it was read from or names ("" unknown) */
	const char *meta;        /* "key: value" lines: params, types, constexpr, options, version */
	const char *text;        /* the source itself */
};

/* STDERR (1.4): written by `capture` after the program exits. */
struct tr_stderr {
	uint64_t dropped;        /* bytes written before `text` and not kept */
	int32_t exit_code;       /* the program's exit status (128+signal), -1 unknown */
	const char *text;        /* the last bytes (at most 64 KiB) */
};

/* TR_TENSORMAP calls (on disk). */
enum tr_tmap_api {
	TR_TMAP_TILED = 1,       /* cuTensorMapEncodeTiled */
	TR_TMAP_IM2COL = 2,      /* cuTensorMapEncodeIm2col */
	TR_TMAP_IM2COL_WIDE = 3, /* cuTensorMapEncodeIm2colWide */
	TR_TMAP_REPLACE = 4      /* cuTensorMapReplaceAddress */
};
#define TR_TMAP_BYTES 128
/* Where a CUtensorMap parameter may start in a launch's argument bytes.
 * The map is 64-byte aligned in the constant bank, but the parameter area
 * starts at 16 mod 64 there on sm_90 (Triton 3.6 puts its map at offset
 * 48), so offsets are only known to be 16-byte aligned. */
#define TR_TMAP_PARAM_ALIGN 16
#define TR_TMAP_MAX_RANK 5

/* TENSORMAP (1.4): a CUtensorMap the program built on the host, with the
 * arguments that built it and the 128 bytes the driver produced.  For
 * REPLACE, `geom` names the encode call the geometry came from (0:
 * unknown: no earlier map had the same bytes past word 0) and the
 * geometry fields are copied from it; gaddr is the new address.  See
 * docs/FORMAT.md. */
struct tr_tensormap {
	uint32_t api;            /* enum tr_tmap_api: the call */
	uint32_t geom;           /* enum tr_tmap_api of the encode that gave the geometry (0: unknown) */
	uint32_t dtype;          /* CUtensorMapDataType */
	uint32_t rank;           /* 1..5 */
	uint32_t interleave, swizzle, l2promo, oobfill; /* CUtensorMap* enums */
	uint64_t gaddr;          /* globalAddress */
	uint64_t dims[TR_TMAP_MAX_RANK];      /* globalDim */
	uint64_t strides[TR_TMAP_MAX_RANK];   /* globalStrides (rank-1 used, bytes) */
	uint32_t box[TR_TMAP_MAX_RANK];       /* tiled: boxDim */
	uint32_t estrides[TR_TMAP_MAX_RANK];  /* elementStrides */
	int32_t extra[8];        /* im2col: lower corner [0..2], upper corner [3..5],
				  * channelsPerPixel [6], pixelsPerColumn [7]; im2col wide: lower W
				  * [0], upper W [3], mode [5], [6], [7] as im2col; tiled: 0 */
	uint32_t result;         /* CUresult of the call */
	uint8_t map[TR_TMAP_BYTES]; /* the map as the call left it */
};

struct tr_reduction {
	const char *text;        /* YAML-ish summary written by shrink */
};

struct tr_rec {
	uint32_t type;           /* enum tr_type, or an unknown number */
	uint64_t offset;         /* file offset of the record header */
	union {
#define TR_UNION_(layout, tag) struct tag layout;
		TR_LAYOUTS(TR_UNION_)
#undef TR_UNION_
	} u;
};

/* ---- reading ---------------------------------------------------------- */

struct trace_arena;

struct trace {
	char *path;
	uint16_t major, minor;
	uint64_t created_ns;
	const uint8_t *map;      /* whole file, read-only mapping */
	size_t size;
	int mapped;              /* 1: map is ours to munmap */
	struct tr_rec *rec;      /* all records, in file order */
	size_t nrec, rec_alloc;
	int truncated;           /* 1: a partial last record (or an incomplete
				  * checkpoint and what followed it) was dropped */
	char *truncated_msg;     /* what was dropped, for show/replay to say */
	int cut_in_fault;        /* 1: the dropped partial record is the FAULT:
				  * the program faulted, the record is incomplete */
	/* 1.6: BLOCK_BATCH records the decoder placed (batch.inc); then
	 * blocks_cut: launches with seq >= blocks_known had no known blocks
	 * (the capture died before fetching them): BLOCK_FREEs flagged
	 * TR_BLKFREE_F_UNKNOWN end every block before the first of them, and a
	 * BLOCK_ALLOC flagged TR_BLK_F_UNKNOWN covers each of their segments */
	size_t block_batches;
	int blocks_cut;
	uint64_t blocks_known;
	/* vmm pieces the decoder joined into the allocation of a piece mapped
	 * beside them (vmmjoin.inc: PyTorch's expandable segments) */
	size_t vmm_joined;
	struct trace_arena *arena;
	/* 1.7 (trace_mark_nonptr): every (kernel, offset) whose argument word
	 * is never a pointer, sorted by kernel then offset; launches point
	 * into it (tr_launch.nonptr) */
	struct tr_nonptr *nonptr;
	size_t nnonptr;
	size_t nnonptr_slots;    /* (kernel, layout, offset)s a launch showed small but another
				  * held an address in: pointer slots, not integers */
	/* integer words a reader learnt after decoding (trace_add_nonptr:
	 * hunt's check, reducer/hunt.c), counted in trace_mark_nonptr as
	 * NONPTR records are; the writer emits them with the rest */
	struct tr_nonptr *nonptr_extra;
	size_t nnonptr_extra, anonptr_extra;
	/* blob index: open addressing on hash -> record index */
	size_t *blob_slots;
	size_t blob_nslots;
	/* the TENSORMAP records: how many, the first one's index (trace_open;
	 * tmaps_indexed 0 in a trace put together otherwise: then they are
	 * searched for) */
	size_t ntmaps, tmap_first;
	int tmaps_indexed;
	/* the same records by (global address, record index): a launch's
	 * bytes are matched against the maps of one address, not all of them
	 * (a Triton TMA kernel encodes maps at every launch) */
	struct tr_tmap_key { uint64_t gaddr; size_t rec; } *tmap_keys;
	/* 1.8, while decoding: PYSTACK id -> its frames (open addressing) */
	struct tr_pystack *stacks;
	size_t stacks_n, stacks_cap;
	size_t stacks_missing;   /* launches that named an id no PYSTACK before them defined */
};
#define TRACE_INIT { 0 }

/* trace_open flags */
#define TRACE_OPEN_STRICT 0x1  /* a partial last record is an error, not a warning */

/*
 * Map and decode a whole trace.  Validates the header (magic, a major version
 * this build reads) and every record (framing, checksum, field bounds).  A
 * record cut off at end of file (a process that died mid-write) is dropped
 * and flagged in ->truncated unless TRACE_OPEN_STRICT.  Returns 0, or -1
 * with one line in err naming the file, byte offset and what was expected.
 * On failure *t is released.
 */
int trace_open(struct trace *t, const char *path, unsigned flags, struct strbuf *err);
/* Same, over a memory buffer (used by tests and the fuzzer); the buffer must
 * outlive t.  `name` is used in messages. */
int trace_open_mem(struct trace *t, const char *name, const void *data, size_t size,
		   unsigned flags, struct strbuf *err);
void trace_release(struct trace *t);

/*
 * Does the trace reach its program's end?  1 when it holds an END record
 * (an orderly exit; gpureduce's own traces, reduced or snapshots, end with
 * one too) or a FAULT record (capture stops recording at the first sticky
 * error, and the process usually dies of it); 0 when it has neither: it
 * stops before the program did (the process was killed, or the tail of the
 * file was lost).  docs/FORMAT.md, "Complete traces".
 */
int trace_complete(const struct trace *t);
/* What replay and shrink both say of a trace with cut_in_fault set. */
#define TRACE_CUT_FAULT_MSG "the trace was cut inside its FAULT record: the program faulted, but the " \
	"record that names the fault is incomplete"
#define TRACE_INCOMPLETE_MSG "the trace ends before the program did: it may have been killed " \
	"(no END or FAULT record)"

/* 1.6 (batch.inc in read.c, called by trace_open): move the BLOCK records behind each
 * BLOCK_BATCH to just before the LAUNCH it names (the BLOCK_BATCH stays),
 * and end the blocks before the first launch they do not cover.
 * A trace without BLOCK_BATCH is untouched.  Returns 0. */
/* Join vmm pieces mapped side by side into one allocation each
 * (trace/vmmjoin.inc); trace_open() calls it before the block batches.
 * Returns 0. */
int trace_join_vmm(struct trace *t);

int trace_place_block_batches(struct trace *t);

/*
 * 1.7 (called by trace_open): the argument words that are never pointers.
 * A by-value struct may hold a 4-byte integer beside 4 bytes the program
 * never set (stack garbage, often the high half of a host address): read
 * as one word, 0x00007fd5_00000040 may fall inside a device allocation and
 * would be "relocated", changing the integer the kernel reads.  A word is
 * an integer when a NONPTR record says so, or when some launch of the
 * same kernel holds a small non-zero value there (1 to 2^32 - 1: never a
 * device address) and none holds an address there (a pointer slot whose
 * unused entries hold stack garbage).  Fills t->nonptr and every launch's
 * nonptr list.
 */
void trace_mark_nonptr(struct trace *t);
/* Mark the words at bytes offs[0, n) of every launch of (kernel, layout)
 * integers, as NONPTR records would (kernel must outlive t: a launch's
 * name), and remark the launches.  trace_drop_nonptr(t, n) forgets all
 * but the first n marks added so (0: all) and remarks them. */
void trace_add_nonptr(struct trace *t, const char *kernel, uint64_t layout, const uint32_t *offs, size_t n);
void trace_drop_nonptr(struct trace *t, size_t keep);
/* The low half below which an argument word inside an allocation reads
 * as a 4-byte integer beside 4 bytes never set, not as an address: the
 * decoder's counter-evidence (nonptr.inc) counts only words at or above
 * it, and hunt's integer check (reducer/hunt.c) tries only words below. */
#define TR_INT_LOW_LIMIT (1u << 24)
/* 1 when the word at byte off of l's arguments is never a pointer. */
int tr_launch_nonptr(const struct tr_launch *l, uint32_t off);
/* The 8-byte (little-endian) argument word of l at byte off, in *v: 1, or
 * 0 when it does not lie wholly inside the argument bytes (an offset taken
 * from another record, a NONPTR's, may be anything: off + 8 may wrap). */
int tr_launch_word(const struct tr_launch *l, uint32_t off, uint64_t *v);
/* A hash of l's parameter layout (argsize, each parameter's offset and
 * size), never 0: a JIT loads one name in several builds whose layouts may
 * differ (Triton drops an int that was 1 from the signature), so words
 * are integers per (name, layout), not per name. */
uint64_t tr_launch_layout(const struct tr_launch *l);

/* Index of the BLOB record with this hash, or -1. */
long trace_find_blob(const struct trace *t, uint64_t hash);
/* Index of the first LAUNCH record with launch number seq, or -1. */
long trace_find_launch(const struct trace *t, uint64_t seq);
/* What the capture noted the trace lacks (NOTE records of calls it could
 * not record: unsupported copies and writes, texture objects, legacy
 * launches, launches it cannot rebuild), at most `max` (up to 16) distinct ones,
 * appended to out as "PREFIX A; B." (nothing when there are none).
 * Returns how many. */
int trace_unrecorded_notes(const struct trace *t, const char *prefix, int max, struct strbuf *out);
/* The NOTE `capture --tensors` writes when it cannot read PyTorch's caching
 * allocator ("--tensors: WHY; " TR_NOTE_TENSORS_OFF, e.g. torch on its
 * cudaMallocAsync backend, which keeps no history): from there on the
 * trace holds no allocator blocks.  Its text, or NULL. */
#define TR_NOTE_TENSORS_OFF "tensor blocks are not recorded from here on"
const char *trace_tensors_off_note(const struct trace *t);
/*
 * Decode a blob into out (appended).  Checks the decompressed size against
 * the record's raw_size and `limit` (0: 64 GiB) before allocating, and the
 * content hash after.  Returns 0 or -1 with err.
 */
int trace_blob_read(const struct trace *t, uint64_t hash, struct strbuf *out,
		    uint64_t limit, struct strbuf *err);

/* Name of a record type ("LAUNCH"...) or "UNKNOWN". */
const char *tr_type_name(uint32_t type);
/* 1 for a record type this reader knows (and a writer can encode); a
 * newer writer's other types are read as records of their number, which
 * replay skips and a reduced trace leaves out. */
int tr_type_known(uint32_t type);
const char *tr_alloc_kind_name(uint32_t kind);

/* ---- writing ---------------------------------------------------------- */

struct trace_writer {
	int fd;
	char *path;
	uint64_t offset;         /* bytes written so far */
	uint64_t nrec;           /* records written (== next event number) */
	uint64_t bytes_raw;      /* uncompressed blob bytes offered */
	uint64_t bytes_stored;   /* blob bytes after dedup + compression */
	int zstd_level;
	/* hashes of blobs already written: open addressing, 0 = empty slot */
	uint64_t *seen;
	size_t seen_n, seen_cap;
	int failed;              /* a write failed; further writes are dropped */
	/* reused across blobs (tw_close frees them): a zstd context and its
	 * output buffer, so a blob costs no allocation or page faults */
	void *zctx;
	void *zbuf;
	size_t zcap;
	/* capture only (tw_set_buffer): records gathered here and written in
	 * one write(2) when full or at tw_flush; wcap 0: every record is its
	 * own write(2), as before */
	char *wbuf;
	size_t wlen, wcap;
	int zstd_always;         /* 1: try zstd on every blob, no sample first */
	/* tw_record's encoding buffer, kept between records (zero: none yet) */
	char *enc;
	size_t enc_alloc;
	/* capture only: where bytes that leave the buffer go instead of
	 * writev(2) on fd (capture/writeq.c: its writer thread's queue, which
	 * keeps them in order with the blobs it writes); the pieces are one
	 * record or buffer's worth, at most TW_OUT_MAX_IOV of them.  0 or -1
	 * (then w->failed is set).  NULL: the file, directly. */
	int (*out)(struct trace_writer *w, const struct iovec *iov, int n);
	/* 1.7: the nonptr lists (one per kernel and layout of a trace read)
	 * whose NONPTR records were written (tw_record writes them before a
	 * LAUNCH whose list it has not written yet) */
	const uint32_t **np_seen;
	size_t np_n, np_cap;
	/* 2.0 (tw_short_launches): the launches written, by their function,
	 * name, layout and argument bytes, so that a repeat is written short;
	 * NULL: every launch whole.  same_short, same_saved: launches written
	 * short, and the bytes of name, layout and arguments they left out */
	struct tw_same_ent *same;
	uint64_t same_short, same_saved;
	/* tw_short_launches_by_func: a function handle names one kernel and
	 * layout until tw_forget_launches, and argument bytes are matched by
	 * their XXH3 (as blobs are): the table holds no copies to compare */
	int same_by_func;
	/* the first failed write: its errno (0: none seen) and the file's size
	 * then; on_fail, when set, is called once then (capture says so: a
	 * full disk must not pass for a program that stopped) */
	int err;
	uint64_t err_offset;
	void (*on_fail)(struct trace_writer *w);
};
#define TW_OUT_MAX_IOV 3
#define TRACE_WRITER_INIT { -1, NULL, 0, 0, 0, 0, 3, NULL, 0, 0, 0, NULL, NULL, 0, NULL, 0, 0, 0, NULL, 0, NULL, NULL, 0, 0, NULL, 0, 0, 0, 0, 0, NULL }

/* Mark w failed (a write of its went wrong with errno err, 0: unknown):
 * nothing more is written; the first time, err is kept and on_fail is
 * called. */
void tw_set_failed(struct trace_writer *w, int err);
/* ": WHY" (strerror of w's first failed write; EIO where its cause was not
 * known), or "" when none failed: for "PATH: write failed%s" messages. */
const char *tw_why(const struct trace_writer *w);

/* Create/truncate path and write the header.  0 or -1 with err. */
int tw_open(struct trace_writer *w, const char *path, struct strbuf *err);
/* 2.0: from now on, a LAUNCH whose func, name, layout and argument bytes
 * a launch this writer wrote earlier had is written short (TR_F_SAME),
 * naming that launch by how many records back it stands (docs/FORMAT.md
 * "Short launches").  Only for a writer whose records stay where it wrote
 * them, or are moved together (a capture's window copied into the next
 * segment): tw_forget_launches() where that does not hold. */
void tw_short_launches(struct trace_writer *w);
/* The same, for a writer whose every LAUNCH of one `func` has one name and
 * parameter layout until tw_forget_launches() (the capture, which forgets
 * at each module unload): a repeat is known by its function, argument size
 * and the XXH3 of its argument bytes alone, without reading the name,
 * layout or bytes it repeats (on a loop's host those are out of the cache
 * by its next step: most of a launch's record write). */
void tw_short_launches_by_func(struct trace_writer *w);
/* Forget the launches written so far: later ones never name them. */
void tw_forget_launches(struct trace_writer *w);
/* Write the header into an already-open fd (capture uses this). */
int tw_open_fd(struct trace_writer *w, int fd, const char *name, struct strbuf *err);
/* Close (flushing first); 0 or -1 if any write failed. Accepts a
 * never-opened writer. */
int tw_close(struct trace_writer *w);
/*
 * Gather records in a buffer of cap bytes (0: flush and stop) instead of
 * one write(2) each: w->offset and event numbers stay exact, but the file
 * lags by up to cap bytes until tw_flush.  The capture library uses it on
 * its hot path and flushes at a fault, at exit, before a checkpoint reads
 * the file, and from a timer (capture/flusher.c).  Returns 0 or -1.
 */
int tw_set_buffer(struct trace_writer *w, size_t cap);
/* The buffer of writers that write a whole trace and then close it
 * (candidates, snapshots, hunt's guarded traces): their records have no
 * crash to survive, and a write(2) each made a long trace's copy
 * syscall-bound. */
#define WRITE_BUFFER_BYTES (1u << 20)
/* Write what the buffer holds.  0 or -1 (w->failed set). */
int tw_flush(struct trace_writer *w);

/*
 * Encode and write one record (any type but TR_BLOB, which goes through
 * tw_blob).  Each record is one write(2) so that a process killed right
 * after still leaves a complete record on disk.  Returns the event number,
 * or -1 (write error; w->failed is set).
 */
long tw_record(struct trace_writer *w, const struct tr_rec *r);
/*
 * Store bytes as a blob unless a blob with the same hash was already written
 * by this writer; *hash receives the XXH3-64.  Returns 0 or -1.
 */
int tw_blob(struct trace_writer *w, const void *data, size_t len, uint64_t *hash);
/* Same, for a caller that has hashed the bytes already (hash must be
 * tr_hash(data, len)). */
int tw_blob_hashed(struct trace_writer *w, const void *data, size_t len, uint64_t hash);
/* Store them whether or not w wrote that hash before (the caller decided:
 * capture's writer thread, for blobs the program's thread deduplicated),
 * and remember the hash; bytes_raw is the caller's.  The same bytes as
 * tw_blob_hashed's.  0 or -1. */
int tw_blob_store(struct trace_writer *w, const void *data, size_t len, uint64_t hash);
/* writev(2) all of iov[0..n) to fd (n <= TW_OUT_MAX_IOV), retrying short
 * writes.  0 or -1 (errno set). */
int tw_writev_all(int fd, const struct iovec *iov, int n);
/* Copy blob `hash` of trace t into w as stored (no recompression), unless
 * already written.  0 or -1 (missing blob or write error). */
int tw_copy_blob(struct trace_writer *w, const struct trace *t, uint64_t hash);

/* Open an existing trace to append records after its last one (capture
 * adds STDERR and program sources once the program has exited; the caller
 * checks first that its last record is whole).  0 or -1 with err.  Blobs
 * already in the file are not known to w. */
int tw_open_append(struct trace_writer *w, const char *path, struct strbuf *err);

/*
 * Append bytes that are already whole framed records (copied from another
 * trace: a capture carrying records into its next segment), counting
 * `nrec` records.  Returns 0 or -1 (w->failed set).
 */
int tw_append_raw(struct trace_writer *w, const void *data, size_t len, uint64_t nrec);
/* Tell w that a blob with this hash is in the file (written through
 * tw_append_raw), so tw_blob does not store it again. */
void tw_mark_blob(struct trace_writer *w, uint64_t hash);
/* Forget every blob written so far: the next tw_blob of any content
 * stores it again (capture: records after this point must not refer to
 * blobs before it, which a checkpoint may leave behind). */
void tw_forget_blobs(struct trace_writer *w);
/* 1 if w has stored (or been told of) a blob with this hash. */
int tw_has_blob(const struct trace_writer *w, uint64_t hash);

/* Encode a record's payload (no framing) into sb; used by tw_record and by
 * tests.  For a BLOB, its header fields only (the stored bytes follow
 * them on disk).  Returns 0, or -1 for a type this build does not know. */
int tr_encode(const struct tr_rec *r, struct strbuf *sb);

/*
 * Record constructors, one per type of trace/records.def but BLOB:
 * tw_alloc(w, &(struct tr_alloc){ .addr = a, .size = n, .kind = k }),
 * tw_h2d(w, &(struct tr_copy){ ... }), tw_launch(), tw_note(), ... write
 * one record of that type with those fields (tw_record's contract; fields
 * left out are 0, NULL strings are written as "").  Return the event
 * number or -1.
 */
/* tr_layout_<layout>: the struct of a layout, for what the table generates */
#define TR_TYPEDEF_(layout, tag) typedef struct tag tr_layout_##layout;
TR_LAYOUTS(TR_TYPEDEF_)
#undef TR_TYPEDEF_
#define TR_CTOR_DECL_0(layout, ctor)
#define TR_CTOR_DECL_1(layout, ctor) long tw_##ctor(struct trace_writer *w, const tr_layout_##layout *v);
#define TR_CTOR_DECL_(NAME, num, layout, ctor, rec) TR_CTOR_DECL_##rec(layout, ctor)
TR_RECORDS(TR_CTOR_DECL_)
#undef TR_CTOR_DECL_
#undef TR_CTOR_DECL_0
#undef TR_CTOR_DECL_1
/*
 * An H2D copy of `data` (c->size bytes): stores them as a blob (unless
 * this writer already did), sets the record's blob hash and writes it.
 * Returns the event number or -1.
 */
long tw_h2d_data(struct trace_writer *w, const struct tr_copy *c, const void *data);

uint64_t tr_hash(const void *data, size_t len);   /* XXH3-64 */
/* XXH3-64 of a whole trace file's bytes except the header's created_ns:
 * two writes of the same records hash alike (shrink's caches key on it). */
uint64_t tr_file_hash(const void *data, size_t len);

#endif
