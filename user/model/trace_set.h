/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * strace's -e trace=SET: a set of syscalls by ABI and number, from names,
 * numbers, classes (%file, %network...), regexes (/REGEX) and negation (!),
 * with strace's semantics; the classes come from strace's own tables
 * (trace_classes.txt, made into trace_class_rows at build time).
 */
#ifndef SCPROF_TRACE_SET_H
#define SCPROF_TRACE_SET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "scprof.h"

/* Class bits of trace_class_row.classes, in gen_classes.sh's order. */
enum trace_class {
	TRACE_CL_DESC = 1 << 0,
	TRACE_CL_FILE = 1 << 1,
	TRACE_CL_IPC = 1 << 2,
	TRACE_CL_NETWORK = 1 << 3,
	TRACE_CL_PROCESS = 1 << 4,
	TRACE_CL_SIGNAL = 1 << 5,
	TRACE_CL_MEMORY = 1 << 6,
	TRACE_CL_STAT = 1 << 7,
	TRACE_CL_LSTAT = 1 << 8,
	TRACE_CL_FSTAT = 1 << 9,
	TRACE_CL_STAT_LIKE = 1 << 10, /* %%stat */
	TRACE_CL_STATFS = 1 << 11,
	TRACE_CL_FSTATFS = 1 << 12,
	TRACE_CL_STATFS_LIKE = 1 << 13, /* %%statfs */
	TRACE_CL_PURE = 1 << 14,
	TRACE_CL_CREDS = 1 << 15,
	TRACE_CL_CLOCK = 1 << 16,
};

/* One syscall of strace's tables (generated). */
struct trace_class_row {
	unsigned char abi; /* enum sc_abi */
	unsigned short nr;
	const char *name; /* strace's name */
	unsigned int classes;
};

extern const struct trace_class_row trace_class_rows[];
extern const unsigned int trace_class_rows_len;

struct trace_set {
	bool on;     /* a filter is in force (not "all") */
	bool beyond; /* numbers >= SC_NR_MAX (in no table) are in the set */
	uint32_t bits[SC_ABI_COUNT][SC_TRACE_WORDS];
};

/*
 * Parse SET, the value of strace's -e trace=SET, into s: comma-separated
 * names, numbers, %classes, /regexes, each optionally prefixed with '?'
 * (no error when it matches nothing) or suffixed with @64, @32 or @x32
 * (one ABI); leading '!'s negate the whole set; "all" and "none". 0, or
 * -EINVAL with a one-line reason in err.
 */
int trace_set_parse(struct trace_set *s, const char *set, char *err,
		    size_t errlen);
bool trace_set_has(const struct trace_set *s, unsigned int abi,
		   unsigned int nr);
/*
 * The set to test at a call's exit, where the number is read again from
 * the registers: the set, plus every exec number of every ABI when an
 * exec is in the set (an exec returns into the new program's ABI).
 */
void trace_set_exit_bits(const struct trace_set *s,
			 uint32_t out[SC_ABI_COUNT][SC_TRACE_WORDS]);
/* The name -e matches for (abi, nr): strace's, else the system headers'. */
const char *trace_set_name(unsigned int abi, unsigned int nr);

#endif
