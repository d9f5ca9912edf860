// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "util/fdinfo.h"

int fdinfo_target(pid_t pid, int fd, uint64_t ino, char *buf, size_t len)
{
	char path[64];
	struct stat st;
	ssize_t n;

	if (!len)
		return -EINVAL;
	buf[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	if (access(path, F_OK))
		return -ESRCH;
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)pid, fd);
	n = readlink(path, buf, len - 1);
	if (n < 0)
		return errno == ENOENT ? -ENOENT : -errno;
	buf[n] = '\0';
	/* the file the link leads to, anonymous inodes included */
	if (ino && !stat(path, &st) && (uint64_t)st.st_ino != ino)
		return -ESTALE;
	return 0;
}

int fdinfo_unix_line(const char *line, uint64_t ino, char *buf, size_t len)
{
	unsigned int refs, proto, flags, type, state;
	uint64_t inode;
	int off = 0;

	if (!len)
		return 0;
	/* "Num: RefCount Protocol Flags Type St Inode [Path]" */
	if (sscanf(line, "%*[0-9a-fA-F]: %x %x %x %x %x %" SCNu64 "%n", &refs,
		   &proto, &flags, &type, &state, &inode, &off) != 6 ||
	    !off)
		return 0;
	if (inode != ino)
		return 0;
	line += off;
	line += strspn(line, " ");
	snprintf(buf, len, "%.*s", (int)strcspn(line, "\n"), line);
	return 1;
}

int fdinfo_unix_path(pid_t pid, uint64_t ino, char *buf, size_t len)
{
	char path[64], *line = NULL;
	size_t cap = 0;
	int found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/net/unix", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	while (!found && getline(&line, &cap, f) > 0)
		found = fdinfo_unix_line(line, ino, buf, len);
	free(line);
	fclose(f);
	return found ? 0 : -ENOENT;
}
