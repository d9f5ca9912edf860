/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Symbol names as people read them: C++ (Itanium ABI) and Rust (legacy
 * and v0) names demangled through libiberty, the GNU toolchain's
 * demangler, without parameter lists and Rust's hash suffix, as perf
 * shows them by default.
 */
#ifndef SCPROF_DEMANGLE_H
#define SCPROF_DEMANGLE_H

/* The demangled form of sym (malloc'd), or NULL when sym is not a mangled
 * name (C, Go, already readable) or memory ran out.
 */
char *demangle(const char *sym);

#endif
