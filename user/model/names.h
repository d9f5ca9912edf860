/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Syscall and errno names, from tables generated at build time. */
#ifndef SCPROF_NAMES_H
#define SCPROF_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SC_NAME_LEN 32

/* Name of syscall nr in table abi (enum sc_abi), or NULL if unknown. */
const char *names_syscall(unsigned int abi, unsigned int nr);
/* Like names_syscall, but writes "syscall_0x1c8" for unknown numbers. */
const char *names_syscall_fmt(unsigned int abi, unsigned int nr, char *buf,
			      size_t len);
/* Number of a syscall name in table abi, or -1. */
int names_syscall_nr(unsigned int abi, const char *name);
/* Highest known syscall number + 1 in table abi. */
unsigned int names_syscall_count(unsigned int abi);
/* Short label of an ABI for reports: "64", "32", "x32". */
const char *names_abi(unsigned int abi);
/* Title strace uses for a personality, "32 bit" etc.; NULL for native. */
const char *names_abi_title(unsigned int abi);

/* Is name one of the NULL-ended list? A NULL name is not. */
bool names_in_list(const char *const *list, const char *name);
/* Read/write-family syscall: a positive return is a byte count. */
bool names_is_io(const char *name);
/* The names names_is_io() knows, NULL-ended. */
const char *const *names_io_list(void);
/* Syscall that does not return when it succeeds (exit, exit_group). */
bool names_is_noreturn(const char *name);
/* Creates a task that returns from it too (with 0): fork, clone... */
bool names_is_fork(const char *name);
/* Replaces the program: execve, execveat. */
bool names_is_exec(const char *name);

/* Takes an fd as its first argument (--fd-types splits it by kind). */
bool names_is_fd_call(const char *name);
/* Short name of an enum sc_fd_type ("socket"), or NULL for none and
 * unknown values.
 */
const char *names_fd_type(unsigned int fd_type);

/* Symbolic name of a positive errno ("ENOENT"), or NULL. */
const char *names_errno(int err);
/* The errno named name ("EBUSY"), or -1. */
int names_errno_parse(const char *name);
/* A BPF map that scprof counts failed updates of (enum sc_map): "procs". */
const char *names_map(uint32_t map);
/* Its number from its name (len bytes), or -1. */
int names_map_parse(const char *name, size_t len);

#endif
