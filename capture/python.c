/*
 * python.c - which Python line launched a kernel (see capture.h).
 *
 * The capture library never links libpython: a plain CUDA C program must not
 * need it, and the program's own interpreter is whatever version it is.  The
 * CPython C API is resolved once with dlsym(RTLD_DEFAULT); every symbol is
 * optional, and anything missing or failing gives fewer (or no) frames,
 * never a crash.
 *
 * The launching thread almost never holds the GIL: PyTorch's bindings and
 * Triton's launcher release it before calling into CUDA.  So the frames are
 * READ, the way py-spy and austin read them, without calling anything that
 * allocates, touches a reference count or needs the GIL: this thread's
 * PyThreadState (PyGILState_GetThisThreadState, a thread-local lookup) ->
 * its innermost frame -> (code object, previous frame, instruction).  That
 * is safe because the thread is blocked inside a C call (our callback), so
 * its own frames cannot change, and no other thread pops them.  The line
 * comes from PyCode_Addr2Line (3.11+) or PyFrame_GetLineNumber (3.9/3.10),
 * both read-only in those versions (checked by disassembly); names are
 * decoded from the code object's str objects' own data, never through
 * PyUnicode_AsUTF8.
 *
 * Those structures are private and differ per version, so the layout (the
 * offsets of the few fields read) is taken from a table for the x86-64/
 * aarch64 release builds of 3.9-3.13 (each checked against that version's
 * headers and interpreter here), and CALIBRATED at run time the first time
 * some callback (or InitializeInjection) runs on a thread that holds the
 * GIL: there the stable API (PyThreadState_GetFrame, PyFrame_GetBack,
 * PyFrame_GetCode, PyFrame_GetLineNumber, PyFrame_GetLasti) gives the true
 * stack, the table is checked against it, and if it does not reproduce it
 * exactly the offsets are searched for.  Until then the table is used with
 * every structural check below; a layout that never validates is dropped.
 *
 * Every read is of a pointer that is non-NULL, aligned and on a page known
 * readable (capture/hostmem.c probes each page once; pages that passed are
 * remembered: a page that held a live interpreter structure stays mapped
 * while a live stack still leads to it), every loop is bounded and a frame
 * seen twice is a failure.  A frame object must have PyFrame_Type, a code
 * object PyCode_Type, a string PyUnicode_Type, an instruction must lie in
 * its code.  Anything that does not fit gives no frames (TR_PY_NO_GIL, or
 * the API walk when the GIL is held), never a crash.  While the interpreter
 * finalizes, other threads' states are freed: nothing is read then.
 *
 * Decoded (file, function) strings are cached per code object, keyed on the
 * object's address AND its filename, name and first-line fields (a freed
 * code object's address may be reused), lines per (code, instruction); both
 * caches and the readable pages are 4-way set associative.  A walk of 8
 * frames costs about 0.25 us once warm (t1002 prints it).
 *
 * GPUREDUCE_PY_WALK selects the method: auto (default, as above), table
 * (never calibrate), search (calibrate without the table's help; nothing
 * read before that), api (the old walk through the API, GIL holders only).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/strbuf.h"
#include "../common/util.h"
#include "capture.h"

typedef void PyObject;   /* opaque here: only pointers pass through */

enum {
	TRUTH_MAX = 32,      /* frames of the true stack a calibration compares */
	CAL_TRIES = 16,      /* failed calibrations before the reader is dropped */
	SCAN_TS = 512,       /* bytes of PyThreadState searched for the frame pointer */
	SCAN_FR = 128,       /* bytes of a frame searched for its fields */
	SCAN_CO = 256,       /* bytes of a code object searched for its fields */
	MAX_CHARS = 4096,    /* longest file or function name decoded */
	MAX_STEPS = 4 * CAP_PY_MAX_FRAMES + 16,   /* frames visited, skipped included */
	WAYS = 4,            /* both caches are 4-way set associative */
	CODE_SETS = 256,     /* code objects remembered: CODE_SETS * WAYS */
	LINE_SLOTS = 8,      /* lines remembered per code object */
	PAGE_SETS = 256,     /* pages known readable: PAGE_SETS * WAYS */
	OWNED_BY_GENERATOR = 1,
	OWNED_BY_CSTACK = 3, /* 3.12+: the eval loop's entry (shim) frame */
};

enum walk_mode { MODE_AUTO, MODE_TABLE, MODE_SEARCH, MODE_API };

/* Where the fields the reader needs are.  -1: not there in this version. */
struct layout {
	int iframe;        /* 1: _PyInterpreterFrame chain (3.11+); 0: PyFrameObject chain */
	int ts_frame;      /* in PyThreadState: the frame pointer, or the _PyCFrame pointer */
	int cf_frame;      /* in _PyCFrame: current_frame; -1: ts_frame is the frame itself */
	int fr_code;       /* f_code / f_executable */
	int fr_prev;       /* previous / f_back */
	int fr_instr;      /* prev_instr / instr_ptr (3.11+) */
	int fr_owner;      /* owner byte (3.11+) */
	int shims;         /* 1: frames owned by the C stack exist and are skipped (3.12+) */
	int code_units;    /* first code unit in a code object (3.11+: tp_basicsize) */
	int co_file;       /* co_filename */
	int co_name;       /* co_qualname (3.11+) or co_name */
	int co_firstline;  /* co_firstlineno (int): cache key only */
	int co_firsttrace; /* _co_firsttraceable (int, 3.11+): before it a frame is incomplete */
	int uni_ascii;     /* data of a compact ASCII str (sizeof(PyASCIIObject)) */
	int uni_compact;   /* data of another compact str (sizeof(PyCompactUnicodeObject)) */
	uintptr_t tag;     /* low bits of the code pointer that are tags (3.14 stack refs) */
};

/* Release builds, 64-bit, from each version's headers (offsetof), checked
 * against 3.9.18, 3.10.13, 3.11.2/3.11.7, 3.12.1, 3.13.0 on x86-64. */
