/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * --by KEY[,KEY]: the model's processes (or threads, with --by tid) grouped
 * by pid, tid, comm, cgroup (v2 path), systemd unit, container, Kubernetes
 * pod (UID) or QoS class, each group with its rows summed; largest first.
 */
#ifndef SCPROF_GROUP_H
#define SCPROF_GROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/model.h"

enum group_key {
	GROUP_PID,
	GROUP_TID,
	GROUP_COMM,
	GROUP_CGROUP,
	GROUP_UNIT,
	GROUP_CONTAINER,
	GROUP_POD, /* a Kubernetes pod's UID */
	GROUP_QOS, /* its QoS class: guaranteed, burstable, besteffort */
	GROUP_KEY_COUNT,
};

struct group_by {
	enum group_key keys[GROUP_KEY_COUNT]; /* in the order given */
	size_t n;			      /* 0: no --by */
};

/* Parse "KEY[,KEY...]". 0, or -EINVAL with *bad at the unknown or
 * repeated key.
 */
int group_parse(const char *s, struct group_by *by, const char **bad);
bool group_has(const struct group_by *by, enum group_key k);
/* Is a key a cgroup's (cgroup, unit, container, pod, qos: needs cgroup
 * ids)?
 */
bool group_needs_cgroups(const struct group_by *by);
/* The same of one key. */
bool group_key_needs_cgroup(enum group_key k);
const char *group_key_name(enum group_key k);

/* One group: its key values and the sum of its members' rows. */
struct sc_group {
	char *val[GROUP_KEY_COUNT]; /* raw bytes, escape to print; NULL:
				     * not a key of this grouping
				     */
	/* pid and tid groups: the process, the thread (tid 0: a process
	 * group) and the name, also when they are not keys
	 */
	uint32_t pid, tid;
	char comm[SC_COMM_LEN];
	bool has_ids;
	size_t members; /* processes (threads) in it */
	/* the last member added: a process that changed cgroup is an
	 * entry per cgroup, one member
	 */
	uint32_t last_pid;
	uint64_t last_start_ns;
	struct sc_proc sum; /* rows only */
	struct sc_whys why; /* its members' estimates, under no process */
	uint64_t total_ns, calls;
};

/*
 * Group m's processes by `by`. threads: m's entries are threads (--by
 * tid), their tgid their process. Sorted largest first: by time, or by
 * calls when count_only. 0 or -ENOMEM.
 */
int group_model(const struct sc_model *m, const struct group_by *by,
		bool threads, struct sc_group **out, size_t *n);
void group_free(struct sc_group *g, size_t n);
/* The value of key k for entry p of m, raw bytes (in buf, or a path of
 * m's): what group_model groups by.
 */
const char *group_value(const struct sc_model *m, const struct sc_proc *p,
			bool threads, enum group_key k, char *buf, size_t len);
/* The value of a cgroup key (cgroup, unit, container, pod, qos) of a
 * process in the cgroup at path ("" none: every value ""), raw bytes (in
 * buf, or path): what group_value gives it. "" for any other key.
 */
const char *group_path_value(const char *path, enum group_key k, char *buf,
			     size_t len);

/* The systemd unit of a cgroup path: its innermost component that ends
 * in .service or .scope, else its innermost .slice; "" when none.
 */
void group_unit_of(const char *path, char *out, size_t len);
/* The container of a cgroup path: the id in docker-ID.scope,
 * cri-containerd-ID.scope, crio-ID.scope, libpod-ID.scope (or a 64-hex
 * component under docker/ or kubepods), else "pod:UID" for a kubepods
 * pod's own cgroup; "" when none.
 */
void group_container_of(const char *path, char *out, size_t len);
/* The pod UID of a kubepods path, cgroupfs (/kubepods/burstable/podUID)
 * or systemd (kubepods-burstable-podUID.slice, '_' for '-'); "" if none.
 */
void group_pod_of(const char *path, char *out, size_t len);
/* Its QoS class: "guaranteed" (no class level), "burstable" or
 * "besteffort"; "" outside kubepods.
 */
void group_qos_of(const char *path, char *out, size_t len);

#endif
