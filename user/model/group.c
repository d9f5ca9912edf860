// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* --by KEY[,KEY]: the model's processes or threads by key (see group.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/group.h"

static const char *const key_names[GROUP_KEY_COUNT] = {
	[GROUP_PID] = "pid",   [GROUP_TID] = "tid",
	[GROUP_COMM] = "comm", [GROUP_CGROUP] = "cgroup",
	[GROUP_UNIT] = "unit", [GROUP_CONTAINER] = "container",
	[GROUP_POD] = "pod",   [GROUP_QOS] = "qos",
};

const char *group_key_name(enum group_key k)
{
	return k < GROUP_KEY_COUNT ? key_names[k] : NULL;
}

bool group_has(const struct group_by *by, enum group_key k)
{
	for (size_t i = 0; i < by->n; i++)
		if (by->keys[i] == k)
			return true;
	return false;
}

bool group_key_needs_cgroup(enum group_key k)
{
	return k == GROUP_CGROUP || k == GROUP_UNIT || k == GROUP_CONTAINER ||
	       k == GROUP_POD || k == GROUP_QOS;
}

bool group_needs_cgroups(const struct group_by *by)
{
	for (size_t i = 0; i < by->n; i++)
		if (group_key_needs_cgroup(by->keys[i]))
			return true;
	return false;
}

/* The key len bytes at s name, or GROUP_KEY_COUNT; top's old names
 * (process, thread) too.
 */
static int key_lookup(const char *s, size_t len)
{
	static const struct {
		const char *name;
		enum group_key key;
	} aliases[] = { { "process", GROUP_PID }, { "thread", GROUP_TID } };
	int k;

	for (k = 0; k < GROUP_KEY_COUNT; k++)
		if (strlen(key_names[k]) == len &&
		    !strncmp(s, key_names[k], len))
			return k;
	for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
		if (strlen(aliases[i].name) == len &&
		    !strncmp(s, aliases[i].name, len))
			return aliases[i].key;
	return GROUP_KEY_COUNT;
}

int group_parse(const char *s, struct group_by *by, const char **bad)
{
	const char *p = s;

	by->n = 0;
	for (;;) {
		size_t len = strcspn(p, ",");
		int k = key_lookup(p, len);

		if (k == GROUP_KEY_COUNT || group_has(by, k)) {
			*bad = p;
			return -EINVAL;
		}
		by->keys[by->n++] = k;
		if (!p[len])
			return 0;
		p += len + 1;
	}
}

/* Components of a path, innermost first: calls fn until it returns true. */
static bool innermost(const char *path,
		      bool (*fn)(const char *c, size_t len, void *ctx),
		      void *ctx)
{
	size_t end = strlen(path);

	while (end > 0) {
		size_t start = end;

		while (start > 0 && path[start - 1] != '/')
			start--;
		if (end > start && fn(path + start, end - start, ctx))
			return true;
		end = start > 0 ? start - 1 : 0;
	}
	return false;
}

static bool ends_with(const char *c, size_t len, const char *suffix)
{
	size_t n = strlen(suffix);

	return len > n && !memcmp(c + len - n, suffix, n);
}

struct found {
	char *out;
	size_t len;
	const char *suffix; /* unit: ".service or .scope" pass, ".slice" */
};

static void put(struct found *f, const char *c, size_t len)
{
	snprintf(f->out, f->len, "%.*s", (int)len, c);
}

static bool unit_pass(const char *c, size_t len, void *ctx)
{
	struct found *f = ctx;

	if (f->suffix ? ends_with(c, len, f->suffix) :
			(ends_with(c, len, ".service") ||
			 ends_with(c, len, ".scope"))) {
		put(f, c, len);
		return true;
	}
	return false;
}

void group_unit_of(const char *path, char *out, size_t len)
{
	struct found f = { out, len, NULL };

	out[0] = '\0';
	if (innermost(path, unit_pass, &f))
		return;
	f.suffix = ".slice";
	innermost(path, unit_pass, &f);
}

static bool all_hex(const char *c, size_t len)
{
	if (len < 12) /* a container id, even shortened */
		return false;
	for (size_t i = 0; i < len; i++)
		if (!strchr("0123456789abcdef", c[i]))
			return false;
	return true;
}

static bool container_pass(const char *c, size_t len, void *ctx)
{
	static const char *const prefixes[] = { "docker-", "cri-containerd-",
						"crio-", "libpod-" };
	struct found *f = ctx;

	if (ends_with(c, len, ".scope")) {
		for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]);
		     i++) {
			size_t n = strlen(prefixes[i]);

			if (len > n + 6 && !strncmp(c, prefixes[i], n) &&
			    all_hex(c + n, len - n - 6)) {
				put(f, c + n, len - n - 6);
				return true;
			}
		}
		return false;
	}
	/* cgroupfs drivers: /docker/ID, /kubepods/burstable/podUID/ID */
	if (len == 64 && all_hex(c, len)) {
		put(f, c, len);
		return true;
	}
	return false;
}