static const struct layout table_39 = {
	.iframe = 0, .ts_frame = 24, .cf_frame = -1, .fr_code = 32, .fr_prev = 24,
	.fr_instr = -1, .fr_owner = -1, .shims = 0, .code_units = -1,
	.co_file = 104, .co_name = 112, .co_firstline = 40, .co_firsttrace = -1,
	.uni_ascii = 48, .uni_compact = 72,
};
static const struct layout table_311 = {
	.iframe = 1, .ts_frame = 56, .cf_frame = 8, .fr_code = 32, .fr_prev = 48,
	.fr_instr = 56, .fr_owner = 69, .shims = 0, .code_units = 184,
	.co_file = 112, .co_name = 128, .co_firstline = 72, .co_firsttrace = 168,
	.uni_ascii = 48, .uni_compact = 72,
};
static const struct layout table_312 = {
	.iframe = 1, .ts_frame = 56, .cf_frame = 0, .fr_code = 0, .fr_prev = 8,
	.fr_instr = 56, .fr_owner = 70, .shims = 1, .code_units = 192,
	.co_file = 112, .co_name = 128, .co_firstline = 68, .co_firsttrace = 176,
	.uni_ascii = 40, .uni_compact = 56,
};
static const struct layout table_313 = {
	.iframe = 1, .ts_frame = 72, .cf_frame = -1, .fr_code = 0, .fr_prev = 8,
	.fr_instr = 56, .fr_owner = 70, .shims = 1, .code_units = 200,
	.co_file = 112, .co_name = 128, .co_firstline = 68, .co_firsttrace = 184,
	.uni_ascii = 40, .uni_compact = 56,
};

static struct {
	int (*IsInitialized)(void);
	int (*IsFinalizing)(void);
	int (*GILState_Check)(void);
	void *(*CurrentThreadState)(void);   /* unchecked: NULL when none */
	void *(*ThisThreadState)(void);      /* the thread's own, GIL or not */
	PyObject *(*GetFrame)(void *tstate); /* new reference */
	PyObject *(*GetBack)(PyObject *frame);
	PyObject *(*GetCode)(PyObject *frame);
	int (*GetLineNumber)(PyObject *frame);
	int (*GetLasti)(PyObject *frame);    /* 3.11+ */
	int (*Addr2Line)(PyObject *code, int byte_offset);
	PyObject *(*GetAttrString)(PyObject *o, const char *name);
	const char *(*AsUTF8)(PyObject *s);
	PyObject *(*FromString)(const char *s);
	long (*AsLong)(PyObject *o);
	void (*DecRef)(PyObject *o);
	void (*ErrFetch)(PyObject **t, PyObject **v, PyObject **tb);
	void (*ErrRestore)(PyObject *t, PyObject *v, PyObject *tb);
	void (*ErrClear)(void);
	uintptr_t code_type, frame_type, str_type;   /* &PyCode_Type, ... */
	int minor;          /* 3.minor of the interpreter; 0 unknown */
	int mode;           /* enum walk_mode */
	int api_walkable;   /* everything the API walk needs was found */
	int can_read;       /* everything the reader needs was found */
	int can_calibrate;  /* ... and calibration */
	const struct layout *table;   /* this version's, or NULL */
	uintptr_t pagesize;
} py;

static pthread_once_t py_once = PTHREAD_ONCE_INIT;

/* The reader's state.  g_layout is read without the lock (acquire); it
 * points at py.table, at g_cal (immutable once published) or is NULL. */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static const struct layout *g_layout;
static const char *g_source = "none";
static struct layout g_cal;
static int g_cal_done;        /* 1: calibrated or given up */
static int g_cal_fails;
static int g_cal_busy;        /* one calibration at a time */
static __thread int t_in_cal; /* no calibration from inside one (GC callbacks) */

struct code_ent {
	uintptr_t code, file_obj, name_obj;
	int firstline;
	char *file, *name;        /* NULL: not decodable, written "?" */
	uint64_t serial;          /* this entry's (file, name): never reused (cap_py_frames' tokens) */
	int lasti[LINE_SLOTS], line[LINE_SLOTS];
	unsigned next;
};
static struct code_ent g_codes[CODE_SETS][WAYS];
static unsigned g_codes_next[CODE_SETS];
static uint64_t g_code_serial;   /* the last entry's serial (under g_lock) */
static uintptr_t g_page[PAGE_SETS][WAYS];   /* page number + 1; 0 empty */
static unsigned g_page_next[PAGE_SETS];

/* ---- resolving ------------------------------------------------------------ */

static void *sym(const char *name)
{
	return dlsym(RTLD_DEFAULT, name);
}

/* In the child only this thread exists; another may have been changing
 * the cache at the fork: forget it (leaking its strings) rather than free. */
static void child_after_fork(void)
{
	pthread_mutex_init(&g_lock, NULL);
	memset(g_codes, 0, sizeof(g_codes));
	g_cal_busy = 0;
}

static int parse_minor(void)
{
	const unsigned long *hex = sym("Py_Version");   /* 3.11+ */
	const char *(*get)(void);
	const char *v;

	if (hex)
		return (*hex >> 24) == 3 ? (int)((*hex >> 16) & 0xff) : 0;
	*(void **)&get = sym("Py_GetVersion");
	v = get ? get() : NULL;
	if (!v || v[0] != '3' || v[1] != '.')
		return 0;
	return (int)strtol(v + 2, NULL, 10);
}

