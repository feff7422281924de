/*
 * pyembed.c - the CPython API table capture's Python helpers share
 * (pyembed.h): resolved once with dlsym, so the capture library loads in
 * any process and uses Python only where the traced program has one.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>

#include "pyembed.h"

struct cap_py cap_py;

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static int g_resolved;

static void *sym(const char *name)
{
	return dlsym(RTLD_DEFAULT, name);
}

static void resolve(void)
{
	struct cap_py *p = &cap_py;
	*(void **)&p->IsInitialized = sym("Py_IsInitialized");
	*(void **)&p->IsFinalizing = sym("Py_IsFinalizing");
	if (!p->IsFinalizing)
		*(void **)&p->IsFinalizing = sym("_Py_IsFinalizing");
	*(void **)&p->Ensure = sym("PyGILState_Ensure");
	*(void **)&p->Release = sym("PyGILState_Release");
	*(void **)&p->Compile = sym("Py_CompileString");
	*(void **)&p->CompileEx = sym("Py_CompileStringExFlags");   /* where the above is a macro */
	*(void **)&p->EvalCode = sym("PyEval_EvalCode");
	*(void **)&p->DictNew = sym("PyDict_New");
	*(void **)&p->DictSetItemString = sym("PyDict_SetItemString");
	*(void **)&p->DictGetItemString = sym("PyDict_GetItemString");
	*(void **)&p->GetBuiltins = sym("PyEval_GetBuiltins");
	*(void **)&p->CallObject = sym("PyObject_CallObject");
	*(void **)&p->BytesAsStringAndSize = sym("PyBytes_AsStringAndSize");
	*(void **)&p->AsUTF8 = sym("PyUnicode_AsUTF8");
	*(void **)&p->DecRef = sym("Py_DecRef");
	*(void **)&p->ErrClear = sym("PyErr_Clear");
	*(void **)&p->CallFunction = sym("PyObject_CallFunction");
	*(void **)&p->IncRef = sym("Py_IncRef");
	p->None = sym("_Py_NoneStruct");
	*(void **)&p->CFunctionNewEx = sym("PyCFunction_NewEx");
	g_resolved = p->IsInitialized && p->Ensure && p->Release && (p->Compile || p->CompileEx) &&
		     p->EvalCode && p->DictNew && p->DictSetItemString && p->DictGetItemString &&
		     p->GetBuiltins && p->CallObject && p->BytesAsStringAndSize && p->DecRef && p->ErrClear;
}

int cap_py_resolve(void)
{
	pthread_once(&g_once, resolve);
	return g_resolved;
}

int cap_py_ready(void)
{
	return cap_py_resolve() && cap_py.IsInitialized() && !(cap_py.IsFinalizing && cap_py.IsFinalizing());
}

PyObject *cap_py_module(const char *src, const char *filename)
{
	PyObject *ns, *code, *res;

	ns = cap_py.DictNew();
	if (!ns)
		goto fail;
	cap_py.DictSetItemString(ns, "__builtins__", cap_py.GetBuiltins());
	cap_py.ErrClear();
	code = cap_py.Compile ? cap_py.Compile(src, filename, 257 /* Py_file_input */)
			      : cap_py.CompileEx(src, filename, 257, NULL, -1);
	if (!code)
		goto fail;
	res = cap_py.EvalCode(code, ns, ns);
	cap_py.DecRef(code);
	if (!res)
		goto fail;
	cap_py.DecRef(res);
	return ns;
fail:
	if (ns)
		cap_py.DecRef(ns);
	cap_py.ErrClear();
	return NULL;
}

int cap_py_call_bytes(PyObject *ns, const char *name, struct strbuf *out)
{
	PyObject *fn, *res;
	char *buf;
	long n;
	int ret = -1;

	fn = ns ? cap_py.DictGetItemString(ns, name) : NULL;   /* borrowed */
	res = fn ? cap_py.CallObject(fn, NULL) : NULL;
	if (res && cap_py.BytesAsStringAndSize(res, &buf, &n) == 0) {
		sb_add(out, buf, (size_t)n);
		ret = 0;
	}
	if (res)
		cap_py.DecRef(res);
	cap_py.ErrClear();
	return ret;
}