/* kubepods-burstable-pod<uid>.slice (systemd: '_' for '-'), pod<uid>;
 * f->suffix: what goes before the UID ("pod:" for a container key)
 */
static bool pod_pass(const char *c, size_t len, void *ctx)
{
	struct found *f = ctx;
	const char *pod = NULL;
	size_t n;

	for (size_t i = 0; i + 3 <= len && !pod; i++)
		if (!memcmp(c + i, "pod", 3) && (i == 0 || c[i - 1] == '-'))
			pod = c + i + 3;
	if (!pod)
		return false;
	n = len - (size_t)(pod - c);
	if (ends_with(c, len, ".slice"))
		n -= 6;
	if (n < 8)
		return false;
	snprintf(f->out, f->len, "%s%.*s", f->suffix ? f->suffix : "", (int)n,
		 pod);
	for (char *q = f->out; *q; q++)
		if (*q == '_')
			*q = '-';
	return true;
}

/* Is c the QoS level of a kubepods path? Its class into f->out. */
static bool qos_pass(const char *c, size_t len, void *ctx)
{
	static const char *const classes[] = { "burstable", "besteffort" };
	struct found *f = ctx;

	for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++) {
		size_t n = strlen(classes[i]);

		/* cgroupfs "burstable", systemd "kubepods-burstable.slice" */
		if ((len == n && !memcmp(c, classes[i], n)) ||
		    (len == n + 15 && !memcmp(c, "kubepods-", 9) &&
		     !memcmp(c + 9, classes[i], n) &&
		     ends_with(c, len, ".slice"))) {
			put(f, classes[i], n);
			return true;
		}
	}
	return false;
}

void group_pod_of(const char *path, char *out, size_t len)
{
	struct found f = { out, len, NULL };

	out[0] = '\0';
	if (strstr(path, "kubepods"))
		innermost(path, pod_pass, &f);
}

void group_qos_of(const char *path, char *out, size_t len)
{
	struct found f = { out, len, NULL };
	char pod[128];

	out[0] = '\0';
	group_pod_of(path, pod, sizeof(pod));
	if (!*pod) /* kubepods itself, or a class level: no pod's class */
		return;
	if (!innermost(path, qos_pass, &f))
		snprintf(out, len, "guaranteed");
}

void group_container_of(const char *path, char *out, size_t len)
{
	struct found f = { out, len, NULL };

	out[0] = '\0';
	if (innermost(path, container_pass, &f))
		return;
	f.suffix = "pod:";
	if (strstr(path, "kubepods"))
		innermost(path, pod_pass, &f);
}

const char *group_value(const struct sc_model *m, const struct sc_proc *p,
			bool threads, enum group_key k, char *buf, size_t len)
{
	const char *path = "";

	if (k >= GROUP_CGROUP && p->cgid) {
		path = model_cgroup_path(m, p->cgid);
		if (!path) {
			/* a cgroup gone before scprof could read its path */
			snprintf(buf, len, "(cgroup id %" PRIu64 ")", p->cgid);
			return buf;
		}
	}
	switch (k) {
	case GROUP_PID:
		snprintf(buf, len, "%u", threads && p->tgid ? p->tgid : p->pid);
		return buf;
	case GROUP_TID:
		snprintf(buf, len, "%u", p->pid);
		return buf;
	case GROUP_COMM:
		snprintf(buf, len, "%.*s", SC_COMM_LEN, p->comm);
		return buf;
	default:
		return group_path_value(path, k, buf, len);
	}
}

const char *group_path_value(const char *path, enum group_key k, char *buf,
			     size_t len)
{
	switch (k) {
	case GROUP_CGROUP:
		return path;
	case GROUP_UNIT:
		group_unit_of(path, buf, len);
		return buf;
	case GROUP_CONTAINER:
		group_container_of(path, buf, len);
		return buf;
	case GROUP_POD:
		group_pod_of(path, buf, len);
		return buf;
	case GROUP_QOS:
		group_qos_of(path, buf, len);
		return buf;
	default:
		return "";
	}
}

static struct sc_group *find(struct sc_group *g, size_t n,
			     const struct group_by *by, char **vals)
{
	for (size_t i = 0; i < n; i++) {
		bool same = true;

		for (size_t j = 0; j < by->n && same; j++)
			same = !strcmp(g[i].val[by->keys[j]],
				       vals[by->keys[j]]);
		if (same)
			return &g[i];
	}
	return NULL;
}