static void resolve(void)
{
	const char *mode = getenv("GPUREDUCE_PY_WALK");
	long ps = sysconf(_SC_PAGESIZE);

	py.pagesize = ps > 0 ? (uintptr_t)ps : 4096;
	py.mode = !mode || !*mode || !strcmp(mode, "auto") ? MODE_AUTO :
		  !strcmp(mode, "table") ? MODE_TABLE : !strcmp(mode, "search") ? MODE_SEARCH :
		  !strcmp(mode, "api") ? MODE_API : MODE_AUTO;
	*(void **)&py.IsInitialized = sym("Py_IsInitialized");
	if (!py.IsInitialized)
		return;
	*(void **)&py.IsFinalizing = sym("Py_IsFinalizing");          /* 3.13 */
	if (!py.IsFinalizing)
		*(void **)&py.IsFinalizing = sym("_Py_IsFinalizing");
	*(void **)&py.GILState_Check = sym("PyGILState_Check");
	/* The current thread state without the fatal error PyThreadState_Get
	 * raises when there is none (valid with the GIL only: before 3.12 it
	 * is a process-wide variable). */
	*(void **)&py.CurrentThreadState = sym("PyThreadState_GetUnchecked");
	if (!py.CurrentThreadState)
		*(void **)&py.CurrentThreadState = sym("_PyThreadState_UncheckedGet");
	*(void **)&py.ThisThreadState = sym("PyGILState_GetThisThreadState");
	if (!py.CurrentThreadState)
		py.CurrentThreadState = py.ThisThreadState;
	*(void **)&py.GetFrame = sym("PyThreadState_GetFrame");
	*(void **)&py.GetBack = sym("PyFrame_GetBack");
	*(void **)&py.GetCode = sym("PyFrame_GetCode");
	*(void **)&py.GetLineNumber = sym("PyFrame_GetLineNumber");
	*(void **)&py.GetLasti = sym("PyFrame_GetLasti");
	*(void **)&py.Addr2Line = sym("PyCode_Addr2Line");
	*(void **)&py.GetAttrString = sym("PyObject_GetAttrString");
	*(void **)&py.AsUTF8 = sym("PyUnicode_AsUTF8");
	*(void **)&py.FromString = sym("PyUnicode_FromString");
	*(void **)&py.AsLong = sym("PyLong_AsLong");
	*(void **)&py.DecRef = sym("Py_DecRef");
	*(void **)&py.ErrFetch = sym("PyErr_Fetch");
	*(void **)&py.ErrRestore = sym("PyErr_Restore");
	*(void **)&py.ErrClear = sym("PyErr_Clear");
	py.code_type = (uintptr_t)sym("PyCode_Type");
	py.frame_type = (uintptr_t)sym("PyFrame_Type");
	py.str_type = (uintptr_t)sym("PyUnicode_Type");
	py.minor = parse_minor();
	py.api_walkable = py.GILState_Check && py.CurrentThreadState && py.GetFrame &&
		py.GetBack && py.GetCode && py.GetLineNumber && py.GetAttrString &&
		py.AsUTF8 && py.DecRef && py.ErrFetch && py.ErrRestore && py.ErrClear;
	py.can_read = sizeof(void *) == 8 && py.ThisThreadState && py.code_type &&
		py.str_type && py.minor >= 9 &&
		(py.minor >= 11 ? py.Addr2Line != NULL : py.frame_type && py.GetLineNumber);
	py.can_calibrate = py.can_read && py.api_walkable && py.FromString && py.AsLong &&
		(py.minor < 11 || py.GetLasti);
	if (py.minor == 9 || py.minor == 10)
		py.table = &table_39;
	else if (py.minor == 11)
		py.table = &table_311;
	else if (py.minor == 12)
		py.table = &table_312;
	else if (py.minor == 13)
		py.table = &table_313;
	/* The table must agree with what the interpreter says about itself. */
	if (py.table && py.table->iframe && py.code_type &&
	    *(const intptr_t *)(py.code_type + 32) != py.table->code_units)   /* tp_basicsize */
		py.table = NULL;
	if (py.can_read && py.table && (py.mode == MODE_AUTO || py.mode == MODE_TABLE)) {
		g_layout = py.table;
		g_source = "table";
	}
	if (py.mode == MODE_API || py.mode == MODE_TABLE || !py.can_calibrate)
		g_cal_done = 1;
	pthread_atfork(NULL, NULL, child_after_fork);
}

/* ---- reading memory -------------------------------------------------------- */

/*
 * Reads of the interpreter's memory, at addresses readable() passed.  Not
 * instrumented by AddressSanitizer (make SAN=1): a candidate pointer tried
 * by calibration may lie in ASan's own shadow, readable, yet fatal to an
 * instrumented load; and a search may read past a malloc'd PyThreadState.
 */
#define RAW __attribute__((no_sanitize_address))
typedef uintptr_t __attribute__((may_alias, aligned(1))) uword;
typedef int32_t __attribute__((may_alias, aligned(1))) ui32;

static RAW uintptr_t word(uintptr_t p, int off)
{
	return *(const volatile uword *)(p + (uintptr_t)off);
}

static RAW int i32(uintptr_t p, int off)
{
	return *(const volatile ui32 *)(p + (uintptr_t)off);
}

static RAW unsigned byte_at(uintptr_t p, int off)
{
	return *(const volatile unsigned char *)(p + (uintptr_t)off);
}

/* Character i of a str's data of this kind (1, 2 or 4 bytes). */
static RAW uint32_t str_char(uintptr_t data, unsigned kind, intptr_t i)
{
	if (kind == 1)
		return *(const volatile uint8_t *)(data + (uintptr_t)i);
	if (kind == 2)
		return *(const volatile uint16_t *)(data + 2 * (uintptr_t)i);
	return *(const volatile uint32_t *)(data + 4 * (uintptr_t)i);
}

/* 1 if n bytes at p (8-aligned, a user-space address) can be read.  Each page
 * is probed once through the kernel and then remembered: a page that held a
 * live interpreter structure once stays mapped while such a structure is
 * reached from a live stack.  g_lock held. */
static int readable(uintptr_t p, size_t n)
{
	uintptr_t pg, last;

	if ((p & 7) || p < 65536 || p >= ((uintptr_t)1 << 56) || p + n < p)
		return 0;
	for (pg = p / py.pagesize, last = (p + n - 1) / py.pagesize; pg <= last; pg++) {
		unsigned set = (unsigned)((pg * 0x9E3779B97F4A7C15ull) >> 56) % PAGE_SETS, w;
		for (w = 0; w < WAYS && g_page[set][w] != pg + 1; w++)
			;
		if (w < WAYS)
			continue;
		if (cap_host_readable((const void *)(pg * py.pagesize), 1) != 1)
			return 0;
		g_page[set][g_page_next[set]++ % WAYS] = pg + 1;
	}
	return 1;
}

static int max4(int a, int b, int c, int d)
{
	int m = a > b ? a : b;
	m = m > c ? m : c;
	return m > d ? m : d;
}

/* Bytes of a frame the layout reads. */
static size_t frame_span(const struct layout *L)
{
	/* PyFrame_GetLineNumber reads f_trace/f_lasti/f_lineno (< 112) too. */
	if (!L->iframe)
		return (size_t)max4(L->fr_code, L->fr_prev, 112, 0) + 8;
	return (size_t)max4(L->fr_code, L->fr_prev, L->fr_instr, L->fr_owner) + 8;
}

