/*
 * python.c - which Python line launched a kernel (see capture.h).
 *
 * The capture library never links libpython: a plain CUDA C program must not
 * need it, and the program's own interpreter is whatever version it is.  The
 * CPython C API is resolved once with dlsym(RTLD_DEFAULT); every symbol is
 * optional, and anything missing or failing gives fewer (or no) frames,
 * never a crash.  Only the stable API is used (3.9+: PyThreadState_GetFrame,
 * PyFrame_GetBack, PyFrame_GetCode), so nothing depends on frame layout.
 *
 * The walk runs only on a thread that holds the GIL (PyGILState_Check), so
 * calling into the interpreter is allowed there; a pending exception is
 * saved first and restored after, so the program sees no difference.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

#include "../common/strbuf.h"
#include "capture.h"

typedef void PyObject;   /* opaque here: only pointers pass through */

static struct {
	int (*IsInitialized)(void);
	int (*GILState_Check)(void);
	void *(*CurrentThreadState)(void);   /* unchecked: NULL when none */
	PyObject *(*GetFrame)(void *tstate); /* new reference */
	PyObject *(*GetBack)(PyObject *frame);
	PyObject *(*GetCode)(PyObject *frame);
	int (*GetLineNumber)(PyObject *frame);
	PyObject *(*GetAttrString)(PyObject *o, const char *name);
	const char *(*AsUTF8)(PyObject *s);
	void (*DecRef)(PyObject *o);
	void (*ErrFetch)(PyObject **t, PyObject **v, PyObject **tb);
	void (*ErrRestore)(PyObject *t, PyObject *v, PyObject *tb);
	void (*ErrClear)(void);
	int walkable;   /* everything needed for a walk was found */
} py;

static pthread_once_t py_once = PTHREAD_ONCE_INIT;

static void *sym(const char *name)
{
	return dlsym(RTLD_DEFAULT, name);
}

static void resolve(void)
{
	*(void **)&py.IsInitialized = sym("Py_IsInitialized");
	if (!py.IsInitialized)
		return;
	*(void **)&py.GILState_Check = sym("PyGILState_Check");
	/* The current thread state without the fatal error PyThreadState_Get
	 * raises when there is none: 3.13 name, then the older private one,
	 * then the GIL-state view of this thread. */
	*(void **)&py.CurrentThreadState = sym("PyThreadState_GetUnchecked");
	if (!py.CurrentThreadState)
		*(void **)&py.CurrentThreadState = sym("_PyThreadState_UncheckedGet");
	if (!py.CurrentThreadState)
		*(void **)&py.CurrentThreadState = sym("PyGILState_GetThisThreadState");
	*(void **)&py.GetFrame = sym("PyThreadState_GetFrame");
	*(void **)&py.GetBack = sym("PyFrame_GetBack");
	*(void **)&py.GetCode = sym("PyFrame_GetCode");
	*(void **)&py.GetLineNumber = sym("PyFrame_GetLineNumber");
	*(void **)&py.GetAttrString = sym("PyObject_GetAttrString");
	*(void **)&py.AsUTF8 = sym("PyUnicode_AsUTF8");
	*(void **)&py.DecRef = sym("Py_DecRef");
	*(void **)&py.ErrFetch = sym("PyErr_Fetch");
	*(void **)&py.ErrRestore = sym("PyErr_Restore");
	*(void **)&py.ErrClear = sym("PyErr_Clear");
	py.walkable = py.GILState_Check && py.CurrentThreadState && py.GetFrame &&
		py.GetBack && py.GetCode && py.GetLineNumber && py.GetAttrString &&
		py.AsUTF8 && py.DecRef && py.ErrFetch && py.ErrRestore && py.ErrClear;
}

static void decref(PyObject *o)
{
	if (o)
		py.DecRef(o);
}

/* Append code.<attr> as UTF-8 plus a NUL to store; returns its offset or -1. */
static long add_code_str(PyObject *code, const char *attr, struct strbuf *store)
{
	PyObject *s = py.GetAttrString(code, attr);
	const char *u;
	long off = -1;

	if (!s) {
		py.ErrClear();
		return -1;
	}
	u = py.AsUTF8(s);
	if (u) {
		off = (long)store->len;
		sb_add(store, u, strlen(u) + 1);
	} else {
		py.ErrClear();
	}
	decref(s);
	return off;
}

uint32_t cap_py_frames(struct tr_frame *frames, uint32_t max, uint32_t *n,
		       struct strbuf *store)
{
	PyObject *et = NULL, *ev = NULL, *etb = NULL, *frame;
	long file_off[CAP_PY_MAX_FRAMES], func_off[CAP_PY_MAX_FRAMES];
	void *tstate;
	uint32_t k = 0;

	*n = 0;
	pthread_once(&py_once, resolve);
	if (!py.IsInitialized || !py.IsInitialized() || !py.walkable)
		return TR_PY_NONE;
	if (py.GILState_Check() != 1)
		return TR_PY_NO_GIL;
	tstate = py.CurrentThreadState();
	if (!tstate)
		return TR_PY_NO_GIL;
	if (max > CAP_PY_MAX_FRAMES)
		max = CAP_PY_MAX_FRAMES;

	py.ErrFetch(&et, &ev, &etb);
	frame = max ? py.GetFrame(tstate) : NULL;
	while (frame && k < max) {
		PyObject *code = py.GetCode(frame), *back;
		if (code) {
			file_off[k] = add_code_str(code, "co_filename", store);
			func_off[k] = add_code_str(code, "co_qualname", store);  /* 3.11+ */
			if (func_off[k] < 0)
				func_off[k] = add_code_str(code, "co_name", store);
			frames[k].line = (uint32_t)py.GetLineNumber(frame);
			decref(code);
			k++;
		}
		back = py.GetBack(frame);
		decref(frame);
		frame = back;
	}
	decref(frame);
	py.ErrClear();
	py.ErrRestore(et, ev, etb);

	/* store may have moved while growing: point into it only now. */
	for (uint32_t i = 0; i < k; i++) {
		frames[i].file = file_off[i] >= 0 ? store->buf + file_off[i] : "?";
		frames[i].func = func_off[i] >= 0 ? store->buf + func_off[i] : "?";
	}
	*n = k;
	return TR_PY_FRAMES;
}
