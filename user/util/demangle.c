// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Demangling C++ and Rust symbol names (see demangle.h). */
#include <string.h>
#include <libiberty/demangle.h>

#include "util/demangle.h"

char *demangle(const char *sym)
{
	/* Itanium C++ and Rust legacy names start _Z (or __Z, from some
	 * toolchains), Rust v0 ones _R: anything else is left as it is,
	 * without asking the demangler to guess among older styles.
	 */
	if (strncmp(sym, "_Z", 2) && strncmp(sym, "__Z", 3) &&
	    strncmp(sym, "_R", 2))
		return NULL;
	return cplus_demangle(sym, DMGL_ANSI | DMGL_AUTO);
}