static size_t code_span(const struct layout *L)
{
	return (size_t)max4(L->co_file, L->co_name, L->co_firstline, L->co_firsttrace) + 8;
}

/* p is a readable code object (checked each time: one compare). */
static int is_code(const struct layout *L, uintptr_t p)
{
	return readable(p, code_span(L)) && word(p, 8) == py.code_type;
}

/* A copy (UTF-8, malloc'd) of the str object at s, read from its own data;
 * NULL if s is not a compact str this layout can read.  g_lock held. */
static char *str_dup(const struct layout *L, uintptr_t s)
{
	unsigned state, kind;
	intptr_t len;
	uintptr_t data;
	char *out, *o;

	if (!readable(s, (size_t)L->uni_compact) || word(s, 8) != py.str_type)
		return NULL;
	len = (intptr_t)word(s, 16);
	state = (unsigned)i32(s, 32);   /* interned:2 kind:3 compact:1 ascii:1 */
	kind = (state >> 2) & 7;
	if (len < 0 || !(state & 0x20) || (kind != 1 && kind != 2 && kind != 4) ||
	    ((state & 0x40) && kind != 1))
		return NULL;
	if (len > MAX_CHARS)
		len = MAX_CHARS;
	data = s + (uintptr_t)((state & 0x40) ? L->uni_ascii : L->uni_compact);
	if (len && !readable(data & ~(uintptr_t)7, (size_t)len * kind + (data & 7)))
		return NULL;
	o = out = xmalloc((size_t)len * 4 + 1);
	for (intptr_t i = 0; i < len; i++) {
		uint32_t c = str_char(data, kind, i);
		if (c < 0x80) {
			*o++ = (char)c;
		} else if (c < 0x800) {
			*o++ = (char)(0xc0 | c >> 6);
			*o++ = (char)(0x80 | (c & 0x3f));
		} else if (c < 0x10000) {
			*o++ = (char)(0xe0 | c >> 12);
			*o++ = (char)(0x80 | ((c >> 6) & 0x3f));
			*o++ = (char)(0x80 | (c & 0x3f));
		} else if (c < 0x110000) {
			*o++ = (char)(0xf0 | c >> 18);
			*o++ = (char)(0x80 | ((c >> 12) & 0x3f));
			*o++ = (char)(0x80 | ((c >> 6) & 0x3f));
			*o++ = (char)(0x80 | (c & 0x3f));
		} else {
			*o++ = '?';
		}
	}
	*o = 0;
	return out;
}

/* ---- the reader ------------------------------------------------------------- */

struct raw {
	uintptr_t code;
	int lasti;   /* code units (3.11+) */
	int line;    /* known already (3.9/3.10), else -1 */
};

/* The innermost frame of thread state ts, or 0 (none) or 1 (unreadable). */
static uintptr_t first_frame(const struct layout *L, uintptr_t ts)
{
	uintptr_t f;

	if (!readable(ts, (size_t)L->ts_frame + 8))
		return 1;
	f = word(ts, L->ts_frame);
	if (f && L->cf_frame >= 0) {
		if (!readable(f, (size_t)L->cf_frame + 8))
			return 1;
		f = word(f, L->cf_frame);
	}
	return f;
}

/*
 * Up to max frames of thread state ts, innermost first, into out, skipping
 * the frames the API skips too (C-stack shims, frames not started yet).
 * Returns the number, or -1 if anything does not look like the layout says
 * (then nothing of it may be trusted).  Frames beyond MAX_STEPS visited are
 * left out, as beyond max.  g_lock held.
 */
static int raw_walk(const struct layout *L, uintptr_t ts, struct raw *out, int max)
{
	uintptr_t seen[MAX_STEPS], f = first_frame(L, ts);
	size_t span = frame_span(L);
	int k = 0, steps = 0;

	if (f == 1)
		return -1;
	for (; f && k < max && steps < MAX_STEPS; f = word(f, L->fr_prev)) {
		uintptr_t code, instr;
		intptr_t d, size;
		if (!readable(f, span))
			return -1;
		for (int i = 0; i < steps; i++)
			if (seen[i] == f)
				return -1;   /* a cycle: not a stack */
		seen[steps++] = f;
		if (!L->iframe) {
			if (word(f, 8) != py.frame_type)
				return -1;
			code = word(f, L->fr_code);
			if (!is_code(L, code))
				return -1;
			out[k].code = code;
			out[k].lasti = -1;
			out[k].line = py.GetLineNumber((PyObject *)f);   /* read-only in 3.9/3.10 */
			k++;
			continue;
		}
		if (L->shims && byte_at(f, L->fr_owner) == OWNED_BY_CSTACK)
			continue;
		code = word(f, L->fr_code) & ~L->tag;
		if (!is_code(L, code))
			return -1;
		instr = word(f, L->fr_instr);
		d = (intptr_t)(instr - (code + (uintptr_t)L->code_units));
		size = (intptr_t)word(code, 16);   /* Py_SIZE: code units */
		if ((d & 1) || d / 2 >= size)
			return -1;
		if (d < 0)
			continue;   /* not started (prev_instr = first - 1) */
		if (L->co_firsttrace >= 0 && L->fr_owner >= 0 &&
		    byte_at(f, L->fr_owner) != OWNED_BY_GENERATOR && d / 2 < i32(code, L->co_firsttrace))
			continue;   /* incomplete, as _PyFrame_IsIncomplete */
		out[k].code = code;
		out[k].lasti = (int)(d / 2);
		out[k].line = -1;
		k++;
	}
	return k;
}

static uint64_t mix(uintptr_t v)
{
	return (uint64_t)v * 0x9E3779B97F4A7C15ull;
}

/* The cache entry of a code object (is_code checked), filled if new. */
static struct code_ent *code_get(const struct layout *L, uintptr_t code)
{
	unsigned set = (unsigned)(mix(code) >> 32) % CODE_SETS, w;
	uintptr_t file = word(code, L->co_file), name = word(code, L->co_name);
	int first = i32(code, L->co_firstline);
	struct code_ent *e;

