/*
 * capture-nvrtc.h - `capture`'s side of the NVRTC shim (capture/shim/
 * nvrtc.c): the environment that preloads it, and the SOURCE records made
 * from its log once the program has exited (capture-nvrtc.c).
 */
#ifndef GPUREDUCE_CAPTURE_NVRTC_H
#define GPUREDUCE_CAPTURE_NVRTC_H

struct strbuf;

/* "LD_PRELOAD=..." and "GPUREDUCE_NVRTC_LOG=TRACE.nvrtc" into the two
 * buffers when the shim lies beside the capture library `lib` (and
 * GPUREDUCE_NO_NVRTC is not 1); both left empty otherwise.  Removes an
 * old log.  Returns 1 when set. */
int nvrtc_env(const char *lib, const char *trace, struct strbuf *preload, struct strbuf *logenv);
/* With append, add one SOURCE record (origin NVRTC) per distinct program
 * in trace's log to trace; remove the log either way.  Returns the number
 * of records, or -1 with err. */
int nvrtc_finish(const char *trace, int append, struct strbuf *err);

#endif
