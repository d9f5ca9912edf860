// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The cgroup v2 hierarchy, for --by cgroup, unit, container, pod and qos:
 * where it is mounted, and the paths of the cgroup ids the BPF side read (a
 * cgroup's id is its directory's inode number).
 *
 * A cgroup is named from what the collector learned while it existed: the
 * path of each one removed while scprof runs, sent as it goes
 * (bpf/cgname.bpf.h), and the directories found under the mount for ids
 * not known yet. So a container that exited before the report, its cgroup
 * removed, is still named. The names are kept in a bounded cache
 * (CGNAMES_MAX, the least recently used going); a model keeps the paths of
 * its own processes' ids, so the folded exited processes keep theirs.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <bpf/libbpf.h>

#include "collect/cgroups.h"
#include "collect/collector_priv.h"
#include "util/idcache.h"
#include "util/log.h"

/* /proc/self/mountinfo escapes ' ', '\t', '\n' and '\\' as \ooo. */
static void unescape(char *s)
{
	char *w = s;

	for (char *r = s; *r; r++, w++) {
		if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' &&
		    r[2] <= '7' && r[3] >= '0' && r[3] <= '7') {
			*w = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 +
				    (r[3] - '0'));
			r += 3;
		} else {
			*w = *r;
		}
	}
	*w = '\0';
}

int cgroups_v2_mount(char *out, size_t len)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char *line = NULL;
	size_t cap = 0;
	int err = -ENOENT;

	if (!f)
		return -errno;
	/* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - TYPE ... */
	while (err && getline(&line, &cap, f) > 0) {
		char *sep = strstr(line, " - "), *fields[5], *save = NULL;
		char *p = line;
		int n = 0;

		if (!sep || strncmp(sep + 3, "cgroup2 ", 8))
			continue;
		for (; n < 5 && (fields[n] = strtok_r(p, " ", &save)); n++)
			p = NULL;
		if (n < 5 || strcmp(fields[3], "/"))
			continue; /* a bind mount of a part of it */
		unescape(fields[4]);
		if (strlen(fields[4]) < len) {
			strcpy(out, fields[4]);
			err = 0;
		}
	}
	free(line);
	fclose(f);
	return err;
}

/*
 * The paths kept: the cgroups named so far and those removed while scprof
 * runs, the least recently used going beyond this many (about 100 bytes
 * each). A process's cgroup is looked up at every fold and snapshot, so
 * the names in use stay.
 */
#define CGNAMES_MAX 8192

struct cgroups {
	struct ring_buffer *rb; /* cgname_events */
	struct idcache *names;	/* id -> path; no path: found nowhere */
	const __u64 *lost;	/* the BPF side's cgname_lost */
	uint64_t lost_told;	/* of which said (-v) */
	uint64_t unnamed;	/* processes' cgroup ids left without a path */
	int err;		/* the ring buffer callback's */
};

void cgroups_configure(struct scprof_bpf *skel, bool on)
{
	if (!on) /* the smallest ring buffer: a page */
		bpf_map__set_max_entries(skel->maps.cgname_events,
					 (__u32)sysconf(_SC_PAGESIZE));
}

/* A cgroup removed, and its path. */
static int take_event(void *ctx, void *data, size_t size)
{
	struct cgroups *g = ctx;
	const struct sc_cgname_event *e = data;
	size_t at = offsetof(struct sc_cgname_event, path);

	if (size <= at || size > sizeof(*e) || e->path[size - at - 1])
		return 0; /* not an event of ours */
	g->err = idcache_set(g->names, e->id, e->path);
	return g->err;
}

int cgroups_new(struct cgroups **out, struct scprof_bpf *skel, bool on)
{
	struct cgroups *g;
	int err;

	*out = NULL;
	if (!on)
		return 0;
	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	g->lost = &skel->bss->cgname_lost;
	g->names = idcache_new(CGNAMES_MAX);
	if (!g->names) {
		err = -ENOMEM;
		goto err;
	}
	g->rb = ring_buffer__new(bpf_map__fd(skel->maps.cgname_events),
				 take_event, g, NULL);
	if (!g->rb) {
		err = -errno;
		pr_err("cannot read the removed cgroups' ring buffer: %s",
		       strerror(-err));
		goto err;
	}
	*out = g;
	return 0;
err:
	cgroups_free(g);
	return err;
}

void cgroups_free(struct cgroups *g)
{
	if (!g)
		return;
	ring_buffer__free(g->rb);
	idcache_free(g->names);
	free(g);
}

