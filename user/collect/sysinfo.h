/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Reading the machine's description (model/machine.h) from the system. */
#ifndef SCPROF_SYSINFO_H
#define SCPROF_SYSINFO_H

#include "model/machine.h"

/* Fill in what can be read; missing pieces stay NULL/empty. 0 or -ENOMEM. */
int machine_read(struct machine_info *m);
/* Count BPF links on the sys_enter and sys_exit raw tracepoints, or -errno
 * (needs CAP_SYS_ADMIN).
 */
int machine_syscall_tracers(void);

#endif
