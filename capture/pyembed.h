/*
 * pyembed.h - the few CPython C API calls capture makes to run its own
 * small Python helpers inside the traced interpreter (source.c: versions
 * and Triton sources; torchmem.c: PyTorch's allocator blocks).  The
 * library never links libpython: the API is resolved once with
 * dlsym(RTLD_DEFAULT), and a process without Python simply has none.
 * (python.c reads frames with its own, larger table.)
 */
#ifndef GPUREDUCE_CAPTURE_PYEMBED_H
#define GPUREDUCE_CAPTURE_PYEMBED_H

#include "../common/strbuf.h"

typedef struct _object PyObject;

/* CPython's PyMethodDef, for a C function Python can call (torchmem.c's
 * atexit callback). */
struct cap_py_method {
	const char *name;
	PyObject *(*meth)(PyObject *, PyObject *);
	int flags;
	const char *doc;
};

struct cap_py {
	int (*IsInitialized)(void);
	int (*IsFinalizing)(void);
	int (*Ensure)(void);
	void (*Release)(int);
	PyObject *(*Compile)(const char *, const char *, int);
	PyObject *(*CompileEx)(const char *, const char *, int, void *, int);
	PyObject *(*EvalCode)(PyObject *, PyObject *, PyObject *);
	PyObject *(*DictNew)(void);
	int (*DictSetItemString)(PyObject *, const char *, PyObject *);
	PyObject *(*DictGetItemString)(PyObject *, const char *);
	PyObject *(*GetBuiltins)(void);
	PyObject *(*CallObject)(PyObject *, PyObject *);
	int (*BytesAsStringAndSize)(PyObject *, char **, long *);
	const char *(*AsUTF8)(PyObject *);   /* may be NULL: check before use */
	void (*DecRef)(PyObject *);
	void (*ErrClear)(void);
	/* may be NULL: check before use */
	PyObject *(*CallFunction)(PyObject *, const char *, ...);
	void (*IncRef)(PyObject *);
	PyObject *None;          /* &_Py_NoneStruct */
	PyObject *(*CFunctionNewEx)(struct cap_py_method *, PyObject *, PyObject *);
};

/* The table; valid once cap_py_resolve() returned 1. */
extern struct cap_py cap_py;

/* Resolve the table (once per process, thread-safe).  1 when every entry
 * the helpers need is there (AsUTF8 aside), else 0. */
int cap_py_resolve(void);

/* 1 when the table is resolved and the interpreter is initialised and
 * not finalising: only then may the GIL be taken. */
int cap_py_ready(void);

/* With the GIL: run `src` as a module named `filename` in a new namespace
 * and return that namespace (a new reference the caller keeps), or NULL
 * with the Python error cleared. */
PyObject *cap_py_module(const char *src, const char *filename);

/* With the GIL: call ns[name]() and append the bytes it returns to out.
 * 0, or -1 (nothing appended; not callable, raised, or not bytes). */
int cap_py_call_bytes(PyObject *ns, const char *name, struct strbuf *out);

#endif
