// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <stdio.h>
#include <bpf/libbpf.h>

#include "util/log.h"

static struct log_ctx default_ctx = { .prog = "scprof", .level = LOG_WARN };
static const struct log_ctx *cur = &default_ctx;

/* The context lives as long as the program; libbpf's callback takes no
 * argument, so the current one is remembered here.
 */
void log_init(struct log_ctx *ctx)
{
	cur = ctx;
}

const struct log_ctx *log_ctx(void)
{
	return cur;
}

void log_msg(const struct log_ctx *ctx, enum log_level lvl, const char *fmt,
	     ...)
{
	va_list ap;

	if ((int)lvl > ctx->level)
		return;
	fprintf(stderr, "%s: ", ctx->prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int log_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	/* libbpf warnings repeat what we report in one line; show them
	 * with -v, and its debug chatter with -vv.
	 */
	int want = level == LIBBPF_DEBUG ? LOG_DEBUG : LOG_INFO;

	if (want > cur->level)
		return 0;
	return vfprintf(stderr, fmt, ap);
}
