// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * user/model/group.c: --by keys, units and container ids from cgroup paths
 * (systemd and cgroupfs layouts of docker, containerd, CRI-O, podman and
 * kubernetes), and grouping a model: sums, order, threads.
 */
#include <errno.h>

#include "model/group.h"
#include "model/model.h"
#include "scprof.h"
#include "unit.h"

static void unit_is_at(int line, const char *path, const char *want)
{
	char out[256];

	group_unit_of(path, out, sizeof(out));
	CHECK_AT(line, !strcmp(out, want), "unit of '%s' is '%s', want '%s'",
		 path, out, want);
}
#define unit_is(p, w) unit_is_at(__LINE__, p, w)

static void container_is_at(int line, const char *path, const char *want)
{
	char out[256];

	group_container_of(path, out, sizeof(out));
	CHECK_AT(line, !strcmp(out, want),
		 "container of '%s' is '%s', want '%s'", path, out, want);
}
#define container_is(p, w) container_is_at(__LINE__, p, w)

#define ID64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static void test_units(void **state)
{
	(void)state;
	unit_is("/system.slice/nginx.service", "nginx.service");
	unit_is("/user.slice/user-1000.slice/session-2.scope",
		"session-2.scope");
	unit_is("/user.slice/user-1000.slice/user@1000.service/app.slice/"
		"app-foo.scope",
		"app-foo.scope");
	unit_is("/system.slice/docker-" ID64 ".scope", "docker-" ID64 ".scope");
	unit_is("/user.slice/user-1000.slice", "user-1000.slice");
	unit_is("/system.slice/a.service/sub", "a.service");
	unit_is("/", "");
	unit_is("", "");
	unit_is("/foo/bar", "");
	unit_is("/x.servicefoo", "");
}

static void test_containers(void **state)
{
	(void)state;
	container_is("/system.slice/docker-" ID64 ".scope", ID64);
	container_is("/kubepods.slice/kubepods-burstable.slice/"
		     "kubepods-burstable-pod1234abcd_5678_90ab_cdef_"
		     "1234567890ab.slice/cri-containerd-" ID64 ".scope",
		     ID64);
	container_is("/kubepods.slice/kubepods-pod1234abcd_5678_90ab_cdef_"
		     "1234567890ab.slice",
		     "pod:1234abcd-5678-90ab-cdef-1234567890ab");
	container_is("/machine.slice/libpod-" ID64 ".scope", ID64);
	container_is("/kubepods.slice/crio-" ID64 ".scope", ID64);
	container_is("/docker/" ID64, ID64);
	container_is("/kubepods/burstable/pod1234abcd-5678-90ab-cdef-"
		     "1234567890ab/" ID64,
		     ID64);
	container_is("/system.slice/nginx.service", "");
	container_is("/system.slice/docker.service", "");
	container_is("/system.slice/docker-xyz.scope", "");
	container_is("/", "");
}

static void pod_is_at(int line, const char *path, const char *pod,
		      const char *qos)
{
	char p[256], q[64];

	group_pod_of(path, p, sizeof(p));
	group_qos_of(path, q, sizeof(q));
	CHECK_AT(line, !strcmp(p, pod) && !strcmp(q, qos),
		 "pod, qos of '%s' are '%s', '%s', want '%s', '%s'", path, p, q,
		 pod, qos);
}
#define pod_is(p, w, q) pod_is_at(__LINE__, p, w, q)

#define UID "1234abcd-5678-90ab-cdef-1234567890ab"
#define UID_ "1234abcd_5678_90ab_cdef_1234567890ab"

/* Pods and their QoS class, in the systemd and the cgroupfs drivers'
 * layouts, for each class; a pod's container and its own cgroup alike.
 */
