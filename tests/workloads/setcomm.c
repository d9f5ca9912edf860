// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A process that names itself with hostile bytes:
 *   setcomm HEX N_GETPPID [IGNORED...]
 * sets its comm with prctl(PR_SET_NAME) to the bytes spelled in HEX (the
 * kernel keeps the first 15), then makes N_GETPPID getppid calls and exits.
 * HEX may be empty. Further arguments are ignored: they let a test put
 * hostile bytes in the command line too.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int main(int argc, char **argv)
{
	char name[64] = "";
	size_t len;
	long n;
	char *end;

	if (argc < 3) {
		fprintf(stderr, "usage: setcomm HEX N_GETPPID [IGNORED...]\n");
		return 2;
	}
	len = strlen(argv[1]);
	if (len % 2 || len / 2 >= sizeof(name)) {
		fprintf(stderr, "setcomm: bad hex '%s'\n", argv[1]);
		return 2;
	}
	for (size_t i = 0; i < len / 2; i++) {
		int hi = hexval(argv[1][2 * i]),
		    lo = hexval(argv[1][2 * i + 1]);

		if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) {
			fprintf(stderr, "setcomm: bad hex '%s'\n", argv[1]);
			return 2;
		}
		name[i] = (char)(hi << 4 | lo);
	}
	n = strtol(argv[2], &end, 10);
	if (!*argv[2] || *end || n < 0) {
		fprintf(stderr, "setcomm: bad count '%s'\n", argv[2]);
		return 2;
	}
	if (prctl(PR_SET_NAME, name, 0, 0, 0)) {
		perror("prctl");
		return 1;
	}
	for (long i = 0; i < n; i++)
		syscall(SYS_getppid);
	return 0;
}
