// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The `make run` demo: the patterns of the seed articles in one program.
 * It copies a 4 MiB file twice, once a byte per read(2) and once 64 KiB per
 * read, opens and closes a file per 16-byte read, asks for random bytes 16
 * at a time, calls getppid in a loop and runs a child process. The profile
 * shows where the syscalls go and what each pattern costs per call.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define FILE_SIZE (4 << 20)

static void make_file(const char *path)
{
	static char block[65536];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	if (fd < 0) {
		perror(path);
		exit(1);
	}
	memset(block, 'x', sizeof(block));
	for (int i = 0; i < FILE_SIZE / (int)sizeof(block); i++) {
		if (write(fd, block, sizeof(block)) != (ssize_t)sizeof(block)) {
			perror("write");
			exit(1);
		}
	}
	close(fd);
}

static long read_all(const char *path, size_t bufsize, long limit)
{
	char *buf = malloc(bufsize);
	long total = 0;
	ssize_t n;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || !buf)
		exit(1);
	while (total < limit && (n = read(fd, buf, bufsize)) > 0)
		total += n;
	close(fd);
	free(buf);
	return total;
}

int main(void)
{
	char path[] = "/tmp/scprof-demo-XXXXXX";
	unsigned char rnd[16];
	char small[16];
	int fd = mkstemp(path), status;
	pid_t pid;

	if (fd < 0) {
		perror("mkstemp");
		return 1;
	}
	close(fd);
	make_file(path);

	/* 1. a byte at a time (first 256 KiB) vs 64 KiB at a time */
	read_all(path, 1, 256 << 10);
	read_all(path, 65536, FILE_SIZE);

	/* 2. open, read 16 bytes, close: the fopen-in-a-loop pattern */
	for (int i = 0; i < 2000; i++) {
		FILE *f = fopen(path, "r");

		if (!f || fread(small, 1, sizeof(small), f) != sizeof(small))
			return 1;
		fclose(f);
	}

	/* 3. 16 random bytes per getrandom call */
	for (int i = 0; i < 20000; i++) {
		if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
			return 1;
	}

	/* 4. the cheapest syscall there is, many times */
	for (int i = 0; i < 100000; i++)
		syscall(SYS_getppid);

	/* 5. a child process */
	pid = fork();
	if (pid == 0) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	waitpid(pid, &status, 0);

	unlink(path);
	return 0;
}