/* The cgroups removed since the last look, into the names. */
static int take_removed(struct cgroups *g)
{
	uint64_t lost = __atomic_load_n(g->lost, __ATOMIC_RELAXED);
	int n = ring_buffer__consume(g->rb);

	if (lost > g->lost_told) {
		pr_info("%" PRIu64 " removed cgroups were not passed on (ring "
			"buffer full, or a path of %d bytes or more)",
			lost - g->lost_told, SC_CGPATH_LEN - 1);
		g->lost_told = lost;
	}
	return n < 0 ? (g->err ?: n) : 0;
}

struct walk {
	struct idcache *names; /* where the wanted ids get their path */
	const uint64_t *want;
	size_t nwant, left;
	int err;
};

static void name_if_wanted(struct walk *w, uint64_t ino, const char *rel)
{
	for (size_t i = 0; i < w->nwant; i++) {
		if (w->want[i] != ino)
			continue;
		/* (a directory is met once: its inode is its own) */
		w->err = idcache_set(w->names, ino, rel[0] ? rel : "/");
		if (!w->err)
			w->left--;
		return;
	}
}

/* Directories under dfd (path rel from the mount), depth-first. */
static void walk_dir(struct walk *w, int dfd, char *rel, size_t cap, int depth)
{
	DIR *d;
	struct dirent *e;
	size_t len = strlen(rel);

	if (depth > 64)
		return;
	d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return;
	}
	while (w->left && !w->err && (e = readdir(d))) {
		struct stat st;
		int fd;

		if (e->d_type != DT_DIR || !strcmp(e->d_name, ".") ||
		    !strcmp(e->d_name, ".."))
			continue;
		if (len + 1 + strlen(e->d_name) >= cap)
			continue;
		fd = openat(dirfd(d), e->d_name,
			    O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0)
			continue;
		if (fstat(fd, &st)) {
			close(fd);
			continue;
		}
		sprintf(rel + len, "/%s", e->d_name);
		name_if_wanted(w, (uint64_t)st.st_ino, rel);
		walk_dir(w, fd, rel, cap, depth + 1);
		rel[len] = '\0';
	}
	closedir(d);
}

/* The directories of ids (cgroups that exist now) under the mount, into
 * the names. 0 or -ENOMEM.
 */
static int find_dirs(struct cgroups *g, const uint64_t *ids, size_t n)
{
	struct walk w = {
		.names = g->names, .want = ids, .nwant = n, .left = n
	};
	char mnt[4096], *rel;
	struct stat st;
	int fd;

	if (cgroups_v2_mount(mnt, sizeof(mnt)))
		return 0;
	fd = open(mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	rel = calloc(1, 4096);
	if (!rel) {
		close(fd);
		return -ENOMEM;
	}
	if (!fstat(fd, &st))
		name_if_wanted(&w, (uint64_t)st.st_ino, "");
	walk_dir(&w, fd, rel, 4096, 0);
	free(rel);
	return w.err;
}

static int add_id(uint64_t **ids, size_t *n, uint64_t id)
{
	uint64_t *tmp;

	for (size_t i = 0; i < *n; i++)
		if ((*ids)[i] == id)
			return 0;
	tmp = realloc(*ids, (*n + 1) * sizeof(**ids));
	if (!tmp)
		return -ENOMEM;
	*ids = tmp;
	(*ids)[(*n)++] = id;
	return 0;
}

int collector_cgroups_name(struct collector *c, struct sc_model *m)
{
	struct cgroups *g = c->cgroups;
	uint64_t *ids = NULL; /* not known yet */
	size_t n = 0;
	int err;

	if (!g)
		return 0;
	err = take_removed(g);
	for (size_t i = 0; i < m->nprocs && !err; i++) {
		uint64_t id = m->procs[i].cgid;
		const char *path;

		if (!id || model_cgroup_path(m, id))
			continue;
		if (!idcache_get(g->names, id, &path))
			err = add_id(&ids, &n, id);
		else if (path)
			err = model_cgroup_set(m, id, path);
	}
	if (!err && n)
		err = find_dirs(g, ids, n);
	/* those removed meanwhile, found by neither */
	if (!err && n)
		err = take_removed(g);
	for (size_t i = 0; i < n && !err; i++) {
		const char *path;

		if (idcache_get(g->names, ids[i], &path) && path) {
			err = model_cgroup_set(m, ids[i], path);
			continue;
		}
		/* found nowhere: named by its id from now on */
		err = idcache_set(g->names, ids[i], NULL);
		g->unnamed++;
	}
	m->meta.cgroups_unnamed = g->unnamed;
	free(ids);
	return err;
}
