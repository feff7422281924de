/*
 * emit-source.h - a kernel's own source for repro.cu and the report
 * (issue 24): the SOURCE record of the captured trace that belongs to a
 * launch (Triton/Inductor by kernel name; NVRTC and extension programs by
 * a __global__ of that name in their text), or else the source file its
 * line info or the program's stderr names (nvcc -lineinfo/-G, a device
 * assert), read when the repro is written; the faulting line when known;
 * the parameter names the source gives.
 */
#ifndef GPUREDUCE_EMIT_SOURCE_H
#define GPUREDUCE_EMIT_SOURCE_H

#include <stdint.h>

struct strbuf;
struct trace;
struct tr_launch;

/* origin of a source found beside the captured program when the repro is
 * written (emit_source_find), not a trace origin (enum tr_src_origin) */
#define EMIT_SRC_BESIDE 0x100

struct emit_src {
	int origin;              /* enum tr_src_origin, or EMIT_SRC_BESIDE */
	char *kernel;            /* the kernel's name as the source has it */
	char *path;              /* the file, "" when none */
	char *text;              /* the source (owned) */
	char *version, *constexpr_, *function;
	uint32_t first_line;     /* line of text's first line in path (1 when unknown) */
	uint32_t fault_line;     /* line in path marked as faulting, 0 unknown */
	uint32_t def_line;       /* line in path where the kernel is defined, 0 unknown */
	char *fault_why;         /* where fault_line came from ("device assert", "line info") */
	char *fault_text;        /* the assert's own words ("Assertion `...` failed."), or NULL */
	char **params, **types;  /* the launch's parameter names in order, and their types */
	uint32_t nparams, ntypes;
	uint32_t launch_params;  /* parameters the binary has (LAUNCH nparams) */
	int has_ptx;             /* a PTX SOURCE exists for the kernel */
};

/*
 * The source of launch l.  orig: the captured trace (SOURCE, STDERR and
 * PROCESS records); hints: text naming "file:line" places (the diagnosis,
 * a repro's output; may be NULL).  NULL when nothing is known.
 */
struct emit_src *emit_source_find(const struct trace *orig, const struct tr_launch *l, const char *hints);
void emit_source_free(struct emit_src *s);

/* A C comment block (lines prefixed by `indent`): the origin, the source
 * with the faulting line marked ">>", at most ~120 lines around it. */
void emit_source_block(struct strbuf *o, const struct emit_src *s, const char *indent);
/* "`x_ptr` (*fp32)" for parameter p when the source names it; else the
 * C++ type (may be NULL) or "?". */
void emit_source_param(struct strbuf *o, const struct emit_src *s, uint32_t p, const char *cxx_type);
/* A C type for formatting parameter p's value ("float", "int", "unsigned"),
 * from a Triton type; cxx_type when given; "" when unknown. */
const char *emit_source_ctype(const struct emit_src *s, uint32_t p, const char *cxx_type);
/* Origin name: "Triton", "Inductor (torch.compile)", "NVRTC", ... */
const char *emit_source_origin(int origin);
/* The first "FILE:LINE" (FILE ending .py .cu .cuh .cpp .c .h) in text, and
 * the rest of that line; 0 when none. */
int emit_source_site(const char *text, char *file, size_t nfile, uint32_t *line, const char **rest);

/* Where a kernel's source is, when it is not on this machine: the place
 * its fault names (hints' line info, else a device assert on the
 * program's stderr) and, for a PyTorch file, its URL in PyTorch's
 * repository at the commit (ENV torch_git) or release tag of the captured
 * torch.  emit_source_elsewhere: 1 with *e filled, 0 when no place is
 * named. */
struct emit_elsewhere {
	char *file;              /* the place as named ("/pytorch/aten/src/...cu") */
	uint32_t line;
	const char *why;         /* "the device assert", "the fault's location (line info)" */
	const char *project;     /* "PyTorch", or NULL */
	char *version;           /* the captured torch's version, or NULL */
	char *url;               /* the line upstream at its commit or tag, or NULL */
};
int emit_source_elsewhere(const struct trace *orig, const char *hints, struct emit_elsewhere *e);
void emit_elsewhere_free(struct emit_elsewhere *e);
/* A C comment block saying so (lines prefixed by `indent`). */
void emit_elsewhere_block(struct strbuf *o, const struct emit_elsewhere *e, const char *indent);

/* When orig holds the PTX of a kernel the cubin img defines: emit it
 * (globals) and a load of module k (body) that JIT-compiles it when the
 * cubin does not load (another GPU generation) or GPUREDUCE_REPRO_PTX=1
 * is set; returns 1.  0: nothing emitted (the caller loads the cubin). */
int emit_source_ptx_load(struct strbuf *globals, struct strbuf *body, const struct trace *orig,
			 const void *img, size_t len, int k, const char *expr);

#endif
