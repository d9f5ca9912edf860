/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The cgroup v2 hierarchy: its mount, and cgroup ids to paths (--by). */
#ifndef SCPROF_CGROUPS_H
#define SCPROF_CGROUPS_H

#include <stddef.h>

/* Where cgroup2 is mounted (/sys/fs/cgroup, or /sys/fs/cgroup/unified on
 * a hybrid host), from /proc/self/mountinfo. 0, or -ENOENT on a host with
 * cgroup v1 only.
 */
int cgroups_v2_mount(char *out, size_t len);

#endif
