/*
 * params.h - a kernel's parameters in the kernel's own terms: its
 * demangled name, the C type of each parameter, which 8-byte parameter
 * words point into which captured buffer, and how to name a parameter
 * ("param 0 `float*`").  Shared by the emitter (repro.cu's comments) and
 * diagnose (the sanitizer report in terms of the parameters), so neither
 * reaches into the other.
 */
#ifndef GPUREDUCE_PARAMS_H
#define GPUREDUCE_PARAMS_H

#include <stdint.h>

struct mm_alloc;
struct memmap;
struct strbuf;
struct tr_launch;

/* Demangle a kernel name ("_Z5scalePfPKfi" -> "scale(float*, float const*, int)");
 * returns a malloc'd string (the input copied when it is not mangled). */
char *params_demangle(const char *name);
/* The bare name of a kernel, demangled: "ns::k<int>(float*, int)" -> "k"
 * (a C name as it is).  malloc'd. */
char *params_base_name(const char *name);
/* Split a demangled name's parameter list into n types; returns how many
 * were found (0 when not a C++ signature).  types[i] are malloc'd. */
int params_types(const char *demangled, char **types, int max);
/* Call fn for every 8-byte word of l's parameters that points into an
 * allocation of mm: the allocation, the parameter index, its demangled type
 * (NULL when the name is not a C++ signature), the word's byte offset inside
 * the parameter, whether the allocation was freed.  fn returns non-zero to
 * stop. */
void params_each_pointer(const struct tr_launch *l, const struct memmap *mm,
			 int (*fn)(struct mm_alloc *a, uint32_t p, const char *type,
				   uint32_t off, int dead, void *arg),
			 void *arg);
/* "param 0 `float*`", plus "(a by-value struct; pointer at byte N)". */
void params_role(struct strbuf *out, const struct tr_launch *l, uint32_t p, const char *type,
		 uint32_t off);

#endif
