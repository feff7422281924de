/*
 * diagnose.h - explain a fault in the kernel's own terms.
 *
 * Runs a reduced trace once under compute-sanitizer (through `gpureduce
 * replay`, so the GPU is still only touched by a replay worker, which prints
 * where each buffer landed) and maps the sanitizer's first report back to
 * the launch's parameters: "write of 4 bytes by thread (232,0,0) of block
 * (3,0,0) at scale(...)+0x90: 4 bytes past the end of param 0 `float *out`
 * (a 4000-byte buffer)".  The parsing half is pure and unit-tested.
 */
#ifndef GPUREDUCE_DIAGNOSE_H
#define GPUREDUCE_DIAGNOSE_H

#include <stddef.h>

struct strbuf;
struct trace;

/* Find compute-sanitizer ($GPUREDUCE_SANITIZER, PATH, /usr/local/cuda/bin);
 * NULL when absent.  Returns a static buffer. */
const char *diagnose_find_sanitizer(void);

/* Run and explain.  0 with one line in out; -1 with err (no sanitizer,
 * sanitizer saw nothing...). */
int diagnose_trace(const struct trace *red, const char *bin_path, int guard, struct strbuf *out,
		   struct strbuf *err);

/* Explain sanitizer output (with the side channel's lines mixed in, see
 * replay/sidechan.h) against the reduced trace's last launch.  0 with one
 * line in out, or -1 when the output holds no recognised report. */
int diagnose_explain(const char *output, const struct trace *red, struct strbuf *out);

/* Run the trace once under compute-sanitizer; its output goes to out.
 * kernel (or NULL): a bare kernel name (diagnose_kernel_filter); where the
 * sanitizer can, only kernels whose names hold it are checked.  0, or -1
 * with err (no sanitizer, time-out). */
int diagnose_run(const char *bin_path, int guard, const char *kernel, struct strbuf *out,
		 struct strbuf *err);
/* The same, in the background: output goes to out_path; collect it with
 * diagnose_collect (which waits at most `timeout` seconds). */
struct child;
int diagnose_start(const char *bin_path, int guard, const char *kernel, const char *out_path,
		   struct child *c, struct strbuf *err);
/* The record index of trace t's last launch (the fault's, in a trace cut
 * at it) and in *launches how many t holds; -1 when it holds none, or a
 * graph launch (whose nodes may be what faulted, after that launch). */
long diagnose_last_launch(const struct trace *t, size_t *launches);
/* The bare name of trace t's last kernel (its fault's, in a trace cut at
 * it) into out, for diagnose_run: 1, or 0 when the whole trace is better
 * checked (one launch only, a graph launch whose nodes may be the ones
 * that fault, a name that is not a plain identifier). */
int diagnose_kernel_filter(const struct trace *t, char *out, size_t n);
int diagnose_collect(struct child *c, const char *out_path, double timeout, struct strbuf *out,
		     int *early, struct strbuf *err);
/* How many reports in a sanitizer run's output are complete (closed by a
 * bare "=========" line).  diagnose_collect stops a run (*early = 1) once
 * it has printed as many as its print limit lets it. */
int diagnose_complete_reports(const char *output);
/* The error's site, independent of grid size ("global write of 4 bytes at
 * scale(...)+0x190"), and where the address lies in terms of the launch's
 * parameters in trace t: "; past the end of param 0 `float*`", "; a wild
 * address", "; inside param 1 ... (a FREED buffer)", "; a null pointer",
 * "; outside shared memory".  Two runs fail the same way when these match:
 * a reduction that turns a wild index into an overrun of a shrunk buffer
 * keeps the PC but not this.  0, or -1 when the output holds no report. */
int diagnose_site_rel(const char *output, const struct trace *t, char *site, size_t n);
/* Every distinct site (as diagnose_site_rel) among all the reports of one
 * run, " | "-joined in order of appearance into sites (n bytes).  Returns
 * how many; 0 when none. */
int diagnose_sites_all(const char *output, const struct trace *t, char *sites, size_t n);
/* How many reports compute-sanitizer prints per run (default 1). */
void diagnose_set_print_limit(int n);

/* diagnose-tmap.c: when the faulting (last) launch of red holds recorded
 * TMA tensor maps, append to out the sanitizer's error and site from
 * output, and for each map its parameter, buffer, geometry and the bytes
 * it spans against the buffer's size; returns 1, or 0 (nothing appended)
 * when the launch holds no recorded map. */
int diagnose_tmap_explain(const char *output, const struct trace *red, struct strbuf *out);

#endif
