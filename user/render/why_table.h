/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The table report's section on where the calls' time went (the split,
 * model/why.h): for the syscalls with the most time off a CPU, their
 * shares on a CPU, waiting for one and blocked, where they slept, who
 * woke them and what preempted them.
 */
#ifndef SCPROF_WHY_TABLE_H
#define SCPROF_WHY_TABLE_H

#include <stdio.h>

#include "model/model.h"

/* Syscalls in the section, at most, and entries of each kind shown. */
#define WHY_TABLE_ROWS 8
#define WHY_TABLE_ENTRIES 3

/* The section after the table: nothing without the split, or when no
 * call was off a CPU. 0 or -ENOMEM.
 */
int why_table(FILE *f, const struct sc_model *m);

#endif
