/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The kernel's function names, from /proc/kallsyms (read once, sorted):
 * what a kernel stack address is in. ksyms_name may be called from several
 * threads.
 */
#ifndef SCPROF_KSYMS_H
#define SCPROF_KSYMS_H

#include <stdint.h>

struct ksyms;

/* Read /proc/kallsyms (path NULL) or a file in its format. NULL: it
 * cannot be read, or shows no addresses (errno set; EPERM: they are
 * hidden, kptr_restrict).
 */
struct ksyms *ksyms_load(const char *path);
void ksyms_free(struct ksyms *k);
/* The function addr is in, NULL when none. */
const char *ksyms_name(const struct ksyms *k, uint64_t addr);

#endif