	for (w = 0; w < WAYS && g_codes[set][w].code != code; w++)
		;
	if (w == WAYS)
		w = g_codes_next[set]++ % WAYS;   /* a new one: round robin */
	e = &g_codes[set][w];
	if (e->code == code && e->file_obj == file && e->name_obj == name && e->firstline == first)
		return e;
	free(e->file);
	free(e->name);
	memset(e, 0, sizeof(*e));
	e->code = code;
	e->file_obj = file;
	e->name_obj = name;
	e->firstline = first;
	e->file = str_dup(L, file);
	e->name = str_dup(L, name);
	e->serial = ++g_code_serial;
	for (int i = 0; i < LINE_SLOTS; i++)
		e->lasti[i] = -1;
	return e;
}

static int code_line(struct code_ent *e, int lasti)
{
	unsigned slot;
	int line;

	for (int i = 0; i < LINE_SLOTS; i++)
		if (e->lasti[i] == lasti)
			return e->line[i];
	line = py.Addr2Line((PyObject *)e->code, lasti * 2);   /* read-only */
	slot = e->next++ % LINE_SLOTS;
	e->lasti[slot] = lasti;
	e->line[slot] = line;
	return line;
}

static void drop_caches(void)
{
	for (int i = 0; i < CODE_SETS; i++)
		for (int w = 0; w < WAYS; w++) {
			free(g_codes[i][w].file);
			free(g_codes[i][w].name);
		}
	memset(g_codes, 0, sizeof(g_codes));
}

/* The reader: the frames of ts, each one's code entry serial (its token)
 * and line into toks/lines and, with store, its (file, function) strings
 * appended there at off[i].  Returns the count or -1. */
static int read_walk(const struct layout *L, uintptr_t ts, uint32_t max, uint64_t *toks, uint32_t *lines,
		     struct strbuf *store, long (*off)[2])
{
	struct raw raw[CAP_PY_MAX_FRAMES];
	int k;

	pthread_mutex_lock(&g_lock);
	if (L != __atomic_load_n(&g_layout, __ATOMIC_ACQUIRE)) {
		k = -1;   /* replaced meanwhile */
		goto out;
	}
	k = raw_walk(L, ts, raw, (int)max);
	for (int i = 0; i < k; i++) {
		struct code_ent *e = code_get(L, raw[i].code);
		int line = raw[i].line >= 0 ? raw[i].line : code_line(e, raw[i].lasti);
		lines[i] = line > 0 ? (uint32_t)line : 0;
		toks[i] = e->serial;
		if (!store)
			continue;
		off[i][0] = (long)store->len;
		sb_add(store, e->file ? e->file : "?", strlen(e->file ? e->file : "?") + 1);
		off[i][1] = (long)store->len;
		sb_add(store, e->name ? e->name : "?", strlen(e->name ? e->name : "?") + 1);
	}
out:
	pthread_mutex_unlock(&g_lock);
	return k;
}

/* The frames of ts into frames/store (read_walk).  The count or -1. */
static int read_frames(const struct layout *L, uintptr_t ts, struct tr_frame *frames,
		       uint32_t max, struct strbuf *store, uint64_t *toks)
{
	long off[CAP_PY_MAX_FRAMES][2];
	uint32_t lines[CAP_PY_MAX_FRAMES];
	int k = read_walk(L, ts, max, toks, lines, store, off);

	/* store may have moved while growing: point into it only now. */
	for (int i = 0; i < k; i++) {
		frames[i].file = store->buf + off[i][0];
		frames[i].func = store->buf + off[i][1];
		frames[i].line = lines[i];
	}
	return k;
}

/* ---- the API walk (GIL held, no layout) ------------------------------------- */

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

static uint32_t api_walk(void *tstate, struct tr_frame *frames, uint32_t max, uint32_t *n,
			 struct strbuf *store)
{
	PyObject *et = NULL, *ev = NULL, *etb = NULL, *frame;
	long file_off[CAP_PY_MAX_FRAMES], func_off[CAP_PY_MAX_FRAMES];
	uint32_t k = 0;

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

	for (uint32_t i = 0; i < k; i++) {
		frames[i].file = file_off[i] >= 0 ? store->buf + file_off[i] : "?";
		frames[i].func = func_off[i] >= 0 ? store->buf + func_off[i] : "?";
	}
	*n = k;
	return TR_PY_FRAMES;
}

/* ---- calibration ------------------------------------------------------------ */

/* The true stack of this thread, from the API (GIL held). */
struct truth {
	uintptr_t ts;
	int k, complete;   /* complete: the whole stack is in here */
	PyObject *frame[TRUTH_MAX], *code[TRUTH_MAX], *file[TRUTH_MAX], *name[TRUTH_MAX];
	PyObject *pname[TRUTH_MAX];   /* co_name (3.11+, where name is co_qualname) */
	const char *file_s[TRUTH_MAX], *name_s[TRUTH_MAX];
	int line[TRUTH_MAX], lasti[TRUTH_MAX], firstline[TRUTH_MAX];
	PyObject *latin1;   /* a compact non-ASCII str whose data is "\xe9" */
};

static void truth_release(struct truth *t)
{
	for (int i = 0; i < t->k; i++) {
		decref(t->frame[i]);
		decref(t->code[i]);
		decref(t->file[i]);
		decref(t->name[i]);
		decref(t->pname[i]);
	}
	decref(t->latin1);
	t->k = 0;
	t->latin1 = NULL;
}

/* Fill t; returns 0, or -1 when this moment cannot calibrate.  Python
 * errors are cleared (the caller saved the program's). */
static int truth_get(struct truth *t)
{
	PyObject *f, *o;
	int ret = -1;

	memset(t, 0, sizeof(*t));
	t->ts = (uintptr_t)py.CurrentThreadState();
	if (!t->ts || t->ts != (uintptr_t)py.ThisThreadState())
		return -1;
	f = py.GetFrame((void *)t->ts);
	while (f && t->k < TRUTH_MAX) {
		int i = t->k;
		PyObject *code = py.GetCode(f);
		if (!code)
			break;
		t->frame[i] = f;
		t->code[i] = code;
		t->k++;
		t->line[i] = py.GetLineNumber(f);
		t->lasti[i] = py.GetLasti ? py.GetLasti(f) : -1;
		if (t->lasti[i] >= 0)
			t->lasti[i] /= 2;   /* bytes -> code units */
		t->file[i] = py.GetAttrString(code, "co_filename");
		t->name[i] = py.GetAttrString(code, py.minor >= 11 ? "co_qualname" : "co_name");
		if (py.minor >= 11)
			t->pname[i] = py.GetAttrString(code, "co_name");
		o = py.GetAttrString(code, "co_firstlineno");
		t->firstline[i] = o ? (int)py.AsLong(o) : -1;
		decref(o);
		t->file_s[i] = t->file[i] ? py.AsUTF8(t->file[i]) : NULL;
		t->name_s[i] = t->name[i] ? py.AsUTF8(t->name[i]) : NULL;
		if (!t->file_s[i] || !t->name_s[i] || (py.minor >= 11 && !t->pname[i]))
			goto out;
		f = py.GetBack(f);
	}
	t->complete = f == NULL;
	decref(f);
	t->latin1 = py.FromString("\xc3\xa9");
	if (t->k >= 1 && t->latin1)
		ret = 0;
out:
	py.ErrClear();
	return ret;
}

