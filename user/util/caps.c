// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "util/caps.h"

static int caps_get(struct __user_cap_header_struct *hdr,
		    struct __user_cap_data_struct *data)
{
	hdr->version = _LINUX_CAPABILITY_VERSION_3;
	hdr->pid = 0;
	return syscall(SYS_capget, hdr, data) ? -errno : 0;
}

int caps_effective(uint64_t *mask)
{
	struct __user_cap_header_struct hdr;
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
	int err = caps_get(&hdr, data);

	*mask = 0;
	if (err)
		return err;
	*mask = (uint64_t)data[1].effective << 32 | data[0].effective;
	return 0;
}

int caps_clear(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct none[_LINUX_CAPABILITY_U32S_3] = {};

	return syscall(SYS_capset, &hdr, none) ? -errno : 0;
}

int caps_drop(bool keep_bpf)
{
	return caps_drop_to(
		keep_bpf ? (1ULL << CAP_BPF) | (1ULL << CAP_PERFMON) : 0);
}

int caps_drop_to(uint64_t keep)
{
	struct __user_cap_header_struct hdr;
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
	uint64_t have;
	int err = caps_get(&hdr, data);

	if (err)
		return err;
	have = (uint64_t)data[1].permitted << 32 | data[0].permitted;
	if (have & (1ULL << CAP_SETPCAP)) {
		for (int cap = 0; cap <= 63; cap++) {
			if (keep & (1ULL << cap))
				continue;
			if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) &&
			    errno != EINVAL)
				return -errno;
		}
	}
	keep &= have;
	for (int i = 0; i < 2; i++) {
		data[i].effective = data[i].permitted =
			(uint32_t)(keep >> (32 * i));
		data[i].inheritable = 0;
	}
	if (syscall(SYS_capset, &hdr, data))
		return -errno;
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -errno;
	return 0;
}