static void test_pods(void **state)
{
	(void)state;
	pod_is("/kubepods.slice/kubepods-burstable.slice/"
	       "kubepods-burstable-pod" UID_ ".slice/cri-containerd-" ID64
	       ".scope",
	       UID, "burstable");
	pod_is("/kubepods.slice/kubepods-besteffort.slice/"
	       "kubepods-besteffort-pod" UID_ ".slice/crio-" ID64 ".scope",
	       UID, "besteffort");
	pod_is("/kubepods.slice/kubepods-pod" UID_ ".slice/docker-" ID64
	       ".scope",
	       UID, "guaranteed");
	pod_is("/kubepods.slice/kubepods-pod" UID_ ".slice", UID, "guaranteed");
	pod_is("/kubepods/burstable/pod" UID "/" ID64, UID, "burstable");
	pod_is("/kubepods/besteffort/pod" UID "/" ID64, UID, "besteffort");
	pod_is("/kubepods/pod" UID "/" ID64, UID, "guaranteed");
	/* not a pod: kubepods and its class levels, other hierarchies */
	pod_is("/kubepods.slice/kubepods-burstable.slice", "", "");
	pod_is("/kubepods/besteffort", "", "");
	pod_is("/system.slice/docker-" ID64 ".scope", "", "");
	pod_is("/system.slice/pod-thing.service", "", "");
	pod_is("/", "", "");
}

static void test_parse(void **state)
{
	struct group_by by;
	const char *bad = NULL;

	(void)state;
	CHECK(!group_parse("unit,pid", &by, &bad) && by.n == 2 &&
		      by.keys[0] == GROUP_UNIT && by.keys[1] == GROUP_PID,
	      "keys in order");
	CHECK(group_needs_cgroups(&by) && group_has(&by, GROUP_PID) &&
		      !group_has(&by, GROUP_TID),
	      "what they need");
	CHECK(group_parse("pid,bogus", &by, &bad) == -EINVAL &&
		      !strcmp(bad, "bogus"),
	      "unknown key");
	CHECK(group_parse("pid,pid", &by, &bad) == -EINVAL &&
		      !strcmp(bad, "pid"),
	      "repeated key");
	CHECK(group_parse("", &by, &bad) == -EINVAL, "empty");
	CHECK(group_parse("tid,", &by, &bad) == -EINVAL, "empty last");
	/* top's old names are the same keys */
	CHECK(!group_parse("thread,process", &by, &bad) && by.n == 2 &&
		      by.keys[0] == GROUP_TID && by.keys[1] == GROUP_PID,
	      "aliases");
	CHECK(group_parse("pid,process", &by, &bad) == -EINVAL &&
		      !strcmp(bad, "process"),
	      "a key and its alias");
	CHECK(group_parse("proc", &by, &bad) == -EINVAL, "no prefixes");
}

static void add(struct sc_model *m, uint32_t pid, uint32_t tgid,
		const char *comm, uint64_t cgid, uint32_t nr, uint64_t calls,
		uint64_t ns)
{
	struct sc_proc *p = model_proc(m, pid, pid * 1000ULL, 0);
	struct sc_stats st = { .calls = calls, .total_ns = ns };

	assert_non_null(p);
	p->tgid = tgid;
	p->cgid = cgid;
	snprintf(p->comm, sizeof(p->comm), "%s", comm);
	assert_int_equal(model_proc_add(p, SC_ABI_NATIVE, nr, &st), 0);
}

static void test_group_model(void **state)
{
	struct sc_model *m = model_new();
	struct group_by by;
	struct sc_group *g;
	const char *bad;
	size_t n;

	(void)state;
	/* threads 10 (main), 11, 12 of process 10; 20 of process 20 */
	add(m, 10, 10, "main", 7, 39, 5, 500);
	add(m, 11, 10, "worker", 7, 39, 100, 1000);
	add(m, 12, 10, "worker", 8, 110, 300, 9000);
	add(m, 20, 20, "other", 8, 39, 1, 10);
	assert_int_equal(model_cgroup_set(m, 7, "/a.slice/x.service"), 0);
	assert_int_equal(model_cgroup_set(m, 8, "/a.slice/y.scope"), 0);

	assert_int_equal(group_parse("pid", &by, &bad), 0);
	assert_int_equal(group_model(m, &by, true, &g, &n), 0);
	CHECK(n == 2 && !strcmp(g[0].val[GROUP_PID], "10") &&
		      g[0].members == 3 && g[0].calls == 405 &&
		      g[0].pid == 10 && g[1].calls == 1,
	      "threads by process, largest first: %zu groups", n);
	group_free(g, n);

	assert_int_equal(group_parse("tid", &by, &bad), 0);
	assert_int_equal(group_model(m, &by, true, &g, &n), 0);
	CHECK(n == 4 && g[0].tid == 12 && g[0].pid == 10 &&
		      !strcmp(g[0].comm, "worker"),
	      "each thread, with its process and name");
	group_free(g, n);

	assert_int_equal(group_parse("comm", &by, &bad), 0);
	assert_int_equal(group_model(m, &by, true, &g, &n), 0);
	CHECK(n == 3 && !strcmp(g[0].val[GROUP_COMM], "worker") &&
		      g[0].calls == 400 && !g[0].has_ids,
	      "by name");
	group_free(g, n);

	assert_int_equal(group_parse("unit", &by, &bad), 0);
	assert_int_equal(group_model(m, &by, true, &g, &n), 0);
	CHECK(n == 2 && !strcmp(g[0].val[GROUP_UNIT], "y.scope") &&
		      g[0].calls == 301 &&
		      !strcmp(g[1].val[GROUP_UNIT], "x.service") &&
		      g[1].calls == 105,
	      "by unit");
	group_free(g, n);

	m->meta.count_only = true;
	assert_int_equal(group_parse("cgroup", &by, &bad), 0);
	m->procs[0].cgid = 99; /* a cgroup gone unnamed */
	assert_int_equal(group_model(m, &by, true, &g, &n), 0);
	CHECK(n == 3 && !strcmp(g[0].val[GROUP_CGROUP], "/a.slice/y.scope") &&
		      !strcmp(g[2].val[GROUP_CGROUP], "(cgroup id 99)"),
	      "by cgroup, by calls in count-only mode; unknown ids said so");
	group_free(g, n);
	model_free(m);
}