/* Does L reproduce t exactly (frames, lines, names, and the end)?  g_lock held. */
static int layout_matches(const struct layout *L, const struct truth *t)
{
	struct raw raw[TRUTH_MAX + 1];
	int k = raw_walk(L, t->ts, raw, t->k + t->complete), ok = k == t->k;

	for (int i = 0; ok && i < k; i++) {
		char *file, *name;
		int line = raw[i].line >= 0 ? raw[i].line :
			   py.Addr2Line((PyObject *)raw[i].code, raw[i].lasti * 2);
		if (raw[i].code != (uintptr_t)t->code[i] || line != t->line[i])
			return 0;
		file = str_dup(L, word(raw[i].code, L->co_file));
		name = str_dup(L, word(raw[i].code, L->co_name));
		ok = file && name && !strcmp(file, t->file_s[i]) && !strcmp(name, t->name_s[i]) &&
		     i32(raw[i].code, L->co_firstline) == t->firstline[i];
		free(file);
		free(name);
	}
	return ok;
}

/* The first offset in [from, to) (step) at which every true code object
 * holds its field (want[i]; 4-byte ints when ints), skipping `not`. */
static int find_field(const struct truth *t, PyObject *const *want, const int *want_int,
		      int from, int to, int step, int not)
{
	for (int off = from; off < to; off += step) {
		int i = 0;
		if (off == not)
			continue;
		for (; i < t->k; i++)
			if (want ? word((uintptr_t)t->code[i], off) != (uintptr_t)want[i] :
			    i32((uintptr_t)t->code[i], off) != want_int[i])
				break;
		if (i == t->k)
			return off;
	}
	return -1;
}

/* Code object and str fields, found in the true stack's objects. */
static int search_code_fields(struct layout *L, const struct truth *t, const struct layout *hint)
{
	uintptr_t s;
	int co_name = -1;

	for (int i = 0; i < t->k; i++)
		if (!readable((uintptr_t)t->code[i], SCAN_CO))
			return -1;
	L->co_file = find_field(t, t->file, NULL, 16, SCAN_CO, 8, -1);
	/* co_qualname (3.11+) equals co_name for plain functions: find
	 * co_name first, then co_qualname is the other offset. */
	if (py.minor >= 11)
		co_name = find_field(t, t->pname, NULL, 16, SCAN_CO, 8, -1);
	L->co_name = find_field(t, t->name, NULL, 16, SCAN_CO, 8, co_name);
	L->co_firstline = hint ? find_field(t, NULL, t->firstline, hint->co_firstline,
					    hint->co_firstline + 1, 4, -1) : -1;
	if (L->co_firstline < 0)
		L->co_firstline = find_field(t, NULL, t->firstline, 16, SCAN_CO, 4, -1);
	L->co_firsttrace = hint ? hint->co_firsttrace : -1;   /* no API shows it */
	/* str data: a compact ASCII name's UTF-8 is its own data. */
	L->uni_ascii = L->uni_compact = -1;
	for (int i = 0; i < t->k && L->uni_ascii < 0; i++) {
		s = (uintptr_t)t->name[i];
		if (readable(s, 40) && (i32(s, 32) & 0x60) == 0x60 &&
		    (uintptr_t)t->name_s[i] > s && (uintptr_t)t->name_s[i] - s < 128)
			L->uni_ascii = (int)((uintptr_t)t->name_s[i] - s);
	}
	/* ...and "\xe9" (compact, not ASCII) shows where other data starts. */
	s = (uintptr_t)t->latin1;
	if (L->uni_ascii > 0 && readable(s, (size_t)L->uni_ascii + 72))
		for (int off = L->uni_ascii + 8; off < L->uni_ascii + 64 && L->uni_compact < 0; off += 8)
			if (byte_at(s, off) == 0xe9 && byte_at(s, off + 1) == 0)
				L->uni_compact = off;
	return L->co_file >= 0 && L->co_name >= 0 && L->co_firstline >= 0 &&
	       L->uni_ascii > 0 && L->uni_compact > 0 ? 0 : -1;
}

static int plausible_ptr(uintptr_t p, size_t n)
{
	return p && !(p & 7) && readable(p, n);
}

/* The frame chain from f0: the frames of t in order, through at most two
 * frames the API skips between them (shims), and, when t is complete, to
 * the end.  Fills the matched (m) and skipped (s) frames.  -1: no match. */
static int chain_follow(const struct truth *t, uintptr_t f0, int code_off, int prev_off,
			uintptr_t tag, uintptr_t *m, uintptr_t *s, int *ns)
{
	uintptr_t f = f0;
	int i = 0, skipped = 0;

	*ns = 0;
	while (f && *ns < TRUTH_MAX) {
		if (!plausible_ptr(f, SCAN_FR))
			return -1;
		if (i < t->k && (word(f, code_off) & ~tag) == (uintptr_t)t->code[i]) {
			m[i++] = f;
			skipped = 0;
		} else {
			if (i == 0 || ++skipped > 2)
				return -1;
			s[(*ns)++] = f;
		}
		if (i == t->k && !t->complete)
			return 0;
		f = word(f, prev_off);
	}
	return i == t->k && !f ? 0 : -1;
}

static int owner_fits(const uintptr_t *m, int k, const uintptr_t *s, int ns, int off)
{
	for (int i = 0; i < k; i++)
		if (byte_at(m[i], off) > 2)
			return 0;
	for (int i = 0; i < ns; i++)
		if (byte_at(s[i], off) != OWNED_BY_CSTACK)
			return 0;
	return 1;
}

