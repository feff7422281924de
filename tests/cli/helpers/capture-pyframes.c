/*
 * capture-pyframes.c - test helper for capture/python.c (the Python frame
 * walker of the capture library), built by t1003-capture-python.sh.
 *
 * Built as a shared object, Python loads it with ctypes and calls
 * pyframes_dump(buf, len): it runs cap_py_frames() exactly as a launch
 * callback would and writes "STATE N" then one "FILE:LINE:FUNC" line per
 * frame into buf.  Through ctypes.PyDLL the caller holds the GIL (frames);
 * through ctypes.CDLL ctypes releases it first (STATE is no-gil).
 * Built with -DPYFRAMES_MAIN it is a plain C program that prints the same
 * for itself: no CPython in the process, so STATE is none.
 */
#include <stdio.h>
#include <string.h>

#include "../../../common/strbuf.h"
#include "../../../capture/capture.h"

__attribute__((visibility("default"))) int pyframes_dump(char *buf, int len, int max)
{
	struct tr_frame frames[CAP_PY_MAX_FRAMES];
	struct strbuf store = STRBUF_INIT, out = STRBUF_INIT;
	uint32_t n = 0, st = cap_py_frames(frames, (uint32_t)max, &n, &store);

	sb_addf(&out, "%s %u\n", st == TR_PY_FRAMES ? "frames" : st == TR_PY_NO_GIL ? "no-gil" :
		st == TR_PY_NONE ? "none" : "?", n);
	for (uint32_t i = 0; i < n; i++)
		sb_addf(&out, "%s:%u:%s\n", frames[i].file, frames[i].line, frames[i].func);
	snprintf(buf, (size_t)len, "%s", out.buf);
	sb_release(&store);
	sb_release(&out);
	return (int)st;
}

#ifdef PYFRAMES_MAIN
int main(void)
{
	char buf[4096];
	pyframes_dump(buf, sizeof(buf), 8);
	fputs(buf, stdout);
	return 0;
}
#endif