/* A process that changed cgroup: an entry per cgroup tag, each with its
 * cgroup; grouped by cgroup they split, grouped by unit or pid they add up
 * as one member.
 */
static void test_moved_process_is_one_member(void **state)
{
	static const struct {
		uint32_t pid, cgtag;
		uint64_t cgid, calls;
	} entries[] = {
		{ 30, 0, 7, 10 }, /* before its moves */
		{ 40, 0, 8, 1 },
		{ 30, 5, 8, 20 },  /* moved to y.scope */
		{ 30, 6, 9, 300 }, /* then to another cgroup of x.service */
	};
	struct sc_model *m = model_new();
	struct group_by by;
	struct sc_group *g;
	const char *bad;
	size_t n;

	(void)state;
	for (size_t i = 0; i < sizeof(entries) / sizeof(entries[0]); i++) {
		struct sc_proc *p =
			model_proc(m, entries[i].pid, 1000, entries[i].cgtag);
		struct sc_stats st = { .calls = entries[i].calls };

		assert_non_null(p);
		p->cgid = entries[i].cgid;
		assert_int_equal(model_proc_add(p, SC_ABI_NATIVE, 39, &st), 0);
	}
	CHECK(model_find_proc(m, 30, 1000, 5) !=
		      model_find_proc(m, 30, 1000, 6),
	      "one entry per tag");
	assert_int_equal(model_cgroup_set(m, 7, "/a.slice/x.service"), 0);
	assert_int_equal(model_cgroup_set(m, 8, "/a.slice/y.scope"), 0);
	assert_int_equal(model_cgroup_set(m, 9, "/a.slice/x.service/sub"), 0);
	m->meta.count_only = true;

	assert_int_equal(group_parse("pid,cgroup", &by, &bad), 0);
	assert_int_equal(group_model(m, &by, false, &g, &n), 0);
	CHECK(n == 4 && g[0].calls == 300 && g[0].members == 1,
	      "a group per (pid, cgroup)");
	group_free(g, n);

	assert_int_equal(group_parse("unit", &by, &bad), 0);
	assert_int_equal(group_model(m, &by, false, &g, &n), 0);
	CHECK(n == 2 && !strcmp(g[0].val[GROUP_UNIT], "x.service") &&
		      g[0].calls == 310 && g[0].members == 1 &&
		      g[1].calls == 21 && g[1].members == 2,
	      "x.service: 310 calls of one process; y.scope: two processes");
	group_free(g, n);

	assert_int_equal(group_parse("pid", &by, &bad), 0);
	assert_int_equal(group_model(m, &by, false, &g, &n), 0);
	CHECK(n == 2 && g[0].calls == 330 && g[0].members == 1,
	      "by pid: the process whole");
	group_free(g, n);
	model_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_units),
		cmocka_unit_test(test_containers),
		cmocka_unit_test(test_pods),
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_group_model),
		cmocka_unit_test(test_moved_process_is_one_member),
	};

	unit_init();
	return cmocka_run_group_tests_name("group", tests, NULL, NULL);
}