/* The owner byte: 0..2 in the true frames (thread, generator, frame
 * object), 3 in the skipped ones.  The hint's offset if it fits; else one
 * found near `from`, which needs skipped frames to tell. */
static int find_owner(const uintptr_t *m, int k, const uintptr_t *s, int ns, int from,
		      const struct layout *hint)
{
	if (hint && hint->fr_owner >= 0 && owner_fits(m, k, s, ns, hint->fr_owner))
		return hint->fr_owner;
	for (int off = from; ns && off < from + 24; off++)
		if (owner_fits(m, k, s, ns, off))
			return off;
	return -1;
}

/* The interpreter-frame fields (3.11+) by search: see the file comment. */
static int search_iframe(struct layout *L, const struct truth *t, const struct layout *hint)
{
	static const int cfs[] = { -1, 0, 8, 16, 24 };
	uintptr_t m[TRUTH_MAX], s[TRUTH_MAX], f0;
	int ns, scan = readable(t->ts, SCAN_TS) ? SCAN_TS : 256;
	intptr_t units = (intptr_t)word(py.code_type, 32);   /* tp_basicsize */

	if (t->k < 2 || units < 64 || units > 1024 || !readable(t->ts, (size_t)scan))
		return -1;
	L->iframe = 1;
	L->shims = py.minor >= 12;
	L->code_units = (int)units;
	L->tag = py.minor >= 14 ? 7 : 0;
	for (int ts_off = 0; ts_off < scan; ts_off += 8) {
		uintptr_t p = word(t->ts, ts_off);
		if (!plausible_ptr(p, 32))
			continue;
		for (unsigned c = 0; c < sizeof(cfs) / sizeof(cfs[0]); c++) {
			f0 = cfs[c] < 0 ? p : word(p, cfs[c]);
			if (!plausible_ptr(f0, SCAN_FR))
				continue;
			for (int co = 0; co < SCAN_FR; co += 8) {
				if ((word(f0, co) & ~L->tag) != (uintptr_t)t->code[0])
					continue;
				for (int pr = 0; pr < SCAN_FR; pr += 8) {
					if (pr == co || chain_follow(t, f0, co, pr, L->tag, m, s, &ns) < 0)
						continue;
					for (int in = 0; in < SCAN_FR; in += 8) {
						int i, ok = 1;
						for (i = 0; i < t->k && ok; i++)
							ok = t->lasti[i] < 0 || word(m[i], in) ==
							     (uintptr_t)t->code[i] + (uintptr_t)units + 2u * (unsigned)t->lasti[i];
						if (!ok || in == co || in == pr)
							continue;
						L->ts_frame = ts_off;
						L->cf_frame = cfs[c];
						L->fr_code = co;
						L->fr_prev = pr;
						L->fr_instr = in;
						L->fr_owner = find_owner(m, t->k, s, ns, in + 8, hint);
						if (L->shims && L->fr_owner < 0)
							continue;
						if (!L->shims && ns)
							continue;
						if (layout_matches(L, t))
							return 0;
					}
				}
			}
		}
	}
	return -1;
}

/* The frame-object fields (3.9/3.10) by search. */
static int search_frameobj(struct layout *L, const struct truth *t)
{
	int scan = readable(t->ts, SCAN_TS) ? SCAN_TS : 256, i, ok;

	if (t->k < 2 || !readable(t->ts, (size_t)scan))
		return -1;
	for (i = 0; i < t->k; i++)
		if (!readable((uintptr_t)t->frame[i], SCAN_FR))
			return -1;
	L->iframe = 0;
	L->cf_frame = L->fr_instr = L->fr_owner = L->code_units = -1;
	L->shims = 0;
	L->tag = 0;
	L->ts_frame = L->fr_prev = L->fr_code = -1;
	for (int off = 0; off < scan && L->ts_frame < 0; off += 8)
		if (word(t->ts, off) == (uintptr_t)t->frame[0])
			L->ts_frame = off;
	for (int off = 16; off < SCAN_FR; off += 8) {
		for (i = 0, ok = 1; i < t->k && ok; i++)
			ok = word((uintptr_t)t->frame[i], off) ==
			     (i + 1 < t->k ? (uintptr_t)t->frame[i + 1] : t->complete ? 0 : word((uintptr_t)t->frame[i], off));
		if (ok && L->fr_prev < 0)
			L->fr_prev = off;
		for (i = 0, ok = 1; i < t->k && ok; i++)
			ok = word((uintptr_t)t->frame[i], off) == (uintptr_t)t->code[i];
		if (ok && L->fr_code < 0)
			L->fr_code = off;
	}
	return L->ts_frame >= 0 && L->fr_prev >= 0 && L->fr_code >= 0 && layout_matches(L, t) ? 0 : -1;
}

static int search(struct layout *L, const struct truth *t, const struct layout *hint)
{
	memset(L, 0, sizeof(*L));
	if (search_code_fields(L, t, hint) < 0)
		return -1;
	return py.minor >= 11 ? search_iframe(L, t, hint) : search_frameobj(L, t);
}

static void publish(const struct layout *L, const char *source)
{
	drop_caches();
	__atomic_store_n(&g_source, source, __ATOMIC_RELAXED);
	__atomic_store_n(&g_layout, L, __ATOMIC_RELEASE);
}

/* One calibration with the GIL held.  Returns 1 done (either way), 0 not now. */
static int calibrate_once(void)
{
	PyObject *et = NULL, *ev = NULL, *etb = NULL;
	struct truth t;
	struct layout L;
	const struct layout *hint = py.mode == MODE_SEARCH ? NULL : py.table;
	int done = 0, have;

	py.ErrFetch(&et, &ev, &etb);
	have = truth_get(&t) == 0;
	pthread_mutex_lock(&g_lock);
	if (!have) {
		/* no frames or no thread state here: try another time */
	} else if (hint && layout_matches(hint, &t)) {
		publish(hint, "verified");
		done = 1;
	} else if (t.k >= 2) {
		/* With the table's help first (it alone knows _co_firsttraceable),
		 * then without it: the table may be what is wrong. */
		if (search(&L, &t, hint) == 0 || (hint && search(&L, &t, NULL) == 0)) {
			g_cal = L;
			publish(&g_cal, "searched");
			done = 1;
		} else if (++g_cal_fails >= CAL_TRIES) {
			publish(NULL, "none");   /* nothing reproduces the true stack */
			done = 1;
		}
	}
	pthread_mutex_unlock(&g_lock);
	truth_release(&t);
	py.ErrRestore(et, ev, etb);
	return done;
}

