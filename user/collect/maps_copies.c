// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * --stacks: copies of processes' /proc/PID/maps, taken at the kernel
 * side's notice (see maps_copies.h). Unwinding may be far behind the
 * samples: a short-lived process would exit before its samples are
 * unwound, and the copy taken as it ran stands in for its mappings.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collect/maps_copies.h"

/* Copies of mappings not handed to the unwinder yet, at most. */
#define MAPS_COPIES_MAX 512

/* A copy of a process's /proc/PID/maps, for one program image. */
struct maps_copy {
	uint32_t pid, exec_id;
	uint64_t start_ns;
	uint64_t seq; /* the newest is the highest */
	char *text;   /* NULL: a free slot */
};

struct maps_copies {
	pthread_mutex_t lock;
	struct maps_copy copies[MAPS_COPIES_MAX];
	uint64_t seq;
	uint64_t unread; /* processes gone before their copy was taken */
};

struct maps_copies *maps_copies_new(void)
{
	struct maps_copies *mc = calloc(1, sizeof(*mc));

	if (mc)
		pthread_mutex_init(&mc->lock, NULL);
	return mc;
}

void maps_copies_free(struct maps_copies *mc)
{
	if (!mc)
		return;
	for (size_t i = 0; i < MAPS_COPIES_MAX; i++)
		free(mc->copies[i].text);
	pthread_mutex_destroy(&mc->lock);
	free(mc);
}

/* A copy of /proc/PID/maps; NULL: the process has gone (or no memory). */
static char *maps_read(uint32_t pid)
{
	char path[32], *buf = NULL, *nbuf;
	size_t len = 0, cap = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	do {
		if (cap - len < 4096) {
			cap = cap ? cap * 2 : 16384;
			nbuf = realloc(buf, cap);
			if (!nbuf) {
				n = -1;
				break;
			}
			buf = nbuf;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n > 0)
			len += (size_t)n;
	} while (n > 0);
	close(fd);
	if (n < 0 || !len) {
		free(buf);
		return NULL;
	}
	buf[len] = '\0';
	return buf;
}

/* With the lock held: the copy of a process's program image, or NULL. */
static struct maps_copy *maps_find(struct maps_copies *mc, uint32_t pid,
				   uint64_t start_ns, uint32_t exec_id)
{
	for (size_t i = 0; i < MAPS_COPIES_MAX; i++) {
		struct maps_copy *m = &mc->copies[i];

		if (m->text && m->pid == pid && m->start_ns == start_ns &&
		    m->exec_id == exec_id)
			return m;
	}
	return NULL;
}

void maps_copies_note(struct maps_copies *mc, uint32_t pid, uint64_t start_ns,
		      uint32_t exec_id)
{
	struct maps_copy *slot = NULL;
	char *text = maps_read(pid);

	pthread_mutex_lock(&mc->lock);
	if (!text) {
		mc->unread++;
		pthread_mutex_unlock(&mc->lock);
		return;
	}
	slot = maps_find(mc, pid, start_ns, exec_id);
	if (!slot) { /* a free slot, else the oldest copy's */
		slot = &mc->copies[0];
		for (size_t i = 1; i < MAPS_COPIES_MAX && slot->text; i++)
			if (!mc->copies[i].text ||
			    mc->copies[i].seq < slot->seq)
				slot = &mc->copies[i];
	}
	free(slot->text);
	*slot = (struct maps_copy){ .pid = pid,
				    .exec_id = exec_id,
				    .start_ns = start_ns,
				    .seq = ++mc->seq,
				    .text = text };
	pthread_mutex_unlock(&mc->lock);
}

char *maps_copies_take(void *ctx, uint32_t pid, uint64_t start_ns,
		       uint32_t exec_id)
{
	struct maps_copies *mc = ctx;
	struct maps_copy *m;
	char *text = NULL;

	pthread_mutex_lock(&mc->lock);
	m = maps_find(mc, pid, start_ns, exec_id);
	if (m)
		text = strdup(m->text);
	pthread_mutex_unlock(&mc->lock);
	return text;
}

uint64_t maps_copies_unread(struct maps_copies *mc)
{
	uint64_t n;

	pthread_mutex_lock(&mc->lock);
	n = mc->unread;
	pthread_mutex_unlock(&mc->lock);
	return n;
}
