/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Levelled messages on stderr, prefixed with the program name. */
#ifndef SCPROF_LOG_H
#define SCPROF_LOG_H

#include <stdarg.h>
#include <bpf/libbpf.h>

enum log_level {
	LOG_ERROR = 0, /* always shown */
	LOG_WARN = 1,  /* shown unless -q */
	LOG_INFO = 2,  /* shown with -v */
	LOG_DEBUG = 3, /* shown with -vv, libbpf's own messages too */
};

struct log_ctx {
	const char *prog; /* prefix, e.g. "scprof" */
	int level;	  /* highest level shown */
};

void log_init(struct log_ctx *ctx);
const struct log_ctx *log_ctx(void);
void log_msg(const struct log_ctx *ctx, enum log_level lvl, const char *fmt,
	     ...) __attribute__((format(printf, 3, 4)));
/* libbpf print callback that follows the context's level. */
int log_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap);

#define pr_err(...) log_msg(log_ctx(), LOG_ERROR, __VA_ARGS__)
#define pr_warn(...) log_msg(log_ctx(), LOG_WARN, __VA_ARGS__)
#define pr_info(...) log_msg(log_ctx(), LOG_INFO, __VA_ARGS__)
#define pr_debug(...) log_msg(log_ctx(), LOG_DEBUG, __VA_ARGS__)

#endif