/* Calibrate if this thread holds the GIL and it has not been done. */
static void calibrate(void)
{
	if (__atomic_load_n(&g_cal_done, __ATOMIC_ACQUIRE) || t_in_cal ||
	    !py.IsInitialized() || (py.IsFinalizing && py.IsFinalizing()) ||
	    py.GILState_Check() != 1)
		return;
	if (__atomic_exchange_n(&g_cal_busy, 1, __ATOMIC_ACQ_REL))
		return;
	t_in_cal = 1;
	if (!__atomic_load_n(&g_cal_done, __ATOMIC_ACQUIRE) && calibrate_once())
		__atomic_store_n(&g_cal_done, 1, __ATOMIC_RELEASE);
	t_in_cal = 0;
	__atomic_store_n(&g_cal_busy, 0, __ATOMIC_RELEASE);
}

/* ---- the interface ------------------------------------------------------------ */

void cap_py_calibrate(void)
{
	pthread_once(&py_once, resolve);
	if (py.IsInitialized && !__atomic_load_n(&g_cal_done, __ATOMIC_ACQUIRE))
		calibrate();
}

const char *cap_py_layout(void)
{
	static __thread char buf[200];
	const struct layout *L;

	pthread_once(&py_once, resolve);
	L = __atomic_load_n(&g_layout, __ATOMIC_ACQUIRE);
	if (py.mode == MODE_API || !L)
		return py.mode == MODE_API ? "api" : "none";
	snprintf(buf, sizeof(buf), "%s 3.%d ts=%d cf=%d code=%d prev=%d instr=%d owner=%d "
		 "shims=%d units=%d file=%d name=%d first=%d trace=%d str=%d/%d",
		 __atomic_load_n(&g_source, __ATOMIC_RELAXED), py.minor, L->ts_frame, L->cf_frame,
		 L->fr_code, L->fr_prev, L->fr_instr, L->fr_owner, L->shims, L->code_units,
		 L->co_file, L->co_name, L->co_firstline, L->co_firsttrace, L->uni_ascii, L->uni_compact);
	return buf;
}

/* The start both walks share: WALK_ON with *L (NULL: only the API walk
 * can read the stack) and *gil, else the state to return. */
#define WALK_ON 0xfffeu
static uint32_t walk_begin(uint32_t *max, int *gil, const struct layout **L)
{
	pthread_once(&py_once, resolve);
	if (!py.IsInitialized || !py.IsInitialized() || (!py.api_walkable && !py.can_read))
		return TR_PY_NONE;
	if (*max > CAP_PY_MAX_FRAMES)
		*max = CAP_PY_MAX_FRAMES;
	*gil = py.GILState_Check && py.GILState_Check() == 1;
	if (!*gil && py.IsFinalizing && py.IsFinalizing())
		return TR_PY_NO_GIL;   /* other threads' states are being freed */
	if (*gil)
		calibrate();
	*L = py.mode == MODE_API ? NULL : __atomic_load_n(&g_layout, __ATOMIC_ACQUIRE);
	return WALK_ON;
}

uint32_t cap_py_keys(uint64_t *toks, uint32_t *lines, uint32_t max, uint32_t *n, uintptr_t *tsp)
{
	const struct layout *L;
	void *ts;
	int gil, k;
	uint32_t st;

	*n = 0;
	*tsp = 0;
	if ((st = walk_begin(&max, &gil, &L)) != WALK_ON)
		return st;
	if (!L)
		return CAP_PY_NEED_FRAMES;   /* only the API walk: cap_py_frames */
	ts = gil ? py.CurrentThreadState() : py.ThisThreadState();
	if (!ts)
		return gil ? CAP_PY_NEED_FRAMES : TR_PY_NO_GIL;
	k = read_walk(L, (uintptr_t)ts, max, toks, lines, NULL, NULL);
	if (k < 0)
		return CAP_PY_NEED_FRAMES;
	*n = (uint32_t)k;
	*tsp = (uintptr_t)ts;
	return TR_PY_FRAMES;
}

uint32_t cap_py_frames_at(uintptr_t ts, struct tr_frame *frames, uint32_t max, uint32_t *n,
			  struct strbuf *store, uint64_t *toks)
{
	const struct layout *L = __atomic_load_n(&g_layout, __ATOMIC_ACQUIRE);
	int k;

	*n = 0;
	if (max > CAP_PY_MAX_FRAMES)
		max = CAP_PY_MAX_FRAMES;
	if (!ts || !L || py.mode == MODE_API || (k = read_frames(L, ts, frames, max, store, toks)) < 0)
		return TR_PY_NO_GIL;
	*n = (uint32_t)k;
	return TR_PY_FRAMES;
}

uint32_t cap_py_frames(struct tr_frame *frames, uint32_t max, uint32_t *n,
		       struct strbuf *store, uint64_t *toks)
{
	const struct layout *L;
	void *ts;
	int gil, k;
	uint32_t st;
	uint64_t own[CAP_PY_MAX_FRAMES];

	*n = 0;
	if (!toks)
		toks = own;
	if ((st = walk_begin(&max, &gil, &L)) != WALK_ON)
		return st;
	if (L) {
		/* With the GIL, the current thread state (it may be one the
		 * thread switched to); without, the thread's own. */
		ts = gil ? py.CurrentThreadState() : py.ThisThreadState();
		if (!ts)
			return TR_PY_NO_GIL;   /* a thread that never ran Python */
		k = read_frames(L, (uintptr_t)ts, frames, max, store, toks);
		if (k >= 0) {
			*n = (uint32_t)k;
			return TR_PY_FRAMES;
		}
	}
	if (gil && py.api_walkable) {
		ts = py.CurrentThreadState();
		if (ts) {
			memset(toks, 0, sizeof(*toks) * max);   /* no entries: no tokens */
			return api_walk(ts, frames, max, n, store);
		}
	}
	return TR_PY_NO_GIL;
}
