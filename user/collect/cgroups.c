// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The cgroup v2 hierarchy, for --by cgroup, unit and container: where it is
 * mounted, and the paths of the cgroup ids the BPF side read (a cgroup's id
 * is its directory's inode number). A cgroup is named when it is first
 * seen, so one removed later keeps its name.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "collect/cgroups.h"
#include "collect/collector_priv.h"
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

struct walk {
	struct sc_model *names; /* where the wanted ids get their path */
	const uint64_t *want;
	size_t nwant, left;
};

static void name_if_wanted(struct walk *w, uint64_t ino, const char *rel)
{
	for (size_t i = 0; i < w->nwant; i++) {
		if (w->want[i] != ino || model_cgroup_path(w->names, ino))
			continue;
		if (!model_cgroup_set(w->names, ino, rel[0] ? rel : "/"))
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
	while (w->left && (e = readdir(d))) {
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
	struct walk w = { .names = c->folded };
	uint64_t *ids = NULL;
	size_t n = 0;
	char mnt[4096], *rel;
	int fd, err = 0;

	if (!c->opts.read_cgid)
		return 0;
	for (size_t i = 0; i < m->nprocs && !err; i++) {
		uint64_t id = m->procs[i].cgid;

		if (id && !model_cgroup_path(c->folded, id))
			err = add_id(&ids, &n, id);
	}
	if (!err && n && !cgroups_v2_mount(mnt, sizeof(mnt))) {
		fd = open(mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		rel = calloc(1, 4096);
		if (fd >= 0 && rel) {
			struct stat st;

			w.want = ids;
			w.nwant = w.left = n;
			if (!fstat(fd, &st))
				name_if_wanted(&w, (uint64_t)st.st_ino, "");
			walk_dir(&w, fd, rel, 4096, 0);
		} else if (fd >= 0) {
			close(fd);
		}
		free(rel);
	}
	free(ids);
	return err ?: (m == c->folded ? 0 : model_cgroups_copy(m, c->folded));
}
