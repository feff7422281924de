/*
 * memmap.h - the captured address space, as a trace describes it over time.
 *
 * Built by walking a trace's ALLOC/FREE records in order.  Answers "which
 * captured allocation does this 64-bit value point into?", which is how
 * replay relocates pointers (launch parameter words, copy and memset
 * addresses), how the reducer finds the buffers a launch reaches, and how
 * `show` annotates parameters.  Pure bookkeeping: no CUDA, CPU-testable.
 *
 * A value counts as pointing into an allocation when addr <= v <= addr+size
 * (one past the end included: loops compare against end pointers).  Live
 * allocations win over freed ones; among freed ones the most recently freed
 * wins.  Each allocation gets a stable index (order of its ALLOC record) that
 * replay uses to find its replayed twin.
 *
 * Part of addr/, the address-space model (with graphs.h and place.h) that
 * replay, the reducer and `show` share; it depends on nothing above trace/.
 */
#ifndef GPUREDUCE_MEMMAP_H
#define GPUREDUCE_MEMMAP_H

#include <stddef.h>
#include <stdint.h>

struct tr_launch;
struct trace;
struct strbuf;

struct mm_alloc {
	uint64_t addr, size;
	uint32_t kind;           /* enum tr_alloc_kind */
	long alloc_event;        /* record index of its ALLOC */
	long free_event;         /* record index of its FREE, -1 while live */
	size_t index;            /* position in memmap.all */
	void *user;              /* replay's handle for the twin allocation */
};

struct memmap {
	struct mm_alloc **all;   /* every allocation ever added, by index */
	size_t n, alloc;
	struct mm_alloc **live;  /* live ones sorted by addr */
	size_t nlive, live_alloc;
	uint64_t lo, hi;         /* bounds of every allocation ever added (hi: one past) */
};
#define MEMMAP_INIT { 0 }

void memmap_release(struct memmap *m);
/* Add an allocation; an existing live allocation overlapping it is treated
 * as freed at this event (the driver reused the range).  Returns it. */
struct mm_alloc *memmap_add(struct memmap *m, uint64_t addr, uint64_t size, uint32_t kind,
			    long event);
/* Mark the live allocation starting at addr freed.  Returns it, or NULL if
 * no live allocation starts there. */
struct mm_alloc *memmap_free(struct memmap *m, uint64_t addr, long event);
/* Follow one trace record, the walk every reader of a trace does: an
 * ALLOC is added, a FREE frees (both at event `event`).  Returns 1 when
 * the record was one of those, 0 for any other. */
struct tr_rec;
int memmap_feed(struct memmap *m, const struct tr_rec *r, long event);
/* The allocation v points into (see above), or NULL.  *dead (may be NULL) is
 * set to 1 when the match is a freed allocation. */
struct mm_alloc *memmap_lookup(const struct memmap *m, uint64_t v, int *dead);
/* Same, but only live allocations. */
struct mm_alloc *memmap_lookup_live(const struct memmap *m, uint64_t v);
/* The index in m->live of the first live allocation that ends after addr
 * (live allocations do not overlap and are sorted, so their ends are too):
 * those that overlap [addr, end) are m->live[i], m->live[i + 1], ... while
 * their addr is below end.  m->nlive when none ends after addr. */
size_t memmap_live_from(const struct memmap *m, uint64_t addr);

/*
 * The pointer-word rule, written once: an 8-byte word -- of a launch's
 * parameter bytes, of a by-value struct among them, of a buffer's content
 * -- points into a captured allocation when its value v is at least
 * MEMMAP_MIN_POINTER (smaller values are counts and flags, never device
 * addresses) and memmap_lookup() finds an allocation for it (inside or one
 * past the end; live first, else the most recently freed).  Replay
 * relocates such words, shrink keeps them and follows them, repro.cu
 * writes them as buffer addresses and `show` annotates them.
 *
 * Returns that allocation, or NULL; *dead (may be NULL) as memmap_lookup.
 * v - a->addr is the offset into it (a->size: one past the end).
 */
#define MEMMAP_MIN_POINTER 65536u
struct mm_alloc *memmap_pointer_word(const struct memmap *m, uint64_t v, int *dead);

/* Called by memmap_scan_words for each pointer word: `off` is its byte
 * offset in the scanned bytes, v its value, a and dead as
 * memmap_pointer_word gives them.  Nonzero stops the scan. */
typedef int (*memmap_word_fn)(struct mm_alloc *a, size_t off, uint64_t v, int dead, void *arg);

/* Apply the rule to the 8-byte words of bytes[0, len) at offsets first,
 * first + 8, ... (each wholly inside len; read unaligned, little-endian
 * as the host), calling fn (may be NULL) for each pointer word.  Returns
 * how many were found, the one fn stopped at included. */
size_t memmap_scan_words(const struct memmap *m, const void *bytes, size_t len, size_t first,
			 memmap_word_fn fn, void *arg);

/* The rule on a launch's argument words: memmap_scan_words over args (l's
 * own bytes, or a copy of them being relocated) at offsets first, first +
 * 8, ... below end (at most l->argsize; 0 and l->argsize: all of them),
 * leaving out the words the trace knows are integers (tr_launch_nonptr:
 * format 1.7, a struct's 4-byte field beside 4 bytes never set). */
size_t memmap_scan_args(const struct memmap *m, const struct tr_launch *l, const uint8_t *args, size_t first,
			size_t end, memmap_word_fn fn, void *arg);
/* memmap_pointer_word for the word at byte off of l's arguments (value v):
 * NULL also when the trace knows that word is an integer. */
struct mm_alloc *memmap_arg_word(const struct memmap *m, const struct tr_launch *l, uint32_t off,
				 uint64_t v, int *dead);

/* A word that looks like a device address (16-aligned, at least 4 GiB,
 * within 64 GiB of the allocations m knows) yet points into none of them:
 * a pointer into memory the trace did not record, which replay cannot
 * place (it passes it as captured, to nothing). */
int memmap_stray_word(const struct memmap *m, uint64_t v);
/* How many of l's argument words are stray (memmap_stray_word; the words
 * the trace knows are integers left out); the first one's byte offset and
 * value in *off and *val (either may be NULL) when there is one. */
size_t memmap_stray_args(const struct memmap *m, const struct tr_launch *l, uint32_t *off, uint64_t *val);
/* How many of l's argument words the trace holds to be integers
 * (tr_launch_nonptr) yet lie inside an allocation live in m, at or above
 * 4 GiB: words replay passes as captured although they read as pointers
 * (a pointer slot that no launch showed as an address, NONPTR's rule);
 * the first one's offset and value as memmap_stray_args gives them. */
size_t memmap_held_args(const struct memmap *m, const struct tr_launch *l, uint32_t *off, uint64_t *val);
/* When record `rec` of t is a launch with stray argument words, or words
 * held as integers that lie inside a recorded buffer (memmap_held_args;
 * the allocations before it as the map), append to out `lead` and a
 * sentence for each kind naming the launch, how many, the first, and why
 * replay may fault there where the program did not (shrink's
 * does-not-reproduce error, replay's note).  Returns how many words of
 * both kinds (0: nothing appended). */
size_t memmap_stray_note(const struct trace *t, long rec, const char *lead, struct strbuf *out);

/* For bytes that land at device address dst: the offset of their first
 * word that is 8-byte aligned in the device address space (copies and
 * buffer contents are scanned at device alignment). */
static inline size_t memmap_first_aligned(uint64_t dst)
{
	return (size_t)((8 - (dst & 7)) & 7);
}

#endif