static int cmp_groups(const void *a, const void *b)
{
	const struct sc_group *x = a, *y = b;

	if (x->total_ns != y->total_ns)
		return x->total_ns < y->total_ns ? 1 : -1;
	if (x->calls != y->calls)
		return x->calls < y->calls ? 1 : -1;
	for (int k = 0; k < GROUP_KEY_COUNT; k++) {
		int c;

		if (!x->val[k] || !y->val[k])
			continue;
		c = strcmp(x->val[k], y->val[k]);
		if (c)
			return c;
	}
	return 0;
}

static int cmp_by_calls(const void *a, const void *b)
{
	const struct sc_group *x = a, *y = b;

	if (x->calls != y->calls)
		return x->calls < y->calls ? 1 : -1;
	return cmp_groups(a, b);
}

void group_free(struct sc_group *g, size_t n)
{
	if (!g)
		return;
	for (size_t i = 0; i < n; i++) {
		for (int k = 0; k < GROUP_KEY_COUNT; k++)
			free(g[i].val[k]);
		free(g[i].sum.rows);
		whys_free(&g[i].why);
	}
	free(g);
}

/* Add p to g; a process's entries come one after the other (by_identity). */
static int add_member(struct sc_group *g, const struct sc_model *m,
		      const struct sc_proc *p, bool threads)
{
	if (!g->members) {
		g->has_ids = g->val[GROUP_PID] || g->val[GROUP_TID];
		g->pid = threads && p->tgid ? p->tgid : p->pid;
		g->tid = threads ? p->pid : 0;
		memcpy(g->comm, p->comm, sizeof(g->comm));
	}
	if (!g->members || g->last_pid != p->pid ||
	    g->last_start_ns != p->start_ns)
		g->members++;
	g->last_pid = p->pid;
	g->last_start_ns = p->start_ns;
	for (size_t i = 0; i < p->nrows; i++) {
		g->total_ns += p->rows[i].st.total_ns;
		g->calls += p->rows[i].st.calls;
	}
	if (whys_add_process(&g->why, &m->why, p->pid, p->start_ns, p->cgtag))
		return -ENOMEM;
	return model_proc_merge(&g->sum, p);
}

static int by_identity(const void *pa, const void *pb)
{
	const struct sc_proc *a = *(const struct sc_proc *const *)pa;
	const struct sc_proc *b = *(const struct sc_proc *const *)pb;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->start_ns != b->start_ns)
		return a->start_ns < b->start_ns ? -1 : 1;
	return a->cgtag < b->cgtag ? -1 : a->cgtag > b->cgtag;
}

int group_model(const struct sc_model *m, const struct group_by *by,
		bool threads, struct sc_group **out, size_t *n)
{
	struct sc_group *g = NULL;
	size_t ng = 0;
	char(*bufs)[4096] = malloc(GROUP_KEY_COUNT * sizeof(*bufs));
	const struct sc_proc **order = calloc(m->nprocs + 1, sizeof(*order));

	*out = NULL;
	*n = 0;
	if (!bufs || !order)
		goto nomem;
	for (size_t i = 0; i < m->nprocs; i++)
		order[i] = &m->procs[i];
	qsort(order, m->nprocs, sizeof(*order), by_identity);
	for (size_t i = 0; i < m->nprocs; i++) {
		const struct sc_proc *p = order[i];
		char *vals[GROUP_KEY_COUNT] = {};
		struct sc_group *dst;

		for (size_t j = 0; j < by->n; j++) {
			enum group_key k = by->keys[j];

			vals[k] = (char *)group_value(m, p, threads, k, bufs[k],
						      sizeof(bufs[k]));
		}
		dst = find(g, ng, by, vals);
		if (!dst) {
			struct sc_group *tmp =
				realloc(g, (ng + 1) * sizeof(*g));

			if (!tmp)
				goto nomem;
			g = tmp;
			dst = &g[ng++];
			memset(dst, 0, sizeof(*dst));
			for (size_t j = 0; j < by->n; j++) {
				enum group_key k = by->keys[j];

				dst->val[k] = strdup(vals[k]);
				if (!dst->val[k])
					goto nomem;
			}
		}
		if (add_member(dst, m, p, threads))
			goto nomem;
	}
	if (ng)
		qsort(g, ng, sizeof(*g),
		      m->meta.count_only ? cmp_by_calls : cmp_groups);
	free(bufs);
	free(order);
	*out = g;
	*n = ng;
	return 0;
nomem:
	free(bufs);
	free(order);
	group_free(g, ng);
	return -ENOMEM;
}
