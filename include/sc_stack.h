/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * --stacks: one sampled call's user stack, as the BPF side sends it to
 * userspace through the stack_events ring buffer (bpf/stacks.bpf.h), and
 * unwound there with the binaries' CFI (user/collect/unwind.c).
 *
 * --slow: a call that took longer than the threshold comes the same way
 * (bpf/slow.bpf.h), flagged SC_STACK_F_SLOW, with what it returned, what
 * its fd was at its return, the split of its time and its longest sleep.
 *
 * --stacks-by blocked: a sample carries the kernel stack of where the
 * call's longest sleep slept, to be drawn on top of its user stack.
 */
#ifndef SC_STACK_H
#define SC_STACK_H

#include "sc_split.h"

/* How much of the user stack is copied, from the stack pointer up. */
#define SC_STACK_BYTES 16384
#define SC_STACK_PAGE 4096
/* The stack_events ring buffer (a power of two, in bytes). */
#define SC_STACK_RINGBUF (16U << 20)
/* The maps_events ring buffer (a power of two, in bytes): ~10000 notices. */
#define SC_MAPS_RINGBUF (256U << 10)
/* --stacks without N: one call in this many is sampled (per CPU, with a
 * random countdown of mean N). Chosen in docs/callsites.md, "Cost".
 */
#define SC_STACK_DEFAULT_PERIOD 1000
/* --stacks-by time without N: one sample per this many µs in calls, so at
 * most 1000 samples/s from a CPU busy in calls. Chosen on nginx in
 * docs/callsites.md, "Cost": 200 cost 13 points of its requests/s.
 */
#define SC_STACK_DEFAULT_TIME_US 1000
/* Under pressure a CPU samples at most 2^SC_STACK_MAX_SHIFT times less
 * often (bpf/stacks.bpf.h); a mask too, for the verifier.
 */
#define SC_STACK_MAX_SHIFT 7

/*
 * The user registers of the call, in DWARF order: on x86_64 rax, rdx,
 * rcx, rbx, rsi, rdi, rbp, rsp, r8..r15, rip; on arm64 x0..x30 (x29 the
 * frame pointer), sp, then pc (which arm64's DWARF numbers no register).
 * (The BPF side is built for the target, so its compiler defines no
 * __aarch64__: -D__TARGET_ARCH_arm64 says it.)
 */
#if defined(__aarch64__) || defined(__TARGET_ARCH_arm64)
#define SC_STACK_NREGS 33
#define SC_STACK_REG_BP 29
#define SC_STACK_REG_SP 31
#define SC_STACK_REG_IP 32
#else
#define SC_STACK_NREGS 17
#define SC_STACK_REG_BP 6
#define SC_STACK_REG_SP 7
#define SC_STACK_REG_IP 16
#endif

/* The process's first sample, or its first since it mapped more code or
 * exec'd: userspace reads its mappings (again), and a copy of them taken
 * as the sample came (struct sc_maps_event) stands in once it has gone.
 */
#define SC_STACK_F_NEW_MAPS 1U
/* --slow: a slow call, not a sample (weight 0). len 0 and no ip: its
 * stack was not copied (another ABI than the native one, or an exec).
 */
#define SC_STACK_F_SLOW 2U
/* The split of the call's time (split_wait_ns, split_blocked_ns,
 * split_iowait_ns) is known: the split is on (--slow).
 */
#define SC_STACK_F_SPLIT 4U
/* sleep holds the call's longest sleep (--slow, --stacks-by blocked). */
#define SC_STACK_F_SLEEP 8U

/*
 * --slow: the name of a slow call's fd as the kernel has it at the call's
 * return (bpf/slow.bpf.h), in sc_stack_event.name. A file: its path's
 * components from the file up, SC_SLOW_PART_LEN bytes each, NUL-ended (a
 * name of SC_SLOW_PART_LEN - 1 bytes may have been cut), name_parts of
 * them, an empty one where the walk crossed a mount; SC_SLOW_ROOT when
 * they reach the root (else the path goes on above). A pseudo file
 * (pipe, anonymous inode: no directory) has its dentry's name in part 0
 * and SC_SLOW_PSEUDO. A unix socket: its own sun_path at 0, its peer's at
 * SC_SLOW_UNIX_PEER, name_len bytes each (0: unbound).
 */
#define SC_SLOW_PARTS 16
#define SC_SLOW_PART_LEN 32
#define SC_SLOW_NAME_BYTES (SC_SLOW_PARTS * SC_SLOW_PART_LEN)
#define SC_SLOW_UNIX_PEER 256
#define SC_SLOW_UNIX_LEN 108 /* sizeof(sun_path) */
#define SC_SLOW_ROOT 1U
#define SC_SLOW_PSEUDO 2U

struct sc_stack_event {
	__u32 pid; /* tgid */
	__u32 tid;
	__u32 nr;
	__u32 abi;
	__u64 start_ns; /* the process's start time: its identity */
	__u64 regs[SC_STACK_NREGS];
	__u32 len; /* bytes of data[] copied from regs[SC_STACK_REG_SP] */
	char comm[16];
	__u32 flags;   /* SC_STACK_F_* */
	__u32 exec_id; /* the task's exec count: which program image */
	/* The stack_period-sized shares of calls the sample stands for: 1,
	 * or 2^k while the ring buffer was filling (bpf/stacks.bpf.h).
	 */
	__u32 weight;
	/* --slow (SC_STACK_F_SLOW) only; not written in samples. */
	__u64 end_ns;	/* bpf_ktime_get_ns() (CLOCK_MONOTONIC) at return */
	__u64 delta_ns; /* the call's time */
	__s64 ret;	/* its return value (-errno on failure) */
	__u64 ino;	/* the fd's inode number at return; 0: none */
	__s32 fd;	/* the first argument of a call on an fd; -1: none */
	__u32 fd_type;	/* enum sc_fd_type (at entry with --fd-types, else
			 * at return)
			 */
	/* a socket's: AF_INET or AF_INET6 (else the family, no address),
	 * IPPROTO_*, ports in host order, addresses in network order
	 */
	__u16 family;
	__u16 protocol;
	__u16 lport, rport;
	__u8 laddr[16], raddr[16];
	__u16 name_len[2]; /* unix socket: its own and its peer's path */
	__u8 name_flags;   /* SC_SLOW_ROOT, SC_SLOW_PSEUDO */
	__u8 name_parts;
	char name[SC_SLOW_NAME_BYTES];
	/* SC_STACK_F_SPLIT: of delta_ns, waiting for a CPU, blocked, and
	 * of blocked in I/O wait
	 */
	__u64 split_wait_ns;
	__u64 split_blocked_ns;
	__u64 split_iowait_ns;
	/* SC_STACK_F_SLEEP (a slow call, or a sample by blocked time): the
	 * call's longest sleep, where it slept and who woke it
	 */
	struct sc_sleep sleep;
	__u8 data[SC_STACK_BYTES];
};

/*
 * A process has new mappings (SC_STACK_F_NEW_MAPS), sent on a ring of its
 * own (maps_events) before the sample, whether or not the sample finds
 * room: userspace copies /proc/PID/maps at once, while the process runs,
 * however far behind the unwinding of samples is. One the ring has no
 * room for is counted in maps_lost.
 */
struct sc_maps_event {
	__u32 pid; /* tgid */
	__u32 exec_id;
	__u64 start_ns;
};

#endif
